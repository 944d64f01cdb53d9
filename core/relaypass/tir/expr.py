"""``tvm.tir.expr``: the two TIR expressions Relay types hold -- ``IntImm`` and ``Any``.

A tensor type's dimensions are :class:`IntImm` (ints that read as TVM's
``tir.IntImm``) or :class:`Any`; nothing else of TIR exists in relaypass.
"""

from __future__ import annotations

from typing import Any as _AnyT

from ..errors import RelayCompatError
from ..ir.types import Any, IntImm

__all__ = ["Any", "IntImm", "TirOutOfScopeError", "out_of_scope"]


class TirOutOfScopeError(RelayCompatError, AttributeError):
    """A TIR name relaypass does not have (an AttributeError too, so ``hasattr`` says False)."""


def out_of_scope(module: str, name: str) -> _AnyT:
    """A module's ``__getattr__`` for the TIR names relaypass does not have."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise TirOutOfScopeError(
        f"{module}.{name}", "TIR is TVM's low-level IR; relaypass has only the dimensions "
        "of tensor types (IntImm, Any)"
    )


def __getattr__(name: str) -> _AnyT:
    return out_of_scope("tvm.tir.expr", name)
