"""What an ONNX converter may ask while it turns one node into Relay.

Converters need the shapes of their inputs (a 1-D convolution is lifted to
2-D, Softmax before opset 13 flattens around its axis, SAME padding depends
on the input's extent) and sometimes the value of an input that ONNX passes
as a tensor but Relay takes as an attribute (Reshape's shape, Slice's
bounds, ConstantOfShape's shape).  Running InferType after every node, as
Relay's importer does, costs time quadratic in the model; instead the
context types each expression once, from its operator's type relation, the
first time a converter asks, and memoizes by identity.  Static values are
computed the same way, with the operators' kernels, but only for small
tensors: the importer never folds weights (that is FoldConstant's job).

Shape computations are the exception.  Exporters write ``x.view(b, s, h, -1)``
as ``Shape``, ``Gather``, ``Unsqueeze``, ``Concat`` nodes, positions as a
``Range`` up to a ``Shape``'s extent, and so on.  Once the input shapes are
fixed (``from_onnx(shape=...)``) these values are known, and the context
replaces each such result with its value (:meth:`ConversionContext.finish_node`):
the module is then static, a ``Range`` has a static length, and the types
of everything downstream are static too.  What counts as a shape computation
is decided on the ONNX graph: a ``Shape`` or ``Size`` node, and any node
reading the result of one, unless its result is a large or dynamic
non-integer tensor (an activation reshaped to a computed shape, which
nothing known at import time is computed from); only integer and boolean
results are replaced
(positions, extents, masks built from them), so weights computed from
initializers are left to FoldConstant.

With dynamic axes (size variables in the input types) a shape computation
may be known entry by entry only: :meth:`ConversionContext.symbolic` follows
it with :mod:`.onnx_symbolic`, folds the results whose every entry is a
number, and lets converters read the others (a reshape target
``[batch, sequence, 12, 64]``) to keep the graph static where they can.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import RelayPassError
from ..ir.expr import Call, Constant, Expr, Tuple, TupleGetItem, Var
from ..ir.fields import layout_of
from ..ir.op import Op
from ..ir.types import IntImm, TensorType, TupleType, Type
from . import onnx_symbolic
from .errors import OnnxImportError, UnsupportedOperatorError

STATIC_VALUE_LIMIT = 1 << 16
"""Intermediate results with more elements than this are never computed at import time."""

_NO_VALUE = object()
_SHAPE_OPS = ("shape_of", "ndarray_size")
_SHAPE_SOURCES = frozenset({"Shape", "Size"})
"""The ONNX operators whose results describe shapes: what reads them is a shape computation."""


class ConversionContext:
    """Types, static values and error reporting for the node being converted.

    ``opset`` is the opset the converters follow; ``node_*`` describe the
    node being converted, ``outputs_used`` says which of its outputs the
    rest of the graph reads (so that a converter may skip the others).
    """

    __slots__ = ("opset", "node_index", "node_name", "op_type", "num_outputs", "outputs_used",
                 "_types", "_values", "_symbols", "_shape_derived", "_shape_calls",
                 "_transposed", "_constant_types")

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.node_index = -1
        self.node_name = ""
        self.op_type = ""
        self.num_outputs = 1
        self.outputs_used: tuple[bool, ...] = (True,)
        self._types: dict[Expr, Type] = {}
        self._values: dict[Expr, object] = {}
        self._symbols: dict[Expr, object] = {}
        self._shape_derived: set[Expr] = set()
        self._shape_calls: dict[tuple, Call] = {}
        self._transposed: dict[Constant, Constant] = {}
        # Constants' types by shape and dtype: types are immutable, and a model's weights
        # have few distinct shapes.
        self._constant_types: dict[tuple, TensorType] = {}

    def begin_node(self, index: int, name: str, op_type: str, outputs_used: Sequence[bool]) -> None:
        self.node_index = index
        self.node_name = name
        self.op_type = op_type
        self.num_outputs = len(outputs_used)
        self.outputs_used = (outputs_used if type(outputs_used) is tuple
                             else tuple(outputs_used))

    def finish_node(self, inputs: Sequence[Expr | None], results: list) -> list:
        """The node's results, each shape computation among them replaced by its value.

        A result is a shape computation when the node is a ``Shape`` or
        ``Size``, or reads one; it becomes a Constant when it is an integer or
        boolean tensor whose value is known and small.  The results stay
        marked, so that the nodes reading them are shape computations too.
        A shape computation met before (the same operator, attributes and
        arguments: exporters repeat ``Squeeze``, ``Gather`` and ``Unsqueeze``
        of one shape for every use) is that earlier call, so that the module
        holds it once, as EliminateCommonSubexpr would make it.
        """
        derived = self._shape_derived
        if self.op_type not in _SHAPE_SOURCES:
            for x in inputs:
                if x is not None and x in derived:
                    break
            else:
                return results
        out = []
        for r in results:
            if isinstance(r, Expr) and self._may_be_shape_value(r):
                if (type(r) is Call and (type(r.op) is Op or isinstance(r.op, Op))
                        and not r.op.get_attr("TOpIsStateful")):
                    # Looked up before folding: a call met before was not folded, and this
                    # one, computing the same from the same operands, would not be either.
                    key = (r.op, r.attrs, *map(_operand_key, r.args))
                    seen = self._shape_calls.get(key)
                    if seen is not None:
                        r = seen
                    else:
                        folded = self._fold_shape_value(r)
                        if folded is r:
                            self._shape_calls[key] = r
                        r = folded
                else:
                    r = self._fold_shape_value(r)
                derived.add(r)
            out.append(r)
        return out

    def _may_be_shape_value(self, expr: Expr) -> bool:
        """Whether a result reading a shape computation is one too: an integer or boolean tensor
        (a ``Range`` up to a dynamic extent is one), or anything small enough to be folded (a
        ``Cast`` of an extent to float, on its way to a ``Resize`` scale).  A large or dynamic
        activation that merely reads one (a ``Reshape`` of the hidden states) is not: it has no
        value known at import time, nor entries, so neither has anything computed from it, and
        not following it spares evaluating every node downstream of the first ``Reshape``."""
        if type(expr) is Constant:
            return True
        ty = self.type_of(expr)
        return (type(ty) is TensorType and _kind(ty.dtype) in "iub"
                or _static_size(ty) <= STATIC_VALUE_LIMIT)

    def _fold_shape_value(self, expr: Expr) -> Expr:
        if isinstance(expr, Constant):
            return expr
        ty = self.type_of(expr)
        if (not isinstance(ty, TensorType) or _kind(ty.dtype) not in "iub"
                or _static_size(ty) > STATIC_VALUE_LIMIT):
            return expr
        try:
            value = self.value(expr)
        except OnnxImportError:
            # A kernel refused the arguments (an index out of range, ...): the graph keeps the
            # computation, and evaluating the model reports the problem where it happens.
            return expr
        if value is None:
            # With size variables in the input types the value may still be known entry by
            # entry (the 768 of a (batch, sequence, 768) shape): fold when every entry is.
            sym = self.symbolic(expr)
            if sym is None or not onnx_symbolic.concrete(sym):
                return expr
            try:
                value = onnx_symbolic.numeric(sym, ty.dtype)
            except (OverflowError, ValueError, TypeError):
                return expr
        return Constant(np.asarray(value, dtype=ty.dtype))

    def transposed_weight(self, weight: Constant) -> Constant:
        """The constant matrix ``weight`` transposed, made once however many nodes read it (a
        weight shared by two layers stays one initializer when exported)."""
        out = self._transposed.get(weight)
        if out is None:
            out = self._transposed[weight] = Constant(np.ascontiguousarray(weight.array.T))
        return out

    def known(self, expr: Expr) -> Expr:
        """``expr``, or a Constant of its value when that is known (for operators whose type
        depends on an argument's value, such as ``arange``'s length)."""
        if isinstance(expr, Constant):
            return expr
        value = self.value(expr)
        return expr if value is None else Constant(np.asarray(value, dtype=self.dtype(expr)))

    # --- errors -----------------------------------------------------------------------------------
    def where(self) -> str:
        """The node being converted, as error messages name it."""
        name = f" {self.node_name!r}" if self.node_name else ""
        return f"node {self.node_index}{name} ({self.op_type}, opset {self.opset})"

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where()}: {message}")

    def unsupported(self, message: str) -> UnsupportedOperatorError:
        """A form of a supported operator that the importer cannot convert (a 3-D pooling, ...)."""
        return UnsupportedOperatorError(f"{self.where()}: {message}", {self.op_type: 1}, self.opset)

    # --- types ------------------------------------------------------------------------------------
    def type_of(self, expr: Expr) -> Type:
        """The type of ``expr``; every expression the importer builds has a static rank."""
        types = self._types
        ty = types.get(expr)
        if ty is not None:
            return ty
        if type(expr) is Call:
            # What a converter just built on typed inputs and new constants: the common case,
            # without the stack.
            for a in expr.args:
                if a not in types:
                    if type(a) is not Constant:
                        break
                    types[a] = self._constant_type(a)
            else:
                ty = types[expr] = self._call_type(expr)
                return ty
        # Bottom-up with an explicit stack: a node is typed once its operands are, which the
        # operands pushed above it see to first (the last operand first).
        stack: list[Expr] = [expr]
        while stack:
            node = stack[-1]
            if node in types:
                stack.pop()
                continue
            t = type(node)
            if t is Constant:
                types[node] = self._constant_type(node)
                stack.pop()
                continue
            waiting = len(stack)
            for k in _children(node):
                if k not in types:
                    stack.append(k)
            if len(stack) == waiting:
                types[node] = self._call_type(node) if t is Call else self._compute_type(node)
                stack.pop()
        return types[expr]

    def _compute_type(self, node: Expr) -> Type:
        types = self._types
        if type(node) is Call or isinstance(node, Call):
            return self._call_type(node)
        if isinstance(node, Constant):
            return self._constant_type(node)
        if isinstance(node, Var):
            if node.type_annotation is None:
                raise self.error(f"variable %{node.name_hint} has no type")
            return node.type_annotation
        if isinstance(node, Tuple):
            return TupleType([types[f] for f in node.fields])
        if isinstance(node, TupleGetItem):
            return types[node.tuple_value].fields[node.index]
        raise self.error(f"cannot type a {type(node).__name__} at import time")

    def _call_type(self, node: Call) -> Type:
        """The type of a call whose arguments are typed, from its operator's relation."""
        types = self._types
        try:
            return node.op.get_attr("FTypeRelation")([types[a] for a in node.args], node.attrs)
        except RelayPassError as exc:
            raise self.error(str(exc)) from None

    def _constant_type(self, node: Constant) -> TensorType:
        array = node.array
        key = (array.shape, array.dtype)
        ty = self._constant_types.get(key)
        if ty is None:
            ty = self._constant_types[key] = TensorType(array.shape, array.dtype)
        return ty

    def tensor_type(self, expr: Expr, what: str = "the input") -> TensorType:
        ty = self._types.get(expr)
        if type(ty) is TensorType:  # typed before: the common case, without a call
            return ty
        ty = self.type_of(expr)
        if not isinstance(ty, TensorType):
            raise self.error(f"{what} must be a tensor, got {ty}")
        return ty

    def shape(self, expr: Expr) -> tuple:
        """The shape of a tensor expression: ints, size variables (and expressions of them) for
        dynamic axes, ``Any`` for extents nobody knows."""
        ty = self._types.get(expr)
        return (ty if type(ty) is TensorType else self.tensor_type(expr)).shape

    def rank(self, expr: Expr) -> int:
        ty = self._types.get(expr)
        return len((ty if type(ty) is TensorType else self.tensor_type(expr)).shape)

    def dtype(self, expr: Expr) -> str:
        ty = self._types.get(expr)
        return (ty if type(ty) is TensorType else self.tensor_type(expr)).dtype

    def static_shape(self, expr: Expr, what: str = "the input") -> tuple[int, ...]:
        """The shape of ``expr`` as ints; an error when some extent is unknown."""
        shape = self.shape(expr)
        if not all(is_static_dim(d) for d in shape):
            raise self.error(f"{what} must have a static shape here, got ({', '.join(map(str, shape))}); "
                             f"fix the dynamic axes of the inputs with from_onnx(shape=...) "
                             f"(the CLI's --shape)")
        return shape

    # --- static values ----------------------------------------------------------------------------
    def value(self, expr: Expr) -> np.ndarray | None:
        """The value of ``expr`` when it is known at import time (and small), else None."""
        values = self._values
        got = values.get(expr, _NO_VALUE)
        if got is not _NO_VALUE:
            return got  # type: ignore[return-value]
        if type(expr) is Call and expr in self._types and expr.op.name not in _SHAPE_OPS:
            # A typed call of operands evaluated before, one of them unknown (everything a
            # dynamic shape computes): unknown too, whatever _leaf_value would say.
            known = True
            for a in expr.args:
                got = values.get(a, _NO_VALUE)
                if got is None:
                    known = False
                elif got is _NO_VALUE:
                    break
            else:
                if not known:
                    values[expr] = None
                    return None
        return _evaluate(values, expr, self._leaf_value,  # type: ignore[return-value]
                         self._compute_value)

    def _leaf_value(self, node: Expr) -> object:
        """The value of a node whose arguments need not be evaluated (or None if unknowable)."""
        t = type(node)
        if t is Constant:
            return node.array
        if t is Call or isinstance(node, Call):
            op = node.op
            if op.name in _SHAPE_OPS:
                ty = self.type_of(node.args[0])
                if not isinstance(ty, TensorType) or not ty.is_static:
                    return None
                data = np.array(ty.shape, dtype=node.attrs.dtype)
                return data if op.name == "shape_of" else np.array(data.prod(), dtype=data.dtype)
            if op.get_attr("FKernel") is None or op.get_attr("TOpIsStateful"):
                return None
            if _static_size(self.type_of(node)) > STATIC_VALUE_LIMIT:
                return None
            return _NO_VALUE
        if isinstance(node, Constant):
            return node.array
        if isinstance(node, Var):
            return None
        return _NO_VALUE

    def _compute_value(self, node: Expr) -> object:
        values = self._values
        args = [values[k] for k in _children(node)]
        for a in args:
            if a is None:
                return None
        if isinstance(node, Tuple):
            return tuple(args)
        if isinstance(node, TupleGetItem):
            return args[0][node.index]  # type: ignore[index]
        try:
            return node.op.get_attr("FKernel")(args, node.attrs)  # type: ignore[attr-defined]
        except (ValueError, TypeError, IndexError, ArithmeticError) as exc:
            raise self.error(f"evaluating {node.op.name} at import time failed: {exc}") from None  # type: ignore[attr-defined]

    # --- symbolic values ---------------------------------------------------------------------------
    def symbolic(self, expr: Expr) -> np.ndarray | None:
        """The value of a small integer tensor entry by entry, as :mod:`.onnx_symbolic` computes
        it (numbers, size variables and expressions of them, None where unknown); None when
        the expression is not such a tensor or its entries cannot be followed."""
        got = _evaluate(self._symbols, expr, self._symbolic_leaf, self._compute_symbolic)
        return got if isinstance(got, np.ndarray) else None

    def symbolic_entries(self, expr: Expr) -> list | None:
        """The entries of a 0-D or 1-D integer tensor's symbolic value, or None."""
        sym = self.symbolic(expr)
        if sym is None or sym.ndim > 1 or _kind(self.dtype(expr)) not in "iu":
            return None
        return list(sym.reshape(-1))

    def shape_sources(self, expr: Expr) -> list[Expr]:
        """The tensors whose shapes the symbolic value of ``expr`` reads (the arguments of its
        ``shape_of`` calls), first met first: a target shape ``[batch, sequence, 96]`` computed
        from ``Shape(x)`` names ``x``, whose type holds ``batch`` and ``sequence``."""
        symbols = self._symbols
        out: list[Expr] = []
        seen: set[Expr] = set()
        stack = [expr]
        while stack:
            node = stack.pop()
            if node in seen or symbols.get(node) is None:
                continue
            seen.add(node)
            if isinstance(node, Call) and node.op.name == "shape_of":
                if node.args[0] not in out:
                    out.append(node.args[0])
                continue
            stack.extend(reversed(_children(node)))
        return out

    def _symbolic_leaf(self, node: Expr) -> object:
        """The symbolic value of a node that needs no arguments' (None: it has none)."""
        t = type(node)
        if t is not Call and t is not Constant:
            if isinstance(node, (Tuple, TupleGetItem)):
                return _NO_VALUE
            if isinstance(node, Var):
                return None
        ty = self.type_of(node)
        if not onnx_symbolic.tracks(ty):
            return None
        if isinstance(node, Constant):
            return onnx_symbolic.from_array(node.array)
        if isinstance(node, Call):
            op = node.op
            if op.name in _SHAPE_OPS:
                arg = self.type_of(node.args[0])
                if not isinstance(arg, TensorType):
                    return None
                dims = onnx_symbolic.dims_of(arg)
                if op.name == "shape_of":
                    return dims
                total: object = 1
                for d in dims:
                    total = None if d is None or total is None else total * d
                out = np.empty((), dtype=object)
                out[()] = total
                return out
            if op.get_attr("TOpIsStateful"):
                return None
            return _NO_VALUE
        return None

    def _compute_symbolic(self, node: Expr) -> object:
        symbols = self._symbols
        args = [symbols[k] for k in _children(node)]
        for a in args:
            if a is None:
                return None
        if isinstance(node, Tuple):
            return tuple(args)
        if isinstance(node, TupleGetItem):
            got = args[0]
            return got[node.index] if isinstance(got, tuple) else None
        call = node
        dtypes = []
        types = self._types
        for k in call.args:  # type: ignore[attr-defined]
            ty = types.get(k) or self.type_of(k)
            dtypes.append(ty.dtype if type(ty) is TensorType
                          else tuple(f.dtype for f in ty.fields) if isinstance(ty, TupleType)
                          else ty.dtype)
        out = self.tensor_type(call)
        return onnx_symbolic.evaluate(call.op.name, call.op.get_attr("FKernel"), args, dtypes,  # type: ignore[attr-defined]
                                      call.attrs, out.dtype, out.shape)  # type: ignore[attr-defined]

    def static_value(self, expr: Expr, what: str) -> np.ndarray:
        """The value of ``expr``, which this operator needs at import time; an error otherwise."""
        value = self.value(expr)
        if value is None:
            raise self.error(f"{what} must be known when the model is imported (a constant, or "
                             f"computed from constants and static shapes): this operator has no "
                             f"form whose {what} is computed when the model runs; fix the dynamic "
                             f"axes of the inputs with from_onnx(shape=...) (the CLI's --shape)")
        return np.asarray(value)

    def static_ints(self, expr: Expr, what: str) -> list[int]:
        value = expr.array if type(expr) is Constant else self.static_value(expr, what)
        if value.dtype.kind not in "iub":
            raise self.error(f"{what} must hold integers, got dtype {value.dtype}")
        return [int(v) for v in value.reshape(-1).tolist()]

    def static_scalar(self, expr: Expr, what: str) -> float | int | bool:
        value = self.static_value(expr, what)
        if value.size != 1:
            raise self.error(f"{what} must be a single value, got shape {value.shape}")
        return value.reshape(-1)[0].item()

    # --- building ---------------------------------------------------------------------------------
    def scalar(self, value: float | int | bool, like: Expr | str) -> Constant:
        """A scalar constant of the dtype of ``like`` (an expression or a dtype name)."""
        dtype = like if isinstance(like, str) else self.dtype(like)
        return Constant(np.array(value, dtype=dtype))


