"""ReluToClip: replace relu(x) by clip(x, 0, 6).

A function pass written for TVM v0.18: an ExprMutator applied by a class
decorated with ``@relay.transform.function_pass``.
"""
import tvm
from tvm import relay
from tvm.relay.expr_functor import ExprMutator


class ReluToClipRewriter(ExprMutator):
    """Rewrites every call of nn.relu; leaves the rest of the function as it is."""

    def visit_call(self, call):
        new_call = super().visit_call(call)
        if isinstance(new_call.op, tvm.ir.Op) and new_call.op.name == "nn.relu":
            return relay.clip(new_call.args[0], a_min=0.0, a_max=6.0)
        return new_call


@relay.transform.function_pass(opt_level=1, name="ReluToClip")
class ReluToClip:
    def transform_function(self, func, mod, ctx):
        return ReluToClipRewriter().visit(func)


def example():
    x = relay.var("x", shape=(1, 4), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.nn.relu(x))
    with tvm.transform.PassContext(opt_level=3):
        mod = ReluToClip()(mod)
    print(x.name_hint, relay.var("y").name_hint)
    return mod
