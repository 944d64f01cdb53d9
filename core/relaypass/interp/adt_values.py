"""Values of algebraic data types, and matching values against patterns.

A constructor called on values makes a :class:`ConstructorValue` (TVM's
``relay.backend.interpreter.ConstructorValue``: ``tag``, ``fields``,
``constructor``); a match tries its clauses' patterns on a value in order
with :func:`match_pattern`, and a value no clause fits is a
:class:`MatchFailureError` naming its constructor.

Values may be long chains (a list of 10,000 elements is 10,000 nested
values), so nothing here recurses along a value: matching goes as deep as the
pattern is written, and printing a value shows a bounded part of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import EvaluationError
from ..ir.adt import Constructor, Pattern, PatternConstructor, PatternTuple, PatternVar

__all__ = [
    "ConstructorValue", "MatchFailureError", "convert_value", "match_pattern", "value_text",
]

_SHOWN_FIELDS = 24
"""How many nested fields the text of a value shows before ``...``."""


class MatchFailureError(EvaluationError):
    """No clause of a match fits the value it met (a ``match?``, or a ``match`` InferType
    warned about).  ``constructor`` is the value's constructor (None for a tuple or tensor)."""

    def __init__(self, message: str, constructor: Constructor | None = None) -> None:
        super().__init__(message)
        self.constructor = constructor


class ConstructorValue:
    """A value built by a constructor: its ``tag``, its ``fields`` and the ``constructor``."""

    __slots__ = ("tag", "fields", "constructor")

    def __init__(self, tag: int, fields: Iterable[Any], constructor: Constructor) -> None:
        self.tag = int(tag)
        self.fields = tuple(fields)
        self.constructor = constructor

    def __repr__(self) -> str:
        return value_text(self)


def _same_constructor(a: Constructor, b: Constructor) -> bool:
    return a is b or a.name_hint == b.name_hint and a.belong_to == b.belong_to


def match_pattern(pattern: Pattern, value: Any, bindings: dict[Any, Any]) -> bool:
    """Whether ``value`` fits ``pattern``; the variables it binds are added to ``bindings``."""
    stack: list[tuple[Pattern, Any]] = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        t = type(p)
        if t is PatternVar:
            bindings[p.var] = v
        elif t is PatternConstructor:
            if type(v) is not ConstructorValue or not _same_constructor(p.constructor, v.constructor):
                return False
            if len(v.fields) != len(p.patterns):
                raise EvaluationError(
                    f"the pattern {p} has {len(p.patterns)} sub-pattern(s) for a value of "
                    f"{len(v.fields)} field(s)"
                )
            stack.extend(zip(p.patterns, v.fields))
        elif t is PatternTuple:
            if type(v) is not tuple or len(v) != len(p.patterns):
                return False
            stack.extend(zip(p.patterns, v))
    return True


def convert_value(value: Any, leaf: Callable[[Any], Any],
                  container: Callable[[list[Any]], Any]) -> Any:
    """``value`` with each tuple made ``container(fields)`` and anything else but a
    ConstructorValue made ``leaf(item)``, fields first, each shared value once.

    Values nest as deep as a program makes them (a list of 10,000 elements), so
    this runs on an explicit stack.
    """
    done: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, ready = stack.pop()
        key = id(item)
        if key in done:
            continue
        t = type(item)
        if t is not ConstructorValue and not isinstance(item, tuple):
            done[key] = leaf(item)
            continue
        parts = item.fields if t is ConstructorValue else item
        if not ready:
            stack.append((item, True))
            stack.extend((p, False) for p in parts if id(p) not in done)
            continue
        fields = [done[id(p)] for p in parts]
        done[key] = (ConstructorValue(item.tag, fields, item.constructor) if t is ConstructorValue
                     else container(fields))
    return done[id(value)]


def value_text(value: Any) -> str:
    """A short text of an interpreter value: ``Cons(Tensor[(), int32], Cons(..., ...))``."""
    out: list[str] = []
    budget = [_SHOWN_FIELDS]
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            continue
        if budget[0] <= 0:
            out.append("...")
            continue
        budget[0] -= 1
        if type(item) is ConstructorValue:
            name = item.constructor.name_hint
            if not item.fields:
                out.append(name)
                continue
            out.append(name + "(")
            stack.append(")")
            for i in range(len(item.fields) - 1, -1, -1):
                stack.append(item.fields[i])
                if i:
                    stack.append(", ")
        elif type(item) is tuple:
            out.append("(")
            stack.append(",)" if len(item) == 1 else ")")
            for i in range(len(item) - 1, -1, -1):
                stack.append(item[i])
                if i:
                    stack.append(", ")
        elif hasattr(item, "shape") and hasattr(item, "dtype"):
            out.append(f"Tensor[({', '.join(str(d) for d in item.shape)}), {item.dtype}]")
        else:
            out.append(type(item).__name__)
    return "".join(out)
