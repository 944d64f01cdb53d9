"""DynamicToStatic: declaration, the pass author kit, properties, depth, errors.

Relay's own cases are in ``tests/relay_compat/test_pass_dynamic_to_static.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import relaypass as tvm
from relaypass import relay
from relaypass.interp import create_executor
from relaypass.ir import IRModule, TensorType
from relaypass.ir.structural import assert_structural_equal
from relaypass.ir.traversal import post_order
from relaypass.testing import check_pass
from relaypass.testing.strategies import modules
from relaypass.transform import FunctionPass, PassInfo
from relaypass_std.dynamic_to_static import DynamicToStaticError

CHAIN = 100_000
D2S = relay.transform.DynamicToStatic


def run(mod):
    return D2S()(mod)


def ops_in(expr):
    return [n.op.name for n in post_order(expr) if isinstance(n, relay.Call)
            and isinstance(n.op, tvm.ir.Op)]


def test_declared_as_relay_declares_it():
    p = D2S()
    assert isinstance(p, FunctionPass)
    assert p.info == PassInfo(2, "DynamicToStatic")


def test_the_pass_author_kit_finds_nothing_wrong():
    check_pass("DynamicToStatic", examples=30, features={"let", "if", "tuple", "fn", "global"},
               seed=3)


def test_before_and_expected():
    x = relay.var("x", shape=(2, 3, 4))
    y = relay.var("y", shape=(6, 4))
    before = relay.Function([x, y], relay.nn.relu(relay.reshape(x, relay.shape_of(y))))
    expected = relay.Function([x, y], relay.nn.relu(relay.reshape(x, [6, 4])))
    out = run(IRModule.from_expr(before))
    assert_structural_equal(out["main"], relay.transform.InferType()(
        IRModule.from_expr(expected))["main"])


def test_a_shape_through_a_let_is_made_static_too_so_a_second_run_changes_nothing():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s")
    body = relay.Let(s, relay.shape_of(relay.var("y", shape=(3, 2))),
                     relay.reshape(x, s))
    func = relay.Function(relay.analysis.free_vars(body), body)
    once = run(IRModule.from_expr(func))
    assert ops_in(once["main"]) == ["reshape"]
    assert once["main"].body.checked_type == TensorType((3, 2), "float32")
    assert_structural_equal(run(once), once)


def test_function_return_annotations_are_dropped_and_inferred_again():
    x = relay.var("x", shape=(4,))
    y = relay.var("y", shape=(2, 2))
    func = relay.Function([x, y], relay.reshape(x, relay.shape_of(y)),
                          ret_type=relay.TensorType((relay.Any(), relay.Any())))
    out = run(IRModule.from_expr(func))["main"]
    # the loose annotation is gone: inference gives the static one
    assert out.ret_type == TensorType((2, 2), "float32")


def test_calls_of_other_global_functions_type_while_folding():
    mod = IRModule()
    helper = relay.GlobalVar("helper")
    a = relay.var("a", shape=(3, 2))
    mod[helper] = relay.Function([a], relay.negative(a))
    x = relay.var("x", shape=(6,))
    y = relay.var("y", shape=(3, 2))
    mod["main"] = relay.Function(
        [x, y], relay.reshape(x, relay.shape_of(relay.Call(helper, [y]))))
    out = run(relay.transform.InferType()(mod))
    assert ops_in(out["main"]) == ["reshape"]


def test_dynamic_calls_whose_shapes_stay_unknown_are_kept():
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=(2,), dtype="int64")
    func = relay.Function([x, s], relay.reshape(x, s))
    out = run(IRModule.from_expr(func))
    assert ops_in(out["main"]) == ["dyn.reshape"]


def test_the_input_module_is_unchanged():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(3, 2))
    mod = IRModule.from_expr(relay.Function([x, y], relay.reshape(x, relay.shape_of(y))))
    text = mod.astext()
    run(mod)
    assert mod.astext() == text


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(modules(size=(1, 10), features={"let", "tuple", "if"}))
def test_a_reshape_of_any_result_by_its_own_shape_is_made_static_and_computes_the_same(mod):
    typed = relay.transform.InferType()(mod)
    main = typed["main"]
    ret = main.checked_type.ret_type
    assume(isinstance(ret, TensorType) and ret.is_static)
    body = relay.reshape(main.body, relay.shape_of(main.body))
    before = IRModule.from_expr(relay.Function(main.params, body))
    after = run(before)
    assert not [n for n in ops_in(after["main"]) if n.startswith("dyn.")]
    args = [np.random.default_rng(0).standard_normal(
        [int(d) for d in p.type_annotation.shape]).astype(p.type_annotation.dtype)
        for p in main.params]
    want = create_executor(mod=before).evaluate()(*args)
    got = create_executor(mod=after).evaluate()(*args)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_a_100000_deep_chain_of_dynamic_reshapes():
    x = relay.var("x", shape=(4, 6))
    flat = relay.shape_of(relay.var("f", shape=(24,)))
    square = relay.shape_of(relay.var("g", shape=(4, 6)))
    out = x
    for i in range(CHAIN):
        out = relay.reshape(out, flat if i % 2 else square)
    func = relay.Function(relay.analysis.free_vars(out), out)
    result = run(IRModule.from_expr(func))["main"]
    names = ops_in(result)
    assert len(names) == CHAIN and set(names) == {"reshape"}
    assert result.checked_type.ret_type == TensorType((24,), "float32")


def test_a_shape_argument_with_values_the_static_operator_rejects_is_named():
    x = relay.var("x", shape=(2, 3))
    k = relay.const(np.array([2, 2], dtype="int32"))
    twice = relay.Function([x], relay.topk(x, relay.add(k, k), ret_type="values"))
    with pytest.raises(DynamicToStaticError, match=r"constant arguments of .*dyn.topk.* make no "
                                                   r"topk call: dyn.topk: k must hold one value"):
        run(IRModule.from_expr(twice))


def test_a_static_call_that_does_not_type_is_a_type_error_as_in_relay():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(4, 4))
    func = relay.Function([x, y], relay.reshape(x, relay.shape_of(y)))
    with pytest.raises(tvm.errors.TypeInferenceError, match="cannot reshape a tensor of shape"):
        run(IRModule.from_expr(func))
