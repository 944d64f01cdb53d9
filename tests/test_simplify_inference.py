"""SimplifyInference: Relay's example, each rewrite, values, random programs and depth."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.errors import UncheckedTypeError
from relaypass.functor import post_order_visit
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.testing.strategies import modules, random_inputs
from relaypass.transform import PassInfo, Sequential
from relaypass_std.simplify_inference import SimplifyInference, simplify_inference


def infer_type():
    return relay.transform.InferType()


def run_opt_pass(expr, opt_pass):
    """As in Relay's tests: type the program, run the pass, hand back the same kind."""
    mod = infer_type()(IRModule.from_expr(expr))
    entry = opt_pass(mod)["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def typed(expr):
    return run_opt_pass(expr, infer_type())


def op_names(expr):
    names = []
    post_order_visit(expr, lambda e: names.append(e.op.name)
                     if isinstance(e, relay.Call) and isinstance(e.op, relay.Op) else None)
    return names


def evaluate(func, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_executor(mod=IRModule.from_expr(func)).evaluate()(*args)


def test_registered_as_a_function_pass_at_opt_level_0_requiring_infer_type():
    p = relay.transform.SimplifyInference()
    assert p.info == PassInfo(0, "SimplifyInference", ["InferType"])
    assert type(p).__name__ == "FunctionPass"
    assert "SimplifyInference" in {spec.name for spec in relay.transform.list_passes()}


# --- Relay's example (tests/python/relay/test_pass_simplify_inference.py) ----------------


def simple_bn(x, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, shape=None,
              dtype="float32"):
    # expect = (x - moving_mean) / sqrt(moving_var + eps) * gamma + beta
    scale = relay.multiply(
        relay.const(1, dtype) / relay.sqrt(moving_var + relay.const(epsilon, dtype)), gamma
    )
    shift = relay.add(relay.multiply(relay.negative(moving_mean), scale), beta)
    num_newaxis = len(shape) - (axis + 1)
    if num_newaxis:
        scale = relay.expand_dims(scale, axis=1, num_newaxis=num_newaxis)
        shift = relay.expand_dims(shift, axis=1, num_newaxis=num_newaxis)
    return x * scale + shift


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("dim, axis, nstep", [(2, 1, 1), (4, 1, 1), (4, 0, 3)])
def test_simplify_batchnorm(dim, axis, nstep, dtype):
    eps = 0.01
    ttype1 = relay.TensorType(tuple(10 for _ in range(dim)), dtype)
    ttype2 = relay.TensorType((10,), dtype)
    x = relay.var("x", ttype1)
    beta = relay.var("beta", ttype2)
    gamma = relay.var("gamma", ttype2)
    moving_var = relay.var("moving_var", ttype2)
    moving_mean = relay.var("moving_mean", ttype2)
    y1, y2 = x, x
    for _ in range(nstep):
        y1, _, _ = relay.nn.batch_norm(y1 + relay.const(1, dtype), gamma, beta, moving_mean,
                                       moving_var, epsilon=eps, axis=axis)
        y1 = relay.nn.dropout(y1)
        y2 = simple_bn(y2 + relay.const(1, dtype), gamma, beta, moving_mean, moving_var,
                       epsilon=eps, axis=axis, shape=ttype1.shape, dtype=dtype)

    mod = infer_type()(IRModule.from_expr(y1))
    mod = SimplifyInference()(mod)
    assert_structural_equal(mod["main"].body, y2, map_free_vars=True)


# --- each rewrite -------------------------------------------------------------------------


def bn_params(c=4, dtype="float32"):
    return [relay.var(name, shape=(c,), dtype=dtype)
            for name in ("gamma", "beta", "mean", "var")]


@pytest.mark.parametrize("scale, center", [(False, True), (True, False), (False, False)])
def test_batch_norm_without_scale_or_center_leaves_gamma_or_beta_out(scale, center):
    x = relay.var("x", shape=(2, 4, 3))
    gamma, beta, mean, var = bn_params()
    params = [x, gamma, beta, mean, var]
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var, scale=scale, center=center)
    out = run_opt_pass(relay.Function(params, bn[0]), SimplifyInference())

    s = relay.const(1.0) / relay.sqrt(var + relay.const(1e-5))
    if scale:
        s = relay.multiply(s, gamma)
    shift = relay.multiply(relay.negative(mean), s)
    if center:
        shift = relay.add(shift, beta)
    s = relay.expand_dims(s, axis=1, num_newaxis=1)
    shift = relay.expand_dims(shift, axis=1, num_newaxis=1)
    assert_structural_equal(out, typed(relay.Function(params, x * s + shift)))


def test_batch_norm_on_the_last_axis_needs_no_expand_dims():
    x = relay.var("x", shape=(2, 3, 4))
    gamma, beta, mean, var = bn_params()
    params = [x, gamma, beta, mean, var]
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var, axis=-1, epsilon=1e-3)
    out = run_opt_pass(relay.Function(params, bn[0]), SimplifyInference())

    s = relay.multiply(relay.const(1.0) / relay.sqrt(var + relay.const(1e-3)), gamma)
    shift = relay.add(relay.multiply(relay.negative(mean), s), beta)
    assert_structural_equal(out, typed(relay.Function(params, x * s + shift)))


