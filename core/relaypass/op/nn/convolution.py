"""2-D convolution and transposed convolution.

Any permutation of NCHW is a valid data layout and any permutation of OIHW
(IOHW for the transposed convolution) a valid kernel layout; in a kernel
layout, ``O`` counts output channels and ``I`` input channels per group
(conv2d) or all input channels (conv2d_transpose, whose ``O`` counts output
channels per group), as in Relay.

The kernels build a sliding-window view of the padded input, gather it once
into an (im2col) matrix per group and multiply it with the weights: one
matrix product for the whole batch, never a Python loop over pixels.
Transposed convolution is the convolution of the stride-dilated input with
the flipped, transposed kernel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op, register_op_attr
from ...ir.types import Any, Dim, TensorType, Type
from ..builder import call, pad_tuple2d, repeat_int
from ..layout import Layout
from ..relations import (
    ARG_TYPES,
    attr_dtype,
    attr_int,
    attr_ints,
    attr_padding,
    expect_rank,
    expect_same_dtype,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)

__all__ = ["conv2d", "conv2d_transpose"]

_NCHW = "NCHW"


# --- the numpy core -----------------------------------------------------------------------------


def conv2d_nchw(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Grouped, strided, dilated convolution of NCHW ``x`` with OIHW ``w``."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    if pt or pl or pb or pr:
        x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    sh, sw = strides
    dh, dw = dilation
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = sliding_window_view(x, (ekh, ekw), axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    oh, ow = win.shape[2], win.shape[3]
    g = groups
    og = o // g
    cols = (
        win.reshape(n, g, cg, oh, ow, kh, kw)
        .transpose(1, 0, 3, 4, 2, 5, 6)
        .reshape(g, n * oh * ow, cg * kh * kw)
    )
    ker = w.reshape(g, og, cg * kh * kw).transpose(0, 2, 1)
    out = np.matmul(cols, ker)
    return out.reshape(g, n, oh, ow, og).transpose(1, 0, 4, 2, 3).reshape(n, o, oh, ow)


def _pad_or_crop(x: np.ndarray, axis: int, before: int, after: int) -> np.ndarray:
    """Zero-pad (positive amounts) or crop (negative amounts) one axis."""
    if before > 0 or after > 0:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(before, 0), max(after, 0))
        x = np.pad(x, widths)
    if before < 0 or after < 0:
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-before, 0), x.shape[axis] - max(-after, 0))
        x = x[tuple(index)]
    return x


def conv2d_transpose_nchw(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    output_padding: Sequence[int],
) -> np.ndarray:
    """Transposed convolution of NCHW ``x`` with IOHW ``w`` (I: all input channels)."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    g = groups
    sh, sw = strides
    dh, dw = dilation
    pt, pl, pb, pr = padding
    ker = (
        w.reshape(g, c // g, og, kh, kw)
        .transpose(0, 2, 1, 3, 4)
        .reshape(g * og, c // g, kh, kw)[:, :, ::-1, ::-1]
    )
    xd = np.zeros((n, c, (h - 1) * sh + 1, (wd - 1) * sw + 1), dtype=x.dtype)
    xd[:, :, ::sh, ::sw] = x
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    xd = _pad_or_crop(xd, 2, ekh - 1 - pt, ekh - 1 - pb + output_padding[0])
    xd = _pad_or_crop(xd, 3, ekw - 1 - pl, ekw - 1 - pr + output_padding[1])
    return conv2d_nchw(xd, np.ascontiguousarray(ker), (1, 1), (0, 0, 0, 0), dilation, g)


def _accumulate_dtype(dtype: str) -> str:
    # numpy's float16 matmul is slow and loses precision; accumulate in float32.
    return "float32" if dtype == "float16" else dtype


# --- relations ----------------------------------------------------------------------------------


class _ConvParams:
    """The checked attributes of a convolution call."""

    __slots__ = ("strides", "padding", "dilation", "groups", "data_pos", "kernel_pos", "out_pos",
                 "out_dtype")

    def __init__(self, attrs: Attrs, op_name: str, kernel_letters: str):
        self.strides = attr_ints(attrs.strides, "strides", op_name, length=2, minimum=1)
        self.padding = attr_padding(attrs.padding, "padding", op_name)
        self.dilation = attr_ints(attrs.dilation, "dilation", op_name, length=2, minimum=1)
        self.groups = attr_int(attrs.groups, "groups", op_name, minimum=1)
        if attrs.channels is not None:
            attr_int(attrs.channels, "channels", op_name, minimum=1)
        if attrs.kernel_size is not None:
            attr_ints(attrs.kernel_size, "kernel_size", op_name, length=2, minimum=1)
        self.data_pos = Layout(attrs.data_layout, op_name, "data_layout").require_primal(
            _NCHW, op_name, "data_layout")
        self.kernel_pos = Layout(attrs.kernel_layout, op_name, "kernel_layout").require_primal(
            kernel_letters, op_name, "kernel_layout")
        out = Layout(attrs.out_layout or attrs.data_layout, op_name, "out_layout")
        out.require_primal(_NCHW, op_name, "out_layout")
        self.out_pos = [_NCHW.index(a) for a, _ in out.axes]
        self.out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", op_name, allow_empty=True)

    def out_type(self, nchw: Sequence[Dim], data_dtype: str) -> TensorType:
        """The result type, from its NCHW dimensions, in the output layout."""
        return TensorType([nchw[k] for k in self.out_pos], self.out_dtype or data_dtype)


def _data_and_weight(arg_types: Sequence[Type], op: str) -> tuple[TensorType, TensorType]:
    """The two operands of a convolution: 4-D tensors of one dtype."""
    data = expect_tensor(arg_types[0], f"{op}: data")
    weight = expect_tensor(arg_types[1], f"{op}: weight")
    expect_rank(data, 4, op, "data")
    expect_rank(weight, 4, op, "weight")
    expect_same_dtype(data, weight, op, "data", "weight")
    return data, weight


def _spatial(n: Dim, k: Dim, stride: int, pad: int, dilation: int, op_name: str, axis: str) -> Dim:
    if is_any(n) or is_any(k):
        return Any()
    ek = (k - 1) * dilation + 1
    if n + pad < ek:
        raise fail(op_name, f"the dilated kernel extent {ek} along {axis} is larger than the padded "
                   f"input extent {n + pad}")
    return (n + pad - ek) // stride + 1


def _check_attr_shape(attrs: Attrs, op_name: str, channels: Dim, kh: Dim, kw: Dim) -> None:
    if attrs.channels is not None and not is_any(channels) and attrs.channels != channels:
        raise fail(op_name, f"attribute channels={attrs.channels} but the weight gives "
                   f"{channels} output channels")
    if attrs.kernel_size is not None:
        for want, got in zip(attrs.kernel_size, (kh, kw)):
            if not is_any(got) and want != got:
                raise fail(op_name, f"attribute kernel_size={attrs.kernel_size} but the weight's "
                           f"kernel is {kh}x{kw}")


def _conv2d_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.conv2d"
    data, weight = _data_and_weight(arg_types, op)
    p = _ConvParams(attrs, op, "OIHW")
    n, c, h, w = (data.shape[k] for k in p.data_pos)
    o, i, kh, kw = (weight.shape[k] for k in p.kernel_pos)
    g = p.groups
    if not is_any(c) and not is_any(i) and c != i * g:
        raise fail(op, f"data has {c} input channels (shape {shape_str(data.shape)}) but the weight "
                   f"(shape {shape_str(weight.shape)}) takes {i} per group x {g} groups = {i * g}")
    if not is_any(o) and o % g:
        raise fail(op, f"the weight's {o} output channels do not divide into {g} groups")
    _check_attr_shape(attrs, op, o, kh, kw)
    pt, pl, pb, pr = p.padding
    oh = _spatial(h, kh, p.strides[0], pt + pb, p.dilation[0], op, "H")
    ow = _spatial(w, kw, p.strides[1], pl + pr, p.dilation[1], op, "W")
    return p.out_type((n, o, oh, ow), data.dtype)


def _conv2d_transpose_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.conv2d_transpose"
    data, weight = _data_and_weight(arg_types, op)
    p = _ConvParams(attrs, op, "IOHW")
    oph, opw = attr_ints(attrs.output_padding, "output_padding", op, length=2, minimum=0)
    n, c, h, w = (data.shape[k] for k in p.data_pos)
    i, og, kh, kw = (weight.shape[k] for k in p.kernel_pos)
    g = p.groups
    if not is_any(c) and not is_any(i) and c != i:
        raise fail(op, f"data has {c} input channels (shape {shape_str(data.shape)}) but the weight "
                   f"(shape {shape_str(weight.shape)}) takes {i}")
    if not is_any(c) and c % g:
        raise fail(op, f"the {c} input channels do not divide into {g} groups")
    o = Any() if is_any(og) else og * g
    _check_attr_shape(attrs, op, o, kh, kw)
    pt, pl, pb, pr = p.padding
    spatial = []
    for extent, k, s, d, pads, extra, axis in (
        (h, kh, p.strides[0], p.dilation[0], pt + pb, oph, "H"),
        (w, kw, p.strides[1], p.dilation[1], pl + pr, opw, "W"),
    ):
        if is_any(extent) or is_any(k):
            spatial.append(Any())
            continue
        size = s * (extent - 1) + (k - 1) * d + 1 - pads + extra
        if size < 1:
            raise fail(op, f"padding {p.padding} leaves no output along {axis}")
        spatial.append(size)
    return p.out_type((n, o, spatial[0], spatial[1]), data.dtype)


# --- kernels ------------------------------------------------------------------------------------


def _to(x: np.ndarray, pos: Sequence[int], dtype: str) -> np.ndarray:
    return x.transpose(pos).astype(_accumulate_dtype(dtype), copy=False)


def _conv2d_kernel(args, attrs):
    p = _ConvParams(attrs, "nn.conv2d", "OIHW")
    dtype = p.out_dtype or str(args[0].dtype)
    out = conv2d_nchw(_to(args[0], p.data_pos, dtype), _to(args[1], p.kernel_pos, dtype),
                      p.strides, p.padding, p.dilation, p.groups)
    return np.ascontiguousarray(out.transpose(p.out_pos)).astype(dtype, copy=False)


def _conv2d_transpose_kernel(args, attrs):
    p = _ConvParams(attrs, "nn.conv2d_transpose", "IOHW")
    dtype = p.out_dtype or str(args[0].dtype)
    out = conv2d_transpose_nchw(_to(args[0], p.data_pos, dtype), _to(args[1], p.kernel_pos, dtype),
                                p.strides, p.padding, p.dilation, p.groups, attrs.output_padding)
    return np.ascontiguousarray(out.transpose(p.out_pos)).astype(dtype, copy=False)


_CONV_ATTRS = {
    "strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
    "channels": None, "kernel_size": None, "data_layout": "NCHW", "kernel_layout": "OIHW",
    "out_layout": "", "out_dtype": "",
}

register_op(
    "nn.conv2d", num_inputs=2, type_relation=_conv2d_rel, kernel=_conv2d_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs=_CONV_ATTRS,
    attrs_type_key="relay.attrs.Conv2DAttrs",
    description="2-D convolution with strides, padding, dilation and groups.",
)
register_op(
    "nn.conv2d_transpose", num_inputs=2, type_relation=_conv2d_transpose_rel,
    kernel=_conv2d_transpose_kernel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={  # Relay's Conv2DTransposeAttrs, in its field order
        "channels": None, "kernel_size": None, "strides": (1, 1), "output_padding": (0, 0),
        "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1, "data_layout": "NCHW",
        "kernel_layout": "IOHW", "out_layout": "", "out_dtype": "",
    },
    attrs_type_key="relay.attrs.Conv2DTransposeAttrs",
    description="2-D transposed convolution (the gradient of conv2d with respect to its data).",
)


def _weight_arg_types(op_name: str, letters: str, transpose: bool):
    """The weight's type from ``channels`` and ``kernel_size``, as Relay infers it."""

    def infer(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
        data = known[0]
        if type(data) is not TensorType or attrs.channels is None or attrs.kernel_size is None:
            return [None, None]
        p = _ConvParams(attrs, op_name, letters)
        if data.ndim != 4:
            return [None, None]
        channels = attr_int(attrs.channels, "channels", op_name, minimum=1)
        kh, kw = attrs.kernel_size
        c = data.shape[p.data_pos[1]]
        if transpose:  # IOHW: all input channels, output channels per group
            dims = (c, channels // p.groups, kh, kw)
        else:  # OIHW: output channels, input channels per group
            dims = (channels, Any() if is_any(c) else c // p.groups, kh, kw)
        shape: list[Dim] = [0] * 4
        for letter_index, pos in enumerate(p.kernel_pos):
            shape[pos] = dims[letter_index]
        return [None, TensorType(shape, data.dtype)]

    return infer


register_op_attr("nn.conv2d", ARG_TYPES, _weight_arg_types("nn.conv2d", "OIHW", False))
register_op_attr("nn.conv2d_transpose", ARG_TYPES,
                 _weight_arg_types("nn.conv2d_transpose", "IOHW", True))


# --- constructors -------------------------------------------------------------------------------


def conv2d(
    data: Expr,
    weight: Expr,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups: int = 1,
    channels=None,
    kernel_size=None,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_layout: str = "",
    out_dtype: str = "",
) -> Call:
    """2-D convolution; padding is normalized to (top, left, bottom, right) as in Relay."""
    return call(
        "nn.conv2d", [data, weight], strides=repeat_int(strides, 2),
        padding=pad_tuple2d(padding, "nn.conv2d"), dilation=repeat_int(dilation, 2),
        groups=groups, channels=channels, kernel_size=repeat_int(kernel_size, 2),
        data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
        out_dtype=str(out_dtype),
    )


def conv2d_transpose(
    data: Expr,
    weight: Expr,
    strides=(1, 1),
    padding=(0, 0),
    dilation=(1, 1),
    groups: int = 1,
    channels=None,
    kernel_size=None,
    data_layout: str = "NCHW",
    kernel_layout: str = "IOHW",
    out_layout: str = "",
    output_padding=(0, 0),
    out_dtype: str = "",
) -> Call:
    """2-D transposed convolution; the weight is (in_channels, channels // groups, kh, kw)."""
    return call(
        "nn.conv2d_transpose", [data, weight], strides=repeat_int(strides, 2),
        padding=pad_tuple2d(padding, "nn.conv2d_transpose"), dilation=repeat_int(dilation, 2),
        groups=groups, channels=channels, kernel_size=repeat_int(kernel_size, 2),
        data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
        output_padding=repeat_int(output_padding, 2), out_dtype=str(out_dtype),
    )
