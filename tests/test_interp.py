"""The numpy interpreter (Relay's debug executor): values, control flow, errors, depth."""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest

from relaypass import nd as tvm_nd
from relaypass import relay
from relaypass.errors import EvaluationError, RelayPassError
from relaypass.interp import Closure, Interpreter, RefValue
from relaypass.interp import interpreter as interpreter_module
from relaypass.ir import Span
from relaypass.ir.op import register_op
from relaypass.ir.types import TensorType

F32 = "float32"
_fresh = itertools.count()


def _scalar(name, dtype=F32):
    return relay.var(name, shape=(), dtype=dtype)


def _counting_op():
    """A fresh identity operator whose kernel counts its calls."""
    calls = []
    name = f"test_interp.count{next(_fresh)}"

    def kernel(args, attrs):
        calls.append(args[0])
        return args[0]

    register_op(name, num_inputs=1, type_relation=lambda types, attrs: types[0], kernel=kernel)
    return relay.Op.get(name), calls


# --- the executor -------------------------------------------------------------------


def test_create_executor_is_exported_from_relay_and_runs_main():
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    ex = relay.create_executor("debug", mod=mod)
    assert isinstance(ex, Interpreter)
    out = ex.evaluate()(np.array([-1.0, 0.5, 2.0], F32))
    assert isinstance(out, tvm_nd.NDArray) and out.dtype == "float32"
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.5, 2.0])


def test_unknown_executor_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match="debug"):
        relay.create_executor("jit")


def test_closed_expression_evaluates_to_its_value():
    ex = Interpreter()
    out = ex.evaluate(relay.add(relay.const(1.0), relay.const(2.0)))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert out == 3.0
    np.testing.assert_array_equal(ex.evaluate(relay.const([1, 2])), [1, 2])


def test_evaluate_without_main_is_an_error():
    with pytest.raises(EvaluationError, match="@main"):
        Interpreter().evaluate()


def test_binds_give_values_to_free_variables():
    x = relay.var("x", shape=(2,))
    out = Interpreter().evaluate(relay.multiply(x, x), binds={x: np.array([2.0, 3.0], F32)})
    np.testing.assert_array_equal(out, [4.0, 9.0])


# --- arguments ------------------------------------------------------------------------


def test_keyword_arguments_by_parameter_name():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = Interpreter().evaluate(relay.Function([x, y], relay.subtract(x, y)))
    a, b = np.array([5.0, 7.0], F32), np.array([1.0, 2.0], F32)
    np.testing.assert_array_equal(f(a, b), [4.0, 5.0])
    np.testing.assert_array_equal(f(y=b, x=a), [4.0, 5.0])
    np.testing.assert_array_equal(f(a, y=b), [4.0, 5.0])
    with pytest.raises(EvaluationError, match="both by position"):
        f(a, x=a)
    with pytest.raises(EvaluationError, match="no parameter named 'z'.*x, y"):
        f(a, z=b)
    with pytest.raises(EvaluationError, match="missing argument.*'y'"):
        f(a)
    with pytest.raises(EvaluationError, match="takes 2 argument"):
        f(a, b, a)


def test_python_arguments_take_the_annotated_dtype():
    x = relay.var("x", shape=(2,), dtype="float32")
    n = relay.var("n", shape=(), dtype="int64")
    f = Interpreter().evaluate(relay.Function([x, n], relay.Tuple([x, n])))
    xs, ns = f([1, 2], 3)
    assert xs.dtype == np.float32 and ns.dtype == np.int64 and ns.shape == ()
    np.testing.assert_array_equal(xs, [1.0, 2.0])
    xs, _ = f(np.array([1.5, 2.5], "float64"), 3)
    assert xs.dtype == np.float32


def test_unannotated_python_numbers_get_relay_default_dtypes():
    a = relay.var("a")
    b = relay.var("b")
    f = Interpreter().evaluate(relay.Function([a, b], relay.Tuple([a, b])))
    fa, fb = f(2.5, 3)
    assert fa.dtype == np.float32 and fb.dtype == np.int32


