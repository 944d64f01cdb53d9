"""Inline, LambdaLift, RemoveUnusedFunctions, EtaExpand, ToBasicBlockNormalForm: the pass author kit, depth, errors.

Relay's own examples are in ``tests/relay_compat/test_pass_*.py``; here each
pass is run on random programs by ``check_pass`` (outputs kept, input
unchanged, well-formed, well-typed, deterministic), its defining property is
checked on random programs, each handles 100,000-deep programs under the
default recursion limit, and bad input gets a specific error.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from relaypass import relay
from relaypass.analysis import check_basic_block_normal_form, well_formed
from relaypass.analysis.basic_block_normal_form import BasicBlockNormalFormError
from relaypass.errors import RelayPassError
from relaypass.functor import post_order_visit
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.prelude import Prelude
from relaypass.testing import check_pass
from relaypass.testing.strategies import modules
from relaypass.transform import ModulePass, PassContext, PassInfo, Sequential
from relaypass_std.eta_expand import EtaExpandError
from relaypass_std.inline import InlineError
from relaypass_std.lambda_lift import LambdaLiftError, lambda_lift
from relaypass_std.remove_unused_functions import RemoveUnusedFunctionsError

CHAIN = 100_000
FEATURES = {"let", "if", "tuple", "fn", "global"}


def infer(mod):
    return relay.transform.InferType()(mod)


def local_functions(expr):
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, relay.Function) else None)
    return [f for f in found if f is not expr and not f.attrs.get("Primitive")]


def mark_helpers_inline(mod):
    """The module with every function but main marked Inline (what a frontend would do)."""
    out = mod.copy()
    for gv, func in mod.items():
        if gv.name_hint != "main":
            out[gv] = func.with_attr("Inline", 1)
    return out


def chain(x, n=CHAIN):
    out = x
    for i in range(n):
        out = relay.exp(out) if i % 2 else relay.negative(out)
    return out


# --- declarations ------------------------------------------------------------------------


def test_declared_as_relay_declares_them():
    cases = {
        relay.transform.Inline(): PassInfo(1, "InlineGlobals"),
        relay.transform.LambdaLift(): PassInfo(1, "LambdaLift", ["InferType"]),
        relay.transform.RemoveUnusedFunctions(): PassInfo(1, "RemoveUnusedFunctions"),
        relay.transform.EtaExpand(expand_global_var=True): PassInfo(1, "EtaExpand"),
        relay.transform.ToBasicBlockNormalForm(): PassInfo(1, "ToBasicBlockNormalForm"),
    }
    for p, info in cases.items():
        assert isinstance(p, ModulePass) and p.info == info


def test_inline_is_disabled_by_relays_name_for_it():
    g = relay.GlobalVar("g")
    x = relay.var("x", shape=(2,))
    mod = IRModule({g: relay.Function([x], relay.exp(x)).with_attr("Inline", 1)})
    y = relay.var("y", shape=(2,))
    mod["main"] = relay.Function([y], g(y))
    with PassContext(opt_level=3, disabled_pass=["InlineGlobals"]):
        out = Sequential([relay.transform.Inline()])(mod)
    assert "g" in out


# --- the pass author kit -----------------------------------------------------------------


def test_inline_passes_the_kit():
    check_pass(lambda mod: relay.transform.Inline()(mark_helpers_inline(mod)), examples=40,
               features=FEATURES, num_functions=(2, 4), seed=3)


def test_lambda_lift_passes_the_kit():
    check_pass("LambdaLift", examples=40, features=FEATURES, infer_types=True, seed=5)


def test_remove_unused_functions_passes_the_kit():
    check_pass("RemoveUnusedFunctions", examples=25, features=FEATURES, seed=7)


def test_eta_expand_passes_the_kit():
    check_pass("EtaExpand", examples=25, features=FEATURES, seed=9,
               pass_options={"expand_global_var": True})


def test_to_basic_block_normal_form_passes_the_kit():
    check_pass("ToBasicBlockNormalForm", examples=40, features=FEATURES, seed=11)


# --- what each pass promises, on random programs -------------------------------------------

_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_SETTINGS
@given(modules(size=(1, 14), features=FEATURES))
def test_basic_block_normal_form_holds_after_the_pass(mod):
    out = relay.transform.ToBasicBlockNormalForm()(mod)
    for func in out.functions.values():
        assert check_basic_block_normal_form(func)
    # Converting again changes nothing.
    assert_structural_equal(relay.transform.ToBasicBlockNormalForm()(out), out)


@_SETTINGS
@given(modules(size=(1, 14), features=FEATURES))
def test_no_local_function_is_left_after_lambda_lift(mod):
    out = relay.transform.LambdaLift()(infer(mod))
    for func in out.functions.values():
        inner = local_functions(func)
        # A closure's global returns its code; nothing else is local.
        assert inner == ([func.body] if func.attrs.get("Closure") else [])
    assert_structural_equal(relay.transform.LambdaLift()(infer(out)), infer(out))


@_SETTINGS
@given(modules(size=(1, 14), features=FEATURES, num_functions=(2, 4)))
def test_inlined_helpers_are_gone(mod):
    # Every helper is marked (and the generated ones never recurse): those some
    # function refers to are inlined everywhere and removed, the others stay.
    referred = set()
    for gv, func in mod.items():
        referred.update(n.name_hint for n in _nodes(func)
                        if isinstance(n, relay.GlobalVar) and n.name_hint != gv.name_hint)
    out = relay.transform.Inline()(mark_helpers_inline(mod))
    names = {gv.name_hint for gv in mod.get_global_vars()}
    assert {gv.name_hint for gv in out.get_global_vars()} == names - referred
    for func in out.functions.values():
        assert well_formed(func)
        assert not any(isinstance(n, relay.GlobalVar) for n in _nodes(func))


def _nodes(expr):
    found = []
    post_order_visit(expr, found.append)
    return found


# --- cases beyond Relay's tests ---------------------------------------------------------------


def test_inlining_twice_binds_fresh_variables():
    g = relay.GlobalVar("g")
    a, t = relay.var("a", shape=(2,)), relay.var("t", shape=(2,))
    mod = IRModule({g: relay.Function([a], relay.Let(t, relay.exp(a), t + t)).with_attr("Inline", 1)})
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], g(x) * g(relay.negative(x)))
    out = relay.transform.Inline()(mod)
    assert list(out.functions) == [mod.get_global_var("main")]
    assert well_formed(out["main"])
    data = np.array([0.5, -1.0], "float32")
    expected = 2 * np.exp(data) * 2 * np.exp(-data)
    np.testing.assert_allclose(create_executor(mod=out).evaluate()(data).numpy(), expected, rtol=1e-6)


def test_inlining_a_match_twice_binds_fresh_pattern_variables():
    mod = IRModule()
    p = Prelude(mod)
    list_t, cons, nil = p.mod.get_type("List")
    items = relay.var("items", list_t(relay.scalar_type("float32")))
    h = relay.var("h", relay.scalar_type("float32"))
    head_or_zero = relay.GlobalVar("head_or_zero")
    mod[head_or_zero] = relay.Function([items], relay.Match(items, [
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]), h),
        relay.Clause(relay.PatternWildcard(), relay.const(0.0)),
    ])).with_attr("Inline", 1)
    xs = relay.var("xs", list_t(relay.scalar_type("float32")))
    mod["main"] = relay.Function([xs], head_or_zero(xs) + head_or_zero(cons(relay.const(1.0), xs)))
    out = relay.transform.RemoveUnusedFunctions()(relay.transform.Inline()(mod))
    assert names_of(out) == {"main"}
    assert well_formed(out["main"])
    value = create_executor(mod=out).evaluate(cons(relay.const(5.0), nil()))
    assert float(create_executor(mod=infer(out)).evaluate()(value).numpy()) == 6.0


def names_of(mod):
    return {gv.name_hint for gv in mod.get_global_vars()}


def test_a_marked_function_calling_an_unmarked_one_stays():
    # Relay stops with an internal check here; the marked function stays, called.
    plain, marked = relay.GlobalVar("plain"), relay.GlobalVar("marked")
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    mod = IRModule({plain: relay.Function([a], relay.exp(a)),
                    marked: relay.Function([b], plain(b)).with_attr("Inline", 1)})
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], marked(x))
    assert_structural_equal(relay.transform.Inline()(mod), mod)


def test_identical_local_functions_share_one_global():
    def square():
        y = relay.var("y", shape=(2,))
        return relay.Function([y], y * y)

    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], square()(x) + square()(x)))
    out = relay.transform.LambdaLift()(mod)
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["lifted_name0", "main"]
    body = out["main"].body
    assert body.args[0].op.same_as(body.args[1].op)


def test_a_function_inside_a_recursive_one_reads_its_global():
    # let %f = fn (%n) { if (%n > 0) { (fn () { %f(%n - 1) })() } else { %n } }; %f(%k)
    n, k = relay.var("n", shape=(), dtype="int32"), relay.var("k", shape=(), dtype="int32")
    f = relay.var("f", relay.FuncType([relay.TensorType((), "int32")], relay.TensorType((), "int32")))
    again = relay.Function([], f(n - relay.const(1)))
    loop = relay.Function([n], relay.If(n > relay.const(0), again(), n))
    mod = IRModule.from_expr(relay.Function([k], relay.Let(f, loop, f(k))))
    out = relay.transform.LambdaLift()(infer(mod))
    for func in out.functions.values():
        assert not relay.analysis.free_vars(func) and well_formed(func)
    assert create_executor(mod=infer(out)).evaluate()(np.int32(5)).numpy() == 0


def test_lambda_lift_leaves_primitive_and_external_functions():
    x = relay.var("x", shape=(2,))
    p = relay.var("p", shape=(2,))
    fused = relay.Function([p], relay.exp(p)).with_attr("Primitive", 1)
    q = relay.var("q", shape=(2,))
    ext = relay.Function([q], relay.Function([p], p)(q)).with_attr("Compiler", "acme")
    mod = IRModule({"ext": ext})
    mod["main"] = relay.Function([x], fused(x))
    assert_structural_equal(relay.transform.LambdaLift()(mod), infer(mod))


# --- 100,000-deep programs -----------------------------------------------------------------


def test_deep_chains():
    assert sys.getrecursionlimit() <= 10_000
    x = relay.var("x", shape=(2,))
    helper = relay.GlobalVar("helper")
    y = relay.var("y", shape=(2,))
    mod = IRModule({helper: relay.Function([y], chain(y)).with_attr("Inline", 1)})
    c = relay.var("c", shape=(), dtype="bool")
    shared = chain(helper(x))
    body = relay.If(c, shared, relay.add(shared, relay.const(1.0)))
    mod["main"] = relay.Function([x, c], body)

    inlined = relay.transform.Inline()(mod)
    assert "helper" not in inlined
    calls = []
    post_order_visit(inlined["main"], lambda n: calls.append(n) if isinstance(n, relay.Call) else None)
    assert len(calls) == 2 * CHAIN + 1

    blocks = relay.transform.ToBasicBlockNormalForm()(inlined)
    main = blocks["main"]
    assert isinstance(main.body, relay.Let) and isinstance(main.body.body, relay.If)
    assert check_basic_block_normal_form(main)

    expanded = relay.transform.EtaExpand(expand_global_var=True)(mod)
    assert isinstance(expanded["main"].body.true_branch, relay.Call)
    kept = relay.transform.RemoveUnusedFunctions()(mod)
    assert set(kept.functions) == set(mod.functions)
    assert sys.getrecursionlimit() <= 10_000


def test_deep_lets_and_a_closure():
    # let %v0 = -x; ...; let %f = fn (%y) { %y + %v99999 }; %f(%x)
    x = relay.var("x", shape=(2,))
    body = x
    bindings = []
    for i in range(CHAIN):
        v = relay.var(f"v{i}", shape=(2,))
        bindings.append((v, relay.negative(body)))
        body = v
    y = relay.var("y", shape=(2,))
    f = relay.var("f")
    body = relay.Let(f, relay.Function([y], relay.add(y, body)), f(x))
    for v, value in reversed(bindings):
        body = relay.Let(v, value, body)
    mod = IRModule.from_expr(relay.Function([x], body))

    lifted = relay.transform.LambdaLift()(mod)
    assert len(lifted.functions) == 2 and not local_functions(lifted["main"])
    data = np.array([1.0, -2.0], "float32")
    np.testing.assert_allclose(create_executor(mod=lifted).evaluate()(data).numpy(), 2 * data)

    # Nothing is shared between blocks: the pass gives the program back.
    assert_structural_equal(relay.transform.ToBasicBlockNormalForm()(mod), mod)
    assert set(relay.transform.RemoveUnusedFunctions()(mod).functions) == set(mod.functions)


def test_check_finds_the_violation_below_a_deep_chain():
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    shared = chain(x)
    func = relay.Function([x, c], relay.If(c, shared, relay.exp(shared)))
    with pytest.raises(BasicBlockNormalFormError, match="used from more than one block"):
        check_basic_block_normal_form(func)


# --- bad input -----------------------------------------------------------------------------


def test_inline_call_with_wrong_arity():
    g = relay.GlobalVar("g")
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    mod = IRModule({g: relay.Function([a, b], a + b).with_attr("Inline", 1)})
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], relay.Call(g, [x]))
    with pytest.raises(InlineError, match=r"@main calls @g with 1 argument\(s\), but it has 2"):
        relay.transform.Inline()(mod)


def test_lambda_lift_needs_types_of_captured_variables():
    a, x = relay.var("a", shape=(2,)), relay.var("x")
    y = relay.var("y", shape=(2,))
    mod = IRModule.from_expr(relay.Function([a], relay.Let(x, a, relay.Function([y], y + x))))
    with pytest.raises(LambdaLiftError, match="captures %x, whose type is unknown; run InferType"):
        lambda_lift(mod)
    # The pass runs InferType first, which it requires: x's type comes from a's.
    lifted = relay.transform.LambdaLift()(mod)
    (closure,) = [f for f in lifted.functions.values() if f.attrs.get("Closure")]
    assert closure.params[0].type_annotation == relay.TensorType((2,), "float32")


def test_eta_expand_of_an_undefined_global():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], relay.Call(relay.GlobalVar("nowhere"), [x])))
    with pytest.raises(EtaExpandError, match="@main refers to @nowhere"):
        relay.transform.EtaExpand(expand_global_var=True)(mod)


@pytest.mark.parametrize("entries, message", [
    ("main", r"a list of names, not the string 'main'; write \['main'\]"),
    ([1], "holds 1, a int"),
])
def test_remove_unused_functions_entries_are_names(entries, message):
    with pytest.raises(RemoveUnusedFunctionsError, match=message):
        relay.transform.RemoveUnusedFunctions(entries)


def test_remove_unused_functions_reference_to_an_undefined_global():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], relay.Call(relay.GlobalVar("gone"), [x])))
    with pytest.raises(RemoveUnusedFunctionsError, match="@main refers to @gone"):
        relay.transform.RemoveUnusedFunctions()(mod)


def test_errors_are_relaypass_errors():
    for cls in (InlineError, LambdaLiftError, EtaExpandError, RemoveUnusedFunctionsError,
                BasicBlockNormalFormError):
        assert issubclass(cls, RelayPassError)
