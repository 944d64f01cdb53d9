"""Reductions: sum, mean, max, min, prod, argmax, argmin, variance.

``axis`` is None (or empty) to reduce every axis, else a tuple of axes, which
may be negative; ``exclude`` reduces every axis *not* listed; ``keepdims``
keeps reduced axes with extent 1.  Reductions over an empty axis give the
operation's identity, as TVM's do: 0 for sum, 1 for prod, the dtype's lowest
(highest) value for max (min), -1 for argmax/argmin and NaN for a
floating-point mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, register_op, register_type_relation
from ..ir.types import TensorType, Type
from .builder import axis_list, call
from .relations import (
    attr_bool,
    attr_ints,
    dims_equal_or_unknown,
    expect_tensor,
    fail,
    normalize_axes,
    shape_str,
)

__all__ = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance"]


def reduce_axes(ndim: int, attrs: Attrs, op_name: str) -> list[int]:
    """The sorted axes a reduction with these attributes reduces over."""
    exclude = attr_bool(attrs.exclude, "exclude", op_name)
    attr_bool(attrs.keepdims, "keepdims", op_name)
    if attrs.axis is None or attrs.axis == ():
        return list(range(ndim))
    axes = normalize_axes(attr_ints(attrs.axis, "axis", op_name), ndim, op_name)
    if exclude:
        return [k for k in range(ndim) if k not in axes]
    return sorted(axes)


def _reduced_shape(shape: Sequence, axes: Sequence[int], keepdims: bool) -> list:
    reduced = set(axes)
    if keepdims:
        return [1 if k in reduced else d for k, d in enumerate(shape)]
    return [d for k, d in enumerate(shape) if k not in reduced]


def _reduce_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        axes = reduce_axes(t.ndim, attrs, op_name)
        return TensorType(_reduced_shape(t.shape, axes, attrs.keepdims), t.dtype)

    return rel


def _arg_reduce_rel(op_name: str):
    """argmax/argmin: indices of the dtype of the input's dims (int32 unless they are int64),
    as Relay's ArgReduceRel."""

    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        axes = reduce_axes(t.ndim, attrs, op_name)
        dtype = t.shape[0].dtype if t.ndim else "int32"
        return TensorType(_reduced_shape(t.shape, axes, attrs.keepdims), dtype)

    return rel


def _variance_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "variance: data")
    m = expect_tensor(arg_types[1], "variance: mean")
    attr_bool(attrs.unbiased, "unbiased", "variance")
    if m.dtype != t.dtype:
        raise fail("variance", f"mean has dtype {m.dtype} but data has {t.dtype}")
    if m.ndim > t.ndim or not all(
        dm == 1 or dims_equal_or_unknown(dm, dt) for dm, dt in zip(m.shape[::-1], t.shape[::-1])
    ):
        raise fail("variance", f"mean of shape {shape_str(m.shape)} does not broadcast to the "
                   f"data's shape {shape_str(t.shape)}")
    axes = reduce_axes(t.ndim, attrs, "variance")
    return TensorType(_reduced_shape(t.shape, axes, attrs.keepdims), t.dtype)


# --- kernels ------------------------------------------------------------------------------------


def _axes_of(a: np.ndarray, attrs: Attrs) -> tuple[int, ...]:
    if attrs.axis is None or attrs.axis == ():
        return tuple(range(a.ndim))
    axes = {k % a.ndim for k in attrs.axis}
    if attrs.exclude:
        return tuple(k for k in range(a.ndim) if k not in axes)
    return tuple(sorted(axes))


def _count(a: np.ndarray, axes: tuple[int, ...]) -> int:
    n = 1
    for k in axes:
        n *= a.shape[k]
    return n


def _lowest(dtype: np.dtype):
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _highest(dtype: np.dtype):
    if dtype.kind == "f":
        return np.inf
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def _sum(a, axes, keepdims):
    return np.sum(a, axis=axes, keepdims=keepdims, dtype=a.dtype)


def _prod(a, axes, keepdims):
    return np.prod(a, axis=axes, keepdims=keepdims, dtype=a.dtype)


def _max(a, axes, keepdims):
    return np.max(a, axis=axes, keepdims=keepdims, initial=_lowest(a.dtype))


def _min(a, axes, keepdims):
    return np.min(a, axis=axes, keepdims=keepdims, initial=_highest(a.dtype))


def _divide_count(total: np.ndarray, count: int, dtype: np.dtype) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if dtype.kind in "iu":
            # TVM divides integer sums with C semantics (toward zero).
            if count == 0:
                return np.zeros_like(total)
            return np.trunc(total / count).astype(dtype)
        return np.asarray(total / dtype.type(count), dtype=dtype)


def _mean(a, axes, keepdims):
    return _divide_count(np.sum(a, axis=axes, keepdims=keepdims, dtype=a.dtype),
                         _count(a, axes), a.dtype)


