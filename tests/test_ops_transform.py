"""Shape and data-movement operators (and indexing): relations and kernels."""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Any, Constant, Op, OpPattern, TensorType, TupleGetItem, TupleType
from relaypass.op import TupleWrapper

X, Y = relay.var("x"), relay.var("y")
rng = np.random.default_rng(1)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# --- reshape --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ishape, newshape, expected",
    [
        ((2, 3, 4), (6, 4), (6, 4)),
        ((2, 3, 4), (-1,), (24,)),
        ((2, 3, 4), (0, -1), (2, 12)),
        ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
        ((2, 3, 4), (-2,), (2, 3, 4)),
        ((2, 3, 4), (2, -2), (2, 3, 4)),
        ((2, 3, 4), (-3, 4), (6, 4)),
        ((2, 3, 4), (0, -3), (2, 12)),
        ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
        ((6, 4), (-4, -1, 2, 0), (3, 2, 4)),
        ((6, 4), (-4, 3, -1, -2), (3, 2, 4)),
        ((2, 3, 4), (0, 0, 2, 2), (2, 3, 2, 2)),
        ((0, 4), (-1, 2), (0, 2)),
    ],
)
def test_reshape_codes(ishape, newshape, expected):
    assert relation(relay.reshape(X, newshape), T(ishape)) == T(expected)
    a = randn(*ishape)
    np.testing.assert_array_equal(evaluate(relay.reshape(X, newshape), a), a.reshape(expected))


@pytest.mark.parametrize(
    "ishape, newshape, expected",
    [
        ((Any(), 3, 4), (0, -1), (Any(), 12)),
        ((Any(), 3, 4), (-1, 4), (Any(), 4)),
        ((2, Any()), (-3,), (Any(),)),
        ((Any(), 6), (0, -4, 2, -1), (Any(), 2, 3)),
        ((Any(),), (-4, 2, -1), (2, Any())),
        ((2, Any()), (-2,), (2, Any())),
    ],
)
def test_reshape_with_unknown_dims(ishape, newshape, expected):
    assert relation(relay.reshape(X, newshape), T(ishape)) == T(expected)


def test_reshape_allowzero_keeps_zero_as_a_size():
    assert relation(relay.reshape(X, (0, 5), allowzero=True), T((0, 5))) == T((0, 5))
    with pytest.raises(TypeRelationError, match="cannot reshape"):
        relation(relay.reshape(X, (0, 5), allowzero=True), T((2, 5)))


@pytest.mark.parametrize(
    "ishape, newshape, message",
    [
        ((2, 3), (4, 2), r"reshape: cannot reshape a tensor of shape \(2, 3\) \(6 elements\) to "
                         r"\(4, 2\) \(8 elements\)"),
        ((2, 3), (-1, -1), "only one dimension can be -1"),
        ((2, 3), (4, -1), "the -1 dimension cannot be inferred"),
        ((2, 3), (-5,), "invalid code -5"),
        ((2,), (0, 0), "copies input dimension 1, but the input has rank 1"),
        ((2, 3), (-3, -3), "merges input dimensions 2 and 3"),
        ((6,), (-4, -1, -1), "cannot both be -1"),
        ((6,), (-4, 4, -1), "cannot be split into 4 x -1"),
        ((6,), (-4, 2), "must be followed by the two dimensions"),
    ],
)
def test_bad_reshape_codes(ishape, newshape, message):
    with pytest.raises(TypeRelationError, match=message):
        relation(relay.reshape(X, newshape), T(ishape))


# --- transpose, squeeze, expand_dims, reverse ------------------------------------------------


def test_transpose():
    a = randn(2, 3, 4)
    assert relation(relay.transpose(X), T((2, Any(), 4))) == T((4, Any(), 2))
    np.testing.assert_array_equal(evaluate(relay.transpose(X, (1, -1, 0)), a),
                                  a.transpose(1, 2, 0))
    np.testing.assert_array_equal(evaluate(relay.transpose(X), a), a.T)
    with pytest.raises(TypeRelationError, match="transpose: attribute axes repeats an axis"):
        relation(relay.transpose(X, (0, 0, 1)), T((2, 3, 4)))
    with pytest.raises(TypeRelationError, match="must name each of the 3 axes"):
        relation(relay.transpose(X, (0, 1)), T((2, 3, 4)))


