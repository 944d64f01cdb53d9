"""The ``dyn.*`` operators: relations, kernels against plain numpy, patterns, text, dispatch."""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

import relaypass as tvm
from relaypass import relay
from relaypass.errors import AttrsError, RelayPassError, TypeRelationError
from relaypass.ir import Any, Op, OpPattern, TupleType
from relaypass.op import dynamic
from relaypass.op.dynamic import STATIC_FORM, StaticForm

rng = np.random.default_rng(11)


def V(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def run(expr, *values):
    """``expr`` as a function of its free variables, typed and run by the interpreter."""
    func = relay.Function(relay.analysis.free_vars(expr), expr)
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(func))
    out = relay.create_executor("debug", mod=mod).evaluate()(*values)
    return out, mod["main"].checked_type.ret_type


def np_of(value):
    return value.numpy() if hasattr(value, "numpy") else value


DYN_OPS = {
    "dyn.reshape": OpPattern.INJECTIVE, "dyn.broadcast_to": OpPattern.BROADCAST,
    "dyn.zeros": OpPattern.ELEMWISE, "dyn.ones": OpPattern.ELEMWISE,
    "dyn.full": OpPattern.ELEMWISE, "dyn.tile": OpPattern.INJECTIVE,
    "dyn.strided_slice": OpPattern.INJECTIVE, "dyn.topk": OpPattern.OPAQUE,
    "dyn.image.resize2d": OpPattern.INJECTIVE, "dyn.nn.pad": OpPattern.INJECTIVE,
    "dyn.one_hot": OpPattern.OUT_ELEMWISE_FUSABLE, "dyn.expand_dims": OpPattern.INJECTIVE,
    "dyn.squeeze": OpPattern.INJECTIVE, "dyn.sparse_to_dense": OpPattern.OPAQUE,
    "dyn.nn.upsampling": OpPattern.INJECTIVE, "dyn.nn.upsampling3d": OpPattern.INJECTIVE,
}


@pytest.mark.parametrize("name", sorted(DYN_OPS))
def test_each_operator_has_relays_pattern_a_kernel_and_a_static_form(name):
    op = Op.get(name)
    assert op.pattern == DYN_OPS[name]
    assert op.get_attr("FKernel") is not None
    form = op.get_attr(STATIC_FORM)
    assert isinstance(form, StaticForm)
    static = Op.get(form.op_name)
    assert not static.name.startswith("dyn.")
    assert max(form.value_args + form.kept_args) < op.num_inputs


def test_reshape_ops_are_marked_as_relay_marks_them():
    assert Op.get("dyn.reshape").get_attr("TReshapeOp")
    assert Op.get("dyn.squeeze").get_attr("TReshapeOp")
    assert not Op.get("dyn.tile").get_attr("TReshapeOp")


# --- the constructors dispatch as Relay's do -------------------------------------------------

X = V("x", (2, 3, 4))
S = V("s", (3,), "int64")


@pytest.mark.parametrize("make, op_name", [
    (lambda: relay.reshape(X, S), "dyn.reshape"),
    (lambda: relay.broadcast_to(X, S), "dyn.broadcast_to"),
    (lambda: relay.zeros(S, "float32"), "dyn.zeros"),
    (lambda: relay.ones(S, "int32"), "dyn.ones"),
    (lambda: relay.full(relay.const(1.0), S), "dyn.full"),
    (lambda: relay.tile(X, S), "dyn.tile"),
    (lambda: relay.strided_slice(X, S, S, S), "dyn.strided_slice"),
    (lambda: relay.strided_slice(X, [0], relay.shape_of(S)), "dyn.strided_slice"),
    (lambda: relay.topk(X, relay.var("k", shape=(), dtype="int32"), ret_type="values"),
     "dyn.topk"),
    (lambda: relay.image.resize2d(V("im", (1, 2, 3, 4)), relay.var("sz", shape=(2,))),
     "dyn.image.resize2d"),
    (lambda: relay.nn.pad(X, relay.var("pw", shape=(3, 2), dtype="int32")), "dyn.nn.pad"),
    (lambda: relay.one_hot(V("i", (3,), "int32"), relay.const(1), relay.const(0),
                           relay.var("d", shape=(), dtype="int32"), -1, "int32"), "dyn.one_hot"),
    (lambda: relay.expand_dims(X, relay.const(1)), "dyn.expand_dims"),
    (lambda: relay.squeeze(X, S), "dyn.squeeze"),
    (lambda: relay.sparse_to_dense(V("i", (2,), "int32"), relay.const([5]), V("v", (2,))),
     "dyn.sparse_to_dense"),
    (lambda: relay.nn.upsampling(V("im", (1, 2, 3, 4)), relay.var("h", shape=()), 2),
     "dyn.nn.upsampling"),
    (lambda: relay.nn.upsampling3d(V("v3", (1, 2, 3, 4, 5)), 2, relay.var("h", shape=()), 2),
     "dyn.nn.upsampling3d"),
])
def test_an_expression_for_a_shape_makes_the_dynamic_operator(make, op_name):
    out = make()
    out = out.astuple() if isinstance(out, relay.TupleWrapper) else out
    assert out.op.name == op_name


