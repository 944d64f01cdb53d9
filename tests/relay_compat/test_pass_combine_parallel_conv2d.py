"""CombineParallelConv2D against Relay's behaviour (TVM v0.18's test_pass_combine_parallel_conv2d.py,
in this project's words), plus the interpreter's check that the values do not change."""

import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform


def combined(func, n=2):
    mod = transform.InferType()(tvm.IRModule.from_expr(func))
    return transform.CombineParallelConv2D(min_num_branches=n)(mod)["main"]


def typed(func):
    return transform.InferType()(tvm.IRModule.from_expr(func))["main"]


def channel_slice(y, start, size):
    return relay.strided_slice(y, begin=[0, start], end=[-1, size], strides=[1, 1], slice_mode="size")


def same_values(before, after):
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in typed(before).params]
    run = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args)
           for f in (before, after)]
    pairs = zip(run[0], run[1]) if isinstance(run[0], (list, tuple)) else [tuple(run)]
    for a, b in pairs:
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_compatible_convolutions_of_one_input_become_one():
    for c1, c2, c3, c4 in [(4, 4, 4, 4), (4, 8, 4, 7)]:
        x = relay.var("x", shape=(1, 4, 16, 16))
        w1, w2, w4 = (relay.var(n, shape=(c, 4, 1, 1)) for n, c in (("w1", c1), ("w2", c2), ("w4", c4)))
        w3 = relay.var("w3", shape=(c3, 4, 3, 3))  # another kernel size: stays apart
        params = [x, w1, w2, w3, w4]
        before = relay.Function(params, relay.Tuple([
            relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2), relay.nn.conv2d(x, w3),
            relay.nn.conv2d(x, w4), relay.nn.max_pool2d(x)]))
        y = relay.nn.conv2d(x, relay.concatenate((w1, w2, w4), axis=0), channels=c1 + c2 + c4)
        expected = relay.Function(params, relay.Tuple([
            channel_slice(y, 0, c1), channel_slice(y, c1, c2), relay.nn.conv2d(x, w3),
            channel_slice(y, c1 + c2, c4), relay.nn.max_pool2d(x)]))
        after = combined(before)
        tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
        same_values(before, after)


def test_following_multiply_and_relu_are_combined_until_branches_differ():
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1, w2 = relay.var("w1", shape=(4, 4, 1, 1)), relay.var("w2", shape=(8, 4, 1, 1))
    s1, s2 = relay.var("s1", shape=(4, 1, 1)), relay.var("s2", shape=(8, 1, 1))
    bias = relay.var("bias", shape=(8, 1, 1))
    params = [x, w1, w2, s1, s2, bias]
    one = relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w1), s1))
    two = relay.add(relay.nn.relu(relay.multiply(relay.nn.conv2d(x, w2), s2)), bias)
    before = relay.Function(params, relay.Tuple([one, two]))
    y = relay.nn.conv2d(x, relay.concatenate((w1, w2), axis=0), channels=12)
    y = relay.nn.relu(relay.multiply(y, relay.concatenate((s1, s2), axis=0)))
    expected = relay.Function(params, relay.Tuple([channel_slice(y, 0, 4),
                                                   relay.add(channel_slice(y, 4, 8), bias)]))
    after = combined(before)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    same_values(before, after)


def test_a_scale_that_does_not_follow_the_channels_is_not_combined():
    x = relay.var("x", shape=(1, 4, 16, 16))
    w1, w2 = relay.var("w1", shape=(4, 4, 1, 1)), relay.var("w2", shape=(8, 4, 1, 1))
    s1, s2 = relay.var("s1", shape=(1,)), relay.var("s2", shape=(1,))
    params = [x, w1, w2, s1, s2]
    before = relay.Function(params, relay.Tuple([relay.multiply(relay.nn.conv2d(x, w1), s1),
                                                 relay.multiply(relay.nn.conv2d(x, w2), s2)]))
    y = relay.nn.conv2d(x, relay.concatenate((w1, w2), axis=0), channels=12)
    expected = relay.Function(params, relay.Tuple([relay.multiply(channel_slice(y, 0, 4), s1),
                                                   relay.multiply(channel_slice(y, 4, 8), s2)]))
    tvm.ir.assert_structural_equal(combined(before), typed(expected), map_free_vars=True)


def test_blocks_in_sequence_are_each_combined():
    x = relay.var("x", shape=(1, 4, 16, 16))
    w = relay.var("w", shape=(2, 4, 1, 1))
    y = x
    z = x
    for _ in range(4):
        y = relay.concatenate((relay.nn.conv2d(y, w), relay.nn.conv2d(y, w)), axis=1)
        both = relay.nn.conv2d(z, relay.concatenate((w, w), axis=0), channels=4)
        z = relay.concatenate((channel_slice(both, 0, 2), channel_slice(both, 2, 2)), axis=1)
    before = relay.Function([x, w], y)
    after = combined(before)
    tvm.ir.assert_structural_equal(after, typed(relay.Function([x, w], z)), map_free_vars=True)
    same_values(before, after)


def test_fewer_branches_than_asked_for_change_nothing_and_the_default_is_three():
    x = relay.var("x", shape=(1, 4, 8, 8))
    ws = [relay.var(f"w{i}", shape=(2, 4, 1, 1)) for i in range(2)]
    func = typed(relay.Function([x, *ws], relay.Tuple([relay.nn.conv2d(x, w) for w in ws])))
    mod = tvm.IRModule.from_expr(func)
    assert transform.CombineParallelConv2D()(mod)["main"] is not None
    tvm.ir.assert_structural_equal(transform.CombineParallelConv2D()(mod)["main"], func)
    assert transform.CombineParallelConv2D().info.opt_level == 4