def test_squeeze():
    a = randn(1, 3, 1)
    assert evaluate(relay.squeeze(X), a).shape == (3,)
    assert evaluate(relay.squeeze(X, axis=[-1]), a).shape == (1, 3)
    assert evaluate(relay.squeeze(X, axis=0), a).shape == (3, 1)
    assert relation(relay.squeeze(X, [1]), T((2, Any()))) == T((2,))
    with pytest.raises(TypeRelationError, match="cannot squeeze axis 1 of shape \\(1, 3, 1\\): "
                                                "its extent is 3"):
        relation(relay.squeeze(X, [1]), T((1, 3, 1)))
    with pytest.raises(TypeRelationError, match="axis must be given when the input shape"):
        relation(relay.squeeze(X), T((1, Any())))


def test_expand_dims():
    a = randn(2, 3)
    assert evaluate(relay.expand_dims(X, 0), a).shape == (1, 2, 3)
    assert evaluate(relay.expand_dims(X, -1, num_newaxis=2), a).shape == (2, 3, 1, 1)
    assert evaluate(relay.expand_dims(X, 2), a).shape == (2, 3, 1)
    assert evaluate(relay.expand_dims(X, -3), a).shape == (1, 2, 3)
    assert evaluate(relay.expand_dims(X, 1, num_newaxis=0), a).shape == (2, 3)
    with pytest.raises(TypeRelationError, match="expand_dims: axis 3 is out of range for a tensor "
                                                "of rank 3"):
        relation(relay.expand_dims(X, 3), T((2, 3)))


def test_reverse():
    a = randn(2, 3)
    np.testing.assert_array_equal(evaluate(relay.reverse(X, -1), a), a[:, ::-1])
    with pytest.raises(TypeRelationError, match="reverse: axis 2 is out of range"):
        relation(relay.reverse(X, 2), T((2, 3)))


# --- concatenate, stack, split ---------------------------------------------------------------


def test_concatenate():
    a, b = randn(2, 3), randn(2, 5)
    np.testing.assert_array_equal(evaluate(relay.concatenate([X, Y], axis=-1), (a, b)),
                                  np.concatenate([a, b], axis=1))
    t = relation(relay.concatenate([X, Y], 1), TupleType([T((Any(), 3)), T((2, Any()))]))
    assert t == T((2, Any()))
    with pytest.raises(TypeRelationError, match="concatenate: field 1 has shape \\(3, 5\\), which "
                                                "differs from field 0's \\(2, 3\\) in dimension 0"):
        relation(relay.concatenate([X, Y], 1), TupleType([T((2, 3)), T((3, 5))]))
    with pytest.raises(TypeRelationError, match="field 1 has dtype int32"):
        relation(relay.concatenate([X, Y], 0), TupleType([T((2,)), T((2,), "int32")]))
    with pytest.raises(TypeRelationError, match="concatenate: axis 2 is out of range"):
        relation(relay.concatenate([X, Y], 2), TupleType([T((2, 3)), T((2, 3))]))


def test_stack():
    a, b = randn(2, 3), randn(2, 3)
    np.testing.assert_array_equal(evaluate(relay.stack([X, Y], axis=-1), (a, b)),
                                  np.stack([a, b], axis=-1))
    assert relation(relay.stack([X, Y], 0), TupleType([T((Any(), 3)), T((2, 3))])) == T((2, 2, 3))
    with pytest.raises(TypeRelationError, match="stacked tensors must have one shape"):
        relation(relay.stack([X, Y], 0), TupleType([T((2, 3)), T((3, 3))]))


def test_split_returns_tuple_wrapper_and_tuple_type():
    parts = relay.split(X, 3, axis=1)
    assert isinstance(parts, TupleWrapper) and len(parts) == 3
    assert isinstance(parts[2], TupleGetItem) and parts[2].index == 2 and parts[-1].index == 2
    with pytest.raises(IndexError):
        parts[3]
    assert [p.index for p in parts] == [0, 1, 2]
    a = randn(2, 6)
    outs = evaluate(parts, a)
    for got, want in zip(outs, np.split(a, 3, axis=1)):
        np.testing.assert_array_equal(got, want)
    assert relation(parts, T((2, Any()))) == TupleType([T((2, Any()))] * 3)


def test_split_at_indices():
    parts = relay.split(X, (1, 4), axis=-1)
    assert len(parts) == 3
    assert relation(parts, T((2, 6))) == TupleType([T((2, 1)), T((2, 3)), T((2, 2))])
    assert relation(parts, T((2, Any()))) == TupleType([T((2, 1)), T((2, 3)), T((2, Any()))])
    a = randn(2, 6)
    for got, want in zip(evaluate(parts, a), np.split(a, [1, 4], axis=1)):
        np.testing.assert_array_equal(got, want)


