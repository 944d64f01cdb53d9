"""CombineParallelDense against Relay's behaviour (TVM v0.18's test_pass_combine_parallel_dense.py,
in this project's words): into one batch_matmul (the default) or one wider dense (to_batch=False)."""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform


def typed(func):
    return transform.InferType()(tvm.IRModule.from_expr(func))["main"]


def combined(func, n=2, to_batch=True):
    mod = transform.InferType()(tvm.IRModule.from_expr(func))
    return transform.CombineParallelDense(min_num_branches=n, to_batch=to_batch)(mod)["main"]


def unstacked(y, count):
    parts = relay.split(y, count)
    return [relay.squeeze(parts[i], [0]) for i in range(count)]


def cut(y, ndim, start, size, axis=None):
    axis = ndim - 1 if axis is None else axis
    begin, end = [0] * ndim, [-1] * ndim
    begin[axis], end[axis] = start, size
    return relay.strided_slice(y, begin=begin, end=end, strides=[1] * ndim, slice_mode="size")


def same_values(before, after):
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in typed(before).params]
    run = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args)
           for f in (before, after)]
    for a, b in zip(run[0], run[1]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("i, j, k", [(3, 5, 4), (100, 200, 300)])
def test_denses_of_one_input_are_stacked_into_a_batch_matmul(i, j, k):
    x = relay.var("x", shape=(i, k))
    w1, w2, w4 = (relay.var(n, shape=(j, k)) for n in ("w1", "w2", "w4"))
    w3 = relay.var("w3", shape=(j + 1, k))  # another output size: stays apart
    params = [x, w1, w2, w3, w4]
    before = relay.Function(params, relay.Tuple([relay.nn.dense(x, w) for w in (w1, w2, w3, w4)]))
    y = relay.nn.batch_matmul(relay.stack((x, x, x), axis=0), relay.stack((w1, w2, w4), axis=0))
    y1, y2, y4 = unstacked(y, 3)
    expected = relay.Function(params, relay.Tuple([y1, y2, relay.nn.dense(x, w3), y4]))
    after = combined(before, n=3)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    if i < 10:
        same_values(before, after)


@pytest.mark.parametrize("i, j, k", [(3, 5, 4), (100, 200, 300)])
@pytest.mark.parametrize("bias_2d", [False, True])
def test_bias_adds_are_stacked_along(i, j, k, bias_2d):
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    bias_shape = (i, j) if bias_2d else (j,)
    b1, b2 = relay.var("b1", shape=bias_shape), relay.var("b2", shape=bias_shape)
    params = [x, w1, w2, b1, b2]
    before = relay.Function(params, relay.Tuple([relay.add(relay.nn.dense(x, w1), b1),
                                                 relay.add(relay.nn.dense(x, w2), b2)]))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    biases = (b1, b2) if bias_2d else (relay.expand_dims(b1, 0), relay.expand_dims(b2, 0))
    y = relay.add(y, relay.stack(biases, axis=0))
    expected = relay.Function(params, relay.Tuple(unstacked(y, 2)))
    tvm.ir.assert_structural_equal(combined(before), typed(expected), map_free_vars=True)


@pytest.mark.parametrize("i, j, k, newshape", [(3, 5, 4, (1, 1, 15)), (100, 200, 300, (1, 1, 20000))])
def test_bias_scale_and_reshape_after_the_batch_matmul(i, j, k, newshape):
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(j, k))
    b1, b2 = relay.var("b1", shape=(j,)), relay.var("b2", shape=(j,))
    s1, s2 = relay.var("s1", shape=(1,)), relay.var("s2", shape=(1,))
    params = [x, w1, w2, b1, b2, s1, s2]

    def branch(w, b, s):
        return relay.reshape(relay.multiply(relay.add(relay.nn.dense(x, w), b), s), newshape=newshape)

    before = relay.Function(params, relay.Tuple([branch(w1, b1, s1), branch(w2, b2, s2)]))
    y = relay.nn.batch_matmul(relay.stack((x, x), axis=0), relay.stack((w1, w2), axis=0))
    y = relay.add(y, relay.stack((relay.expand_dims(b1, 0), relay.expand_dims(b2, 0)), axis=0))
    y = relay.multiply(y, relay.stack((relay.expand_dims(s1, 0), relay.expand_dims(s2, 0)), axis=0))
    expected = relay.Function(params, relay.Tuple(
        [relay.reshape(part, newshape=newshape) for part in unstacked(y, 2)]))
    tvm.ir.assert_structural_equal(combined(before), typed(expected), map_free_vars=True)


