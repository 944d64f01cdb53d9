"""SimplifyExpr: Relay's examples (for the operators that exist here), values, depth, random programs.

Relay's tests compare bare expressions whose free variables InferType keeps;
relaypass's InferType makes fresh variables, so bare expressions are
compared with ``map_free_vars``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.dataflow_pattern import (
    CallPattern,
    OpPattern,
    Rewrite,
    RewriteLimitError,
    Wildcard,
    rewrite_patterns,
)
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.testing.strategies import modules, random_inputs
from relaypass.transform import PassInfo
from relaypass_std.simplify_expr import SimplifyExpr, simplify_expr


def run_opt_pass(expr, opt_pass):
    entry = opt_pass(IRModule.from_expr(expr))["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def run_infer_type(expr):
    return run_opt_pass(expr, relay.transform.InferType())


def simplified(expr):
    return run_opt_pass(expr, SimplifyExpr())


def assert_simplifies_to(before, expected):
    assert_structural_equal(simplified(before), run_infer_type(expected), map_free_vars=True)


def test_registered_as_a_function_pass_at_opt_level_0_requiring_infer_type():
    p = relay.transform.SimplifyExpr()
    assert p.info == PassInfo(0, "SimplifyExpr", ["InferType"])
    assert type(p).__name__ == "FunctionPass"


# --- Relay's examples (tests/python/relay/test_pass_simplify_expr.py) ---------------------


def test_simplify_reshape():
    # Relay's third reshape is a reverse_reshape to (32, 0, -1), not an operator here.
    def before(batch=1):
        x = relay.var("x", shape=(batch, 16, 16, 16), dtype="float32")
        w = relay.var("w", shape=(32, 16, 3, 3), dtype="float32")
        y = relay.nn.conv2d(x, w, padding=(1, 1))
        y = relay.reshape(y, newshape=(1, 16, -1))
        y = relay.reshape(y, newshape=(4, 8, -1, 16))
        y = relay.reshape(y, newshape=(32, 16, -1))
        return relay.Function([x, w], y)

    def expected():
        x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
        w = relay.var("w", shape=(32, 16, 3, 3), dtype="float32")
        y = relay.nn.conv2d(x, w, padding=(1, 1))
        y = relay.reshape(y, newshape=(32, 16, 16))
        return relay.Function([x, w], y)

    assert_structural_equal(simplified(before()), run_infer_type(expected()))
    symbolic = before(batch=relay.Any())
    assert_structural_equal(simplified(symbolic), run_infer_type(before(batch=relay.Any())))


def _transpose_cases():
    def case1():
        x = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")  # NCHW
        y = relay.transpose(x, axes=[0, 2, 3, 1])  # To NHWC
        y = relay.layout_transform(y, "NHWC", "HWCN")  # To HWCN
        y = relay.transpose(y, axes=[3, 0, 1, 2])  # To NHWC
        x2 = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.transpose(x2, axes=[0, 2, 3, 1]))

    def case2():
        x = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")
        y = relay.nn.relu(x)
        y = relay.transpose(y, axes=[0, 2, 3, 1])  # To NHWC
        y = relay.transpose(y, axes=[1, 2, 3, 0])  # To HWCN
        y = relay.transpose(y, axes=[3, 2, 0, 1])  # To NCHW
        x2 = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.nn.relu(x2))

    def case3():
        x = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")
        y = relay.nn.relu(x)
        y = relay.transpose(y)  # Reverse
        y = relay.transpose(y)  # Reverse
        y = relay.transpose(y, axes=[0, 2, -1, 1])
        y = relay.transpose(y)  # Reverse
        y = relay.transpose(y)  # Reverse
        x2 = relay.var("x", shape=(1, 3, 224, 224), dtype="float32")
        expected = relay.transpose(relay.nn.relu(x2), axes=[0, 2, 3, 1])
        return relay.Function([x], y), relay.Function([x2], expected)

    def case4():
        # NHWC -> NCHW -> NCHW4c -> op -> NCHW4c -> NCHW -> NHWC
        x = relay.var("x", shape=(1, 56, 56, 128), dtype="float32")
        y = relay.transpose(x, axes=[0, 3, 1, 2])
        y = relay.layout_transform(y, "NCHW", "NCHW4c")
        y = relay.nn.relu(y)
        y = relay.layout_transform(y, "NCHW4c", "NCHW")
        y = relay.transpose(y, axes=[0, 2, 3, 1])
        x2 = relay.var("x", shape=(1, 56, 56, 128), dtype="float32")
        e = relay.layout_transform(x2, "NHWC", "NCHW4c")
        e = relay.layout_transform(relay.nn.relu(e), "NCHW4c", "NHWC")
        return relay.Function([x], y), relay.Function([x2], e)

    def case5():
        x = relay.var("x", shape=(1, 56, 56, 128), dtype="float32")
        y = relay.layout_transform(x, "NHWC", "NCHW")
        y = relay.layout_transform(y, "NCHW", "NCHW4c")
        y = relay.nn.relu(y)
        y = relay.layout_transform(y, "NCHW4c", "NCHW")
        y = relay.layout_transform(y, "NCHW", "NHWC")
        x2 = relay.var("x", shape=(1, 56, 56, 128), dtype="float32")
        e = relay.layout_transform(x2, "NHWC", "NCHW4c")
        e = relay.layout_transform(relay.nn.relu(e), "NCHW4c", "NHWC")
        return relay.Function([x], y), relay.Function([x2], e)

    def case6():
        x = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        y = relay.layout_transform(x, "NCHW", "NHWC")
        y = relay.layout_transform(y, "NHWC", "NCHW")
        y = relay.nn.relu(y)
        x2 = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.nn.relu(x2))

    def case7():
        x = relay.var("x", shape=(1, 32, 56, 56, 4), dtype="float32")
        y = relay.layout_transform(x, "NCHW4c", "NCHW8c")
        y = relay.layout_transform(y, "NCHW8c", "NCHW4c")
        y = relay.nn.relu(y)
        x2 = relay.var("x", shape=(1, 32, 56, 56, 4), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.nn.relu(x2))

    def case8():
        x = relay.var("x", shape=(1, 32, 56, 56, 4), dtype="float32")
        y = relay.layout_transform(x, "NCHW4c", "NCHW")
        y = relay.layout_transform(y, "NCHW", "NCHW8c")
        y = relay.nn.relu(y)
        x2 = relay.var("x", shape=(1, 32, 56, 56, 4), dtype="float32")
        e = relay.nn.relu(relay.layout_transform(x2, "NCHW4c", "NCHW8c"))
        return relay.Function([x], y), relay.Function([x2], e)

    def case9():
        x = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        y = relay.layout_transform(x, "NCHW", "NCHW4c")
        y = relay.layout_transform(y, "NCHW4c", "NCHW")
        y = relay.nn.relu(y)
        x2 = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.nn.relu(x2))

    def case10():
        x = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        y = relay.layout_transform(x, "NCHW", "NHWC")
        y = relay.layout_transform(y, "NHWC", "CHWN")
        y = relay.nn.relu(y)
        x2 = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        e = relay.nn.relu(relay.transpose(x2, axes=[1, 2, 3, 0]))
        return relay.Function([x], y), relay.Function([x2], e)

    def case11():
        x = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        y = relay.transpose(x, axes=[0, 1, 2, 3])
        y = relay.nn.relu(y)
        y = relay.layout_transform(y, "NCHW", "NCHW")
        x2 = relay.var("x", shape=(1, 128, 56, 56), dtype="float32")
        return relay.Function([x], y), relay.Function([x2], relay.nn.relu(x2))

    return [case1, case2, case3, case4, case5, case6, case7, case8, case9, case10, case11]


@pytest.mark.parametrize("case", _transpose_cases(), ids=lambda c: c.__name__)
def test_simplify_transpose(case):
    before, expected = case()
    after = simplified(before)
    assert_structural_equal(after, run_infer_type(expected))


@pytest.mark.parametrize("shape", [[10], [10, 10], [10, 10, 10]])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize("value", [0, 1, 2])
def test_simplify_full_elementwise(shape, dtype, value):
    def after_left(x, elem_op, value):
        if elem_op == relay.add and value == 0:
            return x
        if elem_op == relay.multiply and (value == 1 or (value > 1 and dtype == "bool")):
            return x
        return elem_op(relay.const(value, dtype), x)

    def after_right(x, elem_op, value):
        if elem_op in [relay.add, relay.subtract] and value == 0:
            return x
        if elem_op in [relay.multiply, relay.divide] and (
            value == 1 or (value > 1 and dtype == "bool")
        ):
            return x
        return elem_op(x, relay.const(value, dtype))

    x = relay.var("x", shape=shape, dtype=dtype)
    elem_ops = [relay.add, relay.multiply, relay.subtract, relay.divide]
    full_ops = []
    if value == 0:
        full_ops += [relay.zeros(shape, dtype), relay.zeros_like(x)]
    if value == 1:
        full_ops += [relay.ones(shape, dtype), relay.ones_like(x)]
    else:
        full_ops += [relay.full(relay.const(value, dtype), shape),
                     relay.full_like(x, relay.const(value, dtype))]
    for op in elem_ops:
        for full in full_ops:
            assert_simplifies_to(op(full, x), after_left(x, op, value))
            assert_simplifies_to(op(x, full), after_right(x, op, value))

    # x is broadcast to full's shape: nothing to do
    big = shape * 2
    if value == 0:
        wide = relay.zeros(big, dtype)
    elif value == 1:
        wide = relay.ones(big, dtype)
    else:
        wide = relay.full(relay.const(value, dtype), big)
    for op in elem_ops:
        assert_simplifies_to(op(wide, x), op(wide, x))
        assert_simplifies_to(op(x, wide), op(x, wide))


def test_eliminate_identity():
    shape = [2, 3, 4]
    dtype = "float32"
    x = relay.var("x", shape=shape, dtype=dtype)

    def check(expected, before=None):
        assert_simplifies_to(expected if before is None else before, expected)

    for op, op_like, id_op, const in [
        (relay.zeros, relay.zeros_like, relay.add, relay.const(0, dtype)),
        (relay.ones, relay.ones_like, relay.multiply, relay.const(1, dtype)),
    ]:
        check(x, id_op(op_like(x), x))
        check(x, id_op(op(shape, dtype), x))
        check(x, id_op(const, x))
        check(x, id_op(op(shape[1:], dtype), x))
        check(x, id_op(x, op_like(x)))
        check(x, id_op(x, op(shape, dtype)))
        check(x, id_op(x, const))
        check(x, id_op(x, op(shape[1:], dtype)))
        check(id_op(x, op([2] + shape, dtype)))
        check(id_op(op([2] + shape, dtype), x))

    for op, op_like, id_op, const in [
        (relay.zeros, relay.zeros_like, relay.subtract, relay.const(0, dtype)),
        (relay.ones, relay.ones_like, relay.divide, relay.const(1, dtype)),
    ]:
        check(x, id_op(x, op_like(x)))
        check(x, id_op(x, const))
        check(x, id_op(x, op(shape, dtype)))
        check(x, id_op(x, op(shape[1:], dtype)))
        check(id_op(x, op([2] + shape, dtype)))
        check(id_op(const, x), id_op(op(shape, dtype), x))
        check(id_op(const, x), id_op(op_like(x), x))


def test_simplify_same_cast():
    data = relay.var("data", shape=(3, 4, 5), dtype="int32")
    assert_simplifies_to(relay.cast(data, "int32"), data)


def test_simplify_consecutive_cast():
    # Relay's cast_like steps are written as the casts they stand for.
    x = relay.var("x", shape=(3, 4, 5), dtype="int8")
    expr2 = relay.cast(relay.cast(x, "int16"), "int32")
    assert_simplifies_to(expr2, relay.cast(x, "int32"))
    expr3 = relay.cast(expr2, "int64")
    assert_simplifies_to(expr3, relay.cast(x, "int64"))
    assert_simplifies_to(relay.cast(expr3, "float32"), relay.cast(x, "float32"))

    # cannot simplify the narrow cast
    x = relay.var("x", shape=(3, 4, 5), dtype="float32")
    expr1 = relay.cast(x, "int32")
    assert_simplifies_to(relay.cast(expr1, "float32"), relay.cast(expr1, "float32"))

    x = relay.var("x", shape=(3, 4), dtype="int64")
    expr2 = relay.cast(relay.cast(x, "bool"), "int32")
    assert_simplifies_to(expr2, expr2)


def test_concretize_zeros_like():
    shape_like = relay.var("shape_like", shape=(3, 4, 5), dtype="int32")
    assert_simplifies_to(relay.zeros_like(shape_like), relay.zeros((3, 4, 5), "int32"))


def test_concretize_ones_like():
    shape_like = relay.var("shape_like", shape=(3, 4, 5), dtype="int32")
    assert_simplifies_to(relay.ones_like(shape_like), relay.ones((3, 4, 5), "int32"))


def test_concretize_full_like():
    shape_like = relay.var("shape_like", shape=(3, 4, 5), dtype="int32")
    fill_value = relay.var("fill", relay.TensorType((), "float32"))
    assert_simplifies_to(relay.full_like(shape_like, fill_value),
                         relay.full(fill_value, (3, 4, 5), "int32"))


def test_simplify_mul_add():
    n = 32
    rng = np.random.default_rng(0)
    c1_val, c2_val, c3_val = (rng.uniform(size=n).astype("float32") for _ in range(3))
    x = relay.var("x", shape=(n,), dtype="float32")
    c1, c2, c3 = relay.const(c1_val), relay.const(c2_val), relay.const(c3_val)

    def check_simple_fold(origin_exprs, expect_expr):
        for origin_expr in origin_exprs:
            assert_structural_equal(simplified(origin_expr), expect_expr, map_free_vars=True)

    # add-add -> add
    check_simple_fold([x + c1 + c2, c1 + x + c2], x + relay.const(c1_val + c2_val))
    # mul-mul -> mul
    check_simple_fold([x * c1 * c2, c1 * x * c2], x * relay.const(c1_val * c2_val))
    # add-mul -> mul-add
    check_simple_fold([(x + c1) * c2, (c1 + x) * c2, c2 * (x + c1), c2 * (c1 + x)],
                      x * c2 + relay.const(c1_val * c2_val))
    # add-mul-add -> mul-add
    check_simple_fold(
        [(x + c1) * c2 + c3, (c1 + x) * c2 + c3, c2 * (x + c1) + c3, c2 * (c1 + x) + c3,
         c3 + (x + c1) * c2, c3 + (c1 + x) * c2, c3 + c2 * (x + c1), c3 + c2 * (c1 + x)],
        x * c2 + relay.const(c1_val * c2_val + c3_val),
    )
    # mul-add-mul -> mul-add
    check_simple_fold(
        [(x * c1 + c2) * c3, (c1 * x + c2) * c3, (c2 + x * c1) * c3, (c2 + c1 * x) * c3,
         c3 * (x * c1 + c2), c3 * (c1 * x + c2), c3 * (c2 + x * c1), c3 * (c2 + c1 * x)],
        x * relay.const(c1_val * c3_val) + relay.const(c2_val * c3_val),
    )


@pytest.mark.parametrize("c", [1.0, 2.0, 2.5])
def test_simplify_rsqrt(c):
    x = relay.var("x", shape=(32, 1, 1), dtype="float32")
    expected = relay.rsqrt(x) if c == 1 else relay.const(c) * relay.rsqrt(x)
    assert_simplifies_to(relay.const(c) / relay.sqrt(x), expected)


def _clip_cast_cases():
    def case(dtype, casts, kept):
        def build(chain):
            x = relay.var("x", shape=(4, 8), dtype=dtype)
            y = relay.clip(x, a_min=0.0, a_max=255.0)
            for to in chain:
                y = relay.cast(y, to)
            return relay.Function([x], y)

        return build(casts), build(kept)

    return [
        case("int32", ["uint8", "int32"], []),
        case("int32", ["uint8", "int16", "int32"], []),
        case("float32", ["uint8", "int16", "int32"], ["int32"]),
        case("float32", ["int8", "int16", "int32"], ["int8", "int32"]),
    ]


@pytest.mark.parametrize("before, expected", _clip_cast_cases())
def test_simplify_clip_cast(before, expected):
    assert_structural_equal(simplified(before), run_infer_type(expected))


def test_simplify_cast_clip():
    x = relay.var("x", shape=(4, 8), dtype="int32")
    cast = relay.cast(x, "uint8")
    before = relay.Function([x], relay.clip(cast, a_min=0.0, a_max=255.0))
    assert_structural_equal(simplified(before), run_infer_type(relay.Function([x], cast)))

    y = relay.var("y", shape=(4, 8), dtype="uint8")
    before = relay.Function([y], relay.clip(y, a_min=0.0, a_max=255.0))
    assert_structural_equal(simplified(before), run_infer_type(relay.Function([y], y)))


def test_simplify_add():
    x = relay.var("x", shape=(1, 3, 100, 100), dtype="float32")
    assert_simplifies_to(relay.add(x, x), relay.multiply(x, relay.const(2.0)))


def _binomial(x, y, a, b, c, dtype):
    """a*x*x + b*x*y + c*y*y, written as Relay's SimplifyBinomial expects it (no factor 1)."""
    def term(k, u, v):
        return u * v if k == 1 else relay.const(k, dtype) * u * v

    return term(a, x, x) + term(b, x, y) + term(c, y, y)


