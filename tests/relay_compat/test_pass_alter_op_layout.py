"""AlterOpLayout against Relay's behaviour (TVM v0.18's test_pass_alter_op_layout.py, in this
project's words).

Most of TVM's cases alter conv2d into blocked layouts (``NCHW16c``), which the operator set's
conv2d does not take, or use TVM's per-target hooks (``topi``, ``relay.build``); the cases here
are those that need neither, plus TVM's ``test_alter_layout`` with NHWC for the blocked layout.
"""

import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay import analysis, transform
from relaypass.relay.testing.temp_op_attr import TempOpAttr


def run_opt_pass(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    mod = tvm.IRModule.from_expr(expr)
    with tvm.transform.PassContext(opt_level=3):
        mod = tvm.transform.Sequential(passes)(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


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


def test_alter_layout_nhwc():
    """TVM's test_alter_layout, with NHWC where it uses NCHW16c."""
    x = relay.var("x", shape=(1, 8, 10, 10))
    bias, weight = relay.var("bias"), relay.var("weight")
    y = relay.nn.bias_add(relay.nn.conv2d(x, weight, channels=8, kernel_size=(3, 3), padding=(1, 1)),
                          bias)
    y = relay.nn.relu(relay.Tuple([y])[0])
    y = relay.nn.batch_flatten(relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2)), "int32"))
    before = relay.Function(analysis.free_vars(y), y)

    def to_nhwc(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC", kernel_layout="HWIO"))

    x = relay.var("x", shape=(1, 8, 10, 10))
    bias, weight = relay.var("bias", shape=(8,)), relay.var("weight", shape=(8, 8, 3, 3))
    y = relay.nn.conv2d(relay.layout_transform(x, "NCHW", "NHWC"),
                        relay.layout_transform(weight, "OIHW", "HWIO"), channels=8,
                        kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC",
                        kernel_layout="HWIO")
    b = relay.expand_dims(relay.expand_dims(bias, axis=1, num_newaxis=2), axis=0, num_newaxis=1)
    y = relay.nn.relu(relay.add(y, relay.layout_transform(b, "NCHW", "NHWC")))
    y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC"), "int32")
    y = relay.nn.batch_flatten(relay.layout_transform(y, "NHWC", "NCHW"))
    expected = relay.Function(analysis.free_vars(y), y)

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nhwc):
        after = run_opt_pass(before, [transform.CanonicalizeOps(), transform.AlterOpLayout()])
    tvm.ir.assert_structural_equal(after, run_opt_pass(expected, transform.InferType()))
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in after.params]
    outs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args)
            for f in (run_opt_pass(before, transform.InferType()), after)]
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


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

    def to_nhwc(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC", kernel_layout="HWIO"))

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nhwc):
        after = run_opt_pass(before, [transform.AlterOpLayout()])
    assert before.body.attrs.layout == "NCHW"
    assert after.body.args[0].attrs.layout == "NHWC"  # the pool follows; moved back after it


def test_alter_with_subfunc():
    v1 = relay.var("v", shape=[1, 16, 10, 10], dtype="float32")
    sub = relay.Function([v1], relay.image.resize2d(v1, size=[16, 16], roi=[0.0, 0.0, 0.0, 0.0],
                                                    rounding_method=""))
    x1 = relay.var("x", shape=[1, 16, 10, 10], dtype="float32")
    x3 = relay.image.resize2d(sub(x1), size=[8, 8], roi=[0.0, 0.0, 0.0, 0.0], rounding_method="")
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x1], x3)))
    tvm.ir.assert_structural_equal(relay.transform.AlterOpLayout()(mod), mod)
