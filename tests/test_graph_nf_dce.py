"""ToGraphNormalForm and DeadCodeElimination: Relay's examples, effects, random programs, depth."""

from __future__ import annotations

import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.analysis.purity import let_purity
from relaypass.functor import post_order_visit
from relaypass.interp import create_executor
from relaypass.ir import IRModule, Op
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.testing.strategies import available_op_uses, modules, random_inputs
from relaypass.transform import FunctionPass, ModulePass, PassInfo
from relaypass_std.dead_code_elimination import DeadCodeElimination, dead_code_elimination
from relaypass_std.to_a_normal_form import ToANormalForm
from relaypass_std.to_graph_normal_form import ToGraphNormalForm

INT = relay.TensorType((), "int32")


def infer_type():
    return relay.transform.InferType()


def count_lets(expr):
    lets = []
    post_order_visit(expr, lambda e: lets.append(e) if isinstance(e, relay.Let) else None)
    return len(lets)


def run_main(mod, *args):
    return create_executor(mod=mod).evaluate()(*args).numpy()


def optimize_and_check(before, after, passes, typed=False):
    """As in Relay's DCE tests: run the passes on a module, compare up to free variables.

    ``typed`` runs InferType on the expected program too, since the passes ended with it.
    """
    if isinstance(before, relay.Function):
        before = IRModule.from_expr(before)
    if isinstance(after, relay.Function):
        after = IRModule.from_expr(after)
    for p in passes if isinstance(passes, list) else [passes]:
        before = p(before)
    if typed:
        after = infer_type()(after)
    for gv, func in after.items():
        assert_structural_equal(before[gv.name_hint], func, map_free_vars=True)


def test_registered_passes_are_declared_as_relay_declares_them():
    gnf = relay.transform.ToGraphNormalForm()
    assert gnf.info == PassInfo(1, "ToGraphNormalForm") and isinstance(gnf, FunctionPass)
    dce = relay.transform.DeadCodeElimination(inline_once=True)
    assert dce.info == PassInfo(1, "DeadCodeElimination", ["InferType"])
    assert isinstance(dce, ModulePass)


# --- ToGraphNormalForm: Relay's examples (test_pass_to_graph_normal_form.py) -------------


def _implicit_share():
    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    body = relay.Let(z, relay.add(y, y), relay.add(z, z))
    body = relay.Let(y, relay.add(x, x), body)
    return relay.Function([], relay.Let(x, relay.const(1), body))


def test_implicit_share():
    f = _implicit_share()
    g = ToGraphNormalForm()(f)
    assert count_lets(f) == 3 and count_lets(g) == 0
    assert int(run_main(IRModule.from_expr(f))) == 8
    assert int(run_main(IRModule.from_expr(g))) == 8
    # The shared values became shared nodes: add(%1, %1) where %1 = add(%0, %0).
    top = g.body
    assert top.args[0] is top.args[1] and top.args[0].args[0] is top.args[0].args[1]


def test_round_trip():
    f = _implicit_share()
    g = ToGraphNormalForm()(f)
    h = ToANormalForm()(g)
    assert count_lets(g) == 0 and count_lets(h) > 0
    assert int(run_main(IRModule.from_expr(h))) == 8
    assert_structural_equal(ToGraphNormalForm()(h), g)


# --- ToGraphNormalForm: what stays a let ---------------------------------------------------


def _ref_program():
    i, iv, u, uv = (relay.Var(n) for n in ("i", "iv", "u", "uv"))
    body = relay.add(iv, uv)
    body = relay.Let(uv, relay.RefRead(i), body)
    body = relay.Let(u, relay.RefWrite(i, relay.const(2)), body)
    body = relay.Let(iv, relay.RefRead(i), body)
    return relay.Function([], relay.Let(i, relay.RefCreate(relay.const(1)), body))


def test_bindings_with_effects_stay_lets():
    f = _ref_program()
    g = ToGraphNormalForm()(f)
    assert_structural_equal(g, infer_type()(IRModule.from_expr(f))["main"])  # typed, as in Relay
    assert int(run_main(IRModule.from_expr(g))) == 3


def test_stateful_operator_stays_bound_and_pure_values_around_it_become_dataflow():
    x = relay.var("x", shape=(4,))
    d, s = relay.var("d"), relay.var("s")
    body = relay.Let(s, relay.add(x, x), relay.Let(d, relay.nn.dropout(s), relay.multiply(d, s)))
    g = ToGraphNormalForm()(relay.Function([x], body))
    # (The output is typed, as in Relay: its variables are InferType's typed copies.)
    assert isinstance(g.body, relay.Let) and g.body.var.name_hint == d.name_hint
    assert g.body.value.tuple_value.args[0].op.name == "add"
    assert g.body.body.args[0] is g.body.var


