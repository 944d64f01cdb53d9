"""Neural-network operators: relations, kernels against direct (loop) references, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import AttrsError, TypeRelationError
from relaypass.ir import Any, Op, OpPattern, TupleGetItem, TupleType
from relaypass.op import TupleWrapper

X, W, B, M, V = (relay.var(n) for n in "xwbmv")
rng = np.random.default_rng(3)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# --- direct references: loops over output positions, slow but obviously right ---------------


def conv2d_reference(x, w, strides, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    oh = (h + pt + pb - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd + pl + pr - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc, i, j in itertools.product(range(o), range(oh), range(ow)):
        g = oc // og
        y, x0 = i * strides[0], j * strides[1]
        patch = xp[:, g * cg:(g + 1) * cg, y:y + (kh - 1) * dilation[0] + 1:dilation[0],
                   x0:x0 + (kw - 1) * dilation[1] + 1:dilation[1]]
        out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out


def conv2d_transpose_reference(x, w, strides, padding, dilation, groups, output_padding):
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    pt, pl, pb, pr = padding
    full_h = (h - 1) * strides[0] + (kh - 1) * dilation[0] + 1 + output_padding[0]
    full_w = (wd - 1) * strides[1] + (kw - 1) * dilation[1] + 1 + output_padding[1]
    full = np.zeros((n, og * groups, full_h + pb, full_w + pr))
    cg = c // groups
    for ci, i, j, a, b in itertools.product(range(c), range(h), range(wd), range(kh), range(kw)):
        g = ci // cg
        y, z = i * strides[0] + a * dilation[0], j * strides[1] + b * dilation[1]
        full[:, g * og:(g + 1) * og, y, z] += x[:, ci, i, j, None] * w[ci, :, a, b]
    return full[:, :, pt:full_h - pb, pl:full_w - pr]


def pool2d_reference(x, kind, pool, strides, padding, dilation, ceil_mode, count_include_pad):
    n, c, h, w = x.shape
    pt, pl, pb, pr = padding
    ek = [(pool[i] - 1) * dilation[i] + 1 for i in range(2)]
    sizes = []
    for i, extent in enumerate((h + pt + pb, w + pl + pr)):
        room = extent - ek[i]
        sizes.append((-(-room // strides[i]) if ceil_mode else room // strides[i]) + 1)
    out = np.zeros((n, c, *sizes))
    for i, j in itertools.product(range(sizes[0]), range(sizes[1])):
        values, count = [], 0
        for a, b in itertools.product(range(pool[0]), range(pool[1])):
            y = i * strides[0] + a * dilation[0] - pt
            z = j * strides[1] + b * dilation[1] - pl
            inside = 0 <= y < h and 0 <= z < w
            in_padding = -pt <= y < h + pb and -pl <= z < w + pr
            if inside:
                values.append(x[:, :, y, z])
            if inside or (count_include_pad and in_padding):
                count += 1
        if kind == "max":
            # A window over padding only: the dtype's lowest value, TVM's pad value for max pooling.
            out[:, :, i, j] = np.max(values, axis=0) if values else np.finfo(x.dtype).min
        else:
            out[:, :, i, j] = np.sum(values, axis=0) / max(count, 1) if values else 0
    return out


# --- conv2d ---------------------------------------------------------------------------------


CONV_CASES = [
    # (data shape, weight shape, strides, padding, dilation, groups)
    ((2, 4, 7, 7), (6, 4, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((1, 4, 8, 9), (6, 2, 3, 3), (2, 1), (1, 2, 0, 1), (1, 2), 2),
    ((2, 3, 6, 6), (6, 1, 3, 3), (1, 1), (1, 1, 1, 1), (2, 2), 3),
    ((1, 2, 5, 5), (4, 2, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ((1, 4, 6, 7), (8, 1, 2, 3), (3, 2), (2, 0, 1, 3), (1, 1), 4),
]


@pytest.mark.parametrize("dshape, wshape, strides, padding, dilation, groups", CONV_CASES)
def test_conv2d_nchw_matches_direct_reference(dshape, wshape, strides, padding, dilation, groups):
    x, w = randn(*dshape), randn(*wshape)
    call = relay.nn.conv2d(X, W, strides=strides, padding=padding, dilation=dilation,
                           groups=groups, channels=wshape[0], kernel_size=wshape[2:])
    out = evaluate(call, x, w)
    np.testing.assert_allclose(out, conv2d_reference(x, w, strides, padding, dilation, groups),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel_layout, perm", [("HWIO", (2, 3, 1, 0)), ("OHWI", (0, 2, 3, 1))])
def test_conv2d_nhwc(kernel_layout, perm):
    x, w = randn(2, 4, 7, 6), randn(6, 2, 3, 3)
    want = conv2d_reference(x, w, (2, 1), (1, 1, 1, 1), (1, 1), 2)
    call = relay.nn.conv2d(X, W, strides=(2, 1), padding=1, groups=2, data_layout="NHWC",
                           kernel_layout=kernel_layout)
    out = evaluate(call, x.transpose(0, 2, 3, 1), w.transpose(perm))
    np.testing.assert_allclose(out, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
    mixed = relay.nn.conv2d(X, W, data_layout="NHWC", kernel_layout=kernel_layout,
                            out_layout="NCHW", strides=(2, 1), padding=1, groups=2)
    np.testing.assert_allclose(evaluate(mixed, x.transpose(0, 2, 3, 1), w.transpose(perm)), want,
                               rtol=1e-4, atol=1e-4)


def test_conv2d_constructor_normalizes_like_relay():
    call = relay.nn.conv2d(X, W, strides=2, padding=(1, 2), dilation=3, kernel_size=3)
    assert call.attrs.strides == (2, 2) and call.attrs.dilation == (3, 3)
    assert call.attrs.padding == (1, 2, 1, 2) and call.attrs.kernel_size == (3, 3)
    assert relay.nn.conv2d(X, W, padding=1).attrs.padding == (1, 1, 1, 1)
    assert call.attrs.type_key == "relay.attrs.Conv2DAttrs"
    assert list(call.attrs) == ["strides", "padding", "dilation", "groups", "channels",
                                "kernel_size", "data_layout", "kernel_layout", "out_layout",
                                "out_dtype"]
    with pytest.raises(AttrsError, match="padding must be an int or have 1, 2 or 4 values"):
        relay.nn.conv2d(X, W, padding=(1, 2, 3))


def test_conv2d_relation_types():
    call = relay.nn.conv2d(X, W, strides=2, padding=3)
    assert relation(call, T((1, 3, 224, 224)), T((64, 3, 7, 7))) == T((1, 64, 112, 112))
    assert relation(call, T((Any(), 3, Any(), 32)), T((8, 3, 3, 3))) == T((Any(), 8, Any(), 18))
    mixed = relay.nn.conv2d(X, W, out_dtype="int32")
    assert relation(mixed, T((1, 2, 4, 4), "int8"), T((3, 2, 3, 3), "int8")) == \
        T((1, 3, 2, 2), "int32")
    x = rng.integers(-100, 100, (1, 2, 4, 4)).astype("int8")
    w = rng.integers(-100, 100, (3, 2, 3, 3)).astype("int8")
    np.testing.assert_array_equal(
        evaluate(mixed, x, w),
        conv2d_reference(x.astype("int64"), w.astype("int64"), (1, 1), (0,) * 4, (1, 1), 1))


@pytest.mark.parametrize(
    "kwargs, dshape, wshape, message",
    [
        ({}, (1, 3, 8, 8), (4, 2, 3, 3), r"data has 3 input channels .* takes 2 per group x 1 "
                                         r"groups = 2"),
        ({"groups": 2}, (1, 4, 8, 8), (3, 2, 3, 3), "3 output channels do not divide into 2"),
        ({"channels": 5}, (1, 2, 8, 8), (4, 2, 3, 3), "attribute channels=5 but the weight gives 4"),
        ({"kernel_size": (5, 5)}, (1, 2, 8, 8), (4, 2, 3, 3), "kernel_size=\\(5, 5\\)"),
        ({}, (1, 2, 2, 8), (4, 2, 3, 3), "dilated kernel extent 3 along H is larger than the "
                                         "padded input extent 2"),
        ({"strides": (0, 1)}, (1, 2, 8, 8), (4, 2, 3, 3), "strides must hold values of at least 1"),
        ({"data_layout": "NCHW4c"}, (1, 2, 8, 8), (4, 2, 3, 3), r"data must have rank 5, got "
                                                                r"shape \(1, 2, 8, 8\)"),
        ({"data_layout": "NCDW"}, (1, 2, 8, 8), (4, 2, 3, 3), "data_layout 'NCDW' is not supported"),
        ({"kernel_layout": "OIHX"}, (1, 2, 8, 8), (4, 2, 3, 3), "kernel_layout 'OIHX'"),
        ({"out_dtype": "float31"}, (1, 2, 8, 8), (4, 2, 3, 3), "out_dtype is not a supported"),
        ({}, (1, 2, 8), (4, 2, 3, 3), r"data must have rank 4, got shape \(1, 2, 8\)"),
    ],
)
def test_conv2d_errors_name_the_operator(kwargs, dshape, wshape, message):
    with pytest.raises(TypeRelationError, match=f"nn.conv2d: .*{message}"):
        relation(relay.nn.conv2d(X, W, **kwargs), T(dshape), T(wshape))


def test_conv2d_data_and_weight_dtypes_may_differ_as_in_relay():
    # Relay's relation takes the result dtype from out_dtype, else the data's (uint8 data with
    # int8 weights is its quantized case).
    assert relation(relay.nn.conv2d(X, W), T((1, 2, 4, 4)), T((2, 2, 1, 1), "float16")) == \
        T((1, 2, 4, 4))
    mixed = relay.nn.conv2d(X, W, out_dtype="int32")
    x = rng.integers(0, 255, (1, 2, 4, 4)).astype("uint8")
    w = rng.integers(-100, 100, (3, 2, 3, 3)).astype("int8")
    np.testing.assert_array_equal(
        evaluate(mixed, x, w),
        conv2d_reference(x.astype("int64"), w.astype("int64"), (1, 1), (0,) * 4, (1, 1), 1))


# --- conv2d_transpose -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dshape, wshape, strides, padding, dilation, groups, output_padding",
    [
        ((2, 4, 5, 5), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0, 0)),
        ((1, 4, 4, 5), (4, 2, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, (1, 0)),
        ((1, 4, 3, 4), (4, 3, 3, 2), (2, 3), (2, 0, 1, 1), (2, 1), 2, (1, 2)),
        ((2, 6, 3, 3), (6, 1, 2, 2), (1, 2), (0, 1, 0, 0), (1, 1), 6, (0, 1)),
    ],
)
def test_conv2d_transpose_matches_direct_reference(dshape, wshape, strides, padding, dilation,
                                                   groups, output_padding):
    x, w = randn(*dshape), randn(*wshape)
    call = relay.nn.conv2d_transpose(X, W, strides=strides, padding=padding, dilation=dilation,
                                     groups=groups, output_padding=output_padding)
    want = conv2d_transpose_reference(x, w, strides, padding, dilation, groups, output_padding)
    np.testing.assert_allclose(evaluate(call, x, w), want, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_relation_and_errors():
    call = relay.nn.conv2d_transpose(X, W, strides=2, padding=1, output_padding=1, channels=6,
                                     groups=2)
    assert call.attrs.kernel_layout == "IOHW"
    assert relation(call, T((1, 4, 8, 8)), T((4, 3, 3, 3))) == T((1, 6, 16, 16))
    assert relation(call, T((1, 4, Any(), 8)), T((4, 3, 3, 3))) == T((1, 6, Any(), 16))
    with pytest.raises(TypeRelationError, match="nn.conv2d_transpose: data has 5 input channels"):
        relation(call, T((1, 5, 8, 8)), T((4, 3, 3, 3)))
    with pytest.raises(TypeRelationError, match="attribute channels=6 but the weight gives 8"):
        relation(call, T((1, 4, 8, 8)), T((4, 4, 3, 3)))
    x, w = randn(1, 2, 3, 3), randn(3, 3, 2, 2)
    nhwc = relay.nn.conv2d_transpose(X, W, data_layout="NHWC", kernel_layout="HWIO")
    want = conv2d_transpose_reference(x, w.transpose(2, 3, 0, 1), (1, 1), (0,) * 4, (1, 1), 1,
                                      (0, 0))
    np.testing.assert_allclose(evaluate(nhwc, x.transpose(0, 2, 3, 1), w),
                               want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


# --- pooling --------------------------------------------------------------------------------


POOL_CASES = [
    # pool, strides, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True),
    ((3, 2), (2, 3), (1, 0, 2, 1), (1, 1), True),
    ((2, 2), (1, 1), (0, 0, 0, 0), (2, 2), False),
    ((3, 3), (3, 3), (1, 1, 0, 0), (1, 2), True),
]


@pytest.mark.parametrize("pool, strides, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool2d(pool, strides, padding, dilation, ceil_mode):
    x = randn(2, 3, 7, 8)
    call = relay.nn.max_pool2d(X, pool, strides, dilation, padding, ceil_mode=ceil_mode)
    want = pool2d_reference(x, "max", pool, strides, padding, dilation, ceil_mode, False)
    np.testing.assert_allclose(evaluate(call, x), want, rtol=1e-6)


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("pool, strides, padding, dilation, ceil_mode", POOL_CASES)
def test_avg_pool2d(pool, strides, padding, dilation, ceil_mode, count_include_pad):
    x = randn(2, 3, 7, 8)
    call = relay.nn.avg_pool2d(X, pool, strides, dilation, padding, ceil_mode=ceil_mode,
                               count_include_pad=count_include_pad)
    want = pool2d_reference(x, "avg", pool, strides, padding, dilation, ceil_mode,
                            count_include_pad)
    np.testing.assert_allclose(evaluate(call, x), want, rtol=1e-5, atol=1e-6)


def test_pooling_in_nhwc_and_blocked_layouts():
    x = randn(1, 4, 6, 6)
    want = pool2d_reference(x, "max", (2, 2), (2, 2), (0,) * 4, (1, 1), False, False)
    nhwc = relay.nn.max_pool2d(X, 2, 2, layout="NHWC")
    np.testing.assert_allclose(evaluate(nhwc, x.transpose(0, 2, 3, 1)), want.transpose(0, 2, 3, 1))
    blocked = relay.nn.avg_pool2d(X, 2, 2, layout="NCHW2c")
    assert relation(blocked, T((1, 2, 6, 6, 2))) == T((1, 2, 3, 3, 2))
    assert relation(relay.nn.max_pool2d(X, 3, 1), T((Any(), 3, 7, Any()))) == \
        T((Any(), 3, 5, Any()))


def test_pooling_errors():
    with pytest.raises(TypeRelationError, match="nn.max_pool2d: the dilated window extent 5 is "
                                                "larger than the padded input extent 4 along H"):
        relation(relay.nn.max_pool2d(X, 5), T((1, 1, 4, 9)))
    with pytest.raises(TypeRelationError, match="nn.avg_pool2d: layout 'NCDW' must have unsplit "
                                                "H and W axes"):
        relation(relay.nn.avg_pool2d(X, layout="NCDW"), T((1, 1, 4, 4)))
    with pytest.raises(TypeRelationError, match="data of rank 3 does not match layout 'NCHW'"):
        relation(relay.nn.global_avg_pool2d(X), T((1, 4, 4)))


def test_global_pooling():
    x = randn(2, 3, 4, 5)
    np.testing.assert_allclose(evaluate(relay.nn.global_avg_pool2d(X), x),
                               x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(evaluate(relay.nn.global_max_pool2d(X, layout="NHWC"), x),
                                  x.max(axis=(1, 2), keepdims=True))
    assert relation(relay.nn.global_avg_pool2d(X), T((Any(), 3, Any(), Any()))) == \
        T((Any(), 3, 1, 1))


@pytest.mark.parametrize("insize, outsize", [((7, 5), (3, 2)), ((4, 4), (4, 4)), ((3, 5), (5, 7)),
                                              ((6, 6), (1, 1))])
def test_adaptive_avg_pool2d(insize, outsize):
    x = randn(2, 3, *insize)
    out = evaluate(relay.nn.adaptive_avg_pool2d(X, outsize), x)
    want = np.zeros((2, 3, *outsize))
    for i, j in itertools.product(range(outsize[0]), range(outsize[1])):
        h0, h1 = i * insize[0] // outsize[0], -(-(i + 1) * insize[0] // outsize[0])
        w0, w1 = j * insize[1] // outsize[1], -(-(j + 1) * insize[1] // outsize[1])
        want[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_adaptive_output_size_forms():
    assert relation(relay.nn.adaptive_avg_pool2d(X, 3), T((1, 2, 8, 8))) == T((1, 2, 3, 3))
    assert relation(relay.nn.adaptive_avg_pool2d(X), T((1, 2, 8, 9))) == T((1, 2, 8, 9))
    nhwc = relay.nn.adaptive_avg_pool2d(X, (2, 1), layout="NHWC")
    assert relation(nhwc, T((1, 8, 9, 2))) == T((1, 2, 1, 2))


# --- normalization --------------------------------------------------------------------------


def test_batch_norm_returns_three_fields():
    bn = relay.nn.batch_norm(X, W, B, M, V, axis=-1, epsilon=1e-3)
    assert isinstance(bn, TupleWrapper) and len(bn) == 3
    assert isinstance(bn[0], TupleGetItem)
    types = [T((2, 5, 3)), T((3,)), T((3,)), T((3,)), T((3,))]
    assert relation(bn, *types) == TupleType([T((2, 5, 3)), T((3,)), T((3,))])
    x, g, b, m = randn(2, 5, 3), randn(3), randn(3), randn(3)
    v = np.abs(randn(3)) + 0.1
    out, mean, var = evaluate(bn, x, g, b, m, v)
    np.testing.assert_allclose(out, (x - m) / np.sqrt(v + 1e-3) * g + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(mean, m)
    np.testing.assert_array_equal(var, v)
    plain = relay.nn.batch_norm(X, W, B, M, V, center=False, scale=False)
    out = evaluate(plain, randn(2, 3), g, b, m, v)[0]
    assert out.shape == (2, 3)


def test_batch_norm_errors():
    bn = relay.nn.batch_norm(X, W, B, M, V)
    good = T((3,))
    with pytest.raises(TypeRelationError, match=r"nn.batch_norm: moving_var must have shape "
                                                r"\(3,\) to match axis 1 .* got \(4,\)"):
        relation(bn, T((2, 3)), good, good, good, T((4,)))
    with pytest.raises(TypeRelationError, match="nn.batch_norm: axis 2 is out of range"):
        relation(relay.nn.batch_norm(X, W, B, M, V, axis=2), T((2, 3)), good, good, good, good)
    with pytest.raises(TypeRelationError, match="beta has dtype float16"):
        relation(bn, T((2, 3)), good, T((3,), "float16"), good, good)


def test_layer_norm():
    x, g, b = randn(2, 3, 4), randn(3), randn(3)
    out = evaluate(relay.nn.layer_norm(X, W, B, axis=1, epsilon=1e-4), x, g, b)
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-4) * g[:, None] + b[:, None]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeRelationError, match="nn.layer_norm: gamma must have shape \\(4,\\)"):
        relation(relay.nn.layer_norm(X, W, B), T((2, 4)), T((3,)), T((4,)))


@pytest.mark.parametrize("size", [1, 3, 4, 5])
def test_lrn(size):
    x = randn(2, 6, 3, 2)
    out = evaluate(relay.nn.lrn(X, size=size, alpha=0.3, beta=0.6, bias=1.5), x)
    want = np.empty_like(x, dtype="float64")
    for c in range(6):
        lo, hi = max(c - size // 2, 0), min(c - size // 2 + size, 6)
        sq = (x[:, lo:hi].astype("float64") ** 2).sum(axis=1)
        want[:, c] = x[:, c] / (1.5 + 0.3 * sq / size) ** 0.6
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_attribute_values_are_checked():
    with pytest.raises(TypeRelationError, match="nn.lrn: attribute size must be at least 1"):
        relation(relay.nn.lrn(X, size=0), T((1, 3, 2, 2)))
    bad_alpha = relay.nn.leaky_relu(X).attrs.with_fields(alpha="0.1")
    with pytest.raises(TypeRelationError, match="nn.leaky_relu: attribute alpha must be a number"):
        relation(relay.Call(Op.get("nn.leaky_relu"), [X], bad_alpha), T((2,)))
    with pytest.raises(TypeRelationError, match="nn.layer_norm: data must have a floating-point"):
        relation(relay.nn.layer_norm(X, W, B), T((2, 3), "int32"), T((3,), "int32"),
                 T((3,), "int32"))
    with pytest.raises(TypeRelationError, match="nn.max_pool2d: attribute ceil_mode must be a "
                                                "boolean"):
        call = relay.nn.max_pool2d(X)
        relation(relay.Call(call.op, [X], call.attrs.with_fields(ceil_mode="yes")),
                 T((1, 1, 2, 2)))


# --- linear ---------------------------------------------------------------------------------


def test_dense():
    x, w = randn(2, 3, 4), randn(5, 4)
    np.testing.assert_allclose(evaluate(relay.nn.dense(X, W, units=5), x, w), x @ w.T, rtol=1e-5)
    assert relation(relay.nn.dense(X, W), T((Any(), 4)), T((5, 4))) == T((Any(), 5))
    with pytest.raises(TypeRelationError, match=r"nn.dense: shapes \(2, 4\) and \(5, 3\) do not "
                                                r"agree on the reduced dimension \(4 vs 3\)"):
        relation(relay.nn.dense(X, W), T((2, 4)), T((5, 3)))
    with pytest.raises(TypeRelationError, match="attribute units=6 but the weight"):
        relation(relay.nn.dense(X, W, units=6), T((2, 4)), T((5, 4)))
    ints = evaluate(relay.nn.dense(X, W, out_dtype="int32"), np.ones((1, 3), "int8") * 100,
                    np.ones((2, 3), "int8") * 100)
    np.testing.assert_array_equal(ints, np.full((1, 2), 30000))


def test_matmul_and_its_dense_form():
    assert relay.nn.matmul(X, W, transpose_b=True).op.name == "nn.dense"
    x, w = randn(4, 3), randn(4, 5)
    call = relay.nn.matmul(X, W, transpose_a=True)
    assert call.op.name == "nn.matmul"
    np.testing.assert_allclose(evaluate(call, x, w), x.T @ w, rtol=1e-5)
    both = relay.nn.matmul(X, W, transpose_a=True, transpose_b=True)
    np.testing.assert_allclose(evaluate(both, x, w.T), x.T @ w, rtol=1e-5)
    with pytest.raises(TypeRelationError, match="nn.matmul: the weight must have rank 2"):
        relation(relay.nn.matmul(X, W), T((2, 3)), T((3,)))


def test_batch_matmul():
    a, b = randn(1, 2, 3), randn(4, 5, 3)
    out = evaluate(relay.nn.batch_matmul(X, W), a, b)
    np.testing.assert_allclose(out, a @ b.transpose(0, 2, 1), rtol=1e-5)
    nn_form = relay.nn.batch_matmul(X, W, transpose_b=False)
    np.testing.assert_allclose(evaluate(nn_form, a, b.transpose(0, 2, 1)), out, rtol=1e-5)
    assert relation(relay.nn.batch_matmul(X, W), T((Any(), 2, 3)), T((1, 5, 3))) == \
        T((Any(), 2, 5))
    with pytest.raises(TypeRelationError, match="batch dimensions differ"):
        relation(relay.nn.batch_matmul(X, W), T((2, 2, 3)), T((3, 5, 3)))
    with pytest.raises(TypeRelationError, match="reduced dimension \\(3 vs 4\\) with "
                                                "transpose_a=False, transpose_b=True"):
        relation(relay.nn.batch_matmul(X, W), T((2, 2, 3)), T((2, 5, 4)))


def test_bias_add():
    x, b = randn(2, 3, 4), randn(3)
    np.testing.assert_allclose(evaluate(relay.nn.bias_add(X, B), x, b), x + b[:, None])
    np.testing.assert_allclose(evaluate(relay.nn.bias_add(X, B, axis=-1), x, randn(4)).shape,
                               (2, 3, 4))
    with pytest.raises(TypeRelationError, match=r"nn.bias_add: bias must have shape \(3,\)"):
        relation(relay.nn.bias_add(X, B), T((2, 3, 4)), T((4,)))
    with pytest.raises(TypeRelationError, match="nn.bias_add: axis 3 is out of range"):
        relation(relay.nn.bias_add(X, B, axis=3), T((2, 3, 4)), T((4,)))


# --- activations ----------------------------------------------------------------------------


def test_relu_family():
    x = randn(2, 3, 4)
    np.testing.assert_array_equal(evaluate(relay.nn.relu(X), x), np.maximum(x, 0))
    np.testing.assert_allclose(evaluate(relay.nn.leaky_relu(X, 0.2), x),
                               np.where(x > 0, x, 0.2 * x), rtol=1e-6)
    alpha = randn(3)
    np.testing.assert_allclose(evaluate(relay.nn.prelu(X, W), x, alpha),
                               np.where(x > 0, x, alpha[:, None] * x), rtol=1e-6)
    with pytest.raises(TypeRelationError, match=r"nn.prelu: alpha must have shape \(4,\)"):
        relation(relay.nn.prelu(X, W, axis=-1), T((2, 3, 4)), T((3,)))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax(axis):
    x = randn(3, 4) * 20
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(evaluate(relay.nn.softmax(X, axis), x), want, rtol=1e-5,
                               atol=1e-7)
    # The reference in float64 from the start: the log of a float32 softmax loses the
    # entries that underflow towards float32's denormals (about e**-103).
    x64 = x.astype("float64")
    shifted = x64 - x64.max(axis=axis, keepdims=True)
    log_want = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(evaluate(relay.nn.log_softmax(X, axis), x), log_want,
                               rtol=1e-4, atol=1e-5)


def test_softmax_errors():
    with pytest.raises(TypeRelationError, match="nn.softmax: axis 2 is out of range for a tensor "
                                                "of rank 2"):
        relation(relay.nn.softmax(X, 2), T((3, 4)))
    with pytest.raises(TypeRelationError, match="nn.log_softmax: data must have a floating-point "
                                                "dtype, got int32"):
        relation(relay.nn.log_softmax(X), T((3, 4), "int32"))


def test_dropout_is_identity_at_inference_and_a_pair():
    d = relay.nn.dropout(X, rate=0.3)
    assert isinstance(d, TupleGetItem) and d.index == 0
    raw = relay.nn.dropout_raw(X, 0.3)
    assert raw.op.name == "nn.dropout" and raw.attrs.rate == 0.3
    x = randn(2, 3)
    out, mask = evaluate(raw, x)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(mask, np.ones_like(x))
    assert relation(raw, T((Any(), 3))) == TupleType([T((Any(), 3)), T((Any(), 3))])
    with pytest.raises(TypeRelationError, match="nn.dropout: rate must be between 0 and 1"):
        relation(relay.nn.dropout_raw(X, 1.5), T((2,)))


# --- pad, upsampling, depth_to_space, batch_flatten -----------------------------------------


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad(mode):
    x = randn(3, 4)
    width = ((1, 2), (0, 3))
    call = relay.nn.pad(X, width, pad_value=1.5, pad_mode=mode)
    out = evaluate(call, x, np.array(1.5, "float32"))
    kwargs = {"constant_values": 1.5} if mode == "constant" else {}
    np.testing.assert_array_equal(out, np.pad(x, width, mode=mode, **kwargs))


def test_pad_relation_and_errors():
    call = relay.nn.pad(X, ((1, 1), (2, 0)))
    assert call.args[1].data.numpy().dtype == np.int32
    assert relation(call, T((Any(), 3)), T((), "int32")) == T((Any(), 5))
    with pytest.raises(TypeRelationError, match="nn.pad: pad_width has 2 pairs but data has rank 3"):
        relation(call, T((1, 2, 3)), T((), "int32"))
    with pytest.raises(TypeRelationError, match="reflect padding \\(3, 0\\) of axis 0 must be "
                                                "smaller than its extent 3"):
        relation(relay.nn.pad(X, ((3, 0),), pad_mode="reflect"), T((3,)), T(()))
    with pytest.raises(TypeRelationError, match="pad_width must not be negative"):
        relation(relay.nn.pad(X, ((-1, 0),)), T((3,)), T(()))


def _resize_reference(x, oh, ow, method, align):
    """Per-pixel sampling, as TVM's resize2d describes it."""
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (oh, ow))

    def coord(o, n_in, n_out):
        if align:
            return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        return o * n_in / n_out

    def cubic(t):
        a = -0.5
        return [a * (t**3 - 2 * t**2 + t), (a + 2) * t**3 - (a + 3) * t**2 + 1,
                -(a + 2) * t**3 + (2 * a + 3) * t**2 - a * t, -a * t**3 + a * t**2]

    for i, j in itertools.product(range(oh), range(ow)):
        y, z = coord(i, h, oh), coord(j, w, ow)
        if method == "nearest_neighbor":
            yi = int(np.rint(y)) if align else int(np.floor(y + 1e-5))
            zi = int(np.rint(z)) if align else int(np.floor(z + 1e-5))
            out[:, :, i, j] = x[:, :, min(yi, h - 1), min(zi, w - 1)]
            continue
        y0, z0 = int(np.floor(y)), int(np.floor(z))
        if method == "bilinear":
            taps_y, wy = [y0, y0 + 1], [1 - (y - y0), y - y0]
            taps_z, wz = [z0, z0 + 1], [1 - (z - z0), z - z0]
        else:
            taps_y, wy = [y0 - 1, y0, y0 + 1, y0 + 2], cubic(y - y0)
            taps_z, wz = [z0 - 1, z0, z0 + 1, z0 + 2], cubic(z - z0)
        for ty, a in zip(taps_y, wy):
            for tz, b in zip(taps_z, wz):
                out[:, :, i, j] += a * b * x[:, :, min(max(ty, 0), h - 1), min(max(tz, 0), w - 1)]
    return out


