"""Elementwise, broadcasting and tensor-creating operators: relations and kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import AttrsError, TypeRelationError
from relaypass.ir import Any, Op, OpPattern, TupleType

X, Y, Z = relay.var("x"), relay.var("y"), relay.var("z")
rng = np.random.default_rng(0)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


# --- broadcasting relations -----------------------------------------------------------------


@pytest.mark.parametrize(
    "lhs, rhs, expected",
    [
        ((2, 3), (2, 3), (2, 3)),
        ((2, 3), (3,), (2, 3)),
        ((2, 1, 4), (3, 1), (2, 3, 4)),
        ((), (5, 1), (5, 1)),
        ((1,), (0,), (0,)),
        ((Any(), 3), (1, 3), (Any(), 3)),
        ((Any(), 1), (1, 4), (Any(), 4)),
        ((Any(),), (5,), (5,)),
        ((Any(),), (Any(),), (Any(),)),
    ],
)
def test_broadcast_relation_shapes(lhs, rhs, expected):
    assert relation(relay.add(X, Y), T(lhs), T(rhs)) == T(expected)
    assert relation(relay.less(X, Y), T(lhs), T(rhs)) == T(expected, "bool")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=4), st.lists(st.integers(0, 3), max_size=4))
def test_broadcast_relation_agrees_with_numpy(lhs, rhs):
    try:
        expected = np.broadcast_shapes(tuple(lhs), tuple(rhs))
    except ValueError:
        with pytest.raises(TypeRelationError, match="not broadcast-compatible"):
            relation(relay.add(X, Y), T(lhs), T(rhs))
        return
    assert relation(relay.add(X, Y), T(lhs), T(rhs)) == T(expected)
    out = evaluate(relay.maximum(X, Y), np.ones(lhs, "float32"), np.zeros(rhs, "float32"))
    assert out.shape == expected


def test_broadcast_mismatch_names_operator_and_dimension():
    with pytest.raises(TypeRelationError, match=r"multiply: shapes \(2, 3\) and \(4,\).*3 vs 4"):
        relation(relay.multiply(X, Y), T((2, 3)), T((4,)))


def test_binary_operands_must_share_dtype():
    with pytest.raises(TypeRelationError, match="add: operand dtypes differ: float32 and int32"):
        relation(relay.add(X, Y), T((2,)), T((2,), "int32"))


def test_binary_operands_must_be_tensors():
    with pytest.raises(TypeRelationError, match="subtract: the right operand must be a tensor"):
        relation(relay.subtract(X, Y), T((2,)), TupleType([T((2,))]))


def test_constructors_reject_python_numbers():
    with pytest.raises(AttrsError, match="add: argument 1 must be a relay expression.*relay.const"):
        relay.add(X, 1.0)


# --- binary kernels -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, reference",
    [
        ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
        ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
        ("power", np.power), ("floor_divide", lambda a, b: np.floor(a / b)),
        ("mod", np.fmod), ("floor_mod", np.mod),
    ],
)
def test_binary_float_kernels_broadcast_and_keep_dtype(name, reference):
    a = np.abs(randn(2, 1, 4)) + 0.5
    b = np.abs(randn(3, 1)) + 0.5
    out = evaluate(getattr(relay, name)(X, Y), a, b)
    np.testing.assert_allclose(out, reference(a, b).astype("float32"), rtol=1e-6)


def test_integer_division_truncates_and_floor_variants_round_down():
    a = np.array([7, -7, 7, -7, 0], dtype="int32")
    b = np.array([2, 2, -2, -2, 3], dtype="int32")
    np.testing.assert_array_equal(evaluate(relay.divide(X, Y), a, b), [3, -3, -3, 3, 0])
    np.testing.assert_array_equal(evaluate(relay.mod(X, Y), a, b), [1, -1, 1, -1, 0])
    np.testing.assert_array_equal(evaluate(relay.floor_divide(X, Y), a, b), [3, -4, -4, 3, 0])
    np.testing.assert_array_equal(evaluate(relay.floor_mod(X, Y), a, b), [1, 1, -1, -1, 0])


def test_integer_power_with_negative_exponent_truncates():
    a = np.array([2, 1, 3], dtype="int64")
    b = np.array([-1, -2, 2], dtype="int64")
    np.testing.assert_array_equal(evaluate(relay.power(X, Y), a, b), [0, 1, 9])


@pytest.mark.parametrize(
    "name, reference",
    [
        ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
        ("less_equal", np.less_equal), ("greater", np.greater),
        ("greater_equal", np.greater_equal),
    ],
)
def test_comparisons_give_bool(name, reference):
    a = np.array([[1, 2, 3]], dtype="int8")
    b = np.array([[2], [2]], dtype="int8")
    out = evaluate(getattr(relay, name)(X, Y), a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, reference(a, b))


def test_logical_operators():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(evaluate(relay.logical_and(X, Y), a, b), a & b)
    np.testing.assert_array_equal(evaluate(relay.logical_or(X, Y), a, b), a | b)
    np.testing.assert_array_equal(evaluate(relay.logical_not(X), a), ~a)
    ints = np.array([0, 3, -1], dtype="int32")
    np.testing.assert_array_equal(evaluate(relay.logical_not(X), ints), [1, 0, 0])


# --- unary kernels --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, reference",
    [
        ("negative", np.negative), ("abs", np.abs), ("exp", np.exp),
        ("sigmoid", lambda a: 1 / (1 + np.exp(-a))), ("tanh", np.tanh),
        ("floor", np.floor), ("ceil", np.ceil), ("round", np.round), ("trunc", np.trunc),
        ("sign", np.sign), ("copy", np.copy), ("zeros_like", np.zeros_like),
        ("ones_like", np.ones_like),
        ("erf", np.vectorize(math.erf)),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_kernels(name, reference, dtype):
    a = (randn(3, 4) * 3).astype(dtype)
    out = evaluate(getattr(relay, name)(X), a)
    np.testing.assert_allclose(out, reference(a.astype("float64")), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, reference", [("log", np.log), ("sqrt", np.sqrt),
                                             ("rsqrt", lambda a: 1 / np.sqrt(a))])
def test_unary_kernels_of_positive_inputs(name, reference):
    a = np.abs(randn(5)) + 0.1
    np.testing.assert_allclose(evaluate(getattr(relay, name)(X), a), reference(a), rtol=1e-6)


def test_erf_is_accurate_in_the_tails_and_at_the_series_boundary():
    a = np.array([-30.0, -6.0, -2.5, -2.4999, -1e-8, 0.0, 0.3, 2.5, 4.0, np.inf])
    np.testing.assert_allclose(evaluate(relay.erf(X), a), [math.erf(v) for v in a], rtol=1e-13)


def test_round_is_half_to_even_and_rounding_keeps_integers():
    np.testing.assert_array_equal(
        evaluate(relay.round(X), np.array([0.5, 1.5, 2.5, -0.5], "float32")), [0, 2, 2, -0])
    ints = np.array([-3, 4], dtype="int32")
    for name in ("floor", "ceil", "round", "trunc"):
        np.testing.assert_array_equal(evaluate(getattr(relay, name)(X), ints), ints)


def test_float_functions_type_integer_tensors_as_relay():
    # Relay's IdentityRel: log, exp... of an integer tensor type-check, keeping the dtype.
    for fn in (relay.exp, relay.log, relay.sqrt, relay.rsqrt, relay.sigmoid, relay.tanh, relay.erf):
        assert relation(fn(X), T((2,), "int32")) == T((2,), "int32")


def test_unary_relation_keeps_any_dims():
    assert relation(relay.sigmoid(X), T((Any(), 2))) == T((Any(), 2))
    assert relation(relay.negative(X), T((), "int8")) == T((), "int8")


# --- clip, cast, where ----------------------------------------------------------------------


def test_clip_float_and_integer_bounds():
    a = np.array([-3.0, -0.2, 0.4, 9.0], "float32")
    np.testing.assert_array_equal(evaluate(relay.clip(X, -0.5, 1.0), a), np.clip(a, -0.5, 1.0))
    ints = np.array([-100, -1, 5, 100], dtype="int8")
    out = evaluate(relay.clip(X, -1.7, math.inf), ints)
    np.testing.assert_array_equal(out, [-1, -1, 5, 100])


def test_clip_bounds_must_be_numbers():
    call = relay.Call(Op.get("clip"), [X], relay.clip(X, 0, 1).attrs.with_fields(a_min="low"))
    with pytest.raises(TypeRelationError, match="clip: attribute a_min must be a number"):
        relation(call, T((2,)))


def test_cast_changes_dtype_and_rejects_unknown_dtypes():
    assert relation(relay.cast(X, "int8"), T((2, Any()))) == T((2, Any()), "int8")
    out = evaluate(relay.cast(X, "int32"), np.array([1.7, -1.7], "float32"))
    np.testing.assert_array_equal(out, [1, -1])
    assert evaluate(X.astype("float16"), np.array([1, 2], "int32")).dtype == np.float16
    with pytest.raises(TypeRelationError, match="cast: attribute dtype is not a supported dtype: "
                                                "'flaot32'"):
        relation(relay.cast(X, "flaot32"), T((2,)))


def test_cast_like_takes_the_dtype_of_its_second_argument_only():
    call = relay.cast_like(X, Y)
    assert relation(call, T((2, Any())), T((7, 1, 1), "int8")) == T((2, Any()), "int8")
    out = evaluate(call, np.array([1.7, -1.7, 300.0], "float32"), np.zeros((4,), "int32"))
    np.testing.assert_array_equal(out, np.array([1.7, -1.7, 300.0], "float32").astype("int32"))
    with pytest.raises(TypeRelationError, match="cast_like: dtype_like must be a tensor"):
        relation(call, T((2,)), TupleType([T((2,))]))
    with pytest.raises(TypeRelationError, match="cast_like: data must be a tensor"):
        relation(call, TupleType([]), T((2,)))


@pytest.mark.parametrize("name, reference", [("left_shift", np.left_shift),
                                             ("right_shift", np.right_shift)])
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "int64"])
def test_shifts_broadcast_and_keep_dtype(name, reference, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min // 4, info.max // 4, size=(3, 4), endpoint=True).astype(dtype)
    b = rng.integers(0, 4, size=(4,)).astype(dtype)
    call = getattr(relay, name)(X, Y)
    assert relation(call, T((3, 4), dtype), T((4,), dtype)) == T((3, 4), dtype)
    np.testing.assert_array_equal(evaluate(call, a, b), reference(a, b))


def test_shift_errors():
    with pytest.raises(TypeRelationError, match="left_shift: operand dtypes differ: int32 and "
                                                "int8"):
        relation(relay.left_shift(X, Y), T((2,), "int32"), T((2,), "int8"))
    with pytest.raises(TypeRelationError, match=r"right_shift: shapes \(2,\) and \(3,\) are not "
                                                "broadcast-compatible"):
        relation(relay.right_shift(X, Y), T((2,), "int32"), T((3,), "int32"))
    # As Relay's BroadcastRel, a float shift type-checks; evaluating it is the error.
    assert relation(relay.left_shift(X, Y), T((2,)), T((2,))) == T((2,))
    with pytest.raises(ValueError, match="left_shift: operands must have an integer dtype, got "
                                         "float32"):
        evaluate(relay.left_shift(X, Y), randn(2), randn(2))


@pytest.mark.parametrize("build", [
    lambda x, y: relay.cast_like(x, y),
    lambda x, y: relay.left_shift(x, relay.const(np.int32(2))),
    lambda x, y: relay.right_shift(x, relay.cast_like(relay.const(1), x)),
], ids=["cast_like", "left_shift", "right_shift"])
def test_new_elementwise_operators_round_trip_through_text(build):
    x = relay.var("x", shape=(2, 3), dtype="int32")
    y = relay.var("y", shape=(1,), dtype="float16")
    expr = build(x, y)
    assert expr.op.name + "(" in assert_text_round_trip(expr)


def test_where_broadcasts_all_three_and_takes_xs_dtype():
    assert relation(relay.where(X, Y, Z), T((2, 1), "bool"), T((3,)), T((1, 3))) == T((2, 3))
    cond = np.array([[True], [False]])
    x, y = randn(3), randn(1, 3)
    np.testing.assert_array_equal(evaluate(relay.where(X, Y, Z), cond, x, y),
                                  np.where(cond, x, y))
    ints = np.array([0, 2], "int32")
    np.testing.assert_array_equal(
        evaluate(relay.where(X, Y, Z), ints, np.ones(2, "float32"), np.zeros(2, "float32")),
        [0.0, 1.0])
    with pytest.raises(TypeRelationError, match="where: x and y must have the same dtype"):
        relation(relay.where(X, Y, Z), T((2,), "bool"), T((2,)), T((2,), "int32"))
    with pytest.raises(TypeRelationError, match="where: shapes"):
        relation(relay.where(X, Y, Z), T((4,), "bool"), T((2,)), T((2,)))


# --- creating tensors -----------------------------------------------------------------------


def test_zeros_ones_full():
    np.testing.assert_array_equal(evaluate(relay.zeros((2, 3), "int8")), np.zeros((2, 3), "int8"))
    np.testing.assert_array_equal(evaluate(relay.ones([4], "float16")), np.ones(4, "float16"))
    assert evaluate(relay.zeros((0, 2))).shape == (0, 2)
    assert evaluate(relay.zeros(relay.const(np.array([3, 1])))).shape == (3, 1)
    fill = relay.var("v")
    out = evaluate(relay.full(fill, (2, 2)), np.array(1.5, "float32"))
    np.testing.assert_array_equal(out, np.full((2, 2), 1.5, "float32"))
    out = evaluate(relay.full(fill, 3, dtype="int32"), np.array(7.9, "float32"))
    np.testing.assert_array_equal(out, [7, 7, 7])


def test_full_like_and_fill_value_must_be_scalar():
    out = evaluate(relay.full_like(X, Y), randn(2, 3), np.array(4.0, "float32"))
    np.testing.assert_array_equal(out, np.full((2, 3), 4.0, "float32"))
    with pytest.raises(TypeRelationError, match=r"full_like: fill_value must be a scalar.*\(2,\)"):
        relation(relay.full_like(X, Y), T((2, 3)), T((2,)))
    with pytest.raises(TypeRelationError, match="full: fill_value must be a scalar"):
        relation(relay.full(Y, (2,)), T((1,)))


def test_creation_attributes_are_checked():
    with pytest.raises(TypeRelationError, match="zeros: attribute shape must hold values of at "
                                                "least 0"):
        relation(relay.zeros((2, -1)))
    with pytest.raises(TypeRelationError, match="ones: attribute dtype is not a supported dtype"):
        relation(relay.ones((2,), "complex64"))
    # An expression for the shape makes Relay's dyn.zeros (tests/test_dyn_ops.py).
    assert relay.zeros(relay.var("s")).op.name == "dyn.zeros"


def test_elementwise_patterns_and_flags():
    for name in ("add", "less", "maximum", "where", "logical_or", "floor_mod", "left_shift",
                 "right_shift"):
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.BROADCAST, name
    for name in ("exp", "negative", "clip", "cast", "cast_like", "zeros", "full", "ones_like",
                 "copy"):
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.ELEMWISE, name
        assert Op.get(name).get_attr("TOpIsStateful") is False
