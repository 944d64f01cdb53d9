"""Convolutions and dense in blocked layouts: conv2d over NCHW16c / OIHW16i16o, the
``nn.contrib_conv2d_NCHWc`` and ``nn.contrib_depthwise_conv2d_NCHWc`` operators, and
``nn.contrib_dense_pack`` (what AlterOpLayout's hooks produce).

Each kernel is checked against a loop that reads the blocked arrays index by index, and
against unblocking, computing in the plain layout and blocking again.
"""

import itertools

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Op, OpPattern
from relaypass.ir.op_hooks import INFER_CORRECT_LAYOUT
from relaypass.op.layout import Layout, transform_array
from relaypass.op.relations import ARG_TYPES

X, W = relay.var("x"), relay.var("w")
RNG = np.random.default_rng(0)


def block(x, src, dst):
    return np.ascontiguousarray(transform_array(x, Layout(src, "t"), Layout(dst, "t")))


def naive_blocked_conv(data, weight, cb, ib, ob, pad, stride, groups=1):
    """NCHW{cb}c data with OIHW{ib}i{ob}o weight, one output element at a time."""
    n, c_outer, h, w, _ = data.shape
    o_outer, i_outer, kh, kw, _, _ = weight.shape
    channels, per_group = o_outer * ob, i_outer * ib
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (w + 2 * pad - kw) // stride + 1
    out = np.zeros((n, channels // cb, oh, ow, cb), "float64")
    per_out_group = channels // groups
    for b, oc, y, x in itertools.product(range(n), range(channels), range(oh), range(ow)):
        g = oc // per_out_group
        total = 0.0
        for ic, dy, dx in itertools.product(range(per_group), range(kh), range(kw)):
            yy, xx = y * stride + dy - pad, x * stride + dx - pad
            if not (0 <= yy < h and 0 <= xx < w):
                continue
            c = g * per_group + ic
            total += (data[b, c // cb, yy, xx, c % cb]
                      * weight[oc // ob, ic // ib, dy, dx, ic % ib, oc % ob])
        out[b, oc // cb, y, x, oc % cb] = total
    return out


@pytest.mark.parametrize("build", [
    lambda x, w: relay.nn.contrib_conv2d_nchwc(x, w, padding=(1, 1), strides=(2, 2),
                                               data_layout="NCHW4c",
                                               kernel_layout="OIHW2i4o"),
    lambda x, w: relay.nn.conv2d(x, w, padding=(1, 1), strides=(2, 2), data_layout="NCHW4c",
                                 kernel_layout="OIHW2i4o"),
], ids=["contrib_conv2d_NCHWc", "conv2d"])
def test_blocked_convolution_matches_a_loop_over_blocked_indices(build):
    data = RNG.uniform(-1, 1, (1, 2, 5, 5, 4)).astype("float32")    # C = 8
    weight = RNG.uniform(-1, 1, (3, 4, 3, 3, 2, 4)).astype("float32")  # O = 12, I = 8
    call = build(X, W)
    assert relation(call, T(data.shape), T(weight.shape)) == T((1, 3, 3, 3, 4))
    got = evaluate(call, data, weight)
    want = naive_blocked_conv(data.astype("float64"), weight.astype("float64"), 4, 2, 4, 1, 2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # Unblocking, a plain conv2d and blocking again give the same.
    plain = evaluate(relay.nn.conv2d(X, W, padding=(1, 1), strides=(2, 2)),
                     block(data, "NCHW4c", "NCHW"), block(weight, "OIHW2i4o", "OIHW"))
    np.testing.assert_allclose(got, block(plain, "NCHW", "NCHW4c"), rtol=1e-5, atol=1e-5)


def test_nchwc_reads_a_packed_weight_by_its_shape_as_topi_does():
    # Relay's tests pass OIHW4i4o weights while kernel_layout keeps its default OIHW.
    data = RNG.uniform(-1, 1, (1, 2, 4, 4, 4)).astype("float32")
    weight = RNG.uniform(-1, 1, (2, 2, 3, 3, 4, 4)).astype("float32")
    call = relay.nn.contrib_conv2d_nchwc(X, W, channels=8, kernel_size=(3, 3), padding=(1, 1),
                                         data_layout="NCHW4c")
    assert call.attrs.kernel_layout == "OIHW"
    got = evaluate(call, data, weight)
    want = naive_blocked_conv(data.astype("float64"), weight.astype("float64"), 4, 4, 4, 1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_depthwise_nchwc_matches_a_grouped_conv2d():
    data = RNG.uniform(-1, 1, (1, 16, 6, 6)).astype("float32")
    weight = RNG.uniform(-1, 1, (16, 1, 3, 3)).astype("float32")
    call = relay.nn.contrib_depthwise_conv2d_nchwc(
        X, W, padding=(1, 1), groups=16, channels=16, kernel_size=(3, 3), data_layout="NCHW8c",
        kernel_layout="OIHW1i8o", out_layout="NCHW8c")
    blocked = (block(data, "NCHW", "NCHW8c"), block(weight, "OIHW", "OIHW1i8o"))
    assert relation(call, T(blocked[0].shape), T(blocked[1].shape)) == T((1, 2, 6, 6, 8))
    got = evaluate(call, *blocked)
    want = naive_blocked_conv(*(b.astype("float64") for b in blocked), 8, 1, 8, 1, 1, groups=16)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    plain = evaluate(relay.nn.conv2d(X, W, padding=(1, 1), groups=16), data, weight)
    np.testing.assert_allclose(got, block(plain, "NCHW", "NCHW8c"), rtol=1e-5, atol=1e-5)


def test_blocked_output_layout_and_weight_inference():
    call = relay.nn.conv2d(X, W, channels=32, kernel_size=(3, 3), data_layout="NCHW16c",
                           kernel_layout="OIHW16i16o", out_layout="NHWC")
    assert relation(call, T((1, 2, 8, 8, 16)), T((2, 2, 3, 3, 16, 16))) == T((1, 6, 6, 32))
    # The weight's type follows from channels and kernel_size, in the blocked kernel layout.
    infer = Op.get("nn.conv2d").get_attr(ARG_TYPES)
    _, weight = infer([T((1, 2, 8, 8, 16)), None], call.attrs)
    assert weight == T((2, 2, 3, 3, 16, 16))
    depthwise = relay.nn.contrib_depthwise_conv2d_nchwc(
        X, W, groups=16, channels=16, kernel_size=(3, 3), data_layout="NCHW8c",
        kernel_layout="OIHW1i8o")
    infer = Op.get("nn.contrib_depthwise_conv2d_NCHWc").get_attr(ARG_TYPES)
    assert infer([T((1, 2, 6, 6, 8)), None], depthwise.attrs)[1] == T((2, 1, 3, 3, 1, 8))


@pytest.mark.parametrize("call, dshape, wshape, message", [
    (relay.nn.conv2d(X, W, data_layout="NCHW16c"), (1, 2, 8, 8, 8), (16, 32, 3, 3),
     "axis 'c' of layout 'NCHW16c' must have extent 16, got 8"),
    (relay.nn.conv2d(X, W, data_layout="NCHW4c", out_layout="NCHW16c"), (1, 2, 8, 8, 4),
     (8, 8, 3, 3), "axis 'C' of extent 8 cannot be split into blocks of 16"),
    (relay.nn.contrib_conv2d_nchwc(X, W, data_layout="NCHW4c", kernel_layout="OIHW4i4o"),
     (1, 2, 8, 8, 4), (2, 3, 3, 3, 4, 4), r"data has 8 input channels .* takes 12"),
    (relay.nn.contrib_conv2d_nchwc(X, W, data_layout="NCHW4c"), (1, 2, 8, 8, 4),
     (2, 2, 3, 3, 4), "weight must have rank 4"),
    (relay.nn.contrib_conv2d_nchwc(X, W, data_layout="NCDW4c"), (1, 2, 8, 8, 4),
     (8, 8, 3, 3), "data_layout 'NCDW4c' is not supported"),
])
def test_blocked_convolution_errors_say_what_and_where(call, dshape, wshape, message):
    with pytest.raises(TypeRelationError, match=f"{call.op.name}: .*{message}"):
        relation(call, T(dshape), T(wshape))


def test_dense_pack_matches_dense():
    data = RNG.uniform(-1, 1, (3, 8)).astype("float32")
    weight = RNG.uniform(-1, 1, (32, 8)).astype("float32")
    packed = block(weight, "NC", "NC16n")
    assert packed.shape == (2, 8, 16)
    call = relay.nn.contrib_dense_pack(X, W, "NC16n", out_dtype="float32")
    assert relation(call, T((3, 8)), T((2, 8, 16))) == T((3, 32))
    got = evaluate(call, data, packed)
    want = np.einsum("mk,nkb->mnb", data.astype("float64"), packed.astype("float64"))
    np.testing.assert_allclose(got, want.reshape(3, 32), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, data @ weight.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call, wshape, message", [
    (relay.nn.contrib_dense_pack(X, W, "NC16n"), (2, 4, 16), "do not agree on the reduced"),
    (relay.nn.contrib_dense_pack(X, W, "NC16n", units=16), (2, 8, 16), "units=16 but"),
    (relay.nn.contrib_dense_pack(X, W, "NW16n"), (2, 8, 16), "weight_layout 'NW16n'"),
    (relay.nn.contrib_dense_pack(X, W, "NC16n"), (32, 8), "weight must have rank 3"),
])
def test_dense_pack_errors_say_what_and_where(call, wshape, message):
    with pytest.raises(TypeRelationError, match=f"nn.contrib_dense_pack: .*{message}"):
        relation(call, T((3, 8)), T(wshape))


@pytest.mark.parametrize("build, shapes", [
    (lambda x, w: relay.nn.contrib_conv2d_nchwc(x, w, channels=8, kernel_size=(3, 3),
                                                data_layout="NCHW4c", kernel_layout="OIHW4i4o",
                                                out_layout="NCHW4c"),
     [(1, 2, 6, 6, 4), (2, 2, 3, 3, 4, 4)]),
    (lambda x, w: relay.nn.contrib_depthwise_conv2d_nchwc(
        x, w, groups=8, data_layout="NCHW8c", kernel_layout="OIHW1i8o"),
     [(1, 1, 6, 6, 8), (1, 1, 3, 3, 1, 8)]),
    (lambda x, w: relay.nn.conv2d(x, w, data_layout="NCHW4c", kernel_layout="OIHW4i"),
     [(1, 2, 6, 6, 4), (8, 2, 3, 3, 4)]),
    (lambda x, w: relay.nn.contrib_dense_pack(x, w, "NC16n", units=32), [(3, 8), (2, 8, 16)]),
])
def test_text_round_trip(build, shapes):
    call = build(*(relay.var(n, shape=s) for n, s in zip("xw", shapes)))
    assert call.op.name in assert_text_round_trip(call)


def test_relays_attributes_pattern_and_layout_rules():
    for name, key in [("nn.contrib_conv2d_NCHWc", "relay.attrs.Conv2DAttrs"),
                      ("nn.contrib_depthwise_conv2d_NCHWc", "relay.attrs.Conv2DAttrs"),
                      ("nn.contrib_dense_pack", "relay.attrs.DensePackAttrs")]:
        op = Op.get(name)
        assert op.attrs_type_key == key
        assert op.get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
        assert op.get_attr(INFER_CORRECT_LAYOUT) is not None
    call = relay.nn.contrib_dense_pack(X, W, "NC16n")
    rule = Op.get("nn.contrib_dense_pack").get_attr(INFER_CORRECT_LAYOUT)
    out = rule(call.attrs, None, [None, None], [T((3, 8)), T((2, 8, 16))])
    assert [x.name for x in out.input_layouts] == ["NC", "NC16n"]
    assert [x.name for x in out.output_layouts] == ["NC"]


def test_blocked_operators_export_to_onnx_and_compute_the_same():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    import relaypass as tvm
    from relaypass.frontend import to_onnx

    x, w = relay.var("x", shape=(1, 8, 6, 6)), relay.var("w", shape=(16, 8, 3, 3))
    dw, dense_w = relay.var("dw", shape=(16, 1, 3, 3)), relay.var("dense_w", shape=(32, 16))
    y = relay.nn.contrib_conv2d_nchwc(
        relay.layout_transform(x, "NCHW", "NCHW4c"), relay.layout_transform(w, "OIHW", "OIHW4i8o"),
        channels=16, kernel_size=(3, 3), padding=(1, 1), data_layout="NCHW4c",
        kernel_layout="OIHW4i8o", out_layout="NCHW8c")
    y = relay.nn.contrib_depthwise_conv2d_nchwc(
        y, relay.layout_transform(dw, "OIHW", "OIHW1i8o"), groups=16, channels=16,
        kernel_size=(3, 3), strides=(2, 2), data_layout="NCHW8c", kernel_layout="OIHW1i8o")
    y = relay.mean(relay.layout_transform(y, "NCHW8c", "NCHW"), axis=[2, 3])
    y = relay.nn.contrib_dense_pack(y, relay.layout_transform(dense_w, "NC", "NC16n"), "NC16n")
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w, dw, dense_w], y)))
    args = [RNG.uniform(-1, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in mod["main"].params]
    want = relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()
    model = to_onnx(mod)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), args)}
    np.testing.assert_allclose(session.run(None, feeds)[0], want, rtol=1e-4, atol=1e-5)
