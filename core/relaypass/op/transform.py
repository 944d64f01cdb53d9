"""Shape and data-movement operators: reshape and its relatives, joining, splitting,
tiling, layout changes, and the operators that describe or enumerate shapes.

Reshape follows Relay's special codes in ``newshape``: ``0`` copies the input
dimension at the same position, ``-1`` infers one dimension from the rest,
``-2`` copies all remaining input dimensions, ``-3`` merges two consecutive
input dimensions, and ``-4`` splits one input dimension into the next two
values of ``newshape`` (one of which may be ``-1``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Constant, Expr
from ..ir.op import REQUIRED, OpPattern, register_op, register_op_attr
from ..ir.shape_expr import SizeExpr, dim_add, dim_floordiv, dim_sub
from ..ir.types import Any, Dim, IntImm, SizeVar, TensorType, TupleType, Type
from . import dynamic
from .builder import call, dynamic_arg, expr_arg, static_shape, tuple_arg
from .layout import Layout, check_convertible, transform_array
from .relations import (
    attr_bool,
    attr_dtype,
    attr_int,
    attr_ints,
    broadcast_shapes,
    const_scalar,
    dim_mul,
    dims_equal_or_unknown,
    dims_product,
    expect_scalar,
    expect_tensor,
    expect_tensors,
    fail,
    is_any,
    normalize_axes,
    normalize_axis,
    shape_str,
)
from .tuple_wrapper import TupleWrapper

__all__ = [
    "reshape", "transpose", "squeeze", "expand_dims", "concatenate", "stack", "split", "tile",
    "repeat", "broadcast_to", "reverse", "layout_transform", "shape_of", "ndarray_size", "arange",
    "reshape_like", "reverse_reshape", "broadcast_to_like", "collapse_sum_like", "collapse_sum_to",
    "slice_like",
]


# --- reshape ------------------------------------------------------------------------------------


def infer_reshape(
    ishape: Sequence[Dim], newshape: Sequence[int], allowzero: bool, op_name: str = "reshape"
) -> tuple[Dim, ...]:
    """The shape ``reshape(data, newshape)`` gives for an input of ``ishape`` (ints or Any)."""
    code = f"newshape {tuple(newshape)}"
    oshape: list[Dim] = []
    used_in: set[int] = set()
    used_out: set[int] = set()
    src = 0
    infer_at = -1
    n_in = len(ishape)
    i = 0
    while i < len(newshape):
        v = newshape[i]
        if v > 0 or (v == 0 and allowzero):
            oshape.append(v)
            src += 1
        elif v == 0:
            if src >= n_in:
                raise fail(op_name, f"{code}: code 0 at position {i} copies input dimension {src}, "
                           f"but the input has rank {n_in}")
            used_in.add(src)
            used_out.add(len(oshape))
            oshape.append(ishape[src])
            src += 1
        elif v == -1:
            if infer_at >= 0:
                raise fail(op_name, f"{code}: only one dimension can be -1")
            infer_at = len(oshape)
            oshape.append(1)
            src += 1
        elif v == -2:
            while src < n_in:
                used_in.add(src)
                used_out.add(len(oshape))
                oshape.append(ishape[src])
                src += 1
        elif v == -3:
            if src + 1 >= n_in:
                raise fail(op_name, f"{code}: code -3 at position {i} merges input dimensions "
                           f"{src} and {src + 1}, but the input has rank {n_in}")
            used_in.update((src, src + 1))
            used_out.add(len(oshape))
            oshape.append(dim_mul(ishape[src], ishape[src + 1]))
            src += 2
        elif v == -4:
            if i + 2 >= len(newshape):
                raise fail(op_name, f"{code}: code -4 at position {i} must be followed by the two "
                           f"dimensions to split into")
            if src >= n_in:
                raise fail(op_name, f"{code}: code -4 at position {i} splits input dimension "
                           f"{src}, but the input has rank {n_in}")
            d0 = ishape[src]
            used_in.add(src)
            src += 1
            d1, d2 = newshape[i + 1], newshape[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                raise fail(op_name, f"{code}: the two dimensions after -4 cannot both be -1")
            if (d1 <= 0 and d1 != -1) or (d2 <= 0 and d2 != -1):
                raise fail(op_name, f"{code}: the dimensions after -4 must be positive or -1")
            known = d2 if d1 == -1 else d1
            if d1 == -1 or d2 == -1:
                if is_any(d0):
                    rest: Dim = _exact_quotient(d0, known)
                elif d0 % known:
                    raise fail(op_name, f"{code}: input dimension {d0} cannot be split into "
                               f"{d1} x {d2}")
                else:
                    rest = d0 // known
                d1, d2 = (rest, d2) if d1 == -1 else (d1, rest)
            elif not is_any(d0) and d1 * d2 != d0:
                raise fail(op_name, f"{code}: input dimension {d0} cannot be split into {d1} x {d2}")
            used_out.update((len(oshape), len(oshape) + 1))
            oshape.extend((d1, d2))
        else:
            raise fail(op_name, f"{code}: invalid code {v} at position {i} (valid codes are "
                       f"positive sizes, 0, -1, -2, -3 and -4)")
        i += 1
    if infer_at >= 0:
        total = dims_product([d for k, d in enumerate(ishape) if k not in used_in])
        others = dims_product(
            [d for k, d in enumerate(oshape) if k not in used_out and k != infer_at]
        )
        if is_any(total) or is_any(others):
            oshape[infer_at] = _exact_quotient(total, others)
        elif others == 0 or total % others:
            raise fail(op_name, f"cannot reshape a tensor of shape {shape_str(ishape)} to {code}: "
                       f"the -1 dimension cannot be inferred")
        else:
            oshape[infer_at] = total // others
    in_size = _element_count(ishape)
    out_size = _element_count(oshape)
    if in_size is not None and out_size is not None and in_size != out_size:
        raise fail(op_name, f"cannot reshape a tensor of shape {shape_str(ishape)} "
                   f"({in_size} elements) to {shape_str(oshape)} ({out_size} elements)")
    return tuple(oshape)


def _element_count(shape: Sequence[Dim]) -> Dim | None:
    """``dims_product(shape)`` when that is a number, else None, without building the product
    of the symbolic dims (the size check of every reshape asks this).

    The product of size variables and expressions of them (polynomials with
    at least one term) is never a number; times a number it is 0 when that
    number is, and symbolic otherwise.  Anything else is left to ``dims_product``.
    """
    number = 1
    symbolic = False
    for d in shape:
        t = type(d)
        if t is IntImm or t is int:
            number *= d
        elif t is Any:
            return None
        elif t is SizeVar or (t is SizeExpr and d.terms):
            symbolic = True
        else:
            size = dims_product(shape)
            return None if is_any(size) else size
    if symbolic and number != 0:
        return None
    return number


def _exact_quotient(total: Dim, part: Dim) -> Dim:
    """``total / part`` where one is symbolic: the exact quotient (``n*4 / 2`` is ``n*2``), or
    ``Any`` when there is none (``n / 2``: n need not be even) or either is unknown."""
    if part == 0:
        return Any()
    q = dim_floordiv(total, part)
    return q if not isinstance(q, Any) and dim_mul(q, part) == total else Any()


def _reshape_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "reshape: data")
    newshape = attr_ints(attrs.newshape, "newshape", "reshape")
    allowzero = attr_bool(attrs.allowzero, "allowzero", "reshape")
    return TensorType(infer_reshape(t.shape, newshape, allowzero), t.dtype)


def _reshape_kernel(args, attrs):
    a = args[0]
    return a.reshape(infer_reshape(a.shape, attrs.newshape, attrs.allowzero))


register_op(
    "reshape", num_inputs=1, type_relation=_reshape_rel, kernel=_reshape_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"newshape": REQUIRED, "allowzero": False},
    attrs_type_key="relay.attrs.ReshapeAttrs",
    description="Reshape with Relay's special codes 0, -1, -2, -3, -4.",
)


def _reverse_reshape_shape(
    ishape: Sequence[Dim], newshape: Sequence[int], allowzero: bool
) -> tuple[Dim, ...]:
    """``contrib_reverse_reshape``: reshape's codes matched from the right.

    As Relay does, this is reshape on the reversed input shape and the reversed
    ``newshape``, read back in reverse; an error describes those reversed shapes.
    """
    name = "contrib_reverse_reshape (codes read from the right)"
    out = infer_reshape(tuple(ishape)[::-1], tuple(newshape)[::-1], allowzero, name)
    return out[::-1]


def _reverse_reshape_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "contrib_reverse_reshape: data")
    newshape = attr_ints(attrs.newshape, "newshape", "contrib_reverse_reshape")
    allowzero = attr_bool(attrs.allowzero, "allowzero", "contrib_reverse_reshape")
    return TensorType(_reverse_reshape_shape(t.shape, newshape, allowzero), t.dtype)


register_op(
    "contrib_reverse_reshape", num_inputs=1, type_relation=_reverse_reshape_rel,
    kernel=lambda args, attrs: args[0].reshape(
        _reverse_reshape_shape(args[0].shape, attrs.newshape, attrs.allowzero)),
    pattern=OpPattern.INJECTIVE, attrs={"newshape": REQUIRED, "allowzero": False},
    attrs_type_key="relay.attrs.ReshapeAttrs",
    description="Reshape with reshape's special codes matched from the right "
    "(relay.reverse_reshape).",
)


def _like_span(begin, end, ndim: int, which: str) -> tuple[int, int]:
    """The half-open axis range [begin, end) of reshape_like's attributes, normalized."""
    b = attr_int(begin, f"{which}_begin", "reshape_like")
    e = ndim if end is None else attr_int(end, f"{which}_end", "reshape_like")
    b, e = (b + ndim if b < 0 else b), (e + ndim if e < 0 else e)
    if not 0 <= b <= e <= ndim:
        raise fail("reshape_like", f"axes {which}_begin={begin}, {which}_end={end} do not give a "
                   f"range within a tensor of rank {ndim}")
    return b, e


