"""``relay.testing.dqn``: the Nature DQN, as Relay's builder makes it."""

from ...testing.workloads.dqn import (
    get_net,
    get_workload,
)

__all__ = ["get_net", "get_workload"]
