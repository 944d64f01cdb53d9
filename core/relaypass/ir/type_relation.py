"""``TypeRelation``: a constraint among types, Relay's ``relay.TypeRelation``.

Relay states an operator's typing rule as a relation over its argument and
result types, and a function type may carry such constraints
(``FuncType(..., type_constraints=[TypeRelation(...)])``).  relaypass types
operator calls with the operator's relation function directly (``FTypeRelation``,
:mod:`relaypass.ir.op`) and never builds these nodes itself; they exist so
that code written for TVM can state constraints and have their kinds checked
(:func:`relaypass.analysis.kind_check.check_kind`: a relation is of kind
``Constraint``, its arguments must be types).  Like every type, a relation
compares structurally: same function, arguments, input count and attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import hooks
from .fields import DATA, SPAN, TYPES, fields
from .node import Span, slot_filler
from .types import Type


class TypeConstraint(Type):
    """The kind of type that constrains others rather than describing values (TVM's base)."""

    __slots__ = ()


class TypeRelation(TypeConstraint):
    """``func`` relates ``args``: the first ``num_inputs`` are inputs, the rest outputs.

    ``func`` is the relation function (TVM's ``EnvFunc``; any callable or None
    here), ``attrs`` the attributes it is given.
    """

    __slots__ = ("func", "args", "num_inputs", "attrs")
    _fields_ = fields(func=DATA, args=TYPES, num_inputs=DATA, attrs=DATA, span=SPAN)

    def __init__(self, func: Callable[..., Any] | None, args: Iterable[Type], num_inputs: int,
                 attrs: Any = None, span: Span | None = None):
        args_t = tuple(args)
        for a in args_t:
            if not isinstance(a, Type):
                raise TypeError(f"the arguments of a TypeRelation are types, not {type(a).__name__}")
        _fill_type_relation(self, func, args_t, int(num_inputs), attrs, span)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TypeRelation):
            return NotImplemented if not isinstance(other, Type) else False
        return hooks.structural_equal(self, other)

    def __hash__(self) -> int:
        return hooks.structural_hash(self)

    def astext(self) -> str:
        name = getattr(self.func, "__name__", None) or ("relation" if self.func else "None")
        return f"{name}({', '.join(a.astext() for a in self.args)})"


_fill_type_relation = slot_filler(TypeRelation, "func", "args", "num_inputs", "attrs", "span")
