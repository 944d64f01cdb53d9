"""DynamicToStatic on the cases of TVM v0.18's test_pass_dynamic_to_static.py, as a TVM user
writes them (the interpreter stands in for every executor and target).

The facts: a dyn.* call whose shape-giving arguments fold to constants (``shape_of`` of a
tensor of static type, parameters bound to constants, a constant depth) becomes the static
operator with those values as attributes, the result types with static extents, and the
program computes what it computed before: reshape (also two and four reshapes feeding each
other's shapes), squeeze, tile, topk over k, axes and return kinds, broadcast_to, zeros and
ones, resize2d, one_hot, full, upsampling (2-D and 3-D), pad, strided_slice (end and size
modes, negative strides), sparse_to_dense, a full whose shape went through a dynamic
strided_slice of a shape, and an If on a constant condition.

TVM's reference implementations (``tvm.topi.testing``) are out of scope; the expected
values come from numpy and small loops written here.
"""
import numpy as np

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay import transform
from relaypass.relay.build_module import bind_params_by_name
from relaypass.relay.testing import run_infer_type


def run_opt_pass(expr, opt_pass, params=None):
    assert isinstance(opt_pass, tvm.transform.Pass)
    mod = tvm.IRModule.from_expr(expr)
    if params is not None:
        mod["main"] = bind_params_by_name(mod["main"], params)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def to_static(func, params=None):
    """DynamicToStatic (with ``params`` bound first), then InferType, as the cases do."""
    return run_opt_pass(run_opt_pass(func, transform.DynamicToStatic(), params),
                        transform.InferType())


def made_static(func, op_name, params=None):
    """``to_static(func, params)`` and its body, which must be a call of ``op_name``."""
    out = to_static(func, params)
    assert isinstance(out.body, relay.Call) and out.body.op == relay.op.get(op_name)
    return out, out.body


def verify_func(func, data, ref_res, rtol=1e-5, atol=1e-7):
    assert isinstance(data, list)
    for target, dev in tvm.testing.enabled_targets():
        for kind in ["graph", "vm", "debug"]:
            mod = tvm.ir.IRModule.from_expr(func)
            op_res = relay.create_executor(kind, mod=mod, device=dev, target=target).evaluate()(
                *data
            )
            tvm.testing.assert_allclose(op_res.numpy(), ref_res, rtol=rtol, atol=atol)


def uniform(shape, dtype="float32"):
    return np.random.uniform(low=-1, high=1, size=shape).astype(dtype)


def test_reshape_by_the_shape_of_a_static_tensor():
    def check(shape, newshape, oshape):
        x = relay.var("x", relay.TensorType(shape, "float32"))
        y = relay.var("y", relay.TensorType(newshape, "float32"))
        func = run_infer_type(relay.Function([x, y], relay.reshape(x, relay.shape_of(y))))
        out, body = made_static(func, "reshape")
        assert "newshape=" in body.astext()
        assert body.checked_type == relay.ty.TensorType(oshape, "float32")
        x_data, y_data = uniform(shape), uniform(newshape)
        verify_func(out, [x_data, y_data], np.reshape(x_data, oshape))

    check((2, 3, 4), (8, 3), (8, 3))
    check((4, 7), (2, 7, 2), (2, 7, 2))


def test_squeeze_by_the_shape_of_a_static_tensor():
    def check(shape, axis, oshape):
        x = relay.var("x", relay.TensorType(shape, "float32"))
        y = relay.var("y", relay.TensorType(axis, "float32"))
        func = run_infer_type(relay.Function([x, y], relay.squeeze(x, relay.shape_of(y))))
        out, body = made_static(func, "squeeze")
        assert "axis=" in body.astext()
        assert body.checked_type == relay.ty.TensorType(oshape, "float32")
        x_data, y_data = uniform(shape), uniform(axis)
        verify_func(out, [x_data, y_data], np.squeeze(x_data, axis))

    check((1, 3, 4, 1), (0,), (3, 4, 1))
    check((1, 3, 4, 1), (3,), (1, 3, 4))
    check((1, 3, 4, 1), (0, 3), (3, 4))