def test_split_errors():
    with pytest.raises(TypeRelationError, match="split: axis 1 of extent 5 cannot be split into 2"):
        relation(relay.split(X, 2, axis=1), T((2, 5)))
    with pytest.raises(TypeRelationError, match="ascending order"):
        relation(relay.split(X, (3, 1)), T((6,)))
    with pytest.raises(TypeRelationError, match="index 7 is beyond axis 0 of extent 6"):
        relation(relay.split(X, (2, 7)), T((6,)))


# --- tile, repeat, broadcast_to --------------------------------------------------------------


def test_tile_and_repeat():
    a = randn(2, 3)
    np.testing.assert_array_equal(evaluate(relay.tile(X, (2, 1, 2)), a), np.tile(a, (2, 1, 2)))
    np.testing.assert_array_equal(evaluate(relay.tile(X, (3,)), a), np.tile(a, 3))
    assert relation(relay.tile(X, (2, 2)), T((Any(), 3))) == T((Any(), 6))
    np.testing.assert_array_equal(evaluate(relay.repeat(X, 2, -1), a), np.repeat(a, 2, axis=1))
    assert relation(relay.repeat(X, 3, 0), T((Any(), 3))) == T((Any(), 3))
    with pytest.raises(TypeRelationError, match="tile: attribute reps must hold values of at "
                                                "least 1"):
        relation(relay.tile(X, (0,)), T((2,)))
    with pytest.raises(TypeRelationError, match="repeat: attribute repeats must be at least 1"):
        relation(relay.repeat(X, 0, 0), T((2,)))


def test_broadcast_to():
    a = randn(3, 1)
    np.testing.assert_array_equal(evaluate(relay.broadcast_to(X, (2, 3, 4)), a),
                                  np.broadcast_to(a, (2, 3, 4)))
    assert relation(relay.broadcast_to(X, (5, 4)), T((Any(), 1))) == T((5, 4))
    with pytest.raises(TypeRelationError, match=r"cannot broadcast shape \(3, 2\) to \(3, 4\)"):
        relation(relay.broadcast_to(X, (3, 4)), T((3, 2)))


# --- reverse_reshape, reshape_like ------------------------------------------------------------


@pytest.mark.parametrize(
    "ishape, newshape, expected",
    [
        ((10, 5, 4), (-1, 0), (50, 4)),
        ((10, 5, 4), (0, -1), (5, 40)),
        ((2, 3, 4), (-1, 0, 0), (2, 3, 4)),
        ((2, 3, 4), (-3, 0), (6, 4)),
        ((2, 3, 4), (6, 4), (6, 4)),
        ((Any(), 5, 4), (-1, 0), (Any(), 4)),
    ],
)
def test_reverse_reshape_reads_codes_from_the_right(ishape, newshape, expected):
    call = relay.reverse_reshape(X, newshape)
    assert call.op.name == "contrib_reverse_reshape"
    assert relation(call, T(ishape)) == T(expected)
    if all(isinstance(d, int) for d in ishape):
        a = randn(*ishape)
        np.testing.assert_array_equal(evaluate(call, a), a.reshape(expected))


def test_reverse_reshape_errors_and_flags():
    with pytest.raises(TypeRelationError, match=r"contrib_reverse_reshape \(codes read from the "
                                                r"right\): cannot reshape"):
        relation(relay.reverse_reshape(X, (7, -1)), T((2, 3)))
    with pytest.raises(TypeRelationError, match="contrib_reverse_reshape: data must be a tensor"):
        relation(relay.reverse_reshape(X, (-1,)), TupleType([T((2,))]))
    op = Op.get("contrib_reverse_reshape")
    assert op.get_attr("TReshapeOp") is True
    assert op.attrs_type_key == "relay.attrs.ReshapeAttrs"


