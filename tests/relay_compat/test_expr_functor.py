"""TVM v0.18's expression functors, as tests/python/relay/test_expr_functor.py pins them.

The facts carried over: the bare functor raises NotImplementedError for every
kind; the default visitor walks everything; the default mutator gives back the
very same object when nothing changes; a visitor over a heavily shared DAG
visits each node once.  Added here: the *order* TVM's Python functors reach
nodes in (the parent's ``visit_call`` runs before its children, which it
reaches through ``self.visit``: op first, then the arguments left to right),
which ported analyses such as TVM's ``count_layers`` depend on, and the depth
guarantee: all of it on a 100,000-deep chain under the default recursion limit.
"""

from __future__ import annotations

import sys

import pytest

from relaypass import relay
from relaypass.relay import ExprFunctor, ExprMutator, ExprVisitor


def _check_visit(expr):
    with pytest.raises(NotImplementedError):
        ExprFunctor().visit(expr)
    ExprVisitor().visit(expr)
    assert ExprMutator().visit(expr) is expr


def _scalar(name):
    return relay.var(name, shape=())


@pytest.mark.parametrize("build", [
    lambda: relay.const(1.0),
    lambda: relay.Tuple([_scalar("x")]),
    lambda: _scalar("x"),
    lambda: relay.GlobalVar("f"),
    lambda: relay.Function([_scalar("a"), _scalar("b")], relay.const(0.0), relay.TensorType(())),
    lambda: relay.add(_scalar("x"), _scalar("y")),
    lambda: relay.If(relay.var("c", shape=(), dtype="bool"), relay.const(1.0), relay.const(2.0)),
    lambda: relay.TupleGetItem(relay.Tuple([_scalar("x")]), 0),
    lambda: relay.RefCreate(relay.const(1.0)),
    lambda: relay.RefRead(relay.RefCreate(relay.const(1.0))),
    lambda: relay.RefWrite(relay.RefCreate(relay.const(1.0)), relay.const(2.0)),
], ids=["constant", "tuple", "var", "global_var", "function", "call", "if", "tuple_getitem",
        "ref_create", "ref_read", "ref_write"])
def test_every_kind_is_handled_by_the_defaults(build):
    _check_visit(build())


def test_let_is_handled_by_the_defaults():
    x = _scalar("x")
    _check_visit(relay.Let(x, relay.const(2.0), relay.add(x, x)))


def test_shared_subexpressions_are_visited_once():
    expr = relay.const(1)
    for _ in range(100):  # 2**100 paths, 101 distinct nodes
        expr = relay.add(expr, expr)
    _check_visit(expr)

    class Counter(ExprVisitor):
        calls = 0

        def visit_call(self, call):
            self.calls += 1
            super().visit_call(call)

    counter = Counter()
    counter.visit(expr)
    assert counter.calls == 100


class _Recorder(ExprVisitor):
    """Records the order in which visit_* methods are entered."""

    def __init__(self):
        super().__init__()
        self.entered = []

    def visit_call(self, call):
        self.entered.append(call.op.name)
        super().visit_call(call)

    def visit_var(self, var):
        self.entered.append("%" + var.name_hint)

    def visit_op(self, op):
        self.entered.append("op:" + op.name)


def test_visitor_enters_the_parent_before_its_children():
    x, y = _scalar("x"), _scalar("y")
    expr = relay.add(relay.negative(x), relay.exp(y))
    rec = _Recorder()
    rec.visit(expr)
    assert rec.entered == ["add", "op:add", "negative", "op:negative", "%x", "exp", "op:exp", "%y"]


def test_let_visits_variable_value_then_body():
    x = _scalar("x")
    y = _scalar("y")
    expr = relay.Let(x, relay.negative(y), relay.exp(x))
    rec = _Recorder()
    rec.visit(expr)
    assert rec.entered == ["%x", "negative", "op:negative", "%y", "exp", "op:exp"]


class _LayerCounter(ExprVisitor):
    """TVM's count_layers visitor, ported: the deepest chain of the given ops it *sees*.

    Its answer depends on the functor's order and memoization: a node reached a
    second time along a longer path is not visited again.
    """

    def __init__(self, ops):
        self.depth_count = 0
        self.deepest_count = 0
        self.valid_ops = [relay.op.get(op) for op in ops]
        super().__init__()

    def visit_call(self, call):
        if call.op in self.valid_ops:
            self.depth_count += 1
        current = self.depth_count
        self.deepest_count = max(self.deepest_count, current)
        for arg in call.args:
            self.visit(arg)
            self.depth_count = current


def _conv(data, channels, name):
    weight = relay.var(name, shape=(channels, channels, 3, 3))
    return relay.nn.conv2d(data, weight, padding=(1, 1))