def test_constants_keep_the_static_operator_where_relays_constructors_do():
    c = relay.const(np.array([4, 6], dtype="int64"))
    assert relay.reshape(V("a", (24,)), c).op.name == "reshape"
    assert relay.reshape(V("a", (24,)), c).attrs.newshape == (4, 6)
    assert relay.zeros(c, "float32").op.name == "zeros"
    assert relay.tile(V("a", (2,)), relay.const([3])).attrs.reps == (3,)
    assert relay.squeeze(V("a", (1, 2)), relay.const([0])).attrs.axis == (0,)
    assert relay.topk(V("a", (5,)), relay.const(2), ret_type="values").attrs.k == 2
    assert relay.nn.pad(V("a", (2,)), relay.const([[1, 1]])).attrs.pad_width == ((1, 1),)
    assert relay.nn.upsampling(V("a", (1, 1, 2, 2)), relay.const(2.0), 3).op.name == \
        "nn.upsampling"
    assert relay.image.resize2d(V("a", (1, 1, 2, 2)), relay.const([4, 4])).attrs.size == (4, 4)


def test_the_dynamic_constructors_make_what_relay_makes_of_mixed_arguments():
    # numbers beside an expression become constants of Relay's dtypes
    up = relay.nn.upsampling(V("im", (1, 2, 3, 4)), relay.var("h", shape=()), 2)
    assert up.args[2].data.dtype == "float64"
    rs = relay.image.resize2d(V("im", (1, 2, 3, 4)), relay.var("sz", shape=(2,), dtype="int64"))
    assert rs.args[2].data.dtype == "float32" and rs.args[2].data.numpy().tolist() == [0.0] * 4
    sl = relay.strided_slice(X, [0, 1], relay.var("e", shape=(2,), dtype="int32"))
    assert sl.args[1].data.numpy().tolist() == [0, 1] and sl.args[3].data.numpy().tolist() == [1]
    sp = relay.sparse_to_dense(V("i", (2,), "int32"), relay.const([5]), V("v", (2,)))
    assert sp.args[2].data.dtype == "int32"  # default value 0, as Relay's const(0)
    with pytest.raises(AttrsError, match="axes cannot be given"):
        relay.strided_slice(X, S, S, S, axes=[0, 1, 2])


# --- relations ---------------------------------------------------------------------------------


