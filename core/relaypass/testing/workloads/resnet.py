"""ResNet (pre-activation, "Identity Mappings in Deep Residual Networks"), as Relay's builder.

``get_workload(num_layers=18)`` and the other depths give the graph Relay's
``relay.testing.resnet`` gives: the same operators in the same order, with the
same attributes and parameter names (``bn_data_*``, ``conv0_weight``,
``stage1_unit1_bn1_gamma``, ..., ``fc1_weight``, ``fc1_bias``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import add, nn
from . import layers
from .common import create_workload

__all__ = ["get_net", "get_workload", "residual_unit", "resnet"]

_EPS = 2e-5


def residual_unit(
    data: Expr,
    num_filter: int,
    stride: tuple[int, int],
    dim_match: bool,
    name: str,
    bottle_neck: bool = True,
    data_layout: str = "NCHW",
    kernel_layout: str = "IOHW",
) -> Expr:
    """One residual unit: (batch_norm, relu, conv) two or three times, plus the shortcut.

    A bottleneck unit narrows to a quarter of ``num_filter`` with 1x1, 3x3, 1x1
    convolutions; a basic unit has two 3x3 ones.  Unless ``dim_match``, the
    shortcut is a strided 1x1 convolution of the first activation.
    """
    bn_axis = data_layout.index("C")
    if bottle_neck:
        narrow = int(num_filter * 0.25)
        convs = [
            (narrow, (1, 1), stride, (0, 0)),
            (narrow, (3, 3), (1, 1), (1, 1)),
            (num_filter, (1, 1), (1, 1), (0, 0)),
        ]
    else:
        convs = [
            (num_filter, (3, 3), stride, (1, 1)),
            (num_filter, (3, 3), (1, 1), (1, 1)),
        ]
    body = data
    first_act = None
    for i, (channels, kernel, strides, padding) in enumerate(convs, start=1):
        normed = layers.batch_norm_infer(data=body, epsilon=_EPS, axis=bn_axis, name=f"{name}_bn{i}")
        act = nn.relu(data=normed)
        if first_act is None:
            first_act = act
        body = layers.conv2d(
            data=act, channels=channels, kernel_size=kernel, strides=strides, padding=padding,
            name=f"{name}_conv{i}", data_layout=data_layout, kernel_layout=kernel_layout,
        )
    if dim_match:
        shortcut = data
    else:
        shortcut = layers.conv2d(
            data=first_act, channels=num_filter, kernel_size=(1, 1), strides=stride,
            name=f"{name}_sc", data_layout=data_layout, kernel_layout=kernel_layout,
        )
    return add(body, shortcut)


def resnet(
    units: Sequence[int],
    num_stages: int,
    filter_list: Sequence[int],
    num_classes: int,
    data_shape: tuple[int, ...],
    bottle_neck: bool = True,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Function:
    """The whole network: stem, ``num_stages`` stages of residual units, classifier.

    Images of height 32 or less get a single 3x3 stem convolution; larger ones
    a 7x7 strided convolution, batch norm, relu and max pooling.
    """
    if len(units) != num_stages:
        raise ValueError(f"resnet: {len(units)} unit counts for {num_stages} stages")
    kernel_layout = "OIHW" if layout == "NCHW" else "HWIO"
    bn_axis = layout.index("C")
    height = data_shape[1] if layout == "NHWC" else data_shape[2]

    data = var("data", shape=data_shape, dtype=dtype)
    body = layers.batch_norm_infer(data=data, epsilon=_EPS, axis=bn_axis, scale=False, name="bn_data")
    conv_layouts = {"data_layout": layout, "kernel_layout": kernel_layout}
    if height <= 32:
        body = layers.conv2d(
            data=body, channels=filter_list[0], kernel_size=(3, 3), strides=(1, 1),
            padding=(1, 1), name="conv0", **conv_layouts,
        )
    else:
        body = layers.conv2d(
            data=body, channels=filter_list[0], kernel_size=(7, 7), strides=(2, 2),
            padding=(3, 3), name="conv0", **conv_layouts,
        )
        body = layers.batch_norm_infer(data=body, epsilon=_EPS, axis=bn_axis, name="bn0")
        body = nn.relu(data=body)
        body = nn.max_pool2d(
            data=body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout=layout
        )

    for stage in range(num_stages):
        step = 1 if stage == 0 else 2
        for unit in range(units[stage]):
            first = unit == 0
            body = residual_unit(
                body,
                filter_list[stage + 1],
                (step, step) if first else (1, 1),
                not first,
                name=f"stage{stage + 1}_unit{unit + 1}",
                bottle_neck=bottle_neck,
                data_layout=layout,
                kernel_layout=kernel_layout,
            )

    body = layers.batch_norm_infer(data=body, epsilon=_EPS, axis=bn_axis, name="bn1")
    body = nn.relu(data=body)
    body = nn.global_avg_pool2d(data=body, layout=layout)
    body = nn.batch_flatten(data=body)
    body = layers.dense_add_bias(data=body, units=num_classes, name="fc1")
    net = nn.softmax(data=body)
    return Function(free_vars(net), net)


# Depth → units per stage, for images larger than 28 pixels.
_IMAGENET_UNITS = {
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
    269: [3, 30, 48, 8],
}


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: tuple[int, ...] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
    **kwargs,
) -> Function:
    """The ResNet of ``num_layers`` layers for images of ``image_shape`` (without the batch).

    Images of height 28 or less get the three-stage CIFAR family, whose depth
    must be 6n+2 (basic units, below 164) or 9n+2 (bottleneck units, 164 and
    more); larger ones the four-stage ImageNet family (18, 34, 50, 101, 152,
    200 or 269 layers; bottleneck units from 50 on).
    """
    height = image_shape[0] if layout == "NHWC" else image_shape[1]
    data_shape = (batch_size, *image_shape)
    if height <= 28:
        num_stages = 3
        if num_layers >= 164 and (num_layers - 2) % 9 == 0:
            units = [(num_layers - 2) // 9] * num_stages
            filter_list = [16, 64, 128, 256]
            bottle_neck = True
        elif num_layers < 164 and (num_layers - 2) % 6 == 0:
            units = [(num_layers - 2) // 6] * num_stages
            filter_list = [16, 16, 32, 64]
            bottle_neck = False
        else:
            raise ValueError(f"resnet: no {num_layers}-layer variant for images of height {height}")
    else:
        num_stages = 4
        if num_layers not in _IMAGENET_UNITS:
            raise ValueError(
                f"resnet: no {num_layers}-layer variant; use one of "
                f"{', '.join(map(str, _IMAGENET_UNITS))}"
            )
        units = _IMAGENET_UNITS[num_layers]
        bottle_neck = num_layers >= 50
        filter_list = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(
        units=units,
        num_stages=num_stages,
        filter_list=filter_list,
        num_classes=num_classes,
        data_shape=data_shape,
        bottle_neck=bottle_neck,
        layout=layout,
        dtype=dtype,
    )


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    num_layers: int = 18,
    image_shape: tuple[int, ...] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
    **kwargs,
):
    """``(mod, params)`` for a ResNet (see :func:`get_net`), parameters Xavier-initialized."""
    net = get_net(
        batch_size=batch_size,
        num_classes=num_classes,
        num_layers=num_layers,
        image_shape=image_shape,
        dtype=dtype,
        layout=layout,
        **kwargs,
    )
    return create_workload(net)
