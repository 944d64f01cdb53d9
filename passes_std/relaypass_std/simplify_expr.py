"""SimplifyExpr: Relay's algebraic and data-movement simplifications.

The rewrites of Relay's ``simplify_expr.cc`` that apply to the standard
operators, in Relay's order, through the same pattern machinery
(:mod:`.dataflow_pattern`: matching, grouping, fixed-point rounds, types kept
up to date between rewrites), so that the results match Relay's.  Relay types
the whole function again after every rewrite; here the new nodes of each
replacement are typed on their own (a replacement has the type of what it
replaces), which gives the same types for the cost of the new nodes:

``ConcretizeZerosLike`` / ``ConcretizeOnesLike`` / ``ConcretizeFullLike``
    ``zeros_like(x)`` -> ``zeros(shape, dtype)`` (and ``ones``, ``full``) when
    the shape is static, dropping the dependency on ``x``.
``ConcretizeReshapeLike`` / ``ConcretizeCollapseSumLike`` / ``ConcretizeBroadcastToLike``
    ``reshape_like(x, y)`` -> ``reshape(x, shape)``, ``collapse_sum_like(x, y)``
    -> ``collapse_sum_to(x, shape)``, ``broadcast_to_like(x, y)`` ->
    ``broadcast_to(x, shape)``, when the result's shape is static: ``y`` is
    then needed for its type only, and dropping it frees its producer.
``ConcretizeCastLike``
    ``cast_like(x, y)`` -> ``cast(x, dtype of y)``, whatever the shapes.
``SimplifyAdd``
    ``x + x`` -> ``x * 2``.
``SimplifyRSqrt``
    ``n / sqrt(x)`` -> ``n * rsqrt(x)``.
``EliminateIdentity``
    ``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``, ``x / 1`` -> ``x``,
    where 0 and 1 are scalar constants, ``zeros``/``ones`` or
    ``zeros_like``/``ones_like`` and the result has the type of ``x``.
``SimplifyReshape``
    two consecutive reshapes (``reshape`` or ``reverse_reshape``, Relay's
    ``contrib_reverse_reshape``) -> one reshape, to the static output shape.
``SimplifyTranspose``
    two consecutive ``transpose``/``layout_transform`` -> one transpose of
    the composed permutation, or one ``layout_transform`` when either changes
    the rank (``NCHW`` <-> ``NCHW4c``).
``SimplifyNoOpTranspose``
    a transpose that permutes nothing, a layout_transform between equal
    layouts -> its input.
``SimplifySameCast`` / ``SimplifyConsecutiveCast``
    a cast to the dtype the data has -> the data; ``cast(cast(x, a), b)`` ->
    ``cast(x, b)`` when the first cast widens.
``FullElementwise``
    a broadcasting operator applied to ``full``/``ones``/``zeros`` (or their
    ``_like`` forms) and ``x`` of the result's type -> the operator applied to
    the scalar.
``SwitchAddMultiply``
    ``(x + c1) * c2`` -> ``x * c2 + (c1 * c2)`` with the constant part folded.
``SimplifyAdjacentMultiplyOrAdd``
    ``x * c1 * c2`` -> ``x * (c1 * c2)``, ``x + c1 + c2`` -> ``x + (c1 + c2)``,
    folded.
``SimplifyClipAndConsecutiveCast``
    casts after a clip whose bounds fit in each cast's dtype are dropped.
``SimplifyClip``
    a clip whose bounds cover the whole range of the dtype -> its input.
``SimplifyBinomial``
    ``a*x*x + b*x*y + c*y*y`` with constant ``a``, ``b``, ``c`` (each may be
    absent, meaning 1) -> ``a * ((x + p*y) * (x + q*y))`` where ``p`` and
    ``q`` are the roots of ``a*t*t - b*t + c``, when they are real.  As in
    Relay, the coefficients are read only for int32, float32 and float64
    (other dtypes count them as 1), ``x`` and ``y`` swap when ``c`` is 1 and
    ``a`` is above 1, and the roots are cast to the dtype -- for int32 that
    truncates irrational roots, so the factored form computes something else,
    exactly as Relay's does.

Relay's rewrites of ``qnn.dequantize`` (``SimplifyDQArgMax`` and the like)
cannot match here: the standard set has no quantized operators.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from relaypass.dataflow_pattern import (
    CallPattern,
    ConstantPattern,
    Match,
    OpAttrPattern,
    OpPattern,
    Pattern,
    Rewrite,
    Wildcard,
    rewrite_patterns,
)
from relaypass.ir.expr import Call, Constant, Expr, Function
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op, make_call
from relaypass.ir.op import OpPattern as FusionPattern
from relaypass.ir.types import TensorType
from relaypass.op.layout import Layout
from relaypass.transform import pass_constructor

from .fold_constant import fold_constant
from .infer_type import infer_type_expr, type_new_nodes

__all__ = ["SimplifyExpr", "SimplifyExprPostAlterOp", "simplify_expr", "simplify_expr_post_alter_op",
           "simplify_expr_post_alter_op_rewrites", "simplify_expr_rewrites"]


# --- helpers ------------------------------------------------------------------------------


def _is_op(name: str) -> OpPattern:
    return OpPattern(name)


def _scalar(dtype: str, value: object) -> Constant:
    """Relay's ``MakeConstantScalar``: a rank-0 constant of ``dtype``."""
    data = np.asarray(value).astype(dtype)
    data.flags.writeable = False
    return Constant(data)