def check_reshaped_back_to_the_input(build):
    """``build(x, y)`` reshapes ``x`` by shapes of ``y`` and back: all static, ``x`` again."""
    for shape, newshape in (((2, 3, 4), (8, 3)), ((4, 7), (2, 7, 2))):
        x = relay.var("x", relay.TensorType(shape, "float32"))
        y = relay.var("y", relay.TensorType(newshape, "float32"))
        out, body = made_static(run_infer_type(relay.Function([x, y], build(x, y))), "reshape")
        assert "newshape=" in body.astext()
        assert body.checked_type == relay.ty.TensorType(shape, "float32")
        x_data = uniform(shape)
        verify_func(out, [x_data, uniform(newshape)], x_data)


def test_two_reshapes_the_second_by_the_shape_of_the_input():
    check_reshaped_back_to_the_input(
        lambda x, y: relay.reshape(relay.reshape(x, relay.shape_of(y)), relay.shape_of(x)))


def test_four_reshapes_each_by_the_shape_of_an_earlier_one():
    def build(x, y):
        z1 = relay.reshape(x, relay.shape_of(y))
        z2 = relay.reshape(z1, relay.shape_of(x))
        z3 = relay.reshape(z2, relay.shape_of(z1))
        return relay.reshape(z3, relay.shape_of(z2))

    check_reshaped_back_to_the_input(build)


def test_tile_by_the_shape_of_a_static_tensor():
    def check(shape, reps, oshape):
        x = relay.var("x", relay.TensorType(shape, "float32"))
        y = relay.var("y", relay.TensorType(reps, "float32"))
        func = run_infer_type(relay.Function([x, y], relay.tile(x, relay.shape_of(y))))
        out, body = made_static(func, "tile")
        assert body.checked_type == relay.ty.TensorType(oshape, "float32")
        x_data = uniform(shape)
        verify_func(out, [x_data, uniform(reps)], np.tile(x_data, reps))

    check((2, 3, 4), (2, 1, 5), (4, 3, 20))
    check((4, 7), (4, 2), (16, 14))


def test_topk_with_k_bound_to_a_constant():
    def check(k, axis, ret_type, is_ascend, dtype):
        shape = (20, 100)
        x = relay.var("x", relay.TensorType(shape, "float32"))
        k_var = relay.var("k", relay.TensorType((), "int32"))
        out = relay.topk(x, k_var, axis, ret_type, is_ascend, dtype)
        if isinstance(out, relay.expr.TupleWrapper):
            out = out.astuple()
        func = relay.Function([x, k_var], out)

        np_data = np.random.uniform(size=shape).astype("float32")
        order = np.argsort(np_data if is_ascend else -np_data, axis=axis)
        taken = k if k >= 1 else shape[axis]
        np_indices = order[:taken, :] if axis == 0 else order[:, :taken]
        np_values = np.take_along_axis(np_data, np_indices, axis=axis)
        np_indices = np_indices.astype(dtype)

        static, _ = made_static(func, "topk", {"k": k})
        for target, dev in tvm.testing.enabled_targets():
            for kind in ["graph", "vm", "debug"]:
                mod = tvm.ir.IRModule.from_expr(static)
                res = relay.create_executor(kind, mod=mod, device=dev, target=target).evaluate()(
                    np_data)
                if ret_type == "both":
                    tvm.testing.assert_allclose(res[0].numpy(), np_values)
                    tvm.testing.assert_allclose(res[1].numpy(), np_indices)
                elif ret_type == "values":
                    tvm.testing.assert_allclose(res.numpy(), np_values)
                else:
                    tvm.testing.assert_allclose(res.numpy(), np_indices)

    np.random.seed(0)
    for k in [0, 1, 5]:
        for axis in [0, -1, 1]:
            for ret_type in ["both", "values", "indices"]:
                check(k, axis, ret_type, True, "int64")
                check(k, axis, ret_type, False, "float32")


