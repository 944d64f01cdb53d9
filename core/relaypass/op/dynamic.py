"""Relay's dynamic-shape operators (``dyn.*``): shapes, sizes and scales given as tensors.

``relay.reshape(x, newshape)`` with an expression for ``newshape`` (say
``shape_of(y)``) cannot know the result's extents until the program runs, so
Relay builds a different operator, ``dyn.reshape``, whose second argument is
that tensor.  Each operator here is such a twin of a static one, with
Relay's name, argument order and attributes:

=======================  ========================================  ======================
operator                 arguments                                 static twin
=======================  ========================================  ======================
``dyn.reshape``          data, newshape                            ``reshape``
``dyn.broadcast_to``     data, shape                               ``broadcast_to``
``dyn.zeros``            shape                                     ``zeros``
``dyn.ones``             shape                                     ``ones``
``dyn.full``             fill_value, shape                         ``full``
``dyn.tile``             data, reps                                ``tile``
``dyn.strided_slice``    data, begin, end, strides                 ``strided_slice``
``dyn.topk``             data, k                                   ``topk``
``dyn.image.resize2d``   data, size, roi                           ``image.resize2d``
``dyn.nn.pad``           data, pad_width, pad_value                ``nn.pad``
``dyn.one_hot``          indices, on_value, off_value, depth       ``one_hot``
``dyn.expand_dims``      data, axis                                ``expand_dims``
``dyn.squeeze``          data, axes                                ``squeeze``
``dyn.sparse_to_dense``  indices, values, default_value, shape     ``sparse_to_dense``
``dyn.nn.upsampling``    data, scale_h, scale_w                    ``nn.upsampling``
``dyn.nn.upsampling3d``  data, scale_d, scale_h, scale_w           ``nn.upsampling3d``
=======================  ========================================  ======================

The type relations know the rank of the result (from the static length of a
shape argument, or the data's rank) and leave ``Any`` for every extent that
depends on a value.  What an operator's shape arguments mean is written once,
as a :class:`StaticForm` registered under the operator attribute
:data:`STATIC_FORM`: given their values, the static operator's attributes.
The numpy kernel computes through it (the values of this call make the static
call's attributes, which the static operator's relation checks before its
kernel runs), and so does the pass that turns dynamic calls whose shape
arguments are constants into static ones.  Nothing here imports the static
operators' modules: they are reached through the registry, by name, and their
constructors build these calls when given expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any as _AnyT

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import REQUIRED, Op, OpPattern, register_op, register_op_attr
from ..ir.types import Any, Dim, TensorType, TupleType, Type
from .builder import call
from .layout import Layout
from .relations import (
    attr_bool,
    attr_dtype,
    attr_int,
    expect_int,
    expect_scalar,
    expect_tensor,
    fail,
    normalize_axis,
    shape_str,
)
from .tuple_wrapper import TupleWrapper

STATIC_FORM = "FStaticForm"
"""Operator attribute: the :class:`StaticForm` of a dynamic operator."""


class StaticForm:
    """How a dynamic operator's call becomes a call of its static twin.

    ``value_args`` are the positions of the arguments whose values the
    static call's attributes are made of; ``attrs(values, dyn_attrs)`` makes
    those attributes (a dict for the static operator's schema) from their
    values (numpy arrays, in the order of ``value_args``) and the dynamic
    call's attributes, and raises a :class:`~relaypass.errors.RelayPassError`
    for values the static operator cannot take.  ``kept_args`` are the
    positions of the arguments the static call keeps.  ``const_args`` are the
    arguments that must be constants before a program may be rewritten to the
    static form (``value_args`` unless given: ``dyn.nn.pad`` also wants its
    pad value known, as Relay does).
    """

    __slots__ = ("op_name", "value_args", "kept_args", "const_args", "attrs")

    def __init__(
        self,
        op_name: str,
        value_args: Sequence[int],
        kept_args: Sequence[int],
        attrs: Callable[[list[np.ndarray], Attrs | None], dict[str, _AnyT]],
        const_args: Sequence[int] | None = None,
    ) -> None:
        self.op_name = op_name
        self.value_args = tuple(value_args)
        self.kept_args = tuple(kept_args)
        self.const_args = self.value_args if const_args is None else tuple(const_args)
        self.attrs = attrs

    def static_attrs(self, values: list[np.ndarray], attrs: Attrs | None) -> Attrs:
        """The static call's attributes, built and checked against the static schema."""
        op = Op.get(self.op_name)
        return op.attrs_schema.build(self.op_name, self.attrs(values, attrs))

    def static_call(self, args: Sequence[Expr], values: list[np.ndarray], attrs: Attrs | None) -> Call:
        """The static call for a dynamic call of ``args`` whose value arguments are ``values``."""
        return Call(Op.get(self.op_name), [args[i] for i in self.kept_args],
                    self.static_attrs(values, attrs))


def _value_type(value: np.ndarray) -> TensorType:
    return TensorType(value.shape, str(value.dtype))


def _kernel(form: StaticForm):
    """The kernel of a dynamic operator: its static twin's, with attributes from the values."""

    def kernel(args: list[_AnyT], attrs: Attrs | None) -> _AnyT:
        op = Op.get(form.op_name)
        values = [np.asarray(args[i]) for i in form.value_args]
        static_attrs = form.static_attrs(values, attrs)
        kept = [args[i] for i in form.kept_args]
        # The static relation checks what the values say (a reshape to a wrong size...), with
        # the static operator's own messages, before the static kernel trusts them.
        op.get_attr("FTypeRelation")([_value_type(np.asarray(v)) for v in kept], static_attrs)
        return op.get_attr("FKernel")(kept, static_attrs)

    return kernel


def _register(name: str, num_inputs: int, relation, form: StaticForm, pattern: OpPattern,
              attrs: dict[str, _AnyT] | None, type_key: str | None, description: str) -> None:
    register_op(name, num_inputs=num_inputs, type_relation=relation, kernel=_kernel(form),
                pattern=pattern, attrs=attrs, attrs_type_key=type_key, description=description)
    register_op_attr(name, STATIC_FORM, form)


# --- what relations and forms share ----------------------------------------------------------


def _vector_length(ty: Type, op_name: str, what: str) -> int:
    """The static length of a 1-D shape argument (its length is the rank of something)."""
    t = expect_tensor(ty, f"{op_name}: {what}")
    if t.ndim != 1:
        raise fail(op_name, f"{what} must be a 1-D tensor, got shape {shape_str(t.shape)}")
    n = t.shape[0]
    if not isinstance(n, int):
        raise fail(op_name, f"the length of {what} must be static (it gives a rank), got type {t}")
    return int(n)


def _unknown(n: int) -> tuple[Dim, ...]:
    return tuple(Any() for _ in range(n))


def _ints(value: np.ndarray, op_name: str, what: str) -> tuple[int, ...]:
    flat = np.asarray(value).reshape(-1)
    if flat.dtype.kind not in "iuf":
        raise fail(op_name, f"{what} must hold numbers, got dtype {flat.dtype}")
    return tuple(int(v) for v in flat)


def _scalar_int(value: np.ndarray, op_name: str, what: str) -> int:
    flat = np.asarray(value).reshape(-1)
    if flat.size != 1:
        raise fail(op_name, f"{what} must hold one value, got {flat.size}")
    return _ints(flat, op_name, what)[0]


def _scalar_float(value: np.ndarray, op_name: str, what: str) -> float:
    flat = np.asarray(value).reshape(-1)
    if flat.size != 1:
        raise fail(op_name, f"{what} must hold one value, got {flat.size}")
    return float(flat[0])


def _expect_scalar_arg(ty: Type, op_name: str, what: str) -> TensorType:
    t = expect_tensor(ty, f"{op_name}: {what}")
    expect_scalar(t, op_name, what)
    return t


def _static_type(op_name: str, arg_types: Sequence[Type], attrs: dict[str, _AnyT]) -> Type:
    """The static twin's type for neutral shape values: checks every other attribute with the
    static relation's messages (layout, method, dtype...)."""
    op = Op.get(op_name)
    return op.get_attr("FTypeRelation")(list(arg_types), op.attrs_schema.build(op_name, attrs))


def _with_unknown(t: TensorType, axes: Sequence[int]) -> TensorType:
    shape = list(t.shape)
    for k in axes:
        shape[k] = Any()
    return TensorType(shape, t.dtype)


# --- dyn.reshape -----------------------------------------------------------------------------


def _reshape_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "dyn.reshape: data")
    n = _vector_length(arg_types[1], "dyn.reshape", "newshape")
    attr_bool(attrs.allowzero, "allowzero", "dyn.reshape")
    return TensorType(_unknown(n), data.dtype)