@pytest.mark.parametrize(
    "dshape, lshape, kwargs, expected",
    [
        ((2, 3, 4), (6, 2, 2), {}, (6, 2, 2)),
        ((2, 3, 4), (6, 2, 2), {"lhs_begin": 2, "rhs_begin": 1}, (2, 3, 2, 2)),
        ((1, 2, 3, 4), (6, 2, 2, 3), {"lhs_begin": 1, "rhs_end": 3}, (1, 6, 2, 2)),
        ((2, 3, 4), (9, 12), {"lhs_begin": -2, "rhs_begin": -1}, (2, 12)),
        ((2, 12), (1, 2, 4), {"lhs_end": -1, "rhs_end": -1}, (1, 2, 12)),
        ((2, 3, 4), (Any(), 12), {"lhs_begin": 1, "rhs_begin": 1}, (2, 12)),
    ],
)
def test_reshape_like(dshape, lshape, kwargs, expected):
    call = relay.reshape_like(X, Y, **kwargs)
    assert relation(call, T(dshape), T(lshape, "int8")) == T(expected)
    if all(isinstance(d, int) for d in lshape):
        a = randn(*dshape)
        np.testing.assert_array_equal(evaluate(call, a, np.zeros(lshape, "int8")),
                                      a.reshape(expected))


def test_reshape_like_errors():
    with pytest.raises(TypeRelationError, match=r"reshape_like: cannot reshape a tensor of shape "
                                                r"\(2, 3\) \(6 elements\) to \(7,\)"):
        relation(relay.reshape_like(X, Y), T((2, 3)), T((7,)))
    with pytest.raises(TypeRelationError, match="reshape_like: axes rhs_begin=3, rhs_end=None do "
                                                "not give a range within a tensor of rank 2"):
        relation(relay.reshape_like(X, Y, rhs_begin=3), T((2, 3)), T((2, 3)))
    with pytest.raises(TypeRelationError, match="reshape_like: shape_like must be a tensor"):
        relation(relay.reshape_like(X, Y), T((2, 3)), TupleType([]))
    assert Op.get("reshape_like").attrs_type_key == "relay.attrs.ReshapeLikeAttrs"
    assert dict(relay.reshape_like(X, Y).attrs.items()) == {
        "lhs_begin": 0, "lhs_end": None, "rhs_begin": 0, "rhs_end": None}


# --- broadcast_to_like, collapse_sum_like, collapse_sum_to -------------------------------------


def test_broadcast_to_like():
    a = randn(3, 1)
    out = evaluate(relay.broadcast_to_like(X, Y), a, randn(2, 3, 4))
    np.testing.assert_array_equal(out, np.broadcast_to(a, (2, 3, 4)))
    assert relation(relay.broadcast_to_like(X, Y), T((Any(), 1)), T((5, 4))) == T((5, 4))
    with pytest.raises(TypeRelationError, match=r"broadcast_to_like: shape \(2, 4\) does not "
                                                r"broadcast to \(4,\)"):
        relation(relay.broadcast_to_like(X, Y), T((2, 4)), T((4,)))
    with pytest.raises(TypeRelationError, match="broadcast_to_like: operand dtypes differ"):
        relation(relay.broadcast_to_like(X, Y), T((4,)), T((4,), "int32"))


@pytest.mark.parametrize(
    "dshape, target",
    [((3, 3, 3), (3,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (2, 1, 4)), ((2, 3), (2, 3)),
     ((2, 3), ()), ((4, 1, 5), (1, 1, 1))],
)
def test_collapse_sum_matches_numpy(dshape, target):
    a = rng.integers(-5, 5, size=dshape).astype("int32")
    lead = len(dshape) - len(target)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, d in enumerate(target) if d == 1 and dshape[lead + k] != 1)
    reference = a.sum(axis=axes, keepdims=True).reshape(target).astype("int32")
    like = evaluate(relay.collapse_sum_like(X, Y), a, np.zeros(target, "int32"))
    np.testing.assert_array_equal(like, reference)
    to = evaluate(relay.collapse_sum_to(X, target), a, np.asarray(target, "int32"))
    np.testing.assert_array_equal(to, reference)


