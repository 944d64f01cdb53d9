"""The nine light models of the onnx package through the importer, the O3 pipeline and the
interpreter, against onnxruntime.

The shipped models fill every weight with one value (a ConstantOfShape
node), so their output is a uniform softmax that proves little.  Each model
is therefore also run with seeded random weights: every ConstantOfShape
weight becomes an initializer of random values scaled for its role
(He-scaled convolution and dense weights; batch-norm scales and variances
near 1; a small scale for the last batch norm of a residual branch, as the
zero-gamma initialization of residual networks does, so that activations
neither vanish nor explode over fifty layers), and the interpreter must
match onnxruntime before and after the pipeline.  onnxruntime receives the
same random weights as inputs of the shipped graph, which spares it a
half-gigabyte model to parse for VGG-19.

The shipped models' softmax is ill-conditioned in float32: with every weight
positive the activations grow layer after layer, so the logits reach 1e9 to
1e31 and one rounding unit of a logit is hundreds or more, while a softmax
output moves by a factor of e**(2 * d) when its logits move by d.  The
logits are mathematically equal across classes (the classifier's weights are
all one value), and onnxruntime happens to round them equally; a BLAS GEMM
need not (OpenBLAS rounds some column tiles of SqueezeNet's last 1x1
convolution one unit apart, which depends on the CPU and thread count), and
then the uniform 0.001 becomes 0.00136 on some classes and 0 on the others.
So the shipped-model test compares the logits with onnxruntime (a relative
comparison, well conditioned), the output with the softmax the ONNX spec
defines of relaypass's own logits, and the output with onnxruntime's within
what the measured difference of the logits allows.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call
from relaypass.transform import PassContext, PipelineError, Sequential, get_pass, load_pipeline
from relaypass.transform.registry import get_registry

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx import numpy_helper  # noqa: E402

from relaypass.frontend import from_onnx  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512"]
O3_FILE = Path(__file__).resolve().parents[1] / "examples" / "pipelines" / "O3.toml"
RTOL, ATOL = 1e-3, 1e-5


# --- the pipeline ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def o3():
    """Run the O3 pipeline file; while some of its passes are not registered yet (they are
    being written), run the registered ones at opt_level 3 and warn about the others."""
    try:
        pipeline = load_pipeline(O3_FILE)
    except PipelineError:
        names = _pass_names(tomllib.loads(O3_FILE.read_text()).get("passes", []))
        registry = get_registry()
        missing = [n for n in names if not registry.has_pass(n)]
        warnings.warn(f"O3 pipeline: {', '.join(missing)} not registered yet; running "
                      f"{', '.join(n for n in names if n not in missing)} only", stacklevel=1)
        seq = Sequential([get_pass(n) for n in names if n not in missing], name="O3")

        def run(mod):
            with PassContext(opt_level=3):
                return seq(mod)

        return run
    return pipeline


def _pass_names(entries) -> list[str]:
    out = []
    for e in entries:
        if isinstance(e, str):
            out.append(e)
        elif "passes" in e:
            out.extend(_pass_names(e["passes"]))
        else:
            out.append(e["name"])
    return out


# --- models, inputs and references ----------------------------------------------------------------


def load(name: str):
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    inits = {t.name for t in model.graph.initializer}
    (data,) = [i for i in model.graph.input if i.name not in inits]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    return model, data.name, x


def session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def interpret(mod, name: str, x: np.ndarray) -> np.ndarray:
    return np.asarray(relay.create_executor(mod=mod).evaluate()(**{name: x}))


def count_calls(mod, op_name: str) -> int:
    found = []
    post_order_visit(mod["main"], lambda e: found.append(e) if isinstance(e, Call)
                     and getattr(e.op, "name", None) == op_name else None)
    return len(found)


def random_weights(model, seed: int) -> dict[str, np.ndarray]:
    """Seeded random values for each ConstantOfShape weight, scaled for how it is used."""
    rng = np.random.default_rng(seed)
    graph = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, index))
    weights = {}
    for node in graph.node:
        if node.op_type != "ConstantOfShape":
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        uses = consumers.get(node.output[0], [])
        while len(uses) == 1 and uses[0][0].op_type in ("Unsqueeze", "Reshape"):
            uses = consumers.get(uses[0][0].output[0], [])
        user, index = uses[0] if uses else (None, -1)
        op = user.op_type if user is not None else ""
        if op in ("Conv", "Gemm") and index == 1:
            trans_b = any(a.name == "transB" and a.i for a in user.attribute)
            fan_in = int(np.prod(shape[1:])) if op == "Conv" or trans_b else shape[0]
            values = rng.standard_normal(shape, dtype=np.float32)
            values *= np.float32(np.sqrt(2.0 / fan_in))
        elif op == "BatchNormalization" and index == 1:
            residual = any(u.op_type in ("Sum", "Add") for u, _ in consumers[user.output[0]])
            values = rng.uniform(0.1, 0.3, shape) if residual else rng.uniform(0.8, 1.2, shape)
        elif (op == "BatchNormalization" and index == 4) or op == "Mul":
            values = rng.uniform(0.8, 1.2, shape)
        else:
            values = rng.standard_normal(shape, dtype=np.float32)
            values *= np.float32(0.1)
        weights[node.output[0]] = np.asarray(values, dtype=np.float32)
    return weights


def with_initializers(model, weights):
    """A copy of ``model`` whose ConstantOfShape weights are initializers holding ``weights``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    kept = [n for n in out.graph.node if n.output[0] not in weights]
    del out.graph.node[:]
    out.graph.node.extend(kept)
    for name, values in weights.items():
        tensor = out.graph.initializer.add()
        tensor.name = name
        tensor.data_type = onnx.TensorProto.FLOAT
        tensor.dims.extend(values.shape)
        tensor.raw_data = values.tobytes()
    return out