def test_count_layers_gives_tvms_answer_on_a_residual_block():
    data = relay.var("data", shape=(1, 4, 8, 8))
    first = relay.nn.relu(_conv(data, 4, "w0"))
    branch = relay.nn.relu(_conv(relay.nn.relu(_conv(first, 4, "w1")), 4, "w2"))
    out = relay.add(first, branch)  # ``first`` is reached first along the short path
    counter = _LayerCounter(["nn.conv2d"])
    counter.visit(out)
    # The longest chain has 3 convolutions, but TVM's visitor reaches ``first``
    # from ``add`` directly (1 layer deep) and finds it memoized on the long path.
    assert counter.deepest_count == 2


def _resnet_style(blocks):
    data = relay.var("data", shape=(1, 4, 8, 8))
    x = relay.nn.relu(_conv(data, 4, "stem"))
    for i in range(blocks):
        y = relay.nn.relu(_conv(x, 4, f"a{i}"))
        y = _conv(y, 4, f"b{i}")
        x = relay.nn.relu(relay.add(x, y))
    return x


def test_count_layers_on_a_resnet_style_graph():
    # The longest chain holds 1 + 2 * 8 = 17 convolutions.  TVM's visitor goes
    # down the skip connections first (the first argument of each add), which
    # hold only the stem's convolution; each block's branch is then reached
    # from its add at depth 0 and stops at the memoized block input after its
    # two convolutions.  So TVM answers 2.
    counter = _LayerCounter(["nn.conv2d"])
    counter.visit(_resnet_style(8))
    assert counter.deepest_count == 2


class _Renamer(ExprMutator):
    """Replaces ``negative`` by ``exp``, and records what the children became."""

    def __init__(self):
        super().__init__()
        self.seen_args = []

    def visit_call(self, call):
        new = super().visit_call(call)
        self.seen_args.append([a for a in new.args])
        if call.op.name == "negative":
            return relay.exp(new.args[0])
        return new


def test_mutator_override_sees_children_already_rewritten():
    x = _scalar("x")
    expr = relay.add(relay.negative(x), x)
    out = _Renamer().visit(expr)
    assert out.op.name == "add" and out.args[0].op.name == "exp" and out.args[1] is x
    unchanged = relay.add(x, x)
    assert _Renamer().visit(unchanged) is unchanged


def _chain(n):
    x = _scalar("x")
    e = x
    for _ in range(n):
        e = relay.negative(e)
    return x, e


def test_counting_visitor_on_a_100k_chain_under_the_default_limit():
    limit = sys.getrecursionlimit()
    _, e = _chain(100_000)
    rec = _Recorder()
    rec.visit(e)
    assert sys.getrecursionlimit() == limit
    calls = [s for s in rec.entered if s == "negative"]
    assert len(calls) == 100_000 and rec.entered[-1] == "%x"


def test_rewriting_mutator_on_a_100k_chain_under_the_default_limit():
    x, e = _chain(100_000)
    out = _Renamer().visit(e)
    n = 0
    while out is not x:
        assert out.op.name == "exp"
        out = out.args[0]
        n += 1
    assert n == 100_000


def test_let_chain_of_100k_under_the_default_limit():
    x = _scalar("x0")
    body = x
    vs = [relay.var(f"v{i}", shape=()) for i in range(100_000)]
    for v in reversed(vs):
        body = relay.Let(v, relay.negative(x), body)
    assert ExprMutator().visit(body) is body
    rec = _Recorder()
    rec.visit(body)
    assert rec.entered[0] == "%v0"


def test_the_callers_pass_context_holds_during_a_deep_visit():
    from relaypass.transform import PassContext

    seen = []

    class Probe(ExprVisitor):
        def visit_var(self, var):
            seen.append(PassContext.current().opt_level)

    _, e = _chain(100_000)
    with PassContext(opt_level=3):
        Probe().visit(e)
    assert seen == [3]


def test_an_error_deep_down_reaches_the_caller_with_its_type():
    class Boom(ExprVisitor):
        def visit_var(self, var):
            raise KeyError("deep")

    limit = sys.getrecursionlimit()
    _, e = _chain(100_000)
    with pytest.raises(KeyError, match="deep"):
        Boom().visit(e)
    assert sys.getrecursionlimit() == limit


def test_a_subclass_that_wraps_visit_still_sees_every_visit():
    class Wrapping(ExprVisitor):
        def __init__(self):
            super().__init__()
            self.visits = 0

        def visit(self, expr):
            self.visits += 1
            return super().visit(expr)

    x, e = _chain(100_000)
    w = Wrapping()
    w.visit(e)
    # Each call visits its op and its argument: every node once, and the op again
    # from the memo table for each of the other 99,999 calls.
    assert w.visits == 100_000 + 1 + 1 + 99_999
