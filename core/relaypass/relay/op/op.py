"""``relay.op.op``: the operator registry under TVM's module name."""

from ...ir.op import (
    Op,
    OpPattern,
    register,
    register_op_attr,
    register_pattern,
    register_stateful,
)

get = Op.get

__all__ = [
    "Op", "OpPattern", "get", "register", "register_op_attr", "register_pattern",
    "register_stateful",
]
