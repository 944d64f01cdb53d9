"""Types kept up to date without typing everything again (issue 18).

SimplifyExpr and MergeComposite type the nodes they build on their own, and
InferType keeps the functions of a module that are still typed; each must
give exactly what typing the whole program again gives -- the same
structure and, node by node, the same types (and ``type_args``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from relaypass import relay
from relaypass.analysis.purity import PurityAnalysis
from relaypass.dataflow_pattern import (
    OpPattern,
    Rewrite,
    Wildcard,
    is_constant,
    is_op,
    partition,
    rewrite_patterns,
    wildcard,
)
from relaypass.dataflow_pattern.matcher import DFPatternMatcher, quick_check
from relaypass.errors import TypeInferenceError
from relaypass.ir import Call, Function, GlobalVar, IRModule, Let, Op
from relaypass.ir.expr import RefCreate, RefRead
from relaypass.ir.structural import assert_structural_equal
from relaypass.ir.traversal import post_order
from relaypass.testing.strategies import modules
from relaypass.transform import get_pass
from relaypass_std.infer_type import TypeMismatchError, infer_type_expr, type_new_nodes
from relaypass_std.merge_composite import merge_composite
from relaypass_std.simplify_expr import simplify_expr

InferType = get_pass("InferType")


def assert_typed_as_inference_types(expr, mod=None):
    """``expr`` has, node by node, the types InferType gives a copy of it (in ``mod``)."""
    again = infer_type_expr(expr, mod)
    assert_structural_equal(expr, again, map_free_vars=True)
    mine, theirs = post_order(expr), post_order(again)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        if isinstance(a, Op):
            continue
        assert a.has_checked_type, f"untyped {type(a).__name__}"
        assert a.checked_type == b.checked_type
        if isinstance(a, Call) and isinstance(a.op, Op):
            assert tuple(a.type_args) == tuple(b.type_args)


def typed(expr):
    return InferType(IRModule.from_expr(expr))["main"]


# --- SimplifyExpr: the new nodes of each rewrite typed on their own ----------------------------
def test_type_new_nodes_types_what_a_rewrite_builds():
    x = relay.var("x", shape=(2, 3))
    main = typed(relay.Function([x], relay.nn.relu(x)))
    value = main.body.args[0]
    built = relay.add(relay.multiply(value, relay.const(2.0)), relay.const(np.ones((2, 3), "float32")))
    out = type_new_nodes(built)
    assert out.checked_type == relay.TensorType((2, 3), "float32")
    assert out.args[0].args[0] is value  # typed nodes below are kept
    assert_typed_as_inference_types(out)


def test_type_new_nodes_gives_up_on_what_it_cannot_type_alone():
    x = relay.var("x", shape=(2, 3))
    main = typed(relay.Function([x], relay.nn.relu(x)))
    assert type_new_nodes(relay.add(main.body, relay.var("y"))) is None  # a new variable
    bad = relay.add(main.body, relay.const(np.ones((4, 5), "float32")))
    assert type_new_nodes(bad) is None  # the relation rejects it: InferType will say why


def test_simplify_expr_result_is_typed_as_inference_types_it():
    x = relay.var("x", shape=(1, 4))
    c1, c2 = relay.const(np.full((1, 4), 2.0, "float32")), relay.const(np.full((1, 4), 3.0, "float32"))
    e = relay.multiply(relay.add(x, c1), c2)  # SwitchAddMultiply
    e = relay.add(e, e)  # SimplifyAdd
    e = relay.transpose(relay.transpose(e, (1, 0)), (1, 0))  # SimplifyTranspose
    e = relay.multiply(relay.multiply(e, c1), c2)  # SimplifyAdjacentMultiplyOrAdd
    func = typed(relay.Function([x], relay.nn.relu(e)))
    out = simplify_expr(func)
    assert out is not func
    assert_typed_as_inference_types(out)


def test_a_replacement_of_another_type_retypes_the_function():
    # A callback may replace a node by one of another type; its users' types change too,
    # so the whole function is typed again.
    x = relay.var("x", shape=(1, 4))
    func = typed(relay.Function([x], relay.nn.relu(relay.sum(x, axis=[1], keepdims=True))))
    summed = Wildcard()

    def shrink(pre, post, m):
        if pre.checked_type.shape == ():
            return post
        return relay.sum(m.post(summed), axis=[0, 1])

    retyped = []

    def infer(f):
        retyped.append(f)
        return infer_type_expr(relay.Function(f.params, f.body))  # its return type too

    out = rewrite_patterns([Rewrite("Shrink", OpPattern("sum")(summed), shrink)], func, infer,
                           type_new_nodes)
    assert len(retyped) == 1
    assert out.body.checked_type == relay.TensorType((), "float32")
    assert_typed_as_inference_types(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 20)))
def test_simplify_expr_on_random_programs_types_as_inference(mod):
    typed_mod = InferType(mod)
    assert_typed_as_inference_types(simplify_expr(typed_mod["main"], typed_mod), typed_mod)


# --- MergeComposite: composite functions typed from the match they replace ---------------------
def test_partition_keeping_types_types_as_inference_types():
    x, w = relay.var("x", shape=(1, 4)), relay.var("w", shape=(1, 4))
    e = relay.nn.relu(relay.add(x, relay.const(np.ones((1, 4), "float32"))))
    e = relay.tanh(relay.multiply(e, w))
    func = typed(relay.Function([x, w], e))
    pattern = is_op("tanh")(is_op("multiply")(wildcard(), wildcard()))
    out = partition(pattern, func, {"Composite": "mul_tanh"}, keep_types=True)
    assert out.has_checked_type
    plain = partition(pattern, func, {"Composite": "mul_tanh"})
    assert not plain.has_checked_type
    assert_structural_equal(out, infer_type_expr(plain), map_free_vars=True)
    assert_typed_as_inference_types(out)


def test_partition_keeping_types_of_an_untyped_program_leaves_it_untyped():
    x = relay.var("x", shape=(1, 4))
    func = relay.Function([x], relay.tanh(relay.multiply(x, x)))
    out = partition(is_op("tanh")(wildcard()), func, keep_types=True)
    assert not out.has_checked_type


def test_merge_composite_result_is_typed_as_inference_types_it():
    x, w = relay.var("x", shape=(1, 4)), relay.var("w", shape=(1, 4))
    e = relay.nn.relu(relay.add(x, relay.const(np.ones((1, 4), "float32"))))
    e = relay.tanh(relay.multiply(e, w))
    mod = InferType(IRModule.from_expr(relay.Function([x, w], e)))
    table = [("add_relu", is_op("nn.relu")(is_op("add")(wildcard(), is_constant())), None),
             ("mul_tanh", is_op("tanh")(is_op("multiply")(wildcard(), wildcard())),
              lambda root: root.args[0].checked_type.shape == (1, 4))]
    out = merge_composite(mod["main"], [(n, p, c or (lambda _: True)) for n, p, c in table], mod)
    assert sorted(f.attrs["Composite"] for f in post_order(out)
                  if isinstance(f, Function) and "Composite" in f.attrs) == ["add_relu", "mul_tanh"]
    assert_typed_as_inference_types(out)


# --- the matcher's quick test ------------------------------------------------------------------
def _rejected_matches(pattern, expr):
    quick = quick_check(pattern)
    return [node for node in post_order(expr)
            if quick is not None and not quick(node)
            and DFPatternMatcher(expr).match(pattern, node)]


def test_quick_check_keeps_swapped_twice_bound_and_reassociated_matches():
    x, y, z = (relay.var(n, shape=(2,)) for n in "xyz")
    c = relay.const(np.ones(2, "float32"))
    e = relay.multiply(relay.add(c, x), relay.divide(y, z))
    e = relay.add(e, e)
    a = wildcard()
    patterns = [
        is_op("add")(a, a),
        is_op("multiply")(is_op("add")(wildcard(), is_constant()), wildcard()),
        is_op("divide")(is_op("multiply")(wildcard(), wildcard()), wildcard()),
        is_op("add")(is_constant(), wildcard()) | is_op("nn.relu")(wildcard()),
    ]
    for pattern in patterns[:3]:
        assert any(DFPatternMatcher(e).match(pattern, node) for node in post_order(e))
    for pattern in patterns:
        assert _rejected_matches(pattern, e) == []
    assert not quick_check(is_op("add")(a, a))(relay.add(x, y))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 15)))
def test_quick_check_never_rejects_a_match(mod):
    body = mod["main"].body
    w = wildcard()
    for pattern in (is_op("add")(w, w), is_op("add")(wildcard(), is_constant()),
                    is_op("multiply")(is_op("add")(wildcard(), wildcard()), wildcard()),
                    is_op("divide")(is_op("multiply")(wildcard(), wildcard()), wildcard()),
                    is_op("nn.relu")(wildcard()) | is_op("tanh")(is_op("add")(wildcard(),
                                                                                wildcard()))):
        assert _rejected_matches(pattern, body) == []


# --- InferType along a pipeline -----------------------------------------------------------------
def _module(count=4):
    mod = IRModule()
    gvs = [GlobalVar(f"f{i}") for i in range(count)]
    for gv in gvs:
        x = relay.var("x", shape=(1, 4))
        mod[gv] = Function([x], relay.nn.relu(relay.tanh(x)))
    x = relay.var("x", shape=(1, 4))
    e = x
    for gv in gvs:
        e = Call(gv, [e])
    mod["main"] = Function([x], e)
    return mod


def _untyped_sigmoid(shape=(1, 4)):
    x = relay.var("x", shape=shape)
    return Function([x], relay.sigmoid(x))


def test_infer_type_keeps_the_functions_it_typed_and_types_the_changed_one():
    typed_mod = InferType(_module())
    changed = typed_mod.copy()
    changed["f2"] = _untyped_sigmoid()
    again = InferType(changed)
    for name in ("f0", "f1", "f3", "main"):
        assert again[name] is typed_mod[name]  # kept, not typed again
    assert again["f2"].has_checked_type
    fresh = _module()
    fresh["f2"] = _untyped_sigmoid()
    assert_structural_equal(again, InferType(fresh))
    assert again["f2"].checked_type == again.get_global_var("f2").checked_type
    assert_typed_as_inference_types(again["f2"])


def test_infer_type_types_callers_again_when_a_function_changes_type():
    # main was typed against f3's old type (its return type says so): typed again, as the
    # whole module is, it no longer fits -- the caller is not kept on trust.
    typed_mod = InferType(_module())
    changed = typed_mod.copy()
    x = relay.var("x", shape=(1, 4))
    changed["f3"] = Function([x], relay.sum(x, axis=[1], keepdims=True))  # (1, 4) -> (1, 1)
    with pytest.raises(TypeMismatchError, match="return type is Tensor"):
        InferType(changed)


def test_infer_type_reports_a_removed_function_a_kept_one_calls():
    typed_mod = InferType(_module())
    broken = typed_mod.copy()
    broken.remove("f1")
    with pytest.raises(TypeInferenceError, match="f1 is not defined"):
        InferType(broken)


def test_infer_type_types_a_function_from_its_callers_when_it_cannot_alone():
    x = relay.var("x", shape=(1, 4))
    mod = IRModule()
    ident = GlobalVar("ident")
    a = relay.var("a")
    mod[ident] = Function([a], a)
    mod["main"] = Function([x], Call(ident, [x]))
    typed_mod = InferType(mod)
    changed = typed_mod.copy()
    b = relay.var("b")
    changed["ident"] = Function([b], b)
    again = InferType(changed)  # alone, %b is undetermined: the whole module decides
    assert again["ident"].checked_type == typed_mod["ident"].checked_type


# --- DeadCodeElimination's purity over many functions -----------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
def test_impurity_reaches_every_caller_whatever_the_order(reverse):
    count = 50
    gvs = [GlobalVar(f"g{i}") for i in range(count)]
    funcs = {}
    for i, gv in enumerate(gvs):
        x = relay.var("x", shape=(1,))
        body = Call(gvs[i + 1], [x]) if i + 1 < count else RefRead(RefCreate(x))
        funcs[gv] = Function([x], body)
    order = list(funcs.items())[::-1] if reverse else list(funcs.items())
    mod = IRModule(dict(order))
    x = relay.var("x", shape=(1,))
    dead = relay.var("dead")
    main = Function([x], Let(dead, Call(gvs[0], [x]), x))
    purity = PurityAnalysis(mod).let_purity(main)
    assert purity == {dead: False}  # the call reaches the reference: kept