def _static_shape(ty: object) -> tuple[int, ...] | None:
    if not isinstance(ty, TensorType):
        return None
    if not ty.is_static:
        return None
    return ty.concrete_shape


def _dtype_class(dtype: str) -> tuple[int, int]:
    """TVM's (type code, bits): int 0, uint 1 (bool is uint1), float 2, bfloat 4."""
    if dtype == "bool":
        return 1, 1
    for prefix, code in (("bfloat", 4), ("float", 2), ("uint", 1), ("int", 0)):
        if dtype.startswith(prefix):
            return code, int(dtype[len(prefix):])
    return -1, 0


def _dtype_range(dtype: str) -> tuple[float, float]:
    """TVM's ``min_value``/``max_value`` of a dtype (0, 0 for anything else)."""
    if dtype == "bool":
        return 0.0, 1.0
    code, _ = _dtype_class(dtype)
    if code in (0, 1):
        info = np.iinfo(dtype)
        return float(info.min), float(info.max)
    if code == 2:
        finfo = np.finfo(dtype)
        return float(finfo.min), float(finfo.max)
    if code == 4:
        # TVM gives bfloat16 the limits of float32 (same exponent range).
        finfo = np.finfo(np.float32)
        return float(finfo.min), float(finfo.max)
    return 0.0, 0.0


def _covers(dtype: str, low: float, high: float) -> bool:
    """[low, high] contains every value of ``dtype``."""
    lb, ub = _dtype_range(dtype)
    return high >= ub and low <= lb


def _fits(dtype: str, low: float, high: float) -> bool:
    """[low, high] lies within the values of ``dtype``."""
    lb, ub = _dtype_range(dtype)
    return high <= ub and low >= lb


def _fold(expr: Expr) -> Expr:
    return fold_constant(expr)


# --- ConcretizeLike -----------------------------------------------------------------------


def _concretize(op_name: str, build) -> Rewrite:
    """Relay's ConcretizeLikeRewrite: ``build(m, data, like, shape, dtype)`` replaces a
    call of ``op_name`` (``op(like)`` or ``op(data, like)``) whose type is static."""
    like = Wildcard()
    data = Wildcard()
    op = _is_op(op_name)
    pattern = op(like) if Op.get(op_name).num_inputs == 1 else op(data, like)

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        ty = pre.checked_type
        shape = _static_shape(ty)
        if shape is None:
            return post
        return build(m, data, like, shape, ty.dtype)

    return Rewrite(f"Concretize{''.join(p.capitalize() for p in op_name.split('_'))}",
                   pattern, callback)


def _shape_constant(shape: tuple[int, ...]) -> Constant:
    """The int32 vector ``collapse_sum_to`` takes its shape from (as Relay builds it)."""
    data = np.asarray(shape, dtype="int32")
    data.flags.writeable = False
    return Constant(data)


