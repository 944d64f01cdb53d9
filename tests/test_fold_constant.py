"""FoldConstant: Relay's examples, its rules one by one, random programs and depth."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.testing.strategies import modules, random_inputs
from relaypass.transform import PassContext, PassInfo, Sequential
from relaypass_std.fold_constant import ConstantChecker, FoldConstant, fold_constant


def infer_type():
    return relay.transform.InferType()


def run_opt_pass(expr, opt_pass):
    """As in Relay's test: type the program, run the pass, hand back the same kind."""
    mod = IRModule.from_expr(expr)
    mod = infer_type()(mod)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def test_registered_as_a_function_pass_at_opt_level_2():
    p = relay.transform.FoldConstant()
    assert p.info == PassInfo(2, "FoldConstant")
    assert type(p).__name__ == "FunctionPass"


# --- Relay's examples (tests/python/relay/test_pass_fold_constant.py) ---------------------


def test_concatenate_const():
    data = np.array([1.0, 2.0, 3.0], dtype="float32")
    const = relay.const(data)
    before = relay.Function([], relay.concatenate([const, const], axis=0))
    expected = relay.Function([], relay.const(np.concatenate([data, data])))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


def test_fold_const():
    c_data = np.array([1, 2, 3]).astype("float32")
    t = relay.TensorType([1, 2, 3], "float32")

    def before():
        c = relay.const(c_data)
        x = relay.var("x", t)
        y = relay.add(c, c)
        y = relay.multiply(y, relay.const(2, "float32"))
        y = relay.add(x, y)
        z = relay.add(y, c)
        return relay.Function([x], z)

    def expected():
        x = relay.var("x", t)
        c_folded = (c_data + c_data) * 2
        y = relay.add(x, relay.const(c_folded))
        z = relay.add(y, relay.const(c_data))
        return relay.Function([x], z)

    zz = run_opt_pass(before(), FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected(), infer_type()))


def test_fold_let():
    c_data = np.array(1).astype("float32")
    t = relay.TensorType([1], "float32")

    def before():
        sb = relay.ScopeBuilder()
        x = relay.var("x", t)
        t1 = sb.let("t1", relay.const(c_data))
        t2 = sb.let("t2", relay.add(t1, t1))
        t3 = sb.let("t3", relay.add(t2, x))
        sb.ret(t3)
        return relay.Function([x], sb.get())

    def expected():
        sb = relay.ScopeBuilder()
        x = relay.var("x", t)
        t3 = sb.let("t3", relay.add(relay.const(c_data + c_data), x))
        sb.ret(t3)
        return relay.Function([x], sb.get())

    zz = run_opt_pass(before(), FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected(), infer_type()))


def test_fold_tuple():
    c_data = np.array(1).astype("float32")
    t = relay.TensorType([1], "float32")

    def before():
        c = relay.const(c_data)
        x = relay.var("x", t)
        y = relay.Tuple([x, c])
        z = relay.add(y[1], c)
        z = relay.add(z, y[0])
        return relay.Function([x], z)

    def expected():
        c = relay.const(c_data + c_data)
        x = relay.var("x", t)
        return relay.Function([x], relay.add(c, x))

    zz = run_opt_pass(before(), FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected(), infer_type()))


def test_fold_concat():
    c_data = np.array([[1, 2, 3]]).astype("float32")
    before = relay.Function([], relay.concatenate((relay.const(c_data), relay.const(c_data)), axis=0))
    expected = relay.Function([], relay.const(np.concatenate((c_data, c_data), axis=0)))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


@pytest.mark.parametrize("cond, fold", [(True, np.add), (False, np.subtract)])
def test_fold_if(cond, fold):
    x_data = np.array([[1, 2, 3]]).astype("float32")
    a = relay.const(np.array(cond).astype("bool"))
    x = relay.const(x_data)
    y = relay.const(x_data)
    before = relay.Function([], relay.If(a, x + y, x - y))
    expected = relay.Function([], relay.const(fold(x_data, x_data)))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_fold_shape_of(dtype):
    c_shape = (8, 9, 10)
    x = relay.var("x", shape=c_shape, dtype="float32")
    y = relay.var("y", shape=c_shape, dtype="float32")
    before = relay.Function([x, y], relay.shape_of(x + y, dtype))
    x = relay.var("x", shape=c_shape, dtype="float32")
    y = relay.var("y", shape=c_shape, dtype="float32")
    expected = relay.Function([x, y], relay.const(np.array(c_shape).astype(dtype), dtype=dtype))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_fold_ndarray_size(dtype):
    c_shape = (8, 9, 10)
    x = relay.var("x", shape=c_shape, dtype="float32")
    y = relay.var("y", shape=c_shape, dtype="float32")
    before = relay.Function([x, y], relay.ndarray_size(x + y, dtype))
    x = relay.var("x", shape=c_shape, dtype="float32")
    y = relay.var("y", shape=c_shape, dtype="float32")
    expected = relay.Function([x, y], relay.const(np.size(np.zeros(c_shape)), dtype=dtype))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


