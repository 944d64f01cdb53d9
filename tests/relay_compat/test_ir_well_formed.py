"""``relay.analysis.well_formed`` as TVM's (TVM's test_ir_well_formed.py).

A program is well formed when no variable is bound twice.
"""

from __future__ import annotations

import relaypass as tvm
from relaypass import relay
from relaypass.relay.analysis import well_formed


def test_let():
    x = relay.Var("x")
    assert well_formed(x)
    v = relay.Constant(tvm.nd.array(10))
    let = relay.Let(x, v, x)
    assert well_formed(let)
    assert not well_formed(relay.Let(x, v, let))  # x bound twice
    f = relay.Function([x], x, None)
    assert well_formed(f)
    # One function used twice binds its parameter once.
    assert well_formed(relay.Let(relay.Var("y"), f, relay.Let(relay.Var("z"), f, v)))


def test_tuple():
    x = relay.Var("x")
    assert well_formed(x)
    v = relay.Constant(tvm.nd.array(10))
    let = relay.Let(x, v, x)
    assert well_formed(let)
    assert well_formed(relay.Tuple([v, v]))
    assert not well_formed(relay.Tuple([let, relay.Let(x, v, x)]))


def test_tuple_get_item():
    t = relay.Var("t")
    assert well_formed(relay.TupleGetItem(t, 2))


def test_100k_chain_is_well_formed_and_a_rebinding_at_its_end_is_found():
    x = relay.Var("x")
    body = x
    for i in range(100_000):
        body = relay.Let(relay.Var(f"v{i}"), relay.const(1.0), body)
    assert well_formed(relay.Function([x], body))
    assert not well_formed(relay.Function([x], relay.Let(x, relay.const(1.0), body)))


def test_adt():
    p = relay.prelude.Prelude(tvm.IRModule())
    _, none, some = p.mod.get_type("Option")  # (TVM's case names them the other way round)
    x = relay.Var("x")
    some_case = relay.Clause(relay.PatternConstructor(some, [relay.PatternVar(x)]), x)
    default_case = relay.Clause(relay.PatternVar(x), x)
    assert well_formed(relay.Match(none(), [default_case]))
    # The same variable bound by two patterns.
    assert not well_formed(relay.Match(none(), [some_case, default_case]))