def _reshape_like_shape(data: Sequence[Dim], like: Sequence[Dim], attrs: Attrs) -> list[Dim]:
    lb, le = _like_span(attrs.lhs_begin, attrs.lhs_end, len(data), "lhs")
    rb, re = _like_span(attrs.rhs_begin, attrs.rhs_end, len(like), "rhs")
    return [*data[:lb], *like[rb:re], *data[le:]]


def _reshape_like_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "reshape_like: data")
    like = expect_tensor(arg_types[1], "reshape_like: shape_like")
    shape = _reshape_like_shape(t.shape, like.shape, attrs)
    in_size, out_size = dims_product(t.shape), dims_product(shape)
    if not is_any(in_size) and not is_any(out_size) and in_size != out_size:
        raise fail("reshape_like", f"cannot reshape a tensor of shape {shape_str(t.shape)} "
                   f"({in_size} elements) to {shape_str(shape)} ({out_size} elements)")
    return TensorType(shape, t.dtype)


register_op(
    "reshape_like", num_inputs=2, type_relation=_reshape_like_rel,
    kernel=lambda args, attrs: args[0].reshape(
        _reshape_like_shape(args[0].shape, args[1].shape, attrs)),
    pattern=OpPattern.INJECTIVE,
    attrs={"lhs_begin": 0, "lhs_end": None, "rhs_begin": 0, "rhs_end": None},
    attrs_type_key="relay.attrs.ReshapeLikeAttrs",
    description="Reshape data's axes [lhs_begin, lhs_end) to shape_like's axes "
    "[rhs_begin, rhs_end).",
)


