"""``relay.testing.init``: parameter initializers and ``create_workload``."""

from ...testing.workloads.common import create_workload
from ...testing.workloads.init import Constant, Initializer, Xavier

__all__ = ["Constant", "Initializer", "Xavier", "create_workload"]
