"""What type relations share: argument and attribute checks, broadcasting, axes, dims.

A type relation takes the argument types (none incomplete) and the call's
attributes and returns the result type.  Everything a user can get wrong
(a wrong axis, mismatched shapes, a bad attribute value) is a
:class:`~relaypass.errors.TypeRelationError` whose message starts with the
operator's name, so that type inference can report it next to the call; no
relation lets a Python or numpy exception escape.

Unknown dimensions (``Any``) flow through: a relation checks what is known
and leaves ``Any`` wherever the result depends on an unknown extent.  Size
variables flow through the same checks (a check that needs a number skips
them, see :func:`is_any`) and into results as expressions
(:mod:`relaypass.ir.shape_expr`): concatenating ``(n, 3)`` and ``(m, 3)``
gives ``(m + n, 3)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any as _AnyT

from ..errors import TypeRelationError
from ..ir import shape_expr
from ..ir.attrs import Attrs
from ..ir.expr import Constant
from ..ir.op import register_type_relation
from ..ir.types import Any, Dim, SymbolicDim, TensorType, TupleType, Type

FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16"})
INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
DTYPES = FLOAT_DTYPES | INT_DTYPES | {"bool"}
"""The dtypes attributes may name (``cast``'s, ``zeros``'s...).  bfloat16 types and
casts type-check as in TVM; computing with bfloat16 data needs ml_dtypes."""


def fail(op_name: str, message: str) -> TypeRelationError:
    """The error a relation raises: ``raise fail("nn.conv2d", "...")``."""
    return TypeRelationError(f"{op_name}: {message}")


# --- argument types -------------------------------------------------------------------------


def expect_tensor(ty: Type, what: str) -> TensorType:
    """``ty`` as a tensor type, or a TypeRelationError naming ``what`` it should be."""
    if isinstance(ty, TensorType):
        return ty
    raise TypeRelationError(f"{what} must be a tensor, but has type {ty}")


def expect_tensors(ty: Type, op_name: str) -> list[TensorType]:
    """The fields of a non-empty tuple of tensors (the argument of concatenate, stack)."""
    if not isinstance(ty, TupleType) or not ty.fields:
        raise fail(op_name, f"expects a non-empty tuple of tensors, got {ty}")
    fields = ty.fields
    for i, f in enumerate(fields):
        if type(f) is not TensorType:  # the message is built only for a field that is not one
            expect_tensor(f, f"{op_name}: field {i} of the tuple")
    return list(fields)


def expect_float(t: TensorType, op_name: str, what: str = "the argument") -> None:
    if t.dtype not in FLOAT_DTYPES:
        raise fail(op_name, f"{what} must have a floating-point dtype, got {t.dtype}")


def expect_int(t: TensorType, op_name: str, what: str) -> None:
    if t.dtype not in INT_DTYPES:
        raise fail(op_name, f"{what} must have an integer dtype, got {t.dtype}")


def expect_rank(t: TensorType, rank: int, op_name: str, what: str) -> None:
    if t.ndim != rank:
        raise fail(op_name, f"{what} must have rank {rank}, got shape {shape_str(t.shape)}")


def expect_same_dtype(a: TensorType, b: TensorType, op_name: str, what_a: str, what_b: str) -> None:
    if a.dtype != b.dtype:
        raise fail(op_name, f"{what_a} has dtype {a.dtype} but {what_b} has dtype {b.dtype}")


def expect_scalar(t: TensorType, op_name: str, what: str) -> None:
    if t.ndim != 0:
        raise fail(op_name, f"{what} must be a scalar (rank 0), got shape {shape_str(t.shape)}")


# --- attributes -----------------------------------------------------------------------------


def attr_int(value: _AnyT, name: str, op_name: str, minimum: int | None = None) -> int:
    """An integer attribute, at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(op_name, f"attribute {name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise fail(op_name, f"attribute {name} must be at least {minimum}, got {value}")
    return value


def attr_ints(
    value: _AnyT, name: str, op_name: str, length: int | None = None, minimum: int | None = None
) -> tuple[int, ...]:
    """A tuple-of-integers attribute, of ``length`` when given."""
    if not isinstance(value, tuple):
        raise fail(op_name, f"attribute {name} must be a tuple of integers, got {value!r}")
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int):
            raise fail(op_name, f"attribute {name} must be a tuple of integers, got {value!r}")
        if minimum is not None and v < minimum:
            raise fail(op_name, f"attribute {name} must hold values of at least {minimum}, got {value}")
    if length is not None and len(value) != length:
        raise fail(op_name, f"attribute {name} must have {length} values, got {value!r}")
    return value