def test_batch_norm_statistics_still_used_keep_the_call():
    x = relay.var("x", shape=(1, 4, 2, 2))
    gamma, beta, mean, var = bn_params()
    params = [x, gamma, beta, mean, var]
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var)
    out = run_opt_pass(relay.Function(params, relay.Tuple([bn[0], bn[2]])), SimplifyInference())

    first, second = out.body.fields
    assert "nn.batch_norm" not in op_names(first)
    assert isinstance(second, relay.TupleGetItem) and second.index == 2
    assert second.tuple_value.op.name == "nn.batch_norm"


def test_dropout_projection_becomes_its_data_and_its_mask_stays():
    x = relay.var("x", shape=(3, 4))
    d = relay.nn.dropout_raw(relay.nn.relu(x), rate=0.3)
    before = relay.Function([x], relay.Tuple([relay.TupleGetItem(d, 0), relay.TupleGetItem(d, 1)]))
    out = run_opt_pass(before, SimplifyInference())
    data, mask = out.body.fields
    assert data is out.body.fields[1].tuple_value.args[0]
    assert data.op.name == "nn.relu"
    assert mask.index == 1 and mask.tuple_value.op.name == "nn.dropout"


@pytest.mark.parametrize("axis, shape", [(-1, (2, 3, 4)), (1, (2, 4, 3)), (0, (4, 2))])
def test_layer_norm_becomes_mean_variance_arithmetic(axis, shape):
    x = relay.var("x", shape=shape)
    gamma = relay.var("gamma", shape=(4,))
    beta = relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.layer_norm(x, gamma, beta, axis=axis, epsilon=1e-3))
    out = run_opt_pass(before, SimplifyInference())

    ndim = len(shape)
    mean = relay.mean(x, axis=[axis], keepdims=True)
    var = relay.variance(x, axis=[axis], keepdims=True, with_mean=mean)
    y = relay.divide(relay.subtract(x, mean), relay.sqrt(relay.add(var, relay.const(1e-3))))
    pad = ndim - (axis % ndim) - 1
    g = relay.expand_dims(gamma, axis=1, num_newaxis=pad) if pad else gamma
    b = relay.expand_dims(beta, axis=1, num_newaxis=pad) if pad else beta
    expected = relay.Function([x, gamma, beta], relay.add(relay.multiply(y, g), b))
    assert_structural_equal(out, typed(expected))