def with_weight_inputs(model, weights, extra_outputs=()):
    """A copy of ``model`` whose ConstantOfShape weights are graph inputs (for onnxruntime)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    kept = [n for n in out.graph.node if n.output[0] not in weights]
    del out.graph.node[:]
    out.graph.node.extend(kept)
    out.graph.input.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT,
                                                              values.shape)
                           for name, values in weights.items())
    out.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n) for n in extra_outputs)
    return out


# Operators f with f(c * x) = c * f(x) for c > 0: scaling the classifier's weights and bias
# scales the logits that reach the softmax through them.
_HOMOGENEOUS = {"Relu", "GlobalAveragePool", "AveragePool", "MaxPool", "Reshape", "Flatten",
                "Dropout", "Squeeze", "Unsqueeze", "Transpose"}


def classifier(model, weights):
    """(the softmax's input, the ConstantOfShape weights of the layer computing it), or None."""
    producers = {o: n for n in model.graph.node for o in n.output}
    softmax = [n for n in model.graph.node if n.op_type == "Softmax"]
    if not softmax:
        return None
    logits = softmax[-1].input[0]
    layer = producers[logits]
    while layer.op_type in _HOMOGENEOUS:
        layer = producers[layer.input[0]]
    assert layer.op_type in ("Gemm", "Conv"), layer.op_type
    return logits, [n for n in layer.input[1:] if n in weights]


def reference(model, input_name, x, weights):
    """onnxruntime's output with ``weights``, whose classifier is first rescaled in place so
    that the logits have a standard deviation of 2: a softmax that is neither uniform nor
    saturated, whatever the depth did to the activations (ShuffleNet's shipped batch-norm
    variances, 1e-14, amplify them a hundredfold)."""
    found = classifier(model, weights)
    extra = () if found is None else (found[0],)
    ort_session = session(with_weight_inputs(model, weights, extra))
    out_name = model.graph.output[0].name
    if found is not None:
        logits = ort_session.run([found[0]], {input_name: x, **weights})[0]
        scale = np.float32(2.0 / logits.std())
        for name in found[1]:
            weights[name] *= scale
    return ort_session.run([out_name], {input_name: x, **weights})[0]


def assert_close(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def with_output(model, name: str):
    """A copy of ``model`` whose only output is the value ``name``."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.output[:]
    out.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    return out


def softmax_axes(model) -> tuple[int, ...]:
    """The axes the model's last Softmax normalizes over, as the ONNX spec defines them: before
    opset 13 the input is coerced to 2-D around ``axis`` (default 1), so all the axes from
    ``axis`` on; since opset 13 the one ``axis`` (default -1)."""
    node = [n for n in model.graph.node if n.op_type == "Softmax"][-1]
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    rank = len(model.graph.output[0].type.tensor_type.shape.dim)
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1 if opset < 13 else -1)
    axis %= rank
    return tuple(range(axis, rank)) if opset < 13 else (axis,)


def assert_softmax_close(got, got_logits, want, want_logits, axes):
    """``got`` is the softmax of ``got_logits`` over ``axes``, and is as close to onnxruntime's
    ``want`` as the logits are: when no logit moves by more than d, no probability moves by
    more than a factor of e**(2 * d), a bound that is tight for well-conditioned logits and
    says nothing (beyond being a distribution) when a rounding unit of the logits is large."""
    assert got.shape == want.shape and got.dtype == want.dtype
    z = got_logits.astype(np.float64).reshape(got.shape)
    e = np.exp(z - z.max(axis=axes, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=axes, keepdims=True), rtol=RTOL, atol=ATOL)
    d = float(np.max(np.abs(got_logits.astype(np.float64) - want_logits)))
    p = want.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = p * np.exp(-2 * d), np.fmin(1.0, p * np.exp(2 * d))
    slack = RTOL * p + ATOL
    assert np.all(got >= low - slack) and np.all(got <= high + slack), (
        f"softmax outside onnxruntime's output widened by its logits' difference {d:g}")


# --- the tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_shipped_model_through_o3_matches_onnxruntime(name, o3):
    model, input_name, x = load(name)
    mod, params = from_onnx(model)
    assert params == {}
    assert count_calls(mod, "full") > 0  # the weights are calls: the pipeline makes them
    optimized = o3(mod)
    assert count_calls(optimized, "full") == 0
    got = interpret(optimized, input_name, x)
    found = classifier(model, {})
    if found is None:  # DenseNet-121 ends without a softmax
        want = session(model).run(None, {input_name: x})[0]
        assert_close(got, want)
        return
    logits = found[0]
    want, want_logits = session(with_weight_inputs(model, {}, (logits,))).run(
        [model.graph.output[0].name, logits], {input_name: x})
    got_logits = interpret(o3(from_onnx(with_output(model, logits))[0]), input_name, x)
    assert_close(got_logits, want_logits)
    assert_softmax_close(got, got_logits, want, want_logits, softmax_axes(model))


@pytest.mark.parametrize("name", MODELS)
def test_random_weights_match_onnxruntime_before_and_after_o3(name, o3):
    model, input_name, x = load(name)
    weights = random_weights(model, seed=MODELS.index(name))
    want = reference(model, input_name, x, weights)
    # The reference depends on the weights: its values spread (a softmax far from uniform)
    # and no softmax saturates to one class (DenseNet-121 ends without one).
    assert np.ptp(want) > 100 * ATOL
    if any(n.op_type == "Softmax" for n in model.graph.node):
        assert want.max() < 0.99
    mod, _ = from_onnx(with_initializers(model, weights))
    del weights
    assert count_calls(mod, "full") == 0
    assert_close(interpret(mod, input_name, x), want)
    assert_close(interpret(o3(mod), input_name, x), want)


def test_the_models_are_the_ones_the_onnx_package_ships():
    shipped = sorted(p.name[len("light_"):-len(".onnx")] for p in LIGHT.glob("light_*.onnx"))
    assert shipped == sorted(MODELS), os.fspath(LIGHT)
