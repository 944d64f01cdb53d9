"""Inline (Relay's ``InlineGlobals``): replace calls of global functions marked ``Inline`` by their bodies.

A global function with a nonzero ``Inline`` attribute asks to be inlined
wherever it is used, and then to disappear.  Relay's rule
(``src/relay/transforms/inline.cc``), made explicit here:

* a function can be inlined when it is a Relay function marked ``Inline``,
  does not refer to itself, and every global it refers to can be inlined
  (so after inlining into it, it refers to no global at all); a function on
  a cycle of globals cannot;
* every use of such a function, in every global function, is replaced: a
  call ``@g(a, b)`` by ``@g``'s body with ``a`` and ``b`` for its
  parameters, and ``@g`` used as a value (``if (%p) { @g } else { ... }``)
  by ``@g`` as a function literal.  A function handed to an external
  ``Compiler`` (or marked ``Extern``) keeps its body: its uses become the
  function literal, called where ``@g`` was called;
* afterwards the functions that were inlined are removed, except those
  nobody referred to in the first place (the module's entry points) and
  recursive ones, which stay even when marked.

Callees are inlined into their callers first, so a chain of inline
functions collapses into the function at its top.  Relay stops with an
internal check when a function marked ``Inline`` calls one that cannot be
inlined and has callers itself; here it simply stays, called.

Each inlined copy gets fresh variables for the lets, inner functions and
match patterns of the body, so a function inlined twice into the same caller still binds
every variable once; the parameters are replaced by the arguments.
Function bodies are rewritten with ``MixedModeMutator`` (dataflow
post-order with a stack, let chains in a loop) and the call graph is walked
with a stack, so neither deep programs nor long call chains recurse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from relaypass.errors import RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.adt import Clause, Match, Pattern
from relaypass.ir.expr import Call, Expr, Function, GlobalVar, Var
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.traversal import post_order_visit
from relaypass.transform import pass_constructor

__all__ = ["Inline", "InlineError", "InlineGlobals", "inline"]


class InlineError(RelayPassError, ValueError):
    """A call of a function to inline with the wrong number of arguments."""


def _callees(func: Function) -> list[str]:
    """The names of the globals ``func`` refers to, each once, in the order first reached."""
    names: dict[str, None] = {}

    def note(node: object) -> None:
        if type(node) is GlobalVar:
            names[node.name_hint] = None

    post_order_visit(func, note)
    return list(names)


def _marked_inline(func: object) -> bool:
    return isinstance(func, Function) and bool(func.attrs.get("Inline"))


def _keeps_body(func: Function) -> bool:
    """Whether inlining ``func`` keeps it a function: it is compiled elsewhere."""
    return func.attrs.get("Compiler") is not None or bool(func.attrs.get("Extern"))


def _post_order(graph: Mapping[str, list[str]]) -> list[str]:
    """The functions of the call graph, each after every function it refers to (cycles cut)."""
    order: list[str] = []
    state: dict[str, bool] = {}  # False: on the stack, True: done
    for start in graph:
        if start in state:
            continue
        state[start] = False
        stack = [(start, iter(graph[start]))]
        while stack:
            name, callees = stack[-1]
            for callee in callees:
                if callee not in state and callee in graph:
                    state[callee] = False
                    stack.append((callee, iter(graph[callee])))
                    break
            else:
                stack.pop()
                state[name] = True
                order.append(name)
    return order


def _inlinable(mod: IRModule, graph: Mapping[str, list[str]], order: list[str]) -> set[str]:
    """The functions whose uses are replaced: marked, not recursive, referring only to inlinable ones.

    ``order`` has callees first, so a callee is decided before its callers;
    one not decided yet when its caller is (a cycle) counts as not inlinable.
    """
    result: set[str] = set()
    for name in order:
        callees = graph[name]
        if _marked_inline(mod[name]) and name not in callees and all(c in result for c in callees):
            result.add(name)
    return result


class _Instance(MixedModeMutator):
    """A copy of a function's body with the parameters replaced and every other variable fresh."""

    def __init__(self, binds: Mapping[Var, Expr]) -> None:
        super().__init__()
        self.binds = binds

    def visit_var(self, var: Var) -> Expr:
        new = self.binds.get(var)
        if new is not None:
            return new
        return Var(var.name_hint, var.type_annotation, var.span)

    def visit_match(self, match: Match) -> Expr:
        # The patterns' variables are not children: give them their fresh copies
        # first, so the clauses' bodies read those (the memo table maps each once).
        patterns = [self.fresh_pattern(p) for p in match.patterns]
        bodies = [self.visit(b) for b in match.bodies]
        return Match(self.visit(match.data), [Clause(p, b) for p, b in zip(patterns, bodies)],
                     match.complete, match.span)

    def fresh_pattern(self, pattern: Pattern) -> Pattern:
        layout = type(pattern)._layout_
        kids = [self.fresh_pattern(k) for k in layout.children(pattern)]
        fresh = {f.name: self.visit(getattr(pattern, f.name)) for f in layout.var_fields}
        return rebuild(pattern, kids, **fresh)


class _Inliner(MixedModeMutator):
    """Replaces the uses of inlinable globals in one function."""

    def __init__(self, functions: Mapping[str, Function], inlinable: set[str], where: str) -> None:
        super().__init__()
        self.functions = functions
        self.inlinable = inlinable
        self.where = where

    def visit_call(self, call: Call) -> Expr:
        op = call.op
        if type(op) is not GlobalVar or op.name_hint not in self.inlinable:
            return super().visit_call(call)
        # The arguments were rewritten already (dataflow is visited children first).
        args = [self.visit(arg) for arg in call.args]
        func = self.functions[op.name_hint]
        if len(args) != len(func.params):
            raise InlineError(
                f"Inline: @{self.where} calls @{op.name_hint} with {len(args)} argument(s), "
                f"but it has {len(func.params)} parameter(s)"
            )
        if _keeps_body(func):
            return Call(_Instance({}).visit(func), args, call.attrs, call.type_args, call.span)
        return _Instance(dict(zip(func.params, args))).visit(func.body)

    def visit_global_var(self, gv: GlobalVar) -> Expr:
        if gv.name_hint in self.inlinable:
            return _Instance({}).visit(self.functions[gv.name_hint])
        return gv


def inline(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with the functions marked ``Inline`` inlined where they are used (see the module doc)."""
    functions = {gv.name_hint: f for gv, f in mod.items() if isinstance(f, Function)}
    graph = {name: _callees(func) for name, func in functions.items()}
    order = _post_order(graph)
    inlinable = _inlinable(mod, graph, order)
    if not inlinable:
        return mod.copy()
    referred = {callee for name, callees in graph.items() for callee in callees if callee != name}
    out = mod.copy()
    for name in order:
        if any(callee in inlinable for callee in graph[name]):
            functions[name] = _Inliner(functions, inlinable, name).visit(functions[name])
            out[name] = functions[name]
    for name in inlinable:
        if name in referred:
            out.remove(name)
    return out


def _inline_factory() -> Callable[[IRModule, object], IRModule]:
    """Inline's transformation: the manifest's factory (the pass is named InlineGlobals, as in Relay).

    The pass is :data:`Inline`.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return inline(mod)

    return transform


#: The pass ``relay.transform.Inline()`` builds; Relay names it InlineGlobals (so
#: ``disabled_pass=["InlineGlobals"]`` turns it off), and so does relaypass-plugin.toml.
InlineGlobals = pass_constructor("InlineGlobals")
Inline = InlineGlobals
