"""``tvm.tir`` as Relay pass code uses it: dimensions (``IntImm``, ``Any``, ``Var``), layouts.

Re-exports of the dimensions tensor types hold (:mod:`relaypass.ir.types`,
:mod:`relaypass.ir.shape_expr`: ``tir.Var("n", "int64")`` and ``tir.SizeVar``
are size variables) and of the layouts the layout passes use
(:mod:`relaypass.op.data_layout`); any other TIR name raises
:class:`~relaypass.errors.RelayCompatError` (TIR needs TVM's code generator).
"""

from __future__ import annotations

from typing import Any as _AnyT

from ..op.data_layout import Layout, layout
from . import expr
from .expr import Any, FloorDiv, FloorMod, IntImm, SizeVar, Var, out_of_scope

__all__ = ["Any", "FloorDiv", "FloorMod", "IntImm", "Layout", "SizeVar", "Var", "expr", "layout"]


def __getattr__(name: str) -> _AnyT:
    return out_of_scope("tvm.tir", name)