def _concretize_cast_like() -> Rewrite:
    """``cast_like`` -> ``cast``: the result dtype is known even when shapes are not."""
    data, like = Wildcard(), Wildcard()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        ty = pre.checked_type
        if not isinstance(ty, TensorType):
            return post
        return make_call("cast", [m.post(data)], dtype=ty.dtype)

    return Rewrite("ConcretizeCastLike", _is_op("cast_like")(data, like), callback)


# --- SimplifyAdd, SimplifyRSqrt ----------------------------------------------------------


def _simplify_add() -> Rewrite:
    # Relay matches every ``x + y`` and compares the two in the callback; one wildcard
    # twice asks the matcher for the same node at once, which finds exactly those
    # (each match is the addition alone, so no other match is affected).
    x = Wildcard()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        return make_call("multiply", [m.post(x), _scalar(pre.checked_type.dtype, 2)])

    return Rewrite("SimplifyAdd", _is_op("add")(x, x), callback)


def _simplify_rsqrt() -> Rewrite:
    x, numerator = Wildcard(), Wildcard()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        return make_call("multiply", [m.post(numerator), make_call("rsqrt", [m.post(x)])])

    return Rewrite("SimplifyRSqrt", _is_op("divide")(numerator, _is_op("sqrt")(x)), callback)


# --- EliminateIdentity --------------------------------------------------------------------


# The (kind, itemsize) of the dtypes Relay reads a scalar of (``TryToScalar``): int8-64,
# bool and uint8-64, float16-64; bfloat16 is recognised by name.
_SCALAR_KINDS = frozenset({("i", 1), ("i", 2), ("i", 4), ("i", 8), ("b", 1), ("u", 1),
                           ("u", 2), ("u", 4), ("u", 8), ("f", 2), ("f", 4), ("f", 8)})


def _identity_value(op_name: str, const: Constant) -> bool:
    """Relay's ``CheckConstant``: a "scalar" is any constant whose dims are all 1 (so
    ``[[0.0]]`` counts), read at its first element, of a dtype Relay can read."""
    data = const.array
    if any(d != 1 for d in data.shape):
        return False
    dtype = data.dtype
    if (dtype.kind, dtype.itemsize) not in _SCALAR_KINDS and dtype.name != "bfloat16":
        return False
    value = float(data.reshape(-1)[0])
    return value == (0.0 if op_name in ("add", "subtract") else 1.0)


def _eliminate_identity() -> Rewrite:
    x = Wildcard()
    const = ConstantPattern()
    zeros = _is_op("zeros")() | _is_op("zeros_like")(Wildcard()) | const
    ones = _is_op("ones")() | _is_op("ones_like")(Wildcard()) | const
    pattern = (_is_op("add")(x, zeros) | _is_op("multiply")(x, ones)
               | _is_op("subtract")(x, zeros) | _is_op("divide")(x, ones))

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        value = m.post(x)
        is_left = post.args[1] is value
        x_type = pre.args[1 if is_left else 0].checked_type
        if const in m and not _identity_value(pre.op.name, m.post(const)):
            return post
        if x_type == pre.checked_type:
            return value
        return post

    return Rewrite("EliminateIdentity", pattern, callback)


# --- reshape, transpose, layout_transform ------------------------------------------------


def _simplify_reshape() -> Rewrite:
    x = Wildcard()
    outer = _is_op("reshape") | _is_op("contrib_reverse_reshape")
    inner = _is_op("reshape") | _is_op("contrib_reverse_reshape")

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        shape = _static_shape(pre.checked_type)
        if shape is None:
            return post
        return make_call("reshape", [m.post(x)], newshape=shape, allowzero=False)

    return Rewrite("SimplifyReshape", CallPattern(outer, [CallPattern(inner, [x])]), callback)


def _axis_order(call: Call, ndim: int) -> list[int]:
    """The permutation a transpose or a (rank-keeping) layout_transform applies."""
    attrs = call.attrs
    if call.op.name == "transpose":
        if attrs.axes is None:
            return list(range(ndim - 1, -1, -1))
        return [a + ndim if a < 0 else a for a in attrs.axes[:ndim]]
    src = Layout(attrs.src_layout, "layout_transform")
    dst = Layout(attrs.dst_layout, "layout_transform")
    return [src.index(dst.axes[i][0]) for i in range(ndim)]


