"""``relay.frontend.common``: ``infer_type``, ``infer_shape``, ``infer_value``, ``get_const_tuple``."""

from ...frontend.common import get_const_tuple, infer_shape, infer_type, infer_value

__all__ = ["get_const_tuple", "infer_shape", "infer_type", "infer_value"]
