"""FastMath against Relay's behaviour (TVM v0.18's test_pass_fast_math.py, in this project's words).

Relay's cases also check ``relay.optimize`` (code generation, out of scope);
here the pass runs in a Sequential at opt_level 3 with ``required_pass``,
which is what that part checked: the pass runs when required below its level.
Each case also runs both programs on the interpreter: the fast operators
compute TVM's approximations, close to the exact functions.
"""

import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay.transform import FastMath


def outputs_close(mod, fast_mod, shape):
    data = np.random.default_rng(0).uniform(-3, 3, size=shape).astype("float32")
    exact, fast = (relay.create_executor("debug", mod=m).evaluate()(data).numpy()
                   for m in (relay.transform.InferType()(mod), fast_mod))
    np.testing.assert_allclose(fast, exact, rtol=1e-4, atol=1e-5)


def check_fast_version(op, fast):
    """``op`` becomes ``fast`` when FastMath runs, alone or required in a pipeline at opt_level 3."""
    x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], op(x)))
    fast_mod = FastMath()(mod)
    assert fast in fast_mod.astext()
    with tvm.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        out = tvm.transform.Sequential([relay.transform.InferType(), FastMath()])(mod)
    assert fast in out.astext()
    outputs_close(mod, fast_mod, (1, 16, 16, 16))


def test_exp():
    check_fast_version(relay.exp, "fast_exp")


def test_tanh():
    check_fast_version(relay.tanh, "fast_tanh")


def test_erf():
    check_fast_version(relay.erf, "fast_erf")


def test_softmax():
    x = relay.var("x", shape=(1, 16), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.softmax(x, axis=1)))
    with tvm.transform.PassContext(opt_level=3):
        assert "fast_softmax" not in tvm.transform.Sequential([FastMath()])(mod).astext()
    with tvm.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        out = tvm.transform.Sequential([FastMath()])(mod)
    assert "nn.fast_softmax" in out.astext() and out["main"].body.attrs.axis == 1
    assert FastMath().info.opt_level == 4
    outputs_close(mod, relay.transform.InferType()(out), (1, 16))