def test_broadcast_to_the_shape_of_a_static_tensor():
    x = relay.var("x", relay.TensorType((3, 1), "float32"))
    y = relay.var("y", relay.TensorType((3, 3), "float32"))
    func = run_infer_type(relay.Function([x, y], relay.broadcast_to(x, shape=relay.shape_of(y))))
    out, body = made_static(func, "broadcast_to")
    assert body.checked_type == relay.ty.TensorType((3, 3), "float32")
    x_data = uniform((3, 1))
    verify_func(out, [x_data, uniform((3, 3))], np.broadcast_to(x_data, (3, 3)))


def test_zeros_and_ones_of_the_shape_of_a_static_tensor():
    def check(shape, dtype):
        for make, ref in [(relay.zeros, np.zeros), (relay.ones, np.ones)]:
            x = relay.var("x", relay.TensorType(shape, dtype))
            func = run_infer_type(relay.Function([x], make(relay.shape_of(x), dtype)))
            out = to_static(func)
            assert out.body.checked_type == relay.ty.TensorType(shape, dtype)
            x_data = np.random.uniform(low=1, high=1, size=shape).astype(dtype)
            verify_func(out, [x_data], ref(shape))

    check((1, 2, 3), "int64")
    check((9, 8, 3, 4), "float32")


def test_zeros_become_the_static_call_not_a_folded_tensor():
    # Relay folds only the shape argument, so the rewritten call stays a call.
    x = relay.var("x", relay.TensorType((2, 3), "float32"))
    out = to_static(run_infer_type(relay.Function([x], relay.zeros(relay.shape_of(x),
                                                                   "float32"))))
    assert out.body.op == relay.op.get("zeros")
    assert list(out.body.attrs.shape) == [2, 3]


def nearest_resize(data, scales):
    """Nearest-neighbour upscaling of the trailing axes by integer factors (asymmetric)."""
    out = data
    for k, s in enumerate(scales):
        out = np.repeat(out, s, axis=data.ndim - len(scales) + k)
    return out


def linear_align_corners(data, oh, ow):
    """Bilinear NCHW resize with align_corners, one output pixel at a time."""
    n, c, h, w = data.shape
    out = np.zeros((n, c, oh, ow), "float64")
    for i in range(oh):
        y = i * (h - 1) / (oh - 1)
        y0 = int(np.floor(y))
        y1, fy = min(y0 + 1, h - 1), y - y0
        for j in range(ow):
            xx = j * (w - 1) / (ow - 1)
            x0 = int(np.floor(xx))
            x1, fx = min(x0 + 1, w - 1), xx - x0
            top = data[:, :, y0, x0] * (1 - fx) + data[:, :, y0, x1] * fx
            bottom = data[:, :, y1, x0] * (1 - fx) + data[:, :, y1, x1] * fx
            out[:, :, i, j] = top * (1 - fy) + bottom * fy
    return out


def test_resize2d_with_the_size_bound_to_a_constant():
    def check(shape, scale, method, layout):
        size = (shape[1] * scale, shape[2] * scale) if layout == "NHWC" else \
            (shape[2] * scale, shape[3] * scale)
        x = relay.var("x", relay.TensorType(shape, "float32"))
        size_var = relay.var("size", relay.TensorType((len(size),), "float32"))
        coord_trans = "asymmetric" if method == "nearest_neighbor" else "align_corners"
        z = relay.image.resize2d(x, size_var, None, layout, method,
                                 coordinate_transformation_mode=coord_trans)
        func = run_infer_type(relay.Function([x, size_var], z))
        out, _ = made_static(func, "image.resize2d", {"size": np.array(size).astype("float32")})

        x_data = uniform(shape)
        nchw = x_data if layout == "NCHW" else x_data.transpose(0, 3, 1, 2)
        if method == "nearest_neighbor":
            ref = nearest_resize(nchw, (scale, scale))
        else:
            ref = linear_align_corners(nchw, *size)
        if layout == "NHWC":
            ref = ref.transpose(0, 2, 3, 1)
        verify_func(out, [x_data], ref, rtol=1e-5, atol=1e-6)

    for method in ["linear", "nearest_neighbor"]:
        for layout in ["NCHW", "NHWC"]:
            check((1, 4, 4, 4), 2, method, layout)