@pytest.mark.parametrize("method", ["nearest_neighbor", "bilinear", "bicubic"])
@pytest.mark.parametrize("align", [False, True])
def test_upsampling(method, align):
    x = randn(1, 2, 3, 4)
    call = relay.nn.upsampling(X, 2, 1.5, method=method, align_corners=align)
    out = evaluate(call, x)
    assert out.shape == (1, 2, 6, 6)
    np.testing.assert_allclose(out, _resize_reference(x, 6, 6, method, align), rtol=1e-5,
                               atol=1e-6)


def test_upsampling_nhwc_and_errors():
    x = randn(1, 3, 4, 2)
    out = evaluate(relay.nn.upsampling(X, 2, 2, layout="NHWC"), x)
    np.testing.assert_array_equal(out, x.repeat(2, axis=1).repeat(2, axis=2))
    with pytest.raises(TypeRelationError, match="method must be one of"):
        relation(relay.nn.upsampling(X, 2, 2, method="area"), T((1, 1, 2, 2)))
    with pytest.raises(TypeRelationError, match="scale_h must be positive"):
        relation(relay.nn.upsampling(X, 0, 2), T((1, 1, 2, 2)))


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    x = randn(2, 8, 2, 3)
    out = evaluate(relay.nn.depth_to_space(X, 2, mode=mode), x)
    want = np.zeros((2, 2, 4, 6), "float32")
    for c, i, j, a, b in itertools.product(range(2), range(2), range(3), range(2), range(2)):
        src = (a * 2 + b) * 2 + c if mode == "DCR" else c * 4 + a * 2 + b
        want[:, c, i * 2 + a, j * 2 + b] = x[:, src, i, j]
    np.testing.assert_array_equal(out, want)
    nhwc = evaluate(relay.nn.depth_to_space(X, 2, layout="NHWC", mode=mode),
                    x.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(nhwc, want.transpose(0, 2, 3, 1))
    with pytest.raises(TypeRelationError, match="6 channels do not divide into blocks of 2x2"):
        relation(relay.nn.depth_to_space(X, 2), T((1, 6, 2, 2)))


def test_batch_flatten():
    x = randn(2, 3, 4)
    np.testing.assert_array_equal(evaluate(relay.nn.batch_flatten(X), x), x.reshape(2, 12))
    assert evaluate(relay.nn.batch_flatten(X), randn(0, 3)).shape == (0, 3)
    assert relation(relay.nn.batch_flatten(X), T((Any(), 3, 4))) == T((Any(), 12))
    assert relation(relay.nn.batch_flatten(X), T((2, Any(), 4))) == T((2, Any()))
    with pytest.raises(TypeRelationError, match="cannot flatten a scalar"):
        relation(relay.nn.batch_flatten(X), T(()))


def test_nn_patterns_and_flags():
    fusable = ["nn.conv2d", "nn.conv2d_transpose", "nn.dense", "nn.matmul", "nn.batch_matmul",
               "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d", "nn.global_max_pool2d",
               "nn.adaptive_avg_pool2d", "nn.softmax", "nn.log_softmax", "nn.batch_norm"]
    for name in fusable:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE, name
    for name in ["nn.layer_norm", "nn.lrn", "nn.dropout"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.OPAQUE, name
    for name in ["nn.batch_flatten", "nn.pad", "nn.upsampling", "nn.depth_to_space"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.INJECTIVE, name
    assert Op.get("nn.relu").get_attr("TOpPattern") == OpPattern.ELEMWISE
    assert Op.get("nn.bias_add").get_attr("TOpPattern") == OpPattern.BROADCAST
    assert Op.get("nn.dropout").get_attr("TOpIsStateful") is True
    assert Op.get("nn.conv2d").get_attr("TOpIsStateful") is False


def test_instance_norm_matches_loop():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4, 3)).astype("float32")
    g, b = rng.standard_normal(3).astype("float32"), rng.standard_normal(3).astype("float32")
    X, G, B = (relay.var(n) for n in "xgb")
    out = evaluate(relay.nn.instance_norm(X, G, B, axis=3, epsilon=1e-3), x, g, b)
    expected = np.empty_like(x)
    for n in range(2):
        for c in range(3):
            vals = [float(x[n, i, j, c]) for i in range(5) for j in range(4)]
            mean = sum(vals) / len(vals)
            var = sum((v - mean) ** 2 for v in vals) / len(vals)
            for i in range(5):
                for j in range(4):
                    expected[n, i, j, c] = (x[n, i, j, c] - mean) / (var + 1e-3) ** 0.5 * g[c] + b[c]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    call = relay.nn.instance_norm(X, G, B)
    assert call.op.get_attr("TOpPattern") == OpPattern.OPAQUE
    with pytest.raises(TypeRelationError, match="nn.instance_norm: gamma must have shape \\(5,\\)"):
        relation(call, T((2, 5, 4)), T((4,)), T((5,)))
    with pytest.raises(TypeRelationError, match="nn.instance_norm: axis 0 is the batch axis"):
        relation(relay.nn.instance_norm(X, G, B, axis=0), T((2, 5, 4)), T((2,)), T((2,)))


@pytest.mark.parametrize("axis", [[1], [-1, 0], None])
def test_l2_normalize_matches_loop(axis):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((3, 4)) * 0.1).astype("float32")
    out = evaluate(relay.nn.l2_normalize(relay.var("x"), eps=0.05, axis=axis), x)
    summed = [a % 2 for a in axis] if axis else [0, 1]
    expected = np.empty_like(x)
    for i in range(3):
        for j in range(4):
            total = sum(float(x[p, q]) ** 2 for p in range(3) for q in range(4)
                        if all((p, q)[a] == (i, j)[a] for a in range(2) if a not in summed))
            expected[i, j] = x[i, j] / max(total, 0.05) ** 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_l2_normalize_relation_and_pattern():
    call = relay.nn.l2_normalize(relay.var("x"), eps=1e-3, axis=[2])
    assert call.op.get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
    assert relation(call, T((2, 3, 4))) == T((2, 3, 4))
    with pytest.raises(TypeRelationError, match="nn.l2_normalize: .*axis"):
        relation(call, T((2, 3)))
    with pytest.raises(TypeRelationError, match="nn.l2_normalize: data must have a floating"):
        relation(call, T((2, 3, 4), "int32"))


