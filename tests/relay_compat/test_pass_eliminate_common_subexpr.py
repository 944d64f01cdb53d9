"""EliminateCommonSubexpr on the cases of TVM v0.18's test_pass_eliminate_common_subexpr.py.

Written as a TVM user writes them; only the import lines differ.  TVM's
``fskip`` callback tests ``isinstance(expr, relay.expr.Call)``; the callback
here says ``relay.Call`` (the same class, in TVM as here), and one test
spells it through ``relay.expr`` as TVM's does.
"""
import numpy as np

import relaypass as tvm
import relaypass.testing  # noqa: F401
from relaypass import relay
from relaypass.relay import transform


def run_opt_pass(expr, opt_pass):
    assert isinstance(opt_pass, tvm.transform.Pass)
    mod = tvm.IRModule.from_expr(expr)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def two_relu_branches():
    x = relay.var("x", shape=(1, 16))
    left = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
    right = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
    return relay.Function([x], relay.add(left, right))


def test_simple():
    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
        return run_opt_pass(relay.Function([x], relay.add(y, y)), transform.InferType())

    z = run_opt_pass(two_relu_branches(), transform.EliminateCommonSubexpr())
    tvm.ir.assert_structural_equal(z, expected())


def test_callback():
    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.nn.relu(x)
        left = relay.add(y, relay.const(1.0, "float32"))
        right = relay.add(y, relay.const(1.0, "float32"))
        return run_opt_pass(relay.Function([x], relay.add(left, right)), transform.InferType())

    def fskip(expr):
        return isinstance(expr, relay.Call) and expr.op.name == "add"

    z = run_opt_pass(two_relu_branches(), transform.EliminateCommonSubexpr(fskip))
    tvm.ir.assert_structural_equal(z, expected())


def test_callback_with_relay_expr_module():
    def fskip(expr):
        return isinstance(expr, relay.expr.Call) and expr.op.name == "add"

    z = run_opt_pass(two_relu_branches(), transform.EliminateCommonSubexpr(fskip))
    assert z.body.args[0] is not z.body.args[1]


def test_tuple_get_time():
    def build(merged):
        x = relay.var("x", shape=(1, 16, 1, 1))
        var = relay.var("var", shape=(16,))
        mean = relay.var("mean", shape=(16,))
        beta = relay.var("beta", shape=(16,))
        gamma = relay.var("gamma", shape=(16,))
        bn = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)
        first = bn[0]
        second = first if merged else bn[0]
        return relay.Function([x, var, mean, beta, gamma], first + second)

    z = run_opt_pass(build(merged=False), transform.EliminateCommonSubexpr())
    tvm.ir.assert_structural_equal(z, run_opt_pass(build(merged=True), transform.InferType()))


def test_tuple_arg():
    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
        c0 = relay.const(np.ones((1, 16)), "float32")
        y = relay.concatenate([y, c0], axis=0)
        return run_opt_pass(relay.Function([x], relay.add(y, y)), transform.InferType())

    x = relay.var("x", shape=(1, 16))
    c0 = relay.const(np.ones((1, 16)), "float32")
    branches = [
        relay.concatenate([relay.add(relay.nn.relu(x), relay.const(1.0, "float32")), c0], axis=0)
        for _ in range(2)
    ]
    before = relay.Function([x], relay.add(*branches))
    z = run_opt_pass(before, transform.EliminateCommonSubexpr())
    tvm.ir.assert_structural_equal(z, expected())


if __name__ == "__main__":
    tvm.testing.main()