def test_collapse_sum_relations():
    assert relation(relay.collapse_sum_like(X, Y), T((3, 3)), T((3,))) == T((3,))
    assert relation(relay.collapse_sum_like(X, Y), T((Any(), 3)), T((1, 3))) == T((1, 3))
    with pytest.raises(TypeRelationError, match=r"collapse_sum_like: shape \(2, 3\) does not "
                                                r"broadcast to \(3,\)"):
        relation(relay.collapse_sum_like(X, Y), T((3,)), T((2, 3)))
    with pytest.raises(TypeRelationError, match=r"collapse_sum_like: shapes \(4,\) and \(3, 3\) "
                                                r"are not broadcast-compatible"):
        relation(relay.collapse_sum_like(X, Y), T((3, 3)), T((4,)))
    with pytest.raises(TypeRelationError, match="collapse_sum_like: operand dtypes differ"):
        relation(relay.collapse_sum_like(X, Y), T((3,)), T((3,), "float64"))

    to = relay.collapse_sum_to(X, (2, 1))
    assert isinstance(to.args[1], Constant) and to.args[1].array.dtype == np.int32
    assert to.attrs.shape == (2, 1)
    assert relation(to, T((5, 2, 3)), T((2,), "int32")) == T((2, 1))
    # a shape that is not a constant gives unknown dims of the shape vector's length
    dynamic = relay.collapse_sum_to(X, Y)
    assert dynamic.attrs.shape is None
    assert relation(dynamic, T((2, 3)), T((2,), "int64")) == T((Any(), Any()))
    with pytest.raises(TypeRelationError, match=r"collapse_sum_to: shape \(2, 1, 3\) does not "
                                                r"broadcast to \(1, 3\)"):
        relation(relay.collapse_sum_to(X, (2, 1, 3)), T((1, 3)), T((3,), "int32"))
    with pytest.raises(TypeRelationError, match="collapse_sum_to: the shape argument must be a "
                                                "vector of static length"):
        relation(dynamic, T((2, 3)), T((Any(),), "int32"))
    with pytest.raises(TypeRelationError, match=r"collapse_sum_to: attribute shape \(2, 1\) has 2 "
                                                r"values but the shape argument holds 3"):
        relation(to, T((2, 3)), T((3,), "int32"))
    assert Op.get("collapse_sum_to").attrs_type_key == "relay.attrs.InitOpAttrs"


@pytest.mark.parametrize("build", [
    lambda x: relay.reverse_reshape(x, (-1, 0)),
    lambda x: relay.reshape_like(x, relay.var("s", shape=(2, 2, 2, 1)), lhs_end=2, rhs_end=3),
    lambda x: relay.broadcast_to_like(x, relay.var("b", shape=(3, 4, 2))),
    lambda x: relay.collapse_sum_like(x, relay.var("c", shape=(1, 2))),
    lambda x: relay.collapse_sum_to(x, (4, 1)),
    lambda x: relay.collapse_sum_to(x, relay.var("shape", shape=(1,), dtype="int64")),
], ids=["reverse_reshape", "reshape_like", "broadcast_to_like", "collapse_sum_like",
        "collapse_sum_to", "collapse_sum_to-dynamic"])
def test_new_shape_operators_round_trip_through_text(build):
    x = relay.var("x", shape=(4, 2))
    text = assert_text_round_trip(build(x))
    assert build(x).op.name + "(" in text


# --- layout_transform ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src, dst, shape, expected",
    [
        ("NCHW", "NHWC", (1, 8, 2, 3), (1, 2, 3, 8)),
        ("NHWC", "NCHW", (1, 2, 3, 8), (1, 8, 2, 3)),
        ("NCHW", "NCHW4c", (1, 8, 2, 3), (1, 2, 2, 3, 4)),
        ("NCHW4c", "NHWC", (1, 2, 2, 3, 4), (1, 2, 3, 8)),
        ("NCHW4c", "NCHW2c", (1, 2, 2, 3, 4), (1, 4, 2, 3, 2)),
        ("NCHW", "NCHW", (1, 8, 2, 3), (1, 8, 2, 3)),
    ],
)
def test_layout_transform(src, dst, shape, expected):
    assert relation(relay.layout_transform(X, src, dst), T(shape)) == T(expected)
    a = randn(*shape)
    out = evaluate(relay.layout_transform(X, src, dst), a)
    back = evaluate(relay.layout_transform(X, dst, src), out)
    np.testing.assert_array_equal(back, a)


def test_layout_transform_values():
    a = np.arange(16, dtype="float32").reshape(1, 8, 1, 2)
    out = evaluate(relay.layout_transform(X, "NCHW", "NCHW4c"), a)
    np.testing.assert_array_equal(out[0, 1, 0, 1], a[0, 4:8, 0, 1])
    assert relation(relay.layout_transform(X, "NCHW", "NCHW4c"), T((Any(), 8, Any(), 2))) == \
        T((Any(), 2, Any(), 2, 4))


