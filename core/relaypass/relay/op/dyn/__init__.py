"""``relay.op.dyn``: constructors of the ``dyn.*`` operators, shapes given as tensors.

Relay's constructors (``relay.reshape`` with an expression for ``newshape``)
already build these calls; code that wants the dynamic operator whatever its
arguments names it here, as on TVM (``relay.op.dyn._make.reshape``, or
``relay.op.dyn.reshape``).  The operators live in :mod:`relaypass.op.dynamic`;
``relay.op.dyn.nn`` and ``relay.op.dyn.image`` hold ``pad``, ``upsampling``,
``upsampling3d`` and ``resize2d`` as on TVM.
"""

from . import _make, image, nn  # noqa: F401  (TVM's submodules, as attributes)
from ._make import *  # noqa: F403  (the same constructors, as on TVM)
from ._make import __all__ as __all__
