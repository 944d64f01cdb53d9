"""Operators that select elements by position, or turn positions into tensors and back:
strided_slice, take, gather, gather_nd, one_hot, argwhere.

Out-of-range positions follow TVM: ``strided_slice`` clamps its bounds as
Python slicing does, ``take`` clamps indices in mode "clip" and wraps them in
mode "wrap"; "fast" promises they are in range, and the kernel checks it;
``one_hot`` gives a row of ``off_value`` for an index outside ``[0, depth)``.
``argwhere`` is the one operator here whose result's extent depends on the
values of its argument: its type has an unknown (``?``) first extent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import AttrsError
from ..ir.attrs import Attrs
from ..ir.dtype import numpy_dtype
from ..ir.expr import Call, Constant, Expr
from ..ir.expr_builders import const
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import Any, Dim, TensorType, Type
from . import dynamic
from .builder import call, dynamic_arg
from .relations import (
    attr_choice,
    attr_dtype,
    attr_int,
    attr_ints,
    dims_equal_or_unknown,
    expect_int,
    expect_scalar,
    expect_tensor,
    fail,
    is_any,
    normalize_axes,
    normalize_axis,
    shape_str,
)

__all__ = ["strided_slice", "take", "gather", "gather_nd", "one_hot", "argwhere"]

_MAX = 2**63 - 1


# --- strided_slice ------------------------------------------------------------------------------


def _canonical(index: int, extent: int, stride: int) -> int:
    lo, hi = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, lo), hi)


def _slice_plan(ndim: int, attrs: Attrs, op_name: str = "strided_slice"):
    """For each sliced axis: (axis, begin, end, stride) before canonicalization."""
    begin = attr_ints(attrs.begin, "begin", op_name)
    end = attr_ints(attrs.end, "end", op_name)
    strides = attr_ints(attrs.strides, "strides", op_name) or (1,)
    mode = attr_choice(attrs.slice_mode, "slice_mode", op_name, ("end", "size"))
    if attrs.axes is not None:
        axes = normalize_axes(attr_ints(attrs.axes, "axes", op_name), ndim, op_name, "axes")
        if len(strides) == 1:
            strides = strides * len(axes)
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise fail(op_name, f"axes {tuple(axes)}, begin {begin}, end {end} and strides "
                       f"{strides} must have the same length")
        plan = list(zip(axes, begin, end, strides))
    else:
        for name, vals in (("begin", begin), ("end", end), ("strides", strides)):
            if len(vals) > ndim:
                raise fail(op_name, f"{name} {vals} has more values than the data has axes ({ndim})")
        plan = []
        for k in range(ndim):
            s = strides[k] if k < len(strides) else 1
            b = begin[k] if k < len(begin) else (0 if s > 0 else _MAX)
            e = end[k] if k < len(end) else (_MAX if s > 0 else 0)
            plan.append((k, b, e, s))
    out = []
    for k, b, e, s in plan:
        if mode == "size":
            s = 1
            e = _MAX if e < 0 else b + e
        if s == 0:
            raise fail(op_name, f"stride of axis {k} is zero")
        out.append((k, b, e, s))
    return out


def _axis_slice(k: int, b: int, e: int, s: int, extent: int, op_name: str) -> tuple[int, int]:
    """Canonical begin and the number of elements taken along an axis of known extent."""
    bc = _canonical(b, extent, s)
    ec = _canonical(e, extent, s)
    if (s > 0 and bc > ec) or (s < 0 and bc < ec):
        raise fail(op_name, f"begin {b} and end {e} select nothing along axis {k} (extent "
                   f"{extent}) with stride {s}")
    return bc, (abs(ec - bc) + abs(s) - 1) // abs(s)


def _strided_slice_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "strided_slice: data")
    shape: list[Dim] = list(t.shape)
    for k, b, e, s in _slice_plan(t.ndim, attrs):
        if is_any(shape[k]):
            shape[k] = Any()
        else:
            shape[k] = _axis_slice(k, b, e, s, shape[k], "strided_slice")[1]
    return TensorType(shape, t.dtype)


def _strided_slice_kernel(args, attrs):
    a = args[0]
    index = [slice(None)] * a.ndim
    for k, b, e, s in _slice_plan(a.ndim, attrs):
        start, n = _axis_slice(k, b, e, s, a.shape[k], "strided_slice")
        stop = start + s * n
        index[k] = slice(start, stop if stop >= 0 else None, s) if n else slice(0, 0)
    return np.array(a[tuple(index)])


register_op(
    "strided_slice", num_inputs=1, type_relation=_strided_slice_rel, kernel=_strided_slice_kernel,
    pattern=OpPattern.INJECTIVE,
    attrs={"begin": REQUIRED, "end": REQUIRED, "strides": (1,), "slice_mode": "end", "axes": None},
    attrs_type_key="relay.attrs.StridedSliceAttrs",
    description="Slice with begin/end/strides per axis; slice_mode 'size' reads end as sizes.",
)


# --- take ---------------------------------------------------------------------------------------


def _take_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "take: data")
    indices = expect_tensor(arg_types[1], "take: indices")
    expect_int(indices, "take", "indices")
    attr_choice(attrs.mode, "mode", "take", ("clip", "wrap", "fast"))
    batch_dims = attr_int(attrs.batch_dims, "batch_dims", "take")
    if attrs.axis is None:
        return TensorType(indices.shape, data.dtype)
    axis = normalize_axis(attrs.axis, data.ndim, "take")
    if batch_dims < 0:
        batch_dims += indices.ndim
    if not 0 <= batch_dims <= min(axis, indices.ndim):
        raise fail("take", f"batch_dims {attrs.batch_dims} must be between 0 and both axis "
                   f"({axis}) and the rank of indices ({indices.ndim})")
    for i in range(batch_dims):
        if not dims_equal_or_unknown(data.shape[i], indices.shape[i]):
            raise fail("take", f"batch dimension {i} differs: data has shape "
                       f"{shape_str(data.shape)}, indices {shape_str(indices.shape)}")
    shape = (*data.shape[:axis], *indices.shape[batch_dims:], *data.shape[axis + 1:])
    return TensorType(shape, data.dtype)


def _take_kernel(args, attrs):
    data, idx = args
    axis = attrs.axis
    if axis is None:
        data, axis = data.reshape(-1), 0
    elif axis < 0:
        axis += data.ndim
    extent = data.shape[axis]
    idx = idx.astype(np.int64, copy=False)
    if attrs.mode == "clip":
        if extent == 0:
            raise ValueError("take: cannot take from an axis of extent 0")
        idx = np.minimum(np.maximum(idx, 0), extent - 1)  # np.clip's checks cost 3x more
    elif attrs.mode == "wrap":
        idx = np.mod(idx, extent)
    else:
        bad = (idx < -extent) | (idx >= extent)
        if np.any(bad):
            raise ValueError(f"take: index {int(idx[bad].flat[0])} is out of range for an axis of "
                             f"extent {extent} (mode 'fast' does not clip)")
        idx = np.where(idx < 0, idx + extent, idx)
    b = attrs.batch_dims
    if b < 0:
        b += idx.ndim
    if b == 0:
        return np.take(data, idx, axis=axis)
    # Batched take: move the taken axis next to the batch axes, index both at once.
    batch_shape = data.shape[:b]
    moved = np.moveaxis(data, axis, b)  # (batch..., extent, pre..., post...)
    grids = np.indices(batch_shape, sparse=True)
    extra = idx.ndim - b
    grids = [g.reshape(g.shape + (1,) * extra) for g in grids]
    out = moved[(*grids, idx)]  # (batch..., idx_rest..., pre..., post...)
    n_pre = axis - b
    # Put the pre axes (data axes between the batch axes and `axis`) before the index axes.
    order = (list(range(b)) + list(range(b + extra, b + extra + n_pre))
             + list(range(b, b + extra)) + list(range(b + extra + n_pre, out.ndim)))
    return out.transpose(order)


register_op(
    "take", num_inputs=2, type_relation=_take_rel, kernel=_take_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"batch_dims": 0, "axis": None, "mode": "clip"},
    attrs_type_key="relay.attrs.TakeAttrs",
    description="Take elements along an axis (of the flattened data when axis is None).",
)


# --- gather, gather_nd --------------------------------------------------------------------------


def _gather_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "gather: data")
    indices = expect_tensor(arg_types[1], "gather: indices")
    expect_int(indices, "gather", "indices")
    if data.ndim != indices.ndim:
        raise fail("gather", f"data (shape {shape_str(data.shape)}) and indices (shape "
                   f"{shape_str(indices.shape)}) must have the same rank")
    axis = normalize_axis(attrs.axis, data.ndim, "gather")
    for k, (d, i) in enumerate(zip(data.shape, indices.shape)):
        if k != axis and not is_any(d) and not is_any(i) and i > d:
            raise fail("gather", f"indices dimension {k} ({i}) exceeds data's ({d})")
    return TensorType(indices.shape, data.dtype)


def _gather_kernel(args, attrs):
    data, idx = args
    axis = attrs.axis % data.ndim
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return data[tuple(grids)]


register_op(
    "gather", num_inputs=2, type_relation=_gather_rel, kernel=_gather_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"axis": REQUIRED}, attrs_type_key="relay.attrs.GatherAttrs",
    description="out[i][j][k] = data[i][indices[i][j][k]][k] for axis 1, and so on.",
)


def _gather_nd_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "gather_nd: data")
    indices = expect_tensor(arg_types[1], "gather_nd: indices")
    expect_int(indices, "gather_nd", "indices")
    if indices.ndim < 1:
        raise fail("gather_nd", "indices must have rank at least 1")
    b = attr_int(attrs.batch_dims, "batch_dims", "gather_nd", minimum=0)
    m = indices.shape[0]
    if attrs.index_rank is not None:
        rank = attr_int(attrs.index_rank, "index_rank", "gather_nd", minimum=1)
        if not dims_equal_or_unknown(m, rank):
            raise fail("gather_nd", f"index_rank {rank} differs from indices.shape[0] ({m})")
        m = rank
    if is_any(m):
        raise fail("gather_nd", "the first dimension of indices must be static (or give index_rank)")
    if b + m > data.ndim:
        raise fail("gather_nd", f"indices address {m} axes after {b} batch axes, but data has "
                   f"rank {data.ndim}")
    if indices.ndim - 1 < b:
        raise fail("gather_nd", f"indices of shape {shape_str(indices.shape)} have fewer than "
                   f"batch_dims ({b}) axes after the first")
    for i in range(b):
        if not dims_equal_or_unknown(data.shape[i], indices.shape[i + 1]):
            raise fail("gather_nd", f"batch dimension {i} differs: data has shape "
                       f"{shape_str(data.shape)}, indices {shape_str(indices.shape)}")
    return TensorType((*indices.shape[1:], *data.shape[b + m:]), data.dtype)


def _gather_nd_kernel(args, attrs):
    data, idx = args
    b = attrs.batch_dims
    lead = idx.shape[1:]
    grids = []
    for j in range(b):
        shape = [1] * len(lead)
        shape[j] = lead[j]
        grids.append(np.arange(lead[j]).reshape(shape))
    return np.array(data[(*grids, *idx)])


register_op(
    "gather_nd", num_inputs=2, type_relation=_gather_nd_rel, kernel=_gather_nd_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"batch_dims": 0, "index_rank": None},
    attrs_type_key="relay.attrs.GatherNDAttrs",
    description="Gather slices addressed by the first axis of indices.",
)


# --- one_hot, argwhere --------------------------------------------------------------------------


def _one_hot_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    indices = expect_tensor(arg_types[0], "one_hot: indices")
    expect_int(indices, "one_hot", "indices")
    dtype = attr_dtype(attrs.dtype, "dtype", "one_hot")
    for what, ty in (("on_value", arg_types[1]), ("off_value", arg_types[2])):
        t = expect_tensor(ty, f"one_hot: {what}")
        expect_scalar(t, "one_hot", what)
        if t.dtype != dtype:
            raise fail("one_hot", f"{what} has dtype {t.dtype}, but the result dtype is {dtype}")
    depth = attr_int(attrs.depth, "depth", "one_hot", minimum=1)
    axis = attr_int(attrs.axis, "axis", "one_hot")
    if not -1 <= axis <= indices.ndim:
        raise fail("one_hot", f"axis {axis} is out of range for a result of rank "
                   f"{indices.ndim + 1} (valid: -1 to {indices.ndim})")
    at = indices.ndim if axis == -1 else axis
    return TensorType((*indices.shape[:at], depth, *indices.shape[at:]), dtype)


def _one_hot_kernel(args, attrs):
    indices, on, off = args
    hot = indices[..., None].astype(np.int64) == np.arange(attrs.depth)
    out = np.where(hot, on, off).astype(numpy_dtype(attrs.dtype), copy=False)
    return np.moveaxis(out, -1, attrs.axis) if attrs.axis != -1 else out


register_op(
    "one_hot", num_inputs=3, type_relation=_one_hot_rel, kernel=_one_hot_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"depth": 1, "axis": -1, "dtype": REQUIRED}, attrs_type_key="relay.attrs.OneHotAttrs",
    description="on_value where the new axis's position equals the index, off_value elsewhere.",
)


def _argwhere_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    t = expect_tensor(arg_types[0], "argwhere: condition")
    return TensorType((Any(), t.ndim), "int32")


register_op(
    "argwhere", num_inputs=1, type_relation=_argwhere_rel,
    kernel=lambda args, attrs: np.argwhere(args[0]).astype(np.int32).reshape(-1, args[0].ndim),
    pattern=OpPattern.OPAQUE,
    description="The coordinates of the non-zero elements, one row each in row-major order; "
    "how many rows there are is known only when the values are.",
)


# --- constructors -------------------------------------------------------------------------------


def _ints(value) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if isinstance(value, Constant):
        return tuple(int(v) for v in value.array.reshape(-1))
    return tuple(int(v) for v in value)


def strided_slice(data: Expr, begin, end, strides=None, axes=None, slice_mode: str = "end") -> Call:
    """Slice ``data``; missing trailing axes are taken whole, as in Relay.

    When ``begin``, ``end`` or ``strides`` is an expression, the call is
    ``dyn.strided_slice`` (the others made constants; ``axes`` is then not
    supported, as in Relay).  Relay also clamps a dynamic ``begin`` into the
    data's extents with a few operators; here the kernel reads negative
    values as the static operator does, so the call takes them as they are.
    """
    if any(dynamic_arg(v) for v in (begin, end, strides)):
        if axes is not None:
            raise AttrsError("strided_slice: axes cannot be given with begin, end or strides "
                             "known only at run time (as in Relay)")
        begin, end, steps = (v if isinstance(v, Expr) else const(list(_ints(v)))
                             for v in (begin, end, [1] if strides is None else strides))
        return dynamic.strided_slice(data, begin, end, steps, slice_mode)
    return call(
        "strided_slice", [data], begin=_ints(begin), end=_ints(end),
        strides=(_ints(strides) if strides is not None else ()) or (1,), slice_mode=slice_mode,
        axes=None if axes is None else _ints(axes),
    )


def take(data: Expr, indices: Expr, axis=None, batch_dims: int = 0, mode: str = "clip") -> Call:
    """Elements of ``data`` at ``indices`` along ``axis`` (of the flattened data if None)."""
    return call("take", [data, indices], batch_dims=batch_dims, axis=axis, mode=mode)


def gather(data: Expr, axis: int, indices: Expr) -> Call:
    """Relay's ``gather(data, axis, indices)`` (numpy's take_along_axis)."""
    return call("gather", [data, indices], axis=axis)


def gather_nd(data: Expr, indices: Expr, batch_dims: int = 0, index_rank=None) -> Call:
    return call("gather_nd", [data, indices], batch_dims=batch_dims, index_rank=index_rank)


def one_hot(indices: Expr, on_value: Expr, off_value: Expr, depth: int, axis: int,
            dtype: str) -> Call:
    """A new axis of ``depth`` at ``axis`` (-1: last) holding ``on_value`` at each index and
    ``off_value`` elsewhere; ``depth`` may be a scalar Constant, or an expression
    (``dyn.one_hot``)."""
    if dynamic_arg(depth):
        return dynamic.one_hot(indices, on_value, off_value, depth, axis, dtype)
    if isinstance(depth, Constant):
        depth = depth.array.item()
    return call("one_hot", [indices, on_value, off_value], depth=int(depth), axis=int(axis),
                dtype=str(dtype))


def argwhere(condition: Expr) -> Call:
    """The int32 coordinates (one row each) of the non-zero elements of ``condition``."""
    return call("argwhere", [condition])
