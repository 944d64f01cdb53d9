"""ConvertLayout and AlterOpLayout beyond Relay's cases: whole networks, errors, depth, properties.

Networks converted to NHWC and back compute what they computed (the
interpreter runs them), and no two neighbouring layout_transforms undo each
other: the operators between convolutions follow the new layout.
"""

import sys

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.analysis.layout_rewrite import LayoutRewriteError
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call
from relaypass.op.layout_conversion import LayoutConversionError
from relaypass.relay.testing.temp_op_attr import TempOpAttr
from relaypass.testing import check_pass
from relaypass.transform.errors import OptionError
from relaypass.transform.pipeline import PipelineError

NHWC = {"nn.conv2d": ["NHWC", "default"]}
NCHW = {"nn.conv2d": ["NCHW", "default"]}


def calls(mod_or_func, op_name):
    func = mod_or_func["main"] if isinstance(mod_or_func, tvm.IRModule) else mod_or_func
    found = []
    post_order_visit(func, lambda e: found.append(e) if isinstance(e, Call)
                     and getattr(e.op, "name", "") == op_name else None)
    return found


def cancelling_pairs(mod):
    """layout_transform(layout_transform(x, A, B), B, A): a round trip the pass should avoid."""
    return [c for c in calls(mod, "layout_transform")
            if isinstance(c.args[0], Call) and getattr(c.args[0].op, "name", "") == "layout_transform"
            and (c.args[0].attrs.src_layout, c.args[0].attrs.dst_layout)
            == (c.attrs.dst_layout, c.attrs.src_layout)]


def convert(mod, desired):
    with tvm.transform.PassContext(opt_level=3):
        return relay.transform.ConvertLayout(desired)(mod)


def run(mod, args):
    out = relay.create_executor("debug", mod=mod).evaluate()(*args)
    return [o.numpy() for o in out] if isinstance(out, (list, tuple)) else [out.numpy()]


