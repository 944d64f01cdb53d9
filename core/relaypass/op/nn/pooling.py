"""2-D pooling: max and average over windows, global and adaptive average.

The layout names where H and W are (any layout with primal, unsplit H and W,
so NCHW, NHWC and NCHW16c all work); the other axes are carried along.
Output extents follow Relay: ``(H + pad_top + pad_bottom - dilated_kernel) //
stride + 1``, with the division rounded up under ``ceil_mode``.  An average
divides by the number of window positions inside the input, or inside the
padded input with ``count_include_pad`` (never counting the extra positions
``ceil_mode`` adds), as TVM does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op
from ...ir.types import Any, TensorType, Type
from ..builder import call, pad_tuple2d, repeat_int
from ..layout import Layout
from ..relations import (
    attr_bool,
    attr_ints,
    attr_padding,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)

__all__ = [
    "max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d", "adaptive_avg_pool2d",
]


def hw_axes(attrs: Attrs, ndim: int, op_name: str) -> tuple[int, int]:
    """The positions of H and W in the call's layout, checked against the data's rank."""
    layout = Layout(attrs.layout, op_name, "layout")
    if attrs.out_layout not in ("", attrs.layout):
        raise fail(op_name, f"out_layout {attrs.out_layout!r} differs from layout "
                   f"{attrs.layout!r}; pooling keeps the layout")
    h, w = layout.index("H"), layout.index("W")
    if h < 0 or w < 0 or layout.factor("H") or layout.factor("W"):
        raise fail(op_name, f"layout {attrs.layout!r} must have unsplit H and W axes")
    if len(layout) != ndim:
        raise fail(op_name, f"data of rank {ndim} does not match layout {attrs.layout!r}")
    return h, w


class _PoolParams:
    __slots__ = ("pool_size", "strides", "dilation", "padding", "ceil_mode")

    def __init__(self, attrs: Attrs, op_name: str):
        self.pool_size = attr_ints(attrs.pool_size, "pool_size", op_name, length=2, minimum=1)
        self.strides = attr_ints(attrs.strides, "strides", op_name, length=2, minimum=1)
        self.dilation = attr_ints(attrs.dilation, "dilation", op_name, length=2, minimum=1)
        self.padding = attr_padding(attrs.padding, "padding", op_name)
        self.ceil_mode = attr_bool(attrs.ceil_mode, "ceil_mode", op_name)

    def out_extent(self, n: int, i: int, op_name: str) -> int:
        pads = self.padding[i] + self.padding[i + 2]
        ek = (self.pool_size[i] - 1) * self.dilation[i] + 1
        room = n + pads - ek
        if room < 0:
            raise fail(op_name, f"the dilated window extent {ek} is larger than the padded input "
                       f"extent {n + pads} along {'HW'[i]}")
        s = self.strides[i]
        return (room + s - 1) // s + 1 if self.ceil_mode else room // s + 1


def _pool2d_rel(op_name: str, avg: bool):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        h, w = hw_axes(attrs, t.ndim, op_name)
        p = _PoolParams(attrs, op_name)
        if avg:
            attr_bool(attrs.count_include_pad, "count_include_pad", op_name)
        shape = list(t.shape)
        for i, k in enumerate((h, w)):
            shape[k] = Any() if is_any(shape[k]) else p.out_extent(shape[k], i, op_name)
        return TensorType(shape, t.dtype)

    return rel


def _window_counts(n: int, before: int, after: int, total: int, out_n: int, k: int, s: int,
                   d: int, include_pad: bool) -> np.ndarray:
    """How many positions of each output's window count toward the average."""
    pos = np.arange(total)
    valid = pos < before + n + after if include_pad else (pos >= before) & (pos < before + n)
    taps = (np.arange(out_n) * s)[:, None] + np.arange(k) * d
    return valid[taps].sum(axis=1)