def _deformable_loop(data, offset, weight, strides, pads, dilation, dgroups, groups):
    """Each output point summed tap by tap, each tap read like TVM's deformable kernel."""
    n, c, h, w = data.shape
    o, cg, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    out = np.zeros((n, o, oh, ow))

    def read(b, ch, y, x):
        if y < 0 or x < 0 or y >= h or x >= w:
            return 0.0
        y0, x0 = int(np.floor(y)), int(np.floor(x))
        y1, x1 = min(int(np.ceil(y)), h - 1), min(int(np.ceil(x)), w - 1)
        ly, lx = y - y0, x - x0
        p = data[b, ch]
        return ((p[y0, x0] * (1 - lx) + p[y0, x1] * lx) * (1 - ly)
                + (p[y1, x0] * (1 - lx) + p[y1, x1] * lx) * ly)

    for b, oc, y, x in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // (o // groups)
        for ci in range(cg):
            ch = g * cg + ci
            dg = ch // (c // dgroups)
            for i, j in itertools.product(range(kh), range(kw)):
                base = dg * kh * kw * 2 + (i * kw + j) * 2
                yy = y * strides[0] - pads[0] + i * dilation[0] + offset[b, base, y, x]
                xx = x * strides[1] - pads[1] + j * dilation[1] + offset[b, base + 1, y, x]
                out[b, oc, y, x] += weight[oc, ci, i, j] * read(b, ch, float(yy), float(xx))
    return out


