"""``relay.op.dyn.nn._make``: TVM's constructor table for the ``dyn.nn.*`` operators."""

from .....op.dynamic import pad, upsampling, upsampling3d

__all__ = ["pad", "upsampling", "upsampling3d"]
