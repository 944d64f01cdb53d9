"""FoldScaleAxis, ForwardFoldScaleAxis and BackwardFoldScaleAxis, against Relay's behaviour.

The cases of TVM v0.18's tests/python/relay/test_pass_fold_scale_axis.py,
in this project's words: the simple layouts (NCHW/OIHW, NHWC/HWIO) case by
case, and Relay's blocked-layout checks (``NCHW2c`` data with ``OIHW2i4o``
kernels) and conv3d cases at the end, for the forward and backward folds
through relu and add.  Beyond Relay's structural checks, every fold is also
run on the interpreter: the folded program computes what the original did.
The blocked variants of the cases that must not fold, of the backward dual
consumer and of the backward negative scale close the file.  Relay's blocked
"relu" negative multiplies the data rather than the convolution (a slip: nothing
would fold anyway); here the scale follows the relu, where it could.
"""

import sys

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform
from relaypass.relay.build_module import bind_params_by_name
from relaypass.relay.testing import create_workload
from relaypass.testing import check_pass

RNG = np.random.default_rng(7)


def positive(shape):
    return RNG.uniform(0.5, 1.0, size=shape).astype("float32")


def run(func, opt_pass):
    mod = opt_pass(tvm.IRModule.from_expr(func))
    return mod["main"]


def typed(func):
    return run(func, transform.InferType())


def same_values(before, after):
    """The two functions compute the same thing on random inputs."""
    args = [RNG.uniform(-1, 1, size=[int(d) for d in p.checked_type.shape]).astype("float32")
            for p in before.params]
    outs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args).numpy()
            for f in (before, after)]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)


def conv(x, w, channels, layouts=("NCHW", "OIHW"), groups=1):
    return relay.nn.conv2d(x, w, channels=channels, kernel_size=(3, 3), padding=(1, 1),
                           data_layout=layouts[0], kernel_layout=layouts[1], groups=groups)


# --- forward ------------------------------------------------------------------------------
def test_forward_scale_goes_through_relu_and_add_into_the_weight():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4, 1, 1))
    scale = relay.const(positive((4, 1, 1)))
    original = typed(relay.Function(
        [x, w, bias], conv(relay.add(relay.nn.relu(relay.multiply(x, scale)), bias), w, 2)))
    folded = typed(run(original, transform.ForwardFoldScaleAxis()))

    w_typed = relay.var("w", original.params[1].checked_type)
    per_channel = relay.squeeze(scale, axis=[1, 2])
    # Relay expands the scale once for the bias and once for the weight: two calls.
    body = conv(relay.add(relay.nn.relu(x),
                          relay.divide(bias, relay.expand_dims(per_channel, axis=1, num_newaxis=2))),
                relay.multiply(w_typed, relay.expand_dims(per_channel, axis=1, num_newaxis=2)), 2)
    tvm.ir.assert_structural_equal(folded, typed(relay.Function([x, w_typed, bias], body)))
    same_values(original, folded)


