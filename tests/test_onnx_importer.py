"""The ONNX importer, converter by converter, against onnxruntime.

Each case builds a small ONNX graph with onnx.helper, runs it with
onnxruntime, imports it with ``from_onnx``, type-checks it with InferType
and evaluates it with the interpreter.  onnxruntime does not run opsets
below 7, so the legacy attributes of the oldest opsets (``broadcast`` and
``axis`` of the arithmetic operators, Gemm's ``broadcast``,
BatchNormalization's ``is_test``) are checked against numpy instead.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from relaypass import relay
from relaypass.errors import RelayPassError
from relaypass.ir.types import Any, SizeVar, SymbolicDim, TensorType, TupleType
from relaypass.transform import get_pass

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx import helper, numpy_helper  # noqa: E402
from onnx_helpers import model_of, node, run_ort  # noqa: E402

from relaypass.frontend import (  # noqa: E402
    OnnxImportError,
    OnnxNotInstalledError,
    UnsupportedOperatorError,
    from_onnx,
    supported_operators,
    unsupported_operators,
)

OPSET = 13
rng = np.random.default_rng(7)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def positive(*shape):
    return rng.uniform(0.5, 2.0, shape).astype("float32")


def make_model(nodes, inputs, outputs=("y",), opset=OPSET, initializers=None):
    """A model of ``nodes``; ``inputs`` and ``initializers`` map names to example arrays."""
    model = model_of(nodes, {k: (helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                             for k, v in inputs.items()},
                     outputs, initializers, opset, name="case")
    model.ir_version = 8 if opset >= 13 else 4
    return model


def run_relay(model, inputs, **kwargs):
    """Import, type-check and interpret; the outputs' types must match their values."""
    mod, params = from_onnx(model, **kwargs)
    mod = get_pass("InferType")(mod)
    ret = mod["main"].body.checked_type
    out = relay.create_executor(mod=mod).evaluate()(**inputs, **params)
    values = list(out) if isinstance(out, tuple) else [out]
    types = list(ret.fields) if isinstance(ret, TupleType) else [ret]
    for value, ty in zip(values, types):
        value = np.asarray(value)
        assert str(value.dtype) == ty.dtype
        assert len(value.shape) == len(ty.shape)
        assert all(isinstance(d, (Any, SymbolicDim)) or d == v
                   for d, v in zip(ty.shape, value.shape))
    return [np.asarray(v) for v in values]


def check(nodes, inputs, outputs=("y",), opset=OPSET, initializers=None, rtol=1e-5, atol=1e-6):
    """The importer's result equals onnxruntime's, in value, dtype and shape."""
    model = make_model(nodes, inputs, outputs, opset, initializers)
    expected = run_ort(model, inputs)
    got = run_relay(model, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)


# --- elementwise ----------------------------------------------------------------------------------

UNARY = [
    ("Relu", {}, 13), ("Sigmoid", {}, 13), ("Tanh", {}, 13), ("Exp", {}, 13), ("Abs", {}, 13),
    ("Neg", {}, 13), ("Floor", {}, 13), ("Ceil", {}, 13), ("Round", {}, 13), ("Erf", {}, 13),
    ("Sign", {}, 13), ("Reciprocal", {}, 13), ("Identity", {}, 13),
    ("LeakyRelu", {"alpha": 0.3}, 13), ("Softsign", {}, 13), ("Softplus", {}, 13),
    ("Elu", {"alpha": 0.7}, 13), ("Selu", {}, 13), ("Celu", {"alpha": 1.5}, 13),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, 13), ("HardSwish", {}, 14),
    ("ThresholdedRelu", {"alpha": 0.5}, 13), ("Mish", {}, 18),
    ("Gelu", {}, 20), ("Gelu", {"approximate": "tanh"}, 20),
]


@pytest.mark.parametrize("op_type, attrs, opset", UNARY, ids=[f"{u[0]}-{u[2]}" for u in UNARY])
def test_unary(op_type, attrs, opset):
    x = randn(2, 3, 4) * 3
    check([node(op_type, **attrs)], {"x": x}, opset=opset)


@pytest.mark.parametrize("op_type", ["Log", "Sqrt"])
def test_unary_positive(op_type):
    check([node(op_type)], {"x": positive(3, 5)})


def test_not():
    check([node("Not")], {"x": rng.random((3, 4)) > 0.5})


BINARY = ["Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "LessOrEqual",
          "GreaterOrEqual"]


@pytest.mark.parametrize("op_type", BINARY)
def test_binary_broadcasts_like_numpy(op_type):
    a, b = randn(2, 3, 4), randn(3, 1)
    b[0, 0] = a[0, 0, 0]  # an equal pair for the comparisons
    check([node(op_type, ["a", "b"])], {"a": a, "b": b})


def test_pow_with_integer_exponent():
    check([node("Pow", ["a", "b"])], {"a": positive(2, 3), "b": np.array([1, 2, 3], "int64")},
          rtol=1e-5)


@pytest.mark.parametrize("op_type", ["And", "Or", "Xor"])
def test_logical(op_type):
    check([node(op_type, ["a", "b"])], {"a": rng.random((2, 4)) > 0.5, "b": rng.random(4) > 0.5})


@pytest.mark.parametrize("fmod, dtype", [(0, "int32"), (1, "int32"), (1, "float32")])
def test_mod(fmod, dtype):
    a = np.array([[7, -7, 5], [-5, 9, -9]], dtype)
    b = np.array([3, 3, -2], dtype)
    check([node("Mod", ["a", "b"], fmod=fmod)], {"a": a, "b": b})


