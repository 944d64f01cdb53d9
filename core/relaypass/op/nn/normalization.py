"""Normalization: batch_norm (inference form, a 3-tuple as in Relay), layer_norm, instance_norm,
lrn, l2_normalize."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op, register_op_attr
from ...ir.types import TensorType, TupleType, Type
from ..builder import call
from ..relations import (
    ARG_TYPES,
    attr_bool,
    attr_int,
    attr_ints,
    attr_number,
    dims_equal_or_unknown,
    expect_float,
    expect_tensor,
    fail,
    normalize_axes,
    normalize_axis,
    shape_str,
    vector_arg_types,
)
from ..tuple_wrapper import TupleWrapper

__all__ = ["batch_norm", "instance_norm", "l2_normalize", "layer_norm", "lrn"]


def _check_vectors(op_name: str, data: TensorType, axis: int, arg_types: Sequence[Type],
                   names: Sequence[str]) -> TensorType:
    """Each parameter must be a vector as long as the normalized axis, of the data's dtype."""
    vec = TensorType((data.shape[axis],), data.dtype)
    for name, ty in zip(names, arg_types):
        t = expect_tensor(ty, f"{op_name}: {name}")
        if t.dtype != data.dtype:
            raise fail(op_name, f"{name} has dtype {t.dtype} but data has {data.dtype}")
        if t.ndim != 1 or not dims_equal_or_unknown(t.shape[0], data.shape[axis]):
            raise fail(op_name, f"{name} must have shape ({data.shape[axis]},) to match axis "
                       f"{axis} of data of shape {shape_str(data.shape)}, got {shape_str(t.shape)}")
    return vec


def _norm_common(op_name: str, arg_types: Sequence[Type], attrs: Attrs) -> tuple[TensorType, int]:
    data = expect_tensor(arg_types[0], f"{op_name}: data")
    expect_float(data, op_name, "data")
    axis = normalize_axis(attrs.axis, data.ndim, op_name)
    attr_number(attrs.epsilon, "epsilon", op_name)
    attr_bool(attrs.center, "center", op_name)
    attr_bool(attrs.scale, "scale", op_name)
    return data, axis


def _batch_norm_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data, axis = _norm_common("nn.batch_norm", arg_types, attrs)
    vec = _check_vectors("nn.batch_norm", data, axis, arg_types[1:],
                         ("gamma", "beta", "moving_mean", "moving_var"))
    return TupleType([data, vec, vec])


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _batch_norm_kernel(args, attrs):
    x, gamma, beta, mean, var = args
    axis = attrs.axis % x.ndim
    one = x.dtype.type
    scale = one(1) / np.sqrt(var + one(attrs.epsilon))
    if attrs.scale:
        scale = scale * gamma
    out = (x - _along(mean, axis, x.ndim)) * _along(scale, axis, x.ndim)
    if attrs.center:
        out = out + _along(beta, axis, x.ndim)
    return (out.astype(x.dtype, copy=False), mean, var)


register_op(
    "nn.batch_norm", num_inputs=5, type_relation=_batch_norm_rel, kernel=_batch_norm_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"axis": 1, "epsilon": 1e-5, "center": True, "scale": True},
    attrs_type_key="relay.attrs.BatchNormAttrs",
    description="Batch normalization with the moving statistics (inference); returns "
    "(out, moving_mean, moving_var).",
)
register_op_attr("nn.batch_norm", ARG_TYPES, vector_arg_types("nn.batch_norm", 1, 5))


def _layer_norm_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data, axis = _norm_common("nn.layer_norm", arg_types, attrs)
    _check_vectors("nn.layer_norm", data, axis, arg_types[1:], ("gamma", "beta"))
    return data


def _normalize(x, gamma, beta, attrs, axis: int, over) -> np.ndarray:
    """``x`` normalized to mean 0 and variance 1 over the axes ``over``, then scaled by
    ``gamma`` and shifted by ``beta`` along ``axis`` as ``attrs`` ask (float16 computes in
    float32): layer norm and instance norm differ only in the axes they reduce."""
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    xa = x.astype(acc, copy=False)
    mean = xa.mean(axis=over, keepdims=True)
    dev = xa - mean
    var = (dev * dev).mean(axis=over, keepdims=True)
    out = dev / np.sqrt(var + np.asarray(attrs.epsilon, dtype=acc))
    if attrs.scale:
        out = out * _along(gamma, axis, x.ndim)
    if attrs.center:
        out = out + _along(beta, axis, x.ndim)
    return out.astype(x.dtype, copy=False)


def _layer_norm_kernel(args, attrs):
    x, gamma, beta = args
    axis = attrs.axis % x.ndim
    return _normalize(x, gamma, beta, attrs, axis, axis)


register_op(
    "nn.layer_norm", num_inputs=3, type_relation=_layer_norm_rel, kernel=_layer_norm_kernel,
    pattern=OpPattern.OPAQUE,
    attrs={"axis": -1, "epsilon": 1e-5, "center": True, "scale": True},
    attrs_type_key="relay.attrs.LayerNormAttrs",
    description="Normalize each slice along axis to zero mean and unit variance, then scale "
    "and shift.",
)
register_op_attr("nn.layer_norm", ARG_TYPES, vector_arg_types("nn.layer_norm", 1, 3))


def _lrn_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "nn.lrn: data")
    expect_float(data, "nn.lrn", "data")
    attr_int(attrs.size, "size", "nn.lrn", minimum=1)
    normalize_axis(attrs.axis, data.ndim, "nn.lrn")
    for name in ("bias", "alpha", "beta"):
        attr_number(attrs[name], name, "nn.lrn")
    return data