def test_simplify_binomial_factors_real_roots():
    x = relay.var("x", shape=(3,), dtype="float64")
    y = relay.var("y", shape=(3,), dtype="float64")
    before = relay.Function([x, y], _binomial(x, y, 2.0, 7.0, 3.0, "float64"))
    after = simplified(before)
    # roots of 2t^2 - 7t + 3: 3 and 0.5; a = 2 stays in front
    x2 = relay.var("x", shape=(3,), dtype="float64")
    y2 = relay.var("y", shape=(3,), dtype="float64")
    first = x2 + y2 * relay.const(3.0, "float64")
    second = x2 + y2 * relay.const(0.5, "float64")
    expected = relay.Function([x2, y2], relay.const(2.0, "float64") * (first * second))
    assert_structural_equal(after, run_infer_type(expected))
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(3), rng.standard_normal(3)]
    assert_same_values(create_executor(mod=IRModule.from_expr(after)).evaluate()(*args).numpy(),
                       create_executor(mod=IRModule.from_expr(before)).evaluate()(*args).numpy())


def test_simplify_binomial_swaps_x_and_y_when_only_c_is_one_and_squares_a_double_root():
    x = relay.var("x", shape=(3,), dtype="float32")
    y = relay.var("y", shape=(3,), dtype="float32")
    after = simplified(relay.Function([x, y], _binomial(x, y, 4.0, 4.0, 1.0, "float32")))
    # 4x^2 + 4xy + y^2 = (y + 2x)^2: one factor, used twice; the leading 1 is eliminated
    x2 = relay.var("x", shape=(3,), dtype="float32")
    y2 = relay.var("y", shape=(3,), dtype="float32")
    factor = y2 + x2 * relay.const(2.0, "float32")
    assert_structural_equal(after, run_infer_type(relay.Function([x2, y2], factor * factor)))
    assert after.body.args[0] is after.body.args[1]


