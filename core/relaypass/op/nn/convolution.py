"""1-, 2- and 3-D convolution and transposed convolution: ``nn.conv1d`` ... ``nn.conv3d_transpose``.

Any permutation of NCW, NCHW or NCDHW is a valid data layout, and any
permutation of OIW, OIHW or OIDHW (IOW, IOHW, IODHW for the transposed
convolutions) a valid kernel layout, each axis possibly split into blocks
(``NCHW16c`` data, ``OIHW16i16o`` kernel) as Relay's relations allow, so that
AlterOpLayout can ask for the blocked layouts a target prefers; in a kernel
layout, ``O`` counts output channels and ``I`` input channels per group
(convolution) or all input channels (transposed convolution, whose ``O``
counts output channels per group), as in Relay.  Padding is (befores..., afters...): (left, right),
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
from ..layout import Layout, parse_layout, transform_array
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
           "conv3d_transpose", "contrib_conv2d_nchwc", "contrib_depthwise_conv2d_nchwc"]


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
    """One operator of the family: its rank, whether it is transposed, its canonical layouts.

    ``name`` is given for the blocked 2-D variants (``nn.contrib_conv2d_NCHWc``...);
    ``packed`` says the weight may arrive in topi's packed form whatever ``kernel_layout``
    says (see :func:`_weight_layout`).
    """

    __slots__ = ("nd", "transpose", "name", "data_letters", "kernel_letters", "packed")

    def __init__(self, nd: int, transpose: bool, name: str | None = None, packed: bool = False):
        self.nd = nd
        self.transpose = transpose
        self.name = name or f"nn.conv{nd}d" + ("_transpose" if transpose else "")
        self.packed = packed
        self.data_letters = "NC" + SPATIAL[nd]
        self.kernel_letters = ("IO" if transpose else "OI") + SPATIAL[nd]


class _ConvParams:
    """The checked attributes of a convolution call."""

    __slots__ = ("strides", "padding", "dilation", "groups", "output_padding", "data_layout",
                 "kernel_layout", "out_layout", "out_dtype")

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
        self.data_layout = _conv_layout(attrs.data_layout, conv.data_letters, op, "data_layout")
        self.kernel_layout = _conv_layout(attrs.kernel_layout, conv.kernel_letters, op,
                                         "kernel_layout")
        self.out_layout = _conv_layout(attrs.out_layout or attrs.data_layout, conv.data_letters,
                                      op, "out_layout")
        self.out_dtype = attr_dtype(attrs.out_dtype, "out_dtype", op, allow_empty=True)

    def out_type(self, conv: _Conv, canonical: Sequence[Dim], data_dtype: str) -> TensorType:
        """The result type, from its dimensions in the canonical layout, in the output layout."""
        shape = self.out_layout.shape_from_primal(dict(zip(conv.data_letters, canonical)),
                                                  conv.name)
        return TensorType(shape, self.out_dtype or data_dtype)


def _conv_layout(name: str, letters: str, op: str, what: str) -> Layout:
    """The layout ``name`` of a convolution's data, kernel or output: a permutation of
    ``letters``, each axis possibly split into blocks (``NCHW16c``, ``OIHW16i16o``), as
    Relay's relations accept any layout convertible to the canonical one."""
    parsed = parse_layout(name, op, what)
    if sorted(parsed.primal) != sorted(letters):
        raise fail(op, f"{what} {name!r} is not supported; use a permutation of {letters!r}, "
                   f"whose axes may be split into blocks (as in {letters + '4' + letters[1].lower()!r})")
    return parsed


def _weight_layout(conv: _Conv, p: _ConvParams, shape: Sequence[Dim]) -> Layout:
    """The layout the weight is in: ``kernel_layout``, or for ``nn.contrib_conv2d_NCHWc``
    given a 6-D weight under a 4-D ``kernel_layout`` (Relay's tests build such calls, and
    topi's kernel reads the weight by its shape), topi's packed layout
    ``OIHW{i}i{o}o`` with the blocks the weight's last two extents give."""
    layout = p.kernel_layout
    if conv.packed and len(shape) == 6 and len(layout) == 4 and layout.is_primal \
            and all(isinstance(d, int) for d in shape[4:]):
        return Layout(f"OIHW{shape[4]}i{shape[5]}o", conv.name, "kernel_layout")
    return layout


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
        p = _ConvParams(attrs, conv)
        expect_rank(data, len(p.data_layout), op, "data")
        weight_layout = _weight_layout(conv, p, weight.shape)
        expect_rank(weight, len(weight_layout), op, "weight")
        by_letter = p.data_layout.primal_extents(data.shape, op)
        n, c, *extents = (by_letter[a] for a in conv.data_letters)
        by_letter = weight_layout.primal_extents(weight.shape, op)
        first, second, *kernel = (by_letter[a] for a in conv.kernel_letters)
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
        return p.out_type(conv, (n, o, *out), data.dtype)

    return rel


