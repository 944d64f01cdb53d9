"""ToANormalForm: Relay's examples, scoping of bindings, random programs and depth."""

from __future__ import annotations

import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import free_vars, well_formed
from relaypass.testing.strategies import modules, random_inputs
from relaypass.transform import PassContext, PassInfo, Sequential
from relaypass_std.fold_constant import FoldConstant
from relaypass_std.to_a_normal_form import ToANormalForm, to_a_normal_form


def infer_type():
    return relay.transform.InferType()


def run_opt_pass(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    mod = IRModule.from_expr(expr)
    with PassContext(opt_level=3):
        mod = Sequential(passes)(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def check_eval(expr, expected, mod=None):
    result = create_executor(mod=mod).evaluate(expr)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-7)


def count_lets(expr):
    lets = []
    post_order_visit(expr, lambda e: lets.append(e) if isinstance(e, relay.Let) else None)
    return len(lets)


def assert_a_normal(expr):
    """Every operand of a call, tuple, projection, reference, if or match is an atom: a
    variable, global, operator or constructor."""
    atoms = (relay.Var, relay.GlobalVar, relay.Op, relay.Constructor)
    bad = []

    def check(e):
        if isinstance(e, relay.Function) and e.attrs.get("Primitive"):
            return
        if isinstance(e, relay.Call):
            operands = [e.op, *e.args]
        elif isinstance(e, relay.Tuple):
            operands = list(e.fields)
        elif isinstance(e, relay.TupleGetItem):
            operands = [e.tuple_value]
        elif isinstance(e, (relay.RefCreate, relay.RefRead)):
            operands = [e.value if isinstance(e, relay.RefCreate) else e.ref]
        elif isinstance(e, relay.RefWrite):
            operands = [e.ref, e.value]
        elif isinstance(e, relay.If):
            operands = [e.cond]
        elif isinstance(e, relay.Match):
            operands = [e.data]
        else:
            return
        bad.extend(o for o in operands if not isinstance(o, atoms) and not _in_primitive(o))

    post_order_visit(expr, check)
    assert not bad, f"not atomic: {bad[0]}"


def _in_primitive(e):
    return isinstance(e, relay.Function) and bool(e.attrs.get("Primitive"))


def test_registered_as_a_module_pass_at_opt_level_1():
    p = relay.transform.ToANormalForm()
    assert p.info == PassInfo(1, "ToANormalForm")
    assert type(p).__name__ == "ModulePass"


# --- Relay's examples (tests/python/relay/test_pass_to_a_normal_form.py) ------------------


def test_explicit_bound():
    x = relay.const(1)
    y = relay.add(x, x)
    z = relay.add(y, y)
    f = relay.Function([], relay.add(z, z))
    assert count_lets(f) == 0
    anf = run_opt_pass(f, ToANormalForm())
    assert count_lets(anf) > 0
    check_eval(f.body, 8.0)
    check_eval(anf.body, 8.0)


def test_order():
    # Construction order does not matter: bindings follow scope and post-DFS order.
    z = relay.const(3)
    y = relay.const(2)
    x = relay.const(1)
    val = x + y * z
    check_eval(val, 7.0)
    anf = run_opt_pass(val, [ToANormalForm(), infer_type()])
    a, b, c, d, e = (relay.Var(n, relay.IncompleteType()) for n in "abcde")
    expected = e
    expected = relay.Let(e, a + d, expected)
    expected = relay.Let(d, b * c, expected)
    expected = relay.Let(c, z, expected)
    expected = relay.Let(b, y, expected)
    expected = relay.Let(a, x, expected)
    assert_structural_equal(anf, run_opt_pass(expected, infer_type()))


def test_if():
    cond = relay.const(True)
    x = relay.If(cond, relay.const(2), relay.const(3))
    anf = run_opt_pass(x, [ToANormalForm(), infer_type()])
    a, b, c, d = (relay.Var(n, relay.IncompleteType()) for n in "abcd")
    true_branch = relay.Let(a, relay.const(2), a)
    false_branch = relay.Let(b, relay.const(3), b)
    expected = relay.If(c, true_branch, false_branch)
    expected = relay.Let(d, expected, d)
    expected = relay.Let(c, cond, expected)
    assert_structural_equal(anf, run_opt_pass(expected, infer_type()))


def test_let_as_subexpr():
    x = relay.Var("x", relay.IncompleteType())
    c = relay.const(1)
    let = relay.Let(x, c + c, x)
    body = let * let
    anf = run_opt_pass(body, [ToANormalForm(), infer_type()])
    v0, v1, v2 = (relay.Var(n, relay.IncompleteType()) for n in ("v0", "v1", "v2"))
    expected = relay.Let(v0, c, relay.Let(x, v0 + v0, relay.Let(v1, x, relay.Let(v2, v1 * v1, v2))))
    assert_structural_equal(anf, run_opt_pass(expected, infer_type()))


def test_recursion():
    # f(n) = n * 2 + f(n - 1), f(0) = 0: f(5) = 30.  It must not loop forever.
    mod = IRModule()
    i64 = relay.TensorType((), "int64")
    f = relay.GlobalVar("f")
    n = relay.Var("n", i64)
    m = n * relay.const(2, "int64")
    funcbody = relay.If(
        relay.equal(n, relay.const(0, "int64")), m, m + f(n - relay.const(1, "int64"))
    )
    mod[f] = relay.Function([n], funcbody, i64, [])
    check_eval(f(relay.const(5, "int64")), 30.0, mod=mod)
    anf_mod = ToANormalForm()(mod)
    assert anf_mod is not mod and mod[f].body is funcbody
    check_eval(f(relay.const(5, "int64")), 30.0, mod=anf_mod)
    assert_a_normal(anf_mod["f"])


def test_ref():
    i, iv, u, uv = (relay.Var(n) for n in ("i", "iv", "u", "uv"))
    body = relay.add(iv, uv)
    body = relay.Let(uv, relay.RefRead(i), body)
    body = relay.Let(u, relay.RefWrite(i, relay.const(2)), body)
    body = relay.Let(iv, relay.RefRead(i), body)
    body = relay.Let(i, relay.RefCreate(relay.const(1)), body)
    check_eval(body, 3)
    opt_body = run_opt_pass(body, ToANormalForm())
    check_eval(opt_body, 3)
    assert_a_normal(opt_body)


def test_let():
    x, y = relay.Var("x"), relay.Var("y")
    d = relay.const(4.0, "float32")
    body = relay.Let(y, x, x + y)
    body = relay.Let(x, d, body)
    check_eval(body, 8)
    opt_body = run_opt_pass(body, ToANormalForm())
    check_eval(opt_body, 8)


def test_function():
    t = relay.TensorType((), "float32")
    x = relay.Var("x", t)
    f = relay.Function([x], x + x)
    d = relay.const(4.0, "float32")
    anf_f = run_opt_pass(f, ToANormalForm())
    assert isinstance(anf_f, relay.Function)
    check_eval(f(d), 8)
    check_eval(anf_f(d), 8)


# --- scopes, sharing, functions ------------------------------------------------------------


def _branchy():
    a = relay.var("a", shape=(2,))
    b = relay.var("b", shape=(2,))
    p = relay.var("p", shape=(), dtype="bool")
    shared = relay.add(a, b)
    only_else = relay.multiply(a, a)
    body = relay.If(p, relay.nn.relu(shared), relay.subtract(shared, only_else))
    return relay.Function([a, b, p], body)


def test_branch_only_values_stay_in_their_branch_and_shared_ones_are_hoisted():
    f = _branchy()
    out = to_a_normal_form(f)
    # let %s = add(a, b); let %r = if (p) {relu} else {multiply; subtract}; %r
    hoisted = out.body
    assert isinstance(hoisted, relay.Let) and hoisted.value.op.name == "add"
    bound_if = hoisted.body
    assert isinstance(bound_if.value, relay.If)
    then, other = bound_if.value.true_branch, bound_if.value.false_branch
    assert [e.value.op.name for e in _lets(then)] == ["nn.relu"]
    assert [e.value.op.name for e in _lets(other)] == ["multiply", "subtract"]
    for p in (True, False):
        args = [np.array([1.0, -3.0], "float32"), np.array([2.0, 1.0], "float32"), np.array(p)]
        ref = create_executor().evaluate(f)(*args)
        np.testing.assert_allclose(create_executor().evaluate(out)(*args), ref)


def _lets(expr):
    out = []
    while isinstance(expr, relay.Let):
        out.append(expr)
        expr = expr.body
    return out


def test_a_node_used_twice_is_bound_once():
    x = relay.var("x", shape=(3,))
    shared = relay.nn.relu(x)
    f = relay.Function([x], relay.Tuple([relay.add(shared, shared), shared]))
    out = to_a_normal_form(f)
    values = [let.value for let in _lets(out.body)]
    relus = [v for v in values if isinstance(v, relay.Call) and v.op.name == "nn.relu"]
    assert len(relus) == 1
    relu_var = _lets(out.body)[values.index(relus[0])].var
    add = next(v for v in values if isinstance(v, relay.Call) and v.op.name == "add")
    tup = next(v for v in values if isinstance(v, relay.Tuple))
    assert add.args[0] is relu_var and add.args[1] is relu_var and tup.fields[1] is relu_var


def test_local_and_recursive_closures():
    # let %sum = fn (%n) { if (n == 0) { 0 } else { n + %sum(n - 1) } }; %sum(4) + %sum(2)
    i32 = relay.TensorType((), "int32")
    n = relay.var("n", i32)
    sum_var = relay.var("sum", relay.FuncType([i32], i32))
    body = relay.If(
        relay.equal(n, relay.const(0)), relay.const(0),
        relay.add(n, relay.Call(sum_var, [relay.subtract(n, relay.const(1))])),
    )
    prog = relay.Let(
        sum_var, relay.Function([n], body, i32),
        relay.add(relay.Call(sum_var, [relay.const(4)]), relay.Call(sum_var, [relay.const(2)])),
    )
    f = relay.Function([], prog)
    out = run_opt_pass(f, ToANormalForm())
    assert well_formed(out)
    assert_a_normal(out)
    check_eval(out.body, 13)
    infer_type()(IRModule.from_expr(out))


def test_primitive_functions_are_left_alone_and_compiler_functions_skipped():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    prim = relay.Function([y], relay.add(relay.multiply(y, y), y)).with_attr("Primitive", 1)
    f = relay.Function([x], relay.add(relay.Call(prim, [x]), x))
    ext_x = relay.var("x", shape=(2,))
    ext = relay.Function([ext_x], relay.negative(relay.negative(ext_x))).with_attr("Compiler", "ccompiler")
    mod = IRModule({"main": f, "ext": ext})
    out = ToANormalForm()(mod)
    assert out["ext"] is ext
    bound = [let.value for let in _lets(out["main"].body)]
    assert prim in bound


def test_input_module_is_not_changed():
    mod = IRModule.from_expr(_branchy())
    before = dict(mod.functions)
    text = mod.astext()
    out = ToANormalForm()(mod)
    assert out is not mod and dict(mod.functions) == before and mod.astext() == text


def test_function_literal_called_in_place_at_the_top_of_an_expression():
    # Outside any function, Relay leaves a function literal unbound (it is not a local one).
    y = relay.var("y", shape=())
    f = relay.Function([y], y + y)
    out = to_a_normal_form(relay.Call(f, [relay.const(1.0)]))
    call = _lets(out)[-1].value
    assert isinstance(call.op, relay.Function) and isinstance(call.op.body, relay.Let)
    assert float(create_executor().evaluate(out).numpy()) == 2.0


def test_plain_expression_keeps_free_variables_free():
    x = relay.var("x", shape=())
    e = relay.add(relay.multiply(x, x), relay.const(1.0))
    out = to_a_normal_form(e)
    assert isinstance(out, relay.Let) and free_vars(out) == [x]


# --- match ----------------------------------------------------------------------------------


def _box_module():
    """A module declaring ``Box = Make(Tensor[(2), float32]) | Empty``."""
    box = relay.GlobalTypeVar("Box")
    make = relay.Constructor("Make", [relay.TensorType((2,), "float32")], box)
    empty = relay.Constructor("Empty", [], box)
    mod = IRModule()
    mod[box] = relay.TypeData(box, [], [make, empty])
    return mod, make, empty


def _box_match(make, empty, x, y, data):
    """``match (data) { Make(y) => y * y + x * 3, Empty => -(x * 3) }`` (``x * 3`` shared)."""
    shared = relay.multiply(x, relay.const(3.0))
    return relay.Match(data, [
        relay.Clause(relay.PatternConstructor(make, [relay.PatternVar(y)]),
                     relay.add(relay.multiply(y, y), shared)),
        relay.Clause(relay.PatternConstructor(empty, []), relay.negative(shared)),
    ])


def test_match_binds_its_data_outside_and_each_clause_body_inside_its_clause():
    # Relay: the data in the enclosing scope, a value both clauses use before the match,
    # what one clause uses in that clause's let chain, and the match bound like any value.
    _mod, make, empty = _box_module()
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    out = to_a_normal_form(relay.Function([x], _box_match(make, empty, x, y,
                                                             make(relay.add(x, x)))))
    v = [relay.var(f"v{i}") for i in range(9)]
    y2 = relay.var("y", shape=(2,))
    three = relay.const(3.0)
    clauses = [
        relay.Clause(relay.PatternConstructor(make, [relay.PatternVar(y2)]),
                     relay.Let(v[6], relay.multiply(y2, y2),
                               relay.Let(v[7], relay.add(v[6], v[4]), v[7]))),
        relay.Clause(relay.PatternConstructor(empty, []),
                     relay.Let(v[8], relay.negative(v[4]), v[8])),
    ]
    body = v[5]
    for var, value in reversed([(v[1], relay.add(x, x)), (v[2], make(v[1])), (v[3], three),
                                (v[4], relay.multiply(x, v[3])),
                                (v[5], relay.Match(v[2], clauses))]):
        body = relay.Let(var, value, body)
    assert_structural_equal(out, relay.Function([x], body), map_free_vars=True)
    assert_a_normal(out)
    assert well_formed(out)


def test_match_keeps_its_values_in_a_module_and_under_dataflow():
    # A match below a call: the fill that assumes no scopes meets it and starts again.
    mod, make, empty = _box_module()
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    for data in (make(relay.add(x, x)), empty()):
        expr = relay.add(_box_match(make, empty, x, y, data), x)
        mod["main"] = relay.Function([x], expr)
        mod = infer_type()(mod)
        arg = np.array([1.0, 2.0], "float32")
        expected = create_executor(mod=mod).evaluate(mod["main"])(arg).numpy()
        out = ToANormalForm()(mod)
        assert_a_normal(out["main"])
        assert well_formed(out["main"])
        infer_type()(out)
        np.testing.assert_allclose(create_executor(mod=out).evaluate(out["main"])(arg).numpy(),
                                   expected)


def test_nested_matches_bind_in_their_own_clauses():
    _mod, make, empty = _box_module()
    x = relay.var("x", shape=(2,))
    y, z = relay.var("y", shape=(2,)), relay.var("z", shape=(2,))
    inner = _box_match(make, empty, x, z, make(relay.multiply(y, y)))
    outer = relay.Match(make(x), [
        relay.Clause(relay.PatternConstructor(make, [relay.PatternVar(y)]), inner),
        relay.Clause(relay.PatternWildcard(), x),
    ])
    out = to_a_normal_form(relay.Function([x], outer))
    assert_a_normal(out)
    assert well_formed(out)
    outer_match = _lets(out.body)[-1].value
    assert isinstance(outer_match, relay.Match)
    # The inner match, and the square of y its data needs, stay in the first clause.
    first = _lets(outer_match.clauses[0].rhs)
    assert [type(let.value).__name__ for let in first][-1] == "Match"
    assert any(isinstance(let.value, relay.Call) and let.value.op == relay.op.get("multiply")
               and let.value.args[0] is y for let in first)
    assert outer_match.clauses[1].rhs is x


# --- random programs ----------------------------------------------------------------------


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25), features={"let", "if", "tuple", "fn", "ref", "global"}))
def test_random_programs_keep_their_values(mod):
    """ANF keeps values, well-formedness and types; so does FoldConstant on the let-heavy result."""
    functions = dict(mod.functions)
    text = mod.astext()
    args = random_inputs(mod, seed=2)
    expected = run_quietly(mod, args)
    out = ToANormalForm()(mod)
    for func in out.functions.values():
        assert well_formed(func)
        assert_a_normal(func)
    infer_type()(out)
    assert_same_values(expected, run_quietly(out, args))
    folded = FoldConstant()(out)
    for func in folded.functions.values():
        assert well_formed(func)
    infer_type()(folded)
    assert_same_values(expected, run_quietly(folded, args))
    assert dict(mod.functions) == functions
    assert all(a is b for a, b in zip(mod.functions.values(), functions.values()))
    assert mod.astext() == text


# --- depth --------------------------------------------------------------------------------


def test_a_chain_of_100000_calls_becomes_100000_nested_lets():
    limit = sys.getrecursionlimit()
    n = 100_000
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    e = x
    for i in range(n):
        e = relay.add(e, c) if i % 2 else relay.multiply(e, x)
    out = ToANormalForm()(IRModule.from_expr(relay.Function([x], e)))["main"]
    lets = _lets(out.body)
    assert len(lets) == n + 1  # every call, and the shared constant once
    # In evaluation order: the first multiply, then the constant where it is first used.
    assert lets[0].value.op.name == "multiply" and lets[1].value is c
    assert isinstance(lets[-1].body, relay.Var)
    assert well_formed(out)
    result = create_executor().evaluate(out)(np.ones(2, "float32"))
    np.testing.assert_allclose(result, [50_001.0, 50_001.0])
    assert sys.getrecursionlimit() == limit


def test_ToANormalForm_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("ToANormalForm", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
