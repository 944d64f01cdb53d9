"""``relay.op.tensor``: TVM's module of these operator constructors (re-exported)."""

from ...op.tensor import *  # noqa: F403
from ...op.tensor import __all__  # noqa: F401