@pytest.mark.parametrize("a, b, c, dtype", [
    (1, 1, 1, "float32"),  # complex roots
    (6, 5, 1, "float16"),  # Relay reads coefficients for int32/float32/float64 only: 1, 1, 1
])
def test_simplify_binomial_leaves_sums_without_real_roots(a, b, c, dtype):
    x = relay.var("x", shape=(3,), dtype=dtype)
    y = relay.var("y", shape=(3,), dtype=dtype)
    f = relay.Function([x, y], _binomial(x, y, a, b, c, dtype))
    assert_structural_equal(simplified(f), run_infer_type(f))


# --- Relay's grouping rules ---------------------------------------------------------------


def test_an_intermediate_used_elsewhere_blocks_the_rewrite():
    x = relay.var("x", shape=(2, 6))
    inner = relay.reshape(x, newshape=(3, 4))
    f = relay.Function([x], relay.Tuple([relay.reshape(inner, newshape=(12,)), inner]))
    assert_structural_equal(simplified(f), run_infer_type(f))


def test_an_intermediate_whose_other_use_flows_back_into_the_root_is_rewritten():
    x = relay.var("x", shape=(4,))
    z = relay.zeros_like(x)
    before = relay.Function([x], relay.add(relay.exp(z), z))
    # zeros_like -> zeros; exp(zeros) + zeros: the add's other argument uses zeros, but only
    # feeds the add, so x + 0 is still eliminated.
    after = simplified(before)
    x2 = relay.var("x", shape=(4,))
    assert_structural_equal(after, run_infer_type(relay.Function([x2], relay.exp(
        relay.zeros((4,), "float32")))))


