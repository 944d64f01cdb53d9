"""InferType's rules for algebraic data types: definitions, constructors, match.

As Relay's type inference:

* a type definition may use only the types the module defines (each applied
  to as many arguments as it has parameters) and its own type parameters;
* a constructor has the type its definition gives it,
  ``fn [A...](inputs) -> T[A...]``, so a call instantiates its type
  parameters (and records them as the call's ``type_args``); a call with the
  wrong number of arguments is an error naming the constructor;
* a match unifies each pattern with the type of the matched value (a
  constructor pattern with its type applied to fresh unknowns, a tuple
  pattern with a tuple of them, a variable with the variable's type) and its
  clauses' bodies with each other; a ``match`` (not ``match?``) that leaves
  values unhandled gets a :class:`NonExhaustiveMatchWarning` listing them
  (Relay's ``unmatched_cases``).

Every error is a :class:`~relaypass.errors.TypeInferenceError` about the
expression it concerns (InferType adds where it is); a pattern or a
constructor of a definition also gives its own line and column.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any as _AnyT

from relaypass.analysis.unmatched_cases import unmatched_cases
from relaypass.errors import TypeInferenceError
from relaypass.ir.adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from relaypass.ir.expr import Call, Expr
from relaypass.ir.summary import type_text
from relaypass.ir.types import (
    GlobalTypeVar,
    IncompleteType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)

from .solver import substitute_type_vars

__all__ = [
    "NonExhaustiveMatchWarning", "check_constructor_call", "check_type_definitions",
    "constructor_type", "match_type", "typed_patterns", "unknown_only_in_type_arguments",
]


class NonExhaustiveMatchWarning(UserWarning):
    """A ``match`` (which claims to handle every value) leaves some values unhandled.

    The message lists them as patterns, and says where the match is; the
    interpreter raises a :class:`~relaypass.errors.EvaluationError` if such a
    value reaches it.  Write ``match?`` for a match that may be incomplete.
    """


def _error(cls: type[TypeInferenceError], message: str, expr: Expr) -> TypeInferenceError:
    err = cls(message)
    err.expr = expr
    return err


def _at(node: _AnyT) -> str:
    span = getattr(node, "span", None)
    return f" (at {span})" if span is not None else ""


# --- definitions -------------------------------------------------------------------


def check_type_definitions(types: Mapping[GlobalTypeVar, TypeData]) -> None:
    """Every type a constructor's inputs name is defined, with as many arguments as parameters."""
    for data in types.values():
        own = set(data.type_vars)
        for ctor in data.constructors:
            for ty in ctor.inputs:
                problem = _undefined_in(ty, types, own)
                if problem:
                    raise TypeInferenceError(
                        f"type {data.header.name_hint}: constructor {ctor.name_hint}"
                        f"{_at(ctor)}: {problem}"
                    )


def _undefined_in(ty: Type, types: Mapping[GlobalTypeVar, TypeData], own: set[TypeVar]) -> str:
    """What is wrong with a type written in a definition, or ''."""
    stack: list[tuple[Type, frozenset]] = [(ty, frozenset())]
    while stack:
        t, bound = stack.pop()
        k = type(t)
        if k is TypeCall and type(t.func) is GlobalTypeVar:
            data = types.get(t.func)
            if data is None:
                return f"unknown type {t.func.name_hint} (the module defines: " \
                    f"{', '.join(g.name_hint for g in types) or 'none'})"
            if len(t.args) != len(data.type_vars):
                return (f"type {t.func.name_hint} takes {len(data.type_vars)} type argument(s), "
                        f"but {type_text(t)} gives {len(t.args)}")
            stack.extend((a, bound) for a in t.args)
        elif k is GlobalTypeVar:
            return f"the type {t.name_hint} is used without its type arguments ({t.name_hint}[...])"
        elif k is TypeVar:
            if t not in own and t not in bound:
                return f"type variable {t.name_hint} is not a parameter of the type"
        else:
            layout = k._layout_
            inner = bound | frozenset(layout.bound_type_vars(t))
            stack.extend((c, inner) for c in layout.subterms(t))
    return ""


# --- constructors --------------------------------------------------------------------


def _definition(inference: _AnyT, ctor: Constructor, where: Expr) -> tuple[TypeData, Constructor]:
    """The module's definition of ``ctor``'s type, and its constructor of that name."""
    data = inference.type_defs.get(ctor.belong_to)
    if data is None:
        have = ", ".join(g.name_hint for g in inference.type_defs) or "none"
        raise _error(
            TypeInferenceError,
            f"constructor {ctor.name_hint} belongs to type {ctor.belong_to.name_hint}, which the "
            f"module does not define (it defines: {have})",
            where,
        )
    for own in data.constructors:
        if own.name_hint == ctor.name_hint:
            return data, own
    raise _error(
        TypeInferenceError,
        f"type {data.header.name_hint} of the module has no constructor {ctor.name_hint} (it "
        f"has: {', '.join(c.name_hint for c in data.constructors) or 'none'})",
        where,
    )


def constructor_type(inference: _AnyT, node: Constructor) -> Type:
    """A constructor's type: the one its definition gives it, ``fn [A...](inputs) -> T[A...]``."""
    _, own = _definition(inference, node, node)
    return own.checked_type


