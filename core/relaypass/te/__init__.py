"""``tvm.te`` as Relay code uses it: ``te.var`` and ``te.size_var`` make symbolic dimensions.

Relay tests and passes write a dynamic dimension as ``te.size_var("n")``
(or ``te.var``); both give a :class:`~relaypass.ir.types.SizeVar`, the
dimension tensor types hold.  Everything else of TVM's tensor expressions
describes computations for its code generator: those names are the
out-of-scope placeholders of :mod:`relaypass.out_of_scope`, raising
:class:`~relaypass.errors.RelayCompatError` where used.
"""

from __future__ import annotations

from ..ir.types import SizeVar
from ..out_of_scope import placeholder_attribute

__all__ = ["size_var", "var"]


def var(name: str = "tindex", dtype: str = "int32", span: object = None) -> SizeVar:
    """TVM's ``te.var``: a symbolic dimension (TVM's default dtype, int32)."""
    return SizeVar(name, dtype)


def size_var(name: str = "size", dtype: str = "int32", span: object = None) -> SizeVar:
    """TVM's ``te.size_var``: a symbolic dimension known to be non-negative, as every extent is."""
    return SizeVar(name, dtype)


__getattr__ = placeholder_attribute("relaypass.te")