def _reshape_attrs(values: list[np.ndarray], attrs: Attrs) -> dict[str, _AnyT]:
    newshape = _ints(values[0], "dyn.reshape", "newshape")
    if -2 in newshape or -4 in newshape:
        raise fail("dyn.reshape", f"newshape {newshape}: codes -2 and -4 would change the rank, "
                   f"which the length of newshape fixes")
    return {"newshape": newshape, "allowzero": bool(attrs.allowzero)}


_register(
    "dyn.reshape", 2, _reshape_rel, StaticForm("reshape", (1,), (0,), _reshape_attrs),
    OpPattern.INJECTIVE, {"allowzero": False}, "relay.attrs.ReshapeAttrs",
    "Reshape to the shape held by a 1-D tensor (codes 0, -1 and -3 as reshape's).",
)
register_op_attr("dyn.reshape", "TReshapeOp", True)


# --- dyn.broadcast_to, dyn.zeros, dyn.ones, dyn.full ------------------------------------------


def _broadcast_to_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    data = expect_tensor(arg_types[0], "dyn.broadcast_to: data")
    n = _vector_length(arg_types[1], "dyn.broadcast_to", "shape")
    if data.ndim > n:
        raise fail("dyn.broadcast_to", f"cannot broadcast shape {shape_str(data.shape)} to a "
                   f"shape of lower rank {n}")
    return TensorType(_unknown(n), data.dtype)


