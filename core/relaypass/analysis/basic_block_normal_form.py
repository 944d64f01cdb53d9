"""Basic block normal form: which subexpressions are shared across blocks, and the check.

A program is in basic block normal form when every subexpression lives in
one block: a node used from two branches of an If, or from the bodies of two
functions, must be bound by a let in the innermost block enclosing all its
uses, so that where (and whether) it is evaluated is explicit.  Inside one
block dataflow may stay a graph.  ``ToBasicBlockNormalForm`` binds exactly the
nodes that break the rule; :func:`check_basic_block_normal_form` reports one.

Relay decides this (``CalcScope`` in ``to_a_normal_form.cc``) on its
dependency graph: the root lives in the global scope; a branch of an If, the
body of a function and a let (with its variable, value and body) open child
scopes; every other node lives in the lowest common ancestor of the scopes of
its uses.  A node is *lifted* when that ancestor is not the scope of its
first use, in the order Relay's graph records uses: a child of a call, tuple
or projection is used once all the children of that node have been reached,
a child of any other node right after that child was reached.  So a value
computed in an If's condition and used again in a branch is not lifted (its
first use is outside the branches), while one first used in a branch and
then again after the If is.  Operators and global variables are never lifted
(Relay exempts operators only, so it reports a global called from two
branches, which no let can fix).

Scopes come from the node kinds' field declarations
(:mod:`relaypass.ir.fields`): a node's own children other than its binders
and branches are in its scope, its binders and the children they scope over
in one child scope, each branch in a child scope of its own (a match clause's
body, whose pattern's variables count as used there first, as a let's
variable is used first by the let: Relay leaves them out of its graph and so
reports one used from two blocks of the body).  The graph is
walked with explicit stacks, so any depth works; a program in which no node
below the root opens a scope has one block and is answered without any
scope calculation.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import RelayPassError
from ..gc_pause import gc_paused
from ..ir.expr import Call, Expr, GlobalVar, Tuple, TupleGetItem
from ..ir.op import Op
from ..ir.summary import short_text
from .binding_scopes import Scope, lowest_common_ancestor

__all__ = [
    "BasicBlockNormalFormError", "BasicBlockScopes", "basic_block_scopes",
    "check_basic_block_normal_form",
]

#: Global names: evaluating one has no cost or effect, so it may be used from any block
#: (Relay exempts operators only, and so reports a global called in two branches).
_NEVER_LIFTED = (Op, GlobalVar)

#: Kinds whose uses of their children are recorded once every child was reached
#: (Relay expands them together as dataflow).
_DATAFLOW = frozenset({Call, Tuple, TupleGetItem})


class BasicBlockNormalFormError(RelayPassError, ValueError):
    """A subexpression is used from more than one block without a let binding it."""


class BasicBlockScopes:
    """The blocks of one expression: the scope of each node, the scopes nodes open, the lifted nodes.

    ``scope_of[node]`` is the block a binding of ``node`` belongs in;
    ``children[node]`` the scopes ``node`` opens, in the order of
    ``layout.scopes_of(node)`` (an If's two branches; the one scope of a
    function's parameters and body, or of a let's variable, value and body;
    each clause of a match);
    ``lifted`` the nodes used from a block that does not enclose all their
    uses, in the order they were reached; ``uses[node]`` the uses of every
    node reachable from the root, ``(parent, i)`` with ``i`` -1 for the
    parent's own scope and else the index of the scope it opens, in the
    order Relay records them.  When ``single_block`` is true no node below
    the root opens a scope: nothing is lifted and the scope tables are empty.
    """

    __slots__ = ("root", "global_scope", "scope_of", "children", "lifted", "uses", "single_block")

    def __init__(self, root: Expr) -> None:
        self.root = root
        self.global_scope = Scope()
        self.scope_of: dict[Expr, Scope] = {}
        self.children: dict[Expr, tuple[Scope, ...]] = {}
        self.lifted: dict[Expr, None] = {}
        self.uses: dict[Expr, list[tuple[Expr, int]]] = {}
        self.single_block = False


def _kids(node: Expr) -> tuple[Sequence[Expr], Sequence[int] | None]:
    """The children of ``node`` and the scope each is used from: -1 its own, i the i-th it opens.

    The scopes are None when all children are in the node's own scope.
    """
    layout = type(node)._layout_
    outer = layout.outer(node)
    if not layout.opens_scopes:
        return outer, None
    kids = list(outer)
    where = [-1] * len(kids)
    scopes = layout.scopes_of(node)
    binders: list[tuple[Expr, ...]] = [()] * len(scopes)
    for f in layout.pattern_fields:
        # The i-th pattern binds in the i-th branch, the last scopes: a use there first.
        items = getattr(node, f.name)
        first = len(scopes) - len(items)
        for i, item in enumerate(items):
            binders[first + i] = f.kind.binders((item,))
    for i, scope_kids in enumerate(scopes):
        kids.extend(binders[i])
        kids.extend(scope_kids)
        where.extend([i] * (len(binders[i]) + len(scope_kids)))
    return kids, where


def _uses(root: Expr) -> tuple[list[Expr], dict[Expr, list[tuple[Expr, int]]], bool]:
    """Every node in post-order, the uses of each in Relay's order, and whether there is more than one block.

    A use is ``(parent, scope index)`` as in :func:`_kids`.  There is one
    block when no node below the root opens a scope and the root opens at
    most one, holding all its children (a function, a let).  A frame of the
    stack is ``[node, kids, scopes, next kid, dataflow?]``; an interleaved
    node records the use of a child when it comes back to it, a dataflow
    node records all its uses when it finishes.
    """
    order: list[Expr] = []
    uses: dict[Expr, list[tuple[Expr, int]]] = {root: []}
    layout = type(root)._layout_
    if layout.opens_scopes:
        opened = len(layout.scopes_of(root))
        nested = opened > 1 or opened == 1 and bool(layout.outer(root))
    else:
        nested = False
    dataflow_kinds = _DATAFLOW
    stack = [[root, *_kids(root), 0, type(root) in dataflow_kinds]]
    while stack:
        frame = stack[-1]
        node, kids, where, i, dataflow = frame
        n = len(kids)
        while i < n:
            kid = kids[i]
            if kid not in uses:
                uses[kid] = []
                frame[3] = i + 1 if dataflow else i
                t = type(kid)
                if t._layout_.opens_scopes:
                    nested = True
                stack.append([kid, *_kids(kid), 0, t in dataflow_kinds])
                break
            if not dataflow:
                uses[kid].append((node, -1 if where is None else where[i]))
            i += 1
        else:
            if dataflow:
                for kid in kids:
                    uses[kid].append((node, -1))
            order.append(node)
            stack.pop()
    return order, uses, nested


def basic_block_scopes(root: Expr) -> BasicBlockScopes:
    """The blocks of ``root`` (a function or any expression), as Relay's ``CalcScope`` finds them."""
    result = BasicBlockScopes(root)
    order, uses, nested = _uses(root)
    result.uses = uses
    if not nested:
        result.single_block = True
        return result
    scope_of = result.scope_of
    children = result.children
    lifted: list[Expr] = []
    lca = lowest_common_ancestor
    scope_of[root] = result.global_scope
    for node in reversed(order):
        node_uses = uses[node]
        if node_uses:
            parent, where = node_uses[0]
            first = scope_of[parent] if where < 0 else children[parent][where]
            s = first
            for parent, where in node_uses:
                other = scope_of[parent] if where < 0 else children[parent][where]
                # A use from the same scope or from a scope just inside it is the usual case.
                if other is not s and other.parent is not s:
                    s = other if s.parent is other else lca(s, other)
            scope_of[node] = s
            if s is not first and not isinstance(node, _NEVER_LIFTED):
                lifted.append(node)
        else:
            s = scope_of[node]
        layout = type(node)._layout_
        if layout.opens_scopes:
            children[node] = tuple(Scope(s) for _ in layout.scopes_of(node))
    # In the order reached (children before parents), as a reader of the program meets them.
    result.lifted = dict.fromkeys(reversed(lifted))
    return result


def check_basic_block_normal_form(expr: Expr) -> bool:
    """True if ``expr`` is in basic block normal form; else raise :class:`BasicBlockNormalFormError`.

    Relay's ``relay.analysis.check_basic_block_normal_form``: the error names
    the first subexpression (children first) that is used from a block
    not enclosing all its uses.
    """
    if not isinstance(expr, Expr):
        raise TypeError(f"check_basic_block_normal_form expects a Relay expression, got {type(expr).__name__}")
    with gc_paused():  # whole-program work that makes no cycles (relaypass.gc_pause)
        lifted = basic_block_scopes(expr).lifted
    if lifted:
        node = next(iter(lifted))
        more = f" (and {len(lifted) - 1} other subexpression(s))" if len(lifted) > 1 else ""
        raise BasicBlockNormalFormError(
            f"not in basic block normal form: {short_text(node)}{more} is used from more than "
            "one block (branches of an If, bodies of functions) but not bound by a let in the "
            "block enclosing all its uses; the pass converting to basic block normal form adds that let"
        )
    return True
