"""The Nature DQN network (Mnih et al., 2015), as Relay's ``relay.testing.dqn``."""

from __future__ import annotations

from ...ir.expr import Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import nn
from . import layers
from .common import create_workload

__all__ = ["get_net", "get_workload"]

# name, channels, kernel, stride
_CONVS = (("conv1", 32, 8, 4), ("conv2", 64, 4, 2), ("conv3", 64, 3, 1))


def get_net(batch_size: int, num_actions: int = 18, image_shape=(4, 84, 84),
            dtype: str = "float32", layout: str = "NCHW") -> Function:
    """Three convolutions with bias and relu, a 512-unit dense layer, and one output per action."""
    body = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    bias_axis = layout.index("C")
    for name, channels, kernel, stride in _CONVS:
        bias = var(f"{name}_bias")
        body = layers.conv2d(
            body, kernel_size=(kernel, kernel), strides=(stride, stride), padding=(0, 0),
            channels=channels, name=name, data_layout=layout,
            kernel_layout=layers.conv_kernel_layout(layout),
        )
        body = nn.relu(nn.bias_add(body, bias, bias_axis))
    body = nn.batch_flatten(body)
    body = nn.relu(layers.dense_add_bias(body, units=512, name="dense1"))
    out = layers.dense_add_bias(body, units=num_actions, name="dense2")
    return Function(free_vars(out), out)


def get_workload(batch_size: int, num_actions: int = 18, image_shape=(4, 84, 84),
                 dtype: str = "float32", layout: str = "NCHW"):
    """``(mod, params)`` for the DQN, parameters Xavier-initialized."""
    net = get_net(batch_size, num_actions=num_actions, image_shape=image_shape, dtype=dtype,
                  layout=layout)
    return create_workload(net)
