"""Algebraic data types in relaypass: what TVM's tests do not pin down, and bad input.

Covers the module's type definitions, the text format (round trip of random
ADT programs, errors with locations), structural equality, the functors'
view of a match, InferType's errors and its warning for incomplete matches,
the interpreter (a match that handles no clause, a 10,000-element list through
the prelude), and ``unmatched_cases``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import relaypass as tvm
from relaypass import relay
from relaypass.errors import (
    EvaluationError,
    ModuleError,
    ParseError,
    RelayPassError,
    TypeInferenceError,
)
from relaypass.functor import ExprMutator, ExprVisitor, MixedModeMutator
from relaypass.interp import ConstructorValue, MatchFailureError
from relaypass.ir.adt import TypeDefinitionError
from relaypass.relay.analysis import free_vars, unmatched_cases, well_formed
from relaypass.testing.strategies import adt_modules
from relaypass_std.infer_type import NonExhaustiveMatchWarning

SEMVER = '#[version = "0.0.5"]\n'
LIST = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
"""
INT32 = relay.scalar_type("int32")


def infer(mod):
    return relay.transform.InferType()(mod)


def list_module():
    mod = tvm.IRModule()
    lst = relay.GlobalTypeVar("List")
    a = relay.TypeVar("A")
    cons = relay.Constructor("Cons", [a, lst(a)], lst)
    nil = relay.Constructor("Nil", [], lst)
    mod[lst] = relay.TypeData(lst, [a], [cons, nil])
    return mod, lst, cons, nil


# --- the module's type definitions ---------------------------------------------------------


def test_a_module_finds_types_and_constructors_by_name():
    mod, lst, cons, nil = list_module()
    assert mod.get_global_type_var("List") is lst
    assert mod.get_type("List") == (lst, cons, nil)
    assert mod.get_constructor("List", "Nil") is nil
    assert mod[relay.GlobalTypeVar("List")].constructors == (cons, nil)  # found by name
    assert dict(mod.type_definitions) == {lst: mod[lst]}
    copy = mod.copy()
    assert copy[lst] is mod[lst] and copy.type_definitions == mod.type_definitions
    # Constructors get their tags and types from their definition.
    assert cons.tag != nil.tag and cons.tag >= 0
    assert str(cons.checked_type) == "fn [A](A, List[A]) -> List[A]"


def test_bad_type_definitions_are_named_errors():
    mod, lst, cons, _ = list_module()
    with pytest.raises(ModuleError, match="no type Lsit .*did you mean List"):
        mod.get_global_type_var("Lsit")
    with pytest.raises(ModuleError, match="no constructor Snoc"):
        mod.get_constructor("List", "Snoc")
    other = relay.GlobalTypeVar("Other")
    with pytest.raises(TypeDefinitionError, match="Cons belongs to List"):
        relay.TypeData(other, [], [cons])
    with pytest.raises(TypeDefinitionError, match="two constructors named Cons"):
        relay.TypeData(lst, [], [cons, relay.Constructor("Cons", [], lst)])
    with pytest.raises(ModuleError, match="already has a type List"):
        mod.add_type_def(lst, mod[lst])
    with pytest.raises(ModuleError, match="cannot define type Other"):
        mod[other] = mod[lst]
    with pytest.raises(ModuleError, match="no standard Relay file 'gradient'"):
        mod.import_from_std("gradient.rly")
    assert issubclass(TypeDefinitionError, RelayPassError)


# --- text format ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(adt_modules())
def test_random_adt_modules_round_trip_through_text_typed_and_untyped(mod):
    tvm.ir.assert_structural_equal(tvm.parse(mod.astext()), mod)
    assert tvm.ir.structural_hash(tvm.parse(mod.astext())) == tvm.ir.structural_hash(mod)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the strategy writes match? where cases are left out
        typed = infer(mod)
    tvm.ir.assert_structural_equal(tvm.parse(typed.astext()), typed)


def test_the_printer_writes_tvms_layout():
    mod = tvm.parse(SEMVER + LIST + """
        def @len[A](%xs: List[A]) -> int32 {
          match? %xs { Cons(_, %t) => 1 + @len(%t), Nil => 0 }
        }
        def @one() -> List[int32] { Cons(1, Nil) }
    """)
    text = mod.astext()
    assert "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}" in text
    assert "match? (%xs) {\n    Cons(_, %t) => {\n" in text
    assert "= Nil;\n  Cons(1, %" in text  # a constructor without fields: its name alone
    nat = tvm.parse(SEMVER + "type nat { z, s(nat) }")
    assert "s(nat[])" in nat.astext()  # a type without parameters is applied to none, as in TVM


