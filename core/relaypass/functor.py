"""Visitors and mutators over Relay expressions: TVM's Python functors, and a fast path.

``ExprFunctor``, ``ExprVisitor`` and ``ExprMutator`` behave exactly as TVM's
Python classes: ``visit`` memoizes and dispatches to ``visit_<kind>``, and the
default ``visit_<kind>`` reaches the children through ``self.visit``, in field
order (a call's callee, then its arguments left to right; a let's variable,
value, then body).  So a subclass that overrides ``visit_call`` and calls
``super().visit_call(call)`` sees the parent before its children, and a count
kept in an override is TVM's count.  Ported analyses depend on that order.

Those visits recurse, one level per node along a chain, as TVM's do.  Once
the recursion on the calling thread is a few dozen levels deep (or at once,
for an expression that looks deep), it continues on a worker thread with a
large stack (:mod:`relaypass.deep_recursion`), so a 100,000-deep chain or let
chain works under the default recursion limit, also with overrides that call
``super()``.  The caller's PassContext holds on the worker.

``MixedModeVisitor`` and ``MixedModeMutator`` are the fast path for code
written for relaypass: dataflow (calls, tuples, projections) is expanded with
an explicit stack and visited in post-order, so ``visit_call`` runs after its
arguments (``MixedModeMutator.rewrite_call(pre, post)`` gets them rewritten),
and let chains are walked in a loop (``rewrite_let_chain``).  Nothing there
recurses on dataflow or let chains.

What a node's children are, and how a node is rebuilt over new ones, comes
from the node kinds' field declarations (:mod:`relaypass.ir.fields`): the
default ``visit_<kind>`` methods are one generic ``visit_children`` /
``mutate_children``, so no kind's fields are spelled out here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .deep_recursion import run_deep, state
from .ir.adt import Constructor, Match
from .ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from .ir.fields import rebuild
from .ir.op import Op
from .ir.traversal import post_order_visit

__all__ = [
    "ExprFunctor", "ExprMutator", "ExprVisitor", "MixedModeMutator", "MixedModeVisitor",
    "post_order_visit",
]

_DATAFLOW = frozenset({Call, Tuple, TupleGetItem})

#: The memo table a functor whose ``visit`` is overridden must not read from.
_NO_MEMO: dict[Expr, Any] = {}

#: Nested visits the calling thread runs itself, a few Python frames each,
#: before the recursion moves to a worker thread with room for any depth.
SHALLOW_LEVELS = 48

_METHOD_NAMES: dict[type, str] = {
    Var: "visit_var",
    GlobalVar: "visit_global_var",
    Constant: "visit_constant",
    Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem",
    Call: "visit_call",
    Op: "visit_op",
    Function: "visit_function",
    Let: "visit_let",
    If: "visit_if",
    RefCreate: "visit_ref_create",
    RefRead: "visit_ref_read",
    RefWrite: "visit_ref_write",
    Constructor: "visit_constructor",
    Match: "visit_match",
}


def _method_name(node_type: type) -> str:
    name = _METHOD_NAMES.get(node_type)
    if name is not None:
        return name
    for base in node_type.__mro__:
        if base in _METHOD_NAMES:
            return _METHOD_NAMES[base]
    raise TypeError(f"not a Relay expression: {node_type.__name__}")


class ExprFunctor:
    """Dispatches ``visit(expr)`` to ``visit_<kind>(expr)`` and memoizes the result.

    The dispatch table maps node classes to bound methods, built once per
    functor instance; ``memo_map`` holds the result for every node visited.
    """

    _memo_reads = True
    """Children may be read from ``memo_map`` directly: true unless a subclass overrides ``visit``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._memo_reads = getattr(cls.visit, "plain", False)


    memo_map: dict[Expr, Any]
    _dispatch: dict[type, Callable[[Any], Any]]

    def __init__(self) -> None:
        self._init_functor_state()

    def _init_functor_state(self) -> None:
        self.memo_map = {}
        self._dispatch = {t: getattr(self, name) for t, name in _METHOD_NAMES.items()}

    def __getattr__(self, name: str) -> Any:
        # Subclasses that forget ``super().__init__()`` still work.
        if name in ("memo_map", "_dispatch"):
            self._init_functor_state()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _method(self, node: Expr) -> Callable[[Any], Any]:
        fn = self._dispatch.get(type(node))
        if fn is None:
            if not isinstance(node, Expr):
                raise TypeError(f"{type(self).__name__}.visit expects a Relay expression, got {type(node).__name__}")
            fn = getattr(self, _method_name(type(node)))
            self._dispatch[type(node)] = fn
        return fn

    def visit(self, expr: Expr) -> Any:
        """Visit ``expr`` once; later visits of the same node return the memoized result."""
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        fn = self._dispatch.get(type(expr)) or self._method(expr)
        here = state
        if here.worker:
            result = fn(expr)
        else:
            level = here.level
            if level >= SHALLOW_LEVELS or (level == 0 and _looks_deep(expr)):
                result = run_deep(self._visit_on_worker, fn, expr)
            else:
                here.level = level + 1
                try:
                    result = fn(expr)
                finally:
                    here.level = level
        memo[expr] = result
        return result

    def _visit_on_worker(self, fn: Callable[[Any], Any], expr: Expr) -> Any:
        # On the worker every visit may recurse as deep as the program: this
        # functor's own visits skip the guard (unless a subclass wraps ``visit``).
        if not self._memo_reads:
            return fn(expr)
        self.visit = self._visit_unguarded  # type: ignore[method-assign]
        try:
            return fn(expr)
        finally:
            del self.visit

    def _visit_unguarded(self, expr: Expr) -> Any:
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        result = (self._dispatch.get(type(expr)) or self._method(expr))(expr)
        memo[expr] = result
        return result

    def _not_implemented(self, expr: Expr) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(expr).__name__}")

    visit_var = visit_global_var = visit_constant = visit_tuple = _not_implemented
    visit_tuple_getitem = visit_call = visit_op = visit_function = _not_implemented
    visit_let = visit_if = visit_ref_create = visit_ref_read = visit_ref_write = _not_implemented
    visit_constructor = visit_match = _not_implemented