def _evaluate(memo: dict, expr: Expr, leaf, compute) -> object:
    """``memo[expr]``, computed bottom-up with an explicit stack: ``leaf(node)`` gives a node's
    result without its operands (or ``_NO_VALUE``), ``compute(node)`` from theirs in ``memo``."""
    got = memo.get(expr, _NO_VALUE)
    if got is not _NO_VALUE:
        return got
    got = leaf(expr)
    if got is not _NO_VALUE:
        memo[expr] = got
        return got
    # The common case without the stack: a new call of operands met before, or of leaves (a
    # new constant), taken in the order the stack below would take them.
    kids = _children(expr)
    for k in reversed(kids):
        if k not in memo:
            found = leaf(k)
            if found is _NO_VALUE:
                break
            memo[k] = found
    else:
        got = memo[expr] = compute(expr)
        return got
    stack: list[tuple[Expr, bool]] = [(expr, True), *((k, False) for k in kids if k not in memo)]
    while stack:
        node, ready = stack.pop()
        if node in memo:
            continue
        if ready:
            memo[node] = compute(node)
            continue
        found = leaf(node)
        if found is not _NO_VALUE:
            memo[node] = found
            continue
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if k not in memo)
    return memo[expr]


def _kind(dtype: str) -> str:
    """The numpy kind of a dtype name (``"f"`` for ``float32``), remembered."""
    kind = _KINDS.get(dtype)
    if kind is None:
        kind = _KINDS[dtype] = np.dtype(dtype).kind
    return kind