_register(
    "dyn.broadcast_to", 2, _broadcast_to_rel,
    StaticForm("broadcast_to", (1,), (0,), lambda values, attrs: {
        "shape": _ints(values[0], "dyn.broadcast_to", "shape"), "dtype": ""}),
    OpPattern.BROADCAST, {"shape": None, "dtype": ""}, "relay.attrs.InitOpAttrs",
    "Broadcast to the shape held by a 1-D tensor.",
)


def _init_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        n = _vector_length(arg_types[0], op_name, "shape")
        return TensorType(_unknown(n), attr_dtype(attrs.dtype, "dtype", op_name))

    return rel


for _name, _static in (("dyn.zeros", "zeros"), ("dyn.ones", "ones")):
    _register(
        _name, 1, _init_rel(_name),
        StaticForm(_static, (0,), (), lambda values, attrs, _n=_name: {
            "shape": _ints(values[0], _n, "shape"), "dtype": attrs.dtype}),
        OpPattern.ELEMWISE, {"shape": None, "dtype": "float32"}, "relay.attrs.InitOpAttrs",
        f"A tensor of {_static}, of the shape held by a 1-D tensor.",
    )


def _full_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    fill = _expect_scalar_arg(arg_types[0], "dyn.full", "fill_value")
    n = _vector_length(arg_types[1], "dyn.full", "shape")
    dtype = attr_dtype(attrs.dtype, "dtype", "dyn.full", allow_empty=True) or fill.dtype
    return TensorType(_unknown(n), dtype)


_register(
    "dyn.full", 2, _full_rel,
    StaticForm("full", (1,), (0,), lambda values, attrs: {
        "shape": _ints(values[0], "dyn.full", "shape"), "dtype": attrs.dtype}),
    OpPattern.ELEMWISE, {"shape": None, "dtype": ""}, "relay.attrs.InitOpAttrs",
    "A tensor filled with a scalar, of the shape held by a 1-D tensor.",
)


# --- dyn.tile, dyn.strided_slice ---------------------------------------------------------------


def _tile_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    data = expect_tensor(arg_types[0], "dyn.tile: data")
    n = _vector_length(arg_types[1], "dyn.tile", "reps")
    return TensorType(_unknown(max(data.ndim, n)), data.dtype)


_register(
    "dyn.tile", 2, _tile_rel,
    StaticForm("tile", (1,), (0,), lambda values, attrs: {
        "reps": _ints(values[0], "dyn.tile", "reps")}),
    OpPattern.INJECTIVE, {"reps": None}, "relay.attrs.TileAttrs",
    "Repeat the whole tensor as many times along each axis as a 1-D tensor says.",
)


