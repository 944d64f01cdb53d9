"""Rebuilding a program bottom-up, replacing the roots of groups on the way.

Rewriting walks the program once in post-order (partitioning has a loop of
its own, in :mod:`.partition`, which also leaves out what only a group uses), rebuilds
each node from its rewritten children (keeping the node itself when no child
changed, as TVM's copy-on-write mutators do) and hands each group root, with
its rebuilt form, to a function that may replace it.  The walk uses an
explicit stack, so chains of any length and deeply nested lets are fine.

When the caller has the program's indexed graph, the walk is a plain loop
over its post-order, and it starts late: the roots are handed over first, in
post-order, each as its own rebuilt form, for as long as they keep
themselves -- nothing below them has changed -- so a rewrite whose callbacks
keep what they found (most of them, most of the time) rebuilds nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.ir.expr import Expr, children, set_checked_type
from relaypass.ir.fields import rebuild

from .graph import IndexedGraph

__all__ = ["rebuild_bottom_up"]

AtRoot = Callable[[Expr, Expr, dict[Expr, Expr]], Expr]


class _Unchanged(dict):
    """The rebuilt forms while nothing has changed: every node is its own."""

    def __missing__(self, key: Expr) -> Expr:
        return key


def rebuild_bottom_up(expr: Expr, at_root: AtRoot, roots: set[Expr] | dict[Expr, object],
                      keep_types: bool = False,
                      graph: IndexedGraph | None = None) -> tuple[Expr, dict[Expr, Expr]]:
    """``expr`` rebuilt, with ``at_root(pre, post, memo)`` deciding each root's replacement.

    ``memo`` maps every node visited so far to its rebuilt form; it is also
    returned.  With ``keep_types`` a node rebuilt only because a child
    changed keeps the type of the node it replaces.  ``graph``: ``expr``'s
    indexed graph, when the caller has it (see the module's docstring).
    """
    if graph is not None:
        return _rebuild_in_order(graph, at_root, roots, keep_types)
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


def _rebuild_in_order(graph: IndexedGraph, at_root: AtRoot,
                      roots: set[Expr] | dict[Expr, object],
                      keep_types: bool) -> tuple[Expr, dict[Expr, Expr]]:
    index = graph.index
    unchanged = _Unchanged()
    first = -1
    replaced = None
    for root in sorted(roots, key=index.__getitem__):
        out = at_root(root, root, unchanged)
        if out is not root:
            first, replaced = index[root], out
            break
    nodes = graph.nodes
    if first < 0:
        return nodes[-1], unchanged
    memo: dict[Expr, Expr] = _Unchanged()  # the nodes before the first root are their own
    memo[nodes[first]] = replaced
    post = replaced
    get = memo.get  # a plain lookup: no call of ``__missing__`` for the unchanged
    for node in nodes[first + 1:]:
        layout = type(node)._layout_
        kids = layout.children(node)
        post = node
        for k in kids:
            if get(k, k) is not k:
                post = layout.rebuild(node, [get(k, k) for k in kids])
                if keep_types and node._checked_type is not None:
                    set_checked_type(post, node._checked_type)
                break
        if node in roots:
            post = at_root(node, post, memo)
        memo[node] = post
    return post, memo
