"""DenseNet 121/161/169/201, as Relay's ``relay.testing.densenet`` builds it.

Relay's port chains the layers of a dense block one after the other and
concatenates their outputs at the end of the block; this builder gives the
same graph, parameter names (``batch_1_<block>_<layer>_gamma``,
``conv2d_1_<block>_<layer>_weight``, ...) and specifications (including the
69 initial features of DenseNet-169).
"""

from __future__ import annotations

from ...ir.expr import Expr, Function, Var
from ...ir.types import TensorType
from ...ir.variables import free_vars
from ...op import concatenate, nn
from . import layers
from .common import create_workload

__all__ = ["get_workload"]


def _make_dense_layer(data: Expr, growth_rate: int, bn_size: int, index: str) -> Expr:
    """bn, relu, 1x1 convolution to ``bn_size * growth_rate``; bn, relu, 3x3 to ``growth_rate``."""
    body = nn.relu(layers.batch_norm_infer(data, name=f"batch_1_{index}"))
    body = layers.conv2d(body, channels=bn_size * growth_rate, kernel_size=(1, 1),
                         name=f"conv2d_1_{index}")
    body = nn.relu(layers.batch_norm_infer(body, name=f"batch_2_{index}"))
    return layers.conv2d(body, channels=growth_rate, kernel_size=(3, 3), padding=(1, 1),
                         name=f"conv2d_2_{index}")


def _make_dense_block(data: Expr, num_layers: int, bn_size: int, growth_rate: int,
                      index: int) -> Expr:
    """``num_layers`` dense layers in a chain, their outputs concatenated on the channels."""
    outputs = []
    body = data
    for i in range(num_layers):
        body = _make_dense_layer(body, growth_rate, bn_size, f"{index}_{i}")
        outputs.append(body)
    return concatenate(outputs, 1)


def _make_transition(data: Expr, num_output_features: int, index: int) -> Expr:
    """bn, relu, 1x1 convolution, 2x2 average pooling between blocks."""
    body = nn.relu(layers.batch_norm_infer(data, name=f"batch_t_{index}"))
    body = layers.conv2d(body, channels=num_output_features, kernel_size=(1, 1),
                         name=f"conv_t_{index}")
    return nn.avg_pool2d(body, pool_size=(2, 2), strides=(2, 2))


def _make_dense_net(num_init_features: int, growth_rate: int, block_config, data_shape,
                    data_dtype: str, bn_size: int = 4, classes: int = 1000) -> Function:
    """The DenseNet function for inputs of ``data_shape`` (NCHW; 224x224 images)."""
    data = Var("data", TensorType(data_shape, data_dtype))
    body = layers.conv2d(data, channels=num_init_features, kernel_size=(7, 7), strides=(2, 2),
                         padding=(3, 3), name="conv1")
    body = nn.relu(layers.batch_norm_infer(body, name="batch1"))
    body = nn.max_pool2d(body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    last = len(block_config) - 1
    for i, num_layers in enumerate(block_config):
        body = _make_dense_block(body, num_layers, bn_size, growth_rate, i)
        features += num_layers * growth_rate
        if i != last:
            features //= 2
            body = _make_transition(body, features, i)
    body = nn.relu(layers.batch_norm_infer(body, name="batch2"))
    body = nn.avg_pool2d(body, pool_size=(7, 7))
    body = nn.batch_flatten(body)
    out = layers.dense_add_bias(body, units=classes, name="dense")
    return Function(free_vars(out), out)


# size → (initial features, growth rate, layers per block)
_SPECS = {
    121: (64, 32, [6, 12, 24, 16]),
    161: (96, 48, [6, 12, 36, 24]),
    169: (69, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]),
}


def get_workload(
    densenet_size: int = 121,
    classes: int = 1000,
    batch_size: int = 4,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
):
    """``(mod, params)`` for DenseNet-``densenet_size`` (121, 161, 169 or 201)."""
    if densenet_size not in _SPECS:
        raise ValueError(f"densenet: no DenseNet-{densenet_size}; use 121, 161, 169 or 201")
    num_init_features, growth_rate, block_config = _SPECS[densenet_size]
    net = _make_dense_net(num_init_features, growth_rate, block_config,
                          (batch_size, *image_shape), dtype, 4, classes)
    return create_workload(net)