def test_recursive_binding_is_kept_with_its_name():
    n = relay.var("n", INT)
    f = relay.var("f", relay.FuncType([INT], INT))
    body = relay.If(relay.equal(n, relay.const(0)), relay.const(0),
                    relay.add(n, relay.Call(f, [relay.subtract(n, relay.const(1))])))
    prog = relay.Function([], relay.Let(f, relay.Function([n], body, INT), relay.Call(f, [relay.const(3)])))
    g = ToGraphNormalForm()(prog)
    callee = g.body.op
    assert isinstance(callee, relay.Let) and callee.var is f and callee.body is f
    assert int(run_main(IRModule.from_expr(g))) == 6


def test_unused_pure_binding_disappears():
    z = relay.var("z", INT)
    x = relay.var("x")
    g = ToGraphNormalForm()(relay.Function([z], relay.Let(x, relay.add(z, z), z)))
    assert g.body is z


# --- DeadCodeElimination: Relay's examples (test_pass_dead_code_elimination.py) ------------


def test_dead_let():
    z = relay.var("z", INT)
    x = relay.var("x")
    before = relay.Function([z], relay.Let(x, relay.const(1), z))
    z2 = relay.var("z", INT)
    optimize_and_check(before, relay.Function([z2], z2), DeadCodeElimination(), typed=True)


def test_one_live_let():
    def program(with_dead):
        z, x, y = relay.var("z", INT), relay.var("x"), relay.var("y")
        body = relay.add(x, x)
        if with_dead:
            body = relay.Let(y, relay.const(2), body)
        return relay.Function([z], relay.Let(x, relay.const(1), body))

    optimize_and_check(program(True), program(False), DeadCodeElimination(), typed=True)


def test_nested_let():
    def program(with_dead):
        d, b, a, c = relay.var("d", INT), relay.var("b", INT), relay.var("a"), relay.var("c")
        body = relay.Let(c, d, c)
        if with_dead:
            body = relay.Let(a, b, body)
        return relay.Function([d, b], body)

    optimize_and_check(program(True), program(False), DeadCodeElimination(), typed=True)


def _recursion(live):
    n = relay.var("n", INT)
    data = relay.var("data", relay.TensorType((), "float32"))
    f = relay.var("f")
    body = relay.If(
        relay.equal(n, relay.const(0)), data,
        relay.Call(f, [relay.subtract(n, relay.const(1)), relay.log(data)]),
    )
    result = relay.Call(f, [relay.const(2), relay.const(10000.0)]) if live else relay.Tuple([])
    inner = relay.Function([n, data], body, relay.TensorType((), "float32"))
    return relay.Function([], relay.Let(f, inner, result))


def test_live_recursion():
    optimize_and_check(
        _recursion(True), _recursion(True), [DeadCodeElimination(), infer_type()], typed=True
    )


def test_dead_recursion():
    optimize_and_check(
        _recursion(False), relay.Function([], relay.Tuple([])),
        [DeadCodeElimination(), infer_type()], typed=True,
    )


def test_add_with_let():
    a = relay.var("a")
    before = relay.Function([], relay.add(relay.Let(a, relay.const(1), relay.const(3)), relay.const(2)))
    after = relay.Function([], relay.add(relay.const(3), relay.const(2)))
    optimize_and_check(before, after, [DeadCodeElimination(), infer_type()], typed=True)


def test_tuple_get_item():
    a = relay.var("a")
    tup = relay.Tuple([relay.const(i) for i in (1, 2, 3, 4)])
    before = relay.Function([], relay.Let(a, relay.const(100), relay.TupleGetItem(tup, 0)))
    after = relay.Function([], relay.TupleGetItem(tup, 0))
    optimize_and_check(before, after, DeadCodeElimination(), typed=True)


def test_inline_into_function():
    """Inline bindings used once, but not across function boundaries."""

    def program(inlined):
        x, f, y, z = relay.var("x"), relay.var("f"), relay.var("y", INT), relay.var("z")
        if inlined:
            inner = relay.Function([y], relay.add(x, relay.add(y, y)), INT)
        else:
            inner = relay.Function([y], relay.Let(z, relay.add(y, y), relay.add(x, z)), INT)
        calls = relay.Tuple([relay.Call(f, [relay.const(2)]), relay.Call(f, [relay.const(3)])])
        return relay.Function(
            [], relay.Let(x, relay.add(relay.const(1), relay.const(1)), relay.Let(f, inner, calls))
        )

    optimize_and_check(program(False), program(True), DeadCodeElimination(inline_once=True),
                       typed=True)