@pytest.mark.parametrize("text, message, line", [
    (LIST + "def @f(%x: List[int32]) { match (%x) { Con(_, _) => 0 } }",
     "undefined constructor Con; did you mean Cons?", 7),
    (LIST + "def @f(%x: List[int32]) { match (%x) { Cons(%h, %h) => 0 } }",
     "%h is bound twice in this pattern", 7),
    (LIST + "def @f(%x: List[int32]) { match (%x) { Cons(%h, _) => %h, _ => %h } }",
     "undefined variable %h", 7),
    ("type Pair[A] { Pair(A, Lst[A]) }", "unknown type 'Lst'", 2),
    ("extern type T[A] { Mk }", "an external type may not have any constructors", 2),
    ("type T { Mk }\ntype U { Mk }", "a constructor named Mk is already defined", 3),
    ("type T { }\ntype T { }", "duplicate definition of type T", 3),
])
def test_bad_adt_text_is_a_located_parse_error(text, message, line):
    with pytest.raises(ParseError) as info:
        tvm.parse(SEMVER + text, source_name="bad.relay")
    assert message in info.value.message
    assert info.value.line == line and info.value.source_name == "bad.relay"


def test_types_may_be_named_before_their_definition():
    mod = tvm.parse(SEMVER + """
        type Forest[A] { Grove(List[Tree[A]]) }
        type Tree[A] { Leaf(A), Node(Forest[A]) }
    """ + LIST)
    assert sorted(g.name_hint for g in mod.get_global_type_vars()) == ["Forest", "List", "Tree"]
    infer(mod)  # the definitions are consistent


def test_save_json_keeps_type_definitions_and_matches():
    p = relay.prelude.Prelude()
    back = tvm.ir.load_json(tvm.ir.save_json(p.mod))
    tvm.ir.assert_structural_equal(back, p.mod)
    assert back.get_constructor("List", "Cons").tag == p.mod.get_constructor("List", "Cons").tag


# --- structural equality ------------------------------------------------------------------


def length_module(body_text: str) -> tvm.IRModule:
    return tvm.parse(SEMVER + LIST + "def @f[A](%xs: List[A]) -> int32 {" + body_text + "}")


def test_matches_compare_by_pattern_shape_and_binding():
    base = length_module("match (%xs) { Cons(%h, %t) => 1, Nil => 0 }")
    renamed = length_module("match (%xs) { Cons(%a, %b) => 1, Nil => 0 }")
    assert tvm.ir.structural_equal(base, renamed)
    assert tvm.ir.structural_hash(base) == tvm.ir.structural_hash(renamed)
    for other in (
        "match? (%xs) { Cons(%h, %t) => 1, Nil => 0 }",  # incomplete
        "match (%xs) { Cons(_, %t) => 1, Nil => 0 }",  # a wildcard instead of a variable
        "match (%xs) { Nil => 0, Cons(%h, %t) => 1 }",  # another order
        "match (%xs) { Cons(%h, %t) => 2, Nil => 0 }",  # another body
    ):
        assert not tvm.ir.structural_equal(base, length_module(other)), other
    with pytest.raises(AssertionError, match=r"f\.body\.patterns\[0\]\.patterns\[0\]"):
        tvm.ir.assert_structural_equal(base, length_module("match (%xs) { Cons(_, %t) => 1, Nil => 0 }"))


def test_modules_compare_their_type_definitions():
    a = tvm.parse(SEMVER + LIST)
    b = tvm.parse(SEMVER + LIST.replace("Cons(A, List[A])", "Cons(A, A)"))
    with pytest.raises(AssertionError, match=r"List\.constructors\[0\]\.inputs\[1\]"):
        tvm.ir.assert_structural_equal(a, b)
    c = tvm.parse(SEMVER + LIST + "type Unit { U }")
    with pytest.raises(AssertionError, match="only the right has Unit"):
        tvm.ir.assert_structural_equal(a, c)


# --- functors -----------------------------------------------------------------------------