@pytest.mark.parametrize(
    "src, dst, shape, message",
    [
        ("NCHW", "NCHW4c", (1, 6, 2, 2), "axis 'C' of extent 6 cannot be split into blocks of 4"),
        ("NCHW", "NCDHW", (1, 6, 2, 2), "their primal axes differ"),
        ("NCHW", "NHWC", (1, 6, 2), "a tensor of rank 3 cannot have layout 'NCHW'"),
        ("NCHW4c", "NCHW", (1, 2, 2, 2, 3), "axis 'c' of layout 'NCHW4c' must have extent 4"),
        ("NCHWc", "NCHW", (1, 2, 2, 2, 3), "sub-axis 'c' needs a factor"),
        ("NCHW4x", "NCHW", (1, 2, 2, 2, 4), "splits 'X' but has no primal axis 'X'"),
        ("NCHH", "NCHW", (1, 2, 2, 2), "names an axis twice"),
    ],
)
def test_layout_transform_errors(src, dst, shape, message):
    with pytest.raises(TypeRelationError, match=f"layout_transform: .*{message}"):
        relation(relay.layout_transform(X, src, dst), T(shape))


# --- shape_of, ndarray_size, arange ----------------------------------------------------------


def test_shape_of_and_ndarray_size():
    a = randn(2, 0, 3)
    np.testing.assert_array_equal(evaluate(relay.shape_of(X), a), np.array([2, 0, 3], "int32"))
    assert relation(relay.shape_of(X, "int64"), T((Any(), 3))) == T((2,), "int64")
    assert evaluate(relay.ndarray_size(X, dtype="int64"), randn(2, 3)) == 6
    assert relation(relay.ndarray_size(X), T((Any(),))) == T((), "int32")
    # As Relay's ShapeOfRel, the result may have any dtype (Relay's own tests use float32).
    assert relation(relay.shape_of(X, "float32"), T((2, 5))) == T((2,), "float32")
    with pytest.raises(TypeRelationError, match="shape_of"):
        relation(relay.shape_of(X, "notadtype"), T((2,)))


def _arange_types(call):
    return [TensorType((), str(a.data.dtype)) for a in call.args]


def test_arange_of_constants_has_static_length():
    call = relay.arange(relay.const(1.0), relay.const(5.0), relay.const(1.5))
    assert relation(call, *_arange_types(call)) == T((3,))
    out = evaluate(call, *(a.data.numpy() for a in call.args))
    np.testing.assert_allclose(out, [1.0, 2.5, 4.0])
    call = relay.arange(5, dtype="int32")
    assert relation(call, *_arange_types(call)) == T((5,), "int32")
    np.testing.assert_array_equal(evaluate(call, *(a.data.numpy() for a in call.args)), np.arange(5))
    call = relay.arange(10, 0, -3, dtype="int64")
    np.testing.assert_array_equal(evaluate(call, *(a.data.numpy() for a in call.args)), [10, 7, 4, 1])
    assert all(isinstance(a, Constant) for a in call.args)
    assert (call.attrs.start, call.attrs.stop, call.attrs.step) == (10, 0, -3)


def test_arange_of_non_constants_has_unknown_length():
    stop = relay.var("n", shape=(), dtype="float32")
    call = relay.arange(stop)
    assert call.attrs.stop is None
    assert relation(call, T(()), T(()), T(())) == T((Any(),))
    out = evaluate(call, np.array(0, "float32"), np.array(3.5, "float32"),
                   np.array(1, "float32"))
    np.testing.assert_array_equal(out, [0, 1, 2, 3])


def test_arange_errors():
    call = relay.arange(relay.const(1.0), relay.const(5.0), relay.const(0.0))
    with pytest.raises(TypeRelationError, match="arange: step must not be zero"):
        relation(call, *_arange_types(call))
    call = relay.arange(relay.const(5.0), relay.const(1.0))
    with pytest.raises(TypeRelationError, match="give no elements"):
        relation(call, *_arange_types(call))
    call = relay.arange(relay.var("n"))
    with pytest.raises(TypeRelationError, match="arange: stop has dtype int32, but the result "
                                                "dtype is float32"):
        relation(call, T(()), T((), "int32"), T(()))
    with pytest.raises(TypeRelationError, match=r"arange: start must be a scalar.*\(2,\)"):
        relation(call, T((2,)), T(()), T(()))


