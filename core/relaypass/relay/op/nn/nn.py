"""``relay.op.nn.nn``: TVM's module of the neural-network constructors (re-exported)."""

from ....op.nn import *  # noqa: F403
from ....op.nn import __all__  # noqa: F401
