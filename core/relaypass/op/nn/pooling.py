"""1-, 2- and 3-D pooling: max and average over windows, global and adaptive pooling.

The layout names where the spatial axes are (W; H and W; D, H and W): any
layout with them primal and unsplit works (NCW, NWC, NCHW, NHWC, NCHW16c,
NCDHW, NDHWC), the other axes are carried along.  Output extents follow
Relay: ``(n + pad_before + pad_after - dilated_window) // stride + 1``, with
the division rounded up under ``ceil_mode``.  An average divides by the
number of window positions inside the input, or inside the padded input
with ``count_include_pad`` (never counting the extra positions ``ceil_mode``
adds), as TVM does; max pooling pads with the dtype's lowest value, so a
window over padding only gives that value, as TVM does.

Adaptive pooling splits each spatial axis of extent ``n`` into ``m``
windows, the ``i``-th from ``floor(i * n / m)`` to ``ceil((i + 1) * n / m)``.
As in Relay, ``global_max_pool1d``/``3d`` and ``global_avg_pool1d``/``3d``
build adaptive pooling to extent 1 (only the 2-D global pools are
operators of their own).
"""

from __future__ import annotations

from collections.abc import Sequence
from inspect import Parameter

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import REQUIRED, OpPattern, register_op
from ...ir.types import Any, TensorType, Type
from ..builder import call, pad_tuple, repeat_int
from ..relations import attr_bool, attr_ints, attr_padding, expect_tensor, fail, is_any, shape_str
from .spatial import SPATIAL, rank_constructor, spatial_axes, windows

__all__ = [
    f"{kind}_pool{nd}d" for kind in ("max", "avg", "global_max", "global_avg", "adaptive_max",
                                      "adaptive_avg") for nd in (1, 2, 3)
]


class _Pool:
    """One pooling operator: its name, rank, and whether it averages (else takes the max)."""

    __slots__ = ("name", "nd", "average")

    def __init__(self, kind: str, nd: int, average: bool):
        self.name = f"nn.{kind}_pool{nd}d"
        self.nd = nd
        self.average = average

    @property
    def layout(self) -> str:
        """Relay's default layout of this rank."""
        return "NC" + SPATIAL[self.nd]

    def operand(self, arg_types: Sequence[Type], attrs: Attrs
                ) -> tuple[TensorType, list, tuple[int, ...]]:
        """The data's type, its shape as a list to edit, and the positions of its spatial axes."""
        t = expect_tensor(arg_types[0], f"{self.name}: data")
        return t, list(t.shape), self.axes(attrs, t.ndim)

    def axes(self, attrs: Attrs, rank: int) -> tuple[int, ...]:
        """The positions of the spatial axes in the call's layout, which pooling keeps."""
        if attrs.out_layout not in ("", attrs.layout):
            raise fail(self.name, f"out_layout {attrs.out_layout!r} differs from layout "
                       f"{attrs.layout!r}; pooling keeps the layout")
        return spatial_axes(attrs.layout, rank, self.name, self.nd)


# --- pooling over windows -----------------------------------------------------------------------


class _PoolParams:
    __slots__ = ("pool_size", "strides", "dilation", "padding", "ceil_mode")

    def __init__(self, attrs: Attrs, pool: _Pool):
        op, nd = pool.name, pool.nd
        self.pool_size = attr_ints(attrs.pool_size, "pool_size", op, length=nd, minimum=1)
        self.strides = attr_ints(attrs.strides, "strides", op, length=nd, minimum=1)
        self.dilation = attr_ints(attrs.dilation, "dilation", op, length=nd, minimum=1)
        self.padding = attr_padding(attrs.padding, "padding", op, nd)
        self.ceil_mode = attr_bool(attrs.ceil_mode, "ceil_mode", op)
        if pool.average:
            attr_bool(attrs.count_include_pad, "count_include_pad", op)

    def reach(self, i: int) -> int:
        """The extent of the dilated window along spatial axis ``i``."""
        return (self.pool_size[i] - 1) * self.dilation[i] + 1

    def out_extent(self, n: int, i: int, pool: _Pool) -> int:
        nd = pool.nd
        pads = self.padding[i] + self.padding[nd + i]
        room = n + pads - self.reach(i)
        if not is_any(room) and room < 0:
            raise fail(pool.name, f"the dilated window extent {self.reach(i)} is larger than the "
                       f"padded input extent {n + pads} along {SPATIAL[nd][i]}")
        s = self.strides[i]
        return (room + s - 1) // s + 1 if self.ceil_mode else room // s + 1


