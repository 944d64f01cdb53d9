"""SimplifyInference: Relay's example, each rewrite, values, random programs and depth."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
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
