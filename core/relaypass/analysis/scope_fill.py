"""Relay's Fill: rebuild a program with chosen subexpressions bound by lets in their scopes.

ToANormalForm binds every subexpression that is not an atom; ToBasicBlockNormalForm
only the values used from more than one block.  Relay writes both as one
walk (``Fill`` in ``to_a_normal_form.cc``, the second restricted to a set of
nodes), and so does this module: :class:`ScopeFill` walks the program in
evaluation order (children left to right, a call's arguments before its
callee, an If's condition or a match's data before its branches), rebuilds
each node over what stands for its children, and binds it to a variable in
its scope when it is chosen, or when it is a let's value (then to the let's
variable).  Where the bindings go is an analysis of its own:
:mod:`.binding_scopes` for A-normal form, :mod:`.basic_block_normal_form`
for basic blocks.

Relay's quirks are kept for both: after ``let %y = %x``, later uses of
``%x`` read ``%y``; a let's bindings move out in front of it when it is
bound, and its body is what is bound.  Variables, global variables,
operators and constructors are atoms, never bound but to a let's variable;
``Primitive`` functions are left as they are.

Dataflow is walked with an explicit stack and let chains in a loop, so a
chain of 100,000 calls or 100,000 nested lets is fine; Ifs, matches,
functions and lets nested in one another are visited as generators run from
one explicit stack (see :class:`ScopeFill`), so no depth of nesting makes
Python recurse.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Generator
from types import GeneratorType

from ..ir.expr import (
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
from ..ir.fields import with_fields
from ..ir.module import IRModule
from ..ir.op import Op
from .binding_scopes import Scope

__all__ = ["ScopeFill", "fill_functions", "wrap"]

#: Walked by the explicit stack of :meth:`ScopeFill.visit_dataflow`.
_DATAFLOW = frozenset({Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite})
#: Never bound to a fresh variable (nor are other kinds without children, but constants).
_ATOMS = (Var, GlobalVar, Op)


def wrap(scope: Scope, body: Expr) -> Expr:
    """The bindings collected in ``scope`` as nested lets around ``body``; the scope is emptied.

    A binding is a ``(var, value)`` pair or a whole list of bindings of a
    finished scope spliced in as one item (moving a let's bindings out in
    front of it costs O(1) that way).
    """
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


def _is_primitive(func: Function) -> bool:
    return bool(func.attrs.get("Primitive"))


class ScopeFill:
    """Relay's Fill: ``visit(e, var)`` returns what stands for ``e`` where it is used.

    ``scope_of(node)`` is the scope a binding of ``node`` goes in,
    ``children[node]`` the scopes a node opens (in the order its layout's
    ``scopes_of`` gives them), ``lifted`` the nodes to bind (None: every node
    that is not an atom).  When ``var`` is given (``e`` is the value of
    ``let var = e``), the result is bound to ``var``.

    Nodes that open scopes nest inside one another as deep as the program
    does (10,000 Ifs, each in a branch of the one before), so they are not
    visited by Python recursion: :meth:`visit_let`, :meth:`visit_function`
    and :meth:`rebuild_blocks` are generators, and :meth:`visit_dataflow`
    returns one when it meets such a node.  A generator yields each
    generator it needs the result of, a subtask, and is sent that result
    back; :meth:`visit` runs them all from one explicit stack, in the order
    the recursion would.  Subclasses may refuse a node that opens scopes by
    overriding :meth:`visit_let`, :meth:`visit_function` or
    :meth:`rebuild_blocks` to raise before returning what the base class
    returns.
    """

    def __init__(self, root: Expr, scope_of: Callable[[Expr], Scope],
                 children: dict[Expr, tuple[Scope, ...]],
                 lifted: Container[Expr] | None = None) -> None:
        self.root = root
        self.scope_of = scope_of
        self.children = children
        self.lifted = lifted
        self.memo: dict[Expr, Expr] = {}
        self.nesting = 0

    def compound(self, orig: Expr, now: Expr, var: Var | None) -> Expr:
        """``now`` (the rebuilt ``orig``), bound in ``orig``'s scope when that is asked for.

        A let as the bound value has its bindings moved in front; its body
        is what is bound.
        """
        if var is None:
            lifted = self.lifted
            if lifted is not None and orig not in lifted:
                return now
            var = Var("x")
        bindings = self.scope_of(orig).bindings
        while type(now) is Let:
            bindings.append((now.var, now.value))
            now = now.body
        bindings.append((var, now))
        return var

    def visit(self, e: Expr, var: Var | None = None) -> Expr:
        """What stands for ``e``, every subtask run from one stack (see the class)."""
        task = self.start(e, var)
        if type(task) is not GeneratorType:
            return task
        stack: list[Generator[Generator, Expr, Expr]] = [task]
        push, pop = stack.append, stack.pop
        value: Expr | None = None
        try:
            while stack:
                try:
                    sub = stack[-1].send(value)
                except StopIteration as done:
                    pop()
                    value = done.value
                    continue
                push(sub)
                value = None
        except BaseException:
            # Each suspended generator holds the subtask it yielded: closed innermost
            # first, none is left to be finalized from within its parent's.
            while stack:
                pop().close()
            raise
        return value

    def start(self, e: Expr, var: Var | None = None) -> Expr | Generator[Generator, Expr, Expr]:
        """What stands for ``e``, or the generator computing it when ``e`` needs subtasks."""
        memo = self.memo
        known = memo.get(e)
        if known is not None:
            if var is not None:
                self.scope_of(e).bindings.append((var, known))
            return known
        t = type(e)
        if t in _DATAFLOW:
            return self.visit_dataflow(e, var)
        if t is Let:
            return self.visit_let(e, var)
        if isinstance(e, _ATOMS) or t._layout_.leaf and t is not Constant:
            result: Expr = e
            if var is not None:
                self.scope_of(e).bindings.append((var, e))
                result = var
        elif t is Constant:
            result = self.compound(e, e, var)
        elif t is Function:
            return self.visit_function(e, var)
        else:
            return self._visit_blocks(e, var)
        memo[e] = result
        return result

    def _visit_blocks(self, e: Expr, var: Var | None) -> Generator[Generator, Expr, Expr]:
        now = yield from self.rebuild_blocks(e)
        result = self.compound(e, now, var)
        self.memo[e] = result
        return result

    def rebuild_blocks(self, e: Expr) -> Generator[Generator, Expr, Expr]:
        """A node that opens blocks (an If, a match): its own children, then each block in its lets.

        The kinds that open blocks declare their own children before their
        branches, so the results line up with ``children(e)``.
        """
        start = self.start
        layout = type(e)._layout_
        kids = []
        for kid in layout.outer(e):
            new = start(kid)
            if type(new) is GeneratorType:
                new = yield new
            kids.append(new)
        opened = self.children[e] if layout.opens_scopes else ()
        for scope, scope_kids in zip(opened, layout.scopes_of(e)):
            for kid in scope_kids:
                new = start(kid)
                if type(new) is GeneratorType:
                    new = yield new
                kids.append(wrap(scope, new))
        old = layout.children(e)
        return e if all(a is b for a, b in zip(kids, old)) else layout.rebuild(e, kids)

    def visit_function(self, func: Function, var: Var | None) -> Generator[Generator, Expr, Expr]:
        """A function with its body in its lets; bound unless it is the global function."""
        if _is_primitive(func):
            new: Expr = func
        else:
            (body_scope,) = self.children[func]
            self.nesting += 1
            body = self.start(func.body)
            if type(body) is GeneratorType:
                body = yield body
            body = wrap(body_scope, body)
            self.nesting -= 1
            new = func if body is func.body else with_fields(func, body=body)
        if self.nesting != 0 or var is not None:
            new = self.compound(func, new, var)
        # (A global function is bound by the module.)
        self.memo[func] = new
        return new

    def visit_dataflow(self, root: Expr, var: Var | None) -> Expr | Generator[Generator, Expr, Expr]:
        """Post-order over dataflow nodes with an explicit stack, children in evaluation order.

        ``nodes``/``kid_lists``/``positions`` are the stack: a node, its
        children in evaluation order and how many of them have been visited.
        Children that are not dataflow are visited on the spot (so constants
        are bound in evaluation order, as in Relay); a node is then rebuilt
        over what stands for its children.  The walk returns its result
        unless a child needs subtasks (it opens scopes); from there on a
        generator runs that child's task and then the rest of the walk,
        which carries on from the same stack.
        """
        nodes = [root]
        kid_lists = [root._layout_.evaluated(root)]
        positions = [0]
        sub = self._dataflow_steps(root, var, nodes, kid_lists, positions)
        if sub is None:
            return self.memo[root]
        return self._dataflow_resumed(sub, root, var, nodes, kid_lists, positions)

    def _dataflow_resumed(self, sub: Generator, root: Expr, var: Var | None, nodes: list[Expr],
                          kid_lists: list, positions: list[int]) -> Generator[Generator, Expr, Expr]:
        while sub is not None:
            yield sub
            sub = self._dataflow_steps(root, var, nodes, kid_lists, positions)
        return self.memo[root]

    def _dataflow_steps(self, root: Expr, var: Var | None, nodes: list[Expr], kid_lists: list,
                        positions: list[int]) -> Generator | None:
        """The walk of :meth:`visit_dataflow` until it ends (None) or a child's task is to run."""
        memo = self.memo
        start = self.start
        scope_of = self.scope_of
        lifted = self.lifted
        dataflow = _DATAFLOW
        generator = GeneratorType
        while nodes:
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
                sub = start(kid)
                if type(sub) is generator:
                    positions[-1] = i
                    return sub
            if descended:
                continue
            node = nodes.pop()
            kid_lists.pop()
            positions.pop()
            # Every child is in the memo table now; a dataflow node rebuilds to one, never a let.
            new = node._layout_.remap(node, self.visit, memo)
            bound = var if node is root else None
            if bound is None:
                if lifted is not None and node not in lifted:
                    memo[node] = new
                    continue
                bound = Var("x")
            scope_of(node).bindings.append((bound, new))
            memo[node] = bound
        return None

    def visit_let(self, let: Let, var: Var | None) -> Generator[Generator, Expr, Expr]:
        """A chain of lets in a loop: each value bound to its variable, then the body, then the lets.

        A let that is bound (to ``var``, or because it is chosen) moves the
        bindings of its body's scope out in front of it, spliced in as one
        item; one that is not is rebuilt as lets around its body.
        """
        memo = self.memo
        children = self.children
        lifted = self.lifted
        start = self.start
        chain: list[Let] = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            sub = start(node.value, node.var)
            if type(sub) is GeneratorType:
                yield sub
            chain.append(node)
            node = node.body
        result = start(node)
        if type(result) is GeneratorType:
            result = yield result
        for inner in reversed(chain):
            (body_scope,) = children[inner]
            bound = var if inner is let else None
            if bound is None and lifted is not None and inner not in lifted:
                result = wrap(body_scope, result)
            else:
                if body_scope.bindings:
                    self.scope_of(inner).bindings.append(body_scope.bindings)
                    body_scope.bindings = []
                result = self.compound(inner, result, bound)
            memo[inner] = result
        return result


def fill_functions(mod: IRModule, rewrite: Callable[[Function], Expr]) -> IRModule:
    """A copy of ``mod`` with ``rewrite`` applied to every Relay function.

    Functions handed to an external compiler (a ``Compiler`` attribute) are
    left as they are, as in Relay; a function ``rewrite`` returns unchanged
    keeps its entry.
    """
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function) and not func.attrs.get("Compiler"):
            new = rewrite(func)
            if new is not func:
                out[gv] = new
    return out