def _pool2d_kernel(op_name: str, avg: bool):
    def kernel(args, attrs):
        x = args[0]
        h, w = hw_axes(attrs, x.ndim, op_name)
        p = _PoolParams(attrs, op_name)
        x = np.moveaxis(x, (h, w), (-2, -1))
        dtype = x.dtype
        ins = x.shape[-2:]
        outs = [p.out_extent(ins[i], i, op_name) for i in range(2)]
        eks = [(p.pool_size[i] - 1) * p.dilation[i] + 1 for i in range(2)]
        widths = [(0, 0)] * (x.ndim - 2)
        totals = []
        for i in range(2):
            before, after = p.padding[i], p.padding[i + 2]
            need = (outs[i] - 1) * p.strides[i] + eks[i]
            after = max(after, need - before - ins[i])
            widths.append((before, after))
            totals.append(before + ins[i] + after)
        if avg:
            acc = np.float32 if dtype == np.float16 else (np.float64 if dtype.kind in "iu" else dtype)
            xp = np.pad(x.astype(acc, copy=False), widths)
        else:
            # TVM pads max pooling with the lowest value of the dtype (not -inf), so a window
            # that sees only padding gives that value, as TVM does.
            lowest = np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min
            xp = np.pad(x, widths, constant_values=lowest)
        win = sliding_window_view(xp, eks, axis=(-2, -1))
        win = win[..., :: p.strides[0], :: p.strides[1], :: p.dilation[0], :: p.dilation[1]]
        win = win[..., : outs[0], : outs[1], :, :]
        if not avg:
            out = win.max(axis=(-2, -1))
        else:
            counts = [
                _window_counts(ins[i], p.padding[i], p.padding[i + 2], totals[i], outs[i],
                               p.pool_size[i], p.strides[i], p.dilation[i], attrs.count_include_pad)
                for i in range(2)
            ]
            divisor = np.maximum(counts[0][:, None] * counts[1][None, :], 1)
            out = win.sum(axis=(-2, -1)) / divisor.astype(win.dtype)
            if dtype.kind in "iu":
                out = np.trunc(out)
        return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (h, w))).astype(dtype, copy=False)

    return kernel


_POOL_ATTRS = {
    "pool_size": (1, 1), "strides": (1, 1), "dilation": (1, 1), "padding": (0, 0, 0, 0),
    "layout": "NCHW", "out_layout": "", "ceil_mode": False,
}

register_op(
    "nn.max_pool2d", num_inputs=1, type_relation=_pool2d_rel("nn.max_pool2d", False),
    kernel=_pool2d_kernel("nn.max_pool2d", False), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs=_POOL_ATTRS, attrs_type_key="relay.attrs.MaxPool2DAttrs",
    description="Maximum over 2-D windows.",
)
register_op(
    "nn.avg_pool2d", num_inputs=1, type_relation=_pool2d_rel("nn.avg_pool2d", True),
    kernel=_pool2d_kernel("nn.avg_pool2d", True), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={**_POOL_ATTRS, "count_include_pad": False}, attrs_type_key="relay.attrs.AvgPool2DAttrs",
    description="Average over 2-D windows.",
)


# --- global and adaptive pooling ----------------------------------------------------------------


def _global_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t = expect_tensor(arg_types[0], f"{op_name}: data")
        h, w = hw_axes(attrs, t.ndim, op_name)
        shape = list(t.shape)
        shape[h] = shape[w] = 1
        return TensorType(shape, t.dtype)

    return rel


def _global_kernel(op_name: str, avg: bool):
    def kernel(args, attrs):
        x = args[0]
        axes = hw_axes(attrs, x.ndim, op_name)
        if avg:
            acc = np.float32 if x.dtype == np.float16 else None
            out = np.mean(x, axis=axes, keepdims=True, dtype=acc)
        else:
            out = np.max(x, axis=axes, keepdims=True)
        return np.asarray(out).astype(x.dtype, copy=False)

    return kernel


_GLOBAL_ATTRS = {"layout": "NCHW", "out_layout": ""}

register_op(
    "nn.global_max_pool2d", num_inputs=1, type_relation=_global_rel("nn.global_max_pool2d"),
    kernel=_global_kernel("nn.global_max_pool2d", False), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs=_GLOBAL_ATTRS, attrs_type_key="relay.attrs.GlobalPool2DAttrs",
    description="Maximum over the whole H x W plane.",
)
register_op(
    "nn.global_avg_pool2d", num_inputs=1, type_relation=_global_rel("nn.global_avg_pool2d"),
    kernel=_global_kernel("nn.global_avg_pool2d", True), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs=_GLOBAL_ATTRS, attrs_type_key="relay.attrs.GlobalPool2DAttrs",
    description="Average over the whole H x W plane.",
)


