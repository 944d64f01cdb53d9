"""Region-of-interest operators of object detection, the ``relay.vision`` namespace.

``vision.roi_align`` and ``vision.roi_pool`` cut a fixed-size feature map out
of a 4-D feature tensor for each region: a ``rois`` row is
``[batch_index, x1, y1, x2, y2]`` in input-image coordinates, which
``spatial_scale`` maps onto the feature map.  They follow TVM's kernels
(topi's ``roi_align`` without the half-pixel offset, Caffe's max ROI pool), in
the layouts ``NCHW`` and ``NHWC``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import TensorType, Type
from .builder import call
from .relations import (
    attr_choice,
    attr_int,
    attr_ints,
    attr_number,
    dims_equal_or_unknown,
    expect_float,
    expect_rank,
    expect_same_dtype,
    expect_tensor,
    fail,
    shape_str,
)

__all__ = ["roi_align", "roi_pool"]

_LAYOUTS = ("NCHW", "NHWC")


def _roi_rel(op_name: str, arg_types: Sequence[Type], attrs: Attrs) -> TensorType:
    data = expect_tensor(arg_types[0], f"{op_name}: data")
    rois = expect_tensor(arg_types[1], f"{op_name}: rois")
    expect_float(data, op_name, "data")
    expect_rank(data, 4, op_name, "data")
    expect_rank(rois, 2, op_name, "rois")
    expect_same_dtype(data, rois, op_name, "data", "rois")
    if not dims_equal_or_unknown(rois.shape[1], 5):
        raise fail(op_name, f"rois must have 5 columns (batch index, x1, y1, x2, y2), got shape "
                   f"{shape_str(rois.shape)}")
    ph, pw = attr_ints(attrs.pooled_size, "pooled_size", op_name, length=2, minimum=1)
    attr_number(attrs.spatial_scale, "spatial_scale", op_name)
    layout = attr_choice(attrs.layout, "layout", op_name, _LAYOUTS)
    channels = data.shape[1] if layout == "NCHW" else data.shape[3]
    shape = (rois.shape[0], channels, ph, pw) if layout == "NCHW" else (rois.shape[0], ph, pw,
                                                                         channels)
    return TensorType(shape, data.dtype)


def _roi_align_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    attr_int(attrs.sample_ratio, "sample_ratio", "vision.roi_align")
    attr_choice(attrs.mode, "mode", "vision.roi_align", ("avg", "max"))
    return _roi_rel("vision.roi_align", arg_types, attrs)


def _roi_pool_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    return _roi_rel("vision.roi_pool", arg_types, attrs)


def _as_nchw(kernel):
    """Run an NCHW kernel on data in either layout."""

    def run(args, attrs):
        data, rois = args
        if attrs.layout == "NHWC":
            data = data.transpose(0, 3, 1, 2)
        out = kernel(np.ascontiguousarray(data), rois, attrs)
        if attrs.layout == "NHWC":
            out = out.transpose(0, 2, 3, 1)
        return np.ascontiguousarray(out.astype(args[0].dtype, copy=False))

    return run


def _bilinear(plane: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``plane`` (C, H, W) sampled at every (y, x) of a grid: (C, len(y), len(x)); a point more
    than one pixel outside the map reads 0, one within a pixel of it reads the edge."""
    height, width = plane.shape[1:]
    out_y = (y < -1.0) | (y > height)
    out_x = (x < -1.0) | (x > width)
    y = np.clip(y, 0, height - 1)
    x = np.clip(x, 0, width - 1)
    y0 = np.minimum(np.floor(y).astype(np.int64), height - 1)
    x0 = np.minimum(np.floor(x).astype(np.int64), width - 1)
    y1 = np.minimum(y0 + 1, height - 1)
    x1 = np.minimum(x0 + 1, width - 1)
    ly = (y - y0)[:, None]
    lx = (x - x0)[None, :]
    top = plane[:, y0][:, :, x0] * (1 - lx) + plane[:, y0][:, :, x1] * lx
    bottom = plane[:, y1][:, :, x0] * (1 - lx) + plane[:, y1][:, :, x1] * lx
    value = top * (1 - ly) + bottom * ly
    return np.where((out_y[:, None] | out_x[None, :])[None], 0.0, value)


