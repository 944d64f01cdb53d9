"""ONNX models with dynamic axes import with size variables.

Exporters mark a model's batch and sequence axes dynamic by default
(``dim_param`` names such as ``batch`` and ``sequence``).  The importer
turns each name into one :class:`~relaypass.ir.types.SizeVar`, shared by
every input that uses it, and follows the shape computations of the graph
entry by entry: what is known folds to constants, a reshape whose target
holds the input's own extents stays a static ``reshape`` (so the result's
type keeps the variables), and what is known only when the model runs
becomes ``shape_of`` arithmetic feeding the ``dyn.*`` operators.  Freezing
the axes with ``shape=`` gives back the static import; binding the input to
a static type and running ``DynamicToStatic`` does too, except where the
dynamic import wrote a shape computation as a static reshape that copies
extents (codes 0, -2, -3, -4, or ``reshape_like``): ``[0, -1]`` stays where
the static import has ``[2, -1]``, since DynamicToStatic, as in Relay,
rewrites ``dyn.*`` calls only.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from relaypass import relay
from relaypass.ir import assert_structural_equal
from relaypass.ir.expr import Call, Constant, Function, Var
from relaypass.ir.module import IRModule
from relaypass.ir.shape_expr import free_size_vars
from relaypass.ir.traversal import post_order
from relaypass.ir.types import Any, SizeVar, TensorType, TupleType
from relaypass.relay.expr_functor import ExprMutator

onnx = pytest.importorskip(
    "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
ort = pytest.importorskip(
    "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx import TensorProto, numpy_helper  # noqa: E402

from relaypass.frontend import OnnxImportError, from_onnx, to_onnx  # noqa: E402
from relaypass.frontend.onnx_context import ConversionContext  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from onnx_corpus import CORPUS, TRANSFORMER_CLASSES, export_transformer  # noqa: E402
from onnx_helpers import model_of, node, run_ort  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
rng = np.random.default_rng(15)





def typed(mod):
    return relay.transform.InferType()(mod)


def run_relay(mod, feeds):
    out = relay.create_executor("debug", mod=mod).evaluate()(**feeds)
    return [np.asarray(v) for v in (out if isinstance(out, (tuple, list)) else [out])]


def assert_matches_ort(model, mod, feeds):
    want = run_ort(model, feeds)
    got = run_relay(mod, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


def op_names(mod):
    return [n.op.name for n in post_order(mod["main"]) if isinstance(n, Call)]


def result_types(mod):
    ty = mod["main"].ret_type
    return list(ty.fields) if isinstance(ty, TupleType) else [ty]


# --- the inputs' symbolic axes ---------------------------------------------------------------------


def two_inputs(dims_x, dims_y):
    return model_of([node("Add", ["x", "y"], ["z"])],
                    {"x": (TensorProto.FLOAT, dims_x), "y": (TensorProto.FLOAT, dims_y)}, ["z"])


def test_a_dim_param_is_one_size_variable_for_every_input_naming_it():
    mod, _ = from_onnx(two_inputs(["batch", 4], ["batch", 4]))
    x, y = mod["main"].params
    (bx, four) = x.type_annotation.shape
    assert isinstance(bx, SizeVar) and bx.name_hint == "batch" and four == 4
    assert y.type_annotation.shape[0] is bx
    (out,) = result_types(typed(mod))
    assert out.shape[0] is bx


def test_unnamed_axes_are_distinct_size_variables_and_names_become_identifiers():
    mod, _ = from_onnx(two_inputs([None, "seq len+1"], [1, "seq len+1"]))
    x, y = mod["main"].params
    unnamed, named = x.type_annotation.shape
    assert isinstance(unnamed, SizeVar) and unnamed.name_hint == "x_0"
    assert named.name_hint == "seq_len_1" and y.type_annotation.shape[1] is named
    mod2, _ = from_onnx(two_inputs([None, 3], [None, 3]))
    a, b = (p.type_annotation.shape[0] for p in mod2["main"].params)
    assert a is not b


def test_shape_freezes_an_axis_for_every_input_that_names_it():
    mod, _ = from_onnx(two_inputs(["batch", "seq"], ["batch", "seq"]), shape={"x": (2, 5)})
    x, y = mod["main"].params
    assert x.type_annotation == TensorType((2, 5), "float32")
    assert y.type_annotation == TensorType((2, 5), "float32")


def test_shape_can_name_keep_or_leave_an_axis_unknown():
    model = two_inputs(["batch", 4], ["batch", 4])
    mod, _ = from_onnx(model, shape={"x": ("n", 4), "y": (-1, 4)})
    (n, _), (kept, _) = (p.type_annotation.shape for p in mod["main"].params)
    assert n.name_hint == "n" and kept.name_hint == "batch" and kept is not n
    mod, _ = from_onnx(two_inputs([3, 4], [3, 4]), shape={"x": (None, 4)})
    assert type(mod["main"].params[0].type_annotation.shape[0]) is Any


def test_two_extents_for_one_axis_name_are_an_error_naming_both():
    with pytest.raises(OnnxImportError, match=r"'batch' two extents: 2 \(input 'x', axis 0\) "
                                              r"and 3 \(input 'y', axis 0\)"):
        from_onnx(two_inputs(["batch", 4], ["batch", 4]), shape={"x": (2, 4), "y": (3, 4)})


# --- the done-when model: a dynamic batch through conv, reshape-by-shape, matmul, softmax ---------


def classifier(batch):
    """What torch.onnx.export writes for ``fc(conv(x).view(x.size(0), -1)).softmax(-1)`` with the
    batch axis dynamic (or fixed to ``batch`` when it is an int)."""
    nodes = [
        node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        node("Relu", ["c"], ["r"]),
        node("Shape", ["r"], ["s"]),
        node("Gather", ["s", "zero"], ["b"], axis=0),
        node("Unsqueeze", ["b", "axes0"], ["b1"]),
        node("Concat", ["b1", "minus_one"], ["target"], axis=0),
        node("Reshape", ["r", "target"], ["flat"]),
        node("MatMul", ["flat", "fc"], ["logits"]),
        node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    weights = np.random.default_rng(4)
    inits = {"w": weights.standard_normal((4, 3, 3, 3)).astype("float32"),
             "fc": weights.standard_normal((4 * 6 * 6, 10)).astype("float32") * 0.1,
             "zero": np.array(0, "int64"), "axes0": np.array([0], "int64"),
             "minus_one": np.array([-1], "int64")}
    return model_of(nodes, {"x": (TensorProto.FLOAT, [batch, 3, 6, 6])}, ["y"], inits)


def test_dynamic_batch_types_with_the_size_variable_in_and_out():
    mod = typed(from_onnx(classifier("batch"))[0])
    (x,) = mod["main"].params
    batch = x.checked_type.shape[0]
    assert isinstance(batch, SizeVar) and batch.name_hint == "batch"
    (out,) = result_types(mod)
    assert out.shape[0] is batch and out.shape[1] == 10
    # the reshape's target is [batch, -1]: a static reshape that copies the batch axis
    assert "shape_of" not in op_names(mod) and not any(n.startswith("dyn.") for n in op_names(mod))


@pytest.mark.parametrize("batch", [1, 3])
def test_dynamic_batch_runs_on_any_batch_as_onnxruntime(batch):
    model = classifier("batch")
    mod, _ = from_onnx(model)
    x = rng.standard_normal((batch, 3, 6, 6)).astype("float32")
    assert_matches_ort(model, mod, {"x": x})


def test_freezing_the_batch_gives_the_static_import():
    dynamic = classifier("batch")
    frozen = from_onnx(dynamic, shape={"x": (2, 3, 6, 6)})[0]
    frozen = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.DynamicToStatic(),
        relay.transform.FoldConstant(), relay.transform.InferType()])(frozen)
    assert all(ty.is_static for ty in result_types(frozen))
    static = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.FoldConstant(),
        relay.transform.InferType()])(from_onnx(classifier(2))[0])
    assert_structural_equal(frozen["main"], static["main"])


# --- dynamic operators, and freezing them by binding the input -------------------------------------


def filled_like_input(batch):
    """ConstantOfShape(Shape(x)), Range(0, Shape(x)[0]) and Expand(bias, Shape(x)): each value's
    shape is the input's, known only when the model runs."""
    nodes = [
        node("Shape", ["x"], ["s"]),
        node("ConstantOfShape", ["s"], ["half"],
             value=numpy_helper.from_array(np.array([0.5], np.float32))),
        node("Gather", ["s", "zero"], ["n"], axis=0),
        node("Range", ["zero", "n", "one"], ["rows"]),
        node("Cast", ["rows"], ["rows_f"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["rows_f", "axes1"], ["column"]),
        node("Expand", ["bias", "s"], ["bias_full"]),
        node("Add", ["x", "half"], ["a"]),
        node("Add", ["a", "column"], ["b"]),
        node("Add", ["b", "bias_full"], ["y"]),
    ]
    inits = {"zero": np.array(0, "int64"), "one": np.array(1, "int64"),
             "axes1": np.array([1], "int64"), "bias": np.arange(4, dtype="float32")[None]}
    return model_of(nodes, {"x": (TensorProto.FLOAT, [batch, 4])}, ["y"], inits)


def test_shape_computations_known_only_at_run_time_use_the_dynamic_operators():
    mod = typed(from_onnx(filled_like_input("batch"))[0])
    names = op_names(mod)
    assert {"dyn.full", "dyn.broadcast_to", "arange", "shape_of"} <= set(names)
    (out,) = result_types(mod)
    assert out.shape[0] is mod["main"].params[0].checked_type.shape[0]
    for batch in (2, 5):
        x = rng.standard_normal((batch, 4)).astype("float32")
        assert_matches_ort(filled_like_input("batch"), mod, {"x": x})


def bind_input_shape(mod, shape):
    """``main`` with its one parameter replaced by a variable of a static type."""
    main = mod["main"]
    (old,) = main.params
    new = Var(old.name_hint, TensorType(shape, old.type_annotation.dtype))
    return IRModule.from_expr(Function([new], relay.bind(main.body, {old: new})))


def test_binding_the_batch_then_dynamic_to_static_gives_the_static_import():
    dynamic = from_onnx(filled_like_input("batch"))[0]
    frozen = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.DynamicToStatic(),
        relay.transform.FoldConstant(), relay.transform.InferType()])(
            bind_input_shape(dynamic, (3, 4)))
    assert not any(n.startswith("dyn.") for n in op_names(frozen))
    static = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.FoldConstant(),
        relay.transform.InferType()])(from_onnx(filled_like_input(3))[0])
    assert_structural_equal(frozen["main"], static["main"])