# --- transpose, squeeze, expand_dims, reverse ----------------------------------------------------


def _transpose_axes(t: TensorType, axes, op_name: str = "transpose") -> list[int]:
    if axes is None or axes == ():
        return list(range(t.ndim))[::-1]
    axes = attr_ints(axes, "axes", op_name)
    if len(axes) != t.ndim:
        raise fail(op_name, f"axes {axes} must name each of the {t.ndim} axes of a tensor of "
                   f"shape {shape_str(t.shape)} once")
    return normalize_axes(axes, t.ndim, op_name, "axes")


def _transpose_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "transpose: data")
    perm = _transpose_axes(t, attrs.axes)
    return TensorType([t.shape[k] for k in perm], t.dtype)


def _transpose_kernel(args, attrs):
    a = args[0]
    axes = attrs.axes
    return np.transpose(a, None if not axes else axes)


register_op(
    "transpose", num_inputs=1, type_relation=_transpose_rel, kernel=_transpose_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"axes": None}, attrs_type_key="relay.attrs.TransposeAttrs",
    description="Permute the axes; no axes reverses them.",
)


def _squeeze_axes(t: TensorType, axis) -> list[int]:
    if axis is None:
        if not t.is_static:
            raise fail("squeeze", f"axis must be given when the input shape {shape_str(t.shape)} "
                       f"has unknown dimensions")
        return [k for k, d in enumerate(t.shape) if d == 1]
    axes = normalize_axes(attr_ints(axis, "axis", "squeeze"), t.ndim, "squeeze")
    for k in axes:
        d = t.shape[k]
        if not is_any(d) and d != 1:
            raise fail("squeeze", f"cannot squeeze axis {k} of shape {shape_str(t.shape)}: "
                       f"its extent is {d}, not 1")
    return axes


def _squeeze_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "squeeze: data")
    drop = set(_squeeze_axes(t, attrs.axis))
    return TensorType([d for k, d in enumerate(t.shape) if k not in drop], t.dtype)


def _squeeze_kernel(args, attrs):
    a = args[0]
    if attrs.axis is None:
        return np.squeeze(a)
    axes = tuple(k % a.ndim for k in attrs.axis)
    for k in axes:
        if a.shape[k] != 1:
            raise ValueError(f"squeeze: axis {k} has extent {a.shape[k]} at run time, not 1")
    return np.squeeze(a, axis=axes)


register_op(
    "squeeze", num_inputs=1, type_relation=_squeeze_rel, kernel=_squeeze_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"axis": None}, attrs_type_key="relay.attrs.SqueezeAttrs",
    description="Remove axes of extent 1 (all of them when axis is None).",
)


def _expand_dims_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "expand_dims: data")
    num = attr_int(attrs.num_newaxis, "num_newaxis", "expand_dims", minimum=0)
    axis = normalize_axis(attrs.axis, t.ndim + 1, "expand_dims")
    shape = list(t.shape)
    return TensorType(shape[:axis] + [1] * num + shape[axis:], t.dtype)


def _expand_dims_kernel(args, attrs):
    a = args[0]
    axis = attrs.axis + a.ndim + 1 if attrs.axis < 0 else attrs.axis
    return a.reshape(a.shape[:axis] + (1,) * attrs.num_newaxis + a.shape[axis:])


register_op(
    "expand_dims", num_inputs=1, type_relation=_expand_dims_rel, kernel=_expand_dims_kernel,
    pattern=OpPattern.BROADCAST, attrs={"axis": REQUIRED, "num_newaxis": 1},
    attrs_type_key="relay.attrs.ExpandDimsAttrs",
    description="Insert num_newaxis axes of extent 1 at position axis.",
)


def _reverse_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "reverse: data")
    normalize_axis(attrs.axis, t.ndim, "reverse")
    return t


