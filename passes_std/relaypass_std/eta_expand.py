"""EtaExpand: make global functions used as values into function literals that call them.

``@f`` and ``fn (%x) { @f(%x) }`` compute the same thing; the second is a
closure the program builds, which is what code that treats every function
value as a closure (Relay's VM, higher-order passes) wants.  With
``expand_global_var`` every global variable naming a Relay function of the
module becomes ``fn (%eta_expand_param: T1, ...) -> R { @f(%eta_expand_param, ...) }``,
with the parameters' annotations, return type, type parameters and
attributes of ``@f``.  As in Relay (``eta_expand.cc``) this includes a global
in a call's callee position: ``@f(%a)`` becomes ``(fn (%p) { @f(%p) })(%a)``.
Each occurrence of a global variable node gets one function (a node shared
in the graph stays shared).

``expand_constructor`` does the same for constructors of algebraic data types
used as values (a constructor applied to arguments stays as it is):
``Cons`` becomes ``fn [A](%eta_expand_param: A, %eta_expand_param: List[A])
-> List[A] { Cons(...) }``, its type parameters fresh type variables (one
per type variable of the definitions, shared by every expansion, as in
Relay).  Relay demands at least one of the two options; so does this pass
(:class:`EtaExpandError` when it runs with neither).  A global variable the
module does not define, and a constructor of a type it does not define, are
errors too.

Each function is rewritten with a ``MixedModeMutator`` (dataflow post-order
with a stack, let chains in a loop), so any chain length works.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.errors import ModuleError, RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.adt import Constructor
from relaypass.ir.expr import Call, Expr, Function, GlobalVar, Var
from relaypass.ir.fields import map_children, with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.types import Type, TypeCall, TypeVar
from relaypass.transform import pass_constructor

__all__ = ["EtaExpand", "EtaExpandError", "eta_expand"]


class EtaExpandError(RelayPassError, ValueError):
    """EtaExpand asked to expand nothing, or a global or a type the module does not define."""


class _FreshTypeVars:
    """Replaces each type variable by a fresh one, the same fresh one every time (Relay's TypeVarReplacer)."""

    def __init__(self) -> None:
        self.fresh: dict[TypeVar, TypeVar] = {}

    def __call__(self, ty: Type) -> Type:
        if type(ty) is TypeVar:
            new = self.fresh.get(ty)
            if new is None:
                new = self.fresh[ty] = TypeVar("A")
            return new
        return map_children(ty, self)


class _Expander(MixedModeMutator):
    """Replaces each global variable (constructor) used as a value by a function literal calling it."""

    def __init__(self, mod: IRModule, where: str, globals_too: bool,
                 fresh: _FreshTypeVars | None) -> None:
        super().__init__()
        self.mod = mod
        self.where = where
        self.globals_too = globals_too
        self.fresh = fresh

    def visit_call(self, call: Call) -> Expr:
        if type(call.op) is not Constructor:
            return super().visit_call(call)
        # An applied constructor stays; its arguments were rewritten already.
        args = [self.visit(arg) for arg in call.args]
        if all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(call.op, args, call.attrs, call.type_args, call.span)

    def visit_global_var(self, gv: GlobalVar) -> Expr:
        if not self.globals_too:
            return gv
        if gv not in self.mod:
            raise EtaExpandError(
                f"EtaExpand: @{self.where} refers to @{gv.name_hint}, which the module does not define"
            )
        func = self.mod[gv]
        if not isinstance(func, Function):
            return gv
        params = [Var("eta_expand_param", p.type_annotation) for p in func.params]
        return with_fields(func, params=params, body=Call(gv, params))

    def visit_constructor(self, con: Constructor) -> Expr:
        fresh = self.fresh
        if fresh is None:
            return con
        try:
            data = self.mod.type_data(con.belong_to)
        except ModuleError:
            raise EtaExpandError(
                f"EtaExpand: @{self.where} uses constructor {con.name_hint} of type "
                f"{con.belong_to.name_hint}, which the module does not define"
            ) from None
        params = [Var("eta_expand_param", fresh(t)) for t in con.inputs]
        type_params = [fresh(tv) for tv in data.type_vars]
        return Function(params, Call(con, params), TypeCall(con.belong_to, type_params), type_params)


def eta_expand(mod: IRModule, expand_constructor: bool = False, expand_global_var: bool = False) -> IRModule:
    """A copy of ``mod`` with global variables (and constructors) used as values eta-expanded."""
    if not (expand_constructor or expand_global_var):
        raise EtaExpandError(
            "EtaExpand must expand at least one language feature: give it "
            "expand_global_var=True or expand_constructor=True"
        )
    fresh = _FreshTypeVars() if expand_constructor else None
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function):
            out[gv] = _Expander(mod, gv.name_hint, expand_global_var, fresh).visit(func)
    return out


def _eta_expand_factory(
    *, expand_constructor: bool, expand_global_var: bool,
) -> Callable[[IRModule, object], IRModule]:
    """EtaExpand's transformation: the manifest's factory.

    The pass is :data:`EtaExpand`.
    """

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return eta_expand(mod, bool(expand_constructor), bool(expand_global_var))

    return transform


#: The EtaExpand pass, the one ``relay.transform.EtaExpand`` builds; everything
#: about it is declared in relaypass-plugin.toml.
EtaExpand = pass_constructor("EtaExpand")