# --- strided_slice ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, index",
    [
        (dict(begin=(0, 1), end=(2, 3)), np.s_[0:2, 1:3]),
        (dict(begin=(1,), end=(4,)), np.s_[1:4]),
        (dict(begin=(-3, 0), end=(100, 5), strides=(2, 2)), np.s_[-3:100:2, 0:5:2]),
        (dict(begin=(4, 4), end=(0, -100), strides=(-1, -2)), np.s_[4:0:-1, 4::-2]),
        (dict(begin=(-1,), end=(-7,), strides=(-2,)), np.s_[-1:-7:-2]),
        (dict(begin=(1, 1), end=(2, -1), slice_mode="size"), np.s_[1:3, 1:]),
        (dict(begin=(1,), end=(3,), axes=(1,)), np.s_[:, 1:3]),
        (dict(begin=(-2, 0), end=(100, 1), axes=(-1, 0)), np.s_[0:1, -2:]),
        (dict(begin=(2,), end=(2,)), np.s_[2:2]),
    ],
)
def test_strided_slice_matches_python_slicing(kwargs, index):
    a = randn(6, 5)
    np.testing.assert_array_equal(evaluate(relay.strided_slice(X, **kwargs), a), a[index])


def test_strided_slice_unknown_dims_and_errors():
    assert relation(relay.strided_slice(X, (0, 1), (2, 3)), T((Any(), 5))) == T((Any(), 2))
    with pytest.raises(TypeRelationError, match="strided_slice: stride of axis 0 is zero"):
        relation(relay.strided_slice(X, (0,), (2,), (0,)), T((5,)))
    with pytest.raises(TypeRelationError, match="begin 3 and end 1 select nothing along axis 0"):
        relation(relay.strided_slice(X, (3,), (1,)), T((5,)))
    with pytest.raises(TypeRelationError, match="begin \\(0, 0, 0\\) has more values than the "
                                                "data has axes"):
        relation(relay.strided_slice(X, (0, 0, 0), (1, 1, 1)), T((5, 5)))
    with pytest.raises(TypeRelationError, match="must have the same length"):
        relation(relay.strided_slice(X, (0, 0), (1,), axes=(0, 1)), T((5, 5)))
    with pytest.raises(TypeRelationError, match="slice_mode must be one of 'end', 'size'"):
        relation(relay.strided_slice(X, (0,), (1,), slice_mode="stop"), T((5,)))


# --- take, gather, gather_nd -----------------------------------------------------------------


def test_take_relation():
    assert relation(relay.take(X, Y), T((3, 4)), T((2, 5), "int32")) == T((2, 5))
    assert relation(relay.take(X, Y, axis=1), T((3, 4, 5)), T((2,), "int64")) == T((3, 2, 5))
    assert relation(relay.take(X, Y, axis=-1), T((3, Any())), T((Any(),), "int32")) == \
        T((3, Any()))
    assert relation(relay.take(X, Y, axis=2, batch_dims=1), T((3, 4, 5)), T((3, 2), "int32")) == \
        T((3, 4, 2))
    with pytest.raises(TypeRelationError, match="take: indices must have an integer dtype, got "
                                                "float32"):
        relation(relay.take(X, Y, axis=0), T((3,)), T((2,)))
    with pytest.raises(TypeRelationError, match="take: axis 2 is out of range"):
        relation(relay.take(X, Y, axis=2), T((3, 4)), T((2,), "int32"))
    with pytest.raises(TypeRelationError, match="mode must be one of"):
        relation(relay.take(X, Y, mode="raise"), T((3,)), T((2,), "int32"))
    with pytest.raises(TypeRelationError, match="batch_dims 2 must be between 0 and both axis"):
        relation(relay.take(X, Y, axis=1, batch_dims=2), T((3, 4)), T((3, 2), "int32"))


def test_take_modes():
    a = randn(4, 3)
    idx = np.array([[0, 3], [5, -1]], dtype="int32")
    np.testing.assert_array_equal(evaluate(relay.take(X, Y, axis=0), a, idx),
                                  a[np.clip(idx, 0, 3)])
    np.testing.assert_array_equal(evaluate(relay.take(X, Y, axis=0, mode="wrap"), a, idx),
                                  a[idx % 4])
    np.testing.assert_array_equal(evaluate(relay.take(X, Y), a, idx),
                                  a.reshape(-1)[np.clip(idx, 0, 11)])
    ok = np.array([0, -1, 2], "int64")
    np.testing.assert_array_equal(evaluate(relay.take(X, Y, axis=1, mode="fast"), a, ok),
                                  a[:, [0, 2, 2]])
    with pytest.raises(ValueError, match="take: index 3 is out of range for an axis of extent 3"):
        evaluate(relay.take(X, Y, axis=1, mode="fast"), a, np.array([3], "int32"))


