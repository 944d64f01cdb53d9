"""The fast operators' values (TVM v0.18's test_op_fast_math.py, in this project's words): over the
ranges TVM checks, each approximation is within 1e-5 of the exact function, run on the interpreter."""

import math

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay


def exact_softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("build, reference, low, high", [
    (relay.exp, np.exp, -88, 88),
    (relay.erf, np.vectorize(math.erf), -10, 10),
    (relay.tanh, np.tanh, -10, 10),
    (relay.nn.fast_softmax, exact_softmax, -10, 10),
], ids=["exp", "erf", "tanh", "fast_softmax"])
def test_fast_math_values_match_the_exact_functions(build, reference, low, high):
    data = np.arange(low, high, 0.01).astype("float32").reshape((1, -1))
    x = relay.var("x", shape=data.shape, dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], build(x)))
    with tvm.transform.PassContext(opt_level=4):
        mod = tvm.transform.Sequential([relay.transform.InferType(), relay.transform.FastMath()])(mod)
    assert any(name in mod.astext() for name in ("fast_exp", "fast_erf", "fast_tanh", "fast_softmax"))
    got = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(got, reference(data.astype("float64")), rtol=1e-5, atol=1e-5)


def test_fast_exp_clamps_its_argument_as_tvm_does():
    # Below about -88.38 the argument is clamped: every such input gives the clamp's value,
    # which underflows to 0 as in TVM; exp of 88 is still exact to float32 precision.
    x = relay.var("x", shape=(4,), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.fast_exp(x)))
    data = np.array([-100.0, -1000.0, -88.3762626647949, 88.0], "float32")
    got = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    assert got[0] == got[1] == got[2] == 0
    np.testing.assert_allclose(got[3], np.exp(np.float64(88.0)), rtol=1e-5)
