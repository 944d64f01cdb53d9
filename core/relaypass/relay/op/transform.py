"""``relay.op.transform``: TVM's module of these operator constructors (re-exported).

TVM defines ``cast`` and ``cast_like`` here; relaypass keeps them with the
elementwise operators, so they are re-exported from there.
"""

from ...op.tensor import cast, cast_like
from ...op.transform import *  # noqa: F403
from ...op.transform import __all__ as _transform_all

__all__ = [*_transform_all, "cast", "cast_like"]