@pytest.mark.parametrize("op_type", ["Sum", "Max", "Min", "Mean"])
def test_variadic(op_type):
    check([node(op_type, ["a", "b", "c"])], {"a": randn(2, 3), "b": randn(3), "c": randn(1, 3)})


def test_variadic_single_input():
    check([node("Max", ["a"])], {"a": randn(2, 3)})


def test_where():
    check([node("Where", ["c", "a", "b"])],
          {"c": rng.random((2, 3)) > 0.5, "a": randn(2, 3), "b": randn(3)})


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (3, 4, 5), (5,)])
def test_prelu(slope_shape):
    check([node("PRelu", ["x", "s"])], {"x": randn(2, 3, 4, 5), "s": randn(*slope_shape)})


def test_prelu_per_channel_maps_to_nn_prelu():
    model = make_model([node("PRelu", ["x", "s"])], {"x": randn(2, 3, 4, 5)},
                       initializers={"s": randn(3, 1, 1)})
    mod, _ = from_onnx(model)
    assert "nn.prelu" in mod.astext()


@pytest.mark.parametrize("to, dtype", [(onnx.TensorProto.INT32, "int32"),
                                       (onnx.TensorProto.FLOAT16, "float16"),
                                       (onnx.TensorProto.BOOL, "bool")])
def test_cast(to, dtype):
    check([node("Cast", to=to)], {"x": randn(3, 4) * 4})


def test_cast_like():
    check([node("CastLike", ["x", "t"])], {"x": randn(3) * 4, "t": np.zeros(1, "int64")},
          opset=15)


def test_clip_attributes_before_opset_11():
    check([node("Clip", min=-0.5, max=0.7)], {"x": randn(3, 4)}, opset=10)


def test_clip_inputs():
    check([node("Clip", ["x", "lo", "hi"])], {"x": randn(3, 4)},
          initializers={"lo": np.array(-0.5, "float32"), "hi": np.array(0.7, "float32")})


def test_clip_with_only_a_maximum_given_as_an_input():
    check([node("Clip", ["x", "", "hi"])], {"x": randn(3, 4), "hi": np.array(0.2, "float32")})


# --- convolution and pooling ----------------------------------------------------------------------

CONV = [
    ((1, 4, 9, 8), (6, 4, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}),
    ((2, 6, 10, 9), (6, 2, 3, 2), {"group": 3, "dilations": [2, 1]}),
    ((1, 4, 7, 7), (8, 1, 3, 3), {"group": 4, "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 8, 7), (5, 3, 2, 4), {"auto_pad": "SAME_LOWER"}),
    ((1, 3, 8, 7), (5, 3, 3, 3), {"auto_pad": "VALID", "strides": [2, 3]}),
    ((2, 4, 11), (5, 4, 3), {"pads": [2, 1], "strides": [2], "dilations": [2]}),
    ((1, 4, 5, 6, 7), (6, 2, 2, 3, 2), {"group": 2, "pads": [1, 0, 1, 0, 1, 1],
                                        "strides": [2, 1, 2], "dilations": [1, 2, 1]}),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("xshape, wshape, attrs", CONV, ids=[f"{len(c[0]) - 2}d-{i}"
                                                             for i, c in enumerate(CONV)])
def test_conv(xshape, wshape, attrs, bias):
    inits = {"w": randn(*wshape)}
    if bias:
        inits["b"] = randn(wshape[0])
    check([node("Conv", ["x", "w", "b"] if bias else ["x", "w"], **attrs)], {"x": randn(*xshape)},
          initializers=inits, rtol=1e-4, atol=1e-5)


CONV_T = [
    ((1, 4, 5, 6), (4, 3, 3, 3), {"strides": [2, 3], "pads": [1, 0, 1, 2],
                                  "output_padding": [1, 0]}),
    ((2, 4, 5, 5), (4, 2, 3, 2), {"group": 2, "dilations": [2, 1]}),
    ((1, 2, 5, 6), (2, 3, 3, 3), {"strides": [2, 2], "output_shape": [10, 12]}),
    ((1, 2, 5, 6), (2, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 7), (3, 2, 4), {"strides": [3], "pads": [1, 2]}),
]


@pytest.mark.parametrize("xshape, wshape, attrs", CONV_T, ids=[str(i) for i in range(len(CONV_T))])
def test_conv_transpose(xshape, wshape, attrs):
    check([node("ConvTranspose", ["x", "w", "b"], **attrs)], {"x": randn(*xshape)},
          initializers={"w": randn(*wshape), "b": randn(wshape[1] * attrs.get("group", 1))},
          rtol=1e-4, atol=1e-5)


POOL = [
    ("MaxPool", (1, 2, 9, 8), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}, 13),
    ("MaxPool", (1, 2, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, 13),
    ("MaxPool", (1, 2, 12, 9), {"kernel_shape": [2, 2], "dilations": [2, 3]}, 13),
    ("MaxPool", (1, 2, 7, 8), {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER",
                               "strides": [2, 2]}, 13),
    ("MaxPool", (2, 3, 10), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, 13),
    ("MaxPool", (1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2],
                                  "pads": [1, 1, 0, 0, 1, 1]}, 13),
    ("AveragePool", (1, 2, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                   "pads": [1, 1, 1, 1]}, 13),
    ("AveragePool", (1, 2, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                   "pads": [1, 1, 1, 1], "count_include_pad": 1}, 13),
    ("AveragePool", (1, 2, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, 13),
    ("AveragePool", (1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2]}, 19),
    ("AveragePool", (2, 3, 10), {"kernel_shape": [4], "strides": [3], "pads": [1, 2]}, 13),
    ("AveragePool", (1, 2, 5, 6, 7), {"kernel_shape": [3, 2, 3], "strides": [2, 2, 1],
                                      "pads": [1, 0, 1, 1, 1, 0]}, 13),
]


@pytest.mark.parametrize("op_type, xshape, attrs, opset", POOL,
                         ids=[f"{p[0]}-{i}" for i, p in enumerate(POOL)])
def test_pool(op_type, xshape, attrs, opset):
    check([node(op_type, **attrs)], {"x": randn(*xshape)}, opset=opset)


@pytest.mark.parametrize("op_type", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 7), (1, 2, 3, 4, 5)])
def test_global_pool(op_type, shape):
    check([node(op_type)], {"x": randn(*shape)})


