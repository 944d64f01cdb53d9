"""DeadCodeElimination: drop let bindings nobody uses, and optionally inline those used once.

Relay's algorithm (``dead_code.cc``) in three steps:

1. :mod:`.purity` decides which let-bound values are free of effects; an
   impure binding is never touched.
2. Uses of every let-bound variable are counted, visiting a pure bound value
   only once its variable has been seen used, so a chain of bindings that only
   feed each other and end unused is dead as a whole.  A use inside a local
   function counts twice, since the function may be called many times.
3. The function is rebuilt: a pure binding used nowhere is dropped; with
   ``inline_once`` a pure binding used exactly once is substituted at its use.

Counting follows Relay's visitor, which looks at a shared node at most twice
(the counts that decide are 0, 1 and "many"), with one fix: a let reached a
second time through a shared node keeps the counts of its variables, where
Relay resets them and may then drop a binding that is still used.

The pass is declared as Relay declares it: a module pass (the purity of a
global function is a fact about the whole module), opt_level 1, requiring
InferType.  The functions here need no types (:mod:`.purity` tells
functions from data without them), so :func:`dead_code_elimination` works
on untyped programs too.  Everything runs on explicit stacks and loops: a
100,000-binding let chain is fine.

The usual input, a program in A-normal form, often has nothing dead at all;
the purity analysis and the counting then cost several times a walk of the
program to change nothing.  :func:`_nothing_dead` tells that case in one
walk (see there why its answer is the counting's), and the analysis runs
only for the programs it cannot answer.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.purity import PurityAnalysis
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import (
    Constant,
    Expr,
    Function,
    GlobalVar,
    Let,
    Var,
)
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["DeadCodeElimination", "dead_code_elimination", "dead_code_elimination_module"]

_ELIDE = 0
_INLINE = 1
_KEEP = 2


def _is_primitive(func: Function) -> bool:
    return bool(func.attrs.get("Primitive"))


class _Usage:
    """Use counts of let-bound variables, with pure bound values visited only when used.

    ``slot`` numbers the let-bound variables in the order their bindings are
    found; the facts about each are in lists at that number (its value, its
    use count, the function nesting level of its let, how many times it was
    reached): one table lookup per use, and lists filled in order rather than
    tables growing at random.  (Every use of a variable is reached after its
    binding is numbered: a chain's bindings are all numbered before any value
    or body of it is visited.)
    """

    def __init__(self, is_pure) -> None:
        self.is_pure = is_pure
        self.slot: dict[Var, int] = {}
        self.variables: list[Var] = []
        self.values: list[Expr] = []
        self.uses: list[int] = []
        self.bind_level: list[int] = []
        self.reached: list[int] = []

    def count(self, root: Expr) -> None:
        slot = self.slot
        get_slot = slot.get
        variables, values, uses = self.variables, self.values, self.uses
        bind_level, reached = self.bind_level, self.reached
        is_pure = self.is_pure
        seen: dict[Expr, int] = {}
        get_seen = seen.get
        # The explicit stack, as two parallel lists: nodes and their function nesting level.
        nodes: list[Expr] = [root]
        levels: list[int] = [0]

        def use(var: Var, level: int) -> None:
            k = get_slot(var)
            if k is None:
                return
            times = reached[k] + 1
            reached[k] = times
            if times > 2:
                return
            n = uses[k] + 1
            if n == 1 and is_pure(var):
                # The first use makes the bound value live: count the uses inside it.
                nodes.append(values[k])
                levels.append(level)
            if bind_level[k] < level:
                # Used inside a function that may run many times.
                n += 1
            uses[k] = n

        while nodes:
            node = nodes.pop()
            level = levels.pop()
            t = type(node)
            if t is Var:
                use(node, level)
                continue
            k = get_seen(node, 0) + 1
            seen[node] = k
            if k > 2:
                continue
            if t is Let:
                body: Expr = node
                while type(body) is Let:
                    if body is not node:
                        seen[body] = get_seen(body, 0) + 1
                    var = body.var
                    if var not in slot:
                        # (A let reached again, through a shared node, keeps its counts:
                        # Relay resets them, and can then drop a binding still in use.)
                        slot[var] = len(variables)
                        variables.append(var)
                        values.append(body.value)
                        uses.append(0)
                        bind_level.append(level)
                        reached.append(0)
                    if not is_pure(var):
                        nodes.append(body.value)
                        levels.append(level)
                    body = body.body
                kids: tuple = (body,)
            else:
                # The children, not the variables a node binds (a function's parameters).
                kids = t._layout_.subterms(node)
                if t is Function:
                    level += 1
            for kid in kids:
                tk = type(kid)
                if tk is Var:
                    use(kid, level)
                elif tk is not Constant and tk is not Op and tk is not GlobalVar:
                    nodes.append(kid)
                    levels.append(level)


class _Eliminator(MixedModeMutator):
    """Rebuilds the program without the dead bindings (and with the inlined ones substituted)."""

    def __init__(self, actions: dict[Var, int]) -> None:
        super().__init__()
        self.actions = actions

    def visit_let(self, let: Let) -> Expr:
        return self.rewrite_let_chain(let, self._keep_or_inline)

    def _keep_or_inline(self, let: Let) -> Expr | None:
        action = self.actions.get(let.var, _KEEP)
        if action == _KEEP:
            return self.visit(let.value)
        if action == _INLINE:
            # The single use will read the rewritten value from the memo table.
            self.memo_map[let.var] = self.visit(let.value)
        return None


def _nothing_dead(expr: Expr) -> bool:
    """Whether no binding of ``expr`` is dead, told without purity or counting.

    So it is when ``expr`` (or its body, for a function) is one chain of
    lets, each the body of the one before, whose values bind nothing (no
    let, function or match in them), and every variable of the chain is
    used, in a value of a later let or in the last body.  The counting would
    find each of them used: a variable could only be missed if all its uses
    were in values never visited, the values of pure bindings found unused
    themselves; each of those is used in turn, in a value further down the
    chain (the walk checks that every use is below its binding), and
    following such values down the chain ends in the last body, or in the
    value of an impure binding, which are always visited.  No function means
    no use counts twice.  False means only that the counting must decide.
    """
    node = expr.body if type(expr) is Function else expr
    position: dict[Var, int] = {}
    parts: list[Expr] = []
    while type(node) is Let:
        if node.var in position:
            return False
        position[node.var] = len(parts)
        parts.append(node.value)
        node = node.body
    parts.append(node)
    where = position.get
    used = bytearray(len(position))  # by position in the chain
    seen: set[Expr] = set()
    stack: list[Expr] = []
    pop, push = stack.pop, stack.append
    for k, part in enumerate(parts):
        push(part)
        while stack:
            node = pop()
            t = type(node)
            if t is Var:
                bound = where(node)
                if bound is not None:
                    if bound >= k:  # used in its own value or above its let
                        return False
                    used[bound] = 1
                continue
            if node in seen:
                continue
            seen.add(node)
            layout = t._layout_
            if layout.leaf:
                continue
            if layout.binds:
                return False
            for kid in layout.children(node):
                t = type(kid)
                if t is Var or (t is not Constant and t is not Op and t is not GlobalVar
                                and kid not in seen):
                    push(kid)
    return 0 not in used


def dead_code_elimination(
    expr: Expr,
    mod: IRModule | None = None,
    *,
    inline_once: bool = False,
    ignore_impurity: bool = False,
    purity: PurityAnalysis | None = None,
) -> Expr:
    """``expr`` without its dead let bindings.

    ``mod`` resolves calls of global functions for the purity analysis (a
    ``purity`` analysis of that module may be passed instead, to share its
    work between functions); ``ignore_impurity`` treats every binding as pure,
    as Relay's option of that name does.  A ``Primitive`` function is returned
    as is.
    """
    if isinstance(expr, Function) and _is_primitive(expr):
        return expr
    if not inline_once and _nothing_dead(expr):
        return expr
    if ignore_impurity:
        pure_map = None
    else:
        analysis = purity if purity is not None else PurityAnalysis(mod)
        pure_map = analysis.let_purity(expr)

    def is_pure(var: Var) -> bool:
        return True if pure_map is None else pure_map.get(var, False)

    usage = _Usage(is_pure)
    usage.count(expr)
    actions: dict[Var, int] = {}
    for var, n in zip(usage.variables, usage.uses):
        if not is_pure(var):
            continue
        if n == 0:
            actions[var] = _ELIDE
        elif n == 1 and inline_once:
            actions[var] = _INLINE
    if not actions:
        return expr
    return _Eliminator(actions).visit(expr)


def dead_code_elimination_module(
    mod: IRModule, *, inline_once: bool = False, ignore_impurity: bool = False,
) -> IRModule:
    """``mod`` with the dead let bindings of every Relay function removed.

    As Relay's module pass: one purity analysis of the whole module serves
    every function (calls of global functions are as pure as those
    functions), and every Relay function is processed; other global values
    are kept.  ``mod`` itself comes back when no function changed, else a
    new module with ``mod``'s attributes.
    """
    analysis = None if ignore_impurity else PurityAnalysis(mod)
    out: IRModule | None = None
    for gv, func in mod.items():
        if not isinstance(func, Function):
            continue
        new = dead_code_elimination(
            func, mod, inline_once=inline_once, ignore_impurity=ignore_impurity,
            purity=analysis,
        )
        if new is not func:
            if out is None:
                out = mod.copy()
            out.add(gv, new, update=True)
    return mod if out is None else out


def _dead_code_elimination_factory(
    *, inline_once: bool, ignore_impurity: bool,
) -> Callable[[IRModule, object], IRModule]:
    """DeadCodeElimination's transformation, with Relay's options: the manifest's factory.

    The pass is :data:`DeadCodeElimination`, a module pass as in Relay (the
    purity of a global function is a fact about the whole module).  The
    options' defaults are the manifest's: the registry gives every declared
    option.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return dead_code_elimination_module(
            mod, inline_once=inline_once, ignore_impurity=ignore_impurity,
        )

    return transform


#: The DeadCodeElimination pass, the one ``relay.transform.DeadCodeElimination`` builds;
#: everything about it is declared in relaypass-plugin.toml.
DeadCodeElimination = pass_constructor("DeadCodeElimination")
