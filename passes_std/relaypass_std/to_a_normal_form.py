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

Dataflow (calls, tuples, projections, references) is walked with an explicit
stack and let chains in a loop, so a 100,000-call chain becomes 100,000
nested lets without Python recursion; Python recursion happens only for
nesting of Ifs, functions and let-bound values inside values.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.binding_scopes import BindingScopes, Scope, binding_scopes, flat_scopes
from relaypass.ir.expr import (
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
from relaypass.ir.fields import rebuild, with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["ToANormalForm", "to_a_normal_form"]

_DATAFLOW = frozenset({Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite})
_ATOMS = frozenset({Var, GlobalVar, Op})


def _is_primitive(func: Function) -> bool:
    return bool(func.attrs.get("Primitive"))


def _wrap(scope: Scope, body: Expr) -> Expr:
    """The bindings collected in ``scope`` as nested lets around ``body``."""
    flat: list[tuple[Var, Expr]] = []
    stack = [iter(scope.bindings)]
    while stack:
        for item in stack[-1]:
            if type(item) is tuple:
                flat.append(item)
            else:
                stack.append(iter(item))
                break
        else:
            stack.pop()
    scope.bindings = []
    for var, value in reversed(flat):
        body = Let(var, value, body)
    return body


class _NotFlat(Exception):
    """Raised by Fill on a node that opens a scope, when it assumed there was none."""


class _Fill:
    """Relay's Fill: ``visit(e, var)`` returns the atom standing for ``e``.

    When ``var`` is given (``e`` is the value of ``let var = e``), the result
    is bound to ``var`` rather than to a fresh variable.
    """

    def __init__(self, scopes: BindingScopes) -> None:
        self.scopes = scopes
        self.scope_of = scopes.scope_lookup()
        self.flat = scopes.flat
        self.memo: dict[Expr, Expr] = {}
        self.nesting = 0

    def bind(self, orig: Expr, value: Expr, var: Var | None) -> Var:
        if var is None:
            var = Var("x")
        self.scope_of(orig).bindings.append((var, value))
        return var

    def visit(self, e: Expr, var: Var | None = None) -> Expr:
        memo = self.memo
        known = memo.get(e)
        if known is not None:
            if var is not None:
                self.scope_of(e).bindings.append((var, known))
            return known
        t = type(e)
        if t in _DATAFLOW:
            return self.visit_dataflow(e, var)
        if t in _ATOMS or isinstance(e, Op):
            result: Expr = e if var is None else self.bind(e, e, var)
        elif t is Constant:
            result = self.bind(e, e, var)
        elif self.flat and (t is Let or t is If or (t is Function and e is not self.scopes.root)):
            if t is not Function or not _is_primitive(e):
                raise _NotFlat
            result = self.visit_function(e, var)
        elif t is Let:
            return self.visit_let(e, var)
        elif t is If:
            cond = self.visit(e.cond)
            then_scope, else_scope = self.scopes.children[e]
            then = _wrap(then_scope, self.visit(e.true_branch))
            other = _wrap(else_scope, self.visit(e.false_branch))
            result = self.bind(e, rebuild(e, (cond, then, other)), var)
        elif t is Function:
            result = self.visit_function(e, var)
        else:
            raise TypeError(f"ToANormalForm: unexpected expression {t.__name__}")
        memo[e] = result
        return result

    def visit_function(self, func: Function, var: Var | None) -> Expr:
        if _is_primitive(func):
            new: Expr = func
        else:
            (body_scope,) = self.scopes.children[func]
            self.nesting += 1
            body = _wrap(body_scope, self.visit(func.body))
            self.nesting -= 1
            new = with_fields(func, body=body)
        if self.nesting == 0 and var is None:
            # A global function is bound by the module, not by a let.
            return new
        return self.bind(func, new, var)

    def visit_dataflow(self, root: Expr, var: Var | None) -> Expr:
        """Post-order over dataflow nodes with an explicit stack; children left to right.

        ``nodes``/``kid_lists``/``positions`` are the stack: a node, its
        children in evaluation order (for a call, its arguments and then its
        callee) and how many of them have been visited.  Children that are not dataflow are
        visited on the spot, so constants are bound in evaluation order, as in
        Relay.  The node is then rebuilt over the atoms of its children.
        """
        memo = self.memo
        scope_of = self.scope_of
        visit = self.visit
        dataflow = _DATAFLOW
        nodes = [root]
        kid_lists = [root._layout_.evaluated(root)]
        positions = [0]
        while nodes:
            node = nodes[-1]
            kids = kid_lists[-1]
            i = positions[-1]
            n = len(kids)
            descended = False
            while i < n:
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
            nodes.pop()
            kid_lists.pop()
            positions.pop()
            # Every child is in the memo table now (an atom or the child itself).
            new = node._layout_.remap(node, visit, memo)
            bound = var if node is root and var is not None else Var("x")
            scope_of(node).bindings.append((bound, new))
            memo[node] = bound
        return memo[root]

    def visit_let(self, let: Let, var: Var | None) -> Expr:
        memo = self.memo
        children = self.scopes.children
        scope_of = self.scope_of
        chain: list[Let] = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            self.visit(node.value, node.var)
            chain.append(node)
            node = node.body
        atom = self.visit(node)
        for inner in reversed(chain):
            # Relay binds the let's body (with its bindings moved out) to a new variable.
            (body_scope,) = children[inner]
            outer = scope_of(inner)
            if body_scope.bindings:
                outer.bindings.append(body_scope.bindings)
                body_scope.bindings = []
            bound = var if inner is let and var is not None else Var("x")
            outer.bindings.append((bound, atom))
            atom = bound
            memo[inner] = atom
        return atom


def to_a_normal_form(expr: Expr) -> Expr:
    """``expr`` in A-normal form (a function stays a function, with an A-normal body)."""
    try:
        return _fill(flat_scopes(expr))
    except _NotFlat:
        return _fill(binding_scopes(expr))


def _fill(scopes: BindingScopes) -> Expr:
    result = _Fill(scopes).visit(scopes.root)
    return _wrap(scopes.global_scope, result)


def to_a_normal_form_module(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with every Relay function in A-normal form.

    Functions handed to an external compiler (a ``Compiler`` attribute) are
    left as they are, as in Relay.
    """
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function) and not func.attrs.get("Compiler"):
            out[gv] = to_a_normal_form(func)
    return out


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
