"""AlterOpLayout against Relay's behaviour (TVM v0.18's test_pass_alter_op_layout.py, in this
project's words).

Each case registers an ``FTVMAlterOpLayout`` hook for conv2d (or dense) that asks for a blocked
layout (``NCHW16c``, ``OIHW16i``...) and compares the rewritten function with the one Relay
produces; most also run both on the interpreter.  Spatial extents are smaller than TVM's, to
keep the interpreter quick; the structure is TVM's.  Where TVM calls topi's x86 hooks, the hook
here is written out to return what topi returns for that case (``contrib_conv2d_nchwc``,
``contrib_dense_pack``); the cases that need a target's code generation are listed in
docs/coming-from-relay.md.
"""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.errors import RelayCompatError
from relaypass.relay import analysis, transform
from relaypass.relay.testing.temp_op_attr import TempOpAttr


def run_opt_pass(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    mod = tvm.IRModule.from_expr(expr)
    with tvm.transform.PassContext(opt_level=3):
        mod = tvm.transform.Sequential(passes)(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def typed(func):
    return run_opt_pass(func, transform.InferType())


def fn(out):
    return relay.Function(analysis.free_vars(out), out)


def to(x, src, dst):
    return relay.layout_transform(x, src, dst)


def same_values(before, after, low=-1.0):
    """``after`` computes what ``before`` computes, on random inputs."""
    before = typed(before)
    rng = np.random.default_rng(0)
    args = [rng.uniform(low, 1, [int(d) for d in p.checked_type.shape]).astype(p.checked_type.dtype)
            for p in before.params]
    runs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args)
            for f in (before, after)]
    flat = [r if isinstance(r, (list, tuple)) else [r] for r in runs]
    for a, b in zip(*flat):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def check(before, expected, hook, passes=None, op="nn.conv2d", values=True):
    """AlterOpLayout (after ``passes``) with ``hook`` on ``op`` gives ``expected``."""
    passes = [transform.AlterOpLayout()] if passes is None else passes
    with TempOpAttr(op, "FTVMAlterOpLayout", hook):
        after = run_opt_pass(before, passes)
    tvm.ir.assert_structural_equal(after, typed(expected))
    if values:
        same_values(before, after)
    return after


def conv_to(data_layout, kernel_layout=None):
    """A hook that asks conv2d for ``data_layout`` (and ``kernel_layout``), as TVM's tests do."""

    def alter(attrs, inputs, tinfos, out_type):
        fields = dict(attrs, data_layout=data_layout)
        if kernel_layout is not None:
            fields["kernel_layout"] = kernel_layout
        return relay.nn.conv2d(*inputs, **fields)

    return alter


def doubled_weight(attrs, inputs, tinfos, out_type):
    data, weight = inputs
    return relay.nn.conv2d(data, relay.multiply(weight, relay.const(2.0, "float32")), **attrs)


def conv_relu(weight_of=lambda w: w):
    x = relay.var("x", shape=(1, 8, 10, 10))
    w = relay.var("weight", shape=(8, 8, 3, 3))
    y = relay.nn.conv2d(x, weight_of(w), channels=8, kernel_size=(3, 3), padding=(1, 1))
    return x, w, relay.nn.relu(y)


def test_alter_op():
    x, w, y = conv_relu()
    before = relay.Function([x, w], y)
    x, w, y = conv_relu(lambda w: relay.multiply(w, relay.const(2.0, "float32")))
    expected = relay.Function([x, w], y)
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", doubled_weight):
        after = run_opt_pass(before, transform.AlterOpLayout())
    tvm.ir.assert_structural_equal(after, run_opt_pass(expected, transform.InferType()))


def test_alter_return_none():
    called = []

    def keep(attrs, inputs, tinfos, out_type):
        called.append(out_type)
        return None

    x = relay.var("x", shape=(1, 8, 10, 10))
    before = relay.Function([x], relay.nn.global_max_pool2d(x))
    with TempOpAttr("nn.global_max_pool2d", "FTVMAlterOpLayout", keep):
        after = run_opt_pass(before, transform.AlterOpLayout())
    tvm.ir.assert_structural_equal(after, run_opt_pass(before, transform.InferType()))
    assert [tuple(t.shape) for t in called] == [(1, 8, 1, 1)]  # the hook saw the output type


