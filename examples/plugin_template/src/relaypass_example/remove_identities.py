"""RemoveIdentities: drop the arithmetic that gives back its operand.

::

    add(x, 0), add(0, x), subtract(x, 0)          ->  x
    multiply(x, 1), multiply(1, x), divide(x, 1)  ->  x
    negative(negative(x))                         ->  x    (option ``double_negative``)

``0`` and ``1`` are constants of any shape whose elements are all 0 (or all
1).  A call is replaced only when its type is the type of ``x``: a constant
that broadcasts ``x`` to a larger shape is kept.  The types come from
InferType, which the manifest lists in ``required``, so it has run when the
pass gets the function.

In floating point ``-0.0 + 0.0`` is ``+0.0``, so ``add(x, 0.0)`` is not quite
``x``.  With the config key ``relaypass_example.RemoveIdentities.signed_zeros``
set, the pass keeps the float additions of ``+0.0`` and subtractions of
``-0.0`` (and still removes ``add(x, -0.0)`` and ``subtract(x, 0.0)``, which
are exact).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import PassContext, pass_constructor

SIGNED_ZEROS = "relaypass_example.RemoveIdentities.signed_zeros"

# operator -> (the identity element, the argument positions it may take)
IDENTITIES = {
    "add": (0, (0, 1)),
    "subtract": (0, (1,)),
    "multiply": (1, (0, 1)),
    "divide": (1, (1,)),
}


def _remove_identities_factory(
    *, double_negative: bool,
) -> Callable[[Function, IRModule, PassContext], Function]:
    """RemoveIdentities's transformation: the manifest's factory.

    It returns the transformation alone; the registry makes the pass from it,
    with the name, opt_level, required passes and preserves of the manifest
    entry, and calls it with every option the manifest declares (a default
    stands for each one the user did not give), so none is written here.
    ``double_negative=False`` keeps ``negative(negative(x))``.
    """

    def remove_identities(func: Function, mod: IRModule, ctx: PassContext) -> Function:
        # ctx.config.get returns the manifest's default when the key is not set.
        signed_zeros = ctx.config.get(SIGNED_ZEROS)
        return IdentityRemover(double_negative, signed_zeros).visit(func)

    return remove_identities


#: The RemoveIdentities pass: ``RemoveIdentities(double_negative=False)`` is
#: ``get_pass("RemoveIdentities", double_negative=False)``, as is
#: ``relay.transform.RemoveIdentities(...)``; everything about it is declared in
#: relaypass-plugin.toml.
RemoveIdentities = pass_constructor("RemoveIdentities")


class IdentityRemover(MixedModeMutator):
    """The rewrite itself, bottom-up over the dataflow of one function."""

    def __init__(self, double_negative: bool, signed_zeros: bool) -> None:
        super().__init__()
        self.double_negative = double_negative
        self.signed_zeros = signed_zeros

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        op = getattr(post, "op", None)
        if not isinstance(op, Op):
            return post
        if op.name == "negative":
            inner = post.args[0]
            if self.double_negative and _is_call_of(inner, "negative"):
                return inner.args[0]
            return post
        if op.name not in IDENTITIES or len(post.args) != 2:
            return post
        identity, positions = IDENTITIES[op.name]
        for i in positions:
            const, other = post.args[i], 1 - i
            if (isinstance(const, Constant) and self._is_identity(op.name, const.array, identity)
                    and _same_type(pre, pre.args[other])):
                return post.args[other]
        return post

    def _is_identity(self, op_name: str, data: np.ndarray, identity: int) -> bool:
        if data.dtype.kind not in "iuf" or not np.all(data == identity):
            return False
        if self.signed_zeros and data.dtype.kind == "f" and identity == 0:
            # x + (-0.0) and x - (+0.0) are exact; x + (+0.0) and x - (-0.0) are not for x = -0.0.
            negative_zeros = np.signbit(data)
            return bool(np.all(negative_zeros) if op_name == "add" else not np.any(negative_zeros))
        return True


def _is_call_of(expr: Expr, op_name: str) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == op_name


def _same_type(call: Expr, operand: Expr) -> bool:
    if not (call.has_checked_type and operand.has_checked_type):
        return False
    return call.checked_type == operand.checked_type
