"""``relay.testing.mobilenet``: MobileNet, as Relay's builder makes it."""

from ...testing.workloads.mobilenet import (
    conv_block,
    get_workload,
    mobile_net,
    separable_conv_block,
)

__all__ = ["conv_block", "get_workload", "mobile_net", "separable_conv_block"]