def _roi_align_nchw(data: np.ndarray, rois: np.ndarray, attrs: Attrs) -> np.ndarray:
    ph, pw = attrs.pooled_size
    scale = float(attrs.spatial_scale)
    out = np.zeros((rois.shape[0], data.shape[1], ph, pw), dtype=np.float64)
    for i, roi in enumerate(rois.astype(np.float64)):
        x1, y1, x2, y2 = roi[1:] * scale
        bin_h = max(y2 - y1, 1.0) / ph
        bin_w = max(x2 - x1, 1.0) / pw
        grid_h = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(bin_h)
        grid_w = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(bin_w)
        # Sample points: grid_h x grid_w evenly inside each of the ph x pw bins.
        ys = y1 + (np.arange(ph)[:, None] * bin_h
                   + (np.arange(grid_h)[None, :] + 0.5) * bin_h / grid_h).ravel()
        xs = x1 + (np.arange(pw)[:, None] * bin_w
                   + (np.arange(grid_w)[None, :] + 0.5) * bin_w / grid_w).ravel()
        samples = _bilinear(data[int(roi[0])].astype(np.float64), ys, xs)
        samples = samples.reshape(data.shape[1], ph, grid_h, pw, grid_w)
        if attrs.mode == "max":
            out[i] = samples.max(axis=(2, 4))
        else:
            out[i] = samples.mean(axis=(2, 4))
    return out


def _roi_pool_nchw(data: np.ndarray, rois: np.ndarray, attrs: Attrs) -> np.ndarray:
    ph, pw = attrs.pooled_size
    scale = float(attrs.spatial_scale)
    height, width = data.shape[2:]
    out = np.zeros((rois.shape[0], data.shape[1], ph, pw), dtype=data.dtype)
    for i, roi in enumerate(rois.astype(np.float64)):
        x1, y1, x2, y2 = (int(v) for v in np.rint(roi[1:] * scale))
        bin_h = max(y2 - y1 + 1, 1) / ph
        bin_w = max(x2 - x1 + 1, 1) / pw
        plane = data[int(roi[0])]
        for r in range(ph):
            h0 = min(max(math.floor(r * bin_h) + y1, 0), height)
            h1 = min(max(math.ceil((r + 1) * bin_h) + y1, 0), height)
            for c in range(pw):
                w0 = min(max(math.floor(c * bin_w) + x1, 0), width)
                w1 = min(max(math.ceil((c + 1) * bin_w) + x1, 0), width)
                if h1 > h0 and w1 > w0:  # an empty bin stays 0
                    out[i, :, r, c] = plane[:, h0:h1, w0:w1].max(axis=(1, 2))
    return out


register_op(
    "vision.roi_align", num_inputs=2, type_relation=_roi_align_rel,
    kernel=_as_nchw(_roi_align_nchw), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"pooled_size": REQUIRED, "spatial_scale": REQUIRED, "sample_ratio": -1,
           "layout": "NCHW", "mode": "avg"},
    attrs_type_key="relay.attrs.ROIAlignAttrs",
    description="Average (or max) of bilinear samples in each bin of each region.",
)
register_op(
    "vision.roi_pool", num_inputs=2, type_relation=_roi_pool_rel,
    kernel=_as_nchw(_roi_pool_nchw), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    attrs={"pooled_size": REQUIRED, "spatial_scale": REQUIRED, "layout": "NCHW"},
    attrs_type_key="relay.attrs.ROIPoolAttrs",
    description="Maximum over the pixels of each bin of each region (rounded to pixels).",
)


def roi_align(data: Expr, rois: Expr, pooled_size: Sequence[int], spatial_scale: float,
              sample_ratio: int = -1, layout: str = "NCHW", mode: str = "avg") -> Call:
    """``sample_ratio`` points per bin side; -1 takes as many as the bin is pixels wide."""
    return call("vision.roi_align", [data, rois], pooled_size=tuple(int(p) for p in pooled_size),
                spatial_scale=float(spatial_scale), sample_ratio=int(sample_ratio),
                layout=str(layout), mode=str(mode))


def roi_pool(data: Expr, rois: Expr, pooled_size: Sequence[int], spatial_scale: float,
             layout: str = "NCHW") -> Call:
    return call("vision.roi_pool", [data, rois], pooled_size=tuple(int(p) for p in pooled_size),
                spatial_scale=float(spatial_scale), layout=str(layout))