def test_impure_op():
    """A stateful call is kept even when unused; pure bindings used once are inlined into it."""

    def program(optimized):
        size, x, dead = relay.var("size"), relay.var("x"), relay.var("_")
        scaled = relay.multiply(relay.const(np.ones(4, "float32")), relay.const(2.0))
        if optimized:
            value = relay.add(scaled, relay.const(1.0))
            return relay.Function([], relay.Let(dead, relay.nn.dropout(value), relay.const(0)))
        return relay.Function([], relay.Let(size, scaled, relay.Let(
            x, relay.add(size, relay.const(1.0)),
            relay.Let(dead, relay.nn.dropout(x), relay.const(0)),
        )))

    optimize_and_check(program(False), program(True), DeadCodeElimination(inline_once=True),
                       typed=True)


def _impure_global(kept_name):
    r = relay.var("r")
    w = relay.var("w")
    f_body = relay.Let(r, relay.RefCreate(relay.const(0)),
                       relay.Let(w, relay.RefWrite(r, relay.const(1)), relay.const(0)))
    y = relay.var(kept_name)
    mod = IRModule()
    f = mod.add("f", relay.Function([], f_body, INT))
    mod["main"] = relay.Function([], relay.Let(y, relay.Call(f, []), relay.const(0)), INT)
    return mod


def test_impure_func():
    """Calls of a global function with effects are not dropped, though unused."""
    mod = _impure_global("y")
    out = DeadCodeElimination(inline_once=True)(mod)
    assert_structural_equal(out["main"], infer_type()(mod)["main"])  # typed, as Relay's result
    # Inside @f, the reference used once moves into the write, as in Relay (creating one is pure).
    write = out["f"].body.value
    assert isinstance(write, relay.RefWrite) and isinstance(write.ref, relay.RefCreate)


def test_refs():
    """Reference reads and writes, and calls of functions that do them, all stay."""
    mod = IRModule()
    r = relay.var("r")
    v, u = relay.var("v"), relay.var("u")
    f = mod.add("f", relay.Function(
        [r], relay.Let(v, relay.RefRead(r), relay.Let(u, relay.RefWrite(r, relay.add(v, relay.const(1))), v)), INT
    ))
    r2, y, z = relay.var("r"), relay.var("y"), relay.var("z")
    mod["main"] = relay.Function([], relay.Let(
        r2, relay.RefCreate(relay.const(0)),
        relay.Let(y, relay.Call(f, [r2]), relay.Let(z, relay.Call(f, [r2]), z)),
    ), INT)
    optimize_and_check(mod, mod, [infer_type(), DeadCodeElimination(inline_once=True)], typed=True)
    assert int(run_main(mod)) == 1


# --- DeadCodeElimination: more rules -------------------------------------------------------


def test_a_chain_of_dead_bindings_goes_as_a_whole():
    z = relay.var("z", INT)
    a, b, c = relay.var("a"), relay.var("b"), relay.var("c")
    f = relay.Function([z], relay.Let(a, relay.add(z, z), relay.Let(b, relay.add(a, a), relay.Let(c, relay.add(b, z), z))))
    assert dead_code_elimination(f).body is z


def test_bindings_under_a_shared_node_are_counted_once():
    # The If is used twice, so the walk meets its lets twice; %r stays used (Relay would
    # reset its count on the second visit and drop it).
    p = relay.var("p", shape=(), dtype="bool")
    x = relay.var("x", shape=(1,))
    r, w, v = relay.var("r"), relay.var("w"), relay.var("v")
    branch = relay.Let(r, relay.RefCreate(relay.const(1.0)), relay.Let(
        w, relay.RefWrite(r, relay.const(2.0)), relay.Let(v, relay.RefRead(r), x)
    ))
    shared = relay.If(p, branch, x)
    f = relay.Function([p, x], relay.add(shared, shared))
    for inline_once in (False, True):
        assert dead_code_elimination(f, inline_once=inline_once) is f


def test_ignore_impurity_drops_unused_effects_too():
    f = _ref_program()
    dead = relay.var("dead")
    g = relay.Function([], relay.Let(dead, relay.RefCreate(relay.const(5)), f.body))
    assert dead_code_elimination(g).body is f.body
    i = f.body.var
    out = dead_code_elimination(f, ignore_impurity=True)
    assert count_lets(out) == 3 and out.body.var is i  # only the unused write went


