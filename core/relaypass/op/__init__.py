"""The standard operator set: definitions, type relations, numpy kernels, fusion patterns.

Importing this package registers every standard operator; the IR does so on
the first lookup of an operator, so users rarely import it themselves.  The
constructors of the top-level operators (``add``, ``concatenate``, ...) are
re-exported here and under ``relay``; ``nn`` holds the neural-network ones.
"""

from . import nn, tensor, transform
from .tensor import *  # noqa: F403
from .transform import *  # noqa: F403

__all__ = ["nn", *tensor.__all__, *transform.__all__]
