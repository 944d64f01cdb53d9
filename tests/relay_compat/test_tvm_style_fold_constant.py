"""A test file as a TVM v0.18 user writes it; only its import lines were changed.

It folds a constant subexpression with FoldConstant, checks the folded
program on the graph executor against numpy, and is parametrized with
tvm.testing.parameter / tvm.testing.fixture as TVM's own test suites are.
"""
import numpy as np

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay import transform

dtype = tvm.testing.parameter("float32", "float64")
shape = tvm.testing.parameter((4,), (2, 3))


@tvm.testing.fixture
def x_data(shape, dtype):
    return np.random.default_rng(0).uniform(-1, 1, size=shape).astype(dtype)


def before(shape, dtype):
    x = relay.var("x", shape=shape, dtype=dtype)
    c = relay.const(np.full(shape, 2.0), dtype=dtype)
    y = relay.add(c, c)
    return relay.Function([x], relay.multiply(x, y))


def expected(shape, dtype):
    x = relay.var("x", shape=shape, dtype=dtype)
    c = relay.const(np.full(shape, 4.0), dtype=dtype)
    return relay.Function([x], relay.multiply(x, c))


def run_opt_pass(expr, opt_pass):
    mod = tvm.IRModule.from_expr(expr)
    mod = opt_pass(mod)
    return mod["main"]


def test_fold_const(shape, dtype):
    fold = tvm.transform.Sequential([transform.FoldConstant(), transform.InferType()])
    zz = run_opt_pass(before(shape, dtype), fold)
    zexpected = run_opt_pass(expected(shape, dtype), transform.InferType())
    tvm.ir.assert_structural_equal(zz, zexpected)


def test_folded_program_runs_on_the_graph_executor(shape, dtype, x_data):
    mod = tvm.IRModule.from_expr(before(shape, dtype))
    mod = transform.FoldConstant()(mod)
    func = relay.create_executor("graph", mod=mod, device=tvm.cpu(0), target="llvm").evaluate()
    res = func(x_data)
    tvm.testing.assert_allclose(res.numpy(), x_data * 4.0, rtol=1e-5)
    assert res.dtype == dtype


@tvm.testing.parametrize_targets("llvm")
def test_constant_data_is_an_ndarray(target, dev):
    data = np.arange(6, dtype="float32").reshape(2, 3)
    const = relay.const(tvm.nd.array(data, dev))
    assert isinstance(const.data, tvm.nd.NDArray)
    tvm.testing.assert_allclose(const.data.numpy(), data)
    x = relay.var("x", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, const)))
    out = relay.create_executor("vm", mod=mod, device=dev, target=target).evaluate()(data)
    tvm.testing.assert_allclose(out.numpy(), data * 2)


if __name__ == "__main__":
    tvm.testing.main()
