"""Sorting operators: ``argsort``.

Relay's ``argsort`` gives the indices that sort a tensor along one axis.  Ties
keep their original order in both directions (TVM's CPU implementation is a
stable sort with a reversed comparison for descending order), so the kernel
never reorders equal elements.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.dtype import numpy_dtype
from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, register_op
from ..ir.types import TensorType, Type
from .builder import call
from .relations import attr_bool, attr_dtype, expect_tensor, fail, normalize_axis

__all__ = ["argsort"]


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
