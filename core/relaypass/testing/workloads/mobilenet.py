"""MobileNet (v1), as Relay's ``relay.testing.mobilenet`` builds it.

A strided conv block, then depthwise-separable blocks (a depthwise 3x3
convolution and a pointwise 1x1 one, each followed by batch norm and relu),
global average pooling and a dense classifier.
"""

from __future__ import annotations

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import nn
from . import layers
from .common import create_workload

__all__ = ["conv_block", "get_workload", "mobile_net", "separable_conv_block"]


def conv_block(
    data: Expr,
    name: str,
    channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
) -> Expr:
    """Convolution, batch norm (on axis 1, whatever the layout, as Relay's), relu."""
    conv = layers.conv2d(
        data=data, channels=channels, kernel_size=kernel_size, strides=strides,
        padding=padding, data_layout=layout, kernel_layout=layers.conv_kernel_layout(layout),
        name=f"{name}_conv",
    )
    normed = layers.batch_norm_infer(data=conv, epsilon=epsilon, name=f"{name}_bn")
    return nn.relu(data=normed)


def separable_conv_block(
    data: Expr,
    name: str,
    depthwise_channels: int,
    pointwise_channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    downsample: bool = False,
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Expr:
    """Depthwise convolution (typed weight ``<name>_weight``) + bn + relu, then pointwise + bn + relu."""
    strides = (2, 2) if downsample else (1, 1)
    if layout == "NCHW":
        wshape = (depthwise_channels, 1, *kernel_size)
    elif layout == "NHWC":
        wshape = (*kernel_size, depthwise_channels, 1)
    else:
        raise ValueError(f"mobilenet: unknown layout {layout!r}: use 'NCHW' or 'NHWC'")
    bn_axis = layout.index("C")
    weight = var(f"{name}_weight", shape=wshape, dtype=dtype)
    depthwise = layers.conv2d(
        data=data, weight=weight, channels=depthwise_channels, groups=depthwise_channels,
        kernel_size=kernel_size, strides=strides, padding=padding, data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout, True), name=f"{name}_depthwise_conv1",
    )
    act = nn.relu(
        data=layers.batch_norm_infer(data=depthwise, epsilon=epsilon, axis=bn_axis, name=f"{name}_bn1")
    )
    pointwise = layers.conv2d(
        data=act, channels=pointwise_channels, kernel_size=(1, 1), strides=(1, 1),
        padding=(0, 0), data_layout=layout, kernel_layout=layers.conv_kernel_layout(layout),
        name=f"{name}_conv2",
    )
    return nn.relu(
        data=layers.batch_norm_infer(data=pointwise, epsilon=epsilon, axis=bn_axis, name=f"{name}_bn2")
    )


# (depthwise channels, pointwise channels, downsample) of the separable blocks, before alpha.
_COMMON_BLOCKS = [
    (32, 64, False), (64, 128, True), (128, 128, False),
    (128, 256, True), (256, 256, False), (256, 512, True),
]
_SHALLOW_TAIL = [(512, 1024, True), (1024, 1024, True)]
_FULL_TAIL = [(512, 512, False)] * 5 + [(512, 1024, True), (1024, 1024, False)]


def mobile_net(
    num_classes: int = 1000,
    data_shape: tuple[int, ...] = (1, 3, 224, 224),
    dtype: str = "float32",
    alpha: float = 1.0,
    is_shallow: bool = False,
    layout: str = "NCHW",
) -> Function:
    """The MobileNet function; ``alpha`` scales every width, ``is_shallow`` drops five blocks."""
    data = var("data", shape=data_shape, dtype=dtype)
    body = conv_block(data, "conv_block_1", int(32 * alpha), strides=(2, 2), layout=layout)
    blocks = _COMMON_BLOCKS + (_SHALLOW_TAIL if is_shallow else _FULL_TAIL)
    for i, (depthwise, pointwise, downsample) in enumerate(blocks, start=1):
        body = separable_conv_block(
            body, f"separable_conv_block_{i}", int(depthwise * alpha), int(pointwise * alpha),
            downsample=downsample, layout=layout, dtype=dtype,
        )
    pooled = nn.global_avg_pool2d(data=body, layout=layout)
    flat = nn.batch_flatten(data=pooled)
    fc = nn.dense(data=flat, weight=var("fc_weight"), units=num_classes)
    fc = nn.bias_add(fc, var("fc_bias"))
    out = nn.softmax(data=fc)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
    layout: str = "NCHW",
):
    """``(mod, params)`` for MobileNet; ``image_shape`` follows ``layout``."""
    data_shape = (batch_size, *image_shape)
    net = mobile_net(
        num_classes=num_classes, data_shape=data_shape, dtype=dtype, alpha=1.0,
        is_shallow=False, layout=layout,
    )
    return create_workload(net)
