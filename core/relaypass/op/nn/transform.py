"""Data-movement operators of neural networks: batch_flatten, pad, dilate, upsampling,
depth_to_space.

``nn.upsampling`` and ``nn.upsampling3d`` sample the input as TVM computes
them, with its resize (:func:`relaypass.op.image.sampling_matrix`): the 2-D
one reads input coordinate ``y * H / OH`` ("asymmetric"), or ``y * (H - 1)
/ (OH - 1)`` with ``align_corners``; the 3-D one takes any of TVM's
coordinate transformation modes.  Nearest-neighbour rounds down (half away
from zero with align_corners), (bi/tri)linear and (bi/tri)cubic (Keys
kernel, a = -0.5) interpolate between clamped neighbours.  The scaled extent
is ``round(n * scale)``, halves to even, as Relay's relations fold it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.expr import Call, Constant, Expr
from ...ir.expr_builders import const
from ...ir.op import REQUIRED, OpPattern, register_op
from ...ir.shape_expr import dim_add
from ...ir.types import Any, TensorType, Type
from .. import dynamic
from ..builder import call, dynamic_arg
from ..image import sampling_matrix
from ..layout import Layout
from ..relations import (
    attr_bool,
    attr_choice,
    attr_int,
    attr_ints,
    attr_number,
    dim_mul,
    dims_product,
    expect_scalar,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)
from .spatial import SPATIAL, spatial_axes

__all__ = ["batch_flatten", "pad", "dilate", "upsampling", "upsampling3d", "depth_to_space"]


# --- batch_flatten ------------------------------------------------------------------------------


def _batch_flatten_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    t = expect_tensor(arg_types[0], "nn.batch_flatten: data")
    if t.ndim == 0:
        raise fail("nn.batch_flatten", "cannot flatten a scalar")
    return TensorType((t.shape[0], dims_product(t.shape[1:])), t.dtype)


def _batch_flatten_kernel(args, attrs):
    x = args[0]
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))


register_op(
    "nn.batch_flatten", num_inputs=1, type_relation=_batch_flatten_rel,
    kernel=_batch_flatten_kernel,
    pattern=OpPattern.INJECTIVE, description="Flatten all axes but the first.",
)


# --- pad ----------------------------------------------------------------------------------------


def _pad_widths(attrs: Attrs, ndim: int) -> list[tuple[int, int]]:
    widths = attrs.pad_width
    ok = isinstance(widths, tuple) and all(
        isinstance(p, tuple) and len(p) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in p)
        for p in widths
    )
    if not ok:
        raise fail("nn.pad", f"pad_width must be a tuple of (before, after) integer pairs, got "
                   f"{widths!r}")
    if len(widths) != ndim:
        raise fail("nn.pad", f"pad_width has {len(widths)} pairs but data has rank {ndim}")
    for k, (a, b) in enumerate(widths):
        if a < 0 or b < 0:
            raise fail("nn.pad", f"pad_width must not be negative; axis {k} has {(a, b)}")
    return list(widths)


def _pad_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "nn.pad: data")
    value = expect_tensor(arg_types[1], "nn.pad: pad_value")
    expect_scalar(value, "nn.pad", "pad_value")
    mode = attr_choice(attrs.pad_mode, "pad_mode", "nn.pad", ("constant", "edge", "reflect"))
    shape = list(t.shape)
    for k, (a, b) in enumerate(_pad_widths(attrs, t.ndim)):
        d = shape[k]
        if is_any(d):
            shape[k] = dim_add(d, a + b)  # n + 2 for a size variable, Any for Any
            continue
        if mode == "reflect" and (a >= d or b >= d):
            raise fail("nn.pad", f"reflect padding {(a, b)} of axis {k} must be smaller than its "
                       f"extent {d}")
        if mode == "edge" and d == 0 and (a or b):
            raise fail("nn.pad", f"cannot edge-pad axis {k}, which is empty")
        shape[k] = d + a + b
    return TensorType(shape, t.dtype)


def _pad_kernel(args, attrs):
    x, value = args
    widths = list(attrs.pad_width)
    if attrs.pad_mode == "constant":
        return np.pad(x, widths, constant_values=np.asarray(value).astype(x.dtype))
    return np.pad(x, widths, mode=attrs.pad_mode)


register_op(
    "nn.pad", num_inputs=2, type_relation=_pad_rel, kernel=_pad_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"pad_width": REQUIRED, "pad_mode": "constant"},
    attrs_type_key="relay.attrs.PadAttrs",
    description="Pad each axis by (before, after) with a value, the edge, or a reflection.",
)


# --- dilate -------------------------------------------------------------------------------------


def dilate_array(x: np.ndarray, strides: Sequence[int], value: float) -> np.ndarray:
    """``x`` with ``stride - 1`` copies of ``value`` between neighbours along each axis."""
    shape = [(d - 1) * s + 1 if d else 0 for d, s in zip(x.shape, strides)]
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = x
    return out


def _dilate_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.dilate"
    t = expect_tensor(arg_types[0], f"{op}: data")
    strides = attr_ints(attrs.strides, "strides", op, length=t.ndim, minimum=1)
    attr_number(attrs.dilation_value, "dilation_value", op)
    shape = [d if isinstance(d, Any) or d == 0 else (d - 1) * s + 1
             for d, s in zip(t.shape, strides)]
    return TensorType(shape, t.dtype)


def _dilate_kernel(args, attrs):
    return dilate_array(args[0], attrs.strides, attrs.dilation_value)


register_op(
    "nn.dilate", num_inputs=1, type_relation=_dilate_rel, kernel=_dilate_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"strides": (1, 1), "dilation_value": 0.0},
    attrs_type_key="relay.attrs.DilateAttrs",
    description="Insert stride - 1 copies of a value between neighbours along each axis.",
)


# --- upsampling ---------------------------------------------------------------------------------


class _Upsampling:
    """``nn.upsampling`` (2-D) or ``nn.upsampling3d``: Relay's names for its attributes."""

    __slots__ = ("name", "nd", "scales", "methods")

    def __init__(self, name: str, nd: int, methods: dict[str, str]):
        self.name, self.nd = name, nd
        self.scales = tuple(f"scale_{a.lower()}" for a in SPATIAL[nd])
        self.methods = methods  # Relay's method name -> the resize method TVM computes it with

    def coordinate_mode(self, attrs: Attrs) -> str:
        if self.nd == 2:
            align = attr_bool(attrs.align_corners, "align_corners", self.name)
            return "align_corners" if align else "asymmetric"
        return attr_choice(attrs.coordinate_transformation_mode, "coordinate_transformation_mode",
                           self.name, _COORDINATE_MODES)


_COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                     "tf_half_pixel_for_nn")


def _scaled(n: int, scale: float, op: str, name: str) -> int:
    # Relay rounds the scaled extent half to even (its constant folding of round).
    size = int(np.rint(n * scale))
    if size < 1 <= n:
        raise fail(op, f"{name}={scale} turns an extent of {n} into {size}")
    return size


def _upsampling_rel(up: _Upsampling):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{up.name}: data")
        axes = spatial_axes(attrs.layout, t.ndim, up.name, up.nd)
        attr_choice(attrs.method, "method", up.name, tuple(up.methods))
        up.coordinate_mode(attrs)
        shape = list(t.shape)
        for k, name in zip(axes, up.scales):
            scale = attr_number(attrs[name], name, up.name)
            if scale <= 0:
                raise fail(up.name, f"{name} must be positive, got {scale}")
            if not is_any(shape[k]):
                shape[k] = _scaled(shape[k], scale, up.name, name)
            elif float(scale).is_integer():  # n*2 for a size variable, Any for Any
                shape[k] = dim_mul(shape[k], int(scale))
            else:
                shape[k] = Any()
        return TensorType(shape, t.dtype)

    return rel


def _upsampling_kernel(up: _Upsampling):
    def kernel(args, attrs):
        x = args[0]
        axes = spatial_axes(attrs.layout, x.ndim, up.name, up.nd)
        method = up.methods[attrs.method]
        mode = up.coordinate_mode(attrs)
        out = x if method == "nearest_neighbor" else x.astype(np.float64)
        for axis, name in zip(axes, up.scales):
            n = x.shape[axis]
            matrix, _ = sampling_matrix(_scaled(n, attrs[name], up.name, name), n, method, mode)
            if method == "nearest_neighbor":  # one tap per output: a gather keeps values exact
                out = np.take(out, matrix.argmax(axis=1), axis=axis)
            else:
                out = np.moveaxis(np.tensordot(matrix, out, axes=([1], [axis])), 0, axis)
        if x.dtype.kind in "iu" and method != "nearest_neighbor":
            out = np.rint(out)
        return np.ascontiguousarray(out).astype(x.dtype, copy=False)

    return kernel