def test_take_with_batch_dims():
    a = randn(2, 3, 4, 5)
    idx = rng.integers(0, 4, size=(2, 6)).astype("int32")
    out = evaluate(relay.take(X, Y, axis=2, batch_dims=1), a, idx)
    want = np.stack([np.take(a[b], idx[b], axis=1) for b in range(2)])
    assert out.shape == (2, 3, 6, 5)
    np.testing.assert_array_equal(out, want)


def test_gather():
    a = randn(3, 4)
    idx = np.array([[0, 3], [2, 1], [1, 1]], dtype="int64")
    np.testing.assert_array_equal(evaluate(relay.gather(X, 1, Y), a, idx),
                                  np.take_along_axis(a, idx, axis=1))
    small = np.array([[2, 0, 1, 1]], dtype="int32")
    np.testing.assert_array_equal(evaluate(relay.gather(X, -2, Y), a, small),
                                  a[small[0], np.arange(4)][None])
    with pytest.raises(TypeRelationError, match="gather: data .* and indices .* must have the "
                                                "same rank"):
        relation(relay.gather(X, 0, Y), T((3, 4)), T((3,), "int32"))
    with pytest.raises(TypeRelationError, match="indices dimension 1 \\(5\\) exceeds data's"):
        relation(relay.gather(X, 0, Y), T((3, 4)), T((2, 5), "int32"))


def test_gather_nd():
    a = randn(3, 4, 5)
    idx = np.array([[0, 2, 1], [3, 0, 1]], dtype="int32")
    assert relation(relay.gather_nd(X, Y), T((3, 4, 5)), T((2, 3), "int32")) == T((3, 5))
    np.testing.assert_array_equal(evaluate(relay.gather_nd(X, Y), a, idx), a[idx[0], idx[1]])
    bidx = np.array([[1, 3, 0]], dtype="int64")  # one index per batch entry
    out = evaluate(relay.gather_nd(X, Y, batch_dims=1), a, bidx)
    np.testing.assert_array_equal(out, a[np.arange(3), bidx[0]])
    with pytest.raises(TypeRelationError, match="indices address 4 axes after 0 batch axes, but "
                                                "data has rank 3"):
        relation(relay.gather_nd(X, Y), T((3, 4, 5)), T((4, 2), "int32"))
    with pytest.raises(TypeRelationError, match="first dimension of indices must be static"):
        relation(relay.gather_nd(X, Y), T((3, 4)), T((Any(), 2), "int32"))
    assert relation(relay.gather_nd(X, Y, index_rank=1), T((3, 4)), T((Any(), 2), "int32")) == \
        T((2, 4))


def test_transform_patterns():
    injective = ["reshape", "transpose", "squeeze", "concatenate", "stack", "split",
                 "strided_slice", "take", "gather", "gather_nd", "layout_transform", "reverse",
                 "ndarray_size", "reshape_like", "contrib_reverse_reshape"]
    for name in injective:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.INJECTIVE, name
    for name in ["collapse_sum_like", "collapse_sum_to"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.COMM_REDUCE, name
    for name in ["expand_dims", "tile", "repeat", "broadcast_to", "broadcast_to_like"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.BROADCAST, name
    for name in ["shape_of", "arange"]:
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.OPAQUE, name


def test_slice_like_matches_loop_and_relay_rules():
    x, like = relay.var("x", shape=(3, 5, 6)), relay.var("like", shape=(2, 4))
    data = np.arange(90, dtype="float32").reshape(3, 5, 6)
    shape_like = np.zeros((2, 4), "float32")
    for axes, shape in [(None, (2, 4, 6)), ([1], (3, 4, 6)), ([-3, 1], (2, 4, 6))]:
        call = relay.slice_like(x, like, axes=axes)
        out = evaluate(call, data, shape_like)
        expected = np.empty(shape, "float32")
        for i in range(shape[0]):
            for j in range(shape[1]):
                for k in range(shape[2]):
                    expected[i, j, k] = data[i, j, k]
        np.testing.assert_array_equal(out, expected)
    call = relay.slice_like(x, like, axes=[1])
    assert call.op.get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert_text_round_trip(call)
    with pytest.raises(TypeRelationError, match="slice_like: axis 1 of shape_like \\(7\\)"):
        relation(call, T((3, 5, 6)), T((2, 7)))
    with pytest.raises(TypeRelationError, match="slice_like: axis 2 is beyond shape_like's rank"):
        relation(relay.slice_like(x, like, axes=[2]), T((3, 5, 6)), T((2, 4)))
