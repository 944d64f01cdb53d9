"""SimplifyInference on the cases of TVM v0.18's test_pass_simplify_inference.py.

Written as a TVM user writes them; only the import lines differ.  TVM runs
the case for float32 under pytest and for float16 from ``__main__``; both
run here.  TVM's file has no case for ``nn.instance_norm`` or
``nn.l2_normalize``, which ``simplify_inference.cc`` expands too; the two
cases at the end write out, in the same style, what that expansion builds.
"""
import pytest

from relaypass import relay as rly
from relaypass.ir import IRModule, assert_structural_equal
from relaypass.relay.transform import InferType, SimplifyInference


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("dim, axis, nstep", [(2, 1, 1), (4, 1, 1), (4, 0, 3)])
def test_simplify_batchnorm(dim, axis, nstep, dtype):
    def spelled_out_bn(x, gamma, beta, moving_mean, moving_var, axis, epsilon, shape):
        # (x - mean) / sqrt(var + eps) * gamma + beta, as SimplifyInference writes it.
        scale = rly.multiply(
            rly.const(1, dtype) / rly.sqrt(moving_var + rly.const(epsilon, dtype)), gamma
        )
        shift = rly.add(rly.multiply(rly.negative(moving_mean), scale), beta)
        num_newaxis = len(shape) - (axis + 1)
        if num_newaxis:
            scale = rly.expand_dims(scale, axis=1, num_newaxis=num_newaxis)
            shift = rly.expand_dims(shift, axis=1, num_newaxis=num_newaxis)
        return x * scale + shift

    eps = 0.01
    data_type = rly.TensorType(tuple(10 for _ in range(dim)), dtype)
    vector_type = rly.TensorType((10,), dtype)
    x = rly.var("x", data_type)
    beta = rly.var("beta", vector_type)
    gamma = rly.var("gamma", vector_type)
    moving_var = rly.var("moving_var", vector_type)
    moving_mean = rly.var("moving_mean", vector_type)

    y1, y2 = x, x
    for _ in range(nstep):
        y1, _, _ = rly.nn.batch_norm(
            y1 + rly.const(1, dtype), gamma, beta, moving_mean, moving_var,
            epsilon=eps, axis=axis,
        )
        y1 = rly.nn.dropout(y1)
        y2 = spelled_out_bn(
            y2 + rly.const(1, dtype), gamma, beta, moving_mean, moving_var,
            axis=axis, epsilon=eps, shape=data_type.shape,
        )

    mod = IRModule.from_expr(y1)
    mod = InferType()(mod)
    mod = SimplifyInference()(mod)
    assert_structural_equal(mod["main"].body, y2, map_free_vars=True)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape, axis", [((2, 3, 4, 5), 1), ((2, 4, 5, 3), 3), ((2, 4, 3), -1),
                                         ((1, 3, 2, 2, 2), 1)])
def test_simplify_instance_norm(shape, axis, dtype):
    def spelled_out_instance_norm(x, gamma, beta, axis, epsilon, ndim):
        # Each sample's each channel over the remaining axes, then scaled and shifted.
        axis = axis % ndim
        reduced = [i for i in range(1, ndim) if i != axis]
        mean = rly.mean(x, axis=reduced, keepdims=True)
        var = rly.variance(x, axis=reduced, keepdims=True, with_mean=mean)
        out = (x - mean) / rly.sqrt(var + rly.const(epsilon, dtype))
        num_newaxis = ndim - (axis + 1)
        if num_newaxis:
            gamma = rly.expand_dims(gamma, axis=1, num_newaxis=num_newaxis)
            beta = rly.expand_dims(beta, axis=1, num_newaxis=num_newaxis)
        return out * gamma + beta

    eps = 0.001
    channels = shape[axis]
    x = rly.var("x", rly.TensorType(shape, dtype))
    gamma = rly.var("gamma", rly.TensorType((channels,), dtype))
    beta = rly.var("beta", rly.TensorType((channels,), dtype))
    y1 = rly.nn.instance_norm(x + rly.const(1, dtype), gamma, beta, axis=axis, epsilon=eps)
    y2 = spelled_out_instance_norm(x + rly.const(1, dtype), gamma, beta, axis, eps, len(shape))

    mod = IRModule.from_expr(y1)
    mod = InferType()(mod)
    mod = SimplifyInference()(mod)
    assert_structural_equal(mod["main"].body, y2, map_free_vars=True)


@pytest.mark.parametrize("shape, axis", [((4, 6), [1]), ((2, 3, 4, 5), [1]),
                                         ((2, 3, 4, 5), [2, 3]), ((3, 5), None)])
def test_simplify_l2_normalize(shape, axis):
    def spelled_out_l2_normalize(x, eps, axis):
        # The epsilon is a float32 constant, whatever the data.
        squares = rly.sum(x * x, axis=axis, keepdims=True)
        return x / rly.sqrt(rly.maximum(squares, rly.const(eps, "float32")))

    eps = 1e-6
    x = rly.var("x", rly.TensorType(shape, "float32"))
    y1 = rly.nn.l2_normalize(rly.nn.relu(x), eps, axis=axis)
    y2 = spelled_out_l2_normalize(rly.nn.relu(x), eps, axis)

    mod = IRModule.from_expr(y1)
    mod = InferType()(mod)
    mod = SimplifyInference()(mod)
    assert_structural_equal(mod["main"].body, y2, map_free_vars=True)
