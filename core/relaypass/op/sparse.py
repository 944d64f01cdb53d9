"""``sparse_to_dense``: a dense tensor from a sparse list of coordinates and values.

Relay's operator: ``sparse_indices`` is a scalar (one coordinate of a 1-D
result), a vector (one coordinate per value of a 1-D result) or an
``(n, rank)`` matrix (one row of coordinates per value); ``sparse_values``
is one value per coordinate, or a scalar for all of them; every other
element is ``default_value``.  When a coordinate repeats, the last value
given for it wins, as in TVM's computation.  With an expression for
``output_shape`` the constructor builds ``dyn.sparse_to_dense``
(:mod:`relaypass.op.dynamic`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.expr_builders import const
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import TensorType, Type
from . import dynamic
from .builder import call, static_shape
from .relations import (
    attr_ints,
    dims_equal_or_unknown,
    expect_int,
    expect_scalar,
    expect_tensor,
    fail,
    shape_str,
)

__all__ = ["sparse_to_dense"]

_OP = "sparse_to_dense"


def _sparse_to_dense_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    indices = expect_tensor(arg_types[0], f"{_OP}: sparse_indices")
    values = expect_tensor(arg_types[1], f"{_OP}: sparse_values")
    default = expect_tensor(arg_types[2], f"{_OP}: default_value")
    expect_int(indices, _OP, "sparse_indices")
    expect_scalar(default, _OP, "default_value")
    shape = attr_ints(attrs.output_shape, "output_shape", _OP, minimum=0)
    if indices.ndim > 2:
        raise fail(_OP, f"sparse_indices must have rank 0, 1 or 2, got shape "
                   f"{shape_str(indices.shape)}")
    if values.ndim > 1:
        raise fail(_OP, f"sparse_values must have rank 0 or 1, got shape {shape_str(values.shape)}")
    rank = indices.shape[1] if indices.ndim == 2 else 1
    if not dims_equal_or_unknown(rank, len(shape)):
        raise fail(_OP, f"sparse_indices of shape {shape_str(indices.shape)} give coordinates of "
                   f"rank {rank}, but output_shape {shape} has rank {len(shape)}")
    if values.ndim == 1 and indices.ndim >= 1 and not dims_equal_or_unknown(
            values.shape[0], indices.shape[0]):
        raise fail(_OP, f"{indices.shape[0]} coordinates but {values.shape[0]} sparse_values")
    return TensorType(shape, values.dtype)


def _sparse_to_dense_kernel(args, attrs):
    indices, values, default = args
    out = np.full(attrs.output_shape, default, dtype=values.dtype)
    coords = indices.reshape(-1, 1) if indices.ndim < 2 else indices
    for j, row in enumerate(coords):
        out[tuple(int(c) for c in row)] = values if values.ndim == 0 else values[j]
    return out


register_op(
    _OP, num_inputs=3, type_relation=_sparse_to_dense_rel, kernel=_sparse_to_dense_kernel,
    pattern=OpPattern.OPAQUE, attrs={"output_shape": REQUIRED},
    attrs_type_key="relay.attrs.SparseToDenseAttrs",
    description="A dense tensor of output_shape holding sparse_values at sparse_indices and "
    "default_value elsewhere.",
)


def sparse_to_dense(sparse_indices: Expr, output_shape, sparse_values: Expr,
                    default_value=0) -> Call:
    """Relay's ``sparse_to_dense``; ``default_value`` 0 is an int32 constant, as in Relay.

    A list or tuple ``output_shape`` makes the static operator; an expression
    (a Constant too, as Relay's constructor does) makes ``dyn.sparse_to_dense``.
    """
    if not isinstance(default_value, Expr):
        default_value = const(default_value)
    if isinstance(output_shape, Expr):
        return dynamic.sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)
    return call(_OP, [sparse_indices, sparse_values, default_value],
                output_shape=static_shape(output_shape, _OP, "output_shape"))
