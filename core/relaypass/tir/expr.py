"""``tvm.tir.expr``: the TIR expressions Relay types hold as dimensions.

A tensor type's dimensions are :class:`IntImm` (ints that read as TVM's
``tir.IntImm``), :class:`Any`, size variables (``Var`` and ``SizeVar``,
both :class:`~relaypass.ir.types.SizeVar`) and the expressions type
relations compute from them (``n*4``: sums and products, ``FloorDiv``,
``FloorMod``); nothing else of TIR exists in relaypass.
"""

from __future__ import annotations

from typing import Any as _AnyT

from ..errors import RelayCompatError
from ..ir.shape_expr import FloorDiv, FloorMod, SizeExpr
from ..ir.types import Any, IntImm, SizeVar

__all__ = [
    "Any", "FloorDiv", "FloorMod", "IntImm", "SizeExpr", "SizeVar", "TirOutOfScopeError", "Var",
    "out_of_scope",
]

Var = SizeVar
"""TVM's ``tir.Var("n", "int64")``: in a Relay type, a size variable."""


class TirOutOfScopeError(RelayCompatError, AttributeError):
    """A TIR name relaypass does not have (an AttributeError too, so ``hasattr`` says False)."""


def out_of_scope(module: str, name: str) -> _AnyT:
    """A module's ``__getattr__`` for the TIR names relaypass does not have."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise TirOutOfScopeError(
        f"{module}.{name}", "TIR is TVM's low-level IR; relaypass has only the dimensions "
        "of tensor types (IntImm, Any, Var/SizeVar and their sums, products and divisions)"
    )


def __getattr__(name: str) -> _AnyT:
    return out_of_scope("tvm.tir.expr", name)
