"""ToGraphNormalForm: turn let bindings of pure values back into dataflow.

Relay's GNF (``to_graph_normal_form.cc``) replaces every use of a let-bound
variable by the (rewritten) bound value, so a value used twice becomes one
node with two users, which is how a dataflow graph expresses sharing.  A
recursive binding, whose value mentions its own variable, becomes
``let %f = value; %f`` at its uses, as in Relay.

Unlike Relay, a binding whose value has an effect stays a let: a reference
created, read or written, a stateful operator, a call that may do any of
these (decided by :mod:`.purity`, with allocating a reference counted as an
effect).  Inlining those would change how often and in which order the
effects happen, or drop them when the variable is unused.  Pure bindings
whose variable is unused disappear, as in Relay.

ToANormalForm followed by ToGraphNormalForm gives back the original dataflow
graph when it is free of effects.  Let chains are walked in a loop and dataflow with an explicit stack,
so 100,000 nested lets are fine.

The rewrite is one walk of its own (:func:`_inline_pure`): every node once,
children first, with a table of what each node and each dropped variable
became -- a third of the cost of the general mutator, which handles the same
kinds of nodes the same way and takes over for any other kind.  It keeps a
typed program typed: a variable is replaced by a value of its own type, so
each rebuilt node has the type of the node it copies, and the pass manager
need not type the result again (Relay's GNF leaves that to InferType).
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakKeyDictionary

from relaypass.analysis.purity import PurityAnalysis
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
    set_checked_type,
)
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["ToGraphNormalForm", "to_graph_normal_form"]


class _GraphNormalForm(MixedModeMutator):
    """Substitutes pure let-bound values for their variables (through the memo table)."""

    def __init__(self, pure: dict[Var, bool]) -> None:
        super().__init__()
        self.pure = pure
        self.binding: set[Var] = set()  # let variables whose value is being rewritten
        self.recursive: set[Var] = set()  # ... that were mentioned in it

    def visit_var(self, var: Var) -> Expr:
        if var in self.binding:
            self.recursive.add(var)
        return var

    def visit_let(self, let: Let) -> Expr:
        return self.rewrite_let_chain(let, self._inline_pure)

    def _inline_pure(self, let: Let) -> Expr | None:
        var = let.var
        self.binding.add(var)
        value = self.visit(let.value)
        self.binding.discard(var)
        if not self.pure.get(var, False):
            return value
        if var in self.recursive:
            value = Let(var, value, var)
        # Dropped: every later use of the variable reads the value from the memo table.
        self.memo_map[var] = value
        return None


#: The kinds :func:`_inline_pure` rebuilds from their children (lets and variables aside).
_PLAIN = frozenset({Call, Tuple, TupleGetItem, Function, If})
_LEAVES = frozenset({Constant, GlobalVar, Op})

# What a stack entry asks for (besides 0: visit the node).
_VALUE_DONE, _DROPPED_DONE, _KEPT_DONE, _CHILDREN_DONE = 1, 2, 3, 4


def _inline_pure(expr: Expr, pure: dict[Var, bool]) -> Expr | None:
    """``expr`` in graph normal form, as :class:`_GraphNormalForm` makes it; None when it
    holds a kind of node this walk leaves to the mutator."""
    memo: dict[Expr, Expr] = {}
    binding: set[Var] = set()
    recursive: set[Var] = set()
    kept: dict[Let, Expr] = {}
    stack: list[tuple[Expr, int]] = [(expr, 0)]
    push, pop = stack.append, stack.pop
    while stack:
        node, step = pop()
        if step == 0:
            if node in memo:
                continue
            t = type(node)
            if t is Var:
                if node in binding:
                    recursive.add(node)
                memo[node] = node
            elif t in _LEAVES:
                memo[node] = node
            elif t is Let:
                binding.add(node.var)
                push((node, _VALUE_DONE))
                push((node.value, 0))
            elif t in _PLAIN:
                push((node, _CHILDREN_DONE))
                for kid in reversed(t._layout_.children(node)):
                    if kid not in memo:
                        push((kid, 0))
            else:
                return None
        elif step == _CHILDREN_DONE:
            kids = type(node)._layout_.children(node)
            new = node
            for k in kids:
                if memo[k] is not k:
                    new = rebuild(node, [memo[k] for k in kids])
                    if node._checked_type is not None:
                        set_checked_type(new, node._checked_type)
                    break
            memo[node] = new
        elif step == _VALUE_DONE:
            var = node.var
            binding.discard(var)
            value = memo[node.value]
            if pure.get(var, False):
                if var in recursive:
                    value = Let(var, value, var)
                    if var._checked_type is not None:
                        set_checked_type(value, var._checked_type)
                memo[var] = value  # every later use reads the value
                push((node, _DROPPED_DONE))
            else:
                kept[node] = value
                push((node, _KEPT_DONE))
            push((node.body, 0))
        elif step == _DROPPED_DONE:
            memo[node] = memo[node.body]
        else:  # _KEPT_DONE
            value = kept.pop(node)
            body = memo[node.body]
            if value is node.value and body is node.body:
                memo[node] = node
            else:
                new = rebuild(node, (node.var, value, body))
                if node._checked_type is not None:
                    set_checked_type(new, node._checked_type)
                memo[node] = new
    return memo[expr]


def _graph_normal_form(expr: Expr, pure: dict[Var, bool]) -> Expr:
    out = _inline_pure(expr, pure)
    return out if out is not None else _GraphNormalForm(pure).visit(expr)


def to_graph_normal_form(expr: Expr, mod: IRModule | None = None) -> Expr:
    """``expr`` with its pure let bindings turned into dataflow.

    ``mod`` lets the purity analysis see through calls of global functions;
    without it such calls are assumed to have effects.
    """
    analysis = PurityAnalysis(mod, allocation_is_effect=True)
    return _graph_normal_form(expr, analysis.let_purity(expr))


def _to_graph_normal_form_factory() -> Callable[[Function, IRModule, object], Function]:
    """ToGraphNormalForm's transformation: the manifest's factory.

    The pass is :data:`ToGraphNormalForm`, a function pass as in Relay (the
    pass manager leaves out functions handed to an external ``Compiler``).
    One purity analysis serves every function of a run: it is kept, by the
    module the pass manager hands the function, for as long as that module
    lives and keeps its functions (the analysis reads a copy, so the cache
    never keeps the module alive).
    """
    analyses: WeakKeyDictionary[IRModule, tuple[IRModule, PurityAnalysis]] = WeakKeyDictionary()

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        entry = analyses.get(mod)
        if entry is None or entry[0].functions != mod.functions:
            seen = mod.copy()
            entry = analyses[mod] = (seen, PurityAnalysis(seen, allocation_is_effect=True))
        return _graph_normal_form(func, entry[1].let_purity(func))

    return transform


#: The ToGraphNormalForm pass, the one ``relay.transform.ToGraphNormalForm`` builds;
#: everything about it is declared in relaypass-plugin.toml.
ToGraphNormalForm = pass_constructor("ToGraphNormalForm")
