"""ToANormalForm: give every intermediate value a name, making evaluation order and sharing explicit.

Relay's algorithm (``to_a_normal_form.cc``): :mod:`.binding_scopes` decides
the scope of every subexpression; then a walk over the program ("Fill")
replaces each non-atomic subexpression, constants included, by a fresh
variable bound in that scope, in evaluation order (children left to right,
a call's arguments before its callee).  A node reached twice is bound once
and its variable reused, so sharing in the graph becomes sharing of a name.

Variables, global variables and operators stay as they are.  A let in the
input keeps its variable; its bindings move into the enclosing scope and its
value is bound to a fresh variable, as in Relay (``(let %x = e; %x) * 2``
becomes ``let %x = e; let %v = %x; let %w = %v * 2; %w``).  A function's body
becomes a let chain of its own; a local function is bound like any value;
``Primitive`` functions are left untouched.

A match is Relay's too: its data is bound in the enclosing scope, the body of
each clause becomes a let chain of its own (in the scope where the clause's
pattern variables are bound), and the match itself is bound like any value.
Constructors are atoms.

The walk is :class:`relaypass.analysis.scope_fill.ScopeFill`, which
ToBasicBlockNormalForm shares: dataflow (calls, tuples, projections,
references) with an explicit stack and let chains in a loop, so a
100,000-call chain becomes 100,000 nested lets without Python recursion,
and Ifs, matches, functions and lets nested in one another (10,000 deep) are
visited from an explicit stack too.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.binding_scopes import BindingScopes, binding_scopes, flat_scopes
from relaypass.analysis.scope_fill import ScopeFill, fill_functions, wrap
from relaypass.ir.expr import Expr, Function, Let, Var
from relaypass.ir.module import IRModule
from relaypass.transform import pass_constructor

__all__ = ["ToANormalForm", "to_a_normal_form"]


class _NotFlat(Exception):
    """Raised by the fill on a node that opens a scope, when it assumed there was none."""


class _Fill(ScopeFill):
    """Relay's Fill binding every subexpression that is not an atom (:class:`.ScopeFill`).

    On the scopes of :func:`flat_scopes` (assumed, not computed), a node
    below the root that opens a scope raises :class:`_NotFlat`, and the
    caller starts again on the scopes :func:`binding_scopes` computes.
    """

    def __init__(self, scopes: BindingScopes) -> None:
        super().__init__(scopes.root, scopes.scope_lookup(), scopes.children)
        self.flat = scopes.flat

    def visit_let(self, let: Let, var: Var | None) -> Expr:
        if self.flat:
            raise _NotFlat
        return super().visit_let(let, var)

    def visit_function(self, func: Function, var: Var | None) -> Expr:
        if self.flat and func is not self.root and not func.attrs.get("Primitive"):
            raise _NotFlat
        return super().visit_function(func, var)

    def rebuild_blocks(self, e: Expr) -> Expr:
        if self.flat and type(e)._layout_.opens_scopes:
            raise _NotFlat
        return super().rebuild_blocks(e)


def to_a_normal_form(expr: Expr) -> Expr:
    """``expr`` in A-normal form (a function stays a function, with an A-normal body)."""
    try:
        return _fill(flat_scopes(expr))
    except _NotFlat:
        return _fill(binding_scopes(expr))


def _fill(scopes: BindingScopes) -> Expr:
    result = _Fill(scopes).visit(scopes.root)
    return wrap(scopes.global_scope, result)


def to_a_normal_form_module(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with every Relay function in A-normal form (but those handed to an
    external compiler, as in Relay)."""
    return fill_functions(mod, to_a_normal_form)


def _to_a_normal_form_factory() -> Callable[[IRModule, object], IRModule]:
    """ToANormalForm's transformation: the manifest's factory.

    The pass is :data:`ToANormalForm`.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return to_a_normal_form_module(mod)

    return transform


#: The ToANormalForm pass, the one ``relay.transform.ToANormalForm`` builds;
#: everything about it is declared in relaypass-plugin.toml.
ToANormalForm = pass_constructor("ToANormalForm")
