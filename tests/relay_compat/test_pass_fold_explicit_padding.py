"""FoldExplicitPadding against Relay's behaviour (TVM v0.18's test_pass_fold_explicit_padding.py, in
this project's words), for the 1-D, 2-D and 3-D convolutions and pools in both channel orders; the
qnn.conv2d cases are out of scope with QNN."""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call


def run(expr, opt_pass):
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(expr))
    return opt_pass(mod)["main"]


def has_pad(func):
    found = []
    post_order_visit(func, lambda e: found.append(e) if isinstance(e, Call)
                     and getattr(e.op, "name", "") == "nn.pad" else None)
    return bool(found)


def spatial_padding(pad_width, layout, own):
    """The operator padding a folded pad gives: befores then afters of D/H/W, plus its own."""
    widths = [pad_width[i][side] for side in (0, 1) for i, axis in enumerate(layout) if axis in "DHW"]
    return [a + b for a, b in zip(widths, own)]


def same_values(before, after, shape, dtype="float32", *extra_shapes):
    rng = np.random.default_rng(0)
    args = [rng.random(shape).astype(dtype)] + [rng.random(s).astype(dtype) for s in extra_shapes]
    outs = [relay.create_executor("debug", mod=tvm.IRModule.from_expr(f)).evaluate()(*args).numpy()
            for f in (before, after)]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)


CONVS = {1: relay.nn.conv1d, 2: relay.nn.conv2d, 3: relay.nn.conv3d}
MAX_POOLS = {1: relay.nn.max_pool1d, 2: relay.nn.max_pool2d, 3: relay.nn.max_pool3d}
AVG_POOLS = {1: relay.nn.avg_pool1d, 2: relay.nn.avg_pool2d, 3: relay.nn.avg_pool3d}


def layout_of(ndim, channels_last):
    """NCW / NCHW / NCDHW, or NWC / NHWC / NDHWC with ``channels_last``."""
    spatial = "DHW"[3 - ndim:]
    return f"N{spatial}C" if channels_last else f"NC{spatial}"


def image(ndim, channels_last, channels=3):
    """The shape of an input of the layout, 10 wide along each spatial axis."""
    return [1, *[10] * ndim, channels] if channels_last else [1, channels, *[10] * ndim]


def spatial_pad(ndim, channels_last, inner):
    """A pad width that pads each spatial axis by ``inner`` and nothing else."""
    return [[0, 0], *[inner] * ndim, [0, 0]] if channels_last else [[0, 0], [0, 0], *[inner] * ndim]


def conv_nd(ndim, data, weight, padding, channels_last):
    if not channels_last:
        return CONVS[ndim](data, weight, padding=padding)
    return CONVS[ndim](data, weight, padding=padding, data_layout=layout_of(ndim, True),
                       kernel_layout="DHWIO"[3 - ndim:])


CONV_CASES = [(own, inner, ndim, last) for own in ([0, 0], [2, 0], [0, 2])
              for inner in ([0, 0], [1, 1], [1, 0]) for ndim in (1, 2, 3) for last in (False, True)]


@pytest.mark.parametrize("own, inner, ndim, channels_last", CONV_CASES)
def test_a_zero_pad_folds_into_the_convolution(own, inner, ndim, channels_last):
    shape = image(ndim, channels_last)
    wshape = [*[3] * ndim, 3, 8] if channels_last else [8, 3, *[3] * ndim]
    pad_width = spatial_pad(ndim, channels_last, inner)
    x = relay.var("x", shape=shape)
    w = relay.var("w", shape=wshape)
    conv = conv_nd(ndim, relay.nn.pad(x, pad_width, 0, "constant"), w, own * ndim, channels_last)
    got = run(relay.Function([x, w], conv), relay.transform.FoldExplicitPadding())
    layout = layout_of(ndim, channels_last)
    expected = conv_nd(ndim, x, w, spatial_padding(pad_width, layout, own * ndim), channels_last)
    tvm.ir.assert_structural_equal(got, run(relay.Function([x, w], expected), relay.transform.InferType()))
    assert not has_pad(got)
    same_values(run(relay.Function([x, w], conv), relay.transform.InferType()), got, shape,
                "float32", wshape)


@pytest.mark.parametrize("value, mode", [(1, "constant"), (0, "edge")])
def test_conv2d_keeps_a_pad_of_other_values_or_modes(value, mode):
    x = relay.var("x", shape=(1, 3, 10, 10))
    w = relay.var("w", shape=(8, 3, 3, 3))
    conv = relay.nn.conv2d(relay.nn.pad(x, [[0, 0], [0, 0], [1, 1], [1, 1]], value, mode), w)
    func = run(relay.Function([x, w], conv), relay.transform.InferType())
    tvm.ir.assert_structural_equal(run(func, relay.transform.FoldExplicitPadding()), func)


def _pool(kind, data, own, layout, ndim=2, **kwargs):
    fn = (MAX_POOLS if kind == "max" else AVG_POOLS)[ndim]
    return fn(data, pool_size=2, padding=own, layout=layout, **kwargs)


@pytest.mark.parametrize("own, inner, ndim, channels_last", [
    (own, inner, ndim, last) for own in ([0, 0], [2, 0]) for inner in ([1, 1], [1, 0])
    for ndim in (1, 2, 3) for last in (False, True)])