def _is_layout_transform(call: Expr) -> bool:
    return type(call) is Call and type(call.op) is Op and call.op.name == "layout_transform"


def _changes_rank(call: Expr) -> bool:
    # Relay compares the lengths of the layout strings.
    return _is_layout_transform(call) and len(call.attrs.src_layout) != len(call.attrs.dst_layout)


def _permute_layout(layout: str, order: list[int]) -> str | None:
    if len(order) != len(layout):
        return None
    return "".join(layout[k] for k in order)


def _layout_transform(data: Expr, src: str, dst: str) -> Call:
    return make_call("layout_transform", [data], src_layout=src, dst_layout=dst)


def _fold_rank_changing(data: Expr, call: Call) -> Call | None:
    """One layout_transform for a transpose/layout_transform pair of which one changes rank."""
    inner = call.args[0]
    src = dst = other = None
    if _changes_rank(call):
        src, dst, other = call.attrs.src_layout, call.attrs.dst_layout, inner
    if _changes_rank(inner):
        if src is None:
            src, dst, other = inner.attrs.src_layout, inner.attrs.dst_layout, call
        else:
            src = inner.attrs.src_layout
    if src is None:
        return None
    n_src = len(Layout(src, "layout_transform").axes)
    n_dst = len(Layout(dst, "layout_transform").axes)
    if n_src < n_dst:
        axes = _axis_order(other, n_src)
        inverse = [0] * len(axes)
        for i, a in enumerate(axes):
            inverse[a] = i
        layout = _permute_layout(src, inverse)
        return None if layout is None else _layout_transform(data, layout, dst)
    if n_src > n_dst:
        layout = _permute_layout(dst, _axis_order(other, n_dst))
        return None if layout is None else _layout_transform(data, src, layout)
    if _is_layout_transform(other):
        return _layout_transform(data, src, dst)
    return None


def _transposes() -> tuple[Rewrite, Rewrite]:
    x = Wildcard()
    outer = _is_op("transpose") | _is_op("layout_transform")
    inner = _is_op("transpose") | _is_op("layout_transform")

    def merge(pre: Call, post: Expr, m: Match) -> Expr:
        data = m.post(x)
        folded = _fold_rank_changing(data, post)
        if folded is not None:
            if folded.attrs.src_layout == folded.attrs.dst_layout:
                return data
            return folded
        ndim = len(pre.checked_type.shape)
        axes = list(range(ndim))
        for order in (_axis_order(post.args[0], ndim), _axis_order(post, ndim)):
            axes = [axes[order[i]] for i in range(ndim)]
        return make_call("transpose", [data], axes=tuple(axes))

    y = Wildcard()
    single = _is_op("transpose") | _is_op("layout_transform")

    def no_op(pre: Call, post: Expr, m: Match) -> Expr:
        if post.op.name == "layout_transform" and post.attrs.src_layout != post.attrs.dst_layout:
            return post
        ndim = len(pre.checked_type.shape)
        if _axis_order(post, ndim) == list(range(ndim)):
            return m.post(y)
        return post

    return (Rewrite("SimplifyTranspose", CallPattern(outer, [CallPattern(inner, [x])]), merge),
            Rewrite("SimplifyNoOpTranspose", CallPattern(single, [y]), no_op))


# --- casts --------------------------------------------------------------------------------


def _cast_of(data: Pattern) -> Pattern:
    """``cast(data)`` or ``cast_like(data, _)``: Relay's cast rewrites take both forms (the
    ``cast_like`` form matters where ConcretizeCastLike does not run first, as in
    SimplifyExprPostAlterOp)."""
    return _is_op("cast_like")(data, Wildcard()) | _is_op("cast")(data)


def _simplify_same_cast() -> Rewrite:
    data = Wildcard()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        if pre.checked_type.dtype == pre.args[0].checked_type.dtype:
            return m.post(data)
        return post

    return Rewrite("SimplifySameCast", _cast_of(data), callback)