def one_hot_reference(indices, on_value, off_value, depth, axis, dtype):
    out = np.full((*indices.shape, depth), off_value, dtype=dtype)
    for pos in np.ndindex(*indices.shape):
        out[(*pos, indices[pos])] = on_value
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def test_one_hot_with_a_constant_depth():
    def check(indices_shape, depth, on_value, off_value, axis, dtype):
        indices = relay.var("indices", relay.TensorType(indices_shape, "int32"))
        on_var = relay.var("on_value", relay.TensorType((), "int32"))
        off_var = relay.var("off_value", relay.TensorType((), "int32"))
        z = relay.one_hot(indices, on_var, off_var, relay.const(depth), axis, dtype)
        func = relay.Function([indices, on_var, off_var], z)
        out, _ = made_static(func, "one_hot", {"on_value": on_value, "off_value": off_value})
        indices_np = np.random.randint(0, depth, size=indices_shape).astype("int32")
        expected = one_hot_reference(indices_np, on_value, off_value, depth, axis, dtype)
        verify_func(out, [indices_np], expected)

    check((3,), 3, 1, 0, -1, "int32")
    check((3,), 3, 1.0, 0.0, -1, "float32")
    check((2, 2), 5, 2, -2, 0, "int32")
    check((2, 2), 5, 0.5, -0.5, 1, "float32")
    check((3, 2, 4, 5), 6, 1, 0, 1, "int32")
    check((3, 2, 4, 5), 6, 1.0, 0.0, 0, "float32")


def test_full_of_the_shape_of_a_static_tensor():
    def check(fill_value, fill_shape, dtype):
        x = relay.var("x", relay.scalar_type(dtype))
        y = relay.var("y", relay.TensorType(fill_shape, "int64"))
        func = run_infer_type(relay.Function([x, y], relay.full(x, relay.shape_of(y), dtype)))
        out, _ = made_static(func, "full")
        y_data = np.random.uniform(low=-1, high=1, size=fill_shape).astype("int64")
        verify_func(out, [fill_value, y_data], np.full(fill_shape, fill_value).astype(dtype))

    check(4, (1, 2, 3, 4), "int32")
    check(4.0, (1, 2, 8, 10), "float32")


def test_upsampling_with_scales_bound_to_constants():
    def check(data_shape, scale_h_val, scale_w_val, dtype):
        x = relay.var("x", relay.TensorType(data_shape, dtype))
        scale_h = relay.var("scale_h", relay.TensorType((), "float32"))
        scale_w = relay.var("scale_w", relay.TensorType((), "float32"))
        func = run_infer_type(relay.Function([x, scale_h, scale_w],
                                             relay.nn.upsampling(x, scale_h, scale_w)))
        out, _ = made_static(func, "nn.upsampling", {"scale_h": scale_h_val, "scale_w": scale_w_val})
        x_data = np.random.uniform(size=data_shape).astype(dtype)
        verify_func(out, [x_data], nearest_resize(x_data, (scale_h_val, scale_w_val)))

    check((1, 16, 32, 32), 2, 2, "int8")
    check((1, 16, 32, 32), 4, 4, "int32")