def _pool_rel(pool: _Pool):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t, shape, axes = pool.operand(arg_types, attrs)
        p = _PoolParams(attrs, pool)
        for i, k in enumerate(axes):
            # A size variable gives Relay's expression (``floordiv(n - 2, 2) + 1``).
            shape[k] = Any() if isinstance(shape[k], Any) else p.out_extent(shape[k], i, pool)
        return TensorType(shape, t.dtype)

    return rel


def _window_counts(n: int, before: int, after: int, total: int, out_n: int, k: int, s: int,
                   d: int, include_pad: bool) -> np.ndarray:
    """How many positions of each output's window count toward the average."""
    pos = np.arange(total)
    valid = pos < before + n + after if include_pad else (pos >= before) & (pos < before + n)
    taps = (np.arange(out_n) * s)[:, None] + np.arange(k) * d
    return valid[taps].sum(axis=1)


def _lowest(dtype: np.dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _pool_kernel(pool: _Pool):
    nd = pool.nd
    last = tuple(range(-nd, 0))

    def kernel(args, attrs):
        axes = pool.axes(attrs, args[0].ndim)
        p = _PoolParams(attrs, pool)
        x = np.moveaxis(args[0], axes, last)
        dtype = x.dtype
        ins = x.shape[-nd:]
        outs = [p.out_extent(ins[i], i, pool) for i in range(nd)]
        widths = [(0, 0)] * (x.ndim - nd)
        totals = []
        for i in range(nd):
            before = p.padding[i]
            # ceil_mode's last window may reach past the padding: pad far enough for it.
            after = max(p.padding[nd + i], (outs[i] - 1) * p.strides[i] + p.reach(i) - before
                        - ins[i])
            widths.append((before, after))
            totals.append(before + ins[i] + after)
        if pool.average:
            acc = np.float32 if dtype == np.float16 else (np.float64 if dtype.kind in "iu" else dtype)
            xp = np.pad(x.astype(acc, copy=False), widths)
        else:
            xp = np.pad(x, widths, constant_values=_lowest(dtype))
        win = windows(xp, p.pool_size, p.strides, p.dilation)
        win = win[(..., *(slice(0, o) for o in outs), *(slice(None),) * nd)]
        if not pool.average:
            out = win.max(axis=last)
        else:
            divisor = np.ones((), dtype=np.int64)
            for i in range(nd):
                counts = _window_counts(ins[i], p.padding[i], p.padding[nd + i], totals[i],
                                        outs[i], p.pool_size[i], p.strides[i], p.dilation[i],
                                        attrs.count_include_pad)
                divisor = np.multiply.outer(divisor, counts)
            out = win.sum(axis=last) / np.maximum(divisor, 1).astype(win.dtype)
            if dtype.kind in "iu":
                out = np.trunc(out)
        return np.ascontiguousarray(np.moveaxis(out, last, axes)).astype(dtype, copy=False)

    return kernel


def _pool_builder(pool: _Pool):
    nd = pool.nd

    def build(data: Expr, pool_size, strides, dilation, padding, layout, out_layout, ceil_mode,
              count_include_pad=None) -> Call:
        extra = {} if count_include_pad is None else {"count_include_pad": bool(count_include_pad)}
        return call(pool.name, [data], pool_size=repeat_int(pool_size, nd),
                    strides=repeat_int(strides, nd), dilation=repeat_int(dilation, nd),
                    padding=pad_tuple(padding, nd, pool.name), layout=layout,
                    out_layout=out_layout, ceil_mode=bool(ceil_mode), **extra)

    return build


def _register_pool(pool: _Pool):
    nd = pool.nd
    ones, zeros = (1,) * nd, (0,) * nd
    attrs = {"pool_size": REQUIRED, "strides": ones, "dilation": ones, "padding": zeros,
             "layout": pool.layout, "out_layout": "", "ceil_mode": False}
    params = [("data", Parameter.empty), ("pool_size", ones), ("strides", ones),
              ("dilation", ones), ("padding", zeros), ("layout", pool.layout), ("out_layout", ""),
              ("ceil_mode", False)]
    what = "Average" if pool.average else "Maximum"
    if pool.average:
        attrs["count_include_pad"] = False
        params.append(("count_include_pad", False))
    register_op(
        pool.name, num_inputs=1, type_relation=_pool_rel(pool), kernel=_pool_kernel(pool),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs=attrs,
        attrs_type_key=f"relay.attrs.{'Avg' if pool.average else 'Max'}Pool{nd}DAttrs",
        description=f"{what} over {nd}-D windows.",
    )
    return rank_constructor(
        pool.name[3:], params, _pool_builder(pool),
        f"{what} over {nd}-D windows of ``data`` ({pool.layout} by default); an int for "
        f"``pool_size``, ``strides`` or ``dilation`` is repeated, and ``padding`` is normalized "
        f"to (befores..., afters...), as in Relay.")


# --- global and adaptive pooling ----------------------------------------------------------------


def _global_rel(pool: _Pool):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t, shape, axes = pool.operand(arg_types, attrs)
        for k in axes:
            shape[k] = 1
        return TensorType(shape, t.dtype)

    return rel


def _global_kernel(pool: _Pool):
    def kernel(args, attrs):
        x = args[0]
        axes = pool.axes(attrs, x.ndim)
        if pool.average:
            acc = np.float32 if x.dtype == np.float16 else None
            out = np.mean(x, axis=axes, keepdims=True, dtype=acc)
        else:
            out = np.max(x, axis=axes, keepdims=True)
        return np.asarray(out).astype(x.dtype, copy=False)

    return kernel


def _adaptive_size(attrs: Attrs, pool: _Pool) -> tuple[int, ...] | None:
    """The output extents (None: keep the input's), from 0, 1 or ``nd`` values."""
    size = attr_ints(attrs.output_size, "output_size", pool.name, minimum=1)
    if len(size) not in {0, 1, pool.nd}:
        *some, last = sorted({0, 1, pool.nd})
        counts = f"{', '.join(map(str, some))} or {last}"
        raise fail(pool.name, f"output_size must have {counts} values, got {size}")
    if not size:
        return None
    return size * pool.nd if len(size) == 1 else size


def _adaptive_rel(pool: _Pool):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        t, shape, axes = pool.operand(arg_types, attrs)
        size = _adaptive_size(attrs, pool)
        if size is not None:
            for k, m in zip(axes, size):
                if shape[k] == 0:
                    raise fail(pool.name, f"cannot pool the empty {SPATIAL[pool.nd][axes.index(k)]}"
                               f" axis of data of shape {shape_str(t.shape)} to extent {m}")
                shape[k] = m
        return TensorType(shape, t.dtype)

    return rel


def _adaptive_bounds(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def _adaptive_kernel(pool: _Pool):
    def kernel(args, attrs):
        x = args[0]
        axes = pool.axes(attrs, x.ndim)
        size = _adaptive_size(attrs, pool) or tuple(x.shape[k] for k in axes)
        out = x.astype(np.float64) if pool.average else x
        # A window is a box, the product of one interval per axis: its mean is the mean over
        # each axis in turn, its maximum the maximum over each axis in turn.
        for axis, m in zip(axes, size):
            starts, ends = _adaptive_bounds(out.shape[axis], m)
            if pool.average:
                sums = np.cumsum(out, axis=axis)
                sums = np.concatenate([np.zeros_like(np.take(sums, [0], axis=axis)), sums], axis)
                shape = [1] * out.ndim
                shape[axis] = m
                out = ((np.take(sums, ends, axis=axis) - np.take(sums, starts, axis=axis))
                       / (ends - starts).reshape(shape))
            else:
                out = np.stack([np.take(out, range(s, e), axis=axis).max(axis=axis)
                                for s, e in zip(starts, ends)], axis=axis)
        if pool.average and x.dtype.kind in "iu":
            out = np.trunc(out)
        return np.ascontiguousarray(out).astype(x.dtype, copy=False)

    return kernel


def _register_adaptive(pool: _Pool):
    what = "Average" if pool.average else "Maximum"
    register_op(
        pool.name, num_inputs=1, type_relation=_adaptive_rel(pool), kernel=_adaptive_kernel(pool),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
        attrs={"output_size": (), "layout": pool.layout, "out_layout": ""},
        attrs_type_key=f"relay.attrs.AdaptivePool{pool.nd}DAttrs",
        description=f"{what} pooling to a given output size with {pool.nd}-D windows that cover "
                    f"the input.",
    )

    def build(data: Expr, output_size, layout, out_layout) -> Call:
        size = () if output_size is None else repeat_int(output_size, 1)
        return call(pool.name, [data], output_size=tuple(size), layout=layout,
                    out_layout=out_layout)

    return rank_constructor(
        pool.name[3:],
        [("data", Parameter.empty), ("output_size", None), ("layout", pool.layout),
         ("out_layout", "")],
        build,
        f"{what} pooling of ``data`` to ``output_size`` (an int, {pool.nd} ints, or None to "
        f"keep the extents) over the {SPATIAL[pool.nd]} axes.")


def _register_global(pool: _Pool):
    """``global_*_pool2d`` is an operator; the 1-D and 3-D ones are adaptive pools to extent 1."""
    what = "Average" if pool.average else "Maximum"
    if pool.nd == 2:
        register_op(
            pool.name, num_inputs=1, type_relation=_global_rel(pool),
            kernel=_global_kernel(pool), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
            attrs={"layout": "NCHW", "out_layout": ""}, attrs_type_key="relay.attrs.GlobalPool2DAttrs",
            description=f"{what} over the whole H x W plane.",
        )
        target, extra = pool.name, {}
    else:
        target, extra = pool.name.replace("global", "adaptive"), {"output_size": (1,) * pool.nd}

    def build(data: Expr, layout, out_layout) -> Call:
        return call(target, [data], **extra, layout=layout, out_layout=out_layout)

    return rank_constructor(
        pool.name[3:], [("data", Parameter.empty), ("layout", pool.layout), ("out_layout", "")],
        build, f"{what} over all of the {SPATIAL[pool.nd]} axes of ``data`` (``{target}``).")


_FAMILIES = ((_register_pool, ""), (_register_adaptive, "adaptive_"), (_register_global, "global_"))
_CONSTRUCTORS = {f"{prefix}{kind}_pool{nd}d": register(_Pool(prefix + kind, nd, kind == "avg"))
                 for register, prefix in _FAMILIES for kind in ("max", "avg") for nd in (1, 2, 3)}

max_pool1d = _CONSTRUCTORS["max_pool1d"]
max_pool2d = _CONSTRUCTORS["max_pool2d"]
max_pool3d = _CONSTRUCTORS["max_pool3d"]
avg_pool1d = _CONSTRUCTORS["avg_pool1d"]
avg_pool2d = _CONSTRUCTORS["avg_pool2d"]
avg_pool3d = _CONSTRUCTORS["avg_pool3d"]
global_max_pool1d = _CONSTRUCTORS["global_max_pool1d"]
global_max_pool2d = _CONSTRUCTORS["global_max_pool2d"]
global_max_pool3d = _CONSTRUCTORS["global_max_pool3d"]
global_avg_pool1d = _CONSTRUCTORS["global_avg_pool1d"]
global_avg_pool2d = _CONSTRUCTORS["global_avg_pool2d"]
global_avg_pool3d = _CONSTRUCTORS["global_avg_pool3d"]
adaptive_max_pool1d = _CONSTRUCTORS["adaptive_max_pool1d"]
adaptive_max_pool2d = _CONSTRUCTORS["adaptive_max_pool2d"]
adaptive_max_pool3d = _CONSTRUCTORS["adaptive_max_pool3d"]
adaptive_avg_pool1d = _CONSTRUCTORS["adaptive_avg_pool1d"]
adaptive_avg_pool2d = _CONSTRUCTORS["adaptive_avg_pool2d"]
adaptive_avg_pool3d = _CONSTRUCTORS["adaptive_avg_pool3d"]