def test_layer_norm_without_scale_and_center_is_just_normalized():
    x = relay.var("x", shape=(2, 4))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.layer_norm(x, gamma, beta, scale=False, center=False))
    out = run_opt_pass(before, SimplifyInference())
    mean = relay.mean(x, axis=[-1], keepdims=True)
    var = relay.variance(x, axis=[-1], keepdims=True, with_mean=mean)
    y = (x - mean) / relay.sqrt(var + relay.const(1e-5))
    assert_structural_equal(out, typed(relay.Function([x, gamma, beta], y)))


def instance_norm_expected(x, gamma, beta, axis, eps, ndim, dtype="float32", scale=True,
                           center=True):
    axis %= ndim
    reduced = [i for i in range(1, ndim) if i != axis]
    mean = relay.mean(x, axis=reduced, keepdims=True)
    var = relay.variance(x, axis=reduced, keepdims=True, with_mean=mean)
    y = relay.divide(relay.subtract(x, mean), relay.sqrt(relay.add(var, relay.const(eps, dtype))))
    pad = ndim - axis - 1
    if scale:
        y = relay.multiply(y, relay.expand_dims(gamma, axis=1, num_newaxis=pad) if pad else gamma)
    if center:
        y = relay.add(y, relay.expand_dims(beta, axis=1, num_newaxis=pad) if pad else beta)
    return y


@pytest.mark.parametrize("axis, shape", [(1, (2, 4, 3, 3)), (-1, (2, 3, 3, 4)), (2, (2, 3, 4)),
                                         (1, (1, 4, 2, 2, 2))])
def test_instance_norm_reduces_every_axis_but_batch_and_channel(axis, shape):
    x = relay.var("x", shape=shape)
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.instance_norm(x, gamma, beta, axis=axis, epsilon=1e-3))
    out = run_opt_pass(before, SimplifyInference())
    expected = instance_norm_expected(x, gamma, beta, axis, 1e-3, len(shape))
    assert_structural_equal(out, typed(relay.Function([x, gamma, beta], expected)))


@pytest.mark.parametrize("scale, center", [(False, True), (True, False), (False, False)])
def test_instance_norm_without_scale_or_center_leaves_gamma_or_beta_out(scale, center):
    x = relay.var("x", shape=(2, 4, 3))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta],
                            relay.nn.instance_norm(x, gamma, beta, scale=scale, center=center))
    out = run_opt_pass(before, SimplifyInference())
    expected = instance_norm_expected(x, gamma, beta, 1, 1e-5, 3, scale=scale, center=center)
    assert_structural_equal(out, typed(relay.Function([x, gamma, beta], expected)))


def test_instance_norm_of_rank_2_data_is_left_to_its_kernel():
    # Relay would write mean(axis=[]), which reduces every axis: other values than the kernel's.
    x = relay.var("x", shape=(3, 4))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    before = typed(relay.Function([x, gamma, beta], relay.nn.instance_norm(x, gamma, beta)))
    assert_structural_equal(run_opt_pass(before, SimplifyInference()), before)


@pytest.mark.parametrize("axis, shape", [([1], (2, 3)), ([-1], (2, 3, 4)), ([1, 2], (2, 3, 4)),
                                         (None, (2, 3))])
def test_l2_normalize_divides_by_the_clamped_norm(axis, shape):
    x = relay.var("x", shape=shape)
    before = relay.Function([x], relay.nn.l2_normalize(x, 1e-4, axis=axis))
    out = run_opt_pass(before, SimplifyInference())
    total = relay.sum(relay.multiply(x, x), axis=axis, keepdims=True)
    expected = relay.divide(x, relay.sqrt(relay.maximum(total, relay.const(1e-4, "float32"))))
    assert_structural_equal(out, typed(relay.Function([x], expected)))
    # Naming no axis is summing over all of them: sum's own convention, not an empty list.
    sums = [e for e in _calls(out) if e.op.name == "sum"]
    assert (sums[0].attrs.axis is None) == (axis is None)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_l2_normalize_of_other_than_float32_is_left_to_its_kernel(dtype):
    # Relay's epsilon is a float32 constant: maximum(float16 sum, float32 eps) does not type.
    x = relay.var("x", shape=(2, 3), dtype=dtype)
    before = typed(relay.Function([x], relay.nn.l2_normalize(x, 1e-6, axis=[1])))
    assert_structural_equal(run_opt_pass(before, SimplifyInference()), before)


