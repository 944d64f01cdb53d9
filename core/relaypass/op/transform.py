"""Shape and data-movement operators."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import TypeRelationError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr, Tuple
from ..ir.op import OpPattern, make_call, register_op
from ..ir.types import Any, TensorType, TupleType, Type
from .relations import expect_tensor, normalize_axis

__all__ = ["concatenate"]


def _concatenate_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    tup = arg_types[0]
    if not isinstance(tup, TupleType) or not tup.fields:
        raise TypeRelationError(f"concatenate: expects a non-empty tuple of tensors, got {tup}")
    fields = [expect_tensor(f, "concatenate: each field") for f in tup.fields]
    first = fields[0]
    ndim = first.ndim
    if ndim == 0:
        raise TypeRelationError("concatenate: cannot concatenate scalars")
    axis = normalize_axis(attrs.axis, ndim, "concatenate")
    total: int | Any = 0
    for i, f in enumerate(fields):
        if f.ndim != ndim:
            raise TypeRelationError(f"concatenate: field {i} has rank {f.ndim}, field 0 has rank {ndim}")
        if f.dtype != first.dtype:
            raise TypeRelationError(f"concatenate: field {i} has dtype {f.dtype}, field 0 has {first.dtype}")
        for d in range(ndim):
            if d == axis:
                continue
            a, b = first.shape[d], f.shape[d]
            if not isinstance(a, Any) and not isinstance(b, Any) and a != b:
                raise TypeRelationError(
                    f"concatenate: field {i} has shape {f.shape}, which differs from field 0's "
                    f"{first.shape} in dimension {d}"
                )
        dim = f.shape[axis]
        total = Any() if isinstance(total, Any) or isinstance(dim, Any) else total + dim
    shape = list(first.shape)
    shape[axis] = total
    return TensorType(shape, first.dtype)


register_op(
    "concatenate", num_inputs=1, type_relation=_concatenate_rel,
    kernel=lambda args, attrs: np.concatenate(args[0], axis=attrs.axis),
    pattern=OpPattern.INJECTIVE, attrs={"axis": 0}, attrs_type_key="relay.attrs.ConcatenateAttrs",
)


def concatenate(data: Sequence[Expr] | Expr, axis: int = 0) -> Call:
    """Join tensors along ``axis``; ``data`` is a list of expressions or a tuple expression."""
    if not isinstance(data, Expr):
        data = Tuple(list(data))
    return make_call("concatenate", [data], axis=axis)
