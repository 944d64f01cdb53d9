"""Shape computations fold while a model is imported.

Transformers exported with dynamic axes compute their shapes in the graph:
``Shape``, ``Gather`` of one extent, ``Unsqueeze``, ``Concat`` into a target
for ``Reshape``; ``Range`` over the sequence length for the positions;
``Slice`` of a position buffer up to that length.  Once the caller fixes the
input shapes (``from_onnx(shape=...)``, the CLI's ``--shape``), every one of
these values is known, and the importer replaces the computation with its
value, so that the module is static: every type has static extents and no
``shape_of`` is left.  The graphs here reproduce the patterns on which BERT
("ends must be known") and GPT-2 ("the target shape must be known") stopped.
"""

from __future__ import annotations

import numpy as np
import pytest

from relaypass import relay
from relaypass.analysis import post_order_visit
from relaypass.ir.types import Any, TensorType, TupleType
from relaypass.transform import get_pass

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx_helpers import model_of, node, run_ort  # noqa: E402

from relaypass.frontend import from_onnx  # noqa: E402

rng = np.random.default_rng(11)



def const(name, value):
    return node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value)))




def ops_and_types(mod):
    """The operator names of ``main`` (typed) and the type of every call."""
    typed = get_pass("InferType")(mod)
    names, types = [], []

    def visit(e):
        if isinstance(e, relay.Call):
            names.append(e.op.name)
            types.append(e.checked_type)

    post_order_visit(typed["main"], visit)
    return names, types


def is_static(ty):
    if isinstance(ty, TupleType):
        return all(is_static(f) for f in ty.fields)
    return isinstance(ty, TensorType) and not any(isinstance(d, Any) for d in ty.shape)


def check_static_and_equal(model, feeds, shape):
    """Imported with ``shape``: no shape computation is left, every type is static, and the
    interpreter agrees with onnxruntime."""
    mod, _ = from_onnx(model, shape=shape)
    names, types = ops_and_types(mod)
    assert "shape_of" not in names and "ndarray_size" not in names, names
    assert all(is_static(t) for t in types), [t for t in types if not is_static(t)]
    expected = run_ort(model, feeds)
    got = relay.create_executor(mod=mod).evaluate()(**feeds)
    got = list(got) if isinstance(got, tuple) else [got]
    for g, e in zip(got, expected):
        g = np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    return mod