def test_untyped_l2_normalize_is_a_clear_error_for_the_plain_function():
    x = relay.var("x", shape=(2, 4))
    f = relay.Function([x], relay.nn.l2_normalize(relay.negative(x), 1e-6, axis=[1]))
    with pytest.raises(UncheckedTypeError, match="nn.l2_normalize.*InferType"):
        simplify_inference(f)


def _calls(expr):
    found = []
    post_order_visit(expr, lambda e: found.append(e)
                     if isinstance(e, relay.Call) and isinstance(e.op, relay.Op) else None)
    return found


def test_projection_of_a_let_bound_batch_norm_is_left_alone_as_in_relay():
    x = relay.var("x", shape=(1, 4, 2, 2))
    gamma, beta, mean, var = bn_params()
    params = [x, gamma, beta, mean, var]
    b = relay.var("b")
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var).astuple()
    before = relay.Function(params, relay.Let(b, bn, relay.TupleGetItem(b, 0)))
    before = typed(before)
    assert_structural_equal(run_opt_pass(before, SimplifyInference()), before)


def test_other_operators_pass_through_untouched():
    x = relay.var("x", shape=(2, 3))
    f = typed(relay.Function([x], relay.nn.softmax(relay.add(x, x))))
    assert simplify_inference(f) is f


def test_untyped_input_is_a_clear_error_for_the_plain_function():
    # The data is a call that was never typed (an annotated variable has its annotation).
    x = relay.var("x", shape=(2, 4))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    f = relay.Function([x, gamma, beta], relay.nn.layer_norm(relay.negative(x), gamma, beta))
    with pytest.raises(UncheckedTypeError, match="nn.layer_norm.*InferType"):
        simplify_inference(f)


def test_the_pass_types_an_untyped_module_itself():
    x = relay.var("x", shape=(2, 4))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    mod = IRModule.from_expr(relay.Function([x, gamma, beta], relay.nn.layer_norm(x, gamma, beta)))
    out = relay.transform.SimplifyInference()(mod)
    assert "nn.layer_norm" not in op_names(out["main"])


# --- values -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, axis", [((2, 5, 3, 3), 1), ((4, 5), 1), ((5, 2, 3), 0),
                                         ((2, 3, 5), -1)])
def test_batch_norm_values_are_kept(shape, axis):
    rng = np.random.default_rng(0)
    c = shape[axis]
    x = relay.var("x", shape=shape)
    gamma, beta, mean, var = bn_params(c)
    params = [x, gamma, beta, mean, var]
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var, axis=axis, epsilon=1e-3)
    before = relay.Function(params, relay.nn.relu(bn[0]))
    after = run_opt_pass(before, SimplifyInference())
    assert "nn.batch_norm" not in op_names(after)
    args = [rng.standard_normal(shape).astype("float32")]
    args += [rng.standard_normal(c).astype("float32") for _ in range(3)]
    args.append((rng.random(c) + 0.5).astype("float32"))
    np.testing.assert_allclose(evaluate(after, *args), evaluate(before, *args),
                               rtol=1e-5, atol=1e-5)


def test_layer_norm_values_are_kept():
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(3, 4, 6))
    gamma, beta = relay.var("gamma", shape=(4,)), relay.var("beta", shape=(4,))
    before = relay.Function([x, gamma, beta], relay.nn.layer_norm(x, gamma, beta, axis=1))
    after = run_opt_pass(before, SimplifyInference())
    args = [rng.standard_normal(s).astype("float32") for s in ((3, 4, 6), (4,), (4,))]
    np.testing.assert_allclose(evaluate(after, *args), evaluate(before, *args),
                               rtol=1e-5, atol=1e-5)


# (shape, channel axis): NCHW, NHWC, NCW, NWC, NCDHW
LAYOUTS = [((2, 5, 3, 4), 1), ((2, 3, 4, 5), 3), ((3, 5, 7), 1), ((3, 7, 5), -1),
           ((2, 5, 2, 3, 2), 1)]
TOLERANCE = {"float32": 1e-5, "float16": 2e-2}


def assert_same_as_the_kernel(before, args, dtype):
    after = run_opt_pass(before, SimplifyInference())
    kernel_ops = {c.op.name for c in _calls(before)} - {"nn.relu"}
    assert not kernel_ops & set(op_names(after))
    got, want = (np.asarray(evaluate(f, *args)) for f in (after, before))
    assert got.dtype == want.dtype == np.dtype(dtype)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape, axis", LAYOUTS)
def test_instance_norm_values_are_kept(shape, axis, dtype):
    rng = np.random.default_rng(4)
    c = shape[axis]
    x = relay.var("x", shape=shape, dtype=dtype)
    gamma = relay.var("gamma", shape=(c,), dtype=dtype)
    beta = relay.var("beta", shape=(c,), dtype=dtype)
    before = relay.Function([x, gamma, beta],
                            relay.nn.instance_norm(x, gamma, beta, axis=axis, epsilon=1e-3))
    args = [(rng.standard_normal(s) * 2 + 1).astype(dtype) for s in (shape, (c,), (c,))]
    assert_same_as_the_kernel(before, args, dtype)


@pytest.mark.parametrize("shape, axis", [((2, 5, 3, 4), [1]), ((2, 3, 4, 5), [3]),
                                         ((2, 3, 4, 5), [2, 3]), ((3, 5, 7), [-1]),
                                         ((3, 5, 7), None), ((4, 6), [0])])
def test_l2_normalize_values_are_kept(shape, axis):
    rng = np.random.default_rng(5)
    x = relay.var("x", shape=shape)
    before = relay.Function([x], relay.nn.l2_normalize(x, 1e-12, axis=axis))
    data = rng.standard_normal(shape).astype("float32")
    data[0] = 0.0  # an all-zero slice: the clamp keeps it zero instead of 0 / 0
    assert_same_as_the_kernel(before, [data], "float32")


def test_l2_normalize_epsilon_clamps_small_norms_as_the_kernel_does():
    x = relay.var("x", shape=(3, 2))
    before = relay.Function([x], relay.nn.l2_normalize(x, 0.25, axis=[1]))
    data = np.array([[0.1, 0.2], [3.0, 4.0], [0.0, 0.0]], "float32")
    assert_same_as_the_kernel(before, [data], "float32")
    np.testing.assert_allclose(evaluate(run_opt_pass(before, SimplifyInference()), data),
                               [[0.2, 0.4], [0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 5).flatmap(lambda rank: st.tuples(
    st.lists(st.integers(1, 4), min_size=rank, max_size=rank),
    st.integers(1, rank - 1), st.sampled_from([True, False]), st.booleans(), st.booleans(),
    st.sampled_from(["float32", "float16"]), st.integers(0, 2**16))))
def test_random_instance_norms_keep_their_values(case):
    shape, axis, negative, scale, center, dtype, seed = case
    if negative:
        axis -= len(shape)
    rng = np.random.default_rng(seed)
    c = shape[axis]
    x = relay.var("x", shape=shape, dtype=dtype)
    gamma = relay.var("gamma", shape=(c,), dtype=dtype)
    beta = relay.var("beta", shape=(c,), dtype=dtype)
    before = relay.Function([x, gamma, beta], relay.nn.instance_norm(
        relay.nn.relu(x), gamma, beta, axis=axis, epsilon=0.01, scale=scale, center=center))
    args = [rng.standard_normal(s).astype(dtype) for s in (shape, (c,), (c,))]
    assert_same_as_the_kernel(before, args, dtype)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4).flatmap(lambda rank: st.tuples(
    st.lists(st.integers(1, 4), min_size=rank, max_size=rank),
    st.lists(st.integers(-rank, rank - 1), max_size=rank), st.integers(0, 2**16))))