def attr_number(value: _AnyT, name: str, op_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(op_name, f"attribute {name} must be a number, got {value!r}")
    return float(value)


def attr_bool(value: _AnyT, name: str, op_name: str) -> bool:
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise fail(op_name, f"attribute {name} must be a boolean, got {value!r}")
    return bool(value)


def attr_choice(value: _AnyT, name: str, op_name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise fail(
            op_name, f"attribute {name} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        )
    return value


def attr_dtype(value: _AnyT, name: str, op_name: str, allow_empty: bool = False) -> str:
    """A dtype attribute; ``""`` (meaning "same as the input") when ``allow_empty``."""
    if allow_empty and value == "":
        return ""
    if value not in DTYPES:
        raise fail(
            op_name, f"attribute {name} is not a supported dtype: {value!r} "
            f"(supported: {', '.join(sorted(DTYPES))})"
        )
    return value


def expand_padding(pads: Sequence[_AnyT], ndim: int) -> tuple | None:
    """Relay's padding forms over ``ndim`` spatial axes as (befores..., afters...), or None.

    One value pads every side; ``ndim`` values pad both sides of each axis;
    ``2 * ndim`` values are the befores then the afters (for 2-D: top, left,
    bottom, right), as Relay's ``get_pad_tuple1d/2d/3d`` and relations read them.
    """
    if len(pads) == 1:
        return (pads[0],) * (2 * ndim)
    if len(pads) == ndim:
        return tuple(pads) * 2
    if len(pads) == 2 * ndim:
        return tuple(pads)
    return None


def padding_forms(ndim: int) -> str:
    """How many values a padding of ``ndim`` spatial axes may have, for messages."""
    counts = sorted({1, ndim, 2 * ndim})
    return ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"


def attr_padding(value: _AnyT, name: str, op_name: str, ndim: int = 2) -> tuple[int, ...]:
    """A padding attribute over ``ndim`` spatial axes as (befores..., afters...)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    pads = expand_padding(attr_ints(value, name, op_name, minimum=0), ndim)
    if pads is None:
        raise fail(op_name, f"attribute {name} must have {padding_forms(ndim)} values, "
                   f"got {value!r}")
    return pads


def const_scalar(value: _AnyT) -> float | None:
    """A number given directly or as a scalar Constant; None for anything else."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, Constant) and value.array.ndim == 0:
        return value.array.item()
    return None


# --- axes and dims --------------------------------------------------------------------------


def normalize_axis(axis: _AnyT, ndim: int, op_name: str, name: str = "axis") -> int:
    """A possibly negative axis as a non-negative one, or a TypeRelationError."""
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise fail(op_name, f"attribute {name} must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise fail(
            op_name,
            f"{name} {axis} is out of range for a tensor of rank {ndim} "
            f"(valid: {-ndim} to {ndim - 1})" if ndim else
            f"{name} {axis} is out of range for a tensor of rank 0 (it has no axes)",
        )
    return axis + ndim if axis < 0 else axis


def normalize_axes(axes: Sequence[int], ndim: int, op_name: str, name: str = "axis") -> list[int]:
    """Distinct axes, normalized, in the order given."""
    out = [normalize_axis(a, ndim, op_name, name) for a in axes]
    if len(set(out)) != len(out):
        raise fail(op_name, f"attribute {name} repeats an axis: {tuple(axes)}")
    return out


def is_any(d: Dim) -> bool:
    """Whether a dimension's extent is not a number known statically.

    True for ``Any`` and for size variables and expressions of them: checks
    that need the number skip such dims, as Relay's do.  A relation that can
    say more about a symbolic dim computes with it (:func:`dim_mul`,
    ``d * 2``, ``a + b``), which keeps size variables where ``Any`` would
    lose them.
    """
    return type(d) is Any or isinstance(d, SymbolicDim)


def dim_mul(a: Dim, b: Dim) -> Dim:
    """``a * b`` for dimensions: symbolic where either is, ``Any`` where either is unknown."""
    return shape_expr.dim_mul(a, b)


def dims_product(dims: Sequence[Dim]) -> Dim:
    """The number of elements of a shape: an int, an expression of size variables, or ``Any``."""
    return shape_expr.dim_product(dims)


def dims_equal_or_unknown(a: Dim, b: Dim) -> bool:
    """Whether two dims may be equal: equal, or either not known statically.

    Like Relay, a relation cannot prove a size variable different from a
    number or from another variable, so it accepts them; a variable bound
    to two different extents is caught where values are known (the
    interpreter) or where type inference unifies two shapes.
    """
    return a == b or is_any(a) or is_any(b)


def shape_str(shape: Sequence[Dim]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# --- broadcasting ---------------------------------------------------------------------------


def broadcast_shapes(lhs: Sequence[Dim], rhs: Sequence[Dim], op_name: str) -> tuple[Dim, ...]:
    """Numpy broadcasting of two shapes, as Relay's ``ConcreteBroadcast``.

    ``Any`` takes the other side's dim; a size variable broadcasts with 1 and
    with itself, and is an error against anything else, as in Relay (which
    cannot prove ``n`` equal to ``3`` or to ``m``).
    """
    if len(lhs) == len(rhs) and tuple(lhs) == tuple(rhs):
        return tuple(lhs)
    n = max(len(lhs), len(rhs))
    lhs_p = (1,) * (n - len(lhs)) + tuple(lhs)
    rhs_p = (1,) * (n - len(rhs)) + tuple(rhs)
    out: list[Dim] = []
    for i, (a, b) in enumerate(zip(lhs_p, rhs_p)):
        # Relay's order: a 1 gives the other side, then Any, then equality (a size variable
        # broadcasts with 1 and with itself only).
        if a == 1:
            out.append(b)
        elif b == 1 or type(b) is Any:
            out.append(a)
        elif type(a) is Any or a == b:
            out.append(b)
        else:
            raise fail(
                op_name,
                f"shapes {shape_str(lhs)} and {shape_str(rhs)} are not broadcast-compatible "
                f"(dimension {i} of the broadcast shape: {a} vs {b})",
            )
    return tuple(out)


def broadcast_rel(op_name: str, out_dtype: str | None = None):
    """The relation of a binary broadcasting operator; ``out_dtype`` for comparisons."""
    left = f"{op_name}: the left operand"
    right = f"{op_name}: the right operand"

    def rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
        lhs = arg_types[0]
        rhs = arg_types[1]
        if type(lhs) is not TensorType:
            lhs = expect_tensor(lhs, left)
        if type(rhs) is not TensorType:
            rhs = expect_tensor(rhs, right)
        if lhs.dtype != rhs.dtype:
            raise fail(op_name, f"operand dtypes differ: {lhs.dtype} and {rhs.dtype}")
        if lhs.shape == rhs.shape:
            if out_dtype is None or out_dtype == lhs.dtype:
                return lhs
            return TensorType(lhs.shape, out_dtype)
        return TensorType(broadcast_shapes(lhs.shape, rhs.shape, op_name), out_dtype or lhs.dtype)

    return rel


def identity_rel(op_name: str):
    """The relation of a unary operator whose result has its argument's type.

    Relay's ``IdentityRel``: any dtype is accepted (``log`` of an int32 tensor
    type-checks in TVM too; what it computes is the kernel's business).
    """
    what = f"{op_name}: the argument"

    def rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
        t = arg_types[0]
        if type(t) is TensorType:
            return t
        return expect_tensor(t, what)

    return rel


# --- argument types an operator determines ---------------------------------------------------


ARG_TYPES = "FInferArgTypes"
"""Optional operator attribute: ``infer(known_arg_types, attrs) -> list[Type | None]``.

Relay's relations may also fix the types of their *arguments* (batch_norm's
gamma is a vector as long as data's channel axis; conv2d's weight follows from
``channels`` and ``kernel_size``), which lets programs leave parameters
unannotated.  ``known_arg_types`` holds None where an argument's type is not
known yet; the function returns, per argument, the type it must have (or
None when it does not say).  Type inference unifies these with the unknown
arguments before the relation itself runs.
"""


def vector_arg_types(op_name: str, first: int, count: int, axis_attr: str = "axis"):
    """Argument types of an operator whose arguments ``first..count-1`` are vectors as long
    as the data's ``axis`` (bias_add's bias, batch_norm's gamma, beta, mean, variance)."""

    def infer(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
        out: list[Type | None] = [None] * count
        data = known[0]
        if type(data) is TensorType:
            axis = normalize_axis(attrs[axis_attr], data.ndim, op_name)
            vec = TensorType((data.shape[axis],), data.dtype)
            out[first:] = [vec] * (count - first)
        return out

    return infer


# Relations an operator described step by step may name (``op.add_type_rel("Broadcast")``),
# under Relay's names.
register_type_relation("Identity", identity_rel)
register_type_relation("Broadcast", broadcast_rel)
register_type_relation("BroadcastComp", lambda op_name: broadcast_rel(op_name, "bool"))