def test_rewrites_that_undo_each_other_stop_with_an_error():
    a, b = Wildcard(), Wildcard()
    swap = Rewrite("Swap", CallPattern(OpPattern("add"), [a, b]),
                   lambda pre, post, m: relay.add(m.post(b), m.post(a)))
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = run_infer_type(relay.Function([x, y], relay.add(x, y)))
    with pytest.raises(RewriteLimitError, match="undo each other"):
        rewrite_patterns([swap], f, lambda func: run_infer_type(func))


def test_a_round_that_leaves_the_program_structurally_equal_ends_the_rewriting():
    # exp -> tanh, then tanh -> exp: every round changes the program back to an equal one.
    # As in Relay, that ends the rounds (rather than running out of them).
    a, b = Wildcard(), Wildcard()
    to_tanh = Rewrite("ToTanh", CallPattern(OpPattern("exp"), [a]),
                      lambda pre, post, m: relay.tanh(m.post(a)))
    to_exp = Rewrite("ToExp", CallPattern(OpPattern("tanh"), [b]),
                     lambda pre, post, m: relay.exp(m.post(b)))
    x = relay.var("x", shape=(2,))
    f = run_infer_type(relay.Function([x], relay.negative(relay.exp(x))))
    out = rewrite_patterns([to_tanh, to_exp], f, run_infer_type)
    assert out is not f
    assert_structural_equal(out, f)
    # one rewrite building an equal node anew: the same
    renew = Rewrite("Renew", CallPattern(OpPattern("exp"), [a]),
                    lambda pre, post, m: relay.exp(m.post(a)))
    assert_structural_equal(rewrite_patterns([renew], f, run_infer_type), f)


def test_a_rewrite_that_changes_nothing_is_decided_without_grouping(monkeypatch):
    # Asked about each of its matches alone, every callback keeps it: the program is left as
    # it is without grouping the matches (the cost of a rewrite on a small program).
    from relaypass.dataflow_pattern import typed_rewrite

    def no_grouping(*args):
        raise AssertionError("grouped")

    monkeypatch.setattr(typed_rewrite._RecordingGrouper, "group_matches", no_grouping)
    x = Wildcard()
    asked = []

    def keep(pre, post, m):
        asked.append(m.pre(x))
        return post

    a = relay.var("a", shape=(2,))
    inner = relay.exp(a)
    f = run_infer_type(relay.Function([a], relay.exp(relay.negative(inner))))
    out = rewrite_patterns([Rewrite("Keep", CallPattern(OpPattern("exp"), [x]), keep)], f,
                           run_infer_type)
    assert out is f
    assert sorted(map(id, asked)) == sorted(map(id, [f.params[0], f.body.args[0]]))


def test_a_long_doubling_needs_more_rounds_than_relay_allows_and_still_simplifies():
    # x + x nine times: each round halves the chain of "* 2"; Relay gives up in its fifth.
    x = relay.var("x", shape=())
    e = x
    for _ in range(9):
        e = relay.add(e, e)
    after = simplified(relay.Function([x], e))
    x2 = relay.var("x", shape=())
    expected = relay.Function([x2], relay.multiply(x2, relay.const(512.0)))
    assert_structural_equal(after, run_infer_type(expected))