def test_arguments_that_do_not_fit_the_annotation_are_rejected():
    x = relay.var("x", shape=(2,), dtype="int32")
    f = Interpreter().evaluate(relay.Function([x], x))
    with pytest.raises(EvaluationError, match="%x.*int32.*float64"):
        f(np.array([1.5, 2.0]))
    with pytest.raises(EvaluationError, match=r"%x.*shape \(3,\)"):
        f([1, 2, 3])


def test_tuple_arguments_from_python():
    t = relay.var("t", relay.TupleType([TensorType((2,), F32), TensorType((), "int32")]))
    f = Interpreter().evaluate(relay.Function([t], relay.TupleGetItem(t, 0)))
    out = f(([1, 2], 7))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1.0, 2.0])


# --- tuples, primitive functions and globals --------------------------------------------


def test_tuples_build_and_project():
    x = relay.var("x", shape=(2,))
    inner = relay.Tuple([x, relay.negative(x)])
    body = relay.Tuple([relay.TupleGetItem(inner, 1), inner, relay.Tuple([])])
    out = Interpreter().evaluate(relay.Function([x], body))(np.array([1.0, 2.0], F32))
    assert isinstance(out, tuple) and len(out) == 3
    np.testing.assert_array_equal(out[0], [-1.0, -2.0])
    assert isinstance(out[1], tuple)
    np.testing.assert_array_equal(out[1][0], [1.0, 2.0])
    assert out[2] == ()


def test_concatenate_takes_a_tuple_value():
    a = relay.var("a", shape=(1, 2))
    b = relay.var("b", shape=(2, 2))
    f = Interpreter().evaluate(relay.Function([a, b], relay.concatenate([a, b], axis=0)))
    out = f(np.ones((1, 2), F32), np.zeros((2, 2), F32))
    assert out.shape == (3, 2)


def test_primitive_function_is_evaluated_like_any_function():
    p = relay.var("p", shape=(2,))
    q = relay.var("q", shape=(2,))
    fused = relay.Function([p, q], relay.nn.relu(relay.add(p, q))).with_attr("Primitive", 1)
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    main = relay.Function([x, y], relay.multiply(relay.Call(fused, [x, y]), relay.Call(fused, [y, y])))
    out = Interpreter().evaluate(main)(np.array([1.0, -5.0], F32), np.array([1.0, 2.0], F32))
    np.testing.assert_array_equal(out, [2.0 * 2.0, 0.0 * 4.0])


def test_global_calls_and_evaluating_a_global_var():
    mod = relay.IRModule()
    a = relay.var("a", shape=(2,))
    double = mod.add("double", relay.Function([a], relay.add(a, a)))
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], double(double(x)))
    ex = Interpreter(mod=mod)
    np.testing.assert_array_equal(ex.evaluate()(np.array([1.0, 2.0], F32)), [4.0, 8.0])
    np.testing.assert_array_equal(ex.evaluate(double)(np.array([1.0, 2.0], F32)), [2.0, 4.0])


def test_unknown_global_is_an_evaluation_error():
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.GlobalVar("missing")(x)))
    with pytest.raises(EvaluationError, match="@missing"):
        Interpreter(mod=mod).evaluate()(np.zeros(2, F32))


# --- closures -------------------------------------------------------------------------


def test_closure_captures_its_environment():
    x = relay.var("x", shape=())
    y = relay.var("y", shape=())
    inner = relay.Function([y], relay.add(x, y))
    f = relay.var("f")
    body = relay.Let(f, inner, relay.Call(f, [relay.const(10.0)]))
    out = Interpreter().evaluate(relay.Function([x], body))(np.float32(1.0))
    assert out == 11.0