def test_maxpool_indices_output_is_reported_when_used():
    model = make_model([node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
                       {"x": randn(1, 1, 4, 4)}, outputs=("y", "i"))
    with pytest.raises(UnsupportedOperatorError, match="output 1 .* of MaxPool"):
        from_onnx(model)


# --- normalization --------------------------------------------------------------------------------


def bn_params(c):
    return {"s": randn(c), "b": randn(c), "m": randn(c), "v": positive(c)}


@pytest.mark.parametrize("opset", [9, 15])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 2, 2, 2)])
def test_batch_norm(shape, opset):
    check([node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)],
          {"x": randn(*shape)}, initializers=bn_params(3), opset=opset, rtol=1e-5, atol=1e-5)


def test_batch_norm_is_a_tuple_wrapper_field():
    model = make_model([node("BatchNormalization", ["x", "s", "b", "m", "v"])],
                       {"x": randn(2, 3, 4, 5)}, initializers=bn_params(3))
    body = from_onnx(model)[0]["main"].body
    assert isinstance(body, relay.TupleGetItem) and body.index == 0
    assert body.tuple_value.op.name == "nn.batch_norm"


def test_batch_norm_spatial_0_normalizes_per_activation():
    # Opset 7 and 8 still have spatial; spatial=0 takes statistics shaped like one sample.
    params = {k: v.reshape(3, 1, 1) * np.ones((3, 4, 5), "float32")
              for k, v in bn_params(3).items()}
    params["v"] = positive(3, 4, 5)
    check([node("BatchNormalization", ["x", "s", "b", "m", "v"], spatial=0)],
          {"x": randn(2, 3, 4, 5)}, initializers=params, opset=7, rtol=1e-5, atol=1e-5)


def test_lrn():
    check([node("LRN", size=3, alpha=1e-3, beta=0.7, bias=1.5)], {"x": randn(2, 6, 4, 4)})


def test_instance_norm():
    check([node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-4)],
          {"x": randn(2, 3, 4, 5)}, initializers={"s": randn(3), "b": randn(3)}, atol=1e-5)


@pytest.mark.parametrize("axis, bias", [(-1, True), (-1, False), (1, True)])
def test_layer_norm(axis, bias):
    inputs = ["x", "s", "b"] if bias else ["x", "s"]
    shape = (2, 3, 8)
    inits = {"s": randn(*shape[axis:]), "b": randn(*shape[axis:])}
    if not bias:
        del inits["b"]
    check([node("LayerNormalization", inputs, axis=axis, epsilon=1e-4)], {"x": randn(*shape)},
          initializers=inits, opset=17, atol=1e-5)


def test_layer_norm_on_the_last_axis_is_nn_layer_norm():
    model = make_model([node("LayerNormalization", ["x", "s", "b"])], {"x": randn(2, 8)},
                       initializers={"s": randn(8), "b": randn(8)}, opset=17)
    assert "nn.layer_norm" in from_onnx(model)[0].astext()


def test_dropout_is_identity_at_inference():
    check([node("Dropout", ["x"], ["y", "mask"])], {"x": randn(3, 4)}, outputs=("y", "mask"))


@pytest.mark.parametrize("opset, dtype", [(7, "float32"), (10, "bool")])
def test_dropout_mask_keeps_everything(opset, dtype):
    # As ONNX's reference evaluator (onnxruntime gives an all-false mask at opset 10): every
    # element is kept at inference; opsets 7 to 9 type the mask like the data.
    x = randn(3, 4)
    y, mask = relay_only([node("Dropout", ["x"], ["y", "mask"])], {"x": x}, opset,
                         outputs=("y", "mask"))
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(mask, np.ones((3, 4), dtype))


def test_dropout_is_relay_nn_dropout():
    model = make_model([node("Dropout", ratio=0.25)], {"x": randn(3, 4)}, opset=9)
    assert "nn.dropout" in from_onnx(model)[0].astext()


# --- matrix products and softmax ------------------------------------------------------------------

GEMM = [
    ((3, 4), (4, 5), (5,), {}),
    ((4, 3), (4, 5), (3, 5), {"transA": 1, "alpha": 0.5, "beta": 2.0}),
    ((3, 4), (5, 4), (1, 5), {"transB": 1}),
    ((3, 4), (5, 4), None, {"transB": 1, "alpha": 1.5}),
]


@pytest.mark.parametrize("ashape, bshape, cshape, attrs", GEMM, ids=[str(i) for i in range(4)])
def test_gemm(ashape, bshape, cshape, attrs):
    inits = {"b": randn(*bshape)}
    names = ["a", "b"]
    if cshape is not None:
        inits["c"] = randn(*cshape)
        names.append("c")
    check([node("Gemm", names, **attrs)], {"a": randn(*ashape)}, initializers=inits, atol=1e-5)


MATMUL = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((5, 3, 4), (5, 4, 2)),
          ((4,), (4, 5)), ((2, 3, 4), (4,)), ((4, 6), (2, 6, 3))]


