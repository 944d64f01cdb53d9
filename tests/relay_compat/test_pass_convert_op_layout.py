"""ConvertLayout against Relay's behaviour (TVM v0.18's test_pass_convert_op_layout.py, in this
project's words), each rewritten program also run on the interpreter against the original.

The cases TVM's file has for operators the set lacks (QNN, simulated quantization) are
listed in docs/coming-from-relay.md.
"""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import analysis, transform
from relaypass.relay.op import op as reg
from relaypass.relay.testing.temp_op_attr import TempOpAttr
from relaypass.relay.transform.infer_layout_utils import InferCorrectLayoutOutput


def run_opt_pass(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    mod = tvm.IRModule.from_expr(expr)
    with tvm.transform.PassContext(opt_level=3):
        mod = tvm.transform.Sequential(passes)(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def typed(func):
    return run_opt_pass(func, transform.InferType())


def convert(func, desired):
    return run_opt_pass(func, transform.ConvertLayout(desired))


def to_nchw(func):
    return convert(func, {"nn.conv2d": ["NCHW", "default"]})


def check(before, after, expected):
    """``after`` is ``expected`` (typed), and computes what ``before`` computes."""
    tvm.ir.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def same_values(before, after):
    before = typed(before)
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.1, 1, [int(d) for d in p.checked_type.shape]).astype(p.checked_type.dtype)
            for p in before.params]
    runs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args)
            for f in (before, after)]
    flat = [r if isinstance(r, (list, tuple)) else [r] for r in runs]
    for a, b in zip(*flat):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def nhwc_conv(x, w, channels=64, **kw):
    kw.setdefault("kernel_size", (3, 3))
    return relay.nn.conv2d(x, w, channels=channels, data_layout="NHWC", kernel_layout="HWIO", **kw)


def nchw_conv(x, w, channels=64, **kw):
    kw.setdefault("kernel_size", (3, 3))
    return relay.nn.conv2d(x, w, channels=channels, **kw)


def fn(out):
    return relay.Function(analysis.free_vars(out), out)


def to(x, src, dst):
    return relay.layout_transform(x, src, dst)


def find_calls(func, op_name):
    found = []
    relay.analysis.post_order_visit(func, lambda e: found.append(e) if isinstance(e, relay.Call)
                                    and getattr(e.op, "name", None) == op_name else None)
    return found


# Small shapes keep the interpreter's checks quick; the structure is TVM's.
N, H, C = 1, 8, 16


def test_no_convert_layout():
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, C, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(nchw_conv(x, w, C, padding=(1, 1))))
    after = convert(before, {"nn.conv2d": ["NCHW", "default"]})
    check(before, after, before)


def test_conv_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    before = relay.Function([x, w], relay.nn.relu(nhwc_conv(x, w, C, padding=(1, 1))))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.nn.relu(y), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_conv_nhwc_convert_layout():
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, C, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(nchw_conv(x, w, C, padding=(1, 1))))
    y = nhwc_conv(to(x, "NCHW", "NHWC"), to(w, "OIHW", "HWIO"), C, padding=(1, 1))
    expected = fn(to(relay.nn.relu(y), "NHWC", "NCHW"))
    check(before, convert(before, {"nn.conv2d": ["NHWC", "default"]}), expected)


def test_conv_transpose_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = relay.nn.conv2d_transpose(x, w, channels=C, kernel_size=(3, 3), padding=(1, 1),
                                  data_layout="NHWC", kernel_layout="HWIO")
    before = relay.Function([x, w], relay.nn.relu(y))
    y = relay.nn.conv2d_transpose(to(x, "NHWC", "NCHW"), to(w, "HWIO", "IOHW"), channels=C,
                                  kernel_size=(3, 3), padding=(1, 1))
    expected = fn(to(relay.nn.relu(y), "NCHW", "NHWC"))
    after = convert(before, {"nn.conv2d_transpose": ["NCHW", "IOHW"]})
    check(before, after, expected)


def _conv_bias_pool_nhwc():
    x = relay.var("x", shape=(N, H, H, C))
    bias = relay.var("bias", shape=(C,))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = relay.nn.bias_add(nhwc_conv(x, w, C, padding=(1, 1)), bias, axis=3)
    y = relay.nn.relu(relay.Tuple([y])[0])  # the one-field tuple disappears
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC")
    return x, bias, w, fn(relay.nn.batch_flatten(relay.cast(y, "int32")))


