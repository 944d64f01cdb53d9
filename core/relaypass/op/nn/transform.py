"""Data-movement operators of neural networks: batch_flatten, pad, upsampling, depth_to_space.

Upsampling samples the input as TVM's ``resize2d`` does: output pixel ``y``
reads input coordinate ``y * H / OH`` ("asymmetric"), or ``y * (H - 1) /
(OH - 1)`` with ``align_corners``; nearest-neighbour rounds down (to nearest
with align_corners), bilinear and bicubic (Keys kernel, a = -0.5) interpolate
between clamped neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Constant, Expr
from ...ir.op import REQUIRED, OpPattern, register_op
from ...ir.types import Any, TensorType, Type
from ..builder import call
from ..layout import Layout
from ..relations import (
    attr_bool,
    attr_choice,
    attr_int,
    attr_number,
    dims_product,
    expect_scalar,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)

__all__ = ["batch_flatten", "pad", "upsampling", "depth_to_space"]


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


# --- upsampling ---------------------------------------------------------------------------------


def _upsampling_axes(attrs: Attrs, ndim: int) -> tuple[int, int]:
    layout = Layout(attrs.layout, "nn.upsampling", "layout")
    h, w = layout.index("H"), layout.index("W")
    if h < 0 or w < 0 or layout.factor("H") or layout.factor("W") or len(layout) != ndim:
        raise fail("nn.upsampling", f"layout {attrs.layout!r} must have unsplit H and W axes and "
                   f"match the data's rank {ndim}")
    return h, w


def _scaled(n: int, scale: float) -> int:
    return int(np.rint(n * scale))


def _upsampling_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.upsampling"
    t = expect_tensor(arg_types[0], f"{op}: data")
    h, w = _upsampling_axes(attrs, t.ndim)
    attr_choice(attrs.method, "method", op, ("nearest_neighbor", "bilinear", "bicubic"))
    attr_bool(attrs.align_corners, "align_corners", op)
    shape = list(t.shape)
    for k, name in ((h, "scale_h"), (w, "scale_w")):
        scale = attr_number(attrs[name], name, op)
        if scale <= 0:
            raise fail(op, f"{name} must be positive, got {scale}")
        if not is_any(shape[k]):
            shape[k] = _scaled(shape[k], scale)
    return TensorType(shape, t.dtype)


def _source_coords(n_in: int, n_out: int, align_corners: bool) -> np.ndarray:
    y = np.arange(n_out, dtype=np.float64)
    if align_corners:
        return y * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    return y * (n_in / n_out)


def _resize_axis(x: np.ndarray, axis: int, n_out: int, method: str, align: bool) -> np.ndarray:
    n_in = x.shape[axis]
    pos = _source_coords(n_in, n_out, align)
    if method == "nearest_neighbor":
        idx = np.rint(pos) if align else np.floor(pos + 1e-5)
        return np.take(x, np.clip(idx.astype(np.int64), 0, n_in - 1), axis=axis)
    base = np.floor(pos)
    t = pos - base
    base = base.astype(np.int64)
    if method == "bilinear":
        offsets, weights = (0, 1), (1.0 - t, t)
    else:
        a = -0.5
        t2, t3 = t * t, t * t * t
        offsets = (-1, 0, 1, 2)
        weights = (
            a * (t3 - 2 * t2 + t),
            (a + 2) * t3 - (a + 3) * t2 + 1,
            -(a + 2) * t3 + (2 * a + 3) * t2 - a * t,
            -a * t3 + a * t2,
        )
    shape = [1] * x.ndim
    shape[axis] = n_out
    out = 0.0
    for off, wgt in zip(offsets, weights):
        taps = np.take(x, np.clip(base + off, 0, n_in - 1), axis=axis)
        out = out + taps * wgt.reshape(shape)
    return out


def _upsampling_kernel(args, attrs):
    x = args[0]
    h, w = _upsampling_axes(attrs, x.ndim)
    oh, ow = _scaled(x.shape[h], attrs.scale_h), _scaled(x.shape[w], attrs.scale_w)
    work = x if attrs.method == "nearest_neighbor" else x.astype(np.float64)
    out = _resize_axis(work, h, oh, attrs.method, attrs.align_corners)
    out = _resize_axis(out, w, ow, attrs.method, attrs.align_corners)
    if x.dtype.kind in "iu" and attrs.method != "nearest_neighbor":
        out = np.rint(out)
    return np.asarray(out).astype(x.dtype, copy=False)


register_op(
    "nn.upsampling", num_inputs=1, type_relation=_upsampling_rel, kernel=_upsampling_kernel,
    pattern=OpPattern.INJECTIVE,
    attrs={"scale_h": 1.0, "scale_w": 1.0, "layout": "NCHW", "method": "nearest_neighbor",
           "align_corners": False},
    attrs_type_key="relay.attrs.UpSamplingAttrs",
    description="Scale H and W by nearest-neighbour, bilinear or bicubic sampling.",
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
    shape[h] = Any() if is_any(shape[h]) else shape[h] * bs
    shape[w] = Any() if is_any(shape[w]) else shape[w] * bs
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
    """Pad ``data`` by ``pad_width`` ((before, after) per axis); numbers become constants."""
    if isinstance(pad_value, (int, float)):
        pad_value = Constant(np.asarray(pad_value, dtype="int32" if isinstance(pad_value, int)
                                        else "float32"))
    widths = tuple(tuple(int(v) for v in pair) for pair in pad_width)
    return call("nn.pad", [data, pad_value], pad_width=widths, pad_mode=pad_mode)


def upsampling(data: Expr, scale_h: float = 1, scale_w: float = 1, layout: str = "NCHW",
               method: str = "nearest_neighbor", align_corners: bool = False) -> Call:
    return call("nn.upsampling", [data], scale_h=float(scale_h), scale_w=float(scale_w),
                layout=layout, method=method, align_corners=bool(align_corners))


def depth_to_space(data: Expr, block_size: int, layout: str = "NCHW", mode: str = "DCR") -> Call:
    return call("nn.depth_to_space", [data], block_size=block_size, layout=layout, mode=mode)
