"""Type relations shared by many operators: broadcasting, identity, and helpers.

A type relation takes the argument types (none incomplete) and the call's
attributes and returns the result type, raising TypeRelationError with a
message about the operator when the arguments do not fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import TypeRelationError
from ..ir.attrs import Attrs
from ..ir.types import Any, Dim, TensorType, Type


def expect_tensor(ty: Type, what: str) -> TensorType:
    """``ty`` as a tensor type, or a TypeRelationError naming ``what`` it should be."""
    if not isinstance(ty, TensorType):
        raise TypeRelationError(f"{what} must be a tensor, but has type {ty}")
    return ty


def broadcast_shapes(lhs: Sequence[Dim], rhs: Sequence[Dim], op_name: str) -> tuple[Dim, ...]:
    """Numpy broadcasting of two shapes, with ``Any`` for dims unknown statically."""
    out: list[Dim] = []
    n = max(len(lhs), len(rhs))
    lhs = (1,) * (n - len(lhs)) + tuple(lhs)
    rhs = (1,) * (n - len(rhs)) + tuple(rhs)
    for a, b in zip(lhs, rhs):
        if isinstance(a, Any) or isinstance(b, Any):
            if a == 1:
                out.append(b)
            elif b == 1:
                out.append(a)
            else:
                out.append(a if not isinstance(a, Any) else b)
        elif a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise TypeRelationError(
                f"{op_name}: shapes {tuple(lhs)} and {tuple(rhs)} are not broadcast-compatible "
                f"(dimension {len(out)}: {a} vs {b})"
            )
    return tuple(out)


def broadcast_rel(op_name: str, out_dtype: str | None = None):
    """The relation of a binary broadcasting operator; ``out_dtype`` for comparisons."""

    def rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
        lhs = expect_tensor(arg_types[0], f"{op_name}: the left operand")
        rhs = expect_tensor(arg_types[1], f"{op_name}: the right operand")
        if lhs.dtype != rhs.dtype:
            raise TypeRelationError(
                f"{op_name}: operand dtypes differ: {lhs.dtype} and {rhs.dtype}"
            )
        shape = broadcast_shapes(lhs.shape, rhs.shape, op_name)
        return TensorType(shape, out_dtype or lhs.dtype)

    return rel


def identity_rel(op_name: str):
    """The relation of a unary operator whose result has its argument's type."""

    def rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
        return expect_tensor(arg_types[0], f"{op_name}: the argument")

    return rel


def normalize_axis(axis: int, ndim: int, op_name: str) -> int:
    """A possibly negative axis as a non-negative one, or a TypeRelationError."""
    if not -ndim <= axis < ndim:
        raise TypeRelationError(f"{op_name}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis
