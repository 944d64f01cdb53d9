"""A multilayer perceptron (128 and 64 hidden units), as Relay's ``relay.testing.mlp``."""

from __future__ import annotations

from ...ir.expr import Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import nn
from .common import create_workload

__all__ = ["get_net", "get_workload"]


def get_net(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
) -> Function:
    """Flatten, then dense + bias + relu twice, then a dense + bias classifier and softmax."""
    body = nn.batch_flatten(var("data", shape=(batch_size, *image_shape), dtype=dtype))
    widths = [128, 64, num_classes]
    for i, units in enumerate(widths, start=1):
        body = nn.dense(body, var(f"fc{i}_weight"), units=units)
        body = nn.bias_add(body, var(f"fc{i}_bias"), axis=-1)
        if i < len(widths):
            body = nn.relu(body)
    out = nn.softmax(data=body)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
):
    """``(mod, params)`` for the perceptron, parameters Xavier-initialized."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
