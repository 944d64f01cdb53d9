"""``relay.op.transform``: TVM's module of these operator constructors (re-exported)."""

from ...op.transform import *  # noqa: F403
from ...op.transform import __all__  # noqa: F401