def _looks_deep(expr: Expr) -> bool:
    """Whether following the last composite child from ``expr`` goes SHALLOW_LEVELS deep.

    The last child is where chains continue (a call's last argument, a let's
    body); a deep path elsewhere is caught by the level count instead.
    """
    node = expr
    for _ in range(SHALLOW_LEVELS):
        kids = type(node)._layout_.children(node)
        for kid in reversed(kids):
            if not type(kid)._layout_.leaf:
                node = kid
                break
        else:
            return False
    return True


class _DataflowExpansion(ExprFunctor):
    """Shared machinery of the mixed-mode functors: dataflow visited bottom-up with a stack."""

    def visit(self, expr: Expr) -> Any:
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        if type(expr) in _DATAFLOW:
            return self._visit_dataflow(expr)
        result = self._method(expr)(expr)
        memo[expr] = result
        return result

    def _visit_dataflow(self, root: Expr) -> Any:
        memo = self.memo_map
        dispatch = self._dispatch
        dataflow = _DATAFLOW
        # Each entry is a node to expand (False) or to visit now that its
        # dataflow children are done (True).
        stack: list[tuple[Expr, bool]] = [(root, False)]
        push = stack.append
        pop = stack.pop
        while stack:
            node, ready = pop()
            if node in memo:
                continue
            t = type(node)
            if ready:
                memo[node] = dispatch[t](node)
                continue
            push((node, True))
            # The operands, not a call's callee: visit_call visits that after the arguments.
            for kid in reversed(t._layout_.operands(node)):
                if type(kid) in dataflow and kid not in memo:
                    push((kid, False))
        return memo[root]


# The ``visit`` methods that answer a memoized node from the memo table and do
# nothing else: children of functors using them may be read from the table.
ExprFunctor.visit.plain = True  # type: ignore[attr-defined]
_DataflowExpansion.visit.plain = True  # type: ignore[attr-defined]
for _cls in (ExprFunctor, _DataflowExpansion):
    _cls._memo_reads = True
del _cls


class ExprVisitor(ExprFunctor):
    """Visits every node reachable from an expression once, parents first (TVM's ExprVisitor).

    Override ``visit_<kind>`` to act on a kind of node; call the base method
    (or ``self.visit`` on the children) to keep walking below it.
    """

    def visit_var(self, var: Var) -> None:
        pass

    def visit_global_var(self, gv: GlobalVar) -> None:
        pass

    def visit_constant(self, const: Constant) -> None:
        pass

    def visit_op(self, op: Op) -> None:
        pass

    def visit_constructor(self, con: Constructor) -> None:
        pass

    def visit_children(self, node: Expr) -> None:
        """Visit each child of ``node`` in field order (a call's callee, then its arguments)."""
        # ``walk`` skips the children in the memo table when ``visit`` would
        # answer from it anyway.
        memo = self.memo_map if self._memo_reads else _NO_MEMO
        type(node)._layout_.walk(node, self.visit, memo)

    visit_tuple = visit_tuple_getitem = visit_call = visit_function = visit_let = visit_children
    visit_if = visit_ref_create = visit_ref_read = visit_ref_write = visit_children
    # A match's children are its value, then each clause's body: TVM's order.
    visit_match = visit_children


