"""DefuseOps on the cases of TVM v0.18's test_pass_defuse_ops.py and
test_pass_annotate_spans_defuse.py, written as a TVM user.

The facts: defusing what FuseOps fused gives back the unfused function
(structurally), for a simple elementwise chain, for an inception-like graph
with a shared input, and for a hand-written program calling four function
literals (conv2d + batch_norm, max_pool2d, conv2d + batch_norm + relu,
add + relu) whose defused form is written out in full.  AnnotateSpans
followed by DefuseOps runs on a workload.

Out of scope: ``relay.optimize`` in the AnnotateSpans case (it builds for a
target); the case fuses with FuseOps instead, which is what optimize does
to the module before the passes run.
"""
import numpy as np

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay import testing, transform
from relaypass.relay.testing import run_opt_pass


def fuse_then_defuse(func):
    typed = run_opt_pass(func, transform.InferType())
    fused = run_opt_pass(typed, transform.FuseOps())
    return typed, fused, run_opt_pass(fused, transform.DefuseOps())


def count_function_literals(func):
    found = []
    relay.analysis.post_order_visit(
        func.body, lambda node: found.append(node) if isinstance(node, relay.Function) else None
    )
    return len(found)


def test_elementwise_chain_comes_back():
    x = relay.var("x", shape=(10, 20))
    out = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    typed, fused, defused = fuse_then_defuse(relay.Function([x], out))
    assert count_function_literals(fused) == 1
    assert count_function_literals(defused) == 0
    tvm.ir.assert_structural_equal(typed, defused)


def test_inception_like_graph_comes_back():
    def conv_relu(data):
        conv = relay.nn.conv2d(data, relay.var("w"), kernel_size=(3, 3), padding=(1, 1), channels=16)
        return relay.nn.relu(conv)

    def block(data):
        return relay.concatenate((conv_relu(data), conv_relu(data)), axis=1)

    x = relay.var("x", shape=(1, 16, 64, 64))
    out = block(block(x))
    typed, fused, defused = fuse_then_defuse(relay.Function(relay.analysis.free_vars(out), out))
    assert count_function_literals(fused) > 1
    tvm.ir.assert_structural_equal(typed, defused)


def nhwc_conv(data, weight, **kwargs):
    return relay.nn.conv2d(
        data, weight, channels=64, data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC",
        **kwargs,
    )


def pool(data):
    return relay.nn.max_pool2d(
        data, pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), layout="NHWC", out_layout="NHWC",
    )


def bn_vars():
    return [relay.var(name, relay.TensorType((64,), "float32"))
            for name in ("bn_gamma0", "bn_beta0", "bn_mean0", "bn_var0")]