def test_visitors_see_the_value_then_each_clause_body():
    mod = length_module("match (%xs) { Cons(%h, %t) => @f(%t), Nil => 0 }")
    match = mod["f"].body
    seen = []

    class Order(ExprVisitor):
        def visit_match(self, m):
            seen.append("match")
            super().visit_match(m)

        def visit_var(self, v):
            seen.append(v.name_hint)

        def visit_constant(self, c):
            seen.append("const")

        def visit_global_var(self, gv):
            seen.append("@" + gv.name_hint)

    Order().visit(match)
    assert seen == ["match", "xs", "@f", "t", "const"]

    class Bump(ExprMutator):
        def visit_constant(self, c):
            return relay.const(7)

    new = Bump().visit(match)
    assert new.bodies[0] is match.bodies[0] and new.patterns is match.patterns
    assert new.bodies[1].data.numpy() == 7 and new.clauses[1].lhs is match.clauses[1].lhs
    assert MixedModeMutator().visit(match) is match
    assert free_vars(match) == [match.data] and well_formed(mod["f"])


def test_a_100000_deep_chain_inside_a_clause():
    mod, lst, cons, nil = list_module()
    x = relay.Var("x", lst(INT32))
    h = relay.Var("h", INT32)
    chain = h
    for _ in range(100_000):
        chain = relay.add(chain, relay.const(1))
    mod["main"] = relay.Function([x], relay.Match(x, [
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternWildcard()]),
                     chain),
        relay.Clause(relay.PatternWildcard(), relay.const(0)),
    ]), INT32)
    typed = infer(mod)
    assert typed["main"].body.checked_type == INT32
    assert tvm.ir.structural_equal(typed, infer(mod))

    class Count(ExprVisitor):
        calls = 0

        def visit_call(self, call):
            Count.calls += 1
            super().visit_call(call)

    Count().visit(typed["main"])
    assert Count.calls == 100_000
    arg = relay.Call(cons, [relay.const(5), relay.Call(nil, [])])
    out = relay.create_executor(mod=mod).evaluate(relay.Call(mod.get_global_var("main"), [arg]))
    assert out.numpy() == 100_005


# --- type inference -----------------------------------------------------------------------


def test_a_constructor_called_with_the_wrong_number_of_arguments_is_located():
    mod = tvm.parse(SEMVER + LIST + "def @f() {\n  Cons(1)\n}", source_name="arity.relay")
    with pytest.raises(TypeInferenceError) as info:
        infer(mod)
    message = str(info.value)
    assert "constructor Cons takes 2 arguments (A, List[A]), but the call gives 1" in message
    assert message.startswith("arity.relay:8:3")


def test_a_pattern_with_the_wrong_number_of_fields_is_an_error():
    mod, lst, cons, _ = list_module()
    x = relay.Var("x", lst(INT32))
    mod["f"] = relay.Function([x], relay.Match(x, [
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternWildcard()]), relay.const(0)),
        relay.Clause(relay.PatternWildcard(), relay.const(1)),
    ]))
    with pytest.raises(TypeInferenceError, match="gives 1 sub-pattern.*Cons has 2 field"):
        infer(mod)


def test_an_unknown_type_in_a_definition_is_a_type_error_naming_the_constructor():
    mod = tvm.IRModule()
    box = relay.GlobalTypeVar("Box")
    ghost = relay.GlobalTypeVar("Ghost")
    put = relay.Constructor("Put", [relay.TypeCall(ghost, [])], box, relay.Span("defs.relay", 3, column=5))
    mod[box] = relay.TypeData(box, [], [put])
    with pytest.raises(TypeInferenceError,
                       match=r"type Box: constructor Put \(at defs.relay:3:5\): unknown type Ghost"):
        infer(mod)
    lst_mod, lst, _, _ = list_module()
    wrong = relay.Constructor("Wrap", [lst(INT32, INT32)], box)
    lst_mod[box] = relay.TypeData(box, [], [wrong])
    with pytest.raises(TypeInferenceError, match="type List takes 1 type argument"):
        infer(lst_mod)


def test_a_pattern_of_another_type_is_a_mismatch():
    mod = tvm.parse(SEMVER + LIST + "type Unit { U }\n"
                    "def @f(%x: List[int32]) { match? (%x) { U => 0 } }")
    with pytest.raises(TypeInferenceError, match=r"the pattern U \(at .*\) matches values of type Unit\[\], but the matched value "
                       r"has type List\[int32\]"):
        infer(mod)


def test_an_incomplete_match_warns_with_the_missing_cases():
    mod = length_module("match (%xs) { Cons(_, Nil) => 1 }")
    with pytest.warns(NonExhaustiveMatchWarning, match=r"does not handle Nil, Cons\(_, Cons\(_, _\)\)"):
        infer(mod)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        infer(length_module("match? (%xs) { Cons(_, Nil) => 1 }"))
        infer(length_module("match (%xs) { Cons(_, Nil) => 1, _ => 0 }"))


