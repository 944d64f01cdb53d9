"""``relay.testing.resnet``: ResNet, as Relay's builder makes it."""

from ...testing.workloads.resnet import (
    get_net,
    get_workload,
    residual_unit,
    resnet,
)

__all__ = ["get_net", "get_workload", "residual_unit", "resnet"]