def test_returned_closures_keep_their_own_captures():
    k = relay.var("k", shape=())
    x = relay.var("x", shape=())
    make_adder = relay.Function([k], relay.Function([x], relay.add(x, k)))
    make = Interpreter().evaluate(make_adder)
    add1 = make(1.0)
    add5 = make(5.0)
    assert isinstance(add1, Closure)
    assert add1(0.0) == 1.0 and add5(0.0) == 5.0
    assert add1(x=2.0) == 3.0


def test_higher_order_function_applies_its_argument_twice():
    f = relay.var("f")
    v = relay.var("v", shape=(2,))
    twice = relay.Function([f, v], relay.Call(f, [relay.Call(f, [v])]))
    a = relay.var("a", shape=(2,))
    neg_plus_one = relay.Function([a], relay.add(relay.negative(a), relay.const(1.0)))
    x = relay.var("x", shape=(2,))
    main = relay.Function([x], relay.Call(twice, [neg_plus_one, x]))
    out = Interpreter().evaluate(main)(np.array([3.0, -2.0], F32))
    np.testing.assert_array_equal(out, [3.0, -2.0])  # 1 - (1 - v) == v
    # A closure returned to Python can be handed back to the program.
    ex = Interpreter()
    np.testing.assert_array_equal(
        ex.evaluate(twice)(ex.evaluate(neg_plus_one), np.array([0.0, 4.0], F32)), [0.0, 4.0]
    )


# --- recursion and If -------------------------------------------------------------------


def _factorial_module(dtype="float64"):
    mod = relay.IRModule()
    fact = relay.GlobalVar("fact")
    n = _scalar("n", dtype)
    one = relay.const(1, dtype)
    body = relay.If(
        relay.less_equal(n, one), one, relay.multiply(n, fact(relay.subtract(n, one)))
    )
    mod[fact] = relay.Function([n], body)
    return mod, fact


def test_factorial_through_a_recursive_global_function():
    mod, fact = _factorial_module()
    f = Interpreter(mod=mod).evaluate(fact)
    assert f(10) == 3628800.0
    assert f(0) == 1.0


def test_non_tail_recursion_200_deep_under_the_default_limit():
    # Same shape as factorial (n op f(n - 1)), with a sum so that 200 levels stay finite.
    mod = relay.IRModule()
    total = relay.GlobalVar("total")
    n = _scalar("n", "int64")
    one = relay.const(1, "int64")
    mod[total] = relay.Function(
        [n], relay.If(relay.less(n, one), relay.const(0, "int64"), relay.add(n, total(relay.subtract(n, one))))
    )
    assert Interpreter(mod=mod).evaluate(total)(200) == 200 * 201 // 2
    mod, fact = _factorial_module()
    assert np.isfinite(Interpreter(mod=mod).evaluate(fact)(170))


def test_recursion_written_in_a_normal_form():
    mod = relay.IRModule()
    fact = relay.GlobalVar("fact")
    n = _scalar("n", "float64")
    one = relay.const(1.0, "float64")
    sb = relay.ScopeBuilder()
    stop = sb.let("stop", relay.less_equal(n, one))
    with sb.if_scope(stop):
        sb.ret(one)
    with sb.else_scope():
        m = sb.let("m", relay.subtract(n, one))
        r = sb.let("r", fact(m))
        sb.ret(relay.multiply(n, r))
    mod[fact] = relay.Function([n], sb.get())
    f = Interpreter(mod=mod).evaluate(fact)
    assert f(10) == 3628800.0
    assert np.isfinite(f(170))


def test_tail_recursion_runs_deeper_than_the_python_stack():
    mod = relay.IRModule()
    loop = relay.GlobalVar("loop")
    i = _scalar("i", "int64")
    acc = _scalar("acc", "int64")
    one = relay.const(1, "int64")
    mod[loop] = relay.Function(
        [i, acc],
        relay.If(relay.less(i, one), acc, loop(relay.subtract(i, one), relay.add(acc, i))),
    )
    assert Interpreter(mod=mod).evaluate(loop)(5000, 0) == 5000 * 5001 // 2


