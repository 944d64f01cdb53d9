"""SimplifyInference on the cases of TVM v0.18's test_pass_simplify_inference.py.

Written as a TVM user writes them; only the import lines differ.  TVM runs
the case for float32 under pytest and for float16 from ``__main__``; both
run here.
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