def _nchw_conv_plus_bias(x, bias, w):
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    bias = to(relay.expand_dims(bias, axis=0, num_newaxis=3), "NHWC", "NCHW")
    return relay.nn.relu(relay.Tuple([relay.add(y, bias)])[0])


def test_conv_bias_pool_convert_layout():
    x, bias, w, before = _conv_bias_pool_nhwc()
    y = relay.cast(relay.nn.max_pool2d(_nchw_conv_plus_bias(x, bias, w), pool_size=(2, 2)), "int32")
    expected = fn(relay.nn.batch_flatten(to(y, "NCHW", "NHWC")))
    check(before, to_nchw(before), expected)


def test_conv_bias_pool_uses_specified_convert_layout():
    x, bias, w, before = _conv_bias_pool_nhwc()
    y = to(_nchw_conv_plus_bias(x, bias, w), "NCHW", "NHWC")
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC", out_layout="NHWC")
    expected = fn(relay.nn.batch_flatten(relay.cast(y, "int32")))
    after = convert(before, {"nn.conv2d": ["NCHW", "OIHW"], "nn.max_pool2d": ["NHWC"]})
    check(before, after, expected)


def test_conv_concat_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w1, w2 = relay.var("weight1", shape=(3, 3, C, C)), relay.var("weight2", shape=(3, 3, C, C))
    y = nhwc_conv(x, w1, C, padding=(1, 1))
    before = fn(relay.concatenate([y, nhwc_conv(y, w2, C, padding=(1, 1))], axis=3))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w1, "HWIO", "OIHW"), C, padding=(1, 1))
    y1 = nchw_conv(y, to(w2, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.concatenate([y, y1], axis=1), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_dual_path_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w1, w2 = relay.var("weight1", shape=(3, 3, C, 8)), relay.var("weight2", shape=(3, 3, 8, 8))
    y = relay.nn.relu(nhwc_conv(x, w1, 8, padding=(1, 1)))
    y1 = relay.nn.relu(nhwc_conv(y, w2, 8, padding=(1, 1)))
    before = fn(relay.Tuple([y1, relay.nn.batch_flatten(y)]))
    y = relay.nn.relu(nchw_conv(to(x, "NHWC", "NCHW"), to(w1, "HWIO", "OIHW"), 8, padding=(1, 1)))
    y1 = relay.nn.relu(nchw_conv(y, to(w2, "HWIO", "OIHW"), 8, padding=(1, 1)))
    y2 = relay.nn.batch_flatten(to(y, "NCHW", "NHWC"))
    expected = fn(relay.Tuple([to(y1, "NCHW", "NHWC"), y2]))
    check(before, to_nchw(before), expected)


def test_bn_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight1", shape=(3, 3, C, 8))
    gamma, beta, mean, var = (relay.var(n) for n in ("gamma", "beta", "mean", "variance"))
    y, _, _ = relay.nn.batch_norm(nhwc_conv(x, w, 8, padding=(1, 1)), gamma, beta, mean, var, axis=3)
    before = fn(y)
    after = to_nchw(before)
    back = [c for c in find_calls(after, "layout_transform")
            if (c.attrs.src_layout, c.attrs.dst_layout) == ("NCHW", "NHWC")]
    assert len(back) == 1  # batch norm follows NCHW: one transform back, at the end
    same_values(before, after)


def test_transpose_convert_layout():
    def count_and_axes(after):
        transposes = find_calls(after, "transpose")
        return len(find_calls(after, "layout_transform")), [list(t.attrs.axes) for t in transposes]

    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight1", shape=(3, 3, C, 8))
    z = relay.var("z", shape=(H, H, 8))
    out = relay.transpose(relay.add(nhwc_conv(x, w, 8, padding=(1, 1)), z), axes=[0, 3, 1, 2])
    before = fn(relay.nn.batch_flatten(out))
    after = to_nchw(before)
    assert count_and_axes(after) == (3, [[0, 1, 2, 3]])
    same_values(before, after)

    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight1", shape=(8, C, 3, 3))
    z = relay.var("z", shape=(8, H, H))
    summed = relay.add(nchw_conv(x, w, 8, padding=(1, 1)), z)
    before = fn(relay.nn.batch_flatten(relay.transpose(summed, axes=[0, 2, -1, 1])))
    after = convert(before, {"nn.conv2d": ["NHWC", "default"]})
    assert count_and_axes(after) == (3, [[0, 1, 2, 3]])
    same_values(before, after)

    before = fn(relay.transpose(summed))  # no axes: reversed
    after = convert(before, {"nn.conv2d": ["NHWC", "default"]})
    assert count_and_axes(after) == (3, [[2, 1, 3, 0]])
    same_values(before, after)


def _two_branches_nhwc():
    x = relay.var("x", shape=(N, H, H, C))
    w1, w2 = relay.var("weight1", shape=(3, 3, C, 8)), relay.var("weight2", shape=(1, 1, C, 8))
    y = relay.nn.relu(nhwc_conv(x, w1, 8, padding=(1, 1)))
    y2 = relay.nn.relu(nhwc_conv(x, w2, 8, kernel_size=(1, 1)))
    return x, w1, w2, y + y2


def _two_branches_nchw(x, w1, w2):
    x = to(x, "NHWC", "NCHW")
    y = relay.nn.relu(nchw_conv(x, to(w1, "HWIO", "OIHW"), 8, padding=(1, 1)))
    return y + relay.nn.relu(nchw_conv(x, to(w2, "HWIO", "OIHW"), 8, kernel_size=(1, 1)))


def test_resnet_convert_layout():
    x, w1, w2, y = _two_branches_nhwc()
    before = fn(relay.nn.global_max_pool2d(y, layout="NHWC"))
    expected = fn(to(relay.nn.global_max_pool2d(_two_branches_nchw(x, w1, w2)), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_resnet_pool_uses_specified_convert_layout():
    x, w1, w2, y = _two_branches_nhwc()
    before = fn(relay.nn.global_max_pool2d(y, layout="NHWC"))
    y = to(_two_branches_nchw(x, w1, w2), "NCHW", "NHWC")
    expected = fn(relay.nn.global_max_pool2d(y, layout="NHWC", out_layout="NHWC"))
    desired = {"nn.conv2d": ["NCHW", "default"], "nn.global_max_pool2d": ["NHWC"]}
    check(before, convert(before, desired), expected)


def test_scalar_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    before = fn(relay.add(nhwc_conv(x, w, C, padding=(1, 1)), relay.const(1, "float32")))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.add(y, relay.const(1.0, "float32")), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def _normalized(norm, axis):
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    params = [relay.var(n, relay.TensorType((C,), "float32")) for n in norm[1]]
    return x, w, params, norm[0](nhwc_conv(x, w, C, padding=(1, 1)), *params, axis=axis)


def test_conv_ln_convert_layout():
    layer_norm = (relay.nn.layer_norm, ("gamma", "beta"))
    x, w, (gamma, beta), y = _normalized(layer_norm, 3)
    before = fn(y)
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.nn.layer_norm(y, gamma, beta, axis=1), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_conv_bn_convert_layout():
    bn = (relay.nn.batch_norm, ("gamma", "beta", "moving_mean", "moving_var"))
    x, w, params, y = _normalized(bn, 3)
    before = fn(relay.nn.relu(y[0]))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    y = relay.nn.batch_norm(y, *params, axis=1)
    expected = fn(to(relay.nn.relu(y[0]), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_conv_convert_kernel_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    before = fn(nhwc_conv(x, w, C, padding=(1, 1)))
    expected = fn(relay.nn.conv2d(x, to(w, "HWIO", "OHWI"), channels=C, kernel_size=(3, 3),
                                  padding=(1, 1), data_layout="NHWC", kernel_layout="OHWI"))
    check(before, convert(before, {"nn.conv2d": ["NHWC", "OHWI"]}), expected)


def test_conv_strided_slice_convert_layout():
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, C, 3, 3))
    y = relay.nn.relu(nchw_conv(x, w, C, padding=(1, 1)))
    before = relay.Function(
        [x, w], relay.strided_slice(y, begin=[0, 1], end=[1, -1, 5], strides=[1, 1, 2, 1]))
    y = relay.nn.relu(nhwc_conv(to(x, "NCHW", "NHWC"), to(w, "OIHW", "HWIO"), C, padding=(1, 1)))
    y = relay.strided_slice(y, begin=[0, 0, 0, 1], end=[1, 5, H, -1], strides=[1, 2, 1, 1])
    expected = fn(to(y, "NHWC", "NCHW"))
    check(before, convert(before, {"nn.conv2d": ["NHWC", "default"]}), expected)


@pytest.mark.parametrize("sections, axis", [(2, -1), (2, 3), ((5, 10), -1)])
def test_conv_split_convert_layout(sections, axis):
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = relay.nn.relu(nhwc_conv(x, w, C))
    parts = relay.op.split(y, indices_or_sections=sections, axis=axis).astuple()
    count = sections if isinstance(sections, int) else len(sections) + 1
    before = fn(relay.Tuple([relay.TupleGetItem(parts, i) for i in range(count)]))
    y = relay.nn.relu(nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C))
    parts = relay.op.split(y, indices_or_sections=sections, axis=1).astuple()
    expected = fn(relay.Tuple([to(relay.TupleGetItem(parts, i), "NCHW", "NHWC")
                               for i in range(count)]))
    check(before, to_nchw(before), expected)


def test_conv_strided_slice_axes_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = nhwc_conv(x, w, C, padding=(1, 1))
    before = fn(relay.strided_slice(y, begin=[0, 8], end=[1, 17], strides=[1, 1], axes=[0, 3]))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    y = relay.strided_slice(y, begin=[0, 8], end=[1, 17], strides=[1, 1], axes=[0, 1])
    check(before, to_nchw(before), fn(to(y, "NCHW", "NHWC")))


def test_conv_topk_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = relay.topk(nhwc_conv(x, w, C, padding=(1, 1)), k=2, axis=2)
    before = fn(y.astuple() if isinstance(y, relay.expr.TupleWrapper) else y)
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    y = relay.topk(y, k=2, axis=3).astuple()
    expected = fn(relay.Tuple([to(relay.TupleGetItem(y, i), "NCHW", "NHWC") for i in (0, 1)]))
    check(before, to_nchw(before), expected)


def test_default_keyword():
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, 3, 3, C))
    before = fn(nchw_conv(x, w, C, padding=(1, 1), kernel_layout="OHWI"))
    expected = fn(nchw_conv(x, to(w, "OHWI", "OIHW"), C, padding=(1, 1)))
    check(before, to_nchw(before), expected)


def test_convert_with_config():
    x = relay.var("x", shape=(N, H, H, C))
    w, w2 = relay.var("weight", shape=(3, 3, C, C)), relay.var("weight2", shape=(3, 3, C, C))
    y = relay.nn.relu(nhwc_conv(x, w, C, padding=(1, 1)))
    before = relay.Function([x, w, w2], relay.nn.relu(nhwc_conv(y, w2, C, padding=(1, 1))))
    y2 = relay.nn.conv2d(to(y, "NHWC", "HWNC"), to(w2, "HWIO", "HWOI"), channels=C,
                         kernel_size=(3, 3), padding=(1, 1), data_layout="HWNC",
                         kernel_layout="HWOI")
    expected = fn(to(relay.nn.relu(y2), "HWNC", "NHWC"))
    with relay.transform.LayoutConfig(skip_layers=[0]):
        after = convert(before, {"nn.conv2d": ["HWNC", "default"]})
    check(before, after, expected)


def _conv_1x1_nhwc():
    x = relay.var("x", shape=(1, 1, 1, 32))
    w = relay.var("weight", shape=(1, 1, 32, 24))
    y = relay.nn.relu(nhwc_conv(x, w, 24, kernel_size=(1, 1)))
    y_nchw = relay.nn.relu(nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), 24,
                                     kernel_size=(1, 1)))
    return y, y_nchw