def _kernel(conv: _Conv):
    data_canonical = parse_layout(conv.data_letters, conv.name)
    kernel_canonical = parse_layout(conv.kernel_letters, conv.name)

    def kernel(args, attrs):
        p = _ConvParams(attrs, conv)
        dtype = p.out_dtype or str(args[0].dtype)
        acc = _accumulate_dtype(dtype)
        x = transform_array(args[0], p.data_layout, data_canonical).astype(acc, copy=False)
        w = transform_array(args[1], _weight_layout(conv, p, args[1].shape),
                            kernel_canonical).astype(acc, copy=False)
        if conv.transpose:
            out = conv_transpose_nd(x, w, p.strides, p.padding, p.dilation, p.groups,
                                    p.output_padding)
        else:
            out = conv_nd(x, w, p.strides, p.padding, p.dilation, p.groups)
        out = transform_array(out, data_canonical, p.out_layout)
        return np.ascontiguousarray(out).astype(dtype, copy=False)

    return kernel


def _weight_arg_types(conv: _Conv):
    """The weight's type from ``channels`` and ``kernel_size``, as Relay infers it."""

    def infer(known: Sequence[Type | None], attrs: Attrs) -> list[Type | None]:
        data = known[0]
        if type(data) is not TensorType or attrs.channels is None or attrs.kernel_size is None:
            return [None, None]
        p = _ConvParams(attrs, conv)
        if data.ndim != len(p.data_layout):
            return [None, None]
        channels = attr_int(attrs.channels, "channels", conv.name, minimum=1)
        c = p.data_layout.primal_extents(data.shape, conv.name)["C"]
        if conv.transpose:  # IO...: all input channels, output channels per group
            dims = (c, channels // p.groups, *attrs.kernel_size)
        else:  # OI...: output channels, input channels per group
            dims = (channels, Any() if is_any(c) else c // p.groups, *attrs.kernel_size)
        by_letter = dict(zip(conv.kernel_letters, dims))
        return [None, TensorType(p.kernel_layout.shape_from_primal(by_letter, conv.name),
                                 data.dtype)]

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


# --- the blocked 2-D variants AlterOpLayout produces ---------------------------------------------
#
# Relay's x86 and CUDA alter hooks replace conv2d by these (NCHW8c data, OIHW8i8o kernel);
# they compute what conv2d computes, named apart so that a backend can pick a blocked
# kernel.  They take Relay's Conv2DAttrs.


def _register_blocked(conv: _Conv, description: str) -> None:
    register_op(
        conv.name, num_inputs=2, type_relation=_relation(conv), kernel=_kernel(conv),
        pattern=OpPattern.OUT_ELEMWISE_FUSABLE, attrs=_attrs(conv),
        attrs_type_key="relay.attrs.Conv2DAttrs", description=description,
    )


def _blocked_builder(conv: _Conv):
    build = _builder(conv)

    def construct(data: Expr, kernel: Expr, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
                  groups=1, channels=None, kernel_size=None, data_layout="NCHW8c",
                  kernel_layout="OIHW", out_layout="", out_dtype="") -> Call:
        return build(data, kernel, strides, padding, dilation, groups, channels, kernel_size,
                     data_layout, kernel_layout, out_layout, out_dtype)

    return construct


_NCHWC = _Conv(2, False, "nn.contrib_conv2d_NCHWc", packed=True)
_DEPTHWISE_NCHWC = _Conv(2, False, "nn.contrib_depthwise_conv2d_NCHWc")
_register_blocked(_NCHWC, "2-D convolution of blocked (NCHW8c-style) data, as topi's "
                          "conv2d_NCHWc computes it.")
_register_blocked(_DEPTHWISE_NCHWC, "Depthwise 2-D convolution of blocked (NCHW8c-style) data "
                                    "with a blocked kernel (OIHW1i8o-style).")
# Relay types the depthwise one with conv2d's relation, which infers an untyped weight; the
# other reads its weight by shape (topi's packing), so it infers none.
register_op_attr(_DEPTHWISE_NCHWC.name, ARG_TYPES, _weight_arg_types(_DEPTHWISE_NCHWC))

contrib_conv2d_nchwc = _blocked_builder(_NCHWC)
contrib_conv2d_nchwc.__name__ = contrib_conv2d_nchwc.__qualname__ = "contrib_conv2d_nchwc"
contrib_conv2d_nchwc.__doc__ = (
    "Relay's ``nn.contrib_conv2d_nchwc``: conv2d of blocked ``data`` (``data_layout`` such as "
    "NCHW8c) with ``kernel``; a 6-D kernel under a 4-D ``kernel_layout`` is read as topi "
    "packs it, ``OIHW{i}i{o}o``.")
contrib_depthwise_conv2d_nchwc = _blocked_builder(_DEPTHWISE_NCHWC)
contrib_depthwise_conv2d_nchwc.__name__ = "contrib_depthwise_conv2d_nchwc"
contrib_depthwise_conv2d_nchwc.__qualname__ = "contrib_depthwise_conv2d_nchwc"
contrib_depthwise_conv2d_nchwc.__doc__ = (
    "Relay's ``nn.contrib_depthwise_conv2d_nchwc``: a depthwise conv2d (``groups`` equal to "
    "the channels) of blocked ``data`` with a blocked ``kernel`` (``OIHW1i8o`` for NCHW8c).")