_KERNELS = {"sum": _sum, "prod": _prod, "max": _max, "min": _min, "mean": _mean}


def _reduce_kernel(fn):
    def kernel(args, attrs):
        a = args[0]
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(fn(a, _axes_of(a, attrs), attrs.keepdims), dtype=a.dtype)

    return kernel


def _arg_kernel(pick):
    def kernel(args, attrs):
        a = args[0]
        axes = _axes_of(a, attrs)
        kept = [k for k in range(a.ndim) if k not in axes]
        # Reduce over the reduced axes flattened together, in row-major order, as TVM does.
        flat = np.transpose(a, kept + list(axes)).reshape([a.shape[k] for k in kept] + [-1])
        n = flat.shape[-1]
        if n == 0:
            out = np.full(flat.shape[:-1], -1, dtype=np.int32)
        elif attrs.select_last_index:
            out = (n - 1 - pick(flat[..., ::-1], axis=-1)).astype(np.int32)
        else:
            out = pick(flat, axis=-1).astype(np.int32)
        if attrs.keepdims:
            out = out.reshape([1 if k in axes else a.shape[k] for k in range(a.ndim)])
        return np.asarray(out, dtype=np.int32)

    return kernel


def _variance_kernel(args, attrs):
    a, m = args
    axes = _axes_of(a, attrs)
    dev = a - m
    total = np.sum(dev * dev, axis=axes, keepdims=attrs.keepdims, dtype=a.dtype)
    count = _count(a, axes) - (1 if attrs.unbiased else 0)
    return _divide_count(total, count if count > 0 else 0, a.dtype)


_REDUCE_ATTRS = {"axis": None, "keepdims": False, "exclude": False}

for _name, _fn in _KERNELS.items():
    register_op(
        _name, num_inputs=1, type_relation=_reduce_rel(_name), kernel=_reduce_kernel(_fn),
        pattern=OpPattern.COMM_REDUCE, attrs=_REDUCE_ATTRS,
        attrs_type_key="relay.attrs.ReduceAttrs",
        description=f"Reduce with {_name} over axis (all axes when None).",
    )
for _name, _pick in (("argmax", np.argmax), ("argmin", np.argmin)):
    register_op(
        _name, num_inputs=1, type_relation=_arg_reduce_rel(_name), kernel=_arg_kernel(_pick),
        pattern=OpPattern.COMM_REDUCE,
        attrs={"axis": None, "keepdims": False, "select_last_index": False, "exclude": False},
        attrs_type_key="relay.attrs.ArgReduceAttrs",
        description=f"Index of the {_name[3:]}imum over axis, as int32.",
    )
register_op(
    "variance", num_inputs=2, type_relation=_variance_rel, kernel=_variance_kernel,
    pattern=OpPattern.COMM_REDUCE, attrs={**_REDUCE_ATTRS, "unbiased": False},
    attrs_type_key="relay.attrs.VarianceAttrs",
    description="Mean squared deviation from a given mean over axis.",
)


# --- constructors -------------------------------------------------------------------------------


def _reduce(op_name: str, data: Expr, axis, keepdims: bool, exclude: bool, **extra) -> Call:
    return call(op_name, [data], axis=axis_list(axis), keepdims=bool(keepdims),
                exclude=bool(exclude), **extra)


def sum(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False) -> Call:
    return _reduce("sum", data, axis, keepdims, exclude)


def mean(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False) -> Call:
    return _reduce("mean", data, axis, keepdims, exclude)


def max(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False) -> Call:
    return _reduce("max", data, axis, keepdims, exclude)


def min(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False) -> Call:
    return _reduce("min", data, axis, keepdims, exclude)


def prod(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False) -> Call:
    return _reduce("prod", data, axis, keepdims, exclude)


def argmax(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False,
           select_last_index: bool = False) -> Call:
    return _reduce("argmax", data, axis, keepdims, exclude,
                   select_last_index=bool(select_last_index))


def argmin(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False,
           select_last_index: bool = False) -> Call:
    return _reduce("argmin", data, axis, keepdims, exclude,
                   select_last_index=bool(select_last_index))


def variance(data: Expr, axis=None, keepdims: bool = False, exclude: bool = False,
             unbiased: bool = False, with_mean: Expr | None = None) -> Call:
    """Variance over ``axis``; the mean is computed with ``mean(..., keepdims=True)`` unless
    ``with_mean`` gives it, as in Relay."""
    m = mean(data, axis, True, exclude) if with_mean is None else with_mean
    return call("variance", [data, m], axis=axis_list(axis), keepdims=bool(keepdims),
                exclude=bool(exclude), unbiased=bool(unbiased))


register_type_relation("Reduce", _reduce_rel)
register_type_relation("ArgReduce", _arg_reduce_rel)
