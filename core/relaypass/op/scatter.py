"""Operators that write by position: ``scatter_elements`` and ``scatter_nd``.

Both return a copy of ``data`` in which the positions ``indices`` address
receive ``updates``, either replacing what is there (``update``) or combined
with it (``add``, ``mul``, ``min``, ``max``; ``scatter_elements`` also has
``mean``, which averages pairwise as TVM does).  Updates are applied in the
order of the indices, as TVM's loops do, so when two updates hit the same
position the later one wins (or is combined later).  A negative index counts
from the end of its axis; an index out of range is an error of the kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, register_op
from ..ir.types import Type
from .builder import call
from .relations import (
    attr_choice,
    dims_equal_or_unknown,
    expect_int,
    expect_tensor,
    fail,
    is_any,
    normalize_axis,
    shape_str,
)

__all__ = ["scatter_elements", "scatter_nd"]

_ELEMENT_REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")
_ND_MODES = ("update", "add", "mul", "min", "max")


def _normalized(indices: np.ndarray, extents: np.ndarray | int, op_name: str) -> np.ndarray:
    """``indices`` with negative values counted from the end; out of range is a ValueError."""
    idx = indices.astype(np.int64)
    bad = (idx < -extents) | (idx >= extents)
    if np.any(bad):
        where = tuple(int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{op_name}: index {int(idx[where])} at position {where} is out of "
                         f"range")
    return np.where(idx < 0, idx + extents, idx)


def _combine(reduction: str, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    if reduction == "update":
        return new
    if reduction == "add":
        return old + new
    if reduction == "mul":
        return old * new
    if reduction == "min":
        return np.minimum(old, new)
    if reduction == "max":
        return np.maximum(old, new)
    return ((old + new) / 2).astype(old.dtype, copy=False)  # mean, pairwise as in TVM


# --- scatter_elements ---------------------------------------------------------------------------


def _scatter_elements_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "scatter_elements: data")
    indices = expect_tensor(arg_types[1], "scatter_elements: indices")
    updates = expect_tensor(arg_types[2], "scatter_elements: updates")
    expect_int(indices, "scatter_elements", "indices")
    attr_choice(attrs.reduction, "reduction", "scatter_elements", _ELEMENT_REDUCTIONS)
    if updates.dtype != data.dtype:
        raise fail("scatter_elements", f"updates have dtype {updates.dtype}, data {data.dtype}")
    if not (data.ndim == indices.ndim == updates.ndim):
        raise fail("scatter_elements", f"data {shape_str(data.shape)}, indices "
                   f"{shape_str(indices.shape)} and updates {shape_str(updates.shape)} must "
                   f"have the same rank")
    axis = normalize_axis(attrs.axis, data.ndim, "scatter_elements")
    for k, (d, i, u) in enumerate(zip(data.shape, indices.shape, updates.shape)):
        if not dims_equal_or_unknown(i, u):
            raise fail("scatter_elements", f"indices {shape_str(indices.shape)} and updates "
                       f"{shape_str(updates.shape)} must have the same shape")
        if k != axis and not is_any(d) and not is_any(i) and i > d:
            raise fail("scatter_elements", f"indices dimension {k} ({i}) exceeds data's ({d})")
    return data


def _scatter_elements_kernel(args, attrs):
    data, indices, updates = args
    out = data.copy()
    axis = attrs.axis % data.ndim
    idx = _normalized(indices, data.shape[axis], "scatter_elements")
    # One step per position along the axis: within a step the targets differ (they differ
    # in the other coordinates), so the steps apply the updates in TVM's order.
    grids = list(np.indices(indices.shape[:axis] + (1,) + indices.shape[axis + 1:], sparse=True))
    for k in range(indices.shape[axis]):
        grids[axis] = np.take(idx, [k], axis=axis)
        target = tuple(grids)
        out[target] = _combine(attrs.reduction, out[target], np.take(updates, [k], axis=axis))
    return out


register_op(
    "scatter_elements", num_inputs=3, type_relation=_scatter_elements_rel,
    kernel=_scatter_elements_kernel, pattern=OpPattern.OPAQUE,
    attrs={"axis": 0, "reduction": "update"}, attrs_type_key="relay.attrs.ScatterElementsAttrs",
    description="out[..., indices[i, j], ...] = f(out[..., indices[i, j], ...], updates[i, j]) "
    "along axis, f given by reduction.",
)


# --- scatter_nd ---------------------------------------------------------------------------------


def _scatter_nd_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "scatter_nd: data")
    indices = expect_tensor(arg_types[1], "scatter_nd: indices")
    updates = expect_tensor(arg_types[2], "scatter_nd: updates")
    expect_int(indices, "scatter_nd", "indices")
    attr_choice(attrs.mode, "mode", "scatter_nd", _ND_MODES)
    if updates.dtype != data.dtype:
        raise fail("scatter_nd", f"updates have dtype {updates.dtype}, data {data.dtype}")
    if indices.ndim < 1 or is_any(indices.shape[0]):
        raise fail("scatter_nd", f"indices {shape_str(indices.shape)} need a static first axis "
                   f"(the length M of each index)")
    m = indices.shape[0]
    if m < 1:
        raise fail("scatter_nd", "each index must address at least one axis (indices.shape[0] "
                   "is 0)")
    if m > data.ndim:
        raise fail("scatter_nd", f"indices address {m} axes, but data has rank {data.ndim}")
    expected = (*indices.shape[1:], *data.shape[m:])
    if len(expected) != updates.ndim or not all(
            dims_equal_or_unknown(a, b) for a, b in zip(expected, updates.shape)):
        raise fail("scatter_nd", f"updates must have shape {shape_str(expected)} (indices' "
                   f"axes after the first, then data's axes after the {m} indexed), got "
                   f"{shape_str(updates.shape)}")
    return data


def _scatter_nd_kernel(args, attrs):
    data, indices, updates = args
    out = data.copy()
    m = indices.shape[0]
    extents = np.asarray(data.shape[:m], dtype=np.int64).reshape((m,) + (1,) * (indices.ndim - 1))
    idx = _normalized(indices, extents, "scatter_nd").reshape(m, -1)
    rows = updates.reshape((idx.shape[1],) + data.shape[m:])
    if attrs.mode == "update":
        # Later updates of a position win: keep the last occurrence of each index.
        flat = np.ravel_multi_index(tuple(idx), data.shape[:m])
        _, first_of_reversed = np.unique(flat[::-1], return_index=True)
        keep = np.sort(idx.shape[1] - 1 - first_of_reversed)
        out[tuple(idx[:, keep])] = rows[keep]
        return out
    ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[attrs.mode]
    ufunc.at(out, tuple(idx), rows)  # unbuffered: repeated positions combine in order
    return out


register_op(
    "scatter_nd", num_inputs=3, type_relation=_scatter_nd_rel, kernel=_scatter_nd_kernel,
    pattern=OpPattern.OPAQUE, attrs={"mode": "update"}, attrs_type_key="relay.attrs.ScatterNDAttrs",
    description="Write (or combine, by mode) the slices of updates at the positions given by "
    "the first axis of indices.",
)


# --- constructors -------------------------------------------------------------------------------


def scatter_elements(data: Expr, indices: Expr, updates: Expr, axis: int = 0,
                     reduction: str = "update") -> Call:
    """``data`` with ``updates`` written (or combined, by ``reduction``) at ``indices`` along
    ``axis``."""
    return call("scatter_elements", [data, indices, updates], axis=axis, reduction=reduction)


def scatter_nd(data: Expr, indices: Expr, updates: Expr, mode: str = "update") -> Call:
    """``data`` with the slices of ``updates`` written (or combined, by ``mode``) at the
    positions of ``indices``, whose first axis holds each position's coordinates."""
    return call("scatter_nd", [data, indices, updates], mode=mode)