def test_conv_squeeze_convert_layout():
    y, y_nchw = _conv_1x1_nhwc()
    before = fn(relay.squeeze(y, axis=[-3]))
    check(before, to_nchw(before), fn(to(relay.squeeze(y_nchw, axis=[2]), "NCW", "NWC")))

    before = fn(relay.squeeze(y))
    check(before, to_nchw(before), fn(relay.squeeze(y_nchw, [0, 2, 3])))

    before = fn(relay.squeeze(y, axis=[]))
    check(before, to_nchw(before), fn(to(relay.squeeze(y_nchw, axis=[]), "NCHW", "NHWC")))


def test_conv_reduce_convert_layout():
    y, y_nchw = _conv_1x1_nhwc()
    before = fn(relay.sum(relay.sum(relay.sum(relay.sum(y, axis=(1, 2)), axis=(1,))), axis=None))
    after = to_nchw(before)
    # Relay moves the axis of a reduction over every axis too: a one-axis input gets axis [0].
    expected = relay.sum(relay.sum(relay.sum(y_nchw, axis=(2, 3)), axis=(1,)), axis=[0])
    check(before, after, fn(relay.sum(expected)))


def test_conv_reduce_keeps_spans():
    def named(call, text):
        return relay.Call(call.op, call.args, call.attrs, call.type_args,
                          relay.Span(relay.SourceName(text), 0, 0, 0, 0))

    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = named(nhwc_conv(x, w, C), "SpanConv2D")
    y = named(relay.nn.relu(y), "SpanRelu")
    y = named(relay.multiply(y, y), "SpanMultiply")
    before = fn(named(relay.sum(y, axis=(3,), keepdims=True), "SpanSum"))
    y = relay.nn.relu(nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C))
    y = relay.sum(relay.multiply(y, y), axis=(1,), keepdims=True)
    after = to_nchw(before)
    # TVM checks the text; relaypass's text format does not print spans: look at the calls.
    for op_name, name in (("nn.conv2d", "SpanConv2D"), ("nn.relu", "SpanRelu"),
                          ("multiply", "SpanMultiply"), ("sum", "SpanSum")):
        (call,) = find_calls(after, op_name)
        assert call.span.source_name.name == name
    check(before, after, fn(to(y, "NCHW", "NHWC")))


