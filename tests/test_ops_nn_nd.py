"""The 1-, 2- and 3-D operator families: convolutions and their transposes, pools, adaptive
and global pools, dilate and upsampling.

Each kernel is checked against a direct reference written as loops over output positions
(slow but obviously right), in every rank, and in the layouts Relay accepts; each relation
against Relay's extents and its errors; each operator for its attributes (Relay's type key,
field order and defaults), its fusion pattern and the text round trip.
"""

from __future__ import annotations

import importlib
import itertools
import math

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import AttrsError, TypeRelationError
from relaypass.ir import Any, IRModule, Op, OpPattern
from relaypass.transform import get_pass

X, W = relay.var("x"), relay.var("w")
rng = np.random.default_rng(11)
SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def positions(shape):
    return itertools.product(*map(range, shape))


# --- direct references ------------------------------------------------------------------------


def conv_reference(x, w, strides, padding, dilation, groups):
    """Each output is the dot product of its (strided, dilated) window with one filter."""
    nd = x.ndim - 2
    n, c, *size = x.shape
    o, cg, *kernel = w.shape
    pads = list(zip(padding[:nd], padding[nd:]))
    xp = np.pad(x.astype("float64"), [(0, 0), (0, 0), *pads])
    outs = [(size[i] + sum(pads[i]) - (kernel[i] - 1) * dilation[i] - 1) // strides[i] + 1
            for i in range(nd)]
    out = np.zeros((n, o, *outs))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for pos in positions(outs):
            for tap in positions(kernel):
                at = tuple(p * s + t * d for p, t, s, d in zip(pos, tap, strides, dilation))
                patch = xp[(slice(None), slice(g * cg, (g + 1) * cg), *at)]
                out[(slice(None), oc, *pos)] += patch @ w[(oc, slice(None), *tap)]
    return out


def conv_transpose_reference(x, w, strides, padding, dilation, groups, output_padding):
    """Each input element scatters its product with the filter taps into the output."""
    nd = x.ndim - 2
    n, c, *size = x.shape
    _, og, *kernel = w.shape
    full = [(size[i] - 1) * strides[i] + (kernel[i] - 1) * dilation[i] + 1 + output_padding[i]
            for i in range(nd)]
    buf = np.zeros((n, og * groups, *full))
    cg = c // groups
    for ci in range(c):
        g = ci // cg
        for pos in positions(size):
            for tap in positions(kernel):
                at = tuple(p * s + t * d for p, t, s, d in zip(pos, tap, strides, dilation))
                buf[(slice(None), slice(g * og, (g + 1) * og), *at)] += (
                    x[(slice(None), ci, *pos)][:, None] * w[(ci, slice(None), *tap)])
    return buf[(slice(None), slice(None),
                *(slice(padding[i], full[i] - padding[nd + i]) for i in range(nd)))]


