"""Program analyses of ``relay.analysis``: variables, type variables, well-formedness.

All of them walk the program with an explicit stack, so they take any depth.
Orders follow Relay: variables are listed in post-DFS order of first
appearance, children left to right.
"""

from __future__ import annotations

from ..functor import post_order_visit
from ..ir.expr import Expr, Function, Let, Var, children
from ..ir.types import FuncType, RefType, TupleType, Type, TypeVar


def _post_order(expr: Expr) -> list[Expr]:
    nodes: list[Expr] = []
    post_order_visit(expr, nodes.append)
    return nodes


def bound_vars(expr: Expr) -> list[Var]:
    """Variables bound by lets and function parameters in ``expr``."""
    out: list[Var] = []
    seen: set[Var] = set()
    for node in _post_order(expr):
        if isinstance(node, Function):
            binders: tuple[Var, ...] = node.params
        elif isinstance(node, Let):
            binders = (node.var,)
        else:
            continue
        for v in binders:
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out


def all_vars(expr: Expr) -> list[Var]:
    """Every variable in ``expr``, bound or free."""
    return [n for n in _post_order(expr) if type(n) is Var]


def free_vars(expr: Expr) -> list[Var]:
    """Variables used in ``expr`` but bound nowhere inside it, in order of appearance."""
    bound = set(bound_vars(expr))
    return [v for v in all_vars(expr) if v not in bound]


def _type_vars_of(ty: Type | None, bound: set[TypeVar], out: list[TypeVar], seen: set[TypeVar]) -> None:
    stack: list[tuple[Type, frozenset[TypeVar]]] = [(ty, frozenset(bound))] if ty is not None else []
    while stack:
        t, scope = stack.pop()
        if isinstance(t, TypeVar):
            if t not in scope and t not in seen:
                seen.add(t)
                out.append(t)
        elif isinstance(t, FuncType):
            inner = scope | set(t.type_params)
            stack.append((t.ret_type, inner))
            stack.extend((a, inner) for a in reversed(t.arg_types))
        elif isinstance(t, TupleType):
            stack.extend((f, scope) for f in reversed(t.fields))
        elif isinstance(t, RefType):
            stack.append((t.value, scope))


def free_type_vars(expr_or_type: Expr | Type) -> list[TypeVar]:
    """Type variables used in ``expr_or_type`` and not bound by a type parameter list."""
    out: list[TypeVar] = []
    seen: set[TypeVar] = set()
    if isinstance(expr_or_type, Type):
        _type_vars_of(expr_or_type, set(), out, seen)
        return out
    bound: set[TypeVar] = set()
    nodes = _post_order(expr_or_type)
    for node in nodes:
        if isinstance(node, Function):
            bound.update(node.type_params)
    for node in nodes:
        if isinstance(node, Var):
            _type_vars_of(node.type_annotation, bound, out, seen)
        elif isinstance(node, Function):
            _type_vars_of(node.ret_type, bound, out, seen)
    return out


def bound_type_vars(expr: Expr) -> list[TypeVar]:
    """Type variables bound by the type parameters of functions in ``expr``."""
    out: list[TypeVar] = []
    for node in _post_order(expr):
        if isinstance(node, Function):
            out.extend(tp for tp in node.type_params if tp not in out)
    return out


def all_type_vars(expr: Expr) -> list[TypeVar]:
    """Bound and free type variables of ``expr``."""
    out = bound_type_vars(expr)
    out.extend(t for t in free_type_vars(expr) if t not in out)
    return out


def ill_formed_reason(expr: Expr) -> str | None:
    """Why ``expr`` is not well formed, or None when it is.

    Well formed means: every variable is bound at most once, and every use of a
    bound variable lies within the scope of its binding (a let's variable is in
    scope in its value, for recursive closures, and in its body; a function's
    parameters in its body).  Variables bound nowhere are free and allowed.
    """
    bound_anywhere: set[Var] = set()
    for node in _post_order(expr):
        binders = node.params if isinstance(node, Function) else (node.var,) if isinstance(node, Let) else ()
        for v in binders:
            if v in bound_anywhere:
                return f"variable %{v.name_hint} is bound more than once"
            bound_anywhere.add(v)

    in_scope: set[Var] = set()
    seen: set[Expr] = set()
    _EXIT = object()
    stack: list[object] = [expr]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            for v in item[1]:
                in_scope.discard(v)
            continue
        node = item
        if type(node) is Var:
            if node in bound_anywhere and node not in in_scope:
                return f"variable %{node.name_hint} is used outside the scope that binds it"
            continue
        if node in seen:
            continue
        seen.add(node)  # type: ignore[arg-type]
        if isinstance(node, Function):
            binders = node.params
        elif isinstance(node, Let):
            binders = (node.var,)
        else:
            binders = ()
        if binders:
            in_scope.update(binders)
            stack.append((_EXIT, binders))
            kids = [k for k in children(node) if k not in binders]  # type: ignore[arg-type]
        else:
            kids = list(children(node))  # type: ignore[arg-type]
        stack.extend(reversed(kids))
    return None


def well_formed(expr: Expr) -> bool:
    """True when every variable is bound once and used only in its scope."""
    return ill_formed_reason(expr) is None