@pytest.mark.parametrize("ashape, bshape", MATMUL, ids=[str(i) for i in range(len(MATMUL))])
def test_matmul(ashape, bshape):
    check([node("MatMul", ["a", "b"])], {"a": randn(*ashape), "b": randn(*bshape)}, atol=1e-5)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset, attrs", [(11, {}), (11, {"axis": 2}), (11, {"axis": -1}),
                                          (13, {}), (13, {"axis": 1})])
def test_softmax_follows_the_opset(op_type, opset, attrs):
    # Before opset 13 the input is flattened to 2-D around the axis (default 1): on a 4-D input
    # that normalizes over three axes; from opset 13 only along the axis (default -1).
    check([node(op_type, **attrs)], {"x": randn(2, 3, 4, 5)}, opset=opset, atol=1e-5)


def test_softmax_flatten_rule_differs_from_opset_13():
    x = randn(2, 3, 4)
    old = run_relay(make_model([node("Softmax", axis=1)], {"x": x}, opset=11), {"x": x})[0]
    new = run_relay(make_model([node("Softmax", axis=1)], {"x": x}, opset=13), {"x": x})[0]
    np.testing.assert_allclose(old.sum(axis=(1, 2)), 1, rtol=1e-5)
    np.testing.assert_allclose(new.sum(axis=1), 1, rtol=1e-5)
    assert not np.allclose(old, new)


# --- shapes and data movement ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[0, -1], [2, 0, 2, 5], [-1], [4, 1, 15]])
def test_reshape(shape):
    check([node("Reshape", ["x", "s"])], {"x": randn(4, 3, 5)},
          initializers={"s": np.array(shape, "int64")})


def test_reshape_allowzero():
    check([node("Reshape", ["x", "s"], allowzero=1)], {"x": randn(4, 3)},
          initializers={"s": np.array([3, 4], "int64")}, opset=14)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 3])
def test_flatten(axis):
    check([node("Flatten", axis=axis)], {"x": randn(2, 3, 4)})


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(perm):
    attrs = {} if perm is None else {"perm": perm}
    check([node("Transpose", **attrs)], {"x": randn(2, 3, 4)})


def test_concat():
    check([node("Concat", ["a", "b", "c"], axis=-2)],
          {"a": randn(2, 1, 3), "b": randn(2, 4, 3), "c": randn(2, 2, 3)})


@pytest.mark.parametrize("opset, split, n, extent", [(13, None, 3, 6), (13, [1, 4, 1], 3, 6),
                                                     (11, None, 2, 6), (18, None, 4, 7)])
def test_split(opset, split, n, extent):
    outs = [f"y{i}" for i in range(n)]
    if split is not None and opset >= 13:
        nodes = [node("Split", ["x", "s"], outs, axis=1)]
        inits = {"s": np.array(split, "int64")}
    else:
        attrs = {"num_outputs": n} if opset >= 18 else {}
        nodes, inits = [node("Split", ["x"], outs, axis=1, **attrs)], None
    check(nodes, {"x": randn(2, extent, 3)}, outputs=outs, opset=opset, initializers=inits)


SLICES = [([1, 0], [3, 10], None, None), ([0, -1], [2, -4], [0, 2], [1, -1]),
          ([-1], [-100], [1], [-2]), ([1], [2**62], [-1], [2])]


@pytest.mark.parametrize("starts, ends, axes, steps", SLICES, ids=[str(i) for i in range(4)])
def test_slice(starts, ends, axes, steps):
    names, inits = ["x", "s", "e"], {"s": np.array(starts, "int64"), "e": np.array(ends, "int64")}
    if axes is not None:
        names.append("a")
        inits["a"] = np.array(axes, "int64")
    if steps is not None:
        names.append("t")
        inits["t"] = np.array(steps, "int64")
    check([node("Slice", names)], {"x": randn(4, 5, 6)}, initializers=inits)


def test_gather_with_constant_negative_indices():
    check([node("Gather", ["x", "i"], axis=1)], {"x": randn(3, 5, 2)},
          initializers={"i": np.array([[0, -1], [-5, 2]], "int64")})


def test_gather_with_input_indices():
    check([node("Gather", ["x", "i"])], {"x": randn(5, 3), "i": np.array([4, -2, 0], "int64")})


def test_gather_elements():
    check([node("GatherElements", ["x", "i"], axis=1)],
          {"x": randn(3, 4), "i": np.array([[0, 3], [1, -1], [2, 2]], "int64")})


def test_gather_nd():
    check([node("GatherND", ["x", "i"])],
          {"x": randn(3, 4, 5), "i": np.array([[[0, 1], [2, 3]], [[1, 0], [2, 2]]], "int64")})


@pytest.mark.parametrize("opset", [11, 13])
def test_unsqueeze(opset):
    if opset >= 13:
        nodes, inits = [node("Unsqueeze", ["x", "a"])], {"a": np.array([0, -1, 2], "int64")}
    else:
        nodes, inits = [node("Unsqueeze", axes=[0, -1, 2])], None
    check(nodes, {"x": randn(3, 4)}, opset=opset, initializers=inits)


@pytest.mark.parametrize("axes", [None, [1], [-1, 1]])
def test_squeeze(axes):
    names, inits = ["x"], None
    if axes is not None:
        names, inits = ["x", "a"], {"a": np.array(axes, "int64")}
    check([node("Squeeze", names)], {"x": randn(3, 1, 4, 1)}, initializers=inits)


@pytest.mark.parametrize("attrs", [{}, {"start": 1}, {"start": -3, "end": -1}])
def test_shape(attrs):
    check([node("Shape", **attrs)], {"x": randn(2, 3, 4, 5)}, opset=15)


