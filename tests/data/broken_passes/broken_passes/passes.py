"""The broken passes; each does one wrong thing a real pass might."""

import numpy as np

from relaypass.functor import ExprMutator, post_order_visit
from relaypass.ir import Call, Constant, Function, Let, Op
from relaypass.transform import function_pass, module_pass


class _ShiftConstants(ExprMutator):
    def visit_constant(self, const):
        data = const.array
        if not np.issubdtype(data.dtype, np.floating):
            return const
        return Constant((data + 1).astype(data.dtype))


class _ReluToNegative(ExprMutator):
    def visit_call(self, call):
        new = super().visit_call(call)
        if isinstance(new, Call) and new.op is Op.get("nn.relu"):
            return Call(Op.get("negative"), new.args, new.attrs)
        return new


def ChangeConstant():  # noqa: N802 - pass factories are named like the pass
    @function_pass(opt_level=0, name="ChangeConstant")
    def change_constant(func, mod, ctx):
        return _ShiftConstants().visit(func)

    return change_constant


def DropBinding():  # noqa: N802
    @function_pass(opt_level=0, name="DropBinding")
    def drop_binding(func, mod, ctx):
        body = func.body
        if not isinstance(body, Let):
            return func
        return Function(func.params, body.body, func.ret_type, func.type_params, func.attrs)

    return drop_binding


def ChangeOp():  # noqa: N802
    @function_pass(opt_level=0, name="ChangeOp")
    def change_op(func, mod, ctx):
        return _ReluToNegative().visit(func)

    return change_op


def Crash():  # noqa: N802
    @module_pass(opt_level=0, name="Crash")
    def crash(mod, ctx):
        calls = []
        post_order_visit(mod["main"], lambda n: calls.append(n) if isinstance(n, Call) else None)
        raise RuntimeError(f"Crash gives up on @main with {len(calls)} calls")

    return crash
