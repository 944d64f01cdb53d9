"""Deformable 2-D convolution (``nn.deformable_conv2d``), as in Relay.

Each kernel tap reads the input not at its grid position but moved by a
learned (dy, dx) from ``offset``, bilinearly sampled; a point outside the
input reads 0.  ``offset`` has ``2 * kh * kw * deformable_groups`` channels,
the (dy, dx) pairs of each tap in row-major order, one set per group of input
channels.  Relay's layouts: data ``NCHW`` with kernel ``OIHW``, or ``NHWC``
with ``HWIO``; the offset is in the data's layout.
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
    attr_choice,
    attr_dtype,
    attr_int,
    attr_ints,
    attr_padding,
    dims_equal_or_unknown,
    expect_float,
    expect_rank,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)

__all__ = ["deformable_conv2d"]

_OP = "nn.deformable_conv2d"
#: Relay's data layouts and the kernel layout each goes with.
_KERNELS = {"NCHW": "OIHW", "NHWC": "HWIO"}


def _extent(n: Dim, pad: int, k: int, dilation: int, stride: int) -> Dim:
    if is_any(n):
        return n
    return (n + pad - dilation * (k - 1) - 1) // stride + 1


def _geometry(attrs: Attrs, data: TensorType, weight: TensorType | None = None) -> dict:
    """The checked attributes and the shapes they give for ``data``; without ``channels``
    the output channels are the weight's (no weight shape then)."""
    data_layout = attr_choice(attrs.data_layout, "data_layout", _OP, tuple(_KERNELS))
    attr_choice(attrs.kernel_layout, "kernel_layout", _OP, (_KERNELS[data_layout],))
    out_layout = attrs.out_layout or data_layout
    if out_layout != data_layout:
        raise fail(_OP, f"out_layout {out_layout!r} must be the data layout {data_layout!r}")
    sh, sw = attr_ints(attrs.strides, "strides", _OP, length=2, minimum=1)
    dh, dw = attr_ints(attrs.dilation, "dilation", _OP, length=2, minimum=1)
    top, left, bottom, right = attr_padding(attrs.padding, "padding", _OP)
    groups = attr_int(attrs.groups, "groups", _OP, minimum=1)
    dgroups = attr_int(attrs.deformable_groups, "deformable_groups", _OP, minimum=1)
    if attrs.kernel_size is None:
        raise fail(_OP, "attribute kernel_size is required")
    kh, kw = attr_ints(attrs.kernel_size, "kernel_size", _OP, length=2, minimum=1)
    if attrs.channels is not None:
        channels = attr_int(attrs.channels, "channels", _OP, minimum=1)
    elif weight is not None and weight.ndim == 4:
        channels = weight.shape[0 if data_layout == "NCHW" else 3]
    else:
        channels = None
    attr_dtype(attrs.out_dtype, "out_dtype", _OP, allow_empty=True)
    if data_layout == "NCHW":
        n, c, h, w = data.shape
    else:
        n, h, w, c = data.shape
    for what, count in (("groups", groups), ("deformable_groups", dgroups)):
        if isinstance(c, int) and c % count:
            raise fail(_OP, f"{what}={count} does not divide the {c} input channels of data "
                       f"{shape_str(data.shape)}")
    if isinstance(channels, int) and channels % groups:
        raise fail(_OP, f"groups={groups} does not divide channels={channels}")
    oh = _extent(h, top + bottom, kh, dh, sh)
    ow = _extent(w, left + right, kw, dw, sw)
    if isinstance(oh, int) and oh < 1 or isinstance(ow, int) and ow < 1:
        raise fail(_OP, f"the kernel {kh}x{kw} (dilation {dh}x{dw}) does not fit in data "
                   f"{shape_str(data.shape)} padded by {attrs.padding}")
    taps = 2 * kh * kw * dgroups
    in_per_group = c if is_any(c) else c // groups
    nchw = data_layout == "NCHW"
    shapes = {"offset": (n, taps, oh, ow) if nchw else (n, oh, ow, taps)}
    if channels is not None:
        shapes["weight"] = ((channels, in_per_group, kh, kw) if nchw
                            else (kh, kw, in_per_group, channels))
        shapes["out"] = (n, channels, oh, ow) if nchw else (n, oh, ow, channels)
    return shapes


def _rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    data = expect_tensor(arg_types[0], f"{_OP}: data")
    offset = expect_tensor(arg_types[1], f"{_OP}: offset")
    weight = expect_tensor(arg_types[2], f"{_OP}: weight")
    expect_float(data, _OP, "data")
    expect_rank(data, 4, _OP, "data")
    shapes = _geometry(attrs, data, weight)
    if "out" not in shapes:
        raise fail(_OP, f"without attribute channels the weight must be 4-D, got "
                   f"{shape_str(weight.shape)}")
    for what, ty in (("offset", offset), ("weight", weight)):
        if ty.dtype != data.dtype:
            raise fail(_OP, f"{what} has dtype {ty.dtype} but data has {data.dtype}")
        want = shapes[what]
        if ty.ndim != 4 or not all(dims_equal_or_unknown(a, b) for a, b in zip(ty.shape, want)):
            raise fail(_OP, f"{what} must have shape {shape_str(want)} for data "
                       f"{shape_str(data.shape)} and these attributes, got {shape_str(ty.shape)}")
    return TensorType(shapes["out"], attrs.out_dtype or data.dtype)


