"""Reductions: axis / keepdims / exclude, empty reductions, argmax/argmin, variance."""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import T, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Any, Op, OpPattern

X, M = relay.var("x"), relay.var("m")
rng = np.random.default_rng(2)


REDUCERS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
}


@pytest.mark.parametrize("name", sorted(REDUCERS))
@pytest.mark.parametrize(
    "axis, keepdims, exclude, numpy_axis",
    [
        (None, False, False, None),
        (None, True, False, None),
        (1, False, False, 1),
        (-1, True, False, 2),
        ((0, 2), False, False, (0, 2)),
        ((0, -1), True, True, 1),
        (1, False, True, (0, 2)),
        ((), False, False, None),
    ],
)
def test_reductions_match_numpy(name, axis, keepdims, exclude, numpy_axis):
    a = rng.uniform(0.5, 1.5, size=(2, 3, 4)).astype("float32")
    out = evaluate(getattr(relay, name)(X, axis, keepdims, exclude), a)
    want = REDUCERS[name](a.astype("float64"), axis=numpy_axis, keepdims=keepdims)
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(REDUCERS))
def test_integer_reductions_keep_the_dtype(name):
    a = rng.integers(-5, 5, size=(3, 4)).astype("int32")
    out = evaluate(getattr(relay, name)(X, axis=0), a)
    want = REDUCERS[name](a, axis=0)
    if name == "mean":
        want = np.trunc(a.sum(axis=0) / 3)
    np.testing.assert_array_equal(out, want)


def test_reduction_relations_with_unknown_dims():
    assert relation(relay.sum(X, axis=1), T((Any(), 3, Any()))) == T((Any(), Any()))
    assert relation(relay.max(X, axis=0, keepdims=True), T((Any(), 3))) == T((1, 3))
    assert relation(relay.mean(X), T((Any(), 3))) == T(())
    assert relation(relay.argmin(X, axis=-1), T((Any(), 3))) == T((Any(),), "int32")


def test_reduction_over_a_scalar():
    a = np.array(3.0, "float32")
    assert evaluate(relay.sum(X), a) == 3.0
    assert relation(relay.prod(X, keepdims=True), T(())) == T(())


def test_empty_reductions_give_the_identity():
    a = np.zeros((2, 0, 3), "float32")
    np.testing.assert_array_equal(evaluate(relay.sum(X, axis=1), a), np.zeros((2, 3)))
    np.testing.assert_array_equal(evaluate(relay.prod(X, axis=1), a), np.ones((2, 3)))
    np.testing.assert_array_equal(evaluate(relay.max(X, axis=1), a), np.full((2, 3), -np.inf))
    np.testing.assert_array_equal(evaluate(relay.min(X, axis=1), a), np.full((2, 3), np.inf))
    assert np.isnan(evaluate(relay.mean(X, axis=1), a)).all()
    np.testing.assert_array_equal(evaluate(relay.argmax(X, axis=1), a), np.full((2, 3), -1))
    ints = np.zeros((0,), "int8")
    assert evaluate(relay.max(X), ints) == np.iinfo(np.int8).min
    assert evaluate(relay.sum(X, axis=0, keepdims=True), a).shape == (1, 0, 3)


def test_argmax_argmin():
    a = np.array([[1, 5, 5, 0], [7, 7, -1, 7]], dtype="float32")
    np.testing.assert_array_equal(evaluate(relay.argmax(X, axis=1), a), [1, 0])
    np.testing.assert_array_equal(evaluate(relay.argmax(X, axis=1, select_last_index=True), a),
                                  [2, 3])
    np.testing.assert_array_equal(evaluate(relay.argmin(X, axis=0, keepdims=True), a),
                                  [[0, 0, 1, 0]])
    assert evaluate(relay.argmax(X), a) == 4
    assert evaluate(relay.argmin(X, axis=1, exclude=True), a).tolist() == [0, 0, 1, 0]
    b = rng.standard_normal((2, 3, 4)).astype("float32")
    out = evaluate(relay.argmax(X, axis=(0, 2)), b)
    np.testing.assert_array_equal(out, b.transpose(1, 0, 2).reshape(3, -1).argmax(axis=1))
    assert relation(relay.argmax(X, axis=0), T((4, 2), "int8")).dtype == "int32"


def test_variance():
    a = rng.standard_normal((3, 5)).astype("float32")
    call = relay.variance(X, axis=1)
    mean_call = call.args[1]
    assert mean_call.op.name == "mean" and mean_call.attrs.keepdims is True
    m = a.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(evaluate(call, a, m), a.var(axis=1), rtol=1e-5)
    unbiased = relay.variance(X, axis=(0, 1), keepdims=True, unbiased=True, with_mean=M)
    assert unbiased.args[1] is M
    np.testing.assert_allclose(evaluate(unbiased, a, np.asarray(a.mean(), "float32")),
                               a.var(ddof=1).reshape(1, 1), rtol=1e-5)
    with pytest.raises(TypeRelationError, match=r"variance: mean of shape \(4,\) does not "
                                                r"broadcast to the data's shape \(3, 5\)"):
        relation(call, T((3, 5)), T((4,)))


@pytest.mark.parametrize(
    "call, message",
    [
        (relay.sum(X, axis=3), r"sum: axis 3 is out of range for a tensor of rank 3 \(valid: -3 "
                               r"to 2\)"),
        (relay.mean(X, axis=(-4,)), "mean: axis -4 is out of range"),
        (relay.max(X, axis=(1, -2)), r"max: attribute axis repeats an axis: \(1, -2\)"),
        (relay.argmax(X, axis=(0, 5)), "argmax: axis 5 is out of range"),
        (relay.prod(X, axis=("a",)), "prod: attribute axis must be a tuple of integers"),
    ],
)
def test_bad_axes_are_type_relation_errors(call, message):
    with pytest.raises(TypeRelationError, match=message):
        relation(call, T((2, 3, 4)))


def test_reduction_patterns():
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "variance"):
        op = Op.get(name)
        assert op.get_attr("TOpPattern") == OpPattern.COMM_REDUCE, name
        assert op.attrs_schema.type_key.startswith("relay.attrs.")
