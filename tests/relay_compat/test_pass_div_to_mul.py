"""DivToMul against Relay's behaviour (TVM v0.18's test_pass_div_to_mul.py, in this project's words)."""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay


@pytest.mark.parametrize("dtype, rtol", [("float16", 1e-3), ("float32", 1e-7), ("float64", 1e-12)])
def test_division_by_a_constant_becomes_a_multiplication(dtype, rtol):
    x = relay.var("x", relay.TensorType((), dtype))
    divisor = relay.Constant(tvm.nd.array(np.array([1.5]).astype(dtype)))
    out = relay.transform.DivToMul()(tvm.IRModule.from_expr(x / divisor))
    assert out["main"].body.op.name == "multiply"
    np.testing.assert_allclose(out["main"].body.args[1].data.numpy()[0], 1 / 1.5, rtol=rtol)


@pytest.mark.parametrize("divisor", [np.array([0.0], "float32"), np.array([2, 4], "int32"),
                                     np.array([2.0, 0.0], "float32")],
                         ids=["zero", "integer", "a-zero-among-others"])
def test_divisions_it_cannot_invert_stay(divisor):
    x = relay.var("x", shape=(2,), dtype=str(divisor.dtype))
    out = relay.transform.DivToMul()(tvm.IRModule.from_expr(relay.Function(
        [x], x / relay.const(divisor))))
    assert out["main"].body.op.name == "divide"


def test_every_element_of_the_divisor_is_inverted():
    x = relay.var("x", shape=(3,))
    divisor = np.array([2.0, 4.0, 8.0], "float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], x / relay.const(divisor)))
    out = relay.transform.DivToMul()(mod)
    np.testing.assert_allclose(out["main"].body.args[1].data.numpy(), 1 / divisor)
    data = np.array([1.0, 2.0, 3.0], "float32")
    got = relay.create_executor("debug", mod=out).evaluate()(data).numpy()
    np.testing.assert_allclose(got, data / divisor)