def test_forward_scale_feeding_two_depthwise_convolutions_folds_into_both():
    x = relay.var("x", shape=(2, 4, 10, 3))
    w = relay.var("w", shape=(3, 3, 1, 3))
    bias = relay.var("bias", shape=(3,))
    scale = relay.const(positive(3))

    def body(data, weight_of, bias_value):
        shared = relay.subtract(relay.nn.relu(data), bias_value)
        one = conv(shared, weight_of(), 3, ("NHWC", "HWIO"), groups=3)
        two = conv(shared, weight_of(), 3, ("NHWC", "HWIO"), groups=3)
        return relay.add(one, two)

    # The scale is the left operand of the multiply here.
    original = typed(relay.Function([x, w, bias], body(relay.multiply(scale, x), lambda: w, bias)))
    folded = run(original, transform.ForwardFoldScaleAxis())
    expected = typed(relay.Function(
        [x, w, bias], body(x, lambda: relay.multiply(w, scale), relay.divide(bias, scale))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def _nhwc_consumers(scale, activation):
    """multiply -> activation -> conv, with the multiply's result also added to the output."""
    x = relay.var("x", shape=(2, 11, 10, 4))
    w = relay.var("w")
    scaled = relay.multiply(x, scale)
    out = relay.add(conv(activation(scaled), w, 4, ("NHWC", "HWIO")), scaled)
    return typed(relay.Function(relay.analysis.free_vars(out), out))


def test_forward_does_not_fold_when_another_consumer_needs_the_scaled_value():
    original = _nhwc_consumers(relay.const(positive(4)), lambda v: relay.nn.leaky_relu(v, alpha=0.1))
    tvm.ir.assert_structural_equal(run(original, transform.ForwardFoldScaleAxis()), original)


@pytest.mark.parametrize("scale", [relay.var("scale", shape=(4,)), relay.const(-positive(4))],
                         ids=["not-a-constant", "negative"])
def test_forward_does_not_move_a_scale_it_cannot_prove_non_negative_through_relu(scale):
    original = _nhwc_consumers(scale, relay.nn.relu)
    tvm.ir.assert_structural_equal(run(original, transform.ForwardFoldScaleAxis()), original)


def test_forward_stops_at_a_let():
    x = relay.var("x", shape=(2, 11, 10, 4))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4,))
    bound = relay.Var("bound")
    value = relay.add(relay.nn.relu(relay.multiply(x, relay.const(positive(4)))), bias)
    body = relay.Let(bound, value, relay.add(conv(bound, w, 4, ("NHWC", "HWIO")), value))
    original = typed(relay.Function([x, w, bias], body))
    tvm.ir.assert_structural_equal(run(original, transform.ForwardFoldScaleAxis()), original)


