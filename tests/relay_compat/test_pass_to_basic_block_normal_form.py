"""relay.transform.ToBasicBlockNormalForm on the cases of TVM v0.18's test_pass_to_basic_block_normal_form.py.

The facts: dataflow without branches stays a graph (no let appears); a
value used from both branches of an If, or from both branches of an inner
If, is bound by a let in the innermost block enclosing its uses, and
nothing else is; existing lets stay (after ``let %y = %x`` the uses of
``%x`` read ``%y``, as in Relay); recursion, references and functions keep
their results; values shared by two local functions are bound in the
enclosing function; every result passes ``check_basic_block_normal_form``;
the input module is never changed.

Not ported: ``test_gradient_if`` (``relay.transform.gradient``, automatic
differentiation, is not provided).  ``test_immutability`` runs without its
``tvm.target.Target("llvm")`` scope (targets are out of scope) and checks
that the input's text is unchanged; TVM also asserts the output's text
differs, which holds there only because TVM's pass drops the input's type
annotations even where it changes nothing (relaypass returns such a
function as it is).
"""
import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay import create_executor, op, transform
from relaypass.relay.analysis import Feature, check_basic_block_normal_form, detect_feature
from relaypass.relay.prelude import Prelude
from relaypass.relay.testing import count, create_workload


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


def bblock_of(expr):
    return run_opt_pass(expr, [transform.ToBasicBlockNormalForm(), transform.InferType()])


def typed(expr):
    return run_opt_pass(expr, transform.InferType())


def test_no_explicit_bind():
    c = relay.const(1)
    y = op.add(c, c)
    z = op.add(y, y)
    f = relay.Function([], op.add(z, z))
    assert Feature.fLet not in detect_feature(f)
    bblock = run_opt_pass(f, transform.ToBasicBlockNormalForm())
    assert Feature.fLet not in detect_feature(bblock)
    check_eval(f(), 8.0)
    check_eval(bblock(), 8.0)
    check_basic_block_normal_form(bblock)


def scalars():
    return (relay.var("x", shape=(), dtype="bool"), relay.var("y", shape=(), dtype="float32"),
            relay.var("z", shape=(), dtype="float32"))


def test_top_level_nested_if():
    # z + z is used in two branches of the outer If: bound before it;
    # y + y in both branches of the inner If of the true branch: bound there.
    x, y, z = scalars()
    one, three = relay.const(1, dtype="float32"), relay.const(3, dtype="float32")
    y2, z2 = relay.add(y, y), relay.add(z, z)
    inner_t = relay.If(relay.const(True), relay.add(z2, y2), relay.add(three, y2))
    body = relay.If(x, inner_t, relay.If(relay.const(False), z2, one))

    x, y, z = scalars()
    vy, vz = relay.var("y2"), relay.var("z2")
    inner_t = relay.If(relay.const(True), relay.add(vz, vy), relay.add(three, vy))
    inner_t = relay.Let(vy, relay.add(y, y), inner_t)
    expected = relay.If(x, inner_t, relay.If(relay.const(False), vz, one))
    expected = relay.Let(vz, relay.add(z, z), expected)
    tvm.ir.assert_structural_equal(bblock_of(body), typed(expected), map_free_vars=True)


def test_nested_if():
    x, y, _ = scalars()
    one, two, three = (relay.const(v, dtype="float32") for v in (1, 2, 3))
    y2 = relay.add(y, y)
    body = relay.If(x, relay.If(relay.const(True), y2, relay.add(three, y2)),
                    relay.If(relay.const(False), two, one))

    x, y, _ = scalars()
    vy = relay.var("y2")
    inner_t = relay.Let(vy, relay.add(y, y), relay.If(relay.const(True), vy, relay.add(three, vy)))
    expected = relay.If(x, inner_t, relay.If(relay.const(False), two, one))
    bblock = bblock_of(body)
    tvm.ir.assert_structural_equal(bblock, typed(expected), map_free_vars=True)
    check_basic_block_normal_form(bblock)


