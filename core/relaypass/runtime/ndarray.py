"""``tvm.runtime.ndarray`` (also ``tvm.nd``): re-exports of :mod:`relaypass.ir.ndarray`."""

from ..ir.ndarray import *  # noqa: F403
from ..ir.ndarray import __all__ as __all__
