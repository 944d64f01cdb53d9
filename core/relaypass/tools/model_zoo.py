"""Real models to run pipelines on: the "light" models shipped with the onnx package.

The onnx package ships nine classic image classifiers in
``onnx/backend/test/data/light`` (ResNet-50, AlexNet, DenseNet-121, ...) with
their full operator graphs but without their trained weights: each weight is a
``ConstantOfShape`` node filling its tensor with one value, and one reference
output is stored beside each model.  They are what the CLI's ``--model-zoo``
and the benchmarks run, because every machine with the ``onnx`` extra has them.

Uniform weights make a weak test: every channel of every layer computes the
same value, so the stored output is a uniform softmax whatever the input.
:func:`randomize_weights` therefore replaces each weight with seeded random
values scaled for its role (He-initialised convolution and dense weights,
batch-norm variances near 1 and means near 0), giving outputs that depend on every
channel; onnxruntime, when installed, computes the reference for them.

Everything that needs onnx, onnxruntime or numpy imports it when called (the
CLI imports this module to list the models in its help), and a missing package is a :class:`~relaypass.errors.RelayPassError` naming the
extra to install.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RelayPassError

if TYPE_CHECKING:
    import numpy as np

    from ..ir.module import IRModule

__all__ = [
    "LIGHT_MODELS", "LightModel", "ModelZooError", "has_onnxruntime", "import_onnx",
    "light_model", "light_model_dir", "main_arguments", "onnx_test_input", "opset",
    "random_input", "randomize_weights", "read_onnx", "require_onnxruntime", "run_onnxruntime",
]

INSTALL_HINT = "pip install 'relaypass[onnx]'"

#: The model zoo: a short name for each light model, and its file's stem.
LIGHT_MODELS = {
    "alexnet": "light_bvlc_alexnet",
    "densenet121": "light_densenet121",
    "inception_v1": "light_inception_v1",
    "inception_v2": "light_inception_v2",
    "resnet50": "light_resnet50",
    "shufflenet": "light_shufflenet",
    "squeezenet": "light_squeezenet",
    "vgg19": "light_vgg19",
    "zfnet512": "light_zfnet512",
}
_ALIASES = {"bvlc_alexnet": "alexnet"}


class ModelZooError(RelayPassError):
    """A model-zoo model cannot be found or run (unknown name, a missing optional package)."""


def _onnx() -> Any:
    try:
        import onnx
        from onnx import numpy_helper  # noqa: F401
    except ImportError:
        raise ModelZooError(f"ONNX models need the onnx extra, which is not installed: "
                            f"{INSTALL_HINT}") from None
    return onnx


def has_onnxruntime() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None


def require_onnxruntime() -> None:
    if not has_onnxruntime():
        raise ModelZooError(f"checking against onnxruntime needs onnxruntime, which is not "
                            f"installed: {INSTALL_HINT} (or use --reference stored)")


def light_model_dir() -> str:
    """The folder of the onnx package holding the light models."""
    onnx = _onnx()
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


@dataclass(frozen=True)
class LightModel:
    """One light model: its zoo name, its file and the reference output stored beside it."""

    name: str
    file_name: str
    path: str

    def load(self) -> Any:
        """The model as shipped (an ``onnx.ModelProto``)."""
        return read_onnx(self.path)

    def stored_outputs(self) -> list[np.ndarray]:
        """The reference outputs onnx stores for the shipped weights and :func:`onnx_test_input`."""
        onnx = _onnx()
        from onnx import numpy_helper

        stem = self.path[: -len(".onnx")]
        outputs = []
        i = 0
        while os.path.exists(f"{stem}_output_{i}.pb"):
            outputs.append(numpy_helper.to_array(onnx.load_tensor(f"{stem}_output_{i}.pb")))
            i += 1
        if not outputs:
            raise ModelZooError(f"{self.file_name}: no stored reference output beside it "
                                f"({stem}_output_0.pb)")
        return outputs


def light_model(name: str) -> LightModel:
    """The light model called ``name`` (a key of :data:`LIGHT_MODELS`, or its file's stem)."""
    key = name.lower()
    if key.startswith("light_"):
        key = key[len("light_"):]
    key = _ALIASES.get(key, key)
    stem = LIGHT_MODELS.get(key)
    if stem is None:
        raise ModelZooError(f"no model named {name!r} in the model zoo; choose one of "
                            f"{', '.join(sorted(LIGHT_MODELS))}")
    path = os.path.join(light_model_dir(), stem + ".onnx")
    if not os.path.isfile(path):
        raise ModelZooError(f"the installed onnx package has no {stem}.onnx (looked in "
                            f"{os.path.dirname(path)})")
    return LightModel(key, stem + ".onnx", path)


def read_onnx(path: str) -> Any:
    """The ONNX model in the file ``path``; errors name the file."""
    onnx = _onnx()
    try:
        return onnx.load(path)
    except OSError as exc:
        raise ModelZooError(f"cannot read {path}: {exc.strerror or exc}") from None
    except Exception as exc:  # protobuf's DecodeError and its relatives
        raise ModelZooError(f"{path}: not an ONNX model ({type(exc).__name__}: {exc})") from None


def opset(model: Any) -> int:
    """The model's opset version of the default ONNX domain."""
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 1


def import_onnx(model: Any, shapes: Mapping[str, Sequence[int]] | None = None) -> IRModule:
    """The Relay module of ``model``, weights as constants (``from_onnx``'s default)."""
    from ..frontend import from_onnx

    mod, params = from_onnx(model, shape=dict(shapes) if shapes else None)
    if params:  # initializers left as parameters: the module alone would not be runnable
        raise ModelZooError(f"the importer returned {len(params)} parameter values; expected "
                            "the weights as constants")
    return mod


# --- inputs ----------------------------------------------------------------------------------
def _graph_inputs(model: Any) -> list[tuple[str, tuple[int, ...], np.dtype]]:
    import numpy as np
    from onnx import helper

    initializers = {i.name for i in model.graph.initializer}
    out = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim)
        out.append((value.name, shape, np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))))
    return out


