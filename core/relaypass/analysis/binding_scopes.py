"""Where each subexpression should be bound: Relay's dependency graph and scope calculation.

ToANormalForm gives every subexpression a let binding, and the binding must go
in the innermost scope that encloses every use: an expression used only in
one branch of an If is computed in that branch, one used in both branches is
computed before the If.  Relay (``dependency_graph.cc`` and ``CalcScope`` in
``to_a_normal_form.cc``) gets this from the graph of uses:

* the whole expression lives in the global scope;
* each branch of an If, the body of a function and the body of a let (with
  its bound value) open a child scope of the scope of that node;
* every other node lives in the lowest common ancestor of the scopes of all
  its uses.

Parents are settled before their children by walking the graph in reverse
post-order.  Lowest common ancestors are found with skew-binary jump pointers
(each scope keeps one extra pointer), so a query costs O(log depth) even when
100,000 nested lets make the scope tree that deep.  Such depth comes from
chains (each let's scope the first child of the one before), so each scope
also names the chain it lies on, the first child continuing its parent's: of
two scopes on one chain the shallower encloses the other, which answers the
common query, a value used at many depths of a let chain, in O(1).

Which children open a scope is what the node kinds declare
(:mod:`relaypass.ir.fields`): the variables a node binds are in scope in all
its children (a function's body, a let's value and body), and a branch is a
scope of its own.

Variables, globals and operators need a scope only in the rare
``let %y = %x``, so theirs is computed on demand from the scopes of their
uses; a program without Ifs, lets or local functions has a single scope below
the root (:func:`flat_scopes`), which needs no calculation at all.
"""

from __future__ import annotations

from relaypass.ir.expr import Expr, Function, GlobalVar, Var
from relaypass.ir.op import Op

__all__ = ["BindingScopes", "Scope", "binding_scopes", "flat_scopes", "lowest_common_ancestor"]

_ATOMS = frozenset({Var, GlobalVar, Op})


class Scope:
    """A node of the scope tree, with the bindings that ToANormalForm collects in it.

    ``bindings`` holds ``(var, value)`` pairs in order, and possibly whole
    lists of bindings of a finished child scope spliced in as one item (so
    that moving a child's bindings up costs O(1)).
    """

    __slots__ = ("parent", "level", "jump", "bindings", "chain", "extended")

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.bindings: list = []
        # The first scope of the chain of first children this one lies on (see the module).
        self.chain = self
        self.extended = False
        if parent is None:
            self.level = 0
            self.jump = self
            return
        if not parent.extended:
            parent.extended = True
            self.chain = parent.chain
        self.level = parent.level + 1
        j = parent.jump
        if parent.level - j.level == j.level - j.jump.level:
            self.jump = j.jump
        else:
            self.jump = parent


def lowest_common_ancestor(a: Scope, b: Scope) -> Scope:
    """The innermost scope enclosing both ``a`` and ``b``."""
    if a.chain is b.chain:
        return a if a.level <= b.level else b
    if a.level < b.level:
        a, b = b, a
    level = b.level
    while a.level > level:
        j = a.jump
        a = j if j.level >= level else a.parent
    while a is not b:
        if a.jump is not b.jump:
            a = a.jump
            b = b.jump
        else:
            a = a.parent
            b = b.parent
    return a


def _is_primitive(func: Function) -> bool:
    return bool(func.attrs.get("Primitive"))


