"""The standard operator set: definitions, type relations, numpy kernels, fusion patterns.

Importing this package registers every standard operator; the IR does so on
the first lookup of an operator, so users rarely import it themselves.  The
constructors of the top-level operators (``add``, ``reshape``, ``sum``, ...)
are re-exported here and under ``relay``; ``nn`` holds the neural-network
ones (``relay.nn``).  Each family lives in its own module: ``tensor``
(elementwise and creation), ``transform`` (shape and data movement),
``indexing`` (also ``one_hot``, ``argwhere``), ``reduce``, ``sort`` (``argsort``, ``topk``),
``scan`` (``cumsum``, ``cumprod``), ``scatter`` (``scatter_elements``, ``scatter_nd``),
``contraction`` (``einsum``), ``fast_math`` (``fast_exp``, ``fast_tanh``, ``fast_erf``,
``nn.fast_softmax``: TVM's approximations, for FastMath), ``annotation`` (markers for passes, such as ``stop_fusion``), the ``nn``
package and ``image`` (``image.resize2d``, TVM's ``relay.image``), ``vision``
(``vision.roi_align``, ``vision.roi_pool``, TVM's ``relay.vision``), ``sparse``
(``sparse_to_dense``) and ``dynamic`` (the ``dyn.*`` operators, whose shapes are
tensors: the constructors above build them when given an expression for a shape).

To add an operator of your own, call :func:`relaypass.ir.op.register_op`
(see docs/operators.md).
"""

from . import (
    annotation,  # noqa: F401  (registers annotation.stop_fusion)
    contraction,
    dynamic,  # noqa: F401  (registers the dyn.* operators)
    fast_math,
    image,
    indexing,
    nn,
    reduce,
    scan,
    scatter,
    sort,
    sparse,
    tensor,
    transform,
    vision,
)
from .contraction import *  # noqa: F403
from .fast_math import *  # noqa: F403
from .indexing import *  # noqa: F403
from .reduce import *  # noqa: F403
from .scan import *  # noqa: F403
from .scatter import *  # noqa: F403
from .sort import *  # noqa: F403
from .sparse import *  # noqa: F403
from .tensor import *  # noqa: F403
from .transform import *  # noqa: F403
from .tuple_wrapper import TupleWrapper

# isort: split
# Relay's layout rules and conversions (ConvertLayout, AlterOpLayout), attached to the
# operators above once they are all registered.
from . import layout_conversion, layout_inference  # noqa: F401

__all__ = [
    "nn", "image", "vision", "TupleWrapper",
    *tensor.__all__, *transform.__all__, *indexing.__all__, *reduce.__all__,
    *sort.__all__, *scan.__all__, *scatter.__all__, *contraction.__all__,
    *fast_math.__all__, *sparse.__all__,
]
