"""Legalize: rewrite operator calls with the functions registered for them (Relay's legalize.cc).

A target (or a user) registers, per operator, how to express its calls in
operators it handles better: ``register_legalize("nn.conv2d", fn)``, where
``fn(attrs, inputs, types)`` returns the replacement expression or None to
keep the call (``types`` are the argument types, then the call's type).
The pass applies them once, children first; a replacement is not legalized
again.  No legalization is registered by default (Relay's defaults are
target-specific code generation choices), so without registrations the pass
changes nothing.  ``legalize_map_attr_name`` names the operator attribute to
read, as in Relay (``FTVMLegalize``, the one ``register_legalize`` sets).
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.op_hooks import LEGALIZE
from relaypass.transform import PassResultError, pass_constructor
from relaypass.transform.errors import OptionError

__all__ = ["Legalize", "legalize"]


class _Legalizer(MixedModeMutator):
    def __init__(self, attr_name: str) -> None:
        super().__init__()
        self.attr_name = attr_name

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if not isinstance(pre.op, Op):
            return post
        fn = pre.op.get_attr(self.attr_name)
        if fn is None:
            return post
        types = [arg.checked_type for arg in pre.args] + [pre.checked_type]
        value = fn(pre.attrs, list(post.args), types)
        if value is None:
            return post
        if not isinstance(value, Call):
            raise PassResultError(
                f"Legalize: the {self.attr_name} function of {pre.op.name!r} returned "
                f"{type(value).__name__}; it must return a call (or None to keep the call)")
        return value


def legalize(func: Function, legalize_map_attr_name: str = LEGALIZE) -> Function:
    """``func`` with every call whose operator has a legalization replaced by what it returns."""
    return _Legalizer(legalize_map_attr_name).visit(func)


def _legalize_factory(*, legalize_map_attr_name: str) -> Callable[[Function, IRModule, object], Function]:
    """Legalize's transformation: the manifest's factory."""
    if not isinstance(legalize_map_attr_name, str) or not legalize_map_attr_name:
        raise OptionError("Legalize: legalize_map_attr_name must be an operator attribute name, "
                          f"got {legalize_map_attr_name!r}")

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return legalize(func, legalize_map_attr_name)

    return transform


#: The pass ``relay.transform.Legalize(legalize_map_attr_name="FTVMLegalize")`` builds.
Legalize = pass_constructor("Legalize")
