"""Matching a dataflow pattern against an expression, with the rules of TVM's matcher.

The rules (``DFPatternMatcher`` of ``dataflow_matcher.cc``), which decide
what a rewrite or a partition finds:

* A pattern node, once matched, stays bound to that expression for the
  rest of the match (``x + x`` needs the same node twice); a failed branch
  unbinds everything it bound.
* A call pattern of ``add`` or ``multiply`` also matches its two arguments
  swapped; ``(a * b) / c`` also matches ``a * (b / c)`` and ``b * (a / c)``,
  and ``a * (b / c)`` matches ``(a * b) / c``.
* An attribute pattern reads an operator's registered attributes, a call's
  attributes or a function's; type, dtype and shape patterns type the
  expression when it has no type yet (:mod:`.type_inference`).
* ``dominates(parent, path, child)``: the child matches; every input of it
  (not the callee, not a variable or constant input of a call), followed
  towards the program's inputs, reaches the one node matching ``parent``
  through nodes matching ``path``; and the child post-dominates that parent.

Cost: a match visits each (pattern node, expression) pair a bounded number of
times, and a dominator's path walk visits each node once (a node already
found on the path is not walked again), so a fixed pattern tried at every
node of a program costs time linear in the program.  The matcher recurses
along the pattern, not the program, except through self-referencing patterns
(``redirect_to``) and long dominator paths; a match that gets that deep is
run again on a thread with a large stack (:mod:`relaypass.deep_recursion`),
so any depth of program is fine.

:class:`DFPatternMatcher` can also keep the deepest failure it met, which is
what :func:`~relaypass.dataflow_pattern.explain.explain_match` reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from relaypass.deep_recursion import run_deep, state
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.op import Op
from relaypass.ir.structural import structural_equal
from relaypass.ir.summary import short_text
from relaypass.ir.types import TensorType

from .graph import IndexedGraph
from .pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    PatternBuildError,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    _need_pattern,
    slots,
)
from .type_inference import type_of

__all__ = ["Bindings", "CallFilter", "DFPatternMatcher", "Failure", "call_filter", "match",
           "plain_matcher", "quick_check", "run_deep_if_needed"]

T = TypeVar("T")

DEEP_MATCH = 120
"""Nesting of pattern visits after which a match moves to a thread with a large stack."""


class _TooDeep(Exception):
    """Raised by a match that needs more stack than the calling thread has."""


def run_deep_if_needed(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, run again on a large-stack thread if a match in it got too deep.

    ``fn`` must have no effect outside itself before its matches finish
    (matching and grouping have none), since it may run twice.
    """
    try:
        return fn(*args)
    except _TooDeep:
        return run_deep(fn, *args)


class Failure:
    """Where a match failed: the sub-pattern, the node it was tried on and why."""

    __slots__ = ("kind", "pattern", "expr", "detail", "depth", "bound")

    def __init__(self, kind: str, pattern: DFPattern, expr: Expr, detail: str, depth: int,
                 bound: dict[DFPattern, list[Expr]]) -> None:
        self.kind = kind
        self.pattern = pattern
        self.expr = expr
        self.detail = detail
        self.depth = depth
        self.bound = bound


_REASSOCIATING = ("divide", "multiply")
"""Call patterns that may match a call of another operator (TVM's reassociation)."""


def _op_name(pattern: DFPattern) -> str | None:
    """The operator a call pattern's callee names, if it is ``is_op(...)``."""
    if type(pattern) is ExprPattern and type(pattern.expr) is Op:
        return pattern.expr.name
    return None


def _calls_op(expr: Expr, name: str) -> bool:
    return type(expr) is Call and type(expr.op) is Op and expr.op.name == name


