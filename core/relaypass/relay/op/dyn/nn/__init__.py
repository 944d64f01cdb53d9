"""``relay.op.dyn.nn``: ``dyn.nn.pad``, ``dyn.nn.upsampling`` and ``dyn.nn.upsampling3d``."""

from .....op.dynamic import pad, upsampling, upsampling3d
from . import _make  # noqa: F401  (TVM's submodule, as an attribute)

__all__ = ["pad", "upsampling", "upsampling3d"]
