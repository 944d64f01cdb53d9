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

Cost: on a small program most of the cost is fixed, per rewrite: grouping
its matches.  Most rewrites change nothing on a given program, and that
needs no grouping to see: a rewrite looking at a program for the first time
asks each match's callback with that match alone, and is grouped only when
one would change something (:meth:`_Tracker.keeps`).  A callback may so be
asked more than once about a match, and decides from the match alone.  A
rewrite's pattern looks a few levels deep, so once it has run, it need look
again only within that depth above what changed since (:class:`_Tracker`);
the whole program is grouped again only when that look finds a callback
that would change something.  Whether a round left the program
structurally equal (which ends the rounds, as in Relay) is asked only when
the next round is about to change it: most end with a round that changes
nothing, which returns the same program without comparing.  The first
rewrite of a round that changes the program rebuilds it (every ancestor of a replacement
is a new node) and the new node order comes out of that rebuild, so the
program is walked only at the start.  On a DAG whose values are widely
shared nearly every node is an ancestor of some replacement, so that
rebuild costs about what building the program once costs; it is kept to
that (:func:`_rebuild`), and the order it hands on may keep an operator no
call uses any more rather than walk the program again to find out
(:func:`_orphans`).  The later rewrites of the round that change the
program update the calls that rebuild made in place (no callback has seen
them, no one else holds them, and the program the round started from,
which the round's end compares with, does not contain them), so each costs
what it changes (:func:`_rebuild_in_place`).  A callback therefore reads
through ``pre`` what its pattern matched (types, attributes, the matched
nodes, as it was); below that, a node may already show this rewrite's
changes.

``OpPattern(name)`` and ``OpAttrPattern(key, value)`` are the shorthands the
standard rewrites are written with: ``is_op(name)`` and
``wildcard().has_attr({key: value})``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from heapq import heappop, heappush

from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Var,
    set_checked_type,
)
from relaypass.ir.fields import rebuild
from relaypass.ir.node import slot_filler
from relaypass.ir.op import Op
from relaypass.ir.structural import structural_equal

from .graph import LEAVES, IndexedGraph, node_inputs
from .grouper import PatternGrouper
from .matcher import (
    Bindings,
    CallFilter,
    DFPatternMatcher,
    call_filter,
    plain_matcher,
    quick_check,
    run_deep_if_needed,
)
from .pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    ExprPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    is_op,
    wildcard,
)
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
    """What a group matched: the original (typed) nodes and their rewritten forms.

    ``pre`` gives each matched node as the rewrite found it; what lies below
    the match may already carry the rewrite's changes (see the module's
    docstring), so a callback decides from the match and builds from ``post``.
    """

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
    """A named pattern with the callback that replaces each of its matches.

    The callback answers from what it is given alone (the driver may ask it
    about a match more than once, see the module's docstring).
    """

    __slots__ = ("name", "pattern", "callback", "_facts")

    def __init__(self, name: str, pattern: DFPattern, callback: Callback) -> None:
        if not isinstance(pattern, DFPattern):
            raise CallbackError(f"rewrite {name}: the pattern is a {type(pattern).__name__}, "
                                "not a dataflow pattern")
        if not callable(callback):
            raise CallbackError(f"rewrite {name}: the callback is not callable")
        self.name = name
        self.pattern = pattern
        self.callback = callback
        self._facts: _PatternFacts | None = None

    @property
    def facts(self) -> _PatternFacts:
        """What the driver reads off the pattern, worked out once: a pass that keeps its
        rewrites (SimplifyExpr does) pays for it once, not on every run."""
        facts = self._facts
        if facts is None:
            facts = self._facts = _PatternFacts(self.pattern)
        return facts


class _PatternFacts:
    """A pattern's reach (one level more than its own: TVM's reassociation of multiply and
    divide may look at a call that is not where the pattern has its own), the operators
    every match calls one of, its call filter, quick check and plain matcher (None where
    the pattern is not plain), and the call filters of its nodes as a matcher finds them."""

    __slots__ = ("reach", "needs", "calls", "quick", "plain", "filters")

    def __init__(self, pattern: DFPattern) -> None:
        reach = pattern_reach(pattern)
        self.reach = None if reach is None else reach + 1
        self.needs = needed_calls(pattern)
        self.calls = call_filter(pattern)
        self.quick = quick_check(pattern)
        self.plain = plain_matcher(pattern)
        self.filters: dict[DFPattern, CallFilter | None] = {}


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


# --- what each rewrite already knows about the program --------------------------------------


