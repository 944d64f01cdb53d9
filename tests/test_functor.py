"""Visitors, mutators and the dataflow rewriter: behaviour and depth."""

from __future__ import annotations

import sys

from relaypass import relay
from relaypass.functor import ExprMutator, ExprVisitor, MixedModeMutator, post_order_visit
from relaypass.ir import Call, Function, Op


def _chain(n: int):
    x = relay.var("x", shape=(2,))
    c = relay.const(1.0)
    e = x
    for _ in range(n):
        e = relay.add(e, c)
    return x, e


def test_visitor_visits_each_shared_node_once():
    x = relay.var("x", shape=(2,))
    shared = relay.nn.relu(x)
    expr = relay.add(shared, shared)
    seen = []

    class Counter(ExprVisitor):
        def visit_call(self, call):
            seen.append(call.op.name)
            super().visit_call(call)

    Counter().visit(expr)
    assert seen.count("nn.relu") == 1 and seen.count("add") == 1


def test_visitor_reaches_every_node_kind():
    x = relay.var("x", shape=())
    v = relay.var("v")
    r = relay.var("r")
    body = relay.Let(
        v, relay.RefCreate(x),
        relay.Let(r, relay.RefWrite(v, x), relay.If(relay.less(x, x), relay.RefRead(v), relay.TupleGetItem(relay.Tuple([x]), 0))),
    )
    kinds = set()

    class Kinds(ExprVisitor):
        def visit(self, expr):
            kinds.add(type(expr).__name__)
            return super().visit(expr)

    Kinds().visit(Function([x], body))
    assert {"Function", "Let", "RefCreate", "RefWrite", "If", "RefRead", "TupleGetItem", "Tuple", "Call", "Var", "Op"} <= kinds


def test_mutator_returns_same_node_when_nothing_changes():
    x, e = _chain(50)
    f = Function([x], relay.Let(relay.var("v"), e, relay.If(relay.less(e, e), e, e)))
    assert ExprMutator().visit(f) is f


def test_mutator_keeps_sharing_and_rebuilds_only_changed_paths():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    shared = relay.nn.relu(x)
    untouched = relay.negative(y)
    expr = relay.Tuple([relay.add(shared, shared), untouched])

    class Swap(ExprMutator):
        def visit_var(self, var):
            return y if var is x else var

    out = Swap().visit(expr)
    assert out is not expr
    assert out.fields[1] is untouched
    new_add = out.fields[0]
    assert new_add.args[0] is new_add.args[1]
    assert new_add.args[0].args[0] is y


def test_rewriter_sees_pre_and_post():
    x, e = _chain(3)
    calls = []

    class Rw(MixedModeMutator):
        def rewrite_call(self, pre, post):
            calls.append((pre.op.name, post is pre))
            return Call(Op.get("subtract"), post.args)

    out = Rw().visit(e)
    assert out.op.name == "subtract" and out.args[0].op.name == "subtract"
    # The innermost call has unchanged children; the outer ones are rebuilt first.
    assert calls[0] == ("add", True) and calls[1] == ("add", False)


def test_post_order_visit_children_first():
    x = relay.var("x", shape=(2,))
    a = relay.nn.relu(x)
    b = relay.add(a, x)
    order = []
    post_order_visit(b, order.append)
    assert order.index(x) < order.index(a) < order.index(b)
    assert len(order) == len(set(map(id, order)))


def test_100k_chain_visit_mutate_rewrite_under_default_limit():
    assert sys.getrecursionlimit() <= 1000 * 10  # untouched by the project
    x, e = _chain(100_000)
    count = [0]

    class V(ExprVisitor):
        def visit_call(self, call):
            count[0] += 1
            super().visit_call(call)

    V().visit(e)
    assert count[0] == 100_000

    class Rename(ExprMutator):
        def visit_var(self, var):
            return relay.var("z", shape=(2,)) if var is x else var

    out = Rename().visit(e)
    assert out is not e

    class Rw(MixedModeMutator):
        def rewrite_call(self, pre, post):
            return Call(Op.get("multiply"), post.args)

    assert Rw().visit(e).op.name == "multiply"
    n = [0]
    post_order_visit(e, lambda node: n.__setitem__(0, n[0] + 1))
    assert n[0] == 100_000 + 3


def test_100k_let_chain_visit_and_mutate():
    x = relay.var("x", shape=(2,))
    bindings = []
    prev = x
    for i in range(100_000):
        v = relay.var(f"v{i}")
        bindings.append((v, relay.add(prev, prev)))
        prev = v
    body = prev
    for v, value in reversed(bindings):
        body = relay.Let(v, value, body)
    count = [0]

    class V(ExprVisitor):
        def visit_call(self, call):
            count[0] += 1
            super().visit_call(call)

    V().visit(body)
    assert count[0] == 100_000
    assert ExprMutator().visit(body) is body

    class ToSub(MixedModeMutator):
        def rewrite_call(self, pre, post):
            return Call(Op.get("subtract"), post.args)

    out = ToSub().visit(body)
    assert out.value.op.name == "subtract" and out.body.value.op.name == "subtract"


def test_subclass_without_init_still_works():
    class NoInit(ExprVisitor):
        def __init__(self):
            self.calls = 0

        def visit_call(self, call):
            self.calls += 1
            super().visit_call(call)

    v = NoInit()
    v.visit(relay.nn.relu(relay.var("x")))
    assert v.calls == 1