def test_random_l2_normalizes_keep_their_values(case):
    shape, axes, seed = case
    rank = len(shape)
    axes = sorted({a % rank for a in axes}) or None
    x = relay.var("x", shape=shape)
    before = relay.Function([x], relay.nn.l2_normalize(x, 1e-3, axis=axes))
    data = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    assert_same_as_the_kernel(before, [data], "float32")


def test_constant_statistics_fold_to_one_multiply_and_one_add():
    """The point of the rewrite: with FoldConstant, a batch_norm costs a multiply and an add."""
    rng = np.random.default_rng(2)
    gamma, beta, mean = (relay.const(rng.standard_normal(3).astype("float32")) for _ in range(3))
    var = relay.const((rng.random(3) + 0.5).astype("float32"))
    x = relay.var("x", shape=(1, 3, 4, 4))
    before = relay.Function([x], relay.nn.batch_norm(x, gamma, beta, mean, var)[0])
    seq = Sequential([infer_type(), SimplifyInference(), relay.transform.FoldConstant()])
    after = seq(IRModule.from_expr(before))["main"]
    assert op_names(after) == ["multiply", "add"]
    data = rng.standard_normal((1, 3, 4, 4)).astype("float32")
    np.testing.assert_allclose(evaluate(after, data), evaluate(before, data),
                               rtol=1e-5, atol=1e-5)


def test_input_module_is_unchanged():
    x = relay.var("x", shape=(1, 4, 2, 2))
    gamma, beta, mean, var = bn_params()
    bn = relay.nn.batch_norm(x, gamma, beta, mean, var)
    mod = infer_type()(IRModule.from_expr(relay.Function([x, gamma, beta, mean, var], bn[0])))
    main = mod["main"]
    text = mod.astext()
    out = SimplifyInference()(mod)
    assert out["main"] is not main
    assert mod["main"] is main and mod.astext() == text


# --- random programs ----------------------------------------------------------------------


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 20),
               ops=["nn.batch_norm", "nn.dropout", "nn.layer_norm", "add", "multiply", "nn.relu",
                    "negative", "transpose", "concatenate", "split", "sum"],
               features={"let", "if", "tuple", "fn", "global"}))
def test_random_programs_keep_their_values(mod):
    text = mod.astext()
    functions = dict(mod.functions)
    args = random_inputs(mod, seed=3)
    out = SimplifyInference()(mod)
    for func in out.functions.values():
        assert well_formed(func)
        assert "nn.layer_norm" not in op_names(func)
    infer_type()(out)
    # The rewrite regroups batch_norm's arithmetic, so the last bits may differ.
    assert_same_values(run_quietly(mod, args), run_quietly(out, args), rtol=1e-4, atol=1e-4)
    assert mod.astext() == text
    assert all(mod[name] is f for name, f in functions.items())


# --- depth --------------------------------------------------------------------------------


def test_a_chain_of_100000_calls_with_dropouts_in_between():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    e = x
    for i in range(100_000):
        e = relay.nn.dropout(relay.add(e, c)) if i % 2 else relay.multiply(e, c)
    # Dropout needs no types, so InferType (tested on its own chains) is not run here.
    out = simplify_inference(relay.Function([x], e))
    names = op_names(out)
    assert len(names) == 100_000 and "nn.dropout" not in names
    np.testing.assert_array_equal(evaluate(out, np.array([1.0, 2.0], "float32")), [50_001, 50_002])
    assert sys.getrecursionlimit() == limit


def test_SimplifyInference_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("SimplifyInference", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
