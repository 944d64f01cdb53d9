"""``relay.op.reduce``: TVM's module of these operator constructors (re-exported)."""

from ...op.reduce import *  # noqa: F403
from ...op.reduce import __all__  # noqa: F401
