"""``relay.testing.dcgan``: the DCGAN generator, as Relay's builder makes it."""

from ...testing.workloads.dcgan import (
    deconv2d,
    deconv2d_bn_relu,
    get_net,
    get_workload,
)

__all__ = ["deconv2d", "deconv2d_bn_relu", "get_net", "get_workload"]
