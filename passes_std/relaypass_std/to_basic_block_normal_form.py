"""ToBasicBlockNormalForm: bind with a let each value shared between blocks, and nothing else.

A value used from two branches of an If (or from the bodies of two local
functions) is computed, in a graph, wherever it is first reached; in basic
block normal form it is bound by a let in the innermost block enclosing all
its uses, so that every block says what it evaluates.  Dataflow inside one
block stays a graph, which is what distinguishes this pass from
ToANormalForm.  Backends that lower control flow block by block need it.

Which values are shared between blocks is :mod:`relaypass.analysis.basic_block_normal_form`
(Relay's ``CalcScope``).  The rewrite is Relay's ``Fill`` restricted to those
values (``ToBasicBlockNormalFormAux`` in ``to_a_normal_form.cc``): each of
them is bound to a fresh variable ``%x`` in its block, at the point where the
walk first reaches it (children left to right, a call's arguments before
its callee, an If's condition before its branches), and every use reads the
variable.  Existing lets stay, with one quirk of Relay kept: after
``let %y = %x``, later uses of ``%x`` read ``%y``.  A let whose value is
itself a let has the inner bindings moved out in front of it.
``Primitive`` functions are left as they are, and so are global functions
handed to an external ``Compiler``.

Dataflow is walked with an explicit stack and let chains in a loop, so a
chain of 100,000 calls or 100,000 nested lets is fine; Python recursion
follows only the nesting of Ifs and functions inside dataflow.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.basic_block_normal_form import BasicBlockScopes, basic_block_scopes
from relaypass.analysis.binding_scopes import Scope
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["ToBasicBlockNormalForm", "to_basic_block_normal_form"]

_DATAFLOW = frozenset({Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite})
#: Never bound to a fresh variable (nor are other kinds without children, but constants).
_ATOMS = (Var, GlobalVar, Op)


def _wrap(scope: Scope, body: Expr) -> Expr:
    """The bindings collected in ``scope``, as nested lets around ``body``."""
    for var, value in reversed(scope.bindings):
        body = Let(var, value, body)
    scope.bindings = []
    return body


class _Fill:
    """Relay's Fill for basic blocks: ``visit(e, var)`` is what stands for ``e`` where it is used.

    When ``var`` is given (``e`` is the value of ``let var = e``), the result
    is bound to ``var``; otherwise ``e`` is bound to a fresh variable only if
    it is lifted, and is rebuilt in place if not.
    """

    def __init__(self, blocks: BasicBlockScopes) -> None:
        self.scope_of = blocks.scope_of
        self.children = blocks.children
        self.lifted = blocks.lifted
        self.memo: dict[Expr, Expr] = {}
        self.nesting = 0

    def compound(self, orig: Expr, now: Expr, var: Var | None) -> Expr:
        """``now`` (the rebuilt ``orig``), bound in ``orig``'s block when that is asked for."""
        if var is None and orig not in self.lifted:
            return now
        bindings = self.scope_of[orig].bindings
        if var is None:
            var = Var("x")
        # A let as a bound value: its bindings go in front, its body is what is bound.
        while type(now) is Let:
            bindings.append((now.var, now.value))
            now = now.body
        bindings.append((var, now))
        return var

    def visit(self, e: Expr, var: Var | None = None) -> Expr:
        known = self.memo.get(e)
        if known is not None:
            if var is not None:
                self.scope_of[e].bindings.append((var, known))
            return known
        t = type(e)
        if t in _DATAFLOW:
            return self.visit_dataflow(e, var)
        if t is Let:
            return self.visit_let(e, var)
        if isinstance(e, _ATOMS) or t._layout_.leaf and t is not Constant:
            result: Expr = e
            if var is not None:
                self.scope_of[e].bindings.append((var, e))
                result = var
        elif t is Constant:
            result = self.compound(e, e, var)
        elif t is Function:
            result = self.visit_function(e, var)
        else:
            result = self.compound(e, self.rebuild_blocks(e), var)
        self.memo[e] = result
        return result

    def rebuild_blocks(self, e: Expr) -> Expr:
        """A node that opens blocks (an If, a match): its own children, then each block in its lets.

        The kinds that open blocks declare their own children before their
        branches, so the results line up with ``children(e)``.
        """
        layout = type(e)._layout_
        kids = [self.visit(kid) for kid in layout.outer(e)]
        for scope, scope_kids in zip(self.children[e], layout.scopes_of(e)):
            kids.extend(_wrap(scope, self.visit(kid)) for kid in scope_kids)
        old = layout.children(e)
        return e if all(a is b for a, b in zip(kids, old)) else layout.rebuild(e, kids)

    def visit_function(self, func: Function, var: Var | None) -> Expr:
        if func.attrs.get("Primitive"):
            new: Expr = func
        else:
            (body_scope,) = self.children[func]
            self.nesting += 1
            body = _wrap(body_scope, self.visit(func.body))
            self.nesting -= 1
            new = func if body is func.body else with_fields(func, body=body)
        if self.nesting == 0 and var is None:
            # A global function: the module binds it.
            return new
        return self.compound(func, new, var)

    def visit_dataflow(self, root: Expr, var: Var | None) -> Expr:
        """Post-order over dataflow nodes with an explicit stack, children in evaluation order.

        Children that are not dataflow are visited on the spot; a node is
        then rebuilt over what stands for its children.
        """
        memo = self.memo
        visit = self.visit
        dataflow = _DATAFLOW
        nodes = [root]
        kid_lists = [root._layout_.evaluated(root)]
        positions = [0]
        while nodes:
            kids = kid_lists[-1]
            i = positions[-1]
            descended = False
            while i < len(kids):
                kid = kids[i]
                i += 1
                if kid in memo:
                    continue
                if type(kid) in dataflow:
                    positions[-1] = i
                    nodes.append(kid)
                    kid_lists.append(kid._layout_.evaluated(kid))
                    positions.append(0)
                    descended = True
                    break
                visit(kid)
            if descended:
                continue
            node = nodes.pop()
            kid_lists.pop()
            positions.pop()
            new = node._layout_.remap(node, visit, memo)
            memo[node] = self.compound(node, new, var if node is root else None)
        return memo[root]

    def visit_let(self, let: Let, var: Var | None) -> Expr:
        """A chain of lets in a loop: each value bound to its variable, then the body, then the lets rebuilt."""
        memo = self.memo
        chain: list[Let] = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            self.visit(node.value, node.var)
            chain.append(node)
            node = node.body
        result = self.visit(node)
        for inner in reversed(chain):
            (body_scope,) = self.children[inner]
            result = _wrap(body_scope, result)
            result = self.compound(inner, result, var if inner is let else None)
            memo[inner] = result
        return result


