"""``relay.testing.mlp``: the multilayer perceptron, as Relay's builder makes it."""

from ...testing.workloads.mlp import (
    get_net,
    get_workload,
)

__all__ = ["get_net", "get_workload"]
