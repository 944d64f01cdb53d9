"""``relay.op.nn`` (also ``relay.nn``): the neural-network operator constructors."""

from ....op.nn import *  # noqa: F403
from ....op.nn import __all__  # noqa: F401
from . import nn

__all__ = [*__all__, "nn"]  # noqa: F405