def pattern_reach(pattern: DFPattern) -> int | None:
    """How many levels below a node matching ``pattern`` at it can look at; None: no bound.

    A call pattern looks at its callee and arguments one level down, a tuple
    at its fields, a projection at its tuple; leaves (wildcards, constants,
    variables, operators) look no further.  A pattern that refers to itself,
    or that compares a whole expression or function, has no bound.
    """
    on_path: set[DFPattern] = set()

    def reach(p: DFPattern) -> int | None:
        if p in on_path:
            return None
        kind = type(p)
        if kind in (ConstantPattern, VarPattern):
            return 0
        if kind is ExprPattern:
            return 0 if type(p.expr) in (Op, Constant, Var, GlobalVar) else None
        on_path.add(p)
        try:
            if kind is WildcardPattern:
                return 0 if p.pattern is None else reach(p.pattern)
            if kind in (AttrPattern, TypePattern, DataTypePattern, ShapePattern):
                return reach(p.pattern)
            if kind is AltPattern:
                return _deepest(reach(p.left), reach(p.right))
            if kind is CallPattern:
                below = _deepest(reach(p.op), *(reach(a) for a in p.args or ()))
                return None if below is None else below + 1
            if kind is TuplePattern:
                below = _deepest(0, *(reach(f) for f in p.fields or ()))
                return None if below is None else below + 1
            if kind is TupleGetItemPattern:
                below = reach(p.tuple)
                return None if below is None else below + 1
            return None  # functions, lets, ifs, dominators: whole regions
        finally:
            on_path.discard(p)

    return reach(pattern)


def needed_calls(pattern: DFPattern) -> frozenset[str] | None:
    """Operators of which every match of ``pattern`` calls at least one; None: no such set.

    A program without a call of any of them has no match, which needs no
    grouping to see.
    """
    on_path: set[DFPattern] = set()

    def needed(p: DFPattern) -> frozenset[str] | None:
        if p in on_path:
            return None
        kind = type(p)
        on_path.add(p)
        try:
            if kind is AltPattern:
                left, right = needed(p.left), needed(p.right)
                return None if left is None or right is None else left | right
            if kind in (AttrPattern, TypePattern, DataTypePattern, ShapePattern):
                return needed(p.pattern)
            if kind is WildcardPattern:
                return None if p.pattern is None else needed(p.pattern)
            if kind is CallPattern:
                calls = call_filter(p)
                if calls is not None and not calls.open:
                    return calls.names
                for arg in p.args or ():
                    found = needed(arg)
                    if found is not None:
                        return found
            return None
        finally:
            on_path.discard(p)

    return needed(pattern)


def _deepest(*depths: int | None) -> int | None:
    return None if None in depths else max(depths)


class _Same(dict):
    """A node's new form, where the nodes not in it are their own."""

    def __missing__(self, key: Expr) -> Expr:
        return key


class _Knowledge:
    """What one rewrite knows: the program state it last saw, and where it never asked.

    ``step`` counts the changes to the program the rewrite saw (-1: none
    yet); ``unasked`` are the nodes of that program where its pattern
    matched but its callback was not asked (the match overlapped another
    group, or a use of its inside left it), which a later look must ask.
    """

    __slots__ = ("step", "unasked")

    def __init__(self) -> None:
        self.step = -1
        self.unasked: list[Expr] = []


