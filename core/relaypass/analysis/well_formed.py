"""Well-formedness: every variable bound once, and used only inside its scope."""

from __future__ import annotations

from ..ir.expr import Expr, Var, children
from ..ir.traversal import post_order


def ill_formed_reason(expr: Expr) -> str | None:
    """Why ``expr`` is not well formed, or None when it is.

    Well formed means: every variable is bound at most once, and every use of a
    bound variable lies within the scope of its binding (a let's variable is in
    scope in its value, for recursive closures, and in its body; a function's
    parameters in its body).  Variables bound nowhere are free and allowed.
    """
    bound_anywhere: set[Var] = set()
    for node in post_order(expr):
        for v in type(node)._layout_.bound_vars(node):
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
        # The variables a node binds (a function's parameters, a let's variable)
        # are in scope in all its children.
        binders = type(node)._layout_.bound_vars(node)
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
