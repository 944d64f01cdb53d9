"""``relay.testing.inception_v3``: Inception v3, as Relay's builder makes it."""

from ...testing.workloads.inception_v3 import (
    Conv,
    Inception7A,
    Inception7B,
    Inception7C,
    Inception7D,
    Inception7E,
    Pooling,
    get_net,
    get_workload,
)

__all__ = ["Conv", "Inception7A", "Inception7B", "Inception7C", "Inception7D", "Inception7E", "Pooling", "get_net", "get_workload"]