def test_binding_the_batch_keeps_a_copy_code_where_the_static_import_has_the_number():
    """The one difference between freezing by binding and the static import.

    The dynamic import writes ``reshape(%r, newshape=[0, -1])`` (copy the
    batch) so that its type keeps the size variable; Relay's importer writes
    ``dyn.reshape`` by a ``shape_of`` expression, which Relay's DynamicToStatic
    makes ``reshape(newshape=[2, -1])``.  A static reshape is left alone by
    DynamicToStatic, here as in Relay, so the code stays; the values agree.
    """
    frozen = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.DynamicToStatic(),
        relay.transform.FoldConstant(), relay.transform.InferType()])(
            bind_input_shape(from_onnx(classifier("batch"))[0], (2, 3, 6, 6)))
    static = relay.transform.Sequential([
        relay.transform.InferType(), relay.transform.FoldConstant(),
        relay.transform.InferType()])(from_onnx(classifier(2))[0])
    reshapes = [n for n in post_order(frozen["main"]) if isinstance(n, Call)
                and n.op.name == "reshape"]
    assert [tuple(r.attrs.newshape) for r in reshapes] == [(0, -1)]
    assert [tuple(n.attrs.newshape) for n in post_order(static["main"])
            if isinstance(n, Call) and n.op.name == "reshape"] == [(2, -1)]

    # with the copy code written as the number, the frozen module is the static import
    class NumberTheCopy(ExprMutator):
        def visit_call(self, call):
            if call is reshapes[0]:
                return relay.reshape(self.visit(call.args[0]), [2, -1])
            return super().visit_call(call)

    main = frozen["main"]
    numbered = Function(main.params, NumberTheCopy().visit(main.body))
    assert_structural_equal(typed(IRModule.from_expr(numbered))["main"], static["main"])
    x = rng.standard_normal((2, 3, 6, 6)).astype("float32")
    np.testing.assert_allclose(run_relay(frozen, {"x": x})[0], run_relay(static, {"x": x})[0],
                               rtol=1e-6, atol=1e-6)


