"""Sorting operators: ``argsort`` and ``topk``.

Relay's ``argsort`` gives the indices that sort a tensor along one axis;
``topk`` the ``k`` largest (or smallest) elements along it and their indices.
Ties keep their original order in both directions (TVM's CPU implementation is
a stable sort with a reversed comparison for descending order), so the kernels
never reorder equal elements: among equal values the lower index comes first,
which is also what ONNX's TopK promises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.dtype import numpy_dtype
from ..ir.expr import Call, Constant, Expr
from ..ir.op import OpPattern, register_op
from ..ir.types import TensorType, TupleType, Type
from . import dynamic
from .builder import call, dynamic_arg
from .relations import (
    attr_bool,
    attr_choice,
    attr_dtype,
    attr_int,
    expect_tensor,
    fail,
    is_any,
    normalize_axis,
)
from .tuple_wrapper import TupleWrapper

__all__ = ["argsort", "topk"]


def _argsort_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "argsort: data")
    if t.ndim == 0:
        raise fail("argsort", "cannot sort a scalar (rank 0): there is no axis to sort along")
    normalize_axis(attrs.axis, t.ndim, "argsort")
    attr_bool(attrs.is_ascend, "is_ascend", "argsort")
    return TensorType(t.shape, attr_dtype(attrs.dtype, "dtype", "argsort"))


def stable_argsort(a: np.ndarray, axis: int, ascending: bool) -> np.ndarray:
    """Indices sorting ``a`` along ``axis``; equal elements stay in their original order.

    Descending order reverses the ascending order of the reversed tensor, which
    keeps ties in order without negating values (negation overflows the lowest
    integer and is meaningless for unsigned dtypes).
    """
    if ascending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    reversed_order = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
    return np.flip(n - 1 - reversed_order, axis=axis)


register_op(
    "argsort", num_inputs=1, type_relation=_argsort_rel,
    kernel=lambda args, attrs: stable_argsort(args[0], attrs.axis, bool(attrs.is_ascend)).astype(
        numpy_dtype(attrs.dtype)),
    pattern=OpPattern.OPAQUE, attrs={"axis": -1, "is_ascend": True, "dtype": "int32"},
    attrs_type_key="relay.attrs.ArgsortAttrs",
    description="Indices that sort the data along an axis (stable, ascending or descending).",
)


def argsort(data: Expr, axis: int = -1, is_ascend: bool = True, dtype: str = "int32") -> Call:
    """Indices that sort ``data`` along ``axis``, of integer dtype ``dtype``."""
    return call("argsort", [data], axis=axis, is_ascend=bool(is_ascend), dtype=str(dtype))


def _topk_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "topk: data")
    if t.ndim == 0:
        raise fail("topk", "cannot take the top elements of a scalar (rank 0)")
    axis = normalize_axis(attrs.axis, t.ndim, "topk")
    k = attr_int(attrs.k, "k", "topk")
    ret_type = attr_choice(attrs.ret_type, "ret_type", "topk", ("both", "values", "indices"))
    attr_bool(attrs.is_ascend, "is_ascend", "topk")
    dtype = attr_dtype(attrs.dtype, "dtype", "topk")
    shape = list(t.shape)
    if k >= 1:  # as in Relay, k < 1 takes the whole axis
        if not is_any(shape[axis]) and k > shape[axis]:
            raise fail("topk", f"k={k} is larger than the extent {shape[axis]} of axis {axis}")
        shape[axis] = k
    values, indices = TensorType(shape, t.dtype), TensorType(shape, dtype)
    if ret_type == "both":
        return TupleType([values, indices])
    return values if ret_type == "values" else indices


def _topk_kernel(args, attrs):
    a = args[0]
    axis = attrs.axis % a.ndim
    order = stable_argsort(a, axis, bool(attrs.is_ascend))
    if attrs.k >= 1:
        order = np.take(order, np.arange(attrs.k), axis=axis)
    values = np.take_along_axis(a, order, axis=axis)
    indices = order.astype(numpy_dtype(attrs.dtype))
    if attrs.ret_type == "both":
        return (values, indices)
    return values if attrs.ret_type == "values" else indices


register_op(
    "topk", num_inputs=1, type_relation=_topk_rel, kernel=_topk_kernel,
    pattern=OpPattern.OPAQUE,
    attrs={"k": 1, "axis": -1, "ret_type": "both", "is_ascend": False, "dtype": "int32"},
    attrs_type_key="relay.attrs.TopkAttrs",
    description="The k largest (or smallest, is_ascend) elements along an axis and/or their "
    "indices, sorted; ties in their original order.",
)


def topk(data: Expr, k: int = 1, axis: int = -1, ret_type: str = "both", is_ascend: bool = False,
         dtype: str = "int32"):
    """The top ``k`` elements of ``data`` along ``axis``: with ``ret_type="both"`` a
    TupleWrapper of (values, indices), otherwise the one asked for; ``k < 1`` takes all.
    An expression for ``k`` (not a Constant) makes ``dyn.topk``."""
    if dynamic_arg(k):
        return dynamic.topk(data, k, axis, ret_type, is_ascend, dtype)
    if isinstance(k, Constant):
        k = k.array.item()
    out = call("topk", [data], k=int(k), axis=axis, ret_type=ret_type, is_ascend=bool(is_ascend),
               dtype=str(dtype))
    return TupleWrapper(out, 2) if ret_type == "both" else out
