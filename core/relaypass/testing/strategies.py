"""Hypothesis strategies for random, well-typed Relay programs.

Property tests of passes, of the text format and of the interpreter all need
the same thing: many small programs that are legal (well formed, well typed,
executable) yet exercise every construct a pass must handle.  These
strategies build such programs directly, knowing the type of every value they
create, so no type inference is needed to generate them and every program is
type-correct by construction.

Usage::

    from hypothesis import given, settings
    from relaypass.testing.strategies import modules, programs, random_inputs

    @settings(max_examples=50, deadline=None)
    @given(modules(size=(1, 15), features={"let", "if", "fn", "global"}))
    def test_my_pass(mod):
        out = MyPass()(mod)
        ...

``programs(...)`` draws a closed :class:`~relaypass.ir.Function` (its free
variables are its parameters); ``modules(...)`` draws an
:class:`~relaypass.ir.IRModule` whose ``main`` may call other global functions,
which in turn call functions defined before them (never recursively, so every
program terminates).  ``random_inputs(mod, seed)`` gives numpy arguments for
``main``.

What a program contains
    A dataflow DAG of operator calls over tensors of broadcasting shapes;
    earlier values are reused freely, so subexpressions are shared.  Depending
    on ``features``: ``"let"`` binds values to (sometimes annotated) let
    variables; ``"if"`` adds conditionals whose condition is a boolean scalar
    (a comparison of scalars, reduced if a reduction operator exists) and whose
    branches compute values of one type; ``"tuple"`` adds tuples and
    projections (operators that return tuples, such as ``split``, add them
    too); ``"fn"`` adds local functions (closures, sometimes capturing outer
    values) bound by lets and called, and now and then a function called in
    place; ``"ref"`` adds RefCreate / RefWrite / RefRead, always let-bound so
    that the order of effects is fixed; ``"global"`` (modules only) adds global
    functions that call each other.  Parameters always carry type
    annotations; let variables and return types do sometimes.  With
    ``size_vars=True`` some dimensions are the size variables ``n`` and
    ``m`` (shared by the whole module; values of such types are parameters,
    never constants), and only the operator uses of :data:`SIZE_VAR_KINDS`
    are kept.

Operator mix
    Each operator is used according to an :class:`OpUse`: its name and its
    *kind*, the shape of its use (``"binary"`` broadcasting, ``"unary"``
    elementwise, ``"compare"``, ``"reduce"``, ``"concatenate"``, ...), which
    decides how arguments are chosen and what the result type is.
    :data:`DEFAULT_OP_USES` describes the standard operator set with Relay's
    attribute names; uses whose operator is not registered (or whose
    attributes its schema lacks) are dropped, so the table can name operators
    that do not exist yet.  Pass ``ops=`` a list of names or of OpUse to
    choose a mix; a new kind of use means a new ``_kind_*`` builder below.

Numerics
    Operators with a restricted domain (divide's divisor, log's argument, ...)
    get their guarded argument as ``v * v + 1``, so random inputs rarely lead
    to infinities or NaNs; long chains may still overflow.  Constants are
    random normal, or all zeros, ones or twos (so that simplifications such as
    ``x * 1`` have something to find).

Every name in a program is unique (``%p0``, ``%x3``, ``%f1``, ...), every
variable is bound once, and ``relay.analysis.well_formed`` holds.

Algebraic data types
    ``adt_modules(...)`` draws modules of type definitions (type parameters,
    constructors whose fields are tensors, type parameters, tuples, the type
    itself or earlier types) with functions that build values
    (``@mk_T0_1``, a constructor sometimes passed as a value) and take them
    apart (``@case_T0``: a match over constructor, tuple, variable and
    wildcard patterns, ``match?`` when its clauses leave cases out), all
    well typed: what the text format, structural equality and InferType are
    checked against.

Dynamic shapes
    ``dynamic_programs(...)`` draws functions of ``dyn.*`` calls (``dyn.reshape``,
    ``dyn.nn.pad``, ``dyn.image.resize2d``, ...) whose shape arguments are tensors:
    parameters, constants or ``shape_of`` earlier values, so result types hold ``Any``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ..analysis.unmatched_cases import unmatched_cases
from ..errors import RelayPassError
from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.op import Op, make_call
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    RefType,
    SizeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)
from .inputs import random_inputs

__all__ = [
    "DEFAULT_FEATURES", "DEFAULT_OP_USES", "FEATURES", "KINDS", "PATTERN_OP_USES", "OpUse",
    "SIZE_VAR_KINDS", "adt_modules",
    "available_op_uses", "dynamic_programs", "modules", "programs", "random_inputs",
]

FEATURES = frozenset({"let", "if", "tuple", "fn", "ref", "global"})
"""Every construct a generated program may contain besides operator calls."""

DEFAULT_FEATURES = frozenset({"let", "if", "tuple", "fn", "global"})
"""The features used when none are given: all but references."""

SIZE_VAR_KINDS = frozenset({
    "unary", "binary", "compare", "cast", "reduce", "axis_unary", "transpose", "concatenate",
    "stack", "where",
})
"""The kinds of use a program with size variables keeps: their result types follow from the
argument shapes by equality, broadcasting against 1 and sums, which a size variable supports."""

FLOATS = ("float16", "float32", "float64")


@dataclass(frozen=True)
class OpUse:
    """How the generator uses one operator.

    ``kind`` names the shape of use (a key of :data:`KINDS`); ``attrs`` are
    fixed attribute values passed with every call (``clip``'s bounds);
    ``weight`` is the relative frequency; ``guard`` lists argument positions
    that must stay in the operator's domain (they get ``v * v + 1``);
    ``dtypes`` restricts the input dtypes (None: any numeric dtype).
    """

    name: str
    kind: str
    attrs: tuple[tuple[str, object], ...] = ()
    weight: int = 1
    guard: tuple[int, ...] = ()
    dtypes: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of use {self.kind!r}; known: {', '.join(sorted(KINDS))}")
        if isinstance(self.attrs, Mapping):
            object.__setattr__(self, "attrs", tuple(self.attrs.items()))


# kind -> (attribute names the generator must be able to pass, names passed only if the schema has them)
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "unary": ((), ()),
    "binary": ((), ()),
    "compare": ((), ()),
    "cast": (("dtype",), ()),
    "reduce": (("axis", "keepdims"), ()),
    "axis_unary": (("axis",), ()),
    "transpose": (("axes",), ()),
    "expand_dims": (("axis",), ("num_newaxis",)),
    "squeeze": (("axis",), ()),
    "reshape": (("newshape",), ()),
    "concatenate": (("axis",), ()),
    "stack": (("axis",), ()),
    "split": (("indices_or_sections", "axis"), ()),
    "where": ((), ()),
    "dense": ((), ("units",)),
    "batch_matmul": ((), ("transpose_a", "transpose_b")),
    "bias_add": (("axis",), ()),
    "batch_norm": (("axis",), ()),
    "dropout": (("rate",), ()),
    "conv2d": (("padding",), ("strides", "dilation", "channels", "kernel_size")),
    "pool2d": (("pool_size",), ("strides", "padding")),
    "global_pool2d": ((), ()),
    "batch_flatten": ((), ()),
    "arg_reduce": (("axis", "keepdims"), ()),
    "layer_norm": (("axis",), ()),
    "prelu": (("axis",), ()),
    "repeat": (("repeats", "axis"), ()),
    "tile": (("reps",), ()),
    "strided_slice": (("begin", "end"), ("strides",)),
    "broadcast_to": (("shape",), ()),
    "pad": (("pad_width",), ()),
    "take": (("axis",), ("mode",)),
    "matmul": ((), ("transpose_a", "transpose_b")),
    "adaptive_pool2d": (("output_size",), ()),
    "upsampling": (("scale_h", "scale_w"), ()),
    "shape_of": ((), ("dtype",)),
    "fill": (("shape",), ("dtype",)),
    "full_like": ((), ()),
}
"""The kinds of use the generator knows, with the attributes each passes."""

_MIN_RANK = {
    "transpose": 2, "bias_add": 2, "batch_norm": 2, "prelu": 2, "batch_flatten": 2, "matmul": 2,
    "batch_matmul": 3, "conv2d": 4, "pool2d": 4, "global_pool2d": 4, "adaptive_pool2d": 4,
    "upsampling": 4,
}
"""Kinds whose operators need tensors of at least this rank; left out below ``max_rank``."""


def _u(name: str, kind: str, **kw: object) -> OpUse:
    return OpUse(name, kind, **kw)  # type: ignore[arg-type]


DEFAULT_OP_USES: tuple[OpUse, ...] = (
    _u("add", "binary", weight=4),
    _u("subtract", "binary", weight=3),
    _u("multiply", "binary", weight=4),
    _u("divide", "binary", weight=2, guard=(1,)),
    _u("maximum", "binary"),
    _u("minimum", "binary"),
    _u("power", "binary", guard=(0,), dtypes=FLOATS),
    _u("logical_and", "binary", dtypes=("bool",)),
    _u("logical_or", "binary", dtypes=("bool",)),
    _u("less", "compare"),
    _u("less_equal", "compare"),
    _u("greater", "compare"),
    _u("greater_equal", "compare"),
    _u("equal", "compare"),
    _u("not_equal", "compare"),
    _u("negative", "unary", weight=2),
    _u("nn.relu", "unary", weight=3),
    _u("exp", "unary", dtypes=FLOATS),
    _u("log", "unary", guard=(0,), dtypes=FLOATS),
    _u("sqrt", "unary", guard=(0,), dtypes=FLOATS),
    _u("rsqrt", "unary", guard=(0,), dtypes=FLOATS),
    _u("sigmoid", "unary", dtypes=FLOATS),
    _u("tanh", "unary", dtypes=FLOATS),
    _u("abs", "unary"),
    _u("floor", "unary", dtypes=FLOATS),
    _u("ceil", "unary", dtypes=FLOATS),
    _u("round", "unary", dtypes=FLOATS),
    _u("sign", "unary"),
    _u("erf", "unary", dtypes=FLOATS),
    _u("copy", "unary"),
    _u("zeros_like", "unary"),
    _u("ones_like", "unary"),
    _u("logical_not", "unary", dtypes=("bool",)),
    _u("clip", "unary", attrs={"a_min": -1.0, "a_max": 1.0}),
    _u("nn.leaky_relu", "unary", attrs={"alpha": 0.1}, dtypes=FLOATS),
    _u("cast", "cast"),
    _u("sum", "reduce"),
    _u("mean", "reduce", dtypes=FLOATS),
    _u("max", "reduce"),
    _u("min", "reduce"),
    _u("prod", "reduce"),
    _u("nn.softmax", "axis_unary", dtypes=FLOATS),
    _u("nn.log_softmax", "axis_unary", dtypes=FLOATS),
    _u("transpose", "transpose"),
    _u("expand_dims", "expand_dims"),
    _u("squeeze", "squeeze"),
    _u("reshape", "reshape"),
    _u("concatenate", "concatenate", weight=2),
    _u("stack", "stack"),
    _u("split", "split"),
    _u("where", "where"),
    _u("nn.dense", "dense", weight=2),
    _u("nn.batch_matmul", "batch_matmul"),
    _u("nn.bias_add", "bias_add"),
    _u("nn.batch_norm", "batch_norm", dtypes=FLOATS),
    _u("nn.dropout", "dropout", dtypes=FLOATS),
    _u("nn.conv2d", "conv2d", weight=2, dtypes=FLOATS),
    _u("nn.max_pool2d", "pool2d", dtypes=FLOATS),
    _u("nn.avg_pool2d", "pool2d", dtypes=FLOATS),
    _u("nn.global_avg_pool2d", "global_pool2d", dtypes=FLOATS),
    _u("nn.global_max_pool2d", "global_pool2d", dtypes=FLOATS),
    _u("nn.batch_flatten", "batch_flatten"),
    _u("floor_divide", "binary", guard=(1,)),
    _u("floor_mod", "binary", guard=(1,)),
    _u("trunc", "unary", dtypes=FLOATS),
    _u("argmax", "arg_reduce"),
    _u("argmin", "arg_reduce"),
    _u("nn.layer_norm", "layer_norm", dtypes=FLOATS),
    _u("nn.prelu", "prelu", dtypes=FLOATS),
    _u("reverse", "axis_unary"),
    _u("repeat", "repeat"),
    _u("tile", "tile"),
    _u("strided_slice", "strided_slice"),
    _u("broadcast_to", "broadcast_to"),
    _u("nn.pad", "pad"),
    _u("take", "take"),
    _u("nn.matmul", "matmul"),
    _u("nn.adaptive_avg_pool2d", "adaptive_pool2d", dtypes=FLOATS),
    _u("nn.upsampling", "upsampling", dtypes=FLOATS),
    _u("shape_of", "shape_of"),
    _u("zeros", "fill"),
    _u("ones", "fill"),
    _u("full_like", "full_like"),
)
"""The standard operator set as the generator uses it (missing operators are skipped)."""


# --------------------------------------------------------------------------- pass patterns
# The patterns graph-level passes rewrite hardly ever arise from operators drawn one
# at a time: a constant per-channel scale next to a convolution (FoldScaleAxis),
# branches that apply weights of one shape to one input (CombineParallel*), a pad of
# zeros before a convolution or pool (FoldExplicitPadding), a cast that widens a
# narrow value (CanonicalizeCast).  These kinds build each pattern in one step.

KINDS.update({
    "channel_scale": ((), ()),
    "scaled_conv2d": (("channels", "kernel_size"), ()),
    "scaled_dense": ((), ()),
    "parallel_conv2d": (("channels", "kernel_size"), ()),
    "parallel_dense": ((), ()),
    "parallel_batch_matmul": ((), ()),
    "pad_window1d": (("padding",), ()),
    "pad_window2d": (("padding",), ()),
    "pad_window3d": (("padding",), ()),
    "widening_cast": (("dtype",), ()),
})
_MIN_RANK.update({
    "channel_scale": 2, "scaled_conv2d": 4, "scaled_dense": 2, "parallel_conv2d": 4, "parallel_dense": 2, "parallel_batch_matmul": 3,
    "pad_window1d": 3, "pad_window2d": 4, "pad_window3d": 5,
})

PATTERN_OP_USES: tuple[OpUse, ...] = (
    _u("multiply", "channel_scale", weight=2, dtypes=FLOATS),
    _u("nn.conv2d", "scaled_conv2d", weight=2, dtypes=FLOATS),
    _u("nn.dense", "scaled_dense", dtypes=FLOATS),
    _u("nn.conv2d", "parallel_conv2d", dtypes=FLOATS),
    _u("nn.dense", "parallel_dense"),
    _u("nn.batch_matmul", "parallel_batch_matmul"),
    *(_u(f"nn.{op}{n}d", f"pad_window{n}d", dtypes=FLOATS)
      for n in (1, 2, 3) for op in ("conv", "max_pool", "avg_pool")),
    _u("cast", "widening_cast", dtypes=FLOATS),
)
"""Uses that build the patterns graph-level passes rewrite; add them to an operator mix.

``channel_scale``: ``x * s`` with ``s`` a constant per channel (channels
first or last) or a scalar, non-negative more often than not.
``scaled_conv2d`` / ``scaled_dense``: the operator with its input scaled per
input channel before it, or its output scaled per output channel after it,
or both, a bias and a relu now and then between.
``parallel_conv2d`` / ``parallel_dense`` / ``parallel_batch_matmul``: two or
three calls of the operator on one input, with weights of one shape (conv2d
and dense: the output channels may differ), each followed by the same chain
of scale, bias and relu (now and then a shorter one), concatenated along the
channels.  ``pad_window{1,2,3}d``: ``nn.pad`` of the spatial axes (now and
then of the channels too) with zeros, the dtype's lowest value or another
constant, mostly in ``constant`` mode, read by the convolution or pool the
use names, channels first or last.  ``widening_cast``: a value cast to
float16 or bool and back, often read by two elementwise operators.
"""


class _PatternKinds:
    """The ``_kind_*`` builders of :data:`PATTERN_OP_USES`; mixed into the generator."""

    def _kind_channel_scale(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        shape = ty.shape  # type: ignore[attr-defined]
        if self.chance(70):
            scale_shape: tuple[int, ...] = (shape[1], *[1] * (len(shape) - 2))
        elif self.chance(50):
            scale_shape = (shape[-1],)
        else:
            scale_shape = ()
        scale = Constant(self.array(TensorType(scale_shape, dtype), positive=self.chance(60)))
        args = [x, scale] if self.chance(70) else [scale, x]
        self.emit(scope, make_call(use.name, args), ty)

    def _scaled(self, scope: _Scope, use: OpUse, dtype: str, x: Expr, in_channels: tuple[int, ...],
                build) -> None:
        """``build(input) -> (call, out per-channel shape, out type)`` with scales before or after."""
        before, after = self.draw(st.sampled_from([(True, False), (False, True), (True, True)]))
        if before:
            steps = [s for s in ("relu", "bias") if self.chance(30)]
            x = make_call("multiply", [x, Constant(
                self.array(TensorType(in_channels, dtype), positive=self.chance(70)))])
            x = self._branch_tail(scope, x, in_channels, dtype, steps)
        call, out_channels, out = build(x)
        if after:
            steps = [s for s in ("bias", "relu") if self.chance(30)]
            call = self._branch_tail(scope, call, out_channels, dtype, steps)
            call = make_call("multiply", [call, Constant(
                self.array(TensorType(out_channels, dtype), positive=self.chance(70)))])
        self.emit(scope, call, out)

    def _kind_scaled_conv2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        kh, kw = self.integer(1, min(3, h + 2)), self.integer(1, min(3, w + 2))
        o = self.integer(1, self.cfg.max_dim)
        weight = self.leaf(scope, TensorType((o, c, kh, kw), dtype))[0]

        def build(data: Expr) -> tuple[Expr, tuple[int, ...], TensorType]:
            call = make_call(use.name, [data, weight], padding=(1, 1), channels=o, kernel_size=(kh, kw))
            return call, (o, 1, 1), TensorType((n, o, h + 3 - kh, w + 3 - kw), dtype)

        self._scaled(scope, use, dtype, x, (c, 1, 1), build)

    def _kind_scaled_dense(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == 2, make=lambda: self.shape(2, 2))
        m, k = ty.shape  # type: ignore[attr-defined]
        units = self.integer(1, self.cfg.max_dim)
        weight = self.leaf(scope, TensorType((units, k), dtype))[0]

        def build(data: Expr) -> tuple[Expr, tuple[int, ...], TensorType]:
            return make_call(use.name, [data, weight]), (units,), TensorType((m, units), dtype)

        self._scaled(scope, use, dtype, x, (k,), build)

    def _branch_tail(self, scope: _Scope, value: Expr, per_channel: tuple[int, ...], dtype: str,
                     tail: Sequence[str]) -> Expr:
        """``value`` through ``tail``: a constant scale, a bias (parameter or constant), relu."""
        for step in tail:
            if step == "relu":
                value = make_call("nn.relu", [value])
            elif step == "scale":
                value = make_call("multiply", [value, Constant(
                    self.array(TensorType(per_channel, dtype), positive=True))])
            else:
                bias = self.leaf(scope, TensorType(per_channel, dtype))[0]
                value = make_call("add", [value, bias])
        return value

    def _parallel(self, scope: _Scope, dtype: str, build, out_dims, axis: int) -> None:
        """Two or three branches ``build(i) -> (call, per-channel shape)``, concatenated on ``axis``."""
        steps = [s for s in ("scale", "bias", "relu") if self.chance(50)]
        branches, widths = [], []
        for i in range(self.integer(2, 3)):
            call, per_channel = build(i)
            tail = steps[:self.integer(0, len(steps) - 1)] if steps and self.chance(20) else steps
            branches.append(self._branch_tail(scope, call, per_channel, dtype, tail))
            widths.append(per_channel[0])
        out = list(out_dims)
        out[axis] = sum(widths)
        self.emit(scope, make_call("concatenate", [Tuple(branches)], axis=axis), TensorType(out, dtype))

    def _kind_parallel_conv2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        pad = self.integer(0, 1)
        kh, kw = self.integer(1, min(3, h + 2 * pad)), self.integer(1, min(3, w + 2 * pad))
        same = self.chance(50)
        first = self.integer(1, self.cfg.max_dim)

        def build(i: int) -> tuple[Expr, tuple[int, ...]]:
            o = first if same or i == 0 else self.integer(1, self.cfg.max_dim)
            weight = self.leaf(scope, TensorType((o, c, kh, kw), dtype))[0]
            call = make_call(use.name, [x, weight], padding=(pad, pad), channels=o,
                             kernel_size=(kh, kw))
            return call, (o, 1, 1)

        self._parallel(scope, dtype, build, (n, 0, h + 2 * pad - kh + 1, w + 2 * pad - kw + 1), 1)

    def _kind_parallel_dense(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == 2, make=lambda: self.shape(2, 2))
        m, k = ty.shape  # type: ignore[attr-defined]
        same = self.chance(50)
        first = self.integer(1, self.cfg.max_dim)

        def build(i: int) -> tuple[Expr, tuple[int, ...]]:
            units = first if same or i == 0 else self.integer(1, self.cfg.max_dim)
            weight = self.leaf(scope, TensorType((units, k), dtype))[0]
            return make_call(use.name, [x, weight]), (units,)

        self._parallel(scope, dtype, build, (m, 0), 1)

    def _kind_parallel_batch_matmul(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == 3, make=lambda: self.shape(3, 3))
        b, m, k = ty.shape  # type: ignore[attr-defined]
        n = self.integer(1, self.cfg.max_dim)

        def build(i: int) -> tuple[Expr, tuple[int, ...]]:
            y = self.leaf(scope, TensorType((b, n, k), dtype))[0]
            return make_call(use.name, [x, y], transpose_a=False, transpose_b=True), (n,)

        self._parallel(scope, dtype, build, (b, m, 0), 2)

    def _pad_window(self, scope: _Scope, use: OpUse, dtype: str, ndim: int) -> None:
        last = self.chance(30)  # channels last: NWC, NHWC, NDHWC
        spatial = "DHW"[3 - ndim:]
        layout = f"N{spatial}C" if last else f"NC{spatial}"

        def make() -> tuple[int, ...]:
            dims = [self.integer(1, 2), self.integer(1, self.cfg.max_dim),
                    *(self.integer(1, self.cfg.max_dim) for _ in range(ndim))]
            return (dims[0], *dims[2:], dims[1]) if last else tuple(dims)

        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == ndim + 2, make=make)
        widths = [(self.integer(0, 1), self.integer(0, 1)) if axis in spatial
                  or self.integer(0, 9) == 0 else (0, 0) for axis in layout]
        padded = [d + lo + hi for d, (lo, hi) in zip(ty.shape, widths)]  # type: ignore[attr-defined]
        pool = "pool" in use.name
        lowest = np.finfo(dtype).min if "max" in use.name else 0
        value = lowest if self.chance(75) else self.array(TensorType((), dtype))
        mode = "constant" if self.chance(90) else "edge"
        data = make_call("nn.pad", [x, Constant(np.asarray(value, dtype))], pad_width=widths,
                         pad_mode=mode)
        sizes = [padded[layout.index(axis)] for axis in spatial]
        kernel = [self.integer(1, min(3, d)) for d in sizes]
        own = [self.integer(0, k - 1) if pool else self.integer(0, 1) for k in kernel]
        out = list(padded)
        for axis, d, k, p in zip(spatial, sizes, kernel, own):
            out[layout.index(axis)] = d + 2 * p - k + 1
        padding = [*own, *own]
        if pool:
            attrs: dict[str, object] = {"pool_size": kernel, "padding": padding, "layout": layout}
            if "avg" in use.name:
                attrs["count_include_pad"] = self.chance(50)
            self.emit(scope, make_call(use.name, [data], **attrs), TensorType(out, dtype))
            return
        c = padded[layout.index("C")]
        o = self.integer(1, self.cfg.max_dim)
        out[layout.index("C")] = o
        kernel_layout = f"{spatial}IO" if last else f"OI{spatial}"
        wshape = (*kernel, c, o) if last else (o, c, *kernel)
        weight = self.leaf(scope, TensorType(wshape, dtype))[0]
        call = make_call(use.name, [data, weight], padding=padding, channels=o, kernel_size=kernel,
                         data_layout=layout, kernel_layout=kernel_layout)
        self.emit(scope, call, TensorType(out, dtype))

    def _kind_pad_window1d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        self._pad_window(scope, use, dtype, 1)

    def _kind_pad_window2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        self._pad_window(scope, use, dtype, 2)

    def _kind_pad_window3d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        self._pad_window(scope, use, dtype, 3)

    def _kind_widening_cast(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        narrow = self.draw(st.sampled_from([d for d in ("float16", "bool") if d != dtype]))
        wide, _ = self.emit(scope, make_call(use.name, [make_call(use.name, [x], dtype=narrow)],
                                             dtype=dtype), ty, bind_percent=20)
        if self.chance(70):  # read by two elementwise operators
            both = make_call("add", [make_call("nn.relu", [wide]), make_call("negative", [wide])])
            self.emit(scope, both, ty)


def _registered(name: str) -> Op | None:
    try:
        return Op.get(name)
    except RelayPassError:
        return None


def _usable(use: OpUse, dtype: str) -> bool:
    op = _registered(use.name)
    if op is None:
        return False
    required, _optional = KINDS[use.kind]
    names = set(required) | {k for k, _ in use.attrs}
    if names:
        schema = op.attrs_schema
        if schema is None or not names <= set(schema.fields):
            return False
    if use.guard and (_registered("add") is None or _registered("multiply") is None):
        return False
    if use.dtypes is not None and dtype not in use.dtypes and "bool" not in use.dtypes:
        return False
    return True


def available_op_uses(
    ops: Iterable[str | OpUse] | None = None, dtype: str = "float32"
) -> tuple[OpUse, ...]:
    """The uses of ``ops`` (names or OpUse; None: the defaults) that can be generated now.

    A name is looked up in :data:`DEFAULT_OP_USES` (all its uses); an operator
    that is not registered, or does not take the attributes its kind passes,
    or does not accept ``dtype``, is left out.
    """
    if ops is None:
        wanted: list[OpUse] = list(DEFAULT_OP_USES)
    else:
        wanted = []
        for item in ops:
            if isinstance(item, OpUse):
                wanted.append(item)
                continue
            matches = [u for u in DEFAULT_OP_USES if u.name == item]
            if not matches:
                raise ValueError(
                    f"no default use is known for operator {item!r}; pass an OpUse(name, kind) "
                    f"with one of the kinds {', '.join(sorted(KINDS))}"
                )
            wanted.extend(matches)
    return tuple(u for u in wanted if _usable(u, dtype))


# --------------------------------------------------------------------------- shapes


def _broadcast(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """Numpy broadcasting of two static shapes, or None when they do not broadcast."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _fits_into(small: Sequence[int], big: Sequence[int]) -> bool:
    """True when ``small`` broadcasts to exactly ``big``."""
    return _broadcast(small, big) == tuple(big)


# --------------------------------------------------------------------------- generator

_Entry = tuple[Expr, Type]


class _Scope:
    """One block under construction: the values it can use, its let bindings, its function's params."""

    __slots__ = ("pool", "bindings", "params", "depth")

    def __init__(self, pool: list[_Entry], params: list[Var], depth: int) -> None:
        self.pool = pool
        self.bindings: list[tuple[Var, Expr]] = []
        self.params = params
        self.depth = depth

    def wrap(self, result: Expr) -> Expr:
        body = result
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


class _Config:
    __slots__ = (
        "uses", "features", "dtype", "max_rank", "max_dim", "max_depth", "size", "num_functions",
        "by_kind", "size_vars",
    )

    def __init__(
        self,
        size: int | tuple[int, int],
        ops: Iterable[str | OpUse] | None,
        features: Iterable[str] | None,
        dtype: str,
        max_rank: int,
        max_dim: int,
        max_depth: int,
        num_functions: int | tuple[int, int] = 1,
        size_vars: bool = False,
    ) -> None:
        lo, hi = (size, size) if isinstance(size, int) else size
        if not 1 <= lo <= hi:
            raise ValueError(f"size must be a positive int or a (min, max) pair, got {size!r}")
        self.size = (lo, hi)
        flo, fhi = (num_functions, num_functions) if isinstance(num_functions, int) else num_functions
        if not 1 <= flo <= fhi:
            raise ValueError(f"num_functions must be at least 1, got {num_functions!r}")
        self.num_functions = (flo, fhi)
        feats = DEFAULT_FEATURES if features is None else frozenset(features)
        unknown = feats - FEATURES
        if unknown:
            raise ValueError(
                f"unknown feature(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(FEATURES))}"
            )
        self.features = feats
        self.dtype = str(np.dtype(dtype))
        self.size_vars = size_vars
        if size_vars:
            # Only uses whose result type the generator computes for any dimension.
            ops = [u for u in available_op_uses(ops, self.dtype) if u.kind in SIZE_VAR_KINDS]
        if max_rank < 1 or max_dim < 1:
            raise ValueError("max_rank and max_dim must be at least 1")
        self.max_rank = max_rank
        self.max_dim = max_dim
        self.max_depth = max_depth
        uses = tuple(u for u in available_op_uses(ops, self.dtype)
                     if _MIN_RANK.get(u.kind, 0) <= max_rank)
        if not any(u.kind in ("binary", "unary") and _input_dtype(u, self.dtype) == self.dtype
                   for u in uses):
            raise ValueError(
                "the operator mix needs at least one registered binary or unary operator on "
                f"{self.dtype}; usable: {', '.join(u.name for u in uses) or 'none'}"
            )
        weighted: list[OpUse] = []
        for u in uses:
            weighted.extend([u] * max(1, u.weight))
        self.uses = tuple(weighted)
        by_kind: dict[str, list[OpUse]] = {}
        for u in uses:
            by_kind.setdefault(u.kind, []).append(u)
        self.by_kind = by_kind


def _input_dtype(use: OpUse, dtype: str) -> str:
    if use.dtypes is None or dtype in use.dtypes:
        return dtype
    return use.dtypes[0]


class _Generator(_PatternKinds):
    """Draws one program; every choice goes through ``draw`` so hypothesis can shrink it."""

    def __init__(self, draw: st.DrawFn, cfg: _Config) -> None:
        self.draw = draw
        self.cfg = cfg
        self.counters: dict[str, int] = {}
        self.budget = 0
        # The size variables one program (or module) shares, with ``size_vars=True``.
        self.size_vars = (SizeVar("n"), SizeVar("m")) if cfg.size_vars else ()

    # --- choices ----------------------------------------------------------
    def integer(self, lo: int, hi: int) -> int:
        return lo if hi <= lo else self.draw(st.integers(lo, hi))

    def chance(self, percent: int) -> bool:
        """True with about ``percent`` % probability; shrinks towards False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def pick(self, items: Sequence[_Entry]) -> _Entry:
        """One of ``items``, favouring (and shrinking towards) the most recent."""
        return items[len(items) - 1 - self.integer(0, len(items) - 1)]

    def name(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{n}"

    # --- types and leaves -------------------------------------------------
    def shape(self, min_rank: int = 0, max_rank: int | None = None, min_dim: int = 1) -> tuple[int, ...]:
        rank = self.integer(min_rank, self.cfg.max_rank if max_rank is None else max_rank)
        return tuple(self.dim(min_dim) for _ in range(rank))

    def dim(self, min_dim: int = 1) -> int | SizeVar:
        """An extent, or now and then one of the program's size variables."""
        if self.size_vars and self.chance(30):
            return self.size_vars[self.integer(0, len(self.size_vars) - 1)]
        return self.integer(min_dim, max(min_dim, self.cfg.max_dim))

    def array(self, ty: TensorType, positive: bool = False) -> np.ndarray:
        shape = ty.concrete_shape
        dtype = np.dtype(ty.dtype)
        mode = self.integer(0, 5)
        if dtype == np.bool_:
            return np.full(shape, mode % 2 == 0) if mode >= 4 else (
                np.random.default_rng(self.integer(0, 2**16)).random(shape) < 0.5)
        if mode == 3 and not positive:
            return np.zeros(shape, dtype)
        if mode == 4:
            return np.ones(shape, dtype)
        if mode == 5:
            return np.full(shape, 2, dtype)
        rng = np.random.default_rng(self.integer(0, 2**16))
        if np.issubdtype(dtype, np.integer):
            data = rng.integers(1 if positive else -5, 6, size=shape)
        else:
            data = rng.standard_normal(shape)
            if positive:
                data = np.abs(data) + 0.5
        return np.asarray(data, dtype=dtype)

    def leaf(self, scope: _Scope, ty: TensorType, positive: bool = False) -> _Entry:
        """A new parameter of the enclosing function or a new constant, of type ``ty``.

        A constant needs a static shape: a type with size variables is always a parameter.
        """
        if ty.symbolic or not positive and self.chance(50):
            var: Expr = Var(self.name("p"), ty)
            scope.params.append(var)  # type: ignore[arg-type]
        else:
            var = Constant(self.array(ty, positive))
        entry = (var, ty)
        scope.pool.append(entry)
        return entry

    def operand(
        self, scope: _Scope, dtype: str, pred=None, make=None, fresh_percent: int = 20
    ) -> _Entry:
        """A tensor value of ``dtype`` satisfying ``pred``: reused from the pool, or a new leaf."""
        cands = [
            e for e in scope.pool
            if type(e[1]) is TensorType and e[1].dtype == dtype and (pred is None or pred(e[1].shape))
        ]
        if cands and not self.chance(fresh_percent):
            return self.pick(cands)
        shape = make() if make is not None else self.shape()
        return self.leaf(scope, TensorType(shape, dtype))

    def emit(self, scope: _Scope, expr: Expr, ty: Type, bind_percent: int = 40) -> _Entry:
        """Make ``expr`` available to later steps, let-bound now and then."""
        if "let" in self.cfg.features and self.chance(bind_percent):
            var = Var(self.name("x"), ty if self.chance(60) else None)
            scope.bindings.append((var, expr))
            entry: _Entry = (var, ty)
        else:
            entry = (expr, ty)
        scope.pool.append(entry)
        return entry

    def guard(self, expr: Expr, dtype: str) -> Expr:
        one = Constant(np.ones((), dtype))
        return Call(Op.get("add"), [Call(Op.get("multiply"), [expr, expr]), one])

    def call_op(self, use: OpUse, args: list[Expr], **attrs: object) -> Expr:
        """A call of ``use``'s operator, with its fixed attributes and guarded arguments."""
        op = Op.get(use.name)
        for i in use.guard:
            args[i] = self.guard(args[i], _input_dtype(use, self.cfg.dtype))
        schema = op.attrs_schema
        values = dict(use.attrs)
        _required, optional = KINDS[use.kind]
        for k, v in attrs.items():
            if k in optional and (schema is None or k not in schema.fields):
                continue
            values[k] = v
        if schema is None:
            return Call(op, args)
        return make_call(use.name, args, **values)

    # --- program structure ------------------------------------------------
    def function(self, globals_: list[_Entry], budget: int, first_call: bool) -> tuple[Function, Type]:
        params: list[Var] = []
        scope = _Scope(list(globals_), params, 0)
        for _ in range(self.integer(1, 3)):
            self.leaf_param(scope, TensorType(self.shape(), self.cfg.dtype))
        self.budget = budget
        if first_call and globals_:
            self.budget -= 1
            callee, fty = self.pick(globals_)
            self.call_function(scope, callee, fty)  # type: ignore[arg-type]
        self.run(scope)
        result, rty = self.result(scope)
        return Function(params, scope.wrap(result), rty if self.chance(50) else None), rty

    def leaf_param(self, scope: _Scope, ty: TensorType) -> _Entry:
        var = Var(self.name("p"), ty)
        scope.params.append(var)
        entry = (var, ty)
        scope.pool.append(entry)
        return entry

    def run(self, scope: _Scope, steps: int | None = None) -> None:
        """Take ``steps`` steps (or until the budget is spent) in ``scope``."""
        feats = self.cfg.features
        nested_ok = scope.depth < self.cfg.max_depth
        done = 0
        while self.budget > 0 and (steps is None or done < steps):
            self.budget -= 1
            done += 1
            others = []
            if "if" in feats and nested_ok:
                others.append(self.step_if)
            if "fn" in feats and nested_ok:
                others.append(self.step_fn)
            if "tuple" in feats:
                others.append(self.step_tuple)
            if "ref" in feats:
                others.append(self.step_ref)
            if any(type(t) is FuncType for _, t in scope.pool):
                others.append(self.step_call)
            if any(type(t) is TupleType and t.fields for _, t in scope.pool):
                others.append(self.step_getitem)
            if others and self.integer(0, 9) >= 7:
                self.draw(st.sampled_from(others))(scope)
            else:
                self.step_op(scope)

    def result(self, scope: _Scope) -> tuple[Expr, Type]:
        """The value a block returns: a recent computed tensor, or now and then a tuple of two.

        Computed values are preferred to parameters and constants, so that a
        program of size n really contains operator calls.
        """
        leaves = {id(p) for p in scope.params}
        cands = [e for e in scope.pool if _is_data(e[1])]
        computed = [e for e in cands if type(e[0]) is not Constant and id(e[0]) not in leaves]
        cands = computed or cands
        if not cands:
            return self.operand(scope, self.cfg.dtype)
        first = self.pick(cands)
        if "tuple" in self.cfg.features and self.chance(20):
            second = self.pick(cands)
            return Tuple([first[0], second[0]]), TupleType([first[1], second[1]])
        return first

    def step_op(self, scope: _Scope) -> None:
        use = self.draw(st.sampled_from(self.cfg.uses))
        getattr(self, "_kind_" + use.kind)(scope, use, _input_dtype(use, self.cfg.dtype))

    def step_tuple(self, scope: _Scope) -> None:
        fields = [self.pick([e for e in scope.pool if _is_data(e[1])] or [self.operand(scope, self.cfg.dtype)])
                  for _ in range(self.integer(1, 3))]
        self.emit(scope, Tuple([f[0] for f in fields]), TupleType([f[1] for f in fields]))

    def step_getitem(self, scope: _Scope) -> None:
        tup, ty = self.pick([e for e in scope.pool if type(e[1]) is TupleType and e[1].fields])
        self.project(scope, tup, ty)  # type: ignore[arg-type]

    def project(self, scope: _Scope, tup: Expr, ty: TupleType, index: int | None = None) -> _Entry:
        i = self.integer(0, len(ty.fields) - 1) if index is None else index
        return self.emit(scope, TupleGetItem(tup, i), ty.fields[i])

    def step_if(self, scope: _Scope) -> None:
        target, tty = self.operand(scope, self.cfg.dtype)
        cond = self.condition(scope)
        branches = []
        for _ in range(2):
            child = _Scope(list(scope.pool), scope.params, scope.depth + 1)
            self.run(child, self.integer(0, 3))
            branches.append(child.wrap(self.fit(child, tty)))  # type: ignore[arg-type]
        self.emit(scope, If(cond, branches[0], branches[1]), tty)

    def condition(self, scope: _Scope) -> Expr:
        """A boolean scalar: a comparison of (reduced) scalars, or a boolean value."""
        bools = [e for e in scope.pool if e[1] == TensorType((), "bool")]
        compares = self.cfg.by_kind.get("compare")
        if bools and self.chance(30) or not compares:
            if bools:
                return self.pick(bools)[0]
            return self.leaf(scope, TensorType((), "bool"))[0]
        dtype = self.cfg.dtype
        reduces = [u for u in self.cfg.by_kind.get("reduce", ()) if _input_dtype(u, dtype) == dtype]
        if reduces and self.chance(60):
            x, _ = self.operand(scope, dtype)
            lhs = self.call_op(self.draw(st.sampled_from(reduces)), [x], axis=None, keepdims=False)
        else:
            lhs = self.operand(scope, dtype, pred=lambda s: s == (), make=tuple)[0]
        rhs = self.operand(scope, dtype, pred=lambda s: s == (), make=tuple)[0]
        return self.call_op(self.draw(st.sampled_from(compares)), [lhs, rhs])

    def fit(self, scope: _Scope, ty: TensorType) -> Expr:
        """A value of exactly ``ty`` for a branch to return, combined with a branch value now and then."""
        value, _ = self.operand(scope, ty.dtype, pred=lambda s: s == ty.shape, make=lambda: ty.shape)
        binaries = [u for u in self.cfg.by_kind.get("binary", ()) if _input_dtype(u, ty.dtype) == ty.dtype]
        if binaries and self.chance(60):
            other, _ = self.operand(
                scope, ty.dtype, pred=lambda s: _fits_into(s, ty.shape),
                make=lambda: self.into_shape(ty.shape),
            )
            value = self.call_op(self.draw(st.sampled_from(binaries)), [value, other])
        return value

    def step_fn(self, scope: _Scope) -> None:
        capture = self.chance(40)
        params: list[Var] = []
        child = _Scope(list(scope.pool) if capture else [], params, scope.depth + 1)
        data = [e for e in scope.pool if type(e[1]) is TensorType]
        for _ in range(self.integer(1, 2)):
            ty = self.pick(data)[1] if data and self.chance(70) else TensorType(self.shape(), self.cfg.dtype)
            var = Var(self.name("a"), ty)
            params.append(var)
            child.pool.append((var, ty))
        self.run(child, self.integer(1, 3))
        result, rty = self.result(child)
        fty = FuncType([p.type_annotation for p in params], rty)  # type: ignore[misc]
        fn = Function(params, child.wrap(result), rty if self.chance(50) else None)
        if self.chance(20):
            self.call_function(scope, fn, fty)
            return
        fvar = Var(self.name("f"), fty if self.chance(50) else None)
        scope.bindings.append((fvar, fn))
        scope.pool.append((fvar, fty))
        self.call_function(scope, fvar, fty)

    def step_call(self, scope: _Scope) -> None:
        callee, fty = self.pick([e for e in scope.pool if type(e[1]) is FuncType])
        self.call_function(scope, callee, fty)  # type: ignore[arg-type]

    def call_function(self, scope: _Scope, callee: Expr, fty: FuncType) -> None:
        args = []
        for aty in fty.arg_types:
            assert isinstance(aty, TensorType)
            args.append(self.operand(scope, aty.dtype, pred=lambda s, a=aty: s == a.shape,
                                     make=lambda a=aty: a.shape)[0])
        self.emit(scope, Call(callee, args), fty.ret_type)

    def step_ref(self, scope: _Scope) -> None:
        refs = [e for e in scope.pool if type(e[1]) is RefType]
        if refs and self.chance(50):
            ref, rty = self.pick(refs)
            vty = rty.value  # type: ignore[attr-defined]
        else:
            value, vty = self.operand(scope, self.cfg.dtype)
            rty = RefType(vty)
            ref = Var(self.name("r"), rty if self.chance(50) else None)
            scope.bindings.append((ref, RefCreate(value)))
            scope.pool.append((ref, rty))
        if self.chance(60):
            new, _ = self.operand(scope, vty.dtype, pred=lambda s: s == vty.shape, make=lambda: vty.shape)
            unit = TupleType([])
            scope.bindings.append((Var(self.name("w"), unit if self.chance(50) else None), RefWrite(ref, new)))
        read = Var(self.name("v"), vty if self.chance(50) else None)
        scope.bindings.append((read, RefRead(ref)))
        scope.pool.append((read, vty))

    # --- shapes -----------------------------------------------------------
    def into_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """A shape that broadcasts to exactly ``shape``."""
        keep = self.integer(0, len(shape))
        tail = shape[len(shape) - keep:]
        return tuple(d if self.chance(70) else 1 for d in tail)

    def compatible_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """A shape that broadcasts with ``shape`` (possibly widening it) within the rank limit."""
        keep = self.integer(0, len(shape))
        tail = shape[len(shape) - keep:]
        out = []
        for d in tail:
            if d == 1:
                out.append(self.integer(1, self.cfg.max_dim))
            else:
                out.append(d if self.chance(70) else 1)
        if keep == len(shape):
            extra = self.integer(0, self.cfg.max_rank - len(shape))
            out = [self.integer(1, self.cfg.max_dim) for _ in range(extra)] + out
        return tuple(out)

    # --- kinds of use -----------------------------------------------------
    def _kind_unary(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        self.emit(scope, self.call_op(use, [x]), ty)

    def _binary_args(self, scope: _Scope, dtype: str) -> tuple[Expr, Expr, tuple[int, ...]]:
        x, xt = self.operand(scope, dtype)
        shape = xt.shape  # type: ignore[attr-defined]
        y, yt = self.operand(
            scope, dtype, pred=lambda s: _broadcast(s, shape) is not None,
            make=lambda: self.compatible_shape(shape),
        )
        if self.chance(30):
            x, y, xt, yt = y, x, yt, xt
        return x, y, _broadcast(xt.shape, yt.shape)  # type: ignore[attr-defined,return-value]

    def _kind_binary(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, y, shape = self._binary_args(scope, dtype)
        self.emit(scope, self.call_op(use, [x, y]), TensorType(shape, dtype))

    def _kind_compare(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, y, shape = self._binary_args(scope, dtype)
        self.emit(scope, self.call_op(use, [x, y]), TensorType(shape, "bool"))

    def _kind_cast(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        others = [e for e in scope.pool if type(e[1]) is TensorType and e[1].dtype != dtype]
        x, ty = self.pick(others) if others and self.chance(80) else self.operand(scope, dtype)
        out = TensorType(ty.shape, dtype)  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x], dtype=dtype), out)

    def _kind_reduce(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        shape = ty.shape  # type: ignore[attr-defined]
        keepdims = self.chance(30)
        if not shape or self.chance(30):
            axis: object = None
            axes = list(range(len(shape)))
        else:
            axes = sorted({self.integer(0, len(shape) - 1) for _ in range(self.integer(1, len(shape)))})
            axis = [a - len(shape) if self.chance(20) else a for a in axes]
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else [
            d for i, d in enumerate(shape) if i not in axes]
        self.emit(scope, self.call_op(use, [x], axis=axis, keepdims=keepdims), TensorType(out, dtype))

    def _kind_axis_unary(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        n = len(ty.shape)  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x], axis=self.integer(-n, n - 1)), ty)

    def _kind_transpose(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        shape = ty.shape  # type: ignore[attr-defined]
        if self.chance(30):
            axes: object = None
            perm = list(range(len(shape)))[::-1]
        else:
            perm = list(self.draw(st.permutations(range(len(shape)))))
            axes = perm
        self.emit(scope, self.call_op(use, [x], axes=axes), TensorType([shape[p] for p in perm], dtype))

    def _kind_expand_dims(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) < self.cfg.max_rank,
                             make=lambda: self.shape(0, self.cfg.max_rank - 1))
        shape = list(ty.shape)  # type: ignore[attr-defined]
        axis = self.integer(-len(shape) - 1, len(shape))
        pos = axis + len(shape) + 1 if axis < 0 else axis
        out = shape[:pos] + [1] + shape[pos:]
        self.emit(scope, self.call_op(use, [x], axis=axis, num_newaxis=1), TensorType(out, dtype))

    def _kind_squeeze(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        def make() -> tuple[int, ...]:
            s = list(self.shape(1))
            s[self.integer(0, len(s) - 1)] = 1
            return tuple(s)

        x, ty = self.operand(scope, dtype, pred=lambda s: 1 in s, make=make)
        shape = ty.shape  # type: ignore[attr-defined]
        ones = [i for i, d in enumerate(shape) if d == 1]
        if self.chance(30):
            axis: object = None
            drop = ones
        else:
            drop = sorted({ones[self.integer(0, len(ones) - 1)] for _ in range(self.integer(1, len(ones)))})
            axis = drop
        out = [d for i, d in enumerate(shape) if i not in drop]
        self.emit(scope, self.call_op(use, [x], axis=axis), TensorType(out, dtype))

    def _kind_reshape(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        size = math.prod(ty.shape)  # type: ignore[attr-defined]
        factors = _prime_factors(size)
        rank = self.integer(1, self.cfg.max_rank)
        dims = [1] * rank
        for f in factors:
            dims[self.integer(0, rank - 1)] *= f
        self.emit(scope, self.call_op(use, [x], newshape=dims), TensorType(dims, dtype))

    def _fields_along(self, scope: _Scope, dtype: str, shape: Sequence[int], axis: int | None) -> list[_Entry]:
        """One to two more tensors equal to ``shape`` except (when ``axis`` is given) along ``axis``."""
        def same(s: tuple[int, ...]) -> bool:
            return len(s) == len(shape) and all(
                i == axis or a == b for i, (a, b) in enumerate(zip(s, shape)))

        def make() -> tuple[int, ...]:
            s = list(shape)
            if axis is not None:
                s[axis] = self.integer(1, self.cfg.max_dim)
            return tuple(s)

        return [self.operand(scope, dtype, pred=same, make=make) for _ in range(self.integer(1, 2))]

    def _kind_concatenate(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = self.integer(0, len(shape) - 1)
        fields = [(x, ty), *self._fields_along(scope, dtype, shape, axis)]
        out = list(shape)
        out[axis] = sum(f[1].shape[axis] for f in fields)  # type: ignore[attr-defined]
        attr_axis = axis - len(shape) if self.chance(20) else axis
        tup = Tuple([f[0] for f in fields])
        self.emit(scope, self.call_op(use, [tup], axis=attr_axis), TensorType(out, dtype))

    def _kind_stack(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) < self.cfg.max_rank,
                             make=lambda: self.shape(0, self.cfg.max_rank - 1))
        shape = list(ty.shape)  # type: ignore[attr-defined]
        fields = [(x, ty), *self._fields_along(scope, dtype, shape, None)]
        axis = self.integer(0, len(shape))
        out = shape[:axis] + [len(fields)] + shape[axis:]
        self.emit(scope, self.call_op(use, [Tuple([f[0] for f in fields])], axis=axis),
                  TensorType(out, dtype))

    def _kind_split(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        # A zero-sized dimension has no section count that divides it.
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1 and 0 not in s,
                             make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = self.integer(0, len(shape) - 1)
        divisors = [d for d in range(1, shape[axis] + 1) if shape[axis] % d == 0]
        sections = divisors[self.integer(0, len(divisors) - 1)]
        piece = list(shape)
        piece[axis] = shape[axis] // sections
        tty = TupleType([TensorType(piece, dtype)] * sections)
        tup, _ = self.emit(scope, self.call_op(use, [x], indices_or_sections=sections, axis=axis), tty)
        self.project(scope, tup, tty)

    def _kind_where(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        shape = ty.shape  # type: ignore[attr-defined]
        cond, _ = self.operand(scope, "bool", pred=lambda s: _fits_into(s, shape),
                               make=lambda: self.into_shape(shape))
        y, _ = self.operand(scope, dtype, pred=lambda s: _fits_into(s, shape),
                            make=lambda: self.into_shape(shape))
        if self.chance(50):
            x, y = y, x
        self.emit(scope, self.call_op(use, [cond, x, y]), TensorType(shape, dtype))

    def _kind_dense(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        units = self.integer(1, self.cfg.max_dim)
        w, _ = self.operand(scope, dtype, pred=lambda s: s == (units, shape[-1]),
                            make=lambda: (units, shape[-1]))
        out = TensorType((*shape[:-1], units), dtype)
        self.emit(scope, self.call_op(use, [x, w], units=units), out)

    def _kind_batch_matmul(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == 3, make=lambda: self.shape(3, 3))
        b, m, k = ty.shape  # type: ignore[attr-defined]
        n = self.integer(1, self.cfg.max_dim)
        y, _ = self.operand(scope, dtype, pred=lambda s: s == (b, n, k), make=lambda: (b, n, k))
        self.emit(scope, self.call_op(use, [x, y], transpose_a=False, transpose_b=True),
                  TensorType((b, m, n), dtype))

    def _kind_bias_add(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = 1 if self.chance(70) else -1
        c = shape[axis]
        bias, _ = self.operand(scope, dtype, pred=lambda s: s == (c,), make=lambda: (c,))
        self.emit(scope, self.call_op(use, [x, bias], axis=axis), ty)

    def _kind_batch_norm(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        shape = ty.shape  # type: ignore[attr-defined]
        c = shape[1]
        vec = TensorType((c,), dtype)
        gamma, beta, mean = (self.operand(scope, dtype, pred=lambda s: s == (c,), make=lambda: (c,))[0]
                             for _ in range(3))
        var = Constant(self.array(vec, positive=True))
        out = TupleType([ty, vec, vec])
        tup, _ = self.emit(scope, self.call_op(use, [x, gamma, beta, mean, var], axis=1), out)
        self.project(scope, tup, out, 0)

    def _kind_dropout(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        out = TupleType([ty, ty])
        tup, _ = self.emit(scope, self.call_op(use, [x], rate=0.5), out)
        self.project(scope, tup, out, 0)

    def _image(self, scope: _Scope, dtype: str, min_hw: int) -> _Entry:
        def make() -> tuple[int, ...]:
            return (self.integer(1, 2), self.integer(1, self.cfg.max_dim),
                    self.integer(min_hw, min_hw + 3), self.integer(min_hw, min_hw + 3))

        return self.operand(scope, dtype, pred=lambda s: len(s) == 4 and min(s[2:]) >= min_hw, make=make)

    def _kind_conv2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        pad = self.integer(0, 1)
        kh, kw = self.integer(1, min(3, h + 2 * pad)), self.integer(1, min(3, w + 2 * pad))
        o = self.integer(1, self.cfg.max_dim)
        weight, _ = self.operand(scope, dtype, pred=lambda s: s == (o, c, kh, kw), make=lambda: (o, c, kh, kw))
        out = TensorType((n, o, h + 2 * pad - kh + 1, w + 2 * pad - kw + 1), dtype)
        call = self.call_op(use, [x, weight], padding=(pad, pad), strides=(1, 1), dilation=(1, 1),
                            channels=o, kernel_size=(kh, kw))
        self.emit(scope, call, out)

    def _kind_pool2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        ph, pw = self.integer(1, min(3, h)), self.integer(1, min(3, w))
        out = TensorType((n, c, h - ph + 1, w - pw + 1), dtype)
        self.emit(scope, self.call_op(use, [x], pool_size=(ph, pw), strides=(1, 1), padding=(0, 0)), out)

    def _kind_global_pool2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, _, _ = ty.shape  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x]), TensorType((n, c, 1, 1), dtype))

    def _kind_batch_flatten(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        shape = ty.shape  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x]), TensorType((shape[0], math.prod(shape[1:])), dtype))

    def _kind_arg_reduce(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = self.integer(0, len(shape) - 1)
        keepdims = self.chance(30)
        out = [1 if i == axis else d for i, d in enumerate(shape)] if keepdims else [
            d for i, d in enumerate(shape) if i != axis]
        self.emit(scope, self.call_op(use, [x], axis=[axis], keepdims=keepdims), TensorType(out, "int32"))

    def _per_channel(self, scope: _Scope, dtype: str, c: int) -> Expr:
        return self.operand(scope, dtype, pred=lambda s: s == (c,), make=lambda: (c,))[0]

    def _kind_layer_norm(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = -1 if self.chance(70) else self.integer(0, len(shape) - 1)
        c = shape[axis]
        args = [x, self._per_channel(scope, dtype, c), self._per_channel(scope, dtype, c)]
        self.emit(scope, self.call_op(use, args, axis=axis), ty)

    def _kind_prelu(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 2, make=lambda: self.shape(2))
        c = ty.shape[1]  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x, self._per_channel(scope, dtype, c)], axis=1), ty)

    def _kind_repeat(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = list(ty.shape)  # type: ignore[attr-defined]
        axis = self.integer(0, len(shape) - 1)
        repeats = self.integer(1, 3)
        shape[axis] *= repeats
        self.emit(scope, self.call_op(use, [x], repeats=repeats, axis=axis), TensorType(shape, dtype))

    def _kind_tile(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        reps = [self.integer(1, 2) for _ in range(self.integer(1, len(shape)))]
        padded = (1,) * (len(shape) - len(reps)) + tuple(reps)
        out = [d * r for d, r in zip(shape, padded)]
        self.emit(scope, self.call_op(use, [x], reps=reps), TensorType(out, dtype))

    def _kind_strided_slice(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        begin, end = [], []
        for d in shape:
            b = self.integer(0, d - 1)
            begin.append(b)
            end.append(self.integer(b + 1, d))
        out = [e - b for b, e in zip(begin, end)]
        call = self.call_op(use, [x], begin=begin, end=end, strides=[1] * len(shape))
        self.emit(scope, call, TensorType(out, dtype))

    def _kind_broadcast_to(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        shape = ty.shape  # type: ignore[attr-defined]
        target = _broadcast(shape, self.compatible_shape(shape))
        self.emit(scope, self.call_op(use, [x], shape=list(target)), TensorType(target, dtype))  # type: ignore[arg-type]

    def _kind_pad(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        widths = [(self.integer(0, 1), self.integer(0, 1)) for _ in shape]
        value = self.operand(scope, dtype, pred=lambda s: s == (), make=tuple)[0]
        out = [d + lo + hi for d, (lo, hi) in zip(shape, widths)]
        self.emit(scope, self.call_op(use, [x, value], pad_width=widths), TensorType(out, dtype))

    def _kind_take(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) >= 1, make=lambda: self.shape(1))
        shape = ty.shape  # type: ignore[attr-defined]
        axis = self.integer(0, len(shape) - 1)
        ind_shape = self.shape(0, max(0, self.cfg.max_rank - len(shape) + 1))
        rng = np.random.default_rng(self.integer(0, 2**16))
        indices = Constant(rng.integers(0, shape[axis], size=ind_shape).astype("int32"))
        out = (*shape[:axis], *ind_shape, *shape[axis + 1:])
        self.emit(scope, self.call_op(use, [x, indices], axis=axis, mode="clip"), TensorType(out, dtype))

    def _kind_matmul(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype, pred=lambda s: len(s) == 2, make=lambda: self.shape(2, 2))
        m, k = ty.shape  # type: ignore[attr-defined]
        n = self.integer(1, self.cfg.max_dim)
        y, _ = self.operand(scope, dtype, pred=lambda s: s == (k, n), make=lambda: (k, n))
        self.emit(scope, self.call_op(use, [x, y], transpose_a=False, transpose_b=False),
                  TensorType((m, n), dtype))

    def _kind_adaptive_pool2d(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        oh, ow = self.integer(1, h), self.integer(1, w)
        self.emit(scope, self.call_op(use, [x], output_size=(oh, ow)), TensorType((n, c, oh, ow), dtype))

    def _kind_upsampling(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self._image(scope, dtype, 1)
        n, c, h, w = ty.shape  # type: ignore[attr-defined]
        sh, sw = self.integer(1, 2), self.integer(1, 2)
        out = TensorType((n, c, h * sh, w * sw), dtype)
        self.emit(scope, self.call_op(use, [x], scale_h=float(sh), scale_w=float(sw)), out)

    def _kind_shape_of(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        rank = len(ty.shape)  # type: ignore[attr-defined]
        self.emit(scope, self.call_op(use, [x], dtype="int32"), TensorType((rank,), "int32"))

    def _kind_fill(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        shape = self.shape()
        self.emit(scope, self.call_op(use, [], shape=shape, dtype=dtype), TensorType(shape, dtype))

    def _kind_full_like(self, scope: _Scope, use: OpUse, dtype: str) -> None:
        x, ty = self.operand(scope, dtype)
        value = self.operand(scope, dtype, pred=lambda s: s == (), make=tuple)[0]
        self.emit(scope, self.call_op(use, [x, value]), ty)


def _is_data(ty: Type) -> bool:
    """Tensors and tuples of tensors: what a block may return and a tuple may hold."""
    if type(ty) is TensorType:
        return True
    return type(ty) is TupleType and all(type(f) is TensorType for f in ty.fields)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


# --------------------------------------------------------------------------- public strategies


@st.composite
def _program(draw: st.DrawFn, cfg: _Config) -> Function:
    gen = _Generator(draw, cfg)
    return gen.function([], gen.integer(*cfg.size), first_call=False)[0]


@st.composite
def _module(draw: st.DrawFn, cfg: _Config) -> IRModule:
    gen = _Generator(draw, cfg)
    count = gen.integer(*cfg.num_functions) if "global" in cfg.features else 1
    mod = IRModule()
    globals_: list[_Entry] = []
    for i in range(count):
        is_main = i == count - 1
        lo, hi = cfg.size
        budget = gen.integer(lo, hi) if is_main else gen.integer(1, max(1, hi // 2))
        func, rty = gen.function(globals_, budget, first_call=bool(globals_) and gen.chance(80))
        gv = GlobalVar("main" if is_main else f"f{i}")
        mod.add(gv, func)
        globals_.append((gv, FuncType([p.type_annotation for p in func.params], rty)))
    return mod


def programs(
    size: int | tuple[int, int] = (1, 20),
    ops: Iterable[str | OpUse] | None = None,
    features: Iterable[str] | None = None,
    dtype: str = "float32",
    max_rank: int = 4,
    max_dim: int = 4,
    max_depth: int = 2,
    size_vars: bool = False,
) -> st.SearchStrategy[Function]:
    """Closed functions over tensors of ``dtype``: see the module docstring.

    ``size`` is the number of generation steps (each is mostly an operator
    call), as an int or a (min, max) range; ``ops`` the operator mix (names or
    :class:`OpUse`, default all usable defaults); ``features`` a subset of
    :data:`FEATURES` (``"global"`` is ignored: a bare function has no module);
    ``max_rank`` bounds the rank of every tensor (operators that need more
    are left out); ``max_dim`` bounds the dimensions of new tensors (inputs and
    constants: concatenate, tile and friends may grow them); ``max_depth``
    bounds the nesting of ifs and local functions; ``size_vars`` lets shapes hold the
    size variables ``n`` and ``m``.
    """
    return _program(_Config(size, ops, features, dtype, max_rank, max_dim, max_depth,
                            size_vars=size_vars))


def modules(
    size: int | tuple[int, int] = (1, 20),
    ops: Iterable[str | OpUse] | None = None,
    features: Iterable[str] | None = None,
    dtype: str = "float32",
    max_rank: int = 4,
    max_dim: int = 4,
    max_depth: int = 2,
    num_functions: int | tuple[int, int] = (1, 3),
    size_vars: bool = False,
) -> st.SearchStrategy[IRModule]:
    """Modules with a ``main`` and, with the ``"global"`` feature, helpers it calls.

    Arguments as for :func:`programs`; ``num_functions`` (an int or a range)
    counts the global functions including ``main``.
    """
    return _module(_Config(size, ops, features, dtype, max_rank, max_dim, max_depth, num_functions,
                           size_vars))


# --- algebraic data types ----------------------------------------------------------

_ADT_TENSORS = (TensorType((), "int32"), TensorType((2,), "float32"), TensorType((), "bool"))
_INT32 = TensorType((), "int32")


def _instantiate(ty: Type, mapping: Mapping[TypeVar, Type]) -> Type:
    """``ty`` with its type parameters replaced (the field types drawn here nest shallowly)."""
    if isinstance(ty, TypeVar):
        return mapping.get(ty, ty)
    if isinstance(ty, TypeCall):
        return TypeCall(ty.func, [_instantiate(a, mapping) for a in ty.args])
    if isinstance(ty, TupleType):
        return TupleType([_instantiate(f, mapping) for f in ty.fields])
    return ty


class _AdtGenerator:
    """One module of type definitions and the functions over them."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.mod = IRModule()
        self.defs: list[TypeData] = []
        self.cases: dict[str, GlobalVar] = {}
        self.names = 0

    def var(self, ty: Type | None) -> Var:
        self.names += 1
        return Var(f"v{self.names}", ty)

    def field_type(self, header: GlobalTypeVar, tvars: list[TypeVar], depth: int = 0) -> Type:
        draw = self.draw
        choices = ["tensor"] + ["param"] * bool(tvars) + ["self"] + ["other"] * bool(self.defs)
        if depth == 0:
            choices.append("tuple")
        choice = draw(st.sampled_from(choices))
        if choice == "param":
            return draw(st.sampled_from(tvars))
        if choice == "self":
            return TypeCall(header, tvars)
        if choice == "other":
            other = draw(st.sampled_from(self.defs))
            args = [draw(st.sampled_from([*tvars, *_ADT_TENSORS])) for _ in other.type_vars]
            return TypeCall(other.header, args)
        if choice == "tuple":
            return TupleType([self.field_type(header, tvars, 1) for _ in range(2)])
        return draw(st.sampled_from(_ADT_TENSORS))

    def type_def(self, t: int, max_constructors: int, max_fields: int) -> TypeData:
        draw = self.draw
        header = GlobalTypeVar(f"T{t}")
        tvars = [TypeVar(n) for n in ("A", "B")[: draw(st.integers(0, 2))]]
        ctors = [
            Constructor(
                f"C{t}_{c}",
                [self.field_type(header, tvars) for _ in range(draw(st.integers(0, max_fields)))],
                header,
            )
            for c in range(draw(st.integers(1, max_constructors)))
        ]
        data = TypeData(header, tvars, ctors)
        self.mod[header] = data
        self.defs.append(data)
        return data

    def builder(self, data: TypeData, ctor: Constructor) -> None:
        """``@mk_T_C(fields...) -> T[concrete]``: the constructor called, or passed as a value."""
        draw = self.draw
        concrete = {tv: draw(st.sampled_from(_ADT_TENSORS)) for tv in data.type_vars}
        params = [self.var(_instantiate(t, concrete)) for t in ctor.inputs]
        ret = TypeCall(data.header, [concrete[tv] for tv in data.type_vars])
        if params and draw(st.booleans()):
            k = self.var(None)
            body: Expr = Let(k, ctor, Call(k, params))
        else:
            body = Call(ctor, params)
        self.mod[f"mk_{ctor.name_hint}"] = Function(params, body, ret)

    def pattern(self, ty: Type, bound: list[tuple[Var, Type]], depth: int) -> Pattern:
        """A pattern for values of ``ty``; the variables it binds go to ``bound``."""
        draw = self.draw
        choice = draw(st.sampled_from(["wild", "var", "var", "deep"]))
        if choice == "deep" and depth < 2:
            if isinstance(ty, TupleType):
                return PatternTuple([self.pattern(f, bound, depth + 1) for f in ty.fields])
            if isinstance(ty, TypeCall):
                data = self.mod.type_data(ty.func)
                ctor = draw(st.sampled_from(data.constructors))
                mapping = dict(zip(data.type_vars, ty.args))
                return PatternConstructor(ctor, [
                    self.pattern(_instantiate(f, mapping), bound, depth + 1) for f in ctor.inputs
                ])
        if choice == "wild":
            return PatternWildcard()
        var = self.var(ty if draw(st.booleans()) else None)
        bound.append((var, ty))
        return PatternVar(var)

    def body(self, bound: list[tuple[Var, Type]]) -> Expr:
        """An int32 result: a constant, a bound int32 variable, or an earlier case of a bound value."""
        draw = self.draw
        options: list[Expr] = [Constant(np.array(draw(st.integers(0, 9)), "int32"))]
        for var, ty in bound:
            if ty == _INT32:
                options.append(var)
            elif isinstance(ty, TypeCall) and ty.func.name_hint in self.cases:
                options.append(Call(self.cases[ty.func.name_hint], [var]))
        result = draw(st.sampled_from(options))
        if bound and draw(st.booleans()):
            var, _ = draw(st.sampled_from(bound))
            result = Let(self.var(None), var, result)
        return result

    def case(self, data: TypeData) -> None:
        """``@case_T[params](%v: T[params]) -> int32``: a match over the type's values."""
        draw = self.draw
        # The function's own type parameters: a type variable is bound in one place only.
        params = [TypeVar(tv.name_hint) for tv in data.type_vars]
        value = self.var(TypeCall(data.header, params))
        own = dict(zip(data.type_vars, params))
        clauses = []
        for ctor in draw(st.permutations(data.constructors)):
            if draw(st.integers(0, 4)) == 0:
                continue  # a case left out
            bound: list[tuple[Var, Type]] = []
            pattern = PatternConstructor(ctor, [
                self.pattern(_instantiate(f, own), bound, 1) for f in ctor.inputs
            ])
            clauses.append(Clause(pattern, self.body(bound)))
        if not clauses or draw(st.booleans()):
            bound = []
            clauses.append(Clause(self.pattern(value.type_annotation, bound, 2), self.body(bound)))
        match = Match(value, clauses)
        if unmatched_cases(match, self.mod):
            match = Match(value, clauses, complete=False)
        gv = GlobalVar(f"case_{data.header.name_hint}")
        self.mod[gv] = Function([value], match, _INT32, params)
        self.cases[data.header.name_hint] = gv


@st.composite
def _adt_module(draw: st.DrawFn, max_types: int, max_constructors: int, max_fields: int
                ) -> IRModule:
    gen = _AdtGenerator(draw)
    for t in range(draw(st.integers(1, max_types))):
        data = gen.type_def(t, max_constructors, max_fields)
        for ctor in data.constructors:
            if draw(st.booleans()):
                gen.builder(data, ctor)
        gen.case(data)
    return gen.mod


def adt_modules(
    max_types: int = 3, max_constructors: int = 3, max_fields: int = 3
) -> st.SearchStrategy[IRModule]:
    """Modules of algebraic data types and functions that build and match their values.

    Up to ``max_types`` definitions, each with up to ``max_constructors``
    constructors of up to ``max_fields`` fields; see the module docstring.
    Every program is well typed, terminates, and its matches that leave
    values out are ``match?``.
    """
    return _adt_module(max_types, max_constructors, max_fields)



# --- dynamic-shape operators --------------------------------------------------------
# The ``dyn.*`` operators take shapes, sizes and scales as tensors, so their result types
# hold ``Any`` and their texts carry tensor-valued shape arguments: forms the operator mix
# above never produces (its constructors are given integers).  Types here come from each
# operator's own relation, so a generated program is well typed by construction.

_I64 = "int64"
_F32 = "float32"
_SMALL = st.integers(0, 3)  # the values of a shape vector
_COUNT = st.integers(1, 3)  # the value of a scalar


class _DynGenerator:
    """One function whose calls are ``dyn.*`` operators over earlier values and parameters."""

    # operator -> the smallest rank of data it takes (None: it takes no data tensor)
    OPS: dict[str, int | None] = {
        "dyn.reshape": 0, "dyn.broadcast_to": 0, "dyn.zeros": None, "dyn.ones": None,
        "dyn.full": None, "dyn.tile": 0, "dyn.strided_slice": 1, "dyn.topk": 1,
        "dyn.image.resize2d": 4, "dyn.nn.pad": 0, "dyn.one_hot": None, "dyn.expand_dims": 0,
        "dyn.squeeze": 0, "dyn.sparse_to_dense": None, "dyn.nn.upsampling": 4,
        "dyn.nn.upsampling3d": 5,
    }

    def __init__(self, draw: st.DrawFn, size_vars: bool) -> None:
        self.draw = draw
        self.params: list[Var] = []
        self.pool: list[_Entry] = []  # float32 tensors, in the order they were made
        self.bindings: list[tuple[Var, Expr]] = []
        self.size_vars = (SizeVar("n"), SizeVar("m")) if size_vars else ()
        self.let_types: dict[int, TensorType] = {}  # id of a let variable -> its value's type

    def param(self, ty: TensorType) -> Var:
        var = Var(f"p{len(self.params)}", ty)
        self.params.append(var)
        return var

    def dims(self, rank: int) -> tuple[int | SizeVar, ...]:
        draw = self.draw
        out: list[int | SizeVar] = []
        for _ in range(rank):
            if self.size_vars and draw(st.integers(0, 3)) == 0:
                out.append(draw(st.sampled_from(self.size_vars)))
            else:
                out.append(draw(st.integers(1, 4)))
        return tuple(out)

    def data(self, min_rank: int, exact: int | None = None) -> tuple[Expr, TensorType]:
        """A float32 tensor of rank ``exact`` (or at least ``min_rank``): earlier, or a new parameter."""
        fits = [e for e in self.pool
                if (len(e[1].shape) == exact if exact is not None  # type: ignore[attr-defined]
                    else len(e[1].shape) >= min_rank)]  # type: ignore[attr-defined]
        if fits and self.draw(st.integers(0, 3)) > 0:
            return self.draw(st.sampled_from(fits))  # type: ignore[return-value]
        rank = exact if exact is not None else self.draw(st.integers(min_rank, max(min_rank, 3)))
        ty = TensorType(self.dims(rank), _F32)
        entry = (self.param(ty), ty)
        self.pool.append(entry)
        return entry  # type: ignore[return-value]

    def vector(self, length: int, values: st.SearchStrategy[int] = _SMALL) -> Expr:
        """An int64 vector of ``length`` values: a parameter, a constant, or ``shape_of`` a value."""
        draw = self.draw
        choice = draw(st.sampled_from(("param", "const", "shape_of")))
        if choice == "shape_of":
            ranked = [e for e in self.pool if len(e[1].shape) == length]  # type: ignore[attr-defined]
            if ranked:
                return make_call("shape_of", [draw(st.sampled_from(ranked))[0]], dtype=_I64)
        if choice == "const":
            return Constant(np.array(draw(st.lists(values, min_size=length, max_size=length)),
                                     _I64).reshape(length))
        return self.param(TensorType((length,), _I64))

    def scalar(self, dtype: str, values: st.SearchStrategy[float] = _COUNT) -> Expr:
        """A scalar of ``dtype``: a parameter or a constant."""
        if self.draw(st.booleans()):
            return Constant(np.array(self.draw(values), dtype))
        return self.param(TensorType((), dtype))

    def call(self, name: str) -> Expr:
        """One call of ``name`` with arguments its relation accepts."""
        draw = self.draw
        if name in ("dyn.zeros", "dyn.ones"):
            return make_call(name, [self.vector(draw(st.integers(0, 3)))], dtype=_F32)
        if name == "dyn.full":
            return make_call(name, [self.scalar(_F32), self.vector(draw(st.integers(0, 3)))],
                             dtype=draw(st.sampled_from(("", _F32))))
        if name == "dyn.one_hot":
            indices = self.param(TensorType(self.dims(draw(st.integers(0, 2))), "int32"))
            return make_call(name, [indices, self.scalar(_F32), self.scalar(_F32),
                                    self.scalar(_I64)], axis=-1, dtype=_F32)
        if name == "dyn.sparse_to_dense":
            count = draw(st.integers(1, 3))
            indices = self.param(TensorType((count,), _I64))
            values = self.param(TensorType((count,), _F32))
            return make_call(name, [indices, values, self.scalar(_F32), self.vector(1)])
        exact = {"dyn.image.resize2d": 4, "dyn.nn.upsampling": 4, "dyn.nn.upsampling3d": 5}
        x, ty = self.data(self.OPS[name] or 0, exact.get(name))
        rank = len(ty.shape)
        if name == "dyn.reshape":
            return make_call(name, [x, self.vector(draw(st.integers(0, 3)))],
                             allowzero=draw(st.booleans()))
        if name == "dyn.broadcast_to":
            return make_call(name, [x, self.vector(draw(st.integers(rank, rank + 1)))])
        if name == "dyn.tile":
            return make_call(name, [x, self.vector(draw(st.integers(0, 3)))])
        if name == "dyn.strided_slice":
            k = draw(st.integers(1, rank))
            return make_call(name, [x, self.vector(k), self.vector(k), self.vector(k, st.just(1))],
                             slice_mode=draw(st.sampled_from(("end", "size"))))
        if name == "dyn.topk":
            out = make_call(name, [x, self.scalar(_I64)], axis=draw(st.integers(-rank, rank - 1)),
                            ret_type=draw(st.sampled_from(("values", "both"))),
                            is_ascend=draw(st.booleans()), dtype="int32")
            return TupleGetItem(out, 0) if out.attrs.ret_type == "both" else out
        if name == "dyn.image.resize2d":
            roi = (self.param(TensorType((4,), _F32)) if draw(st.booleans())
                   else Constant(np.zeros(4, _F32)))
            return make_call(name, [x, self.vector(2, st.integers(1, 4)), roi],
                             method=draw(st.sampled_from(("linear", "nearest_neighbor"))),
                             out_dtype="")
        if name == "dyn.nn.pad":
            widths = (self.param(TensorType((rank, 2), _I64)) if draw(st.booleans())
                      else Constant(np.ones((rank, 2), _I64)))
            return make_call(name, [x, widths, self.scalar(_F32, st.just(0))])
        if name == "dyn.expand_dims":
            return make_call(name, [x, self.scalar(_I64, st.integers(0, rank))],
                             num_newaxis=draw(st.integers(0, 2)))
        if name == "dyn.squeeze":
            return make_call(name, [x, self.vector(draw(st.integers(0, rank)))])
        if name == "dyn.nn.upsampling":
            return make_call(name, [x, self.scalar("float64"), self.scalar("float64")])
        return make_call(name, [x, *(self.scalar("float64") for _ in range(3))])

    def function(self, steps: int) -> Function:
        draw = self.draw
        names = [n for n in self.OPS if _registered(n) is not None]
        results: list[Expr] = []
        for _ in range(steps):
            value = self.call(draw(st.sampled_from(names)))
            ty = self.type_of(value)
            if draw(st.booleans()):
                var = Var(f"x{len(self.bindings)}", ty if draw(st.booleans()) else None)
                self.bindings.append((var, value))
                self.let_types[id(var)] = ty
                value = var
            results.append(value)
            if ty.dtype == _F32:
                self.pool.append((value, ty))
        body: Expr = results[-1] if len(results) == 1 else Tuple(results)
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return Function(self.params, body)

    def type_of(self, value: Expr) -> TensorType:
        """The type of a value made here: from its operator's relation for a call."""
        if type(value) is Var:
            return self.let_types.get(id(value)) or value.type_annotation  # type: ignore[return-value]
        if type(value) is Constant:
            data = value.data  # type: ignore[attr-defined]
            return TensorType(data.shape, str(data.dtype))
        if type(value) is TupleGetItem:
            return self.type_of(value.tuple_value).fields[value.index]  # type: ignore[attr-defined,return-value]
        arg_types = [self.type_of(a) for a in value.args]  # type: ignore[attr-defined]
        return value.op.get_attr("FTypeRelation")(arg_types, value.attrs)  # type: ignore[attr-defined,return-value]


@st.composite
def _dynamic_program(draw: st.DrawFn, size: tuple[int, int], size_vars: bool) -> Function:
    gen = _DynGenerator(draw, size_vars)
    return gen.function(draw(st.integers(*size)))


def dynamic_programs(
    size: int | tuple[int, int] = (1, 6), size_vars: bool = False
) -> st.SearchStrategy[Function]:
    """Closed functions whose calls are the ``dyn.*`` operators (those registered).

    ``size`` (an int or a (min, max) range) counts the calls.  Shape, size and
    scale arguments are int64 or float parameters, constants, or ``shape_of``
    an earlier value; data arguments are float32 parameters (with ``size_vars``
    their shapes may hold ``n`` and ``m``) or earlier results, and the function
    returns every call's result.  Programs are well typed (each call's type
    comes from its operator's relation) and meant for the text format,
    structural equality and InferType: parameter values are not chosen, so
    running one needs inputs that agree with its shape arguments.
    """
    lo, hi = (size, size) if isinstance(size, int) else size
    if not 1 <= lo <= hi:
        raise ValueError(f"size must be a positive int or a (min, max) pair, got {size!r}")
    return _dynamic_program((lo, hi), size_vars)