def _reproduced(blocks: BasicBlockScopes) -> bool:
    """Whether the rewrite would rebuild the expression as it is.

    So it is when nothing is lifted and no let takes part in Relay's quirks:
    none binds a variable, global or operator (whose later uses would read
    the let's variable), a let, or a value used elsewhere too.
    """
    if blocks.lifted:
        return False
    uses = blocks.uses
    for node in uses:
        if type(node) is Let:
            value = node.value
            if isinstance(value, _ATOMS) or type(value) is Let or len(uses[value]) != 1:
                return False
    return True


def to_basic_block_normal_form(expr: Expr) -> Expr:
    """``expr`` in basic block normal form (a function stays a function).

    An expression the rewrite would rebuild as it is (one block, or nothing
    shared between blocks) is returned as it is, with its types.
    """
    blocks = basic_block_scopes(expr)
    if blocks.single_block or _reproduced(blocks):
        return expr
    fill = _Fill(blocks)
    return _wrap(blocks.scope_of[expr], fill.visit(expr))


def to_basic_block_normal_form_module(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with every Relay function in basic block normal form.

    Functions handed to an external compiler (a ``Compiler`` attribute) are
    left as they are, as in Relay.
    """
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function) and not func.attrs.get("Compiler"):
            new = to_basic_block_normal_form(func)
            if new is not func:
                out[gv] = new
    return out


def _to_basic_block_normal_form_factory() -> Callable[[IRModule, object], IRModule]:
    """ToBasicBlockNormalForm's transformation: the manifest's factory.

    The pass is :data:`ToBasicBlockNormalForm`.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return to_basic_block_normal_form_module(mod)

    return transform


#: The ToBasicBlockNormalForm pass, the one ``relay.transform.ToBasicBlockNormalForm``
#: builds; everything about it is declared in relaypass-plugin.toml.
ToBasicBlockNormalForm = pass_constructor("ToBasicBlockNormalForm")