def test_alter_layout():
    """Bias, relu and the pool follow the blocked conv2d; the cast too; batch_flatten does not."""

    def build(blocked):
        x = relay.var("x", shape=(1, 32, 8, 8))
        bias = relay.var("bias", shape=(32,)) if blocked else relay.var("bias")
        weight = relay.var("weight", shape=(32, 32, 3, 3)) if blocked else relay.var("weight")
        if not blocked:
            y = relay.nn.conv2d(x, weight, channels=32, kernel_size=(3, 3), padding=(1, 1))
            y = relay.nn.bias_add(y, bias)
            y = relay.nn.relu(relay.Tuple([y])[0])  # the tuple disappears
            y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32")
            return fn(relay.nn.batch_flatten(y))
        y = relay.nn.conv2d(to(x, "NCHW", "NCHW16c"), to(weight, "OIHW", "OIHW16i"), channels=32,
                            kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW16c",
                            kernel_layout="OIHW16i")
        b = relay.expand_dims(relay.expand_dims(bias, axis=1, num_newaxis=2), axis=0, num_newaxis=1)
        y = relay.nn.relu(relay.add(y, to(b, "NCHW", "NCHW16c")))
        y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NCHW16c"), "int32")
        return fn(relay.nn.batch_flatten(to(y, "NCHW16c", "NCHW")))

    check(build(False), build(True), conv_to("NCHW16c", "OIHW16i"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_nhwc():
    """TVM's test_alter_layout with NHWC for the new layout: a permutation, not a blocking."""
    x = relay.var("x", shape=(1, 8, 10, 10))
    bias, weight = relay.var("bias", shape=(8,)), relay.var("weight", shape=(8, 8, 3, 3))
    y = relay.nn.bias_add(relay.nn.conv2d(x, weight, channels=8, kernel_size=(3, 3), padding=(1, 1)),
                          bias)
    y = relay.nn.relu(relay.Tuple([y])[0])
    before = fn(relay.nn.batch_flatten(relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32")))

    x = relay.var("x", shape=(1, 8, 10, 10))
    bias, weight = relay.var("bias", shape=(8,)), relay.var("weight", shape=(8, 8, 3, 3))
    y = relay.nn.conv2d(to(x, "NCHW", "NHWC"), to(weight, "OIHW", "HWIO"), channels=8,
                        kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC",
                        kernel_layout="HWIO")
    b = relay.expand_dims(relay.expand_dims(bias, axis=1, num_newaxis=2), axis=0, num_newaxis=1)
    y = relay.nn.relu(relay.add(y, to(b, "NCHW", "NHWC")))
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC"), "int32")
    expected = fn(relay.nn.batch_flatten(to(y, "NHWC", "NCHW")))
    check(before, expected, conv_to("NHWC", "HWIO"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_multi():
    """A kernel layout that both moves and blocks axes.

    TVM's case asks for ``OHWI16i64o2i``, which splits I twice; relaypass's layouts split an
    axis once, so the kernel here is ``OHWI16i64o``.
    """
    x = relay.var("x", shape=(1, 64, 8, 8))
    weight = relay.var("weight", shape=(128, 64, 3, 3))
    before = fn(relay.nn.conv2d(x, weight, channels=128, kernel_size=(3, 3), padding=(1, 1)))
    y = relay.nn.conv2d(to(x, "NCHW", "NCHW16c"), to(weight, "OIHW", "OHWI16i64o"), channels=128,
                        kernel_size=(3, 3), padding=(1, 1), kernel_layout="OHWI16i64o",
                        data_layout="NCHW16c")
    expected = fn(to(y, "NCHW16c", "NCHW"))
    check(before, expected, conv_to("NCHW16c", "OHWI16i64o"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_lrn():
    """lrn has no layout rule: the value goes back to NCHW before it, after the pool."""
    x = relay.var("x", shape=(1, 32, 8, 8))
    weight = relay.var("weight", shape=(32, 32, 3, 3))
    y = relay.nn.conv2d(x, weight, channels=32, kernel_size=(3, 3), padding=(1, 1))
    before = fn(relay.nn.lrn(relay.nn.max_pool2d(y, pool_size=(2, 2))))
    y = relay.nn.conv2d(to(x, "NCHW", "NCHW16c"), to(weight, "OIHW", "OIHW16i"), channels=32,
                        kernel_size=(3, 3), padding=(1, 1), kernel_layout="OIHW16i",
                        data_layout="NCHW16c")
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NCHW16c")
    expected = fn(relay.nn.lrn(to(y, "NCHW16c", "NCHW")))
    check(before, expected, conv_to("NCHW16c", "OIHW16i"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def conv(x, weight, channels=32, kernel_size=(3, 3), padding=(1, 1), **kw):
    return relay.nn.conv2d(x, weight, channels=channels, kernel_size=kernel_size, padding=padding,
                           **kw)


def test_alter_layout_dual_path():
    """One use of a result goes on blocked, the other (batch_flatten) gets it back in NCHW."""
    x, w1, w2 = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight1"), relay.var("weight2")
    y = relay.nn.relu(conv(x, w1))
    y1 = relay.nn.relu(conv(y, w2))
    before = fn(relay.Tuple([y1, relay.nn.batch_flatten(y)]))

    x, w1, w2 = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight1"), relay.var("weight2")
    y = relay.nn.relu(conv(to(x, "NCHW", "NCHW16c"), w1, data_layout="NCHW16c"))
    y1 = relay.nn.relu(conv(y, w2, data_layout="NCHW16c"))
    y2 = relay.nn.batch_flatten(to(y, "NCHW16c", "NCHW"))
    expected = fn(relay.Tuple([to(y1, "NCHW16c", "NCHW"), y2]))
    check(before, expected, conv_to("NCHW16c"))


def test_alter_layout_resnet():
    """Two convolutions of one input share one transform of it; the residual add follows."""
    x, w1, w2 = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight1"), relay.var("weight2")
    y = relay.nn.relu(conv(x, w1))
    y2 = relay.nn.relu(conv(x, w2, kernel_size=(1, 1), padding=(0, 0)))
    before = fn(relay.nn.global_max_pool2d(y + y2))

    x, w1, w2 = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight1"), relay.var("weight2")
    xb = to(x, "NCHW", "NCHW16c")
    y = relay.nn.relu(conv(xb, w1, data_layout="NCHW16c"))
    y2 = relay.nn.relu(conv(xb, w2, kernel_size=(1, 1), padding=(0, 0), data_layout="NCHW16c"))
    y = relay.nn.global_max_pool2d(y + y2, layout="NCHW16c")
    expected = fn(to(y, "NCHW16c", "NCHW"))
    after = check(before, expected, conv_to("NCHW16c"))
    transforms = [e for e in _calls(after, "layout_transform") if e.attrs.dst_layout == "NCHW16c"]
    assert len(transforms) == 1


def _calls(func, op_name):
    found = []
    relay.analysis.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                                    and getattr(e.op, "name", None) == op_name else None)
    return found


def test_alter_layout_broadcast_op():
    """A C-vector and a (C, 1, 1) operand broadcast against the blocked result after expand_dims."""
    x = relay.var("x", shape=(1, 32, 8, 8))
    bias, scale = relay.var("bias", shape=(32,)), relay.var("scale", shape=(32, 1, 1))
    weight = relay.var("weight", shape=(32, 32, 3, 3))
    y = relay.nn.bias_add(conv(x, weight), bias)
    before = fn(relay.multiply(scale, y))

    xb = to(x, "NCHW", "NCHW16c")
    b = to(relay.expand_dims(relay.expand_dims(bias, 1, 2), 0, 1), "NCHW", "NCHW16c")
    s = to(relay.expand_dims(scale, 0, 1), "NCHW", "NCHW16c")
    y = relay.add(conv(xb, weight, data_layout="NCHW16c"), b)
    expected = fn(to(relay.multiply(s, y), "NCHW16c", "NCHW"))
    check(before, expected, conv_to("NCHW16c"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_broadcast_scalar_op():
    """Operands of shape (1,) and (1, 1) stay as they are against the blocked result."""
    x = relay.var("x", shape=(1, 10, 10, 32))
    kernel = relay.var("kernel", shape=(3, 3, 32, 32))
    bias = relay.var("bias", shape=(32,))
    m1, m2 = relay.var("multiplier1", shape=(1,)), relay.var("multiplier2", shape=(1, 1))
    y = relay.nn.conv2d(x, kernel, data_layout="NHWC", kernel_layout="HWIO", kernel_size=(3, 3))
    y = relay.nn.relu(relay.add(bias, y))
    before = fn(relay.multiply(relay.multiply(m1, y), m2))

    b = to(relay.expand_dims(bias, axis=0, num_newaxis=3), "NHWC", "NCHW16c")
    y = relay.nn.conv2d(to(x, "NHWC", "NCHW16c"), kernel, data_layout="NCHW16c",
                        kernel_layout="HWIO", kernel_size=(3, 3))
    y = relay.nn.relu(relay.add(b, y))
    y = relay.multiply(relay.multiply(m1, y), m2)
    expected = fn(to(y, "NCHW16c", "NHWC"))
    check(before, expected, conv_to("NCHW16c"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_scalar():
    x, w = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight", shape=(32, 32, 3, 3))
    before = fn(relay.add(conv(x, w), relay.const(1, "float32")))
    y = conv(to(x, "NCHW", "NCHW16c"), w, data_layout="NCHW16c")
    expected = fn(to(relay.add(y, relay.const(1.0, "float32")), "NCHW16c", "NCHW"))
    check(before, expected, conv_to("NCHW16c"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_scalar_regression():
    """ConvertLayout to NCHW, batch norm simplified, then the blocked conv2d: Relay's pipeline."""
    x = relay.var("x", shape=(1, 8, 8, 32))
    weight = relay.var("weight", shape=(3, 3, 32, 16))
    bias = relay.var("bias", shape=(1, 1, 1, 16))
    y = relay.nn.conv2d(x, weight, channels=16, kernel_size=(3, 3), padding=(1, 1),
                        data_layout="NHWC", kernel_layout="HWIO")
    y = relay.add(y, bias)
    mean = relay.mean(y, axis=3, exclude=True)
    var = relay.variance(y, axis=3, exclude=True)
    gamma, beta = relay.var("gamma"), relay.var("beta")
    before = fn(relay.nn.batch_norm(y, gamma, beta, mean, var, axis=3)[0])

    x = relay.var("x", shape=(1, 8, 8, 32))
    weight = relay.var("weight", shape=(3, 3, 32, 16))
    bias = relay.var("bias", shape=(1, 1, 1, 16))
    gamma, beta = relay.var("gamma", shape=(16,)), relay.var("beta", shape=(16,))
    xb = to(to(x, "NHWC", "NCHW"), "NCHW", "NCHW16c")
    y = relay.nn.conv2d(xb, to(weight, "HWIO", "OIHW"), channels=16, kernel_size=(3, 3),
                        padding=(1, 1), data_layout="NCHW16c")
    add = relay.add(y, to(to(bias, "NHWC", "NCHW"), "NCHW", "NCHW16c"))
    mean = relay.mean(add, axis=[1, 4], exclude=True)
    var = relay.variance(add, axis=[1, 4], exclude=True)
    denom = relay.const(1.0) / relay.sqrt(var + relay.const(1e-05))
    denom_blocked = denom * to(gamma, "C", "C16c")
    denom = relay.expand_dims(relay.expand_dims(to(denom_blocked, "C16c", "C"), axis=1,
                                                num_newaxis=2), axis=0)
    out = add * to(denom, "NCHW", "NCHW16c")
    numerator = (-mean) * denom_blocked + to(beta, "C", "C16c")
    numerator = relay.expand_dims(relay.expand_dims(to(numerator, "C16c", "C"), axis=1,
                                                    num_newaxis=2), axis=0)
    out = out + to(numerator, "NCHW", "NCHW16c")
    expected = fn(to(to(out, "NCHW16c", "NCHW"), "NCHW", "NHWC"))

    desired = {"nn.conv2d": ["NCHW", "default"], "nn.batch_norm": ["NHWC", "default"]}
    passes = [transform.InferType(), transform.ConvertLayout(desired),
              transform.SimplifyInference(), transform.CanonicalizeOps(),
              transform.AlterOpLayout()]
    after = check(before, expected, conv_to("NCHW16c"), passes, values=False)
    same_values(before, after, low=0.1)  # variances must not be negative


def test_alter_layout_concatenate():
    """A concatenation of two blocked results follows, its axis found by letter."""

    def build(data_layout, axis, blocked):
        shape = (1, 32, 8, 8) if data_layout == "NCHW" else (1, 8, 8, 32)
        x, w1, w2 = relay.var("x", shape=shape), relay.var("weight1"), relay.var("weight2")
        layout = "NCHW16c" if blocked else data_layout
        y = conv(to(x, data_layout, layout) if blocked else x, w1, data_layout=layout)
        y1 = conv(y, w2, data_layout=layout)
        if not blocked:
            return fn(relay.concatenate([y, y1], axis=axis))
        return fn(to(relay.concatenate([y, y1], axis=1), layout, data_layout))

    for data_layout, axis in (("NCHW", 1), ("NHWC", 3)):
        check(build(data_layout, axis, False), build(data_layout, axis, True), conv_to("NCHW16c"))


@pytest.mark.parametrize("scale", [2, relay.const(2)], ids=["int", "constant"])
def test_alter_layout_nchw_upsamping_op(scale):
    """Upsampling and the pool after it follow (TVM's dyn case passes constants, made static)."""
    x, weight = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight", shape=(32, 32, 3, 3))
    y = relay.nn.upsampling(conv(x, weight), scale_h=scale, scale_w=scale)
    before = fn(relay.nn.avg_pool2d(y, pool_size=(2, 2), strides=(2, 2)))
    y = conv(to(x, "NCHW", "NCHW16c"), weight, data_layout="NCHW16c")
    y = relay.nn.upsampling(y, scale_h=scale, scale_w=scale, layout="NCHW16c")
    y = relay.nn.avg_pool2d(y, pool_size=(2, 2), strides=(2, 2), layout="NCHW16c")
    check(before, fn(to(y, "NCHW16c", "NCHW")), conv_to("NCHW16c"))


def test_alter_layout_strided_slice():
    """TVM's case checks values only: a slice over C of a NCHW4c result counts in blocks."""
    x, weight = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight", shape=(32, 32, 3, 3))
    before = fn(relay.strided_slice(conv(x, weight), begin=[0, 16], end=[1, 33], strides=[1, 1]))
    y = relay.nn.contrib_conv2d_nchwc(to(x, "NCHW", "NCHW4c"), to(weight, "OIHW", "OIHW4i4o"),
                                      channels=32, kernel_size=(3, 3), padding=(1, 1),
                                      data_layout="NCHW4c")
    y = relay.strided_slice(y, begin=[0, 4], end=[1, 21], strides=[1, 1])
    expected = typed(fn(to(y, "NCHW4c", "NCHW")))
    same_values(before, expected)
    # The pass itself does not count 33 in blocks of 4 (Relay's rule wants both bounds to
    # divide): the slice gets its input back in NCHW.
    y = conv(to(x, "NCHW", "NCHW4c"), weight, data_layout="NCHW4c")
    y = relay.strided_slice(to(y, "NCHW4c", "NCHW"), begin=[0, 16], end=[1, 33], strides=[1, 1])
    check(before, fn(y), conv_to("NCHW4c"))


def test_alter_layout_strided_slice_axes_nhwc():
    x, weight = relay.var("x", shape=(1, 8, 8, 32)), relay.var("weight", shape=(3, 3, 32, 32))
    y = conv(x, weight, data_layout="NHWC", kernel_layout="HWIO")
    before = fn(relay.strided_slice(y, begin=[0, 16], end=[1, 32], strides=[1, 1], axes=[0, 3]))
    y = conv(to(x, "NHWC", "NHWC4c"), weight, data_layout="NHWC4c", kernel_layout="HWIO")
    y = relay.strided_slice(y, begin=[0, 4], end=[1, 8], strides=[1, 1], axes=[0, 3])
    check(before, fn(to(y, "NHWC4c", "NHWC")), conv_to("NHWC4c"))


def test_alter_layout_depthwise_conv2d():
    """topi's x86 hook for this depthwise conv2d, written out: NCHW8c data, OIHW1i8o kernel."""

    def x86_depthwise(attrs, inputs, tinfos, out_type):
        # The pass moves the inputs into the layouts the new call names.
        fields = dict(attrs, data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c")
        return relay.nn.contrib_depthwise_conv2d_nchwc(*inputs, **fields)

    x, w = relay.var("x", shape=(1, 32, 8, 8)), relay.var("w", shape=(32, 1, 3, 3))
    before = fn(relay.nn.conv2d(x, w, padding=(1, 1), channels=32, kernel_size=(3, 3), groups=32))
    y = relay.nn.contrib_depthwise_conv2d_nchwc(
        to(x, "NCHW", "NCHW8c"), to(w, "OIHW", "OIHW1i8o"), padding=(1, 1, 1, 1), channels=32,
        kernel_size=(3, 3), groups=32, data_layout="NCHW8c", kernel_layout="OIHW1i8o",
        out_layout="NCHW8c")
    check(before, fn(to(y, "NCHW8c", "NCHW")), x86_depthwise,
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


def test_alter_layout_prelu():
    """PReLU keeps its data in NCHW: the value goes back before it."""
    x, w = relay.var("x", shape=(1, 32, 8, 8)), relay.var("weight", shape=(32, 32, 3, 3))
    alpha = relay.var("alpha", relay.IncompleteType())
    before = fn(relay.nn.prelu(conv(x, w), alpha))
    alpha = relay.var("alpha", relay.IncompleteType())
    y = conv(to(x, "NCHW", "NCHW16c"), w, data_layout="NCHW16c")
    expected = fn(relay.nn.prelu(to(y, "NCHW16c", "NCHW"), alpha))
    check(before, expected, conv_to("NCHW16c"),
          [transform.CanonicalizeOps(), transform.AlterOpLayout()])


@pytest.mark.parametrize("data_layout, pad_width, follows", [
    ("NCHW", ((0, 0), (0, 0), (1, 1), (1, 1)), True),
    ("NHWC", ((0, 0), (1, 1), (1, 1), (0, 0)), True),
    ("NCHW", ((0, 0), (1, 1), (1, 1), (1, 1)), False),  # pads C, which the new layout splits
])
def test_alter_layout_pad(data_layout, pad_width, follows):
    shape = (1, 32, 8, 8) if data_layout == "NCHW" else (1, 8, 8, 32)
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    before = fn(relay.nn.pad(conv(x, w, data_layout=data_layout), pad_width=pad_width))
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    y = conv(to(x, data_layout, "NCHW16c"), w, data_layout="NCHW16c")
    if follows:
        y = relay.nn.pad(y, pad_width=((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
        expected = fn(to(y, "NCHW16c", data_layout))
    else:
        expected = fn(relay.nn.pad(to(y, "NCHW16c", data_layout), pad_width=pad_width))
    check(before, expected, conv_to("NCHW16c"))


@pytest.mark.parametrize("data_layout", ["NCHW", "NHWC"])
def test_alter_layout_pool(data_layout):
    shape = (1, 32, 8, 8) if data_layout == "NCHW" else (1, 8, 8, 32)
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    before = fn(relay.nn.avg_pool2d(conv(x, w, data_layout=data_layout), pool_size=(1, 1),
                                    layout=data_layout))
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    y = conv(to(x, data_layout, "NCHW16c"), w, data_layout="NCHW16c")
    y = relay.nn.avg_pool2d(y, pool_size=(1, 1), layout="NCHW16c")
    check(before, fn(to(y, "NCHW16c", data_layout)), conv_to("NCHW16c"))


@pytest.mark.parametrize("data_layout", ["NCHW", "NHWC"])
def test_alter_layout_sum(data_layout):
    """A sum over C with keepdims reduces both parts of the split C, leaving NCHW1c."""
    shape = (1, 32, 8, 8) if data_layout == "NCHW" else (1, 8, 8, 32)
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    y = conv(x, w, data_layout=data_layout)
    before = fn(relay.sum(y, axis=data_layout.index("C"), keepdims=True))
    x, w = relay.var("x", shape=shape), relay.var("weight1")
    y = conv(to(x, data_layout, "NCHW16c"), w, data_layout="NCHW16c")
    y = relay.sum(y, axis=[1, 4], keepdims=True)
    check(before, fn(to(y, "NCHW1c", data_layout)), conv_to("NCHW16c"))

def test_alter_op_with_global_var():
    def module(weight_of):
        x, w, y = conv_relu(weight_of)
        mod = tvm.IRModule()
        foo = relay.GlobalVar("foo")
        mod[foo] = relay.Function([x, w], y)
        mod = transform.InferType()(mod)
        mod["main"] = relay.Function([x, w], foo(x, w))
        return transform.InferType()(mod)

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", doubled_weight):
        after = transform.AlterOpLayout()(module(lambda w: w))
    expected = module(lambda w: relay.multiply(w, relay.const(2.0, "float32")))
    tvm.ir.assert_structural_equal(after, expected, map_free_vars=True)


def test_not_inplace_modify():
    x, w, y = conv_relu()
    before = relay.Function([x, w], relay.nn.max_pool2d(y, pool_size=[2, 2], strides=[2, 2]))
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", conv_to("NCHW4c", "OIHW4i")):
        after = run_opt_pass(before, [transform.AlterOpLayout()])
    assert before.body.attrs.layout == "NCHW"
    assert after.body.args[0].attrs.layout == "NCHW4c"  # the pool follows; moved back after it


def test_alter_with_subfunc():
    v1 = relay.var("v", shape=[1, 16, 10, 10], dtype="float32")
    sub = relay.Function([v1], relay.image.resize2d(v1, size=[16, 16], roi=[0.0, 0.0, 0.0, 0.0],
                                                    rounding_method=""))
    x1 = relay.var("x", shape=[1, 16, 10, 10], dtype="float32")
    x3 = relay.image.resize2d(sub(x1), size=[8, 8], roi=[0.0, 0.0, 0.0, 0.0], rounding_method="")
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x1], x3)))
    tvm.ir.assert_structural_equal(relay.transform.AlterOpLayout()(mod), mod)


def x86_dense_pack(attrs, inputs, tinfos, out_type):
    """topi's x86 dense hook for these shapes, written out: the weight packed in blocks of 16."""
    return relay.nn.contrib_dense_pack(*inputs, "NC16n", units=attrs.units,
                                       out_dtype=out_type.dtype)


def test_alter_op_dense():
    x, weight = relay.var("x", shape=(32, 1, 128)), relay.var("weight", shape=(48, 64))
    squeeze = relay.squeeze(relay.nn.adaptive_avg_pool1d(x, [64]), axis=[1])
    before = fn(relay.nn.dense(squeeze, weight))
    x, weight = relay.var("x", shape=(32, 1, 128)), relay.var("weight", shape=(48, 64))
    squeeze = relay.squeeze(relay.nn.adaptive_avg_pool1d(x, [64]), axis=[1])
    y = relay.nn.contrib_dense_pack(squeeze, to(weight, "NC", "NC16n"), "NC16n", units=None,
                                    out_dtype="float32")
    check(before, fn(y), x86_dense_pack, op="nn.dense")


def test_alter_op_dense_packed_data():
    """A blocked conv2d, a pool and a squeeze that follow it, and a packed dense after them."""

    def x86_conv(attrs, inputs, tinfos, out_type):
        fields = dict(attrs, data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c")
        return relay.nn.contrib_conv2d_nchwc(*inputs, **fields)

    x = relay.var("x", shape=(1, 32, 8, 8))
    conv_weight = relay.var("conv2d_weight", shape=(32, 32, 3, 3))
    dense_weight = relay.var("dense_weight", shape=(16, 32))
    y = relay.nn.avg_pool2d(conv(x, conv_weight), pool_size=[8, 8], padding=[0, 0, 0, 0])
    before = fn(relay.nn.dense(relay.squeeze(y, axis=[2, 3]), dense_weight))

    y = relay.nn.contrib_conv2d_nchwc(
        to(x, "NCHW", "NCHW8c"), to(conv_weight, "OIHW", "OIHW8i8o"), channels=32,
        kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW8c", kernel_layout="OIHW8i8o",
        out_layout="NCHW8c")
    y = relay.nn.avg_pool2d(y, pool_size=[8, 8], padding=[0, 0, 0, 0], layout="NCHW8c")
    y = relay.nn.contrib_dense_pack(to(relay.squeeze(y, axis=[2, 3]), "NC8c", "NC"),
                                    to(dense_weight, "NC", "NC16n"), "NC16n",
                                    out_dtype="float32")
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", x86_conv):
        check(before, fn(y), x86_dense_pack, op="nn.dense")


def test_conv2d_strided_slice_packed_to_unpacked():
    """A slice of a blocked result cannot follow it into NCHW: the result is blocked again."""
    x, weight = relay.var("x", shape=(1, 1, 1, 1, 4)), relay.var("weight", shape=(9, 1, 3, 3, 4, 4))
    y = relay.nn.conv2d(x, weight, kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW4c",
                        kernel_layout="OIHW4i4o")
    before = relay.Function([x, weight], relay.strided_slice(y, begin=[0, 0], end=[1, -1],
                                                             strides=[1, 8]))
    x, weight = relay.var("x", shape=(1, 1, 1, 1, 4)), relay.var("weight", shape=(9, 1, 3, 3, 4, 4))
    y = relay.nn.conv2d(to(x, "NCHW4c", "NCHW"), to(weight, "OIHW4i4o", "OIHW"),
                        kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW",
                        kernel_layout="OIHW")
    y = relay.strided_slice(to(y, "NCHW", "NCHW4c"), begin=[0, 0], end=[1, -1], strides=[1, 8])
    check(before, relay.Function([x, weight], y), conv_to("NCHW", "OIHW"))


def test_conv2d_strided_slice_arbitrary_stride():
    """A stride of 3 along a C split in blocks of 3: the slice keeps NCHW, and the pass runs."""
    x, weight = relay.var("x", shape=(4, 12, 1, 1)), relay.var("weight", shape=(9, 12, 1, 1))
    y = relay.nn.conv2d(x, weight, channels=9, kernel_size=(1, 1), padding=(0, 0))
    before = fn(relay.strided_slice(y, begin=[3], end=[6], strides=[3], axes=[1]))
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", conv_to("NCHW3c")):
        after = run_opt_pass(before, transform.AlterOpLayout())
    (conv2d,) = _calls(after, "nn.conv2d")
    assert conv2d.attrs.data_layout == "NCHW3c"
    same_values(before, after)


def test_alter_layout_nonscalar_broadcast():
    """A (1, 3, 3) operand of a blocked add is expanded and blocked with blocks of 1."""
    x, weight = relay.var("x", shape=(1, 16, 3, 3)), relay.var("weight", shape=(16, 16, 1, 1))
    z = relay.var("z", shape=(1, 3, 3))
    before = fn(conv(x, weight, channels=16, kernel_size=(1, 1), padding=(0, 0)) + z)
    y = relay.nn.conv2d(to(x, "NCHW", "NCHW4c"), to(weight, "OIHW", "OIHW4i4o"), channels=16,
                        kernel_size=(1, 1), padding=(0, 0), data_layout="NCHW4c",
                        kernel_layout="OIHW4i4o")
    y = y + to(relay.expand_dims(z, 0), "NCHW", "NCHW1c")
    check(before, fn(to(y, "NCHW4c", "NCHW")), conv_to("NCHW4c", "OIHW4i4o"))


def blocked_conv_add(bias_shape, data_layout="NCHW4c", kernel_layout="OIHW4i4o"):
    """TVM's already-blocked convolution with an added bias, in the given layouts."""
    a = relay.var("data", shape=(1, 8, 16, 16, 4))
    b = relay.var("weight", shape=(1, 8, 4, 4, 4, 4))
    c = relay.var("bias", shape=bias_shape)
    moved = data_layout != "NCHW4c"
    conv2d = relay.nn.conv2d(to(a, "NCHW4c", data_layout) if moved else a,
                             to(b, "OIHW4i4o", kernel_layout) if moved else b,
                             data_layout=data_layout, kernel_layout=kernel_layout,
                             padding=[3, 3, 0, 0], strides=[2, 2], out_dtype="float32",
                             channels=4, kernel_size=(4, 4))
    out = relay.add(conv2d, to(c, "NCHW4c", data_layout) if moved else c)
    return fn(to(out, data_layout, "NCHW4c") if moved else out)


@pytest.mark.parametrize("bias_shape", [(1, 1, 1, 1, 4), (1, 1, 1, 1, 1)],
                         ids=["blocked_no_broadcast", "blocked_broadcast"])
def test_alter_layout_blocked(bias_shape):
    """Asked for the layouts it already has, the blocked conv2d and its add stay as they are."""
    check(blocked_conv_add(bias_shape), blocked_conv_add(bias_shape),
          conv_to("NCHW4c", "OIHW4i4o"))


def test_alter_layout_re_blocking_broadcast():
    """From blocks of 4 to blocks of 2: the bias is re-blocked with the data."""
    check(blocked_conv_add((1, 1, 1, 1, 4)),
          blocked_conv_add((1, 1, 1, 1, 4), "NCHW2c", "OIHW2i2o"), conv_to("NCHW2c", "OIHW2i2o"))


def test_broadcast_non_adaptable():
    """An (H, W, 4c) operand cannot follow NCHW4c into NCHW: the result is blocked again."""
    x, weight = relay.var("x", shape=(1, 4, 3, 3, 4)), relay.var("weight", shape=(4, 4, 1, 1, 4, 4))
    z = relay.var("z", shape=(3, 3, 4))
    y = relay.nn.conv2d(x, weight, channels=16, kernel_size=(1, 1), padding=(0, 0),
                        data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    before = fn(y + z)
    x, weight = relay.var("x", shape=(1, 4, 3, 3, 4)), relay.var("weight", shape=(4, 4, 1, 1, 4, 4))
    z = relay.var("z", shape=(3, 3, 4))
    y = relay.nn.conv2d(to(x, "NCHW4c", "NCHW"), to(weight, "OIHW4i4o", "OIHW"), channels=16,
                        kernel_size=(1, 1), padding=(0, 0), data_layout="NCHW",
                        kernel_layout="OIHW")
    check(before, fn(to(y, "NCHW", "NCHW4c") + z), conv_to("NCHW", "OIHW"))


def test_broadcast_respect_input_layouts():
    """Two reductions of a blocked result over different axes, added: the values stay right."""
    x, w = relay.var("x", shape=(1, 16, 1, 1)), relay.var("w", shape=(16, 16, 1, 1))
    y = relay.nn.conv2d(x, w, kernel_size=(1, 1), padding=(0, 0), channels=16)
    before = fn(relay.min(y, axis=[2]) + relay.min(y, axis=[3]))
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", conv_to("NCHW4c", "OIHW4i4o")):
        after = run_opt_pass(before, transform.AlterOpLayout())
    same_values(before, after)


@pytest.mark.parametrize("use, construct", [
    (lambda: tvm.topi.nn.conv2d_alter_layout, "tvm.topi.nn"),
    (lambda: tvm.topi.arm_cpu.dense_alter_op, "tvm.topi.arm_cpu"),
    (lambda: tvm.target.Target("llvm -device=arm_cpu -mtriple=aarch64-linux-gnu"),
     "tvm.target.Target"),
    (lambda: relay.build(tvm.IRModule(), target="llvm"), "tvm.relay.build"),
])
def test_the_target_hooks_of_the_cases_left_out_are_named(use, construct):
    """TVM's arm_cpu/aarch64 cases and its relay.build cases need these; each is a named error."""
    with pytest.raises(RelayCompatError, match=construct.replace(".", r"\.")):
        use()