def test_a_reshape_to_a_target_read_from_a_graph_input_is_dyn_reshape():
    model = model_of([node("Reshape", ["x", "s"], ["y"])],
                     {"x": (TensorProto.FLOAT, [2, 3]), "s": (TensorProto.INT64, [2])}, ["y"])
    mod = typed(from_onnx(model)[0])
    assert op_names(mod) == ["dyn.reshape"]
    x = rng.standard_normal((2, 3)).astype("float32")
    for target in ([3, 2], [1, -1]):
        assert_matches_ort(model, mod, {"x": x, "s": np.array(target, "int64")})


def test_tile_by_repeats_computed_from_a_shape_is_dyn_tile():
    nodes = [node("Shape", ["y"], ["s"]), node("Slice", ["s", "zero", "one"], ["b"]),
             node("Concat", ["b", "one"], ["reps"], axis=0), node("Tile", ["x", "reps"], ["z"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, [1, 3]), "y": (TensorProto.FLOAT, ["n"])},
                     ["z"], {"zero": np.array([0], "int64"), "one": np.array([1], "int64")})
    mod = typed(from_onnx(model)[0])
    assert "dyn.tile" in op_names(mod)
    for n in (2, 5):
        assert_matches_ort(model, mod, {"x": rng.standard_normal((1, 3)).astype("float32"),
                                        "y": np.zeros(n, "float32")})