def _strided_slice_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "dyn.strided_slice"
    data = expect_tensor(arg_types[0], f"{op}: data")
    k = _vector_length(arg_types[1], op, "begin")
    for i, what in ((2, "end"), (3, "strides")):
        n = _vector_length(arg_types[i], op, what)
        if n != k:
            raise fail(op, f"begin has {k} values but {what} has {n}")
    if k > data.ndim:
        raise fail(op, f"begin has {k} values but the data has rank {data.ndim}")
    if attrs.slice_mode not in ("end", "size"):
        raise fail(op, f"attribute slice_mode must be 'end' or 'size', got {attrs.slice_mode!r}")
    return TensorType((*_unknown(k), *data.shape[k:]), data.dtype)


def _strided_slice_attrs(values: list[np.ndarray], attrs: Attrs) -> dict[str, _AnyT]:
    op = "dyn.strided_slice"
    begin, end, strides = (_ints(v, op, what) for v, what in zip(values, ("begin", "end", "strides")))
    return {"begin": begin, "end": end, "strides": strides, "slice_mode": attrs.slice_mode,
            "axes": None}


_register(
    "dyn.strided_slice", 4, _strided_slice_rel,
    StaticForm("strided_slice", (1, 2, 3), (0,), _strided_slice_attrs),
    OpPattern.INJECTIVE,
    {"begin": None, "end": None, "strides": None, "slice_mode": "end", "axes": None},
    "relay.attrs.StridedSliceAttrs",
    "Slice the leading axes with begin, end and strides held by 1-D tensors.",
)


# --- dyn.topk ----------------------------------------------------------------------------------


def _topk_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "dyn.topk: data")
    k = expect_tensor(arg_types[1], "dyn.topk: k")
    if k.ndim > 1 or (k.ndim == 1 and k.shape[0] != 1):
        raise fail("dyn.topk", f"k must be a scalar or a tensor of shape (1,), got type {k}")
    # The static relation with k = 0 (the whole axis) checks the rest.
    static = _static_type("topk", [data], {
        "k": 0, "axis": attrs.axis, "ret_type": attrs.ret_type, "is_ascend": attrs.is_ascend,
        "dtype": attrs.dtype})
    axis = normalize_axis(attrs.axis, data.ndim, "dyn.topk")
    if isinstance(static, TupleType):
        return TupleType([_with_unknown(f, [axis]) for f in static.fields])
    return _with_unknown(static, [axis])


_register(
    "dyn.topk", 2, _topk_rel,
    StaticForm("topk", (1,), (0,), lambda values, attrs: {
        "k": _scalar_int(values[0], "dyn.topk", "k"), "axis": attrs.axis,
        "ret_type": attrs.ret_type, "is_ascend": attrs.is_ascend, "dtype": attrs.dtype}),
    OpPattern.OPAQUE,
    {"k": None, "axis": -1, "ret_type": "both", "is_ascend": False, "dtype": "int32"},
    "relay.attrs.TopkAttrs",
    "The top k elements along an axis, k held by a tensor.",
)


# --- dyn.image.resize2d --------------------------------------------------------------------------

_RESIZE_ATTRS = ("layout", "method", "coordinate_transformation_mode", "rounding_method",
                 "cubic_alpha", "cubic_exclude", "extrapolation_value", "out_dtype")


def _resize2d_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "dyn.image.resize2d"
    data = expect_tensor(arg_types[0], f"{op}: data")
    for i, what, n in ((1, "size", 2), (2, "roi", 4)):
        length = _vector_length(arg_types[i], op, what)
        if length != n:
            raise fail(op, f"{what} must hold {n} values, got type {arg_types[i]}")
    static = _static_type("image.resize2d", [data], {
        "size": (1, 1), "roi": (0.0,) * 4, **{k: attrs[k] for k in _RESIZE_ATTRS}})
    layout = Layout(attrs.layout, op)
    return _with_unknown(static, [layout.index("H"), layout.index("W")])


_register(
    "dyn.image.resize2d", 3, _resize2d_rel,
    StaticForm("image.resize2d", (1, 2), (0,), lambda values, attrs: {
        "size": _ints(values[0], "dyn.image.resize2d", "size"),
        "roi": tuple(float(v) for v in np.asarray(values[1]).reshape(-1)),
        **{k: attrs[k] for k in _RESIZE_ATTRS}}),
    OpPattern.INJECTIVE,
    {"size": None, "roi": None, "layout": "NCHW", "method": "linear",
     "coordinate_transformation_mode": "half_pixel", "rounding_method": "",
     "cubic_alpha": -0.5, "cubic_exclude": 0, "extrapolation_value": 0.0, "out_dtype": ""},
    "relay.attrs.Resize2DAttrs",
    "Resize H and W of an image batch to the (height, width) held by a tensor.",
)


# --- dyn.nn.pad ----------------------------------------------------------------------------------


def _pad_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "dyn.nn.pad"
    data = expect_tensor(arg_types[0], f"{op}: data")
    widths = expect_tensor(arg_types[1], f"{op}: pad_width")
    if widths.ndim != 2:
        raise fail(op, f"pad_width must be a 2-D tensor, got type {widths}")
    if isinstance(widths.shape[0], int) and widths.shape[0] != data.ndim:
        raise fail(op, f"pad_width has {widths.shape[0]} rows but data has rank {data.ndim}")
    if isinstance(widths.shape[1], int) and widths.shape[1] != 2:
        raise fail(op, f"pad_width must have two columns (before, after), got type {widths}")
    value = arg_types[2]
    _static_type("nn.pad", [data, value], {
        "pad_width": ((0, 0),) * data.ndim, "pad_mode": attrs.pad_mode})
    return TensorType(_unknown(data.ndim), data.dtype)


def _pad_attrs(values: list[np.ndarray], attrs: Attrs) -> dict[str, _AnyT]:
    widths = np.asarray(values[0])
    if widths.ndim != 2:
        raise fail("dyn.nn.pad", f"pad_width must be a matrix, got shape {widths.shape}")
    return {"pad_width": tuple(_ints(row, "dyn.nn.pad", "pad_width") for row in widths),
            "pad_mode": attrs.pad_mode}


_register(
    "dyn.nn.pad", 3, _pad_rel,
    StaticForm("nn.pad", (1,), (0, 2), _pad_attrs, const_args=(1, 2)),
    OpPattern.INJECTIVE, {"pad_width": None, "pad_mode": "constant"}, "relay.attrs.PadAttrs",
    "Pad each axis by the (before, after) rows of a matrix held by a tensor.",
)


# --- dyn.one_hot, dyn.expand_dims, dyn.squeeze ----------------------------------------------------


def _one_hot_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    indices = expect_tensor(arg_types[0], "dyn.one_hot: indices")
    _expect_scalar_arg(arg_types[3], "dyn.one_hot", "depth")
    static = _static_type("one_hot", arg_types[:3], {
        "depth": 1, "axis": attrs.axis, "dtype": attrs.dtype})
    axis = attr_int(attrs.axis, "axis", "dyn.one_hot")
    return _with_unknown(static, [indices.ndim if axis == -1 else axis])


_register(
    "dyn.one_hot", 4, _one_hot_rel,
    StaticForm("one_hot", (3,), (0, 1, 2), lambda values, attrs: {
        "depth": _scalar_int(values[0], "dyn.one_hot", "depth"), "axis": attrs.axis,
        "dtype": attrs.dtype}),
    OpPattern.OUT_ELEMWISE_FUSABLE, {"depth": 1, "axis": -1, "dtype": REQUIRED},
    "relay.attrs.OneHotAttrs",
    "A one-hot encoding whose depth is held by a scalar tensor.",
)


def _expand_dims_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], "dyn.expand_dims: data")
    _expect_scalar_arg(arg_types[1], "dyn.expand_dims", "axis")
    num = attr_int(attrs.num_newaxis, "num_newaxis", "dyn.expand_dims", minimum=0)
    return TensorType(_unknown(data.ndim + num), data.dtype)


_register(
    "dyn.expand_dims", 2, _expand_dims_rel,
    StaticForm("expand_dims", (1,), (0,), lambda values, attrs: {
        "axis": _scalar_int(values[0], "dyn.expand_dims", "axis"),
        "num_newaxis": attrs.num_newaxis}),
    OpPattern.INJECTIVE, {"num_newaxis": 1}, "relay.attrs.DynExpandDimsAttrs",
    "Insert num_newaxis axes of extent 1 at the position held by a scalar tensor.",
)


def _squeeze_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    data = expect_tensor(arg_types[0], "dyn.squeeze: data")
    n = _vector_length(arg_types[1], "dyn.squeeze", "axes")
    if n > data.ndim:
        raise fail("dyn.squeeze", f"cannot squeeze {n} axes of a tensor of rank {data.ndim}")
    return TensorType(_unknown(data.ndim - n), data.dtype)


