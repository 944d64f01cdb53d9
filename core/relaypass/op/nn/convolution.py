"""1-, 2- and 3-D convolution and transposed convolution: ``nn.conv1d`` ... ``nn.conv3d_transpose``.

Any permutation of NCW, NCHW or NCDHW is a valid data layout, and any
permutation of OIW, OIHW or OIDHW (IOW, IOHW, IODHW for the transposed
convolutions) a valid kernel layout; in a kernel layout, ``O`` counts output
channels and ``I`` input channels per group (convolution) or all input
channels (transposed convolution, whose ``O`` counts output channels per
group), as in Relay.  Padding is (befores..., afters...): (left, right),
(top, left, bottom, right), (front, top, left, back, bottom, right).

The kernels build a sliding-window view of the padded input, gather it once
into an (im2col) matrix per group and multiply it with the weights: one
matrix product for the whole batch, never a Python loop over positions.
Transposed convolution is the convolution of the stride-dilated input
(``nn.dilate``'s kernel) with the flipped, transposed kernel.

Two cases where Relay's relations disagree with its own kernels are typed
by the kernels: a grouped ``conv1d`` given no ``channels``/``kernel_size``
(Relay's relation forgets to divide the data's channels by the groups), and
a grouped transposed convolution given no ``channels`` (Relay's relation
says ``O`` output channels, its kernels compute ``O * groups``).
"""

from __future__ import annotations

from collections.abc import Sequence
from inspect import Parameter

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr
from ...ir.op import OpPattern, register_op, register_op_attr
from ...ir.types import Any, Dim, TensorType, Type
from ..builder import call, pad_tuple, repeat_int
from ..layout import Layout
from ..relations import (
    ARG_TYPES,
    attr_dtype,
    attr_int,
    attr_ints,
    attr_padding,
    expect_rank,
    expect_tensor,
    fail,
    is_any,
    shape_str,
)
from .spatial import SPATIAL, rank_constructor, windows
from .transform import dilate_array

__all__ = ["conv1d", "conv2d", "conv3d", "conv1d_transpose", "conv2d_transpose",
           "conv3d_transpose"]


# --- the numpy core -----------------------------------------------------------------------------


