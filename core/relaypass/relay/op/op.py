"""``relay.op.op``: the operator registry under TVM's module name."""

from ...ir.op import Op, OpPattern, register_op_attr, register_pattern

get = Op.get

__all__ = ["Op", "OpPattern", "get", "register_op_attr", "register_pattern"]