@pytest.mark.parametrize("src, dst, shape", [("NCHW", "NHWC", (1, 2, 4, 4)),
                                             ("NHWC", "NCHW", (1, 4, 4, 2))])
def test_image_resize2d_convert_layout(src, dst, shape):
    x = relay.var("x", shape=shape)
    before = relay.Function([x], relay.image.resize2d(x, (8, 8), layout=src))
    y = relay.image.resize2d(to(x, src, dst), (8, 8), layout=dst)
    expected = fn(to(y, dst, src))
    check(before, convert(before, {"image.resize2d": [dst]}), expected)


def test_conv_image_resize2d_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    y = nhwc_conv(x, w, C, padding=(1, 1))
    before = fn(relay.image.resize2d(y, (2 * H, 2 * H), layout="NHWC"))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.image.resize2d(y, (2 * H, 2 * H), layout="NCHW"), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def test_infer_correct_layout():
    asked = []

    def relu_follows(attrs, new_in_layouts, old_in_layouts, old_in_types):
        asked.append(new_in_layouts is not None)
        ret = tvm.tir.layout("")
        if new_in_layouts:
            ret = new_in_layouts[0]
        else:
            ret = next((x for x in old_in_layouts if x), ret)
        return InferCorrectLayoutOutput([ret] * len(old_in_layouts), [ret], attrs)

    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    before = relay.Function([x, w], relay.nn.relu(nhwc_conv(x, w, C, padding=(1, 1))))
    with TempOpAttr("nn.relu", "FInferCorrectLayout", relu_follows):
        after = to_nchw(before)
    assert asked == [False, True]  # asked before the rewrite, then with the new layouts
    assert len(find_calls(after, "layout_transform")) == 3
    # The registration was temporary: the standard rule is back.
    assert reg.get("nn.relu").get_attr("FInferCorrectLayout") is not relu_follows