# --- values, input, depth -----------------------------------------------------------------


def test_values_are_kept_and_the_input_module_is_unchanged():
    x = relay.var("x", shape=(2, 3, 4))
    c1 = relay.const(np.full((4,), 1.5, "float32"))
    c2 = relay.const(np.full((4,), 0.5, "float32"))
    y = relay.transpose(relay.transpose((x + c1) * c2, axes=[0, 2, 1]), axes=[0, 2, 1])
    y = relay.reshape(relay.reshape(y, newshape=(6, 4)), newshape=(24,))
    y = relay.divide(y + relay.zeros_like(y), relay.sqrt(relay.ones_like(y) * relay.const(4.0)))
    mod = IRModule.from_expr(relay.Function([x], y))
    main = mod["main"]
    text = mod.astext()
    out = SimplifyExpr()(mod)
    names = [e.op.name for e in _calls(out["main"])]
    assert "transpose" not in names and names.count("reshape") == 1 and "rsqrt" in names
    data = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_allclose(create_executor(mod=out).evaluate()(data),
                               create_executor(mod=mod).evaluate()(data), rtol=1e-6)
    assert mod["main"] is main and mod.astext() == text


def _calls(expr):
    from relaypass.functor import post_order_visit

    found = []
    post_order_visit(expr, lambda e: found.append(e)
                     if isinstance(e, relay.Call) and isinstance(e.op, relay.Op) else None)
    return found


def test_a_chain_of_100000_identities_disappears():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    zero, one = relay.const(0.0), relay.const(1.0)
    e = x
    for i in range(100_000):
        e = relay.add(e, zero) if i % 2 else relay.multiply(one, e)
    f = relay.Function([x], relay.nn.relu(e))
    out = simplify_expr(f)
    assert_structural_equal(out, run_infer_type(relay.Function([x], relay.nn.relu(x))))
    assert sys.getrecursionlimit() == limit


# --- random programs ----------------------------------------------------------------------


_OPS = ["add", "subtract", "multiply", "divide", "sqrt", "nn.relu", "negative", "zeros_like",
        "ones_like", "clip", "cast", "reshape", "transpose", "expand_dims", "sum", "concatenate",
        "split"]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 20), ops=_OPS, features={"let", "if", "tuple", "fn", "global"}))
def test_random_programs_keep_their_values(mod):
    text = mod.astext()
    functions = dict(mod.functions)
    args = random_inputs(mod, seed=7)
    out = SimplifyExpr()(mod)
    for func in out.functions.values():
        assert well_formed(func)
    relay.transform.InferType()(out)
    # x / sqrt(y) becomes x * rsqrt(y) and (x + c1) * c2 becomes x * c2 + c1 * c2.
    assert_same_values(run_quietly(mod, args), run_quietly(out, args), rtol=1e-4, atol=1e-4)
    assert mod.astext() == text
    assert all(mod[name] is f for name, f in functions.items())


def test_SimplifyExpr_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("SimplifyExpr", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)


# --- every rewrite, where it applies and where it does not --------------------------------
#
# One pair per condition of Relay's simplify_expr.cc: the program, and what SimplifyExpr
# makes of it (the program itself where the rewrite must not apply).