def check_constructor_call(call: Call) -> None:
    """A call of a constructor gives one argument per field."""
    ctor = call.op
    n = len(ctor.inputs)
    if len(call.args) != n:
        fields = ", ".join(type_text(t) for t in ctor.inputs)
        raise _error(
            TypeInferenceError,
            f"constructor {ctor.name_hint} takes {n} argument{'s' if n != 1 else ''} "
            f"({fields}), but the call gives {len(call.args)}",
            call,
        )


def unknown_only_in_type_arguments(ty: Type) -> bool:
    """Whether every unknown part of ``ty`` is (within) a type argument of a data type.

    Relay leaves such parts unknown instead of failing: nothing may ever
    determine the element type of an empty list.
    """
    stack = [ty]
    while stack:
        t = stack.pop()
        k = type(t)
        if k is IncompleteType:
            return False
        if k is not TypeCall:
            stack.extend(k._layout_.subterms(t))
    return True


# --- match -----------------------------------------------------------------------------


def match_type(inference: _AnyT, node: Match) -> Type:
    """The type of a match: its clauses' common type, its patterns fitted to the matched value."""
    solver = inference.solver
    dtype = inference.ty[node.data]
    for pattern in node.patterns:
        _fit_pattern(inference, pattern, dtype, node)
    result: Type = IncompleteType()
    for body in node.bodies:
        result = solver.unify(
            result, inference.ty[body], node,
            "the clauses of the match have types {lhs} and {rhs}, which do not unify",
        )
    if node.complete:
        missing = unmatched_cases(node, inference.type_defs)
        if missing:
            shown = ", ".join(str(p) for p in missing[:8])
            more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
            warnings.warn(
                NonExhaustiveMatchWarning(
                    f"match{_at(node)} does not handle {shown}{more}; such a value makes the "
                    "program fail when it runs (write match? for a match meant to be incomplete)"
                ),
                stacklevel=2,
            )
    return result


def _fit_pattern(inference: _AnyT, pattern: Pattern, ty: Type, match: Match) -> None:
    """Unify ``pattern`` with the type of the value it meets (patterns nest as they are written)."""
    solver = inference.solver
    t = type(pattern)
    if t is PatternWildcard:
        return
    if t is PatternVar:
        var = pattern.var
        known = inference.ty.get(var)
        if known is None:
            # A variable its clause never uses: typed (and rebuilt) here.
            ann = var.type_annotation
            if ann is not None:
                inference._note_type_vars(ann, var)
            known = inference.ty[var] = ann if ann is not None else IncompleteType()
            inference.order.append(var)
        solver.unify(
            known, ty, match,
            f"pattern variable %{var.name_hint}{_at(pattern)} has type {{lhs}}, but it is bound "
            "to a value of type {rhs}",
        )
        return
    if t is PatternTuple:
        fields = [IncompleteType() for _ in pattern.patterns]
        _unify_pattern(solver, TupleType(fields), ty, pattern, match)
        for sub, field in zip(pattern.patterns, fields):
            _fit_pattern(inference, sub, field, match)
        return
    if t is PatternConstructor:
        data, ctor = _definition(inference, pattern.constructor, match)
        if len(pattern.patterns) != len(ctor.inputs):
            raise _error(
                TypeInferenceError,
                f"the pattern {pattern}{_at(pattern)} gives {len(pattern.patterns)} "
                f"sub-pattern(s), but constructor {ctor.name_hint} has {len(ctor.inputs)} field(s)",
                match,
            )
        args = [IncompleteType() for _ in data.type_vars]
        _unify_pattern(solver, TypeCall(data.header, args), ty, pattern, match)
        mapping = dict(zip(data.type_vars, args))
        for sub, field in zip(pattern.patterns, ctor.inputs):
            _fit_pattern(inference, sub, substitute_type_vars(field, mapping), match)
        return
    raise _error(TypeInferenceError, f"unknown kind of pattern {t.__name__}", match)


def _unify_pattern(solver: _AnyT, expected: Type, ty: Type, pattern: Pattern, match: Match) -> None:
    solver.unify(
        expected, ty, match,
        f"the pattern {pattern}{_at(pattern)} matches values of type {{lhs}}, but the matched "
        "value has type {rhs}",
    )


def typed_patterns(patterns: Sequence[Pattern], memo: Mapping[Expr, Expr]) -> tuple[Pattern, ...]:
    """``patterns`` over the typed copies of their variables (``memo``); unchanged ones kept."""
    return tuple(_typed_pattern(p, memo) for p in patterns)


def _typed_pattern(pattern: Pattern, memo: Mapping[Expr, Expr]) -> Pattern:
    t = type(pattern)
    if t is PatternVar:
        var = memo.get(pattern.var, pattern.var)
        return pattern if var is pattern.var else PatternVar(var, pattern.span)
    if t is PatternWildcard:
        return pattern
    subs = tuple(_typed_pattern(p, memo) for p in pattern.patterns)
    if all(a is b for a, b in zip(subs, pattern.patterns)):
        return pattern
    if t is PatternTuple:
        return PatternTuple(subs, pattern.span)
    return PatternConstructor(pattern.constructor, subs, pattern.span)
