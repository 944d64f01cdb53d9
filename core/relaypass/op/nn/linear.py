"""Matrix products and bias: dense, matmul, batch_matmul, bias_add.

``dense`` is ``data @ weight.T`` with weight (units, in_dim); ``matmul`` is
its general form with optional transposes (and, as in Relay, the Python
constructor returns ``dense`` for transpose_a=False, transpose_b=True);
``batch_matmul`` multiplies stacks of matrices, broadcasting a batch of 1,
and by Relay's legacy default transposes its second argument.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op, register_op_attr
from ...ir.types import Dim, TensorType, Type
from ..builder import call
from ..relations import (
    ARG_TYPES,
    attr_bool,
    attr_dtype,
    attr_int,
    dims_equal_or_unknown,
    expect_rank,
    expect_same_dtype,
    expect_tensor,
    fail,
    normalize_axis,
    shape_str,
    vector_arg_types,
)

__all__ = ["dense", "matmul", "batch_matmul", "bias_add"]


def _acc(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _matmul_shape(op_name: str, a: TensorType, b: TensorType, attrs: Attrs,
                  transpose_a: bool, transpose_b: bool) -> list[Dim]:
    if a.ndim < 1 or (transpose_a and a.ndim < 2):
        raise fail(op_name, f"the first argument of shape {shape_str(a.shape)} has too few axes")
    expect_rank(b, 2, op_name, "the weight")
    expect_same_dtype(a, b, op_name, "the first argument", "the weight")
    reduce_a = a.shape[-2] if transpose_a else a.shape[-1]
    reduce_b, units = (b.shape[1], b.shape[0]) if transpose_b else (b.shape[0], b.shape[1])
    if not dims_equal_or_unknown(reduce_a, reduce_b):
        raise fail(op_name, f"shapes {shape_str(a.shape)} and {shape_str(b.shape)} do not agree on "
                   f"the reduced dimension ({reduce_a} vs {reduce_b})")
    if attrs.units is not None:
        want = attr_int(attrs.units, "units", op_name, minimum=1)
        if not dims_equal_or_unknown(units, want):
            raise fail(op_name, f"attribute units={want} but the weight of shape "
                       f"{shape_str(b.shape)} gives {units}")
        units = want
    shape = list(a.shape)
    if transpose_a:
        shape[-2] = shape[-1]
    shape[-1] = units
    return shape


def _dense_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    a = expect_tensor(arg_types[0], "nn.dense: data")
    b = expect_tensor(arg_types[1], "nn.dense: weight")
    out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", "nn.dense", allow_empty=True)
    return TensorType(_matmul_shape("nn.dense", a, b, attrs, False, True), out_dtype or a.dtype)


def _matmul_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    a = expect_tensor(arg_types[0], "nn.matmul: tensor_a")
    b = expect_tensor(arg_types[1], "nn.matmul: tensor_b")
    out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", "nn.matmul", allow_empty=True)
    ta = attr_bool(attrs.transpose_a, "transpose_a", "nn.matmul")
    tb = attr_bool(attrs.transpose_b, "transpose_b", "nn.matmul")
    return TensorType(_matmul_shape("nn.matmul", a, b, attrs, ta, tb), out_dtype or a.dtype)


def _product(a: np.ndarray, b: np.ndarray, out_dtype: str, ta: bool, tb: bool) -> np.ndarray:
    dtype = out_dtype or str(a.dtype)
    acc = _acc(dtype)
    a = a.astype(acc, copy=False)
    b = b.astype(acc, copy=False)
    if ta:
        a = np.swapaxes(a, -1, -2)
    if tb:
        b = np.swapaxes(b, -1, -2)
    return np.asarray(np.matmul(a, b)).astype(dtype, copy=False)


register_op(
    "nn.dense", num_inputs=2, type_relation=_dense_rel,
    kernel=lambda args, attrs: _product(args[0], args[1], attrs.out_dtype, False, True),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs={"units": None, "out_dtype": ""},
    attrs_type_key="relay.attrs.DenseAttrs",
    description="data @ weight.T with weight of shape (units, in_dim).",
)


def _dense_arg_types(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
    data = known[0]
    if type(data) is not TensorType or attrs.units is None or data.ndim < 1:
        return [None, None]
    units = attr_int(attrs.units, "units", "nn.dense", minimum=1)
    return [None, TensorType((units, data.shape[-1]), data.dtype)]


register_op_attr("nn.dense", ARG_TYPES, _dense_arg_types)
register_op(
    "nn.matmul", num_inputs=2, type_relation=_matmul_rel,
    kernel=lambda args, attrs: _product(args[0], args[1], attrs.out_dtype, attrs.transpose_a,
                                        attrs.transpose_b),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"units": None, "out_dtype": "", "transpose_a": False, "transpose_b": False},
    attrs_type_key="relay.attrs.MatmulAttrs",
    description="tensor_a @ tensor_b with optional transposes; tensor_b is 2-D.",
)


def _batch_matmul_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.batch_matmul"
    a = expect_tensor(arg_types[0], f"{op}: tensor_a")
    b = expect_tensor(arg_types[1], f"{op}: tensor_b")
    expect_rank(a, 3, op, "tensor_a")
    expect_rank(b, 3, op, "tensor_b")
    expect_same_dtype(a, b, op, "tensor_a", "tensor_b")
    out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", op, allow_empty=True)
    ta = attr_bool(attrs.transpose_a, "transpose_a", op)
    tb = attr_bool(attrs.transpose_b, "transpose_b", op)
    ba, bb = a.shape[0], b.shape[0]
    if not (dims_equal_or_unknown(ba, bb) or ba == 1 or bb == 1):
        raise fail(op, f"batch dimensions differ: {shape_str(a.shape)} and {shape_str(b.shape)}")
    batch = bb if ba == 1 else ba
    m, ka = (a.shape[2], a.shape[1]) if ta else (a.shape[1], a.shape[2])
    kb, n = (b.shape[2], b.shape[1]) if tb else (b.shape[1], b.shape[2])
    if not dims_equal_or_unknown(ka, kb):
        raise fail(op, f"shapes {shape_str(a.shape)} and {shape_str(b.shape)} do not agree on the "
                   f"reduced dimension ({ka} vs {kb}) with transpose_a={ta}, transpose_b={tb}")
    return TensorType((batch, m, n), out_dtype or a.dtype)


register_op(
    "nn.batch_matmul", num_inputs=2, type_relation=_batch_matmul_rel,
    kernel=lambda args, attrs: _product(args[0], args[1], attrs.out_dtype, attrs.transpose_a,
                                        attrs.transpose_b),
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"out_dtype": "", "transpose_a": False, "transpose_b": True},
    attrs_type_key="relay.attrs.BatchMatmulAttrs",
    description="Batched matrix product of 3-D tensors (transpose_b=True by default, as Relay).",
)


def _bias_add_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "nn.bias_add: data")
    bias = expect_tensor(arg_types[1], "nn.bias_add: bias")
    axis = normalize_axis(attrs.axis, data.ndim, "nn.bias_add")
    expect_same_dtype(data, bias, "nn.bias_add", "data", "bias")
    if bias.ndim != 1 or not dims_equal_or_unknown(bias.shape[0], data.shape[axis]):
        raise fail("nn.bias_add", f"bias must have shape ({data.shape[axis]},) to match axis {axis} "
                   f"of data of shape {shape_str(data.shape)}, got {shape_str(bias.shape)}")
    return data


def _bias_add_kernel(args, attrs):
    x, bias = args
    axis = attrs.axis % x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    return x + bias.reshape(shape)


register_op(
    "nn.bias_add", num_inputs=2, type_relation=_bias_add_rel, kernel=_bias_add_kernel,
    pattern=OpPattern.BROADCAST, attrs={"axis": 1}, attrs_type_key="relay.attrs.BiasAddAttrs",
    description="Add a 1-D bias along one axis.",
)
register_op_attr("nn.bias_add", ARG_TYPES, vector_arg_types("nn.bias_add", 1, 2))


# --- constructors -------------------------------------------------------------------------------


def dense(data: Expr, weight: Expr, units=None, out_dtype: str = "") -> Call:
    """``data @ weight.T``; weight has shape (units, in_dim)."""
    return call("nn.dense", [data, weight], units=units, out_dtype=str(out_dtype))


def matmul(tensor_a: Expr, tensor_b: Expr, units=None, out_dtype: str = "",
           transpose_a: bool = False, transpose_b: bool = False) -> Call:
    """``tensor_a @ tensor_b``; as in Relay, the (False, True) transposes build ``nn.dense``."""
    if not transpose_a and transpose_b:
        return dense(tensor_a, tensor_b, units, out_dtype)
    return call("nn.matmul", [tensor_a, tensor_b], units=units, out_dtype=str(out_dtype),
                transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


def batch_matmul(tensor_a: Expr, tensor_b: Expr, out_dtype: str = "", transpose_a: bool = False,
                 transpose_b: bool = True) -> Call:
    return call("nn.batch_matmul", [tensor_a, tensor_b], out_dtype=str(out_dtype),
                transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


def bias_add(data: Expr, bias: Expr, axis: int = 1) -> Call:
    return call("nn.bias_add", [data, bias], axis=axis)
