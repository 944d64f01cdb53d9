"""``relay.op.tensor``: TVM's module of these operator constructors (re-exported; TVM also
defines ``einsum`` here)."""

from ...op.contraction import einsum
from ...op.tensor import *  # noqa: F403
from ...op.tensor import __all__ as _tensor_all

__all__ = [*_tensor_all, "einsum"]
