"""Visitors and mutators over Relay expressions, in the style of Relay's Python classes.

Deep programs are the norm (a 100,000-operator chain, or its A-normal form with
100,000 nested lets), so nothing here recurses along dataflow:

* Dataflow nodes (calls, tuples, projections) are expanded with an explicit
  stack before their ``visit_*`` method runs, as Relay's ``MixedModeVisitor``
  does; by the time ``visit_call`` asks for ``self.visit(arg)``, the argument
  has already been visited and the answer comes from the memo table.
* The default ``visit_let`` walks a chain of nested lets in a loop; a mutator
  that drops or replaces bindings does the same with ``rewrite_let_chain``.
* Functions, ifs and references are visited recursively, which is bounded by
  how deeply the program nests them, not by its length.

A subclass overrides ``visit_call``, ``visit_function`` and friends and calls
``self.visit(child)`` for children, as with Relay.  Overriding ``visit_let``
takes over the walk of let chains (the override is called for the outermost
let only when it does not recurse itself).

What a node's children are, and how a node is rebuilt over new ones, comes
from the node kinds' field declarations (:mod:`relaypass.ir.fields`): the
default ``visit_<kind>`` methods are one generic ``visit_children`` /
``mutate_children``, so no kind's fields are spelled out here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
        result = self._method(expr)(expr)
        memo[expr] = result
        return result

    def _not_implemented(self, expr: Expr) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(expr).__name__}")

    visit_var = visit_global_var = visit_constant = visit_tuple = _not_implemented
    visit_tuple_getitem = visit_call = visit_op = visit_function = _not_implemented
    visit_let = visit_if = visit_ref_create = visit_ref_read = visit_ref_write = _not_implemented


class _DataflowExpansion(ExprFunctor):
    """Shared machinery: visit dataflow nodes bottom-up with an explicit stack."""

    _memo_reads = True
    """Children may be read from ``memo_map`` directly: true unless a subclass overrides ``visit``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._memo_reads = cls.visit is _DataflowExpansion.visit

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


class ExprVisitor(_DataflowExpansion):
    """Visits every node reachable from an expression once.

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

    def visit_children(self, node: Expr) -> None:
        """Visit each child of ``node`` in field order (a call's callee, then its arguments)."""
        visit = self.visit
        if self._memo_reads:
            memo = self.memo_map
            for kid in type(node)._layout_.children(node):
                if kid not in memo:
                    visit(kid)
        else:
            for kid in type(node)._layout_.children(node):
                visit(kid)

    visit_tuple = visit_tuple_getitem = visit_call = visit_function = visit_children
    visit_if = visit_ref_create = visit_ref_read = visit_ref_write = visit_children

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


MixedModeVisitor = ExprVisitor


class ExprMutator(_DataflowExpansion):
    """Rebuilds an expression bottom-up, sharing every subtree that did not change.

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

    def mutate_children(self, node: Expr) -> Expr:
        """``node`` over its visited children (in field order); ``node`` itself if none changed."""
        layout = type(node)._layout_
        old = layout.children(node)
        visit = self.visit
        if self._memo_reads:
            # Dataflow children were expanded before this runs: most are in the memo table.
            memo = self.memo_map
            new = tuple([memo[k] if k in memo else visit(k) for k in old])
        else:
            new = tuple([visit(k) for k in old])
        # Expressions compare by identity: equal tuples hold the very same children.
        if new == old:
            return node
        return layout.rebuild(node, new)

    visit_tuple = visit_tuple_getitem = visit_call = visit_function = mutate_children
    visit_if = visit_ref_create = visit_ref_read = visit_ref_write = mutate_children

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


class MixedModeMutator(ExprMutator):
    """A post-order rewriter for dataflow: override ``rewrite_call(pre, post)`` and friends.

    ``pre`` is the node of the input, ``post`` the same node rebuilt from the
    already rewritten children (``pre`` itself when nothing below changed).
    Whatever a ``rewrite_*`` method returns replaces the node.  Nothing
    recurses on dataflow, so a pass written this way handles any chain length.
    """

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        return post

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        return post

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        return post

    def visit_call(self, call: Call) -> Expr:
        return self.rewrite_call(call, ExprMutator.visit_call(self, call))

    def visit_tuple(self, tup: Tuple) -> Expr:
        return self.rewrite_tuple(tup, ExprMutator.visit_tuple(self, tup))

    def visit_tuple_getitem(self, tgi: TupleGetItem) -> Expr:
        return self.rewrite_tuple_getitem(tgi, ExprMutator.visit_tuple_getitem(self, tgi))