def conv_nd(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Grouped, strided, dilated convolution of (N, C, *spatial) ``x`` with (O, C/groups,
    *kernel) ``w``; ``padding`` is (befores..., afters...)."""
    nd = x.ndim - 2
    n = x.shape[0]
    o, cg, *kernel = w.shape
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0), *zip(padding[:nd], padding[nd:])])
    win = windows(x, kernel, strides, dilation)  # (n, c, *outputs, *kernel)
    outputs = win.shape[2:2 + nd]
    g = groups
    og = o // g
    positions = int(np.prod(outputs, dtype=np.int64))
    taps = cg * int(np.prod(kernel, dtype=np.int64))
    spatial = range(3, 3 + nd)
    cols = (
        win.reshape(n, g, cg, *outputs, *kernel)
        .transpose(1, 0, *spatial, 2, *range(3 + nd, 3 + 2 * nd))
        .reshape(g, n * positions, taps)
    )
    out = np.matmul(cols, w.reshape(g, og, taps).transpose(0, 2, 1))
    return out.reshape(g, n, *outputs, og).transpose(1, 0, 2 + nd, *range(2, 2 + nd)).reshape(
        n, o, *outputs)


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


def conv_transpose_nd(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    output_padding: Sequence[int],
) -> np.ndarray:
    """Transposed convolution of (N, C, *spatial) ``x`` with (C, O/groups, *kernel) ``w``."""
    nd = x.ndim - 2
    c = x.shape[1]
    _, og, *kernel = w.shape
    g = groups
    flip = (slice(None), slice(None), *(slice(None, None, -1),) * nd)
    ker = w.reshape(g, c // g, og, *kernel).swapaxes(1, 2).reshape(g * og, c // g, *kernel)[flip]
    xd = dilate_array(x, (1, 1, *strides), 0)
    for i in range(nd):
        reach = (kernel[i] - 1) * dilation[i]
        xd = _pad_or_crop(xd, 2 + i, reach - padding[i], reach - padding[nd + i] + output_padding[i])
    return conv_nd(xd, np.ascontiguousarray(ker), (1,) * nd, (0,) * (2 * nd), dilation, g)


def _accumulate_dtype(dtype: str) -> str:
    # numpy's float16 matmul is slow and loses precision; accumulate in float32.
    return "float32" if dtype == "float16" else dtype


# --- the operators ------------------------------------------------------------------------------


class _Conv:
    """One operator of the family: its rank, whether it is transposed, its canonical layouts."""

    __slots__ = ("nd", "transpose", "name", "data_letters", "kernel_letters")

    def __init__(self, nd: int, transpose: bool):
        self.nd = nd
        self.transpose = transpose
        self.name = f"nn.conv{nd}d" + ("_transpose" if transpose else "")
        self.data_letters = "NC" + SPATIAL[nd]
        self.kernel_letters = ("IO" if transpose else "OI") + SPATIAL[nd]


class _ConvParams:
    """The checked attributes of a convolution call."""

    __slots__ = ("strides", "padding", "dilation", "groups", "output_padding", "data_pos",
                 "kernel_pos", "out_pos", "out_dtype")

    def __init__(self, attrs: Attrs, conv: _Conv):
        op, nd = conv.name, conv.nd
        self.strides = attr_ints(attrs.strides, "strides", op, length=nd, minimum=1)
        self.padding = attr_padding(attrs.padding, "padding", op, nd)
        self.dilation = attr_ints(attrs.dilation, "dilation", op, length=nd, minimum=1)
        self.groups = attr_int(attrs.groups, "groups", op, minimum=1)
        self.output_padding = (attr_ints(attrs.output_padding, "output_padding", op, length=nd,
                                         minimum=0) if conv.transpose else (0,) * nd)
        if attrs.channels is not None:
            attr_int(attrs.channels, "channels", op, minimum=1)
        if attrs.kernel_size is not None:
            attr_ints(attrs.kernel_size, "kernel_size", op, length=nd, minimum=1)
        self.data_pos = Layout(attrs.data_layout, op, "data_layout").require_primal(
            conv.data_letters, op, "data_layout")
        self.kernel_pos = Layout(attrs.kernel_layout, op, "kernel_layout").require_primal(
            conv.kernel_letters, op, "kernel_layout")
        out = Layout(attrs.out_layout or attrs.data_layout, op, "out_layout")
        out.require_primal(conv.data_letters, op, "out_layout")
        self.out_pos = [conv.data_letters.index(a) for a, _ in out.axes]
        self.out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", op, allow_empty=True)

    def out_type(self, canonical: Sequence[Dim], data_dtype: str) -> TensorType:
        """The result type, from its dimensions in the canonical layout, in the output layout."""
        return TensorType([canonical[k] for k in self.out_pos], self.out_dtype or data_dtype)


def _extent(conv: _Conv, p: _ConvParams, i: int, n: Dim, k: Dim) -> Dim:
    """The output extent of spatial axis ``i``, input extent ``n`` and kernel extent ``k``."""
    if is_any(n) or is_any(k):
        return Any()
    axis = SPATIAL[conv.nd][i]
    pads = p.padding[i] + p.padding[conv.nd + i]
    reach = (k - 1) * p.dilation[i] + 1
    if conv.transpose:
        size = p.strides[i] * (n - 1) + reach - pads + p.output_padding[i]
        if size < 1:
            raise fail(conv.name, f"padding {p.padding} leaves no output along {axis}")
        return size
    if n + pads < reach:
        raise fail(conv.name, f"the dilated kernel extent {reach} along {axis} is larger than "
                   f"the padded input extent {n + pads}")
    return (n + pads - reach) // p.strides[i] + 1


def _check_attr_shape(attrs: Attrs, op: str, channels: Dim, kernel: Sequence[Dim]) -> None:
    if attrs.channels is not None and not is_any(channels) and attrs.channels != channels:
        raise fail(op, f"attribute channels={attrs.channels} but the weight gives "
                   f"{channels} output channels")
    if attrs.kernel_size is not None:
        for want, got in zip(attrs.kernel_size, kernel):
            if not is_any(got) and want != got:
                raise fail(op, f"attribute kernel_size={attrs.kernel_size} but the weight's "
                           f"kernel is {'x'.join(map(str, kernel))}")


def _relation(conv: _Conv):
    op = conv.name

    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        # Data and weight may differ in dtype (uint8 data, int8 weight), as in Relay.
        data = expect_tensor(arg_types[0], f"{op}: data")
        weight = expect_tensor(arg_types[1], f"{op}: weight")
        expect_rank(data, conv.nd + 2, op, "data")
        expect_rank(weight, conv.nd + 2, op, "weight")
        p = _ConvParams(attrs, conv)
        n, c, *extents = (data.shape[k] for k in p.data_pos)
        first, second, *kernel = (weight.shape[k] for k in p.kernel_pos)
        g = p.groups
        known = not is_any(c) and not is_any(first)
        shapes = f"(shape {shape_str(data.shape)}) but the weight (shape {shape_str(weight.shape)})"
        if conv.transpose:
            if known and c != first:
                raise fail(op, f"data has {c} input channels {shapes} takes {first}")
            if not is_any(c) and c % g:
                raise fail(op, f"the {c} input channels do not divide into {g} groups")
            o = Any() if is_any(second) else second * g
        else:
            o = first
            if not is_any(c) and not is_any(second) and c != second * g:
                raise fail(op, f"data has {c} input channels {shapes} takes {second} per group "
                           f"x {g} groups = {second * g}")
            if not is_any(o) and o % g:
                raise fail(op, f"the weight's {o} output channels do not divide into {g} groups")
        _check_attr_shape(attrs, op, o, kernel)
        out = [_extent(conv, p, i, extents[i], kernel[i]) for i in range(conv.nd)]
        return p.out_type((n, o, *out), data.dtype)

    return rel


def _to(x: np.ndarray, pos: Sequence[int], dtype: str) -> np.ndarray:
    return x.transpose(pos).astype(_accumulate_dtype(dtype), copy=False)


def _kernel(conv: _Conv):
    def kernel(args, attrs):
        p = _ConvParams(attrs, conv)
        dtype = p.out_dtype or str(args[0].dtype)
        x, w = _to(args[0], p.data_pos, dtype), _to(args[1], p.kernel_pos, dtype)
        if conv.transpose:
            out = conv_transpose_nd(x, w, p.strides, p.padding, p.dilation, p.groups,
                                    p.output_padding)
        else:
            out = conv_nd(x, w, p.strides, p.padding, p.dilation, p.groups)
        return np.ascontiguousarray(out.transpose(p.out_pos)).astype(dtype, copy=False)

    return kernel


def _weight_arg_types(conv: _Conv):
    """The weight's type from ``channels`` and ``kernel_size``, as Relay infers it."""

    def infer(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
        data = known[0]
        if type(data) is not TensorType or attrs.channels is None or attrs.kernel_size is None:
            return [None, None]
        if data.ndim != conv.nd + 2:
            return [None, None]
        p = _ConvParams(attrs, conv)
        channels = attr_int(attrs.channels, "channels", conv.name, minimum=1)
        c = data.shape[p.data_pos[1]]
        if conv.transpose:  # IO...: all input channels, output channels per group
            dims = (c, channels // p.groups, *attrs.kernel_size)
        else:  # OI...: output channels, input channels per group
            dims = (channels, Any() if is_any(c) else c // p.groups, *attrs.kernel_size)
        shape: list[Dim] = [0] * len(dims)
        for letter_index, pos in enumerate(p.kernel_pos):
            shape[pos] = dims[letter_index]
        return [None, TensorType(shape, data.dtype)]

    return infer


def _attrs(conv: _Conv) -> dict:
    """Relay's Conv{1,2,3}DAttrs or Conv{1,2,3}DTransposeAttrs, in their field order."""
    nd = conv.nd
    ones, zeros = (1,) * nd, (0,) * nd
    layouts = {"data_layout": conv.data_letters, "kernel_layout": conv.kernel_letters,
               "out_layout": "", "out_dtype": ""}
    if conv.transpose:
        return {"channels": None, "kernel_size": None, "strides": ones, "output_padding": zeros,
                "padding": zeros, "dilation": ones, "groups": 1, **layouts}
    # Relay's default padding has two values for conv1d and conv2d, three for conv3d.
    return {"strides": ones, "padding": (0,) * max(nd, 2), "dilation": ones, "groups": 1,
            "channels": None, "kernel_size": None, **layouts}


def _builder(conv: _Conv):
    nd = conv.nd

    def build(data: Expr, weight: Expr, strides, padding, dilation, groups, channels, kernel_size,
              data_layout, kernel_layout, out_layout, out_dtype, output_padding=None) -> Call:
        extra = {} if output_padding is None else {"output_padding": repeat_int(output_padding, nd)}
        return call(
            conv.name, [data, weight], strides=repeat_int(strides, nd),
            padding=pad_tuple(padding, nd, conv.name), dilation=repeat_int(dilation, nd),
            groups=groups, channels=channels, kernel_size=repeat_int(kernel_size, nd),
            data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout,
            out_dtype=str(out_dtype), **extra,
        )

    return build


def _parameters(conv: _Conv) -> list[tuple[str, object]]:
    """Relay's parameters of ``relay.nn.conv{1,2,3}d[_transpose]``, in order."""
    ones, zeros = (1,) * conv.nd, (0,) * conv.nd
    params = [("data", Parameter.empty), ("weight", Parameter.empty), ("strides", ones),
              ("padding", zeros), ("dilation", ones), ("groups", 1), ("channels", None),
              ("kernel_size", None), ("data_layout", conv.data_letters),
              ("kernel_layout", conv.kernel_letters), ("out_layout", "")]
    if conv.transpose:
        params.append(("output_padding", zeros))
    return [*params, ("out_dtype", "")]


_DESCRIPTIONS = {
    False: "{nd}-D convolution with strides, padding, dilation and groups.",
    True: "{nd}-D transposed convolution (the gradient of conv{nd}d with respect to its data).",
}

_DOCS = {
    False: "{nd}-D convolution of ``data`` ({data}) with ``weight`` ({kernel}); an int for "
           "``strides``, ``dilation`` or ``kernel_size`` is repeated, and ``padding`` is "
           "normalized to (befores..., afters...), as in Relay.",
    True: "{nd}-D transposed convolution of ``data`` ({data}) with ``weight`` ({kernel}: "
          "all input channels, output channels per group); ``output_padding`` adds to the "
          "far end of each spatial axis, as in Relay.",
}

def _register(conv: _Conv):
    """Register ``conv`` with Relay's attributes, and make its constructor."""
    suffix = "Transpose" if conv.transpose else ""
    register_op(
        conv.name, num_inputs=2, type_relation=_relation(conv), kernel=_kernel(conv),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs=_attrs(conv),
        attrs_type_key=f"relay.attrs.Conv{conv.nd}D{suffix}Attrs",
        description=_DESCRIPTIONS[conv.transpose].format(nd=conv.nd),
    )
    register_op_attr(conv.name, ARG_TYPES, _weight_arg_types(conv))
    return rank_constructor(
        conv.name[3:], _parameters(conv), _builder(conv),
        _DOCS[conv.transpose].format(nd=conv.nd, data=conv.data_letters,
                                     kernel=conv.kernel_letters))


_CONSTRUCTORS = {conv.name: _register(conv)
                 for conv in (_Conv(nd, t) for nd in (1, 2, 3) for t in (False, True))}

conv1d = _CONSTRUCTORS["nn.conv1d"]
conv2d = _CONSTRUCTORS["nn.conv2d"]
conv3d = _CONSTRUCTORS["nn.conv3d"]
conv1d_transpose = _CONSTRUCTORS["nn.conv1d_transpose"]
conv2d_transpose = _CONSTRUCTORS["nn.conv2d_transpose"]
conv3d_transpose = _CONSTRUCTORS["nn.conv3d_transpose"]
