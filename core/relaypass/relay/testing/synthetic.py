"""``relay.testing.synthetic``: the small synthetic network, as Relay's builder makes it."""

from ...testing.workloads.synthetic import (
    get_net,
    get_workload,
)

__all__ = ["get_net", "get_workload"]
