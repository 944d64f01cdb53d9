"""VGG 11/13/16/19 (Simonyan and Zisserman, 2014), as Relay's ``relay.testing.vgg``."""

from __future__ import annotations

from collections.abc import Sequence

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import nn
from . import layers as wrapper
from .common import create_workload

__all__ = ["get_classifier", "get_feature", "get_net", "get_workload"]


def get_feature(internal_layer: Expr, layers: Sequence[int], filters: Sequence[int],
                batch_norm: bool = False) -> Expr:
    """Stages of 3x3 convolutions (+ bias, optional batch norm, relu), each closed by 2x2 pooling.

    ``layers[i]`` convolutions of ``filters[i]`` channels make stage ``i``;
    they are named ``conv<stage>_<index>`` (and ``bn<stage>_<index>``), from 1.
    """
    body = internal_layer
    for stage, (count, channels) in enumerate(zip(layers, filters), start=1):
        for index in range(1, count + 1):
            tag = f"{stage}_{index}"
            body = wrapper.conv2d(
                data=body, kernel_size=(3, 3), padding=(1, 1), channels=channels,
                name=f"conv{tag}",
            )
            body = nn.bias_add(body, var(f"conv{tag}_bias"))
            if batch_norm:
                body = wrapper.batch_norm_infer(data=body, name=f"bn{tag}")
            body = nn.relu(data=body)
        body = nn.max_pool2d(data=body, pool_size=(2, 2), strides=(2, 2))
    return body


def get_classifier(input_data: Expr, num_classes: int) -> Expr:
    """Flatten, two 4096-unit dense layers with relu and dropout, and the class layer fc8."""
    body = nn.batch_flatten(data=input_data)
    for name in ("fc6", "fc7"):
        body = wrapper.dense_add_bias(data=body, units=4096, name=name)
        body = nn.dropout(data=nn.relu(data=body), rate=0.5)
    return wrapper.dense_add_bias(data=body, units=num_classes, name="fc8")


_SPECS = {
    11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
    13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
    16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
    19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512]),
}


def get_net(batch_size: int, image_shape: tuple[int, ...], num_classes: int, dtype: str,
            num_layers: int = 11, batch_norm: bool = False) -> Function:
    """The VGG function with ``num_layers`` (11, 13, 16 or 19) weight layers."""
    if num_layers not in _SPECS:
        raise ValueError(f"vgg: no {num_layers}-layer variant; use 11, 13, 16 or 19")
    counts, filters = _SPECS[num_layers]
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    feature = get_feature(data, counts, filters, batch_norm)
    out = nn.softmax(data=get_classifier(feature, num_classes))
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
    num_layers: int = 11,
    batch_norm: bool = False,
):
    """``(mod, params)`` for VGG, parameters Xavier-initialized."""
    net = get_net(batch_size, image_shape, num_classes, dtype, num_layers, batch_norm)
    return create_workload(net)
