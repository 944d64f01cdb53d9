"""The ONNX export mappings: one function per Relay operator, the importer read backwards.

Each mapping receives the :class:`~.onnx_export_graph.GraphBuilder`, the
typed Relay call and the values of its arguments (a tuple of values for a
tuple argument) and returns the value of the call: a
:class:`~.onnx_export_graph.Value`, or a tuple of them when the call's type
is a tuple.  Attributes are turned into ONNX's: Relay's ``padding`` (top,
left, bottom, right) is ONNX's ``pads``, a reduction's ``exclude`` becomes the
complementary ``axes``, shapes Relay keeps as attributes become int64
constant inputs, and where ONNX's operator is narrower than Relay's the
mapping composes it (``floor_mod`` of floats, ``trunc``, ``repeat``,
``variance``) or raises :class:`~.onnx_export_graph.Unsupported` with the
reason (an ``out_dtype`` that differs from the input's, a blocked layout).

Where a mapping transforms an argument that is a constant (a dense weight
transposed for MatMul, a bias reshaped to broadcast, constant indices
clipped as ``take``'s mode says), it transforms the array at export time
instead of adding a node.  ``EXPORTERS`` maps each operator name to its
mapping; ``ONNX_OPERATORS`` says which ONNX operators each one emits (the
documentation's table).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any as AnyT

import numpy as np

from ..ir.expr import Call, Expr
from ..ir.shape_expr import known_int
from ..ir.types import Any, TensorType
from ..op.indexing import _slice_plan
from ..op.layout import Layout
from ..op.reduce import reduce_axes
from .onnx_export_graph import GraphBuilder, Unsupported, Value, onnx_code

__all__ = ["EXPORTERS", "ONNX_OPERATORS"]

Mapping = Callable[[GraphBuilder, Call, list], AnyT]

EXPORTERS: dict[str, Mapping] = {}
"""Relay operator name -> its export mapping."""

ONNX_OPERATORS: dict[str, str] = {}
"""Relay operator name -> the ONNX operators its mapping emits, as the docs list them."""

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def _export(name: str, onnx: str) -> Callable[[Mapping], Mapping]:
    def deco(fn: Mapping) -> Mapping:
        EXPORTERS[name] = fn
        ONNX_OPERATORS[name] = onnx
        return fn

    return deco


# --- types ----------------------------------------------------------------------------------------


def _tensor(expr: Expr, what: str = "the argument") -> TensorType:
    ty = expr.checked_type
    if not isinstance(ty, TensorType):
        raise Unsupported(f"{what} must be a tensor, got {ty}")
    return ty


def _shape(expr: Expr) -> tuple:
    return tuple(_tensor(expr).shape)


def _rank(expr: Expr) -> int:
    return len(_tensor(expr).shape)


def _dtype(expr: Expr) -> str:
    return _tensor(expr).dtype


def _is_any(d: object) -> bool:
    """Whether an extent is not a number (``Any``, a size variable or an expression of them)."""
    return known_int(d) is None


def _static(expr: Expr, what: str) -> tuple[int, ...]:
    shape = _shape(expr)
    if any(_is_any(d) for d in shape):
        raise Unsupported(f"{what} needs a static shape, got ({', '.join(map(str, shape))})")
    return tuple(int(d) for d in shape)


def _code(dtype: str) -> int:
    code = onnx_code(dtype)
    if code is None:
        raise Unsupported(f"dtype {dtype} has no ONNX element type")
    return code


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# --- value helpers: a constant is transformed at export time, anything else gets a node ------------


def _transpose(b: GraphBuilder, v: Value, perm: Sequence[int]) -> Value:
    perm = list(map(int, perm))
    if perm == list(range(len(perm))):
        return v
    if v.array is not None:
        return b.const(np.transpose(v.array, perm))
    return b.node("Transpose", [v], perm=perm)


def _reshape(b: GraphBuilder, v: Value, shape: Sequence[int]) -> Value:
    if v.array is not None and all(int(d) >= 0 for d in shape):
        return b.const(v.array.reshape([int(d) for d in shape]))
    return b.node("Reshape", [v, b.ints(shape)])


def _unsqueeze(b: GraphBuilder, v: Value, axes: Sequence[int]) -> Value:
    if not axes:
        return v
    if v.array is not None:
        return b.const(np.expand_dims(v.array, tuple(axes)))
    return b.node("Unsqueeze", [v, b.ints(axes)])


def _cast(b: GraphBuilder, v: Value, from_dtype: str, to_dtype: str) -> Value:
    if from_dtype == to_dtype:
        return v
    if v.array is not None:
        return b.const(v.array.astype(to_dtype))
    return b.node("Cast", [v], to=_code(to_dtype))


def _scalar(b: GraphBuilder, value: float | int, dtype: str) -> Value:
    return b.const(np.asarray(value, dtype=dtype))


def _per_axis(b: GraphBuilder, v: Value, axis: int, rank: int) -> Value:
    """A 1-D ``v`` along ``axis`` of a rank-``rank`` tensor, shaped to broadcast there."""
    trailing = rank - 1 - axis
    return _unsqueeze(b, v, list(range(1, trailing + 1)))


@functools.cache
def _layout_perm(layout: str, target: str, op: str) -> tuple[int, ...]:
    """The permutation taking a tensor in ``layout`` to ``target`` (both plain, same letters).

    Cached: a model has a handful of layouts, and parsing one for every convolution and
    pooling of a CNN costs a visible part of the export."""
    parsed = Layout(layout, op)
    if not parsed.is_primal or sorted(parsed.primal) != sorted(target):
        raise Unsupported(f"layout {layout!r} is not a permutation of {target!r}")
    return tuple(parsed.index(letter) for letter in target)


def _inverse(perm: Sequence[int]) -> list[int]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return out


def _same_out_dtype(call: Call, attr: str = "out_dtype") -> None:
    out_dtype = call.attrs[attr]
    if out_dtype and out_dtype != _dtype(call.args[0]):
        raise Unsupported(f"{attr}={out_dtype} differs from the input's dtype "
                          f"{_dtype(call.args[0])}")


# --- elementwise ----------------------------------------------------------------------------------


def _simple(name: str, onnx_op: str, arity: int) -> None:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        return b.node(onnx_op, args[:arity])

    _export(name, onnx_op)(mapping)


for _relay, _onnx in (("abs", "Abs"), ("ceil", "Ceil"), ("floor", "Floor"), ("exp", "Exp"),
                      ("log", "Log"), ("sqrt", "Sqrt"), ("erf", "Erf"), ("negative", "Neg"),
                      ("sigmoid", "Sigmoid"), ("tanh", "Tanh"), ("sign", "Sign"),
                      ("round", "Round"), ("logical_not", "Not"), ("nn.relu", "Relu"),
                      ("sin", "Sin"), ("cos", "Cos"), ("tan", "Tan"), ("asin", "Asin"),
                      ("acos", "Acos"), ("atan", "Atan"), ("sinh", "Sinh"), ("cosh", "Cosh"),
                      ("asinh", "Asinh"), ("acosh", "Acosh"), ("atanh", "Atanh"),
                      ("isnan", "IsNaN"), ("isinf", "IsInf"),
                      # FastMath's approximations: ONNX has the functions themselves
                      ("fast_exp", "Exp"), ("fast_erf", "Erf"), ("fast_tanh", "Tanh")):
    _simple(_relay, _onnx, 1)

for _relay, _onnx in (("add", "Add"), ("subtract", "Sub"), ("multiply", "Mul"),
                      ("divide", "Div"), ("power", "Pow"), ("maximum", "Max"),
                      ("minimum", "Min"), ("equal", "Equal"), ("less", "Less"),
                      ("greater", "Greater"), ("less_equal", "LessOrEqual"),
                      ("greater_equal", "GreaterOrEqual"), ("logical_and", "And"),
                      ("logical_or", "Or")):
    _simple(_relay, _onnx, 2)

_simple("where", "Where", 3)


def _alias(b: GraphBuilder, call: Call, args: list) -> AnyT:
    return args[0]


for _relay in ("copy", "annotation.stop_fusion", "annotation.compiler_begin",
               "annotation.compiler_end"):
    _export(_relay, "(none: the value itself)")(_alias)


@_export("rsqrt", "Sqrt, Reciprocal")
def _rsqrt(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Reciprocal", [b.node("Sqrt", args)])


@_export("trunc", "Abs, Floor, Sign, Mul")
def _trunc(b: GraphBuilder, call: Call, args: list) -> Value:
    if np.dtype(_dtype(call)).kind != "f":
        return args[0]
    x = args[0]
    return b.node("Mul", [b.node("Sign", [x]), b.node("Floor", [b.node("Abs", [x])])])


@_export("not_equal", "Xor (bool), Equal and Not")
def _not_equal(b: GraphBuilder, call: Call, args: list) -> Value:
    if _dtype(call.args[0]) == "bool":
        return b.node("Xor", args)
    return b.node("Not", [b.node("Equal", args)])


@_export("mod", "Mod (fmod=1)")
def _mod(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Mod", args, fmod=1)


def _floor_mod_value(b: GraphBuilder, call: Call, args: list) -> Value:
    if np.dtype(_dtype(call)).kind in "iu":
        return b.node("Mod", args, fmod=0)
    x, y = args
    return b.node("Sub", [x, b.node("Mul", [b.node("Floor", [b.node("Div", [x, y])]), y])])


@_export("floor_mod", "Mod (integers), Div, Floor, Mul, Sub (floats)")
def _floor_mod(b: GraphBuilder, call: Call, args: list) -> Value:
    return _floor_mod_value(b, call, args)


@_export("floor_divide", "Div and Floor (floats); Mod, Sub, Div (integers)")
def _floor_divide(b: GraphBuilder, call: Call, args: list) -> Value:
    x, y = args
    if np.dtype(_dtype(call)).kind in "iu":
        # Subtracting the floored remainder makes the truncating division exact.
        return b.node("Div", [b.node("Sub", [x, b.node("Mod", [x, y], fmod=0)]), y])
    return b.node("Floor", [b.node("Div", [x, y])])


def _shift(direction: str) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        dtype = _dtype(call)
        if not dtype.startswith("uint"):
            raise Unsupported(f"ONNX's BitShift takes unsigned integers only, got {dtype}")
        return b.node("BitShift", args, direction=direction)

    return mapping


_export("left_shift", "BitShift (unsigned)")(_shift("LEFT"))
_export("right_shift", "BitShift (unsigned)")(_shift("RIGHT"))


@_export("clip", "Clip")
def _clip(b: GraphBuilder, call: Call, args: list) -> Value:
    dtype = np.dtype(_dtype(call))
    lo, hi = float(call.attrs.a_min), float(call.attrs.a_max)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        # As TVM does: the bounds are cast to the tensor's dtype, truncating toward zero.
        lo = int(np.clip(np.trunc(lo), info.min, info.max)) if np.isfinite(lo) else (
            info.min if lo < 0 else info.max)
        hi = int(np.clip(np.trunc(hi), info.min, info.max)) if np.isfinite(hi) else (
            info.min if hi < 0 else info.max)
    elif dtype.kind != "f":
        raise Unsupported(f"ONNX's Clip does not take {dtype}")
    return b.node("Clip", [args[0], _scalar(b, lo, dtype.name), _scalar(b, hi, dtype.name)])


@_export("cast", "Cast")
def _cast_op(b: GraphBuilder, call: Call, args: list) -> Value:
    return _cast(b, args[0], _dtype(call.args[0]), _dtype(call))


@_export("cast_like", "Cast")
def _cast_like(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Cast", [args[0]], to=_code(_dtype(call)))


# --- activations and normalization ----------------------------------------------------------------


@_export("nn.leaky_relu", "LeakyRelu")
def _leaky_relu(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("LeakyRelu", args, alpha=float(call.attrs.alpha))


def _along_axis(b: GraphBuilder, call: Call, v: Value) -> Value:
    """The 1-D ``v`` shaped to broadcast along the call's ``axis`` of its first argument."""
    rank = _rank(call.args[0])
    return _per_axis(b, v, _axis(int(call.attrs.axis), rank), rank)


