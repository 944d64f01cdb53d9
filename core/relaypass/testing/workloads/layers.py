"""Layer helpers the model builders use (Relay's ``relay.testing.layers``).

Each wrapper takes a ``name`` keyword and creates the parameter variables it
is not given, named ``<name>_weight``, ``<name>_bias``, ``<name>_gamma``, ...,
untyped so that type inference gives them their shapes.  The other keywords
go to the operator's constructor.
"""

from __future__ import annotations

from typing import Any

from ...ir.expr import Expr, Var
from ...op import nn
from .common import operator_constructor

__all__ = [
    "batch_norm_infer", "conv2d", "conv2d_transpose", "conv3d", "conv_kernel_layout",
    "dense_add_bias",
]


def _name(kwargs: dict[str, Any], helper: str) -> str:
    if "name" not in kwargs:
        raise TypeError(f"{helper}() needs a name= keyword: it names the parameters it creates")
    return kwargs.pop("name")


def _param(given: Expr | None, name: str, suffix: str) -> Expr:
    return Var(f"{name}_{suffix}") if given is None else given


def batch_norm_infer(
    data: Expr,
    gamma: Expr | None = None,
    beta: Expr | None = None,
    moving_mean: Expr | None = None,
    moving_var: Expr | None = None,
    **kwargs: Any,
) -> Expr:
    """The normalized output (field 0) of ``nn.batch_norm``, creating its four parameters."""
    name = _name(kwargs, "batch_norm_infer")
    bn = nn.batch_norm(
        data,
        gamma=_param(gamma, name, "gamma"),
        beta=_param(beta, name, "beta"),
        moving_mean=_param(moving_mean, name, "moving_mean"),
        moving_var=_param(moving_var, name, "moving_var"),
        **kwargs,
    )
    return bn[0]


def conv2d(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv2d`` with a ``<name>_weight`` variable unless ``weight`` is given."""
    name = _name(kwargs, "conv2d")
    return nn.conv2d(data, _param(weight, name, "weight"), **kwargs)


def conv3d(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv3d`` with a ``<name>_weight`` variable unless ``weight`` is given."""
    name = _name(kwargs, "conv3d")
    make = operator_constructor(nn, "conv3d", "nn.conv3d", "relay.testing.layers.conv3d")
    return make(data, _param(weight, name, "weight"), **kwargs)


def conv2d_transpose(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv2d_transpose`` with a ``<name>_weight`` variable unless ``weight`` is given."""
    name = _name(kwargs, "conv2d_transpose")
    return nn.conv2d_transpose(data, _param(weight, name, "weight"), **kwargs)


def dense_add_bias(
    data: Expr,
    weight: Expr | None = None,
    bias: Expr | None = None,
    units: int | None = None,
    **kwargs: Any,
) -> Expr:
    """``nn.dense`` then ``nn.bias_add`` on the last axis, creating the weight and bias."""
    name = _name(kwargs, "dense_add_bias")
    out = nn.dense(data, _param(weight, name, "weight"), units, **kwargs)
    return nn.bias_add(out, _param(bias, name, "bias"), axis=-1)


_KERNEL_LAYOUTS = {"NCHW": "OIHW", "NHWC": "HWIO"}
_DEPTHWISE_KERNEL_LAYOUTS = {"NCHW": "OIHW", "NHWC": "HWOI"}


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout the builders pair with ``data_layout`` ("NCHW" or "NHWC")."""
    table = _DEPTHWISE_KERNEL_LAYOUTS if is_depthwise else _KERNEL_LAYOUTS
    if data_layout not in table:
        raise ValueError(f"unknown data layout {data_layout!r}: use 'NCHW' or 'NHWC'")
    return table[data_layout]
