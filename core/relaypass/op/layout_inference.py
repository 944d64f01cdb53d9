"""Each standard operator's layout rule (``FInferCorrectLayout``), as Relay registers it.

ConvertLayout and AlterOpLayout change the layouts of a few operators
(convolutions, pools) and let the rest *follow*: an elementwise operator
computes in whatever layout its input arrives in, a reduction over C keeps
reducing over C wherever C now is, a transpose permutes the new axes.  Each
operator says how through its ``FInferCorrectLayout`` attribute (the
protocol is in :mod:`relaypass.op.infer_layout_utils`), registered here at
the standard level for the operators of the set, with Relay's rules; an
operator without one makes the passes give it its inputs in their original
layouts.  ``register_infer_correct_layout(op, fn, level=11)`` replaces a rule.

Importing this module registers the rules (the operator set does, after its
operators); operators another package registers under a Relay name listed
here are not touched.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir.attrs import Attrs
from ..ir.op import Op
from ..ir.op_hooks import register_infer_correct_layout
from ..ir.types import TensorType, TupleType, Type
from .data_layout import Layout, LayoutError, layout
from .infer_layout_utils import (
    InferCorrectLayoutOutput,
    binary_broadcast_layout,
    elemwise_arbitrary_layout,
)

__all__ = [
    "batch_norm_layout", "concatenate_layout", "conv_layout", "deformable_conv_layout",
    "dense_layout", "dense_pack_layout", "dropout_layout", "l2_normalize_layout",
    "normalization_layout", "roi_layout", "slice_like_layout",
    "pad_layout", "pool_layout", "prelu_layout", "reduce_layout", "resize_layout", "split_layout",
    "squeeze_layout", "strided_slice_layout", "topk_layout", "transpose_layout", "upsampling_layout",
]

Layouts = Sequence["Layout | None"]
_C = layout("C")


def _rank(ty: Type) -> int:
    return len(ty.shape) if isinstance(ty, TensorType) else 0


def _axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


def _failed(n_in: int, n_out: int, attrs: Attrs) -> InferCorrectLayoutOutput:
    """The answer "no layout can be inferred": the operator keeps its original layouts."""
    return InferCorrectLayoutOutput([None] * n_in, [None] * n_out, attrs)


def _moved_axis(old: Layout | None, new: Layout, axis: int) -> int | None:
    """Where the axis at ``axis`` of ``old`` is in ``new``; None when ``old`` has no such axis."""
    if old is None or not 0 <= axis < len(old):
        return None
    return new.index_of(old[axis])


# --- layouts fixed by attributes ------------------------------------------------------------------


def conv_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A convolution takes its inputs in its own layouts: the others adapt to it."""
    out = attrs.out_layout or attrs.data_layout
    return InferCorrectLayoutOutput([attrs.data_layout, attrs.kernel_layout], [out], attrs)


def deformable_conv_layout(attrs, new_in_layouts, old_in_layouts,
                           old_in_types) -> InferCorrectLayoutOutput:
    """A deformable convolution takes its data and offset in its data layout."""
    out = attrs.out_layout or attrs.data_layout
    return InferCorrectLayoutOutput([attrs.data_layout, attrs.data_layout, attrs.kernel_layout],
                                    [out], attrs)


def roi_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """An ROI operator takes its data in its own layout; the (regions, 5) rois stay as they
    are (Relay calls their layout N5; any two-axis layout says the same here)."""
    return InferCorrectLayoutOutput([attrs.layout, "NC"], [attrs.layout], attrs)


def pool_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A pool follows its input's new layout unless an ``out_layout`` pins its own."""
    if not attrs.out_layout and new_in_layouts is not None and new_in_layouts[0] is not None:
        attrs = attrs.with_fields(layout=new_in_layouts[0].name)
    return InferCorrectLayoutOutput([attrs.layout], [attrs.layout], attrs)


def resize_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A resize follows a new input layout of the same rank, if it was in the old one."""
    if new_in_layouts is not None:
        new, old = new_in_layouts[0], old_in_layouts[0]
        if (new is not None and old is not None and new != old and old.name == attrs.layout
                and len(new) == len(old)):
            attrs = attrs.with_fields(layout=new.name)
    return InferCorrectLayoutOutput([attrs.layout], [attrs.layout], attrs)


def upsampling_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """An upsampling follows a new input layout that keeps its spatial axes where they were."""
    if new_in_layouts is not None and new_in_layouts[0] is not None:
        raw, new = layout(attrs.layout), new_in_layouts[0]
        same = all(new.index_of(a) == raw.index_of(a) for a in "HW")
        unsplit = "h" not in new and "w" not in new and "d" not in new
        depth_ok = new.index_of("D") == -1 or new.index_of("D") == raw.index_of("D")
        if same and unsplit and depth_ok:
            attrs = attrs.with_fields(layout=new.name)
    return InferCorrectLayoutOutput([attrs.layout], [attrs.layout], attrs)


def dense_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Matrix products take and give ``NC``."""
    return InferCorrectLayoutOutput(["NC", "NC"], ["NC"], attrs)