def test_size():
    check([node("Size")], {"x": randn(2, 3, 4)})


@pytest.mark.parametrize("xshape, shape", [((3, 1), [2, 1, 4]), ((1, 4), [3, 1]), ((2, 3), [1])])
def test_expand(xshape, shape):
    check([node("Expand", ["x", "s"])], {"x": randn(*xshape)},
          initializers={"s": np.array(shape, "int64")})


def test_tile():
    check([node("Tile", ["x", "r"])], {"x": randn(2, 3)}, initializers={"r": np.array([2, 3], "int64")})


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad(mode):
    check([node("Pad", ["x", "p", "v"] if mode == "constant" else ["x", "p"], mode=mode)],
          {"x": randn(1, 2, 4, 5)},
          initializers={"p": np.array([0, 0, 1, 2, 0, 1, 3, 0], "int64"),
                        "v": np.array(1.5, "float32")})


def test_pad_negative_pads_crop():
    check([node("Pad", ["x", "p"])], {"x": randn(3, 6)},
          initializers={"p": np.array([-1, 2, 1, -3], "int64")})


def test_pad_with_axes():
    check([node("Pad", ["x", "p", "", "a"])], {"x": randn(2, 3, 4)},
          initializers={"p": np.array([1, 2, 0, 1], "int64"), "a": np.array([-1, 1], "int64")},
          opset=18)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    check([node("DepthToSpace", blocksize=2, mode=mode)], {"x": randn(1, 8, 2, 3)})


def test_space_to_depth():
    check([node("SpaceToDepth", blocksize=2)], {"x": randn(1, 2, 4, 6)})


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample(mode):
    check([node("Upsample", ["x", "s"], mode=mode)], {"x": randn(1, 2, 3, 4)},
          initializers={"s": np.array([1, 1, 2, 3], "float32")}, opset=9)


# --- reductions -----------------------------------------------------------------------------------

REDUCE = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
          "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


@pytest.mark.parametrize("op_type", REDUCE)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_axes_attribute(op_type, keepdims):
    check([node(op_type, axes=[0, -1], keepdims=keepdims)], {"x": positive(2, 3, 4)}, opset=11,
          atol=1e-5)


@pytest.mark.parametrize("op_type, opset", [("ReduceSum", 13), ("ReduceMean", 18),
                                            ("ReduceMax", 18)])
def test_reduce_axes_input(op_type, opset):
    check([node(op_type, ["x", "a"], keepdims=0)], {"x": randn(2, 3, 4)}, opset=opset,
          initializers={"a": np.array([1], "int64")}, atol=1e-6)


def test_reduce_all_axes_by_default():
    check([node("ReduceSum")], {"x": randn(2, 3, 4)}, atol=1e-5)


def test_reduce_noop_with_empty_axes():
    # The ONNX spec makes this the identity.  onnxruntime 1.23 (the newest for
    # Python 3.10) fails on it, so the reference is the spec, not onnxruntime.
    x = randn(2, 3)
    model = make_model([node("ReduceSum", noop_with_empty_axes=1)], {"x": x})
    (got,) = run_relay(model, {"x": x})
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("attrs", [{}, {"axis": -1, "keepdims": 0}, {"axis": 1,
                                                                     "select_last_index": 1}])
def test_arg_reduce(op_type, attrs):
    x = rng.integers(0, 3, (3, 4, 2)).astype("float32")
    check([node(op_type, **attrs)], {"x": x})


# --- constants and shape computations -------------------------------------------------------------


@pytest.mark.parametrize("value", [None, np.array([2.5], "float32"), np.array([7], "int64")])
def test_constant_of_shape(value):
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    check([node("ConstantOfShape", ["s"], **attrs), node("Shape", ["y"], ["n"])],
          {}, outputs=("y", "n"), initializers={"s": np.array([2, 3], "int64")})


def test_constant_of_shape_is_a_call_for_fold_constant():
    model = make_model([node("ConstantOfShape", ["s"])], {},
                       initializers={"s": np.array([2, 3], "int64")})
    body = from_onnx(model)[0]["main"].body
    assert isinstance(body, relay.Call) and body.op.name == "full"
    folded = get_pass("FoldConstant")(get_pass("InferType")(from_onnx(model)[0]))
    assert isinstance(folded["main"].body, relay.Constant)


@pytest.mark.parametrize("attr, value", [("value", numpy_helper.from_array(np.arange(6.0)
                                                                            .reshape(2, 3))),
                                         ("value_float", 1.5), ("value_ints", [3, 4]),
                                         ("value_int", 2)])
def test_constant(attr, value):
    check([node("Constant", [], ["c"], **{attr: value}), node("Identity", ["c"])], {})


def test_range():
    check([node("Range", ["a", "b", "c"])], {},
          initializers={"a": np.array(1, "int64"), "b": np.array(10, "int64"),
                        "c": np.array(3, "int64")})