def _is_widening(origin: str, cast: str) -> bool:
    """Relay's ``IsWidenCast``: casting ``origin`` to ``cast`` loses nothing."""
    (o_code, o_bits), (c_code, c_bits) = _dtype_class(origin), _dtype_class(cast)
    if o_code == c_code and o_bits <= c_bits:
        return True
    if o_code == 4 or c_code == 4:
        return False
    return o_code < c_code and o_bits <= c_bits


def _simplify_consecutive_cast() -> Rewrite:
    data = Wildcard()
    first = _cast_of(data)

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        origin = m.pre(data).checked_type.dtype
        if not _is_widening(origin, m.pre(first).checked_type.dtype):
            return post
        return make_call("cast", [m.post(data)], dtype=pre.checked_type.dtype)

    return Rewrite("SimplifyConsecutiveCast", _cast_of(first), callback)


# --- FullElementwise ----------------------------------------------------------------------


def _full_elementwise() -> Rewrite:
    x, data, value = Wildcard(), Wildcard(), ConstantPattern()
    full = _is_op("full")(value) | _is_op("full_like")(data, value)
    ones = _is_op("ones")() | _is_op("ones_like")(data)
    zeros = _is_op("zeros")() | _is_op("zeros_like")(data)
    op = OpAttrPattern("TOpPattern", FusionPattern.BROADCAST)
    filled = full | ones | zeros
    pattern = CallPattern(op, [filled, x]) | CallPattern(op, [x, filled])

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        pre_type = pre.checked_type
        rest = m.post(x)
        is_left = post.args[1] is rest
        if pre.args[1 if is_left else 0].checked_type != pre_type:
            return post
        if full in m:
            scalar = m.post(value)
        elif ones in m:
            scalar = _scalar(pre_type.dtype, 1)
        else:
            scalar = _scalar(pre_type.dtype, 0)
        args = [scalar, rest] if is_left else [rest, scalar]
        return rebuild(pre, (pre.op, *args))

    return Rewrite("FullElementwise", pattern, callback)


# --- constants next to each other -------------------------------------------------------


def _switch_add_multiply() -> Rewrite:
    x, c1, c2 = Wildcard(), ConstantPattern(), ConstantPattern()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        value = m.post(x)
        if type(value) is Constant:
            return post
        scale = m.post(c2)
        shift = _fold(make_call("multiply", [m.post(c1), scale]))
        return make_call("add", [make_call("multiply", [value, scale]), shift])

    return Rewrite("SwitchAddMultiply", (x + c1) * c2, callback)


def _adjacent_multiply_or_add() -> Rewrite:
    x, c1, c2 = Wildcard(), ConstantPattern(), ConstantPattern()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        value = m.post(x)
        if type(value) is Constant:
            return post
        folded = _fold(Call(pre.op, [m.post(c1), m.post(c2)]))
        return Call(pre.op, [value, folded])

    return Rewrite("SimplifyAdjacentMultiplyOrAdd", (x * c1 * c2) | (x + c1 + c2), callback)


# --- clip ---------------------------------------------------------------------------------


def _clip_and_consecutive_cast() -> Rewrite:
    clip = _is_op("clip")(Wildcard())
    casts = CallPattern(_is_op("cast"), None)
    casts.args = [casts | clip]  # one or more casts, down to the clip

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        pre_clip = m.pre(clip)
        low, high = float(pre_clip.attrs.a_min), float(pre_clip.attrs.a_max)
        remaining = []
        node = pre
        while node is not pre_clip:
            if not _fits(node.checked_type.dtype, low, high):
                remaining.append(node)
            node = node.args[0]
        last = remaining[0] if remaining else pre_clip
        out = m.post(clip)
        for cast in reversed(remaining):
            out = make_call("cast", [out], dtype=cast.attrs.dtype)
        if last.checked_type.dtype != pre.checked_type.dtype:
            out = make_call("cast", [out], dtype=pre.checked_type.dtype)
        return out

    return Rewrite("SimplifyClipAndConsecutiveCast", casts, callback)


# Relay keeps a clip of these (a DNNL legalization needs the structure); they exist only
# where a plugin registers quantized operators.
_QNN_CLIP_PRODUCERS = frozenset({"qnn.requantize", "qnn.add"})


