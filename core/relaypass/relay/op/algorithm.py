"""``relay.op.algorithm``: TVM's module of the sorting constructors (re-exported)."""

from ...op.sort import *  # noqa: F403
from ...op.sort import __all__  # noqa: F401