def test_upsampling3d_with_scales_bound_to_constants():
    def check(data_shape, scale_d_val, scale_h_val, scale_w_val, dtype):
        x = relay.var("x", relay.TensorType(data_shape, dtype))
        scale_d = relay.var("scale_d", relay.TensorType((), "float32"))
        scale_h = relay.var("scale_h", relay.TensorType((), "float32"))
        scale_w = relay.var("scale_w", relay.TensorType((), "float32"))
        z = relay.nn.upsampling3d(x, scale_d, scale_h, scale_w)
        func = run_infer_type(relay.Function([x, scale_d, scale_h, scale_w], z))
        params = {"scale_d": scale_d_val, "scale_h": scale_h_val, "scale_w": scale_w_val}
        out, _ = made_static(func, "nn.upsampling3d", params)
        x_data = np.random.uniform(size=data_shape).astype(dtype)
        dynamic = relay.create_executor("debug", mod=tvm.IRModule.from_expr(func)).evaluate()(
            x_data, scale_d_val, scale_h_val, scale_w_val)
        verify_func(out, [x_data], dynamic.numpy())

    check((1, 1, 1, 1, 1), 2, 3, 4, "int8")
    check((5, 7, 8, 10, 32), 3, 2, 2, "int8")
    check((1, 4, 2, 5, 3), 5, 4, 3, "int32")


def test_pad_with_the_widths_bound_to_a_constant():
    def check(data_shape, pad_width_val, pad_val, dtype):
        x = relay.var("x", relay.TensorType(data_shape, dtype))
        pad_width = relay.var(
            "pad_width", relay.TensorType((len(pad_width_val), len(pad_width_val[0])), "int32"))
        func = run_infer_type(relay.Function([x, pad_width], relay.nn.pad(x, pad_width, pad_val)))
        out, _ = made_static(func, "nn.pad", {"pad_width": np.array(pad_width_val)})
        x_data = np.random.uniform(size=data_shape).astype(dtype)
        ref = np.pad(x_data, pad_width_val, "constant",
                     constant_values=(((pad_val,) * 2),) * len(data_shape))
        verify_func(out, [x_data], ref)

    check((4, 10, 7, 7), ((1, 1), (2, 2), (3, 3), (4, 4)), 2.0, "int32")
    check((2, 7), ((1, 4), (2, 2)), 4.0, "float64")


def strided_slice_reference(data, begin, end, strides, slice_mode):
    index = []
    for k, (b, e, s) in enumerate(zip(begin, end, strides)):
        if slice_mode == "size":
            s, e = 1, (data.shape[k] if e < 0 else b + e)
        index.append(slice(b, e, s))
    return data[tuple(index)]


def test_strided_slice_with_begin_end_and_strides_bound_to_constants():
    def check(dshape, begin_val, end_val, strides_val, slice_mode="end", dtype="int32"):
        x = relay.var("x", relay.TensorType(dshape, "float32"))
        ndim = len(dshape)
        if strides_val:
            strides_val = strides_val * ndim if len(strides_val) == 1 else strides_val
        else:
            strides_val = [1] * ndim
        x_data = np.random.uniform(size=dshape).astype("float32")
        ref = strided_slice_reference(x_data, begin_val, end_val, strides_val, slice_mode)

        begin = relay.var("begin", relay.TensorType((len(begin_val),), dtype))
        end = relay.var("end", relay.TensorType((len(end_val),), dtype))
        strides = relay.var("strides", relay.TensorType((len(strides_val),), dtype))
        z = relay.strided_slice(x, begin=begin, end=end, strides=strides, slice_mode=slice_mode)
        func = run_infer_type(relay.Function([x, begin, end, strides], z))
        params = {"begin": begin_val, "end": end_val, "strides": strides_val}
        out, _ = made_static(func, "strided_slice", params)
        verify_func(out, [x_data], ref)

    check((1, 3, 10, 10), [0, 0, 0, 0], [1, 3, 10, 10], [1], dtype="int64")
    check((1, 224, 224, 3), [0, 20, 20, 0], [1, 140, 140, 3], [1, 1, 1, 1], dtype="int64")
    check((3, 4, 3), [1, 1, 0], [4, 4, 3], [2, 1, 1], dtype="int16")
    check((3, 4, 3), [0, 0, 0], [4, -5, 4], [1, -1, 2])
    check((3, 4, 3), [1, 1, 0], [4, 4, 3], None)
    check((3, 4, 3), [1, 1, 0], [4, 1000, 3], None)
    check((3, 4, 3), [1, 1, 0], [4, 4, 4], None)
    check((3, 4, 3), [1, -1, 0], [4, -5, 3], [2, -1, 1])
    check((3, 4, 3), [1, -1, 0], [2, -3, 3], [1, -1, 1])
    check((3, 4, 3), [1, 0, 0], [3, -1, 3], [1, 1, 1], slice_mode="size")
    check((3, 4, 3), [1, 0, 0], [-1, 2, 3], [1, 1, 1], slice_mode="size")


