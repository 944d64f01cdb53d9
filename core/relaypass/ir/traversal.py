"""Walking every node of an expression without recursion.

The functors in :mod:`relaypass.functor` are the way to write a pass; these
two helpers are for the IR itself and for analyses that only need to see
each node once, children first (Relay's ``post_order_visit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .expr import Expr, children


def post_order_visit(expr: Expr, fvisit: Callable[[Expr], Any]) -> None:
    """Call ``fvisit`` on every node reachable from ``expr``, children first, each once.

    Goes into every kind of node (function bodies, let bindings, branches),
    with an explicit stack, so any depth of nesting is fine.
    """
    visited: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if expanded:
            fvisit(node)
            continue
        if key in visited:
            continue
        visited.add(key)
        stack.append((node, True))
        for kid in reversed(children(node)):
            if id(kid) not in visited:
                stack.append((kid, False))


def post_order(expr: Expr) -> list[Expr]:
    """Every node reachable from ``expr``, each once, children before parents."""
    nodes: list[Expr] = []
    post_order_visit(expr, nodes.append)
    return nodes
