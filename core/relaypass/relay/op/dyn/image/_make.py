"""``relay.op.dyn.image._make``: TVM's constructor table for ``dyn.image.resize2d``."""

from .....op.dynamic import resize2d

__all__ = ["resize2d"]
