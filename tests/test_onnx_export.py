"""The ONNX exporter (``relaypass.frontend.to_onnx``) and ``relaypass optimize``.

* Every model of the corpus (tests/onnx_corpus.py: transformer and CNN blocks
  as exporters write them) and a few of the onnx package's light models
  import, type, go through O3 (fused primitive functions, A-normal form),
  export, and onnxruntime on the export matches onnxruntime on the original
  (rtol 1e-4, atol 1e-5); models with dynamic axes also with the axes fixed,
  and exported with ONNX local functions.
* Each operator mapping: a call of the operator, evaluated by the
  interpreter, against onnxruntime on its export (at opset 17 and at 18,
  where reductions take their axes as an input, and 21); every operator
  with a mapping is covered.
* Bad input: every unsupported operator, form, dtype and a bad opset in one
  ExportError, nothing written; the clean-ups; external data; 100,000 calls.
* ``relaypass optimize``: the function, the command's arguments, ``--check``.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx import TensorProto, helper  # noqa: E402
from onnx_corpus import CORPUS, NEEDS, feeds, fixed_shapes  # noqa: E402
from onnx_helpers import run_ort  # noqa: E402

from relaypass import relay  # noqa: E402
from relaypass.errors import RelayPassError  # noqa: E402
from relaypass.frontend import (  # noqa: E402
    ExportError,
    OnnxImportError,
    UnsupportedOperatorError,
    export_operators,
    from_onnx,
    onnx_export,
    to_onnx,
)
from relaypass.frontend.onnx_export import FUSED_DOMAIN  # noqa: E402
from relaypass.frontend.onnx_export_graph import GraphBuilder  # noqa: E402
from relaypass.ir.op import Op, register_op  # noqa: E402
from relaypass.op import dynamic as dyn  # noqa: E402
from relaypass.op import reverse_reshape  # noqa: E402
from relaypass.tools import model_zoo, optimize  # noqa: E402
from relaypass.transform import load_pipeline  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
O3 = os.path.join(ROOT, "examples", "pipelines", "O3.toml")
ONNX_TOML = os.path.join(ROOT, "examples", "pipelines", "onnx.toml")
RTOL, ATOL = 1e-4, 1e-5


def assert_outputs_match(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def import_or_xfail(model, shape=None):
    """from_onnx, or an xfail when the model needs what the importer does not have yet."""
    try:
        return from_onnx(model, shape=shape)[0]
    except UnsupportedOperatorError as exc:
        needed = set(NEEDS.get(model.graph.name, ()))
        if needed and set(exc.operators) <= needed:
            pytest.xfail(f"the importer lacks {sorted(exc.operators)}")
        raise
    except OnnxImportError as exc:
        if shape is None and "must be known when the model is imported" in str(exc):
            pytest.xfail("dynamic axes need the importer's size variables: " + str(exc)[:80])
        raise


# --- the corpus -----------------------------------------------------------------------------------

LIGHT = ["squeezenet", "inception_v1", "shufflenet"]


def corpus_model(name):
    if name in CORPUS:
        return CORPUS[name]()
    return model_zoo.randomize_weights(model_zoo.light_model(name).load())


def model_feeds(name, model):
    return feeds(model) if name in CORPUS else model_zoo.random_input(model)


@pytest.mark.parametrize("name", [*CORPUS, *LIGHT])
def test_round_trip_through_o3(name):
    model = corpus_model(name)
    inputs = model_feeds(name, model)
    want = run_ort(model, inputs)
    mod = import_or_xfail(model)
    mod = relay.transform.InferType()(mod)
    mod = load_pipeline(O3)(mod)
    out_names = [o.name for o in model.graph.output]
    exported = to_onnx(mod, output_names=out_names)
    onnx.checker.check_model(exported, full_check=True)
    assert [i.name for i in exported.graph.input] == [
        i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    assert [o.name for o in exported.graph.output] == out_names
    assert_outputs_match(run_ort(exported, inputs), want)


@pytest.mark.parametrize("name", [n for n in CORPUS if n.endswith(":dynamic")])
def test_dynamic_axes_fixed_at_import(name):
    model = CORPUS[name]()
    inputs = feeds(model)
    mod = import_or_xfail(model, shape=fixed_shapes(model))
    exported = to_onnx(load_pipeline(O3)(mod), output_names=[o.name for o in model.graph.output])
    assert_outputs_match(run_ort(exported, inputs), run_ort(model, inputs))
    for vi in exported.graph.input:
        assert all(d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)


@pytest.mark.parametrize("name", ["resnet_block:dynamic", "mobilenet_block:dynamic",
                                  "bert_layer:dynamic"])
def test_dynamic_axes_stay_dynamic(name):
    model = CORPUS[name]()
    mod = import_or_xfail(model)
    dims = optimize._dim_params(model)
    exported = to_onnx(load_pipeline(ONNX_TOML)(mod),
                       output_names=[o.name for o in model.graph.output], dim_params=dims)
    for vi in [*exported.graph.input, *exported.graph.output]:
        got = [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
        want = [d or v for d, v in zip(dims[vi.name], [
            d.dim_value for d in next(x for x in [*model.graph.input, *model.graph.output]
                                      if x.name == vi.name).type.tensor_type.shape.dim])]
        assert got == want
    for batch in (1, 3):
        shapes = {k: (batch,) + v[1:] for k, v in fixed_shapes(model).items()}
        inputs = {k: np.resize(v, shapes[k]) for k, v in feeds(model).items()}
        assert_outputs_match(run_ort(exported, inputs), run_ort(model, inputs))


@pytest.mark.parametrize("name", ["resnet_block", "bert_layer", "gpt2_kv_cache"])
def test_fused_functions_as_onnx_local_functions(name):
    model = CORPUS[name]()
    inputs = feeds(model)
    mod = load_pipeline(O3)(import_or_xfail(model))
    exported = to_onnx(mod, onnx_functions=True, output_names=[o.name for o in model.graph.output])
    onnx.checker.check_model(exported)
    assert exported.functions
    assert {n.domain for n in exported.graph.node} == {FUSED_DOMAIN}
    assert len({f.name for f in exported.functions}) == len(exported.functions)
    assert_outputs_match(run_ort(exported, inputs), run_ort(model, inputs))


def test_identical_fused_functions_share_one_local_function():
    x = relay.var("x", shape=(2, 3))
    body = x
    for _ in range(4):
        body = relay.nn.relu(relay.add(body, relay.const(1.0)))
        body = relay.annotation.stop_fusion(body) if hasattr(relay, "annotation") else body
    mod = load_pipeline(O3)(relay.IRModule.from_expr(relay.Function([x], body)))
    exported = to_onnx(mod, onnx_functions=True)
    assert len(exported.graph.node) == 4 and len(exported.functions) == 1
    value = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    assert_outputs_match(run_ort(exported, {"x": value}), [np.maximum(value + 1, 0) + 3])


# --- one operator at a time -----------------------------------------------------------------------

rng = np.random.default_rng(0)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def ints(*shape, low=0, high=4, dtype="int64"):
    return rng.integers(low, high, shape).astype(dtype)


def v(name, value):
    return relay.var(name, shape=value.shape, dtype=str(value.dtype))


def case(build, *values, opsets=(17,), id=None):
    return pytest.param(build, values, opsets, id=id)


X3 = f32(2, 4, 9)
X4 = f32(2, 4, 6, 6)
X5 = f32(1, 2, 4, 6, 5)
W4 = f32(8, 4, 3, 3)
M = f32(3, 5)
POS = np.abs(f32(3, 5)) + 0.5
I32 = ints(3, 5, low=-7, high=8, dtype="int32")
NZ = ints(3, 5, low=1, high=5, dtype="int32") * np.where(rng.random((3, 5)) > 0.5, 1, -1).astype(
    "int32")
U8 = ints(3, 5, high=255, dtype="uint8")
B = rng.random((3, 5)) > 0.5

CASES = [
    *[case(lambda x, fn=fn: fn(x), M, id=name) for name, fn in (
        ("abs", relay.abs), ("ceil", relay.ceil), ("floor", relay.floor), ("exp", relay.exp),
        ("erf", relay.erf), ("negative", relay.negative), ("sigmoid", relay.sigmoid),
        ("tanh", relay.tanh), ("sign", relay.sign), ("round", relay.round),
        ("trunc", relay.trunc), ("nn.relu", relay.nn.relu), ("sin", relay.sin),
        ("cos", relay.cos), ("tan", relay.tan), ("atan", relay.atan), ("sinh", relay.sinh),
        ("cosh", relay.cosh), ("asinh", relay.asinh), ("isnan", relay.isnan),
        ("isinf", relay.isinf), ("isfinite", relay.isfinite), ("copy", relay.copy),
        ("stop_fusion", relay.annotation.stop_fusion), ("fast_exp", relay.fast_exp),
        ("fast_erf", relay.fast_erf), ("fast_tanh", relay.fast_tanh))],
    case(lambda x: relay.nn.fast_softmax(x, axis=1), X4, id="nn.fast_softmax"),
    case(lambda x: relay.annotation.compiler_end(relay.nn.relu(relay.annotation.compiler_begin(
        x, "ccompiler")), "ccompiler"), M, id="compiler_begin-compiler_end"),
    *[case(lambda x, fn=fn: fn(x), POS, id=name) for name, fn in (
        ("log", relay.log), ("sqrt", relay.sqrt), ("rsqrt", relay.rsqrt))],
    case(lambda x: relay.asin(relay.tanh(x)), M, id="asin"),
    case(lambda x: relay.acos(relay.tanh(x)), M, id="acos"),
    case(lambda x: relay.atanh(relay.tanh(x)), M, id="atanh"),
    case(lambda x: relay.acosh(x + relay.const(1.0)), POS, id="acosh"),
    case(lambda x: relay.trunc(x), I32, id="trunc-int"),
    case(lambda x: relay.logical_not(x), B, id="logical_not"),
    *[case(lambda x, y, fn=fn: fn(x, y), M, POS, id=name) for name, fn in (
        ("add", relay.add), ("subtract", relay.subtract), ("multiply", relay.multiply),
        ("divide", relay.divide), ("maximum", relay.maximum), ("minimum", relay.minimum),
        ("equal", relay.equal), ("not_equal", relay.not_equal), ("less", relay.less),
        ("greater", relay.greater), ("less_equal", relay.less_equal),
        ("greater_equal", relay.greater_equal), ("floor_mod", relay.floor_mod),
        ("floor_divide", relay.floor_divide), ("mod", relay.mod))],
    case(lambda x, y: relay.power(x, y), POS, M, id="power"),
    *[case(lambda x, y, fn=fn: fn(x, y), I32, NZ, id=f"{name}-int") for name, fn in (
        ("divide", relay.divide), ("floor_divide", relay.floor_divide), ("mod", relay.mod),
        ("floor_mod", relay.floor_mod), ("not_equal", relay.not_equal))],
    case(lambda x, y: relay.not_equal(x, y), B, B[::-1].copy(), id="not_equal-bool"),
    case(lambda x, y: relay.logical_and(x, y), B, B[::-1].copy(), id="logical_and"),
    case(lambda x, y: relay.logical_or(x, y), B, B[::-1].copy(), id="logical_or"),
    case(lambda x, y: relay.left_shift(x, y), U8, ints(3, 5, high=3, dtype="uint8"),
         id="left_shift"),
    case(lambda x, y: relay.right_shift(x, y), U8, ints(3, 5, high=3, dtype="uint8"),
         id="right_shift"),
    *[case(lambda x, y, fn=fn: fn(x, y), I32, NZ, opsets=(18,), id=name) for name, fn in (
        ("bitwise_and", relay.bitwise_and), ("bitwise_or", relay.bitwise_or),
        ("bitwise_xor", relay.bitwise_xor))],
    case(lambda x: relay.bitwise_not(x), I32, opsets=(18,), id="bitwise_not"),
    case(lambda x, y: relay.bitwise_and(x, y), B, B[::-1].copy(), id="bitwise_and-bool"),
    case(lambda c, x, y: relay.where(c, x, y), B, M, POS, id="where"),
    case(lambda x: relay.clip(x, -0.5, 0.7), M, id="clip"),
    case(lambda x: relay.clip(x, -3.7, float("inf")), I32, id="clip-int"),
    case(lambda x: relay.cast(x, "int32"), M * 4, id="cast"),
    case(lambda x, y: relay.cast_like(x, y), M * 4, I32, id="cast_like"),
    case(lambda x: relay.nn.leaky_relu(x, 0.2), M, id="nn.leaky_relu"),
    case(lambda x, a: relay.nn.prelu(x, a), X4, f32(4), id="nn.prelu"),
    case(lambda x: relay.nn.prelu(x, relay.const(f32(6)), axis=3), X4, id="nn.prelu-last"),
    case(lambda x: relay.nn.softmax(x, axis=1), X4, id="nn.softmax"),
    case(lambda x: relay.nn.log_softmax(x), X4, id="nn.log_softmax"),
    case(lambda x: relay.nn.dropout(x, 0.3) * relay.const(2.0), M, id="nn.dropout"),
    case(lambda x: relay.TupleGetItem(relay.nn.dropout_raw(x, 0.3), 1), M, id="nn.dropout-mask"),
    case(lambda x, b: relay.nn.bias_add(x, b), X4, f32(4), id="nn.bias_add"),
    case(lambda x, b: relay.nn.bias_add(x, b, axis=-1), X4, f32(6), id="nn.bias_add-last"),
    case(lambda x: relay.nn.batch_norm(x, *[relay.const(a) for a in (
        f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5)], epsilon=1e-3)[0], X4,
        id="nn.batch_norm"),
    case(lambda x: relay.nn.batch_norm(x, *[relay.const(a) for a in (
        f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5)], center=False, scale=False)[0], X4,
        id="nn.batch_norm-plain"),
    case(lambda x, g, b: relay.nn.layer_norm(x, g, b), X4, f32(6), f32(6), id="nn.layer_norm"),
    case(lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=1, center=False, scale=False), X4,
         f32(4), f32(4), id="nn.layer_norm-axis1"),
    case(lambda x: relay.nn.lrn(x, size=3, alpha=1e-3, beta=0.5, bias=2.0), np.abs(X4),
         id="nn.lrn"),
    case(lambda x, g, b: relay.nn.instance_norm(x, g, b), X4, f32(4), f32(4),
         id="nn.instance_norm"),
    case(lambda x, g, b: relay.nn.instance_norm(x, g, b, axis=3, center=False), X4, f32(6),
         f32(6), id="nn.instance_norm-axis3"),
    case(lambda x: relay.nn.l2_normalize(x, 1e-3, axis=[1, 3]), X4, id="nn.l2_normalize"),
    case(lambda x: relay.nn.l2_normalize(x, 1e-3), X4, opsets=(18,), id="nn.l2_normalize-all"),
    case(lambda x, y: relay.slice_like(x, y, axes=[1, -1]), X4, f32(1, 3, 2, 4),
         id="slice_like"),
    case(lambda x, y: relay.slice_like(x, y), X4, f32(1, 3), id="slice_like-leading"),
    # offsets up to 3 pixels: taps fall outside the input on every side
    case(lambda x, o: relay.nn.deformable_conv2d(x, o, relay.const(f32(6, 2, 3, 3)),
                                                 padding=(1, 1), channels=6, groups=2,
                                                 deformable_groups=2),
         X4, (f32(2, 36, 6, 6) * 3).astype(np.float32), opsets=(19,),
         id="nn.deformable_conv2d"),
    case(lambda x, o: relay.nn.deformable_conv2d(x, o, relay.const(f32(3, 3, 6, 5)),
                                                 strides=(2, 1), channels=5,
                                                 data_layout="NHWC", kernel_layout="HWIO"),
         X4, (f32(2, 1, 4, 18) * 2).astype(np.float32), opsets=(19, 21),
         id="nn.deformable_conv2d-nhwc"),
    case(lambda x, r: relay.vision.roi_align(x, r, (3, 2), 0.5, sample_ratio=2), X4,
         np.array([[0, 1, 2, 9, 8], [1, -3, 0.5, 4, 14], [1, 5, 5, 5.5, 6]], np.float32),
         id="vision.roi_align"),
    case(lambda x, r: relay.vision.roi_align(x, r, (2, 2), 1.0, layout="NHWC"), X4,
         np.array([[0, 1, 2, 4, 3.5], [1, 0.5, 0.25, 5, 4]], np.float32),
         id="vision.roi_align-nhwc"),
    case(lambda x, r: relay.vision.roi_pool(x, r, (2, 3), 0.5), X4,
         np.array([[0, 1.2, 2.2, 9.2, 8.2], [1, -3.2, 0.6, 4.2, 14.2]], np.float32),
         id="vision.roi_pool"),
    case(lambda x: relay.nn.conv2d(x, relay.const(W4), strides=2, padding=(1, 0, 2, 1),
                                   dilation=(1, 2)), X4, id="nn.conv2d"),
    case(lambda x: relay.nn.contrib_conv2d_nchwc(
        relay.layout_transform(x, "NCHW", "NCHW2c"), relay.const(f32(2, 2, 3, 3, 2, 4)),
        padding=1, data_layout="NCHW2c", out_layout="NCHW4c"), X4,
        id="nn.contrib_conv2d_NCHWc-layout_transform"),
    case(lambda x: relay.nn.contrib_depthwise_conv2d_nchwc(
        x, relay.const(f32(2, 1, 3, 3, 1, 2)), groups=4, data_layout="NCHW2c",
        kernel_layout="OIHW1i2o"), f32(1, 2, 5, 5, 2), id="nn.contrib_depthwise_conv2d_NCHWc"),
    case(lambda x: relay.nn.contrib_dense_pack(x, relay.const(f32(2, 5, 4)), "NC4n"), f32(3, 5),
         id="nn.contrib_dense_pack"),
    case(lambda x: relay.nn.conv2d(x, relay.const(f32(8, 2, 3, 3)), groups=2, padding=1),
         X4, id="nn.conv2d-groups"),
    case(lambda x: relay.nn.conv2d(x, relay.const(f32(3, 3, 4, 8)), data_layout="NHWC",
                                   kernel_layout="HWIO", padding=1), f32(2, 6, 6, 4),
         id="nn.conv2d-nhwc"),
    case(lambda x: relay.nn.conv2d_transpose(x, relay.const(f32(4, 3, 3, 3)), strides=2,
                                             padding=1, output_padding=1), X4,
         id="nn.conv2d_transpose"),
    case(lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), padding=(1, 1), ceil_mode=True), X4,
         id="nn.max_pool2d"),
    case(lambda x: relay.nn.conv1d(x, relay.const(f32(5, 4, 3)), strides=2, padding=(2, 1)),
         X3, id="nn.conv1d"),
    case(lambda x: relay.nn.conv1d_transpose(x, relay.const(f32(4, 2, 3)), strides=2,
                                             padding=(1, 0)), X3, id="nn.conv1d_transpose"),
    case(lambda x: relay.nn.conv3d(x, relay.const(f32(3, 2, 2, 3, 1)), padding=(1, 0, 1),
                                   dilation=(1, 2, 1)), X5, id="nn.conv3d"),
    case(lambda x: relay.nn.conv3d_transpose(x, relay.const(f32(2, 3, 2, 2, 2)), strides=2),
         X5, id="nn.conv3d_transpose"),
    case(lambda x: relay.nn.max_pool1d(x, (3,), (2,), padding=(1, 1)), X3, id="nn.max_pool1d"),
    case(lambda x: relay.nn.avg_pool1d(x, (2,), count_include_pad=True, padding=(1, 0)), X3,
         id="nn.avg_pool1d"),
    case(lambda x: relay.nn.max_pool3d(x, (2, 2, 2), (1, 2, 2)), X5, id="nn.max_pool3d"),
    case(lambda x: relay.nn.avg_pool3d(x, (2, 3, 2), padding=(1, 1, 0)), X5, id="nn.avg_pool3d"),
    case(lambda x: relay.nn.adaptive_avg_pool1d(x, 3), X3, id="nn.adaptive_avg_pool1d"),
    case(lambda x: relay.nn.adaptive_max_pool1d(x, 1), X3, id="nn.adaptive_max_pool1d"),
    case(lambda x: relay.nn.adaptive_max_pool2d(x, (3, 2)), X4, id="nn.adaptive_max_pool2d"),
    case(lambda x: relay.nn.adaptive_avg_pool3d(x, (1, 1, 1)), X5, id="nn.adaptive_avg_pool3d"),
    case(lambda x: relay.nn.adaptive_max_pool3d(x, (2, 3, 5)), X5, id="nn.adaptive_max_pool3d"),
    case(lambda x: relay.nn.dilate(x, (1, 2, 3), 0.5), X3, id="nn.dilate"),
    case(lambda x: relay.nn.upsampling3d(x, 2, 1.5, 2), X5, id="nn.upsampling3d"),
    case(lambda x: relay.nn.upsampling3d(x, 2, 2, 3, method="trilinear",
                                         coordinate_transformation_mode="align_corners"), X5,
         id="nn.upsampling3d-trilinear"),
    case(lambda x: relay.nn.avg_pool2d(x, (3, 3), (1, 1), padding=(1, 1),
                                       count_include_pad=True), X4, id="nn.avg_pool2d"),
    case(lambda x: relay.nn.avg_pool2d(x, (2, 2), (1, 1), dilation=(2, 2)), X4, opsets=(19,),
         id="nn.avg_pool2d-dilated"),
    case(lambda x: relay.nn.global_avg_pool2d(x), X4, id="nn.global_avg_pool2d"),
    case(lambda x: relay.nn.global_max_pool2d(x), X4, id="nn.global_max_pool2d"),
    case(lambda x: relay.nn.adaptive_avg_pool2d(x, (1, 1)), X4, id="nn.adaptive_avg_pool2d"),
    case(lambda x: relay.nn.adaptive_avg_pool2d(x, (3, 2)), X4, id="nn.adaptive_avg_pool2d-3x2"),
    case(lambda x: relay.nn.dense(x, relay.const(f32(7, 5))), M, id="nn.dense"),
    case(lambda x, w: relay.nn.dense(x, w), f32(2, 3, 5), f32(7, 5), id="nn.dense-3d"),
    case(lambda a, b: relay.nn.matmul(a, b, transpose_a=True), f32(5, 3), f32(5, 4),
         id="nn.matmul"),
    case(lambda a, b: relay.nn.batch_matmul(a, b), f32(2, 3, 5), f32(2, 4, 5),
         id="nn.batch_matmul"),
    case(lambda a, b: relay.nn.batch_matmul(a, b, transpose_a=True, transpose_b=False),
         f32(2, 5, 3), f32(2, 5, 4), id="nn.batch_matmul-ta"),
    *[case(lambda x, fn=fn: fn(x, axis=[1, 3], keepdims=True), X4, opsets=(17, 18), id=name)
      for name, fn in (("sum", relay.sum), ("mean", relay.mean), ("max", relay.max),
                       ("min", relay.min), ("prod", relay.prod))],
    case(lambda x: relay.sum(x, axis=1, exclude=True), X4, opsets=(17, 18), id="sum-exclude"),
    case(lambda x: relay.mean(x), X4, opsets=(17, 18), id="mean-all"),
    case(lambda x: relay.variance(x, axis=[2, 3], unbiased=True), X4, id="variance"),
    case(lambda x: relay.argmax(x, axis=2), X4, id="argmax"),
    case(lambda x: relay.argmin(x, keepdims=True), X4, id="argmin-all"),
    case(lambda x: relay.argsort(x, axis=1, is_ascend=False), M, id="argsort"),
    case(lambda x: relay.topk(x, 2, axis=1).astuple(), M, id="topk"),
    case(lambda x: relay.topk(x, 0, axis=0, ret_type="indices", is_ascend=True), M,
         id="topk-all"),
    case(lambda x: relay.reshape(x, (4, -1, 2)), X4, id="reshape"),
    case(lambda x: relay.reshape(x, (0, -2)), X4, id="reshape-relay-codes"),
    case(lambda x, y: relay.reshape_like(x, y), X4, f32(8, 36), id="reshape_like"),
    case(lambda x: reverse_reshape(x, (-1, 0)), X4, id="contrib_reverse_reshape"),
    case(lambda x: relay.nn.batch_flatten(x), X4, id="nn.batch_flatten"),
    case(lambda x: relay.transpose(x, (0, 2, 3, 1)), X4, id="transpose"),
    case(lambda x: relay.layout_transform(x, "NCHW", "NHWC"), X4, id="layout_transform"),
    case(lambda x: relay.squeeze(relay.expand_dims(x, 1, 2), axis=[2]), M, id="squeeze"),
    case(lambda x: relay.squeeze(relay.reshape(x, (1, 3, 1, 5))), M, id="squeeze-all"),
    case(lambda x: relay.expand_dims(x, -1, 2), M, id="expand_dims"),
    case(lambda x, y: relay.concatenate([x, y], axis=0), M, POS, id="concatenate"),
    case(lambda x, y: relay.stack([x, y], axis=1), M, POS, id="stack"),
    case(lambda x: relay.split(x, (1, 4), axis=1).astuple(), M, id="split"),
    case(lambda x: relay.split(x, 2, axis=2)[1], X4, opsets=(17, 18), id="split-sections"),
    case(lambda x: relay.strided_slice(x, (0, 1), (2, -1), (1, 2)), X4, id="strided_slice"),
    case(lambda x: relay.strided_slice(x, (5,), (1,), (-2,), axes=(3,)), X4,
         id="strided_slice-negative"),
    case(lambda x: relay.strided_slice(x, (1, 0), (2, -1), slice_mode="size"), X4,
         id="strided_slice-size"),
    case(lambda x: relay.reverse(x, axis=1), M, id="reverse"),
    case(lambda x: relay.take(x, relay.const(np.array([[0, 4], [-1, 7]])), axis=1), M,
         id="take-clip"),
    case(lambda x, i: relay.take(x, i, axis=1), M, ints(2, 3, low=-2, high=7), id="take-clip-dyn"),
    case(lambda x, i: relay.take(x, i, axis=1, mode="wrap"), M, ints(2, 3, low=-5, high=5),
         id="take-wrap"),
    case(lambda x: relay.take(x, relay.const(np.array([3, 14]))), M, id="take-flat"),
    case(lambda x, i: relay.gather(x, 1, i), M, ints(3, 2, high=5), id="gather"),
    case(lambda x, i: relay.gather_nd(x, i), M, np.array([[0, 2], [4, 1]]), id="gather_nd"),
    case(lambda x: relay.tile(x, (2, 1, 3)), M, id="tile"),
    case(lambda x: relay.repeat(x, 2, axis=0), M, id="repeat"),
    case(lambda x: relay.broadcast_to(x, (2, 3, 5)), M, id="broadcast_to"),
    case(lambda x, y: relay.broadcast_to_like(x, y), f32(3, 1), M, id="broadcast_to_like"),
    case(lambda x: relay.collapse_sum_to(x, (4, 1, 6)), X4, id="collapse_sum_to"),
    case(lambda x, y: relay.collapse_sum_like(x, y), X4, f32(6, 6), id="collapse_sum_like"),
    case(lambda x: x + relay.zeros((3, 5), "float32") + relay.ones((3, 5), "float32"), M,
         id="zeros-ones"),
    case(lambda x: relay.zeros_like(x) + relay.ones_like(x) + x, M, id="zeros_like-ones_like"),
    case(lambda x: relay.full(relay.const(2.5), (3, 5), "float32") * x, M, id="full"),
    case(lambda x, f: relay.full(f, (3, 5), "float32") * x, M, np.array(1.5, np.float32),
         id="full-input"),
    case(lambda x: relay.full_like(x, relay.const(3.0)), M, id="full_like"),
    case(lambda x, f: relay.full_like(x, f), M, np.array(1.5, np.float32), id="full_like-input"),
    case(lambda a, b: relay.arange(a, b, relay.const(2, "int32"), dtype="int32"),
         np.array(1, np.int32), np.array(9, np.int32), id="arange"),
    case(lambda a: relay.arange(relay.const(0.5), a, relay.const(0.25)), np.array(2, np.float32),
         id="arange-float"),
    case(lambda x: relay.shape_of(x), X4, id="shape_of"),
    case(lambda x: relay.ndarray_size(x, "int64"), X4, id="ndarray_size"),
    case(lambda x: relay.nn.pad(x, ((0, 0), (1, 0), (2, 1), (0, 3)), relay.const(1.5)), X4,
         id="nn.pad"),
    case(lambda x: relay.nn.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), pad_mode="reflect"), X4,
         id="nn.pad-reflect"),
    case(lambda x: relay.nn.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), pad_mode="edge"), X4,
         id="nn.pad-edge"),
    case(lambda x: relay.nn.depth_to_space(x, 2, mode="CRD"), X4, id="nn.depth_to_space"),
    case(lambda x: relay.nn.upsampling(x, 2, 3), X4, id="nn.upsampling"),
    case(lambda x: relay.nn.upsampling(x, 2, 2, method="bilinear", align_corners=True), X4,
         id="nn.upsampling-bilinear"),
    case(lambda x: relay.image.resize2d(x, (9, 4), method="linear"), X4, id="image.resize2d"),
    case(lambda x: relay.image.resize2d(x, (12, 12), method="nearest_neighbor",
                                        coordinate_transformation_mode="asymmetric",
                                        rounding_method="floor"), X4,
         id="image.resize2d-nearest"),
    case(lambda x: relay.image.resize2d(x, (3, 9), method="nearest_neighbor",
                                        coordinate_transformation_mode="align_corners"), X4,
         id="image.resize2d-nearest-align"),
    case(lambda x: relay.image.resize2d(x, (5, 4), roi=(0.1, 0.2, 0.9, 1.2),
                                        coordinate_transformation_mode="tf_crop_and_resize",
                                        extrapolation_value=-1.0), X4,
         id="image.resize2d-crop"),
    case(lambda x: relay.image.resize2d(x, (8, 5), method="cubic",
                                        coordinate_transformation_mode="align_corners"), X4,
         id="image.resize2d-cubic"),
    case(lambda x: relay.cumsum(x, axis=1, exclusive=True), M, id="cumsum"),
    case(lambda x: relay.cumsum(x, dtype="int64"), I32, id="cumsum-flat"),
    case(lambda x, y: relay.einsum([x, y], "ij,kj->ik"), M, POS, id="einsum"),
    case(lambda x: relay.trilu(x, 1, upper=False), M, id="trilu"),
    case(lambda x: relay.argwhere(x), B, id="argwhere"),
    case(lambda i: relay.one_hot(i, relay.const(2.0), relay.const(-1.0), 5, 1, "float32"),
         ints(3, 2, high=5), id="one_hot"),
    case(lambda x, i, u: relay.scatter_elements(x, i, u, axis=1), M, ints(3, 2, high=5),
         f32(3, 2), id="scatter_elements"),
    case(lambda x, i, u: relay.scatter_elements(x, i, u, axis=0, reduction="add"), M,
         ints(2, 5, high=3), f32(2, 5), id="scatter_elements-add"),
    case(lambda x, i, u: relay.scatter_nd(x, i, u), M, np.array([[0, 2], [1, 4]]), f32(2),
         id="scatter_nd"),
    case(lambda x, i, u: relay.scatter_nd(x, i, u, mode="max"), M, np.array([[2, 0]]),
         f32(2, 5), opsets=(18,), id="scatter_nd-max"),    # the dynamic operators: shapes, sizes and scales as tensor inputs
    case(lambda x, s: dyn.reshape(x, s), M, np.array([5, -1], np.int64), id="dyn.reshape"),
    case(lambda x, s: dyn.broadcast_to(x, s), f32(3, 1), np.array([2, 3, 4], np.int64),
         id="dyn.broadcast_to"),
    case(lambda s: dyn.zeros(s, "float32") + dyn.ones(s, "float32"), np.array([2, 3], np.int64),
         id="dyn.zeros-ones"),
    case(lambda f, s: dyn.full(f, s, "float32"), np.array(1.5, np.float32),
         np.array([2, 3], np.int32), id="dyn.full"),
    case(lambda x, s: dyn.full(relay.const(2, "int32"), s, "int64") + x,
         ints(2, 3), np.array([2, 3], np.int64), id="dyn.full-constant"),
    case(lambda x, r: dyn.tile(x, r), M, np.array([2, 1], np.int64), id="dyn.tile"),
    case(lambda x, b, e, t: dyn.strided_slice(x, b, e, t), X4, np.array([0, 3], np.int64),
         np.array([2, -5], np.int64), np.array([1, -1], np.int64), id="dyn.strided_slice"),
    case(lambda x, a: dyn.squeeze(x, a), f32(3, 1, 5, 1), np.array([1, -1], np.int64),
         id="dyn.squeeze"),
    case(lambda x, a: dyn.expand_dims(x, a, 2), M, np.array(-1, np.int32),
         id="dyn.expand_dims"),
    case(lambda x, k: dyn.topk(x, k, axis=1).astuple(), M, np.array(2, np.int64),
         id="dyn.topk"),
    case(lambda x, k: dyn.topk(x, k, axis=0, ret_type="indices", is_ascend=True), M,
         np.array(0, np.int32), id="dyn.topk-all"),
    case(lambda i, d: dyn.one_hot(i, relay.const(2.0), relay.const(-1.0), d, 1, "float32"),
         ints(3, 2, high=5), np.array(5, np.int64), id="dyn.one_hot"),
    case(lambda x, w: dyn.pad(x, w, relay.const(1.5)), X4,
         np.array([[0, 0], [1, 0], [2, 1], [0, 3]], np.int64), id="dyn.nn.pad"),
    case(lambda x, w: dyn.pad(x, w, relay.const(0.0), "reflect"), X4,
         np.array([[0, 0], [0, 0], [2, 1], [1, 2]], np.int64), id="dyn.nn.pad-reflect"),
    case(lambda x, s: dyn.resize2d(x, s, relay.const(np.zeros(4, np.float32))), X4,
         np.array([9, 4], np.int64), id="dyn.image.resize2d"),
    case(lambda x, h, w: dyn.upsampling(x, h, w), X4, np.array(2.0, np.float32),
         np.array(3.0, np.float32), id="dyn.nn.upsampling"),
    case(lambda x, d, h, w: dyn.upsampling3d(x, d, h, w), X5, np.array(2.0, np.float32),
         np.array(1.5, np.float32), np.array(2.0, np.float32), id="dyn.nn.upsampling3d"),
    case(lambda i, v: relay.sparse_to_dense(i, (3, 4), v, relay.const(-1.0)),
         np.array([[0, 1], [2, 3]], np.int64), f32(2), id="sparse_to_dense"),
    case(lambda i, s: dyn.sparse_to_dense(i, s, relay.const(7, "int32"), relay.const(0, "int32")),
         np.array([1, 4], np.int32), np.array([6], np.int64), id="dyn.sparse_to_dense"),
]


@pytest.mark.parametrize("build,values,opsets", CASES)
def test_operator_export_matches_interpreter(build, values, opsets):
    params = [v(f"x{i}", value) for i, value in enumerate(values)]
    body = build(*params)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    want = relay.create_executor(mod=mod).evaluate()(*values)
    want = [w.numpy() for w in want] if isinstance(want, (list, tuple)) else [want.numpy()]
    for opset in opsets:
        exported = to_onnx(mod, opset=opset)
        onnx.checker.check_model(exported, full_check=True)
        got = run_ort(exported, {f"x{i}": value for i, value in enumerate(values)})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _ops_of_cases() -> set[str]:
    ops: set[str] = set()
    for param in CASES:
        build, values, _ = param.values
        params = [v(f"x{i}", value) for i, value in enumerate(values)]
        body = build(*params)
        relay.analysis.post_order_visit(body, lambda n: ops.add(n.op.name) if isinstance(
            n, relay.Call) and isinstance(n.op, Op) else None)
    return ops


def test_every_exported_operator_has_a_case():
    missing = set(export_operators()) - _ops_of_cases() - {"cumprod"}
    assert not missing


def test_every_standard_operator_has_a_mapping():
    """In a fresh process: the operators that importing relaypass registers."""
    code = ("from relaypass.ir.op import Op; from relaypass.frontend import export_operators; "
            "print(sorted(set(Op.list_op_names()) - set(export_operators())))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("opset", [17, 18, 19, 20, 21])
def test_every_opset_writes_a_valid_model(opset):
    model = CORPUS["bert_layer"]()
    inputs = feeds(model)
    mod = load_pipeline(ONNX_TOML)(from_onnx(model)[0])
    exported = to_onnx(mod, opset=opset, output_names=["last_hidden_state"])
    assert exported.opset_import[0].version == opset
    onnx.checker.check_model(exported, full_check=True)
    assert_outputs_match(run_ort(exported, inputs), run_ort(model, inputs))


# --- bad input ------------------------------------------------------------------------------------

register_op("test_onnx_export.no_mapping", num_inputs=1,
            type_relation=lambda types, attrs: types[0], kernel=lambda args, attrs: args[0])


def _unexportable():
    x = relay.var("x", shape=(2, 3), dtype="bfloat16")
    y = relay.var("y", shape=(2, 3))
    no_mapping = relay.Call(Op.get("test_onnx_export.no_mapping"), [y])
    wide = relay.nn.conv2d(relay.var("d", shape=(1, 2, 4, 4), dtype="int8"),
                           relay.var("w", shape=(3, 2, 1, 1), dtype="int8"), out_dtype="int32")
    out = relay.Tuple([x, relay.Call(Op.get("test_onnx_export.no_mapping"), [no_mapping]),
                       relay.sum(wide), relay.cumprod(y)])
    return relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(out), out))


def test_every_problem_in_one_error_and_nothing_written(tmp_path):
    target = tmp_path / "model.onnx"
    target.write_bytes(b"keep me")
    with pytest.raises(ExportError) as info:
        to_onnx(_unexportable(), opset=16, path=target)
    err = info.value
    assert isinstance(err, RelayPassError)
    message = str(err)
    for part in ("opset 16 is out of range", "test_onnx_export.no_mapping (2 calls)",
                 "nn.conv2d (out_dtype=int32 differs from the input's dtype int8)",
                 "cumprod (ONNX has CumProd from opset 26", "bfloat16 (parameter %x)"):
        assert part in message
    assert err.operators["test_onnx_export.no_mapping"] == 2
    assert err.dtypes == ("bfloat16",) and err.opset == 16
    assert target.read_bytes() == b"keep me"
    assert sorted(os.listdir(tmp_path)) == ["model.onnx"]


@pytest.mark.parametrize("opset", [16, 22, "17"])
def test_opset_out_of_range(opset):
    x = relay.var("x", shape=(2,))
    with pytest.raises(ExportError, match="out of range"):
        to_onnx(relay.Function([x], relay.nn.relu(x)), opset=opset)


def test_a_form_that_needs_a_newer_opset():
    x = relay.var("x", shape=(1, 1, 6, 6))
    func = relay.Function([x], relay.nn.avg_pool2d(x, (2, 2), dilation=(2, 2)))
    with pytest.raises(ExportError, match="AveragePool takes dilations .* from opset 19"):
        to_onnx(func, opset=18)
    assert to_onnx(func, opset=19).graph.node[0].op_type == "AveragePool"


def test_adaptive_pooling_whose_windows_overlap():
    x = relay.var("x", shape=(1, 2, 9))
    with pytest.raises(ExportError, match=r"adaptive pooling from \[9\] to \[4\] needs output "
                                          r"sizes that divide"):
        to_onnx(relay.Function([x], relay.nn.adaptive_avg_pool1d(x, 4)))


def test_control_flow_is_named():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(2,))
    func = relay.Function([c, x], relay.If(c, x, relay.negative(x)))
    with pytest.raises(ExportError, match=r"If \(no ONNX form"):
        to_onnx(func)


def test_recursive_global_function_is_named():
    mod = relay.IRModule()
    f = relay.GlobalVar("f")
    x = relay.var("x", shape=(2,))
    mod[f] = relay.Function([x], relay.Call(f, [relay.negative(x)]),
                            ret_type=relay.TensorType((2,), "float32"))
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], relay.Call(f, [y]))
    with pytest.raises(ExportError, match="recursive call of @f"):
        to_onnx(mod)


def test_global_functions_are_inlined():
    mod = relay.IRModule()
    g = relay.GlobalVar("double")
    x = relay.var("x", shape=(2,))
    mod[g] = relay.Function([x], relay.add(x, x))
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], relay.Call(g, [relay.Call(g, [y])]))
    exported = to_onnx(mod)
    assert [n.op_type for n in exported.graph.node] == ["Add", "Add"]
    value = np.array([1.0, -2.0], np.float32)
    assert_outputs_match(run_ort(exported, {"y": value}), [value * 4])


def test_bad_names():
    x = relay.var("x", shape=(2,))
    func = relay.Function([x], relay.Tuple([relay.nn.relu(x), x]))
    with pytest.raises(ExportError, match="must name the 2 outputs"):
        to_onnx(func, output_names=["a"])
    with pytest.raises(ExportError, match="also input names"):
        to_onnx(func, output_names=["a", "x"])
    with pytest.raises(ExportError, match="no parameter for"):
        to_onnx(func, params={"w": np.zeros(2, np.float32)})
    with pytest.raises(ExportError, match="no @main"):
        to_onnx(relay.IRModule())


def test_outputs_that_are_inputs_or_repeated_get_identity_nodes():
    x = relay.var("x", shape=(2,))
    r = relay.nn.relu(x)
    exported = to_onnx(relay.Function([x], relay.Tuple([r, r, x, relay.const(np.ones(2, "float32"))])))
    value = np.array([1.0, -2.0], np.float32)
    got = run_ort(exported, {"x": value})
    assert_outputs_match(got, [np.maximum(value, 0)] * 2 + [value, np.ones(2, np.float32)])


def test_import_of_relaypass_frontend_does_not_import_onnx():
    code = ("import sys, relaypass.frontend as f; assert 'onnx' not in sys.modules; "
            "f.to_onnx, f.ExportError; assert 'onnx' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_the_onnx_package(monkeypatch):
    from relaypass.frontend import OnnxExportNotInstalledError

    monkeypatch.setitem(sys.modules, "onnx", None)
    x = relay.var("x", shape=(2,))
    with pytest.raises(OnnxExportNotInstalledError, match="pip install 'relaypass\\[onnx\\]'"):
        to_onnx(relay.Function([x], x))


# --- what the export looks like -------------------------------------------------------------------


def test_params_become_initializers_and_names_are_kept():
    model = CORPUS["resnet_block"]()
    mod, params = from_onnx(model, freeze_params=False)
    exported = to_onnx(mod, params=params, output_names=["probabilities"])
    assert [i.name for i in exported.graph.input] == ["image"]
    assert {t.name for t in exported.graph.initializer} & set(params)
    inputs = feeds(model)
    assert_outputs_match(run_ort(exported, inputs), run_ort(model, inputs))


def test_input_does_not_change_and_repeated_export_is_identical():
    model = CORPUS["gpt2_block"]()
    mod = load_pipeline(O3)(from_onnx(model)[0])
    before = mod.astext()
    first = to_onnx(mod)
    assert mod.astext() == before
    assert to_onnx(mod).SerializeToString() == first.SerializeToString()


def test_clean_ups_give_onnx_forms():
    x = relay.var("x", shape=(1, 3, 8, 8))
    conv = relay.nn.conv2d(x, relay.const(f32(4, 3, 3, 3)), padding=1)
    bn = relay.nn.batch_norm(relay.nn.bias_add(conv, relay.const(f32(4))), *[
        relay.const(a) for a in (f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5)])[0]
    act = relay.nn.relu(bn)
    hard = relay.multiply(act, relay.clip(relay.add(relay.multiply(act, relay.const(
        np.float32(1 / 6))), relay.const(np.float32(0.5))), 0.0, 1.0))
    flat = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(hard))
    dense = relay.add(relay.nn.dense(flat, relay.const(f32(5, 4))), relay.const(f32(5)))
    out = relay.divide(dense, relay.sqrt(relay.const(np.float32(2.0)) + relay.abs(dense)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], out)))
    mod = relay.transform.SimplifyExpr()(mod)
    exported = to_onnx(mod)
    assert [n.op_type for n in exported.graph.node] == [
        "Conv", "Relu", "HardSwish", "GlobalAveragePool", "Flatten", "Gemm", "Abs", "Add",
        "Sqrt", "Div"]
    value = f32(1, 3, 8, 8)
    want = relay.create_executor(mod=mod).evaluate()(value).numpy()
    np.testing.assert_allclose(run_ort(exported, {"x": value})[0], want, rtol=1e-4, atol=1e-5)


def test_external_data(tmp_path):
    x = relay.var("x", shape=(1, 64))
    w = f32(256, 64)
    func = relay.Function([x], relay.nn.dense(x, relay.const(w)))
    path = tmp_path / "big.onnx"
    to_onnx(func, path=path, external_data=True, size_threshold=1024)
    assert sorted(os.listdir(tmp_path)) == ["big.onnx", "big.onnx.data"]
    assert os.path.getsize(tmp_path / "big.onnx") < 4096
    value = f32(1, 64)
    np.testing.assert_allclose(run_ort(str(path), {"x": value})[0], value @ w.T, rtol=1e-5,
                               atol=1e-5)
    to_onnx(func, path=path)
    assert os.path.getsize(tmp_path / "big.onnx") > w.nbytes


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_written_file_reads_back_as_the_returned_model(tmp_path, monkeypatch, streamed):
    # A model is serialized whole, or, with large weights (here all of them), written field by
    # field, each weight from its array: a column-major weight, a 0-d one, an empty one, bool
    # and float16 ones.
    if streamed:
        monkeypatch.setattr(onnx_export, "STREAMED_BYTES", -1)
    x = relay.var("x", shape=(3, 4))
    weights = [
        np.asfortranarray(f32(3, 4)),
        np.array(2.5, dtype="float32"),
        np.zeros((3, 0), dtype="float32"),
    ]
    body = x
    for w in weights:
        body = relay.add(body, relay.sum(relay.const(w)))
    mask = relay.const(np.array([[True, False, True, True]] * 3))
    half = relay.const(np.arange(12, dtype="float16").reshape(3, 4))
    body = relay.where(mask, body, relay.cast(half, "float32"))
    path = tmp_path / "model.onnx"
    model = to_onnx(relay.Function([x], body), path=path)
    back = onnx.load(str(path))
    assert back == model
    assert (path.read_bytes() == model.SerializeToString()) is not streamed
    assert sorted(os.listdir(tmp_path)) == ["model.onnx"]
    value = f32(3, 4)
    want = np.where(mask.data.numpy(), value + sum(float(w.sum()) for w in weights),
                    np.arange(12, dtype="float32").reshape(3, 4))
    np.testing.assert_allclose(run_ort(str(path), {"x": value})[0], want, rtol=1e-5, atol=1e-5)


def test_initializers_are_stored_little_endian():
    builder = GraphBuilder(onnx, 17)
    values = np.arange(6, dtype=">f4").reshape(2, 3)
    builder.add_initializer("w", values)
    graph = onnx.GraphProto()
    builder.write_initializers(graph)
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(graph.initializer[0]), values)


def test_a_chain_of_100000_calls_exports():
    x = relay.var("x", shape=(2,))
    body = x
    for _ in range(100_000):
        body = relay.negative(body)
    exported = to_onnx(relay.Function([x], body))
    assert len(exported.graph.node) == 100_000


def test_a_let_chain_of_100000_bindings_exports():
    x = relay.var("x", shape=(2,))
    vs = [relay.var(f"v{i}") for i in range(100_000)]
    body = vs[-1]
    for i in reversed(range(100_000)):
        body = relay.Let(vs[i], relay.negative(vs[i - 1] if i else x), body)
    exported = to_onnx(relay.Function([x], body))
    assert len(exported.graph.node) == 100_000


# --- relaypass optimize ---------------------------------------------------------------------------


def test_default_pipeline_is_the_example_file():
    from relaypass.transform import read_pipeline
    from relaypass.transform.pipeline import pipeline_from_data

    file = read_pipeline(ONNX_TOML)
    default = pipeline_from_data(optimize.DEFAULT_PIPELINE, "default")
    assert (file.name, file.opt_level) == (default.name, default.opt_level)
    assert file.explain().splitlines()[1:] == default.explain().splitlines()[1:]


@pytest.mark.parametrize("name", ["bert_layer", "resnet_block", "gpt2_kv_cache"])
def test_optimize_model(tmp_path, name):
    model = CORPUS[name]()
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    result = optimize.optimize_model(str(src), dst)
    assert result.nodes_before == len(model.graph.node) > result.nodes_after
    assert result.opset == 17
    check = optimize.check_outputs(model, str(dst), feeds(model))
    assert check.ok and [o[0] for o in check.outputs] == [o.name for o in model.graph.output]


def _parse(argv):
    parser = argparse.ArgumentParser(prog="relaypass")
    optimize.register(parser.add_subparsers(dest="command"), [])
    return parser.parse_args(argv)


def test_optimize_command(tmp_path):
    model = CORPUS["gpt2_block:dynamic"]()
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    args = _parse(["optimize", str(src), "-o", str(dst), "--shape", "input_ids=2,8", "--check",
                   "--opset", "18", "-p", "InferType,FoldConstant,SimplifyExpr"])
    out = io.StringIO()
    assert optimize.run(args, out) == 0
    text = out.getvalue()
    assert f"{len(model.graph.node)} nodes ->" in text and "(opset 18)" in text
    assert "check logits: largest difference" in text and ": ok" in text
    assert onnx.load(dst).opset_import[0].version == 18


def test_optimize_check_reports_a_difference(tmp_path, monkeypatch):
    model = CORPUS["resnet_block"]()
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    real = optimize.optimize_model

    def wrong(*args, **kwargs):  # an optimizer that breaks the model: one weight changed
        result = real(*args, **kwargs)
        broken = onnx.load(dst)
        broken.graph.initializer[0].raw_data = np.frombuffer(
            broken.graph.initializer[0].raw_data, np.float32).__mul__(2).tobytes()
        onnx.save(broken, dst)
        return result

    monkeypatch.setattr(optimize, "optimize_model", wrong)
    out = io.StringIO()
    assert optimize.run(_parse(["optimize", str(src), "-o", str(dst), "--check"]), out) == 1
    assert "DIFFERS beyond rtol 0.0001, atol 1e-05" in out.getvalue()


@pytest.mark.parametrize("argv,message", [
    (["--shape", "x"], "expected NAME=D1,D2"),
    (["--opset", "16"], "writes opsets 17 to 21"),
    (["--rtol", "-1"], "finite number >= 0"),
])
def test_optimize_bad_arguments(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit):
        _parse(["optimize", "in.onnx", "-o", "out.onnx", *argv])
    assert message in capsys.readouterr().err


def test_optimize_bad_model(tmp_path):
    src = tmp_path / "in.onnx"
    src.write_bytes(b"not a model")
    with pytest.raises(RelayPassError, match="not an ONNX model"):
        optimize.optimize_model(str(src), tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_seeded_inputs_index_within_their_tables():
    model = CORPUS["bert_layer"]()
    inputs = optimize.seeded_inputs(model, seed=3)
    assert inputs["input_ids"].max() < 50 and inputs["token_type_ids"].max() < 2
    assert inputs["input_ids"].shape == (2, 8)
    again = optimize.seeded_inputs(model, seed=3)
    assert all(np.array_equal(inputs[k], again[k]) for k in inputs)


def _cli_has_optimize() -> bool:
    done = subprocess.run([sys.executable, "-m", "relaypass", "--help"], capture_output=True,
                          text=True)
    return "optimize" in done.stdout


def test_relaypass_optimize_in_a_subprocess(tmp_path):
    if not _cli_has_optimize():
        pytest.skip("the optimize command is not wired into the CLI yet")
    model = CORPUS["vit_embed"]()
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    done = subprocess.run([sys.executable, "-m", "relaypass", "optimize", str(src), "-o", str(dst),
                           "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "check embeddings" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "relaypass", "optimize", str(tmp_path / "no.onnx"),
                          "-o", str(dst)], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_optimize_keeps_dim_params(tmp_path):
    model = CORPUS["resnet_block:dynamic"]()
    src, dst = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    optimize.optimize_model(str(src), dst)
    out = onnx.load(dst)
    assert out.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert out.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_handwritten_model_with_an_unsupported_operator(tmp_path):
    node = helper.make_node("Det", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                          [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOperatorError, match="Det"):
        optimize.optimize_model(model, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_tensor_types_of_exported_values():
    x = relay.var("x", shape=(relay.Any(), 3))
    exported = to_onnx(relay.Function([x], relay.nn.relu(x)), dim_params={"x": ["n", None]})
    dims = exported.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "n" and dims[1].dim_value == 3
    out = exported.graph.output[0].type.tensor_type
    assert out.elem_type == TensorProto.FLOAT and not out.shape.dim[0].HasField("dim_value")