def test_sparse_to_dense_with_a_constant_output_shape():
    def check(sparse_indices, sparse_values, default_value, output_shape, expected):
        indices_data = np.array(sparse_indices)
        values_data = np.array(sparse_values)
        default_data = np.array(default_value)
        a = relay.var("a", relay.TensorType(indices_data.shape, str(indices_data.dtype)))
        b = relay.var("b", relay.TensorType(values_data.shape, str(values_data.dtype)))
        shape_const = relay.const(np.array(output_shape))
        if default_value is None:
            args = [a, b]
            d = relay.sparse_to_dense(a, shape_const, b)
        else:
            c = relay.var("c", relay.TensorType(default_data.shape, str(default_data.dtype)))
            args = [a, b, c]
            d = relay.sparse_to_dense(a, shape_const, b, c)
        assert len(run_infer_type(d).checked_type.shape) == len(output_shape)

        out, _ = made_static(relay.Function(args, d), "sparse_to_dense")
        data = [indices_data, values_data] + ([] if default_value is None else [default_data])
        verify_func(out, data, expected)

    check(1, 3, 0, [5], [0, 3, 0, 0, 0])
    check([0, 1, 4], [3, 3, 3], 0, [5], [3, 3, 0, 0, 3])
    check([[0, 0], [1, 2]], [1, 2], 0, [3, 4], [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    check([[0, 0, 0], [1, 2, 3]], [1, 2], 4, [2, 3, 4],
          [[[1, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 4]],
           [[4, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 2]]])
    check([0, 1, 4], [3.1, 3.1, 3.1], 3.5, [5], [3.1, 3.1, 3.5, 3.5, 3.1])
    check(1, 3, None, [5], [0, 3, 0, 0, 0])


def test_full_whose_shape_went_through_a_dynamic_slice():
    def check(fill_value, fill_shape, dtype):
        x = relay.var("x", relay.scalar_type(dtype))
        y = relay.var("y", relay.TensorType(fill_shape, "int64"))
        shape = relay.shape_of(y)
        shape = relay.strided_slice(shape, [0], relay.shape_of(shape))
        func = relay.Function([x, y], relay.full(x, shape, dtype))
        out, _ = made_static(func, "full")
        y_data = np.random.uniform(low=-1, high=1, size=fill_shape).astype("int64")
        verify_func(out, [fill_value, y_data], np.full(fill_shape, fill_value).astype(dtype))

    check(4, (1, 2, 3, 4), "int32")
    check(4.0, (1, 2, 8, 10), "float32")


def test_an_if_on_a_constant_condition_folds_to_its_branch():
    x = relay.var("x", relay.TensorType((2, 2), "int64"))
    iff = relay.If(relay.const(1), relay.reshape(x, [1, 4]), relay.reshape(x, (4, 1)))
    out, _ = made_static(relay.Function([x], iff), "reshape")
    x_data = np.random.uniform(low=-1, high=1, size=(2, 2)).astype("int64")
    verify_func(out, [x_data], x_data.reshape(1, 4))