register_op(
    "reverse", num_inputs=1, type_relation=_reverse_rel,
    kernel=lambda args, attrs: np.flip(args[0], axis=attrs.axis),
    pattern=OpPattern.INJECTIVE, attrs={"axis": REQUIRED}, attrs_type_key="relay.attrs.ReverseAttrs",
    description="Reverse the order of elements along one axis.",
)


# --- concatenate, stack, split -------------------------------------------------------------------


def _merge_dim(a: Dim, b: Dim) -> Dim:
    """The more telling of two dims that must be equal: a number, else a size variable, else Any."""
    if isinstance(a, Any) or is_any(a) and not is_any(b):
        return b
    return a


def _concatenate_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    fields = expect_tensors(arg_types[0], "concatenate")
    first = fields[0]
    ndim = first.ndim
    if ndim == 0:
        raise fail("concatenate", "cannot concatenate scalars")
    axis = normalize_axis(attrs.axis, ndim, "concatenate")
    shape = list(first.shape)
    dtype = first.dtype
    total: Dim = 0
    for i, f in enumerate(fields):
        fshape = f.shape
        if len(fshape) != ndim:
            raise fail("concatenate", f"field {i} has rank {f.ndim}, field 0 has rank {ndim}")
        if f.dtype != dtype:
            raise fail("concatenate", f"field {i} has dtype {f.dtype}, field 0 has {first.dtype}")
        for d in range(ndim):
            if d == axis:
                continue
            if not dims_equal_or_unknown(shape[d], fshape[d]):
                raise fail("concatenate", f"field {i} has shape {shape_str(f.shape)}, which differs "
                           f"from field 0's {shape_str(first.shape)} in dimension {d}")
            shape[d] = _merge_dim(shape[d], fshape[d])
        dim = fshape[axis]
        # Numbers add as ints (the sum of shape vectors' lengths), the rest as dimensions.
        total = total + dim if type(dim) is IntImm and type(total) is int else dim_add(total, dim)
    shape[axis] = total
    return TensorType(shape, first.dtype)


register_op(
    "concatenate", num_inputs=1, type_relation=_concatenate_rel,
    kernel=lambda args, attrs: np.concatenate(args[0], axis=attrs.axis),
    pattern=OpPattern.INJECTIVE, attrs={"axis": 0}, attrs_type_key="relay.attrs.ConcatenateAttrs",
    description="Join a tuple of tensors along an existing axis.",
)


def _stack_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    fields = expect_tensors(arg_types[0], "stack")
    first = fields[0]
    axis = normalize_axis(attrs.axis, first.ndim + 1, "stack")
    shape = list(first.shape)
    for i, f in enumerate(fields):
        if f.dtype != first.dtype:
            raise fail("stack", f"field {i} has dtype {f.dtype}, field 0 has {first.dtype}")
        if f.ndim != first.ndim or not all(map(dims_equal_or_unknown, shape, f.shape)):
            raise fail("stack", f"field {i} has shape {shape_str(f.shape)}, field 0 has "
                       f"{shape_str(first.shape)}; stacked tensors must have one shape")
        shape = [_merge_dim(a, b) for a, b in zip(shape, f.shape)]
    shape.insert(axis, len(fields))
    return TensorType(shape, first.dtype)


register_op(
    "stack", num_inputs=1, type_relation=_stack_rel,
    kernel=lambda args, attrs: np.stack(args[0], axis=attrs.axis),
    pattern=OpPattern.INJECTIVE, attrs={"axis": 0}, attrs_type_key="relay.attrs.StackAttrs",
    description="Join a tuple of tensors of one shape along a new axis.",
)


def _split_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "split: data")
    axis = normalize_axis(attrs.axis, t.ndim, "split")
    dim = t.shape[axis]
    ios = attrs.indices_or_sections
    pieces: list[Dim]
    if isinstance(ios, int) and not isinstance(ios, bool):
        if ios < 1:
            raise fail("split", f"the number of sections must be positive, got {ios}")
        if is_any(dim):
            # A size variable's share is an expression (``floordiv(n, 2)``, ``n`` for ``n*2``).
            pieces = [dim_floordiv(dim, ios)] * ios
        elif dim % ios:
            raise fail("split", f"axis {axis} of extent {dim} cannot be split into {ios} equal "
                       f"sections")
        else:
            pieces = [dim // ios] * ios
    else:
        indices = attr_ints(ios, "indices_or_sections", "split", minimum=0)
        bounds = [0, *indices]
        for a, b in zip(bounds, bounds[1:]):
            if b < a:
                raise fail("split", f"indices {indices} must be in ascending order")
        if not is_any(dim) and bounds[-1] > dim:
            raise fail("split", f"index {bounds[-1]} is beyond axis {axis} of extent {dim}")
        pieces = [b - a for a, b in zip(bounds, bounds[1:])]
        pieces.append(dim_sub(dim, bounds[-1]))
    fields = []
    for p in pieces:
        shape = list(t.shape)
        shape[axis] = p
        fields.append(TensorType(shape, t.dtype))
    return TupleType(fields)


def _split_kernel(args, attrs):
    ios = attrs.indices_or_sections
    parts = np.split(args[0], ios if isinstance(ios, int) else list(ios), axis=attrs.axis)
    return tuple(parts)


register_op(
    "split", num_inputs=1, type_relation=_split_rel, kernel=_split_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"indices_or_sections": REQUIRED, "axis": 0},
    attrs_type_key="relay.attrs.SplitAttrs",
    description="Split into equal sections or at indices; the result is a tuple.",
)