def test_a_lowest_value_pad_folds_into_max_pool(own, inner, ndim, channels_last):
    shape = image(ndim, channels_last)
    layout = layout_of(ndim, channels_last)
    pad_width = spatial_pad(ndim, channels_last, inner)
    x = relay.var("x", shape=shape)
    lowest = relay.const(np.finfo("float32").min, "float32")
    pool = _pool("max", relay.nn.pad(x, pad_width, lowest, "constant"), own * ndim, layout, ndim)
    got = run(relay.Function([x], pool), relay.transform.FoldExplicitPadding())
    expected = _pool("max", x, spatial_padding(pad_width, layout, own * ndim), layout, ndim)
    tvm.ir.assert_structural_equal(got, run(relay.Function([x], expected), relay.transform.InferType()))
    same_values(run(relay.Function([x], pool), relay.transform.InferType()), got, shape)


def test_a_max_pool_folds_a_pad_that_pads_nothing_into_its_own_padding():
    x = relay.var("x", shape=(1, 3, 10))
    lowest = relay.const(np.finfo("float32").min, "float32")
    pool = _pool("max", relay.nn.pad(x, [[0, 0], [0, 0], [0, 0]], lowest, "constant"), [2, 0],
                 "NCW", 1)
    got = run(relay.Function([x], pool), relay.transform.FoldExplicitPadding())
    expected = _pool("max", x, [2, 0], "NCW", 1)
    tvm.ir.assert_structural_equal(got, run(relay.Function([x], expected), relay.transform.InferType()))


def test_max_pool_of_unsigned_integers_folds_a_pad_of_zero_their_lowest():
    x = relay.var("x", shape=(1, 3, 10, 10), dtype="uint8")
    pad_width = [[0, 0], [0, 0], [0, 2], [2, 0]]
    pool = _pool("max", relay.nn.pad(x, pad_width, relay.const(0, "uint8"), "constant"),
                 [2, 0, 0, 0], "NCHW")
    got = run(relay.Function([x], pool), relay.transform.FoldExplicitPadding())
    expected = _pool("max", x, spatial_padding(pad_width, "NCHW", [2, 0, 0, 0]), "NCHW")
    tvm.ir.assert_structural_equal(got, run(relay.Function([x], expected), relay.transform.InferType()))


@pytest.mark.parametrize("own, count_include_pad", [([0, 0, 1, 0], True), ([0, 0, 0, 0], False)])
def test_avg_pool_folds_a_zero_pad_when_it_counts_padding_or_has_none(own, count_include_pad):
    x = relay.var("x", shape=(1, 3, 10, 10))
    pad_width = [[0, 0], [0, 0], [0, 2], [2, 0]]
    pool = _pool("avg", relay.nn.pad(x, pad_width, relay.const(0.0), "constant"), own, "NCHW",
                 count_include_pad=count_include_pad)
    got = run(relay.Function([x], pool), relay.transform.FoldExplicitPadding())
    # With no padding of its own, the folded pool is made to count the padding it now does.
    expected = _pool("avg", x, spatial_padding(pad_width, "NCHW", own), "NCHW",
                     count_include_pad=True)
    tvm.ir.assert_structural_equal(got, run(relay.Function([x], expected), relay.transform.InferType()))
    same_values(run(relay.Function([x], pool), relay.transform.InferType()), got, (1, 3, 10, 10))


@pytest.mark.parametrize("kind, value, mode, own", [
    ("max", 0.0, "constant", [0, 0, 0, 0]),     # not the lowest value
    ("avg", 1.0, "constant", [0, 0, 0, 0]),     # not zero
    ("avg", 0.0, "edge", [0, 0, 0, 0]),         # not constant
    ("avg", 0.0, "constant", [1, 0, 0, 0]),     # its own padding, not counted
])
def test_pools_keep_pads_they_cannot_fold(kind, value, mode, own):
    x = relay.var("x", shape=(1, 3, 10, 10))
    pool = _pool(kind, relay.nn.pad(x, [[0, 0], [0, 0], [0, 2], [0, 2]], relay.const(value), mode),
                 own, "NCHW")
    func = run(relay.Function([x], pool), relay.transform.InferType())
    tvm.ir.assert_structural_equal(run(func, relay.transform.FoldExplicitPadding()), func)


@pytest.mark.parametrize("kind, value, mode", [
    ("max", 0.0, "constant"),     # not the lowest value
    ("avg", 1.0, "constant"),     # not zero
    ("avg", 0.0, "edge"),         # not constant
])
def test_1d_pools_keep_pads_they_cannot_fold(kind, value, mode):
    x = relay.var("x", shape=(1, 3, 10))
    pool = _pool(kind, relay.nn.pad(x, [[0, 0], [0, 0], [0, 2]], relay.const(value), mode),
                 [0, 0], "NCW", 1)
    func = run(relay.Function([x], pool), relay.transform.InferType())
    tvm.ir.assert_structural_equal(run(func, relay.transform.FoldExplicitPadding()), func)


def test_a_pad_of_a_pad_folds_twice_and_a_channel_pad_does_not_fold():
    x = relay.var("x", shape=(1, 3, 10, 10))
    w = relay.var("w", shape=(8, 3, 3, 3))
    twice = relay.nn.pad(relay.nn.pad(x, [[0, 0], [0, 0], [1, 1], [1, 1]]), [[0, 0], [0, 0], [1, 0], [0, 1]])
    got = run(relay.Function([x, w], relay.nn.conv2d(twice, w)), relay.transform.FoldExplicitPadding())
    assert not has_pad(got) and tuple(got.body.attrs.padding) == (2, 1, 1, 2)
    channels = relay.nn.conv2d(relay.nn.pad(x, [[0, 0], [1, 0], [0, 0], [0, 0]]),
                               relay.var("w2", shape=(8, 4, 3, 3)))
    func = run(relay.Function(relay.analysis.free_vars(channels), channels), relay.transform.InferType())
    tvm.ir.assert_structural_equal(run(func, relay.transform.FoldExplicitPadding()), func)