def test_hand_fused_program_defuses_to_the_written_out_one():
    w1 = relay.const(np.random.default_rng(0).standard_normal((64, 7, 7, 3)).astype("float32"))
    w2 = relay.const(np.random.default_rng(1).standard_normal((64, 3, 3, 64)).astype("float32"))
    stats = [relay.const(np.full((64,), v, "float32")) for v in (1.0, 0.0, 0.5, 2.0)]

    def conv_bn(weight):
        data = relay.var("data", shape=(1, 224, 224, 3))
        params = bn_vars()
        out = relay.nn.batch_norm(
            nhwc_conv(data, weight, strides=(2, 2), padding=(3, 3, 3, 3), kernel_size=(7, 7)),
            *params, axis=3,
        )[0]
        return relay.Function([data, *params], out)

    def conv_bn_relu(weight):
        data = relay.var("data2", shape=(1, 56, 56, 64))
        params = bn_vars()
        out = relay.nn.batch_norm(
            nhwc_conv(data, weight, padding=(1, 1, 1, 1), kernel_size=(3, 3)), *params, axis=3
        )[0]
        return relay.Function([data, *params], relay.nn.relu(out))

    def pool_fn():
        data = relay.var("data1", shape=(1, 112, 112, 64))
        return relay.Function([data], pool(data))

    def add_relu():
        a = relay.var("data1", shape=(1, 56, 56, 64))
        b = relay.var("data2", shape=(1, 56, 56, 64))
        return relay.Function([a, b], relay.nn.relu(relay.add(a, b)))

    data = relay.var("data", shape=(1, 3, 224, 224))
    nhwc = relay.layout_transform(data, src_layout="NCHW", dst_layout="NHWC")
    y0 = relay.Call(conv_bn(w1), [nhwc, *stats])
    y1 = relay.Call(pool_fn(), [y0])
    y2 = relay.Call(conv_bn_relu(w2), [y1, *stats])
    y3 = relay.Call(add_relu(), [y1, y2])
    fused = relay.Function([data], y3)

    data = relay.var("data", shape=(1, 3, 224, 224))
    nhwc = relay.layout_transform(data, src_layout="NCHW", dst_layout="NHWC")
    c2 = relay.nn.batch_norm(
        nhwc_conv(nhwc, w1, strides=(2, 2), padding=(3, 3, 3, 3), kernel_size=(7, 7)), *stats, axis=3
    )[0]
    c3 = pool(c2)
    c6 = relay.nn.batch_norm(
        nhwc_conv(c3, w2, padding=(1, 1, 1, 1), kernel_size=(3, 3)), *stats, axis=3
    )[0]
    golden = relay.Function([data], relay.nn.relu(relay.add(c3, relay.nn.relu(c6))))

    defused = run_opt_pass(run_opt_pass(fused, transform.InferType()), transform.DefuseOps())
    tvm.ir.assert_structural_equal(defused, run_opt_pass(golden, transform.InferType()))


def test_calls_of_globals_and_operators_stay():
    x = relay.var("x", shape=(4,))
    mod = tvm.IRModule()
    helper = relay.GlobalVar("helper")
    y = relay.var("y", shape=(4,))
    mod[helper] = relay.Function([y], relay.negative(y))
    mod["main"] = relay.Function([x], relay.Call(helper, [relay.exp(x)]))
    out = transform.DefuseOps()(transform.InferType()(mod))
    tvm.ir.assert_structural_equal(out["main"], transform.InferType()(mod)["main"])


def test_pass_info_as_tvm_declares_it():
    defuse = transform.DefuseOps()
    assert isinstance(defuse, tvm.transform.FunctionPass)
    assert defuse.info.opt_level == 3
    assert list(defuse.info.required) == ["InferType"]


def test_a_long_fused_chain_defuses_without_recursion():
    x = relay.var("x", shape=(2,))
    out = x
    for i in range(100_000):
        out = relay.exp(out) if i % 2 else relay.negative(out)
    typed, fused, defused = fuse_then_defuse(relay.Function([x], out))
    tvm.ir.assert_structural_equal(typed, defused)


def test_annotate_spans_then_defuse_on_a_workload():
    data = relay.var("data", relay.TensorType((1, 3, 64, 64), "float32"))
    net = relay.nn.conv2d(data, relay.var("weight"), kernel_size=(3, 3), channels=3, padding=(1, 1))
    net = relay.nn.batch_norm(
        net, relay.var("bn_gamma"), relay.var("bn_beta"), relay.var("bn_mean"), relay.var("bn_var")
    )[0]
    module, _ = testing.create_workload(relay.Function(relay.analysis.free_vars(net), net))
    with tvm.transform.PassContext(opt_level=3):
        fused = tvm.transform.Sequential([transform.InferType(), transform.FuseOps()])(module)
        module = tvm.transform.Sequential([transform.AnnotateSpans(), transform.DefuseOps()])(fused)
    calls = []
    relay.analysis.post_order_visit(
        module["main"], lambda node: calls.append(node) if isinstance(node, relay.Call) else None
    )
    assert calls
    for call in calls:
        assert call.span is not None and call.span.source_name.name == "GeneratedSource"
        assert call.span.line > 1
    assert count_function_literals(module["main"]) == 0
