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

The walk is :class:`relaypass.analysis.scope_fill.ScopeFill`, the one
ToANormalForm uses, told to bind only the lifted values: dataflow with an
explicit stack and let chains in a loop, so a chain of 100,000 calls or
100,000 nested lets is fine, and so is any nesting of Ifs, matches and
functions (visited from an explicit stack too).

The usual input, a program in A-normal form with no branch, is one block
with a chain of lets in it, and the pass returns it as it is.  Finding that
out by the scope calculation costs a scope per let and a list of uses per
node; :func:`_one_let_chain` tells it in one walk that only visits each node
(see there why its answer is the calculation's), and the calculation runs
only for the programs it cannot answer.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.basic_block_normal_form import BasicBlockScopes, basic_block_scopes
from relaypass.analysis.scope_fill import ScopeFill, fill_functions, wrap
from relaypass.ir.expr import Expr, Function, GlobalVar, Let, Var
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["ToBasicBlockNormalForm", "to_basic_block_normal_form"]

#: Never bound to a fresh variable (nor are other kinds without children, but constants).
_ATOMS = (Var, GlobalVar, Op)


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


def _one_let_chain(expr: Expr) -> bool:
    """Whether ``expr`` is a chain of lets the rewrite rebuilds as it is, told without scopes.

    So it is when the only nodes that open scopes are ``expr`` itself and
    the lets of the chain that starts at it (or at its body, for a
    function), each the body of the one before, and when no let of the chain
    binds an atom or a value used anywhere else.  Then the scopes form one
    line, each let's inside the one before, and the walk of the scope
    calculation meets them in that order: it records every use of a node
    while walking the value (or variable, or the last body) that holds the
    node's parent, so later uses are never in a scope outside the first
    one's, and nothing is lifted.  The lets' values are used once, by their
    lets, and are no atoms: none of the quirks :func:`_reproduced` looks for
    applies.  False means only that the scope calculation must decide.
    """
    stack: list[Expr] = []
    node = expr
    if type(expr) is Function:
        stack.extend(expr.params)
        node = expr.body
    values: set[Expr] = set()
    while type(node) is Let:
        value = node.value
        if value in values or isinstance(value, _ATOMS):
            return False
        values.add(value)
        stack.append(node.var)
        stack.append(value)
        node = node.body
    if node in values:
        return False
    stack.append(node)
    seen: set[Expr] = set()
    pop, push, add = stack.pop, stack.append, seen.add
    while stack:
        node = pop()
        if node in seen:
            continue
        add(node)
        layout = type(node)._layout_
        if layout.leaf:
            continue
        if layout.opens_scopes:  # a branch, a local function, a let off the chain
            return False
        for kid in layout.children(node):
            t = type(kid)
            if t is Var or t is Op or t is GlobalVar:
                continue  # atoms: no value of the chain, and nothing below them
            if kid in values:  # a let's value used again
                return False
            if kid not in seen:
                push(kid)
    return True


def to_basic_block_normal_form(expr: Expr) -> Expr:
    """``expr`` in basic block normal form (a function stays a function).

    An expression the rewrite would rebuild as it is (one block, or nothing
    shared between blocks) is returned as it is, with its types.
    """
    if _one_let_chain(expr):
        return expr
    blocks = basic_block_scopes(expr)
    if blocks.single_block or _reproduced(blocks):
        return expr
    fill = ScopeFill(expr, blocks.scope_of.__getitem__, blocks.children, blocks.lifted)
    return wrap(blocks.scope_of[expr], fill.visit(expr))


def to_basic_block_normal_form_module(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with every Relay function in basic block normal form (but those
    handed to an external compiler, as in Relay)."""
    return fill_functions(mod, to_basic_block_normal_form)


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