def _simplify_clip() -> Rewrite:
    x = Wildcard()

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        attrs = post.attrs
        data = post.args[0]
        if (type(data) is Call and type(data.op) is Op
                and data.op.name in _QNN_CLIP_PRODUCERS):
            return post
        if _covers(pre.checked_type.dtype, float(attrs.a_min), float(attrs.a_max)):
            return m.post(x)
        return post

    return Rewrite("SimplifyClip", _is_op("clip")(x), callback)


# --- SimplifyBinomial --------------------------------------------------------------------

# Relay reads a coefficient through a pointer of the expression's dtype, for these only.
_BINOMIAL_DTYPES = frozenset({"int32", "float32", "float64"})


def _simplify_binomial() -> Rewrite:
    x, y = Wildcard(), Wildcard()
    a, b, c = ConstantPattern(), ConstantPattern(), ConstantPattern()

    def mul(lhs: Pattern, rhs: Pattern) -> CallPattern:
        return _is_op("multiply")(lhs, rhs)

    def add(lhs: Pattern, rhs: Pattern) -> CallPattern:
        return _is_op("add")(lhs, rhs)

    x_sq = mul(a, mul(x, x)) | mul(x, mul(a, x)) | mul(x, x)
    xy = mul(b, mul(x, y)) | mul(x, mul(b, y)) | mul(y, mul(b, x)) | mul(x, y)
    y_sq = mul(c, mul(y, y)) | mul(y, mul(c, y)) | mul(y, y)
    pattern = (add(add(xy, x_sq), y_sq) | add(add(xy, y_sq), x_sq)
               | add(add(x_sq, y_sq), xy))

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        dtype = pre.checked_type.dtype
        lhs, rhs = m.post(x), m.post(y)
        coefficients = []
        for const in (a, b, c):
            value = 1.0
            if const in m and dtype in _BINOMIAL_DTYPES:
                data = m.post(const).array
                if data.size:
                    value = float(data.reshape(-1)[0])
            coefficients.append(value)
        a_val, b_val, c_val = coefficients
        if c_val == 1 and a_val > 1:
            lhs, rhs = rhs, lhs
            # Relay keeps the swapped coefficient in a C float on the way.
            a_val, c_val = c_val, float(np.float32(a_val))
        det = b_val * b_val - 4 * a_val * c_val
        if det < 0:
            return pre
        same = det < 10e-5
        root = math.sqrt(det)
        first_val = _scalar(dtype, (b_val + root) / (2 * a_val))
        first = make_call("add", [lhs, make_call("multiply", [rhs, first_val])])
        if same:
            second = first
        else:
            second_val = _scalar(dtype, (b_val - root) / (2 * a_val))
            second = make_call("add", [lhs, make_call("multiply", [rhs, second_val])])
        product = make_call("multiply", [first, second])
        return make_call("multiply", [_scalar(dtype, a_val), product])

    return Rewrite("SimplifyBinomial", pattern, callback)


# --- dequantize before an arg function ----------------------------------------------------

_DEQUANTIZE = "qnn.dequantize"


def _simplify_dq_arg(op_name: str) -> Rewrite:
    """Relay's SimplifyDQArgFunc: ``op(qnn.dequantize(x, scale, zero_point))`` -> ``op(x)``.

    Dequantizing is monotonic per tensor, so argmax, argmin and argsort give
    the same indices on the quantized data.  The standard set has no
    ``qnn.dequantize``; the rewrite joins the list only when a plugin has
    registered one (:func:`_dequantize_registered`).
    """
    x = Wildcard()
    pattern = _is_op(op_name)(_is_op(_DEQUANTIZE)(x, Wildcard(), Wildcard()))

    def callback(pre: Call, post: Expr, m: Match) -> Expr:
        return Call(pre.op, [m.post(x)], pre.attrs)

    name = {"argmax": "SimplifyDQArgMax", "argmin": "SimplifyDQArgMin",
            "argsort": "SimplifyDQArgSort"}[op_name]
    return Rewrite(name, pattern, callback)


def _dequantize_registered() -> bool:  # a plugin may register it after import
    return Op.is_registered(_DEQUANTIZE)


# --- the passes ---------------------------------------------------------------------------


