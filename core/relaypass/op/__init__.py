"""The standard operator set: definitions, type relations, numpy kernels, fusion patterns.

Importing this package registers every standard operator; the IR does so on
the first lookup of an operator, so users rarely import it themselves.  The
constructors of the top-level operators (``add``, ``reshape``, ``sum``, ...)
are re-exported here and under ``relay``; ``nn`` holds the neural-network
ones (``relay.nn``).  Each family lives in its own module: ``tensor``
(elementwise and creation), ``transform`` (shape and data movement),
``indexing``, ``reduce``, ``sort`` (``argsort``), ``fast_math`` (``fast_exp``, ``fast_tanh``, ``fast_erf``: TVM's approximations, for FastMath),
``annotation`` (markers for passes, such as
``stop_fusion``), and the ``nn`` package.

To add an operator of your own, call :func:`relaypass.ir.op.register_op`
(see docs/operators.md).
"""

from . import (
    annotation,  # noqa: F401  (registers annotation.stop_fusion)
    fast_math,
    indexing,
    nn,
    reduce,
    sort,
    tensor,
    transform,
)
from .fast_math import *  # noqa: F403
from .indexing import *  # noqa: F403
from .reduce import *  # noqa: F403
from .sort import *  # noqa: F403
from .tensor import *  # noqa: F403
from .transform import *  # noqa: F403
from .tuple_wrapper import TupleWrapper

__all__ = [
    "nn", "TupleWrapper",
    *tensor.__all__, *transform.__all__, *indexing.__all__, *reduce.__all__,
    *sort.__all__, *fast_math.__all__,
]