def test_recursion():
    # f(n) = n*2 if n == 0 else n*2 + f(n - 1); the product is shared by both branches.
    mod = tvm.IRModule()
    i64 = relay.TensorType((), "int64")
    f = relay.GlobalVar("f")
    n = relay.Var("n", i64)
    m = n * relay.const(2, "int64")
    body = relay.If(relay.equal(n, relay.const(0, "int64")), m, m + f(n - relay.const(1, "int64")))
    mod[f] = relay.Function([n], body, i64, [])
    check_eval(f(relay.const(5, "int64")), 30.0, mod=mod)
    mod = transform.ToBasicBlockNormalForm()(mod)
    f = mod[f]
    check_eval(f(relay.const(5, "int64")), 30.0, mod=mod)
    check_basic_block_normal_form(f)


def test_ref():
    i, iv, u, uv = (relay.Var(name) for name in ("i", "iv", "u", "uv"))
    body = relay.add(iv, uv)
    body = relay.Let(uv, relay.RefRead(i), body)
    body = relay.Let(u, relay.RefWrite(i, relay.const(2)), body)
    body = relay.Let(iv, relay.RefRead(i), body)
    body = relay.Let(i, relay.RefCreate(relay.const(1)), body)
    check_eval(body, 3)
    opt_body = run_opt_pass(body, transform.ToBasicBlockNormalForm())
    check_eval(opt_body, 3)
    check_basic_block_normal_form(opt_body)


def unchanged_by_the_pass(body):
    body = typed(body)
    opt_body = run_opt_pass(body, transform.ToBasicBlockNormalForm())
    tvm.ir.assert_structural_equal(body, opt_body)
    check_basic_block_normal_form(opt_body)


def test_nat_add():
    # Peano addition from the standard library: 1 + 1 is 2 before and after.
    mod = tvm.IRModule()
    p = Prelude(mod)
    p.mod.import_from_std("nat.rly")
    nat, zero, succ = p.mod.get_type("nat")
    add = p.mod.get_global_var("nat_add")
    dev = tvm.device("llvm", 0)
    assert mod[add].checked_type == relay.FuncType([nat(), nat()], nat())
    one_plus_one = add(succ(zero()), succ(zero()))
    assert count(p, create_executor(mod=mod, device=dev, target="llvm").evaluate(one_plus_one)) == 2
    f = relay.GlobalVar("f")
    mod[f] = relay.Function([], add(succ(zero()), succ(zero())))
    mod = transform.ToBasicBlockNormalForm()(transform.InferType()(mod))
    opt_expr = mod["f"]
    assert count(p, create_executor(mod=mod, device=dev, target="llvm").evaluate(opt_expr.body)) == 2
    assert Feature.fLet not in detect_feature(mod[add])
    check_basic_block_normal_form(opt_expr)


def test_a_value_shared_by_two_clauses_is_bound_before_the_match():
    mod = tvm.IRModule()
    p = Prelude(mod)
    _, cons, nil = p.mod.get_type("List")
    items = relay.var("items", p.mod.get_global_type_var("List")(relay.scalar_type("float32")))
    x = relay.var("x", shape=(), dtype="float32")
    h = relay.var("h")
    shared = relay.exp(x)
    match = relay.Match(items, [
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]),
                     relay.add(h, shared)),
        relay.Clause(relay.PatternConstructor(nil, []), shared),
    ])
    mod["main"] = relay.Function([items, x], match)
    out = transform.ToBasicBlockNormalForm()(mod)
    body = out["main"].body
    assert isinstance(body, relay.Let) and isinstance(body.body, relay.Match)
    check_basic_block_normal_form(out["main"])
    value = np.float32(0.5)
    two = cons(relay.const(2.0), nil())
    run = relay.create_executor(mod=out).evaluate(out["main"])
    np.testing.assert_allclose(run(create_executor(mod=out).evaluate(two), value).numpy(),
                               2.0 + np.exp(value), rtol=1e-6)