def dense_pack_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A packed dense takes its data in ``NC`` and its weight in the packing it names."""
    return InferCorrectLayoutOutput(["NC", attrs.weight_layout], ["NC"], attrs)


def dropout_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Dropout follows its input like an elementwise operator; its mask has the data's layout."""
    ret = elemwise_arbitrary_layout(attrs, new_in_layouts, old_in_layouts, old_in_types)
    data = ret.output_layouts[0]
    return InferCorrectLayoutOutput([data], [data, data], attrs)


def prelu_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """PReLU keeps its data in the original layout; alpha is per channel."""
    data = old_in_layouts[0]
    return InferCorrectLayoutOutput([data, _C], [data], attrs)


# --- operators that follow their input, moving an axis attribute ---------------------------------


def _follow_axis(attrs, new_in_layouts, old_in_layouts, old_in_types):
    """(layout, attrs) for an operator whose ``axis`` names one axis of its first input."""
    old = old_in_layouts[0]
    if new_in_layouts is None:
        return old, attrs
    new = new_in_layouts[0]
    if new is None:
        return None, attrs
    axis = _axis(attrs.axis, _rank(old_in_types[0]))
    index = _moved_axis(old, new, axis)
    if index is None or index < 0 or new.factor_of(old[axis]) != -1:
        # One axis cannot name a channel split in blocks (Relay's rule would follow NCHW16c
        # and leave batch_norm's relation to fail): the operator keeps its layouts.
        return None, attrs
    return new, attrs.with_fields(axis=index)


def batch_norm_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Batch norm follows its data, its ``axis`` moving with the channel; the rest are ``C``."""
    ret, attrs = _follow_axis(attrs, new_in_layouts, old_in_layouts, old_in_types)
    return InferCorrectLayoutOutput([ret, _C, _C, _C, _C], [ret, _C, _C], attrs)


def normalization_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Layer and instance norm follow their data like batch norm; gamma and beta are ``C``."""
    ret, attrs = _follow_axis(attrs, new_in_layouts, old_in_layouts, old_in_types)
    return InferCorrectLayoutOutput([ret, _C, _C], [ret], attrs)


def l2_normalize_layout(attrs, new_in_layouts, old_in_layouts,
                       old_in_types) -> InferCorrectLayoutOutput:
    """L2 normalization follows its input, each summed axis moving with its letter."""
    old = old_in_layouts[0]
    if new_in_layouts is None or new_in_layouts[0] is None or old is None:
        return InferCorrectLayoutOutput([old], [old], attrs)
    new = new_in_layouts[0]
    ndim = _rank(old_in_types[0])
    moved = [_moved_axis(old, new, _axis(a, ndim)) for a in attrs.axis]
    if any(m is None or m < 0 or new.factor_of(new[m]) != -1 for m in moved):
        return InferCorrectLayoutOutput([old], [old], attrs)
    return InferCorrectLayoutOutput([new], [new], attrs.with_fields(axis=tuple(moved)))


def slice_like_layout(attrs, new_in_layouts, old_in_layouts,
                      old_in_types) -> InferCorrectLayoutOutput:
    """slice_like follows a new layout both its inputs share, its axes moving with their
    letters; otherwise it keeps the original layouts."""
    if new_in_layouts is not None and attrs.axes is not None:
        new, old = new_in_layouts[0], old_in_layouts[0]
        same = (new is not None and new == new_in_layouts[1] and old is not None
                and old == old_in_layouts[1])
        moved = ([_moved_axis(old, new, _axis(a, _rank(old_in_types[0]))) for a in attrs.axes]
                 if same else [None])
        if all(m is not None and m >= 0 for m in moved):
            return InferCorrectLayoutOutput([new, new], [new], attrs.with_fields(axes=tuple(moved)))
    return InferCorrectLayoutOutput([old_in_layouts[0], old_in_layouts[1]], [old_in_layouts[1]],
                                    attrs)