def gpt2_like():
    """Positions from Range over the sequence length, their embeddings looked up, then a
    reshape to heads whose target is computed from the Shape of that lookup (where GPT-2
    stopped: the Range's length was not known, so neither was the target)."""
    d, h = 8, 2
    nodes = [
        node("Shape", ["ids"], ["ids_shape"]),
        const("one_i", np.array(1, "int64")), const("zero_s", np.array(0, "int64")),
        node("Gather", ["ids_shape", "one_i"], ["seq"], axis=0),
        node("Range", ["zero_s", "seq", "one_i"], ["pos"]),
        node("Gather", ["wpe", "pos"], ["pe"], axis=0),
        node("Gather", ["wte", "ids"], ["te"], axis=0),
        node("Add", ["te", "pe"], ["hidden"]),
        node("Shape", ["pe"], ["pe_shape"]),
        const("zero_v", np.array([0], "int64")),
        node("Gather", ["pe_shape", "zero_i"], ["pe_len"], axis=0),
        node("Unsqueeze", ["pe_len", "zero_v"], ["pe_len1"]),
        node("Concat", ["pe_len1", "heads"], ["target"], axis=0),
        node("Reshape", ["pe", "target"], ["pe_heads"]),
        node("Shape", ["hidden"], ["hs"]),
        const("start0", np.array([0], "int64")), const("end2", np.array([-1], "int64")),
        node("Slice", ["hs", "start0", "end2"], ["lead"]),
        node("Concat", ["lead", "heads"], ["target2"], axis=0),
        node("Reshape", ["hidden", "target2"], ["y"]),
    ]
    inits = {"wpe": rng.standard_normal((16, d)).astype("float32"),
             "wte": rng.standard_normal((30, d)).astype("float32"),
             "heads": np.array([h, d // h], "int64"), "zero_i": np.array(0, "int64")}
    model = model_of(nodes, {"ids": (TensorProto.INT64, ["batch", "seq"])}, ["y", "pe_heads"],
                     inits)
    return model


def test_gpt2_reshape_target_computed_from_a_range_is_known():
    model = gpt2_like()
    ids = rng.integers(0, 30, (2, 5)).astype("int64")
    check_static_and_equal(model, {"ids": ids}, {"ids": (2, 5)})


def bert_like():
    """The token-type ids of BERT: a registered buffer sliced up to the sequence length,
    where the end comes from the Shape of the positions (a Range), then expanded to the
    batch with ConstantOfShape/Expand arithmetic."""
    nodes = [
        node("Shape", ["ids"], ["ids_shape"]),
        const("one", np.array(1, "int64")), const("zero", np.array(0, "int64")),
        node("Gather", ["ids_shape", "one"], ["seq"], axis=0),
        node("Range", ["zero", "seq", "one"], ["pos"]),
        node("Shape", ["pos"], ["pos_len"]),
        const("starts", np.array([0], "int64")), const("axes", np.array([1], "int64")),
        node("Slice", ["buffer", "starts", "pos_len", "axes"], ["tt"]),
        node("Gather", ["ids_shape", "zero"], ["batch"], axis=0),
        node("Unsqueeze", ["batch", "starts"], ["batch1"]),
        node("Unsqueeze", ["seq", "starts"], ["seq1"]),
        node("Concat", ["batch1", "seq1"], ["bs"], axis=0),
        node("ConstantOfShape", ["bs"], ["ones"], value=numpy_helper.from_array(
            np.array([1], "int64"))),
        node("Expand", ["tt", "bs"], ["tt_b"]),
        node("Mul", ["tt_b", "ones"], ["tt_m"]),
        node("Gather", ["type_emb", "tt_m"], ["te"], axis=0),
        node("Gather", ["word_emb", "ids"], ["we"], axis=0),
        node("Add", ["we", "te"], ["y"]),
    ]
    inits = {"buffer": rng.integers(0, 2, (1, 12)).astype("int64"),
             "type_emb": rng.standard_normal((2, 4)).astype("float32"),
             "word_emb": rng.standard_normal((20, 4)).astype("float32")}
    return model_of(nodes, {"ids": (TensorProto.INT64, ["batch", "seq"])}, ["y"], inits)


def test_bert_slice_ends_computed_from_a_range_are_known():
    ids = rng.integers(0, 20, (3, 7)).astype("int64")
    mod = check_static_and_equal(bert_like(), {"ids": ids}, {"ids": (3, 7)})
    # the token types are a constant now: they depend on the shapes only
    names, _ = ops_and_types(mod)
    assert names.count("take") == 2 and "strided_slice" not in names and "full" not in names


def test_range_with_a_shape_derived_limit_has_a_static_length():
    nodes = [node("Shape", ["x"], ["s"]), const("two", np.array(2, "int64")),
             node("Gather", ["s", "two"], ["n"], axis=0),
             node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
             const("half", np.array(0.5, "float32")), const("zf", np.array(0.0, "float32")),
             node("Range", ["zf", "nf", "half"], ["r"]),
             node("Mul", ["r", "r"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["a", "b", "c"])}, ["y"])
    mod = check_static_and_equal(model, {"x": np.zeros((1, 2, 3), "float32")},
                                 {"x": (1, 2, 3)})
    names, types = ops_and_types(mod)
    assert types[-1] == TensorType((6,), "float32")


def test_shape_arithmetic_folds_to_one_constant():
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with Squeeze, Cast, Div and Sub on
    # the way: the Reshape's target is a constant and the graph keeps only the reshape.
    nodes = [
        node("Shape", ["x"], ["s"]),
        const("i0", np.array([0], "int64")), const("i1", np.array(1, "int64")),
        node("Gather", ["s", "i0"], ["b1"], axis=0),
        node("Squeeze", ["b1", "i0"], ["b"]),
        node("Gather", ["s", "i1"], ["c"], axis=0),
        node("Cast", ["c"], ["cf"], to=TensorProto.FLOAT),
        const("two_f", np.array(2.0, "float32")),
        node("Div", ["cf", "two_f"], ["half_f"]),
        node("Cast", ["half_f"], ["half"], to=TensorProto.INT64),
        node("Sub", ["c", "half"], ["rest"]),
        node("Unsqueeze", ["b", "i0"], ["bu"]),
        node("Unsqueeze", ["half", "i0"], ["hu"]),
        node("Unsqueeze", ["rest", "i0"], ["ru"]),
        const("m1", np.array([-1], "int64")),
        node("Concat", ["bu", "hu", "ru", "m1"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["y"]),
    ]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["n", "c", 3])}, ["y"])
    x = rng.standard_normal((2, 6, 3)).astype("float32")
    mod = check_static_and_equal(model, {"x": x}, {"x": (2, 6, 3)})
    names, types = ops_and_types(mod)
    assert names == ["reshape"] and types[0] == TensorType((2, 3, 3, 2), "float32")


def test_shape_with_start_and_end_then_expand_and_constant_of_shape():
    nodes = [
        node("Shape", ["x"], ["tail"], start=-2),
        node("ConstantOfShape", ["tail"], ["z"],
             value=numpy_helper.from_array(np.array([3], "int32"))),
        node("Shape", ["x"], ["s"]),
        node("Expand", ["bias", "s"], ["bx"]),
        node("Add", ["x", "bx"], ["y0"]),
        node("Cast", ["z"], ["zf"], to=TensorProto.FLOAT),
        node("Add", ["y0", "zf"], ["y"]),
    ]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["n", "h", "w"])}, ["y"],
                     {"bias": rng.standard_normal((1, 4)).astype("float32")})
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    mod = check_static_and_equal(model, {"x": x}, {"x": (2, 3, 4)})
    names, _ = ops_and_types(mod)
    # the int32 threes are folded (computed from a shape); the float bias stays a broadcast
    assert "full" not in names and "broadcast_to" in names


