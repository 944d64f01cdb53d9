"""How a type error points at the program: the expression as short text, and where.

A message must let the user find the offending expression in a program of
100,000 nodes, so an expression is shown small (by :mod:`relaypass.ir.summary`:
its Relay text when it is small, else a sketch a few levels deep) and located
by its span when it has one, else by the global function and the field path
from that function down to it.  None of this runs unless an error is reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from relaypass.ir.expr import (
    Expr,
    Let,
)
from relaypass.ir.summary import short_text

MAX_TEXT = 300
"""Longest expression text shown in a message, in characters."""

_PRINTED_NODES = 24
"""Expressions of at most this many nodes are shown in full Relay text."""


def expr_text(expr: Expr) -> str:
    """A short text of ``expr`` for a message: its Relay text if small, else a sketch."""
    return short_text(expr, max_chars=MAX_TEXT, max_nodes=_PRINTED_NODES)


def labeled_children(node: Expr) -> Iterable[tuple[str, Expr]]:
    """The sub-expressions of ``node`` with the field path that reaches each."""
    layout = getattr(type(node), "_layout_", None)
    if layout is not None:
        yield from layout.labelled(node)


def locate(target: Expr, roots: Iterable[tuple[str, Expr]]) -> str:
    """Where ``target`` is: ``file:line:col`` from its span, plus the function and path.

    ``roots`` are ``(name, expression)`` pairs (the module's functions) searched
    in order; the first occurrence of ``target`` wins.
    """
    span = getattr(target, "span", None)
    for name, root in roots:
        path = _path_to(target, root)
        if path is None:
            continue
        where = f"in {name}"
        if path:
            where += f" at {_compress(path)}"
        binding = _enclosing_binding(target, root, path)
        if binding:
            where += f" ({binding})"
        return f"{span}: {where}" if span is not None else where
    return str(span) if span is not None else "in an expression outside the module"


def _path_to(target: Expr, root: Expr) -> list[str] | None:
    if target is root:
        return []
    parent: dict[int, tuple[Expr, str]] = {}
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        for label, kid in labeled_children(node):
            if id(kid) in seen:
                continue
            seen.add(id(kid))
            parent[id(kid)] = (node, label)
            if kid is target:
                path = []
                cur: Expr = kid
                while cur is not root:
                    up, lab = parent[id(cur)]
                    path.append(lab)
                    cur = up
                path.reverse()
                return path
            stack.append(kid)
    return None


def _compress(path: list[str]) -> str:
    """``body.body.body.value`` as ``body(x3).value``: paths through long chains stay short."""
    parts: list[str] = []
    i = 0
    while i < len(path):
        j = i
        while j < len(path) and path[j] == path[i]:
            j += 1
        run = j - i
        parts.append(path[i] if run < 3 else f"{path[i]}(x{run})")
        i = j
    return ".".join(parts)


def _enclosing_binding(target: Expr, root: Expr, path: list[str]) -> str:
    """``in the value bound to %x``: the innermost let whose value holds ``target``."""
    node = root
    found = ""
    for label in path:
        if type(node) is Let and label == "value":
            found = f"in the value bound to %{node.var.name_hint}"
        node = _child(node, label)
    return found


def _child(node: Expr, label: str) -> Expr:
    for lab, kid in labeled_children(node):
        if lab == label:
            return kid
    raise KeyError(label)