def test_expand_of_unit_axes_to_numbers_is_a_static_tile_keeping_the_variables():
    # repeat_kv of grouped-query attention: (batch, heads, 1, seq, d) to (batch, heads, 2, seq, d)
    nodes = [node("Shape", ["x"], ["s"]),
             node("Gather", ["s", "i0"], ["b"], axis=0), node("Gather", ["s", "i3"], ["n"], axis=0),
             node("Unsqueeze", ["b", "axes0"], ["b1"]), node("Unsqueeze", ["n", "axes0"], ["n1"]),
             node("Concat", ["b1", "two_two", "n1", "eight"], ["target"], axis=0),
             node("Expand", ["x", "target"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["batch", 2, 1, "seq", 8])}, ["y"],
                     {"i0": np.array(0, "int64"), "i3": np.array(3, "int64"),
                      "axes0": np.array([0], "int64"), "two_two": np.array([2, 2], "int64"),
                      "eight": np.array([8], "int64")})
    mod = typed(from_onnx(model)[0])
    assert op_names(mod) == ["tile"]
    (x,) = mod["main"].params
    batch, seq = x.checked_type.shape[0], x.checked_type.shape[3]
    assert tuple(result_types(mod)[0].shape) == (batch, 2, 2, seq, 8)
    assert_matches_ort(model, mod, {"x": rng.standard_normal((3, 2, 1, 5, 8)).astype("float32")})


def test_allowzero_without_a_zero_in_the_target_still_copies_extents():
    # torch's dynamo exporter writes allowzero=1 on every Reshape
    nodes = [node("Shape", ["x"], ["s"]), node("Slice", ["s", "zero", "two"], ["lead"]),
             node("Concat", ["lead", "heads"], ["target"], axis=0),
             node("Reshape", ["x", "target"], ["y"], allowzero=1)]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["batch", "seq", 8])}, ["y"],
                     {"zero": np.array([0], "int64"), "two": np.array([2], "int64"),
                      "heads": np.array([2, 4], "int64")})
    mod = typed(from_onnx(model)[0])
    assert op_names(mod) == ["reshape"]
    (out,) = result_types(mod)
    assert [v.name_hint for v in free_size_vars(out.shape)] == ["batch", "seq"]
    assert_matches_ort(model, mod, {"x": rng.standard_normal((2, 3, 8)).astype("float32")})


# --- what folds, and what stays static, with symbolic axes -------------------------------------


def test_extents_known_in_a_dynamic_shape_fold_to_constants():
    nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "two"], ["d"], axis=0),
             node("Cast", ["d"], ["df"], to=TensorProto.FLOAT),
             node("Div", ["x", "df"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["batch", "seq", 6])}, ["y"],
                     {"two": np.array(2, "int64")})
    mod = typed(from_onnx(model)[0])
    assert "shape_of" not in op_names(mod)
    x = rng.standard_normal((2, 3, 6)).astype("float32")
    assert_matches_ort(model, mod, {"x": x})


def test_a_slice_to_the_sequence_length_of_a_tensor_that_long_is_static():
    nodes = [node("Shape", ["x"], ["s"]),
             node("Slice", ["s", "one", "two"], ["seq"]),
             node("Slice", ["x", "zero", "seq", "one"], ["y"])]
    model = model_of(nodes, {"x": (TensorProto.FLOAT, ["batch", "seq", 4])}, ["y"],
                     {"zero": np.array([0], "int64"), "one": np.array([1], "int64"),
                      "two": np.array([2], "int64")})
    mod = typed(from_onnx(model)[0])
    # the end is the sequence length of x itself: "to the end", so nothing is sliced
    assert op_names(mod) == []
    assert result_types(mod)[0] == mod["main"].params[0].checked_type


