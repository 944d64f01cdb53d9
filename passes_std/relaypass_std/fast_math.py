"""FastMath: exp, tanh, erf and softmax replaced by TVM's faster approximations (Relay's fast_math.cc).

Transformers spend much of their elementwise time in exp (softmax), tanh and
erf (GELU); the fast versions trade a few ulps for polynomial arithmetic.
Every ``exp``, ``erf``, ``tanh`` and ``nn.softmax`` call becomes
``fast_exp``, ``fast_erf``, ``fast_tanh`` and ``nn.fast_softmax`` (same
axis).  The kernels compute TVM's approximations
(:mod:`relaypass.op.fast_math`), so results match TVM's after the pass.
Relay runs it at opt_level 4 (on by default only in that mode); so does
this pass.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.op import fast_erf, fast_exp, fast_tanh
from relaypass.op.nn import fast_softmax
from relaypass.transform import pass_constructor

__all__ = ["FastMath", "fast_math"]

_UNARY = {Op.get("exp"): fast_exp, Op.get("erf"): fast_erf, Op.get("tanh"): fast_tanh}
_SOFTMAX = Op.get("nn.softmax")


class _FastMath(MixedModeMutator):
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        fast = _UNARY.get(pre.op)
        if fast is not None:
            return fast(post.args[0])
        if pre.op is _SOFTMAX:
            return fast_softmax(post.args[0], axis=post.attrs.axis)
        return post


def fast_math(func: Function) -> Function:
    """``func`` with exp, erf, tanh and softmax replaced by their fast approximations."""
    return _FastMath().visit(func)


def _fast_math_factory() -> Callable[[Function, IRModule, object], Function]:
    """FastMath's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return fast_math(func)

    return transform


#: The pass ``relay.transform.FastMath()`` builds; its metadata is in relaypass-plugin.toml.
FastMath = pass_constructor("FastMath")
