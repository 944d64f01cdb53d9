"""ToMixedPrecision beyond Relay's cases: missing operators, options, depth, the input module."""

import sys
import warnings

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.ir.op import register_op
from relaypass.op.relations import identity_rel
from relaypass.transform.errors import OptionError
from relaypass_std.to_mixed_precision import MissingMixedPrecisionOpError, MixedPrecisionWarning


@pytest.fixture(scope="module")
def uncategorized_op():
    name = "test.mixed_precision_unknown"
    register_op(name, num_inputs=1, type_relation=identity_rel(name),
                kernel=lambda args, attrs: args[0], override=True)
    return name


def _dense_then(op_name):
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    y = relay.Call(relay.op.get(op_name), [relay.nn.dense(x, w)])
    return relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))


def test_missing_op_mode_decides_between_an_error_a_warning_and_silence(uncategorized_op):
    mod = _dense_then(uncategorized_op)
    with pytest.raises(MissingMixedPrecisionOpError, match=r"'test.mixed_precision_unknown' \(1 times\)"):
        relay.transform.ToMixedPrecision(missing_op_mode=0)(mod)
    with pytest.warns(MixedPrecisionWarning, match="treated as FOLLOW"):
        out = relay.transform.ToMixedPrecision(missing_op_mode=1)(mod)
    assert str(out["main"].body.checked_type.dtype) == "float16"  # it followed the dense
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relay.transform.ToMixedPrecision(missing_op_mode=2)(mod)


@pytest.mark.parametrize("options, message", [
    ({"mixed_precision_type": "int8"}, "must be a floating-point type"),
    ({"missing_op_mode": 3}, "must be 0, 1 or 2"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(OptionError, match=message):
        relay.transform.ToMixedPrecision(**options)


def test_a_deep_chain_converts_without_recursion_and_the_input_stays():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    y = relay.nn.dense(x, w)
    for _ in range(100_000):
        y = relay.nn.relu(y)
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))
    before = mod["main"]
    limit = sys.getrecursionlimit()
    out = relay.transform.ToMixedPrecision()(mod)
    assert sys.getrecursionlimit() == limit and mod["main"] is before
    assert str(out["main"].body.checked_type.dtype) == "float16"
    assert str(before.body.checked_type.dtype) == "float32"


def test_a_tuple_result_is_cast_back_when_asked():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    d = relay.nn.dense(x, w)
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(
        relay.Function([x, w], relay.Tuple([d, relay.nn.relu(d)]))))
    with tvm.transform.PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        out = relay.transform.ToMixedPrecision()(mod)
    assert [str(t.dtype) for t in out["main"].body.checked_type.fields] == ["float32", "float32"]
    args = [np.ones((2, 4), "float32"), np.ones((3, 4), "float32")]
    got = relay.create_executor("debug", mod=out).evaluate()(*args)
    np.testing.assert_allclose(got[0].numpy(), np.full((2, 3), 4.0))