class _Tracker:
    """Where the program changed since each rewrite last looked, to look only there.

    A rewrite's pattern looks a bounded number of levels below a node
    (:func:`pattern_reach`) and its callback reads only what the pattern
    matched, with types that never change (a replacement has the type of
    what it replaces).  Rebuilding a node because a child changed keeps what
    those levels show unless a replacement sits within them; so a rewrite
    that changed nothing on an earlier program changes nothing now at every
    node except those within its reach above a replacement, and the matches
    whose callback it did not ask.  Those are asked here, each as the only
    match (so its callback sees itself as the rewritten form, as a run that
    changes nothing shows it); if none would change anything, neither would
    the run.  Otherwise the rewrite runs on the whole program: how its
    matches group depends on all of it.

    ``marks`` lists, for each change still to be looked at by some rewrite,
    the nodes within reach above a replacement with their distance to it
    (the nodes of later programs they became), by the operator they call
    (None: anything else), so that a rewrite of a few operators looks at
    those only.
    """

    __slots__ = ("step", "marks", "known", "facts", "reaches", "reach", "needs", "calls_only")

    def __init__(self, rewrites: Sequence[Rewrite]) -> None:
        self.facts = [rw.facts for rw in rewrites]
        self.reaches = [f.reach for f in self.facts]
        self.reach = max((r for r in self.reaches if r is not None), default=0)
        self.needs = [f.needs for f in self.facts]
        # Whether every pattern matches calls only (never an operator standing alone).
        self.calls_only = all(f.calls is not None for f in self.facts)
        self.reset()

    def reset(self) -> None:
        """Forget everything: the program was typed (and so rebuilt) from scratch."""
        self.step = 0
        self.marks: list[tuple[int, dict[str | None, list[tuple[Expr, int]]]]] = []
        self.known = [_Knowledge() for _ in self.reaches]

    def seen(self, k: int, unasked: list[Expr]) -> None:
        """Rewrite ``k`` ran on the current program."""
        know = self.known[k]
        know.step = self.step
        know.unasked = unasked

    def changed(self, memo: dict[Expr, Expr], marks: list[tuple[Expr, int]],
                index: dict[Expr, int]) -> None:
        """A rewrite changed the program: ``memo`` gives each node's new form, ``index``
        holds the nodes of the new program (where a callback answered with a node as it
        was before, the old form of a node may stay beside the new one)."""
        self.step += 1
        steps = [know.step for know, r in zip(self.known, self.reaches)
                 if r is not None and know.step >= 0]
        oldest = min(steps, default=self.step)
        kept = [(step, _moved_on(buckets, memo, index)) for step, buckets in self.marks
                if step > oldest]
        kept.append((self.step, _by_operator(marks)))
        self.marks = kept
        for know in self.known:
            if know.unasked:
                know.unasked = [new for node in know.unasked
                                for new in _forms(node, memo, index)]

    def keeps(self, k: int, rewrite: Rewrite, graph: IndexedGraph, fresh: set[Expr]) -> bool:
        """Whether rewrite ``k`` would change nothing on ``graph`` (False: it may); the
        nodes of the matches whose callback it asks leave ``fresh``.

        A rewrite that never saw this program, or whose pattern has no bounded
        reach, is asked at every match alone: most rewrites change nothing on a
        given program, and finding that out needs only their matches and
        callbacks, not the grouping of a run (which is what costs, on a small
        program).  If every callback keeps its match, the run would change nothing
        whatever the groups; the first that would not ends the look.
        """
        know = self.known[k]
        needs = self.needs[k]
        if needs is not None:
            if not graph.calls_any(needs):
                self.seen(k, [])  # nothing it could match
                return True
        reach = self.reaches[k]
        facts = self.facts[k]
        if know.step < 0 or reach is None:
            calls = facts.calls
            if calls is None or calls.open:
                todo = graph.nodes
            else:
                nodes = graph.nodes
                todo = [nodes[at] for at in graph.positions(calls.names)]
            if not run_deep_if_needed(_all_keep, rewrite, todo, graph, facts, fresh):
                return False
        elif know.step < self.step:
            calls = facts.calls
            index = graph.index
            todo: dict[Expr, None] = {}
            for step, buckets in self.marks:
                if step <= know.step:
                    continue
                names = (buckets if calls is None or calls.open
                         else (name for name in calls.names if name in buckets))
                for name in names:
                    for node, d in buckets[name]:
                        if d <= reach and node in index:
                            todo[node] = None
            for node in know.unasked:
                if node in index:
                    todo[node] = None
            if todo and not run_deep_if_needed(_all_keep, rewrite, list(todo), graph, facts,
                                               fresh):
                return False
        know.step = self.step
        know.unasked = []
        return True


Buckets = dict[str | None, list[tuple[Expr, int]]]


def _by_operator(marks: Iterable[tuple[Expr, int]], buckets: Buckets | None = None) -> Buckets:
    """``marks`` by the operator their node calls (None: not an operator call), added to
    ``buckets`` if given."""
    if buckets is None:
        buckets = {}
    for node, d in marks:
        key = node.op.name if type(node) is Call and type(node.op) is Op else None
        found = buckets.get(key)
        if found is None:
            buckets[key] = [(node, d)]
        else:
            found.append((node, d))
    return buckets


def _forms(node: Expr, memo: dict[Expr, Expr], index: dict[Expr, int]) -> list[Expr]:
    """What ``node`` is in the new program: its new form, and itself if it stayed too."""
    new = memo.get(node)
    if new is None:
        return [node]
    return [new, node] if node in index else [new]


def _moved_on(buckets: Buckets, memo: dict[Expr, Expr], index: dict[Expr, int]) -> Buckets:
    """``buckets`` with each node replaced by its forms in the new program (:func:`_forms`);
    a bucket none of whose nodes has a new form is kept as it is (after a rebuild in
    place, most)."""
    out: Buckets = {}
    keys = memo.keys()
    for name, entries in buckets.items():
        if keys.isdisjoint([node for node, _ in entries]):
            found = out.get(name)
            if found is None:
                out[name] = entries
            else:
                found.extend(entries)
        else:
            _by_operator([(new, d) for node, d in entries for new in _forms(node, memo, index)],
                         out)
    return out