def test_shape_arithmetic_of_exported_models_is_evaluated_at_import():
    # The pattern exporters emit for x.view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat.
    nodes = [
        node("Shape", ["x"], ["shape"]),
        node("Gather", ["shape", "zero"], ["n"], axis=0),
        node("Unsqueeze", ["n", "axes"], ["n1"]),
        node("Concat", ["n1", "minus1"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["y"]),
    ]
    check(nodes, {"x": randn(2, 3, 4)},
          initializers={"zero": np.array(0, "int64"), "axes": np.array([0], "int64"),
                        "minus1": np.array([-1], "int64")})


def test_transformer_encoder_block():
    # An encoder layer as exporters write it: positions from Range over the runtime length,
    # fused QKV split three ways, heads reshaped through Shape/Gather/Concat arithmetic, a
    # masked softmax, a hand-written layer norm (ReduceMean, Pow, Sqrt) and the fused one,
    # and an erf GELU.
    b, s, d, h = 2, 5, 8, 2

    def const(name, value):
        return node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value)))

    nodes = [
        node("Shape", ["x"], ["shape"]),
        const("i0", np.array(0, "int64")), const("i1", np.array(1, "int64")),
        node("Gather", ["shape", "i0"], ["B"]), node("Gather", ["shape", "i1"], ["S"]),
        const("zero", np.array(0, "int64")), const("one", np.array(1, "int64")),
        node("Range", ["zero", "S", "one"], ["pos"]),
        node("Gather", ["pos_table", "pos"], ["pe"]),
        node("Add", ["x", "pe"], ["x1"]),
        # hand-written layer norm
        node("ReduceMean", ["x1"], ["mu"], axes=[-1]),
        node("Sub", ["x1", "mu"], ["xc"]),
        const("two", np.array(2.0, "float32")),
        node("Pow", ["xc", "two"], ["sq"]),
        node("ReduceMean", ["sq"], ["var"], axes=[-1]),
        const("eps", np.array(1e-5, "float32")),
        node("Add", ["var", "eps"], ["ve"]), node("Sqrt", ["ve"], ["sd"]),
        node("Div", ["xc", "sd"], ["ln1"]),
        # attention
        node("MatMul", ["ln1", "w_qkv"], ["qkv"]),
        node("Split", ["qkv", "splits"], ["q", "k", "v"], axis=-1),
        node("Unsqueeze", ["B", "zero_axes"], ["B1"]), node("Unsqueeze", ["S", "zero_axes"], ["S1"]),
        node("Concat", ["B1", "S1", "heads"], ["hshape"], axis=0),
        node("Reshape", ["q", "hshape"], ["qh"]), node("Reshape", ["k", "hshape"], ["kh"]),
        node("Reshape", ["v", "hshape"], ["vh"]),
        node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3]),
        node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qt", "kt"], ["scores"]),
        const("scale", np.array(np.sqrt(d // h), "float32")),
        node("Div", ["scores", "scale"], ["scaled"]),
        node("Cast", ["mask"], ["maskb"], to=onnx.TensorProto.BOOL),
        const("neg", np.array(-1e4, "float32")),
        node("Where", ["maskb", "scaled", "neg"], ["masked"]),
        node("Softmax", ["masked"], ["probs"], axis=-1),
        node("MatMul", ["probs", "vt"], ["ctx"]),
        node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
        node("Concat", ["B1", "S1", "minus1"], ["oshape"], axis=0),
        node("Reshape", ["ctxt", "oshape"], ["attn"]),
        node("MatMul", ["attn", "w_o"], ["proj"]),
        node("Add", ["proj", "x1"], ["res1"]),
        # feed-forward with the fused layer norm and an erf GELU
        node("LayerNormalization", ["res1", "g", "beta"], ["ln2"], axis=-1),
        node("MatMul", ["ln2", "w1"], ["f1"]), node("Add", ["f1", "b1"], ["f1b"]),
        const("sqrt2", np.array(np.sqrt(2.0), "float32")),
        node("Div", ["f1b", "sqrt2"], ["fz"]), node("Erf", ["fz"], ["fe"]),
        node("Add", ["fe", "one_f"], ["fp"]), node("Mul", ["f1b", "fp"], ["fm"]),
        node("Mul", ["fm", "half"], ["gelu"]),
        node("MatMul", ["gelu", "w2"], ["f2"]),
        node("Add", ["f2", "res1"], ["y"]),
    ]
    inits = {
        "pos_table": randn(16, d), "w_qkv": randn(d, 3 * d) * 0.3,
        "splits": np.array([d, d, d], "int64"), "zero_axes": np.array([0], "int64"),
        "heads": np.array([h, d // h], "int64"), "minus1": np.array([-1], "int64"),
        "w_o": randn(d, d) * 0.3, "g": randn(d), "beta": randn(d), "w1": randn(d, 4 * d) * 0.3,
        "b1": randn(4 * d), "one_f": np.array(1.0, "float32"), "half": np.array(0.5, "float32"),
        "w2": randn(4 * d, d) * 0.3,
    }
    mask = np.ones((b, 1, 1, s), "int64")
    mask[1, ..., 3:] = 0
    check(nodes, {"x": randn(b, s, d), "mask": mask}, opset=17, initializers=inits, atol=1e-5,
          rtol=1e-4)


# --- legacy opsets (onnxruntime runs opset 7 and later only) ---------------------------------------


def relay_only(nodes, inputs, opset, initializers=None, outputs=("y",)):
    return run_relay(make_model(nodes, inputs, outputs, opset, initializers), inputs)


@pytest.mark.parametrize("op_type, fn", [("Add", np.add), ("Sub", np.subtract),
                                         ("Mul", np.multiply), ("Div", np.divide)])
def test_legacy_broadcast_with_axis(op_type, fn):
    # Opset 6: B of shape (3, 4) aligned with axes 1 and 2 of A (2, 3, 4, 5).
    a, b = randn(2, 3, 4, 5), positive(3, 4)
    got = relay_only([node(op_type, ["a", "b"], broadcast=1, axis=1)], {"a": a, "b": b}, 6)[0]
    np.testing.assert_allclose(got, fn(a, b[:, :, None]), rtol=1e-6)


def test_legacy_broadcast_without_axis_aligns_trailing_axes():
    a, b = randn(2, 3, 4), randn(4)
    got = relay_only([node("Add", ["a", "b"], broadcast=1)], {"a": a, "b": b}, 1)[0]
    np.testing.assert_allclose(got, a + b, rtol=1e-6)


def test_legacy_broadcast_0_demands_equal_shapes():
    a, b = randn(2, 3), randn(3)
    with pytest.raises(OnnxImportError, match="broadcast=1"):
        relay_only([node("Mul", ["a", "b"])], {"a": a, "b": b}, 6)
    got = relay_only([node("Mul", ["a", "c"])], {"a": a, "c": b[None] * np.ones((2, 1), "float32")},
                     6)[0]
    np.testing.assert_allclose(got, a * b, rtol=1e-6)


def test_opset_7_broadcasts_like_numpy_and_ignores_legacy_axis_rules():
    a, b = randn(2, 3), randn(2, 1)
    check([node("Add", ["a", "b"])], {"a": a, "b": b}, opset=7)


def test_legacy_gemm_broadcast():
    a, b, c = randn(3, 4), randn(4, 5), randn(5)
    got = relay_only([node("Gemm", ["a", "b", "c"], broadcast=1, beta=0.5)],
                     {"a": a, "b": b, "c": c}, 6)[0]
    np.testing.assert_allclose(got, a @ b + 0.5 * c, rtol=1e-5, atol=1e-6)
    with pytest.raises(OnnxImportError, match="broadcast=1"):
        relay_only([node("Gemm", ["a", "b", "c"])], {"a": a, "b": b, "c": c}, 6)
    c2 = randn(3, 5)
    got = relay_only([node("Gemm", ["a", "b", "c"])], {"a": a, "b": b, "c": c2}, 6)[0]
    np.testing.assert_allclose(got, a @ b + c2, rtol=1e-5, atol=1e-6)


def test_legacy_batch_norm_is_test():
    x, p = randn(2, 3, 4, 4), bn_params(3)
    want = ((x - p["m"][:, None, None]) / np.sqrt(p["v"][:, None, None] + 1e-5)
            * p["s"][:, None, None] + p["b"][:, None, None])
    got = relay_only([node("BatchNormalization", ["x", "s", "b", "m", "v"], is_test=1)],
                     {"x": x}, 6, initializers=p)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(UnsupportedOperatorError, match="is_test=0"):
        relay_only([node("BatchNormalization", ["x", "s", "b", "m", "v"])], {"x": x}, 6,
                   initializers=p)


def test_legacy_batch_norm_spatial_0_before_opset_7():
    x = randn(2, 3, 2, 2)
    p = {"s": randn(3, 2, 2), "b": randn(3, 2, 2), "m": randn(3, 2, 2), "v": positive(3, 2, 2)}
    got = relay_only([node("BatchNormalization", ["x", "s", "b", "m", "v"], is_test=1,
                           spatial=0)], {"x": x}, 6, initializers=p)[0]
    want = (x - p["m"]) / np.sqrt(p["v"] + 1e-5) * p["s"] + p["b"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_legacy_dropout_and_reshape_attribute():
    x = randn(4, 2, 3)
    got = relay_only([node("Dropout", ["x"], ["d"], is_test=1, ratio=0.4),
                      node("Reshape", ["d"], ["y"], shape=[2, 0, -1])], {"x": x}, 4)[0]
    np.testing.assert_array_equal(got, x.reshape(2, 2, 6))


def test_legacy_cast_names_the_type():
    x = randn(5) * 4
    got = relay_only([node("Cast", to="INT32")], {"x": x}, 5)[0]
    np.testing.assert_array_equal(got, x.astype("int32"))


def test_legacy_concat_axis_defaults_to_1():
    a, b = randn(2, 3), randn(2, 2)
    got = relay_only([node("Concat", ["a", "b"])], {"a": a, "b": b}, 1)[0]
    np.testing.assert_array_equal(got, np.concatenate([a, b], axis=1))


def test_legacy_attribute_forms_run_by_onnxruntime():
    # Attributes that became inputs later, at the last opset that still has them.
    x = randn(4, 6, 5)
    check([node("Slice", starts=[1, 0], ends=[3, -1], axes=[0, 2])], {"x": x}, opset=9)
    check([node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4])], {"x": x},
          outputs=("a", "b"), opset=10)
    check([node("Pad", pads=[0, 1, 0, 0, 2, 1], mode="edge")], {"x": x}, opset=10)
    check([node("Upsample", mode="nearest", scales=[1.0, 1.0, 2.0, 2.0])],
          {"x": randn(1, 2, 3, 3)}, opset=7)
    check([node("Unsqueeze", axes=[1])], {"x": x}, opset=11)


def test_legacy_prelu_slope_applies_per_channel():
    x, s = randn(2, 3, 4), randn(3)
    got = relay_only([node("PRelu", ["x", "s"])], {"x": x}, 6, initializers={"s": s})[0]
    np.testing.assert_allclose(got, np.where(x < 0, x * s[:, None], x), rtol=1e-6)


# --- the importer as a whole ----------------------------------------------------------------------


def test_unsupported_operators_are_all_listed_at_once():
    nodes = [node("Hardmax", ["x"], ["v1"]), node("Relu", ["v1"], ["r"]),
             node("Hardmax", ["r"], ["v2"]), node("LpNormalization", ["v2"], ["nz"]),
             helper.make_node("FusedThing", ["nz"], ["y"], domain="com.example")]
    model = make_model(nodes, {"x": randn(3, 8)})
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnsupportedOperatorError) as info:
        from_onnx(model)
    err = info.value
    assert isinstance(err, RelayPassError)
    assert err.operators == {"Hardmax": 2, "LpNormalization": 1, "com.example.FusedThing": 1}
    assert err.opset == OPSET
    message = str(err)
    for part in ("Hardmax (2 nodes)", "LpNormalization (1 node)", "com.example.FusedThing (1 node)",
                 f"opset {OPSET}", "3 operators"):
        assert part in message
    assert unsupported_operators(model) == err.operators


def test_an_operator_newer_than_the_model_opset_is_unsupported():
    model = make_model([node("Gelu")], {"x": randn(3)}, opset=17)
    with pytest.raises(UnsupportedOperatorError, match=r"Gelu \(1 node, supported from opset 20\)"):
        from_onnx(model)
    assert from_onnx(model, opset=20)[0]["main"].body is not None


def test_missing_extra_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(OnnxNotInstalledError) as info:
        from_onnx("model.onnx")
    assert isinstance(info.value, ImportError) and isinstance(info.value, RelayPassError)
    assert "pip install 'relaypass[onnx]'" in str(info.value)


def test_importing_the_frontend_does_not_import_onnx():
    code = ("import sys, relaypass.frontend as f; assert 'onnx' not in sys.modules; "
            "f.from_onnx; f.OnnxImportError; assert 'onnx' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_inputs_parameters_and_shapes():
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])
    graph = helper.make_graph([node("MatMul", ["x", "w"])], "g", [x],
                              [helper.make_empty_tensor_value_info("y")],
                              initializer=[numpy_helper.from_array(randn(4, 2), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    mod, params = from_onnx(model)
    (param,) = mod["main"].params
    assert param.name_hint == "x"
    (batch, four) = param.type_annotation.shape
    assert isinstance(batch, SizeVar) and batch.name_hint == "batch" and four == 4
    assert params == {}
    mod, _ = from_onnx(model, shape={"x": (3, 4)})
    assert mod["main"].params[0].type_annotation == TensorType((3, 4), "float32")
    with pytest.raises(OnnxImportError, match="'z'.*the inputs are 'x'"):
        from_onnx(model, shape={"z": (1,)})


def test_dynamic_batch_runs_for_any_batch():
    model = model_of(
        [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"]),
         node("Flatten", ["r"], ["y"])], {"x": (onnx.TensorProto.FLOAT, ["n", 3, 6, 6])}, ["y"],
        {"w": randn(2, 3, 3, 3)}, opset=13, name="g")
    for n in (1, 3):
        data = randn(n, 3, 6, 6)
        np.testing.assert_allclose(run_relay(model, {"x": data})[0], run_ort(model, {"x": data})[0],
                                   rtol=1e-4, atol=1e-5)


def test_freeze_params_false_returns_initializers_as_parameters():
    w = randn(4, 2)
    model = make_model([node("MatMul", ["x", "w"])], {"x": randn(3, 4)}, initializers={"w": w})
    mod, params = from_onnx(model, freeze_params=False)
    assert [p.name_hint for p in mod["main"].params] == ["x", "w"]
    assert list(params) == ["w"]
    np.testing.assert_array_equal(params["w"], w)
    x = randn(3, 4)
    out = relay.create_executor(mod=mod).evaluate()(x, params["w"])
    np.testing.assert_allclose(out, x @ w, rtol=1e-5)


def test_model_from_a_path_or_bytes(tmp_path):
    model = make_model([node("Relu")], {"x": randn(2)})
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    for source in (path, str(path), model.SerializeToString()):
        assert from_onnx(source)[0]["main"].params[0].name_hint == "x"
    with pytest.raises(OnnxImportError, match="cannot read"):
        from_onnx(tmp_path / "missing.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"\x00\xffnot a model")
    with pytest.raises(OnnxImportError, match="not an ONNX model"):
        from_onnx(tmp_path / "junk.onnx")


def test_a_value_that_must_be_static_is_an_error_naming_the_node():
    # Split has no dynamic form: its sizes must be known at import (a Reshape's target need
    # not be: it becomes dyn.reshape)
    nodes = [node("Split", ["x", "s"], ["y", "z"], name="the_split")]
    model = make_model(nodes, {"x": randn(5, 3), "s": np.array([3, 2], "int64")}, ["y", "z"])
    with pytest.raises(OnnxImportError, match="node 0 'the_split' \\(Split, opset 13\\).*"
                                              "must be known when the model is imported"):
        from_onnx(model)


def test_reading_an_undefined_value_is_an_error():
    model = make_model([node("Relu", ["nowhere"])], {"x": randn(2)})
    with pytest.raises(OnnxImportError, match="'nowhere'"):
        from_onnx(model)


def test_supported_operators_cover_the_transformer_set():
    ops = supported_operators()
    for name in ("MatMul", "Gemm", "Softmax", "LayerNormalization", "Gelu", "Erf", "Transpose",
                 "Reshape", "Gather", "Slice", "Concat", "Split", "Where", "Cast", "ReduceMean",
                 "Pow", "Sqrt", "Div", "Unsqueeze", "Squeeze", "Shape", "Expand",
                 "ConstantOfShape"):
        assert name in ops
    assert ops["Softmax"] == (1, 13)
    assert ops["Add"] == (1, 7)


def test_the_operator_table_of_the_docs_is_current():
    text = (Path(__file__).resolve().parents[1] / "docs" / "onnx.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| (\d+) \| ([\d, —]+) \|", text, flags=re.M)
    documented = {name: (int(since), *(int(v) for v in re.findall(r"\d+", later)))
                  for name, since, later in rows}
    assert documented == supported_operators()