def _attr_value_equal(expected: Any, actual: Any) -> bool:
    """TVM's ``MatchRetValue``: numbers, strings and dtypes by value, lists item by item."""
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return False
        return all(_attr_value_equal(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, str):
        return not isinstance(actual, (tuple, list)) and actual is not None and (
            str(actual) == expected)
    if isinstance(expected, (bool, int, float)):
        value = getattr(actual, "value", actual)
        return isinstance(value, (bool, int, float)) and value == expected
    if actual is expected:
        return True
    try:
        return structural_equal(expected, actual)
    except Exception:  # values of unrelated kinds: not equal
        return False


class CallFilter(NamedTuple):
    """Which calls a pattern can match: of the operators ``names``, or (``open``) of non-operators."""

    names: frozenset[str]
    open: bool

    def rejects(self, expr: Expr) -> bool:
        if type(expr) is not Call:
            return True
        callee = expr.op
        return callee.name not in self.names if type(callee) is Op else not self.open


def call_filter(pattern: DFPattern) -> CallFilter | None:
    """The calls an expression matching ``pattern`` must be among; None: no such bound.

    A quick, exact pre-check: a call pattern of ``is_op(name)`` (or of an
    alternative of those) matches only calls of those operators -- and,
    through the reassociation rule, a ``divide`` pattern a ``multiply`` call
    and back; a call pattern whose callee is ``wildcard().has_attr(...)``
    matches calls of the operators with those registered attributes, or
    calls of functions (whose own attributes it reads).
    """
    kind = type(pattern)
    if kind in (AttrPattern, TypePattern, DataTypePattern, ShapePattern):
        return call_filter(pattern.pattern)
    if kind is DominatorPattern:
        return call_filter(pattern.child)
    if kind is AltPattern:
        left, right = call_filter(pattern.left), call_filter(pattern.right)
        if left is None or right is None:
            return None
        return CallFilter(left.names | right.names, left.open or right.open)
    if kind is CallPattern:
        callee = _callee_filter(pattern.op)
        if callee is None:
            return None
        names = callee.names
        extra = {partner for name, partner in (("divide", "multiply"), ("multiply", "divide"))
                 if name in names}
        return CallFilter(names | extra, callee.open)
    return None


def _callee_filter(pattern: DFPattern) -> CallFilter | None:
    kind = type(pattern)
    if kind is AltPattern:
        left, right = _callee_filter(pattern.left), _callee_filter(pattern.right)
        if left is None or right is None:
            return None
        return CallFilter(left.names | right.names, left.open or right.open)
    if kind is ExprPattern and type(pattern.expr) is Op:
        return CallFilter(frozenset({pattern.expr.name}), False)
    if (kind is AttrPattern and type(pattern.pattern) is WildcardPattern
            and pattern.pattern.pattern is None):
        wanted = pattern.attrs.items()
        ops = [Op.get(name) for name in Op.list_op_names()]
        names = frozenset(op.name for op in ops if all(
            op.has_attr(k) and _attr_value_equal(v, op.get_attr(k)) for k, v in wanted))
        return CallFilter(names, True)
    return None


Check = Callable[[Expr], bool]

QUICK_DEPTH = 3
"""Levels of a pattern (from its root) that :func:`quick_check` looks at."""


def quick_check(pattern: DFPattern, depth: int = QUICK_DEPTH) -> Check | None:
    """A cheap test that is false only where ``pattern`` cannot match; None: no such test.

    What the matcher would look at first, without binding anything: the
    kind of each node down to ``depth`` levels, the operators of calls
    (through :func:`call_filter`), the number of arguments and fields, a
    projection's index -- with the matcher's own exceptions (``add`` and
    ``multiply`` take their arguments either way round; ``divide`` and
    ``multiply`` reassociate, so below them only the operator is tested).
    Types, attributes and bindings are left to the matcher.  A grouper tries
    a pattern at most nodes of a program and matches at few; this rejects
    the others at the cost of a few attribute reads.
    """
    if depth <= 0:
        return None
    kind = type(pattern)
    if kind in (AttrPattern, TypePattern, DataTypePattern, ShapePattern):
        return quick_check(pattern.pattern, depth)
    if kind is DominatorPattern:
        return quick_check(pattern.child, depth)
    if kind is WildcardPattern:
        return None if pattern.pattern is None else quick_check(pattern.pattern, depth)
    if kind is AltPattern:
        left, right = quick_check(pattern.left, depth), quick_check(pattern.right, depth)
        if left is None or right is None:
            return None
        return lambda e: left(e) or right(e)
    if kind is ConstantPattern:
        return _is_kind(Constant)
    if kind is VarPattern:
        return _is_kind(Var)
    if kind is ExprPattern:
        return _is_kind(type(pattern.expr))
    if kind in (FunctionPattern, IfPattern, LetPattern):
        return _is_kind({FunctionPattern: Function, IfPattern: If, LetPattern: Let}[kind])
    if kind is TupleGetItemPattern:
        inner = quick_check(pattern.tuple, depth - 1)
        index = pattern.index

        def tuple_get_item(e: Expr) -> bool:
            return (type(e) is TupleGetItem and (index == -1 or e.index == index)
                    and (inner is None or inner(e.tuple_value)))

        return tuple_get_item
    if kind is TuplePattern:
        if pattern.fields is None:
            return _is_kind(Tuple)
        checks = [quick_check(f, depth - 1) for f in pattern.fields]
        count = len(checks)

        def tuple_(e: Expr) -> bool:
            return (type(e) is Tuple and len(e.fields) == count
                    and all(c is None or c(f) for c, f in zip(checks, e.fields)))

        return tuple_
    if kind is CallPattern:
        return _quick_call(pattern, depth)
    return None


def _is_kind(cls: type) -> Check:
    return lambda e: type(e) is cls


def _quick_call(pattern: CallPattern, depth: int) -> Check:
    calls = call_filter(pattern)
    names = calls.names if calls is not None else None
    open_ = calls.open if calls is not None else True
    op_name = _op_name(pattern.op)
    args = pattern.args
    plain = None if op_name not in _REASSOCIATING else op_name  # args tested only for it

    def callee_ok(e: Expr) -> bool:
        callee = e.op
        if type(callee) is Op:
            return callee.name in names
        return open_

    if args is None:
        if names is None:
            return _is_kind(Call)
        return lambda e: type(e) is Call and callee_ok(e)
    count = len(args)
    checks = [(k, c) for k, a in enumerate(args) if (c := quick_check(a, depth - 1)) is not None]
    # A pattern node used twice is bound to one expression (``x + x``).
    first: dict[DFPattern, int] = {}
    same = []
    for k, a in enumerate(args):
        if a in first:
            same.append((first[a], k))
        else:
            first[a] = k
    either_way = op_name in ("add", "multiply") and count == 2

    def args_ok(e_args: tuple) -> bool:
        for k, c in checks:
            if not c(e_args[k]):
                return False
        for i, j in same:
            if e_args[i] is not e_args[j]:
                return False
        return True

    def call(e: Expr) -> bool:
        if type(e) is not Call or (names is not None and not callee_ok(e)):
            return False
        if plain is not None and (type(e.op) is not Op or e.op.name != plain):
            return True  # reassociated: the matcher rearranges the arguments
        e_args = e.args
        if len(e_args) != count:
            return False
        if args_ok(e_args):
            return True
        return either_way and args_ok((e_args[1], e_args[0]))

    return call


Bindings = dict[DFPattern, list[Expr]]
"""What each pattern node of a match is bound to (a matcher's ``memo``)."""

_Step = Callable[[Expr, list], bool]


def plain_matcher(pattern: DFPattern, pairs: bool = False
                  ) -> Callable[[Expr], Bindings | None] | None:
    """A faster matcher for a *plain* ``pattern``: ``m(expr)`` gives the bindings of a match
    (as :class:`DFPatternMatcher`'s ``memo`` would hold them, in the same order) or None.

    Plain: a tree (no node reached twice) of calls of an operator (``is_op(name)(...)``
    with its arguments), wildcards, constants, tuples of given fields and projections,
    no deeper than :data:`DEEP_MATCH`.  Matching one needs no bindings to check, types,
    attributes or graph, only the rules of the kinds: ``add`` and ``multiply`` take
    their arguments either way round, and a ``divide`` or ``multiply`` pattern with a
    call among its arguments (which could match reassociated) is not plain.  The
    grouper tries a pattern at every candidate root: for the patterns most tables
    hold, this does the generic matcher's work without its per-node bookkeeping.
    None when ``pattern`` is not plain.  ``pairs``: ``m(expr)`` gives the bindings as a list
    of (pattern node, expression) pairs instead, each pattern node once, in the order
    the generic matcher binds them (a grouper reads the match's shape from that order).
    """
    seen: set[DFPattern] = set()
    stack = [(pattern, 1)]
    while stack:
        p, depth = stack.pop()
        if p in seen or depth > DEEP_MATCH:
            return None
        seen.add(p)
        kind = type(p)
        if kind is CallPattern:
            name = _op_name(p.op)
            if name is None or p.args is None or p.op in seen:
                return None
            if name in _REASSOCIATING and any(type(a) is CallPattern for a in p.args):
                return None
            seen.add(p.op)
            stack.extend((a, depth + 1) for a in p.args)
        elif kind is TuplePattern and p.fields is not None:
            stack.extend((f, depth + 1) for f in p.fields)
        elif kind is TupleGetItemPattern:
            stack.append((p.tuple, depth + 1))
        elif not (kind is ConstantPattern or kind is WildcardPattern and p.pattern is None):
            return None
    step = _plain_step(pattern)
    if pairs:
        def match_pairs(expr: Expr) -> list[tuple[DFPattern, Expr]] | None:
            out: list[tuple[DFPattern, Expr]] = []
            return out if step(expr, out) else None

        return match_pairs

    def match(expr: Expr) -> Bindings | None:
        out: list[tuple[DFPattern, Expr]] = []
        if step(expr, out):
            return {p: [e] for p, e in out}
        return None

    return match


def _plain_step(p: DFPattern) -> _Step:
    """``step(expr, out)``: whether ``expr`` matches plain ``p``; appends the bindings to
    ``out`` in the generic matcher's order (a callee first, a node after its parts)."""
    kind = type(p)
    if kind is WildcardPattern:
        def wildcard(e: Expr, out: list) -> bool:
            out.append((p, e))
            return True

        return wildcard
    if kind is ConstantPattern:
        def constant(e: Expr, out: list) -> bool:
            if type(e) is not Constant:
                return False
            out.append((p, e))
            return True

        return constant
    if kind is TupleGetItemPattern:
        inner = _plain_step(p.tuple)
        index = p.index

        def tuple_get_item(e: Expr, out: list) -> bool:
            if (type(e) is not TupleGetItem or index != -1 and e.index != index
                    or not inner(e.tuple_value, out)):
                return False
            out.append((p, e))
            return True

        return tuple_get_item
    parts = [_plain_step(a) for a in (p.fields if kind is TuplePattern else p.args)]
    count = len(parts)
    if kind is TuplePattern:
        def tuple_(e: Expr, out: list) -> bool:
            if type(e) is not Tuple or len(e.fields) != count or not _all(parts, e.fields, out):
                return False
            out.append((p, e))
            return True

        return tuple_
    op_pattern = p.op
    op = op_pattern.expr
    swapped = parts[::-1] if op.name in ("add", "multiply") else None

    def call(e: Expr, out: list) -> bool:
        if type(e) is not Call or e.op is not op or len(e.args) != count:
            return False
        mark = len(out)
        out.append((op_pattern, op))
        if not _all(parts, e.args, out):
            if swapped is None:
                return False
            del out[mark + 1:]  # (the callee stays bound)
            if not _all(swapped, e.args, out):
                return False
        out.append((p, e))
        return True

    return call


def _all(steps: list[_Step], exprs: tuple, out: list) -> bool:
    for step, e in zip(steps, exprs):
        if not step(e, out):
            return False
    return True


_UNSET = object()


class DFPatternMatcher:
    """Matches patterns against the nodes of one program (``graph_root``).

    ``memo`` maps each pattern node bound so far to what it matched: what a
    callback receives as ``node_map``.  ``explain=True`` keeps the deepest
    failure in ``failure``.
    """

    def __init__(self, graph_root: Expr, graph: IndexedGraph | None = None,
                 explain: bool = False,
                 filters: dict[DFPattern, CallFilter | None] | None = None) -> None:
        self._root = graph_root
        self._graph = graph
        self.memo: dict[DFPattern, list[Expr]] = {}
        self._bound_order: list[DFPattern] = []
        self._memoize = True
        self._depth = 0
        self._explain = explain
        self._quiet = 0
        self.failure: Failure | None = None
        # Each pattern node's call filter (it depends on the pattern alone): ``filters`` lets a
        # caller that matches one pattern many times keep them across matchers.
        self._filters: dict[DFPattern, CallFilter | None] = {} if filters is None else filters

    @property
    def graph(self) -> IndexedGraph:
        """The indexed graph of the program, built when a dominator pattern first needs it."""
        if self._graph is None:
            self._graph = IndexedGraph(self._root)
        return self._graph

    def match(self, pattern: DFPattern, expr: Expr) -> bool:
        """Whether ``expr`` matches ``pattern``; ``memo`` holds the bindings afterwards."""
        self.memo = {}
        self._bound_order = []
        self._memoize = True
        self._depth = 0
        self.failure = None
        return self.visit(pattern, expr)

    # --- the core -------------------------------------------------------------------

    def visit(self, pattern: DFPattern, expr: Expr) -> bool:
        memo = self.memo
        if self._memoize:
            bound = memo.get(pattern)
            if bound is not None:
                if bound[0] is expr:
                    return True
                if self._explain:  # the message costs more than the match
                    self._fail("binding", pattern, expr,
                               f"this pattern is already bound to {short_text(bound[0], 80)}")
                return False
        if not self._explain:  # an explanation takes the long way, for its messages
            calls = self._filters.get(pattern, _UNSET)
            if calls is _UNSET:
                calls = self._filters[pattern] = call_filter(pattern)
            if calls is not None and calls.rejects(expr):
                return False
        depth = self._depth = self._depth + 1
        if depth > DEEP_MATCH and not state.worker:
            raise _TooDeep  # the whole match runs again elsewhere: no state to restore
        mark = len(self._bound_order)
        matched = _VISIT[type(pattern)](self, pattern, expr)
        self._depth = depth - 1
        if matched:
            memo.setdefault(pattern, []).append(expr)
            self._bound_order.append(pattern)
        else:
            self._unbind(mark)
        return matched

    def _unbind(self, mark: int) -> None:
        order = self._bound_order
        if len(order) > mark:
            memo = self.memo
            for p in order[mark:]:
                memo.pop(p, None)
            del order[mark:]

    def _fail(self, kind: str, pattern: DFPattern, expr: Expr, detail: str,
              extra_depth: int = 0) -> None:
        if not self._explain or self._quiet:
            return
        depth = self._depth + extra_depth
        if self.failure is None or depth > self.failure.depth:
            bound = {p: list(es) for p, es in self.memo.items()}
            self.failure = Failure(kind, pattern, expr, detail, depth, bound)

    def _args(self, patterns: Sequence[DFPattern] | None, args: Sequence[Expr],
              mark: int, where: DFPattern, call: Expr) -> bool:
        if patterns is None:
            return True
        if len(patterns) != len(args):
            self._fail("arity", where, call,
                       f"expected {len(patterns)} arguments, found {len(args)}")
            self._unbind(mark)
            return False
        for p, a in zip(patterns, args):
            if not self.visit(p, a):
                self._unbind(mark)
                return False
        return True

    # --- one method per pattern kind ------------------------------------------------

    def _alt(self, p: AltPattern, expr: Expr) -> bool:
        return self.visit(p.left, expr) or self.visit(p.right, expr)

    def _attr(self, p: AttrPattern, expr: Expr) -> bool:
        if not self.visit(p.pattern, expr):
            return False
        kind = type(expr)
        if kind is Op:
            for key, want in p.attrs.items():
                if not expr.has_attr(key):
                    self._fail("attr", p, expr, f"operator {expr.name} has no attribute {key}")
                    return False
                have = expr.get_attr(key)
                if not _attr_value_equal(want, have):
                    self._fail("attr", p, expr,
                               f"operator attribute {key} is {have!r}, expected {want!r}")
                    return False
            return True
        if kind is Call:
            attrs = expr.attrs
            for key, want in p.attrs.items():
                if attrs is None or key not in attrs:
                    self._fail("attr", p, expr, f"the call has no attribute {key}")
                    return False
                if not _attr_value_equal(want, attrs[key]):
                    self._fail("attr", p, expr,
                               f"attribute {key} is {attrs[key]!r}, expected {want!r}")
                    return False
            return True
        if kind is Function:
            attrs = expr.attrs
            for key, want in p.attrs.items():
                if key not in attrs:
                    self._fail("attr", p, expr, f"the function has no attribute {key}")
                    return False
                have = attrs[key]
                if not (have == want or _attr_value_equal(want, have)):
                    self._fail("attr", p, expr,
                               f"function attribute {key} is {have!r}, expected {want!r}")
                    return False
            return True
        self._fail("attr", p, expr,
                   f"a {kind.__name__} carries no attributes (only operators, calls, functions)")
        return False

    def _call(self, p: CallPattern, expr: Expr) -> bool:
        if type(expr) is not Call:
            self._fail("kind", p, expr, f"expected a call, found a {type(expr).__name__}")
            return False
        mark = len(self._bound_order)
        op_name = _op_name(p.op)
        callee = expr.op
        if (op_name is not None and type(callee) is Op and callee.name != op_name
                and op_name not in _REASSOCIATING):
            # Another operator: what visiting the callee pattern would conclude, at once.
            self._fail("op", p, expr, f"expected a call of {op_name}, found {callee.name}")
            return False
        op_pattern = p.op
        if (type(op_pattern) is ExprPattern and op_pattern.expr is callee and self._memoize
                and op_pattern not in self.memo):
            # The callee is the pattern's operator, seen for the first time: bound at once
            # (what visiting it would do, without the visit).
            self.memo[op_pattern] = [callee]
            self._bound_order.append(op_pattern)
            matched_op = True
        else:
            matched_op = self.visit(op_pattern, callee)
        if matched_op:
            mark2 = len(self._bound_order)
            if self._args(p.args, expr.args, mark2, p, expr):
                return True
            if op_name in ("add", "multiply") and p.args is not None:
                return self._args(p.args[::-1], expr.args, mark2, p, expr)
            return False
        self._unbind(mark)
        if op_name is not None and type(expr.op) is Op:
            self._fail("op", p, expr, f"expected a call of {op_name}, found {expr.op.name}")
        else:
            self._fail("op", p, expr, "the callee does not match")
        return self._reassociated(p, op_name, expr, mark)

    def _reassociated(self, p: CallPattern, op_name: str | None, expr: Call, mark: int) -> bool:
        """TVM's divide/multiply reassociation, tried when the callee did not match."""
        args = p.args
        if args is None or len(args) != 2 or len(expr.args) != 2:
            return False
        if op_name == "divide":
            inner = args[0]
            if (type(inner) is CallPattern and _op_name(inner.op) == "multiply"
                    and inner.args is not None and len(inner.args) == 2
                    and _calls_op(expr, "multiply")
                    and (_calls_op(expr.args[0], "divide") or _calls_op(expr.args[1], "divide"))):
                for k in (0, 1):
                    div = CallPattern(p.op, [inner.args[k], args[1]])
                    mul = CallPattern(inner.op, [inner.args[1 - k], div])
                    if self.visit(mul, expr):
                        return True
                    self._unbind(mark)
            return False
        if op_name == "multiply":
            for k in (0, 1):
                inner = args[k]
                if (type(inner) is CallPattern and _op_name(inner.op) == "divide"
                        and inner.args is not None and len(inner.args) == 2
                        and _calls_op(expr, "divide")
                        and (_calls_op(expr.args[0], "multiply")
                             or _calls_op(expr.args[1], "multiply"))):
                    mul = CallPattern(p.op, [inner.args[0], args[1 - k]])
                    div = CallPattern(inner.op, [mul, inner.args[1]])
                    return self.visit(div, expr)
        return False

    def _constant(self, p: ConstantPattern, expr: Expr) -> bool:
        if type(expr) is Constant:
            return True
        self._fail("kind", p, expr, f"expected a constant, found a {type(expr).__name__}")
        return False

    def _data_type(self, p: DataTypePattern, expr: Expr) -> bool:
        ty = type_of(expr)
        if not isinstance(ty, TensorType):
            self._fail("dtype", p, expr, f"expected a tensor of {p.dtype}, found type {ty}")
            return False
        if str(ty.dtype) != p.dtype:
            self._fail("dtype", p, expr, f"dtype is {ty.dtype}, expected {p.dtype}")
            return False
        return self.visit(p.pattern, expr)

    def _shape(self, p: ShapePattern, expr: Expr) -> bool:
        ty = type_of(expr)
        want = "[" + ", ".join(str(getattr(d, "value", d)) for d in p.shape) + "]"
        if not isinstance(ty, TensorType):
            self._fail("shape", p, expr, f"expected a tensor of shape {want}, found type {ty}")
            return False
        if not structural_equal(tuple(p.shape), tuple(ty.shape)):
            have = "[" + ", ".join(str(d) for d in ty.shape) + "]"
            self._fail("shape", p, expr, f"shape is {have}, expected {want}")
            return False
        return self.visit(p.pattern, expr)

    def _type(self, p: TypePattern, expr: Expr) -> bool:
        ty = type_of(expr)
        if not structural_equal(p.type, ty):
            self._fail("type", p, expr, f"type is {ty}, expected {p.type}")
            return False
        return self.visit(p.pattern, expr)

    def _expr(self, p: ExprPattern, expr: Expr) -> bool:
        want = p.expr
        if want is expr:
            return True
        if type(want) is Op:
            if type(expr) is Op:
                if self._depth == 1:  # a callee's is reported by the call pattern, with the call
                    self._fail("op", p, expr, f"expected operator {want.name}, found {expr.name}")
                return False
            self._fail("kind", p, expr, f"expected operator {want.name}, found a "
                                        f"{type(expr).__name__}")
            return False
        if type(want) is type(expr) and structural_equal(want, expr):
            return True
        self._fail("expr", p, expr, f"not structurally equal to {short_text(want, 80)}")
        return False

    def _function(self, p: FunctionPattern, expr: Expr) -> bool:
        if type(expr) is not Function:
            self._fail("kind", p, expr, f"expected a function, found a {type(expr).__name__}")
            return False
        params = p.params
        if params is not None:
            if len(params) != len(expr.params):
                self._fail("arity", p, expr,
                           f"expected {len(params)} parameters, found {len(expr.params)}")
                return False
            for q, v in zip(params, expr.params):
                if not self.visit(q, v):
                    return False
        return self.visit(p.body, expr.body)

    def _tuple_get_item(self, p: TupleGetItemPattern, expr: Expr) -> bool:
        if type(expr) is not TupleGetItem:
            self._fail("kind", p, expr,
                       f"expected a tuple field access, found a {type(expr).__name__}")
            return False
        if p.index != -1 and p.index != expr.index:
            self._fail("index", p, expr, f"takes field {expr.index}, expected field {p.index}")
            return False
        return self.visit(p.tuple, expr.tuple_value)

    def _tuple(self, p: TuplePattern, expr: Expr) -> bool:
        if type(expr) is not Tuple:
            self._fail("kind", p, expr, f"expected a tuple, found a {type(expr).__name__}")
            return False
        fields = p.fields
        if fields is None:
            return True
        if len(fields) != len(expr.fields):
            self._fail("arity", p, expr,
                       f"expected {len(fields)} fields, found {len(expr.fields)}")
            return False
        return all(self.visit(q, f) for q, f in zip(fields, expr.fields))

    def _if(self, p: IfPattern, expr: Expr) -> bool:
        if type(expr) is not If:
            self._fail("kind", p, expr, f"expected an if, found a {type(expr).__name__}")
            return False
        return (self.visit(p.cond, expr.cond) and self.visit(p.true_branch, expr.true_branch)
                and self.visit(p.false_branch, expr.false_branch))

    def _let(self, p: LetPattern, expr: Expr) -> bool:
        if type(expr) is not Let:
            self._fail("kind", p, expr, f"expected a let, found a {type(expr).__name__}")
            return False
        return (self.visit(p.var, expr.var) and self.visit(p.value, expr.value)
                and self.visit(p.body, expr.body))

    def _var(self, p: VarPattern, expr: Expr) -> bool:
        if type(expr) is not Var:
            self._fail("kind", p, expr, f"expected a variable, found a {type(expr).__name__}")
            return False
        if p.name and p.name != expr.name_hint:
            self._fail("var-name", p, expr,
                       f"variable is named {expr.name_hint}, expected {p.name}")
            return False
        return True

    def _wildcard(self, p: WildcardPattern, expr: Expr) -> bool:
        return p.pattern is None or self.visit(p.pattern, expr)

    # --- dominators -----------------------------------------------------------------

    def _dominator(self, p: DominatorPattern, expr: Expr) -> bool:
        if not self.visit(p.child, expr):
            return False
        on_path = self._matches_path(p, expr)
        self._memoize = True
        return on_path and self._dominates_parent(p, expr)

    def _matches_path(self, p: DominatorPattern, expr: Expr) -> bool:
        """Every input of ``expr``, followed upwards, meets the parent through path nodes.

        TVM's rule, walked with an explicit stack: the parent is tried with
        memoization (so it is one node), the path without (it matches many).
        A node already walked is not walked again.
        """
        graph = self.graph
        walked: set[Expr] = set()
        stack: list[list[Any]] = [[expr, iter(graph.inputs_of(expr)), 0]]
        while stack:
            frame = stack[-1]
            node = frame[0]
            callee = node.op if type(node) is Call else None
            descended = False
            for inp in frame[1]:
                if callee is not None and (inp is callee or type(inp) in (Var, Constant)):
                    continue
                frame[2] += 1
                if inp in walked:
                    continue
                # Both are probes: their failures are reported as one of the path.
                self._quiet += 1
                try:
                    self._memoize = True
                    if self.visit(p.parent, inp):
                        continue
                    self._memoize = False
                    on_path = self.visit(p.path, inp)
                finally:
                    self._quiet -= 1
                if not on_path:
                    self._fail("dominator-path", p, inp,
                               "on a path from the child towards the parent, this node matches "
                               "neither the parent nor the path pattern", len(stack))
                    return False
                stack.append([inp, iter(graph.inputs_of(inp)), 0])
                descended = True
                break
            if descended:
                continue
            stack.pop()
            if frame[2] == 0:
                self._fail("dominator-path", p, node,
                           "a path from the child ends here without reaching the parent",
                           len(stack) + 1)
                return False
            walked.add(node)
        return True

    def _dominates_parent(self, p: DominatorPattern, expr: Expr) -> bool:
        graph = self.graph
        bound = self.memo.get(p.parent)
        if bound is not None:
            if graph.dominates(expr, bound[0]):
                return True
        else:
            for node in graph.dominated_by(expr):
                if self.visit(p.parent, node):
                    return True
        self._fail("dominator-parent", p, expr,
                   "the child does not post-dominate the node matching the parent")
        return False


_VISIT: dict[type, Callable[[DFPatternMatcher, Any, Expr], bool]] = {
    AltPattern: DFPatternMatcher._alt,
    AttrPattern: DFPatternMatcher._attr,
    CallPattern: DFPatternMatcher._call,
    ConstantPattern: DFPatternMatcher._constant,
    DataTypePattern: DFPatternMatcher._data_type,
    DominatorPattern: DFPatternMatcher._dominator,
    ExprPattern: DFPatternMatcher._expr,
    FunctionPattern: DFPatternMatcher._function,
    IfPattern: DFPatternMatcher._if,
    LetPattern: DFPatternMatcher._let,
    ShapePattern: DFPatternMatcher._shape,
    TupleGetItemPattern: DFPatternMatcher._tuple_get_item,
    TuplePattern: DFPatternMatcher._tuple,
    TypePattern: DFPatternMatcher._type,
    VarPattern: DFPatternMatcher._var,
    WildcardPattern: DFPatternMatcher._wildcard,
}


def _match_once(pattern: DFPattern, expr: Expr) -> bool:
    return DFPatternMatcher(expr).match(pattern, expr)


def match(pattern: DFPattern, expr: Expr) -> bool:
    """Whether ``expr`` matches ``pattern`` (TVM's ``relay.dataflow_pattern.match``)."""
    _need_pattern(pattern, "match's pattern")
    if not isinstance(expr, Expr):
        raise PatternBuildError(f"match takes a Relay expression, not {type(expr).__name__}")
    return run_deep_if_needed(_match_once, pattern, expr)


slots.match = match
