"""``relay.op.transform``: TVM's module of these operator constructors (re-exported).

TVM defines here some operators that relaypass keeps in other families:
``cast`` and ``cast_like`` and ``trilu`` (elementwise), ``one_hot`` and
``argwhere`` (indexing), ``cumsum`` and ``cumprod`` (scan),
``scatter_elements`` and ``scatter_nd`` (scatter), ``sparse_to_dense``
(sparse); they are re-exported
from there.
"""

from ...op.indexing import argwhere, gather_nd, one_hot
from ...op.scan import cumprod, cumsum
from ...op.scatter import scatter_elements, scatter_nd
from ...op.sparse import sparse_to_dense
from ...op.tensor import cast, cast_like, trilu
from ...op.transform import *  # noqa: F403
from ...op.transform import __all__ as _transform_all

__all__ = [*_transform_all, "cast", "cast_like", "trilu", "one_hot", "argwhere", "gather_nd",
           "cumsum", "cumprod", "scatter_elements", "scatter_nd", "sparse_to_dense"]