def test_mutual_recursion_between_globals():
    mod = relay.IRModule()
    even = relay.GlobalVar("even")
    odd = relay.GlobalVar("odd")
    zero = relay.const(0, "int32")
    one = relay.const(1, "int32")
    n = _scalar("n", "int32")
    m = _scalar("m", "int32")
    mod[even] = relay.Function([n], relay.If(relay.equal(n, zero), relay.const(True), odd(relay.subtract(n, one))))
    mod[odd] = relay.Function([m], relay.If(relay.equal(m, zero), relay.const(False), even(relay.subtract(m, one))))
    ex = Interpreter(mod=mod)
    assert bool(ex.evaluate(even)(10)) is True
    assert bool(ex.evaluate(odd)(7)) is True
    assert bool(ex.evaluate(even)(7)) is False


def test_let_bound_recursive_closure_sees_itself():
    f = relay.var("f")
    n = _scalar("n", "int32")
    one = relay.const(1, "int32")
    k = _scalar("k", "int32")
    # let %f = fn (%n) { if (%n < 1) { %k } else { %n + %f(%n - 1) } }; %f(5): the closure
    # also captures %k from the enclosing function.
    rec = relay.Function(
        [n], relay.If(relay.less(n, one), k, relay.add(n, relay.Call(f, [relay.subtract(n, one)])))
    )
    main = relay.Function([k], relay.Let(f, rec, relay.Call(f, [relay.const(5, "int32")])))
    assert Interpreter().evaluate(main)(100) == 100 + 15


def test_if_takes_the_branch_of_a_boolean_scalar():
    x = _scalar("x")
    y = _scalar("y")
    f = Interpreter().evaluate(
        relay.Function([x, y], relay.If(relay.greater(x, y), relay.subtract(x, y), relay.subtract(y, x)))
    )
    assert f(5.0, 3.0) == 2.0
    assert f(3.0, 5.0) == 2.0


def test_if_with_a_non_boolean_condition_is_an_error():
    x = relay.var("x", shape=(2,))
    expr = relay.If(relay.less(x, x), x, x)
    with pytest.raises(EvaluationError, match=r"boolean scalar, got Tensor\[\(2\), bool\]"):
        Interpreter().evaluate(relay.Function([x], expr))(np.zeros(2, F32))
    with pytest.raises(EvaluationError, match="boolean scalar.*float32"):
        Interpreter().evaluate(relay.If(relay.const(1.0), relay.const(1.0), relay.const(2.0)))


def test_non_tail_recursion_100000_deep_without_raising_the_recursion_limit():
    # The naive sum: each call waits for the next one's result (n + f(n - 1)).
    mod = relay.parse("""
        def @sum(%n: int64) -> int64 {
          if (%n == 0i64) { 0i64 } else { %n + @sum(%n - 1i64) }
        }
    """)
    limit = sys.getrecursionlimit()
    f = Interpreter(mod=mod).evaluate(mod.get_global_var("sum"))
    assert f(100_000) == 100_000 * 100_001 // 2
    assert sys.getrecursionlimit() == limit
    assert f(3) == 6  # the executor keeps working afterwards, on the calling thread again


def test_deep_recursion_inside_a_let_bound_closure_and_an_if_condition():
    # Non-tail calls reached through an If's condition and a closure, not only through
    # a call's arguments: every nested evaluation counts.
    mod = relay.parse("""
        def @even(%n: int32) -> bool {
          if (%n == 0) { True } else { if (@even(%n - 1)) { False } else { True } }
        }
    """)
    assert bool(Interpreter(mod=mod).evaluate(mod.get_global_var("even"))(20_001)) is False


