"""Elementwise and broadcasting operators: arithmetic, comparison, unary math."""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, make_call, register_op
from .relations import broadcast_rel, identity_rel

__all__ = [
    "add", "subtract", "multiply", "divide", "less", "less_equal", "greater", "greater_equal",
    "equal", "not_equal", "negative",
]


def _binary_kernel(fn):
    def kernel(args, attrs):
        return np.asarray(fn(args[0], args[1]))

    return kernel


def _unary_kernel(fn):
    def kernel(args, attrs):
        return np.asarray(fn(args[0]))

    return kernel


def _true_divide(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        # Relay's integer division truncates toward zero.
        return np.trunc(np.true_divide(a, b)).astype(np.asarray(a).dtype)
    return np.divide(a, b)


_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _true_divide,
}
_COMPARE = {
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "equal": np.equal,
    "not_equal": np.not_equal,
}
_UNARY = {
    "negative": np.negative,
}

for _name, _fn in _BINARY.items():
    register_op(
        _name, num_inputs=2, type_relation=broadcast_rel(_name), kernel=_binary_kernel(_fn),
        pattern=OpPattern.BROADCAST,
    )
for _name, _fn in _COMPARE.items():
    register_op(
        _name, num_inputs=2, type_relation=broadcast_rel(_name, "bool"),
        kernel=_binary_kernel(_fn), pattern=OpPattern.BROADCAST,
    )
for _name, _fn in _UNARY.items():
    register_op(
        _name, num_inputs=1, type_relation=identity_rel(_name), kernel=_unary_kernel(_fn),
        pattern=OpPattern.ELEMWISE,
    )


def add(lhs: Expr, rhs: Expr) -> Call:
    """Elementwise sum with numpy broadcasting."""
    return make_call("add", [lhs, rhs])


def subtract(lhs: Expr, rhs: Expr) -> Call:
    return make_call("subtract", [lhs, rhs])


def multiply(lhs: Expr, rhs: Expr) -> Call:
    return make_call("multiply", [lhs, rhs])


def divide(lhs: Expr, rhs: Expr) -> Call:
    return make_call("divide", [lhs, rhs])


def less(lhs: Expr, rhs: Expr) -> Call:
    return make_call("less", [lhs, rhs])


def less_equal(lhs: Expr, rhs: Expr) -> Call:
    return make_call("less_equal", [lhs, rhs])


def greater(lhs: Expr, rhs: Expr) -> Call:
    return make_call("greater", [lhs, rhs])


def greater_equal(lhs: Expr, rhs: Expr) -> Call:
    return make_call("greater_equal", [lhs, rhs])


def equal(lhs: Expr, rhs: Expr) -> Call:
    return make_call("equal", [lhs, rhs])


def not_equal(lhs: Expr, rhs: Expr) -> Call:
    return make_call("not_equal", [lhs, rhs])


def negative(data: Expr) -> Call:
    return make_call("negative", [data])