def _adaptive_size(attrs: Attrs, op_name: str) -> tuple[int | None, int | None]:
    size = attr_ints(attrs.output_size, "output_size", op_name, minimum=1)
    if len(size) > 2:
        raise fail(op_name, f"output_size has at most 2 values, got {size}")
    if not size:
        return None, None
    return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])


def _adaptive_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    op = "nn.adaptive_avg_pool2d"
    t = expect_tensor(arg_types[0], f"{op}: data")
    h, w = hw_axes(attrs, t.ndim, op)
    oh, ow = _adaptive_size(attrs, op)
    shape = list(t.shape)
    if oh is not None:
        shape[h], shape[w] = oh, ow
    return TensorType(shape, t.dtype)


def _adaptive_bounds(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def _adaptive_kernel(args, attrs):
    op = "nn.adaptive_avg_pool2d"
    x = args[0]
    h, w = hw_axes(attrs, x.ndim, op)
    oh, ow = _adaptive_size(attrs, op)
    xm = np.moveaxis(x, (h, w), (-2, -1)).astype(np.float64)
    ih, iw = xm.shape[-2:]
    oh, ow = (ih, iw) if oh is None else (oh, ow)
    if ih == 0 or iw == 0:
        raise ValueError(f"{op}: cannot pool an input with an empty H or W axis "
                         f"(shape {shape_str(x.shape)})")
    # Window sums from a summed-area table: every window, however its size varies, costs O(1).
    table = np.zeros(xm.shape[:-2] + (ih + 1, iw + 1))
    table[..., 1:, 1:] = xm.cumsum(axis=-2).cumsum(axis=-1)
    hs, he = _adaptive_bounds(ih, oh)
    ws, we = _adaptive_bounds(iw, ow)
    total = (table[..., he[:, None], we[None, :]] - table[..., hs[:, None], we[None, :]]
             - table[..., he[:, None], ws[None, :]] + table[..., hs[:, None], ws[None, :]])
    out = total / ((he - hs)[:, None] * (we - ws)[None, :])
    if x.dtype.kind in "iu":
        out = np.trunc(out)
    return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (h, w))).astype(x.dtype)


register_op(
    "nn.adaptive_avg_pool2d", num_inputs=1, type_relation=_adaptive_rel, kernel=_adaptive_kernel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"output_size": (), "layout": "NCHW", "out_layout": ""},
    attrs_type_key="relay.attrs.AdaptivePool2DAttrs",
    description="Average pooling to a given output size with windows that cover the input.",
)


# --- constructors -------------------------------------------------------------------------------


def max_pool2d(data: Expr, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout: str = "NCHW", out_layout: str = "", ceil_mode: bool = False) -> Call:
    return call(
        "nn.max_pool2d", [data], pool_size=repeat_int(pool_size, 2),
        strides=repeat_int(strides, 2), dilation=repeat_int(dilation, 2),
        padding=pad_tuple2d(padding, "nn.max_pool2d"), layout=layout, out_layout=out_layout,
        ceil_mode=bool(ceil_mode),
    )


def avg_pool2d(data: Expr, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0),
               layout: str = "NCHW", out_layout: str = "", ceil_mode: bool = False,
               count_include_pad: bool = False) -> Call:
    return call(
        "nn.avg_pool2d", [data], pool_size=repeat_int(pool_size, 2),
        strides=repeat_int(strides, 2), dilation=repeat_int(dilation, 2),
        padding=pad_tuple2d(padding, "nn.avg_pool2d"), layout=layout, out_layout=out_layout,
        ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
    )


def global_max_pool2d(data: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    return call("nn.global_max_pool2d", [data], layout=layout, out_layout=out_layout)


def global_avg_pool2d(data: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    return call("nn.global_avg_pool2d", [data], layout=layout, out_layout=out_layout)


def adaptive_avg_pool2d(data: Expr, output_size=None, layout: str = "NCHW",
                        out_layout: str = "") -> Call:
    """Average pooling to ``output_size`` (an int, a pair, or None to keep H and W)."""
    size = () if output_size is None else repeat_int(output_size, 1)
    return call("nn.adaptive_avg_pool2d", [data], output_size=tuple(size), layout=layout,
                out_layout=out_layout)
