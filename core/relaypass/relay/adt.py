"""``relay.adt``: algebraic data types under TVM's module name (``tvm.relay.adt``)."""

from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)

__all__ = [
    "Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple",
    "PatternVar", "PatternWildcard", "TypeData",
]