def test_an_unused_pattern_variable_gets_its_type():
    typed = infer(length_module("match (%xs) { Cons(%unused, _) => 1, Nil => 0 }"))
    var = typed["f"].body.patterns[0].patterns[0].var
    assert isinstance(var.type_annotation, relay.TypeVar) and var.checked_type == var.type_annotation


# --- the interpreter -----------------------------------------------------------------------


def test_a_value_no_clause_handles_is_an_error_naming_its_constructor():
    mod = tvm.parse(SEMVER + LIST + "def @hd(%xs: List[int32]) -> int32 {\n"
                    "  match? (%xs) { Cons(%h, _) => %h }\n}", source_name="hd.relay")
    nil = mod.get_constructor("List", "Nil")
    with pytest.raises(MatchFailureError, match="constructor Nil.*hd.relay:8:3") as info:
        relay.create_executor(mod=mod).evaluate(mod.get_global_var("hd")(nil()))
    assert info.value.constructor.name_hint == "Nil"
    assert isinstance(info.value, EvaluationError)


def test_a_10000_element_list_through_map_foldl_and_nth():
    p = relay.prelude.Prelude()
    _, cons, nil = p.mod.get_type("List")
    n = 10_000
    items = nil()
    for i in reversed(range(n)):
        items = cons(relay.const(i), items)
    x = relay.Var("x", INT32)
    doubled = p.map(relay.Function([x], x * relay.const(2)), items)
    a, b = relay.Var("a", INT32), relay.Var("b", INT32)
    total = p.foldl(relay.Function([a, b], a + b), relay.const(0), doubled)
    last = p.nth(doubled, relay.const(n - 1))
    run = relay.create_executor(mod=p.mod).evaluate
    assert run(total).numpy() == n * (n - 1)
    assert run(last).numpy() == 2 * (n - 1)
    value = run(doubled)  # handed back as nested ConstructorValues with NDArray fields
    length = 0
    while value.constructor.name_hint == "Cons":
        assert value.fields[0].numpy() == 2 * length
        length += 1
        value = value.fields[1]
    assert length == n
    assert isinstance(value, ConstructorValue) and "Cons(" in repr(run(doubled))


def test_a_constructor_is_a_function_value():
    mod = tvm.parse(SEMVER + LIST + """
        def @main() {
          let %make = Cons;
          %make(1, %make(2, Nil))
        }
    """)
    out = relay.create_executor(mod=mod).evaluate()()
    assert [out.fields[0].numpy().item(), out.fields[1].fields[0].numpy().item()] == [1, 2]


def test_a_value_an_executor_returned_can_be_passed_back():
    p = relay.prelude.Prelude()
    _, cons, nil = p.mod.get_type("List")
    run = relay.create_executor(mod=p.mod).evaluate
    items = run(cons(relay.const(3), cons(relay.const(4), nil())))  # NDArray fields
    assert run(p.length)(items).numpy() == 2
    assert run(p.sum)(items).numpy() == 7


# --- unmatched cases ----------------------------------------------------------------------------


def test_unmatched_cases_refines_candidates_clause_by_clause():
    mod, lst, cons, nil = list_module()
    v = relay.Var("v")
    w = relay.PatternWildcard

    def case(*patterns):
        return relay.Match(v, [relay.Clause(p, v) for p in patterns])

    assert [type(p) for p in unmatched_cases(case())] == [relay.PatternWildcard]
    assert unmatched_cases(case(relay.PatternVar(relay.Var("x")))) == []
    missing = unmatched_cases(case(relay.PatternConstructor(cons, [w(), w()])), mod)
    assert [str(p) for p in missing] == ["Nil"]
    two_deep = relay.PatternConstructor(cons, [w(), relay.PatternConstructor(cons, [w(), w()])])
    missing = unmatched_cases(case(two_deep, relay.PatternConstructor(nil)), mod)
    assert [str(p) for p in missing] == ["Cons(_, Nil)"]
    pair = relay.PatternTuple([relay.PatternConstructor(nil), w()])
    assert [str(p) for p in unmatched_cases(case(pair), mod)] == ["(Cons(_, _), _)"]
    with pytest.raises(TypeInferenceError, match="which the module does not define"):
        unmatched_cases(case(relay.PatternConstructor(nil)))
    np.testing.assert_equal(len(unmatched_cases(case(w()), mod)), 0)
