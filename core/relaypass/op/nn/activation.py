"""Activations: relu, leaky_relu, prelu, softmax (and fast_softmax), log_softmax, and dropout.

Dropout is the inference form: its kernel passes the data through and
returns a mask of ones beside it (Relay's 2-tuple); the operator is
stateful, as in Relay, so constant folding leaves it alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op, register_op_attr
from ...ir.types import TupleType, Type
from ..builder import call
from ..fast_math import fast_exp_values
from ..relations import (
    ARG_TYPES,
    attr_number,
    dims_equal_or_unknown,
    expect_float,
    expect_same_dtype,
    expect_tensor,
    fail,
    identity_rel,
    normalize_axis,
    shape_str,
    vector_arg_types,
)
from ..tuple_wrapper import TupleWrapper

__all__ = ["relu", "leaky_relu", "prelu", "softmax", "fast_softmax", "log_softmax", "dropout",
           "dropout_raw"]


register_op(
    "nn.relu", num_inputs=1, type_relation=identity_rel("nn.relu"),
    kernel=lambda args, attrs: np.maximum(args[0], args[0].dtype.type(0)),
    pattern=OpPattern.ELEMWISE, description="Rectified linear unit, max(x, 0).",
)


def _leaky_relu_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "nn.leaky_relu: data")
    attr_number(attrs.alpha, "alpha", "nn.leaky_relu")
    return t


def _leaky_relu_kernel(args, attrs):
    x = args[0]
    return np.where(x > 0, x, x * x.dtype.type(attrs.alpha)).astype(x.dtype, copy=False)


register_op(
    "nn.leaky_relu", num_inputs=1, type_relation=_leaky_relu_rel, kernel=_leaky_relu_kernel,
    pattern=OpPattern.ELEMWISE, attrs={"alpha": 0.01}, attrs_type_key="relay.attrs.LeakyReluAttrs",
    description="x where x > 0, alpha * x elsewhere.",
)


def _prelu_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "nn.prelu: data")
    alpha = expect_tensor(arg_types[1], "nn.prelu: alpha")
    axis = normalize_axis(attrs.axis, data.ndim, "nn.prelu")
    expect_same_dtype(data, alpha, "nn.prelu", "data", "alpha")
    if alpha.ndim != 1 or not dims_equal_or_unknown(alpha.shape[0], data.shape[axis]):
        raise fail("nn.prelu", f"alpha must have shape ({data.shape[axis]},) to match axis {axis} of "
                   f"data of shape {shape_str(data.shape)}, got {shape_str(alpha.shape)}")
    return data


def _prelu_kernel(args, attrs):
    x, alpha = args
    shape = [1] * x.ndim
    shape[attrs.axis % x.ndim] = -1
    return np.where(x > 0, x, x * alpha.reshape(shape)).astype(x.dtype, copy=False)


register_op(
    "nn.prelu", num_inputs=2, type_relation=_prelu_rel, kernel=_prelu_kernel,
    pattern=OpPattern.BROADCAST, attrs={"axis": 1}, attrs_type_key="relay.attrs.PReluAttrs",
    description="Leaky relu with a learned slope per channel along axis.",
)
register_op_attr("nn.prelu", ARG_TYPES, vector_arg_types("nn.prelu", 1, 2))


def _softmax_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        expect_float(t, op_name, "data")
        normalize_axis(attrs.axis, t.ndim, op_name)
        return t

    return rel


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    return x - np.where(np.isfinite(m), m, 0)


def _softmax_kernel(args, attrs):
    x = args[0]
    with np.errstate(invalid="ignore"):
        e = np.exp(_shifted(x, attrs.axis))
        return (e / np.sum(e, axis=attrs.axis, keepdims=True)).astype(x.dtype, copy=False)


def _fast_softmax_kernel(args, attrs):
    x = args[0]
    with np.errstate(invalid="ignore"):
        e = fast_exp_values(_shifted(x, attrs.axis))
        return (e / np.sum(e, axis=attrs.axis, keepdims=True)).astype(x.dtype, copy=False)


def _log_softmax_kernel(args, attrs):
    x = args[0]
    s = _shifted(x, attrs.axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = s - np.log(np.sum(np.exp(s), axis=attrs.axis, keepdims=True))
    return out.astype(x.dtype, copy=False)


register_op(
    "nn.softmax", num_inputs=1, type_relation=_softmax_rel("nn.softmax"), kernel=_softmax_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs={"axis": -1},
    attrs_type_key="relay.attrs.SoftmaxAttrs",
    description="exp(x) / sum(exp(x)) along axis.",
)
register_op(
    "nn.fast_softmax", num_inputs=1, type_relation=_softmax_rel("nn.fast_softmax"),
    kernel=_fast_softmax_kernel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs={"axis": -1},
    attrs_type_key="relay.attrs.SoftmaxAttrs",
    description="softmax with exp computed by fast_exp.",
)
register_op(
    "nn.log_softmax", num_inputs=1, type_relation=_softmax_rel("nn.log_softmax"),
    kernel=_log_softmax_kernel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs={"axis": -1},
    attrs_type_key="relay.attrs.SoftmaxAttrs",
    description="log(softmax(x)) along axis, computed stably.",
)


def _dropout_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "nn.dropout: data")
    rate = attr_number(attrs.rate, "rate", "nn.dropout")
    if not 0.0 <= rate <= 1.0:
        raise fail("nn.dropout", f"rate must be between 0 and 1, got {rate}")
    return TupleType([t, t])


register_op(
    "nn.dropout", num_inputs=1, type_relation=_dropout_rel,
    kernel=lambda args, attrs: (args[0], np.ones_like(args[0])),
    pattern=OpPattern.OPAQUE, attrs={"rate": 0.5}, attrs_type_key="relay.attrs.DropoutAttrs",
    stateful=True,
    description="Dropout; at inference the data passes unchanged, with a mask of ones.",
)


# --- constructors -------------------------------------------------------------------------------


def relu(data: Expr) -> Call:
    """Rectified linear unit, ``max(x, 0)``."""
    return call("nn.relu", [data])


def leaky_relu(data: Expr, alpha: float = 0.01) -> Call:
    return call("nn.leaky_relu", [data], alpha=float(alpha))


def prelu(data: Expr, alpha: Expr, axis: int = 1) -> Call:
    return call("nn.prelu", [data, alpha], axis=axis)


def softmax(data: Expr, axis: int = -1) -> Call:
    return call("nn.softmax", [data], axis=axis)


def fast_softmax(data: Expr, axis: int = -1) -> Call:
    return call("nn.fast_softmax", [data], axis=axis)


def log_softmax(data: Expr, axis: int = -1) -> Call:
    return call("nn.log_softmax", [data], axis=axis)


def dropout_raw(data: Expr, rate: float = 0.5) -> Call:
    """The dropout call itself, whose value is the pair (output, mask)."""
    return call("nn.dropout", [data], rate=float(rate))


def dropout(data: Expr, rate: float = 0.5) -> Expr:
    """Dropout's output (field 0 of :func:`dropout_raw`), as Relay's ``relay.nn.dropout``."""
    return TupleWrapper(dropout_raw(data, rate), 2)[0]