def test_fold_full_of_a_constant():
    # Relay folds it (its old skip list for full/zeros_like/... is gone).
    before = relay.full(relay.const(1.0, "float32"), (8, 9, 10), dtype="float32")
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, relay.const(np.ones((8, 9, 10), "float32")))


def test_fold_cast():
    before = relay.Function([], relay.const(10, dtype="int8").astype("int32"))
    expected = relay.Function([], relay.const(10, dtype="int32"))
    zz = run_opt_pass(before, FoldConstant())
    assert_structural_equal(zz, run_opt_pass(expected, infer_type()))


def test_fold_batch_norm_through_its_tuple_result():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 3, 4, 4)).astype("float32")
    gamma, beta, mean = (rng.standard_normal(3).astype("float32") for _ in range(3))
    var = (rng.random(3) + 0.5).astype("float32")
    x = relay.var("x", shape=(1, 3, 4, 4))
    bn = relay.nn.batch_norm(*(relay.const(v) for v in (data, gamma, beta, mean, var)))
    before = relay.Function([x], relay.add(bn[0], x))

    out = run_opt_pass(before, FoldConstant())
    assert isinstance(out.body, relay.Call) and out.body.op.name == "add"
    folded = out.body.args[0]
    assert isinstance(folded, relay.Constant)
    expected = (data - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    expected = expected * gamma[:, None, None] + beta[:, None, None]
    np.testing.assert_allclose(folded.data, expected, rtol=1e-5, atol=1e-5)


def test_fold_dropout_is_left_alone_since_it_is_stateful():
    data = relay.const(np.arange(10).astype(np.float32))
    add = relay.nn.dropout(data) + relay.const(1.0)
    before_mod = IRModule.from_expr(relay.Function([], add))
    passes = Sequential([infer_type(), FoldConstant()])
    with PassContext(opt_level=3):
        after_mod = passes(before_mod)
    assert_structural_equal(infer_type()(before_mod)["main"], after_mod["main"])


# --- the rules one by one ---------------------------------------------------------------


def test_constant_checker_accepts_nested_tuples_of_constants_only():
    c = relay.const(1.0)
    x = relay.var("x", shape=())
    checker = ConstantChecker()
    assert checker.check(c)
    assert checker.check(relay.Tuple([c, relay.Tuple([c, relay.Tuple([])])]))
    assert not checker.check(relay.Tuple([c, relay.Tuple([x])]))
    assert not checker.check(x)
    assert not checker.check(relay.add(c, c))


def test_tuple_argument_folds_only_when_every_field_is_constant():
    a = relay.const(np.ones((1, 2), "float32"))
    x = relay.var("x", shape=(1, 2))
    partial = relay.concatenate([a, x], axis=0)
    assert fold_constant(partial) is partial
    folded = fold_constant(relay.concatenate([a, relay.Tuple([a, a])[1]], axis=0))
    np.testing.assert_array_equal(folded.data, np.ones((2, 2), "float32"))


def test_tuple_result_becomes_a_tuple_of_constants():
    c = relay.const(np.arange(6, dtype="float32"))
    out = fold_constant(relay.split(c, indices_or_sections=2).astuple())
    assert isinstance(out, relay.Tuple) and len(out.fields) == 2
    assert all(isinstance(f, relay.Constant) for f in out.fields)
    np.testing.assert_array_equal(out.fields[1].data, [3, 4, 5])


def test_call_without_arguments_is_left_alone_with_relays_option():
    zeros = relay.zeros((4, 5), "float32")
    assert fold_constant(zeros, fold_nullary=False) is zeros
    f = relay.Function([], relay.add(zeros, relay.const(1.0)))
    assert fold_constant(f, fold_nullary=False) is f
    mod = IRModule.from_expr(f)
    assert_structural_equal(FoldConstant(fold_nullary=False)(mod)["main"], infer_type()(mod)["main"])


def test_call_without_arguments_is_folded_by_default():
    ones = relay.ones((2, 3), "int32")
    f = relay.Function([], relay.add(relay.zeros((2, 3), "int32"), ones))
    out = run_opt_pass(f, FoldConstant())
    assert isinstance(out.body, relay.Constant)
    np.testing.assert_array_equal(out.body.data, np.ones((2, 3), "int32"))
    # also where it is the argument of a call that does not fold
    x = relay.var("x", shape=(2, 3), dtype="int32")
    g = relay.Function([x], relay.add(x, ones))
    assert isinstance(run_opt_pass(g, FoldConstant()).body.args[1], relay.Constant)


def test_call_of_a_function_is_not_evaluated():
    y = relay.var("y", shape=())
    inner = relay.Function([y], relay.add(y, y))
    call = relay.Call(inner, [relay.const(1.0)])
    assert fold_constant(call) is call


def test_let_of_non_constant_stays_and_let_of_tuple_is_not_propagated():
    x = relay.var("x", shape=())
    v = relay.var("v")
    t = relay.var("t")
    c = relay.const(2.0)
    body = relay.Let(v, relay.add(x, c), relay.Let(t, relay.Tuple([c, c]), relay.TupleGetItem(t, 0)))
    f = relay.Function([x], body)
    assert fold_constant(f) is f


def test_nothing_inside_a_primitive_function_is_folded():
    c = relay.const(1.0)
    prim = relay.Function([], relay.add(c, c)).with_attr("Primitive", 1)
    f = relay.Function([], relay.Call(prim, []))
    assert fold_constant(f) is f


def test_if_with_a_non_constant_condition_keeps_both_branches_folded():
    p = relay.var("p", shape=(), dtype="bool")
    c = relay.const(1.0)
    f = relay.Function([p], relay.If(p, c + c, c - c))
    out = fold_constant(f)
    assert isinstance(out.body, relay.If)
    assert float(out.body.true_branch.data.numpy()) == 2.0 and float(out.body.false_branch.data.numpy()) == 0.0


def test_shape_of_without_types_runs_type_inference_first():
    x = relay.var("x", shape=(2, 3))
    shape = relay.shape_of(relay.nn.relu(x), "int64")
    out = fold_constant(relay.Function([x], shape))
    assert isinstance(out.body, relay.Constant)
    assert out.body.data.numpy().dtype == np.int64 and out.body.data.numpy().tolist() == [2, 3]


def test_shape_of_a_dynamic_shape_is_left_alone():
    x = relay.var("x", shape=(relay.Any(), 3))
    f = relay.Function([x], relay.shape_of(x))
    out = run_opt_pass(f, FoldConstant())
    assert isinstance(out.body, relay.Call) and out.body.op.name == "shape_of"


def test_shape_of_a_scalar_is_the_empty_shape():
    c = relay.const(np.float32(3.0))
    out = fold_constant(relay.shape_of(c))
    assert out.data.numpy().shape == (0,) and out.data.numpy().dtype == np.int32
    size = fold_constant(relay.ndarray_size(c))
    assert int(size.data.numpy()) == 1


def test_a_failing_kernel_leaves_the_call_for_run_time():
    a = relay.const(np.ones((2,), "float32"))
    b = relay.const(np.ones((3,), "float32"))
    bad = relay.Call(relay.Op.get("add"), [a, b])  # shapes that do not broadcast
    assert fold_constant(bad) is bad


# --- random programs ----------------------------------------------------------------------


_FEATURES = {"let", "if", "tuple", "fn", "ref", "global"}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25), features=_FEATURES))
def test_random_programs_keep_their_values(mod):
    """Raw and typed, the folded module computes the same, is well formed and typed,
    and the input module is left as it was."""
    functions = dict(mod.functions)
    text = mod.astext()
    args = random_inputs(mod, seed=1)
    expected = run_quietly(mod, args)
    fold = FoldConstant()
    for source in (mod, infer_type()(mod)):
        out = fold(source)
        for func in out.functions.values():
            assert well_formed(func)
        infer_type()(out)
        assert_same_values(expected, run_quietly(out, args))
    assert dict(mod.functions) == functions
    assert all(a is b for a, b in zip(mod.functions.values(), functions.values()))
    assert mod.astext() == text


