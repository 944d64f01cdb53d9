"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016), as Relay's ``relay.testing.squeezenet``.

Fire modules squeeze with 1x1 convolutions and expand with concatenated 1x1
and 3x3 ones; the layout is NCHW.
"""

from __future__ import annotations

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import concatenate, nn
from . import layers
from .common import create_workload

__all__ = ["get_net", "get_workload"]


def _make_fire_conv(net: Expr, channels: int, kernel_size: int, padding: int = 0,
                    prefix: str = "") -> Expr:
    """Convolution (weight ``<prefix>_conv_weight``), bias ``<prefix>_conv_bias``, relu."""
    net = layers.conv2d(
        net, channels=channels, kernel_size=(kernel_size, kernel_size),
        padding=(padding, padding), name=f"{prefix}_conv",
    )
    net = nn.bias_add(net, var(f"{prefix}_conv_bias"))
    return nn.relu(net)


def _make_fire(net: Expr, squeeze_channels: int, expand1x1_channels: int,
               expand3x3_channels: int, prefix: str) -> Expr:
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions joined on the channels."""
    squeezed = _make_fire_conv(net, squeeze_channels, 1, 0, f"{prefix}_input")
    left = _make_fire_conv(squeezed, expand1x1_channels, 1, 0, f"{prefix}_left")
    right = _make_fire_conv(squeezed, expand3x3_channels, 3, 1, f"{prefix}_right")
    return concatenate((left, right), axis=1)


# The body after the stem: "pool" for a 3x3/2 max pooling, else the fire module's widths.
_POOL = "pool"
_BODIES = {
    "1.0": [
        (16, 64, 64), (16, 64, 64), (32, 128, 128), _POOL,
        (32, 128, 128), (48, 192, 192), (48, 192, 192), (64, 256, 256), _POOL,
        (64, 256, 256),
    ],
    "1.1": [
        (16, 64, 64), (16, 64, 64), _POOL,
        (32, 128, 128), (32, 128, 128), _POOL,
        (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256),
    ],
}
# The stem convolution: channels, kernel, padding (stride 2).
_STEMS = {"1.0": (96, 7, 3), "1.1": (64, 3, 1)}


def _max_pool(net: Expr) -> Expr:
    return nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))


def get_net(batch_size: int, image_shape: tuple[int, ...], num_classes: int, version: str,
            dtype: str) -> Function:
    """The SqueezeNet function of ``version`` "1.0" or "1.1"."""
    if version not in _BODIES:
        raise ValueError(f"squeezenet: unknown version {version!r}: use '1.0' or '1.1'")
    channels, kernel, pad = _STEMS[version]
    net = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    net = layers.conv2d(
        net, channels=channels, kernel_size=(kernel, kernel), strides=(2, 2),
        padding=(pad, pad), name="conv1",
    )
    net = nn.bias_add(net, var("conv1_bias"))
    net = _max_pool(nn.relu(net))
    fire = 0
    for step in _BODIES[version]:
        if step == _POOL:
            net = _max_pool(net)
        else:
            fire += 1
            net = _make_fire(net, *step, f"fire{fire}")
    net = nn.dropout(net, rate=0.5)
    net = layers.conv2d(net, channels=num_classes, kernel_size=(1, 1), name="conv_final")
    net = nn.bias_add(net, var("conv_final_bias"))
    net = nn.relu(net)
    net = nn.global_avg_pool2d(net)
    net = nn.batch_flatten(net)
    net = nn.softmax(net)
    return Function(free_vars(net), net)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    version: str = "1.0",
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
):
    """``(mod, params)`` for SqueezeNet ``version``, parameters Xavier-initialized."""
    return create_workload(get_net(batch_size, image_shape, num_classes, version, dtype))
