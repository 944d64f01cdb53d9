"""Mixed-precision categories of operators, and Relay's default lists (``relay.transform.mixed_precision``).

ToMixedPrecision asks each operator's ``FTVMMixedPrecisionConversionType``
attribute how to treat a call: ``fn(call, mixed_precision_type)`` returns
``[category, accumulation dtype, output dtype]``, the category being
ALWAYS (0: compute in the low precision), FOLLOW (1: in the low precision
when the arguments already are) or NEVER (2: in float32).  The defaults are
Relay's lists, from TensorFlow's classification; they are registered, at the
standard level 10, for the operators that exist, the first time the pass (or
this module's :func:`register_default_conversions`) needs them, and never
over a registration already made: a user's
``register_mixed_precision_conversion(op, fn, level=11)`` replaces a default
as in Relay.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import Op
from ..ir.op_hooks import MIXED_PRECISION_CONVERSION, register_mixed_precision_conversion

__all__ = [
    "CONVERSION_ATTR", "DEFAULT_ALWAYS_LIST", "DEFAULT_FOLLOW_LIST", "DEFAULT_NEVER_LIST",
    "MIXED_PRECISION_ALWAYS", "MIXED_PRECISION_FOLLOW", "MIXED_PRECISION_NEVER",
    "generic_always_op", "generic_follow_op", "generic_never_op", "get_generic_out_dtypes",
    "register_default_conversions",
]

CONVERSION_ATTR = MIXED_PRECISION_CONVERSION
MIXED_PRECISION_ALWAYS = 0
MIXED_PRECISION_FOLLOW = 1
MIXED_PRECISION_NEVER = 2

DEFAULT_ALWAYS_LIST = [
    "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
    "nn.conv3d_transpose", "nn.dense", "nn.batch_matmul",
]
DEFAULT_FOLLOW_LIST = [
    # new data or new shapes
    "nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose",
    "expand_dims", "reshape", "dyn.reshape", "broadcast_to_like", "dyn.broadcast_to",
    "strided_slice", "dyn.strided_slice", "take", "argwhere", "where", "tile", "dyn.tile",
    "scatter", "scatter_elements", "scatter_nd", "full", "dyn.full", "nn.depth_to_space",
    # comparisons
    "less", "greater", "less_equal", "greater_equal",
    # results that follow their inputs
    "copy", "cast", "cast_like",
    # simple arithmetic
    "add", "subtract", "multiply", "divide", "nn.bias_add", "nn.batch_norm", "sqrt", "shape_of",
    # simple activations
    "max", "min", "maximum", "minimum", "argmax", "argmin", "nn.relu", "nn.leaky_relu",
    "nn.prelu", "nn.dropout",
    # activations that saturate in a narrow range
    "sigmoid", "tanh", "fast_tanh", "fast_exp", "fast_erf", "clip",
    # pooling
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.adaptive_max_pool1d", "nn.adaptive_max_pool2d",
    "nn.adaptive_max_pool3d", "image.resize2d",
]
DEFAULT_NEVER_LIST = [
    # |f(x)| much larger than |x|
    "exp", "power", "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.softmax",
    "nn.l2_normalize", "erf",
    # arange's bounds may not fit the low precision
    "arange",
    # large summations
    "nn.global_avg_pool2d", "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d",
    "nn.adaptive_avg_pool3d", "sum", "mean", "variance", "nn.layer_norm",
]


def get_generic_out_dtypes(call_node: Any, mixed_precision_type: str) -> list[str]:
    """``[accumulation dtype, output dtype]`` for most operators: both the low precision."""
    return [mixed_precision_type, mixed_precision_type]


def generic_always_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    return [MIXED_PRECISION_ALWAYS, *get_generic_out_dtypes(call_node, mixed_precision_type)]


def generic_follow_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    return [MIXED_PRECISION_FOLLOW, *get_generic_out_dtypes(call_node, mixed_precision_type)]


def generic_never_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    return [MIXED_PRECISION_NEVER, *get_generic_out_dtypes(call_node, mixed_precision_type)]


_registered = False


def register_default_conversions() -> None:
    """Register Relay's default categories for the operators that exist and have none yet."""
    global _registered
    if _registered:
        return
    _registered = True
    known = set(Op.list_op_names())
    for names, fn in ((DEFAULT_ALWAYS_LIST, generic_always_op),
                      (DEFAULT_FOLLOW_LIST, generic_follow_op),
                      (DEFAULT_NEVER_LIST, generic_never_op)):
        for name in names:
            if name in known and not Op.get(name).has_attr(CONVERSION_ATTR):
                register_mixed_precision_conversion(name, fn)
