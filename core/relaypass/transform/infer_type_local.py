"""``InferTypeLocal(expr)``: the type of one expression, filled in on its own nodes.

TVM's ``relay.transform.InferTypeLocal`` types an expression without the
caller building a module, and leaves ``checked_type`` on the expression's
nodes.  Here the expression goes through the registered type-inference pass
(the manifest ``role = "type-inference"``) in a module of its own; each
node of ``expr`` then takes the type of its counterpart in the typed copy,
where it has none yet.  Not part of :mod:`relaypass.transform`'s namespace
(importing it loads the IR): ``relay.transform.InferTypeLocal``.
"""

from __future__ import annotations

from ..ir.expr import Expr, Function, Var, set_checked_type
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.types import Type
from .registry import get_pass_by_role

__all__ = ["InferTypeLocal", "copy_types"]


def InferTypeLocal(expr: Expr) -> Type:  # noqa: N802  (TVM's name)
    """Infer the type of ``expr``; fills ``checked_type`` of its nodes and returns ``expr``'s."""
    if not isinstance(expr, Expr):
        raise TypeError(f"InferTypeLocal expects a Relay expression, not {type(expr).__name__}")
    typed_mod = get_pass_by_role("type-inference")(IRModule.from_expr(expr))
    main = typed_mod["main"]
    typed = main if isinstance(expr, Function) else main.body
    copy_types(expr, typed)
    return expr.checked_type


def copy_types(original: Expr, typed: Expr) -> None:
    """Give each node of ``original`` the type of the node at its place in ``typed``."""
    done: set[int] = set()
    stack = [(original, typed)]
    while stack:
        node, twin = stack.pop()
        if id(node) in done:
            continue
        done.add(id(node))
        if type(node) is Op:
            continue
        if not node.has_checked_type and twin.has_checked_type:
            set_checked_type(node, twin.checked_type)
        if type(node) is Var:
            continue
        layout = type(node)._layout_
        kids, twins = layout.children(node), type(twin)._layout_.children(twin)
        if type(twin) is type(node) and len(kids) == len(twins):
            stack.extend(zip(kids, twins))
