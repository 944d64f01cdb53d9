"""DefuseOps: undo FuseOps by inlining each call of a function literal.

FuseOps wraps groups of operators into ``fn (...) { ... }`` literals called
in place.  DefuseOps (Relay's ``defuse_ops.cc``) replaces every call whose
callee is a function literal by that function's body, with the call's
arguments substituted for the parameters, so ``DefuseOps(FuseOps(f))`` is
structurally equal to ``f``.  Calls of globals, operators and variables are
left alone.

Relay substitutes parameters by name (and so rejects a function with two
parameters of the same name); here they are substituted by identity, which
gives the same result wherever Relay's succeeds and never confuses two
parameters.  Dataflow is rewritten post-order without recursion, so any
chain length works.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.substitution import bind
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.transform import pass_constructor

__all__ = ["DefuseOps", "defuse_ops"]


class _Defuser(MixedModeMutator):
    """Replaces each call of a function literal by the function's body over the arguments."""

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        func = post.op if type(post) is Call else None
        if type(func) is not Function:
            return post
        # The body was rewritten already (the callee is a child of the call).
        return bind(func.body, dict(zip(func.params, post.args)))


def defuse_ops(expr: Expr) -> Expr:
    """``expr`` with every call of a function literal replaced by the function's inlined body."""
    return _Defuser().visit(expr)


def _defuse_ops_factory() -> Callable[[Function, IRModule, object], Function]:
    """DefuseOps's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return defuse_ops(func)

    return transform


#: The DefuseOps pass, the one ``relay.transform.DefuseOps`` builds;
#: everything about it is declared in relaypass-plugin.toml.
DefuseOps = pass_constructor("DefuseOps")