def test_relations_know_the_rank_and_leave_the_extents_unknown():
    q = Any()
    assert relation(dynamic.reshape(X, S), T((2, 3, 4)), T((2,), "int64")) == T((q, q))
    assert relation(dynamic.broadcast_to(X, S), T((3, 1)), T((3,), "int32")) == T((q, q, q))
    assert relation(dynamic.zeros(S, "int8"), T((4,), "int64")) == T((q,) * 4, "int8")
    assert relation(dynamic.full(X, S), T((), "int32"), T((2,), "int64")) == T((q, q), "int32")
    assert relation(dynamic.full(X, S, "float16"), T(()), T((1,), "int64")) == T((q,), "float16")
    assert relation(dynamic.tile(X, S), T((2, 3)), T((3,), "int64")) == T((q, q, q))
    assert relation(dynamic.tile(X, S), T((2, 3, 4, 5)), T((2,), "int64")) == T((q,) * 4)
    assert relation(dynamic.strided_slice(X, S, S, S), T((5, 6, 7)), T((2,), "int64"),
                    T((2,), "int64"), T((2,), "int64")) == T((q, q, 7))
    top = dynamic.topk(X, S, axis=0, dtype="int64").astuple()
    assert relation(top, T((5, 6)), T((), "int32")) == TupleType([T((q, 6)), T((q, 6), "int64")])
    assert relation(dynamic.topk(X, S, ret_type="indices"), T((5, 6)), T((1,), "int32")) == \
        T((5, q), "int32")
    assert relation(dynamic.resize2d(X, S, S, layout="NHWC", out_dtype="float16"),
                    T((1, 8, 8, 3), "int8"), T((2,), "int64"), T((4,))) == \
        T((1, q, q, 3), "float16")
    assert relation(dynamic.pad(X, S, S), T((2, 3)), T((2, 2), "int64"), T(())) == T((q, q))
    assert relation(dynamic.one_hot(X, S, S, S, 1, "float32"), T((3, 4), "int32"), T(()), T(()),
                    T((), "int32")) == T((3, q, 4))
    assert relation(dynamic.expand_dims(X, S, 2), T((3, 4)), T((), "int32")) == T((q,) * 4)
    assert relation(dynamic.squeeze(X, S), T((1, 3, 1)), T((2,), "int32")) == T((q,))
    assert relation(dynamic.sparse_to_dense(X, S, S, S), T((2, 2), "int32"), T((2,), "int8"),
                    T((), "int8"), T((2,), "int64")) == T((q, q), "int8")
    assert relation(dynamic.upsampling(X, S, S, layout="NHWC"), T((1, 4, 5, 3)), T(()), T(())) \
        == T((1, q, q, 3))
    assert relation(dynamic.upsampling3d(X, S, S, S), T((1, 2, 3, 4, 5), "int8"), T(()), T(()),
                    T(())) == T((1, 2, q, q, q), "int8")


@pytest.mark.parametrize("call, types, message", [
    (dynamic.reshape(X, S), [T((2, 3)), T((Any(),), "int64")],
     r"dyn.reshape: the length of newshape must be static"),
    (dynamic.reshape(X, S), [T((2, 3)), T((2, 2), "int64")],
     r"dyn.reshape: newshape must be a 1-D tensor, got shape \(2, 2\)"),
    (dynamic.broadcast_to(X, S), [T((2, 3, 4)), T((2,), "int64")],
     r"dyn.broadcast_to: cannot broadcast shape \(2, 3, 4\) to a shape of lower rank 2"),
    (dynamic.full(X, S), [T((2,)), T((2,), "int64")],
     r"dyn.full: fill_value must be a scalar"),
    (dynamic.zeros(S, "int33"), [T((2,), "int64")], r"dyn.zeros: attribute dtype"),
    (dynamic.strided_slice(X, S, S, S), [T((5,)), T((1,)), T((2,)), T((1,))],
     r"dyn.strided_slice: begin has 1 values but end has 2"),
    (dynamic.strided_slice(X, S, S, S), [T((5,)), T((2,)), T((2,)), T((2,))],
     r"dyn.strided_slice: begin has 2 values but the data has rank 1"),
    (dynamic.topk(X, S, ret_type="values"), [T((5,)), T((2,), "int32")],
     r"dyn.topk: k must be a scalar or a tensor of shape \(1,\)"),
    (dynamic.topk(X, S, axis=3, ret_type="values"), [T((5,)), T((), "int32")],
     r"topk: axis 3 is out of range"),
    (dynamic.resize2d(X, S, S), [T((1, 2, 3, 4)), T((3,)), T((4,))],
     r"dyn.image.resize2d: size must hold 2 values"),
    (dynamic.resize2d(X, S, S, method="magic"), [T((1, 2, 3, 4)), T((2,)), T((4,))],
     r"image.resize2d: attribute method must be one of"),
    (dynamic.pad(X, S, S), [T((2, 3)), T((3, 2), "int64"), T(())],
     r"dyn.nn.pad: pad_width has 3 rows but data has rank 2"),
    (dynamic.pad(X, S, S, pad_mode="wrap"), [T((2, 3)), T((2, 2), "int64"), T(())],
     r"nn.pad: attribute pad_mode must be one of"),
    (dynamic.one_hot(X, S, S, S, -1, "int32"), [T((3,), "float32"), T((), "int32"),
                                                T((), "int32"), T((), "int32")],
     r"one_hot: indices must have an integer dtype"),
    (dynamic.one_hot(X, S, S, S, -1, "int32"), [T((3,), "int32"), T((), "int32"),
                                                T((), "int32"), T((2,), "int32")],
     r"dyn.one_hot: depth must be a scalar"),
    (dynamic.expand_dims(X, S), [T((3,)), T((1,), "int32")],
     r"dyn.expand_dims: axis must be a scalar"),
    (dynamic.squeeze(X, S), [T((1, 2)), T((3,), "int32")],
     r"dyn.squeeze: cannot squeeze 3 axes of a tensor of rank 2"),
    (dynamic.sparse_to_dense(X, S, S, S), [T((2,)), T((2,)), T(()), T((1,), "int64")],
     r"dyn.sparse_to_dense: sparse_indices must have an integer dtype"),
    (dynamic.sparse_to_dense(X, S, S, S), [T((2,), "int32"), T((2, 2)), T(()), T((1,), "int64")],
     r"dyn.sparse_to_dense: sparse_values must have rank 0 or 1"),
    (dynamic.upsampling(X, S, S), [T((1, 2, 3)), T(()), T(())],
     r"nn.upsampling: data of rank 3 does not match layout 'NCHW'"),
    (dynamic.upsampling3d(X, S, S, S), [T((1, 2, 3, 4, 5)), T((2,)), T(()), T(())],
     r"dyn.nn.upsampling3d: scale_d must be a scalar"),
])
def test_relations_name_what_is_wrong(call, types, message):
    with pytest.raises(TypeRelationError, match=message):
        relation(call, *types)


