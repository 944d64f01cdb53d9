"""DivToMul: divide by a constant becomes multiply by its reciprocal (Relay's div_to_mul.cc).

Multiplication is cheaper than division on most hardware, and after
FoldConstant (which the pass requires, as in Relay) a divisor that is a
constant is common: normalizations divide by a fixed count or a square root
folded to a number.  Only floating-point divisors are rewritten (for
integers the reciprocal would truncate), and none holding a zero.  Relay
computes float16 reciprocals in float32 and rounds once, which is what
numpy's float16 division does too.

Relay inverts only the first element of the constant (its tests use
one-element divisors); here every element is inverted, so a divisor of
several values gives the same result as the division.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.ndarray import array
from relaypass.ir.op import Op
from relaypass.op import multiply
from relaypass.transform import pass_constructor

__all__ = ["DivToMul", "div_to_mul"]

_DIVIDE = Op.get("divide")
_FLOATS = ("float16", "float32", "float64")


class _DivToMul(MixedModeMutator):
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if type(post) is not Call or post.op is not _DIVIDE:
            return post
        divisor = post.args[1]
        if type(divisor) is not Constant:
            return post
        data = divisor.data.numpy()
        if str(data.dtype) not in _FLOATS or not data.size or (data == 0).any():
            return post
        wide = data.astype("float32") if data.dtype == np.float16 else data
        inverse = (np.ones_like(wide) / wide).astype(data.dtype)
        return multiply(post.args[0], Constant(array(inverse)))


def div_to_mul(func: Function) -> Function:
    """``func`` with each division by a floating-point constant made a multiplication."""
    return _DivToMul().visit(func)


def _div_to_mul_factory() -> Callable[[Function, IRModule, object], Function]:
    """DivToMul's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return div_to_mul(func)

    return transform


#: The pass ``relay.transform.DivToMul()`` builds; its metadata is in relaypass-plugin.toml.
DivToMul = pass_constructor("DivToMul")