@pytest.mark.parametrize("reduce_op", [relay.argmax, relay.mean, relay.max])
def test_reduce_op_convert_layout(reduce_op):
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, C, 3, 3))
    before = relay.Function([x, w], reduce_op(nchw_conv(x, w, C, padding=(1, 1)), axis=[2, 3]))
    y = nhwc_conv(to(x, "NCHW", "NHWC"), to(w, "OIHW", "HWIO"), C, padding=(1, 1))
    expected = fn(reduce_op(y, axis=[1, 2]))
    check(before, convert(before, {"nn.conv2d": ["NHWC", "default"]}), expected)


def test_conv_max_pool_uses_specified_convert_layout():
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight", shape=(C, C, 3, 3))
    y = relay.nn.relu(nchw_conv(x, w, C, padding=(1, 1)))
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), layout="NCHW")
    before = fn(relay.nn.batch_flatten(y))
    y = relay.nn.conv2d(to(x, "NCHW", "NHWC"), to(w, "OIHW", "OHWI"), channels=C,
                        kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC",
                        kernel_layout="OHWI")
    y = relay.nn.max_pool2d(relay.nn.relu(y), pool_size=(2, 2), layout="NHWC", out_layout="NHWC")
    expected = fn(relay.nn.batch_flatten(to(y, "NHWC", "NCHW")))
    after = convert(before, {"nn.conv2d": ["NHWC", "OHWI"], "nn.max_pool2d": ["NHWC"]})
    check(before, after, expected)


