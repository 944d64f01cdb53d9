"""TempOpAttr: set an operator attribute for the duration of a ``with`` block (TVM's test helper).

Tests of hook-driven passes (Legalize, ConvertLayout, AlterOpLayout) register
a function for one operator, run the pass, and must leave the registry as
they found it for the next test.  The attribute is replaced whatever its
level, and the previous value (if any) is restored on exit, as TVM's helper
does.
"""

from __future__ import annotations

from typing import Any

from ..ir.op import Op

__all__ = ["TempOpAttr"]


class TempOpAttr:
    """``with TempOpAttr("nn.conv2d", "FTVMLegalize", fn): ...``"""

    def __init__(self, op_name: str, attr_key: str, attr_value: Any) -> None:
        self.op = Op.get(op_name)
        self.attr_key = attr_key
        self.attr_value = attr_value
        self.older_attr: Any = None

    def __enter__(self) -> TempOpAttr:
        self.older_attr = self.op.get_attr(self.attr_key)
        self.op.reset_attr(self.attr_key)
        self.op.set_attr(self.attr_key, self.attr_value)
        return self

    def __exit__(self, *exc: object) -> None:
        self.op.reset_attr(self.attr_key)
        if self.older_attr is not None:
            self.op.set_attr(self.attr_key, self.older_attr)