def test_size_and_split_of_a_shape():
    nodes = [
        node("Size", ["x"], ["n"]),
        node("Shape", ["x"], ["s"]),
        node("Split", ["s"], ["s0", "s1"], axis=0),
        node("ReduceProd", ["s1"], ["p"], keepdims=1),
        node("Concat", ["s0", "p"], ["target"], axis=0),
        node("Reshape", ["x", "target"], ["r"]),
        node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        node("Div", ["r", "nf"], ["y"]),
    ]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["a", "b", "c", "d"])}, ["y"])
    x = rng.standard_normal((2, 3, 2, 2)).astype("float32")
    check_static_and_equal(model, {"x": x}, {"x": (2, 3, 2, 2)})


def test_without_shapes_the_computation_stays_and_the_axes_are_size_variables():
    # (tests/test_onnx_dynamic.py covers models with dynamic axes in depth)
    model = gpt2_like()
    mod = get_pass("InferType")(from_onnx(model)[0])
    (ids,) = mod["main"].params
    batch, seq = ids.checked_type.shape
    assert (batch.name_hint, seq.name_hint) == ("batch", "seq")
    y, pe_heads = mod["main"].ret_type.fields
    assert y.shape[:2] == (batch, seq) and tuple(y.shape[2:]) == (2, 4)
    ids_value = rng.integers(0, 30, (2, 5)).astype("int64")
    got = relay.create_executor(mod=mod).evaluate()(ids_value)
    for g, w in zip(got, run_ort(model, {"ids": ids_value})):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6)


def test_computations_on_weights_are_left_to_fold_constant():
    # Only values computed from shapes fold at import; an integer weight computed from
    # initializers stays a call (FoldConstant's job), as does a float ConstantOfShape.
    nodes = [node("Add", ["w", "w"], ["w2"]), node("Mul", ["x", "w2"], ["y"]),
             node("ConstantOfShape", ["s"], ["f"])]
    model = model_of(nodes, {"x": (TensorProto.INT64, [3])}, ["y", "f"],
                     {"w": np.arange(3, dtype="int64"), "s": np.array([2], "int64")})
    names, _ = ops_and_types(from_onnx(model)[0])
    assert sorted(names) == ["add", "full", "multiply"]


def test_folding_handles_a_long_chain_of_shape_arithmetic():
    n = 3000
    nodes = [node("Shape", ["x"], ["v0"]), const("one", np.array([1], "int64"))]
    nodes += [node("Add", [f"v{i}", "one"], [f"v{i + 1}"]) for i in range(n)]
    nodes += [node("Sub", [f"v{n}", "k"], ["t"]), node("Reshape", ["x", "t"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["a", "b"])}, ["y"],
                     {"k": np.array([n, n], "int64")})
    mod, _ = from_onnx(model, shape={"x": (2, 3)})
    names, types = ops_and_types(mod)
    assert names == ["reshape"] and types[0] == TensorType((2, 3), "float32")


