"""``relay.testing.squeezenet``: SqueezeNet, as Relay's builder makes it."""

from ...testing.workloads.squeezenet import (
    get_net,
    get_workload,
)

__all__ = ["get_net", "get_workload"]
