"""ToBasicBlockNormalForm's shortcut for one chain of lets agrees with the scope calculation.

A program in A-normal form with no branch is the pass's usual input, and is
answered without scopes (``_one_let_chain``); whenever the shortcut says the
program comes back as it is, the scope calculation must say so too -- nothing
lifted, no let quirk -- on random programs, their A-normal forms, and the
hand-made cases where a let chain shares a value.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from relaypass import relay
from relaypass.analysis.basic_block_normal_form import basic_block_scopes
from relaypass.ir import Call, Function, IRModule, Let, Op
from relaypass.ir.structural import assert_structural_equal
from relaypass.testing.strategies import programs
from relaypass.transform import get_pass
from relaypass_std.to_basic_block_normal_form import (
    _one_let_chain,
    _reproduced,
    to_basic_block_normal_form,
)

ToANormalForm = get_pass("ToANormalForm")
ToBasicBlockNormalForm = get_pass("ToBasicBlockNormalForm")

_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _calculated_as_is(expr) -> bool:
    blocks = basic_block_scopes(expr)
    return blocks.single_block or (not blocks.lifted and _reproduced(blocks))


def _agrees(func) -> bool:
    """Whether the shortcut's answer on ``func`` is one the scope calculation gives; returns
    the shortcut's answer."""
    quick = _one_let_chain(func)
    if quick:
        assert _calculated_as_is(func)
        assert to_basic_block_normal_form(func) is func
    return quick


@_SETTINGS
@given(programs(size=(1, 16), features={"let", "tuple", "if", "fn"}))
def test_the_shortcut_agrees_with_the_scope_calculation(func):
    _agrees(func)
    anf = ToANormalForm(IRModule.from_expr(func))["main"]
    _agrees(anf)


@_SETTINGS
@given(programs(size=(1, 16), features={"tuple"}))
def test_a_normal_forms_of_dataflow_take_the_shortcut(func):
    # (A let of the program binding a variable would stay such a let: a quirk to rewrite.)
    anf = ToANormalForm(IRModule.from_expr(func))["main"]
    assert _agrees(anf)


def _x():
    return relay.var("x", shape=(1, 4))


def test_a_value_bound_and_used_again_is_left_to_the_scope_calculation():
    x = _x()
    shared = relay.nn.relu(x)
    a, b = relay.var("a"), relay.var("b")
    func = Function([x], Let(a, shared, Let(b, relay.add(shared, a), b)))
    assert not _agrees(func)
    out = ToBasicBlockNormalForm(IRModule.from_expr(func))["main"]
    assert_structural_equal(out, to_basic_block_normal_form(func))
    assert not _one_let_chain(out) or _calculated_as_is(out)


def test_a_value_bound_twice_or_returned_is_left_to_the_scope_calculation():
    x = _x()
    shared = relay.tanh(x)
    a, b = relay.var("a"), relay.var("b")
    assert not _agrees(Function([x], Let(a, shared, Let(b, shared, relay.add(a, b)))))
    assert not _agrees(Function([x], Let(a, shared, shared)))


def test_atoms_lets_and_branches_off_the_chain_are_left_to_the_scope_calculation():
    x = _x()
    a, b, c = relay.var("a"), relay.var("b"), relay.var("c")
    assert not _agrees(Function([x], Let(a, x, relay.exp(a))))  # binds a variable
    inner = Let(b, relay.exp(x), relay.negative(b))
    assert not _agrees(Function([x], Let(a, inner, a)))  # a let as a value
    assert not _agrees(Function([x], Let(a, relay.exp(x), relay.add(inner, a))))
    cond = relay.const(np.array(True))
    branchy = relay.If(cond, relay.exp(x), relay.negative(x))
    assert not _agrees(Function([x], Let(c, branchy, c)))
    local = Function([b], relay.exp(b))
    assert not _agrees(Function([x], Let(c, Call(local, [x]), c)))


def test_a_constant_and_operands_shared_along_the_chain_take_the_shortcut():
    x = _x()
    k = relay.const(np.ones((1, 4), "float32"))
    shared = relay.nn.relu(x)  # an operand of two values, never a value itself
    a, b = relay.var("a"), relay.var("b")
    func = Function([x], Let(a, relay.add(shared, k), Let(b, relay.multiply(shared, k),
                                                             relay.add(a, b))))
    assert _agrees(func)
    expr = Let(a, Call(Op.get("exp"), [x]), a)  # not a function: the chain starts at the root
    assert _agrees(expr)
