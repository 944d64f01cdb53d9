"""``relay.function``: TVM's module of the ``Function`` class (``from tvm.relay.function import Function``)."""

from ..ir.expr import Function

__all__ = ["Function"]