# --- kernels, against plain numpy and the static operators --------------------------------------


def test_reshape_kernel_reads_relays_codes_from_the_values():
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    for newshape, expected in [([6, 4], (6, 4)), ([0, -1], (2, 12)), ([-3, 4], (6, 4)),
                               ([4, 0, 2], (4, 3, 2))]:
        out = evaluate(dynamic.reshape(X, S), a, np.array(newshape, dtype="int64"))
        np.testing.assert_array_equal(out, a.reshape(expected))


def test_reshape_kernel_rejects_codes_that_change_the_rank():
    with pytest.raises(TypeRelationError, match="codes -2 and -4 would change the rank"):
        evaluate(dynamic.reshape(X, S), np.zeros((2, 3), "float32"), np.array([-2], "int64"))


def test_kernels_match_numpy():
    a = rng.standard_normal((3, 1)).astype("float32")
    np.testing.assert_array_equal(
        evaluate(dynamic.broadcast_to(X, S), a, np.array([2, 3, 4])), np.broadcast_to(a, (2, 3, 4)))
    np.testing.assert_array_equal(evaluate(dynamic.zeros(S, "int8"), np.array([2, 5])),
                                  np.zeros((2, 5), "int8"))
    np.testing.assert_array_equal(evaluate(dynamic.ones(S, "float16"), np.array([3])),
                                  np.ones(3, "float16"))
    np.testing.assert_array_equal(
        evaluate(dynamic.full(X, S), np.array(7, "int32"), np.array([2, 2])),
        np.full((2, 2), 7, "int32"))
    np.testing.assert_array_equal(
        evaluate(dynamic.full(X, S, "float32"), np.array(7, "int32"), np.array([2])),
        np.full((2,), 7, "float32"))
    b = rng.standard_normal((2, 3)).astype("float32")
    np.testing.assert_array_equal(evaluate(dynamic.tile(X, S), b, np.array([2, 1, 3])),
                                  np.tile(b, (2, 1, 3)))
    c = rng.standard_normal((4, 5, 6)).astype("float32")
    np.testing.assert_array_equal(
        evaluate(dynamic.strided_slice(X, S, S, S), c, np.array([1, -1]), np.array([4, 0]),
                 np.array([2, -2])), c[1:4:2, -1:0:-2])
    np.testing.assert_array_equal(
        evaluate(dynamic.strided_slice(X, S, S, S, "size"), c, np.array([1, 2]),
                 np.array([2, -1]), np.array([1, 1])), c[1:3, 2:])
    np.testing.assert_array_equal(
        evaluate(dynamic.squeeze(X, S), np.zeros((1, 3, 1), "float32"), np.array([0, 2])),
        np.zeros(3, "float32"))
    np.testing.assert_array_equal(
        evaluate(dynamic.expand_dims(X, S, 2), b, np.array(-1)), b.reshape(2, 3, 1, 1))