def onnx_test_input(model: Any) -> dict[str, np.ndarray]:
    """The input onnx's backend test feeds the light models, which their stored outputs are for.

    ``arange(n).reshape(shape) / n`` in float32 (onnx.backend.test.runner's
    ``generate_dummy_data`` with ``random=False``).
    """
    import numpy as np

    _onnx()
    feeds = {}
    for name, shape, dtype in _graph_inputs(model):
        n = int(np.prod(shape))
        feeds[name] = (np.arange(n).reshape(shape) / n).astype(dtype)
    return feeds


def random_input(model: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded standard-normal values for each graph input (unknown extents become 1)."""
    import numpy as np

    _onnx()
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape).astype(dtype)
            for name, shape, dtype in _graph_inputs(model)}


def main_arguments(mod: IRModule, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """``feeds`` (by ONNX input name) in the order of ``mod["main"]``'s parameters."""
    params = mod["main"].params
    missing = [p.name_hint for p in params if p.name_hint not in feeds]
    if missing:
        raise ModelZooError(f"no input value for the parameter(s) {', '.join(missing)} of @main "
                            f"(the model's inputs are {', '.join(feeds) or 'none'})")
    return [feeds[p.name_hint] for p in params]


def run_onnxruntime(model: Any, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs computed by onnxruntime on the CPU."""
    import numpy as np

    require_onnxruntime()
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: not one warning per unused initializer
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


# --- weights -----------------------------------------------------------------------------------
# Operators that only move or reshape a weight on its way to the operator using it.
_PASS_THROUGH = frozenset({"Unsqueeze", "Squeeze", "Reshape", "Flatten", "Transpose", "Cast",
                           "Identity"})


def _role(name: str, consumers: Mapping[str, list[tuple[Any, int]]]) -> tuple[Any, int] | None:
    """(node, input index) where the weight ``name`` is used, through pass-through operators."""
    seen = 0
    while seen < 16:
        uses = consumers.get(name, [])
        if len(uses) != 1:
            return None
        node, index = uses[0]
        if node.op_type not in _PASS_THROUGH or index != 0:
            return node, index
        name = node.output[0]
        seen += 1
    return None


def _values(role: tuple[Any, int] | None, shape: tuple[int, ...],
            rng: np.random.Generator) -> np.ndarray | None:
    """Values for a weight used as ``role``, in float32 (drawn as such: ResNet-50 has 25M)."""
    import numpy as np

    if role is None:
        return None
    node, index = role
    op = node.op_type

    def normal(scale: float) -> np.ndarray:
        out = rng.standard_normal(shape, dtype=np.float32)
        out *= np.float32(scale)
        return out

    def uniform(low: float, high: float) -> np.ndarray:
        out = rng.random(shape, dtype=np.float32)
        out *= np.float32(high - low)
        out += np.float32(low)
        return out

    if op in ("Conv", "ConvTranspose") and index == 1 and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        return normal(np.sqrt(2.0 / fan_in))
    if op in ("Gemm", "MatMul") and index == 1 and shape:
        # A weight may be reshaped on its way (N, K, 1, 1) -> (N, K): count what is summed over.
        trans_b = op == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute)
        fan_in = int(np.prod(shape[1:])) if trans_b else shape[-2] if len(shape) > 1 else shape[0]
        return normal(np.sqrt(2.0 / max(fan_in, 1)))
    if op == "BatchNormalization" and index == 1:
        # Scales below 1: the statistics are not the activations' own, so batch norm does not
        # normalise, and residual sums would otherwise grow to saturate the softmax.
        return uniform(0.2, 0.6)
    if op == "BatchNormalization" and index == 4:  # variance
        return uniform(0.5, 1.5)
    if op == "BatchNormalization" and index in (2, 3):  # bias, mean
        return uniform(-0.1, 0.1)
    if op == "Mul":
        return uniform(0.5, 1.5)
    if op in ("Add", "Sum", "Sub") or (op in ("Conv", "ConvTranspose", "Gemm") and index == 2):
        return uniform(-0.1, 0.1)
    return None


def randomize_weights(model: Any, seed: int = 0) -> Any:
    """A copy of ``model`` whose ``ConstantOfShape`` weights hold seeded random values instead.

    Each weight becomes an initializer (and a graph input, as the models'
    IR version 3 wants); the shape tensors that fed the replaced nodes go.
    A ConstantOfShape whose role is not recognised (or whose shape is not a
    constant) is left as it is.  The same seed gives the same model.
    """
    import numpy as np

    onnx = _onnx()
    from onnx import helper, numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    initializers = {i.name: i for i in graph.initializer}
    consumers: dict[str, list[tuple[Any, int]]] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, index))
    rng = np.random.default_rng(seed)
    kept, new_weights, replaced_shapes = [], [], set()
    for node in graph.node:
        shape_init = initializers.get(node.input[0]) if node.op_type == "ConstantOfShape" else None
        if shape_init is None:
            kept.append(node)
            continue
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        dtype = numpy_helper.to_array(value).dtype if value is not None else np.dtype(np.float32)
        shape = tuple(int(d) for d in numpy_helper.to_array(shape_init))
        name = node.output[0]
        values = _values(_role(name, consumers), shape, rng)
        if values is None:
            kept.append(node)
            continue
        new_weights.append(numpy_helper.from_array(values.astype(dtype), name))
        replaced_shapes.add(node.input[0])
    still_used = {name for node in kept for name in node.input}
    dropped = replaced_shapes - still_used
    del graph.node[:]
    graph.node.extend(kept)
    remaining = [i for i in graph.initializer if i.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(remaining + new_weights)
    inputs = [v for v in graph.input if v.name not in dropped]
    elem = {t.name: t.data_type for t in new_weights}
    inputs.extend(helper.make_tensor_value_info(t.name, elem[t.name], list(t.dims))
                  for t in new_weights)
    del graph.input[:]
    graph.input.extend(inputs)
    return out