# --- tile, repeat, broadcast_to -----------------------------------------------------------------


def _tile_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "tile: data")
    reps = attr_ints(attrs.reps, "reps", "tile", minimum=1)
    n = max(t.ndim, len(reps))
    shape = (1,) * (n - t.ndim) + t.shape
    reps = (1,) * (n - len(reps)) + reps
    return TensorType([dim_mul(d, r) for d, r in zip(shape, reps)], t.dtype)


register_op(
    "tile", num_inputs=1, type_relation=_tile_rel,
    kernel=lambda args, attrs: np.tile(args[0], attrs.reps),
    pattern=OpPattern.BROADCAST, attrs={"reps": REQUIRED}, attrs_type_key="relay.attrs.TileAttrs",
    description="Repeat the whole tensor reps times along each axis.",
)


def _repeat_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "repeat: data")
    repeats = attr_int(attrs.repeats, "repeats", "repeat", minimum=1)
    axis = normalize_axis(attrs.axis, t.ndim, "repeat")
    shape = list(t.shape)
    shape[axis] = dim_mul(shape[axis], repeats)
    return TensorType(shape, t.dtype)


register_op(
    "repeat", num_inputs=1, type_relation=_repeat_rel,
    kernel=lambda args, attrs: np.repeat(args[0], attrs.repeats, axis=attrs.axis),
    pattern=OpPattern.BROADCAST, attrs={"repeats": REQUIRED, "axis": REQUIRED},
    attrs_type_key="relay.attrs.RepeatAttrs",
    description="Repeat each element repeats times along an axis.",
)


def _broadcast_to_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "broadcast_to: data")
    shape = attr_ints(attrs.shape, "shape", "broadcast_to", minimum=0)
    if t.ndim > len(shape):
        raise fail("broadcast_to", f"cannot broadcast shape {shape_str(t.shape)} to the lower-rank "
                   f"shape {shape_str(shape)}")
    for d, s in zip(t.shape[::-1], shape[::-1]):
        if not is_any(d) and d != s and d != 1:
            raise fail("broadcast_to", f"cannot broadcast shape {shape_str(t.shape)} to "
                       f"{shape_str(shape)}")
    return TensorType(shape, t.dtype)


register_op(
    "broadcast_to", num_inputs=1, type_relation=_broadcast_to_rel,
    kernel=lambda args, attrs: np.array(np.broadcast_to(args[0], attrs.shape)),
    pattern=OpPattern.BROADCAST, attrs={"shape": REQUIRED, "dtype": ""},
    attrs_type_key="relay.attrs.InitOpAttrs",
    description="Broadcast to a static shape with numpy rules.",
)


def _expect_broadcasts(small: TensorType, big: TensorType, op_name: str) -> None:
    """Relay's BroadcastRel with ``big`` as its result: same dtype, and broadcasting ``small``
    against ``big`` gives ``big``'s shape."""
    if small.dtype != big.dtype:
        raise fail(op_name, f"operand dtypes differ: {small.dtype} and {big.dtype}")
    out = broadcast_shapes(small.shape, big.shape, op_name)
    if len(out) != big.ndim or not all(map(dims_equal_or_unknown, out, big.shape)):
        raise fail(op_name, f"shape {shape_str(small.shape)} does not broadcast to "
                   f"{shape_str(big.shape)} without growing it")


def _broadcast_to_like_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    t = expect_tensor(arg_types[0], "broadcast_to_like: data")
    like = expect_tensor(arg_types[1], "broadcast_to_like: broadcast_type")
    _expect_broadcasts(t, like, "broadcast_to_like")
    return like


register_op(
    "broadcast_to_like", num_inputs=2, type_relation=_broadcast_to_like_rel,
    kernel=lambda args, attrs: np.array(np.broadcast_to(args[0], args[1].shape)),
    pattern=OpPattern.BROADCAST,
    description="Broadcast data to the shape of a second tensor (of the same dtype).",
)


