"""Relay's executors without code generation: ``relay.create_executor`` over the numpy interpreter.

TVM compiles a program for the ``"graph"``, ``"vm"`` and ``"aot"`` executors
and interprets it for ``"debug"``.  Here ``"debug"``, ``"graph"`` and
``"vm"`` all run :class:`~relaypass.interp.Interpreter`, which gives the
values TVM computes; what differs between them is only what TVM's Python
front end hands back:

* a tensor is a new :class:`~relaypass.ir.ndarray.NDArray` (``.numpy()``);
* a tuple is an :class:`~relaypass.interp.container.ADT` (a tuple of values,
  tag 0) from ``"debug"`` and ``"vm"``, and a Python list from ``"graph"``;
* closures and references are the interpreter's :class:`Closure` and
  :class:`RefValue`;
* a value of an algebraic data type is a
  :class:`~relaypass.interp.adt_values.ConstructorValue` whose fields are
  runtime values too.

Arguments may be NDArrays, numpy arrays or Python numbers, positionally or by
parameter name.  As TVM's executors do, ``evaluate`` first type-checks what it
is about to run (with the pass whose role is "type-inference"), so an
ill-typed program raises a TypeInferenceError instead of computing numpy's
idea of it; the graph executor also rejects a dynamic output shape, as TVM's.
The targets are ``"llvm"`` and ``"c"`` (the CPU); the ``"aot"`` executor and
every other target need a code generator and raise
:class:`~relaypass.errors.RelayCompatError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..analysis.substitution import bind_params_by_name
from ..errors import RelayCompatError
from ..ir.expr import Constant, Expr, Function, GlobalVar, Let, Var
from ..ir.module import IRModule
from ..ir.ndarray import Device, NDArray
from ..ir.types import TensorType, TupleType, Type
from ..transform import Pass, get_pass_by_role
from ..transform.errors import PassNotFoundError
from .adt_values import ConstructorValue, convert_value
from .container import ADT
from .interpreter import Closure, Interpreter, RefValue

__all__ = [
    "CPU_TARGETS", "EXECUTOR_KINDS", "Executor", "GraphExecutor", "VMExecutor", "create_executor",
]

EXECUTOR_KINDS = ("debug", "graph", "vm")
"""The kinds ``create_executor`` runs (on the interpreter); ``"aot"`` is out of scope."""

CPU_TARGETS = ("llvm", "c")
"""The target kinds executors accept: both mean the CPU, where the interpreter runs."""

_ndarray = np.ndarray


class Executor(Interpreter):
    """Relay's ``Executor`` interface over the numpy interpreter, TVM's ``"debug"`` kind.

    ``evaluate()`` gives ``@main`` as a callable; ``evaluate(func)`` (a
    Function or a GlobalVar) a callable; any other closed expression its
    value.  Results are TVM's runtime values (see the module docstring).
    """

    kind = "debug"

    def evaluate(self, expr: Expr | None = None, binds: Mapping[Var, Any] | None = None) -> Any:
        self._type_check(expr, binds)
        value = super().evaluate(expr, binds)
        return value if type(value) is Closure else self._runtime_value(value)

    def _type_check(self, expr: Expr | None, binds: Mapping[Var, Any] | None) -> Type | None:
        """Type-check the module with what ``evaluate`` runs; the type of that, if known.

        ``binds`` become lets of constants, as TVM binds them.  Without a pass
        for the role "type-inference" (no standard passes installed), nothing
        is checked.
        """
        typer = _typer()
        if typer is None:
            return None
        if expr is None or type(expr) is GlobalVar:
            gv = self._main_var() if expr is None else expr
            return typer(self.mod)[gv].checked_type
        body = expr
        for var, value in reversed(list((binds or {}).items())):
            if not isinstance(value, Expr):
                if isinstance(value, (Closure, RefValue, tuple, list)):
                    return None  # not a tensor: TVM's let of a runtime value has no constant form
                value = Constant(value)
            body = Let(var, value, body)
        mod = self.mod.copy()
        gv = GlobalVar("__relaypass_evaluate")
        mod[gv] = body if type(body) is Function else Function([], body)
        return typer(mod)[gv].checked_type

    def _call_from_python(self, closure: Closure, args: Any, kwargs: Mapping[str, Any]) -> Any:
        return self._runtime_value(super()._call_from_python(closure, args, kwargs))

    def _runtime_value(self, value: Any) -> Any:
        """An interpreter value as TVM's front end returns it."""
        t = type(value)
        if t is _ndarray:
            return _result_array(value)
        if t is not tuple and t is not ConstructorValue:
            return value
        return convert_value(value, _result_leaf, self._container)

    def _container(self, fields: list[Any]) -> Any:
        return ADT(0, fields)