def test_infinite_recursion_is_an_evaluation_error(monkeypatch):
    # The bound on nesting is lowered so that the runaway stops quickly.
    monkeypatch.setattr(interpreter_module, "MAX_NESTED_CALLS", 5_000)
    mod = relay.IRModule()
    f = relay.GlobalVar("f")
    n = _scalar("n")
    mod[f] = relay.Function([n], relay.add(n, f(n)))
    with pytest.raises(EvaluationError, match="recursion limit: the program nests more than"):
        Interpreter(mod=mod).evaluate(f)(1.0)


# --- references ------------------------------------------------------------------------------


def test_reference_create_read_write():
    r = relay.var("r")
    unit = relay.var("u")
    body = relay.Let(
        r, relay.RefCreate(relay.const(1.0)),
        relay.Let(unit, relay.RefWrite(r, relay.const(2.0)), relay.Tuple([relay.RefRead(r), unit])),
    )
    value, written = Interpreter().evaluate(body)
    assert value == 2.0
    assert written == ()
    ref = Interpreter().evaluate(relay.RefCreate(relay.const(3.0)))
    assert isinstance(ref, RefValue) and ref.value == 3.0


def test_aliased_references_see_the_same_write():
    r = relay.var("r")
    alias = relay.var("alias")
    before = relay.var("before")
    w = relay.var("w")
    body = relay.Let(r, relay.RefCreate(relay.const(0.0)),
           relay.Let(alias, r,
           relay.Let(before, relay.RefRead(alias),
           relay.Let(w, relay.RefWrite(alias, relay.const(7.0)),
           relay.Tuple([before, relay.RefRead(r), relay.RefRead(alias)])))))
    before_v, via_r, via_alias = Interpreter().evaluate(body)
    assert before_v == 0.0 and via_r == 7.0 and via_alias == 7.0


def test_closure_over_a_reference_counts_calls():
    counter = relay.var("counter")
    bump = relay.var("bump")
    ignored = relay.var("_")
    ignored2 = relay.var("_")
    inc = relay.Function([], relay.RefWrite(counter, relay.add(relay.RefRead(counter), relay.const(1, "int32"))))
    body = relay.Let(counter, relay.RefCreate(relay.const(0, "int32")),
           relay.Let(bump, inc,
           relay.Let(ignored, relay.Call(bump, []),
           relay.Let(ignored2, relay.Call(bump, []),
           relay.RefRead(counter)))))
    assert Interpreter().evaluate(body) == 2


def test_dataflow_is_evaluated_left_to_right():
    r = relay.var("r")
    bump = relay.Function([], relay.RefWrite(r, relay.const(5.0)))
    expr = relay.Let(r, relay.RefCreate(relay.const(1.0)),
                     relay.Tuple([relay.RefRead(r), relay.Call(bump, []), relay.RefRead(r)]))
    first, unit, last = Interpreter().evaluate(expr)
    assert first == 1.0 and unit == () and last == 5.0


# --- memoization -------------------------------------------------------------------------------


def test_shared_node_is_evaluated_once():
    count, calls = _counting_op()
    x = relay.var("x", shape=(2,))
    shared = relay.Call(count, [relay.nn.relu(x)])
    f = relay.Function([x], relay.add(relay.multiply(shared, shared), shared))
    out = Interpreter().evaluate(f)(np.array([2.0, -1.0], F32))
    np.testing.assert_array_equal(out, [6.0, 0.0])
    assert len(calls) == 1


def test_function_body_is_reevaluated_for_each_call():
    count, calls = _counting_op()
    a = relay.var("a", shape=())
    g = relay.Function([a], relay.Call(count, [relay.multiply(a, relay.const(2.0))]))
    x = _scalar("x")
    y = _scalar("y")
    gv = relay.var("g")
    main = relay.Function([x, y], relay.Let(gv, g, relay.add(relay.Call(gv, [x]), relay.Call(gv, [y]))))
    assert Interpreter().evaluate(main)(1.0, 10.0) == 22.0
    assert len(calls) == 2