def _arg_types(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
    """An offset or weight without a type gets the one the data and attributes imply."""
    data = known[0]
    if type(data) is not TensorType or data.ndim != 4:
        return [None, None, None]
    shapes = _geometry(attrs, data)
    weight = shapes.get("weight")
    return [None, TensorType(shapes["offset"], data.dtype),
            None if weight is None else TensorType(weight, data.dtype)]


def _sample(plane: np.ndarray, h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``plane`` (C, H, W) read bilinearly at points (h, w) of any one shape: (C, *shape).

    A point with h or w outside [0, size) reads 0; inside, the corners past the last
    row or column are that row or column.
    """
    height, width = plane.shape[1:]
    outside = (h < 0) | (w < 0) | (h >= height) | (w >= width)
    h = np.clip(h, 0, height - 1)
    w = np.clip(w, 0, width - 1)
    h0 = np.floor(h).astype(np.int64)
    w0 = np.floor(w).astype(np.int64)
    h1 = np.minimum(h0 + 1, height - 1)
    w1 = np.minimum(w0 + 1, width - 1)
    lh, lw = h - h0, w - w0
    value = ((plane[:, h0, w0] * (1 - lw) + plane[:, h0, w1] * lw) * (1 - lh)
             + (plane[:, h1, w0] * (1 - lw) + plane[:, h1, w1] * lw) * lh)
    return np.where(outside, 0.0, value)


def deformable_conv2d_nchw(data: np.ndarray, offset: np.ndarray, weight: np.ndarray,
                           strides: Sequence[int], padding: Sequence[int],
                           dilation: Sequence[int], deformable_groups: int,
                           groups: int) -> np.ndarray:
    """The NCHW/OIHW computation, in float64; ``padding`` is (top, left, bottom, right)."""
    n, c, _, _ = data.shape
    out_c, in_per_group, kh, kw = weight.shape
    oh, ow = offset.shape[2:]
    taps = offset.reshape(n, deformable_groups, kh, kw, 2, oh, ow).astype(np.float64)
    ys = (np.arange(oh) * strides[0] - padding[0])[:, None]
    xs = (np.arange(ow) * strides[1] - padding[1])[None, :]
    per_dgroup = c // deformable_groups
    cols = np.empty((n, c, kh, kw, oh, ow))
    for b in range(n):
        for g in range(deformable_groups):
            plane = data[b, g * per_dgroup:(g + 1) * per_dgroup].astype(np.float64)
            for i in range(kh):
                for j in range(kw):
                    h = ys + i * dilation[0] + taps[b, g, i, j, 0]
                    w = xs + j * dilation[1] + taps[b, g, i, j, 1]
                    cols[b, g * per_dgroup:(g + 1) * per_dgroup, i, j] = _sample(plane, h, w)
    cols = cols.reshape(n, groups, in_per_group * kh * kw, oh * ow)
    kernel = weight.astype(np.float64).reshape(groups, out_c // groups, in_per_group * kh * kw)
    out = np.einsum("gok,ngkp->ngop", kernel, cols)
    return out.reshape(n, out_c, oh, ow)


def _kernel(args, attrs):
    data, offset, weight = args
    nhwc = attrs.data_layout == "NHWC"
    if nhwc:
        data, offset = data.transpose(0, 3, 1, 2), offset.transpose(0, 3, 1, 2)
        weight = weight.transpose(3, 2, 0, 1)
    out = deformable_conv2d_nchw(data, offset, weight, attrs.strides,
                                 attr_padding(attrs.padding, "padding", _OP), attrs.dilation,
                                 attrs.deformable_groups, attrs.groups)
    if nhwc:
        out = out.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(out.astype(attrs.out_dtype or args[0].dtype))


register_op(
    _OP, num_inputs=3, type_relation=_rel, kernel=_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"strides": (1, 1), "padding": (0, 0), "dilation": (1, 1), "deformable_groups": 1,
           "groups": 1, "channels": None, "kernel_size": None, "data_layout": "NCHW",
           "kernel_layout": "OIHW", "out_layout": "", "out_dtype": ""},
    attrs_type_key="relay.attrs.DeformableConv2DAttrs",
    description="2-D convolution whose taps move by learned offsets, sampled bilinearly.",
)
register_op_attr(_OP, ARG_TYPES, _arg_types)


def deformable_conv2d(data: Expr, offset: Expr, weight: Expr, strides=(1, 1), padding=(0, 0),
                      dilation=(1, 1), deformable_groups: int = 1, groups: int = 1,
                      channels: int | None = None, kernel_size=(3, 3), data_layout: str = "NCHW",
                      kernel_layout: str = "OIHW", out_layout: str = "",
                      out_dtype: str = "") -> Call:
    """Relay's argument order: the offset comes between the data and the weight."""
    def pair(v):
        return (int(v), int(v)) if isinstance(v, int) else tuple(int(x) for x in v)

    return call(_OP, [data, offset, weight], strides=pair(strides),
                padding=tuple(int(p) for p in ((padding,) if isinstance(padding, int)
                                               else padding)),
                dilation=pair(dilation), deformable_groups=int(deformable_groups),
                groups=int(groups), channels=None if channels is None else int(channels),
                kernel_size=pair(kernel_size), data_layout=str(data_layout),
                kernel_layout=str(kernel_layout), out_layout=str(out_layout),
                out_dtype=str(out_dtype))