def collapse_sum_array(a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Sum ``a`` down to ``shape``, the inverse of broadcasting ``shape`` to ``a.shape``:
    the leading axes ``shape`` lacks and the axes where it has 1 are summed, in ``a``'s
    dtype (integers wrap, as TVM's)."""
    shape = tuple(int(d) for d in shape)
    lead = a.ndim - len(shape)
    out = a.sum(axis=tuple(range(lead))) if lead > 0 else a
    axes = tuple(k for k, d in enumerate(shape) if d == 1 and out.shape[k] != 1)
    if axes:
        out = out.sum(axis=axes, keepdims=True)
    return np.asarray(out).astype(a.dtype, copy=False).reshape(shape)


def _collapse_sum_like_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    t = expect_tensor(arg_types[0], "collapse_sum_like: data")
    like = expect_tensor(arg_types[1], "collapse_sum_like: collapse_type")
    _expect_broadcasts(like, t, "collapse_sum_like")
    return like


register_op(
    "collapse_sum_like", num_inputs=2, type_relation=_collapse_sum_like_rel,
    kernel=lambda args, attrs: collapse_sum_array(args[0], args[1].shape),
    pattern=OpPattern.COMM_REDUCE,
    description="Sum data down to the shape of a second tensor that broadcasts to it.",
)


def _collapse_sum_to_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "collapse_sum_to: data")
    target = expect_tensor(arg_types[1], "collapse_sum_to: shape")
    if target.ndim != 1 or is_any(target.shape[0]):
        raise fail("collapse_sum_to", f"the shape argument must be a vector of static length, "
                   f"got type {target}")
    rank = target.shape[0]
    if attrs.shape is None:
        out = TensorType((Any(),) * rank, t.dtype)
    else:
        shape = attr_ints(attrs.shape, "shape", "collapse_sum_to", minimum=0)
        if len(shape) != rank:
            raise fail("collapse_sum_to", f"attribute shape {shape} has {len(shape)} values but "
                       f"the shape argument holds {rank}")
        out = TensorType(shape, t.dtype)
    _expect_broadcasts(out, t, "collapse_sum_to")
    return out


register_op(
    "collapse_sum_to", num_inputs=2, type_relation=_collapse_sum_to_rel,
    kernel=lambda args, attrs: collapse_sum_array(
        args[0], args[1].reshape(-1) if attrs.shape is None else attrs.shape),
    pattern=OpPattern.COMM_REDUCE, attrs={"shape": None, "dtype": ""},
    attrs_type_key="relay.attrs.InitOpAttrs",
    description="Sum data down to a shape given as a 1-D tensor (static when it is a constant, "
    "whose values the attribute shape repeats).",
)


# --- layout_transform ---------------------------------------------------------------------------


def _layouts(attrs: Attrs) -> tuple[Layout, Layout]:
    src = Layout(attrs.src_layout, "layout_transform", "src_layout")
    dst = Layout(attrs.dst_layout, "layout_transform", "dst_layout")
    check_convertible(src, dst, "layout_transform")
    return src, dst


def _layout_transform_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "layout_transform: data")
    src, dst = _layouts(attrs)
    extents = src.primal_extents(t.shape, "layout_transform")
    return TensorType(dst.shape_from_primal(extents, "layout_transform"), t.dtype)


def _layout_transform_kernel(args, attrs):
    src, dst = _layouts(attrs)
    return np.ascontiguousarray(transform_array(args[0], src, dst))


register_op(
    "layout_transform", num_inputs=1, type_relation=_layout_transform_rel,
    kernel=_layout_transform_kernel, pattern=OpPattern.INJECTIVE,
    attrs={"src_layout": REQUIRED, "dst_layout": REQUIRED},
    attrs_type_key="relay.attrs.LayoutTransformAttrs",
    description="Rearrange data between layouts such as NCHW, NHWC and NCHW16c.",
)


# --- shape_of, ndarray_size, arange -------------------------------------------------------------


def _shape_of_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    # As Relay's ShapeOfRel, any dtype is accepted for the result.
    t = expect_tensor(arg_types[0], "shape_of: data")
    return TensorType((t.ndim,), attr_dtype(attrs.dtype, "dtype", "shape_of"))


def _ndarray_size_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    expect_tensor(arg_types[0], "ndarray_size: data")
    return TensorType((), attr_dtype(attrs.dtype, "dtype", "ndarray_size"))


register_op(
    "shape_of", num_inputs=1, type_relation=_shape_of_rel,
    kernel=lambda args, attrs: np.array(args[0].shape, dtype=attrs.dtype),
    pattern=OpPattern.OPAQUE, attrs={"dtype": "int32"}, attrs_type_key="relay.attrs.ShapeOfAttrs",
    description="The shape of a tensor as a 1-D integer tensor.",
)
register_op(
    "ndarray_size", num_inputs=1, type_relation=_ndarray_size_rel,
    kernel=lambda args, attrs: np.array(args[0].size, dtype=attrs.dtype),
    pattern=OpPattern.INJECTIVE, attrs={"dtype": "int32"},
    attrs_type_key="relay.attrs.NdarraySizeAttrs",
    description="The number of elements of a tensor as an integer scalar.",
)


def _arange_length(start: float, stop: float, step: float) -> int:
    return int(math.ceil((stop - start) / step))


def _arange_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    dtype = attr_dtype(attrs.dtype, "dtype", "arange")
    for name, ty in zip(("start", "stop", "step"), arg_types):
        t = expect_tensor(ty, f"arange: {name}")
        expect_scalar(t, "arange", name)
        if t.dtype != dtype:
            raise fail("arange", f"{name} has dtype {t.dtype}, but the result dtype is {dtype}")
    values = [const_scalar(attrs.start), const_scalar(attrs.stop), const_scalar(attrs.step)]
    if any(v is None for v in values):
        return TensorType((Any(),), dtype)
    start, stop, step = values
    if step == 0:
        raise fail("arange", "step must not be zero")
    n = _arange_length(start, stop, step)
    if n <= 0:
        raise fail("arange", f"start {start}, stop {stop} and step {step} give no elements")
    return TensorType((n,), dtype)


