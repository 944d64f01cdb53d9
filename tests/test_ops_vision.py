"""vision.roi_align and vision.roi_pool: relations, and kernels against scalar loops that
follow TVM's definitions point by point."""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import OpPattern

X = relay.var("x", shape=(2, 3, 7, 9))
R = relay.var("rois", shape=(4, 5))


def _rois(rng, count, batch, height, width, scale):
    x1 = rng.uniform(-2, width / scale, count)
    y1 = rng.uniform(-2, height / scale, count)
    x2 = x1 + rng.uniform(0, width / scale, count)
    y2 = y1 + rng.uniform(0, height / scale, count)
    return np.stack([rng.integers(0, batch, count), x1, y1, x2, y2], axis=1).astype("float32")


def _point(plane, y, x):
    """One bilinear sample as TVM's roi_align reads it: 0 past a pixel outside the map."""
    height, width = plane.shape
    if y < -1 or y > height or x < -1 or x > width:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(math.floor(y)), int(math.floor(x))
    y1, x1 = min(int(math.ceil(y)), height - 1), min(int(math.ceil(x)), width - 1)
    y0, x0 = min(y0, height - 1), min(x0, width - 1)
    ly, lx = y - math.floor(y), x - math.floor(x)
    return ((plane[y0, x0] * (1 - lx) + plane[y0, x1] * lx) * (1 - ly)
            + (plane[y1, x0] * (1 - lx) + plane[y1, x1] * lx) * ly)


def _roi_align_loop(data, rois, pooled, scale, ratio, mode):
    ph, pw = pooled
    out = np.zeros((len(rois), data.shape[1], ph, pw))
    for i, (b, x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        x1, y1, x2, y2 = x1 * scale, y1 * scale, x2 * scale, y2 * scale
        bh, bw = max(y2 - y1, 1.0) / ph, max(x2 - x1, 1.0) / pw
        gh = ratio if ratio > 0 else math.ceil(bh)
        gw = ratio if ratio > 0 else math.ceil(bw)
        for c in range(data.shape[1]):
            for r in range(ph):
                for q in range(pw):
                    vals = [_point(data[int(b), c], y1 + r * bh + (u + 0.5) * bh / gh,
                                   x1 + q * bw + (v + 0.5) * bw / gw)
                            for u in range(gh) for v in range(gw)]
                    out[i, c, r, q] = max(vals) if mode == "max" else sum(vals) / len(vals)
    return out


def _roi_pool_loop(data, rois, pooled, scale):
    ph, pw = pooled
    height, width = data.shape[2:]
    out = np.zeros((len(rois), data.shape[1], ph, pw), dtype=data.dtype)
    for i, roi in enumerate(rois.astype(np.float64)):
        x1, y1, x2, y2 = (int(np.rint(v * scale)) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for c in range(data.shape[1]):
            for r in range(ph):
                for q in range(pw):
                    best = None
                    for yy in range(math.floor(r * bh) + y1, math.ceil((r + 1) * bh) + y1):
                        for xx in range(math.floor(q * bw) + x1, math.ceil((q + 1) * bw) + x1):
                            if 0 <= yy < height and 0 <= xx < width:
                                v = data[int(roi[0]), c, yy, xx]
                                best = v if best is None else max(best, v)
                    out[i, c, r, q] = 0 if best is None else best
    return out


@pytest.mark.parametrize("ratio, mode", [(2, "avg"), (-1, "avg"), (1, "max"), (-1, "max")])
def test_roi_align_matches_loop(ratio, mode):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 7, 9)).astype("float32")
    rois = _rois(rng, 5, 2, 7, 9, 0.5)
    call = relay.vision.roi_align(X, R, pooled_size=(2, 3), spatial_scale=0.5,
                                  sample_ratio=ratio, mode=mode)
    out = evaluate(call, data, rois)
    np.testing.assert_allclose(out, _roi_align_loop(data, rois, (2, 3), 0.5, ratio, mode),
                               rtol=1e-5, atol=1e-5)
    nhwc = relay.vision.roi_align(X, R, pooled_size=(2, 3), spatial_scale=0.5,
                                  sample_ratio=ratio, mode=mode, layout="NHWC")
    np.testing.assert_allclose(evaluate(nhwc, data.transpose(0, 2, 3, 1), rois),
                               out.transpose(0, 2, 3, 1), rtol=1e-6)


def test_roi_pool_matches_loop():
    rng = np.random.default_rng(2)
    data = rng.standard_normal((2, 3, 7, 9)).astype("float32")
    rois = _rois(rng, 6, 2, 7, 9, 0.5)
    out = evaluate(relay.vision.roi_pool(X, R, pooled_size=(3, 2), spatial_scale=0.5), data,
                   rois)
    np.testing.assert_array_equal(out, _roi_pool_loop(data, rois, (3, 2), 0.5))
    nhwc = relay.vision.roi_pool(X, R, pooled_size=(3, 2), spatial_scale=0.5, layout="NHWC")
    np.testing.assert_array_equal(evaluate(nhwc, data.transpose(0, 2, 3, 1), rois),
                                  out.transpose(0, 2, 3, 1))


def test_roi_relations_patterns_and_text():
    align = relay.vision.roi_align(X, R, pooled_size=(2, 3), spatial_scale=0.5, layout="NHWC")
    assert relation(align, T((2, 7, 9, 3)), T((4, 5))) == T((4, 2, 3, 3))
    pool = relay.vision.roi_pool(X, R, pooled_size=(2, 3), spatial_scale=0.5)
    assert relation(pool, T((2, 3, 7, 9)), T((4, 5))) == T((4, 3, 2, 3))
    for call in (align, pool):
        assert call.op.get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
        assert_text_round_trip(call)


@pytest.mark.parametrize("build, types, message", [
    (lambda: relay.vision.roi_align(X, R, (2, 2), 1.0), (T((2, 3, 7, 9)), T((4, 4))),
     "vision.roi_align: rois must have 5 columns"),
    (lambda: relay.vision.roi_pool(X, R, (2, 2), 1.0, layout="HWCN"),
     (T((2, 3, 7, 9)), T((4, 5))), "vision.roi_pool: attribute layout"),
    (lambda: relay.vision.roi_align(X, R, (2, 2), 1.0, mode="min"),
     (T((2, 3, 7, 9)), T((4, 5))), "vision.roi_align: attribute mode"),
    (lambda: relay.vision.roi_pool(X, R, (2, 2), 1.0), (T((3, 7, 9)), T((4, 5))),
     "vision.roi_pool: data"),
])
def test_roi_errors_name_the_operator(build, types, message):
    with pytest.raises(TypeRelationError, match=message):
        relation(build(), *types)