def test_conv_split_convert_layout_blocking():
    """conv2d asked for NCHW4c becomes contrib_conv2d_NCHWc; the split counts C in blocks."""
    x, w = relay.var("x", shape=(N, C, H, H)), relay.var("weight", shape=(C, C, 3, 3))
    y = relay.nn.relu(nchw_conv(x, w, C))
    parts = relay.op.split(y, indices_or_sections=[8], axis=1).astuple()
    before = fn(relay.Tuple([relay.TupleGetItem(parts, 0), relay.TupleGetItem(parts, 1)]))
    y = relay.nn.contrib_conv2d_nchwc(to(x, "NCHW", "NCHW4c"), to(w, "OIHW", "OIHW4o"),
                                      channels=C, kernel_size=(3, 3), padding=(0, 0),
                                      data_layout="NCHW4c", kernel_layout="OIHW4o")
    parts = relay.op.split(relay.nn.relu(y), indices_or_sections=[2], axis=1).astuple()
    expected = fn(relay.Tuple([to(relay.TupleGetItem(parts, i), "NCHW4c", "NCHW")
                               for i in range(2)]))
    check(before, convert(before, {"nn.conv2d": ["NCHW4c", "OIHW4o"]}), expected)


@pytest.mark.parametrize("data_layout, kernel_layout", [
    ("NCHW1c", "OIHW1i1o"), ("NCHW4c", "OIHW4i4o"), ("NCHW8c", "OIHW8i8o"),
    ("NCHW16c", "OIHW16i16o"),
])
def test_resnet_convert_layout_nchwc(data_layout, kernel_layout):
    """A residual block in blocked layouts; the stem's 3-channel input stays NCHW unless the
    blocks are of 1, as in Relay (an input whose channels do not split keeps its conv2d)."""
    x = relay.var("x", shape=(1, 3, 16, 16))
    w1, w2 = relay.var("weight1", shape=(16, 3, 7, 7)), relay.var("weight2", shape=(16, 16, 3, 3))
    w3 = relay.var("weight3", shape=(16, 16, 1, 1))
    stem = dict(strides=(2, 2), padding=(3, 3), channels=16, kernel_size=(7, 7))
    pool = dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.conv2d(x, w1, **stem)), **pool)
    y1 = relay.nn.relu(nchw_conv(y, w2, 16, padding=(1, 1)))
    y2 = relay.nn.relu(nchw_conv(y, w3, 16, kernel_size=(1, 1)))
    before = fn(relay.nn.global_max_pool2d(y1 + y2, layout="NCHW"))

    blocked = dict(data_layout=data_layout, kernel_layout=kernel_layout)
    if data_layout == "NCHW1c":
        y = relay.nn.contrib_conv2d_nchwc(to(x, "NCHW", data_layout),
                                          to(w1, "OIHW", kernel_layout), **stem, **blocked)
        y = relay.nn.max_pool2d(relay.nn.relu(y), **pool, layout=data_layout)
    else:
        y = relay.nn.max_pool2d(relay.nn.relu(relay.nn.conv2d(x, w1, **stem)), **pool)
        y = to(y, "NCHW", data_layout)
    y1 = relay.nn.relu(relay.nn.contrib_conv2d_nchwc(
        y, to(w2, "OIHW", kernel_layout), channels=16, kernel_size=(3, 3), padding=(1, 1),
        **blocked))
    y2 = relay.nn.relu(relay.nn.contrib_conv2d_nchwc(
        y, to(w3, "OIHW", kernel_layout), channels=16, kernel_size=(1, 1), **blocked))
    y = relay.nn.global_max_pool2d(y1 + y2, layout=data_layout)
    expected = fn(to(y, data_layout, "NCHW"))
    check(before, convert(before, {"nn.conv2d": [data_layout, kernel_layout]}), expected)


