"""Which values a match leaves unhandled: Relay's ``relay.analysis.unmatched_cases``.

A value escapes a match when no clause's pattern fits it.  The search keeps
candidate patterns, starting from ``_`` (any value), and refines them clause
by clause: a candidate that a clause's pattern covers whole is handled; one
that the pattern clashes with goes on to the next clause; one the pattern
covers only in part (the pattern names constructors the candidate leaves
open) is split into one candidate per constructor of that type, or per
combination of the sub-candidates of its fields, and each is checked again.
The candidates no clause accepts are the answer, as patterns built of
constructors and wildcards (what InferType reports for a ``match`` that claims
to be complete).

Constructors are told apart by name and type; patterns are as deep as they
are written, so the recursion here follows their nesting only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product

from ..errors import TypeInferenceError
from ..ir.adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternWildcard,
    TypeData,
)
from ..ir.module import IRModule
from ..ir.types import GlobalTypeVar

__all__ = ["unmatched_cases"]

_MATCH, _CLASH, _OPEN = 0, 1, 2


def unmatched_cases(
    match: Match, mod: IRModule | Mapping[GlobalTypeVar, TypeData] | None = None
) -> list[Pattern]:
    """The patterns of the values no clause of ``match`` handles (empty: the match is complete).

    ``mod`` (a module, or its type definitions) gives each constructor's
    siblings; a match on constructors needs it.  A constructor whose type it
    does not define is a :class:`~relaypass.errors.TypeInferenceError`.
    """
    if not isinstance(match, Match):
        raise TypeError(f"unmatched_cases expects a Match, not {type(match).__name__}")
    if mod is None:
        types: Mapping[GlobalTypeVar, TypeData] = {}
    elif isinstance(mod, IRModule):
        types = mod.type_definitions
    else:
        types = mod
    unhandled: list[Pattern] = []
    candidates: list[Pattern] = [PatternWildcard()]
    while candidates:
        candidate = candidates.pop()
        for pattern in match.patterns:
            result = _check(pattern, candidate)
            if result == _CLASH:
                continue
            if result == _OPEN:
                candidates.extend(_expand(pattern, candidate, types))
            break
        else:
            unhandled.append(candidate)
    return unhandled


def _same_constructor(a: Constructor, b: Constructor) -> bool:
    return a is b or a.name_hint == b.name_hint and a.belong_to == b.belong_to


def _check(pattern: Pattern, candidate: Pattern) -> int:
    """Whether ``pattern`` covers ``candidate`` (_MATCH), excludes it (_CLASH), or covers a part."""
    t = type(pattern)
    if t is PatternConstructor:
        if type(candidate) is not PatternConstructor:
            return _OPEN
        if not _same_constructor(pattern.constructor, candidate.constructor):
            return _CLASH
    elif t is PatternTuple:
        if type(candidate) is not PatternTuple:
            return _OPEN
    else:
        return _MATCH  # a wildcard or a variable
    result = _MATCH
    for sub, cand in zip(pattern.patterns, candidate.patterns):
        found = _check(sub, cand)
        if found == _CLASH:
            return _CLASH
        if found == _OPEN:
            result = _OPEN
    return result


def _expand(pattern: Pattern, candidate: Pattern, types: Mapping[GlobalTypeVar, TypeData]
            ) -> list[Pattern]:
    """``candidate`` split into finer candidates, as far as ``pattern`` tells them apart."""
    t = type(pattern)
    if t is PatternConstructor:
        if type(candidate) is PatternWildcard:
            header = pattern.constructor.belong_to
            data = types.get(header)
            if data is None:
                raise TypeInferenceError(
                    f"constructor {pattern.constructor.name_hint} belongs to type "
                    f"{header.name_hint}, which the module does not define"
                )
            return [PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
                    for c in data.constructors]
        return [PatternConstructor(candidate.constructor, fields)
                for fields in _fields(pattern.patterns, candidate.patterns, types)]
    if t is PatternTuple:
        if type(candidate) is PatternWildcard:
            return [PatternTuple([PatternWildcard() for _ in pattern.patterns])]
        return [PatternTuple(fields)
                for fields in _fields(pattern.patterns, candidate.patterns, types)]
    return [candidate]


def _fields(patterns: Sequence[Pattern], candidates: Sequence[Pattern],
            types: Mapping[GlobalTypeVar, TypeData]) -> list[tuple[Pattern, ...]]:
    """Every combination of the fields' finer candidates, the first field varying fastest (TVM's
    order)."""
    options = [_expand(p, c, types) for p, c in zip(patterns, candidates)]
    return [tuple(reversed(combo)) for combo in product(*reversed(options))]
