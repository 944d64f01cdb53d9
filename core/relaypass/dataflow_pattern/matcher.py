"""Dataflow patterns and the rewrite driver behind SimplifyExpr, with Relay's matching rules.

Relay writes its expression simplifications as dataflow patterns with a
callback each (``dataflow_matcher.cc``: ``DFPattern``, ``PatternGrouper``,
``PatternRewriter``).  What a rewrite produces depends on more than the
pattern, so those rules are reproduced here:

Matching (:class:`Matcher`)
    A pattern node matched once is bound to that expression for the rest of
    the match (``mul(x, x)`` needs the same node twice); a failed alternative
    forgets what it bound.  A call pattern whose operator is ``add`` or
    ``multiply`` also matches with its two arguments swapped.
Grouping (:func:`find_groups`)
    Candidate roots are tried from the output of the program towards its
    inputs (reverse post-order).  A match becomes a *group*: the matched
    calls, with the expressions matched by wildcards as its inputs.  A group
    is dropped when one of its calls already belongs to another group, or
    when a call inside it (not its root) is also used outside it, unless that
    use flows only into the group's root (the root post-dominates it).
Rewriting (:func:`rewrite_patterns`)
    Each rewrite runs over the whole function in post-order; at the root of
    a group its callback gets the original root (``pre``, typed), the root
    rebuilt from rewritten children (``post``) and the match.  A node rebuilt
    only because a child changed keeps its original type, as Relay's
    copy-on-write rebuild does.  The rewrites run in order, each on a typed
    program (InferType runs again after a rewrite changed something), and
    the whole list is repeated until a round changes nothing.  Rewrites that
    undo each other never get there: after :data:`MAX_ROUNDS` rounds that
    is a :class:`RewriteLimitError`.  Relay's limit is 100 runs of single
    rewrites, which with its 24 simplifications is reached in the fifth
    round even by legal programs (``x + x`` doubled nine times needs more
    rounds, each halving a chain of multiplications); counting rounds keeps
    the guard without that failure.

Relay's pattern language has more (dominator, function, type and shape
patterns, and a divide/multiply reassociation); only what SimplifyExpr's
rewrites use is here.  Traversals use explicit stacks or the non-recursive
functors: any length of dataflow is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from relaypass.errors import RelayPassError
from relaypass.functor import ExprMutator, MixedModeMutator, post_order_visit
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    Let,
    children,
    set_checked_type,
)
from relaypass.ir.op import Op
from relaypass.ir.structural import structural_equal

__all__ = [
    "AltPattern", "CallPattern", "ConstantPattern", "DataflowGraph", "MAX_ROUNDS", "Match",
    "Matcher", "OpAttrPattern", "OpPattern", "Pattern", "Rewrite", "RewriteLimitError",
    "Wildcard", "find_groups", "rewrite_patterns",
]

MAX_ROUNDS = 100
"""Rounds of all rewrites before concluding that some of them undo each other."""


class RewriteLimitError(RelayPassError):
    """The rewrites did not reach a fixed point: some of them undo each other."""


# --- patterns -----------------------------------------------------------------------------


class Pattern:
    """A node of a dataflow pattern; ``p(a, b)`` is a call pattern, ``p | q`` an alternative.

    ``names``: the operators a matching expression must be a call of (None:
    no such constraint), checked before anything else so that most
    candidates are rejected at once.
    """

    __slots__ = ("names",)

    def __init__(self) -> None:
        self.names: frozenset[str] | None = None

    def __call__(self, *args: Pattern) -> CallPattern:
        return CallPattern(self, list(args))

    def __or__(self, other: Pattern) -> AltPattern:
        return AltPattern(self, other)

    def __add__(self, other: Pattern) -> CallPattern:
        return CallPattern(OpPattern("add"), [self, other])

    def __mul__(self, other: Pattern) -> CallPattern:
        return CallPattern(OpPattern("multiply"), [self, other])

    def match(self, m: Matcher, expr: Expr) -> bool:
        raise NotImplementedError


class Wildcard(Pattern):
    """Any expression; what it matches is an input of the group."""

    __slots__ = ()

    def match(self, m: Matcher, expr: Expr) -> bool:
        return True


class ConstantPattern(Pattern):
    """A Constant node."""

    __slots__ = ()

    def match(self, m: Matcher, expr: Expr) -> bool:
        return type(expr) is Constant


class OpPattern(Pattern):
    """The operator named ``name`` (Relay's ``IsOp``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def match(self, m: Matcher, expr: Expr) -> bool:
        return type(expr) is Op and expr.name == self.name


class OpAttrPattern(Pattern):
    """Any operator whose registered attribute ``key`` equals ``value`` (``HasAttr``)."""

    __slots__ = ("key", "value")

    def __init__(self, key: str, value: object) -> None:
        super().__init__()
        self.key = key
        self.value = value

    def match(self, m: Matcher, expr: Expr) -> bool:
        return self.accepts(expr)

    def accepts(self, expr: Expr) -> bool:
        return type(expr) is Op and expr.has_attr(self.key) and expr.get_attr(self.key) == self.value


class CallPattern(Pattern):
    """A call whose callee matches ``op`` and whose arguments match ``args`` (None: any).

    With ``add`` or ``multiply`` as the callee, the two arguments also match
    the other way round, as in Relay.
    """

    __slots__ = ("op", "args", "_callee_by_name", "_commutative")

    def __init__(self, op: Pattern, args: list[Pattern] | None) -> None:
        super().__init__()
        self.op = op
        self.args = args
        self.names = _callee_names(op)
        # The callee is decided by its name alone: checking ``names`` is the whole match.
        self._callee_by_name = _decided_by_name(op)
        self._commutative = type(op) is OpPattern and op.name in ("add", "multiply")

    def match(self, m: Matcher, expr: Expr) -> bool:
        if type(expr) is not Call:
            return False
        if not self._callee_by_name and not m.visit(self.op, expr.op):
            return False
        args = self.args
        if args is None:
            return True
        if m.match_args(args, expr.args):
            return True
        if self._commutative and len(args) == 2:
            return m.match_args((args[1], args[0]), expr.args)
        return False


class AltPattern(Pattern):
    """``left``, or else ``right``."""

    __slots__ = ("left", "right")

    def __init__(self, left: Pattern, right: Pattern) -> None:
        super().__init__()
        self.left = left
        self.right = right
        if left.names is not None and right.names is not None:
            self.names = left.names | right.names

    def match(self, m: Matcher, expr: Expr) -> bool:
        return m.visit(self.left, expr) or m.visit(self.right, expr)


def _callee_names(pattern: Pattern) -> frozenset[str] | None:
    if isinstance(pattern, OpPattern):
        return frozenset({pattern.name})
    if isinstance(pattern, AltPattern):
        left, right = _callee_names(pattern.left), _callee_names(pattern.right)
        return None if left is None or right is None else left | right
    if isinstance(pattern, OpAttrPattern):
        return frozenset(name for name in Op.list_op_names() if pattern.accepts(Op.get(name)))
    return None


def _decided_by_name(pattern: Pattern) -> bool:
    if isinstance(pattern, AltPattern):
        return _decided_by_name(pattern.left) and _decided_by_name(pattern.right)
    return isinstance(pattern, (OpPattern, OpAttrPattern))


# --- matching -----------------------------------------------------------------------------


class Matcher:
    """Matches a pattern at one expression, recording what every pattern node matched."""

    __slots__ = ("memo", "order")

    def __init__(self) -> None:
        self.memo: dict[Pattern, list[Expr]] = {}
        self.order: list[Pattern] = []

    def match(self, pattern: Pattern, expr: Expr) -> bool:
        self.memo = {}
        self.order = []
        return self.visit(pattern, expr)

    def visit(self, pattern: Pattern, expr: Expr) -> bool:
        names = pattern.names
        if names is not None:
            if type(expr) is not Call:
                return False
            op = expr.op
            if type(op) is not Op or op.name not in names:
                return False
        memo = self.memo
        bound = memo.get(pattern)
        if bound is not None:
            return bound[0] is expr
        order = self.order
        mark = len(order)
        if pattern.match(self, expr):
            memo.setdefault(pattern, []).append(expr)
            order.append(pattern)
            return True
        if len(order) > mark:
            self._forget(mark)
        return False

    def match_args(self, patterns: Sequence[Pattern], args: Sequence[Expr]) -> bool:
        if len(patterns) != len(args):
            return False
        mark = len(self.order)
        for p, a in zip(patterns, args):
            if not self.visit(p, a):
                if len(self.order) > mark:
                    self._forget(mark)
                return False
        return True

    def _forget(self, mark: int) -> None:
        # As Relay's ClearMap: a pattern bound after the mark loses every binding.
        for p in self.order[mark:]:
            self.memo.pop(p, None)
        del self.order[mark:]


class Match:
    """What a group matched, for a callback: the original nodes and their rewritten versions."""

    __slots__ = ("nodes", "_rewritten")

    def __init__(self, nodes: dict[Pattern, list[Expr]], rewritten: dict[Expr, Expr]) -> None:
        self.nodes = nodes
        self._rewritten = rewritten

    def __contains__(self, pattern: Pattern) -> bool:
        return pattern in self.nodes

    def pre(self, pattern: Pattern) -> Expr:
        """The node of the original (typed) program that ``pattern`` matched."""
        return self.nodes[pattern][0]

    def post(self, pattern: Pattern) -> Expr:
        """The rewritten version of that node, to build the replacement from."""
        node = self.nodes[pattern][0]
        return self._rewritten.get(node, node)


# --- grouping -----------------------------------------------------------------------------


class DataflowGraph:
    """Every node of a program in post-order, who uses each, and the calls by operator."""

    __slots__ = ("order", "users", "calls", "_position")

    def __init__(self, root: Expr) -> None:
        order: list[Expr] = []
        post_order_visit(root, order.append)
        users: dict[Expr, list[Expr]] = {}
        calls: dict[str, list[Call]] = {}
        for node in order:
            for kid in children(node):
                users.setdefault(kid, []).append(node)
            if type(node) is Call and type(node.op) is Op:
                calls.setdefault(node.op.name, []).append(node)
        self.order = order
        self.users = users
        self.calls = calls
        self._position: dict[Expr, int] | None = None

    def candidates(self, names: frozenset[str] | None) -> list[Expr]:
        """Possible group roots, in post-order."""
        if names is None:
            return self.order
        found = [c for name in names for c in self.calls.get(name, ())]
        if len(names) > 1 and found:
            if self._position is None:
                self._position = {n: k for k, n in enumerate(self.order)}
            found.sort(key=self._position.__getitem__)
        return found

    def flows_only_into(self, start: Expr, root: Expr) -> bool:
        """True when every path from ``start`` to the program's result passes through ``root``."""
        users = self.users
        seen = {start}
        stack = [start]
        while stack:
            node = stack.pop()
            if node is root:
                continue
            after = users.get(node)
            if not after:
                return False
            for user in after:
                if user not in seen:
                    seen.add(user)
                    stack.append(user)
        return True


_NOT_GROUPED = (Op, Function, Constant)


def find_groups(
    pattern: Pattern, graph: DataflowGraph, candidates: Iterable[Expr]
) -> dict[Expr, dict[Pattern, list[Expr]]]:
    """The groups of ``pattern`` in ``graph``: root -> what each pattern node matched.

    ``candidates`` are the possible roots in post-order; they are tried last
    to first.
    """
    matcher = Matcher()
    grouped: set[Expr] = set()
    groups: dict[Expr, dict[Pattern, list[Expr]]] = {}
    for root in reversed(list(candidates)):
        if root in grouped or not matcher.match(pattern, root):
            continue
        memo = matcher.memo
        inputs = {
            e for p, es in memo.items() if type(p) is Wildcard
            for e in es if type(e) is not Op and type(e) is not Function
        }
        members = _members(root, inputs)
        if _acceptable(root, members, inputs, grouped, graph):
            grouped.update(members)
            groups[root] = memo
    return groups


def _members(root: Expr, inputs: set[Expr]) -> set[Expr]:
    """The nodes between ``root`` and the group's inputs (root included, inputs not)."""
    members = {root}
    stack = [root]
    while stack:
        for kid in children(stack.pop()):
            if kid not in inputs and kid not in members:
                members.add(kid)
                stack.append(kid)
    return members


def _acceptable(root: Expr, members: set[Expr], inputs: set[Expr], grouped: set[Expr],
                graph: DataflowGraph) -> bool:
    for node in members:
        if node in inputs or isinstance(node, _NOT_GROUPED):
            continue
        if node in grouped:
            return False  # overlaps a group found before
        if node is root:
            continue
        for user in graph.users.get(node, ()):
            if user not in members and not graph.flows_only_into(user, root):
                return False  # replacing the group would cut that use off
    return True


# --- rewriting ----------------------------------------------------------------------------

Callback = Callable[[Call, Expr, Match], Expr]


class Rewrite:
    """A named pattern with the callback that rewrites a group rooted at a call."""

    __slots__ = ("name", "pattern", "callback", "roots")

    def __init__(self, name: str, pattern: Pattern, callback: Callback) -> None:
        self.name = name
        self.pattern = pattern
        self.callback = callback
        self.roots = pattern.names


def _keep_type(pre: Expr, post: Expr) -> Expr:
    if post is not pre and post._checked_type is None and pre._checked_type is not None:
        set_checked_type(post, pre._checked_type)
    return post


class _GroupRewriter(MixedModeMutator):
    """One rewrite over a program: callbacks at group roots, rebuilt nodes keep their types."""

    def __init__(self, groups: dict[Expr, dict[Pattern, list[Expr]]], callback: Callback) -> None:
        super().__init__()
        self.groups = groups
        self.callback = callback

    def visit_call(self, call: Call) -> Expr:
        post = _keep_type(call, ExprMutator.visit_call(self, call))
        nodes = self.groups.get(call)
        if nodes is None:
            return post
        return self.callback(call, post, Match(nodes, self.memo_map))

    def visit_tuple(self, tup):
        return _keep_type(tup, ExprMutator.visit_tuple(self, tup))

    def visit_tuple_getitem(self, tgi):
        return _keep_type(tgi, ExprMutator.visit_tuple_getitem(self, tgi))

    def visit_function(self, func):
        return _keep_type(func, ExprMutator.visit_function(self, func))

    def visit_if(self, if_expr):
        return _keep_type(if_expr, ExprMutator.visit_if(self, if_expr))

    def visit_ref_create(self, ref):
        return _keep_type(ref, ExprMutator.visit_ref_create(self, ref))

    def visit_ref_read(self, ref):
        return _keep_type(ref, ExprMutator.visit_ref_read(self, ref))

    def visit_ref_write(self, ref):
        return _keep_type(ref, ExprMutator.visit_ref_write(self, ref))

    def visit_let(self, let: Let) -> Expr:
        out = ExprMutator.visit_let(self, let)
        memo = self.memo_map
        old: Expr = let
        new = out
        while True:
            _keep_type(old, new)
            old = old.body
            if type(old) is not Let or old not in memo:
                break
            new = memo[old]
        return out


def rewrite_patterns(
    rewrites: Sequence[Rewrite],
    func: Function,
    infer_types: Callable[[Function], Function],
) -> Function:
    """``func`` with ``rewrites`` applied in order, round after round, until nothing changes.

    ``infer_types`` types a function (InferType, in the function's module);
    it runs first if ``func`` is untyped and again whenever a rewrite changed
    something, so that every callback sees a typed program.
    """
    post = func
    typed = func._checked_type is not None
    for _ in range(MAX_ROUNDS):
        last = post
        graph: DataflowGraph | None = None
        for rewrite in rewrites:
            if not typed:
                post = infer_types(post)
                typed = True
                graph = None
            if graph is None:
                graph = DataflowGraph(post)
            candidates = graph.candidates(rewrite.roots)
            if not candidates:
                continue
            groups = find_groups(rewrite.pattern, graph, candidates)
            if not groups:
                continue
            new = _GroupRewriter(groups, rewrite.callback).visit(post)
            if new is not post:
                post = new
                typed = False
                graph = None
        if post is last or structural_equal(last, post, map_free_vars=True):
            return post
    raise RewriteLimitError(
        f"the rewrites ({', '.join(r.name for r in rewrites)}) still changed the program after "
        f"{MAX_ROUNDS} rounds; some of them undo each other"
    )
