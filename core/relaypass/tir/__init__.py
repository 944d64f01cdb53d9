"""``tvm.tir`` as Relay pass code uses it: ``tvm.tir.IntImm`` and ``tvm.tir.Any``.

Re-exports of :mod:`relaypass.ir.types`; any other TIR name raises
:class:`~relaypass.errors.RelayCompatError` (TIR needs TVM's code generator).
"""

from __future__ import annotations

from typing import Any as _AnyT

from . import expr
from .expr import Any, IntImm, out_of_scope

__all__ = ["Any", "IntImm", "expr"]


def __getattr__(name: str) -> _AnyT:
    return out_of_scope("tvm.tir", name)
