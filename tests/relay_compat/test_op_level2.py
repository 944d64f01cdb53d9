"""The 1-D and 3-D cases of TVM v0.18's test_op_level2.py, written as a TVM user writes them.

Only the import lines differ from such a user's TVM code, with two changes
of form: the references TVM takes from ``tvm.topi.testing`` (part of its
code generator) are numpy expressions here, and the upsampling cases whose
expected extents TVM writes as ``tir.Cast("int32", te.round(h * scale))``
keep only their second half (TIR's casts and rounding are not relaypass
dimensions; a size variable times an integral scale is ``h*2`` here).
Symbolic dimensions are written as TVM writes them (``te.var``,
``te.size_var``).  The graph
executor of these cases is relaypass's interpreter.
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing
from relaypass import relay, te
from relaypass.relay.testing import run_infer_type


def test_conv1d_infer_type():
    # symbolic in the batch dimension; the weight's type follows from channels and kernel_size
    n, c, w = te.var("n"), 10, 224
    x = relay.var("x", relay.ty.TensorType((n, c, w), "float32"))
    w = relay.var("w")
    y = relay.nn.conv1d(x, w, kernel_size=3, padding=(1, 1), channels=2)
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 224), "float32")
    assert yy.args[1].checked_type == relay.TensorType((2, 10, 3), "float32")

    # from the weight's shape, accumulating in another dtype
    x = relay.var("x", relay.TensorType((n, c, 224), "int8"))
    w = relay.var("w", relay.TensorType((2, 10, 3), "int8"))
    y = relay.nn.conv1d(x, w, out_dtype="int32")
    assert 'out_dtype="int32"' in y.astext()
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 222), "int32")

    # data and weight of different dtypes
    x = relay.var("x", relay.TensorType((n, c, 224), "uint8"))
    w = relay.var("w", relay.TensorType((2, 10, 3), "int8"))
    y = relay.nn.conv1d(x, w, out_dtype="int32")
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 222), "int32")

    # channels last
    n, c, w = 4, 32, 224
    x = relay.var("x", relay.TensorType((n, w, c), "int8"))
    wt = relay.var("w")
    y = relay.nn.conv1d(
        x, wt, kernel_size=3, padding=(1, 1), channels=16, data_layout="NWC", out_dtype="int32"
    )
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, w, 16), "int32")


def _conv1d_ncw(data, kernel, padding, dilation):
    """Stride-1 convolution of NCW data with an OIW kernel, in numpy."""
    xp = np.pad(data, ((0, 0), (0, 0), tuple(padding)))
    k = kernel.shape[2]
    span = (k - 1) * dilation + 1
    out_w = xp.shape[2] - span + 1
    taps = np.stack([xp[:, :, t * dilation:t * dilation + out_w] for t in range(k)], axis=-1)
    return np.einsum("ncwk,ock->now", taps, kernel)


def test_conv1d_run():
    def run_test_conv1d(dtype, out_dtype, dshape, kshape, padding=(1, 1), dilation=1, **attrs):
        x = relay.var("x", shape=dshape, dtype=dtype)
        w = relay.var("w", dtype=dtype)
        y = relay.nn.conv1d(x, w, padding=padding, dilation=dilation, **attrs)
        func = relay.Function([x, w], y)
        data = np.random.uniform(-1, 1, size=dshape).astype(dtype)
        kernel = np.random.uniform(-1, 1, size=kshape).astype(dtype)
        ref_res = _conv1d_ncw(data.astype(out_dtype), kernel.astype(out_dtype), padding, dilation)
        for target, dev in tvm.testing.enabled_targets():
            op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(
                data, kernel
            )
            tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)

    dshape, kshape = (1, 3, 224), (10, 3, 3)
    run_test_conv1d("float32", "float32", dshape, kshape, channels=10, kernel_size=3)
    run_test_conv1d("int8", "int32", dshape, kshape, channels=10, kernel_size=3)
    run_test_conv1d("float32", "float32", (1, 3, 18), kshape, channels=10, kernel_size=3,
                    dilation=3)


def test_conv3d_infer_type():
    n, c, d, h, w = te.size_var("n"), 10, 24, 24, 24
    x = relay.var("x", relay.ty.TensorType((n, c, d, h, w), "float32"))
    w = relay.var("w")
    y = relay.nn.conv3d(x, w, kernel_size=(3, 3, 3), padding=(1, 1, 1), channels=2)
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 24, 24, 24), "float32")
    assert yy.args[1].checked_type == relay.TensorType((2, 10, 3, 3, 3), "float32")

    x = relay.var("x", relay.TensorType((n, c, d, h, 24), "int8"))
    w = relay.var("w", relay.TensorType((2, 10, 3, 3, 3), "int8"))
    y = relay.nn.conv3d(x, w, out_dtype="int32")
    assert 'out_dtype="int32"' in y.astext()
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 22, 22, 22), "int32")

    x = relay.var("x", relay.TensorType((n, c, d, h, 24), "uint8"))
    w = relay.var("w", relay.TensorType((2, 10, 3, 3, 3), "int8"))
    yy = run_infer_type(relay.nn.conv3d(x, w, out_dtype="int32"))
    assert yy.checked_type == relay.TensorType((n, 2, 22, 22, 22), "int32")

    n, c, d, h, w = 4, 32, 12, 12, 12
    x = relay.var("x", relay.TensorType((n, d, h, w, c), "int8"))
    wt = relay.var("w")
    y = relay.nn.conv3d(
        x, wt, kernel_size=(3, 3, 3), padding=(1, 1, 1), channels=16, data_layout="NDHWC",
        out_dtype="int32",
    )
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, d, h, w, 16), "int32")

    # grouped
    x = relay.var("x", relay.TensorType((1, 16, 12, 12, 12), "float32"))
    w = relay.var("w", relay.TensorType((4, 4, 1, 1, 1), "float32"))
    y = relay.nn.conv3d(x, w, groups=4, kernel_size=(1, 1, 1), channels=4)
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((1, 4, 12, 12, 12), "float32")


def test_conv3d_transpose_infer_type():
    n, c, d, h, w = te.size_var("n"), 10, 12, 12, 12
    x = relay.var("x", relay.ty.TensorType((n, c, d, h, w), "float32"))
    w = relay.var("w")
    y = relay.nn.conv3d_transpose(x, w, kernel_size=(3, 3, 3), padding=(1, 1, 1), channels=2)
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 2, 12, 12, 12), "float32")
    assert yy.args[1].checked_type == relay.TensorType((10, 2, 3, 3, 3), "float32")

    x = relay.var("x", relay.TensorType((n, c, d, h, 12), "int8"))
    w = relay.var("w", relay.TensorType((10, 12, 3, 3, 3), "int8"))
    y = relay.nn.conv3d_transpose(x, w, out_dtype="int32")
    assert 'out_dtype="int32"' in y.astext()
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 12, 14, 14, 14), "int32")


def test_conv3d_transpose_ncdhw_run():
    dshape = (1, 3, 6, 6, 6)
    kshape = (3, 4, 2, 2, 2)
    x = relay.var("x", shape=dshape)
    w = relay.var("w")
    y = relay.nn.conv3d_transpose(
        x, w, channels=4, kernel_size=(2, 2, 2), strides=(1, 1, 1), padding=(1, 1, 1)
    )
    func = relay.Function([x, w], y)
    data = np.random.uniform(size=dshape).astype("float32")
    kernel = np.random.uniform(size=kshape).astype("float32")
    # A stride-1 transposed convolution scatters each input element through the kernel; the
    # padding crops one element from each end.
    full = np.zeros((1, 4, 7, 7, 7))
    for a, b, e in np.ndindex(2, 2, 2):
        full[:, :, a:a + 6, b:b + 6, e:e + 6] += np.einsum("ncdhw,co->nodhw", data,
                                                             kernel[:, :, a, b, e])
    ref_res = full[:, :, 1:-1, 1:-1, 1:-1]
    for target, dev in tvm.testing.enabled_targets():
        op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(
            data, kernel
        )
        tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_infer_type():
    n, c, h, w = te.size_var("n"), 10, 10, 12
    x = relay.var("x", relay.TensorType((n, c, h, w), "float32"))
    w = relay.var("w", relay.IncompleteType())
    y = relay.nn.conv2d_transpose(x, w, kernel_size=(3, 3), padding=(1, 1), channels=15)
    assert "channels=15" in y.astext()
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 15, 10, 12), "float32")
    assert yy.args[1].checked_type == relay.TensorType((10, 15, 3, 3), "float32")

    n, h, w, c = te.size_var("n"), 10, 10, 12
    x = relay.var("x", relay.TensorType((n, h, w, c), "float32"))
    w = relay.var("w", relay.TensorType((12, 11, 5, 5), "float32"))
    y = relay.nn.conv2d_transpose(x, w, output_padding=(1, 1), channels=11, data_layout="NHWC")
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 15, 15, 11), "float32")


def test_conv1d_transpose_ncw_run():
    dshape = (1, 3, 18)
    kshape = (3, 10, 3)
    x = relay.var("x", shape=dshape)
    w = relay.var("w")
    y = relay.nn.conv1d_transpose(
        x, w, channels=10, kernel_size=(3,), strides=(2,), padding=(1,), output_padding=(1,)
    )
    func = relay.Function([x, w], y)
    data = np.random.uniform(size=dshape).astype("float32")
    kernel = np.random.uniform(size=kshape).astype("float32")
    # Stride 2 spreads the inputs two apart; each tap adds its products, shifted by the tap.
    full = np.zeros((1, 10, 2 * 17 + 3 + 1))
    for t in range(3):
        full[:, :, t:t + 35:2] += np.einsum("ncw,co->now", data, kernel[:, :, t])
    ref_res = full[:, :, 1:37]
    for target, dev in tvm.testing.enabled_targets():
        op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(
            data, kernel
        )
        assert op_res1.numpy().shape == (1, 10, 36)
        tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)


def test_upsampling_infer_type():
    n, c = te.size_var("n"), te.size_var("c")
    x = relay.var("x", relay.TensorType((n, c, 100, 200), "float32"))
    y = relay.nn.upsampling(x, scale_h=2, scale_w=2, layout="NCHW", method="bilinear")
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, c, 200, 400), "float32")


def test_upsampling3d_infer_type():
    n, c = te.size_var("n"), te.size_var("c")
    x = relay.var("x", relay.TensorType((n, c, 100, 100, 200), "float32"))
    y = relay.nn.upsampling3d(
        x, scale_d=2, scale_h=2, scale_w=2, layout="NCDHW", method="trilinear"
    )
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, c, 200, 200, 400), "float32")


@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_upsampling3d_nearest_asymmetric(layout):
    # Scale 2 with the asymmetric mode and nearest neighbours repeats every voxel twice.
    ishape = (8, 4, 4, 4) if layout == "NCDHW" else (4, 4, 4, 8)
    x = relay.var("x", shape=(1,) + ishape)
    y = relay.nn.upsampling3d(x, 2.0, 2.0, 2.0, layout=layout, method="nearest_neighbor",
                              coordinate_transformation_mode="asymmetric")
    func = relay.Function([x], y)
    data = np.random.uniform(size=(1,) + ishape).astype("float32")
    axes = (2, 3, 4) if layout == "NCDHW" else (1, 2, 3)
    ref = data
    for axis in axes:
        ref = ref.repeat(2, axis=axis)
    for target, dev in tvm.testing.enabled_targets():
        out = relay.create_executor("graph", device=dev, target=target).evaluate(func)(data)
        tvm.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-5)


def _test_global_pool1d(opfunc, reffunc):
    n, c, w = te.size_var("n"), te.size_var("c"), 224
    x = relay.var("x", relay.TensorType((n, w, c), "float32"))
    y = opfunc(x, layout="NWC")
    yy = run_infer_type(y)
    assert yy.checked_type == relay.TensorType((n, 1, c), "float32")

    n, c, w = te.size_var("n"), te.size_var("c"), te.size_var("w")
    x = relay.var("x", relay.TensorType((n, c, w), "float32"))
    yy = run_infer_type(opfunc(x))
    assert yy.checked_type == relay.TensorType((n, c, 1), "float32")

    dshape = (1, 1024, 7)
    x = relay.var("x", shape=dshape)
    func = relay.Function([x], opfunc(x))
    data = np.random.uniform(size=dshape).astype("float32")
    ref_res = reffunc(data, axis=(2,), keepdims=True)
    for target, dev in tvm.testing.enabled_targets():
        op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(data)
        tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)


def test_pool1d():
    def _test_pool1d(opfunc, pool_size=2, strides=2, dilation=1, padding=0, dtype="float32"):
        n, c, w = te.var("n"), 10, 224
        x = relay.var("x", relay.TensorType((n, c, w), "float32"))
        y = opfunc(x, pool_size=(1,))
        assert "pool_size=" in y.astext()
        yy = run_infer_type(y)
        assert yy.checked_type == relay.TensorType((n, 10, 224), "float32")

        dshape = (1, 3, 32)
        x = relay.var("x", shape=dshape, dtype=dtype)
        y = opfunc(x, pool_size=pool_size, strides=strides, dilation=dilation, padding=padding)
        func = relay.Function([x], y)
        data = np.random.uniform(size=dshape).astype(dtype)
        # with no padding, every window lies inside the data
        span = (pool_size - 1) * dilation + 1
        starts = range(0, 32 - span + 1, strides)
        windows = np.stack([data[:, :, s:s + span:dilation] for s in starts], axis=2)
        reduce = np.max if "max" in opfunc.__name__ else np.mean
        ref_res = reduce(windows, axis=3).astype(dtype)
        for target, dev in tvm.testing.enabled_targets():
            op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(
                data
            )
            tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)

    _test_pool1d(relay.nn.max_pool1d)
    _test_pool1d(relay.nn.max_pool1d, dtype="int32")
    _test_pool1d(relay.nn.max_pool1d, pool_size=2, strides=2, padding=0, dilation=2)
    _test_pool1d(relay.nn.avg_pool1d)
    _test_pool1d(relay.nn.avg_pool1d, pool_size=2, strides=2, padding=0, dilation=2)
    _test_global_pool1d(relay.nn.global_max_pool1d, np.max)
    _test_global_pool1d(relay.nn.global_avg_pool1d, np.mean)


def test_pool3d():
    def _test_pool3d(opfunc, padding=(0, 0, 0, 0, 0, 0)):
        n, c, d, h, w = te.size_var("n"), 10, 5, 24, 24
        x = relay.var("x", relay.TensorType((n, c, d, h, w), "float32"))
        y = opfunc(x, pool_size=(1, 1, 1))
        assert "pool_size=" in y.astext()
        yy = run_infer_type(y)
        assert yy.checked_type == relay.TensorType((n, 10, 5, 24, 24), "float32")

        dshape = (1, 3, 8, 8, 8)
        x = relay.var("x", shape=dshape)
        y = opfunc(x, pool_size=2, strides=2, padding=padding)
        func = relay.Function([x], y)
        data = np.random.uniform(size=dshape).astype("float32")
        # max pooling pads with the dtype's lowest value; average pooling leaves the padding
        # out of the count (a window of padding only averages to 0)
        pads = list(zip(padding[:3], padding[3:]))
        lowest = np.finfo("float32").min
        xp = np.pad(data, [(0, 0), (0, 0), *pads], constant_values=lowest)
        outs = [(8 + sum(p) - 2) // 2 + 1 for p in pads]
        blocks = xp[:, :, :outs[0] * 2, :outs[1] * 2, :outs[2] * 2].reshape(
            1, 3, outs[0], 2, outs[1], 2, outs[2], 2)
        if "max" in opfunc.__name__:
            ref_res = blocks.max(axis=(3, 5, 7))
        else:
            inside = blocks != lowest
            ref_res = (np.where(inside, blocks, 0).sum(axis=(3, 5, 7))
                       / np.maximum(inside.sum(axis=(3, 5, 7)), 1))
        for target, dev in tvm.testing.enabled_targets():
            op_res1 = relay.create_executor("graph", device=dev, target=target).evaluate(func)(
                data
            )
            tvm.testing.assert_allclose(op_res1.numpy(), ref_res, rtol=1e-5, atol=1e-5)

    _test_pool3d(relay.nn.max_pool3d)
    _test_pool3d(relay.nn.max_pool3d, padding=(2, 0, 0, 2, 0, 0))
    _test_pool3d(relay.nn.max_pool3d, padding=(0, 3, 0, 0, 3, 0))
    _test_pool3d(relay.nn.avg_pool3d)
    _test_pool3d(relay.nn.avg_pool3d, padding=(2, 0, 0, 2, 0, 0))
    _test_pool3d(relay.nn.avg_pool3d, padding=(0, 0, 4, 0, 0, 4))