def _lrn_kernel(args, attrs):
    x = args[0]
    axis = attrs.axis % x.ndim
    size = attrs.size
    sq = np.moveaxis(x.astype(np.float64) ** 2, axis, -1)
    # TVM's window for channel c is [c - size // 2, c - size // 2 + size).
    padded = np.pad(sq, [(0, 0)] * (sq.ndim - 1) + [(size // 2, size - 1 - size // 2)])
    window_sum = sliding_window_view(padded, size, axis=-1).sum(axis=-1)
    denom = (attrs.bias + attrs.alpha * np.moveaxis(window_sum, -1, axis) / size) ** attrs.beta
    return (x / denom).astype(x.dtype)


register_op(
    "nn.lrn", num_inputs=1, type_relation=_lrn_rel, kernel=_lrn_kernel,
    pattern=OpPattern.OPAQUE,
    attrs={"size": 5, "axis": 1, "bias": 2.0, "alpha": 1e-5, "beta": 0.75},
    attrs_type_key="relay.attrs.LRNAttrs",
    description="Local response normalization across neighbouring channels.",
)


def _instance_norm_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data, axis = _norm_common("nn.instance_norm", arg_types, attrs)
    if axis == 0:
        raise fail("nn.instance_norm", "axis 0 is the batch axis; the channel axis must be "
                   "another one")
    _check_vectors("nn.instance_norm", data, axis, arg_types[1:], ("gamma", "beta"))
    return data


def _instance_norm_kernel(args, attrs):
    x, gamma, beta = args
    axis = attrs.axis % x.ndim
    # Each sample's each channel is normalized on its own: over every axis but these two.
    over = tuple(k for k in range(1, x.ndim) if k != axis)
    return _normalize(x, gamma, beta, attrs, axis, over)


register_op(
    "nn.instance_norm", num_inputs=3, type_relation=_instance_norm_rel,
    kernel=_instance_norm_kernel, pattern=OpPattern.OPAQUE,
    attrs={"axis": 1, "epsilon": 1e-5, "center": True, "scale": True},
    attrs_type_key="relay.attrs.InstanceNormAttrs",
    description="Normalize each channel of each sample over the remaining axes, then scale "
    "and shift per channel.",
)
register_op_attr("nn.instance_norm", ARG_TYPES, vector_arg_types("nn.instance_norm", 1, 3))


def _l2_axes(attrs: Attrs, ndim: int) -> list[int]:
    """The summed axes; none named means all of them, as in TVM's reductions."""
    axes = attr_ints(attrs.axis, "axis", "nn.l2_normalize")
    return normalize_axes(axes, ndim, "nn.l2_normalize") if axes else list(range(ndim))


def _l2_normalize_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "nn.l2_normalize: data")
    expect_float(data, "nn.l2_normalize", "data")
    attr_number(attrs.eps, "eps", "nn.l2_normalize")
    _l2_axes(attrs, data.ndim)
    return data


def _l2_normalize_kernel(args, attrs):
    x = args[0]
    axes = tuple(_l2_axes(attrs, x.ndim))
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    xa = x.astype(acc, copy=False)
    norm = np.sqrt(np.maximum((xa * xa).sum(axis=axes, keepdims=True),
                              np.asarray(attrs.eps, dtype=acc)))
    return (xa / norm).astype(x.dtype, copy=False)


register_op(
    "nn.l2_normalize", num_inputs=1, type_relation=_l2_normalize_rel,
    kernel=_l2_normalize_kernel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"eps": 1e-12, "axis": ()},
    attrs_type_key="relay.attrs.L2NormalizeAttrs",
    description="Divide by the L2 norm over the given axes, at least sqrt(eps).",
)


# --- constructors -------------------------------------------------------------------------------


def batch_norm(data: Expr, gamma: Expr, beta: Expr, moving_mean: Expr, moving_var: Expr,
               axis: int = 1, epsilon: float = 1e-5, center: bool = True,
               scale: bool = True) -> TupleWrapper:
    """Batch normalization; a TupleWrapper of (normalized data, moving_mean, moving_var)."""
    result = call("nn.batch_norm", [data, gamma, beta, moving_mean, moving_var], axis=axis,
                  epsilon=float(epsilon), center=bool(center), scale=bool(scale))
    return TupleWrapper(result, 3)


def layer_norm(data: Expr, gamma: Expr, beta: Expr, axis: int = -1, epsilon: float = 1e-5,
               center: bool = True, scale: bool = True) -> Call:
    return call("nn.layer_norm", [data, gamma, beta], axis=axis, epsilon=float(epsilon),
                center=bool(center), scale=bool(scale))


def lrn(data: Expr, size: int = 5, axis: int = 1, bias: float = 2, alpha: float = 0.00001,
        beta: float = 0.75) -> Call:
    """``data / (bias + alpha * sum_sq / size) ** beta`` over ``size`` neighbouring channels."""
    return call("nn.lrn", [data], size=size, axis=axis, bias=float(bias), alpha=float(alpha),
                beta=float(beta))



def instance_norm(data: Expr, gamma: Expr, beta: Expr, axis: int = 1, epsilon: float = 1e-5,
                  center: bool = True, scale: bool = True) -> Call:
    return call("nn.instance_norm", [data, gamma, beta], axis=axis, epsilon=float(epsilon),
                center=bool(center), scale=bool(scale))


def l2_normalize(data: Expr, eps: float, axis: Sequence[int] | None = None) -> Call:
    """``data / sqrt(max(sum(data ** 2, axis), eps))``; no axis sums over all of them."""
    return call("nn.l2_normalize", [data], eps=float(eps), axis=tuple(axis or ()))