_register(
    "dyn.squeeze", 2, _squeeze_rel,
    StaticForm("squeeze", (1,), (0,), lambda values, attrs: {
        "axis": _ints(values[0], "dyn.squeeze", "axes")}),
    OpPattern.INJECTIVE, {"axis": None}, "relay.attrs.SqueezeAttrs",
    "Remove the axes of extent 1 listed in a 1-D tensor.",
)
register_op_attr("dyn.squeeze", "TReshapeOp", True)


# --- dyn.sparse_to_dense --------------------------------------------------------------------------


def _sparse_to_dense_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    op = "dyn.sparse_to_dense"
    indices = expect_tensor(arg_types[0], f"{op}: sparse_indices")
    values = expect_tensor(arg_types[1], f"{op}: sparse_values")
    _expect_scalar_arg(arg_types[2], op, "default_value")
    expect_int(indices, op, "sparse_indices")
    if indices.ndim > 2:
        raise fail(op, f"sparse_indices must have rank 0, 1 or 2, got type {indices}")
    if values.ndim > 1:
        raise fail(op, f"sparse_values must have rank 0 or 1, got type {values}")
    n = _vector_length(arg_types[3], op, "output_shape")
    return TensorType(_unknown(n), values.dtype)


_register(
    "dyn.sparse_to_dense", 4, _sparse_to_dense_rel,
    StaticForm("sparse_to_dense", (3,), (0, 1, 2), lambda values, attrs: {
        "output_shape": _ints(values[0], "dyn.sparse_to_dense", "output_shape")}),
    OpPattern.OPAQUE, None, None,
    "A dense tensor from sparse indices and values, of the shape held by a 1-D tensor.",
)


# --- dyn.nn.upsampling, dyn.nn.upsampling3d -------------------------------------------------------


def _upsampling_rel(op: str, static_op: str, letters: str, names: tuple[str, ...]):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        data = expect_tensor(arg_types[0], f"{op}: data")
        for ty, name in zip(arg_types[1:], names):
            _expect_scalar_arg(ty, op, name)
        extra = {k: attrs[k] for k in attrs if k not in names}
        static = _static_type(static_op, [data], {**dict.fromkeys(names, 1.0), **extra})
        layout = Layout(attrs.layout, op)
        return _with_unknown(static, [layout.index(a) for a in letters])

    return rel


def _upsampling_attrs(op: str, names: tuple[str, ...]):
    def attrs_of(values: list[np.ndarray], attrs: Attrs) -> dict[str, _AnyT]:
        scales = {n: _scalar_float(v, op, n) for n, v in zip(names, values)}
        return {**scales, **{k: attrs[k] for k in attrs if k not in names}}

    return attrs_of


_UP2 = ("scale_h", "scale_w")
_UP3 = ("scale_d", "scale_h", "scale_w")
_register(
    "dyn.nn.upsampling", 3, _upsampling_rel("dyn.nn.upsampling", "nn.upsampling", "HW", _UP2),
    StaticForm("nn.upsampling", (1, 2), (0,), _upsampling_attrs("dyn.nn.upsampling", _UP2)),
    OpPattern.INJECTIVE,
    {"scale_h": None, "scale_w": None, "layout": "NCHW", "method": "nearest_neighbor",
     "align_corners": False},
    "relay.attrs.UpSamplingAttrs",
    "Scale H and W by factors held by scalar tensors.",
)
_register(
    "dyn.nn.upsampling3d", 4,
    _upsampling_rel("dyn.nn.upsampling3d", "nn.upsampling3d", "DHW", _UP3),
    StaticForm("nn.upsampling3d", (1, 2, 3), (0,), _upsampling_attrs("dyn.nn.upsampling3d", _UP3)),
    OpPattern.INJECTIVE,
    {"scale_d": None, "scale_h": None, "scale_w": None, "layout": "NCDHW",
     "method": "nearest_neighbor", "coordinate_transformation_mode": "half_pixel"},
    "relay.attrs.UpSampling3DAttrs",
    "Scale D, H and W by factors held by scalar tensors.",
)


# --- constructors (Relay's relay.op.dyn._make) -----------------------------------------------------


def reshape(data: Expr, newshape: Expr, allowzero: bool = False) -> Call:
    return call("dyn.reshape", [data, newshape], allowzero=bool(allowzero))


def broadcast_to(data: Expr, shape: Expr) -> Call:
    return call("dyn.broadcast_to", [data, shape])