_UPSAMPLING = _Upsampling("nn.upsampling", 2, {"nearest_neighbor": "nearest_neighbor",
                                               "bilinear": "linear", "bicubic": "cubic"})
_UPSAMPLING3D = _Upsampling("nn.upsampling3d", 3, {"nearest_neighbor": "nearest_neighbor",
                                                   "trilinear": "linear", "tricubic": "cubic"})

register_op(
    "nn.upsampling", num_inputs=1, type_relation=_upsampling_rel(_UPSAMPLING),
    kernel=_upsampling_kernel(_UPSAMPLING), pattern=OpPattern.INJECTIVE,
    attrs={"scale_h": REQUIRED, "scale_w": REQUIRED, "layout": "NCHW",
           "method": "nearest_neighbor", "align_corners": False},
    attrs_type_key="relay.attrs.UpSamplingAttrs",
    description="Scale H and W by nearest-neighbour, bilinear or bicubic sampling.",
)
register_op(
    "nn.upsampling3d", num_inputs=1, type_relation=_upsampling_rel(_UPSAMPLING3D),
    kernel=_upsampling_kernel(_UPSAMPLING3D), pattern=OpPattern.INJECTIVE,
    attrs={"scale_d": REQUIRED, "scale_h": REQUIRED, "scale_w": REQUIRED, "layout": "NCDHW",
           "method": "nearest_neighbor", "coordinate_transformation_mode": "half_pixel"},
    attrs_type_key="relay.attrs.UpSampling3DAttrs",
    description="Scale D, H and W by nearest-neighbour, trilinear or tricubic sampling.",
)


# --- depth_to_space -----------------------------------------------------------------------------


def _depth_to_space_layout(attrs: Attrs) -> list[int]:
    return Layout(attrs.layout, "nn.depth_to_space", "layout").require_primal(
        "NCHW", "nn.depth_to_space", "layout")


def _depth_to_space_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.depth_to_space"
    t = expect_tensor(arg_types[0], f"{op}: data")
    bs = attr_int(attrs.block_size, "block_size", op, minimum=1)
    attr_choice(attrs.mode, "mode", op, ("DCR", "CRD"))
    pos = _depth_to_space_layout(attrs)
    if t.ndim != 4:
        raise fail(op, f"data must have rank 4, got shape {shape_str(t.shape)}")
    shape = list(t.shape)
    n, c, h, w = pos
    if not is_any(shape[c]):
        if shape[c] % (bs * bs):
            raise fail(op, f"{shape[c]} channels do not divide into blocks of {bs}x{bs}")
        shape[c] //= bs * bs
    shape[h] = dim_mul(shape[h], bs)
    shape[w] = dim_mul(shape[w], bs)
    return TensorType(shape, t.dtype)


def _depth_to_space_kernel(args, attrs):
    pos = _depth_to_space_layout(attrs)
    x = args[0].transpose(pos)
    n, c, h, w = x.shape
    bs = attrs.block_size
    if attrs.mode == "DCR":
        y = x.reshape(n, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (bs * bs), h * bs, w * bs)
    return np.ascontiguousarray(y.transpose(np.argsort(pos)))


register_op(
    "nn.depth_to_space", num_inputs=1, type_relation=_depth_to_space_rel,
    kernel=_depth_to_space_kernel, pattern=OpPattern.INJECTIVE,
    attrs={"block_size": REQUIRED, "layout": "NCHW", "mode": "DCR"},
    attrs_type_key="relay.attrs.SubPixelAttrs",
    description="Move blocks of channels into spatial blocks (DCR or CRD order).",
)


# --- constructors -------------------------------------------------------------------------------


def batch_flatten(data: Expr) -> Call:
    return call("nn.batch_flatten", [data])