def test_symbolic_values_follow_take_slice_concatenate_and_arithmetic():
    b, s = SizeVar("b"), SizeVar("s")
    x = relay.var("x", TensorType((b, s, 12, 64), "float32"))
    shape = relay.shape_of(x, "int64")
    lead = relay.strided_slice(shape, [0], [2])
    heads = relay.take(shape, relay.const(np.array([2, 3], "int64")), axis=0)
    merged = relay.multiply(relay.take(heads, relay.const(np.array([0], "int64")), axis=0),
                            relay.take(heads, relay.const(np.array([1], "int64")), axis=0))
    target = relay.concatenate([lead, merged], 0)
    total = relay.add(relay.take(shape, relay.const(np.array([1], "int64")), axis=0),
                      relay.take(shape, relay.const(np.array([1], "int64")), axis=0))
    ctx = ConversionContext(17)
    assert ctx.symbolic_entries(target) == [b, s, 768]
    (twice,) = ctx.symbolic_entries(total)
    assert twice == s * 2
    assert ctx.symbolic_entries(relay.take(shape, relay.var("i", TensorType((), "int64")))) is None
    assert ctx.shape_sources(target) == [x]


def test_symbolic_values_of_a_100000_long_chain_of_shape_arithmetic():
    n = SizeVar("n")
    x = relay.var("x", TensorType((n, 3), "float32"))
    value = relay.shape_of(x, "int64")
    one = Constant(np.array([1, 0], "int64"))
    for _ in range(100_000):
        value = relay.add(value, one)
    ctx = ConversionContext(17)
    first, second = ctx.symbolic_entries(value)
    assert first == n + 100_000 and second == 3


# --- transformers with dynamic batch and sequence axes --------------------------------------------

TRANSFORMERS = ["bert_layer", "gpt2_block", "gpt2_kv_cache", "llama_block", "vit_embed"]
SIZES = [{"batch": 2, "sequence": 8, "past_sequence": 5},
         {"batch": 1, "sequence": 3, "past_sequence": 9}]


