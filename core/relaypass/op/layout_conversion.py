"""How ConvertLayout converts a call to the layouts a user asks for (``FTVMConvertOpLayout``).

``ConvertLayout({"nn.conv2d": ["NHWC", "default"]})`` asks every conv2d to
compute in NHWC; the operator's ``FTVMConvertOpLayout`` attribute, called as
``fn(attrs, inputs, tinfos, desired_layouts)``, returns the call that does
(``tinfos`` are the types of the original arguments).  The functions here
are Relay's, registered at the standard level: a convolution takes a data
layout and a kernel layout, ``"default"`` choosing the kernel layout Relay
pairs with the data layout (HWIO for NHWC, HWOI for a depthwise one), and a
blocked data layout (``NCHW16c``, with a kernel layout such as ``OIHW16i16o``)
makes a conv2d an ``nn.contrib_conv2d_NCHWc``; a pool or a resize takes one
layout; ``nn.deformable_conv2d`` takes a data and a kernel layout like a
convolution (its offset follows the data), and ``vision.roi_align`` and
``vision.roi_pool`` a data layout and ``"default"`` for the rois.  ``register_convert_op_layout(op, fn, level=11)``
replaces one.

:class:`LayoutConfig` (``relay.transform.LayoutConfig``) lets a user keep
some convolutions as they are: ``with LayoutConfig(skip_layers=[0]):`` skips
the first conv2d the pass meets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import RelayPassError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr, Var
from ..ir.op import Op, make_call
from ..ir.op_hooks import register_convert_op_layout
from ..ir.types import TensorType
from .data_layout import LayoutError, layout

__all__ = ["LayoutConfig", "LayoutConversionError", "convert_conv", "convert_deformable_conv",
           "convert_one_layout", "convert_roi"]


class LayoutConversionError(RelayPassError, ValueError):
    """Desired layouts an operator cannot be converted to."""


class LayoutConfig:
    """Which convolutions ConvertLayout leaves alone (TVM's ``relay.transform.LayoutConfig``).

    ``skip_layers`` lists the indices, in the order the pass meets them, of
    the conv2d calls to keep in their layouts.  Used as a context manager;
    ``LayoutConfig.current`` is the innermost one entered.
    """

    current: LayoutConfig | None = None

    def __init__(self, skip_layers: Sequence[int] | None = None):
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []

    def check_skip(self) -> bool:
        """Whether to skip the convolution met now (each call counts one)."""
        skip = self.skip_counter in self.skip_layers
        self.skip_counter += 1
        return skip

    def reset(self) -> None:
        self.skip_counter = 0
        self.skip_layers = []

    def __enter__(self) -> LayoutConfig:
        self._outer = LayoutConfig.current
        LayoutConfig.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        LayoutConfig.current = self._outer


def _desired(op_name: str, desired_layouts: Sequence[Any], count: int) -> list[str]:
    names = [str(x) for x in desired_layouts]
    if len(names) != count:
        what = ("one layout" if count == 1 else "a data layout and 'default' for the rois"
                if op_name.startswith("vision.") else "a data layout and a kernel layout")
        raise LayoutConversionError(
            f"{op_name} takes {what} in the desired layouts, got {names}")
    if names[0] == "default":
        raise LayoutConversionError(f"the desired data layout of {op_name} cannot be "
                                    f"'default'; give a layout such as {_example(op_name)!r}")
    return names


def _example(op_name: str) -> str:
    return "NHWC" if "2d" in op_name else "NDHWC" if "3d" in op_name else "NWC"


def _same_axes(op_name: str, what: str, wanted: str, original: str) -> None:
    """``wanted`` must name the axes of ``original`` (possibly blocked), or it is an error."""
    try:
        new = layout(wanted)
    except LayoutError as err:
        raise LayoutConversionError(f"{op_name}: {err}") from None
    old = layout(original)
    if sorted(a for a, f in new.axes if f is None) != sorted(a for a, f in old.axes if f is None):
        raise LayoutConversionError(
            f"{op_name}: the desired {what} {wanted!r} must have the axes of {original!r} "
            f"({', '.join(a for a, _ in old.axes)}), in any order")


def _in_channels(shape: Sequence[Any], data_layout: str) -> Any:
    return shape[data_layout.find("C")] if len(shape) == 4 else shape[1] * shape[4]


def _out_channels(shape: Sequence[Any], kernel_layout: str) -> Any:
    return shape[kernel_layout.find("O")] if len(shape) == 4 else None


def _is_depthwise(tinfos: Sequence[Any], attrs: Attrs) -> bool:
    data, weight = tinfos
    if not (isinstance(data, TensorType) and isinstance(weight, TensorType)):
        return False
    ic = _in_channels(data.shape, attrs.data_layout)
    oc = _out_channels(weight.shape, attrs.kernel_layout)
    return ic == oc == attrs.groups


#: For each convolution, the kernel layout Relay pairs with a data layout under "default".
_DEFAULT_KERNELS = {
    "nn.conv1d": {"NCW": "OIW", "NWC": "WIO"},
    "nn.conv2d": {"NCHW": "OIHW", "NHWC": "HWIO", "HWNC": "HWOI"},
    "nn.conv3d": {"NCDHW": "OIDHW", "NDHWC": "DHWIO"},
    "nn.conv1d_transpose": {"NCW": "IOW", "NWC": "WIO"},
    "nn.conv2d_transpose": {"NCHW": "IOHW", "NHWC": "HWIO"},
    "nn.conv3d_transpose": {"NCDHW": "IODHW", "NDHWC": "DHWOI"},
}
_DEFORMABLE_KERNELS = {"NCHW": "OIHW", "NHWC": "HWIO"}
_BLOCKED_NCHW = re.compile(r"NCHW(\d*)c$")


def convert_conv(attrs: Attrs, inputs: Sequence[Expr], tinfos: Sequence[Any],
                 desired_layouts: Sequence[Any], *, op_name: str) -> Call:
    """A convolution in the desired data and kernel layouts (Relay's ``convert_conv2d`` and kin)."""
    data, weight = inputs
    config = LayoutConfig.current
    if op_name == "nn.conv2d" and config is not None and config.check_skip():
        return make_call(op_name, [data, weight], **attrs)
    data_layout, kernel_layout = _desired(op_name, desired_layouts, 2)
    tile = _BLOCKED_NCHW.match(data_layout) if op_name == "nn.conv2d" else None
    if tile:
        return _convert_to_nchwc(attrs, data, weight, data_layout, kernel_layout, int(tile[1] or 0))
    _same_axes(op_name, "data layout", data_layout, attrs.data_layout)
    if kernel_layout == "default":
        defaults = _DEFAULT_KERNELS[op_name]
        kernel_layout = defaults.get(data_layout, "")
        if not kernel_layout:
            raise LayoutConversionError(
                f"{op_name} has no default kernel layout for data layout "
                f"{data_layout!r} (defaults exist for {', '.join(defaults)}); name the kernel "
                f"layout instead of 'default'")
        if op_name == "nn.conv2d" and data_layout == "NHWC" and _is_depthwise(tinfos, attrs):
            kernel_layout = "HWOI"
    _same_axes(op_name, "kernel layout", kernel_layout, attrs.kernel_layout)
    return make_call(op_name, [data, weight],
                     **attrs.with_fields(data_layout=data_layout, kernel_layout=kernel_layout))


def convert_deformable_conv(attrs: Attrs, inputs: Sequence[Expr], tinfos: Sequence[Any],
                            desired_layouts: Sequence[Any]) -> Call:
    """A deformable conv2d in the desired layouts (Relay's ``convert_deformable_conv2d``): the
    offset is moved with the data; Relay computes it only in NCHW/OIHW and NHWC/HWIO."""
    op_name = "nn.deformable_conv2d"
    config = LayoutConfig.current
    if config is not None and config.check_skip():
        return make_call(op_name, list(inputs), **attrs)
    data_layout, kernel_layout = _desired(op_name, desired_layouts, 2)
    if kernel_layout == "default":
        kernel_layout = _DEFORMABLE_KERNELS.get(data_layout, "")
    if _DEFORMABLE_KERNELS.get(data_layout) != kernel_layout:
        raise LayoutConversionError(
            f"{op_name} computes in {' or '.join(f'{d}/{k}' for d, k in _DEFORMABLE_KERNELS.items())}"
            f" (data/kernel layout), not {data_layout}/{kernel_layout}")
    return make_call(op_name, list(inputs),
                     **attrs.with_fields(data_layout=data_layout, kernel_layout=kernel_layout))


def convert_roi(attrs: Attrs, inputs: Sequence[Expr], tinfos: Sequence[Any],
                desired_layouts: Sequence[Any], *, op_name: str) -> Call:
    """An ROI operator with its data in the desired layout (Relay's ``convert_roi_align``);
    the rois' layout must be ``"default"``."""
    data_layout, rois_layout = _desired(op_name, desired_layouts, 2)
    if rois_layout != "default":
        raise LayoutConversionError(f"{op_name}: the rois keep their layout; give 'default' "
                                    f"as the second desired layout, not {rois_layout!r}")
    if data_layout not in ("NCHW", "NHWC"):
        raise LayoutConversionError(f"{op_name} computes in NCHW or NHWC, not {data_layout!r}")
    return make_call(op_name, list(inputs), **attrs.with_fields(layout=data_layout))


def _convert_to_nchwc(attrs: Attrs, data: Expr, weight: Expr, data_layout: str,
                      kernel_layout: str, tile: int) -> Call:
    """conv2d asked for a blocked layout (NCHW16c) becomes ``nn.contrib_conv2d_NCHWc``, as in
    Relay; a program input whose channels do not split into the blocks stays a conv2d."""
    if kernel_layout == "default":
        raise LayoutConversionError(
            f"nn.conv2d: the blocked data layout {data_layout!r} needs a kernel layout, such "
            f"as 'OIHW{tile}i{tile}o', not 'default'")
    _same_axes("nn.conv2d", "data layout", data_layout, attrs.data_layout)
    _same_axes("nn.conv2d", "kernel layout", kernel_layout, attrs.kernel_layout)
    ty = data._checked_type if isinstance(data, Var) else None
    if isinstance(ty, TensorType) and tile:
        channels = layout(attrs.data_layout).index_of("C")
        extent = ty.shape[channels] if 0 <= channels < len(ty.shape) else None
        if isinstance(extent, int) and extent % tile:
            return make_call("nn.conv2d", [data, weight], **attrs)
    return make_call("nn.contrib_conv2d_NCHWc", [data, weight],
                     **attrs.with_fields(data_layout=data_layout, kernel_layout=kernel_layout))


def convert_one_layout(attrs: Attrs, inputs: Sequence[Expr], tinfos: Sequence[Any],
                       desired_layouts: Sequence[Any], *, op_name: str) -> Call:
    """A pool or resize in the one desired layout (Relay's ``convert_max_pool2d`` and kin).

    A pool gets the layout as ``out_layout`` too, which pins it there: the
    operators after it do not drag it into another layout.
    """
    (wanted,) = _desired(op_name, desired_layouts, 1)
    _same_axes(op_name, "layout", wanted, attrs.layout)
    fields = {"layout": wanted}
    if "out_layout" in attrs:
        fields["out_layout"] = wanted
    return make_call(op_name, list(inputs), **attrs.with_fields(**fields))


_POOLS = (
    "nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d",
    "nn.avg_pool3d", "nn.global_max_pool2d", "nn.global_avg_pool2d", "nn.adaptive_max_pool1d",
    "nn.adaptive_avg_pool1d", "nn.adaptive_max_pool2d", "nn.adaptive_avg_pool2d",
    "nn.adaptive_max_pool3d", "nn.adaptive_avg_pool3d",
)
_RESIZES = ("image.resize1d", "image.resize2d", "image.resize3d")


def _bind(fn: Any, op_name: str) -> Any:
    def convert(attrs, inputs, tinfos, desired_layouts):
        return fn(attrs, inputs, tinfos, desired_layouts, op_name=op_name)

    convert.__name__ = convert.__qualname__ = f"convert_{op_name.rsplit('.', 1)[-1]}"
    convert.__doc__ = fn.__doc__
    return convert


def _register() -> None:
    present = set(Op.list_op_names())
    for name in _DEFAULT_KERNELS:
        if name in present:
            register_convert_op_layout(name, _bind(convert_conv, name))
    for name in (*_POOLS, *_RESIZES):
        if name in present:
            register_convert_op_layout(name, _bind(convert_one_layout, name))
    for name in ("vision.roi_align", "vision.roi_pool"):
        if name in present:
            register_convert_op_layout(name, _bind(convert_roi, name))
    if "nn.deformable_conv2d" in present:
        register_convert_op_layout("nn.deformable_conv2d", convert_deformable_conv)


_register()
