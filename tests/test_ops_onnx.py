"""The kernels against onnxruntime, for the operators ONNX shares with Relay.

Each case builds a one-node ONNX model, runs it with onnxruntime, and
compares with the relaypass kernel (whose result type is checked against the
type relation on the way).  Skipped unless the ``onnx`` extra is installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import evaluate

from relaypass import relay

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
helper = onnx.helper

X, W, B, M, V = (relay.var(n) for n in "xwbmv")
rng = np.random.default_rng(4)
OPSET = 17


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def run_onnx(op_type, inputs, attrs=None, n_outputs=1, out_dtype=None, opset=OPSET):
    """Run one ONNX node; ``inputs`` maps names to arrays (None for an omitted input)."""
    names = list(inputs)
    feeds = {k: v for k, v in inputs.items() if v is not None}
    graph = helper.make_graph(
        [helper.make_node(op_type, [n if inputs[n] is not None else "" for n in names],
                          [f"out{i}" for i in range(n_outputs)], **(attrs or {}))],
        "case",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in feeds.items()],
        [helper.make_tensor_value_info(
            f"out{i}",
            helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype or next(iter(feeds.values())).dtype)),
            None) for i in range(n_outputs)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = session.run(None, feeds)
    return outs if n_outputs > 1 else outs[0]


def close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64"),
                               rtol=rtol, atol=atol)


# --- convolution ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dshape, wshape, strides, pads, dilations, group",
    [
        ((2, 4, 9, 8), (6, 4, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((1, 6, 10, 11), (9, 2, 3, 2), (2, 3), (1, 0, 2, 1), (2, 1), 3),
        ((2, 4, 7, 7), (8, 1, 3, 3), (1, 2), (1, 1, 1, 1), (1, 1), 4),
        ((1, 3, 12, 12), (5, 3, 5, 5), (3, 3), (2, 2, 2, 2), (2, 2), 1),
    ],
)
def test_conv(dshape, wshape, strides, pads, dilations, group):
    x, w = randn(*dshape), randn(*wshape)
    want = run_onnx("Conv", {"x": x, "w": w},
                    dict(strides=strides, pads=pads, dilations=dilations, group=group))
    call = relay.nn.conv2d(X, W, strides=strides, padding=pads, dilation=dilations, groups=group)
    close(evaluate(call, x, w), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "dshape, wshape, strides, pads, dilations, group, output_padding",
    [
        ((2, 4, 5, 5), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0, 0)),
        ((1, 4, 4, 6), (4, 2, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 2, (1, 1)),
        ((1, 3, 5, 4), (3, 2, 2, 3), (3, 2), (1, 0, 0, 2), (2, 1), 1, (2, 1)),
        ((2, 6, 3, 3), (6, 1, 3, 3), (2, 1), (0, 1, 1, 0), (1, 2), 6, (1, 0)),
    ],
)
def test_conv_transpose(dshape, wshape, strides, pads, dilations, group, output_padding):
    x, w = randn(*dshape), randn(*wshape)
    want = run_onnx("ConvTranspose", {"x": x, "w": w},
                    dict(strides=strides, pads=pads, dilations=dilations, group=group,
                         output_padding=output_padding))
    call = relay.nn.conv2d_transpose(X, W, strides=strides, padding=pads, dilation=dilations,
                                     groups=group, output_padding=output_padding)
    close(evaluate(call, x, w), want, rtol=1e-4, atol=1e-4)


# --- pooling --------------------------------------------------------------------------------


# With ceil_mode, onnxruntime (like PyTorch) drops a last window that would start in the
# padding, where Relay keeps it; these cases have no such window, so both agree.
POOLS = [
    # kernel, strides, pads, ceil_mode
    ((2, 2), (2, 2), (0, 0, 0, 0), 0),
    ((3, 3), (2, 2), (1, 1, 1, 1), 1),
    ((3, 3), (2, 3), (1, 0, 1, 0), 1),
    ((2, 3), (1, 2), (0, 1, 1, 0), 0),
]


@pytest.mark.parametrize("kernel, strides, pads, ceil_mode", POOLS)
def test_max_pool(kernel, strides, pads, ceil_mode):
    x = randn(2, 3, 9, 8)
    want = run_onnx("MaxPool", {"x": x}, dict(kernel_shape=kernel, strides=strides, pads=pads,
                                              ceil_mode=ceil_mode))
    call = relay.nn.max_pool2d(X, kernel, strides, padding=pads, ceil_mode=bool(ceil_mode))
    close(evaluate(call, x), want)


def test_max_pool_with_dilation():
    x = randn(1, 2, 9, 9)
    want = run_onnx("MaxPool", {"x": x}, dict(kernel_shape=(2, 3), strides=(2, 1),
                                              dilations=(2, 2), pads=(1, 1, 0, 1)))
    call = relay.nn.max_pool2d(X, (2, 3), (2, 1), (2, 2), (1, 1, 0, 1))
    close(evaluate(call, x), want)


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("kernel, strides, pads, ceil_mode", POOLS)
def test_average_pool(kernel, strides, pads, ceil_mode, count_include_pad):
    ort_version = tuple(int(p) for p in ort.__version__.split(".")[:2])
    if ceil_mode and count_include_pad and ort_version < (1, 31):
        # onnxruntime 1.23 (the newest for Python 3.10) divides ceil-mode edge windows by a
        # different count; 1.31 agrees with Relay and with the loop reference in test_ops_nn.
        pytest.skip(f"onnxruntime {ort.__version__} miscounts ceil-mode windows with padding")
    x = randn(2, 3, 9, 8)
    want = run_onnx("AveragePool", {"x": x},
                    dict(kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad))
    call = relay.nn.avg_pool2d(X, kernel, strides, padding=pads, ceil_mode=bool(ceil_mode),
                               count_include_pad=bool(count_include_pad))
    close(evaluate(call, x), want)


def test_global_pools():
    x = randn(2, 3, 5, 4)
    close(evaluate(relay.nn.global_avg_pool2d(X), x), run_onnx("GlobalAveragePool", {"x": x}))
    close(evaluate(relay.nn.global_max_pool2d(X), x), run_onnx("GlobalMaxPool", {"x": x}))


# --- normalization and activations ----------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax(axis):
    x = randn(3, 4, 5) * 5
    close(evaluate(relay.nn.softmax(X, axis), x), run_onnx("Softmax", {"x": x}, dict(axis=axis)))
    close(evaluate(relay.nn.log_softmax(X, axis), x),
          run_onnx("LogSoftmax", {"x": x}, dict(axis=axis)), atol=1e-4)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn(size):
    x = randn(2, 7, 3, 3)
    attrs = dict(size=size, alpha=0.001, beta=0.75, bias=1.0)
    close(evaluate(relay.nn.lrn(X, **attrs), x), run_onnx("LRN", {"x": x}, attrs))


def test_batch_normalization():
    x, g, b, m = randn(2, 3, 4, 5), randn(3), randn(3), randn(3)
    v = np.abs(randn(3)) + 0.5
    want = run_onnx("BatchNormalization", {"x": x, "g": g, "b": b, "m": m, "v": v},
                    dict(epsilon=1e-3), opset=15)
    out = evaluate(relay.nn.batch_norm(X, W, B, M, V, epsilon=1e-3), x, g, b, m, v)
    close(out[0], want)


def test_layer_normalization():
    x, g, b = randn(2, 3, 6), randn(6), randn(6)
    want = run_onnx("LayerNormalization", {"x": x, "g": g, "b": b}, dict(axis=-1, epsilon=1e-4))
    close(evaluate(relay.nn.layer_norm(X, W, B, epsilon=1e-4), x, g, b), want, atol=1e-4)


def test_relu_family():
    x = randn(2, 3, 4)
    close(evaluate(relay.nn.relu(X), x), run_onnx("Relu", {"x": x}))
    close(evaluate(relay.nn.leaky_relu(X, 0.1), x),
          run_onnx("LeakyRelu", {"x": x}, dict(alpha=0.1)))
    slope = randn(3)
    close(evaluate(relay.nn.prelu(X, W), x, slope),
          run_onnx("PRelu", {"x": x, "s": slope.reshape(3, 1)}))


# --- linear ---------------------------------------------------------------------------------


def test_gemm_and_matmul():
    a, b = randn(4, 6), randn(5, 6)
    close(evaluate(relay.nn.dense(X, W), a, b),
          run_onnx("Gemm", {"a": a, "b": b}, dict(transB=1)), rtol=1e-4)
    a3, b3 = randn(3, 4, 6), randn(3, 6, 2)
    close(evaluate(relay.nn.batch_matmul(X, W, transpose_b=False), a3, b3),
          run_onnx("MatMul", {"a": a3, "b": b3}), rtol=1e-4)
    at = randn(6, 4)
    close(evaluate(relay.nn.matmul(X, W, transpose_a=True), at, b.T),
          run_onnx("Gemm", {"a": at, "b": b.T.copy()}, dict(transA=1)), rtol=1e-4)


# --- elementwise ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "onnx_op, name",
    [("Erf", "erf"), ("Sigmoid", "sigmoid"), ("Tanh", "tanh"), ("Exp", "exp"), ("Abs", "abs"),
     ("Neg", "negative"), ("Floor", "floor"), ("Ceil", "ceil"), ("Round", "round"),
     ("Sign", "sign")],
)
def test_unary(onnx_op, name):
    x = randn(3, 5) * 3
    x[0, :4] = [0.5, 1.5, -2.5, 0.0]
    close(evaluate(getattr(relay, name)(X), x), run_onnx(onnx_op, {"x": x}), rtol=1e-6)


def test_integer_division_and_modulo():
    a = rng.integers(-20, 20, (4, 5)).astype("int32")
    b = rng.integers(1, 6, (5,)).astype("int32") * np.array([1, -1, 1, -1, 1], "int32")
    np.testing.assert_array_equal(evaluate(relay.divide(X, W), a, b),
                                  run_onnx("Div", {"a": a, "b": b}))
    np.testing.assert_array_equal(evaluate(relay.mod(X, W), a, b),
                                  run_onnx("Mod", {"a": a, "b": b}, dict(fmod=1)))
    np.testing.assert_array_equal(evaluate(relay.floor_mod(X, W), a, b),
                                  run_onnx("Mod", {"a": a, "b": b}, dict(fmod=0)))
    fa, fb = randn(4, 5), randn(5) + 3
    close(evaluate(relay.mod(X, W), fa, fb), run_onnx("Mod", {"a": fa, "b": fb}, dict(fmod=1)))
    close(evaluate(relay.power(X, W), np.abs(fa), fb), run_onnx("Pow", {"a": np.abs(fa), "b": fb}))


def test_where_clip_cast():
    c = randn(3, 1) > 0
    x, y = randn(3, 4), randn(4)
    close(evaluate(relay.where(X, W, B), c, x, y), run_onnx("Where", {"c": c, "x": x, "y": y},
                                                             out_dtype="float32"))
    lo, hi = np.array(-0.5, "float32"), np.array(0.7, "float32")
    close(evaluate(relay.clip(X, -0.5, 0.7), x), run_onnx("Clip", {"x": x, "lo": lo, "hi": hi}))
    z = randn(3, 4) * 10
    np.testing.assert_array_equal(
        evaluate(relay.cast(X, "int32"), z),
        run_onnx("Cast", {"x": z}, dict(to=onnx.TensorProto.INT32), out_dtype="int32"))


# --- shape and data movement ----------------------------------------------------------------


def test_gather_family():
    data = randn(5, 4, 3)
    idx = np.array([[0, 4], [3, 1]], "int64")
    close(evaluate(relay.take(X, W, axis=0), data, idx), run_onnx("Gather", {"d": data, "i": idx}))
    neg = np.array([-1, 2, -4], "int64")
    close(evaluate(relay.take(X, W, axis=1, mode="fast"), data, neg),
          run_onnx("Gather", {"d": data, "i": neg}, dict(axis=1)))
    elems = rng.integers(0, 4, (5, 2, 3)).astype("int64")
    close(evaluate(relay.gather(X, 1, W), data, elems),
          run_onnx("GatherElements", {"d": data, "i": elems}, dict(axis=1)))
    nd = np.array([[0, 1], [4, 3], [2, 0]], "int64")  # ONNX puts the index tuple last
    close(evaluate(relay.gather_nd(X, W), data, nd.T.copy()),
          run_onnx("GatherND", {"d": data, "i": nd}))
    bnd = np.array([[1], [3], [0], [2], [1]], "int64")
    close(evaluate(relay.gather_nd(X, W, batch_dims=1), data, bnd.T.copy()),
          run_onnx("GatherND", {"d": data, "i": bnd}, dict(batch_dims=1)))


def test_slice_and_split():
    x = randn(6, 7)
    starts, ends = np.array([5, -2], "int64"), np.array([0, -100], "int64")
    axes, steps = np.array([0, 1], "int64"), np.array([-2, -3], "int64")
    want = run_onnx("Slice", {"x": x, "s": starts, "e": ends, "a": axes, "t": steps})
    close(evaluate(relay.strided_slice(X, starts, ends, steps, axes=axes), x), want)
    split = np.array([2, 5], "int64")
    onnx_parts = run_onnx("Split", {"x": x, "s": split}, dict(axis=1), n_outputs=2)
    for got, want in zip(evaluate(relay.split(X, (2,), axis=1), x), onnx_parts):
        close(got, want)


def test_shape_ops():
    x = randn(2, 3, 4)
    close(evaluate(relay.transpose(X, (2, 0, 1)), x),
          run_onnx("Transpose", {"x": x}, dict(perm=(2, 0, 1))))
    shape = np.array([0, -1], "int64")
    close(evaluate(relay.reshape(X, (0, -1)), x), run_onnx("Reshape", {"x": x, "s": shape}))
    close(evaluate(relay.nn.batch_flatten(X), x), run_onnx("Flatten", {"x": x}, dict(axis=1)))
    reps = np.array([2, 1, 3], "int64")
    close(evaluate(relay.tile(X, (2, 1, 3)), x), run_onnx("Tile", {"x": x, "r": reps}))
    y = randn(3, 1)
    target = np.array([2, 3, 5], "int64")
    close(evaluate(relay.broadcast_to(X, (2, 3, 5)), y), run_onnx("Expand", {"x": y, "s": target}))
    close(evaluate(relay.concatenate([X, W], axis=-1), (x, x)),
          run_onnx("Concat", {"a": x, "b": x}, dict(axis=-1)))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad(mode):
    x = randn(2, 3, 4)
    pads = np.array([0, 1, 2, 1, 2, 0], "int64")  # begins then ends, per axis
    value = np.array(0.25, "float32")
    want = run_onnx("Pad", {"x": x, "p": pads, "v": value if mode == "constant" else None},
                    dict(mode=mode))
    call = relay.nn.pad(X, ((0, 1), (1, 2), (2, 0)), pad_mode=mode)
    close(evaluate(call, x, value), want)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    x = randn(2, 12, 2, 3)
    close(evaluate(relay.nn.depth_to_space(X, 2, mode=mode), x),
          run_onnx("DepthToSpace", {"x": x}, dict(blocksize=2, mode=mode)))


@pytest.mark.parametrize(
    "method, onnx_mode, extra",
    [
        ("nearest_neighbor", "nearest", dict(nearest_mode="floor")),
        ("bilinear", "linear", {}),
        ("bicubic", "cubic", dict(cubic_coeff_a=-0.5)),
    ],
)
def test_upsampling_against_resize(method, onnx_mode, extra):
    x = randn(1, 2, 4, 5)
    scales = np.array([1, 1, 2, 3], "float32")
    want = run_onnx("Resize", {"x": x, "roi": None, "scales": scales},
                    dict(mode=onnx_mode, coordinate_transformation_mode="asymmetric", **extra))
    close(evaluate(relay.nn.upsampling(X, 2, 3, method=method), x), want, atol=1e-5)


def test_bilinear_upsampling_with_aligned_corners():
    x = randn(1, 2, 3, 4)
    sizes = np.array([1, 2, 6, 8], "int64")
    want = run_onnx("Resize", {"x": x, "roi": None, "scales": None, "sizes": sizes},
                    dict(mode="linear", coordinate_transformation_mode="align_corners"))
    close(evaluate(relay.nn.upsampling(X, 2, 2, method="bilinear", align_corners=True), x), want)


# --- reductions -----------------------------------------------------------------------------


@pytest.mark.parametrize("onnx_op, name", [("ReduceMean", "mean"), ("ReduceMax", "max"),
                                            ("ReduceMin", "min"), ("ReduceProd", "prod")])
@pytest.mark.parametrize("axes, keepdims", [((1,), 1), ((0, 2), 0), ((-1,), 0)])
def test_reductions(onnx_op, name, axes, keepdims):
    x = rng.uniform(0.5, 1.5, (3, 4, 5)).astype("float32")
    want = run_onnx(onnx_op, {"x": x}, dict(axes=axes, keepdims=keepdims))
    close(evaluate(getattr(relay, name)(X, axes, bool(keepdims)), x), want)


def test_reduce_sum_and_argmax():
    x = randn(3, 4, 5)
    want = run_onnx("ReduceSum", {"x": x, "a": np.array([0, 2], "int64")}, dict(keepdims=1))
    close(evaluate(relay.sum(X, (0, 2), keepdims=True), x), want)
    ties = np.array([[1, 3, 3], [2, 2, 0]], "float32")
    for last in (0, 1):
        want = run_onnx("ArgMax", {"x": ties}, dict(axis=1, keepdims=0, select_last_index=last),
                        out_dtype="int64")
        np.testing.assert_array_equal(
            evaluate(relay.argmax(X, 1, select_last_index=bool(last)), ties), want)
        want = run_onnx("ArgMin", {"x": ties}, dict(axis=0, keepdims=1, select_last_index=last),
                        out_dtype="int64")
        np.testing.assert_array_equal(
            evaluate(relay.argmin(X, 0, True, select_last_index=bool(last)), ties), want)