@_export("nn.prelu", "PRelu")
def _prelu(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("PRelu", [args[0], _along_axis(b, call, args[1])])


@_export("nn.fast_softmax", "Softmax")
@_export("nn.softmax", "Softmax")
def _softmax(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Softmax", args, axis=int(call.attrs.axis))


@_export("nn.log_softmax", "LogSoftmax")
def _log_softmax(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("LogSoftmax", args, axis=int(call.attrs.axis))


@_export("nn.dropout", "(none: the identity at inference)")
def _dropout(b: GraphBuilder, call: Call, args: list) -> tuple:
    mask_type = call.checked_type.fields[1]
    return (args[0], _filled(b, mask_type, np.ones(()), args[0]))


@_export("nn.bias_add", "Add (Conv's bias input when it follows a Conv)")
def _bias_add(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Add", [args[0], _along_axis(b, call, args[1])])


@_export("nn.batch_norm", "BatchNormalization")
def _batch_norm(b: GraphBuilder, call: Call, args: list) -> tuple:
    x, gamma, beta, mean, var = args
    rank = _rank(call.args[0])
    if rank < 2 or _axis(int(call.attrs.axis), rank) != 1:
        raise Unsupported(f"ONNX normalizes axis 1; got axis {call.attrs.axis} of rank {rank}")
    if not call.attrs.scale:
        gamma = b.const(np.ones(_static(call.args[1], "scale=False"), dtype=_dtype(call.args[1])))
    if not call.attrs.center:
        beta = b.const(np.zeros(_static(call.args[2], "center=False"), dtype=_dtype(call.args[2])))
    y = b.node("BatchNormalization", [x, gamma, beta, mean, var],
               epsilon=float(call.attrs.epsilon))
    return (y, mean, var)


@_export("nn.layer_norm", "LayerNormalization (Transpose around it for another axis)")
def _layer_norm(b: GraphBuilder, call: Call, args: list) -> Value:
    x, gamma, beta = args
    rank = _rank(call.args[0])
    axis = _axis(int(call.attrs.axis), rank)
    if not call.attrs.scale:
        gamma = b.const(np.ones(_static(call.args[1], "scale=False"), dtype=_dtype(call.args[1])))
    inputs = [x, gamma, beta] if call.attrs.center else [x, gamma]
    if axis == rank - 1:
        return b.node("LayerNormalization", inputs, axis=-1, epsilon=float(call.attrs.epsilon))
    perm = [k for k in range(rank) if k != axis] + [axis]
    inputs[0] = _transpose(b, x, perm)
    y = b.node("LayerNormalization", inputs, axis=-1, epsilon=float(call.attrs.epsilon))
    return _transpose(b, y, _inverse(perm))


@_export("nn.lrn", "LRN")
def _lrn(b: GraphBuilder, call: Call, args: list) -> Value:
    rank = _rank(call.args[0])
    if _axis(int(call.attrs.axis), rank) != 1:
        raise Unsupported(f"ONNX's LRN runs along axis 1, got axis {call.attrs.axis}")
    return b.node("LRN", args, size=int(call.attrs.size), alpha=float(call.attrs.alpha),
                  beta=float(call.attrs.beta), bias=float(call.attrs.bias))


@_export("nn.instance_norm", "InstanceNormalization (Transpose around it for another axis)")
def _instance_norm(b: GraphBuilder, call: Call, args: list) -> Value:
    x, gamma, beta = args
    rank = _rank(call.args[0])
    axis = _axis(int(call.attrs.axis), rank)
    if not call.attrs.scale:
        gamma = b.const(np.ones(_static(call.args[1], "scale=False"), dtype=_dtype(call.args[1])))
    if not call.attrs.center:
        beta = b.const(np.zeros(_static(call.args[2], "center=False"), dtype=_dtype(call.args[2])))
    perm = [0, axis] + [k for k in range(1, rank) if k != axis]
    y = b.node("InstanceNormalization", [_transpose(b, x, perm), gamma, beta],
               epsilon=float(call.attrs.epsilon))
    return _transpose(b, y, _inverse(perm))


@_export("nn.l2_normalize", "ReduceSumSquare, Max, Sqrt, Div")
def _l2_normalize(b: GraphBuilder, call: Call, args: list) -> Value:
    rank = _rank(call.args[0])
    axes = [_axis(int(a), rank) for a in call.attrs.axis] or list(range(rank))
    squares = _reduce_node(b, "ReduceSumSquare", args[0], axes, True)
    floor = _scalar(b, float(call.attrs.eps), _dtype(call.args[0]))
    return b.node("Div", [args[0], b.node("Sqrt", [b.node("Max", [squares, floor])])])


# --- convolution and pooling ----------------------------------------------------------------------

_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _pads(padding: Sequence[int], n: int) -> list[int]:
    """Relay's paddings of an ``n``-D window (1, ``n`` or ``2n`` values) as ONNX's ``pads``:
    every begin, then every end (Relay's order for ``2n`` values too)."""
    p = [int(v) for v in padding]
    if len(p) == 1:
        return p * (2 * n)
    if len(p) == n:
        return p + p
    return p


def _conv_like(b: GraphBuilder, call: Call, args: list, onnx_op: str, n: int, kernel: str,
               **extra: AnyT) -> Value:
    """Conv or ConvTranspose of ``n`` spatial axes; ``kernel`` is the ONNX weight's layout
    prefix (OI, or IO for the transposed convolution)."""
    _same_out_dtype(call)
    attrs = call.attrs
    op = call.op.name
    data = "NC" + _SPATIAL[n]
    data_perm = _layout_perm(attrs.data_layout, data, op)
    kernel_perm = _layout_perm(attrs.kernel_layout, kernel + _SPATIAL[n], op)
    out_perm = _inverse(_layout_perm(attrs.out_layout or attrs.data_layout, data, op))
    x = _transpose(b, args[0], data_perm)
    w = _transpose(b, args[1], kernel_perm)
    kernel_shape = [_shape(call.args[1])[k] for k in kernel_perm[2:]]
    if any(_is_any(d) for d in kernel_shape):
        raise Unsupported("the kernel's spatial extents must be static")
    y = b.node(onnx_op, [x, w], kernel_shape=[int(k) for k in kernel_shape],
               strides=[int(s) for s in attrs.strides], pads=_pads(attrs.padding, n),
               dilations=[int(d) for d in attrs.dilation], group=int(attrs.groups), **extra)
    return _transpose(b, y, out_perm)


def _conv(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        return _conv_like(b, call, args, "Conv", n, "OI")

    return mapping


def _conv_transpose(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        out_pad = [int(p) for p in call.attrs.output_padding]
        return _conv_like(b, call, args, "ConvTranspose", n, "IO",
                          output_padding=out_pad if any(out_pad) else None)

    return mapping


@_export("nn.deformable_conv2d", "DeformConv (opset 19) with a mask; Reshape, Gather, Add, Min, "
         "GreaterOrEqual, Less, And, Cast, Unsqueeze, Concat for the offsets")
def _deformable_conv2d(b: GraphBuilder, call: Call, args: list) -> Value:
    """Relay reads 0 for a tap whose point lies outside the input and clamps the far corners
    of one inside it; DeformConv interpolates with zeros past the edge instead.  The taps
    outside get a zero mask, and the offsets stop at the last row and column, where both
    agree."""
    if b.opset < 19:
        raise Unsupported(f"DeformConv needs opset 19 (asked for opset {b.opset})")
    _same_out_dtype(call)
    attrs = call.attrs
    op = call.op.name
    data_perm = _layout_perm(attrs.data_layout, "NCHW", op)
    x = _transpose(b, args[0], data_perm)
    offset = _transpose(b, args[1], data_perm)
    w = _transpose(b, args[2], _layout_perm(attrs.kernel_layout, "OIHW", op))
    n, _, height, width = (_static(call.args[0], op)[k] for k in data_perm)
    oh, ow = (_static(call.args[1], op)[k] for k in data_perm[2:])
    kh, kw = (int(k) for k in attrs.kernel_size)
    taps = int(attrs.deformable_groups) * kh * kw
    pads = _pads(attrs.padding, 2)
    dtype = _dtype(call.args[0])
    i, j = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    tap_y = np.tile((i * int(attrs.dilation[0])).ravel(), taps // (kh * kw))
    tap_x = np.tile((j * int(attrs.dilation[1])).ravel(), taps // (kh * kw))
    base_y = (tap_y[:, None, None] + np.arange(oh)[None, :, None] * int(attrs.strides[0])
              - pads[0]) * np.ones((1, 1, ow))
    base_x = (tap_x[:, None, None] + np.arange(ow)[None, None, :] * int(attrs.strides[1])
              - pads[1]) * np.ones((1, oh, 1))
    pairs = _reshape(b, offset, [n, taps, 2, oh, ow])
    moved, inside = [], []
    for k, (base, extent) in enumerate(((base_y, height), (base_x, width))):
        step = b.node("Gather", [pairs, b.ints([k])], axis=2)
        step = _reshape(b, step, [n, taps, oh, ow])
        at = b.node("Add", [step, b.const(base.astype(dtype))])
        inside.append(b.node("And", [b.node("GreaterOrEqual", [at, _scalar(b, 0, dtype)]),
                                     b.node("Less", [at, _scalar(b, extent, dtype)])]))
        step = b.node("Min", [step, b.const((extent - 1 - base).astype(dtype))])
        moved.append(_unsqueeze(b, step, [2]))
    offset = _reshape(b, b.node("Concat", moved, axis=2), [n, 2 * taps, oh, ow])
    mask = b.node("Cast", [b.node("And", inside)], to=_code(dtype))
    y = b.node("DeformConv", [x, w, offset, None, mask], kernel_shape=[kh, kw],
               strides=[int(s) for s in attrs.strides], pads=pads,
               dilations=[int(d) for d in attrs.dilation], group=int(attrs.groups),
               offset_group=int(attrs.deformable_groups))
    return _transpose(b, y, _inverse(data_perm))


def _rois_nchw(b: GraphBuilder, call: Call, x: Value) -> tuple[Value, list[int]]:
    perm = _layout_perm(call.attrs.layout, "NCHW", call.op.name)
    return _transpose(b, x, perm), _inverse(perm)


@_export("vision.roi_align", "RoiAlign (output_half_pixel), Gather, Cast, Slice")
def _roi_align(b: GraphBuilder, call: Call, args: list) -> Value:
    if call.attrs.mode != "avg":
        raise Unsupported("RoiAlign's max mode in onnxruntime weights the corners before taking "
                          "the maximum, which Relay does not; only mode='avg' is exported")
    x, back = _rois_nchw(b, call, args[0])
    rois = args[1]
    batch = _cast(b, b.node("Gather", [rois, _scalar(b, 0, "int64")], axis=1),
                  _dtype(call.args[1]), "int64")
    boxes = b.node("Slice", [rois, b.ints([1]), b.ints([5]), b.ints([1])])
    ratio = int(call.attrs.sample_ratio)
    ph, pw = (int(p) for p in call.attrs.pooled_size)
    y = b.node("RoiAlign", [x, boxes, batch], mode="avg", output_height=ph, output_width=pw,
               sampling_ratio=max(ratio, 0), spatial_scale=float(call.attrs.spatial_scale),
               coordinate_transformation_mode="output_half_pixel")
    return _transpose(b, y, back)


@_export("vision.roi_pool", "MaxRoiPool")
def _roi_pool(b: GraphBuilder, call: Call, args: list) -> Value:
    x, back = _rois_nchw(b, call, args[0])
    y = b.node("MaxRoiPool", [x, args[1]], pooled_shape=[int(p) for p in call.attrs.pooled_size],
               spatial_scale=float(call.attrs.spatial_scale))
    return _transpose(b, y, back)


def _pool_layout(b: GraphBuilder, call: Call, x: Value, n: int) -> tuple[Value, list[int]]:
    """``x`` in NC + spatial axes, and the permutation that takes the result back to the
    output layout."""
    attrs = call.attrs
    target = "NC" + _SPATIAL[n]
    perm = _layout_perm(attrs.layout, target, call.op.name)
    out_layout = attrs.out_layout or attrs.layout
    return _transpose(b, x, perm), _inverse(_layout_perm(out_layout, target, call.op.name))


def _max_pool(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        a = call.attrs
        x, back = _pool_layout(b, call, args[0], n)
        y = b.node("MaxPool", [x], kernel_shape=[int(k) for k in a.pool_size],
                   strides=[int(s) for s in a.strides], pads=_pads(a.padding, n),
                   dilations=[int(d) for d in a.dilation], ceil_mode=int(bool(a.ceil_mode)))
        return _transpose(b, y, back)

    return mapping


def _avg_pool(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        a = call.attrs
        dilations = [int(d) for d in a.dilation]
        if any(d != 1 for d in dilations) and b.opset < 19:
            raise Unsupported(f"AveragePool takes dilations {dilations} from opset 19 (asked "
                              f"for opset {b.opset})")
        x, back = _pool_layout(b, call, args[0], n)
        y = b.node("AveragePool", [x], kernel_shape=[int(k) for k in a.pool_size],
                   strides=[int(s) for s in a.strides], pads=_pads(a.padding, n),
                   dilations=dilations if b.opset >= 19 else None,
                   ceil_mode=int(bool(a.ceil_mode)),
                   count_include_pad=int(bool(a.count_include_pad)))
        return _transpose(b, y, back)

    return mapping


def _global_pool(onnx_op: str) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        x, back = _pool_layout(b, call, args[0], 2)
        return _transpose(b, b.node(onnx_op, [x]), back)

    return mapping


def _adaptive_pool(n: int, kind: str) -> Mapping:
    """Adaptive pooling: the global pool for an output of ones, else the windowed pool when
    every output size divides its static input size (the windows then tile the input)."""

    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        a = call.attrs
        x, back = _pool_layout(b, call, args[0], n)
        perm = _layout_perm(a.layout, "NC" + _SPATIAL[n], call.op.name)
        sizes_in = [_shape(call.args[0])[k] for k in perm[2:]]
        out_perm = _layout_perm(a.out_layout or a.layout, "NC" + _SPATIAL[n], call.op.name)
        sizes_out = [_shape(call)[k] for k in out_perm[2:]]
        if all(int(o) == 1 for o in sizes_out):
            y = b.node(f"Global{kind}Pool", [x])
        elif any(_is_any(d) for d in sizes_in) or any(
                int(i) % int(o) for i, o in zip(sizes_in, sizes_out)):
            raise Unsupported(f"adaptive pooling from {sizes_in} to {sizes_out} needs output "
                              f"sizes that divide static input sizes")
        else:
            k = [int(i) // int(o) for i, o in zip(sizes_in, sizes_out)]
            y = b.node(f"{kind}Pool", [x], kernel_shape=k, strides=k)
        return _transpose(b, y, back)

    return mapping


for _n in (1, 2, 3):
    _export(f"nn.conv{_n}d", "Conv")(_conv(_n))
    _export(f"nn.conv{_n}d_transpose", "ConvTranspose")(_conv_transpose(_n))
    _export(f"nn.max_pool{_n}d", "MaxPool")(_max_pool(_n))
    _export(f"nn.avg_pool{_n}d", "AveragePool (dilations from opset 19)")(_avg_pool(_n))
    for _short, _kind in (("avg", "Average"), ("max", "Max")):
        _export(f"nn.adaptive_{_short}_pool{_n}d",
                f"Global{_kind}Pool, or {_kind}Pool when the sizes divide")(
            _adaptive_pool(_n, _kind))

_export("nn.global_avg_pool2d", "GlobalAveragePool")(_global_pool("GlobalAveragePool"))
_export("nn.global_max_pool2d", "GlobalMaxPool")(_global_pool("GlobalMaxPool"))


@_export("nn.dilate", "Unsqueeze, Pad, Reshape, Slice (per dilated axis)")
def _dilate(b: GraphBuilder, call: Call, args: list) -> Value:
    """Each axis of stride s: a new axis after it padded to s with the value, merged into the
    axis, and the s - 1 trailing fillers sliced off."""
    shape = list(_static(call.args[0], "nn.dilate"))
    x = args[0]
    fill = _scalar(b, float(call.attrs.dilation_value), _dtype(call))
    for axis, stride in enumerate(int(s) for s in call.attrs.strides):
        if stride == 1 or shape[axis] == 0:
            continue
        rank = len(shape)
        widened = _unsqueeze(b, x, [axis + 1])
        pads = [0] * (2 * (rank + 1))
        pads[rank + 1 + axis + 1] = stride - 1
        padded = b.node("Pad", [widened, b.ints(pads), fill], mode="constant")
        merged = shape[:axis] + [shape[axis] * stride] + shape[axis + 1:]
        x = b.node("Reshape", [padded, b.ints(merged)])
        x = b.node("Slice", [x, b.ints([0]), b.ints([(shape[axis] - 1) * stride + 1]),
                             b.ints([axis])])
        shape[axis] = (shape[axis] - 1) * stride + 1
    return x


# --- matrix products ------------------------------------------------------------------------------


@_export("nn.dense", "Gemm (2-D data), MatMul")
def _dense(b: GraphBuilder, call: Call, args: list) -> Value:
    _same_out_dtype(call)
    x, w = args
    if _rank(call.args[0]) == 2:
        return b.node("Gemm", [x, w], transB=1)
    return b.node("MatMul", [x, _transpose(b, w, [1, 0])])


@_export("nn.matmul", "Gemm (2-D), MatMul")
def _matmul(b: GraphBuilder, call: Call, args: list) -> Value:
    _same_out_dtype(call)
    ta, tb = bool(call.attrs.transpose_a), bool(call.attrs.transpose_b)
    a, w = args
    if _rank(call.args[0]) == 2 and _rank(call.args[1]) == 2:
        return b.node("Gemm", [a, w], transA=int(ta) or None, transB=int(tb) or None)
    if ta:
        a = _transpose(b, a, [*range(_rank(call.args[0]) - 2), _rank(call.args[0]) - 1,
                              _rank(call.args[0]) - 2])
    if tb:
        w = _transpose(b, w, [*range(_rank(call.args[1]) - 2), _rank(call.args[1]) - 1,
                              _rank(call.args[1]) - 2])
    return b.node("MatMul", [a, w])


@_export("nn.batch_matmul", "MatMul")
def _batch_matmul(b: GraphBuilder, call: Call, args: list) -> Value:
    _same_out_dtype(call)
    a, w = args
    if call.attrs.transpose_a:
        a = _transpose(b, a, [0, 2, 1])
    if call.attrs.transpose_b:
        w = _transpose(b, w, [0, 2, 1])
    return b.node("MatMul", [a, w])


# --- reductions -----------------------------------------------------------------------------------


def _reduce_node(b: GraphBuilder, onnx_op: str, x: Value, axes: list[int], keepdims: bool,
                 ) -> Value:
    as_input = b.opset >= 18 or onnx_op == "ReduceSum"
    if as_input:
        return b.node(onnx_op, [x, b.ints(axes)], keepdims=int(keepdims))
    return b.node(onnx_op, [x], axes=axes, keepdims=int(keepdims))


def _reduction(name: str, onnx_op: str) -> None:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        rank = _rank(call.args[0])
        axes = reduce_axes(rank, call.attrs, name)
        if not axes:
            return args[0]
        return _reduce_node(b, onnx_op, args[0], axes, bool(call.attrs.keepdims))

    _export(name, onnx_op)(mapping)


for _relay, _onnx in (("sum", "ReduceSum"), ("mean", "ReduceMean"), ("max", "ReduceMax"),
                      ("min", "ReduceMin"), ("prod", "ReduceProd")):
    _reduction(_relay, _onnx)


@_export("variance", "Sub, Mul, ReduceMean (and Mul for unbiased)")
def _variance(b: GraphBuilder, call: Call, args: list) -> Value:
    x, mean = args
    shape = _shape(call.args[0])
    axes = reduce_axes(len(shape), call.attrs, "variance")
    centered = b.node("Sub", [x, mean])
    out = _reduce_node(b, "ReduceMean", b.node("Mul", [centered, centered]), axes,
                       bool(call.attrs.keepdims))
    if call.attrs.unbiased:
        extents = [shape[a] for a in axes]
        if any(_is_any(d) for d in extents):
            raise Unsupported("unbiased variance needs static extents along the reduced axes")
        n = int(np.prod([int(d) for d in extents]))
        out = b.node("Mul", [out, _scalar(b, n / max(n - 1, 1), _dtype(call))])
    return out


def _arg_reduction(name: str, onnx_op: str) -> None:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        rank = _rank(call.args[0])
        attrs = call.attrs
        keepdims = bool(attrs.keepdims)
        x = args[0]
        if attrs.axis is None or attrs.axis == ():
            axes = list(range(rank))
        else:
            axes = reduce_axes(rank, attrs, name)
        extra = {"select_last_index": 1} if attrs.select_last_index else {}
        if len(axes) == 1:
            out = b.node(onnx_op, [x], axis=axes[0], keepdims=int(keepdims), **extra)
        elif axes == list(range(rank)):
            out = b.node(onnx_op, [_reshape(b, x, [-1])], axis=0, keepdims=0, **extra)
            if keepdims:
                out = _reshape(b, out, [1] * rank)
        else:
            raise Unsupported(f"ONNX's {onnx_op} reduces one axis, got axes {axes}")
        return _cast(b, out, "int64", _dtype(call))

    _export(name, onnx_op)(mapping)


_arg_reduction("argmax", "ArgMax")
_arg_reduction("argmin", "ArgMin")


@_export("argsort", "TopK")
def _argsort(b: GraphBuilder, call: Call, args: list) -> Value:
    shape = _shape(call.args[0])
    axis = _axis(int(call.attrs.axis), len(shape))
    extent = shape[axis]
    k = b.ints([extent]) if not _is_any(extent) else b.node(
        "Shape", [args[0]], start=axis, end=axis + 1)
    _, indices = b.node("TopK", [args[0], k], outputs=2, axis=axis,
                        largest=int(not call.attrs.is_ascend), sorted=1)
    return _cast(b, indices, "int64", _dtype(call))


# --- shapes and data movement ---------------------------------------------------------------------


def _static_target(call: Call) -> tuple[list[int], bool] | None:
    """The output type's shape as an ONNX Reshape target (-1 for a single unknown extent) and
    whether it needs allowzero=1; None when more than one extent is unknown."""
    target = []
    unknown = False
    for d in _shape(call):
        v = known_int(d)
        if v is None:
            if unknown:
                return None
            unknown = True
            v = -1
        target.append(v)
    return target, 0 in target


def _plain_codes(newshape: Sequence[int]) -> bool:
    """Whether ONNX's Reshape reads Relay's ``newshape`` as Relay does: 0 copies an extent,
    one -1 infers one, and no code below -1."""
    return min(newshape, default=0) >= -1 and list(newshape).count(-1) <= 1


def _target_shape(call: Call, newshape: Sequence[int] | None) -> tuple[list[int], bool]:
    """The ONNX Reshape target of a reshape-like call, and whether it needs allowzero=1.

    The output type's static shape when it has one (with -1 for a single
    unknown extent); otherwise Relay's ``newshape`` when ONNX reads it the
    same way (0 copies an extent, one -1 infers one).
    """
    found = _static_target(call)
    if found is not None:
        return found
    if newshape is not None and _plain_codes(newshape):
        return [int(v) for v in newshape], False
    out = _shape(call)
    unknown = sum(_is_any(d) for d in out)
    raise Unsupported(f"reshaping to ({', '.join(map(str, out))}) has {unknown} unknown "
                      f"extents that ONNX's Reshape cannot express")


@_export("reshape", "Reshape (Shape, Slice, Mul, Concat for codes -2, -3, -4 of dynamic shapes)")
def _reshape_op(b: GraphBuilder, call: Call, args: list) -> Value:
    allowzero = bool(call.attrs.allowzero)
    newshape = None if allowzero else list(map(int, call.attrs.newshape))
    found = _static_target(call)
    if found is None and newshape is not None and not _plain_codes(newshape):
        # the codes -2, -3, -4 of a shape ONNX cannot write down: computed when the model runs
        return b.node("Reshape", [args[0], _relay_codes(b, args[0], _rank(call.args[0]),
                                                        newshape)])
    target, zero = found if found is not None else _target_shape(call, newshape)
    if args[0].array is not None and -1 not in target:
        return b.const(args[0].array.reshape(target))
    return b.node("Reshape", [args[0], b.ints(target)], allowzero=1 if zero else None)


def _shape_slice(b: GraphBuilder, x: Value, start: int, end: int | None = None) -> Value:
    """Extents ``start:end`` of ``x``'s shape, as a 1-D int64 tensor (Shape's start/end)."""
    return b.node("Shape", [x], start=start, end=end)


def _relay_codes(b: GraphBuilder, x: Value, rank: int, newshape: Sequence[int]) -> Value:
    """The target of a Relay ``newshape`` computed from ``x``'s shape when the model runs:
    0 copies an extent, -2 the rest, -3 multiplies two, -4 splits one in two."""
    pieces: list[Value] = []
    src = 0
    i = 0
    while i < len(newshape):
        v = newshape[i]
        if v > 0 or v == -1:
            pieces.append(b.ints([v]))
            src += 1
        elif v == 0:
            pieces.append(_shape_slice(b, x, src, src + 1))
            src += 1
        elif v == -2:
            pieces.append(_shape_slice(b, x, src))
            src = rank
        elif v == -3:
            pieces.append(b.node("Mul", [_shape_slice(b, x, src, src + 1),
                                         _shape_slice(b, x, src + 1, src + 2)]))
            src += 2
        else:  # -4: the next two values split one extent (one of them may be -1)
            d1, d2 = newshape[i + 1], newshape[i + 2]
            extent = _shape_slice(b, x, src, src + 1)
            known = b.ints([d2 if d1 == -1 else d1])
            rest = b.node("Div", [extent, known])
            pieces.extend([rest, known] if d1 == -1 else [known, rest] if d2 == -1
                          else [b.ints([d1]), b.ints([d2])])
            src += 1
            i += 2
        i += 1
    return pieces[0] if len(pieces) == 1 else b.node("Concat", pieces, axis=0)


@_export("contrib_reverse_reshape", "Reshape")
def _reverse_reshape(b: GraphBuilder, call: Call, args: list) -> Value:
    target, zero = _target_shape(call, None)
    return b.node("Reshape", [args[0], b.ints(target)], allowzero=1 if zero else None)


@_export("reshape_like", "Reshape (Shape, Concat for dynamic shapes)")
def _reshape_like(b: GraphBuilder, call: Call, args: list) -> Value:
    found = _static_target(call)
    if found is not None:
        target, zero = found
        return b.node("Reshape", [args[0], b.ints(target)], allowzero=1 if zero else None)
    attrs = call.attrs
    rank, like_rank = _rank(call.args[0]), _rank(call.args[1])
    lhs_end = rank if attrs.lhs_end is None else _axis(int(attrs.lhs_end), rank)
    rhs_end = like_rank if attrs.rhs_end is None else _axis(int(attrs.rhs_end), like_rank)
    lhs_begin = _axis(int(attrs.lhs_begin), rank)
    rhs_begin = _axis(int(attrs.rhs_begin), like_rank)
    pieces = [_shape_slice(b, args[1], rhs_begin, rhs_end)]
    if lhs_begin > 0:
        pieces.insert(0, _shape_slice(b, args[0], 0, lhs_begin))
    if lhs_end < rank:
        pieces.append(_shape_slice(b, args[0], lhs_end, rank))
    target_v = pieces[0] if len(pieces) == 1 else b.node("Concat", pieces, axis=0)
    return b.node("Reshape", [args[0], target_v])


# --- the dynamic operators: their shape arguments are ONNX's shape inputs -------------------------


def _int64(b: GraphBuilder, v: Value, expr: Expr) -> Value:
    return _cast(b, v, _dtype(expr), "int64")


@_export("dyn.reshape", "Reshape")
def _dyn_reshape(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Reshape", [args[0], _int64(b, args[1], call.args[1])],
                  allowzero=1 if call.attrs.allowzero else None)


@_export("dyn.broadcast_to", "Expand")
def _dyn_broadcast_to(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Expand", [args[0], _int64(b, args[1], call.args[1])])


def _dyn_filled(b: GraphBuilder, call: Call, shape: Value, fill: np.ndarray) -> Value:
    value = b.tensor_attr(np.asarray(fill, dtype=_dtype(call)).reshape(1))
    return b.node("ConstantOfShape", [shape], value=value)


@_export("dyn.zeros", "ConstantOfShape")
def _dyn_zeros(b: GraphBuilder, call: Call, args: list) -> Value:
    return _dyn_filled(b, call, _int64(b, args[0], call.args[0]), np.zeros(()))


@_export("dyn.ones", "ConstantOfShape")
def _dyn_ones(b: GraphBuilder, call: Call, args: list) -> Value:
    return _dyn_filled(b, call, _int64(b, args[0], call.args[0]), np.ones(()))


@_export("dyn.full", "ConstantOfShape (constant fill), Expand")
def _dyn_full(b: GraphBuilder, call: Call, args: list) -> Value:
    fill, shape = args[0], _int64(b, args[1], call.args[1])
    if fill.array is not None and fill.array.size == 1:
        return _dyn_filled(b, call, shape, fill.array.reshape(()))
    return b.node("Expand", [_cast(b, fill, _dtype(call.args[0]), _dtype(call)), shape])


@_export("dyn.tile", "Tile")
def _dyn_tile(b: GraphBuilder, call: Call, args: list) -> Value:
    if _shape(call.args[1]) != (_rank(call.args[0]),):
        raise Unsupported("repeats of a length other than the data's rank")
    return b.node("Tile", [args[0], _int64(b, args[1], call.args[1])])


@_export("dyn.strided_slice", "Slice")
def _dyn_strided_slice(b: GraphBuilder, call: Call, args: list) -> Value:
    if call.attrs.slice_mode != "end":
        raise Unsupported(f"slice_mode={call.attrs.slice_mode!r}")
    (k,) = _shape(call.args[1])
    begin, end, strides = (_int64(b, v, e) for v, e in zip(args[1:], call.args[1:]))
    return b.node("Slice", [args[0], begin, end, b.ints(list(range(int(k)))), strides])


@_export("nn.batch_flatten", "Flatten")
def _batch_flatten(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Flatten", args, axis=1)


@_export("transpose", "Transpose")
def _transpose_op(b: GraphBuilder, call: Call, args: list) -> Value:
    rank = _rank(call.args[0])
    axes = call.attrs.axes
    perm = list(range(rank))[::-1] if axes is None else [_axis(int(a), rank) for a in axes]
    return _transpose(b, args[0], perm)


@_export("layout_transform", "Transpose (Reshape for blocked layouts)")
def _layout_transform(b: GraphBuilder, call: Call, args: list) -> Value:
    src, dst = call.attrs.src_layout, call.attrs.dst_layout
    if not (Layout(src, call.op.name).is_primal and Layout(dst, call.op.name).is_primal):
        shape = _static(call.args[0], "a layout_transform into or out of blocks")
        return _relayout(b, args[0], shape, src, dst, call.op.name)
    return _transpose(b, args[0], _layout_perm(src, dst, call.op.name))


@_export("squeeze", "Squeeze")
def _squeeze(b: GraphBuilder, call: Call, args: list) -> Value:
    shape = _shape(call.args[0])
    if call.attrs.axis is None:
        axes = [k for k, d in enumerate(shape) if not _is_any(d) and int(d) == 1]
    else:
        axes = sorted(_axis(int(a), len(shape)) for a in call.attrs.axis)
    if not axes:
        return args[0]
    if args[0].array is not None:
        return b.const(np.squeeze(args[0].array, tuple(axes)))
    return b.node("Squeeze", [args[0], b.ints(axes)])


@_export("expand_dims", "Unsqueeze")
def _expand_dims(b: GraphBuilder, call: Call, args: list) -> Value:
    n = int(call.attrs.num_newaxis)
    axis = int(call.attrs.axis)
    if axis < 0:
        axis += _rank(call.args[0]) + 1
    return _unsqueeze(b, args[0], list(range(axis, axis + n)))


@_export("concatenate", "Concat")
def _concatenate(b: GraphBuilder, call: Call, args: list) -> Value:
    parts = list(args[0])
    if len(parts) == 1:
        return parts[0]
    return b.node("Concat", parts, axis=int(call.attrs.axis))


@_export("stack", "Unsqueeze, Concat")
def _stack(b: GraphBuilder, call: Call, args: list) -> Value:
    axis = _axis(int(call.attrs.axis), _rank(call))
    parts = [_unsqueeze(b, v, [axis]) for v in args[0]]
    return parts[0] if len(parts) == 1 else b.node("Concat", parts, axis=axis)


@_export("split", "Split")
def _split(b: GraphBuilder, call: Call, args: list) -> tuple:
    shape = _shape(call.args[0])
    axis = _axis(int(call.attrs.axis), len(shape))
    pieces = call.checked_type.fields
    sizes = [f.shape[axis] for f in pieces]
    if len(pieces) == 1:
        return (args[0],)
    if all(not _is_any(s) for s in sizes):
        outs = b.node("Split", [args[0], b.ints([int(s) for s in sizes])], outputs=len(pieces),
                      axis=axis)
    elif isinstance(call.attrs.indices_or_sections, int):
        extra = {"num_outputs": len(pieces)} if b.opset >= 18 else {}
        outs = b.node("Split", [args[0]], outputs=len(pieces), axis=axis, **extra)
    else:
        raise Unsupported("splitting at indices along an axis of unknown extent")
    return tuple(outs)


@_export("strided_slice", "Slice")
def _strided_slice(b: GraphBuilder, call: Call, args: list) -> Value:
    shape = _shape(call.args[0])
    starts, ends, axes, steps = [], [], [], []
    for k, begin, end, stride in _slice_plan(len(shape), call.attrs):
        extent = shape[k]
        whole = stride == 1 and begin == 0 and (
            end >= _INT64_MAX or (not _is_any(extent) and end >= int(extent)))
        if whole:
            continue
        starts.append(begin)
        ends.append(min(max(end, _INT64_MIN), _INT64_MAX))
        axes.append(k)
        steps.append(stride)
    if not axes:
        return args[0]
    inputs = [args[0], b.ints(starts), b.ints(ends), b.ints(axes)]
    if any(s != 1 for s in steps):
        inputs.append(b.ints(steps))
    return b.node("Slice", inputs)


@_export("reverse", "Slice (step -1)")
def _reverse(b: GraphBuilder, call: Call, args: list) -> Value:
    axis = _axis(int(call.attrs.axis), _rank(call.args[0]))
    return b.node("Slice", [args[0], b.ints([-1]), b.ints([_INT64_MIN]), b.ints([axis]),
                            b.ints([-1])])


@_export("take", "Gather (Clip for mode='clip' on indices that are not constants)")
def _take(b: GraphBuilder, call: Call, args: list) -> Value:
    data, indices = args
    attrs = call.attrs
    if int(attrs.batch_dims):
        raise Unsupported(f"batch_dims={attrs.batch_dims}")
    shape = _shape(call.args[0])
    if attrs.axis is None:
        data = _reshape(b, data, [-1])
        extent = int(np.prod([int(d) for d in shape])) if all(
            not _is_any(d) for d in shape) else Any()
        axis = 0
    else:
        axis = _axis(int(attrs.axis), len(shape))
        extent = shape[axis]
    mode = attrs.mode
    if indices.array is not None and not _is_any(extent) and mode != "fast":
        n = int(extent)
        idx = indices.array.astype(np.int64)
        # (np.clip's Python wrapper costs more than the two ufuncs)
        idx = np.minimum(np.maximum(idx, 0), n - 1) if mode == "clip" else np.mod(idx, n)
        indices = b.const(idx)
    elif mode == "clip":
        if _is_any(extent):
            raise Unsupported("mode='clip' with indices that are not constants needs a static "
                              "extent along the axis")
        dtype = _dtype(call.args[1])
        indices = b.node("Clip", [indices, _scalar(b, 0, dtype), _scalar(b, int(extent) - 1, dtype)])
    # mode 'wrap' on indices that are not constants: ONNX's Gather reads [-n, n) the same way.
    return b.node("Gather", [data, indices], axis=axis)


@_export("gather", "GatherElements")
def _gather(b: GraphBuilder, call: Call, args: list) -> Value:
    axis = _axis(int(call.attrs.axis), _rank(call.args[0]))
    return b.node("GatherElements", [args[0], args[1]], axis=axis)


@_export("gather_nd", "GatherND")
def _gather_nd(b: GraphBuilder, call: Call, args: list) -> Value:
    r = _rank(call.args[1])
    indices = _transpose(b, args[1], [*range(1, r), 0]) if r > 1 else args[1]
    indices = _cast(b, indices, _dtype(call.args[1]), "int64")
    return b.node("GatherND", [args[0], indices], batch_dims=int(call.attrs.batch_dims) or None)


@_export("tile", "Tile")
def _tile(b: GraphBuilder, call: Call, args: list) -> Value:
    reps = [int(r) for r in call.attrs.reps]
    rank = _rank(call.args[0])
    x = args[0]
    if len(reps) > rank:
        x = _unsqueeze(b, x, list(range(len(reps) - rank)))
    reps = [1] * (rank - len(reps)) + reps
    return b.node("Tile", [x, b.ints(reps)])


@_export("repeat", "Unsqueeze, Tile, Reshape")
def _repeat(b: GraphBuilder, call: Call, args: list) -> Value:
    rank = _rank(call.args[0])
    axis = _axis(int(call.attrs.axis), rank)
    reps = [1] * (rank + 1)
    reps[axis + 1] = int(call.attrs.repeats)
    tiled = b.node("Tile", [_unsqueeze(b, args[0], [axis + 1]), b.ints(reps)])
    target, _ = _target_shape(call, None)
    return b.node("Reshape", [tiled, b.ints(target)])


@_export("broadcast_to", "Expand")
def _broadcast_to(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Expand", [args[0], b.ints([int(d) for d in call.attrs.shape])])


@_export("broadcast_to_like", "Expand")
def _broadcast_to_like(b: GraphBuilder, call: Call, args: list) -> Value:
    out = _shape(call)
    if all(not _is_any(d) for d in out):
        return b.node("Expand", [args[0], b.ints(out)])
    return b.node("Expand", [args[0], b.node("Shape", [args[1]])])


def _collapse_sum(b: GraphBuilder, call: Call, args: list) -> Value:
    src = _shape(call.args[0])
    dst = _static(call, "collapse_sum")
    lead = len(src) - len(dst)
    axes = list(range(lead)) + [lead + k for k, d in enumerate(dst)
                                if d == 1 and (_is_any(src[lead + k]) or int(src[lead + k]) != 1)]
    out = _reduce_node(b, "ReduceSum", args[0], axes, True) if axes else args[0]
    return _reshape(b, out, list(dst)) if lead else out


_export("collapse_sum_like", "ReduceSum, Reshape")(_collapse_sum)
_export("collapse_sum_to", "ReduceSum, Reshape")(_collapse_sum)


def _filled(b: GraphBuilder, ty: TensorType, fill: np.ndarray, like: Value | None) -> Value:
    """A tensor of type ``ty`` filled with the scalar ``fill`` (ConstantOfShape; of the shape
    of ``like`` when ``ty``'s is not static)."""
    value = b.tensor_attr(np.asarray(fill, dtype=ty.dtype).reshape(1))
    if all(not _is_any(d) for d in ty.shape):
        return b.node("ConstantOfShape", [b.ints(ty.shape)], value=value)
    if like is None:
        raise Unsupported("a fill of unknown shape")
    return b.node("ConstantOfShape", [b.node("Shape", [like])], value=value)


@_export("zeros", "ConstantOfShape")
def _zeros(b: GraphBuilder, call: Call, args: list) -> Value:
    return _filled(b, _tensor(call), np.zeros(()), None)


@_export("ones", "ConstantOfShape")
def _ones(b: GraphBuilder, call: Call, args: list) -> Value:
    return _filled(b, _tensor(call), np.ones(()), None)


@_export("zeros_like", "ConstantOfShape")
def _zeros_like(b: GraphBuilder, call: Call, args: list) -> Value:
    return _filled(b, _tensor(call), np.zeros(()), args[0])


@_export("ones_like", "ConstantOfShape")
def _ones_like(b: GraphBuilder, call: Call, args: list) -> Value:
    return _filled(b, _tensor(call), np.ones(()), args[0])


@_export("full", "ConstantOfShape (constant fill), Expand")
def _full(b: GraphBuilder, call: Call, args: list) -> Value:
    fill = args[0]
    if fill.array is not None and fill.array.size == 1:
        return _filled(b, _tensor(call), fill.array.reshape(()), None)
    out = _static(call, "full with a fill that is not a constant")
    return b.node("Expand", [_cast(b, fill, _dtype(call.args[0]), _dtype(call)), b.ints(out)])


@_export("full_like", "ConstantOfShape (constant fill), Expand")
def _full_like(b: GraphBuilder, call: Call, args: list) -> Value:
    x, fill = args
    if fill.array is not None and fill.array.size == 1:
        return _filled(b, _tensor(call), fill.array.reshape(()), x)
    return b.node("Expand", [_cast(b, fill, _dtype(call.args[1]), _dtype(call)),
                             b.node("Shape", [x])])


@_export("arange", "Range")
def _arange(b: GraphBuilder, call: Call, args: list) -> Value:
    dtype = _dtype(call)
    bounds = []
    for v, expr in zip(args, call.args):
        v = _cast(b, v, _dtype(expr), dtype)
        if _rank(expr) != 0:
            v = _reshape(b, v, [])
        bounds.append(v)
    return b.node("Range", bounds)


@_export("shape_of", "Shape (and Cast)")
def _shape_of(b: GraphBuilder, call: Call, args: list) -> Value:
    return _cast(b, b.node("Shape", args), "int64", _dtype(call))


@_export("ndarray_size", "Size (and Cast)")
def _ndarray_size(b: GraphBuilder, call: Call, args: list) -> Value:
    return _cast(b, b.node("Size", args), "int64", _dtype(call))


@_export("nn.pad", "Pad")
def _pad(b: GraphBuilder, call: Call, args: list) -> Value:
    widths = [(int(lo), int(hi)) for lo, hi in call.attrs.pad_width]
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    mode = call.attrs.pad_mode
    if mode == "constant":
        value = args[1]
        if _rank(call.args[1]) != 0:
            value = _reshape(b, value, [])
        return b.node("Pad", [args[0], b.ints(pads), value], mode="constant")
    return b.node("Pad", [args[0], b.ints(pads)], mode=mode)


@_export("nn.depth_to_space", "DepthToSpace")
def _depth_to_space(b: GraphBuilder, call: Call, args: list) -> Value:
    if call.attrs.layout != "NCHW":
        raise Unsupported(f"layout {call.attrs.layout!r} (ONNX's DepthToSpace is NCHW)")
    return b.node("DepthToSpace", args, blocksize=int(call.attrs.block_size),
                  mode=str(call.attrs.mode))


_RESIZE_METHODS = {"nearest_neighbor": "nearest", "linear": "linear", "cubic": "cubic",
                   "bilinear": "linear", "bicubic": "cubic", "trilinear": "linear",
                   "tricubic": "cubic"}
_NEAREST_MODES = {"round": "round_prefer_ceil", "round_prefer_floor": "round_prefer_floor",
                  "round_prefer_ceil": "round_prefer_ceil", "floor": "floor", "ceil": "ceil"}


def _resize_attrs(method: str, coordinates: str, rounding: str = "", cubic_alpha: float = -0.5,
                  cubic_exclude: int = 0) -> dict[str, AnyT]:
    """ONNX Resize's attributes for TVM's resize: nearest rounds half away from zero ("round",
    which on the non-negative coordinates that stay in the image is round_prefer_ceil) with
    align_corners and down otherwise, unless ``rounding`` says."""
    mode = _RESIZE_METHODS[method]
    attrs: dict[str, AnyT] = {"mode": mode, "coordinate_transformation_mode": coordinates}
    if mode == "nearest":
        rounding = rounding or ("round" if coordinates == "align_corners" else "floor")
        attrs["nearest_mode"] = _NEAREST_MODES[rounding]
    elif mode == "cubic":
        attrs["cubic_coeff_a"] = float(cubic_alpha)
        attrs["exclude_outside"] = int(cubic_exclude) or None
    return attrs


def _upsampling_coordinates(n: int, attrs: AnyT) -> str:
    """Resize's coordinate transformation for (dyn.)nn.upsampling / upsampling3d."""
    if n == 2:
        return "align_corners" if attrs.align_corners else "asymmetric"
    return str(attrs.coordinate_transformation_mode)


def _upsampling(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        attrs = call.attrs
        coordinates = _upsampling_coordinates(n, attrs)
        resize = _resize_attrs(attrs.method, coordinates)
        out = _shape(call)
        if all(not _is_any(d) for d in out):
            return b.node("Resize", [args[0], None, None, b.ints(out)], **resize)
        layout = Layout(attrs.layout, call.op.name)
        scales = np.ones(len(out), dtype=np.float32)
        for letter in _SPATIAL[n]:
            scales[layout.index(letter)] = float(attrs[f"scale_{letter.lower()}"])
        return b.node("Resize", [args[0], None, b.const(scales)], **resize)

    return mapping


_export("nn.upsampling", "Resize")(_upsampling(2))
_export("nn.upsampling3d", "Resize")(_upsampling(3))


@_export("isfinite", "IsNaN, IsInf, Or, Not")
def _isfinite(b: GraphBuilder, call: Call, args: list) -> Value:
    x = args[0]
    return b.node("Not", [b.node("Or", [b.node("IsNaN", [x]), b.node("IsInf", [x])])])


def _bitwise(onnx_op: str, logical: str) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        if _dtype(call) == "bool":
            return b.node(logical, args)
        if b.opset < 18:
            raise Unsupported(f"{onnx_op} on integers needs opset 18 (asked for opset {b.opset})")
        return b.node(onnx_op, args)

    return mapping


for _relay, _onnx, _logical in (("bitwise_and", "BitwiseAnd", "And"),
                                ("bitwise_or", "BitwiseOr", "Or"),
                                ("bitwise_xor", "BitwiseXor", "Xor"),
                                ("bitwise_not", "BitwiseNot", "Not")):
    _export(_relay, f"{_onnx} (opset 18; {_logical} on booleans)")(_bitwise(_onnx, _logical))


@_export("cumsum", "CumSum")
def _cumsum(b: GraphBuilder, call: Call, args: list) -> Value:
    x = _cast(b, args[0], _dtype(call.args[0]), _dtype(call))
    axis = call.attrs.axis
    if axis is None:
        x, axis = _reshape(b, x, [-1]), 0
    return b.node("CumSum", [x, b.const(np.asarray(int(axis), np.int64))],
                  exclusive=1 if call.attrs.exclusive else None)


@_export("einsum", "Einsum")
def _einsum(b: GraphBuilder, call: Call, args: list) -> Value:
    return b.node("Einsum", list(args[0]), equation=str(call.attrs.equation))


@_export("trilu", "Trilu")
def _trilu(b: GraphBuilder, call: Call, args: list) -> Value:
    k = _cast(b, args[1], _dtype(call.args[1]), "int64")
    return b.node("Trilu", [args[0], k], upper=int(bool(call.attrs.upper)))


@_export("argwhere", "NonZero, Transpose, Cast")
def _argwhere(b: GraphBuilder, call: Call, args: list) -> Value:
    coords = b.node("Transpose", [b.node("NonZero", args)], perm=[1, 0])
    return _cast(b, coords, "int64", _dtype(call))


@_export("topk", "TopK")
def _topk(b: GraphBuilder, call: Call, args: list) -> AnyT:
    shape = _shape(call.args[0])
    axis = _axis(int(call.attrs.axis), len(shape))
    k = int(call.attrs.k)
    if k >= 1:
        kv = b.ints([k])
    elif not _is_any(shape[axis]):
        kv = b.ints([int(shape[axis])])
    else:
        kv = b.node("Shape", [args[0]], start=axis, end=axis + 1)
    return _topk_node(b, call, args[0], kv, axis)


def _topk_node(b: GraphBuilder, call: Call, x: Value, k: Value, axis: int) -> AnyT:
    """ONNX's TopK for a (dyn.)topk call, its indices cast and its results picked as the
    call's ``ret_type`` says."""
    values, indices = b.node("TopK", [x, k], outputs=2, axis=axis,
                             largest=int(not call.attrs.is_ascend), sorted=1)
    indices = _cast(b, indices, "int64", str(call.attrs.dtype))
    ret = call.attrs.ret_type
    return (values, indices) if ret == "both" else values if ret == "values" else indices


@_export("one_hot", "OneHot")
def _one_hot(b: GraphBuilder, call: Call, args: list) -> Value:
    indices, on, off = args
    if on.array is not None and off.array is not None:
        values = b.const(np.asarray([off.array.item(), on.array.item()], dtype=_dtype(call)))
    else:
        values = b.node("Concat", [_reshape(b, off, [1]), _reshape(b, on, [1])], axis=0)
    return b.node("OneHot", [indices, b.const(np.asarray(int(call.attrs.depth), np.int64)),
                             values], axis=int(call.attrs.axis))


_REDUCTIONS = {"update": ("none", 11), "add": ("add", 16), "mul": ("mul", 16),
               "min": ("min", 18), "max": ("max", 18)}


def _reduction_attr(mode: str, onnx_op: str, opset: int) -> str | None:
    found = _REDUCTIONS.get(mode)
    if found is None:
        raise Unsupported(f"{onnx_op} has no reduction {mode!r}")
    name, since = found
    if opset < since:
        raise Unsupported(f"{onnx_op}'s reduction {name!r} needs opset {since}")
    return None if name == "none" else name


@_export("scatter_elements", "ScatterElements")
def _scatter_elements(b: GraphBuilder, call: Call, args: list) -> Value:
    reduction = _reduction_attr(call.attrs.reduction, "ScatterElements", b.opset)
    axis = _axis(int(call.attrs.axis), _rank(call.args[0]))
    return b.node("ScatterElements", args, axis=axis, reduction=reduction)


@_export("scatter_nd", "ScatterND")
def _scatter_nd(b: GraphBuilder, call: Call, args: list) -> Value:
    reduction = _reduction_attr(call.attrs.mode, "ScatterND", b.opset)
    data, indices, updates = args
    r = _rank(call.args[1])
    # Relay puts each position's coordinates on the first axis, ONNX on the last.
    indices = _transpose(b, indices, [*range(1, r), 0]) if r > 1 else indices
    indices = _cast(b, indices, _dtype(call.args[1]), "int64")
    return b.node("ScatterND", [data, indices, updates], reduction=reduction)


@_export("image.resize2d", "Resize")
def _resize2d(b: GraphBuilder, call: Call, args: list) -> Value:
    attrs = call.attrs
    rank = 4
    h, w = (2, 3) if attrs.layout == "NCHW" else (1, 2)
    shape = _shape(call)
    mode = attrs.coordinate_transformation_mode
    roi = None
    if mode == "tf_crop_and_resize":
        starts, ends = [0.0] * rank, [1.0] * rank
        starts[h], starts[w], ends[h], ends[w] = (float(v) for v in attrs.roi)
        roi = b.const(np.asarray(starts + ends, dtype=np.float32))
    if all(not _is_any(d) for d in shape):
        sizes = b.ints(shape)
    else:
        known = b.ints([int(d) for d in attrs.size])
        head = b.node("Shape", [args[0]], start=0, end=h)
        parts = [head, known] if attrs.layout == "NCHW" else [
            head, known, b.node("Shape", [args[0]], start=3, end=4)]
        sizes = b.node("Concat", parts, axis=0)
    extra = _resize_attrs(attrs.method, mode, attrs.rounding_method, attrs.cubic_alpha,
                          attrs.cubic_exclude)
    if roi is not None:
        extra["extrapolation_value"] = float(attrs.extrapolation_value)
    out = b.node("Resize", [args[0], roi, None, sizes], **extra)
    return _cast(b, out, _dtype(call.args[0]), _dtype(call))


@_export("dyn.squeeze", "Squeeze")
def _dyn_squeeze(b: GraphBuilder, call: Call, args: list) -> Value:
    axes = args[1] if _rank(call.args[1]) == 1 else _reshape(b, args[1], [1])
    return b.node("Squeeze", [args[0], _int64(b, axes, call.args[1])])


@_export("dyn.expand_dims", "Unsqueeze (Add, Range for several new axes)")
def _dyn_expand_dims(b: GraphBuilder, call: Call, args: list) -> Value:
    count = int(call.attrs.num_newaxis)
    if count == 0:
        return args[0]
    # Relay counts a negative axis from the input's rank + 1, ONNX from the output's rank:
    # the new axes are axis, axis + 1, ... after axis is made non-negative
    rank = _rank(call.args[0])
    axis = _reshape(b, _int64(b, args[1], call.args[1]), [1])
    negative = b.node("Less", [axis, b.ints([0])])
    start = b.node("Where", [negative, b.node("Add", [axis, b.ints([rank + 1])]), axis])
    axes = b.node("Add", [start, b.ints(list(range(count)))])
    return b.node("Unsqueeze", [args[0], axes])


@_export("dyn.topk", "TopK")
def _dyn_topk(b: GraphBuilder, call: Call, args: list) -> AnyT:
    axis = _axis(int(call.attrs.axis), _rank(call.args[0]))
    k = _reshape(b, _int64(b, args[1], call.args[1]), [1])
    # k = 0 (or less) takes the whole axis, as the static operator does
    whole = b.node("Shape", [args[0]], start=axis, end=axis + 1)
    k = b.node("Where", [b.node("Less", [k, b.ints([1])]), whole, k])
    return _topk_node(b, call, args[0], k, axis)


@_export("dyn.one_hot", "OneHot")
def _dyn_one_hot(b: GraphBuilder, call: Call, args: list) -> Value:
    indices, on, off, depth = args
    values = b.node("Concat", [_reshape(b, _cast(b, off, _dtype(call.args[2]), _dtype(call)), [1]),
                               _reshape(b, _cast(b, on, _dtype(call.args[1]), _dtype(call)), [1])],
                    axis=0)
    return b.node("OneHot", [indices, _int64(b, depth, call.args[3]), values],
                  axis=int(call.attrs.axis))


@_export("dyn.nn.pad", "Pad (Transpose, Reshape of the widths)")
def _dyn_pad(b: GraphBuilder, call: Call, args: list) -> Value:
    # Relay's widths are (rank, 2) pairs; ONNX's pads are all the befores, then the afters
    pads = _reshape(b, b.node("Transpose", [_int64(b, args[1], call.args[1])], perm=[1, 0]), [-1])
    mode = call.attrs.pad_mode
    if mode == "constant":
        value = args[2]
        if _rank(call.args[2]) != 0:
            value = _reshape(b, value, [])
        return b.node("Pad", [args[0], pads, value], mode="constant")
    return b.node("Pad", [args[0], pads], mode=mode)


@_export("dyn.image.resize2d", "Resize")
def _dyn_resize2d(b: GraphBuilder, call: Call, args: list) -> Value:
    attrs = call.attrs
    if attrs.coordinate_transformation_mode == "tf_crop_and_resize":
        raise Unsupported("tf_crop_and_resize with a roi computed when the model runs")
    size = _int64(b, args[1], call.args[1])
    if attrs.layout == "NCHW":
        sizes = b.node("Concat", [b.node("Shape", [args[0]], start=0, end=2), size], axis=0)
    elif attrs.layout == "NHWC":
        sizes = b.node("Concat", [b.node("Shape", [args[0]], start=0, end=1), size,
                                  b.node("Shape", [args[0]], start=3, end=4)], axis=0)
    else:
        raise Unsupported(f"layout {attrs.layout!r}")
    extra = _resize_attrs(attrs.method, attrs.coordinate_transformation_mode,
                          attrs.rounding_method, attrs.cubic_alpha, attrs.cubic_exclude)
    out = b.node("Resize", [args[0], None, None, sizes], **extra)
    return _cast(b, out, _dtype(call.args[0]), _dtype(call))


def _dyn_upsampling(n: int) -> Mapping:
    def mapping(b: GraphBuilder, call: Call, args: list) -> Value:
        attrs = call.attrs
        coordinates = _upsampling_coordinates(n, attrs)
        layout = Layout(attrs.layout, call.op.name)
        rank = _rank(call.args[0])
        pieces = [b.const(np.ones(1, np.float32)) for _ in range(rank)]
        for letter, value, expr in zip(_SPATIAL[n], args[1:], call.args[1:]):
            pieces[layout.index(letter)] = _reshape(b, _cast(b, value, _dtype(expr), "float32"), [1])
        scales = b.node("Concat", pieces, axis=0)
        return b.node("Resize", [args[0], None, scales], **_resize_attrs(attrs.method, coordinates))

    return mapping


_export("dyn.nn.upsampling", "Resize")(_dyn_upsampling(2))
_export("dyn.nn.upsampling3d", "Resize")(_dyn_upsampling(3))


def _sparse_to_dense_value(b: GraphBuilder, call: Call, indices: Value, values: Value,
                           default: Value, shape: Value) -> Value:
    """ScatterND of the values into a tensor of the default value: indices of rank 0 or 1
    address the first axis, rows of a 2-D one address the leading axes."""
    dtype = _dtype(call)
    index_expr = call.args[0]
    indices = _int64(b, indices, index_expr)
    rank = _rank(index_expr)
    if rank == 0:
        indices = _reshape(b, indices, [1, 1])
    elif rank == 1:
        indices = _unsqueeze(b, indices, [1])
    count = b.node("Shape", [indices], start=0, end=1)
    filled = b.node("Expand", [_reshape(b, _cast(b, default, _dtype(call.args[2]), dtype), []),
                               shape])
    updates = b.node("Expand", [_cast(b, values, _dtype(call.args[1]), dtype), count])
    return b.node("ScatterND", [filled, indices, updates])


@_export("sparse_to_dense", "ScatterND, Expand")
def _sparse_to_dense(b: GraphBuilder, call: Call, args: list) -> Value:
    shape = b.ints([int(d) for d in call.attrs.output_shape])
    return _sparse_to_dense_value(b, call, args[0], args[1], args[2], shape)


@_export("dyn.sparse_to_dense", "ScatterND, Expand")
def _dyn_sparse_to_dense(b: GraphBuilder, call: Call, args: list) -> Value:
    return _sparse_to_dense_value(b, call, args[0], args[1], args[2],
                                  _int64(b, args[3], call.args[3]))


@_export("slice_like", "Slice (ends from shape_like's static shape)")
def _slice_like(b: GraphBuilder, call: Call, args: list) -> Value:
    data_rank = _rank(call.args[0])
    like = _shape(call.args[1])
    if call.attrs.axes is None:
        axes = list(range(min(data_rank, len(like))))
    else:
        axes = [_axis(int(a), data_rank) for a in call.attrs.axes]
    ends = [known_int(like[a]) for a in axes]
    if any(e is None for e in ends):
        raise Unsupported(f"shape_like's extents on axes {axes} must be static")
    return b.node("Slice", [args[0], b.ints([0] * len(axes)), b.ints(ends), b.ints(axes)])


@_export("cumprod", "(none before opset 26, which has CumProd)")
def _cumprod(b: GraphBuilder, call: Call, args: list) -> Value:
    raise Unsupported("ONNX has CumProd from opset 26; the exporter writes opsets up to 21")


# --- blocked layouts (what AlterOpLayout and ConvertLayout to NCHW16c produce) -------------------


def _relayout(b: GraphBuilder, v: Value, shape: Sequence[int], src: str, dst: str,
              op: str) -> Value:
    """``v`` (static ``shape``, in layout ``src``) in layout ``dst``, either possibly blocked
    (NCHW16c): a Transpose that puts each primal axis before its block, one Reshape that
    merges and splits the blocks, and a Transpose into ``dst``'s order."""
    s, d = Layout(src, op), Layout(dst, op)
    if s.name == d.name:
        return v
    perm: list[int] = []
    primal: list[int] = []
    for letter in d.primal:
        perm.append(s.index(letter))
        extent = shape[s.index(letter)]
        if s.index(letter.lower()) >= 0:
            perm.append(s.index(letter.lower()))
            extent *= shape[s.index(letter.lower())]
        primal.append(extent)
    v = _transpose(b, v, perm)
    split: list[int] = []
    labels: list[str] = []
    for letter, extent in zip(d.primal, primal):
        factor = d.factor(letter)
        split.extend([extent] if factor is None else [extent // factor, factor])
        labels.extend([letter] if factor is None else [letter, letter.lower()])
    if split != [shape[k] for k in perm]:
        v = _reshape(b, v, split)
    return _transpose(b, v, [labels.index(a) for a, _ in d.axes])


def _blocked_conv2d(b: GraphBuilder, call: Call, args: list) -> Value:
    """A blocked conv2d: the data and weight unblocked to NCHW and OIHW, a Conv, the result
    blocked into ``out_layout``."""
    _same_out_dtype(call)
    attrs, op = call.attrs, call.op.name
    dshape = _static(call.args[0], f"{op}'s data")
    wshape = _static(call.args[1], f"{op}'s weight")
    kernel = attrs.kernel_layout
    if len(wshape) == 6 and len(kernel) == 4:  # topi's packing, read by the weight's shape
        kernel = f"OIHW{wshape[4]}i{wshape[5]}o"
    out_layout = attrs.out_layout or attrs.data_layout
    out_primal = Layout(out_layout, op).primal_extents(_static(call, f"{op}'s result"), op)
    kernel_extents = Layout(kernel, op).primal_extents(wshape, op)
    x = _relayout(b, args[0], dshape, attrs.data_layout, "NCHW", op)
    w = _relayout(b, args[1], wshape, kernel, "OIHW", op)
    y = b.node("Conv", [x, w], kernel_shape=[int(kernel_extents[a]) for a in "HW"],
               strides=[int(s) for s in attrs.strides], pads=_pads(attrs.padding, 2),
               dilations=[int(d) for d in attrs.dilation], group=int(attrs.groups))
    return _relayout(b, y, [int(out_primal[a]) for a in "NCHW"], "NCHW", out_layout, op)


_export("nn.contrib_conv2d_NCHWc", "Conv, Transpose, Reshape")(_blocked_conv2d)
_export("nn.contrib_depthwise_conv2d_NCHWc", "Conv, Transpose, Reshape")(_blocked_conv2d)


@_export("nn.contrib_dense_pack", "Gemm, Transpose, Reshape")
def _dense_pack(b: GraphBuilder, call: Call, args: list) -> Value:
    _same_out_dtype(call)
    if _rank(call.args[0]) != 2:
        raise Unsupported("nn.contrib_dense_pack takes 2-D data")
    wshape = _static(call.args[1], "nn.contrib_dense_pack's weight")
    weight = _relayout(b, args[1], wshape, call.attrs.weight_layout, "NC", call.op.name)
    return b.node("Gemm", [args[0], weight], transB=1)
