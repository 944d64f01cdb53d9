"""The ONNX exporter: ``to_onnx(mod, opset=17) -> onnx.ModelProto``, the importer's inverse.

``@main`` becomes the graph: its parameters the graph inputs (names, dtypes
and shapes kept, an ``Any`` extent a dynamic dimension), its result the
graph outputs (a tuple gives several), every constant an initializer.  One
walk over ``@main`` turns each operator call into ONNX nodes with the
mappings of :mod:`.onnx_export_ops`; the module is typed first when it is
not already (a pipeline leaves it typed, and typing costs as much again).  The walk keeps
its own stack, so a chain of any length exports, and it follows the forms
the passes leave behind: let-bound values (A-normal form), tuples and their
projections, and calls of functions -- fused ``Primitive`` functions and
global functions are inlined, or, with ``onnx_functions=True``, each
distinct fused function becomes one ONNX local function called where it
was called.

Nothing is written until the whole module has been converted: every
operator without a mapping (or in a form ONNX cannot express), every dtype
ONNX cannot hold and an opset out of range are collected and raised as one
:class:`~.errors.ExportError`; a file is written to a temporary name beside
its destination and renamed into place, so a failure leaves no partial file.

After the conversion the clean-ups of :mod:`.onnx_export_cleanup` give the
graph the forms ONNX models have where Relay's differ (a Conv takes the
batch norm and bias after it, a MatMul of operands the importer reshaped to
3-D stacks becomes an N-D MatMul again, ...) and drop what nothing reads.
The walk and the clean-ups run with the cyclic garbage collector paused.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any as AnyT

import numpy as np

from ..errors import RelayPassError, UncheckedTypeError
from ..gc_pause import gc_paused
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.shape_expr import known_int
from ..ir.structural import structural_equal, structural_hash
from ..ir.traversal import post_order
from ..ir.types import Any, TensorType, TupleType, Type
from ..transform import get_pass_by_role
from .errors import ExportError, OnnxExportNotInstalledError
from .onnx_export_cleanup import clean_up
from .onnx_export_graph import GraphBuilder, Unsupported, Value, array_code, onnx_code, write_model
from .onnx_export_ops import EXPORTERS, ONNX_OPERATORS

__all__ = ["EXPORT_OPSETS", "FUSED_DOMAIN", "export_operators", "to_onnx"]

EXPORT_OPSETS = range(17, 22)
"""The opsets of the default domain the exporter writes (17 to 21)."""

FUSED_DOMAIN = "relaypass.fused"
"""The domain of the ONNX local functions that fused functions become."""

PROTOBUF_LIMIT = 2_000_000_000 - 64 * 1024 * 1024
"""A model whose initializers hold more bytes than this is saved with external data: a
protobuf message cannot exceed 2 GB."""

STREAMED_BYTES = 1024 * 1024
"""A model whose initializers hold more bytes than this is written weight by weight from the
arrays (:func:`.onnx_export_graph.write_model`); a smaller one is serialized whole.  Whole is
cheaper for a few kilobytes of weights (a transformer block: 0.3 ms of 1.1 ms); from a few
megabytes on, serializing the weights' protos costs more than writing the arrays (SqueezeNet's
5 MB: 6 ms more) and holds one more copy of them in memory."""


def export_operators() -> dict[str, str]:
    """Every Relay operator the exporter maps, with the ONNX operators it becomes."""
    registered = set(Op.list_op_names())
    return {name: ONNX_OPERATORS[name] for name in sorted(EXPORTERS) if name in registered}


def to_onnx(
    mod: IRModule | Function,
    opset: int = 17,
    path: str | os.PathLike | None = None,
    *,
    params: Mapping[str, np.ndarray] | None = None,
    output_names: Sequence[str] | None = None,
    dim_params: Mapping[str, Sequence[str | None]] | None = None,
    onnx_functions: bool = False,
    external_data: bool | None = None,
    size_threshold: int = 1024,
    graph_name: str = "main",
) -> AnyT:
    """``mod``'s ``@main`` as an ONNX model (an ``onnx.ModelProto``), written to ``path`` if given.

    ``opset`` is the default domain's opset, 17 to 21.  ``params`` gives
    values to parameters of ``@main`` by name (what ``from_onnx(...,
    freeze_params=False)`` returns): they become initializers, not inputs.
    ``output_names`` names the graph outputs (default ``output``, or
    ``output_0``, ``output_1``, ... for a tuple); ``dim_params`` names the
    unknown extents of inputs and outputs by value name (``{"ids":
    ["batch", "seq"]}``; None leaves one unnamed).  With ``onnx_functions``
    every distinct fused ``Primitive`` function becomes an ONNX local
    function of domain ``relaypass.fused``; otherwise they are inlined.

    Written to ``path``, tensors of at least ``size_threshold`` bytes go to
    the external data file ``<path>.data`` when ``external_data`` is True,
    or, when it is None, when the weights exceed protobuf's 2 GB limit.

    Raises ExportError listing every operator, form and dtype without an
    ONNX mapping, and a bad opset, before anything is written;
    OnnxExportNotInstalledError without the ``onnx`` extra.
    """
    onnx = _import_onnx()
    problems = _Problems(opset)
    if not isinstance(opset, int) or opset not in EXPORT_OPSETS:
        problems.bad_opset = True
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"to_onnx expects an IRModule or a Function, got {type(mod).__name__}")
    if "main" not in mod:
        raise ExportError("the module has no @main function to export")
    used_opset = min(max(opset, EXPORT_OPSETS[0]), EXPORT_OPSETS[-1]) if isinstance(
        opset, int) else EXPORT_OPSETS[0]
    with gc_paused():
        try:  # a module a pipeline has run on is typed already: typing it again costs as much
            model, exporter, builder = _convert(onnx, used_opset, mod, problems, onnx_functions,
                                                params, output_names, dim_params, graph_name)
        except UncheckedTypeError:
            problems = _Problems(opset, bad_opset=problems.bad_opset)
            typed = get_pass_by_role("type-inference")(mod)
            model, exporter, builder = _convert(onnx, used_opset, typed, problems,
                                                onnx_functions, params, output_names,
                                                dim_params, graph_name)
        problems.raise_if_any()
        helper = onnx.helper
        opsets = [helper.make_opsetid("", used_opset)]
        if exporter.functions:
            opsets.append(helper.make_opsetid(FUSED_DOMAIN, 1))
            model.functions.extend(exporter.functions)
        model.opset_import.extend(opsets)
        model.ir_version = helper.find_min_ir_version_for(opsets[:1], ignore_unknown=True)
        model.producer_name = "relaypass"
        model.producer_version = _version()
        if path is None:
            builder.write_initializers(model.graph)
        else:
            weights = builder.initializer_bytes()
            if external_data is None:
                external_data = weights > PROTOBUF_LIMIT
            if external_data:
                builder.write_initializers(model.graph)
                _save_external(onnx, model, os.fspath(path), size_threshold)
            else:
                _save(model, builder, os.fspath(path), streamed=weights > STREAMED_BYTES)
        # The walk's objects go while the collector is paused: they would otherwise still
        # count as new when it resumes, and its next run would look through all of them.
        del exporter, builder
    return model


def _convert(onnx: AnyT, opset: int, mod: IRModule, problems: _Problems, onnx_functions: bool,
             params: Mapping[str, np.ndarray] | None, output_names: Sequence[str] | None,
             dim_params: Mapping[str, Sequence[str | None]] | None, graph_name: str,
             ) -> tuple[AnyT, _ModelExporter, GraphBuilder]:
    """The model with its graph but not yet its initializers, the exporter (its local
    functions) and the builder of the graph (which holds the initializers)."""
    exporter = _ModelExporter(onnx, opset, mod, problems, onnx_functions)
    model = onnx.ModelProto()
    builder = exporter.graph(model.graph, mod["main"], dict(params or {}), output_names,
                             dict(dim_params or {}), graph_name)
    return model, exporter, builder


@functools.cache
def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("relaypass")
    except metadata.PackageNotFoundError:  # a source checkout that is not installed
        return ""


def _import_onnx() -> AnyT:
    try:
        import onnx
        from onnx import numpy_helper  # noqa: F401
    except ImportError as exc:
        raise OnnxExportNotInstalledError(str(exc)) from None
    return onnx


# --- problems -------------------------------------------------------------------------------------


class _Problems:
    """What cannot be exported, collected over the whole module and raised once."""

    def __init__(self, opset: AnyT, bad_opset: bool = False) -> None:
        self.opset = opset
        self.bad_opset = bad_opset
        self.operators: dict[str, int] = {}
        self.dtypes: dict[str, str] = {}

    def operator(self, label: str) -> None:
        self.operators[label] = self.operators.get(label, 0) + 1

    def dtype(self, dtype: str, where: str) -> None:
        self.dtypes.setdefault(dtype, where)

    def check_type(self, ty: Type, where: str) -> None:
        for t in _tensor_types(ty):
            if onnx_code(t.dtype) is None:
                self.dtype(t.dtype, where)

    def raise_if_any(self) -> None:
        parts = []
        if self.bad_opset:
            parts.append(f"opset {self.opset!r} is out of range (the exporter writes opsets "
                         f"{EXPORT_OPSETS[0]} to {EXPORT_OPSETS[-1]})")
        if self.operators:
            listed = ", ".join(f"{label} ({count} call{'s' if count != 1 else ''})"
                               for label, count in sorted(self.operators.items()))
            what = "operator" if len(self.operators) == 1 else "operators"
            parts.append(f"{len(self.operators)} {what} with no ONNX mapping: {listed}")
        if self.dtypes:
            listed = ", ".join(f"{d} ({where})" for d, where in sorted(self.dtypes.items()))
            parts.append(f"dtypes ONNX cannot hold: {listed}")
        if parts:
            raise ExportError("cannot export to ONNX: " + "; ".join(parts)
                              + "; relaypass help onnx lists what the exporter supports",
                              self.operators, tuple(sorted(self.dtypes)), self.opset)


def _tensor_types(ty: AnyT) -> list[TensorType]:
    if isinstance(ty, TensorType):
        return [ty]
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        elif isinstance(t, TensorType):
            out.append(t)
    return out


def _flatten(value: AnyT) -> list[Value]:
    if isinstance(value, Value):
        return [value]
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


# --- the walk -------------------------------------------------------------------------------------


class _Closure:
    """A function value: the function and the scope its free variables are read in."""

    __slots__ = ("func", "scope", "global_var")

    def __init__(self, func: Function, scope: _Scope | None, global_var: GlobalVar | None = None):
        self.func = func
        self.scope = scope
        self.global_var = global_var


class _Scope:
    """The values of one inlined function body (or of ``@main``): memo by node, vars bound."""

    __slots__ = ("memo", "parent")

    def __init__(self, parent: _Scope | None) -> None:
        self.memo: dict[Expr, AnyT] = {}
        self.parent = parent

    def lookup(self, var: Var) -> AnyT:
        scope: _Scope | None = self
        while scope is not None:
            value = scope.memo.get(var)
            if value is not None:
                return value
            scope = scope.parent
        return None


_VISIT, _BUILD, _FINISH, _LET, _END_LET, _END_CALL = range(6)


class _GraphConverter:
    """Turns expressions into nodes of one GraphBuilder, without recursion."""

    def __init__(self, model: _ModelExporter, builder: GraphBuilder) -> None:
        self.model = model
        self.b = builder
        self.problems = model.problems

    def value_of(self, expr: Expr, scope: _Scope) -> AnyT:
        b = self.b
        model = self.model
        call_op = self.call_op
        active: list[Function] = []  # the functions being inlined, innermost last
        stack: list[tuple] = [(_VISIT, expr, scope)]
        while stack:
            kind, node, sc = stack.pop()
            memo = sc.memo
            if kind == _VISIT:
                # Visiting a node that waits for some of its arguments goes on at once with the
                # first of them: what popping the step pushed last would do, without the step.
                while node not in memo:
                    if type(node) is Call and type(node.op) is Op:
                        # The common case first.  Arguments that are constants or bound
                        # variables get their values here rather than each through a step of
                        # the walk: neither adds a node, so the graph is built in the same order.
                        pending = None
                        for a in node.args:
                            if a in memo:
                                continue
                            ta = type(a)
                            if ta is Constant:
                                memo[a] = model.constant(a, b)
                                continue
                            value = sc.lookup(a) if ta is Var else None
                            if value is not None:
                                memo[a] = value
                            elif pending is None:
                                pending = [a]
                            else:
                                pending.append(a)
                        if pending is None:
                            memo[node] = call_op(node, list(map(memo.__getitem__, node.args)))
                            break
                        stack.append((_BUILD, node, sc))
                        if len(pending) > 1:
                            stack.extend([(_VISIT, a, sc) for a in reversed(pending[1:])])
                        node = pending[0]
                        continue
                    self._visit(node, sc, stack)
                    break
            elif kind == _BUILD:
                if type(node) is Call and type(node.op) is Op:
                    memo[node] = call_op(node, list(map(memo.__getitem__, node.args)))
                elif isinstance(node, Tuple):
                    memo[node] = tuple(memo[f] for f in node.fields)
                elif isinstance(node, TupleGetItem):
                    memo[node] = memo[node.tuple_value][node.index]
                elif isinstance(node.op, Op):
                    memo[node] = call_op(node, [memo[a] for a in node.args])
                else:
                    self.call_function(node, sc, stack, active)
            elif kind == _LET:
                memo[node.var] = memo[node.value]
                stack.append((_END_LET, node, sc))
                stack.append((_VISIT, node.body, sc))
            elif kind == _END_LET:
                memo[node] = memo[node.body]
            elif kind == _FINISH:
                call, inner, body = node
                memo[call] = inner.memo[body]
            elif kind == _END_CALL:
                active.pop()
        return scope.memo[expr]

    def _visit(self, node: Expr, sc: _Scope, stack: list) -> None:
        """The first step of the walk at a node that is not the call of an operator."""
        memo = sc.memo
        if isinstance(node, Var):
            value = sc.lookup(node)
            if value is None:
                raise ExportError(f"free variable %{node.name_hint} in the exported function")
            memo[node] = value
        elif isinstance(node, Constant):
            memo[node] = self.model.constant(node, self.b)
        elif isinstance(node, Call):
            stack.append((_BUILD, node, sc))
            stack.extend((_VISIT, a, sc) for a in reversed(node.args))
            if not isinstance(node.op, Op):
                stack.append((_VISIT, node.op, sc))
        elif isinstance(node, Tuple):
            stack.append((_BUILD, node, sc))
            stack.extend((_VISIT, f, sc) for f in reversed(node.fields))
        elif isinstance(node, TupleGetItem):
            stack.append((_BUILD, node, sc))
            stack.append((_VISIT, node.tuple_value, sc))
        elif isinstance(node, Let):
            stack.append((_LET, node, sc))
            stack.append((_VISIT, node.value, sc))
        elif isinstance(node, Function):
            memo[node] = _Closure(node, sc)
        elif isinstance(node, GlobalVar):
            memo[node] = _Closure(self.model.module[node], None, node)
        else:
            self.problems.operator(f"{type(node).__name__} (no ONNX form; control flow and "
                                   f"references are not exported)")
            memo[node] = self.placeholder(node)

    def call_function(self, call: Call, sc: _Scope, stack: list, active: list[Function]) -> None:
        memo = sc.memo
        callee = memo[call.op]
        args = [memo[a] for a in call.args]
        if not isinstance(callee, _Closure):
            self.problems.operator("call of a value that is not a function")
            memo[call] = self.placeholder(call)
            return
        func = callee.func
        if self.model.onnx_functions and _is_primitive(func):
            memo[call] = self.model.call_local_function(self.b, func, args)
            return
        if func in active:
            name = f"@{callee.global_var.name_hint}" if callee.global_var is not None else \
                "a local function"
            self.problems.operator(f"recursive call of {name} (ONNX graphs have no recursion)")
            memo[call] = self.placeholder(call)
            return
        active.append(func)
        stack.append((_END_CALL, call, sc))
        inner = _Scope(callee.scope)
        for param, arg in zip(func.params, args):
            inner.memo[param] = arg
        stack.append((_FINISH, (call, inner, func.body), sc))
        stack.append((_VISIT, func.body, inner))

    def call_op(self, call: Call, args: list) -> AnyT:
        name = call.op.name
        ty = call.checked_type
        if type(ty) is TensorType:  # the common case first: one tensor
            if onnx_code(ty.dtype) is None:
                self.problems.dtype(ty.dtype, f"the result of {name}")
        else:
            self.problems.check_type(ty, f"the result of {name}")
        mapping = EXPORTERS.get(name)
        if mapping is None:
            self.problems.operator(name)
            return self.placeholder(call)
        try:
            value = mapping(self.b, call, args)
        except Unsupported as exc:
            self.problems.operator(f"{name} ({exc.reason})")
            return self.placeholder(call)
        except RelayPassError as exc:  # an attribute the relations would reject
            self.problems.operator(f"{name} ({exc})")
            return self.placeholder(call)
        shapes = self.b.shapes
        if type(value) is Value and type(ty) is TensorType:
            if value.name is not None:
                shapes.setdefault(value.name, ty.shape)
            return value
        for v, t in zip(_flatten(value), _tensor_types(ty)):
            if v.name is not None:
                shapes.setdefault(v.name, tuple(t.shape))
        return value

    def placeholder(self, expr: Expr) -> AnyT:
        ty = expr.checked_type if expr.has_checked_type else TensorType((), "float32")
        return _placeholder(self.b, ty)


def _is_primitive(func: Function) -> bool:
    return bool(func.attrs.get("Primitive", 0)) if func.attrs is not None else False


class _ModelExporter:
    """State shared by the model graph and its local functions."""

    def __init__(self, onnx: AnyT, opset: int, module: IRModule, problems: _Problems,
                 onnx_functions: bool) -> None:
        self.onnx = onnx
        self.opset = opset
        self.module = module
        self.problems = problems
        self.onnx_functions = onnx_functions
        self.functions: list[AnyT] = []
        self._function_index: dict[int, list[tuple[Function, str, int]]] = {}
        self._constants: dict[Constant, Value] = {}

    def constant(self, node: Constant, b: GraphBuilder) -> Value:
        array = node.array
        if array_code(array) is None:
            self.problems.dtype(str(array.dtype), "a constant")
        if b.function:
            return Value(None, array)
        value = self._constants.get(node)
        if value is None:
            value = self._constants[node] = Value(None, array)
        return value

    # --- the model's graph ------------------------------------------------------------------
    def graph(self, graph: AnyT, main: Function, params: dict[str, np.ndarray],
              output_names: Sequence[str] | None, dim_params: dict[str, Sequence[str | None]],
              graph_name: str) -> GraphBuilder:
        """Fill ``graph`` (a GraphProto) with ``main``, but for the initializers: the builder,
        which holds them (:meth:`GraphBuilder.write_initializers` stores them)."""
        input_names = _unique_names([p.name_hint or "input" for p in main.params])
        outputs_type = main.body.checked_type
        n_out = len(_tensor_types(outputs_type))
        if output_names is None:
            output_names = ["output"] if n_out == 1 else [f"output_{i}" for i in range(n_out)]
        output_names = [str(n) for n in output_names]
        if len(output_names) != n_out or len(set(output_names)) != n_out:
            raise ExportError(f"output_names {output_names} must name the {n_out} outputs of "
                              f"@main once each")
        clash = sorted(set(output_names) & set(input_names))
        if clash:
            raise ExportError(f"output name(s) {', '.join(map(repr, clash))} are also input names")
        unknown = sorted(set(params) - set(input_names))
        if unknown:
            raise ExportError(f"params names {', '.join(map(repr, unknown))}, which @main has "
                              f"no parameter for")
        b = GraphBuilder(self.onnx, self.opset, reserved=[*input_names, *output_names])
        scope = _Scope(None)
        inputs = []
        for param, name in zip(main.params, input_names):
            ty = param.checked_type
            self.problems.check_type(ty, f"parameter %{param.name_hint}")
            if not isinstance(ty, TensorType):
                self.problems.operator(f"parameter %{param.name_hint} of type {ty} (graph inputs "
                                       f"are tensors)")
                scope.memo[param] = _placeholder(b, ty)
                continue
            if name in params:
                b.add_initializer(name, np.asarray(params[name], dtype=ty.dtype))
            else:
                inputs.append((name, ty))
            scope.memo[param] = Value(name)
            b.shapes[name] = tuple(ty.shape)
        result = _GraphConverter(self, b).value_of(main.body, scope)
        if self.problems.bad_opset or self.problems.operators or self.problems.dtypes:
            return b
        names = [b.name(v) for v in _flatten(result)]
        clean_up(b, names)
        _name_outputs(b, names, output_names, set(input_names))
        graph.name = graph_name
        b.write_nodes(graph.node)
        for name, ty in inputs:
            _add_value_info(graph.input, name, ty, dim_params.get(name))
        for name, ty in zip(output_names, _tensor_types(outputs_type)):
            _add_value_info(graph.output, name, ty, dim_params.get(name))
        return b

    # --- local functions --------------------------------------------------------------------
    def call_local_function(self, b: GraphBuilder, func: Function, args: list) -> AnyT:
        name, n_out = self._local_function(func)
        flat_args = [a for arg in args for a in _flatten(arg)]
        outs = b.node(name, flat_args, outputs=n_out, domain=FUSED_DOMAIN)
        outs = [outs] if n_out == 1 else outs
        return _restructure(func.body.checked_type, outs)

    def _local_function(self, func: Function) -> tuple[str, int]:
        key = structural_hash(func)
        for other, name, n_out in self._function_index.get(key, ()):
            if structural_equal(func, other):
                return name, n_out
        fb = GraphBuilder(self.onnx, self.opset, function=True)
        scope = _Scope(None)
        input_names = []
        for param in func.params:
            flat = []
            for _ in _tensor_types(param.checked_type):
                flat.append(Value(fb.fresh("x")))
            input_names.extend(v.name for v in flat)
            scope.memo[param] = _restructure(param.checked_type, flat)
        result = _flatten(_GraphConverter(self, fb).value_of(func.body, scope))
        output_names = []
        for v in result:
            name = fb.name(v)
            if name in input_names or name in output_names:
                name = fb.name(fb.node("Identity", [v]))
            output_names.append(name)
        ops = sorted({c.op.name.replace("nn.", "") for c in _calls(func.body)})
        fname = f"fused_{'_'.join(ops)[:48] or 'identity'}_{len(self.functions)}"
        function = self.onnx.helper.make_function(
            FUSED_DOMAIN, fname, input_names, output_names, [],
            [self.onnx.helper.make_opsetid("", self.opset)])
        fb.write_nodes(function.node)
        self.functions.append(function)
        self._function_index.setdefault(key, []).append((func, fname, len(output_names)))
        return fname, len(output_names)


def _add_value_info(container: AnyT, name: str, ty: TensorType,
                    dims: Sequence[str | None] | None) -> None:
    """Add to ``container`` (a graph's inputs or outputs) the ValueInfoProto of a tensor named
    ``name`` of type ``ty``, its unknown extents named by ``dims``: what
    ``onnx.helper.make_tensor_value_info`` makes, made in its place with one call."""
    shape: list[dict] = []
    for k, d in enumerate(ty.shape):
        given = dims[k] if dims is not None and k < len(dims) else None
        if isinstance(d, Any):
            shape.append({} if given is None else {"dim_param": given})
        elif known_int(d) is None:  # a size variable (or an expression of them) keeps its name
            shape.append({"dim_param": given or str(d)})
        else:
            shape.append({"dim_value": int(d)})
    container.add(name=name, type={"tensor_type": {"elem_type": onnx_code(ty.dtype),
                                                   "shape": {"dim": shape}}})


def _placeholder(b: GraphBuilder, ty: Type) -> AnyT:
    """Values standing for what could not be exported, so that the walk can go on."""
    if isinstance(ty, TupleType):
        return tuple(_placeholder(b, f) for f in ty.fields)
    return Value(b.fresh("unsupported"))


def _restructure(ty: Type, flat: list[Value]) -> AnyT:
    """The flat values of a (possibly tuple) type, nested as the type is."""
    it = iter(flat)

    def build(t: Type) -> AnyT:
        if isinstance(t, TupleType):
            return tuple(build(f) for f in t.fields)
        return next(it)

    return build(ty)


def _calls(expr: Expr) -> list[Call]:
    return [n for n in post_order(expr) if isinstance(n, Call) and isinstance(n.op, Op)]


def _unique_names(names: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in seen:
            candidate = f"{name}_{n}"
            n += 1
        seen.add(candidate)
        out.append(candidate)
    return out


def _name_outputs(b: GraphBuilder, values: list[str], names: Sequence[str],
                  inputs: set[str]) -> None:
    """Give the graph outputs their names: the node computing one is renamed, or, when the
    value is an input, an initializer or another output too, an Identity node copies it."""
    producer = {o: n for n in b.nodes for o in n.outputs}
    renames: dict[str, str] = {}
    for current, name in zip(values, names):
        node = producer.get(current)
        if node is None or current in renames or current in inputs:
            b.nodes.append(b.make_node("Identity", [current], [name]))
            continue
        renames[current] = name
    if not renames:
        return
    renamed = renames.keys()
    for n in b.nodes:
        if not renamed.isdisjoint(n.inputs):
            n.inputs = [renames.get(x, x) for x in n.inputs]
    for current in renames:
        node = producer[current]
        node.outputs = [renames.get(x, x) for x in node.outputs]


# --- writing --------------------------------------------------------------------------------------


def _save(model: AnyT, builder: GraphBuilder, path: str, streamed: bool) -> None:
    """Write ``model`` with ``builder``'s initializers to ``path``, under a temporary name
    beside it renamed into place once written, and store the initializers in ``model``.

    ``streamed``, for large weights, writes each weight from its array
    (:func:`.onnx_export_graph.write_model`) rather than serializing the whole model at
    once, which would copy every weight once more.
    """
    if not streamed:
        builder.write_initializers(model.graph)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if streamed:
                write_model(f, model, builder)
            else:
                f.write(model.SerializeToString())
        _move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if streamed:
        builder.write_initializers(model.graph)


def _move(tmp: str, path: str) -> None:
    """Rename the written file ``tmp`` to ``path``.

    A file already at ``path`` is removed just before the rename rather than
    replaced by it: on ext4, a rename over an existing file makes the kernel
    write the new file's data to disk at once (its ``auto_da_alloc``
    heuristic), which stalls the export for milliseconds on a busy disk.
    """
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    os.replace(tmp, path)


def _save_external(onnx: AnyT, model: AnyT, path: str, threshold: int) -> None:
    """Write ``model`` to ``path`` and its tensors of ``threshold`` bytes or more to
    ``<path>.data``, under temporary names beside them, renamed into place once written."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    tmp = tempfile.mkdtemp(prefix=".relaypass-export-", dir=folder)
    try:
        location = base + ".data"
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        onnx.save_model(copy, os.path.join(tmp, base), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=location,
                        size_threshold=threshold, convert_attribute=False)
        if os.path.exists(os.path.join(tmp, location)):
            _move(os.path.join(tmp, location), os.path.join(folder, location))
        _move(os.path.join(tmp, base), path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