def simplify_expr_rewrites() -> list[Rewrite]:
    """The rewrites, in the order Relay applies them."""
    transpose, no_op_transpose = _transposes()
    return [
        _concretize("zeros_like", lambda m, data, like, shape, dtype:
                    make_call("zeros", [], shape=shape, dtype=dtype)),
        _concretize("ones_like", lambda m, data, like, shape, dtype:
                    make_call("ones", [], shape=shape, dtype=dtype)),
        # full_like's second argument is the fill value, in the place of ``like``.
        _concretize("full_like", lambda m, data, like, shape, dtype:
                    make_call("full", [m.post(like)], shape=shape, dtype=dtype)),
        _concretize("reshape_like", lambda m, data, like, shape, dtype:
                    make_call("reshape", [m.post(data)], newshape=shape, allowzero=False)),
        _concretize("collapse_sum_like", lambda m, data, like, shape, dtype:
                    make_call("collapse_sum_to", [m.post(data), _shape_constant(shape)],
                              shape=shape)),
        _concretize("broadcast_to_like", lambda m, data, like, shape, dtype:
                    make_call("broadcast_to", [m.post(data)], shape=shape)),
        _concretize_cast_like(),
        _simplify_add(),
        _simplify_rsqrt(),
        _eliminate_identity(),
        _simplify_reshape(),
        transpose,
        no_op_transpose,
        _simplify_same_cast(),
        _simplify_consecutive_cast(),
        _full_elementwise(),
        _switch_add_multiply(),
        _adjacent_multiply_or_add(),
        *([_simplify_dq_arg(name) for name in ("argmax", "argmin", "argsort")]
          if _dequantize_registered() else []),
        _clip_and_consecutive_cast(),
        _simplify_clip(),
        _simplify_binomial(),
    ]


def simplify_expr_post_alter_op_rewrites() -> list[Rewrite]:
    """Relay's cut-down list for after AlterOpLayout, in its order."""
    return [
        _eliminate_identity(),
        _simplify_reshape(),
        _simplify_same_cast(),
        _simplify_consecutive_cast(),
        _clip_and_consecutive_cast(),
        _simplify_clip(),
    ]


def _run(rewrites: Sequence[Rewrite], func: Function, mod: IRModule | None) -> Function:
    def infer(f: Function) -> Function:
        return infer_type_expr(f, mod)

    return rewrite_patterns(rewrites, func, infer, type_new_nodes)


@cache
def _kept_rewrites(post_alter_op: bool, dequantize: Op | None) -> tuple[Rewrite, ...]:
    """The rewrites of one pass, built once: rewrites hold no state, and each works out what
    the driver needs of its pattern once (on a small model that is a tenth of a run).  The
    list depends on ``qnn.dequantize``, the operator a plugin may register (patterns hold
    the operator they name, so a new registration builds the list again)."""
    if post_alter_op:
        return tuple(simplify_expr_post_alter_op_rewrites())
    return tuple(simplify_expr_rewrites())


def simplify_expr(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` simplified; ``mod`` resolves its global calls when it is typed again."""
    dequantize = Op.get(_DEQUANTIZE) if _dequantize_registered() else None
    return _run(_kept_rewrites(False, dequantize), func, mod)


def simplify_expr_post_alter_op(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` with the clean-ups of :func:`simplify_expr_post_alter_op_rewrites`."""
    return _run(_kept_rewrites(True, None), func, mod)


def _simplify_expr_factory() -> Callable[[Function, IRModule, object], Function]:
    """SimplifyExpr's transformation: the manifest's factory (the pass is :data:`SimplifyExpr`)."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return simplify_expr(func, mod)

    return transform


def _simplify_expr_post_alter_op_factory() -> Callable[[Function, IRModule, object], Function]:
    """SimplifyExprPostAlterOp's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return simplify_expr_post_alter_op(func, mod)

    return transform


#: The SimplifyExpr pass, the one ``relay.transform.SimplifyExpr`` builds;
#: everything about it is declared in relaypass-plugin.toml.
SimplifyExpr = pass_constructor("SimplifyExpr")

#: Relay's clean-up after AlterOpLayout (``relay.transform.SimplifyExprPostAlterOp``).
SimplifyExprPostAlterOp = pass_constructor("SimplifyExprPostAlterOp")
