"""StrengthReduce: cheaper arithmetic for a Relay function, written for TVM v0.18.

This is the original TVM source (``import tvm``); tests/relay_compat/
test_ported_passes.py ports it with ``relaypass port`` and runs the port.

Two rewrites, applied bottom-up by an ExprMutator:

* ``multiply(x, 2)`` and ``multiply(2, x)``, where the constant holds a
  single two (of shape ``()``, ``(1,)``, ``(1, 1)``...), become ``add(x, x)``
  -- only when the product has the type of ``x`` (a two of shape ``(1, 1)``
  broadcasts a scalar ``x`` to a larger shape, and is left alone);
* ``reshape(reshape(x, s1), s2)`` becomes ``reshape(x, s2)`` when ``s2`` only
  holds positive sizes and ``-1`` (the special values 0, -2, -3 and -4 refer
  to the input's shape, which the fold changes).
"""
import numpy as np
import tvm
from tvm import relay
from tvm.relay.expr_functor import ExprMutator


def _is_single_two(expr):
    if not isinstance(expr, relay.Constant):
        return False
    value = expr.data.numpy()
    return value.size == 1 and value.item() == 2


class _Reducer(ExprMutator):
    """Rewrites one function; ``counts`` says how often each rewrite fired."""

    def __init__(self, fold_reshapes):
        super().__init__()
        self.fold_reshapes = fold_reshapes
        self.multiply_op = relay.op.get("multiply")
        self.reshape_op = relay.op.get("reshape")
        self.counts = {"multiply": 0, "reshape": 0}

    def visit_call(self, call):
        new_call = super().visit_call(call)
        if new_call.op == self.multiply_op:
            return self._reduce_multiply(call, new_call)
        if self.fold_reshapes and new_call.op == self.reshape_op:
            return self._fold_reshape(new_call)
        return new_call

    def _reduce_multiply(self, call, new_call):
        lhs, rhs = new_call.args
        if _is_single_two(rhs):
            operand, original = lhs, call.args[0]
        elif _is_single_two(lhs):
            operand, original = rhs, call.args[1]
        else:
            return new_call
        # The types come from the original nodes: InferType filled them, the rebuilt
        # call has none yet.
        if not tvm.ir.structural_equal(call.checked_type, original.checked_type):
            return new_call
        self.counts["multiply"] += 1
        return relay.add(operand, operand)

    def _fold_reshape(self, new_call):
        inner = new_call.args[0]
        if not (isinstance(inner, relay.Call) and inner.op == self.reshape_op):
            return new_call
        newshape = [int(dim) for dim in new_call.attrs.newshape]
        if any(dim <= 0 and dim != -1 for dim in newshape):
            return new_call
        self.counts["reshape"] += 1
        attrs = tvm.ir.make_node("relay.attrs.ReshapeAttrs", newshape=newshape)
        return relay.Call(self.reshape_op, [inner.args[0]], attrs)


@relay.transform.function_pass(opt_level=1)
class StrengthReduce:
    """The pass; after it ran, ``counts`` adds up the rewrites of every function."""

    def __init__(self, fold_reshapes=True):
        self.fold_reshapes = fold_reshapes
        self.counts = {"multiply": 0, "reshape": 0}

    def transform_function(self, func, mod, ctx):
        reducer = _Reducer(self.fold_reshapes)
        new_func = reducer.visit(func)
        for key, value in reducer.counts.items():
            self.counts[key] += value
        return new_func


def example_module():
    """A function with each rewrite's case and the cases it must leave alone."""
    x = relay.var("x", shape=(2, 6), dtype="float32")
    b = relay.var("b", shape=(), dtype="float32")
    doubled = relay.multiply(x, relay.const(2.0))
    doubled_left = relay.multiply(relay.const(np.array(2.0, "float32")), doubled)
    tripled = relay.multiply(doubled_left, relay.const(3.0))
    widened = relay.multiply(b, relay.const(np.full((1, 1), 2.0, "float32")))
    folded = relay.reshape(relay.reshape(tripled, newshape=(3, 4)), newshape=(4, -1))
    kept = relay.reshape(relay.reshape(widened, newshape=(1,)), newshape=(0, 1))
    body = relay.Tuple([folded, kept])
    mod = tvm.IRModule.from_expr(relay.Function([x, b], body))
    return relay.transform.InferType()(mod)


def run_example():
    """Optimize ``example_module`` and evaluate both versions on the same inputs."""
    mod = example_module()
    reduce_pass = StrengthReduce()
    with tvm.transform.PassContext(opt_level=3):
        new_mod = reduce_pass(mod)
    x = np.arange(12, dtype="float32").reshape(2, 6)
    b = np.array(1.5, dtype="float32")
    before = relay.create_executor("debug", mod=mod).evaluate()(x, b)
    after = relay.create_executor("debug", mod=new_mod).evaluate()(x, b)
    return {
        "module": new_mod,
        "counts": dict(reduce_pass.counts),
        "before": [value.numpy() for value in before],
        "after": [value.numpy() for value in after],
    }
