"""ToANormalForm on the cases of TVM v0.18's test_pass_to_a_normal_form.py, written as a TVM user.

Only the import lines differ from what such a user writes for TVM.
``test_let_as_subexpr`` is checked without its ``on_device`` annotations
(devices are out of scope).
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing  # noqa: F401
from relaypass import relay
from relaypass.relay import create_executor, op, transform
from relaypass.relay.analysis import Feature, detect_feature
from relaypass.relay.prelude import Prelude
from relaypass.relay.testing import count


def run_opt_pass(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    mod = tvm.IRModule.from_expr(expr)
    seq = tvm.transform.Sequential(passes)
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def check_eval(expr, expected_result, mod=None, rtol=1e-07):
    dev = tvm.device("llvm", 0)
    result = create_executor(mod=mod, device=dev, target="llvm").evaluate(expr)
    np.testing.assert_allclose(result.numpy(), expected_result, rtol=rtol)


def has_let(expr):
    """What ``Feature.fLet in detect_feature(expr)`` tells in TVM."""
    found = []
    relay.analysis.post_order_visit(expr, lambda e: found.append(isinstance(e, relay.Let)))
    return any(found)


def test_explicit_bound():
    one = relay.const(1)
    doubled = op.add(one, one)
    quadrupled = op.add(doubled, doubled)
    f = relay.Function([], op.add(quadrupled, quadrupled))
    assert not has_let(f)
    anf = run_opt_pass(f, transform.ToANormalForm())
    assert has_let(anf)
    check_eval(f(), 8.0)
    check_eval(anf(), 8.0)


def test_explicit_bound_with_detect_feature():
    from relaypass.relay.analysis import Feature, detect_feature

    one = relay.const(1)
    f = relay.Function([], op.add(op.add(one, one), op.add(one, one)))
    assert Feature.fLet not in detect_feature(f)
    assert Feature.fLet in detect_feature(run_opt_pass(f, transform.ToANormalForm()))


def test_order():
    # Bindings follow the scope and evaluation order, not the order of construction.
    z = relay.const(3)
    y = relay.const(2)
    x = relay.const(1)
    val = x + y * z
    check_eval(val, 7.0)
    anf = run_opt_pass(val, [transform.ToANormalForm(), transform.InferType()])

    a, b, c, d, e = (relay.Var(name, relay.IncompleteType()) for name in "abcde")
    expected = relay.Let(
        a, x, relay.Let(b, y, relay.Let(c, z, relay.Let(d, b * c, relay.Let(e, a + d, e))))
    )
    expected = run_opt_pass(expected, transform.InferType())
    tvm.ir.assert_structural_equal(anf, expected)


def test_if():
    cond = relay.const(True)
    x = relay.If(cond, relay.const(2), relay.const(3))
    anf = run_opt_pass(x, [transform.ToANormalForm(), transform.InferType()])

    a, b, c, d = (relay.Var(name, relay.IncompleteType()) for name in "abcd")
    then_branch = relay.Let(a, relay.const(2), a)
    else_branch = relay.Let(b, relay.const(3), b)
    expected = relay.Let(c, cond, relay.Let(d, relay.If(c, then_branch, else_branch), d))
    expected = run_opt_pass(expected, transform.InferType())
    tvm.ir.assert_structural_equal(anf, expected)


def test_let_as_subexpr():
    # TVM's case wraps ``c + c`` (and so the expected bindings) in on_device annotations.
    x = relay.Var("x", relay.IncompleteType())
    c = relay.const(1)
    shared = relay.Let(x, c + c, x)
    anf = run_opt_pass(shared * shared, [transform.ToANormalForm(), transform.InferType()])

    v0, v1, v2 = (relay.Var(name, relay.IncompleteType()) for name in ("v0", "v1", "v2"))
    expected = relay.Let(
        v0, c, relay.Let(x, v0 + v0, relay.Let(v1, x, relay.Let(v2, v1 * v1, v2)))
    )
    expected = run_opt_pass(expected, transform.InferType())
    tvm.ir.assert_structural_equal(anf, expected)


def test_recursion():
    """A recursive global, f(n) = 2n + f(n - 1) down to f(0) = 0: ANF must terminate."""
    scalar = relay.TensorType((), "int64")

    def k(v):
        return relay.const(v, "int64")

    mod = tvm.IRModule()
    f = relay.GlobalVar("f")
    n = relay.Var("n", scalar)
    twice = n * k(2)
    mod[f] = relay.Function(
        [n], relay.If(relay.equal(n, k(0)), twice, twice + f(n - k(1))), scalar, []
    )
    check_eval(f(k(5)), 30.0, mod=mod)
    mod = transform.ToANormalForm()(mod)
    assert has_let(mod[f])
    check_eval(f(k(5)), 30.0, mod=mod)


def test_ref():
    """Read 1, write 2, read 2: 3, before and after ANF (the effects keep their order)."""
    cell, first, done, second = (relay.Var(name) for name in ("cell", "first", "done", "second"))
    program = relay.Let(
        cell, relay.RefCreate(relay.const(1)),
        relay.Let(first, relay.RefRead(cell),
                  relay.Let(done, relay.RefWrite(cell, relay.const(2)),
                            relay.Let(second, relay.RefRead(cell), first + second))),
    )
    check_eval(program, 3)
    check_eval(run_opt_pass(program, transform.ToANormalForm()), 3)


def test_let():
    x = relay.Var("x")
    y = relay.Var("y")
    body = relay.Let(x, relay.const(4.0, "float32"), relay.Let(y, x, x + y))
    check_eval(body, 8)
    check_eval(run_opt_pass(body, transform.ToANormalForm()), 8)


def test_function():
    x = relay.Var("x", relay.TensorType((), "float32"))
    f = relay.Function([x], x + x)
    four = relay.const(4.0, "float32")
    anf_f = run_opt_pass(f, transform.ToANormalForm())
    assert isinstance(anf_f, relay.Function)
    check_eval(f(four), 8)
    check_eval(anf_f(four), 8)


def test_nat_add():
    mod = tvm.IRModule()
    p = Prelude(mod)
    p.mod.import_from_std("nat.rly")
    nat, z, s = p.mod.get_type("nat")
    add = p.mod.get_global_var("nat_add")
    dev = tvm.device("llvm", 0)
    intrp = create_executor(mod=mod, device=dev, target="llvm")
    assert mod[add].checked_type == relay.FuncType([nat(), nat()], nat())
    assert count(p, intrp.evaluate(add(s(z()), s(z())))) == 2
    expr = add(s(z()), s(z()))
    f = relay.GlobalVar("f")
    mod[f] = relay.Function([], expr)
    mod = transform.ToANormalForm()(mod)
    expr = mod["f"]
    assert count(p, intrp.evaluate(expr.body)) == 2
    assert Feature.fLet in detect_feature(mod[add])


@pytest.mark.xfail(
    reason="relay.transform.gradient (higher-order automatic differentiation) is not in relaypass",
    strict=True,
)
def test_gradient_if():
    x = relay.var("a", shape=(1, 16))
    y = relay.var("y", shape=(1, 16))
    cond = relay.var("cond", shape=(), dtype="uint1")
    net = relay.add(x, relay.If(cond, x, x))
    mod = tvm.IRModule.from_expr(relay.Function([cond, x, y], net))
    mod = relay.transform.ToANormalForm()(mod)
    mod = relay.transform.InferType()(mod)
    mod["main"] = relay.transform.gradient(mod["main"], mode="higher_order")
    mod = relay.transform.ToANormalForm()(mod)


def test_gradient_if_up_to_gradient():
    """TVM's test_gradient_if up to the gradient: ANF of an If on a uint1 scalar, then typed."""
    x = relay.var("a", shape=(1, 16))
    y = relay.var("y", shape=(1, 16))
    cond = relay.var("cond", shape=(), dtype="uint1")
    net = relay.add(x, relay.If(cond, x, x))
    mod = tvm.IRModule.from_expr(relay.Function([cond, x, y], net))
    mod = relay.transform.ToANormalForm()(mod)
    mod = relay.transform.InferType()(mod)
    assert has_let(mod["main"])
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 16), "float32")


if __name__ == "__main__":
    tvm.testing.main()
