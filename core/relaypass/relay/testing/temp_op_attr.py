"""``relay.testing.temp_op_attr``: TVM's module name for :class:`relaypass.testing.temp_op_attr.TempOpAttr`."""

from ...testing.temp_op_attr import TempOpAttr

__all__ = ["TempOpAttr"]