def _all_keep(rewrite: Rewrite, nodes: Sequence[Expr], graph: IndexedGraph,
              facts: _PatternFacts, fresh: set[Expr]) -> bool:
    """Whether ``rewrite``'s callback keeps each of ``nodes`` its pattern matches, each
    asked as the only match (what the callback is shown leaves ``fresh``)."""
    pattern = rewrite.pattern
    calls, plain = facts.calls, facts.plain
    quick = facts.quick if plain is None else None  # (a plain matcher is as quick)
    matcher = (None if plain is not None
               else DFPatternMatcher(graph.nodes[-1], graph, filters=facts.filters))
    callback = rewrite.callback
    for node in nodes:
        if calls is not None and calls.rejects(node):
            continue
        if quick is not None and not quick(node):
            continue
        matched: Bindings | None
        if matcher is None:
            matched = plain(node)
            if matched is None:
                continue
        elif matcher.match(pattern, node):
            matched = matcher.memo  # (the next match starts a new one)
        else:
            continue
        if fresh:
            _shown(matched, fresh)
        try:
            out = callback(node, node, Match(matched, {}))
        except Exception:  # noqa: BLE001  (undecided here: the run asks again, and reports)
            return False
        if out is not node:
            return False
    return True


class _RecordingGrouper(PatternGrouper):
    """The grouper, noting the matches whose callback the rewrite will not ask."""

    def __init__(self) -> None:
        super().__init__()
        self.matched: list[Expr] = []

    def group_matches(self, pattern: DFPattern, expr: Expr,
                      graph: IndexedGraph | None = None) -> dict:
        self.matched = []
        return super().group_matches(pattern, expr, graph)

    def _create_group(self, root: Expr, matcher: DFPatternMatcher, plan: object,
                      graph: IndexedGraph) -> None:
        self.matched.append(root)
        super()._create_group(root, matcher, plan, graph)

    def unasked(self, by_root: dict[Expr, object]) -> list[Expr]:
        """Matches left without a group, and the calls inside groups (never tried)."""
        out = [root for root in self.matched if root not in by_root]
        out.extend(node for node in self.gid_of if type(node) is Call and node not in by_root)
        return out


# --- one rewrite ----------------------------------------------------------------------------


def _apply(rewrite: Rewrite, k: int, post: Expr, graph: IndexedGraph, typing: _Typing,
           tracker: _Tracker, own: _InPlace) -> tuple[Expr, IndexedGraph | None]:
    """``post`` with ``rewrite`` applied once, and its indexed graph (None: not built).

    ``own``: what the rebuild may update in place (:class:`_InPlace`); what
    the callbacks are about to see leaves it.
    """
    grouper = _RecordingGrouper()
    run_deep_if_needed(grouper.group_matches, rewrite.pattern, post, graph)
    by_root = grouper.roots()
    tracker.seen(k, grouper.unasked(by_root))
    if not by_root:
        return post, graph
    if own.calls:
        for group in by_root.values():
            _shown(group.matched, own.calls)

    def at_root(pre: Expr, rebuilt: Expr, memo: dict[Expr, Expr]) -> Expr:
        out = rewrite.callback(pre, rebuilt, Match(by_root[pre].matched, memo))
        if not isinstance(out, Expr):
            raise CallbackError(f"rewrite {rewrite.name} returned {type(out).__name__}, "
                                "not a Relay expression")
        return out if out is rebuilt else typing.typed(pre, out)

    done = _rebuild(graph, at_root, by_root, tracker.reach, tracker.calls_only, own)
    if done is None:
        return post, graph
    new_graph, memo, marks = done
    if typing.stale:
        return new_graph.nodes[-1], None
    tracker.changed(memo, marks, new_graph.index)
    return new_graph.nodes[-1], new_graph


class _InPlace:
    """What the rebuilds of one round may update in place, and who uses what.

    ``calls``: the operator calls built by this round's rebuilds that no
    callback has seen (nor anyone else: they are not in the program the
    round started from); ``users``: the users of each node of the current
    program but leaves, once per use (None until a rebuild in place needs
    them), which lead a rebuild to what a change reaches and tell it what a
    replacement cut off, without walking the program.
    """

    __slots__ = ("calls", "users")

    def __init__(self) -> None:
        self.calls: set[Expr] = set()
        self.users: dict[Expr, list[Expr]] | None = None


def _shown(matched: dict[DFPattern, list[Expr]], fresh: set[Expr]) -> None:
    """The nodes of a match, handed to a callback, are never updated in place from now on."""
    for nodes in matched.values():
        fresh.difference_update(nodes)


