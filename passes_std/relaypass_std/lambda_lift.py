"""LambdaLift: turn every local function into a global one, making closures explicit.

Code generators for a VM (Relay's ``vm/lambda_lift.cc``, the step before its
VM compiler) want every function to be global: a local function is lifted
into a new global ``@lifted_name<N>`` and the local function expression is
replaced by a reference to it.

* A local function that uses no variable of its surroundings becomes the
  global as it is, and ``@lifted_name<N>`` replaces it.
* A closure, which uses variables ``%a, %b`` bound outside it (or type
  variables of an enclosing polymorphic function), becomes a global marked
  ``Closure=1`` that takes those variables and returns the function:
  ``fn (%a: A, %b: B) -> fn(...) -> ... { fn (...) { ... } }``; the local
  function is replaced by ``@lifted_name<N>(%a, %b)``, which builds the
  closure.  The captured variables get the types inference gave them, so
  the pass requires InferType (Relay requires nothing and fails on an
  untyped program; :func:`lambda_lift` called on one raises
  :class:`LambdaLiftError`).
* A let-bound function that calls itself (``let %loop = fn (...) { ...
  %loop(...) ... }``) refers to its global instead: to ``@lifted_name<N>``,
  or to ``@lifted_name<N>(%a, %b)`` for a closure.

Identical lifted functions share one global, as in Relay.  ``Primitive``
functions (fused operators) are not lifted, global functions handed to an
external ``Compiler`` are left as they are, and a global already marked
``Closure`` keeps the function it returns (so running the pass twice changes
nothing the second time; Relay would lift that function again).

Differences from Relay, where Relay's result is wrong or unstable: lifted
functions are numbered in the order they are lifted (Relay names them by a
structural hash), so a module gets the same names on every run; a
self-reference to a let-bound function anywhere in its body (not only a
direct call of it, and also from a function nested in it) reads the global;
and a closure over type variables only is built by a call, like any closure.
The closure's own type annotation is the local function's annotation when
complete, else the type inference gave it, else none.

Function bodies are rewritten with ``MixedModeMutator`` (dataflow post-order
with a stack, let chains in a loop); Python recursion follows only the
nesting of local functions and Ifs.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.substitution import bind
from relaypass.errors import RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function, GlobalVar, Let, Var
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.structural import structural_equal, structural_hash
from relaypass.ir.summary import short_text
from relaypass.ir.types import FuncType, Type, has_incomplete
from relaypass.ir.variables import free_type_vars, free_vars
from relaypass.transform import pass_constructor

__all__ = ["LambdaLift", "LambdaLiftError", "lambda_lift"]

_CLOSURE_ATTRS = {"Closure": 1}


class LambdaLiftError(RelayPassError, ValueError):
    """A closure captures a variable whose type is unknown (the program was not typed)."""


def _type_of(var: Var, func: Function) -> Type:
    if var.has_checked_type:
        return var.checked_type
    if var.type_annotation is not None:
        return var.type_annotation
    raise LambdaLiftError(
        f"LambdaLift: the local function {short_text(func)} captures %{var.name_hint}, whose "
        "type is unknown; run InferType before LambdaLift"
    )


def _closure_type(func: Function) -> Type | None:
    """The type of the function a closure returns: its annotation if complete, else its inferred type."""
    annotations = [p.type_annotation for p in func.params]
    if func.ret_type is not None and all(t is not None for t in annotations):
        annotated = FuncType(annotations, func.ret_type, func.type_params)
        if not has_incomplete(annotated):
            return annotated
    return func.checked_type if func.has_checked_type else None


class _Lifter(MixedModeMutator):
    """Lifts the local functions of the global functions of one module into ``out``."""

    def __init__(self, out: IRModule) -> None:
        super().__init__()
        self.out = out
        self.own_name: dict[Function, Var] = {}  # a let-bound function -> its variable
        self.lifted: dict[int, list[tuple[Function, GlobalVar]]] = {}
        self.count = 0

    def lift_global(self, func: Function) -> Function:
        """``func`` (a global function) with its local functions lifted."""
        if func.attrs.get("Closure") and type(func.body) is Function:
            code = func.body
            body = self.visit(code.body)
            if body is code.body:
                return func
            return with_fields(func, body=with_fields(code, body=body))
        body = self.visit(func.body)
        return func if body is func.body else with_fields(func, body=body)

    def visit_let(self, let: Let) -> Expr:
        return self.rewrite_let_chain(let, self._lift_value)

    def _lift_value(self, let: Let) -> Expr:
        value = let.value
        if type(value) is Function and not value.attrs.get("Primitive"):
            self.own_name[value] = let.var
        return self.visit(value)

    def new_global(self) -> GlobalVar:
        while f"lifted_name{self.count}" in self.out:
            self.count += 1
        gv = GlobalVar(f"lifted_name{self.count}")
        self.count += 1
        return gv

    def visit_function(self, func: Function) -> Expr:
        """A local function: lifted, and replaced by its global (or a call building the closure)."""
        if func.attrs.get("Primitive"):
            return func
        own = self.own_name.get(func)
        free = free_vars(func)
        recursive = own is not None and own in free
        captured = [v for v in free if v is not own]
        type_params = free_type_vars(func)
        body = self.visit(func.body)
        closure = bool(captured or type_params)
        if closure:
            typed = [Var(v.name_hint, _type_of(v, func)) for v in captured]
            binds: dict[Var, Expr] = dict(zip(captured, typed))
        else:
            typed = []
            binds = {}
        gv = self.new_global() if recursive else None
        if recursive:
            binds[own] = Call(gv, typed) if closure else gv
        if binds:
            body = bind(body, binds)
        code = func if body is func.body else with_fields(func, body=body)
        if closure:
            lifted = Function(typed, code, _closure_type(func), type_params, _CLOSURE_ATTRS, func.span)
        else:
            lifted = code
        if gv is None:
            gv = self.shared_global(lifted)
        else:
            self.out[gv] = lifted
        return Call(gv, captured) if closure else gv

    def shared_global(self, lifted: Function) -> GlobalVar:
        """The global of a function equal to ``lifted`` lifted before, else a new one holding it."""
        bucket = self.lifted.setdefault(structural_hash(lifted), [])
        for other, gv in bucket:
            if structural_equal(other, lifted):
                return gv
        gv = self.new_global()
        self.out[gv] = lifted
        bucket.append((lifted, gv))
        return gv


def lambda_lift(mod: IRModule) -> IRModule:
    """A copy of ``mod`` in which no Relay function holds a local function (but primitive ones)."""
    out = mod.copy()
    lifter = _Lifter(out)
    for gv, func in mod.items():
        if isinstance(func, Function) and not func.attrs.get("Compiler"):
            new = lifter.lift_global(func)
            if new is not func:
                out[gv] = new
    return out


def _lambda_lift_factory() -> Callable[[IRModule, object], IRModule]:
    """LambdaLift's transformation: the manifest's factory.

    The pass is :data:`LambdaLift`.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return lambda_lift(mod)

    return transform


#: The LambdaLift pass, the one ``relay.transform.LambdaLift`` builds; everything
#: about it is declared in relaypass-plugin.toml.
LambdaLift = pass_constructor("LambdaLift")