def topk_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Top-k follows its data along the moved axis; values and indices share the layout."""
    ret, attrs = _follow_axis(attrs, new_in_layouts, old_in_layouts, old_in_types)
    outputs = 2 if attrs.ret_type == "both" else 1
    return InferCorrectLayoutOutput([ret], [ret] * outputs, attrs)


def split_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Split follows its data; split points along a blocked axis are counted in blocks."""
    ios = attrs.indices_or_sections
    pieces = ios if isinstance(ios, int) else len(ios) + 1
    old = old_in_layouts[0]
    ret: Layout | None = old
    if new_in_layouts is not None:
        new = new_in_layouts[0]
        axis = _axis(attrs.axis, _rank(old_in_types[0]))
        index = None if new is None else _moved_axis(old, new, axis)
        if index is not None and index >= 0:
            factor = new.factor_of(old[axis])
            if factor > 1 and not isinstance(ios, int):
                if all(v % factor == 0 for v in ios):
                    attrs = attrs.with_fields(axis=index, indices_or_sections=[v // factor for v in ios])
                    ret = new
            else:
                attrs = attrs.with_fields(axis=index)
                ret = new
    return InferCorrectLayoutOutput([ret], [ret] * pieces, attrs)


def concatenate_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Concatenate follows its inputs when they all arrive in one new layout."""
    fields = old_in_types[0].fields if isinstance(old_in_types[0], TupleType) else ()
    axis = _axis(attrs.axis, _rank(fields[0]) if fields else 0)
    n = len(old_in_layouts)
    if new_in_layouts is not None and all(x == new_in_layouts[0] for x in new_in_layouts):
        index = _moved_axis(old_in_layouts[0], new_in_layouts[0], axis) \
            if new_in_layouts[0] is not None else None
        if index is not None and index >= 0:
            return InferCorrectLayoutOutput([new_in_layouts[0]] * n, [new_in_layouts[0]],
                                            attrs.with_fields(axis=index))
    ret = next((x for x in old_in_layouts if x is not None), None)
    if ret is None or len(ret) <= axis or ret.axes[axis][1] is not None:
        return _failed(1, 1, attrs)
    return InferCorrectLayoutOutput([ret] * n, [ret], attrs)


# --- operators whose attributes list axes ---------------------------------------------------------


def transpose_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Transpose permutes the new layout's axes the way it permuted the old one's."""
    old = old_in_layouts[0]
    if old is None:
        return _failed(1, 1, attrs)
    axes = list(attrs.axes) if attrs.axes else list(range(len(old) - 1, -1, -1))
    axes = [_axis(a, len(old)) for a in axes]
    source = old
    new = new_in_layouts[0] if new_in_layouts is not None else None
    if new is not None:
        moved = [new.index_of(old[a]) if 0 <= a < len(old) else -1 for a in axes]
        if -1 not in moved and len(moved) == len(new):
            axes, source = moved, new
    attrs = attrs.with_fields(axes=axes)
    name = source.name
    if any(not 0 <= a < len(name) for a in axes):
        return _failed(1, 1, attrs)
    try:
        out = layout("".join(name[a] for a in axes))
    except LayoutError:
        return _failed(1, 1, attrs)
    return InferCorrectLayoutOutput([source], [out], attrs)


def squeeze_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Squeeze drops the same axes from the new layout, found by their letters."""
    source = new_in_layouts[0] if new_in_layouts is not None else old_in_layouts[0]
    if source is None:
        return _failed(1, 1, attrs)
    if attrs.axis is not None:
        axes = list(attrs.axis)
    else:
        shape = old_in_types[0].shape if isinstance(old_in_types[0], TensorType) else ()
        axes = [i for i, d in enumerate(shape) if isinstance(d, int) and d == 1]
    if new_in_layouts is not None:
        old = old_in_layouts[0]
        if old is None or any(not -len(old) <= a < len(old) for a in axes):
            return _failed(1, 1, attrs)
        axes = [source.index_of(old[a]) for a in axes]
        if -1 in axes:
            return _failed(1, 1, attrs)
        attrs = attrs.with_fields(axis=axes)
    dropped = {_axis(a, len(source)) for a in axes}
    kept = tuple(ax for i, ax in enumerate(source.axes) if i not in dropped)
    try:
        out = layout("".join(a if f is None else f"{f}{a}" for a, f in kept))
    except LayoutError:
        return _failed(1, 1, attrs)
    return InferCorrectLayoutOutput([source], [out], attrs)


def _reduce_axes(ndim: int, axis, exclude: bool) -> list[int]:
    """The axes a reduction reduces, sorted (all of them when ``axis`` is None or empty)."""
    if not axis:
        return list(range(ndim))
    chosen = sorted(_axis(a, ndim) for a in axis)
    return [i for i in range(ndim) if i not in chosen] if exclude else chosen


def reduce_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A reduction reduces the same axes, found by letter, in the new layout.

    A reduced axis that was split reduces both its parts; with ``keepdims``
    the inner part becomes a block of 1.
    """
    old = old_in_layouts[0]
    r_axes = _reduce_axes(_rank(old_in_types[0]), attrs.axis, attrs.exclude)
    follow = new_in_layouts is not None and bool(r_axes)
    source = new_in_layouts[0] if follow else old
    if source is None or old is None or any(r >= len(old) for r in r_axes):
        return _failed(len(old_in_layouts), 1, attrs)
    reduced = {old[r] for r in r_axes}
    exclude, keepdims = attrs.exclude, attrs.keepdims
    new_axes: list[int] = []
    in_name, out_name = [], []
    for i, (letter, factor) in enumerate(source.axes):
        primal = letter.upper()
        picked = (primal in reduced) != bool(exclude)
        if picked:
            new_axes.append(i)
        if factor is None:
            in_name.append(letter)
            if primal not in reduced or keepdims:
                out_name.append(letter)
        else:
            packed = f"{factor}{letter}"
            in_name.append(packed)
            if not picked or exclude:
                out_name.append(packed)
            elif keepdims:
                out_name.append(f"1{letter}")
    if follow:
        attrs = attrs.with_fields(axis=new_axes)
    try:
        inferred_in, inferred_out = layout("".join(in_name)), layout("".join(out_name))
    except LayoutError:
        return _failed(len(old_in_layouts), 1, attrs)
    return InferCorrectLayoutOutput([inferred_in] * len(old_in_layouts), [inferred_out], attrs)


def pad_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """Pad follows its data, reordering ``pad_width``, unless it pads an axis the new layout splits."""
    ret = old_in_layouts[0]
    if new_in_layouts is not None and new_in_layouts[0] is not None and ret is not None:
        by_axis = dict(zip((a for a, _ in ret.axes), attrs.pad_width)) \
            if len(ret) == len(attrs.pad_width) else {}
        widths = []
        follow = bool(by_axis)
        for letter, factor in new_in_layouts[0].axes:
            width = by_axis.get(letter.upper())
            if width is None:
                follow = False
                break
            if factor is not None and any(w != 0 for w in width):
                follow = False  # padding a split axis would pad every block
            widths.append(width)
        if follow:
            ret = new_in_layouts[0]
            attrs = attrs.with_fields(pad_width=widths)
    # The pad value is a scalar.
    return InferCorrectLayoutOutput([ret, layout("")], [ret], attrs)


def strided_slice_layout(attrs, new_in_layouts, old_in_layouts, old_in_types) -> InferCorrectLayoutOutput:
    """A slice moves its bounds to the new positions of its axes (or to blocks, for a split axis)."""
    old = old_in_layouts[0]
    if old is None or new_in_layouts is None or new_in_layouts[0] is None:
        return InferCorrectLayoutOutput([old], [old], attrs)
    new = new_in_layouts[0]
    shape = old_in_types[0].shape if isinstance(old_in_types[0], TensorType) else ()
    size_mode = attrs.slice_mode == "size"
    begin, end = list(attrs.begin), list(attrs.end)
    strides = [1] * len(attrs.strides) if size_mode else list(attrs.strides)
    axes = list(attrs.axes) if attrs.axes is not None else None
    fail = _failed(1, 1, attrs)
    if not old.name.startswith(new.name) and not new.name.startswith(old.name):
        if len(old.name) != len(new.name):
            return fail
        if axes is not None:
            # One stride stands for every axis, as the relation reads it.
            fields = dict(axes=[new.index_of(old[a]) for a in axes],
                          strides=strides * len(axes) if len(strides) == 1 else strides)
        else:
            nb, ne, ns = [], [], []
            for letter, _ in new.axes:
                k = old.index_of(letter)
                if k == -1:
                    return fail
                ns.append(strides[k] if k < len(strides) else 1)
                nb.append(begin[k] if k < len(begin) else 0)
                if k < len(end):
                    ne.append(end[k])
                elif isinstance(shape[k], int):
                    ne.append(shape[k])
                else:
                    return fail
            fields = dict(begin=nb, end=ne, strides=ns)
        return InferCorrectLayoutOutput([new], [new], attrs.with_fields(**fields))
    if len(old.name) >= len(new.name):
        return InferCorrectLayoutOutput([old], [old], attrs)
    # The new layout splits some axes of the old one (NCHW -> NCHW4c): bounds count blocks.
    positions = axes if axes is not None else list(range(len(begin)))
    nb, ne = [], []
    for i, a in enumerate(positions):
        factor = new.factor_of(old[a])
        if factor == -1:
            if i >= len(end):
                return fail
            nb.append(begin[i])
            ne.append(end[i])
            continue
        if i < len(strides) and strides[i] != 1:
            return fail
        b = begin[i]
        if axes is None and i >= len(end):
            e = shape[i]
        elif axes is None and size_mode:
            e = shape[i] if end[i] < 0 else b + end[i]
        else:
            e = end[i]
        if not isinstance(e, int) or b % factor or e % factor:
            return fail
        nb.append(b // factor)
        ne.append(e // factor)
    fields = dict(begin=nb, end=ne)
    if axes is not None:
        fields["axes"] = [new.index_of(old[a]) for a in axes]
    return InferCorrectLayoutOutput([new], [new], attrs.with_fields(**fields))


# --- registration ---------------------------------------------------------------------------------

_UNARY = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "copy", "cos",
    "cosh", "erf", "exp", "fast_erf", "fast_exp", "fast_tanh", "floor", "isfinite", "isinf", "isnan",
    "log", "log10", "log2", "logical_not", "negative", "ones_like", "round", "rsqrt", "sigmoid",
    "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "zeros_like",
    # elementwise with attributes, and markers
    "clip", "fixed_point_multiply", "ndarray_size", "cast", "cast_like", "reinterpret",
    "nn.relu", "nn.leaky_relu", "annotation.stop_fusion", "annotation.cast_hint",
    "annotation.checkpoint", "annotation.compiler_begin", "annotation.compiler_end",
)
_BINARY = (
    "add", "subtract", "multiply", "divide", "floor_divide", "floor_mod", "trunc_divide",
    "trunc_mod", "mod", "power", "maximum", "minimum", "left_shift", "right_shift", "bitwise_and",
    "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
)
_RULES = {
    **dict.fromkeys(_UNARY, elemwise_arbitrary_layout),
    **dict.fromkeys(_BINARY, binary_broadcast_layout),
    **dict.fromkeys(("nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose",
                     "nn.conv2d_transpose", "nn.conv3d_transpose", "nn.contrib_conv2d_NCHWc",
                     "nn.contrib_depthwise_conv2d_NCHWc"), conv_layout),
    **dict.fromkeys(("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d",
                     "nn.avg_pool2d", "nn.avg_pool3d", "nn.global_max_pool2d",
                     "nn.global_avg_pool2d", "nn.adaptive_max_pool1d", "nn.adaptive_avg_pool1d",
                     "nn.adaptive_max_pool2d", "nn.adaptive_avg_pool2d", "nn.adaptive_max_pool3d",
                     "nn.adaptive_avg_pool3d"), pool_layout),
    **dict.fromkeys(("image.resize1d", "image.resize2d", "image.resize3d"), resize_layout),
    **dict.fromkeys(("nn.upsampling", "nn.upsampling3d"), upsampling_layout),
    **dict.fromkeys(("nn.dense", "nn.matmul"), dense_layout),
    **dict.fromkeys(("sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin",
                     "variance"), reduce_layout),
    **dict.fromkeys(("nn.layer_norm", "nn.instance_norm"), normalization_layout),
    "nn.contrib_dense_pack": dense_pack_layout,
    "nn.deformable_conv2d": deformable_conv_layout,
    "nn.l2_normalize": l2_normalize_layout,
    "vision.roi_align": roi_layout,
    "vision.roi_pool": roi_layout,
    "slice_like": slice_like_layout,
    "nn.prelu": prelu_layout,
    "nn.dropout": dropout_layout,
    "nn.batch_norm": batch_norm_layout,
    "topk": topk_layout,
    "split": split_layout,
    "concatenate": concatenate_layout,
    "transpose": transpose_layout,
    "squeeze": squeeze_layout,
    "nn.pad": pad_layout,
    "strided_slice": strided_slice_layout,
}


def _register() -> None:
    present = set(Op.list_op_names())
    for name, rule in _RULES.items():
        if name in present:
            register_infer_correct_layout(name, rule)


_register()
