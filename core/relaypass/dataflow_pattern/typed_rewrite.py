"""The rewrite driver of SimplifyExpr: typed callbacks that see both the original and the rewrite.

Relay's ``SimplifyExpr`` runs its rewrites through the same grouping as
:func:`~relaypass.dataflow_pattern.rewrite`, with every callback requiring
types.  Its callbacks read the types of the matched nodes *before* rewriting
(``m.pre(x).checked_type``) and build from the rewritten ones
(``m.post(x)``), so a callback here receives a :class:`Match` that gives
both, where TVM's ``node_map`` gives only the rewritten forms.

Rounds: the rewrites run in order, each on a typed program, and the list is
repeated until a round changes nothing.  A node rebuilt only because a child
changed keeps its type, and the new nodes of a replacement are typed on
their own (the replacement has the type of the node it replaces, so nothing
else changes); InferType runs on the whole function only when that cannot be
done.  TVM counts single rewrite runs and stops at
100, which SimplifyExpr's two dozen rewrites reach in the fifth round even on
legal programs (``x + x`` doubled nine times); counting rounds
(:data:`MAX_ROUNDS`) keeps the guard against rewrites that undo each other
without that failure.

``OpPattern(name)`` and ``OpAttrPattern(key, value)`` are the shorthands the
standard rewrites are written with: ``is_op(name)`` and
``wildcard().has_attr({key: value})``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.structural import structural_equal

from .graph import IndexedGraph
from .grouper import PatternGrouper
from .matcher import run_deep_if_needed
from .pattern import AttrPattern, DFPattern, ExprPattern, is_op, wildcard
from .rebuild import rebuild_bottom_up
from .rewrite import CallbackError, RewriteLimitError

__all__ = ["MAX_ROUNDS", "Match", "OpAttrPattern", "OpPattern", "Rewrite", "rewrite_patterns"]

MAX_ROUNDS = 100
"""Rounds of all rewrites before concluding that some of them undo each other."""


def OpPattern(name: str) -> ExprPattern:  # noqa: N802  (reads as the pattern it builds)
    """The operator ``name``: ``is_op(name)``."""
    return is_op(name)


def OpAttrPattern(key: str, value: object) -> AttrPattern:  # noqa: N802
    """Any operator whose registered attribute ``key`` is ``value``."""
    return wildcard().has_attr({key: value})


class Match:
    """What a group matched: the original (typed) nodes and their rewritten forms."""

    __slots__ = ("nodes", "_rewritten")

    def __init__(self, nodes: dict[DFPattern, list[Expr]], rewritten: dict[Expr, Expr]) -> None:
        self.nodes = nodes
        self._rewritten = rewritten

    def __contains__(self, pattern: DFPattern) -> bool:
        return pattern in self.nodes

    def pre(self, pattern: DFPattern) -> Expr:
        """The node of the original (typed) program that ``pattern`` matched."""
        return self.nodes[pattern][0]

    def post(self, pattern: DFPattern) -> Expr:
        """The rewritten form of that node, to build the replacement from."""
        node = self.nodes[pattern][0]
        return self._rewritten.get(node, node)


Callback = Callable[[Call, Expr, Match], Expr]


class Rewrite:
    """A named pattern with the callback that replaces each of its matches."""

    __slots__ = ("name", "pattern", "callback")

    def __init__(self, name: str, pattern: DFPattern, callback: Callback) -> None:
        if not isinstance(pattern, DFPattern):
            raise CallbackError(f"rewrite {name}: the pattern is a {type(pattern).__name__}, "
                                "not a dataflow pattern")
        if not callable(callback):
            raise CallbackError(f"rewrite {name}: the callback is not callable")
        self.name = name
        self.pattern = pattern
        self.callback = callback


class _Typing:
    """How a rewrite keeps the program typed: ``type_new`` types a callback's new nodes.

    ``stale`` turns true when a replacement could not be typed locally, or
    has another type than the node it replaces (its users' types may then
    change too): InferType must run on the whole function again.
    """

    __slots__ = ("type_new", "stale")

    def __init__(self, type_new: Callable[[Expr], Expr | None] | None) -> None:
        self.type_new = type_new
        self.stale = False

    def typed(self, pre: Expr, out: Expr) -> Expr:
        if self.stale or out._checked_type is not None:
            if out._checked_type is not None and pre._checked_type is not None \
                    and out._checked_type != pre._checked_type:
                self.stale = True
            return out
        typed = self.type_new(out) if self.type_new is not None else None
        if typed is None or typed._checked_type != pre._checked_type:
            self.stale = True
            return out
        return typed


def _apply(rewrite: Rewrite, post: Expr, graph: IndexedGraph, typing: _Typing) -> Expr:
    grouper = PatternGrouper()
    run_deep_if_needed(grouper.group_matches, rewrite.pattern, post, graph)
    by_root = grouper.roots()
    if not by_root:
        return post

    def at_root(pre: Expr, rebuilt: Expr, memo: dict[Expr, Expr]) -> Expr:
        out = rewrite.callback(pre, rebuilt, Match(by_root[pre].matched, memo))
        if not isinstance(out, Expr):
            raise CallbackError(f"rewrite {rewrite.name} returned {type(out).__name__}, "
                                "not a Relay expression")
        return out if out is rebuilt else typing.typed(pre, out)

    return rebuild_bottom_up(post, at_root, by_root, keep_types=True, graph=graph)[0]


def rewrite_patterns(rewrites: Sequence[Rewrite], func: Function,
                     infer_types: Callable[[Function], Function],
                     type_new: Callable[[Expr], Expr | None] | None = None) -> Function:
    """``func`` with ``rewrites`` applied in order, round after round, until nothing changes.

    ``infer_types`` types a function (InferType, in the function's module);
    it runs first if ``func`` is untyped, so that every callback sees a typed
    program.  ``type_new(expr)`` types the new nodes of a callback's result
    (see ``type_new_nodes`` of InferType) or gives None; with it, a
    replacement of the same type as the node it replaces keeps the program
    typed at the cost of its new nodes, and ``infer_types`` runs again only
    when that fails.  Without it, ``infer_types`` runs again after every
    rewrite that changed something.

    The rewrites are applied in a cycle: once every rewrite has run, one after
    the other, without changing the program, it is a fixed point (what a
    round that changes nothing shows, found without running the rewrites that
    already saw this very program); a round that leaves the program
    structurally equal also ends it, as in Relay.
    """
    post = func
    typed = func._checked_type is not None
    count = len(rewrites)
    quiet = 0  # rewrites run in a row on this very program without changing it
    for _ in range(MAX_ROUNDS):
        last = post
        graph: IndexedGraph | None = None
        for rewrite in rewrites:
            if quiet >= count:
                return post
            if not typed:
                post = infer_types(post)
                typed = True
                graph = None
            if graph is None:
                graph = IndexedGraph(post)
            typing = _Typing(type_new)
            new = _apply(rewrite, post, graph, typing)
            if new is not post:
                post = new
                typed = not typing.stale and type_new is not None
                graph = None
                quiet = 0
            else:
                quiet += 1
        if post is last or structural_equal(last, post, map_free_vars=True):
            return post
    raise RewriteLimitError(
        f"the rewrites ({', '.join(r.name for r in rewrites)}) still changed the program after "
        f"{MAX_ROUNDS} rounds; some of them undo each other"
    )
