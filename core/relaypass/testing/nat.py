"""Natural numbers in unary, for tests of recursion and matching (TVM's ``relay.testing.nat``).

The type ``nat`` (constructors ``zero`` and ``succ``) comes from the standard
file ``nat.rly`` (``prelude.mod.import_from_std("nat.rly")``); these helpers
turn Python integers into ``nat`` expressions and values and back.
"""

from __future__ import annotations

from typing import Any

from ..interp.adt_values import ConstructorValue
from ..ir.expr import Expr

__all__ = ["count", "make_nat_expr", "make_nat_value"]


def _constructors(prelude: Any) -> tuple[Any, Any]:
    _, zero, succ = prelude.mod.get_type("nat")
    return zero, succ


def count(prelude: Any, n: ConstructorValue) -> int:
    """The Python integer a ``nat`` value stands for."""
    zero, succ = _constructors(prelude)
    total = 0
    value = n
    while True:
        if not isinstance(value, ConstructorValue):
            raise TypeError(f"count expects a nat value, got a {type(value).__name__}")
        if value.tag == zero.tag:
            return total
        if value.tag != succ.tag:
            raise ValueError(f"count expects a nat value, got one of {value.constructor.name_hint}")
        total += 1
        value = value.fields[0]


def make_nat_value(prelude: Any, n: int) -> ConstructorValue:
    """The ``nat`` value of the non-negative integer ``n``."""
    if n < 0:
        raise ValueError(f"a nat is not negative, got {n}")
    zero, succ = _constructors(prelude)
    value = ConstructorValue(zero.tag, [], zero)
    for _ in range(n):
        value = ConstructorValue(succ.tag, [value], succ)
    return value


def make_nat_expr(prelude: Any, n: int) -> Expr:
    """The expression ``succ(succ(...zero))`` of the non-negative integer ``n``."""
    if n < 0:
        raise ValueError(f"a nat is not negative, got {n}")
    zero, succ = _constructors(prelude)
    expr = zero()
    for _ in range(n):
        expr = succ(expr)
    return expr
