"""``relay.testing.vgg``: VGG, as Relay's builder makes it."""

from ...testing.workloads.vgg import (
    get_classifier,
    get_feature,
    get_net,
    get_workload,
)

__all__ = ["get_classifier", "get_feature", "get_net", "get_workload"]