def zeros(shape: Expr, dtype: str) -> Call:
    return call("dyn.zeros", [shape], dtype=str(dtype))


def ones(shape: Expr, dtype: str) -> Call:
    return call("dyn.ones", [shape], dtype=str(dtype))


def full(fill_value: Expr, shape: Expr, dtype: str = "") -> Call:
    return call("dyn.full", [fill_value, shape], dtype=str(dtype))


def tile(data: Expr, reps: Expr) -> Call:
    return call("dyn.tile", [data, reps])


def strided_slice(data: Expr, begin: Expr, end: Expr, strides: Expr,
                  slice_mode: str = "end") -> Call:
    return call("dyn.strided_slice", [data, begin, end, strides], slice_mode=slice_mode)


def topk(data: Expr, k: Expr, axis: int = -1, ret_type: str = "both", is_ascend: bool = False,
         dtype: str = "int32") -> Call | TupleWrapper:
    """As ``relay.topk``: a TupleWrapper of (values, indices) when ``ret_type="both"``."""
    out = call("dyn.topk", [data, k], axis=int(axis), ret_type=ret_type,
               is_ascend=bool(is_ascend), dtype=str(dtype))
    return TupleWrapper(out, 2) if ret_type == "both" else out


def resize2d(data: Expr, size: Expr, roi: Expr, layout: str = "NCHW", method: str = "linear",
             coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "",
             cubic_alpha: float = -0.5, cubic_exclude: int = 0, extrapolation_value: float = 0.0,
             out_dtype: str | None = None) -> Call:
    return call("dyn.image.resize2d", [data, size, roi], layout=layout, method=method,
                coordinate_transformation_mode=coordinate_transformation_mode,
                rounding_method=rounding_method, cubic_alpha=float(cubic_alpha),
                cubic_exclude=int(cubic_exclude), extrapolation_value=float(extrapolation_value),
                out_dtype="" if out_dtype is None else str(out_dtype))


def pad(data: Expr, pad_width: Expr, pad_value: Expr, pad_mode: str = "constant") -> Call:
    return call("dyn.nn.pad", [data, pad_width, pad_value], pad_mode=pad_mode)


def one_hot(indices: Expr, on_value: Expr, off_value: Expr, depth: Expr, axis: int,
            dtype: str) -> Call:
    return call("dyn.one_hot", [indices, on_value, off_value, depth], axis=int(axis),
                dtype=str(dtype))


def expand_dims(data: Expr, axis: Expr, num_newaxis: int = 1) -> Call:
    return call("dyn.expand_dims", [data, axis], num_newaxis=int(num_newaxis))


def squeeze(data: Expr, axes: Expr) -> Call:
    return call("dyn.squeeze", [data, axes])


def sparse_to_dense(sparse_indices: Expr, output_shape: Expr, sparse_values: Expr,
                    default_value: Expr) -> Call:
    """Relay's argument order here; the call's is (indices, values, default, shape)."""
    return call("dyn.sparse_to_dense", [sparse_indices, sparse_values, default_value, output_shape])


def upsampling(data: Expr, scale_h: Expr, scale_w: Expr, layout: str = "NCHW",
               method: str = "nearest_neighbor", align_corners: bool = False) -> Call:
    return call("dyn.nn.upsampling", [data, scale_h, scale_w], layout=layout, method=method,
                align_corners=bool(align_corners))


def upsampling3d(data: Expr, scale_d: Expr, scale_h: Expr, scale_w: Expr,
                 layout: str = "NCDHW", method: str = "nearest_neighbor",
                 coordinate_transformation_mode: str = "half_pixel") -> Call:
    return call("dyn.nn.upsampling3d", [data, scale_d, scale_h, scale_w], layout=layout,
                method=method, coordinate_transformation_mode=coordinate_transformation_mode)


def static_form(call_node: Call) -> StaticForm | None:
    """The :class:`StaticForm` of a call's operator, None for a call of anything else."""
    op = call_node.op
    return op.get_attr(STATIC_FORM) if type(op) is Op else None


__all__ = [
    "STATIC_FORM", "StaticForm", "static_form", "reshape", "broadcast_to", "zeros", "ones", "full",
    "tile", "strided_slice", "topk", "resize2d", "pad", "one_hot", "expand_dims", "squeeze",
    "sparse_to_dense", "upsampling", "upsampling3d",
]