def _arange_kernel(args, attrs):
    start, stop, step = (a.item() for a in args)
    if step == 0:
        raise ValueError("arange: step is zero")
    n = max(_arange_length(start, stop, step), 0)
    return np.asarray(start + np.arange(n) * step).astype(attrs.dtype)


register_op(
    "arange", num_inputs=3, type_relation=_arange_rel, kernel=_arange_kernel,
    pattern=OpPattern.OPAQUE,
    attrs={"start": REQUIRED, "stop": REQUIRED, "step": REQUIRED, "dtype": "float32"},
    attrs_type_key="relay.attrs.ArangeAttrs",
    description="Evenly spaced values in [start, stop); the length is static when the "
    "bounds are constants (their values are kept in the attributes).",
)


# --- constructors -------------------------------------------------------------------------------


def reshape(data: Expr, newshape, allowzero: bool = False) -> Call:
    """Reshape ``data``; ``newshape`` may use Relay's codes 0, -1, -2, -3 and -4, or be an
    expression (``dyn.reshape``)."""
    if dynamic_arg(newshape):
        return dynamic.reshape(data, newshape, allowzero)
    return call("reshape", [data], newshape=static_shape(newshape, "reshape", "newshape"),
                allowzero=bool(allowzero))


def transpose(data: Expr, axes=None) -> Call:
    """Permute the axes of ``data``; ``axes=None`` reverses them."""
    return call("transpose", [data], axes=None if axes is None else tuple(axes))


def squeeze(data: Expr, axis=None) -> Call:
    """Remove the axes of extent 1 listed in ``axis`` (all of them when None); an expression
    for ``axis`` makes ``dyn.squeeze``."""
    if isinstance(axis, Constant):
        axis = tuple(int(v) for v in axis.array.reshape(-1))
    if dynamic_arg(axis):
        return dynamic.squeeze(data, axis)
    if isinstance(axis, int):
        axis = (axis,)
    return call("squeeze", [data], axis=axis)


def expand_dims(data: Expr, axis: int, num_newaxis: int = 1) -> Call:
    """Insert ``num_newaxis`` axes of extent 1 at ``axis``; an expression for ``axis`` (a
    Constant too, as in Relay) makes ``dyn.expand_dims``."""
    if isinstance(axis, Expr):
        return dynamic.expand_dims(data, axis, num_newaxis)
    return call("expand_dims", [data], axis=axis, num_newaxis=num_newaxis)


def reverse(data: Expr, axis: int) -> Call:
    return call("reverse", [data], axis=axis)


def concatenate(data, axis: int = 0) -> Call:
    """Join tensors along ``axis``; ``data`` is a list of expressions or a tuple expression."""
    return call("concatenate", [tuple_arg(data)], axis=axis)


def stack(data, axis: int = 0) -> Call:
    """Join tensors of one shape along a new axis ``axis``."""
    return call("stack", [tuple_arg(data)], axis=axis)


def split(data: Expr, indices_or_sections, axis: int = 0) -> TupleWrapper:
    """Split ``data`` into equal sections (an int) or at the given indices; a TupleWrapper."""
    if isinstance(indices_or_sections, (int, np.integer)):
        ios = int(indices_or_sections)
        size = ios
    else:
        ios = tuple(indices_or_sections)
        size = len(ios) + 1
    return TupleWrapper(call("split", [data], indices_or_sections=ios, axis=axis), size)


def tile(data: Expr, reps) -> Call:
    """Repeat ``data`` ``reps`` times along each axis; an expression makes ``dyn.tile``."""
    if dynamic_arg(reps):
        return dynamic.tile(data, reps)
    if isinstance(reps, Constant):
        reps = reps.array.reshape(-1).tolist()
    return call("tile", [data], reps=tuple(reps))


def repeat(data: Expr, repeats: int, axis: int) -> Call:
    return call("repeat", [data], repeats=repeats, axis=axis)


def broadcast_to(data: Expr, shape) -> Call:
    """``data`` broadcast to ``shape``; an expression makes ``dyn.broadcast_to``."""
    if dynamic_arg(shape):
        return dynamic.broadcast_to(data, shape)
    shape = static_shape(shape, "broadcast_to", keep_int64=True)
    return call("broadcast_to", [data], shape=shape, dtype="")


def layout_transform(data: Expr, src_layout: str, dst_layout: str) -> Call:
    """Rearrange ``data`` from ``src_layout`` to ``dst_layout`` (e.g. "NCHW" to "NCHW4c")."""
    return call("layout_transform", [data], src_layout=src_layout, dst_layout=dst_layout)


def shape_of(data: Expr, dtype: str = "int32") -> Call:
    return call("shape_of", [data], dtype=str(dtype))


def ndarray_size(data: Expr, dtype: str = "int32") -> Call:
    return call("ndarray_size", [data], dtype=str(dtype))


def reshape_like(data: Expr, shape_like: Expr, lhs_begin: int = 0, lhs_end=None,
                 rhs_begin: int = 0, rhs_end=None) -> Call:
    """Reshape ``data``'s axes ``[lhs_begin, lhs_end)`` to ``shape_like``'s axes
    ``[rhs_begin, rhs_end)``; None ends mean the rank."""
    return call("reshape_like", [data, shape_like], lhs_begin=lhs_begin, lhs_end=lhs_end,
                rhs_begin=rhs_begin, rhs_end=rhs_end)


