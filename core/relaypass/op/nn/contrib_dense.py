"""``nn.contrib_dense_pack``: dense with its weight packed in blocks of output units.

Relay's x86 alter hook replaces ``nn.dense`` by this operator with the weight
``layout_transform``-ed from ``NC`` to ``NC16n`` (shape ``(units/16, in_dim, 16)``),
so that a backend reads the weight in contiguous tiles.  It computes what dense
computes; ``weight_layout`` names how the weight is packed, any layout over
``N`` (units) and ``C`` (input features), blocked or not.  Its layout rule takes
the data in ``NC`` and the weight in ``weight_layout``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op
from ...ir.types import TensorType, Type
from ..builder import call
from ..layout import Layout, transform_array
from ..relations import (
    attr_dtype,
    attr_int,
    dims_equal_or_unknown,
    expect_rank,
    expect_tensor,
    fail,
    shape_str,
)

__all__ = ["contrib_dense_pack"]

_OP = "nn.contrib_dense_pack"
_NC = Layout("NC", _OP)


def _weight_layout(attrs: Attrs) -> Layout:
    layout = Layout(attrs.weight_layout, _OP, "weight_layout")
    if sorted(layout.primal) != ["C", "N"]:
        raise fail(_OP, f"weight_layout {attrs.weight_layout!r} is not supported; use NC or CN, "
                   f"possibly blocked, as in 'NC16n'")
    return layout


def _relation(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], f"{_OP}: data")
    weight = expect_tensor(arg_types[1], f"{_OP}: weight")
    expect_rank(data, 2, _OP, "data")
    layout = _weight_layout(attrs)
    expect_rank(weight, len(layout), _OP, "weight")
    extents = layout.primal_extents(weight.shape, _OP)
    units, reduced = extents["N"], extents["C"]
    if not dims_equal_or_unknown(data.shape[1], reduced):
        raise fail(_OP, f"data of shape {shape_str(data.shape)} and the weight of shape "
                   f"{shape_str(weight.shape)} (layout {layout.name!r}) do not agree on the "
                   f"reduced dimension ({data.shape[1]} vs {reduced})")
    if attrs.units is not None:
        want = attr_int(attrs.units, "units", _OP, minimum=1)
        if not dims_equal_or_unknown(units, want):
            raise fail(_OP, f"attribute units={want} but the weight of shape "
                       f"{shape_str(weight.shape)} gives {units}")
    out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", _OP, allow_empty=True)
    return TensorType((data.shape[0], units), out_dtype or data.dtype)


def _kernel(args, attrs):
    dtype = attrs.out_dtype or str(args[0].dtype)
    acc = "float32" if dtype == "float16" else dtype
    weight = transform_array(args[1], _weight_layout(attrs), _NC).astype(acc, copy=False)
    return np.asarray(args[0].astype(acc, copy=False) @ weight.T).astype(dtype, copy=False)


register_op(
    _OP, num_inputs=2, type_relation=_relation, kernel=_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"units": None, "out_dtype": "", "weight_layout": "NC"},
    attrs_type_key="relay.attrs.DensePackAttrs",
    description="data @ weight.T with the weight packed in weight_layout (such as NC16n).",
)


def contrib_dense_pack(data: Expr, weight: Expr, weight_layout: str = "NC", units=None,
                       out_dtype: str = "") -> Call:
    """``data @ weight.T`` with ``weight`` in ``weight_layout`` (``NC16n``: (units/16, in_dim, 16))."""
    return call(_OP, [data, weight], units=units, out_dtype=str(out_dtype),
                weight_layout=str(weight_layout))
