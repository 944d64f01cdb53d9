"""Inception v3 (Szegedy et al., 2015) for images of about 299x299, as Relay's builder.

Every convolution is followed by batch norm (without scale) and relu
(:func:`Conv`); the Inception7A..7E modules join their towers along the
channels.  A tower is written here as a list of convolution steps; the graph,
the parameter names and the attributes are those of Relay's
``relay.testing.inception_v3``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import concatenate, nn
from . import layers
from .common import create_workload

__all__ = [
    "Conv", "Inception7A", "Inception7B", "Inception7C", "Inception7D", "Inception7E",
    "Pooling", "get_net", "get_workload",
]

_1x1 = (1, 1)
_3x3 = (3, 3)
_NO_PAD = (0, 0)
_UNIT = (1, 1)
_TWO = (2, 2)


def Conv(data: Expr, num_filter: int, kernel=(1, 1), stride=(1, 1), pad=(0, 0), name=None,
         suffix: str = "") -> Expr:
    """Convolution ``<name><suffix>_conv1``, batch norm ``<name><suffix>_bn`` (no scale), relu."""
    conv = layers.conv2d(
        data=data, channels=int(num_filter), kernel_size=kernel, strides=stride, padding=pad,
        name=f"{name}{suffix}_conv1",
    )
    normed = layers.batch_norm_infer(data=conv, epsilon=2e-5, scale=False, name=f"{name}{suffix}_bn")
    return nn.relu(data=normed)


def Pooling(data: Expr, kernel, stride, pad, pool_type: str, name: str) -> Expr:
    """Max pooling, or average pooling that counts the padding; ``name`` is not used."""
    if pool_type == "max":
        return nn.max_pool2d(data=data, pool_size=kernel, strides=stride, padding=pad)
    if pool_type == "avg":
        return nn.avg_pool2d(
            data=data, pool_size=kernel, strides=stride, padding=pad, count_include_pad=True
        )
    raise ValueError(f"inception_v3: unknown pooling type {pool_type!r}: use 'max' or 'avg'")


# A step of a tower: (filters, suffix, kernel, padding, stride).
_Step = tuple[int, str, tuple[int, int], tuple[int, int], tuple[int, int]]


def _tower(data: Expr, name: str, steps: Sequence[_Step]) -> Expr:
    for num_filter, suffix, kernel, pad, stride in steps:
        data = Conv(data, num_filter, kernel=kernel, stride=stride, pad=pad, name=name,
                    suffix=suffix)
    return data


def _reduce(num_filter: int) -> _Step:
    """The 1x1 convolution that starts most towers."""
    return (num_filter, "_conv", _1x1, _NO_PAD, _UNIT)


def _same_pool(data: Expr, pool: str, name: str) -> Expr:
    return Pooling(data=data, kernel=_3x3, stride=_UNIT, pad=_UNIT, pool_type=pool,
                   name=f"{pool}_pool_{name}_pool")


def _projection(pooled: Expr, proj: int, name: str) -> Expr:
    return Conv(pooled, proj, kernel=_1x1, name=f"{name}_tower_2", suffix="_conv")


def Inception7A(data, num_1x1, num_3x3_red, num_3x3_1, num_3x3_2, num_5x5_red, num_5x5, pool,
                proj, name) -> Expr:
    """1x1; 1x1→5x5; 1x1→3x3→3x3; pooling→1x1."""
    branches = [
        Conv(data, num_1x1, name=f"{name}_conv"),
        _tower(data, f"{name}_tower", [
            _reduce(num_5x5_red),
            (num_5x5, "_conv_1", (5, 5), (2, 2), _UNIT),
        ]),
        _tower(data, f"{name}_tower_1", [
            _reduce(num_3x3_red),
            (num_3x3_1, "_conv_1", _3x3, _UNIT, _UNIT),
            (num_3x3_2, "_conv_2", _3x3, _UNIT, _UNIT),
        ]),
        _projection(_same_pool(data, pool, name), proj, name),
    ]
    return concatenate(tuple(branches), axis=1)


def Inception7B(data, num_3x3, num_d3x3_red, num_d3x3_1, num_d3x3_2, pool, name) -> Expr:
    """The first reduction: strided 3x3; 1x1→3x3→strided 3x3; strided max pooling."""
    branches = [
        Conv(data, num_3x3, kernel=_3x3, pad=_NO_PAD, stride=_TWO, name=f"{name}_conv"),
        _tower(data, f"{name}_tower", [
            _reduce(num_d3x3_red),
            (num_d3x3_1, "_conv_1", _3x3, _UNIT, _UNIT),
            (num_d3x3_2, "_conv_2", _3x3, _NO_PAD, _TWO),
        ]),
        Pooling(data=data, kernel=_3x3, stride=_TWO, pad=_NO_PAD, pool_type="max",
                name=f"max_pool_{name}_pool"),
    ]
    return concatenate(tuple(branches), axis=1)


def Inception7C(data, num_1x1, num_d7_red, num_d7_1, num_d7_2, num_q7_red, num_q7_1, num_q7_2,
                num_q7_3, num_q7_4, pool, proj, name) -> Expr:
    """Factorized 7x7: 1x1; 1x1→1x7→7x1; 1x1→(7x1→1x7)x2; pooling→1x1."""
    row, col = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    branches = [
        Conv(data=data, num_filter=num_1x1, kernel=_1x1, name=f"{name}_conv"),
        _tower(data, f"{name}_tower", [
            _reduce(num_d7_red),
            (num_d7_1, "_conv_1", *row, _UNIT),
            (num_d7_2, "_conv_2", *col, _UNIT),
        ]),
        _tower(data, f"{name}_tower_1", [
            _reduce(num_q7_red),
            (num_q7_1, "_conv_1", *col, _UNIT),
            (num_q7_2, "_conv_2", *row, _UNIT),
            (num_q7_3, "_conv_3", *col, _UNIT),
            (num_q7_4, "_conv_4", *row, _UNIT),
        ]),
        _projection(_same_pool(data, pool, name), proj, name),
    ]
    return concatenate(tuple(branches), axis=1)


def Inception7D(data, num_3x3_red, num_3x3, num_d7_3x3_red, num_d7_1, num_d7_2, num_d7_3x3,
                pool, name) -> Expr:
    """The second reduction: 1x1→strided 3x3; 1x1→1x7→7x1→strided 3x3; strided pooling."""
    branches = [
        _tower(data, f"{name}_tower", [
            _reduce(num_3x3_red),
            (num_3x3, "_conv_1", _3x3, _NO_PAD, _TWO),
        ]),
        _tower(data, f"{name}_tower_1", [
            _reduce(num_d7_3x3_red),
            (num_d7_1, "_conv_1", (1, 7), (0, 3), _UNIT),
            (num_d7_2, "_conv_2", (7, 1), (3, 0), _UNIT),
            (num_d7_3x3, "_conv_3", _3x3, _NO_PAD, _TWO),
        ]),
        Pooling(data=data, kernel=_3x3, stride=_TWO, pool_type=pool, pad=_NO_PAD,
                name=f"{pool}_pool_{name}_pool"),
    ]
    return concatenate(tuple(branches), axis=1)


def Inception7E(data, num_1x1, num_d3_red, num_d3_1, num_d3_2, num_3x3_d3_red, num_3x3,
                num_3x3_d3_1, num_3x3_d3_2, pool, proj, name) -> Expr:
    """Expanded filter banks: 1x1; 1x1→(1x3, 3x1); 1x1→3x3→(1x3, 3x1); pooling→1x1."""
    d3 = _tower(data, f"{name}_tower", [_reduce(num_d3_red)])
    d33 = _tower(data, f"{name}_tower_1", [
        _reduce(num_3x3_d3_red),
        (num_3x3, "_conv_1", _3x3, _UNIT, _UNIT),
    ])

    def split_pair(source: Expr, tower: str, first: int, second: int) -> list[Expr]:
        return [
            Conv(data=source, num_filter=first, kernel=(1, 3), pad=(0, 1), name=tower,
                 suffix="_mixed_conv"),
            Conv(data=source, num_filter=second, kernel=(3, 1), pad=(1, 0), name=tower,
                 suffix="_mixed_conv_1"),
        ]

    branches = [
        Conv(data=data, num_filter=num_1x1, kernel=_1x1, name=f"{name}_conv"),
        *split_pair(d3, f"{name}_tower", num_d3_1, num_d3_2),
        *split_pair(d33, f"{name}_tower_1", num_3x3_d3_1, num_3x3_d3_2),
        _projection(_same_pool(data, pool, name), proj, name),
    ]
    return concatenate(tuple(branches), axis=1)


def get_net(batch_size: int, num_classes: int, image_shape: tuple[int, ...],
            dtype: str) -> Function:
    """The Inception v3 function; the final 8x8 average pooling expects 299x299 images."""
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    # Stem.
    body = Conv(data, 32, kernel=_3x3, stride=_TWO, name="conv")
    body = Conv(body, 32, kernel=_3x3, name="conv_1")
    body = Conv(body, 64, kernel=_3x3, pad=_UNIT, name="conv_2")
    body = Pooling(data=body, kernel=_3x3, stride=_TWO, pool_type="max", pad=_NO_PAD, name="pool")
    body = Conv(body, 80, kernel=_1x1, name="conv_3")
    body = Conv(body, 192, kernel=_3x3, name="conv_4")
    body = Pooling(data=body, kernel=_3x3, stride=_TWO, pool_type="max", pad=_NO_PAD, name="pool1")
    # Inception modules.
    body = Inception7A(body, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    body = Inception7A(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    body = Inception7A(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    body = Inception7B(body, 384, 64, 96, 96, "max", "mixed_3")
    body = Inception7C(body, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4")
    body = Inception7C(body, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5")
    body = Inception7C(body, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6")
    body = Inception7C(body, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7")
    body = Inception7D(body, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    body = Inception7E(body, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    body = Inception7E(body, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    # Classifier (its bias is named fc2_bias, as in Relay).
    body = Pooling(data=body, kernel=(8, 8), stride=_UNIT, pool_type="avg", pad=_NO_PAD,
                   name="global_pool")
    body = nn.batch_flatten(body)
    body = nn.dense(body, var("fc1_weight"), units=num_classes)
    body = nn.bias_add(body, var("fc2_bias"), axis=-1)
    out = nn.softmax(data=body)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 299, 299),
    dtype: str = "float32",
):
    """``(mod, params)`` for Inception v3, parameters Xavier-initialized."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