def _deformable_nets(layout):
    """deformable conv -> bias -> relu -> pool -> cast -> flatten, in ``layout``; and the same
    net's pieces for the expected program: (before, build(dst) -> expected)."""
    kernel = {"NCHW": "OIHW", "NHWC": "HWIO"}
    data_shape = {"NCHW": (N, 3, H, H), "NHWC": (N, H, H, 3)}
    weight_shape = {"OIHW": (8, 3, 3, 3), "HWIO": (3, 3, 3, 8)}
    offset_shape = {"NCHW": (N, 18, H - 2, H - 2), "NHWC": (N, H - 2, H - 2, 18)}

    def net(data, offset, weight, bias, lay, bias_fn):
        y = relay.nn.deformable_conv2d(data, offset, weight, kernel_size=(3, 3), channels=8,
                                       data_layout=lay, kernel_layout=kernel[lay])
        y = relay.nn.relu(bias_fn(y, bias))
        y = relay.cast(relay.nn.max_pool2d(y, pool_size=(2, 2), layout=lay), "int32")
        return y

    data = relay.var("data", shape=data_shape[layout])
    offset = relay.var("offset")  # its type comes from the convolution
    weight = relay.var("weight", shape=weight_shape[kernel[layout]])
    bias = relay.var("bias", shape=(8,))
    bias_axis = 1 if layout == "NCHW" else 3
    y = net(data, offset, weight, bias, layout,
            lambda y, b: relay.nn.bias_add(y, b, axis=bias_axis))
    before = fn(relay.nn.batch_flatten(y))

    def expected(dst):
        data = relay.var("data", shape=data_shape[layout])
        offset = relay.var("offset", shape=offset_shape[layout])
        weight = relay.var("weight", shape=weight_shape[kernel[layout]])
        bias = relay.var("bias", shape=(8,))

        def moved_bias(y, b):
            b = (relay.expand_dims(b, axis=0, num_newaxis=3) if layout == "NHWC" else
                 relay.expand_dims(relay.expand_dims(b, axis=1, num_newaxis=2), axis=0))
            return relay.add(y, to(b, layout, dst))

        y = net(to(data, layout, dst), to(offset, layout, dst),
                to(weight, kernel[layout], kernel[dst]), bias, dst, moved_bias)
        return fn(relay.nn.batch_flatten(to(y, dst, layout)))

    return before, expected


@pytest.mark.parametrize("src, dst", [("NHWC", "NCHW"), ("NCHW", "NHWC")])
def test_deformable_conv_bias_pool_convert_layout(src, dst):
    before, expected = _deformable_nets(src)
    after = convert(before, {"nn.deformable_conv2d": [dst, "default"]})
    check(before, after, expected(dst))


def test_deformable_conv_bias_pool_uses_specified_convert_layout():
    """The deformable convolution moves to NCHW, the pool is held in NHWC by its own entry."""
    before, _ = _deformable_nets("NHWC")
    desired = {"nn.deformable_conv2d": ["NCHW", "OIHW"], "nn.max_pool2d": ["NHWC"]}
    after = convert(before, desired)
    (conv,) = find_calls(after, "nn.deformable_conv2d")
    (pool,) = find_calls(after, "nn.max_pool2d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NCHW", "OIHW")
    assert (pool.attrs.layout, pool.attrs.out_layout) == ("NHWC", "NHWC")
    moves = sorted((c.attrs.src_layout, c.attrs.dst_layout)
                   for c in find_calls(after, "layout_transform"))
    # data, offset and the bias in; one move back to NHWC before the pool
    assert moves == [("HWIO", "OIHW"), ("NCHW", "NHWC"), ("NHWC", "NCHW"), ("NHWC", "NCHW"),
                     ("NHWC", "NCHW")]
    same_values(before, after)


def _slice_like_axes_after(before, desired):
    return [tuple(c.attrs.axes) for c in find_calls(convert(before, desired), "slice_like")]


