"""CombineParallelBatchMatmul against Relay's behaviour (TVM v0.18's
test_pass_combine_parallel_batch_matmul.py, in this project's words)."""

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform


def typed(func):
    return transform.InferType()(tvm.IRModule.from_expr(func))["main"]


def combined(func):
    mod = transform.InferType()(tvm.IRModule.from_expr(func))
    return transform.CombineParallelBatchMatmul(min_num_branches=2)(mod)["main"]


def feature_slice(y, start, size):
    return relay.strided_slice(y, begin=[0, 0, start], end=[-1, -1, size], strides=[1, 1, 1],
                               slice_mode="size")


def _case(b, i, j, k, with_bias):
    x = relay.var("x", shape=(b, i, k))
    ws = [relay.var(f"w{n}", shape=(b, j, k)) for n in range(3)]
    biases = [relay.var(f"b{n}", shape=(j,)) for n in range(3)] if with_bias else []
    outs = [relay.nn.batch_matmul(x, w) for w in ws]
    if with_bias:
        outs = [relay.add(o, bias) for o, bias in zip(outs, biases)]
    before = relay.Function([x, *ws, *biases], relay.Tuple(outs))
    y = relay.nn.batch_matmul(x, relay.concatenate(ws, axis=1))
    if with_bias:
        y = relay.add(y, relay.concatenate(biases, axis=-1))
    expected = relay.Function([x, *ws, *biases],
                              relay.Tuple([feature_slice(y, n * j, j) for n in range(3)]))
    return before, expected


def test_batch_matmuls_of_one_input_become_one():
    for dims in [(2, 3, 5, 4), (1, 100, 200, 300)]:
        before, expected = _case(*dims, with_bias=False)
        tvm.ir.assert_structural_equal(combined(before), typed(expected), map_free_vars=True)


def test_the_bias_adds_after_them_are_combined_too():
    for dims in [(2, 3, 5, 4), (1, 100, 200, 300)]:
        before, expected = _case(*dims, with_bias=True)
        tvm.ir.assert_structural_equal(combined(before), typed(expected), map_free_vars=True)


def test_only_relays_transpose_form_is_combined():
    x = relay.var("x", shape=(2, 3, 4))
    ws = [relay.var(f"w{n}", shape=(2, 4, 5)) for n in range(3)]
    func = typed(relay.Function([x, *ws], relay.Tuple(
        [relay.nn.batch_matmul(x, w, transpose_b=False) for w in ws])))
    tvm.ir.assert_structural_equal(combined(func), func)