def test_random_dag_matches_numpy():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(3,))
    data = rng.standard_normal(3).astype(F32)
    exprs, values = [x], [data]
    binary = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}
    for _ in range(300):
        kind = rng.integers(3)
        i, j = rng.integers(len(exprs), size=2)
        if kind == 0:
            # min(a op b, 0), so that products stay bounded.
            name = ["add", "subtract", "multiply"][rng.integers(3)]
            combined = getattr(relay, name)(exprs[i], exprs[j])
            exprs.append(relay.negative(relay.nn.relu(relay.negative(combined))))
            values.append(np.minimum(binary[name](values[i], values[j]), 0))
        elif kind == 1:
            exprs.append(relay.TupleGetItem(relay.Tuple([exprs[i], exprs[j]]), 1))
            values.append(values[j])
        else:
            exprs.append(relay.nn.relu(exprs[i]))
            values.append(np.maximum(values[i], 0))
    out = Interpreter().evaluate(relay.Function([x], relay.Tuple(exprs[-20:])))(data)
    for got, want in zip(out, values[-20:]):
        np.testing.assert_allclose(got, want, rtol=1e-5)


# --- depth -------------------------------------------------------------------------------


N_DEEP = 100_000


def test_chain_of_100000_calls():
    x = relay.var("x", shape=(2,))
    e = x
    for _ in range(N_DEEP):
        e = relay.add(e, relay.const(1.0))
    out = Interpreter().evaluate(relay.Function([x], e))(np.zeros(2, F32))
    np.testing.assert_array_equal(out, [N_DEEP, N_DEEP])


def test_100000_nested_lets():
    x = relay.var("x", shape=(), dtype="int32")
    sb = relay.ScopeBuilder()
    v = x
    one = relay.const(1, "int32")
    for i in range(N_DEEP):
        v = sb.let(f"v{i}", relay.add(v, one))
    sb.ret(v)
    assert Interpreter().evaluate(relay.Function([x], sb.get()))(0) == N_DEEP


# --- errors -------------------------------------------------------------------------------------


def test_kernel_failure_names_the_operator_the_expression_and_the_span():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(4,))
    call = relay.Call(relay.Op.get("add"), [x, y], span=Span("model.relay", 3, 3, 7, 7))
    f = Interpreter().evaluate(relay.Function([x, y], relay.nn.relu(call)))
    with pytest.raises(EvaluationError) as info:
        f(np.zeros(3, F32), np.zeros(4, F32))
    message = str(info.value)
    assert message.startswith("add failed on ")
    assert "%x" in message and "%y" in message
    assert "model.relay:3:7" in message
    assert "Tensor[(3), float32], Tensor[(4), float32]" in message
    assert "ValueError" in message  # numpy's broadcasting complaint follows
    assert isinstance(info.value, RelayPassError)
    assert isinstance(info.value.__cause__, ValueError)


def test_kernel_failure_deep_in_a_long_chain_is_named_briefly():
    x = relay.var("x", shape=(2, 2))
    e = x
    for _ in range(1000):
        e = relay.nn.relu(e)
    z = relay.var("z", shape=(3,))
    e = relay.concatenate([e, z], axis=1)
    f = Interpreter().evaluate(relay.Function([x, z], e))
    with pytest.raises(EvaluationError, match="^concatenate failed on ") as info:
        f(np.zeros((2, 2), F32), np.zeros(3, F32))
    assert len(str(info.value).split(": ")[0]) < 400


def test_unbound_variable_is_named():
    x = relay.var("x", shape=())
    ghost = relay.var("ghost", shape=())
    with pytest.raises(EvaluationError, match="unbound variable %ghost.*add"):
        Interpreter().evaluate(relay.Function([x], relay.add(x, ghost)))(1.0)
    with pytest.raises(EvaluationError, match="unbound variable %ghost"):
        Interpreter().evaluate(ghost)