@pytest.mark.parametrize("k", [0, 1, 3])
@pytest.mark.parametrize("axis", [0, -1])
def test_topk_kernel_sorts_like_a_loop(k, axis):
    a = rng.permutation(20).reshape(4, 5).astype("float32")
    values, indices = evaluate(dynamic.topk(X, S, axis=axis, dtype="int64").astuple(), a,
                               np.array(k, "int32"))
    moved = np.moveaxis(a, axis, -1)
    kk = k if k >= 1 else moved.shape[-1]
    expected_idx = np.array([sorted(range(len(row)), key=lambda j: -row[j])[:kk]
                             for row in moved])
    np.testing.assert_array_equal(np.moveaxis(indices, axis, -1), expected_idx)
    np.testing.assert_array_equal(np.moveaxis(values, axis, -1),
                                  np.take_along_axis(moved, expected_idx, -1))


def test_one_hot_kernel_matches_a_loop():
    idx = np.array([[0, 2], [1, 3]], "int32")
    out = evaluate(dynamic.one_hot(X, S, S, S, 1, "float32"), idx, np.array(5.0, "float32"),
                   np.array(-1.0, "float32"), np.array(4, "int32"))
    expected = np.full((2, 4, 2), -1.0, "float32")
    for i in range(2):
        for j in range(2):
            expected[i, idx[i, j], j] = 5.0
    np.testing.assert_array_equal(out, expected)


def test_pad_kernel_matches_numpy_and_casts_the_pad_value():
    a = rng.integers(0, 9, (2, 3)).astype("int32")
    out = evaluate(dynamic.pad(X, S, S), a, np.array([[1, 0], [2, 1]]), np.array(4.0, "float32"))
    np.testing.assert_array_equal(out, np.pad(a, ((1, 0), (2, 1)), constant_values=4))
    out = evaluate(dynamic.pad(X, S, S, pad_mode="edge"), a, np.array([[0, 1], [1, 0]]),
                   np.array(0, "int32"))
    np.testing.assert_array_equal(out, np.pad(a, ((0, 1), (1, 0)), mode="edge"))


def test_sparse_to_dense_kernel_matches_a_loop_and_the_last_value_wins():
    idx = np.array([[0, 1], [2, 0], [0, 1]], "int32")
    vals = np.array([1.5, 2.5, 3.5], "float32")
    out = evaluate(dynamic.sparse_to_dense(X, S, S, S), idx, vals, np.array(-1.0, "float32"),
                   np.array([3, 2]))
    expected = np.full((3, 2), -1.0, "float32")
    for row, v in zip(idx, vals):
        expected[tuple(row)] = v
    np.testing.assert_array_equal(out, expected)
    scalar = evaluate(dynamic.sparse_to_dense(X, S, S, S), np.array(1, "int32"),
                      np.array(3, "int64"), np.array(0, "int64"), np.array([4]))
    np.testing.assert_array_equal(scalar, [0, 3, 0, 0])


@pytest.mark.parametrize("make, static, values, attrs", [
    (lambda: dynamic.resize2d(X, S, S, method="nearest_neighbor",
                              coordinate_transformation_mode="asymmetric"),
     lambda: relay.image.resize2d(X, (6, 8), method="nearest_neighbor",
                                  coordinate_transformation_mode="asymmetric"),
     [np.array([6, 8], "int64"), np.zeros(4, "float32")], None),
    (lambda: dynamic.resize2d(X, S, S, layout="NHWC"),
     lambda: relay.image.resize2d(X, (5, 3), layout="NHWC"),
     [np.array([5.0, 3.0], "float32"), np.zeros(4, "float32")], None),
    (lambda: dynamic.upsampling(X, S, S, method="bilinear", align_corners=True),
     lambda: relay.nn.upsampling(X, 2.0, 1.5, method="bilinear", align_corners=True),
     [np.array(2.0), np.array(1.5)], None),
])
def test_resizing_kernels_equal_the_static_operators(make, static, values, attrs):
    a = rng.standard_normal((1, 4, 4, 4)).astype("float32")
    out = evaluate(make(), a, *values)
    ref = static()
    expected = ref.op.get_attr("FKernel")([a], ref.attrs)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_upsampling3d_nearest_matches_index_arithmetic():
    a = rng.standard_normal((1, 1, 2, 3, 2)).astype("float32")
    out = evaluate(dynamic.upsampling3d(X, S, S, S, coordinate_transformation_mode="asymmetric"),
                   a, np.array(2.0), np.array(1.0), np.array(3.0))
    expected = a.repeat(2, axis=2).repeat(3, axis=4)
    np.testing.assert_array_equal(out, expected)


