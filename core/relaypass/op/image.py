"""Image operators: ``image.resize2d``, Relay's resize of the H and W axes of an image batch.

The attributes are Relay's, and with them ONNX's ``Resize``: a method
(``nearest_neighbor``, ``linear``, ``cubic``), a coordinate transformation
mode saying which input coordinate an output pixel samples (``half_pixel``,
``align_corners``, ``asymmetric``, ``pytorch_half_pixel``,
``tf_half_pixel_for_nn``, ``tf_crop_and_resize`` with its ``roi``), how
nearest neighbours round, and the cubic spline's ``cubic_alpha`` and
``cubic_exclude``.  The scale of an axis is the ratio of its extents, as in
TVM.  Pixels outside the image are clamped to its border, except with
``tf_crop_and_resize``, where samples outside it are ``extrapolation_value``.

The kernel is separable: for each axis it builds the matrix that maps the
input extent to the output extent (one, two or four taps per row, by
method) and applies both with one ``einsum`` in double precision.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.dtype import numpy_dtype
from ..ir.expr import Call, Constant, Expr
from ..ir.expr_builders import const
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import TensorType, Type
from . import dynamic
from .builder import call, dynamic_arg
from .relations import (
    attr_bool,
    attr_choice,
    attr_dtype,
    attr_ints,
    attr_number,
    expect_rank,
    expect_tensor,
    fail,
)

__all__ = ["resize2d"]

_LAYOUTS = {"NCHW": (2, 3), "NHWC": (1, 2)}
_METHODS = ("nearest_neighbor", "linear", "cubic")
_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
          "tf_half_pixel_for_nn", "tf_crop_and_resize")
_ROUNDING = ("", "round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_EPSILON = 1e-5  # TVM's guard against floor/ceil landing on the wrong side of an integer


def _resize2d_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "image.resize2d"
    t = expect_tensor(arg_types[0], f"{op}: data")
    expect_rank(t, 4, op, "data")
    layout = attr_choice(attrs.layout, "layout", op, tuple(_LAYOUTS))
    size = attr_ints(attrs.size, "size", op, length=2, minimum=1)
    roi = attrs.roi
    if not isinstance(roi, tuple) or len(roi) != 4:
        raise fail(op, f"attribute roi must be a tuple of 4 numbers, got {roi!r}")
    for v in roi:
        attr_number(v, "roi", op)
    attr_choice(attrs.method, "method", op, _METHODS)
    attr_choice(attrs.coordinate_transformation_mode, "coordinate_transformation_mode", op,
                _MODES)
    attr_choice(attrs.rounding_method, "rounding_method", op, _ROUNDING)
    attr_number(attrs.cubic_alpha, "cubic_alpha", op)
    attr_bool(attrs.cubic_exclude, "cubic_exclude", op)
    attr_number(attrs.extrapolation_value, "extrapolation_value", op)
    dtype = attr_dtype(attrs.out_dtype, "out_dtype", op, allow_empty=True) or t.dtype
    shape = list(t.shape)
    h, w = _LAYOUTS[layout]
    shape[h], shape[w] = size
    return TensorType(shape, dtype)


def _source_coordinates(out_len: int, in_len: int, mode: str, start: float,
                        end: float) -> np.ndarray:
    """The input coordinate each output position samples."""
    x = np.arange(out_len, dtype=np.float64)
    scale = in_len / out_len
    if mode == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out_len > 1 else np.zeros(1)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) * scale
    if mode == "align_corners":
        return x * ((in_len - 1) / (out_len - 1)) if out_len > 1 else np.zeros(1)
    # tf_crop_and_resize: the region [start, end] (fractions of the image) is sampled.
    if out_len > 1:
        return start * (in_len - 1) + x * (end - start) * (in_len - 1) / (out_len - 1)
    return np.full(1, 0.5 * (start + end) * (in_len - 1))


def _nearest(coords: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "round":  # half away from zero, as TVM's round
        return np.sign(coords) * np.floor(np.abs(coords) + 0.5)
    if rounding == "round_prefer_floor":
        return np.ceil(coords - 0.5)
    if rounding == "round_prefer_ceil":
        return np.floor(coords + 0.5)
    if rounding == "floor":
        return np.floor(coords + _EPSILON)
    return np.ceil(coords - _EPSILON)


def _cubic_weights(t: np.ndarray, alpha: float) -> np.ndarray:
    """The four spline weights of the taps at -1, 0, 1, 2 for a fraction ``t``."""
    t2, t3 = t * t, t * t * t
    return np.stack([
        alpha * (t3 - 2 * t2 + t),
        (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
        -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
        -alpha * t3 + alpha * t2,
    ], axis=1)


def sampling_matrix(out_len: int, in_len: int, method: str, mode: str, rounding: str = "",
                    cubic_alpha: float = -0.5, cubic_exclude: bool = False, start: float = 0.0,
                    end: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The (out_len, in_len) sampling matrix of one axis, and which rows sample outside the
    image (only tf_crop_and_resize extrapolates them).

    Resizing is separable, so every resize of TVM (``image.resize2d``, and
    ``nn.upsampling``/``nn.upsampling3d``, which TVM computes with it) is one
    such matrix per axis; ``method`` is ``nearest_neighbor``, ``linear`` or ``cubic``.
    """
    coords = _source_coordinates(out_len, in_len, mode, start, end)
    rows = np.arange(out_len)[:, None]
    matrix = np.zeros((out_len, in_len))
    if method == "nearest_neighbor":
        rounding = rounding or ("round" if mode == "align_corners" else "floor")
        taps = _nearest(coords, rounding)[:, None]
        weights = np.ones((out_len, 1))
    else:
        base = np.floor(coords)
        frac = coords - base
        if method == "linear":
            taps = base[:, None] + np.arange(2)
            weights = np.stack([1 - frac, frac], axis=1)
        else:
            taps = base[:, None] + np.arange(-1, 3)
            weights = _cubic_weights(frac, float(cubic_alpha))
            if cubic_exclude:
                weights = np.where((taps < 0) | (taps > in_len - 1), 0.0, weights)
                weights = weights / weights.sum(axis=1, keepdims=True)
    cols = np.clip(taps, 0, in_len - 1).astype(np.int64)
    np.add.at(matrix, (np.broadcast_to(rows, cols.shape), cols), weights)
    outside = (coords < 0) | (coords > in_len - 1)
    return matrix, outside


