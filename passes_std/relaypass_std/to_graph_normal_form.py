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
"""

from __future__ import annotations

from collections.abc import Callable
from weakref import WeakKeyDictionary

from relaypass.analysis.purity import PurityAnalysis
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Expr, Function, Let, Var
from relaypass.ir.module import IRModule
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


def to_graph_normal_form(expr: Expr, mod: IRModule | None = None) -> Expr:
    """``expr`` with its pure let bindings turned into dataflow.

    ``mod`` lets the purity analysis see through calls of global functions;
    without it such calls are assumed to have effects.
    """
    analysis = PurityAnalysis(mod, allocation_is_effect=True)
    return _GraphNormalForm(analysis.let_purity(expr)).visit(expr)


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
        return _GraphNormalForm(entry[1].let_purity(func)).visit(func)

    return transform


#: The ToGraphNormalForm pass, the one ``relay.transform.ToGraphNormalForm`` builds;
#: everything about it is declared in relaypass-plugin.toml.
ToGraphNormalForm = pass_constructor("ToGraphNormalForm")
