"""``relay.op.dyn``: constructors of the ``dyn.*`` operators, shapes given as tensors.

Relay's constructors (``relay.reshape`` with an expression for ``newshape``)
already build these calls; code that wants the dynamic operator whatever its
arguments names it here, as on TVM (``relay.op.dyn._make.reshape``, or
``relay.op.dyn.reshape``).  The operators live in :mod:`relaypass.op.dynamic`;
``relay.op.dyn.nn`` and ``relay.op.dyn.image`` hold ``pad``, ``upsampling``,
``upsampling3d`` and ``resize2d`` as on TVM.
"""

from ....op.dynamic import (
    broadcast_to,
    expand_dims,
    full,
    one_hot,
    ones,
    reshape,
    sparse_to_dense,
    squeeze,
    strided_slice,
    tile,
    topk,
    zeros,
)
from . import _make, image, nn  # noqa: F401  (TVM's submodules, as attributes)

__all__ = [
    "broadcast_to", "expand_dims", "full", "one_hot", "ones", "reshape", "sparse_to_dense",
    "squeeze", "strided_slice", "tile", "topk", "zeros",
]
