"""``tvm.tir`` as Relay pass code uses it: ``tvm.tir.IntImm``, ``tvm.tir.Any``, ``tvm.tir.layout``.

Re-exports of :mod:`relaypass.ir.types` and of the layouts the layout passes use
(:mod:`relaypass.op.data_layout`); any other TIR name raises
:class:`~relaypass.errors.RelayCompatError` (TIR needs TVM's code generator).
"""

from __future__ import annotations

from typing import Any as _AnyT

from ..op.data_layout import Layout, layout
from . import expr
from .expr import Any, IntImm, out_of_scope

__all__ = ["Any", "IntImm", "Layout", "expr", "layout"]


def __getattr__(name: str) -> _AnyT:
    return out_of_scope("tvm.tir", name)
