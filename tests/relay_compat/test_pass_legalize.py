"""Legalize against Relay's behaviour (TVM v0.18's test_pass_legalize.py, in this project's words).

The target-specific case (``test_conv2d_NHWC_legalize``, which needs Relay's
per-target legalizations under ``tvm.target.Target``) is out of scope."""

import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform
from relaypass.relay.testing.temp_op_attr import TempOpAttr
from relaypass.transform import PassResultError


def run(func, opt_pass):
    mod = tvm.IRModule.from_expr(func)
    with tvm.transform.PassContext(opt_level=3):
        return tvm.transform.Sequential([opt_pass])(mod)["main"]


def conv_relu(weight_of=lambda w: w, before_relu=lambda y: y):
    x = relay.var("x", shape=(1, 8, 14, 14))
    w = relay.var("w", shape=(8, 8, 3, 3))
    y = relay.nn.conv2d(x, weight_of(w), channels=8, kernel_size=(3, 3), padding=(1, 1))
    return relay.Function([x, w], relay.nn.relu(before_relu(y)))


def doubled_weight(w):
    return relay.multiply(w, relay.const(2.0, "float32"))


def legalize_conv(attrs, inputs, types):
    data, weight = inputs
    return relay.nn.conv2d(data, doubled_weight(weight), **attrs)


def test_a_registered_legalization_replaces_the_call():
    with TempOpAttr("nn.conv2d", "FTVMLegalize", legalize_conv):
        got = run(conv_relu(), transform.Legalize())
    tvm.ir.assert_structural_equal(got, run(conv_relu(doubled_weight), transform.InferType()))


def test_returning_none_keeps_the_call_and_the_function_sees_the_types():
    seen = []

    def keep(attrs, inputs, types):
        seen.append([str(t) for t in types])
        return None

    x = relay.var("x", shape=(1, 8, 14, 14))
    func = relay.Function([x], relay.nn.global_max_pool2d(x))
    with TempOpAttr("nn.global_max_pool2d", "FTVMLegalize", keep):
        got = run(func, transform.Legalize())
    tvm.ir.assert_structural_equal(got, run(func, transform.InferType()))
    assert seen == [["Tensor[(1, 8, 14, 14), float32]", "Tensor[(1, 8, 1, 1), float32]"]]


def test_several_operators_are_legalized_once_each():
    def legalize_relu(attrs, inputs, types):
        return relay.nn.relu(relay.add(relay.const(0, "float32"), inputs[0]))

    with TempOpAttr("nn.conv2d", "FTVMLegalize", legalize_conv), \
            TempOpAttr("nn.relu", "FTVMLegalize", legalize_relu):
        got = run(conv_relu(), transform.Legalize())
    expected = conv_relu(doubled_weight, lambda y: relay.add(relay.const(0, "float32"), y))
    tvm.ir.assert_structural_equal(got, run(expected, transform.InferType()))


def test_an_operator_with_several_inputs():
    def legalize_concatenate(attrs, inputs, types):
        # inputs[0] is the tuple of the concatenated values; the types list the tuple's type first
        assert len(types) == 2
        return relay.concatenate(inputs[0], axis=attrs.axis)

    x, y, z = (relay.var(n, shape=(1, 8, 4, 4)) for n in "xyz")
    func = relay.Function([x, y, z], relay.concatenate([x, y, z], axis=1))
    with TempOpAttr("concatenate", "FTVMLegalize", legalize_concatenate):
        got = run(func, transform.Legalize())
    tvm.ir.assert_structural_equal(got, run(func, transform.InferType()))


def test_the_attribute_name_is_an_option_and_a_bad_result_is_named():
    with TempOpAttr("nn.relu", "MyLegalize", lambda attrs, inputs, types: relay.nn.relu(
            relay.add(inputs[0], relay.const(1.0)))):
        got = run(conv_relu(), transform.Legalize("MyLegalize"))
        assert got.body.args[0].op.name == "add"
        assert run(conv_relu(), transform.Legalize()).body.args[0].op.name == "nn.conv2d"
    with TempOpAttr("nn.conv2d", "FTVMLegalize", lambda attrs, inputs, types: inputs[0]):
        with pytest.raises(PassResultError, match="FTVMLegalize function of 'nn.conv2d' returned Var"):
            run(conv_relu(), transform.Legalize())
