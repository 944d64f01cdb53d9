"""``relay.op.dyn.image``: ``dyn.image.resize2d``."""

from .....op.dynamic import resize2d
from . import _make  # noqa: F401  (TVM's submodule, as an attribute)

__all__ = ["resize2d"]