@pytest.mark.parametrize("strides, padding, dilation, dgroups, groups", [
    ((1, 1), (1, 1), (1, 1), 1, 1),
    ((2, 1), (1, 0, 0, 2), (1, 2), 2, 1),
    ((1, 1), (0, 0), (1, 1), 2, 2),
])
def test_deformable_conv2d_matches_loop(strides, padding, dilation, dgroups, groups):
    rng = np.random.default_rng(5)
    data = rng.standard_normal((2, 4, 6, 5)).astype("float32")
    D, OFF, W = relay.var("d"), relay.var("o"), relay.var("w")
    call = relay.nn.deformable_conv2d(D, OFF, W, strides=strides, padding=padding,
                                      dilation=dilation, deformable_groups=dgroups,
                                      groups=groups, channels=4, kernel_size=(3, 2))
    arg_types = call.op.get_attr("FInferArgTypes")([T(data.shape), None, None], call.attrs)
    offset = (rng.standard_normal([int(d) for d in arg_types[1].shape]) * 1.5).astype("float32")
    weight = rng.standard_normal([int(d) for d in arg_types[2].shape]).astype("float32")
    out = evaluate(call, data, offset, weight)
    pads = padding if len(padding) == 4 else (*padding, *padding)
    expected = _deformable_loop(data, offset, weight, strides, pads, dilation, dgroups, groups)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    nhwc = relay.nn.deformable_conv2d(D, OFF, W, strides=strides, padding=padding,
                                      dilation=dilation, deformable_groups=dgroups, groups=groups,
                                      channels=4, kernel_size=(3, 2), data_layout="NHWC",
                                      kernel_layout="HWIO")
    got = evaluate(nhwc, data.transpose(0, 2, 3, 1), offset.transpose(0, 2, 3, 1),
                   weight.transpose(2, 3, 1, 0))
    np.testing.assert_allclose(got, out.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_deformable_conv2d_relation_and_errors():
    D, OFF, W = relay.var("d"), relay.var("o"), relay.var("w")
    call = relay.nn.deformable_conv2d(D, OFF, W, channels=8, kernel_size=(3, 3), padding=(1, 1))
    assert call.op.get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
    assert relation(call, T((1, 4, 5, 5)), T((1, 18, 5, 5)), T((8, 4, 3, 3))) == T((1, 8, 5, 5))
    with pytest.raises(TypeRelationError, match="nn.deformable_conv2d: offset must have shape"):
        relation(call, T((1, 4, 5, 5)), T((1, 9, 5, 5)), T((8, 4, 3, 3)))
    bad = relay.nn.deformable_conv2d(D, OFF, W, channels=8, deformable_groups=3)
    with pytest.raises(TypeRelationError, match="deformable_groups=3 does not divide the 4"):
        relation(bad, T((1, 4, 5, 5)), T((1, 54, 3, 3)), T((8, 4, 3, 3)))
    odd = relay.nn.deformable_conv2d(D, OFF, W, channels=8, data_layout="NHWC")
    with pytest.raises(TypeRelationError, match="nn.deformable_conv2d: attribute kernel_layout"):
        relation(odd, T((1, 5, 5, 4)), T((1, 3, 3, 18)), T((8, 4, 3, 3)))


def test_new_normalizations_and_deformable_conv_round_trip_as_text():
    x, g, b = relay.var("x", shape=(1, 4, 6, 6)), relay.var("g"), relay.var("b")
    for call in (relay.nn.instance_norm(x, g, b, axis=1, epsilon=1e-3, center=False),
                 relay.nn.l2_normalize(x, 1e-3, axis=[1, 3]), relay.nn.l2_normalize(x, 1e-3),
                 relay.nn.deformable_conv2d(x, relay.var("o"), relay.var("w"), channels=8,
                                            padding=(1, 1), deformable_groups=2)):
        assert_text_round_trip(call)
