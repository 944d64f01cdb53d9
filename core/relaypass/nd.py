"""``tvm.nd``: ``tvm.nd.array``, ``tvm.nd.NDArray``, ``tvm.nd.empty``, ``tvm.nd.cpu``...

Re-exports of :mod:`relaypass.ir.ndarray`, the same names as
:mod:`relaypass.runtime.ndarray`.
"""

from .ir.ndarray import *  # noqa: F403
from .ir.ndarray import __all__ as __all__
