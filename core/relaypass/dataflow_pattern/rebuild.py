"""Rebuilding a program bottom-up, replacing the roots of groups on the way.

Rewriting and partitioning both walk the program once in post-order, rebuild
each node from its rewritten children (keeping the node itself when no child
changed, as TVM's copy-on-write mutators do) and hand each group root, with
its rebuilt form, to a function that may replace it.  The walk uses an
explicit stack, so chains of any length and deeply nested lets are fine.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.ir.expr import Expr, children, set_checked_type
from relaypass.ir.fields import rebuild

__all__ = ["rebuild_bottom_up"]


def rebuild_bottom_up(expr: Expr, at_root: Callable[[Expr, Expr, dict[Expr, Expr]], Expr],
                      roots: set[Expr] | dict[Expr, object],
                      keep_types: bool = False) -> tuple[Expr, dict[Expr, Expr]]:
    """``expr`` rebuilt, with ``at_root(pre, post, memo)`` deciding each root's replacement.

    ``memo`` maps every node visited so far to its rebuilt form; it is also
    returned.  With ``keep_types`` a node rebuilt only because a child
    changed keeps the type of the node it replaces.
    """
    memo: dict[Expr, Expr] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            kids = children(node)
            if kids:
                new_kids = [memo[k] for k in kids]
                post = node
                for a, b in zip(kids, new_kids):
                    if a is not b:
                        post = rebuild(node, new_kids)
                        if keep_types and node._checked_type is not None:
                            set_checked_type(post, node._checked_type)
                        break
            else:
                post = node
            if node in roots:
                post = at_root(node, post, memo)
            memo[node] = post
            continue
        if node in memo:
            continue
        stack.append((node, True))
        for kid in reversed(children(node)):
            if kid not in memo:
                stack.append((kid, False))
    return memo[expr], memo
