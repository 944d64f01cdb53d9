"""``relay.prelude``: Relay's standard library (``Prelude``) and its tensor arrays.

``TensorArrayOps`` (any shape), ``StaticTensorArrayOps`` (one element shape)
and ``get_tensor_array_shape``, as TVM's front ends import them.
"""

from ..frontend.prelude import Prelude
from ..frontend.tensor_array import TensorArrayOps
from ..frontend.tensor_array_base import TensorArrayError
from ..frontend.tensor_array_static import StaticTensorArrayOps, get_tensor_array_shape

__all__ = [
    "Prelude", "StaticTensorArrayOps", "TensorArrayError", "TensorArrayOps",
    "get_tensor_array_shape",
]