def assert_same(mod_a, mod_b, args, rtol=1e-5, atol=1e-5):
    for a, b in zip(run(mod_a, args), run(mod_b, args)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def round_trip(mod, args):
    """``mod`` in NHWC, checked to compute the same, and to again once back in NCHW."""
    nhwc = convert(mod, NHWC)
    back = convert(nhwc, NCHW)
    assert cancelling_pairs(nhwc) == [] and cancelling_pairs(back) == []
    assert_same(mod, nhwc, args)
    assert_same(mod, back, args)
    return nhwc


def typed_module(out):
    func = relay.Function(relay.analysis.free_vars(out), out)
    return relay.transform.InferType()(tvm.IRModule.from_expr(func))


def random_args(mod, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in mod["main"].params]


def test_resnet50_to_nhwc_and_back_computes_the_same():
    pytest.importorskip("onnx")
    from relaypass.tools import model_zoo

    zoo = model_zoo.light_model("resnet50")
    proto = model_zoo.randomize_weights(zoo.load(), seed=0)
    mod = relay.transform.InferType()(model_zoo.import_onnx(proto, None))
    args = model_zoo.main_arguments(mod, model_zoo.random_input(proto, seed=0))
    nhwc = convert(mod, NHWC)
    back = convert(nhwc, NCHW)
    convs = calls(mod, "nn.conv2d")
    assert len(convs) > 50
    assert all(c.attrs.data_layout == "NHWC" and c.attrs.kernel_layout == "HWIO"
               for c in calls(nhwc, "nn.conv2d"))
    assert all(c.attrs.data_layout == "NCHW" and c.attrs.kernel_layout == "OIHW"
               for c in calls(back, "nn.conv2d"))
    # Activations move once at the input and once before the classifier; the rest are weights.
    data_moves = [c for c in calls(nhwc, "layout_transform") if c.attrs.src_layout != "OIHW"]
    assert len(data_moves) == 2
    assert cancelling_pairs(nhwc) == [] and cancelling_pairs(back) == []
    expected = run(mod, args)[0]
    np.testing.assert_allclose(run(nhwc, args)[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(back, args)[0], expected, rtol=1e-5, atol=1e-5)


def test_resnet50_in_blocked_nchw8c_computes_the_same():
    """Relay's NCHWc path: batch norm simplified first, then every conv2d blocked by 8."""
    pytest.importorskip("onnx")
    from relaypass.tools import model_zoo

    zoo = model_zoo.light_model("resnet50")
    proto = model_zoo.randomize_weights(zoo.load(), seed=0)
    mod = relay.transform.InferType()(model_zoo.import_onnx(proto, None))
    args = model_zoo.main_arguments(mod, model_zoo.random_input(proto, seed=0))
    simplified = relay.transform.SimplifyInference()(mod)
    blocked = convert(simplified, {"nn.conv2d": ["NCHW8c", "OIHW8i8o"]})
    # The stem's 3 input channels do not split by 8: that conv2d stays, as in Relay.
    (stem,) = calls(blocked, "nn.conv2d")
    assert stem.attrs.data_layout == "NCHW"
    nchwc = calls(blocked, "nn.contrib_conv2d_NCHWc")
    assert len(nchwc) == len(calls(mod, "nn.conv2d")) - 1
    assert all(c.attrs.data_layout == "NCHW8c" for c in nchwc)
    data_moves = [c for c in calls(blocked, "layout_transform")
                  if not isinstance(c.args[0], relay.Constant)
                  and not (isinstance(c.args[0], Call) and c.args[0].op.name == "expand_dims")]
    assert sorted((c.attrs.src_layout, c.attrs.dst_layout) for c in data_moves) == [
        ("NCHW", "NCHW8c"), ("NCHW8c", "NCHW")]  # after the stem's pool, before the classifier
    assert cancelling_pairs(blocked) == []
    np.testing.assert_allclose(run(blocked, args)[0], run(mod, args)[0], rtol=1e-5, atol=1e-5)


def _mobilenet_like():
    """Depthwise-separable blocks: a depthwise 3x3 (groups = channels), a pointwise 1x1, relu6."""
    x = relay.var("x", shape=(1, 8, 12, 12))
    y = relay.nn.relu(relay.nn.conv2d(x, relay.var("w0", shape=(16, 8, 3, 3)), channels=16,
                                      kernel_size=(3, 3), strides=(2, 2), padding=(1, 1)))
    for i, c in enumerate((16, 32)):
        dw = relay.nn.conv2d(y, relay.var(f"dw{i}", shape=(c, 1, 3, 3)), channels=c, groups=c,
                             kernel_size=(3, 3), padding=(1, 1))
        gamma, beta = relay.var(f"g{i}", shape=(c,)), relay.var(f"b{i}", shape=(c,))
        mean, var = relay.var(f"m{i}", shape=(c,)), relay.var(f"v{i}", shape=(c,))
        dw = relay.clip(relay.nn.batch_norm(dw, gamma, beta, mean, var)[0], 0.0, 6.0)
        y = relay.clip(relay.nn.conv2d(dw, relay.var(f"pw{i}", shape=(2 * c, c, 1, 1)),
                                       channels=2 * c, kernel_size=(1, 1)), 0.0, 6.0)
    y = relay.nn.global_avg_pool2d(y)
    return typed_module(relay.nn.softmax(relay.nn.batch_flatten(y)))


def test_mobilenet_like_graph_to_nhwc_and_back():
    mod = _mobilenet_like()
    args = random_args(mod)
    for a in args:  # batch-norm variances must not be negative
        np.abs(a, out=a)
    nhwc = round_trip(mod, args)
    depthwise = [c for c in calls(nhwc, "nn.conv2d") if c.attrs.groups > 1]
    assert [c.attrs.kernel_layout for c in depthwise] == ["HWOI", "HWOI"]  # Relay's depthwise pick
    assert [c.attrs.axis for c in calls(nhwc, "nn.batch_norm")] == [3, 3]


def _inception_like():
    """Parallel branches (1x1, 3x3, 5x5, pool) joined by concatenate, twice, then a reduction."""
    x = relay.var("x", shape=(1, 8, 10, 10))

    def block(y, c_in, tag):
        b1 = relay.nn.relu(relay.nn.conv2d(y, relay.var(f"{tag}a", shape=(4, c_in, 1, 1)),
                                           channels=4, kernel_size=(1, 1)))
        b3 = relay.nn.conv2d(y, relay.var(f"{tag}b", shape=(6, c_in, 3, 3)), channels=6,
                             kernel_size=(3, 3), padding=(1, 1))
        b5 = relay.nn.pad(y, [(0, 0), (0, 0), (2, 2), (2, 2)])
        b5 = relay.nn.conv2d(b5, relay.var(f"{tag}c", shape=(2, c_in, 5, 5)), channels=2,
                             kernel_size=(5, 5))
        bp = relay.nn.max_pool2d(y, pool_size=(3, 3), padding=(1, 1))
        return relay.concatenate([b1, relay.nn.relu(b3), relay.sigmoid(b5), bp], axis=1)

    stem = relay.nn.relu(relay.nn.conv2d(x, relay.var("stem", shape=(8, 8, 3, 3)), channels=8,
                                         kernel_size=(3, 3), padding=(1, 1)))
    y = block(block(stem, 8, "i"), 20, "j")
    y = relay.mean(y, axis=[2, 3], keepdims=True)
    return typed_module(relay.squeeze(y, axis=[2, 3]))


def test_inception_like_graph_to_nhwc_and_back():
    mod = _inception_like()
    nhwc = round_trip(mod, random_args(mod))
    assert [c.attrs.axis for c in calls(nhwc, "concatenate")] == [3, 3]
    assert [list(c.attrs.pad_width) for c in calls(nhwc, "nn.pad")] == [
        [(0, 0), (2, 2), (2, 2), (0, 0)]] * 2
    moves = [c for c in calls(nhwc, "layout_transform") if c.attrs.src_layout == "NCHW"]
    assert len(moves) == 1  # the input, once: every branch follows NHWC


@pytest.mark.parametrize("make, data, weight, desired, kernel", [
    (relay.nn.conv1d, (1, 4, 9), (5, 4, 3), "NWC", "WIO"),
    (relay.nn.conv3d, (1, 4, 5, 6, 7), (5, 4, 3, 3, 3), "NDHWC", "DHWIO"),
    (relay.nn.conv1d_transpose, (1, 4, 9), (4, 5, 3), "NWC", "WIO"),
    (relay.nn.conv2d_transpose, (1, 4, 6, 7), (4, 5, 3, 3), "NHWC", "HWIO"),
    (relay.nn.conv3d_transpose, (1, 4, 5, 6, 7), (4, 5, 3, 3, 3), "NDHWC", "DHWOI"),
])
def test_the_other_convolutions_convert_with_their_default_kernels(make, data, weight, desired,
                                                                    kernel):
    x, w = relay.var("x", shape=data), relay.var("w", shape=weight)
    k = (3,) * (len(data) - 2)
    y = relay.nn.relu(make(x, w, channels=5, kernel_size=k))
    pools = {3: relay.nn.max_pool1d, 5: relay.nn.avg_pool3d}
    if len(data) in pools:  # a pool of the same rank follows the new layout
        y = pools[len(data)](y, pool_size=(2,) * len(k))
    mod = typed_module(y)
    op_name = calls(mod, "nn.relu")[0].args[0].op.name
    out = convert(mod, {op_name: [desired, "default"]})
    (conv,) = calls(out, op_name)
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == (desired, kernel)
    assert len([c for c in calls(out, "layout_transform") if c.attrs.dst_layout == data_layout(
        len(data))]) == 1  # one transform back, after the pool
    assert_same(mod, out, random_args(mod))


def data_layout(rank):
    return {3: "NCW", 4: "NCHW", 5: "NCDHW"}[rank]


def _deep_chain():
    """A conv2d, then 100,000 relus."""
    x = relay.var("x", shape=(1, 2, 3, 3))
    y = relay.nn.conv2d(x, relay.var("w", shape=(2, 2, 1, 1)), channels=2, kernel_size=(1, 1))
    for _ in range(100_000):
        y = relay.nn.relu(y)
    return typed_module(y)


def test_a_deep_chain_converts_without_recursion_and_the_input_stays():
    mod = _deep_chain()
    before = mod["main"]
    limit = sys.getrecursionlimit()
    out = convert(mod, NHWC)
    assert sys.getrecursionlimit() == limit and mod["main"] is before
    body = out["main"].body
    assert body.op.name == "layout_transform" and body.attrs.dst_layout == "NCHW"
    assert calls(before, "layout_transform") == []


def test_alter_op_layout_on_a_deep_chain_with_a_hook():
    mod = _deep_chain()

    def to_nhwc(attrs, inputs, tinfos, out_type):
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC", kernel_layout="HWIO"))

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nhwc):
        with tvm.transform.PassContext(opt_level=3):
            out = relay.transform.AlterOpLayout()(mod)
    assert len(calls(out, "layout_transform")) == 3


def test_a_blocked_layout_flows_through_broadcasts_and_reductions():
    x, b, s = (relay.var("x", shape=(1, 8, 6, 6)), relay.var("b", shape=(8, 1, 1)),
               relay.var("s", shape=(1, 1, 5)))
    y = relay.nn.relu(relay.nn.max_pool2d(x, pool_size=(2, 2)) + b) * s
    mod = typed_module(relay.sum(y, axis=[1], keepdims=True))

    def blocked(attrs, inputs, tinfos, out_type):
        return relay.nn.max_pool2d(*inputs, **dict(attrs, layout="NCHW4c", out_layout="NCHW4c"))

    with TempOpAttr("nn.max_pool2d", "FTVMAlterOpLayout", blocked):
        with tvm.transform.PassContext(opt_level=3):
            out = relay.transform.AlterOpLayout()(mod)
    moves = [(c.attrs.src_layout, c.attrs.dst_layout) for c in calls(out, "layout_transform")]
    # The bias has C: it is blocked like the data; the scale has no C: blocks of 1.
    assert sorted(moves) == [("NCHW", "NCHW1c"), ("NCHW", "NCHW4c"), ("NCHW", "NCHW4c"),
                             ("NCHW1c", "NCHW")]
    (total,) = calls(out, "sum")
    assert list(total.attrs.axis) == [1, 4]  # C reduced in both its parts
    assert_same(mod, out, random_args(mod))


@pytest.mark.parametrize("desired, error, message", [
    ({"nn.conv9d": ["NHWC"]}, OptionError, "'nn.conv9d' is not registered"),
    ({"nn.conv2d": ["NH1WC", "default"]}, OptionError, r"desired_layouts\['nn.conv2d'\]"),
    ({"nn.conv2d": "NHWC"}, OptionError, "must be a list of layouts"),
    (["nn.conv2d"], OptionError, "must map operator names"),
])
def test_bad_desired_layouts_are_refused_when_the_pass_is_made(desired, error, message):
    with pytest.raises(error, match=message):
        relay.transform.ConvertLayout(desired)


def test_an_operator_without_a_conversion_is_ignored_with_a_warning_as_in_relay():
    mod = _small_conv_module()
    with pytest.warns(UserWarning, match="'nn.relu', which has no layout conversion.*nn.conv2d"):
        convert = relay.transform.ConvertLayout({"nn.relu": ["NHWC"]})
    tvm.ir.assert_structural_equal(convert(mod), mod)


def _small_conv_module():
    x = relay.var("x", shape=(1, 4, 6, 6))
    y = relay.nn.conv2d(x, relay.var("w", shape=(4, 4, 3, 3)), channels=4, kernel_size=(3, 3))
    return typed_module(relay.nn.max_pool2d(relay.nn.relu(y)))


@pytest.mark.parametrize("desired, message", [
    ({"nn.conv2d": ["NHWC"]}, "takes a data layout and a kernel layout"),
    ({"nn.conv2d": ["default", "OIHW"]}, "desired data layout of nn.conv2d cannot be 'default'"),
    ({"nn.conv2d": ["NCW", "default"]}, "must have the axes of 'NCHW'"),
    ({"nn.conv2d": ["NHWC", "OIW"]}, "kernel layout 'OIW' must have the axes of 'OIHW'"),
    ({"nn.conv2d": ["CHWN", "default"]}, "no default kernel layout for data layout 'CHWN'"),
    ({"nn.conv2d": ["NCHW4c", "default"]}, "'NCHW4c' needs a kernel layout, such as 'OIHW4i4o'"),
    ({"nn.max_pool2d": ["NHWC", "NCHW"]}, "nn.max_pool2d takes one layout"),
])
def test_layouts_an_operator_cannot_take_are_named_and_the_input_stays(desired, message):
    mod = _small_conv_module()
    before = mod["main"]
    text = mod.astext()
    with pytest.raises(LayoutConversionError, match=message):
        convert(mod, desired)
    assert mod["main"] is before and mod.astext() == text


def test_hooks_that_answer_wrongly_are_named():
    mod = _small_conv_module()
    with TempOpAttr("nn.conv2d", "FTVMConvertOpLayout", lambda *args: relay.const(1.0)):
        with pytest.raises(LayoutRewriteError, match="FTVMConvertOpLayout function of 'nn.conv2d' "
                                                     "returned Constant"):
            convert(mod, NHWC)
    with TempOpAttr("nn.relu", "FInferCorrectLayout", lambda *args: ["NCHW"]):
        with pytest.raises(LayoutRewriteError, match="FInferCorrectLayout function of 'nn.relu' "
                                                     "returned list"):
            convert(mod, NHWC)


def test_a_pipeline_file_gives_desired_layouts_as_a_table(tmp_path):
    path = tmp_path / "layouts.toml"
    path.write_text('opt_level = 3\npasses = [{ name = "ConvertLayout", options = { '
                    'desired_layouts = { "nn.conv2d" = ["NHWC", "default"] } } }]\n')
    pipeline = tvm.transform.load_pipeline(str(path))
    out = pipeline(_small_conv_module())
    assert [c.attrs.data_layout for c in calls(out, "nn.conv2d")] == ["NHWC"]
    path.write_text(path.read_text().replace('["NHWC", "default"]', '"NHWC"'))
    with pytest.raises(PipelineError, match=r"takes a table\[list\[str\]\], not table"):
        tvm.transform.load_pipeline(str(path))


DESIRED = [
    {"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"]},
    {"nn.conv2d": ["HWNC", "default"], "nn.avg_pool2d": ["HWCN"], "nn.global_avg_pool2d": ["NHWC"],
     "nn.adaptive_avg_pool2d": ["CNHW"]},
]
LAYOUT_OPS = [
    "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.adaptive_avg_pool2d",
    "nn.relu", "add", "multiply", "concatenate", "transpose", "squeeze", "sum", "mean", "argmax",
    "strided_slice", "split", "nn.pad", "nn.batch_norm", "nn.layer_norm", "nn.bias_add",
    "nn.prelu", "nn.dense", "nn.batch_flatten", "expand_dims", "reshape", "nn.upsampling",
    "nn.dropout",
]


@pytest.mark.parametrize("desired, examples", zip(DESIRED, (300, 100)))
def test_convert_layout_keeps_random_programs_meaning(desired, examples):
    assert check_pass("ConvertLayout", examples, ops=LAYOUT_OPS,
                      pass_options={"desired_layouts": desired}, opt_level=3) == examples


def test_convert_layout_on_the_default_operator_mix():
    assert check_pass("ConvertLayout", 100, pass_options={"desired_layouts": DESIRED[0]},
                      opt_level=3) == 100


def test_alter_op_layout_keeps_random_programs_meaning():
    def to_nhwc(attrs, inputs, tinfos, out_type):
        if attrs.data_layout != "NCHW":
            return None
        return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC", kernel_layout="OHWI"))

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nhwc):
        assert check_pass("AlterOpLayout", 300, ops=LAYOUT_OPS, opt_level=3) == 300