class ExprMutator(ExprFunctor):
    """Rebuilds an expression over its visited children (TVM's ExprMutator).

    Each node is transformed once (results are memoized by node identity, so
    sharing in the input is kept in the output), and a node none of whose
    children changed is returned as is, with its ``checked_type``.
    """

    def visit_var(self, var: Var) -> Expr:
        return var

    def visit_global_var(self, gv: GlobalVar) -> Expr:
        return gv

    def visit_constant(self, const: Constant) -> Expr:
        return const

    def visit_op(self, op: Op) -> Expr:
        return op

    def visit_constructor(self, con: Constructor) -> Expr:
        return con

    def mutate_children(self, node: Expr) -> Expr:
        """``node`` over its visited children (in field order); ``node`` itself if none changed."""
        # ``remap`` reads a child's result from the memo table when ``visit``
        # would answer from it anyway, and calls ``visit`` otherwise.
        memo = self.memo_map if self._memo_reads else _NO_MEMO
        return type(node)._layout_.remap(node, self.visit, memo)

    visit_tuple = visit_tuple_getitem = visit_call = visit_function = visit_let = mutate_children
    visit_if = visit_ref_create = visit_ref_read = visit_ref_write = mutate_children
    # The clauses keep their patterns, over their visited bodies (TVM's visit_match).
    visit_match = mutate_children


class MixedModeVisitor(_DataflowExpansion, ExprVisitor):
    """Visits every node once, dataflow in post-order and let chains in a loop: no recursion.

    ``visit_call`` runs after the call's arguments were visited (TVM's C++
    ``MixedModeVisitor``); use it where the order does not matter and speed does.
    """

    def visit_let(self, let: Let) -> None:
        memo = self.memo_map
        chain = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            self.visit(node.var)
            self.visit(node.value)
            chain.append(node)
            node = node.body
        self.visit(node)
        for inner in chain[1:]:
            memo[inner] = None


class MixedModeMutator(_DataflowExpansion, ExprMutator):
    """A post-order rewriter for dataflow: override ``rewrite_call(pre, post)`` and friends.

    ``pre`` is the node of the input, ``post`` the same node rebuilt from the
    already rewritten children (``pre`` itself when nothing below changed).
    Whatever a ``rewrite_*`` method returns replaces the node.  Nothing
    recurses on dataflow, and let chains are rewritten in a loop
    (``rewrite_let_chain``), so a pass written this way handles any length.
    """

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        return post

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        return post

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        return post

    def visit_call(self, call: Call) -> Expr:
        return self.rewrite_call(call, self.mutate_children(call))

    def visit_tuple(self, tup: Tuple) -> Expr:
        return self.rewrite_tuple(tup, self.mutate_children(tup))

    def visit_tuple_getitem(self, tgi: TupleGetItem) -> Expr:
        return self.rewrite_tuple_getitem(tgi, self.mutate_children(tgi))

    def visit_let(self, let: Let) -> Expr:
        """Rewrites the whole chain of lets from here in a loop (see ``rewrite_let_chain``)."""
        return self.rewrite_let_chain(let, self._visit_let_value, visit_vars=True)

    def _visit_let_value(self, let: Let) -> Expr:
        return self.visit(let.value)

    def rewrite_let_chain(
        self,
        let: Let,
        new_value: Callable[[Let], Expr | None],
        visit_vars: bool = False,
    ) -> Expr:
        """Rewrites the chain of nested lets that starts at ``let``, in a loop.

        ``new_value(l)`` is called for each let of the chain, outermost first,
        and gives the rewritten value of its binding, or None to drop the
        binding; whoever drops one makes the uses of its variable read the
        replacement, usually by memoizing it (``self.memo_map[l.var] = ...``),
        since the body is visited after every binding.  With ``visit_vars``
        each variable is visited too, just before its value, so that
        ``visit_var`` may rename it (later visits of the variable, even inside
        its own value, then come from the memo table).  The chain is rebuilt
        from the inside out: a let whose variable, value and body did not
        change is kept as is, and each inner let is memoized like any other node.
        """
        memo = self.memo_map
        visit = self.visit
        chain: list[tuple[Let, Var, Expr | None]] = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            var = visit(node.var) if visit_vars else node.var
            chain.append((node, var, new_value(node)))
            node = node.body
        body = visit(node)
        for old, var, value in reversed(chain):
            if value is None:
                new: Expr = body
            elif var is old.var and value is old.value and body is old.body:
                new = old
            else:
                new = rebuild(old, (var, value, body))
            if old is not let:
                memo[old] = new
            body = new
        return body
