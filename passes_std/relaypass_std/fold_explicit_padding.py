"""FoldExplicitPadding: an ``nn.pad`` feeding a convolution or pooling becomes its padding attribute.

Exporters often write padding as a separate Pad node; the convolution can do
the same padding itself, without materializing the padded tensor.  Relay's
fold_explicit_padding.cc, decision for decision:

* only a ``constant``-mode pad whose value is a constant, that pads nothing
  but the spatial axes (``D``, ``H``, ``W`` of the layout), is folded; its
  widths (all "before" widths, then all "after" widths, in layout order) are
  added to the operator's own padding;
* convolutions (``nn.conv1d``/``conv2d``/``conv3d`` where registered) and
  average pools fold a pad of zeros; an average pool must count the padding
  (``count_include_pad``), or have no padding of its own, in which case it
  is made to count the folded padding; max pools fold a pad of the dtype's
  lowest value;
* the rewrite repeats until nothing more folds (a pad of a pad folds twice),
  as Relay's pattern rewrite runs to a fixed point.

The quantized convolution case of Relay (``qnn.conv2d``) is out of scope with
QNN.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["FoldExplicitPadding", "fold_explicit_padding"]

_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d")
_AVG_POOLS = ("nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d")
_MAX_POOLS = ("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d")
_SPATIAL = frozenset("DHW")


def _spatial_padding(pad: Call, layout: str) -> list[int] | None:
    """The pad's widths as an operator's padding (befores, then afters); None if it pads more."""
    widths = pad.attrs.pad_width
    if len(widths) != len(layout):
        return None
    for axis, (before, after) in zip(layout, widths):
        if axis not in _SPATIAL and (before or after):
            return None
    return [int(w[side]) for side in (0, 1) for axis, w in zip(layout, widths) if axis in _SPATIAL]


def _lowest(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).min) if np.issubdtype(dtype, np.floating) else int(np.iinfo(dtype).min)


def _folded(call: Call) -> Call | None:
    """``call`` with the pad it reads folded into its padding, or None when it cannot be."""
    name = call.op.name
    pad = call.args[0]
    if type(pad) is not Call or not isinstance(pad.op, Op) or pad.op.name != "nn.pad":
        return None
    value = pad.args[1]
    if pad.attrs.pad_mode != "constant" or type(value) is not Constant:
        return None
    scalar = value.data.numpy().reshape(-1)
    if scalar.size != 1:
        return None
    pad_value = scalar[0]
    attrs = call.attrs
    layout = attrs.data_layout if name in _CONVS else attrs.layout
    widths = _spatial_padding(pad, layout)
    if widths is None or len(widths) != len(attrs.padding):
        return None
    padding = tuple(int(a) + b for a, b in zip(attrs.padding, widths))
    changes: dict[str, object] = {"padding": padding}
    if name in _CONVS or name in _AVG_POOLS:
        if pad_value != 0:
            return None
        if name in _AVG_POOLS and not attrs.count_include_pad:
            if any(int(p) != 0 for p in attrs.padding):
                return None
            changes["count_include_pad"] = True
    elif pad_value != _lowest(scalar.dtype):
        return None
    args = [pad.args[0], *call.args[1:]]
    return Call(call.op, args, attrs.with_fields(**changes), call.type_args, call.span)


class _PadFolder(MixedModeMutator):
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if type(post) is not Call or not isinstance(post.op, Op) \
                or post.op.name not in (*_CONVS, *_AVG_POOLS, *_MAX_POOLS):
            return post
        while True:
            folded = _folded(post)
            if folded is None:
                return post
            post = folded


def fold_explicit_padding(func: Function) -> Function:
    """``func`` with every foldable pad moved into the convolution or pooling that reads it."""
    return _PadFolder().visit(func)


def _fold_explicit_padding_factory() -> Callable[[Function, IRModule, object], Function]:
    """FoldExplicitPadding's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return fold_explicit_padding(func)

    return transform


#: The pass ``relay.transform.FoldExplicitPadding()`` builds; its metadata is in relaypass-plugin.toml.
FoldExplicitPadding = pass_constructor("FoldExplicitPadding")