def test_recursive_function_with_effects_is_not_pure():
    # let %f = fn (%n) { if (n > 0) { let %a = %f(n - 1); let %w = ref_write(r, n); 0 } else { 0 } }
    r = relay.var("r")
    n = relay.var("n", INT)
    f, a, w, res = relay.var("f"), relay.var("a"), relay.var("w"), relay.var("res")
    recurse = relay.Let(a, relay.Call(f, [relay.subtract(n, relay.const(1))]),
                        relay.Let(w, relay.RefWrite(r, n), relay.const(0)))
    body = relay.If(relay.greater(n, relay.const(0)), recurse, relay.const(0))
    prog = relay.Let(r, relay.RefCreate(relay.const(0)), relay.Let(
        f, relay.Function([n], body, INT),
        relay.Let(res, relay.Call(f, [relay.const(3)]), relay.RefRead(r)),
    ))
    purity = let_purity(prog)
    assert purity[f] and not purity[a] and not purity[res]
    out = dead_code_elimination(relay.Function([], prog))
    assert count_lets(out) == count_lets(prog)


# --- random programs ----------------------------------------------------------------------


def _check(out, expected, args):
    for func in out.functions.values():
        assert well_formed(func)
    infer_type()(out)
    assert_same_values(expected, run_quietly(out, args))


def _unchanged(mod, functions, text):
    assert dict(mod.functions) == functions
    assert all(a is b for a, b in zip(mod.functions.values(), functions.values()))
    assert mod.astext() == text


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25), features={"let", "if", "tuple", "fn", "ref", "global"}))
def test_random_programs_keep_their_values(mod):
    functions, text = dict(mod.functions), mod.astext()
    args = random_inputs(mod, seed=3)
    expected = run_quietly(mod, args)
    for p in (ToGraphNormalForm(), DeadCodeElimination(), DeadCodeElimination(inline_once=True)):
        _check(p(mod), expected, args)
    _unchanged(mod, functions, text)


_PURE_OPS = [u for u in available_op_uses() if not Op.get(u.name).get_attr("TOpIsStateful")]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25), ops=_PURE_OPS, features={"if", "tuple", "global"}))
def test_anf_then_graph_normal_form_gives_back_the_dataflow_graph(mod):
    functions, text = dict(mod.functions), mod.astext()
    args = random_inputs(mod, seed=4)
    expected = run_quietly(mod, args)
    anf = ToANormalForm()(mod)
    _check(anf, expected, args)
    back = ToGraphNormalForm()(anf)
    for gv, func in infer_type()(mod).items():  # a function pass ends typed, as in Relay
        assert_structural_equal(back[gv.name_hint], func)
    # Nothing in A-normal form is dead; inlining every binding used once also undoes ANF.
    assert_structural_equal(DeadCodeElimination()(anf), infer_type()(anf))  # typed, as in Relay
    _check(DeadCodeElimination(inline_once=True)(anf), expected, args)
    _unchanged(mod, functions, text)


# --- depth --------------------------------------------------------------------------------


def test_chains_of_100000():
    limit = sys.getrecursionlimit()
    n = 100_000
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    e = x
    for i in range(n):
        e = relay.add(e, c) if i % 2 else relay.multiply(e, x)
    dataflow = relay.Function([x], e)
    # The same program in A-normal form, built directly (ToANormalForm has its own test).
    cv = relay.var("c")
    vs = [relay.var(f"v{i}") for i in range(n)]
    body = vs[-1]
    for i in range(n - 1, 0, -1):
        body = relay.Let(vs[i], relay.add(vs[i - 1], cv) if i % 2 else relay.multiply(vs[i - 1], x), body)
    anf = IRModule.from_expr(relay.Function(
        [x], relay.Let(vs[0], relay.multiply(x, x), relay.Let(cv, c, body))
    ))
    typed_dataflow = infer_type()(IRModule.from_expr(dataflow))["main"]
    assert_structural_equal(ToGraphNormalForm()(anf)["main"], typed_dataflow)
    assert count_lets(DeadCodeElimination()(anf)["main"]) == n + 1  # nothing is dead
    inlined = DeadCodeElimination(inline_once=True)(anf)["main"]
    # Only the constant, used 50,000 times, keeps its binding.
    assert count_lets(inlined) == 1 and inlined.body.var.name_hint == cv.name_hint  # typed copy
    assert sys.getrecursionlimit() == limit


def test_ToGraphNormalForm_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("ToGraphNormalForm", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)


def test_DeadCodeElimination_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("DeadCodeElimination", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
