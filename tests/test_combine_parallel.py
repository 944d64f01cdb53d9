"""The CombineParallel passes beyond Relay's cases: depth, the input module, the pass kit, options."""

import sys

import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform
from relaypass.testing import check_pass
from relaypass.transform.errors import OptionError


def test_long_branches_combine_without_recursion_and_leave_the_input_alone():
    x = relay.var("x", shape=(2, 4))
    ws = [relay.var(f"w{i}", shape=(3, 4)) for i in range(3)]
    outs = []
    for w in ws:
        y = relay.nn.dense(x, w)
        for _ in range(20_000):
            y = relay.nn.relu(y)
        outs.append(y)
    mod = transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, *ws], relay.Tuple(outs))))
    before = mod["main"]
    limit = sys.getrecursionlimit()
    out = transform.CombineParallelDense(to_batch=False)(mod)
    assert sys.getrecursionlimit() == limit and mod["main"] is before
    # One dense, then one chain of relus, then a slice per branch.
    body = out["main"].body
    assert [f.op.name for f in body.fields] == ["strided_slice"] * 3
    assert body.fields[0].args[0] is body.fields[1].args[0]


@pytest.mark.parametrize("name, options, ops", [
    ("CombineParallelConv2D", {"min_num_branches": 2}, ["nn.conv2d", "add", "nn.relu", "multiply"]),
    ("CombineParallelDense", {"min_num_branches": 2}, ["nn.dense", "add", "nn.relu", "multiply"]),
    ("CombineParallelDense", {"min_num_branches": 2, "to_batch": False},
     ["nn.dense", "add", "nn.relu", "multiply"]),
    ("CombineParallelBatchMatmul", {"min_num_branches": 2},
     ["nn.batch_matmul", "add", "nn.relu"]),
])
def test_the_passes_pass_the_pass_author_test_kit(name, options, ops):
    check_pass(name, examples=25, seed=3, opt_level=4, pass_options=options, ops=ops)


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_min_num_branches_must_be_a_positive_integer(value):
    with pytest.raises(OptionError, match="min_num_branches must be a positive integer"):
        transform.CombineParallelConv2D(min_num_branches=value)