def reverse_reshape(data: Expr, newshape) -> Call:
    """Reshape with ``reshape``'s codes matched from the right: ``(-1, 0)`` on ``(10, 5, 4)``
    keeps the last dimension, giving ``(50, 4)``."""
    newshape = static_shape(newshape, "reverse_reshape", "newshape")
    return call("contrib_reverse_reshape", [data], newshape=newshape)


def broadcast_to_like(data: Expr, broadcast_type: Expr) -> Call:
    """``data`` broadcast to the shape of ``broadcast_type``."""
    return call("broadcast_to_like", [data, broadcast_type])


def collapse_sum_like(data: Expr, collapse_type: Expr) -> Call:
    """``data`` summed down to the shape of ``collapse_type`` (the gradient of a broadcast)."""
    return call("collapse_sum_like", [data, collapse_type])


def collapse_sum_to(data: Expr, shape) -> Call:
    """``data`` summed down to ``shape``: a list or tuple (made an int32 constant, as Relay's
    constructor does) or an expression; a constant's values become the attribute shape."""
    if isinstance(shape, (list, tuple)):
        shape = Constant(np.asarray(static_shape(shape, "collapse_sum_to"), dtype="int32"))
    shape = expr_arg(shape, "collapse_sum_to", "shape")
    static = static_shape(shape, "collapse_sum_to") if isinstance(shape, Constant) else None
    return call("collapse_sum_to", [data, shape], shape=static)


def _scalar(value, dtype: str) -> Expr:
    if isinstance(value, Expr):
        return value
    return Constant(np.asarray(value, dtype=dtype))


def arange(start, stop=None, step=None, dtype: str = "float32") -> Call:
    """Values in ``[start, stop)`` spaced by ``step``, as Relay's ``arange``.

    The bounds are expressions (numbers are wrapped as constants of ``dtype``).
    As in Relay, the attributes repeat the bounds so that the type relation can
    give a static length; relaypass keeps their values there (None for a bound
    that is not a constant), so the result's length is ``Any`` unless all
    three are constants.
    """
    dtype = str(dtype)
    if step is None:
        step = 1
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_scalar(v, dtype) for v in (start, stop, step))
    return call("arange", [start, stop, step], start=const_scalar(start),
                stop=const_scalar(stop), step=const_scalar(step), dtype=dtype)


# --- slice_like -----------------------------------------------------------------------------------


def _slice_like_axes(attrs: Attrs, data: TensorType, like: TensorType) -> list[int]:
    """The cut axes: those named, or (none named) every axis both inputs have."""
    if attrs.axes is None:
        return list(range(min(data.ndim, like.ndim)))
    axes = attr_ints(attrs.axes, "axes", "slice_like")
    if not axes:
        raise fail("slice_like", "attribute axes cannot be empty; leave it out to cut every "
                   "axis the two inputs share")
    out = normalize_axes(axes, data.ndim, "slice_like", "axes")
    for axis in out:
        if axis >= like.ndim:
            raise fail("slice_like", f"axis {axis} is beyond shape_like's rank {like.ndim} "
                       f"(shape {shape_str(like.shape)})")
    return out


def _slice_like_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "slice_like: data")
    like = expect_tensor(arg_types[1], "slice_like: shape_like")
    shape = list(data.shape)
    for axis in _slice_like_axes(attrs, data, like):
        end, extent = like.shape[axis], data.shape[axis]
        if isinstance(end, int) and isinstance(extent, int) and end > extent:
            raise fail("slice_like", f"axis {axis} of shape_like ({end}) exceeds data's "
                       f"({extent}): data {shape_str(data.shape)}, shape_like "
                       f"{shape_str(like.shape)}")
        shape[axis] = end
    return TensorType(tuple(shape), data.dtype)


def _slice_like_kernel(args, attrs):
    data, like = args
    index = [slice(None)] * data.ndim
    for axis in _slice_like_axes(attrs, TensorType(data.shape, str(data.dtype)),
                                 TensorType(like.shape, str(like.dtype))):
        index[axis] = slice(0, like.shape[axis])
    return np.ascontiguousarray(data[tuple(index)])


register_op(
    "slice_like", num_inputs=2, type_relation=_slice_like_rel, kernel=_slice_like_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"axes": None},
    attrs_type_key="relay.attrs.SliceLikeAttrs",
    description="The leading part of data along each axis, as long as shape_like's.",
)


def slice_like(data: Expr, shape_like: Expr, axes: Sequence[int] | None = None) -> Call:
    """Cut ``data`` from index 0 to ``shape_like``'s extent along ``axes`` (None: all shared)."""
    return call("slice_like", [data, shape_like],
                axes=None if axes is None else tuple(int(a) for a in axes))


# As in Relay, operators that only reinterpret the shape: a fused group made of
# nothing else is marked ReshapeOnly by FuseOps.
for _name in ("reshape", "squeeze", "expand_dims", "contrib_reverse_reshape"):
    register_op_attr(_name, "TReshapeOp", True)
