"""Small ONNX models written by hand, and onnxruntime on them, for the ONNX tests.

Import this module only after ``pytest.importorskip("onnx")`` and
``pytest.importorskip("onnxruntime")``: it needs both.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import helper, numpy_helper


def node(op_type, inputs=("x",), outputs=("y",), **attrs):
    """One ONNX node (from ``x`` to ``y`` unless told)."""
    return helper.make_node(op_type, list(inputs), list(outputs), **attrs)


def model_of(nodes, inputs, outputs, initializers=None, opset=17, name="test"):
    """A model of ``nodes``: ``inputs`` maps names to (ONNX element type, shape with strings
    or None for dynamic axes); the outputs' types are left for the importer to infer."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, t, s) for k, (t, s) in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k)
                     for k, v in (initializers or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def run_ort(model, feeds):
    """onnxruntime's outputs of ``model`` (a ModelProto, or the path of a file) on ``feeds``
    (a mapping, or pairs), on the CPU, without its log."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    source = model if isinstance(model, str) else model.SerializeToString()
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(feeds))