_KINDS: dict[str, str] = {}


def _operand_key(expr: Expr) -> object:
    """An argument as shape computations are told apart: a small constant by its value (the
    converters make a new ``1`` for every step of every ``Range``), anything else by identity."""
    if type(expr) is Constant and expr.array.size <= 16:
        array = expr.array
        return (array.dtype.str, array.shape, array.tobytes())
    return expr


def is_static_dim(d: object) -> bool:
    """Whether a dimension is a number (not ``Any``, not a size variable or an expression)."""
    return type(d) is IntImm or type(d) is int


def _children(node: Expr) -> Sequence[Expr]:
    """The values ``node`` is computed from (a call's arguments, a tuple's fields): the kinds
    the importer builds read directly, any other through its layout."""
    t = type(node)
    if t is Call:
        return node.args  # type: ignore[attr-defined]
    if t is Constant or t is Var:
        return ()
    if t is Tuple:
        return node.fields  # type: ignore[attr-defined]
    if t is TupleGetItem:
        return (node.tuple_value,)  # type: ignore[attr-defined]
    return layout_of(node).operands(node)


def _static_size(ty: Type) -> float:
    """How many elements a value of type ``ty`` holds (infinite when some extent is unknown).

    Plain int arithmetic: the importer asks this of every shape computation it
    meets, and the shapes are short.
    """
    fields = ty.fields if type(ty) is TupleType else (ty,)
    total = 0
    for f in fields:
        if type(f) is not TensorType:
            return float("inf")
        size = 1
        for d in f.shape:
            if type(d) is not IntImm:
                return float("inf")
            size *= d
        total += size
    return total
