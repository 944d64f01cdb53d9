"""Rewriting the matches of patterns with callbacks, to a fixed point (TVM's ``rewrite``).

``rewrite(callbacks, expr, mod=None)`` runs, for each callback in order: type
inference first if the callback asks for it (``require_type``), then the
grouping of the callback's pattern (:mod:`.grouper`), then one bottom-up pass
in which each group root is replaced by what ``callback(pre, post, node_map)``
returns.  ``pre`` is the root in the program the pass started from, ``post``
the root rebuilt from rewritten children, and ``node_map`` maps each pattern
node to the rewritten forms of what it matched.  The whole list is run again
until a round leaves the program structurally unchanged; a callback made with
``rewrite_once=True`` stops taking part after its first change.  As in TVM,
100 callback runs without reaching that point is an error
(:class:`RewriteLimitError`): some callbacks undo each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relaypass.errors import RelayPassError
from relaypass.gc_pause import gc_paused
from relaypass.ir.expr import Expr
from relaypass.ir.module import IRModule
from relaypass.ir.structural import structural_equal
from relaypass.ir.summary import clip, short_text

from .graph import IndexedGraph
from .grouper import Group, PatternGrouper
from .matcher import run_deep_if_needed
from .pattern import DFPattern
from .rebuild import rebuild_bottom_up
from .type_inference import infer_type_with_module

__all__ = ["CallbackError", "DFPatternCallback", "MAX_CALLBACK_RUNS", "RewriteLimitError",
           "rewrite"]

MAX_CALLBACK_RUNS = 100
"""Callback runs after which ``rewrite`` concludes that callbacks undo each other (TVM's)."""


class RewriteLimitError(RelayPassError):
    """The rewrites did not reach a fixed point: some of them undo each other."""


class CallbackError(RelayPassError, TypeError):
    """A rewrite callback is not usable: no pattern, not a callback, or a non-expression result."""


class DFPatternCallback:
    """A pattern and what to put in place of each of its matches.

    Subclass it, set ``self.pattern`` in ``__init__`` and override
    ``callback(pre, post, node_map)``.  ``require_type``: run type inference
    before each grouping, so the callback sees ``checked_type``;
    ``rewrite_once``: take part in rewriting only until the first change.
    """

    def __init__(self, require_type: bool = False, rewrite_once: bool = False) -> None:
        self.pattern: DFPattern | None = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr: Expr) -> Expr:
        """``expr`` rewritten with this callback alone."""
        return rewrite(self, expr)

    def callback(self, pre: Expr, post: Expr, node_map: dict[DFPattern, list[Expr]]) -> Expr:
        """The replacement for one match (``pre``: as found, ``post``: with rewritten inputs)."""
        raise NotImplementedError(
            f"{type(self).__name__} must override callback(self, pre, post, node_map)"
        )


def _checked_callbacks(callbacks: object) -> list[DFPatternCallback]:
    if isinstance(callbacks, DFPatternCallback):
        callbacks = [callbacks]
    if not isinstance(callbacks, Sequence) or isinstance(callbacks, (str, bytes)):
        raise CallbackError(
            f"rewrite takes a DFPatternCallback or a list of them, not {type(callbacks).__name__}"
        )
    for k, cb in enumerate(callbacks):
        if not isinstance(cb, DFPatternCallback):
            raise CallbackError(
                f"callback #{k} is a {type(cb).__name__}, not a DFPatternCallback"
            )
        pattern = getattr(cb, "pattern", None)
        if not isinstance(pattern, DFPattern):
            got = "no pattern" if pattern is None else f"a {type(pattern).__name__}"
            raise CallbackError(
                f"callback #{k} ({type(cb).__name__}) has {got} as its pattern; set "
                "self.pattern to a dataflow pattern in __init__"
            )
    return list(callbacks)


def replace_groups(expr: Expr, by_root: dict[Expr, Group], callback: DFPatternCallback,
                   graph: IndexedGraph | None = None) -> Expr:
    """One bottom-up pass: each group root replaced by the callback's result (``graph``:
    ``expr``'s indexed graph, if built)."""

    def at_root(pre: Expr, post: Expr, memo: dict[Expr, Expr]) -> Expr:
        node_map = {p: [memo.get(e, e) for e in es] for p, es in by_root[pre].matched.items()}
        out = callback.callback(pre, post, node_map)
        if not isinstance(out, Expr):
            raise CallbackError(
                f"{type(callback).__name__}.callback returned {type(out).__name__} "
                f"{clip(repr(out), 60)} for {short_text(pre, 100)}; it must return a Relay "
                "expression"
            )
        return out

    return rebuild_bottom_up(expr, at_root, by_root, graph=graph)[0]


def _groups(pattern: DFPattern, expr: Expr, graph: IndexedGraph) -> dict[Expr, Group]:
    grouper = PatternGrouper()
    grouper.group_matches(pattern, expr, graph)
    return grouper.roots()


def rewrite(callbacks: DFPatternCallback | Sequence[DFPatternCallback], expr: Expr,
            mod: IRModule | None = None) -> Expr:
    """``expr`` with the matches of each callback's pattern replaced, until nothing changes."""
    todo = _checked_callbacks(callbacks)
    if not isinstance(expr, Expr):
        raise CallbackError(f"rewrite takes a Relay expression, not {type(expr).__name__}")
    with gc_paused():  # whole-program work that makes no cycles (relaypass.gc_pause)
        return _rewrite(todo, expr, mod if mod is not None else IRModule())


def _rewrite(todo: list[DFPatternCallback], expr: Expr, module: IRModule) -> Expr:
    done: set[int] = set()
    post = expr
    graph = None  # of ``post``, kept while callbacks leave the program as it is
    runs = 0
    while True:
        last = post
        for k, cb in enumerate(todo):
            if k in done:
                continue
            before = post
            if cb.require_type:
                post = infer_type_with_module(post, module)
            if graph is None or graph.nodes[-1] is not post:
                graph = IndexedGraph(post)
            by_root = run_deep_if_needed(_groups, cb.pattern, post, graph)
            if by_root:
                post = replace_groups(post, by_root, cb, graph)
            runs += 1
            if cb.rewrite_once and not _same(before, post):
                done.add(k)
        if _same(last, post) or runs >= MAX_CALLBACK_RUNS:
            break
    if runs >= MAX_CALLBACK_RUNS:
        names = ", ".join(type(cb).__name__ for cb in todo)
        raise RewriteLimitError(
            f"rewrite ran the callbacks ({names}) {runs} times without reaching a fixed point; "
            "some of them undo each other"
        )
    return post


def _same(a: Any, b: Any) -> bool:
    return a is b or structural_equal(a, b, map_free_vars=True)