def _v(name, shape=(2, 3), dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


def _cases():
    x, y = _v("x"), _v("y")
    dyn = relay.var("d", shape=(relay.Any(), 3))
    i8 = _v("i", dtype="int8")
    c1 = relay.const(np.full((3,), 1.5, "float32"))
    c2 = relay.const(np.full((3,), 2.0, "float32"))
    yield "ConcretizeZerosLike", relay.zeros_like(x), relay.zeros((2, 3), "float32")
    yield "ConcretizeZerosLike/dynamic", relay.zeros_like(dyn), relay.zeros_like(dyn)
    yield "ConcretizeOnesLike", relay.ones_like(x), relay.ones((2, 3), "float32")
    yield ("ConcretizeFullLike", relay.full_like(x, relay.const(3.0)),
           relay.full(relay.const(3.0), (2, 3), "float32"))
    yield "ConcretizeReshapeLike", relay.reshape_like(x, _v("s", (3, 2))), relay.reshape(x, (3, 2))
    yield ("ConcretizeReshapeLike/dynamic", relay.reshape_like(x, relay.var("s", shape=(relay.Any(),))),
           relay.reshape_like(x, relay.var("s", shape=(relay.Any(),))))
    yield ("ConcretizeBroadcastToLike", relay.broadcast_to_like(_v("b", (3,)), x),
           relay.broadcast_to(_v("b", (3,)), (2, 3)))
    yield ("ConcretizeCastLike/dynamic", relay.cast_like(dyn, _v("t", (1,), "int32")),
           relay.cast(dyn, "int32"))
    yield "SimplifyAdd", relay.add(x, x), relay.multiply(x, relay.const(2.0))
    yield "SimplifyAdd/different", relay.add(x, y), relay.add(x, y)
    yield "SimplifyRSqrt", x / relay.sqrt(y), x * relay.rsqrt(y)
    yield "SimplifyRSqrt/not-sqrt", x / relay.exp(y), x / relay.exp(y)
    yield "EliminateIdentity/scalar", x * relay.const(1.0), x
    # Relay's IsScalar: any constant whose dims are all 1, read at its first element
    yield "EliminateIdentity/all-ones-dims", x + relay.const(np.zeros((1, 1), "float32")), x
    h = _v("h", dtype="float16")
    yield "EliminateIdentity/float16", h * relay.const(np.ones((1,), "float16")), h
    yield ("EliminateIdentity/not-a-scalar", x + relay.const(np.zeros((3,), "float32")),
           x + relay.const(np.zeros((3,), "float32")))
    yield "EliminateIdentity/other-value", x * relay.const(2.0), x * relay.const(2.0)
    yield "EliminateIdentity/left-subtract", relay.const(0.0) - x, relay.const(0.0) - x
    yield ("EliminateIdentity/broadcasts-x", x + relay.zeros((4, 2, 3), "float32"),
           x + relay.zeros((4, 2, 3), "float32"))
    yield ("SimplifyReshape", relay.reshape(relay.reshape(x, (3, 2)), (6,)),
           relay.reshape(x, (6,)))
    yield ("SimplifyReshape/dynamic", relay.reshape(relay.reshape(dyn, (-1,)), (-1, 1)),
           relay.reshape(relay.reshape(dyn, (-1,)), (-1, 1)))
    yield ("SimplifyTranspose", relay.transpose(relay.transpose(x, (1, 0)), (1, 0)), x)
    yield ("SimplifyNoOpTranspose", relay.transpose(x, (0, 1)), x)
    yield ("SimplifyNoOpTranspose/permutes", relay.transpose(x, (1, 0)), relay.transpose(x, (1, 0)))
    yield "SimplifySameCast", relay.cast(x, "float32"), x
    yield "SimplifySameCast/other-dtype", relay.cast(x, "int32"), relay.cast(x, "int32")
    yield ("SimplifyConsecutiveCast", relay.cast(relay.cast(i8, "int16"), "float32"),
           relay.cast(i8, "float32"))
    yield ("SimplifyConsecutiveCast/narrowing", relay.cast(relay.cast(x, "int8"), "float32"),
           relay.cast(relay.cast(x, "int8"), "float32"))
    yield ("SimplifyConsecutiveCast/bfloat16", relay.cast(relay.cast(x, "bfloat16"), "float32"),
           relay.cast(relay.cast(x, "bfloat16"), "float32"))
    yield "FullElementwise", x * relay.full(relay.const(3.0), (2, 3)), x * relay.const(3.0)
    yield ("FullElementwise/broadcasts-x", x * relay.full(relay.const(3.0), (4, 2, 3)),
           x * relay.full(relay.const(3.0), (4, 2, 3)))
    yield ("SwitchAddMultiply", (x + c1) * c2,
           x * c2 + relay.const(np.full((3,), 3.0, "float32")))
    yield ("SwitchAddMultiply/constant-x", (relay.const(1.0) + c1) * c2,
           (relay.const(1.0) + c1) * c2)
    yield ("SimplifyAdjacentMultiplyOrAdd", x * c1 * c2,
           x * relay.const(np.full((3,), 3.0, "float32")))
    yield ("SimplifyAdjacentMultiplyOrAdd/variable", x * c1 * y, x * c1 * y)
    yield ("SimplifyClipAndConsecutiveCast",
           relay.cast(relay.cast(relay.clip(i8, 0.0, 100.0), "int16"), "int32"),
           relay.cast(relay.clip(i8, 0.0, 100.0), "int32"))
    yield ("SimplifyClipAndConsecutiveCast/too-wide",
           relay.cast(relay.cast(relay.clip(x, 0.0, 300.0), "int8"), "int32"),
           relay.cast(relay.cast(relay.clip(x, 0.0, 300.0), "int8"), "int32"))
    yield "SimplifyClip", relay.clip(i8, -128.0, 127.0), i8
    yield "SimplifyClip/narrower", relay.clip(i8, -1.0, 127.0), relay.clip(i8, -1.0, 127.0)
    yield "SimplifyBinomial", x * x + relay.const(2.0) * x * y + y * y, None
    yield ("SimplifyBinomial/complex-roots", x * x + x * y + y * y, x * x + x * y + y * y)


@pytest.mark.parametrize("name, before, expected", _cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_rewrite_applies_exactly_where_relay_applies_it(name, before, expected):
    if name == "SimplifyBinomial":  # one factor, used twice (EliminateIdentity drops the 1s)
        x, y = relay.analysis.free_vars(before)
        factor = x + y
        expected = factor * factor
    # bare expressions: their free variables are matched up
    assert_structural_equal(simplified(before), run_infer_type(expected), map_free_vars=True)


# --- SimplifyExprPostAlterOp --------------------------------------------------------------


def _post_alter_op(expr):
    f = relay.Function(relay.analysis.free_vars(expr), expr)
    return relay.transform.SimplifyExprPostAlterOp()(IRModule.from_expr(f))["main"]


def test_simplify_expr_post_alter_op_is_registered_like_relay():
    p = relay.transform.SimplifyExprPostAlterOp()
    assert p.info == PassInfo(0, "SimplifyExprPostAlterOp", ["InferType"])
    assert type(p).__name__ == "FunctionPass"


def test_simplify_expr_post_alter_op_applies_its_six_rewrites_and_no_other():
    x = _v("x")
    i8 = _v("i", dtype="int8")
    # cast_like stays cast_like here (no ConcretizeCastLike): SimplifySameCast and
    # SimplifyConsecutiveCast take it as Relay's do.
    same = relay.cast_like(x, _v("t", (1,)))
    wide = relay.cast_like(relay.cast(i8, "int16"), _v("u", (1,), "int32"))
    body = relay.Tuple([
        same + relay.const(0.0),                                   # EliminateIdentity
        relay.reshape(relay.reshape(x, (3, 2)), (6,)),              # SimplifyReshape
        wide,                                                      # SimplifyConsecutiveCast
        relay.clip(i8, -128.0, 127.0),                             # SimplifyClip
        relay.cast(relay.cast(relay.clip(i8, 0.0, 9.0), "int16"), "int8"),  # ...ConsecutiveCast
        relay.add(x, x), relay.zeros_like(x), relay.transpose(x, (0, 1)),  # none of these
    ])
    after = _post_alter_op(body)
    expected = relay.Tuple([
        x, relay.reshape(x, (6,)), relay.cast(i8, "int32"), i8, relay.clip(i8, 0.0, 9.0),
        relay.add(x, x), relay.zeros_like(x), relay.transpose(x, (0, 1)),
    ])
    assert_structural_equal(after.body, run_infer_type(expected), map_free_vars=True)


def test_simplify_expr_post_alter_op_on_a_chain_of_100000_identities():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    e = x
    for i in range(100_000):
        e = relay.subtract(e, relay.const(0.0)) if i % 2 else relay.divide(e, relay.const(1.0))
    after = _post_alter_op(relay.nn.relu(e))
    assert_structural_equal(after, run_infer_type(relay.Function([x], relay.nn.relu(x))))
    assert sys.getrecursionlimit() == limit


# --- quantized operators, where a plugin registers them -----------------------------------


@pytest.fixture
def qnn_ops(monkeypatch):
    """``qnn.dequantize`` and ``qnn.requantize`` as a quantization plugin would register them
    (undone after the test)."""
    from relaypass.ir import op as op_registry
    from relaypass.ir.types import TensorType

    monkeypatch.setattr(op_registry, "_REGISTRY", dict(op_registry._REGISTRY))
    op_registry.register_op(
        "qnn.dequantize", num_inputs=3,
        type_relation=lambda types, attrs: TensorType(types[0].shape, "float32"))
    op_registry.register_op(
        "qnn.requantize", num_inputs=1,
        type_relation=lambda types, attrs: TensorType(types[0].shape, "int8"))
    return op_registry


@pytest.mark.parametrize("arg_op", [relay.argmax, relay.argmin, relay.argsort])
def test_an_arg_function_of_a_dequantize_reads_the_quantized_data(qnn_ops, arg_op):
    x = relay.var("x", shape=(4, 32, 1, 1), dtype="int8")
    dq = relay.Call(qnn_ops.Op.get("qnn.dequantize"), [x, relay.const(2.0), relay.const(0)])
    assert_simplifies_to(arg_op(dq, axis=1), arg_op(x, axis=1))
    # another operator between them: nothing to do
    kept = arg_op(relay.nn.relu(dq), axis=1)
    assert_simplifies_to(kept, kept)


def test_dequantize_rewrites_stay_out_without_the_operator():
    from relaypass_std.simplify_expr import simplify_expr_rewrites

    names = {r.name for r in simplify_expr_rewrites()}
    assert not names & {"SimplifyDQArgMax", "SimplifyDQArgMin", "SimplifyDQArgSort"}


def test_a_clip_of_a_requantize_is_kept_as_relay_keeps_it(qnn_ops):
    x = relay.var("x", shape=(4,), dtype="int32")
    kept = relay.clip(relay.Call(qnn_ops.Op.get("qnn.requantize"), [x]), -128.0, 127.0)
    assert_simplifies_to(kept, kept)


# --- the driver looks again only where the program changed -------------------------------


def _reference(rewrites, func):
    """Every rewrite run on the whole program, every time: the driver without its bookkeeping."""
    from relaypass.dataflow_pattern.graph import IndexedGraph
    from relaypass.dataflow_pattern.grouper import PatternGrouper
    from relaypass.dataflow_pattern.rebuild import rebuild_bottom_up
    from relaypass.dataflow_pattern.typed_rewrite import Match
    from relaypass.ir.structural import structural_equal
    from relaypass_std.infer_type import type_new_nodes

    post = func
    for _ in range(100):
        last = post
        for rewrite in rewrites:
            grouper = PatternGrouper()
            grouper.group_matches(rewrite.pattern, post, IndexedGraph(post))
            by_root = grouper.roots()

            def at_root(pre, rebuilt, memo, rewrite=rewrite, by_root=by_root):
                out = rewrite.callback(pre, rebuilt, Match(by_root[pre].matched, memo))
                if out is rebuilt or out._checked_type is not None:
                    return out
                return type_new_nodes(out)

            post = rebuild_bottom_up(post, at_root, by_root, keep_types=True)[0]
        if structural_equal(last, post, map_free_vars=True):
            return post
    raise AssertionError("no fixed point")


def _random_dag(seed, n=300):
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(2, 3))
    c = [relay.const(np.full((3,), v, "float32")) for v in (0.0, 1.0, 1.5)]
    nodes = [x]
    for _ in range(n):
        a = nodes[len(nodes) - 1 - min(int(rng.exponential(4)), len(nodes) - 1)]
        b = nodes[int(rng.integers(len(nodes)))]
        kind = int(rng.integers(8))
        if kind == 0:
            e = relay.add(a, a)
        elif kind == 1:
            e = relay.transpose(relay.transpose(a, (1, 0)), (1, 0))
        elif kind == 2:
            e = relay.multiply(relay.add(a, c[int(rng.integers(3))]), c[2])
        elif kind == 3:
            e = relay.multiply(a, c[int(rng.integers(3))])
        elif kind == 4:
            e = relay.add(a, b)
        elif kind == 5:
            e = relay.transpose(a, (0, 1))
        elif kind == 6:
            e = relay.negative(a)
        else:
            e = relay.subtract(a, relay.zeros_like(b))
        nodes.append(e)
    return relay.Function([x], relay.Tuple(nodes[-8:]))


@pytest.mark.parametrize("seed", range(6))
def test_the_driver_gives_what_running_every_rewrite_everywhere_gives(seed):
    from relaypass_std.simplify_expr import simplify_expr_rewrites

    f = run_infer_type(_random_dag(seed))
    assert_structural_equal(simplify_expr(f), _reference(simplify_expr_rewrites(), f),
                            map_free_vars=True)


def test_a_match_dropped_for_a_use_outside_it_is_asked_again_when_that_use_goes():
    from relaypass_std.infer_type import type_new_nodes

    x = Wildcard()
    fold = Rewrite("NegNeg", CallPattern(OpPattern("negative"),
                                         [CallPattern(OpPattern("negative"), [x])]),
                   lambda pre, post, m: m.post(x))
    w = Wildcard()
    zero = relay.const(np.zeros((2,), "float32"))
    cut = Rewrite("TanhToZero", CallPattern(OpPattern("tanh"), [w]), lambda pre, post, m: zero)
    a = relay.var("a", shape=(2,))
    inner = relay.negative(a)
    # inner's other use (through tanh) keeps NegNeg from grouping, until TanhToZero, which
    # runs after it and far from it, cuts that use: the next round must ask NegNeg again.
    f = run_infer_type(relay.Function([a], relay.Tuple([relay.negative(inner),
                                                        relay.tanh(relay.nn.relu(inner))])))
    out = rewrite_patterns([fold, cut], f, run_infer_type, type_new_nodes)
    assert_structural_equal(out, run_infer_type(relay.Function([a], relay.Tuple([a, zero]))))


def test_what_the_driver_reads_off_a_pattern():
    from relaypass.dataflow_pattern import is_op, wildcard
    from relaypass.dataflow_pattern.typed_rewrite import needed_calls, pattern_reach

    x = wildcard()
    nested = is_op("add")(is_op("multiply")(x, is_op("sqrt")(x)), x)
    assert pattern_reach(nested) == 3 and needed_calls(nested) == {"add"}
    # any callee with an attribute: the requirement comes from an argument
    broadcast = wildcard().has_attr({"TOpPattern": 1})(is_op("zeros")(), x)
    assert pattern_reach(broadcast) == 2 and needed_calls(broadcast) == {"zeros"}
    # a chain of casts of any length: no bound on how deep it looks
    chain = wildcard()
    chain.redirect_to(is_op("cast")(chain) | is_op("clip")(x))
    assert pattern_reach(chain) is None and needed_calls(chain) == {"cast", "clip"}
    assert needed_calls(wildcard()) is None and pattern_reach(wildcard()) == 0


@pytest.mark.parametrize("keep_ops", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_the_rebuild_hands_on_the_indexed_graph_of_what_it_built(seed, keep_ops):
    # The driver takes the rebuilt program's node order, numbering and marks from the
    # rebuild instead of walking it again: they must be exactly the new program's.
    from relaypass.dataflow_pattern.graph import IndexedGraph
    from relaypass.dataflow_pattern.rebuild import rebuild_bottom_up
    from relaypass.dataflow_pattern.typed_rewrite import _rebuild
    from relaypass.ir import Call, Op
    from relaypass.ir.expr import children
    from relaypass.ir.traversal import post_order

    f = run_infer_type(_random_dag(seed))
    graph = IndexedGraph(f)
    rng = np.random.default_rng(seed)
    calls = [n for n in graph.nodes if isinstance(n, Call) and isinstance(n.op, Op)]
    roots = {calls[int(k)]: None for k in rng.choice(len(calls), size=12, replace=False)}

    built, replaced = [], set()

    def at_root(pre, post, memo):
        # Drop every input but the first (their producers may lose their last use), keep
        # a few, and give some back as they were.
        k = graph.index[pre] % 3
        if k == 0:
            return post
        replaced.add(pre)
        if k == 1:
            built.append(relay.negative(post.args[0]))
            return built[-1]
        return post.args[0]

    new_graph, memo, marks = _rebuild(graph, at_root, roots, reach=2, keep_ops=keep_ops)
    expected, _ = rebuild_bottom_up(f, at_root, roots)
    root = new_graph.nodes[-1]
    assert_structural_equal(root, expected)
    order, index = new_graph.nodes, new_graph.index
    assert index == {node: k for k, node in enumerate(order)}
    for k, node in enumerate(order):
        assert all(index[kid] < k for kid in children(node))  # each after its inputs
    live = post_order(root)
    assert set(live) <= set(order)
    extra = [node for node in order if node not in set(live)]
    # Only operators no call uses any more may stay behind, and only when asked to.
    assert all(isinstance(node, Op) for node in extra)
    assert keep_ops or not extra
    # Marked: what the callbacks built (0) and their users within reach (1, 2).
    assert all(node in index and 0 <= d <= 2 for node, d in marks)
    assert {node for node, d in marks if d == 0} == {node for node in built if node in index}
    users = {memo[node] for node in graph.nodes if node not in replaced
             and any(kid in replaced for kid in children(node))}
    assert users & set(live) <= {node for node, d in marks if d == 1}


@pytest.mark.parametrize("keep_ops", [False, True])
def test_an_operator_no_call_uses_stays_in_the_order_only_if_asked(keep_ops):
    from relaypass.dataflow_pattern.graph import IndexedGraph
    from relaypass.dataflow_pattern.typed_rewrite import _rebuild
    from relaypass.ir import Call, Op

    f = run_infer_type(_random_dag(0))
    graph = IndexedGraph(f)
    transposes = {n: None for n in graph.nodes
                  if isinstance(n, Call) and n.op == Op.get("transpose")}
    assert transposes
    new_graph, _, _ = _rebuild(graph, lambda pre, post, memo: post.args[0], transposes,
                               reach=1, keep_ops=keep_ops)
    # Every transpose is gone; its operator stays (unreached) only with ``keep_ops``.
    left = [n for n in new_graph.nodes if n == Op.get("transpose")]
    assert left == ([Op.get("transpose")] if keep_ops else [])
    assert not any(isinstance(n, Call) and n.op == Op.get("transpose")
                   for n in new_graph.nodes)


def test_a_replacement_may_keep_the_node_it_replaces_rebuilt():
    # A callback may build its replacement around ``post`` itself; when an input of the
    # match changed in the same run, ``post`` is a rebuilt node that only the
    # replacement holds, and the next run must still see it (and may rewrite it).
    from relaypass_std.infer_type import type_new_nodes

    x = Wildcard()

    def callback(pre, post, m):
        # (Decided by what was matched alone: the driver may ask a callback more than once.)
        inside = pre.args[0]
        if isinstance(inside, relay.Var):
            return relay.exp(m.post(x))  # the inner negative
        if inside.op.name == "negative":
            return relay.tanh(post)  # the outer one, around its rebuilt form
        return relay.sigmoid(m.post(x)) if inside.op.name == "exp" else post

    a = relay.var("a", shape=(2,))
    f = run_infer_type(relay.Function([a], relay.negative(relay.negative(a))))
    out = rewrite_patterns([Rewrite("Wrap", OpPattern("negative")(x), callback)], f,
                           run_infer_type, type_new_nodes)
    expected = run_infer_type(relay.Function([a], relay.tanh(relay.sigmoid(relay.exp(a)))))
    assert_structural_equal(out, expected)