def test_forward_folds_a_negative_scale_when_nothing_needs_it_non_negative():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    scale = relay.const(-positive((4, 1, 1)))
    original = typed(relay.Function([x, w], conv(relay.multiply(x, scale), w, 4)))
    folded = run(original, transform.ForwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    shaped = relay.expand_dims(relay.squeeze(scale, axis=[1, 2]), axis=1, num_newaxis=2)
    expected = typed(relay.Function([x, w_typed], conv(x, relay.multiply(w_typed, shaped), 4)))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


@pytest.mark.parametrize("data_shape, weight_shape", [((2, 4), (3, 4)), ((3, 5), (4, 5))])
def test_forward_folds_into_dense(data_shape, weight_shape):
    x = relay.var("x", shape=data_shape)
    w = relay.var("w", shape=weight_shape)
    bias = relay.var("bias", shape=(data_shape[1],))
    scale = relay.const(positive(data_shape[1]))
    original = typed(relay.Function(
        [x, w, bias], relay.nn.dense(relay.add(relay.nn.relu(relay.multiply(x, scale)), bias), w)))
    folded = typed(run(original, transform.ForwardFoldScaleAxis()))
    expected = typed(relay.Function([x, w, bias], relay.nn.dense(
        relay.add(relay.nn.relu(x), relay.divide(bias, scale)), relay.multiply(w, scale))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


# --- backward -----------------------------------------------------------------------------
def test_backward_scale_goes_through_relu_and_add_into_the_weight_and_bias():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(8,))
    scale = relay.const(positive((8, 1, 1)))
    bias3d = relay.expand_dims(bias, axis=1, num_newaxis=2)
    original = typed(relay.Function(
        [x, w, bias], relay.multiply(relay.nn.relu(relay.add(conv(x, w, 8), bias3d)), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())

    w_typed = relay.var("w", original.params[1].checked_type)
    per_channel = relay.squeeze(scale, axis=[1, 2])
    new_w = relay.multiply(w_typed, relay.expand_dims(per_channel, axis=1, num_newaxis=3))
    new_bias = relay.multiply(relay.expand_dims(bias, axis=1, num_newaxis=2),
                              relay.expand_dims(per_channel, axis=1, num_newaxis=2))
    expected = typed(relay.Function(
        [x, w_typed, bias], relay.nn.relu(relay.add(conv(x, new_w, 8), new_bias))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def test_backward_scale_after_an_add_of_two_paths_folds_into_both():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(8,))
    scale = relay.const(positive((8, 1, 1)))

    def paths(weight_of):
        return relay.add(relay.nn.relu(conv(x, weight_of(), 8)), relay.nn.relu(conv(x, weight_of(), 8)))

    original = typed(relay.Function([x, w, bias], relay.multiply(paths(lambda: w), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    per_channel = relay.squeeze(scale, axis=[1, 2])  # one scale, expanded for each weight
    expected = typed(relay.Function([x, w_typed, bias], paths(lambda: relay.multiply(
        w_typed, relay.expand_dims(per_channel, axis=1, num_newaxis=3)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def test_fold_scale_axis_removes_a_scalar_multiply_after_constant_weights():
    def workload(scale_by_two):
        data = relay.var("data", relay.TensorType((1, 3, 20, 20), "float32"))
        y = relay.nn.conv2d(data=data, weight=relay.var("weight"), kernel_size=(3, 3),
                            channels=16, padding=(1, 1))
        y = relay.nn.relu(relay.add(y, relay.var("in_bias", shape=(16, 1, 1))))
        if scale_by_two:
            y = relay.multiply(y, relay.const(2.0))
        mod, params = create_workload(y, lambda _, p: None)
        for name in params:  # zero weights: doubling them changes nothing, as in Relay's test
            params[name] = tvm.nd.array(np.zeros(params[name].shape, "float32"))
        mod["main"] = bind_params_by_name(mod["main"], params)
        return mod

    pipeline = tvm.transform.Sequential([relay.transform.InferType(), relay.transform.FoldScaleAxis()])
    with tvm.transform.PassContext(opt_level=3):
        folded = pipeline(workload(True))
    tvm.ir.assert_structural_equal(folded, workload(False))


def test_backward_folds_each_scale_of_a_convolution_used_twice():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4,))
    scale = relay.const(positive((4, 1, 1)))

    def net(layer):
        first = layer(x)
        return relay.add(layer(first), layer(first))

    original = typed(relay.Function(
        [x, w, bias], net(lambda v: relay.nn.relu(relay.multiply(conv(v, w, 4), scale)))))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)

    def folded_weight():  # each multiply folds its own copy of the scale
        shaped = relay.expand_dims(relay.squeeze(scale, axis=[1, 2]), axis=1, num_newaxis=3)
        return relay.multiply(w_typed, shaped)

    expected = typed(relay.Function(
        [x, w_typed, bias], net(lambda v: relay.nn.relu(conv(v, folded_weight(), 4)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def _paths_with_different_channel_axes(x, w, scale):
    """Two convolutions whose outputs put channels on different axes (NCHW, CNHW), added."""
    one = relay.nn.relu(conv(x, w, 4))
    two = relay.nn.relu(relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), padding=(1, 1),
                                        out_layout="CNHW"))
    return relay.multiply(relay.add(one, two), scale)


def _conv_used_twice(x, w, scale):
    y = conv(x, w, 4)
    return relay.add(relay.multiply(y, scale), relay.nn.relu(y))


@pytest.mark.parametrize("build", [_paths_with_different_channel_axes, _conv_used_twice])
def test_backward_does_not_fold(build):
    x = relay.var("x", shape=(4, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4, 1, 1))
    original = typed(relay.Function([x, w, bias], build(x, w, relay.const(positive((4, 1, 1))))))
    tvm.ir.assert_structural_equal(run(original, transform.BackwardFoldScaleAxis()), original)


@pytest.mark.parametrize("scale", [relay.var("scale", shape=(4, 1, 1)),
                                   relay.const(-positive((4, 1, 1)))], ids=["var", "negative"])
def test_backward_does_not_move_a_scale_through_relu_unless_non_negative(scale):
    x = relay.var("x", shape=(4, 4, 10, 10))
    out = relay.multiply(relay.nn.relu(conv(x, relay.var("w"), 4)), scale)
    original = typed(relay.Function(relay.analysis.free_vars(out), out))
    tvm.ir.assert_structural_equal(run(original, transform.BackwardFoldScaleAxis()), original)


def test_backward_folds_a_negative_scale_without_relu():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    scale = relay.const(-positive((4, 1, 1)))
    original = typed(relay.Function([x, w], relay.multiply(conv(x, w, 4), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    shaped = relay.expand_dims(relay.squeeze(scale, axis=[1, 2]), axis=1, num_newaxis=3)
    expected = typed(relay.Function([x, w_typed], conv(x, relay.multiply(w_typed, shaped), 4)))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


@pytest.mark.parametrize("data_shape, weight_shape", [((2, 4), (3, 4)), ((3, 5), (4, 5))])
def test_backward_folds_into_dense(data_shape, weight_shape):
    x = relay.var("x", shape=data_shape)
    w = relay.var("w", shape=weight_shape)
    units = weight_shape[0]
    bias = relay.var("bias", shape=(units,))
    scale = relay.const(positive(units))
    original = typed(relay.Function(
        [x, w, bias], relay.multiply(relay.nn.relu(relay.add(relay.nn.dense(x, w), bias)), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    new_w = relay.multiply(w, relay.expand_dims(scale, axis=1))
    expected = typed(relay.Function([x, w, bias], relay.nn.relu(
        relay.add(relay.nn.dense(x, new_w), relay.multiply(bias, scale)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def test_backward_folds_through_bias_add():
    x = relay.var("x", shape=(2, 4, 10, 10))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4,))
    scale = relay.const(positive((4, 1, 1)))
    original = typed(relay.Function(
        [x, w, bias], relay.multiply(relay.nn.relu(relay.nn.bias_add(conv(x, w, 4), bias)), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    per_channel = relay.squeeze(scale, axis=[1, 2])
    new_w = relay.multiply(w_typed, relay.expand_dims(per_channel, axis=1, num_newaxis=3))
    expected = typed(relay.Function([x, w_typed, bias], relay.nn.relu(
        relay.nn.bias_add(conv(x, new_w, 4), relay.multiply(bias, per_channel)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


# --- beyond Relay's cases -------------------------------------------------------------------
def test_the_input_module_is_unchanged_and_a_deep_chain_folds_without_recursion():
    x = relay.var("x", shape=(1, 4))
    w = relay.var("w", shape=(4, 4))
    y = relay.nn.dense(x, w)
    for _ in range(100_000):
        y = relay.nn.relu(y)
    y = relay.multiply(y, relay.const(positive(4)))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))
    before = mod["main"]
    limit = sys.getrecursionlimit()
    with tvm.transform.PassContext(opt_level=3):
        out = relay.transform.BackwardFoldScaleAxis()(mod)
    assert sys.getrecursionlimit() == limit
    assert mod["main"] is before
    assert out["main"].body.op.name == "nn.relu"  # the multiply is gone from the end


def test_fold_scale_axis_is_relays_sequence():
    seq = relay.transform.FoldScaleAxis()
    assert seq.info.name == "FoldScaleAxis"
    assert [p.info.name for p in seq.passes] == [
        "BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldConstant"]
    assert relay.transform.ForwardFoldScaleAxis().info.opt_level == 3


@pytest.mark.parametrize("name", ["BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldScaleAxis"])
def test_the_passes_pass_the_pass_author_test_kit(name):
    # Random programs of the operators the passes look at: inputs unchanged, results equal.
    check_pass(name, examples=30, seed=11, opt_level=3,
               ops=["nn.conv2d", "nn.dense", "multiply", "add", "subtract", "nn.relu",
                    "nn.bias_add"])


def test_dense_on_3d_data_takes_the_scale_on_the_last_axis():
    # Transformers feed dense 3-D data; the reduced axis is the last one, not axis 1.
    x = relay.var("x", shape=(2, 8, 64))
    w = relay.var("w", shape=(16, 64))
    scaled = relay.multiply(relay.multiply(x, x), relay.const(0.5))
    original = typed(relay.Function([x, w], relay.nn.dense(scaled, w)))
    folded = typed(run(original, transform.ForwardFoldScaleAxis()))
    data, weight = folded.body.args
    assert data.op.name == "multiply" and data.args[0] is data.args[1]  # x * x, unscaled
    assert weight.op.name == "multiply"  # the weight took the 0.5
    same_values(original, folded)
    out = relay.nn.dense(relay.var("y", shape=(2, 8, 16)), relay.var("v", shape=(4, 16)))
    original = typed(relay.Function(relay.analysis.free_vars(out),
                                    relay.multiply(out, relay.const(positive(4)))))
    folded = typed(run(original, transform.BackwardFoldScaleAxis()))
    assert folded.body.op.name == "nn.dense"
    same_values(original, folded)


# --- blocked layouts and conv3d (Relay's blocking checks and its conv3d cases) ---------------
def conv_nd(ndim, x, w, channels, data_layout, kernel_layout):
    fn = relay.nn.conv2d if ndim == 2 else relay.nn.conv3d
    return fn(x, w, channels=channels, kernel_size=(3,) * ndim, padding=(1,) * ndim,
              data_layout=data_layout, kernel_layout=kernel_layout)


def spatial(ndim):
    return "DHW"[3 - ndim:]


@pytest.mark.parametrize("ndim, block", [(2, 2), (3, None), (3, 2)],
                         ids=["conv2d-blocked", "conv3d", "conv3d-blocked"])
def test_forward_scale_folds_into_conv_nd_and_blocked_layouts(ndim, block):
    in_channels, channels = 4, 8
    if block:  # NCHW2c data, OIHW2i4o kernel: one scale per (channel block, lane)
        layouts = (f"NC{spatial(ndim)}{block}c", f"OI{spatial(ndim)}{block}i4o")
        shape = (2, in_channels // block, *[5] * ndim, block)
        scale_shape = (1, in_channels // block, *[1] * ndim, block)
    else:
        layouts = (f"NC{spatial(ndim)}", f"OI{spatial(ndim)}")
        shape = (2, in_channels, *[5] * ndim)
        scale_shape = (in_channels, *[1] * ndim)
    x = relay.var("x", shape=shape)
    w = relay.var("w")
    bias = relay.var("bias", shape=scale_shape)
    scale = relay.const(positive(scale_shape))
    before = conv_nd(ndim, relay.add(relay.nn.relu(relay.multiply(x, scale)), bias), w, channels,
                     *layouts)
    original = typed(relay.Function([x, w, bias], before))
    folded = typed(run(original, transform.ForwardFoldScaleAxis()))

    w_typed = relay.var("w", original.params[1].checked_type)
    if block:
        squeezed = relay.squeeze(scale, axis=[0, *range(2, 2 + ndim)])
        bias_scale = relay.reshape(squeezed, scale_shape)
        weight_scale = relay.reshape(squeezed, (1, in_channels // block, *[1] * ndim, block, 1))
    else:
        squeezed = relay.squeeze(scale, axis=list(range(1, 1 + ndim)))
        bias_scale = relay.expand_dims(squeezed, axis=1, num_newaxis=ndim)
        weight_scale = relay.expand_dims(squeezed, axis=1, num_newaxis=ndim)
    after = conv_nd(ndim, relay.add(relay.nn.relu(x), relay.divide(bias, bias_scale)),
                    relay.multiply(w_typed, weight_scale), channels, *layouts)
    tvm.ir.assert_structural_equal(folded, typed(relay.Function([x, w_typed, bias], after)))
    same_values(original, folded)


@pytest.mark.parametrize("ndim, block", [(2, 2), (3, None), (3, 2)],
                         ids=["conv2d-blocked", "conv3d", "conv3d-blocked"])
def test_backward_scale_folds_into_conv_nd_and_blocked_layouts(ndim, block):
    in_channels, channels = 4, 8
    x_shape = (2, in_channels // block, *[5] * ndim, block) if block else (2, in_channels, *[5] * ndim)
    x = relay.var("x", shape=x_shape)
    w = relay.var("w")
    bias = relay.var("bias", shape=(channels,))
    if block:  # NCHW2c data, OIHW1i2o kernel: the output is NCHW2c too
        layouts = (f"NC{spatial(ndim)}{block}c", f"OI{spatial(ndim)}1i{block}o")
        per_position = (1, channels // block, *[1] * ndim, block)
        scale = relay.const(positive(channels))

        def shaped(v):
            return relay.reshape(v, per_position)
    else:
        layouts = (f"NC{spatial(ndim)}", f"OI{spatial(ndim)}")
        scale = relay.const(positive((channels, *[1] * ndim)))

        def shaped(v):
            return relay.expand_dims(v, axis=1, num_newaxis=ndim)
    out_scale = shaped(scale) if block else scale
    before = relay.multiply(relay.nn.relu(relay.add(conv_nd(ndim, x, w, channels, *layouts),
                                                    shaped(bias))), out_scale)
    original = typed(relay.Function([x, w, bias], before))
    folded = run(original, transform.BackwardFoldScaleAxis())

    w_typed = relay.var("w", original.params[1].checked_type)
    if block:
        squeezed = relay.squeeze(out_scale, axis=[0, *range(2, 2 + ndim)])
        weight_scale = relay.reshape(squeezed, (channels // block, 1, *[1] * ndim, 1, block))
        bias_scale = relay.reshape(squeezed, per_position)
    else:
        squeezed = relay.squeeze(scale, axis=list(range(1, 1 + ndim)))
        weight_scale = relay.expand_dims(squeezed, axis=1, num_newaxis=ndim + 1)
        bias_scale = relay.expand_dims(squeezed, axis=1, num_newaxis=ndim)
    after = relay.nn.relu(relay.add(conv_nd(ndim, x, relay.multiply(w_typed, weight_scale),
                                            channels, *layouts),
                                    relay.multiply(shaped(bias), bias_scale)))
    tvm.ir.assert_structural_equal(folded, typed(relay.Function([x, w_typed, bias], after)))
    same_values(original, folded)


def test_forward_scale_feeding_two_blocked_depthwise_convolutions_folds_into_both():
    # NHWC2c data, HWIO1i2o kernels, groups = channels: Relay's blocking check of the dual path.
    channels, block = 4, 2
    x = relay.var("x", shape=(2, 4, 5, channels // block, block))
    w = relay.var("w", shape=(3, 3, 1, channels // block, 1, block))
    bias = relay.var("bias", shape=(channels // block, block))
    scale = relay.const(positive((channels // block, block)))

    def body(data, weight_of, bias_value):
        shared = relay.subtract(relay.nn.relu(data), bias_value)
        convs = [relay.nn.conv2d(shared, weight_of(), channels=channels, kernel_size=(3, 3),
                                 padding=(1, 1), groups=channels, data_layout="NHWC2c",
                                 kernel_layout="HWIO1i2o") for _ in range(2)]
        return relay.add(*convs)

    original = typed(relay.Function([x, w, bias], body(relay.multiply(scale, x), lambda: w, bias)))
    folded = run(original, transform.ForwardFoldScaleAxis())
    per_lane = (1, 1, 1, channels // block, block)
    per_weight = (1, 1, 1, channels // block, 1, block)
    expected = typed(relay.Function([x, w, bias], body(
        x, lambda: relay.multiply(w, relay.reshape(scale, per_weight)),
        relay.divide(bias, relay.reshape(scale, per_lane)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def test_forward_folds_a_negative_scale_into_a_blocked_kernel():
    # NCHW2c data, OIHW4i2o kernel: the scale is blocked by the kernel's inner "i", as in Relay.
    x = relay.var("x", shape=(2, 2, 5, 5, 2))
    w = relay.var("w")
    scale = relay.const(-positive((1, 2, 1, 1, 2)))
    conv_of = lambda data, weight: relay.nn.conv2d(  # noqa: E731
        data, weight, channels=8, kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW2c",
        kernel_layout="OIHW4i2o")
    original = typed(relay.Function([x, w], conv_of(relay.multiply(x, scale), w)))
    folded = run(original, transform.ForwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    shaped = relay.reshape(relay.squeeze(scale, axis=[0, 2, 3]), (1, 1, 1, 1, 4, 1))
    expected = typed(relay.Function([x, w_typed], conv_of(x, relay.multiply(w_typed, shaped))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def test_backward_scale_after_an_add_of_two_blocked_paths_folds_into_both():
    # NCHW2c data, OIHW1i2o kernels: Relay's blocking check of the backward dual path.
    x = relay.var("x", shape=(2, 2, 5, 5, 2))
    w = relay.var("w")
    bias = relay.var("bias", shape=(4, 1, 1, 2))
    scale = relay.const(positive((4, 1, 1, 2)))

    def paths(weight_of):
        convs = [relay.nn.relu(relay.nn.conv2d(x, weight_of(), channels=8, kernel_size=(3, 3),
                                               padding=(1, 1), data_layout="NCHW2c",
                                               kernel_layout="OIHW1i2o")) for _ in range(2)]
        return relay.add(*convs)

    original = typed(relay.Function([x, w, bias], relay.multiply(paths(lambda: w), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    squeezed = relay.squeeze(scale, axis=[1, 2])
    expected = typed(relay.Function([x, w_typed, bias], paths(lambda: relay.multiply(
        w_typed, relay.reshape(squeezed, (4, 1, 1, 1, 1, 2))))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


# --- blocked layouts where Relay does not fold, and the backward blocked checks --------------
def blocked_conv(x, w, channels, out_layout=""):
    """NCHW2c data with an OIHW1i2o kernel (the output is NCHW2c unless ``out_layout`` says)."""
    return relay.nn.conv2d(x, w, channels=channels, kernel_size=(3, 3), padding=(1, 1),
                           data_layout="NCHW2c", kernel_layout="OIHW1i2o", out_layout=out_layout)


def _blocked_nhwc_consumers(scale, activation):
    """NHWC2c data, HWIO1i2o kernel: multiply -> activation -> conv, plus the scaled value."""
    x = relay.var("x", shape=(2, 11, 10, 2, 2))
    w = relay.var("w")
    scaled = relay.multiply(x, scale)
    out = relay.add(relay.nn.conv2d(activation(scaled), w, channels=4, kernel_size=(3, 3),
                                    padding=(1, 1), data_layout="NHWC2c",
                                    kernel_layout="HWIO1i2o"), scaled)
    return typed(relay.Function(relay.analysis.free_vars(out), out))


def test_forward_blocked_does_not_fold_when_another_consumer_needs_the_scaled_value():
    original = _blocked_nhwc_consumers(relay.const(positive((2, 2))),
                                       lambda v: relay.nn.leaky_relu(v, alpha=0.1))
    tvm.ir.assert_structural_equal(run(original, transform.ForwardFoldScaleAxis()), original)


@pytest.mark.parametrize("scale", [relay.var("scale", shape=(1, 1, 1, 2, 2)),
                                   relay.const(-positive((1, 1, 1, 2, 2)))],
                         ids=["not-a-constant", "negative"])
def test_forward_blocked_does_not_move_a_scale_it_cannot_prove_non_negative_through_relu(scale):
    original = _blocked_nhwc_consumers(scale, relay.nn.relu)
    tvm.ir.assert_structural_equal(run(original, transform.ForwardFoldScaleAxis()), original)


def test_backward_blocked_folds_each_scale_of_a_convolution_used_twice():
    # Relay's dual consumer: one scaled convolution feeds two more, each scaled by the same constant.
    x = relay.var("x", shape=(2, 2, 5, 5, 2))
    w = relay.var("w")
    bias = relay.var("bias", shape=(2, 1, 1, 2))
    scale = relay.const(positive((2, 1, 1, 2)))

    def net(layer):
        first = layer(x)
        return relay.add(layer(first), layer(first))

    original = typed(relay.Function(
        [x, w, bias], net(lambda v: relay.nn.relu(relay.multiply(blocked_conv(v, w, 4), scale)))))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)

    def folded_weight():  # the (block, lane) scale lands on the kernel's O and inner o axes
        shaped = relay.reshape(relay.squeeze(scale, axis=[1, 2]), (2, 1, 1, 1, 1, 2))
        return relay.multiply(w_typed, shaped)

    expected = typed(relay.Function(
        [x, w_typed, bias], net(lambda v: relay.nn.relu(blocked_conv(v, folded_weight(), 4)))))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)


def _blocked_paths_with_different_channel_axes(x, w, scale):
    """Two blocked convolutions, one writing CNHW2c: their channel axes differ, so the sum has none."""
    one = relay.nn.relu(blocked_conv(x, w, 4))
    two = relay.nn.relu(blocked_conv(x, w, 4, out_layout="CNHW2c"))
    return relay.multiply(relay.add(one, two), scale)


def _blocked_conv_used_twice(x, w, scale):
    y = blocked_conv(x, w, 4)
    return relay.add(relay.multiply(y, scale), relay.nn.relu(y))


@pytest.mark.parametrize("build, batch", [(_blocked_paths_with_different_channel_axes, 2),
                                          (_blocked_conv_used_twice, 4)],
                         ids=["different-axes", "used-twice"])
def test_backward_blocked_does_not_fold(build, batch):
    # With batch 2 and 2 channel blocks, NCHW2c and CNHW2c outputs have one shape and add.
    x = relay.var("x", shape=(batch, 2, 10, 10, 2))
    w = relay.var("w")
    bias = relay.var("bias", shape=(2, 1, 1, 2))
    original = typed(relay.Function([x, w, bias], build(x, w, relay.const(positive((2, 1, 1, 2))))))
    tvm.ir.assert_structural_equal(run(original, transform.BackwardFoldScaleAxis()), original)


@pytest.mark.parametrize("scale", [relay.var("scale", shape=(1, 2, 1, 1, 2)),
                                   relay.const(-positive((1, 2, 1, 1, 2)))], ids=["var", "negative"])
def test_backward_blocked_does_not_move_a_scale_through_relu_unless_non_negative(scale):
    x = relay.var("x", shape=(4, 2, 10, 10, 2))
    out = relay.multiply(relay.nn.relu(blocked_conv(x, relay.var("w"), 4)), scale)
    original = typed(relay.Function(relay.analysis.free_vars(out), out))
    tvm.ir.assert_structural_equal(run(original, transform.BackwardFoldScaleAxis()), original)


def test_backward_blocked_folds_a_negative_scale_without_relu():
    x = relay.var("x", shape=(2, 2, 5, 5, 2))
    w = relay.var("w")
    scale = relay.const(-positive((1, 4, 1, 1, 2)))
    original = typed(relay.Function([x, w], relay.multiply(blocked_conv(x, w, 8), scale)))
    folded = run(original, transform.BackwardFoldScaleAxis())
    w_typed = relay.var("w", original.params[1].checked_type)
    shaped = relay.reshape(relay.squeeze(scale, axis=[0, 2, 3]), (4, 1, 1, 1, 1, 2))
    expected = typed(relay.Function([x, w_typed], blocked_conv(x, relay.multiply(w_typed, shaped), 8)))
    tvm.ir.assert_structural_equal(folded, expected)
    same_values(original, folded)