def pad(data: Expr, pad_width, pad_value=0, pad_mode: str = "constant") -> Call:
    """Pad ``data`` by ``pad_width`` ((before, after) per axis); numbers become constants.
    An expression for ``pad_width`` (a matrix) makes ``dyn.nn.pad``."""
    if isinstance(pad_width, Constant):
        pad_width = pad_width.array.tolist()
    if dynamic_arg(pad_width):
        return dynamic.pad(data, pad_width, pad_value if isinstance(pad_value, Expr)
                           else const(pad_value), pad_mode)
    if isinstance(pad_value, (int, float)):
        pad_value = Constant(np.asarray(pad_value, dtype="int32" if isinstance(pad_value, int)
                                        else "float32"))
    widths = tuple(tuple(int(v) for v in pair) for pair in pad_width)
    return call("nn.pad", [data, pad_value], pad_width=widths, pad_mode=pad_mode)


def dilate(data: Expr, strides, dilation_value: float = 0.0) -> Call:
    """``data`` with ``strides[i] - 1`` copies of ``dilation_value`` between neighbours along
    axis ``i`` (``strides`` has one value per axis)."""
    return call("nn.dilate", [data], strides=tuple(strides), dilation_value=float(dilation_value))


def _static_scale(scale, op: str, name: str) -> float:
    """A scale given as a number or a scalar constant, as Relay's static upsampling takes."""
    if isinstance(scale, Constant) and scale.array.ndim == 0:
        return float(scale.array.item())
    if isinstance(scale, Constant):
        raise AttrsError(f"{op}: {name} must be a number or a scalar constant, got a constant "
                         f"of shape {scale.array.shape}")
    return float(scale)


def _scale_arg(scale) -> Expr:
    """A scale of a dynamic upsampling: an expression, or a number as a float64 constant."""
    if isinstance(scale, Constant) and scale.array.ndim == 0:
        scale = scale.array.item()
    return scale if isinstance(scale, Expr) else const(float(scale), "float64")


def upsampling(data: Expr, scale_h=1, scale_w=1, layout: str = "NCHW",
               method: str = "nearest_neighbor", align_corners: bool = False) -> Call:
    """Scale H and W of ``data``; ``method`` is nearest_neighbor, bilinear or bicubic.  An
    expression for a scale makes ``dyn.nn.upsampling`` (numbers become float64 constants)."""
    op = "nn.upsampling"
    if dynamic_arg(scale_h) or dynamic_arg(scale_w):
        scale_h, scale_w = (_scale_arg(s) for s in (scale_h, scale_w))
        return dynamic.upsampling(data, scale_h, scale_w, layout, method, align_corners)
    return call(op, [data], scale_h=_static_scale(scale_h, op, "scale_h"),
                scale_w=_static_scale(scale_w, op, "scale_w"), layout=layout, method=method,
                align_corners=bool(align_corners))


def upsampling3d(data: Expr, scale_d=1, scale_h=1, scale_w=1, layout: str = "NCDHW",
                 method: str = "nearest_neighbor",
                 coordinate_transformation_mode: str = "half_pixel") -> Call:
    """Scale D, H and W of ``data``; ``method`` is nearest_neighbor, trilinear or tricubic.
    An expression for a scale makes ``dyn.nn.upsampling3d``."""
    op = "nn.upsampling3d"
    if any(dynamic_arg(s) for s in (scale_d, scale_h, scale_w)):
        scale_d, scale_h, scale_w = (_scale_arg(s) for s in (scale_d, scale_h, scale_w))
        return dynamic.upsampling3d(data, scale_d, scale_h, scale_w, layout, method,
                                    coordinate_transformation_mode)
    scales = {name: _static_scale(value, op, name)
              for name, value in (("scale_d", scale_d), ("scale_h", scale_h), ("scale_w", scale_w))}
    return call(op, [data], **scales, layout=layout, method=method,
                coordinate_transformation_mode=coordinate_transformation_mode)


def depth_to_space(data: Expr, block_size: int, layout: str = "NCHW", mode: str = "DCR") -> Call:
    return call("nn.depth_to_space", [data], block_size=block_size, layout=layout, mode=mode)
