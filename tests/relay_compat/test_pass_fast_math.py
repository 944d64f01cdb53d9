"""FastMath against Relay's behaviour (TVM v0.18's test_pass_fast_math.py, in this project's words).

Relay's cases also check ``relay.optimize`` (code generation, out of scope);
here the pass runs in a Sequential at opt_level 3 with ``required_pass``,
which is what that part checked: the pass runs when required below its level.
"""

import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.transform import FastMath


@pytest.mark.parametrize("op, fast", [(relay.exp, "fast_exp"), (relay.tanh, "fast_tanh"),
                                      (relay.erf, "fast_erf")])
def test_each_operator_gets_its_fast_version(op, fast):
    x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], op(x)))
    assert fast in FastMath()(mod).astext()
    with tvm.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        out = tvm.transform.Sequential([relay.transform.InferType(), FastMath()])(mod)
    assert fast in out.astext()


def test_softmax_becomes_fast_softmax_only_when_fast_math_runs():
    x = relay.var("x", shape=(1, 16), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.softmax(x, axis=1)))
    with tvm.transform.PassContext(opt_level=3):
        assert "fast_softmax" not in tvm.transform.Sequential([FastMath()])(mod).astext()
    with tvm.transform.PassContext(opt_level=3, required_pass=["FastMath"]):
        out = tvm.transform.Sequential([FastMath()])(mod)
    assert "nn.fast_softmax" in out.astext() and out["main"].body.attrs.axis == 1
    assert FastMath().info.opt_level == 4