@pytest.mark.parametrize("i, j, k", [(3, 5, 4), (100, 200, 300)])
def test_flat_denses_of_different_sizes_become_one_wider_dense(i, j, k):
    x = relay.var("x", shape=(i, k))
    ws = [relay.var(f"w{n}", shape=(m * j, k)) for n, m in ((1, 1), (2, 2), (3, 3))]
    before = relay.Function([x, *ws], relay.Tuple([relay.nn.dense(x, w) for w in ws]))
    y = relay.nn.dense(x, relay.concatenate(ws, axis=0), units=6 * j)
    expected = relay.Function([x, *ws], relay.Tuple(
        [cut(y, 2, 0, j), cut(y, 2, j, 2 * j), cut(y, 2, 3 * j, 3 * j)]))
    after = combined(before, n=3, to_batch=False)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    if i < 10:
        same_values(before, after)


@pytest.mark.parametrize("shape1, shape2", [
    ((), ()), ((1,), (1,)), ((5,), (1,)), ((1,), (10,)), ((3, 1), (3, 1)), ((3, 5), (3, 10)),
    ((3, 1), (3, 10)), ((3, 5), (3, 1)), ((9, 3, 5), (9, 3, 10)), ((9, 3, 5), (9, 3, 1)),
    ((9, 3, 1), (9, 3, 10)),
])
def test_flat_bias_adds_are_widened_to_their_branch_and_concatenated(shape1, shape2):
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k))
    b1, b2 = relay.var("b1", shape=shape1), relay.var("b2", shape=shape2)
    params = [x, w1, w2, b1, b2]
    before = relay.Function(params, relay.Tuple([relay.add(relay.nn.dense(x, w1), b1),
                                                 relay.add(relay.nn.dense(x, w2), b2)]))

    def widened(b, shape, units):
        if not shape:
            return relay.repeat(relay.expand_dims(b, -1), units, 0)
        if shape[-1] == 1:
            return relay.repeat(b, units, len(shape) - 1)
        return b

    y = relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=3 * j)
    y = relay.add(y, relay.concatenate((widened(b1, shape1, j), widened(b2, shape2, 2 * j)),
                                       axis=max(0, len(shape1) - 1)))
    ndim = max(len(shape1), 2)
    expected = relay.Function(params, relay.Tuple([cut(y, ndim, 0, j), cut(y, ndim, j, 2 * j)]))
    after = combined(before, to_batch=False)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    same_values(before, after)


def test_flat_bias_scale_and_reshape():
    i, j, k = 3, 5, 4
    x = relay.var("x", shape=(i, k))
    w1, w2 = relay.var("w1", shape=(j, k)), relay.var("w2", shape=(2 * j, k))
    b1, b2 = relay.var("b1", shape=(j,)), relay.var("b2", shape=(2 * j,))
    s1, s2 = relay.var("s1", shape=(1,)), relay.var("s2", shape=(1,))
    params = [x, w1, w2, b1, b2, s1, s2]
    shapes = ((1, 1, 15), (1, 1, 30))
    before = relay.Function(params, relay.Tuple([
        relay.reshape(relay.multiply(relay.add(relay.nn.dense(x, w), b), s), newshape=shape)
        for w, b, s, shape in ((w1, b1, s1, shapes[0]), (w2, b2, s2, shapes[1]))]))
    y = relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=3 * j)
    y = relay.add(y, relay.concatenate((b1, b2), axis=0))
    y = relay.multiply(y, relay.concatenate((relay.repeat(s1, j, 0), relay.repeat(s2, 2 * j, 0)),
                                            axis=0))
    expected = relay.Function(params, relay.Tuple([
        relay.reshape(cut(y, 2, 0, j), newshape=shapes[0]),
        relay.reshape(cut(y, 2, j, 2 * j), newshape=shapes[1])]))
    after = combined(before, to_batch=False)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    same_values(before, after)


def test_the_slice_axis_follows_an_expand_dims():
    x = relay.var("x", shape=(2, 32))
    w1, w2 = relay.var("w1", shape=(16, 32)), relay.var("w2", shape=(8, 32))
    before = relay.Function([x, w1, w2], relay.Tuple([
        relay.expand_dims(relay.nn.dense(x, w), axis=2) for w in (w1, w2)]))
    y = relay.expand_dims(relay.nn.dense(x, relay.concatenate((w1, w2), axis=0), units=24), axis=2)
    expected = relay.Function([x, w1, w2], relay.Tuple([cut(y, 3, 0, 16, axis=1),
                                                        cut(y, 3, 16, 8, axis=1)]))
    after = combined(before, to_batch=False)
    tvm.ir.assert_structural_equal(after, typed(expected), map_free_vars=True)
    same_values(before, after)