class VMExecutor(Executor):
    """TVM's ``"vm"`` kind: the same values as ``"debug"`` (tuples are ADTs)."""

    kind = "vm"


class GraphExecutor(Executor):
    """TVM's ``"graph"`` kind: a tuple result comes back as a Python list of its fields.

    As in TVM, a function whose output shape is dynamic (``relay.Any()`` or a
    size variable) is rejected with a ValueError.
    """

    kind = "graph"

    def _type_check(self, expr: Expr | None, binds: Mapping[Var, Any] | None) -> Type | None:
        ty = super()._type_check(expr, binds)
        ret = getattr(ty, "ret_type", None)
        if ret is not None and _is_dynamic(ret):
            raise ValueError(f"Graph Executor only supports static graphs, got output type {ret}")
        return ty

    def _container(self, fields: list[Any]) -> Any:
        return fields


_EXECUTORS: dict[str, type[Executor]] = {"debug": Executor, "graph": GraphExecutor, "vm": VMExecutor}


def create_executor(
    kind: str = "debug",
    mod: IRModule | None = None,
    device: Device | None = None,
    target: Any = "llvm",
    params: Mapping[str, Any] | None = None,
) -> Executor:
    """An executor for ``mod``, as Relay's ``relay.create_executor``.

    ``kind`` is ``"debug"``, ``"graph"`` or ``"vm"``; ``target`` ``"llvm"`` or
    ``"c"`` (a string, with options, or an object with ``.kind.name``);
    ``device`` the CPU (``tvm.cpu(0)``, the default).  ``params`` maps names
    of ``@main``'s parameters to arrays, bound as constants first (in a copy of
    ``mod``).  ``kind="aot"``, a GPU target or a GPU device raise
    :class:`~relaypass.errors.RelayCompatError`.
    """
    if kind == "aot":
        raise RelayCompatError(
            'create_executor(kind="aot")',
            "the AOT executor compiles the program; the kinds debug, graph and vm run it on "
            "the numpy interpreter",
        )
    cls = _EXECUTORS.get(kind)
    if cls is None:
        raise ValueError(
            f"unknown executor kind {kind!r}; expected one of {', '.join(EXECUTOR_KINDS)} "
            "(aot is out of scope)"
        )
    _check_target(target)
    device = _check_device(device)
    if mod is None:
        mod = IRModule()
    elif not isinstance(mod, IRModule):
        raise TypeError(f"create_executor expects an IRModule, got {type(mod).__name__}")
    if params is not None:
        main = bind_params_by_name(mod["main"], params)
        mod = mod.copy()
        mod.update_func("main", main)
    return cls(mod, device, target)


def _result_array(value: np.ndarray) -> NDArray:
    # A result of its own, as TVM's outputs are: never the memory of an argument or a constant.
    return NDArray(np.array(value, copy=True))


def _result_leaf(value: Any) -> Any:
    return _result_array(value) if type(value) is _ndarray else value


def _typer() -> Pass | None:
    try:
        return get_pass_by_role("type-inference")
    except PassNotFoundError:
        return None


def _is_dynamic(ty: Any) -> bool:
    if isinstance(ty, TensorType):
        return not ty.is_static  # Any, or a size variable (symbolic shapes need TVM's VM)
    if isinstance(ty, TupleType):
        return any(_is_dynamic(f) for f in ty.fields)
    return False


def _check_target(target: Any) -> None:
    """Accept the CPU targets; every other target needs a code generator."""
    if isinstance(target, Mapping):
        targets = list(target.values())
    elif isinstance(target, (list, tuple)):
        targets = list(target)
    else:
        targets = [target]
    for t in targets:
        kind = getattr(getattr(t, "kind", None), "name", None)
        if kind is None:
            text = "" if t is None else str(t)
            kind = text.split()[0] if text.split() else "llvm"
        if kind not in CPU_TARGETS:
            raise RelayCompatError(
                f"create_executor(target={str(t)!r})",
                "programs run on the numpy interpreter, for the CPU targets "
                f"{' and '.join(CPU_TARGETS)} only",
            )


def _check_device(device: Any) -> Device:
    if device is None:
        return Device(Device.kDLCPU, 0)
    if not isinstance(device, Device):
        raise TypeError(f"create_executor expects a device such as tvm.cpu(0), got {device!r}")
    if device.device_type != Device.kDLCPU:
        raise RelayCompatError(
            f"create_executor(device={device!r})",
            "programs run on the numpy interpreter, on the CPU (tvm.cpu(0)) only",
        )
    return device