def pool_reference(x, kind, pool, strides, padding, dilation, ceil_mode, count_include_pad):
    """Max or average of each window; a window over padding only gives the dtype's lowest value
    (max, TVM's pad value) or 0 (average)."""
    nd = x.ndim - 2
    size = x.shape[2:]
    outs = []
    for i in range(nd):
        room = size[i] + padding[i] + padding[nd + i] - (pool[i] - 1) * dilation[i] - 1
        outs.append((-(-room // strides[i]) if ceil_mode else room // strides[i]) + 1)
    out = np.zeros(x.shape[:2] + tuple(outs))
    for pos in positions(outs):
        values, count = [], 0
        for tap in positions(pool):
            at = [p * s + t * d - padding[i]
                  for i, (p, t, s, d) in enumerate(zip(pos, tap, strides, dilation))]
            inside = all(0 <= a < size[i] for i, a in enumerate(at))
            in_padding = all(-padding[i] <= a < size[i] + padding[nd + i] for i, a in enumerate(at))
            if inside:
                values.append(x[(slice(None), slice(None), *at)])
            if inside or (count_include_pad and in_padding):
                count += 1
        index = (slice(None), slice(None), *pos)
        if kind == "max":
            out[index] = np.max(values, axis=0) if values else np.finfo(x.dtype).min
        else:
            out[index] = np.sum(values, axis=0) / max(count, 1) if values else 0
    return out


def adaptive_reference(x, kind, outs):
    """Window ``i`` of an axis of extent n pooled to m: floor(i n / m) to ceil((i + 1) n / m)."""
    size = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for pos in positions(outs):
        box = tuple(slice(p * n // m, -(-(p + 1) * n // m)) for p, n, m in zip(pos, size, outs))
        window = x[(slice(None), slice(None), *box)].reshape(x.shape[:2] + (-1,))
        out[(slice(None), slice(None), *pos)] = (window.max(axis=2) if kind == "max"
                                                  else window.mean(axis=2))
    return out


def resize_reference(x, outs, method, mode):
    """Per-voxel sampling of the spatial axes of NC... ``x``, as TVM's resize describes it."""
    size = x.shape[2:]

    def coord(o, n_in, n_out):
        scale = n_in / n_out
        if mode == "align_corners":
            return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        if mode == "asymmetric":
            return o * scale
        if mode == "tf_half_pixel_for_nn":
            return (o + 0.5) * scale
        if mode == "pytorch_half_pixel" and n_out == 1:
            return 0.0
        return (o + 0.5) * scale - 0.5

    def taps(y):
        if method == "nearest_neighbor":
            # TVM's round (align_corners) goes half away from zero; floor has an epsilon.
            return [(math.floor(y + 0.5) if mode == "align_corners" else math.floor(y + 1e-5),
                     1.0)]
        base, t = math.floor(y), y - math.floor(y)
        if method == "linear":
            return [(base, 1 - t), (base + 1, t)]
        a = -0.5
        weights = [a * (t**3 - 2 * t**2 + t), (a + 2) * t**3 - (a + 3) * t**2 + 1,
                   -(a + 2) * t**3 + (2 * a + 3) * t**2 - a * t, -a * t**3 + a * t**2]
        return [(base + k - 1, weights[k]) for k in range(4)]

    out = np.zeros(x.shape[:2] + tuple(outs))
    for pos in positions(outs):
        per_axis = [taps(coord(p, size[i], outs[i])) for i, p in enumerate(pos)]
        for combo in itertools.product(*per_axis):
            at = tuple(min(max(k, 0), size[i] - 1) for i, (k, _) in enumerate(combo))
            out[(slice(None), slice(None), *pos)] += (
                np.prod([wt for _, wt in combo]) * x[(slice(None), slice(None), *at)])
    return out


def _to_layout(x, layout, canonical):
    return x.transpose([canonical.index(a) for a in layout])


# --- convolution --------------------------------------------------------------------------------


CONV_CASES = [
    # data shape, weight shape, strides, padding (befores + afters), dilation, groups
    ((2, 4, 9), (6, 4, 3), (1,), (0, 0), (1,), 1),
    ((1, 6, 11), (9, 2, 3), (2,), (2, 1), (2,), 3),
    ((2, 4, 7), (8, 1, 2), (3,), (0, 3), (1,), 4),
    ((1, 4, 6, 7), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2),
    ((1, 2, 5, 6, 5), (4, 2, 2, 3, 2), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    ((2, 4, 5, 4, 6), (6, 2, 3, 2, 2), (2, 1, 2), (1, 0, 1, 1, 1, 0), (1, 2, 1), 2),
    ((1, 3, 4, 5, 4), (6, 1, 1, 2, 3), (1, 2, 1), (0, 1, 2, 0, 0, 1), (2, 1, 1), 3),
]


def _conv(nd, transpose=False):
    return getattr(relay.nn, f"conv{nd}d" + ("_transpose" if transpose else ""))


@pytest.mark.parametrize("dshape, wshape, strides, padding, dilation, groups", CONV_CASES)
def test_convolution_matches_the_direct_reference(dshape, wshape, strides, padding, dilation,
                                                   groups):
    nd = len(dshape) - 2
    x, w = randn(*dshape), randn(*wshape)
    call = _conv(nd)(X, W, strides=strides, padding=padding, dilation=dilation, groups=groups,
                     channels=wshape[0], kernel_size=wshape[2:])
    np.testing.assert_allclose(evaluate(call, x, w),
                               conv_reference(x, w, strides, padding, dilation, groups),
                               rtol=1e-4, atol=1e-4)


CONV_T_CASES = [
    # data shape, weight shape, strides, padding, dilation, groups, output_padding
    ((2, 4, 5), (4, 3, 3), (1,), (0, 0), (1,), 1, (0,)),
    ((1, 4, 6), (4, 2, 3), (3,), (1, 2), (2,), 2, (2,)),
    ((1, 6, 4), (6, 1, 2), (2,), (0, 1), (1,), 6, (1,)),
    ((1, 2, 6), (2, 3, 2), (2,), (3, 2), (1,), 1, (1,)),  # padding beyond the kernel: crops
    ((1, 4, 3, 4), (4, 3, 3, 2), (2, 3), (2, 0, 1, 1), (2, 1), 2, (1, 2)),
    ((1, 2, 3, 4, 3), (2, 3, 2, 2, 3), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1, (0, 0, 0)),
    ((2, 4, 3, 2, 3), (4, 2, 3, 2, 2), (2, 3, 1), (1, 0, 1, 0, 1, 1), (1, 1, 2), 2, (1, 2, 0)),
]


@pytest.mark.parametrize("dshape, wshape, strides, padding, dilation, groups, output_padding",
                         CONV_T_CASES)
def test_transposed_convolution_matches_the_direct_reference(dshape, wshape, strides, padding,
                                                             dilation, groups, output_padding):
    nd = len(dshape) - 2
    x, w = randn(*dshape), randn(*wshape)
    call = _conv(nd, True)(X, W, strides=strides, padding=padding, dilation=dilation,
                           groups=groups, output_padding=output_padding)
    want = conv_transpose_reference(x, w, strides, padding, dilation, groups, output_padding)
    out = evaluate(call, x, w)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("data_layout", ["".join(p) for p in itertools.permutations("NCW")])
def test_conv1d_takes_every_layout_permutation(data_layout, transpose):
    x, w = randn(2, 4, 7), randn(4, 6, 3) if transpose else randn(6, 2, 3)
    kernel_canonical = "IOW" if transpose else "OIW"
    op = _conv(1, transpose)
    want = evaluate(op(X, W, strides=2, padding=(1, 0), groups=2), x, w)
    for kernel_layout in ("".join(p) for p in itertools.permutations(kernel_canonical)):
        call = op(X, W, strides=2, padding=(1, 0), groups=2, data_layout=data_layout,
                  kernel_layout=kernel_layout)
        out = evaluate(call, _to_layout(x, data_layout, "NCW"),
                       _to_layout(w, kernel_layout, kernel_canonical))
        np.testing.assert_allclose(out, _to_layout(want, data_layout, "NCW"), rtol=1e-5,
                                   atol=1e-5)
        mixed = op(X, W, strides=2, padding=(1, 0), groups=2, data_layout=data_layout,
                   kernel_layout=kernel_layout, out_layout="NCW")
        assert relation(mixed, T(_to_layout(x, data_layout, "NCW").shape),
                        T(_to_layout(w, kernel_layout, kernel_canonical).shape)) == T(want.shape)


@pytest.mark.parametrize("transpose", [False, True])
def test_conv3d_layouts(transpose):
    x = randn(1, 4, 3, 4, 5)
    w = randn(4, 3, 2, 1, 2) if transpose else randn(6, 2, 2, 1, 2)
    canonical_kernel = "IODHW" if transpose else "OIDHW"
    op = _conv(3, transpose)
    want = evaluate(op(X, W, padding=(1, 0, 1), groups=2), x, w)
    layouts = [("NDHWC", "DHWIO"), ("NDHWC", "DHWOI"), ("CDNHW", "HWDIO"), ("NHWDC", "OIDHW")]
    for data_layout, kernel_layout in layouts:
        call = op(X, W, padding=(1, 0, 1), groups=2, data_layout=data_layout,
                  kernel_layout=kernel_layout)
        out = evaluate(call, _to_layout(x, data_layout, "NCDHW"),
                       _to_layout(w, kernel_layout, canonical_kernel))
        np.testing.assert_allclose(out, _to_layout(want, data_layout, "NCDHW"), rtol=1e-5,
                                   atol=1e-5)
    # Every permutation of NCDHW types, with the spatial extents where the layout puts them.
    for perm in itertools.permutations("NCDHW"):
        layout = "".join(perm)
        got = relation(op(X, W, padding=(1, 0, 1), groups=2, data_layout=layout),
                       T(_to_layout(x, layout, "NCDHW").shape), T(w.shape))
        assert got == T(_to_layout(want, layout, "NCDHW").shape), layout


def test_constructors_normalize_like_relay():
    call = relay.nn.conv1d(X, W, strides=2, padding=1, dilation=3, kernel_size=3)
    assert (call.attrs.strides, call.attrs.padding, call.attrs.dilation,
            call.attrs.kernel_size) == ((2,), (1, 1), (3,), (3,))
    assert relay.nn.conv1d(X, W, padding=(1, 2)).attrs.padding == (1, 2)
    call = relay.nn.conv3d(X, W, strides=2, padding=(1, 2, 3), dilation=1, kernel_size=3)
    assert call.attrs.padding == (1, 2, 3, 1, 2, 3) and call.attrs.kernel_size == (3, 3, 3)
    assert relay.nn.conv3d(X, W, padding=2).attrs.padding == (2,) * 6
    call = relay.nn.conv1d_transpose(X, W, 2, 1, output_padding=1)
    assert (call.attrs.strides, call.attrs.padding, call.attrs.output_padding) == \
        ((2,), (1, 1), (1,))
    with pytest.raises(AttrsError, match="nn.conv1d: padding must be an int or have 1 or 2 "
                                         "values"):
        relay.nn.conv1d(X, W, padding=(1, 2, 3))
    with pytest.raises(AttrsError, match="nn.conv3d: padding must be an int or have 1, 3 or 6"):
        relay.nn.conv3d(X, W, padding=(1, 2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'layout'"):
        relay.nn.conv3d(X, W, layout="NCDHW")


@pytest.mark.parametrize(
    "op, type_key, fields",
    [
        ("nn.conv1d", "relay.attrs.Conv1DAttrs", {
            "strides": (1,), "padding": (0, 0), "dilation": (1,), "groups": 1, "channels": None,
            "kernel_size": None, "data_layout": "NCW", "kernel_layout": "OIW", "out_layout": "",
            "out_dtype": ""}),
        ("nn.conv3d", "relay.attrs.Conv3DAttrs", {
            "strides": (1, 1, 1), "padding": (0, 0, 0), "dilation": (1, 1, 1), "groups": 1,
            "channels": None, "kernel_size": None, "data_layout": "NCDHW",
            "kernel_layout": "OIDHW", "out_layout": "", "out_dtype": ""}),
        ("nn.conv1d_transpose", "relay.attrs.Conv1DTransposeAttrs", {
            "channels": None, "kernel_size": None, "strides": (1,), "output_padding": (0,),
            "padding": (0,), "dilation": (1,), "groups": 1, "data_layout": "NCW",
            "kernel_layout": "IOW", "out_layout": "", "out_dtype": ""}),
        ("nn.conv2d_transpose", "relay.attrs.Conv2DTransposeAttrs", {
            "channels": None, "kernel_size": None, "strides": (1, 1), "output_padding": (0, 0),
            "padding": (0, 0), "dilation": (1, 1), "groups": 1, "data_layout": "NCHW",
            "kernel_layout": "IOHW", "out_layout": "", "out_dtype": ""}),
        ("nn.conv3d_transpose", "relay.attrs.Conv3DTransposeAttrs", {
            "channels": None, "kernel_size": None, "strides": (1, 1, 1),
            "output_padding": (0, 0, 0), "padding": (0, 0, 0), "dilation": (1, 1, 1),
            "groups": 1, "data_layout": "NCDHW", "kernel_layout": "IODHW", "out_layout": "",
            "out_dtype": ""}),
        ("nn.max_pool1d", "relay.attrs.MaxPool1DAttrs", {
            "pool_size": None, "strides": (1,), "dilation": (1,), "padding": (0,),
            "layout": "NCW", "out_layout": "", "ceil_mode": False}),
        ("nn.avg_pool3d", "relay.attrs.AvgPool3DAttrs", {
            "pool_size": None, "strides": (1, 1, 1), "dilation": (1, 1, 1),
            "padding": (0, 0, 0), "layout": "NCDHW", "out_layout": "", "ceil_mode": False,
            "count_include_pad": False}),
        ("nn.max_pool2d", "relay.attrs.MaxPool2DAttrs", {
            "pool_size": None, "strides": (1, 1), "dilation": (1, 1), "padding": (0, 0),
            "layout": "NCHW", "out_layout": "", "ceil_mode": False}),
        ("nn.adaptive_max_pool1d", "relay.attrs.AdaptivePool1DAttrs", {
            "output_size": (), "layout": "NCW", "out_layout": ""}),
        ("nn.adaptive_max_pool2d", "relay.attrs.AdaptivePool2DAttrs", {
            "output_size": (), "layout": "NCHW", "out_layout": ""}),
        ("nn.adaptive_avg_pool3d", "relay.attrs.AdaptivePool3DAttrs", {
            "output_size": (), "layout": "NCDHW", "out_layout": ""}),
        ("nn.dilate", "relay.attrs.DilateAttrs", {"strides": (1, 1), "dilation_value": 0.0}),
        ("nn.upsampling", "relay.attrs.UpSamplingAttrs", {
            "scale_h": None, "scale_w": None, "layout": "NCHW", "method": "nearest_neighbor",
            "align_corners": False}),
        ("nn.upsampling3d", "relay.attrs.UpSampling3DAttrs", {
            "scale_d": None, "scale_h": None, "scale_w": None, "layout": "NCDHW",
            "method": "nearest_neighbor", "coordinate_transformation_mode": "half_pixel"}),
    ],
)
def test_attribute_schemas_are_relays(op, type_key, fields):
    """Relay's type key, field order and defaults (None here: a field Relay requires)."""
    from relaypass.ir.op import REQUIRED

    schema = Op.get(op).attrs_schema
    assert schema.type_key == type_key
    assert {k: None if f.default is REQUIRED else f.default for k, f in schema.fields.items()} \
        == fields
    assert list(schema.fields) == list(fields)


def test_relations_follow_relay():
    # Relay's test_conv1d_infer_type / test_conv3d_infer_type / transposed cases, concretely.
    assert relation(relay.nn.conv1d(X, W, padding=(1, 1)), T((3, 10, 224)), T((2, 10, 3))) == \
        T((3, 2, 224))
    mixed = relay.nn.conv1d(X, W, out_dtype="int32")
    assert relation(mixed, T((3, 10, 224), "uint8"), T((2, 10, 3), "int8")) == \
        T((3, 2, 222), "int32")
    nwc = relay.nn.conv1d(X, W, padding=(1, 1), data_layout="NWC", kernel_layout="WIO")
    assert relation(nwc, T((4, 224, 32)), T((3, 32, 16))) == T((4, 224, 16))
    assert relation(relay.nn.conv3d(X, W, groups=4, kernel_size=(1, 1, 1), channels=4),
                    T((1, 16, 9, 9, 9)), T((4, 4, 1, 1, 1))) == T((1, 4, 9, 9, 9))
    assert relation(relay.nn.conv3d_transpose(X, W), T((2, 10, 7, 8, 9)), T((10, 12, 3, 3, 3))) \
        == T((2, 12, 9, 10, 11))
    assert relation(relay.nn.conv3d_transpose(X, W, groups=2), T((2, 10, 7, 8, 9)),
                    T((10, 6, 3, 3, 3))) == T((2, 12, 9, 10, 11))
    nhwc = relay.nn.conv2d_transpose(X, W, output_padding=(1, 1), channels=11, data_layout="NHWC")
    assert relation(nhwc, T((1, 10, 10, 12)), T((12, 11, 5, 5))) == T((1, 15, 15, 11))
    one = relay.nn.conv1d_transpose(X, W, strides=2, padding=1, output_padding=1)
    assert relation(one, T((1, 3, 18)), T((3, 10, 3))) == T((1, 10, 36))
    assert relation(relay.nn.conv3d(X, W), T((Any(), 2, Any(), 5, 5)), T((4, 2, 3, 3, 3))) == \
        T((Any(), 4, Any(), 3, 3))


@pytest.mark.parametrize(
    "call, dshape, wshape, message",
    [
        (relay.nn.conv1d(X, W), (1, 3, 8), (4, 2, 3),
         r"nn.conv1d: data has 3 input channels .* takes 2 per group x 1 groups = 2"),
        (relay.nn.conv3d(X, W, groups=2), (1, 4, 5, 5, 5), (3, 2, 1, 1, 1),
         "nn.conv3d: the weight's 3 output channels do not divide into 2 groups"),
        (relay.nn.conv3d(X, W), (1, 2, 2, 8, 8), (4, 2, 3, 3, 3),
         "nn.conv3d: the dilated kernel extent 3 along D is larger than the padded input "
         "extent 2"),
        (relay.nn.conv1d(X, W, dilation=3), (1, 2, 6), (4, 2, 3),
         "nn.conv1d: the dilated kernel extent 7 along W"),
        (relay.nn.conv1d(X, W), (1, 2, 8, 8), (4, 2, 3),
         r"nn.conv1d: data must have rank 3, got shape \(1, 2, 8, 8\)"),
        (relay.nn.conv3d(X, W, data_layout="NCHW"), (1, 2, 8, 8, 8), (4, 2, 3, 3, 3),
         "nn.conv3d: data_layout 'NCHW' is not supported; use a permutation of 'NCDHW'"),
        (relay.nn.conv3d(X, W, kernel_layout="OIDHW4o"), (1, 2, 8, 8, 8), (4, 2, 3, 3, 3),
         r"nn.conv3d: weight must have rank 6, got shape \(4, 2, 3, 3, 3\)"),
        (relay.nn.conv1d(X, W, strides=(1, 1)), (1, 2, 8), (4, 2, 3),
         "nn.conv1d: attribute strides must have 1 values"),
        (relay.nn.conv3d(X, W, channels=5), (1, 2, 8, 8, 8), (4, 2, 3, 3, 3),
         "attribute channels=5 but the weight gives 4"),
        (relay.nn.conv3d(X, W, kernel_size=(3, 3, 2)), (1, 2, 8, 8, 8), (4, 2, 3, 3, 3),
         r"kernel_size=\(3, 3, 2\) but the weight's kernel is 3x3x3"),
        (relay.nn.conv1d_transpose(X, W), (1, 5, 8), (4, 3, 3),
         r"nn.conv1d_transpose: data has 5 input channels .* takes 4"),
        (relay.nn.conv3d_transpose(X, W, groups=3), (1, 4, 3, 3, 3), (4, 2, 1, 1, 1),
         "nn.conv3d_transpose: the 4 input channels do not divide into 3 groups"),
        (relay.nn.conv1d_transpose(X, W, padding=(3, 3)), (1, 4, 1), (4, 2, 3),
         r"nn.conv1d_transpose: padding \(3, 3\) leaves no output along W"),
        (relay.nn.conv1d_transpose(X, W, output_padding=(-1,)), (1, 4, 3), (4, 2, 3),
         "output_padding must hold values of at least 0"),
    ],
)
def test_convolution_errors_say_what_and_where(call, dshape, wshape, message):
    with pytest.raises(TypeRelationError, match=message):
        relation(call, T(dshape), T(wshape))


def test_weight_types_follow_from_channels_and_kernel_size():
    """Relay's relations fix an unannotated weight's type (TVM's infer_type cases)."""
    def weight_type(call):
        mod = IRModule.from_expr(relay.Function(relay.analysis.free_vars(call), call))
        mod = get_pass("InferType")(mod)
        return mod["main"].body.args[1].checked_type, mod["main"].body.checked_type

    x = relay.var("x", shape=(3, 10, 224))
    assert weight_type(relay.nn.conv1d(x, relay.var("w"), kernel_size=3, padding=(1, 1),
                                       channels=2)) == (T((2, 10, 3)), T((3, 2, 224)))
    x = relay.var("x", shape=(2, 10, 6, 7, 8))
    assert weight_type(relay.nn.conv3d_transpose(x, relay.var("w"), kernel_size=(3, 3, 3),
                                                 padding=(1, 1, 1), channels=2)) == \
        (T((10, 2, 3, 3, 3)), T((2, 2, 6, 7, 8)))
    x = relay.var("x", shape=(4, 9, 32), dtype="int8")
    assert weight_type(relay.nn.conv1d(x, relay.var("w"), kernel_size=3, padding=(1, 1),
                                       channels=16, groups=2, data_layout="NWC",
                                       kernel_layout="WIO", out_dtype="int32")) == \
        (T((3, 16, 16), "int8"), T((4, 9, 16), "int32"))


# --- pooling ------------------------------------------------------------------------------------


POOL_CASES = [
    # pool size, strides, padding, dilation, ceil_mode, count_include_pad
    ((2,), (2,), (0, 0), (1,), False, False),
    ((3,), (2,), (1, 1), (1,), True, True),
    ((3,), (3,), (2, 0), (2,), True, False),
    ((2, 2, 2), (2, 2, 2), (0,) * 6, (1, 1, 1), False, False),
    ((3, 2, 2), (2, 1, 2), (1, 0, 1, 1, 1, 0), (1, 1, 1), True, False),
    ((2, 3, 2), (1, 2, 2), (0, 1, 1, 0, 1, 1), (2, 1, 1), True, True),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("pool, strides, padding, dilation, ceil_mode, include_pad", POOL_CASES)
def test_pooling_matches_the_direct_reference(kind, pool, strides, padding, dilation, ceil_mode,
                                              include_pad):
    nd = len(pool)
    x = randn(2, 3, *(7, 6, 5)[:nd]) if nd == 3 else randn(2, 3, 9)
    extra = {"count_include_pad": include_pad} if kind == "avg" else {}
    op = getattr(relay.nn, f"{kind}_pool{nd}d")
    call = op(X, pool, strides, dilation, padding, ceil_mode=ceil_mode, **extra)
    want = pool_reference(x, kind, pool, strides, padding, dilation, ceil_mode, include_pad)
    np.testing.assert_allclose(evaluate(call, x), want, rtol=1e-5, atol=1e-6)


def test_max_pooling_pads_with_the_dtypes_lowest_value():
    x = np.full((1, 1, 3), -7, dtype="int32")
    out = evaluate(relay.nn.max_pool1d(X, 2, 2, padding=(0, 3), ceil_mode=True), x)
    np.testing.assert_array_equal(out[0, 0], [-7, -7, np.iinfo("int32").min])


def test_integer_average_pooling_truncates():
    x = np.array([[[1, 2, 2, 5, -3, -2]]], dtype="int64")
    np.testing.assert_array_equal(evaluate(relay.nn.avg_pool1d(X, 2, 2), x)[0, 0], [1, 3, -2])


@pytest.mark.parametrize("nd, layout", [(1, "NWC"), (1, "WCN"), (1, "NCW4c"), (3, "NDHWC"),
                                        (3, "CNDHW"), (3, "NCDHW2c")])
def test_pooling_in_other_layouts(nd, layout):
    canonical = "NC" + SPATIAL[nd]
    x = randn(2, 4, *(5, 6, 4)[:nd])
    for kind in ("max", "avg"):
        op = getattr(relay.nn, f"{kind}_pool{nd}d")
        want = evaluate(op(X, 2, 2, padding=1, ceil_mode=True), x)
        if layout.endswith("c"):  # blocked: the spatial axes are unsplit, C is split in two
            xb = x.reshape(2, 2, 2, *x.shape[2:])
            xb = np.moveaxis(xb, 2, -1)
            got = evaluate(op(X, 2, 2, padding=1, ceil_mode=True, layout=layout), xb)
            np.testing.assert_allclose(np.moveaxis(got, -1, 2).reshape(want.shape), want)
            continue
        got = evaluate(op(X, 2, 2, padding=1, ceil_mode=True, layout=layout),
                       _to_layout(x, layout, canonical))
        np.testing.assert_allclose(got, _to_layout(want, layout, canonical))


def test_pooling_relations_and_errors():
    assert relation(relay.nn.max_pool1d(X, 1), T((Any(), 10, 224))) == T((Any(), 10, 224))
    assert relation(relay.nn.avg_pool3d(X, 2, 2, padding=(2, 0, 0, 2, 0, 0)),
                    T((1, 3, 32, 32, 32))) == T((1, 3, 18, 16, 16))
    assert relation(relay.nn.max_pool3d(X, 3, 1), T((1, 3, Any(), 7, 5))) == \
        T((1, 3, Any(), 5, 3))
    with pytest.raises(TypeRelationError, match="nn.max_pool3d: the dilated window extent 5 is "
                                                "larger than the padded input extent 4 along D"):
        relation(relay.nn.max_pool3d(X, (3, 1, 1), dilation=(2, 1, 1)), T((1, 1, 4, 9, 9)))
    with pytest.raises(TypeRelationError, match="nn.avg_pool1d: layout 'NCH' must have unsplit "
                                                "W axis"):
        relation(relay.nn.avg_pool1d(X, 2, layout="NCH"), T((1, 1, 4)))
    with pytest.raises(TypeRelationError, match="nn.max_pool3d: layout 'NCDHW4w' must have "
                                                "unsplit D, H and W axes"):
        relation(relay.nn.max_pool3d(X, 2, layout="NCDHW4w"), T((1, 1, 4, 4, 4, 4)))
    with pytest.raises(TypeRelationError, match="nn.max_pool1d: data of rank 4 does not match "
                                                "layout 'NCW'"):
        relation(relay.nn.max_pool1d(X, 2), T((1, 1, 4, 4)))
    with pytest.raises(TypeRelationError, match="nn.avg_pool3d: attribute pool_size must have 3"):
        relation(relay.nn.avg_pool3d(X, (2, 2)), T((1, 1, 4, 4, 4)))
    with pytest.raises(TypeRelationError, match="nn.max_pool1d: out_layout 'NWC' differs"):
        relation(relay.nn.max_pool1d(X, 2, out_layout="NWC"), T((1, 1, 4)))
    with pytest.raises(AttrsError, match="nn.max_pool3d: padding must be an int or have 1, 3 or"):
        relay.nn.max_pool3d(X, 2, padding=(1, 1))
    with pytest.raises(AttrsError, match="operator 'nn.max_pool1d' requires attribute "
                                         "'pool_size'"):
        relay.Call(Op.get("nn.max_pool1d"), [X], Op.get("nn.max_pool1d").attrs_schema.build(
            "nn.max_pool1d", {}))


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("insize, outsize", [((7,), (3,)), ((3,), (5,)), ((6, 5), (4, 2)),
                                              ((5, 4, 6), (2, 3, 4)), ((3, 2, 4), (1, 1, 1)),
                                              ((4, 4, 4), (4, 4, 4))])
def test_adaptive_pooling_matches_the_direct_reference(kind, insize, outsize):
    nd = len(insize)
    x = randn(2, 3, *insize)
    call = getattr(relay.nn, f"adaptive_{kind}_pool{nd}d")(X, outsize)
    np.testing.assert_allclose(evaluate(call, x), adaptive_reference(x, kind, outsize), rtol=1e-5,
                               atol=1e-6)


def test_adaptive_pooling_forms_and_errors():
    assert relation(relay.nn.adaptive_max_pool1d(X, 4), T((1, 2, 9))) == T((1, 2, 4))
    assert relation(relay.nn.adaptive_avg_pool3d(X, 2), T((1, 2, 8, 8, 8))) == T((1, 2, 2, 2, 2))
    assert relation(relay.nn.adaptive_max_pool3d(X), T((1, 2, 3, 4, 5))) == T((1, 2, 3, 4, 5))
    nwc = relay.nn.adaptive_avg_pool1d(X, 2, layout="NWC")
    assert relation(nwc, T((1, 9, 3))) == T((1, 2, 3))
    x = rng.integers(-9, 9, (1, 2, 7)).astype("int32")
    np.testing.assert_array_equal(evaluate(relay.nn.adaptive_avg_pool1d(X, 3), x),
                                  np.trunc(adaptive_reference(x, "avg", (3,))))
    with pytest.raises(TypeRelationError, match="nn.adaptive_avg_pool3d: output_size must have 0, "
                                                r"1 or 3 values, got \(2, 2\)"):
        relation(relay.nn.adaptive_avg_pool3d(X, (2, 2)), T((1, 1, 4, 4, 4)))
    with pytest.raises(TypeRelationError, match="nn.adaptive_max_pool1d: cannot pool the empty W "
                                                "axis"):
        relation(relay.nn.adaptive_max_pool1d(X, 2), T((1, 1, 0)))


@pytest.mark.parametrize("nd", [1, 3])
def test_global_pooling_is_adaptive_pooling_to_one_as_in_relay(nd):
    x = randn(2, 3, *(4, 5, 3)[:nd])
    axes = tuple(range(2, 2 + nd))
    avg = getattr(relay.nn, f"global_avg_pool{nd}d")(X)
    assert avg.op.name == f"nn.adaptive_avg_pool{nd}d" and avg.attrs.output_size == (1,) * nd
    np.testing.assert_allclose(evaluate(avg, x), x.mean(axis=axes, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    channels_last = "N" + SPATIAL[nd] + "C"
    mx = getattr(relay.nn, f"global_max_pool{nd}d")(X, layout=channels_last)
    xt = _to_layout(x, channels_last, "NC" + SPATIAL[nd])
    np.testing.assert_array_equal(evaluate(mx, xt), xt.max(axis=tuple(range(1, 1 + nd)),
                                                          keepdims=True))


# --- dilate and upsampling ----------------------------------------------------------------------


def test_dilate_matches_a_loop():
    x = randn(2, 3, 4)
    call = relay.nn.dilate(X, (1, 3, 2), dilation_value=-1.5)
    out = evaluate(call, x)
    want = np.full((2, 7, 7), -1.5, dtype="float32")
    for i, j, k in positions(x.shape):
        want[i, j * 3, k * 2] = x[i, j, k]
    np.testing.assert_array_equal(out, want)
    assert relation(call, T((Any(), 3, 0))) == T((Any(), 7, 0))
    ints = evaluate(relay.nn.dilate(X, (2,)), np.array([1, 2, 3], dtype="int8"))
    np.testing.assert_array_equal(ints, np.array([1, 0, 2, 0, 3], dtype="int8"))
    with pytest.raises(TypeRelationError, match="nn.dilate: attribute strides must have 3 "
                                                "values"):
        relation(relay.nn.dilate(X, (1, 2)), T((2, 3, 4)))
    with pytest.raises(TypeRelationError, match="nn.dilate: attribute strides must hold values "
                                                "of at least 1"):
        relation(relay.nn.dilate(X, (0, 2)), T((3, 4)))


@pytest.mark.parametrize("method", ["nearest_neighbor", "trilinear", "tricubic"])
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners", "asymmetric",
                                  "pytorch_half_pixel", "tf_half_pixel_for_nn"])
def test_upsampling3d_matches_the_direct_reference(method, mode):
    x = randn(1, 2, 3, 2, 4)
    call = relay.nn.upsampling3d(X, 2, 1.5, 0.75, method=method,
                                 coordinate_transformation_mode=mode)
    out = evaluate(call, x)
    assert out.shape == (1, 2, 6, 3, 3)
    resize = {"trilinear": "linear", "tricubic": "cubic"}.get(method, method)
    np.testing.assert_allclose(out, resize_reference(x, (6, 3, 3), resize, mode), rtol=1e-5,
                               atol=1e-6)
    ndhwc = relay.nn.upsampling3d(X, 2, 1.5, 0.75, layout="NDHWC", method=method,
                                  coordinate_transformation_mode=mode)
    np.testing.assert_allclose(evaluate(ndhwc, x.transpose(0, 2, 3, 4, 1)),
                               out.transpose(0, 2, 3, 4, 1), rtol=1e-5, atol=1e-6)


def test_upsampling_rounds_nearest_halves_away_from_zero_with_aligned_corners():
    # 3 -> 5 with aligned corners samples 0, 0.5, 1, 1.5, 2: TVM's round takes 1 and 2 for the
    # halves (numpy's rint would take 0 and 2).
    x = np.arange(3, dtype="float32").reshape(1, 1, 3, 1)
    out = evaluate(relay.nn.upsampling(X, 5 / 3, 1, align_corners=True), x)
    np.testing.assert_array_equal(out[0, 0, :, 0], [0, 1, 1, 2, 2])


def test_upsampling_relations_and_errors():
    assert relation(relay.nn.upsampling3d(X, 2, 2, 2, method="trilinear"),
                    T((Any(), 3, 100, 100, 200))) == T((Any(), 3, 200, 200, 400))
    # The scaled extent rounds half to even, as Relay's relation folds it.
    assert relation(relay.nn.upsampling(X, 0.5, 1.5), T((1, 1, 5, 3))) == T((1, 1, 2, 4))
    assert relay.nn.upsampling3d(X, relay.const(2.0), 1, 1).attrs.scale_d == 2.0
    with pytest.raises(AttrsError, match="nn.upsampling3d: scale_h must be a number or a scalar "
                                         "constant, got a constant of shape"):
        relay.nn.upsampling3d(X, 2, relay.const([1.0, 2.0]), 2)
    # a scale known only at run time makes Relay's dyn.nn.upsampling3d (tests/test_dyn_ops.py)
    assert relay.nn.upsampling3d(X, 2, relay.var("s"), 2).op.name == "dyn.nn.upsampling3d"
    with pytest.raises(TypeRelationError, match="nn.upsampling3d: attribute method must be one "
                                                "of 'nearest_neighbor', 'trilinear', 'tricubic'"):
        relation(relay.nn.upsampling3d(X, 2, 2, 2, method="bilinear"), T((1, 1, 2, 2, 2)))
    with pytest.raises(TypeRelationError, match="coordinate_transformation_mode must be one of"):
        relation(relay.nn.upsampling3d(X, 2, 2, 2, coordinate_transformation_mode="crop"),
                 T((1, 1, 2, 2, 2)))
    with pytest.raises(TypeRelationError, match="nn.upsampling3d: layout 'NCHW' must have "
                                                "unsplit D, H and W axes"):
        relation(relay.nn.upsampling3d(X, 2, 2, 2, layout="NCHW"), T((1, 1, 2, 2)))
    with pytest.raises(TypeRelationError, match="nn.upsampling3d: scale_w must be positive"):
        relation(relay.nn.upsampling3d(X, 2, 2, -1), T((1, 1, 2, 2, 2)))
    with pytest.raises(TypeRelationError, match="nn.upsampling: scale_h=0.1 turns an extent of "
                                                "3 into 0"):
        relation(relay.nn.upsampling(X, 0.1, 1), T((1, 1, 3, 3)))


# --- the family as a whole ----------------------------------------------------------------------


FUSABLE = [f"nn.conv{n}d{t}" for n in (1, 2, 3) for t in ("", "_transpose")] + [
    f"nn.{k}_pool{n}d" for k in ("max", "avg", "adaptive_max", "adaptive_avg") for n in (1, 2, 3)
] + ["nn.global_max_pool2d", "nn.global_avg_pool2d"]


def test_fusion_patterns_are_relays():
    for name in FUSABLE:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE, name
    for name in ["nn.dilate", "nn.upsampling", "nn.upsampling3d"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.INJECTIVE, name


def test_fuse_ops_groups_a_3d_convolution_with_what_follows():
    x = relay.var("x", shape=(1, 2, 4, 4, 4))
    w = relay.var("w", shape=(3, 2, 1, 1, 1))
    y = relay.nn.relu(relay.nn.conv3d(x, w) + relay.const(1.0))
    mod = IRModule.from_expr(relay.Function([x, w], relay.nn.max_pool3d(y, 2)))
    mod = get_pass("FuseOps")(get_pass("InferType")(mod))
    text = mod.astext()
    assert text.count("Primitive=1") == 2  # conv3d + add + relu, then the pool


@pytest.mark.parametrize(
    "build, shapes",
    [
        (lambda x, w: relay.nn.conv1d(x, w, strides=2, padding=(1, 0), data_layout="NWC",
                                      kernel_layout="WIO", out_dtype="float64"),
         [(1, 8, 4), (3, 4, 5)]),
        (lambda x, w: relay.nn.conv3d(x, w, groups=2, channels=4, kernel_size=(1, 2, 1)),
         [(1, 4, 3, 3, 3), (4, 2, 1, 2, 1)]),
        (lambda x, w: relay.nn.conv1d_transpose(x, w, strides=2, output_padding=1),
         [(1, 4, 5), (4, 2, 3)]),
        (lambda x, w: relay.nn.conv3d_transpose(x, w, padding=(1, 0, 0), groups=2),
         [(1, 4, 3, 3, 3), (4, 1, 3, 1, 1)]),
        (lambda x: relay.nn.max_pool1d(x, 2, padding=(0, 1), ceil_mode=True), [(1, 2, 7)]),
        (lambda x: relay.nn.avg_pool3d(x, (2, 1, 2), layout="NDHWC", count_include_pad=True),
         [(1, 4, 4, 4, 2)]),
        (lambda x: relay.nn.adaptive_max_pool2d(x, (2, 3)), [(1, 2, 5, 5)]),
        (lambda x: relay.nn.global_avg_pool1d(x), [(1, 2, 5)]),
        (lambda x: relay.nn.dilate(x, (1, 2, 3), 1.5), [(2, 3, 4)]),
        (lambda x: relay.nn.upsampling3d(x, 2, 1, 1.5, method="trilinear",
                                         coordinate_transformation_mode="align_corners"),
         [(1, 1, 2, 3, 4)]),
        (lambda x: relay.nn.upsampling(x, 2, 3, method="bicubic", align_corners=True),
         [(1, 1, 2, 3)]),
    ],
)
def test_text_round_trip(build, shapes):
    names = "xw"
    call = build(*(relay.var(names[i], shape=s) for i, s in enumerate(shapes)))
    text = assert_text_round_trip(call)
    assert call.op.name in text


def test_facade_names_reexport_the_constructors():
    names = ["conv1d", "conv3d", "conv1d_transpose", "conv3d_transpose", "max_pool1d",
             "max_pool3d", "avg_pool1d", "avg_pool3d", "global_max_pool1d", "global_max_pool3d",
             "global_avg_pool1d", "global_avg_pool3d", "adaptive_max_pool1d",
             "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_avg_pool1d",
             "adaptive_avg_pool3d", "dilate", "upsampling3d"]
    facades = [importlib.import_module(m) for m in ("relaypass.relay.op.nn",
                                                    "relaypass.relay.op.nn.nn")]
    for name in names:
        made = getattr(relay.nn, name)
        assert all(getattr(m, name) is made for m in facades), name
        assert made.__name__ == name and made.__doc__, name


# --- the ONNX importer uses them ------------------------------------------------------------


def _onnx_case(op_type, x, attrs, weight=None):
    """onnxruntime's output and the importer's graph and output for one node."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import helper, numpy_helper

    from relaypass.frontend import from_onnx

    inputs = ["x"] + (["w"] if weight is not None else [])
    graph = helper.make_graph(
        [helper.make_node(op_type, inputs, ["y"], **attrs)], "case",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")],
        initializer=[] if weight is None else [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    mod, params = from_onnx(model)
    mod = get_pass("InferType")(mod)
    got = relay.create_executor(mod=mod).evaluate()(x=x, **params)
    return mod.astext(), want, np.asarray(got)


@pytest.mark.parametrize(
    "op_type, xshape, attrs, wshape, relay_op",
    [
        ("Conv", (1, 4, 9), {"pads": [2, 1], "strides": [2], "group": 2}, (6, 2, 3), "nn.conv1d"),
        ("Conv", (1, 2, 5, 4, 6), {"pads": [1, 0, 1, 0, 1, 1], "dilations": [1, 2, 1]},
         (3, 2, 2, 2, 3), "nn.conv3d"),
        ("ConvTranspose", (1, 4, 3, 4, 3), {"strides": [2, 1, 2], "pads": [1, 0, 0, 0, 1, 1],
                                            "output_padding": [1, 0, 1], "group": 2},
         (4, 2, 3, 2, 2), "nn.conv3d_transpose"),
        ("ConvTranspose", (1, 3, 7), {"strides": [3], "pads": [1, 2]}, (3, 2, 4),
         "nn.conv1d_transpose"),
        ("MaxPool", (1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2],
                                      "pads": [1, 1, 0, 0, 1, 1]}, None, "nn.max_pool3d"),
        ("AveragePool", (2, 3, 10), {"kernel_shape": [4], "strides": [3], "pads": [1, 2],
                                     "count_include_pad": 1}, None, "nn.avg_pool1d"),
        ("GlobalMaxPool", (1, 2, 3, 4, 5), {}, None, "nn.adaptive_max_pool3d"),
        ("GlobalAveragePool", (2, 3, 7), {}, None, "nn.adaptive_avg_pool1d"),
    ],
)
def test_onnx_import_uses_the_nd_operators(op_type, xshape, attrs, wshape, relay_op):
    text, want, got = _onnx_case(op_type, randn(*xshape), attrs,
                                 None if wshape is None else randn(*wshape))
    assert f"{relay_op}(" in text and "nn.conv2d" not in text and "pool2d" not in text
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
