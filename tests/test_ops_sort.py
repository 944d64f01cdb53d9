"""Sorting operators (argsort): relation, kernel, attributes, text form."""

from __future__ import annotations

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Any, Op, OpPattern, TupleType

X = relay.var("x")
rng = np.random.default_rng(7)


def test_argsort_relation_keeps_the_shape_and_takes_the_index_dtype():
    assert relation(relay.argsort(X), T((2, Any()))) == T((2, Any()), "int32")
    assert relation(relay.argsort(X, axis=0, dtype="int64"), T((3, 4), "int8")) == \
        T((3, 4), "int64")


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8"])
def test_argsort_ascending_matches_a_stable_numpy_sort(axis, dtype):
    # few distinct values, so that ties are common
    a = rng.integers(0, 4, size=(5, 6)).astype(dtype)
    out = evaluate(relay.argsort(X, axis=axis), a)
    np.testing.assert_array_equal(out, np.argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("axis", [0, -1])
def test_argsort_descending_keeps_ties_in_their_original_order(axis):
    a = rng.integers(0, 3, size=(6, 5)).astype("int32")
    out = evaluate(relay.argsort(X, axis=axis, is_ascend=False, dtype="int64"), a)
    assert out.dtype == np.int64
    moved = np.moveaxis(a, axis, -1)
    order = np.moveaxis(out, axis, -1)
    for row, idx in zip(moved.reshape(-1, moved.shape[-1]), order.reshape(-1, order.shape[-1])):
        # descending by value, and by position among equal values
        expected = sorted(range(len(row)), key=lambda k: (-int(row[k]), k))
        assert list(idx) == expected


def test_argsort_descending_handles_the_lowest_integer():
    a = np.array([0, np.iinfo(np.int8).min, 5, np.iinfo(np.int8).min], dtype="int8")
    out = evaluate(relay.argsort(X, is_ascend=False), a)
    np.testing.assert_array_equal(out, [2, 0, 1, 3])


def test_argsort_errors():
    with pytest.raises(TypeRelationError, match=r"argsort: axis 2 is out of range for a tensor "
                                                r"of rank 2"):
        relation(relay.argsort(X, axis=2), T((3, 4)))
    with pytest.raises(TypeRelationError, match=r"argsort: cannot sort a scalar"):
        relation(relay.argsort(X), T(()))
    with pytest.raises(TypeRelationError, match="argsort: attribute dtype is not a supported "
                                                "dtype: 'int33'"):
        relation(relay.argsort(X, dtype="int33"), T((3,)))
    with pytest.raises(TypeRelationError, match="argsort: data must be a tensor"):
        relation(relay.argsort(X), TupleType([T((3,))]))


def test_argsort_registration_follows_relay():
    op = Op.get("argsort")
    assert op.get_attr("TOpPattern") == OpPattern.OPAQUE
    assert op.attrs_type_key == "relay.attrs.ArgsortAttrs"
    assert dict(relay.argsort(X).attrs.items()) == {"axis": -1, "is_ascend": True,
                                                    "dtype": "int32"}
    assert relay.op.argsort is relay.argsort is relay.op.algorithm.argsort


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0, "is_ascend": False, "dtype": "int64"}])
def test_argsort_round_trips_through_text(kwargs):
    x = relay.var("x", shape=(3, 4))
    text = assert_text_round_trip(relay.argsort(x, **kwargs))
    assert "argsort(" in text