#: A rebuilt operator call: every slot of a :class:`Call` filled at once, its type included
#: (what the constructor and ``set_checked_type`` do in two steps).
_fill_call = slot_filler(Call, "op", "args", "attrs", "type_args", "span", "_checked_type")
_new_call = Call.__new__
#: An operator call's arguments, set on a call this round built (see :func:`_rebuild`).
_set_args = slot_filler(Call, "args")


def _orphans(post: Expr, out: Expr, keep_ops: bool) -> bool:
    """Whether replacing ``post`` by ``out`` may leave an input of ``post`` without a use.

    With ``keep_ops``, operators do not count: an operator no call uses any
    more may stay in the new order as a leaf nothing reaches, which no
    pattern that matches only calls can match and no question about uses or
    dominance sees, while finding out costs a walk of the whole program.
    """
    kept = type(out)._layout_.children(out)
    return any(kid is not out and kid not in kept and not (keep_ops and type(kid) is Op)
               for kid in type(post)._layout_.children(post))


def _rebuild(graph: IndexedGraph, at_root: Callable[[Expr, Expr, dict[Expr, Expr]], Expr],
             roots: dict[Expr, object], reach: int, keep_ops: bool = False,
             own: _InPlace | None = None
             ) -> tuple[IndexedGraph, dict[Expr, Expr], list[tuple[Expr, int]]] | None:
    """The program rebuilt with each root's replacement, or None when every root keeps itself.

    As :func:`~relaypass.dataflow_pattern.rebuild.rebuild_bottom_up` with the
    graph (roots handed over first, in post-order, while they keep
    themselves; a node rebuilt because an input changed keeps its type), and
    more: the new program's nodes come out in an order with each after its
    inputs, which is its indexed graph without walking it again; and each
    new node within ``reach`` levels above a replacement is marked with its
    distance to it (0 for the nodes a callback built).  Returns the new
    graph, each old node's new form (``memo``: nodes not in it are their own)
    and the marks.  With ``keep_ops`` (every pattern matches calls only), an
    operator that loses its last call may stay in the order (:func:`_orphans`).

    On a DAG nearly every node lies above some replacement, so this loop
    would rebuild the whole program each time a rewrite changes it.  It does
    the least per node it can (one memo look-up per input, the rebuilt call
    filled in place with its type, the new index grown as the nodes come),
    and with ``own`` it rebuilds only once a round: an operator call of
    ``own.calls`` (built by an earlier rebuild of this round, seen by no
    callback, not in the program the round started from, nor in anyone
    else's hands) takes its new arguments in place and stays the node it
    was, so its users need no new node either
    (:func:`_rebuild_in_place`).  Each call it builds joins ``own.calls``.
    """
    index = graph.index
    nodes = graph.nodes
    first = -1
    out: Expr | None = None
    for root in sorted(roots, key=index.__getitem__):
        out = at_root(root, root, _Same())
        if out is not root:
            first = index[root]
            break
    if first < 0:
        return None
    memo = _Same()  # old node -> its new form, only where that is another node
    new_form = memo.get
    # Old node -> distance of its new form to a replacement below it, where within reach
    # (0: the node itself was replaced, so its users are at 1).
    near: dict[Expr, int] = {}
    near_get = near.get
    marks: list[tuple[Expr, int]] = []  # new nodes within reach, as they come
    # The new order, numbered as it grows; it starts as the old order up to ``first``.
    order: list[Expr] = nodes[:first]
    new_index: dict[Expr, int] = dict(zip(order, range(first)))
    append = order.append
    out_of_turn = False  # whether an old node not visited yet was placed under a replacement
    orphans = False  # whether some input of a replaced node may have lost its last use

    def place(top: Expr, k: int) -> bool:
        # ``top`` and whatever below it is not in the order yet, in post-order; the nodes
        # no program had before are marked as new.  True if an old node at or after ``k``
        # was placed (out of its turn).
        early = False
        stack: list[tuple[Expr, bool]] = [(top, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if node not in new_index:
                    new_index[node] = len(order)
                    append(node)
                    at = index.get(node)
                    if at is None:
                        marks.append((node, 0))
                    elif at >= k:
                        early = True
                continue
            if node in new_index:
                continue
            stack.append((node, True))
            for kid in reversed(type(node)._layout_.children(node)):
                if kid not in new_index:
                    stack.append((kid, False))
        return early

    node = nodes[first]
    if own is not None and own.calls:
        if own.users is None:
            own.users = graph.user_map()
        if own.users is not None:
            own.calls.difference_update(roots)
            return _rebuild_in_place(graph, at_root, roots, reach, keep_ops, own, first, out)
    fresh_add = own.calls.add if own is not None else None
    if own is not None:
        own.users = None  # (found again when first needed)
    memo[node] = out
    near[node] = 0
    out_of_turn = place(out, first)
    orphans = _orphans(node, out, keep_ops)
    limit = reach + 1
    # The roots' places in order, to meet them without looking each node up.
    at_roots = iter(sorted(index[r] for r in roots if index[r] > first))
    next_root = next(at_roots, -1)
    changed = memo.keys()
    close = near.keys()
    for k in range(first + 1, len(nodes)):
        node = nodes[k]
        kind = type(node)
        # Calls of operators (most nodes) are rebuilt from their arguments directly.
        op_call = kind is Call and type(node.op) is Op
        kids = node.args if op_call else kind._layout_.children(node)
        post = node
        if not changed.isdisjoint(kids):
            new_kids = tuple(map(new_form, kids, kids))
            if op_call:
                post = _new_call(Call)
                _fill_call(post, node.op, new_kids, node.attrs, node.type_args,
                           node.span, node._checked_type)
                if fresh_add is not None and k != next_root:  # (a root's: its callback's)
                    fresh_add(post)
            else:
                post = rebuild(node, new_kids)
                if node._checked_type is not None:
                    set_checked_type(post, node._checked_type)
            if not close.isdisjoint(kids):  # (most rebuilt nodes are far from a replacement)
                d = _distance(kids, near_get, limit)
                if d <= reach:
                    near[node] = d
                    marks.append((post, d))
        if k == next_root:
            next_root = next(at_roots, -1)
            out = at_root(node, post, memo)
            if out is not post:
                if out is not node:
                    memo[node] = out
                near[node] = 0
                if place(out, k):
                    out_of_turn = True
                if not orphans:
                    orphans = _orphans(post, out, keep_ops)
                continue
        if post is not node:
            memo[node] = post
        elif out_of_turn and node in new_index:
            continue  # placed out of turn, under a replacement below it
        new_index[post] = len(order)
        append(post)
    root = new_form(nodes[-1], nodes[-1])
    return _finish(order, new_index, root, orphans, marks, memo)


def _distance(kids: Sequence[Expr], near_get: Callable[[Expr], int | None], limit: int) -> int:
    """One more than the least distance of ``kids`` to a replacement below (``limit`` at
    most: none within reach)."""
    d = limit
    for x in kids:
        below = near_get(x)
        if below is not None and below < d - 1:
            d = below + 1
    return d


def _finish(order: list[Expr], new_index: dict[Expr, int] | None, root: Expr, orphans: bool,
            marks: list[tuple[Expr, int]], memo: dict[Expr, Expr],
            users: dict[Expr, list[Expr]] | None = None
            ) -> tuple[IndexedGraph, dict[Expr, Expr], list[tuple[Expr, int]]]:
    """The new graph from its order (numbered, or None), less what no longer reaches the
    root when a replacement may have cut something off (``users``: see
    :meth:`IndexedGraph.from_order`)."""
    if orphans or order[-1] is not root:
        live = {root}
        for node in reversed(order):
            if node in live:
                live.update(type(node)._layout_.children(node))
        order = [node for node in order if node in live]
        new_index = None
    if new_index is None:
        new_index = dict(zip(order, range(len(order))))
    marks = [(node, d) for node, d in marks if node in new_index]
    return IndexedGraph.from_order(order, new_index, users), memo, marks


def _kids(node: Expr) -> Sequence[Expr]:
    """What :func:`_copy` rebuilds ``node`` over: an operator call's arguments, the children
    of anything else."""
    if type(node) is Call and type(node.op) is Op:
        return node.args
    return type(node)._layout_.children(node)


def _copy(node: Expr, kids: Sequence[Expr]) -> Expr:
    """``node`` rebuilt over ``kids`` (as :func:`_kids` gives them), with its type."""
    if type(node) is Call and type(node.op) is Op:
        post = _new_call(Call)
        _fill_call(post, node.op, tuple(kids), node.attrs, node.type_args, node.span,
                   node._checked_type)
        return post
    post = rebuild(node, kids)
    if node._checked_type is not None:
        set_checked_type(post, node._checked_type)
    return post


def _rebuild_in_place(graph: IndexedGraph,
                      at_root: Callable[[Expr, Expr, dict[Expr, Expr]], Expr],
                      roots: dict[Expr, object], reach: int, keep_ops: bool, own: _InPlace,
                      first: int, out: Expr
                      ) -> tuple[IndexedGraph, dict[Expr, Expr], list[tuple[Expr, int]]]:
    """:func:`_rebuild` from the first replacement on, updating the calls of ``own`` in place.

    The same program, memo and marks as rebuilding every node above a
    replacement would give (a call updated in place stands for its copy),
    and the same order but for leaves nothing uses any more (which no
    pattern of calls can match, see ``keep_ops``), for the cost of the nodes
    that change: only the roots and the users of nodes that changed or lie
    within ``reach`` of a replacement are visited, in order
    (``own.users``); the new order is the old one with the changed places
    spliced in (``events``: what takes each changed place); and what a
    replacement cut off is what is left without users.

    A callback that answers with its own ``pre`` (Relay's SimplifyBinomial
    does) asks for the match as it was before this rewrite: what was updated
    in place below it is copied back as it was (:func:`_as_before`).  So
    that ``pre`` and ``post`` differ wherever they could, a root met after
    an update in place gets a copy as its ``post``.
    """
    index = graph.index
    nodes = graph.nodes
    fresh = own.calls
    users = own.users
    memo = _Same()  # old node -> its new form, only where that is another node
    new_form = memo.get
    near: dict[Expr, int] = {}  # as in _rebuild
    near_get = near.get
    marks: list[tuple[Expr, int]] = []
    events: dict[int, list[Expr]] = {}  # old place -> the nodes that take it in the new order
    moved: set[Expr] = set()  # nodes in the new order away from an old place of their own
    was: dict[Expr, tuple[Expr, ...]] = {}  # call updated in place -> its arguments before
    unused: list[Expr] = []  # nodes that lost their last user
    limit = reach + 1
    todo = sorted(index[r] for r in roots if index[r] > first)  # places to visit, a heap
    queued = set(todo)

    def look_above(node: Expr, k: int) -> None:
        # ``node`` changed or lies near a replacement: its users after ``k`` must look.
        for user in users.get(node, ()):
            at = index.get(user)
            if at is not None and at > k and at not in queued:
                queued.add(at)
                heappush(todo, at)

    def use(node: Expr) -> None:
        for kid in node_inputs(node):
            if type(kid) not in LEAVES:
                found = users.get(kid)
                if found is None:
                    users[kid] = [node]
                else:
                    found.append(node)

    def unuse(node: Expr) -> None:
        for kid in node_inputs(node):
            if type(kid) not in LEAVES:
                found = users[kid]
                found.remove(node)
                if not found:
                    unused.append(kid)

    def placed(node: Expr, k: int) -> bool:
        # In the new order before place ``k``'s turn.
        if node in moved:
            return True
        at = index.get(node)
        return at is not None and at < k and node not in memo

    def place(top: Expr, k: int) -> tuple[list[Expr], bool]:
        # As in _rebuild: ``top`` and what below it is not placed yet, in post-order, and
        # whether an old node at or after ``k`` was among them (its own place is then
        # left empty).  What joins the program uses its inputs.
        seq: list[Expr] = []
        early = False
        stack: list[tuple[Expr, bool]] = [(top, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if not placed(node, k):
                    at = index.get(node)
                    if at is None or node in memo:
                        use(node)
                    moved.add(node)
                    seq.append(node)
                    if at is None:
                        marks.append((node, 0))
                    elif at >= k:
                        early = True
                        events.setdefault(at, [])
                continue
            if placed(node, k):
                continue
            stack.append((node, True))
            for kid in reversed(type(node)._layout_.children(node)):
                if not placed(kid, k):
                    stack.append((kid, False))
        return seq, early

    def replace(node: Expr, post: Expr, out: Expr, k: int) -> None:
        # ``out`` takes the place of root ``node`` (whose rebuilt form is ``post``).
        if out is not node:
            memo[node] = out
        near[node] = 0
        events[k], _ = place(out, k)
        if out is not node:
            unuse(node)
        if post is not node:
            # (Rebuilt for the callback alone: the new forms it was built over may have no use.)
            unused.extend(kid for kid in node_inputs(post)
                          if type(kid) not in LEAVES and not users.get(kid))
        look_above(node, k)

    replace(nodes[first], nodes[first], out, first)
    while todo:
        k = heappop(todo)
        node = nodes[k]
        kind = type(node)
        op_call = kind is Call and type(node.op) is Op
        kids = node.args if op_call else kind._layout_.children(node)
        is_root = node in roots
        post = node
        if not memo.keys().isdisjoint(kids):
            new_kids = tuple([new_form(x, x) for x in kids])
            if op_call and not is_root and node in fresh and node not in moved:
                was[node] = kids
                unuse(node)
                _set_args(node, new_kids)
                use(node)
            else:
                post = _copy(node, new_kids)
                if op_call and not is_root:
                    fresh.add(post)
        d = _distance(kids, near_get, limit)
        if d <= reach:
            near[node] = d
            marks.append((post, d))
        if is_root:
            if post is node and was:
                # Something below may have changed in place: the callback must be able to
                # tell ``pre`` (as it was) from ``post`` (as it is), as it would on copies.
                post = _copy(node, kids)
            out = at_root(node, post, memo)
            if out is node and was:
                out = _as_before(node, was, index)
            if out is not post:
                replace(node, post, out, k)
                continue
        if post is not node:
            memo[node] = post
            moved.add(post)
            events[k] = [post]
            use(post)
            unuse(node)
        if post is not node or d <= reach:
            look_above(node, k)
    last = len(nodes) - 1
    root = nodes[last]
    if root not in memo:
        # What changed below was updated in place: the program is a new node all the same.
        new_root = _copy(root, _kids(root))
        memo[root] = new_root
        moved.add(new_root)
        events[last] = [new_root if n is root else n for n in events.get(last, [root])]
        marks = [(new_root if n is root else n, d) for n, d in marks]
        use(new_root)
        unuse(root)
    root = memo[root]
    # What lost its last user left the program, and with it the uses it made.
    dead: set[Expr] = set()
    while unused:
        node = unused.pop()
        if (users.get(node) or node in dead or node is root
                or not (node in moved or (node in index and node not in memo))):
            continue
        dead.add(node)
        unuse(node)
        if node not in moved:
            events[index[node]] = []  # (its own place: nothing else takes it)
    order: list[Expr] = []
    at = 0
    for k in sorted(events):
        order += nodes[at:k]
        seq = events[k]
        order += [node for node in seq if node not in dead] if dead else seq
        at = k + 1
    order += nodes[at:]
    if not keep_ops:
        return _finish(order, None, root, True, marks, memo, users)
    new_index = dict(zip(order, range(len(order))))
    marks = [(node, d) for node, d in marks if node in new_index]
    return IndexedGraph.from_order(order, new_index, users), memo, marks


def _as_before(top: Expr, was: dict[Expr, tuple[Expr, ...]], index: dict[Expr, int]) -> Expr:
    """``top`` as it was before the calls of ``was`` took new arguments in place (copies of
    what that changed, ``top`` itself if nothing)."""
    low = min(index[node] for node in was)
    done: dict[Expr, Expr] = {}
    stack: list[tuple[Expr, bool]] = [(top, False)]
    while stack:
        node, expanded = stack.pop()
        kids = was.get(node)
        if kids is None:
            kids = _kids(node)
        if expanded:
            old = [done.get(kid, kid) for kid in kids]
            if node in was or any(a is not b for a, b in zip(old, kids)):
                done[node] = _copy(node, old)
            continue
        if node in done or index.get(node, -1) < low:
            continue
        stack.append((node, True))
        stack.extend((kid, False) for kid in kids if kid not in done)
    return done.get(top, top)


# --- the driver -----------------------------------------------------------------------------


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
    structurally equal also ends it, as in Relay.  A rewrite that saw an
    earlier form of the program looks again only where it changed since
    (:class:`_Tracker`), and runs on the whole program only when that finds
    something to change; a rewrite that changes the program hands on the
    indexed graph of the result, built as it rebuilds.
    """
    post = func
    typed = func._checked_type is not None
    count = len(rewrites)
    tracker = _Tracker(rewrites)
    graph: IndexedGraph | None = None
    quiet = 0  # rewrites run in a row on this very program without changing it
    # The start and end of the last round, if it changed the program, until compared.
    ends: tuple[Expr, Expr] | None = None
    for _ in range(MAX_ROUNDS):
        last = post
        # What the rebuilds of this round may update in place (never part of ``last``, which
        # so stays as it was).
        own = _InPlace()
        for k, rewrite in enumerate(rewrites):
            if quiet >= count:
                return post
            if not typed:
                post = infer_types(post)
                typed = True
                graph = None
                own = _InPlace()
            if graph is None:
                graph = IndexedGraph(post)
                tracker.reset()
            if tracker.keeps(k, rewrite, graph, own.calls):
                quiet += 1
                continue
            if ends is not None:
                if _same_program(ends):
                    return ends[1]
                ends = None
            typing = _Typing(type_new)
            new, new_graph = _apply(rewrite, k, post, graph, typing, tracker, own)
            if new is not post:
                post = new
                typed = not typing.stale and type_new is not None
                graph = new_graph if typed else None
                quiet = 0
            else:
                quiet += 1
        # (Compared only when the next round is about to change the program.)
        ends = None if post is last else (last, post)
    if ends is not None and _same_program(ends):
        return ends[1]
    raise RewriteLimitError(
        f"the rewrites ({', '.join(r.name for r in rewrites)}) still changed the program after "
        f"{MAX_ROUNDS} rounds; some of them undo each other"
    )


def _same_program(ends: tuple[Expr, Expr]) -> bool:
    """Whether a round left the program structurally equal (Relay's end of the rounds)."""
    return structural_equal(ends[0], ends[1], map_free_vars=True)
