"""``relay.op.dyn._make``: TVM's constructor table for the ``dyn.*`` tensor operators."""

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

__all__ = [
    "broadcast_to", "expand_dims", "full", "one_hot", "ones", "reshape", "sparse_to_dense",
    "squeeze", "strided_slice", "tile", "topk", "zeros",
]