def test_let():
    x = relay.Var("x")
    unchanged_by_the_pass(relay.Let(x, relay.const(4.0, "float32"), x))

    y = relay.Var("y")
    unchanged_by_the_pass(relay.Let(y, relay.const(4.0, "float32"), relay.add(y, y)))

    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    body = relay.Let(z, x + y, x + z)
    body = relay.Let(y, relay.const(3.0, "float32"), relay.Let(x, relay.const(4.0, "float32"), body))
    unchanged_by_the_pass(body)


def test_let_of_a_variable_renames_later_uses():
    def program(result_is_y):
        x, y = relay.Var("x"), relay.Var("y")
        return relay.Let(x, relay.const(4.0, "float32"), relay.Let(y, x, y if result_is_y else x))

    body = typed(program(result_is_y=False))
    check_eval(body, 4)
    opt_body = run_opt_pass(body, transform.ToBasicBlockNormalForm())
    tvm.ir.assert_structural_equal(opt_body, typed(program(result_is_y=True)))
    check_basic_block_normal_form(opt_body)


def test_function():
    x = relay.Var("x", relay.TensorType((), "float32"))
    f = relay.Function([x], x + x)
    d = relay.const(4.0, "float32")
    bblock = run_opt_pass(f, transform.ToBasicBlockNormalForm())
    assert isinstance(bblock, relay.Function)
    check_eval(f(d), 8)
    check_eval(bblock(d), 8)
    check_basic_block_normal_form(bblock)


def test_if():
    def program(x, bound):
        one, two = relay.const(1, dtype="float32"), relay.const(2, dtype="float32")
        v1 = relay.var("v1") if bound else relay.add(x, one)
        body = relay.If(relay.equal(x, two), relay.multiply(v1, two), relay.multiply(v1, one))
        return relay.Let(v1, relay.add(x, one), body) if bound else body

    x = relay.var("x", shape=(), dtype="float32")
    body, expected_body = program(x, bound=False), program(x, bound=True)
    bblock = bblock_of(body)
    tvm.ir.assert_structural_equal(bblock, typed(expected_body), map_free_vars=True)
    check_basic_block_normal_form(bblock)

    bblock = bblock_of(relay.Function([x], body))
    tvm.ir.assert_structural_equal(bblock, typed(relay.Function([x], expected_body)))
    check_basic_block_normal_form(bblock)


def test_higher_order_return():
    x, y, z = (relay.var(n, shape=(1,), dtype="float32") for n in "xyz")
    x2 = relay.add(x, x)
    body = relay.Function([x], relay.Tuple([relay.Function([y], relay.add(x2, y)),
                                            relay.Function([z], relay.add(x2, z))]))
    bblock = run_opt_pass(body, transform.ToBasicBlockNormalForm())
    check_basic_block_normal_form(bblock)
    # x + x is computed once, before the two functions that use it.
    assert isinstance(bblock.body, relay.Let) and isinstance(bblock.body.body, relay.Tuple)


def test_higher_order_nested():
    x = relay.var("x", dtype="float32", shape=(1,))
    s = relay.var("s", dtype="float32", shape=(1,))
    shared = relay.add(s, s)
    f = relay.Var("f", relay.FuncType([], relay.scalar_type("bool")))
    z = relay.Var("z")
    body = relay.If(f(), relay.Function([x], relay.add(x, shared)),
                    relay.Function([z], relay.add(z, shared)))
    bblock = run_opt_pass(relay.Function([f, s], body), transform.ToBasicBlockNormalForm())
    check_basic_block_normal_form(bblock)


def test_immutability():
    simple_net = relay.nn.conv2d(
        data=relay.var("data", relay.TensorType((1, 3, 224, 224), "float32")),
        weight=relay.var("weight"), kernel_size=(5, 5), channels=3, padding=(1, 1),
    )
    simple_net = relay.Function(relay.analysis.free_vars(simple_net), simple_net)
    mod, _ = create_workload(simple_net)
    text = mod.astext()
    with tvm.transform.PassContext(opt_level=4):
        seq = tvm.transform.Sequential(passes=[transform.ToBasicBlockNormalForm()], opt_level=4)
        new_mod = seq(mod)
    assert mod.astext() == text
    assert new_mod is not mod