class BindingScopes:
    """The scope of every node of one expression, and the child scopes that nodes open.

    ``scope_of(node)`` is where a binding of ``node`` goes; ``children[node]``
    are the scopes an If (then, else), a function (body) or a let (value and
    body) opens.  Nothing inside a ``Primitive`` function is given a scope.
    """

    __slots__ = ("root", "global_scope", "children", "_scopes", "_atom_uses", "_uniform")

    @property
    def flat(self) -> bool:
        """True when every node below the root shares one scope."""
        return self._uniform is not None

    def __init__(self, root: Expr) -> None:
        self.root = root
        self.global_scope = Scope()
        self.children: dict[Expr, tuple[Scope, ...]] = {}
        self._scopes: dict[Expr, Scope] = {}
        # Variables, globals and operators are bound only by ``let %y = %x``-like code, so
        # their scope is computed on demand from the scopes they are used in.
        self._atom_uses: dict[Expr, list[Scope]] = {}
        self._uniform: Scope | None = None

    def scope_of(self, node: Expr) -> Scope:
        uniform = self._uniform
        if uniform is not None and node is not self.root:
            return uniform
        scope = self._scopes.get(node)
        if scope is None:
            uses = self._atom_uses[node]
            scope = uses[0]
            for s in uses:
                if s is not scope:
                    scope = lowest_common_ancestor(scope, s)
            self._scopes[node] = scope
        return scope

    def scope_lookup(self):
        """A fast ``scope_of`` for code that asks for many nodes."""
        uniform = self._uniform
        if uniform is not None:
            root = self.root
            global_scope = self.global_scope

            def lookup(node: Expr) -> Scope:
                return global_scope if node is root else uniform

            return lookup
        scopes = self._scopes
        scope_of = self.scope_of

        def lookup_any(node: Expr) -> Scope:
            scope = scopes.get(node)
            return scope if scope is not None else scope_of(node)

        return lookup_any


def _post_order(root: Expr) -> tuple[list[Expr], bool]:
    """Every node below ``root`` (children first) and whether any opens a scope.

    The root itself opening a scope (a function) does not count.
    """
    order: list[Expr] = []
    visited: set[Expr] = set()
    nested = False
    stack: list[tuple[Expr, bool]] = [(root, False)]
    push = stack.append
    append = order.append
    while stack:
        node, expanded = stack.pop()
        if expanded:
            append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        push((node, True))
        t = type(node)
        if t is Function and _is_primitive(node):
            continue
        layout = t._layout_
        if layout.opens_scopes and not (t is Function and node is root):
            nested = True
        for kid in layout.children(node):
            if kid not in visited:
                push((kid, False))
    return order, nested


def flat_scopes(root: Expr) -> BindingScopes:
    """The scopes of ``root`` if it has no If, let or local function (which is not checked).

    Everything below the root then lives in one scope: the root function's
    body, or the global scope for an expression.  ToANormalForm starts from
    this and falls back on :func:`binding_scopes` when it meets a node that
    opens a scope, which spares dataflow programs the scope calculation.
    """
    result = BindingScopes(root)
    global_scope = result.global_scope
    if type(root) is Function and not _is_primitive(root):
        body_scope = Scope(global_scope)
        result.children[root] = (body_scope,)
        result._uniform = body_scope
    else:
        result._uniform = global_scope
    result._scopes[root] = global_scope
    return result


def binding_scopes(root: Expr) -> BindingScopes:
    """The scope of every node of ``root`` (a function, or any expression)."""
    order, nested = _post_order(root)
    if not nested:
        return flat_scopes(root)
    result = BindingScopes(root)
    global_scope = result.global_scope
    scopes = result._scopes
    children = result.children
    atom_uses = result._atom_uses
    scopes[root] = global_scope
    lca = lowest_common_ancestor

    def use(kid: Expr, s: Scope) -> None:
        if type(kid) in _ATOMS:
            uses = atom_uses.get(kid)
            if uses is None:
                atom_uses[kid] = [s]
            elif uses[-1] is not s:
                uses.append(s)
            return
        old = scopes.get(kid)
        if old is None:
            scopes[kid] = s
        elif old is not s:
            scopes[kid] = lca(old, s)

    for node in reversed(order):
        t = type(node)
        if t in _ATOMS or t is Function and _is_primitive(node):
            continue
        s = scopes[node]
        layout = t._layout_
        for kid in layout.outer(node):
            use(kid, s)
        if layout.opens_scopes:
            groups = layout.scopes_of(node)
            inner = children[node] = tuple(Scope(s) for _ in groups)
            for scope, kids in zip(inner, groups):
                for kid in kids:
                    use(kid, scope)
    return result