def test_calling_a_tensor_is_an_error():
    x = relay.var("x", shape=(2,))
    with pytest.raises(EvaluationError, match=r"cannot call Tensor\[\(2\), float32\].*%x"):
        Interpreter().evaluate(relay.Function([x], relay.Call(x, [x])))(np.zeros(2, F32))


def test_wrong_number_of_arguments_is_an_error():
    a = relay.var("a", shape=())
    b = relay.var("b", shape=())
    g = relay.Function([a, b], relay.add(a, b))
    with pytest.raises(EvaluationError, match=r"fn\(%a, %b\) takes 2 argument\(s\), got 1"):
        Interpreter().evaluate(relay.Call(g, [relay.const(1.0)]))
    with pytest.raises(EvaluationError, match=r"operator add takes 2 argument\(s\), got 3"):
        Interpreter().evaluate(relay.Call(relay.Op.get("add"), [relay.const(1.0)] * 3))


def test_operator_without_kernel_is_an_error():
    name = f"test_interp.nokernel{next(_fresh)}"
    op = register_op(name, num_inputs=1, type_relation=lambda types, attrs: types[0])
    with pytest.raises(EvaluationError, match=f"operator {name} has no numpy kernel"):
        Interpreter().evaluate(relay.Call(op, [relay.const(1.0)]))


def test_bad_projection_and_bad_reference_are_errors():
    with pytest.raises(EvaluationError, match="index 2 is out of range.*2 field"):
        Interpreter().evaluate(relay.TupleGetItem(relay.Tuple([relay.const(1.0)] * 2), 2))
    with pytest.raises(EvaluationError, match="not a tuple"):
        Interpreter().evaluate(relay.TupleGetItem(relay.const(1.0), 0))
    with pytest.raises(EvaluationError, match="expected a reference"):
        Interpreter().evaluate(relay.RefRead(relay.const(1.0)))


def test_kernel_results_become_arrays_and_tuples():
    scalar_name = f"test_interp.scalar{next(_fresh)}"
    pair_name = f"test_interp.pair{next(_fresh)}"
    register_op(scalar_name, num_inputs=1, type_relation=lambda t, a: t[0],
                kernel=lambda args, attrs: float(args[0].sum()))
    register_op(pair_name, num_inputs=1, type_relation=lambda t, a: t[0],
                kernel=lambda args, attrs: [args[0], np.float32(1)])
    ex = Interpreter()
    s = ex.evaluate(relay.Call(relay.Op.get(scalar_name), [relay.const([1.0, 2.0])]))
    assert isinstance(s, np.ndarray) and s.shape == () and s == 3.0
    p = ex.evaluate(relay.Call(relay.Op.get(pair_name), [relay.const([1.0, 2.0])]))
    assert isinstance(p, tuple) and all(isinstance(v, np.ndarray) for v in p)


def test_messages_fall_back_to_a_brief_form_when_printing_fails(monkeypatch):
    def broken(self, show_meta_data=True):
        raise RuntimeError("printer unavailable")

    monkeypatch.setattr(relay.Expr, "astext", broken)
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(4,))
    f = Interpreter().evaluate(relay.Function([x, y], relay.multiply(x, relay.nn.relu(y))))
    with pytest.raises(EvaluationError, match=r"^multiply failed on multiply\(%x, nn\.relu\(%y\)\)"):
        f(np.zeros(3, F32), np.zeros(4, F32))


def test_call_built_without_attrs_uses_the_schema_defaults():
    from relaypass.ir import Call, Op

    x = relay.var("x", shape=(2, 3))
    f = relay.Function([x], Call(Op.get("nn.softmax"), [x]))
    out = relay.create_executor(mod=relay.IRModule.from_expr(f)).evaluate()(np.zeros((2, 3), "float32"))
    np.testing.assert_allclose(out, np.full((2, 3), 1 / 3, "float32"), rtol=1e-6)
