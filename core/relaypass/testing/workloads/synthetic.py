"""A small synthetic network for fast tests, as Relay's ``relay.testing.synthetic``.

It mixes dense layers over the last axis (reshaped back with ``reshape_like``)
with softmax-activated convolutions and a batch norm.  It needs the
``reshape_like`` operator: while no operator set registers it, the builder
raises :class:`~relaypass.testing.workloads.common.MissingOperatorError`.
"""

from __future__ import annotations

from ... import op as _op
from ...ir.expr import Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import add, nn, reshape
from . import layers
from .common import create_workload, operator_constructor
from .init import Constant

__all__ = ["get_net", "get_workload"]


def get_net(input_shape=(1, 3, 24, 12), dtype: str = "float32", wtype: str | None = None) -> Function:
    """The synthetic network for an NCHW input of ``input_shape``; weights of ``wtype``."""
    reshape_like = operator_constructor(_op, "reshape_like", "reshape_like",
                                        "relay.testing.synthetic")
    if wtype is None:
        wtype = dtype
    data = var("data", shape=input_shape, dtype=dtype)
    width = input_shape[3]
    dense_shape = [-1, width]
    conv_shape = [input_shape[1], input_shape[1], 3, 3]

    def block(source, dense_name: str, conv_name: str):
        dense = nn.relu(nn.dense(
            reshape(source, dense_shape),
            var(dense_name, shape=[width, dense_shape[1]], dtype=wtype),
        ))
        dense = reshape_like(dense, data)
        conv = nn.softmax(nn.conv2d(
            source, var(conv_name, shape=conv_shape, dtype=wtype), padding=1, kernel_size=3,
        ))
        return add(dense, conv)

    first = block(data, "dense_weight", "conv_weight")
    normed = layers.batch_norm_infer(nn.bias_add(first, var("bias", dtype=wtype)),
                                     name="batch_norm")
    out = block(normed, "dense2_weight", "conv2_weight")
    return Function(free_vars(out), out)


def get_workload(input_shape=(1, 3, 24, 12), dtype: str = "float32", wtype: str | None = None):
    """``(mod, params)`` for the synthetic network, every weight constant (1 / its size)."""
    return create_workload(
        get_net(input_shape=input_shape, dtype=dtype, wtype=wtype), initializer=Constant()
    )