def corpus_feeds(model, sizes, seed=0):
    """Inputs of the given axis sizes: token ids below the vocabulary, 0/1 masks, normals."""
    feed_rng = np.random.default_rng(seed)
    out = {}
    for vi in model.graph.input:
        shape = [sizes[d.dim_param] if d.dim_param else d.dim_value
                 for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == TensorProto.INT64:
            high = 2 if vi.name in ("attention_mask", "token_type_ids") else 50
            value = feed_rng.integers(0, high, shape, dtype=np.int64)
            if vi.name == "attention_mask":
                value[:, 0] = 1
            out[vi.name] = value
        else:
            out[vi.name] = feed_rng.standard_normal(shape).astype(np.float32)
    return out


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformer_imports_with_size_variables_in_every_type(name):
    model = CORPUS[f"{name}:dynamic"]()
    mod = typed(from_onnx(model)[0])
    declared = {vi.name: [d.dim_param for d in vi.type.tensor_type.shape.dim]
                for vi in model.graph.output}
    for vi, ty in zip(model.graph.output, result_types(mod)):
        names = {v.name_hint for v in free_size_vars(ty.shape)}
        want = {d for d in declared[vi.name] if d and d != "total_sequence"}
        assert want <= names, (vi.name, ty)
        assert not any(type(d) is Any for d in ty.shape), (vi.name, ty)


def test_a_dynamic_import_round_trips_through_the_text_format():
    mod = typed(from_onnx(CORPUS["gpt2_kv_cache:dynamic"]())[0])
    back = typed(relay.fromtext(mod.astext(show_meta_data=True)))
    assert_structural_equal(back["main"], mod["main"])


@pytest.mark.parametrize("name", TRANSFORMERS)
@pytest.mark.parametrize("sizes", SIZES, ids=["b2s8", "b1s3"])
def test_transformer_runs_on_two_sequence_lengths_as_onnxruntime(name, sizes):
    model = CORPUS[f"{name}:dynamic"]()
    mod, _ = from_onnx(model)
    assert_matches_ort(model, mod, corpus_feeds(model, sizes))


@pytest.mark.parametrize("name", ["bert_layer", "gpt2_block"])
def test_transformer_frozen_with_shape_has_no_dynamic_operator(name):
    model = CORPUS[f"{name}:dynamic"]()
    mod = typed(from_onnx(model, shape={"input_ids": (2, 8)})[0])
    names = op_names(mod)
    assert "shape_of" not in names and not any(n.startswith("dyn.") for n in names)
    assert all(ty.is_static for ty in result_types(mod))


def bert_masks(batch, seq):
    """The token types and the 4-D attention mask of recent transformers' BERT: a buffer
    sliced to the sequence length and expanded to (batch, seq); the mask unsqueezed and
    expanded to (batch, 1, seq, seq) with a target concatenated from Shape extents."""
    nodes = [
        node("Shape", ["input_ids"], ["s"]),
        node("Gather", ["s", "zero"], ["b"], axis=0), node("Gather", ["s", "one"], ["n"], axis=0),
        node("Unsqueeze", ["b", "axes0"], ["b1"]), node("Unsqueeze", ["n", "axes0"], ["n1"]),
        node("Slice", ["buffer", "zero1", "n1", "one1"], ["types"]),
        node("Concat", ["b1", "n1"], ["bn"], axis=0),
        node("Expand", ["types", "bn"], ["token_types"]),
        node("Unsqueeze", ["attention_mask", "axes12"], ["m4"]),
        node("Concat", ["b1", "one1", "n1", "n1"], ["b1nn"], axis=0),
        node("Expand", ["m4", "b1nn"], ["expanded"]),
        node("Cast", ["expanded"], ["mf"], to=TensorProto.FLOAT),
        node("Sub", ["onef", "mf"], ["inv"]),
        node("Mul", ["inv", "minf"], ["bias"]),
        node("Range", ["zero", "n", "one"], ["positions"]),
    ]
    inits = {"zero": np.array(0, "int64"), "one": np.array(1, "int64"),
             "zero1": np.array([0], "int64"), "one1": np.array([1], "int64"),
             "axes0": np.array([0], "int64"), "axes12": np.array([1, 2], "int64"),
             "buffer": np.zeros((1, 64), "int64") + np.arange(64) % 2,
             "onef": np.array(1.0, "float32"), "minf": np.array(-3.4e38, "float32")}
    return model_of(nodes, {"input_ids": (TensorProto.INT64, [batch, seq]),
                            "attention_mask": (TensorProto.INT64, [batch, seq])},
                    ["token_types", "bias", "positions"], inits)


@pytest.mark.parametrize("seq", [3, 11])
def test_bert_attention_mask_slice_expand_and_range_with_a_dynamic_sequence(seq):
    model = bert_masks("batch", "sequence")
    mod = typed(from_onnx(model)[0])
    assert {"dyn.strided_slice", "dyn.broadcast_to", "arange"} <= set(op_names(mod))
    feeds = {"input_ids": rng.integers(0, 50, (2, seq)).astype("int64"),
             "attention_mask": (rng.random((2, seq)) > 0.3).astype("int64")}
    assert_matches_ort(model, mod, feeds)


# --- export keeps the axes dynamic -------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt2_kv_cache", "vit_embed"])
def test_export_names_dynamic_axes_after_their_size_variables(name):
    model = CORPUS[f"{name}:dynamic"]()
    exported = to_onnx(typed(from_onnx(model)[0]),
                       output_names=[o.name for o in model.graph.output])
    declared = {vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
                for vi in model.graph.input}
    for vi in exported.graph.input:
        assert [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim] == \
            declared[vi.name]
    for sizes in SIZES:
        feeds = corpus_feeds(model, sizes)
        for got, want in zip(run_ort(exported, feeds), run_ort(model, feeds)):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)



@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
@pytest.mark.parametrize("name", sorted(TRANSFORMER_CLASSES))
def test_transformers_model_classes_import_with_dynamic_axes(name, exporter, tmp_path):
    """Where torch and transformers are installed: the real model classes, exported with
    dynamic axes by either of torch's exporters."""
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("transformers", reason="transformers is not installed")
    if exporter == "dynamo":
        pytest.importorskip("onnxscript", reason="onnxscript is not installed")
    model = export_transformer(name, tmp_path / f"{name}.onnx", dynamo=exporter == "dynamo")
    mod = typed(from_onnx(model)[0])
    (out,) = result_types(mod)
    assert [v.name_hint for v in free_size_vars(out.shape)] == ["batch", "sequence"]
    for batch, seq in ((2, 8), (1, 13)):
        feeds = corpus_feeds(model, {"batch": batch, "sequence": seq})
        if "token_type_ids" in feeds:
            feeds["token_type_ids"] = np.zeros((batch, seq), np.int64)
        assert_matches_ort(model, mod, feeds)
