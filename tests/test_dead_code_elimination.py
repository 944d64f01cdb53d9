"""DeadCodeElimination's shortcut for a chain of lets with nothing dead agrees with the counting.

The pass's usual input, a program in A-normal form, often has no dead
binding, and is answered without the purity analysis (``_nothing_dead``);
whenever the shortcut says nothing is dead, counting the uses as the pass
does (pure values visited only once their variable is used) must find every
binding used, with purity and ignoring it -- on random programs, their
A-normal forms, and hand-made chains that the shortcut must leave alone.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from relaypass import relay
from relaypass.analysis.purity import PurityAnalysis
from relaypass.ir import Function, IRModule, Let
from relaypass.testing.strategies import programs
from relaypass.transform import get_pass
from relaypass_std.dead_code_elimination import _nothing_dead, _Usage, dead_code_elimination

ToANormalForm = get_pass("ToANormalForm")

_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _dead_by_counting(func, ignore_impurity=False):
    """The let variables the pass's counting finds unused and may drop."""
    pure = {} if ignore_impurity else PurityAnalysis().let_purity(func)

    def is_pure(var):
        return True if ignore_impurity else pure.get(var, False)

    usage = _Usage(is_pure)
    usage.count(func)
    return [v for v, n in zip(usage.variables, usage.uses) if n == 0 and is_pure(v)]


def _agrees(func) -> bool:
    """Whether the shortcut's answer on ``func`` is one the counting gives; returns the answer."""
    quick = _nothing_dead(func)
    if quick:
        assert _dead_by_counting(func) == []
        assert _dead_by_counting(func, ignore_impurity=True) == []
        assert dead_code_elimination(func) is func
    return quick


@_SETTINGS
@given(programs(size=(1, 16), features={"let", "tuple", "if", "fn", "ref"}))
def test_the_shortcut_agrees_with_the_counting(func):
    _agrees(func)
    _agrees(ToANormalForm(IRModule.from_expr(func))["main"])


@_SETTINGS
@given(programs(size=(1, 16), features={"tuple"}))
def test_a_normal_forms_of_dataflow_take_the_shortcut(func):
    # Every value of such a program is used (it ends in the result) and has no binder.
    # (An If would put lets in its branches, off the chain: left to the counting.)
    assert _agrees(ToANormalForm(IRModule.from_expr(func))["main"])


def _x():
    return relay.var("x", shape=(1, 4))


def test_a_binding_used_only_by_a_dead_one_is_left_to_the_counting():
    x = _x()
    a, b = relay.var("a"), relay.var("b")
    func = Function([x], Let(a, relay.exp(x), Let(b, relay.negative(a), x)))
    assert not _agrees(func)
    assert dead_code_elimination(func).body is x


def test_uses_above_a_binding_are_left_to_the_counting():
    # Ill-formed: each value reads the other's variable.  The counting drops both (neither
    # is reached from the result); the shortcut must not vouch for them.
    x = _x()
    a, b = relay.var("a"), relay.var("b")
    func = Function([x], Let(a, relay.exp(b), Let(b, relay.negative(a), x)))
    assert not _agrees(func)
    assert sorted(v.name_hint for v in _dead_by_counting(func)) == ["a", "b"]


def test_binders_in_values_and_rebound_variables_are_left_to_the_counting():
    x = _x()
    a, y = relay.var("a"), relay.var("y")
    inner = Let(y, relay.exp(x), y)
    assert not _agrees(Function([x], Let(a, relay.add(inner, x), a)))
    local = Function([y], relay.exp(y))
    assert not _agrees(Function([x], Let(a, local, relay.add(a(x), x))))
    assert not _agrees(Function([x], Let(a, relay.exp(x), Let(a, relay.exp(a), a))))


def test_a_chain_whose_bindings_are_all_used_takes_the_shortcut():
    x = _x()
    a, b = relay.var("a"), relay.var("b")
    shared = relay.tanh(x)  # shared by both values
    func = Function([x], Let(a, relay.add(shared, x), Let(b, relay.multiply(shared, a),
                                                          relay.add(a, b))))
    assert _agrees(func)
    assert _agrees(Function([x], relay.exp(x)))  # no binding at all
