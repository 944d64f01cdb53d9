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
            if t is Call:
                kids = node.args
            elif t is Tuple:
                kids = node.fields
            else:
                kids = (node.tuple_value,)
            for kid in reversed(kids):
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

    def visit_tuple(self, tup: Tuple) -> None:
        for field in tup.fields:
            self.visit(field)

    def visit_tuple_getitem(self, tgi: TupleGetItem) -> None:
        self.visit(tgi.tuple_value)

    def visit_call(self, call: Call) -> None:
        self.visit(call.op)
        for arg in call.args:
            self.visit(arg)

    def visit_function(self, func: Function) -> None:
        for param in func.params:
            self.visit(param)
        self.visit(func.body)

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

    def visit_if(self, if_expr: If) -> None:
        self.visit(if_expr.cond)
        self.visit(if_expr.true_branch)
        self.visit(if_expr.false_branch)

    def visit_ref_create(self, ref: RefCreate) -> None:
        self.visit(ref.value)

    def visit_ref_read(self, ref: RefRead) -> None:
        self.visit(ref.ref)

    def visit_ref_write(self, ref: RefWrite) -> None:
        self.visit(ref.ref)
        self.visit(ref.value)


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

    def visit_tuple(self, tup: Tuple) -> Expr:
        visit = self.visit
        fields = [visit(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, tup.span)

    def visit_tuple_getitem(self, tgi: TupleGetItem) -> Expr:
        value = self.visit(tgi.tuple_value)
        if value is tgi.tuple_value:
            return tgi
        return TupleGetItem(value, tgi.index, tgi.span)

    def visit_call(self, call: Call) -> Expr:
        # Arguments were expanded before this runs, so most lookups hit the memo table.
        memo = self.memo_map
        visit = self.visit
        old_op = call.op
        op = memo[old_op] if old_op in memo else visit(old_op)
        old_args = call.args
        args = [memo[a] if a in memo else visit(a) for a in old_args]
        if op is old_op and all(a is b for a, b in zip(args, old_args)):
            return call
        return Call(op, args, call.attrs, call.type_args, call.span)

    def visit_function(self, func: Function) -> Expr:
        params = [self.visit(p) for p in func.params]
        body = self.visit(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        return Function(params, body, func.ret_type, func.type_params, func.attrs, func.span)

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
                new = Let(var, value, body, old.span)
            if old is not let:
                memo[old] = new
            body = new
        return body

    def visit_if(self, if_expr: If) -> Expr:
        cond = self.visit(if_expr.cond)
        then = self.visit(if_expr.true_branch)
        other = self.visit(if_expr.false_branch)
        if cond is if_expr.cond and then is if_expr.true_branch and other is if_expr.false_branch:
            return if_expr
        return If(cond, then, other, if_expr.span)

    def visit_ref_create(self, ref: RefCreate) -> Expr:
        value = self.visit(ref.value)
        return ref if value is ref.value else RefCreate(value, ref.span)

    def visit_ref_read(self, ref: RefRead) -> Expr:
        inner = self.visit(ref.ref)
        return ref if inner is ref.ref else RefRead(inner, ref.span)

    def visit_ref_write(self, ref: RefWrite) -> Expr:
        inner = self.visit(ref.ref)
        value = self.visit(ref.value)
        if inner is ref.ref and value is ref.value:
            return ref
        return RefWrite(inner, value, ref.span)


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
