"""``relay.op.op``: the operator registry under TVM's module name."""

from ...ir.op import (
    Op,
    OpPattern,
    register,
    register_op_attr,
    register_pattern,
    register_stateful,
)
from ...ir.op_hooks import (
    register_alter_op_layout,
    register_canonicalize,
    register_convert_op_layout,
    register_infer_correct_layout,
    register_legalize,
    register_mixed_precision_conversion,
)

get = Op.get

__all__ = [
    "Op", "OpPattern", "get", "register", "register_alter_op_layout", "register_canonicalize",
    "register_convert_op_layout", "register_infer_correct_layout", "register_legalize",
    "register_mixed_precision_conversion", "register_op_attr", "register_pattern",
    "register_stateful",
]
