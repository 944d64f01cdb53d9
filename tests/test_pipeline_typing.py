"""Types along a pipeline: what each pass leaves typed is what a fresh InferType gives.

Passes of ``relaypass optimize``'s default pipeline carry types over to the
nodes they rebuild (EliminateCommonSubexpr, FoldConstant), and InferType keeps
a function whose every node is typed as it would type it (even one it did not
return itself), so that typing along the pipeline costs little.  Both are
shortcuts: these tests check, on every model of the ONNX corpus and after
every pass, that the module is typed node for node (types and ``type_args``)
as InferType types an untyped copy of it from scratch, and that a function
whose top node is typed but whose inside is not is typed again.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Call, Function, IRModule, Op, Var
from relaypass.ir.expr import set_checked_type
from relaypass.ir.fields import rebuild
from relaypass.ir.structural import assert_structural_equal
from relaypass.ir.traversal import post_order
from relaypass.testing.strategies import modules
from relaypass.tools.optimize import DEFAULT_PIPELINE
from relaypass.transform import PassContext, get_pass
from relaypass_std.infer_type.incremental import typed_as_inferred

pytest.importorskip("onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")

from onnx_corpus import CORPUS  # noqa: E402  (needs onnx)

from relaypass.frontend import from_onnx  # noqa: E402

InferType = get_pass("InferType")


def untyped_copy(expr):
    """A copy of ``expr`` with no type on any node but annotated variables (fresh ones)."""
    copies = {}
    for node in post_order(expr):
        t = type(node)
        if t is Op:
            copies[node] = node
        elif t is Var:
            copies[node] = Var(node.name_hint, node.type_annotation, node.span)
        else:
            kids = [copies[k] for k in t._layout_.children(node)]
            copies[node] = rebuild(node, kids)
    return copies[expr]


def assert_typed_as_from_scratch(mod):
    """Every function of ``mod`` is typed, node by node, as InferType types an untyped copy."""
    fresh_mod = IRModule()
    for gv, func in mod.items():
        fresh_mod[gv.name_hint] = untyped_copy(func)
    fresh = InferType(fresh_mod)
    for gv, func in mod.items():
        assert_same_typing(func, fresh[gv.name_hint], f"@{gv.name_hint}")


def assert_same_typing(a, b, where=""):
    """``a`` and ``b`` are structurally equal and typed alike, node by node (type arguments
    of operator calls included)."""
    assert_structural_equal(a, b)
    mine, theirs = post_order(a), post_order(b)
    assert len(mine) == len(theirs)
    for x, y in zip(mine, theirs):
        if type(x) is Op:
            continue
        at = f"{where}: {type(x).__name__}"
        assert x.has_checked_type, f"{at} is untyped"
        assert x.checked_type == y.checked_type, at
        if type(x) is Call and type(x.op) is Op:
            assert tuple(x.type_args) == tuple(y.type_args), at


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_pass_of_the_optimize_pipeline_types_as_from_scratch(name):
    mod, _params = from_onnx(CORPUS[name]())
    with PassContext(opt_level=3):
        for pass_name in DEFAULT_PIPELINE["passes"]:
            mod = get_pass(pass_name)(mod)
            assert_typed_as_from_scratch(mod)


@pytest.mark.parametrize("name", ["gpt2_kv_cache:dynamic", "llama_block:dynamic", "bert_layer"])
def test_the_optimize_pipeline_as_a_whole_types_as_from_scratch(name):
    from relaypass.tools.optimize import _pipeline

    mod, _params = from_onnx(CORPUS[name]())
    assert_typed_as_from_scratch(_pipeline(None, ".")(mod))


# --- the shortcuts on small programs ------------------------------------------------------------
def _typed(expr):
    return InferType(IRModule.from_expr(expr))


def test_merged_subexpressions_leave_their_users_typed():
    x = relay.var("x", shape=(2, 3))
    two = relay.const(np.float32(2.0))
    left = relay.add(relay.nn.relu(x), two)
    right = relay.add(relay.nn.relu(x), two)
    pair = relay.Tuple([left, right])
    mod = _typed(relay.Function([x], relay.multiply(relay.TupleGetItem(pair, 0),
                                                    relay.TupleGetItem(pair, 1))))
    with PassContext(opt_level=3):
        out = get_pass("EliminateCommonSubexpr")(mod)
    body = out["main"].body
    assert body.args[0].tuple_value.fields[0] is body.args[0].tuple_value.fields[1]
    assert typed_as_inferred(out["main"])
    assert InferType(out)["main"] is out["main"]  # nothing left to type
    assert_typed_as_from_scratch(out)


def test_folded_constants_leave_their_users_typed():
    x = relay.var("x", shape=(2, 2))
    c = relay.add(relay.const(np.ones((2, 2), "float32")), relay.const(np.ones((2, 2), "float32")))
    split = relay.split(relay.concatenate([c, c], axis=0), 2, axis=0)
    mod = _typed(relay.Function([x], relay.multiply(x, relay.TupleGetItem(split.astuple(), 1))))
    with PassContext(opt_level=3):
        out = get_pass("FoldConstant")(mod)
    assert isinstance(out["main"].body.args[1], relay.Constant)
    assert typed_as_inferred(out["main"])
    assert_typed_as_from_scratch(out)


def test_a_typed_function_over_an_untyped_node_is_typed_again():
    x = relay.var("x", shape=(2, 3))
    main = _typed(relay.Function([x], relay.nn.relu(relay.nn.relu(x))))["main"]
    inner = relay.nn.relu(x)  # built by hand: untyped
    outer = Call(main.body.op, [inner], main.body.attrs, [main.body.args[0].checked_type])
    set_checked_type(outer, main.body.checked_type)
    func = Function(main.params, outer, main.ret_type)
    set_checked_type(func, main.checked_type)
    assert not typed_as_inferred(func)
    mod = IRModule.from_expr(func)
    out = InferType(mod)
    assert out["main"] is not func
    assert out["main"].body.args[0].has_checked_type
    assert_typed_as_from_scratch(out)


def test_a_call_whose_type_args_are_not_its_arguments_types_is_typed_again():
    x = relay.var("x", shape=(2, 3))
    main = _typed(relay.Function([x], relay.nn.relu(relay.nn.relu(x))))["main"]
    stale = relay.TensorType((2, 3), "float32")  # equal, but not the argument's very type
    outer = Call(main.body.op, list(main.body.args), main.body.attrs, [stale])
    set_checked_type(outer, main.body.checked_type)
    func = Function(main.params, outer, main.ret_type)
    set_checked_type(func, main.checked_type)
    assert not typed_as_inferred(func)


def test_a_projection_typed_before_is_kept():
    x = relay.var("x", shape=(4, 3))
    parts = relay.split(x, 2, axis=0).astuple()
    mod = _typed(relay.Function([x], relay.nn.relu(relay.TupleGetItem(parts, 1))))
    main = mod["main"]
    again = Function(main.params, main.body, main.ret_type)
    set_checked_type(again, main.checked_type)
    retyped = InferType(IRModule.from_expr(again))["main"]
    assert retyped.body is main.body


# --- InferType's dataflow path gives what its general inference gives ---------------------------
def _general_inference(mod):
    """``mod`` typed by InferType's solver-based inference alone (no shortcut)."""
    from relaypass_std.infer_type import _Inference

    inference = _Inference({gv.name_hint: f for gv, f in mod.items()}, mod.type_definitions)
    inference.infer_globals()
    typed = inference.finish()
    return {name: func for name, (_gv, func) in typed.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25)) | modules(size=(1, 25), features={"tuple"}, size_vars=True))
