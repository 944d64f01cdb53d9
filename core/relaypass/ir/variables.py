"""Which variables and type variables an expression binds, uses and leaves free.

These are facts about the IR's binding structure that the IR itself needs
(``IRModule.from_expr`` abstracts over the free variables); ``relay.analysis``
and :mod:`relaypass.analysis` re-export them.

All of them walk the program with an explicit stack, so they take any depth.
Orders follow Relay: variables are listed in post-DFS order of first
appearance, children left to right.  Which fields bind variables and which
hold types is what the node kinds declare (:mod:`relaypass.ir.fields`).
"""

from __future__ import annotations

from .expr import Expr, Var
from .traversal import post_order
from .types import Type, TypeVar


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound by lets and function parameters in ``expr``."""
    out: list[Var] = []
    seen: set[Var] = set()
    for node in post_order(expr):
        for v in type(node)._layout_.bound_vars(node):
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out


def all_vars(expr: Expr) -> list[Var]:
    """Every variable in ``expr``, bound or free."""
    return [n for n in post_order(expr) if type(n) is Var]


def free_vars(expr: Expr) -> list[Var]:
    """Variables used in ``expr`` but bound nowhere inside it, in order of appearance."""
    bound = set(bound_vars(expr))
    return [v for v in all_vars(expr) if v not in bound]


def _type_vars_of(ty: Type | None, bound: set[TypeVar], out: list[TypeVar], seen: set[TypeVar]) -> None:
    """Append the type variables ``ty`` uses that neither ``bound`` nor a binder inside it binds."""
    stack: list[tuple[Type, frozenset[TypeVar]]] = [(ty, frozenset(bound))] if ty is not None else []
    while stack:
        t, scope = stack.pop()
        if t is None:
            continue
        if isinstance(t, TypeVar):
            if t not in scope and t not in seen:
                seen.add(t)
                out.append(t)
            continue
        layout = type(t)._layout_
        binders = layout.bound_type_vars(t)
        inner = scope | set(binders) if binders else scope
        stack.extend((k, inner) for k in reversed(layout.subterms(t)))


def _types_held(node: Expr) -> list[Type]:
    """The types an expression holds in its own fields: annotations, return types, type arguments."""
    out: list[Type] = []
    for f in type(node)._layout_.type_fields:
        value = getattr(node, f.name)
        if f.kind.seq:
            out.extend(value)
        elif value is not None:
            out.append(value)
    return out


def free_type_vars(expr_or_type: Expr | Type) -> list[TypeVar]:
    """Type variables used in ``expr_or_type`` and not bound by a type parameter list."""
    out: list[TypeVar] = []
    seen: set[TypeVar] = set()
    if isinstance(expr_or_type, Type):
        _type_vars_of(expr_or_type, set(), out, seen)
        return out
    bound: set[TypeVar] = set()
    nodes = post_order(expr_or_type)
    for node in nodes:
        bound.update(type(node)._layout_.bound_type_vars(node))
    for node in nodes:
        for ty in _types_held(node):
            _type_vars_of(ty, bound, out, seen)
    return out


def bound_type_vars(expr: Expr) -> list[TypeVar]:
    """Type variables bound by the type parameters of functions in ``expr``."""
    out: list[TypeVar] = []
    for node in post_order(expr):
        out.extend(tp for tp in type(node)._layout_.bound_type_vars(node) if tp not in out)
    return out


def all_type_vars(expr: Expr) -> list[TypeVar]:
    """Bound and free type variables of ``expr``."""
    out = bound_type_vars(expr)
    out.extend(t for t in free_type_vars(expr) if t not in out)
    return out
