"""ToMixedPrecision beyond Relay's cases: missing operators, options, depth, the input module."""

import sys
import warnings

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.ir.op import register_op
from relaypass.ir.summary import short_text
from relaypass.op.relations import identity_rel
from relaypass.transform.errors import OptionError
from relaypass_std.to_mixed_precision import MissingMixedPrecisionOpError, MixedPrecisionWarning


@pytest.fixture(scope="module")
def uncategorized_op():
    name = "test.mixed_precision_unknown"
    register_op(name, num_inputs=1, type_relation=identity_rel(name),
                kernel=lambda args, attrs: args[0], override=True)
    return name


def _dense_then(op_name):
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    y = relay.Call(relay.op.get(op_name), [relay.nn.dense(x, w)])
    return relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))


def test_missing_op_mode_decides_between_an_error_a_warning_and_silence(uncategorized_op):
    mod = _dense_then(uncategorized_op)
    with pytest.raises(MissingMixedPrecisionOpError, match=r"'test.mixed_precision_unknown' \(1 times\)"):
        relay.transform.ToMixedPrecision(missing_op_mode=0)(mod)
    with pytest.warns(MixedPrecisionWarning, match="treated as FOLLOW"):
        out = relay.transform.ToMixedPrecision(missing_op_mode=1)(mod)
    assert str(out["main"].body.checked_type.dtype) == "float16"  # it followed the dense
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relay.transform.ToMixedPrecision(missing_op_mode=2)(mod)


@pytest.mark.parametrize("options, message", [
    ({"mixed_precision_type": "int8"}, "must be a floating-point type"),
    ({"mixed_precision_type": "floatx"}, r"\(float16, bfloat16, float32, float64\), got 'floatx'"),
    ({"mixed_precision_type": "float8"}, "must be a floating-point type"),  # no operator takes it
    ({"missing_op_mode": 3}, "must be 0, 1 or 2"),
])
def test_bad_options_are_named(options, message):
    with pytest.raises(OptionError, match=message):
        relay.transform.ToMixedPrecision(**options)


def test_a_deep_chain_converts_without_recursion_and_the_input_stays():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    y = relay.nn.dense(x, w)
    for _ in range(100_000):
        y = relay.nn.relu(y)
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, w], y)))
    before = mod["main"]
    limit = sys.getrecursionlimit()
    out = relay.transform.ToMixedPrecision()(mod)
    assert sys.getrecursionlimit() == limit and mod["main"] is before
    assert str(out["main"].body.checked_type.dtype) == "float16"
    assert str(before.body.checked_type.dtype) == "float32"


def test_a_tuple_result_is_cast_back_when_asked():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    d = relay.nn.dense(x, w)
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(
        relay.Function([x, w], relay.Tuple([d, relay.nn.relu(d)]))))
    with tvm.transform.PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        out = relay.transform.ToMixedPrecision()(mod)
    assert [str(t.dtype) for t in out["main"].body.checked_type.fields] == ["float32", "float32"]
    args = [np.ones((2, 4), "float32"), np.ones((3, 4), "float32")]
    got = relay.create_executor("debug", mod=out).evaluate()(*args)
    np.testing.assert_allclose(got[0].numpy(), np.full((2, 3), 4.0))


def _converted(func, keep=False):
    """``func`` typed, converted to float16, and the output typed again (it must type-check)."""
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(func))
    config = {"relay.ToMixedPrecision.keep_orig_output_dtype": True} if keep else {}
    with tvm.transform.PassContext(config=config):
        out = relay.transform.ToMixedPrecision()(mod)
    return mod, relay.transform.InferType()(out)


def _same_values(mod, out, *args, rtol=1e-2):
    run = [relay.create_executor("debug", mod=m).evaluate()(*args).numpy() for m in (mod, out)]
    np.testing.assert_allclose(run[0], run[1].astype(run[0].dtype), rtol=rtol, atol=1e-2)


def test_a_local_function_keeps_its_signature_so_its_calls_stay_typed():
    # Relay retypes the function to return float16 and its float32 caller no longer types.
    x, w, d = relay.var("x", shape=(1, 4)), relay.var("w", shape=(3, 4)), relay.var("d", shape=(1, 4))
    f = relay.var("f")
    body = relay.Let(f, relay.Function([x], relay.nn.dense(x, w)), relay.exp(f(d)) + relay.const(1.0))
    mod, out = _converted(relay.Function([d, w], body))
    fn = out["main"].body.value
    assert str(fn.body.op.name) == "cast" and str(fn.body.args[0].checked_type.dtype) == "float16"
    assert out["main"].checked_type == mod["main"].checked_type
    _same_values(mod, out, np.ones((1, 4), "float32"), np.full((3, 4), 0.5, "float32"))


def test_arguments_of_a_function_call_get_back_their_dtypes():
    # The adds follow the variables into float16; the function still takes float32.
    a, p = relay.var("a", shape=(2,)), relay.var("p", shape=(2,))
    f = relay.var("f")
    body = relay.Let(f, relay.Function([a], relay.nn.relu(a)), f(p + p))
    mod, out = _converted(relay.Function([p], body))
    call = out["main"].body.body
    assert call.args[0].op.name == "cast" and str(call.args[0].args[0].checked_type.dtype) == "float16"
    _same_values(mod, out, np.array([1.0, -2.0], "float32"))


