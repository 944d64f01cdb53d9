"""``relay.testing.densenet``: DenseNet, as Relay's builder makes it."""

from ...testing.workloads.densenet import (
    get_workload,
)

__all__ = ["get_workload"]