# --- depth --------------------------------------------------------------------------------


def _chain(n, leaf, other):
    e = leaf
    for i in range(n):
        e = relay.add(e, other) if i % 2 else relay.multiply(e, other)
    return e


def test_a_chain_of_100000_calls_with_nothing_to_fold():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], _chain(100_000, x, relay.const(np.ones(2, "float32"))))
    mod = IRModule.from_expr(f)
    out = FoldConstant()(mod)
    # Nothing folded; the function pass ends with type inference, as in Relay.
    assert_structural_equal(out["main"], infer_type()(mod)["main"])
    assert sys.getrecursionlimit() == limit


def test_a_chain_of_100000_constant_calls_folds_to_one_constant():
    c = relay.const(np.ones(2, "float32"))
    f = relay.Function([], _chain(100_000, c, c))
    out = FoldConstant()(IRModule.from_expr(f))["main"]
    assert isinstance(out.body, relay.Constant)
    np.testing.assert_array_equal(out.body.data, [50_001.0, 50_001.0])


def test_a_chain_of_100000_constant_lets_is_propagated():
    c = relay.const(np.float32(1.0))
    vs = [relay.var(f"v{i}") for i in range(100_000)]
    body = vs[-1]
    for i in range(len(vs) - 1, 0, -1):
        body = relay.Let(vs[i], relay.add(vs[i - 1], c), body)
    f = relay.Function([], relay.Let(vs[0], c, body))
    out = fold_constant(f)
    assert isinstance(out.body, relay.Constant) and float(out.body.data.numpy()) == 100_000.0


def test_FoldConstant_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("FoldConstant", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
