"""CanonicalizeOps: spell ``nn.bias_add`` out as a broadcast ``add`` (Relay's canonicalize_ops.cc).

Relay runs this late in its opt_level-3 pipeline so that later passes and
fusion see one operator, ``add``, instead of two ways to add a bias: the
bias is given unit dimensions after its axis (``expand_dims``) so it
broadcasts against the data.  The pass manager types the new calls.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.op import add, expand_dims
from relaypass.transform import pass_constructor

__all__ = ["CanonicalizeOps", "canonicalize_ops"]

_BIAS_ADD = Op.get("nn.bias_add")


class _BiasAddSimplifier(MixedModeMutator):
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if pre.op is not _BIAS_ADD:
            return post
        ndim = len(pre.args[0].checked_type.shape)
        axis = post.attrs.axis
        if axis < 0:
            axis += ndim
        bias = post.args[1]
        pad = ndim - axis - 1
        if pad > 0:
            bias = expand_dims(bias, 1, pad)
        return add(post.args[0], bias)


def canonicalize_ops(func: Function) -> Function:
    """``func`` with every ``nn.bias_add`` made an ``add`` of the bias expanded to the data's rank."""
    return _BiasAddSimplifier().visit(func)


def _canonicalize_ops_factory() -> Callable[[Function, IRModule, object], Function]:
    """CanonicalizeOps's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return canonicalize_ops(func)

    return transform


#: The pass ``relay.transform.CanonicalizeOps()`` builds; its metadata is in relaypass-plugin.toml.
CanonicalizeOps = pass_constructor("CanonicalizeOps")