def test_slice_like_convert_layout():
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight1", shape=(3, 3, C, 8))
    y = nhwc_conv(x, w, 8, padding=(1, 1))
    before = fn(relay.slice_like(y, y, axes=[1, 2]))
    assert _slice_like_axes_after(before, {"nn.conv2d": ["NCHW", "default"]}) == [(2, 3)]
    same_values(before, to_nchw(before))

    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight1", shape=(8, C, 3, 3))
    y = nchw_conv(x, w, 8, padding=(1, 1))
    before = fn(relay.slice_like(y, y, axes=[2, 3]))
    assert _slice_like_axes_after(before, {"nn.conv2d": ["NHWC", "default"]}) == [(1, 2)]

    # the shape comes from a program input, whose layout nobody knows: the slice stays NHWC
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight1", shape=(3, 3, C, 8))
    z = relay.var("y", shape=(N, H - 2, H - 3, 8))
    before = fn(relay.slice_like(nhwc_conv(x, w, 8, padding=(1, 1)), z, axes=[1, 2]))
    assert _slice_like_axes_after(before, {"nn.conv2d": ["NCHW", "default"]}) == [(1, 2)]
    same_values(before, to_nchw(before))


def test_conv_InstanceNorm_convert_layout():
    instance_norm = (relay.nn.instance_norm, ("gamma", "beta"))
    x, w, (gamma, beta), y = _normalized(instance_norm, 3)
    before = fn(y)
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.nn.instance_norm(y, gamma, beta, axis=1), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


@pytest.mark.parametrize("axis, moved", [([3], [1]), ([-1], [1]), ([2, 3], [3, 1])])
def test_conv_l2n_convert_layout(axis, moved):
    x = relay.var("x", shape=(N, H, H, C))
    w = relay.var("weight", shape=(3, 3, C, C))
    before = fn(relay.nn.l2_normalize(nhwc_conv(x, w, C, padding=(1, 1)), eps=0.001, axis=axis))
    y = nchw_conv(to(x, "NHWC", "NCHW"), to(w, "HWIO", "OIHW"), C, padding=(1, 1))
    expected = fn(to(relay.nn.l2_normalize(y, eps=0.001, axis=moved), "NCHW", "NHWC"))
    check(before, to_nchw(before), expected)


def _conv_then_roi(roi_op, layout, **kw):
    x = relay.var("x", shape=(N, C, H, H))
    w = relay.var("weight1", shape=(C, C, 3, 3))
    rois = relay.var("rois", shape=(4, 5))
    y = nchw_conv(x, w, C, padding=(1, 1))
    return x, w, rois, roi_op(y, rois, pooled_size=(3, 3), spatial_scale=0.5, layout=layout, **kw)


@pytest.mark.parametrize("roi_op, kw", [(relay.vision.roi_align, {"sample_ratio": 2}),
                                        (relay.vision.roi_pool, {})],
                         ids=["roi_align", "roi_pool"])
def test_conv_roi_convert_layout(roi_op, kw):
    _, _, _, y = _conv_then_roi(roi_op, "NCHW", **kw)
    before = fn(y)
    x, w, rois, _ = _conv_then_roi(roi_op, "NCHW", **kw)
    y = nhwc_conv(to(x, "NCHW", "NHWC"), to(w, "OIHW", "HWIO"), C, padding=(1, 1))
    expected = fn(to(roi_op(y, rois, pooled_size=(3, 3), spatial_scale=0.5, layout="NHWC", **kw),
                     "NHWC", "NCHW"))
    desired = {"nn.conv2d": ["NHWC", "HWIO"], before.body.op.name: ["NHWC", "default"]}
    check(before, convert(before, desired), expected)


def test_no_desired_layout():
    """roi_align has a rule but no desired layout: it keeps NCHW, its input moved back."""
    _, _, _, y = _conv_then_roi(relay.vision.roi_align, "NCHW", sample_ratio=2)
    before = fn(y)
    x, w, rois, _ = _conv_then_roi(relay.vision.roi_align, "NCHW")
    y = nhwc_conv(to(x, "NCHW", "NHWC"), to(w, "OIHW", "HWIO"), C, padding=(1, 1))
    y = relay.vision.roi_align(to(y, "NHWC", "NCHW"), rois, pooled_size=(3, 3), spatial_scale=0.5,
                               sample_ratio=2, layout="NCHW")
    check(before, convert(before, {"nn.conv2d": ["NHWC", "HWIO"]}), fn(y))