def test_constant_of_shape_weights_all_fold_under_o3():
    # ResNet-50 of the onnx package makes each of its 25.6 M weights with ConstantOfShape.
    # After O3 no weight is left to compute.  (Counting the elements of the *distinct*
    # constants gives about 11.4 M: EliminateCommonSubexpr merges the calls that make equal
    # weights, so equal weights are one shared constant.)
    from pathlib import Path

    from relaypass.tools import model_zoo
    from relaypass.transform.pipeline import load_pipeline

    mod, _ = from_onnx(model_zoo.light_model("resnet50").load())
    o3 = Path(__file__).resolve().parents[1] / "examples" / "pipelines" / "O3.toml"
    out = load_pipeline(str(o3)).run(mod)
    made, shapes = [], set()

    def visit(e):
        if isinstance(e, relay.Call) and isinstance(e.op, relay.op.Op) and e.op.name in (
                "full", "zeros", "ones", "full_like", "zeros_like", "ones_like"):
            made.append(e.op.name)
        if isinstance(e, relay.Constant):
            shapes.add(e.data.shape)

    for gv in out.get_global_vars():
        post_order_visit(out[gv], visit)
    assert made == []
    assert (1000, 2048) in shapes and (64, 3, 7, 7) in shapes  # the classifier, the stem


def test_repeated_shape_computations_are_imported_once():
    # Exporters repeat Squeeze of a shape extent, and every Range makes its own constant step:
    # the importer keeps one call for each distinct computation, as EliminateCommonSubexpr
    # would, so that the pass has nothing left to merge.
    nodes = [node("Shape", ["x"], ["s"]), const("i1", np.array([1], "int64")),
             node("Gather", ["s", "i1"], ["n"], axis=0),
             node("Squeeze", ["n"], ["n_a"]), node("Squeeze", ["n"], ["n_b"]),
             const("zero_a", np.array(0, "int64")), const("one_a", np.array(1, "int64")),
             const("zero_b", np.array(0, "int64")), const("one_b", np.array(1, "int64")),
             node("Range", ["zero_a", "n_a", "one_a"], ["r_a"]),
             node("Range", ["zero_b", "n_b", "one_b"], ["r_b"]),
             node("Add", ["r_a", "r_b"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, [2, "seq"])}, ["y"])
    mod = from_onnx(model)[0]
    names, _ = ops_and_types(mod)
    assert names.count("squeeze") == 1 and names.count("arange") == 1, names
    cse = get_pass("EliminateCommonSubexpr")(get_pass("InferType")(mod))
    assert sorted(ops_and_types(cse)[0]) == sorted(names)
    x = rng.standard_normal((2, 5)).astype("float32")
    got = relay.create_executor(mod=mod).evaluate()(x)
    np.testing.assert_array_equal(np.asarray(got), run_ort(model, {"x": x})[0])


def test_matmul_weights_are_transposed_once_at_import():
    # nn.dense wants the (N, K) weight: a constant one is transposed while importing, once
    # for every layer that reads it; a weight computed in the graph keeps its transpose.
    w = rng.standard_normal((4, 3)).astype("float32")
    nodes = [node("MatMul", ["x", "w"], ["a"]), node("MatMul", ["x", "w"], ["b"]),
             node("Gemm", ["x", "w"], ["c"]), node("Add", ["a", "b"], ["ab"]),
             node("Add", ["ab", "c"], ["y"]), node("MatMul", ["x", "v"], ["z"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, [2, 4]), "v": (TensorProto.FLOAT, [4, 3])},
                     ["y", "z"], {"w": w})
    mod = from_onnx(model)[0]
    weights = []

    def visit(e):
        if isinstance(e, relay.Call) and e.op.name == "nn.dense":
            weights.append(e.args[1])

    post_order_visit(mod["main"], visit)
    constants = {id(c) for c in weights if isinstance(c, relay.Constant)}
    assert len(weights) == 4 and len(constants) == 1
    (constant,) = [c for c in weights if isinstance(c, relay.Constant)][:1]
    np.testing.assert_array_equal(constant.data.numpy(), w.T)
    assert ops_and_types(mod)[0].count("transpose") == 1
    x = rng.standard_normal((2, 4)).astype("float32")
    v = rng.standard_normal((4, 3)).astype("float32")
    got = relay.create_executor(mod=mod).evaluate()(x, v)
    for g, e in zip(got, run_ort(model, {"x": x, "v": v})):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-6)
