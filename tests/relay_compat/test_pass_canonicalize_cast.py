"""CanonicalizeCast against Relay's behaviour (TVM v0.18's test_pass_canonicalize_cast.py, in this
project's words), and CanonicalizeOps's bias_add rewrite."""

import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform


def typed(func):
    return transform.InferType()(tvm.IRModule.from_expr(func))["main"]


def run(func, *passes):
    with tvm.transform.PassContext(opt_level=3):
        return tvm.transform.Sequential([transform.InferType(), *passes])(
            tvm.IRModule.from_expr(func))["main"]


def test_each_elementwise_consumer_after_the_first_gets_its_own_widening_cast():
    data = relay.var("data", shape=(1, 16, 7, 7), dtype="int8")
    weight = relay.var("weight")
    b1 = relay.var("b1", shape=(16, 1, 1), dtype="int32")
    b2 = relay.var("b2", shape=(16, 1, 1), dtype="int32")
    conv = relay.nn.conv2d(data, weight, channels=16, kernel_size=(3, 3), padding=(1, 1),
                           out_dtype="int8")
    wide = relay.cast(conv, dtype="int32")
    before = relay.Function([data, weight, b1, b2], relay.add(relay.add(wide, b1), relay.add(wide, b2)))
    got = run(before, transform.CanonicalizeCast())

    weight_typed = relay.var("weight", got.params[1].checked_type)
    conv = relay.nn.conv2d(data, weight_typed, channels=16, kernel_size=(3, 3), padding=(1, 1),
                           out_dtype="int8")
    first, second = relay.cast(conv, dtype="int32"), relay.cast(conv, dtype="int32")
    expected = relay.Function([data, weight_typed, b1, b2],
                              relay.add(relay.add(first, b1), relay.add(second, b2)))
    tvm.ir.assert_structural_equal(got, typed(expected))


def test_narrowing_casts_and_other_consumers_are_left_shared():
    x = relay.var("x", shape=(4,), dtype="int32")
    narrow = relay.cast(x, "int8")
    func = relay.Function([x], relay.Tuple([relay.add(narrow, narrow), relay.nn.relu(narrow)]))
    tvm.ir.assert_structural_equal(run(func, transform.CanonicalizeCast()), typed(func))


def test_canonicalize_ops_spells_bias_add_out_as_add():
    x = relay.var("x", shape=(2, 3, 4, 5))
    bias = relay.var("b", shape=(3,))
    for axis, expanded in ((1, relay.expand_dims(bias, 1, 2)), (-1, None), (3, None)):
        if axis != 1:
            bias = relay.var("b", shape=(5,))
            expanded = bias
        before = relay.Function([x, bias], relay.nn.bias_add(x, bias, axis=axis))
        got = run(before, transform.CanonicalizeOps())
        tvm.ir.assert_structural_equal(got, typed(relay.Function([x, bias], relay.add(x, expanded))))
        args = [np.random.rand(2, 3, 4, 5).astype("float32"),
                np.random.rand(*[int(d) for d in bias.type_annotation.shape]).astype("float32")]
        outs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args).numpy()
                for f in (typed(before), got)]
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
