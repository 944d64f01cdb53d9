"""Neural-network operators, the ``relay.nn`` namespace.

One module per family: convolution (1-, 2- and 3-D, and transposed),
pooling (1-, 2- and 3-D; global and adaptive), normalization, linear (matrix
products and bias), activation, and transform (pad, dilate, upsampling,
depth_to_space, batch_flatten), and ``contrib_dense`` (``contrib_dense_pack``,
which AlterOpLayout may produce, like convolution's blocked NCHWc variants), ``deformable``
(``deformable_conv2d``);
``spatial`` holds what the 1-, 2- and 3-D families share.  Importing this package registers them.
"""

from . import (
    activation,
    contrib_dense,
    convolution,
    deformable,
    linear,
    normalization,
    pooling,
    transform,
)
from .activation import *  # noqa: F403
from .contrib_dense import *  # noqa: F403
from .convolution import *  # noqa: F403
from .deformable import *  # noqa: F403
from .linear import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .transform import *  # noqa: F403

__all__ = [
    *activation.__all__, *contrib_dense.__all__, *convolution.__all__,
    *deformable.__all__, *linear.__all__, *normalization.__all__,
    *pooling.__all__, *transform.__all__,
]