def test_a_recursive_local_function_stays_bound_to_itself():
    i = relay.var("i", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(2,))
    w = relay.var("w", shape=(2, 2))
    loop = relay.var("loop")
    step = relay.If(relay.less(i, relay.const(3, "int32")),
                    loop(i + relay.const(1, "int32"), relay.squeeze(relay.nn.dense(relay.expand_dims(acc, 0), w), [0])),
                    acc)
    body = relay.Let(loop, relay.Function([i, acc], step), loop(relay.const(0, "int32"), acc))
    mod, out = _converted(relay.Function([acc, w], body))
    assert not relay.analysis.free_vars(out["main"])
    _same_values(mod, out, np.array([1.0, 0.5], "float32"), np.full((2, 2), 0.5, "float32"))


def test_branches_that_end_up_in_different_dtypes_are_cast_back_to_the_ifs_type():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    cond = relay.var("c", shape=(), dtype="bool")
    mod, out = _converted(relay.Function([cond, x, w], relay.If(cond, relay.nn.dense(x, w), x)))
    branches = out["main"].body
    assert branches.true_branch.checked_type == branches.false_branch.checked_type
    args = [np.full((2, 4), 0.25, "float32"), np.full((4, 4), 0.5, "float32")]
    for c in (True, False):
        _same_values(mod, out, np.array(c), *args)


def test_a_global_function_other_than_main_keeps_its_result_dtype():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    mod = tvm.IRModule()
    helper = relay.GlobalVar("helper")
    mod[helper] = relay.Function([x, w], relay.nn.dense(x, w))
    y, v = relay.var("y", shape=(2, 4)), relay.var("v", shape=(4, 4))
    mod["main"] = relay.Function([y, v], relay.exp(helper(y, v)))
    mod = relay.transform.InferType()(mod)
    out = relay.transform.InferType()(relay.transform.ToMixedPrecision()(mod))
    assert out["helper"].checked_type == mod["helper"].checked_type
    assert out["helper"].body.op.name == "cast"  # dense in float16, its result cast back
    _same_values(mod, out, np.full((2, 4), 0.25, "float32"), np.full((4, 4), 0.5, "float32"))


def test_keep_orig_output_dtype_casts_back_whatever_the_result_expression_is():
    # Relay only casts a call or a tuple at the root; a let or a projection is kept too here.
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(4, 4))
    v = relay.var("v")
    let_root = relay.Let(v, relay.nn.dense(x, w), relay.nn.relu(v))
    projected = relay.nn.dropout(relay.nn.dense(x, w))
    for root in (let_root, projected):
        mod, out = _converted(relay.Function([x, w], root), keep=True)
        assert out["main"].checked_type == mod["main"].checked_type
        _same_values(mod, out, np.full((2, 4), 0.25, "float32"), np.full((4, 4), 0.5, "float32"))


@pytest.mark.parametrize("build", ["_mobilenet_like", "_inception_like"])
def test_model_graphs_compute_their_convolutions_in_float16_within_1e2(build):
    # Issue 14's model criterion: every conv2d and dense computes in float16, and the output
    # stays within 1e-2 (relative) of float32's.
    import test_convert_layout as graphs

    mod = getattr(graphs, build)()
    args = graphs.random_args(mod)
    for a in args:  # batch-norm variances must not be negative
        np.abs(a, out=a)
    half = relay.transform.InferType()(relay.transform.ToMixedPrecision("float16")(mod))
    heavy = graphs.calls(half, "nn.conv2d") + graphs.calls(half, "nn.dense")
    assert heavy and all(c.checked_type.dtype == "float16" for c in heavy)
    want, got = graphs.run(mod, args)[0], graphs.run(half, args)[0]
    np.testing.assert_allclose(got.astype("float32"), want, rtol=1e-2, atol=1e-3)


def _typed_nodes(expr):
    """Every node below ``expr`` that has a type (all but operators), in post-order."""
    found = []
    relay.analysis.post_order_visit(expr, lambda e: found.append(e) if not isinstance(e, tvm.ir.Op) else None)
    return found


def test_types_set_while_converting_are_the_ones_type_inference_gives():
    # The pass types what it builds from the operands' types (a tuple of casts, a call
    # rebuilt over new arguments of the same types) instead of re-typing the program.
    x, w, y = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4)), relay.var("y", shape=(2, 3))
    mixed = relay.concatenate([relay.nn.dense(x, w), relay.exp(y)], axis=0)
    halves = relay.split(mixed, 2, axis=0).astuple()
    func = relay.Function([x, w, y], relay.sum(relay.concatenate(halves, axis=1), axis=[0]))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(func))
    got = relay.transform.ToMixedPrecision()(mod)["main"]

    dense = relay.nn.dense(relay.cast(x, "float16"), relay.cast(w, "float16"), out_dtype="float16")
    mixed = relay.concatenate([relay.cast(dense, "float32"), relay.exp(y)], axis=0)
    halves = relay.split(mixed, 2, axis=0).astuple()
    fields = relay.Tuple([relay.TupleGetItem(halves, 0), relay.TupleGetItem(halves, 1)])
    want = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function(
        [x, w, y], relay.sum(relay.concatenate(fields, axis=1), axis=[0]))))["main"]
    tvm.ir.assert_structural_equal(got, want)
    got_nodes, want_nodes = _typed_nodes(got.body), _typed_nodes(want.body)
    assert len(got_nodes) == len(want_nodes)
    for new, typed in zip(got_nodes, want_nodes):
        assert new.checked_type == typed.checked_type, short_text(new)