def test_the_dataflow_path_types_as_the_general_inference(mod):
    fast = InferType(mod)
    general = _general_inference(mod)
    for gv, func in fast.items():
        assert_same_typing(func, general[gv.name_hint])
        assert gv.checked_type == func.checked_type


@pytest.mark.parametrize("name", ["gpt2_kv_cache:dynamic", "llama_block", "resnet_block"])
def test_the_dataflow_path_types_imported_models_as_the_general_inference(name):
    mod, _params = from_onnx(CORPUS[name]())
    assert_same_typing(InferType(mod)["main"], _general_inference(mod)["main"])


def test_the_dataflow_path_leaves_errors_to_the_general_inference():
    x = relay.var("x", shape=(2, 3))
    bad = relay.add(relay.nn.relu(x), relay.const(np.ones((4, 5), "float32")))
    with pytest.raises(TypeRelationError, match="add"):
        InferType(IRModule.from_expr(relay.Function([x], bad)))


def test_a_100000_call_chain_takes_the_dataflow_path():
    x = relay.var("x", shape=(2,))
    e = x
    for _ in range(100_000):
        e = relay.negative(e)
    out = InferType(IRModule.from_expr(relay.Function([x], e)))["main"]
    assert out.checked_type.ret_type == relay.TensorType((2,), "float32")
    assert typed_as_inferred(out)