def _resize2d_kernel(args, attrs):
    data = args[0]
    h_axis, w_axis = _LAYOUTS[attrs.layout]
    in_h, in_w = data.shape[h_axis], data.shape[w_axis]
    out_h, out_w = attrs.size
    y0, x0, y1, x1 = (float(v) for v in attrs.roi)
    how = (attrs.method, attrs.coordinate_transformation_mode, attrs.rounding_method,
           attrs.cubic_alpha, attrs.cubic_exclude)
    mh, outside_h = sampling_matrix(out_h, in_h, *how, y0, y1)
    mw, outside_w = sampling_matrix(out_w, in_w, *how, x0, x1)
    spec = "nchw,Hh,Ww->ncHW" if attrs.layout == "NCHW" else "nhwc,Hh,Ww->nHWc"
    out = np.einsum(spec, data.astype(np.float64), mh, mw)
    if attrs.coordinate_transformation_mode == "tf_crop_and_resize":
        outside = outside_h[:, None] | outside_w[None, :]
        shape = [1, 1, 1, 1]
        shape[h_axis], shape[w_axis] = out_h, out_w
        out = np.where(outside.reshape(shape), float(attrs.extrapolation_value), out)
    dtype = numpy_dtype(attrs.out_dtype) if attrs.out_dtype else data.dtype
    with np.errstate(invalid="ignore", over="ignore"):
        return out.astype(dtype)


register_op(
    "image.resize2d", num_inputs=1, type_relation=_resize2d_rel, kernel=_resize2d_kernel,
    pattern=OpPattern.INJECTIVE,
    attrs={"size": REQUIRED, "roi": (0.0, 0.0, 0.0, 0.0), "layout": "NCHW", "method": "linear",
           "coordinate_transformation_mode": "half_pixel", "rounding_method": "",
           "cubic_alpha": -0.5, "cubic_exclude": 0, "extrapolation_value": 0.0,
           "out_dtype": ""},
    attrs_type_key="relay.attrs.Resize2DAttrs",
    description="Resize the H and W axes of a 4-D image batch by nearest neighbour, bilinear "
    "or bicubic interpolation.",
)


def resize2d(data: Expr, size, roi=None, layout: str = "NCHW", method: str = "linear",
             coordinate_transformation_mode: str = "half_pixel", rounding_method: str = "",
             cubic_alpha: float = -0.5, cubic_exclude: int = 0, extrapolation_value: float = 0.0,
             out_dtype: str | None = None) -> Call:
    """``data`` resized to ``size`` (height, width), as Relay's ``image.resize2d``; ``roi``
    (start_h, start_w, end_h, end_w) is read by tf_crop_and_resize only.  When ``size`` or
    ``roi`` is an expression the call is ``dyn.image.resize2d`` (the other made an int64 or
    float32 constant, as in Relay)."""
    if roi is None:
        roi = (0.0, 0.0, 0.0, 0.0)
    if isinstance(size, Constant):
        size = size.array.reshape(-1).astype("int32").tolist()
    if isinstance(roi, Constant):
        roi = roi.array.reshape(-1).astype("float32").tolist()
    if dynamic_arg(size) or dynamic_arg(roi):
        size = size if isinstance(size, Expr) else const(list(size), "int64")
        roi = roi if isinstance(roi, Expr) else const(list(roi), "float32")
        return dynamic.resize2d(data, size, roi, layout, method, coordinate_transformation_mode,
                                rounding_method, cubic_alpha, cubic_exclude, extrapolation_value,
                                out_dtype)
    roi = tuple(float(v) for v in roi)
    return call("image.resize2d", [data], size=tuple(int(v) for v in size), roi=roi,
                layout=layout, method=method,
                coordinate_transformation_mode=coordinate_transformation_mode,
                rounding_method=rounding_method, cubic_alpha=float(cubic_alpha),
                cubic_exclude=int(cubic_exclude), extrapolation_value=float(extrapolation_value),
                out_dtype="" if out_dtype is None else str(out_dtype))