def test_kernels_check_the_values_with_the_static_relation():
    with pytest.raises(TypeRelationError, match="cannot reshape a tensor of shape"):
        evaluate(dynamic.reshape(X, S), np.zeros((2, 3), "float32"), np.array([4, 2]))
    with pytest.raises(TypeRelationError, match="cannot squeeze axis 0"):
        evaluate(dynamic.squeeze(X, S), np.zeros((2, 3), "float32"), np.array([0]))


# --- the interpreter, and the text format ---------------------------------------------------------


def test_the_interpreter_runs_a_program_whose_shapes_come_from_values():
    x = V("x", (2, 3, 4))
    y = V("y", (Any(), Any()))
    z = relay.reshape(x, relay.shape_of(y))
    z = relay.tile(z, relay.const(np.array([1, 2], "int64")))  # a constant: static tile
    out, ret = run(z, np.arange(24, dtype="float32").reshape(2, 3, 4), np.zeros((6, 4), "float32"))
    assert ret == T((Any(), Any()))
    np.testing.assert_array_equal(np_of(out), np.tile(np.arange(24).reshape(6, 4), (1, 2)))
    out, _ = run(z, np.arange(24, dtype="float32").reshape(2, 3, 4), np.zeros((3, 8), "float32"))
    assert np_of(out).shape == (3, 16)


def test_a_bad_value_at_run_time_names_the_call():
    x = V("x", (2, 3))
    s = V("s", (2,), "int64")
    with pytest.raises(RelayPassError, match=r"dyn.reshape failed on .*cannot reshape"):
        run(relay.reshape(x, s), np.zeros((2, 3), "float32"), np.array([4, 4]))


@pytest.mark.parametrize("make", [
    lambda: relay.reshape(X, S, allowzero=True),
    lambda: relay.broadcast_to(X, S),
    lambda: relay.zeros(S, "int8"),
    lambda: relay.ones(S, "float32"),
    lambda: relay.full(relay.const(2, "int32"), S, "float16"),
    lambda: relay.tile(X, S),
    lambda: relay.strided_slice(X, S, S, S, slice_mode="size"),
    lambda: relay.topk(X, relay.var("k", shape=(), dtype="int32"), axis=1, is_ascend=True,
                       dtype="int64").astuple(),
    lambda: relay.image.resize2d(V("im", (1, 2, 3, 4)), relay.var("sz", shape=(2,)), None,
                                 "NHWC", "cubic", "align_corners", cubic_alpha=-0.75),
    lambda: relay.nn.pad(X, relay.var("pw", shape=(3, 2), dtype="int32"), 1.5, "reflect"),
    lambda: relay.one_hot(V("i", (3,), "int32"), relay.const(1.0), relay.const(0.0),
                          relay.var("d", shape=(), dtype="int32"), 0, "float32"),
    lambda: relay.expand_dims(X, relay.var("ax", shape=(), dtype="int32"), 2),
    lambda: relay.squeeze(X, S),
    lambda: relay.sparse_to_dense(V("i", (2,), "int32"), S, V("v", (2,)), relay.const(0.5)),
    lambda: relay.nn.upsampling(V("im", (1, 2, 3, 4)), relay.var("h", shape=()), 2.0,
                                "NHWC", "bilinear", True),
    lambda: relay.nn.upsampling3d(V("v3", (1, 2, 3, 4, 5)), 2, relay.var("h", shape=()), 2,
                                  method="trilinear", coordinate_transformation_mode="asymmetric"),
])
def test_text_round_trip(make):
    text = assert_text_round_trip(make())
    assert "dyn." in text
