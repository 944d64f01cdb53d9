"""The helpers around the model builders: ``create_workload``, ``run_opt_pass`` and friends.

These are ``relay.testing``'s own functions.  Type inference is reached
through the pass registry by its role, so any pass that declares the
``"type-inference"`` role serves.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ...errors import RelayPassError
from ...functor import ExprVisitor
from ...ir.expr import Call, Expr, Function
from ...ir.expr_builders import const
from ...ir.module import IRModule
from ...ir.op import Op
from ...transform import Pass, get_pass_by_role
from .init import Initializer, Xavier

__all__ = [
    "MissingOperatorError", "NotProvidedError", "count_ops", "create_workload",
    "operator_constructor", "rand", "require_operators", "run_infer_type", "run_opt_pass",
]


class NotProvidedError(RelayPassError, NotImplementedError):
    """A part of ``relay.testing`` that relaypass does not provide was asked for."""


class MissingOperatorError(NotProvidedError):
    """A model builder needs an operator that is not registered."""


def require_operators(builder: str, *op_names: str) -> None:
    """Raise :class:`MissingOperatorError` naming each of ``op_names`` that is not registered."""
    known = set(Op.list_op_names())
    missing = [name for name in op_names if name not in known]
    if missing:
        names = ", ".join(repr(n) for n in missing)
        raise MissingOperatorError(
            f"{builder} needs the operator{'s' if len(missing) > 1 else ''} {names}, which "
            "no installed operator set registers; register it (relaypass help operators) to use "
            "this builder"
        )


def operator_constructor(namespace: Any, attr: str, op_name: str, builder: str) -> Any:
    """The constructor ``namespace.attr`` of operator ``op_name``, which ``builder`` needs.

    Raises :class:`MissingOperatorError` when the operator is not registered or
    has no constructor there, so a builder works as soon as the operator arrives.
    """
    require_operators(builder, op_name)
    make = getattr(namespace, attr, None)
    if make is None:
        raise MissingOperatorError(
            f"{builder} needs a constructor for the operator {op_name!r} "
            f"({getattr(namespace, '__name__', namespace)}.{attr}), which is not provided"
        )
    return make


def _type_inference() -> Pass:
    return get_pass_by_role("type-inference")


def create_workload(
    net: Expr, initializer: Initializer | None = None, seed: int = 0
) -> tuple[IRModule, dict[str, Any]]:
    """A module whose ``main`` is ``net``, typed, and initial values for its parameters.

    Every parameter of ``main`` except those named ``data`` gets an array of
    its inferred shape and dtype, filled by ``initializer`` (``Xavier()`` by
    default) after seeding numpy's global generator with ``seed``; parameters
    are initialized in the order of ``main``'s parameters, so a seed gives
    Relay's values.  Returns ``(mod, params)``, ``params`` mapping names to
    the arrays (as constants hold them).
    """
    mod = IRModule.from_expr(net)
    mod = _type_inference()(mod)
    types = {v.name_hint: v.checked_type for v in mod["main"].params}
    np.random.seed(seed)
    if initializer is None:
        initializer = Xavier()
    params: dict[str, Any] = {}
    for name, ty in types.items():
        if name == "data":
            continue
        value = np.zeros(ty.concrete_shape).astype(ty.dtype)
        initializer(name, value)
        params[name] = const(value, dtype=str(ty.dtype)).data
    return mod, params


def run_opt_pass(expr: Expr, opt_pass: Pass, import_prelude: bool = False) -> Expr:
    """Type ``expr`` in a module of its own, run ``opt_pass``, and return the result.

    A :class:`Function` gives back the new ``main`` function; any other
    expression gives back the body of ``main`` (its free variables became
    ``main``'s parameters).  ``import_prelude`` adds Relay's prelude (lists,
    options, trees) to that module first.
    """
    if not isinstance(opt_pass, Pass):
        raise TypeError(f"run_opt_pass expects a pass, got {type(opt_pass).__name__}")
    mod = IRModule.from_expr(expr)
    if import_prelude:
        mod.import_from_std("prelude.rly")
    mod = _type_inference()(mod)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def run_infer_type(expr: Expr) -> Expr:
    """``expr`` with its types inferred (see :func:`run_opt_pass`)."""
    return run_opt_pass(expr, _type_inference())


class _OpCounter(ExprVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter[str] = collections.Counter()

    def visit_call(self, call: Call) -> None:
        if isinstance(call.op, Op):
            self.counts[call.op.name] += 1
        super().visit_call(call)


def count_ops(expr: Expr) -> collections.Counter[str]:
    """How many times each operator is called in ``expr``, by operator name.

    Calls of functions (not operators) are not counted.
    """
    counter = _OpCounter()
    counter.visit(expr)
    return counter.counts


def rand(dtype: str, *shape: int) -> Any:
    """An array of ``shape`` drawn uniformly from [0, 1) with numpy's global generator."""
    return const(np.random.rand(*shape).astype(dtype), dtype=dtype).data
