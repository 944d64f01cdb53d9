"""Scans: ``cumsum`` and ``cumprod``, Relay's running sum and product along an axis.

Without an axis the data is flattened first, as in Relay.  ``exclusive``
leaves each element out of its own result: the first result is the identity
(0 or 1) and the last element is never used.  The result's dtype is
``dtype``, or the data's when ``dtype`` is empty; the accumulation happens in
that dtype, so integers wrap around as they do in TVM's generated code.
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
from .relations import attr_bool, attr_dtype, dims_product, expect_tensor, normalize_axis

__all__ = ["cumsum", "cumprod"]


def _scan_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        dtype = attr_dtype(attrs.dtype, "dtype", op_name, allow_empty=True) or t.dtype
        attr_bool(attrs.exclusive, "exclusive", op_name)
        if attrs.axis is None:
            return TensorType((dims_product(t.shape),), dtype)
        normalize_axis(attrs.axis, t.ndim, op_name)
        return TensorType(t.shape, dtype)

    return rel


def _scan_kernel(accumulate, identity: int):
    def kernel(args, attrs):
        a = args[0]
        dtype = numpy_dtype(attrs.dtype) if attrs.dtype else a.dtype
        if attrs.axis is None:
            a, axis = a.reshape(-1), 0
        else:
            axis = attrs.axis % a.ndim
        with np.errstate(over="ignore"):
            a = a.astype(dtype, copy=False)
            if attrs.exclusive:
                # Shift by one: the identity first, the last element dropped.
                head_shape = list(a.shape)
                head_shape[axis] = 1
                body = np.take(a, np.arange(a.shape[axis] - 1), axis=axis)
                a = np.concatenate([np.full(head_shape, identity, dtype), body], axis=axis)
            return np.asarray(accumulate(a, axis=axis, dtype=dtype))

    return kernel


for _name, _fn, _identity in (("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)):
    register_op(
        _name, num_inputs=1, type_relation=_scan_rel(_name), kernel=_scan_kernel(_fn, _identity),
        pattern=OpPattern.OPAQUE, attrs={"axis": None, "dtype": "", "exclusive": False},
        attrs_type_key="relay.attrs.ScanopAttrs",
        description=f"The running {_name[3:]} along an axis (of the flattened data when axis "
        "is None); exclusive leaves each element out of its own result.",
    )


def cumsum(data: Expr, axis=None, dtype=None, exclusive=None) -> Call:
    """Running sums of ``data`` along ``axis`` (of the flattened data when None)."""
    return call("cumsum", [data], axis=axis, dtype="" if dtype is None else str(dtype),
                exclusive=bool(exclusive))


def cumprod(data: Expr, axis=None, dtype=None, exclusive=None) -> Call:
    """Running products of ``data`` along ``axis`` (of the flattened data when None)."""
    return call("cumprod", [data], axis=axis, dtype="" if dtype is None else str(dtype),
                exclusive=bool(exclusive))
