"""ToANormalForm and ToBasicBlockNormalForm on Ifs, matches and closures nested 10,000 deep.

Their shared walk (:class:`relaypass.analysis.scope_fill.ScopeFill`) visits
nodes that open scopes from an explicit stack of generators, so nesting
depth never becomes Python recursion.  Each family of programs below is
compared with the result written out by hand for the same depth: checked at
depth 3 (small enough to read) and at 10,000, under the default recursion
limit, and the deep results are run by the interpreter against the input.

Every family nests ``multiply(x, s)`` with ``s = add(x, x)`` used again at
every level, so ``s`` belongs in the function's body: ToANormalForm binds it
there where the walk first reaches it, ToBasicBlockNormalForm lifts it there
(it is used from many blocks) and leaves everything else in place.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from relaypass import relay
from relaypass.analysis.binding_scopes import binding_scopes
from relaypass.analysis.scope_fill import ScopeFill
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.transform import get_pass

ToANormalForm = get_pass("ToANormalForm")
ToBasicBlockNormalForm = get_pass("ToBasicBlockNormalForm")

DEEP = 10_000


def _box_module():
    """A module declaring ``Box = Make(Tensor[(2), float32]) | Empty``."""
    box = relay.GlobalTypeVar("Box")
    make = relay.Constructor("Make", [relay.TensorType((2,), "float32")], box)
    empty = relay.Constructor("Empty", [], box)
    mod = IRModule()
    mod[box] = relay.TypeData(box, [], [make, empty])
    return mod, make, empty


def _lets(bindings, body):
    for var, value in reversed(bindings):
        body = relay.Let(var, value, body)
    return body


def _bound(value):
    """``let %v = value; %v``: a block of ToANormalForm holding one value."""
    v = relay.var("v")
    return relay.Let(v, value, v)


class _Family:
    """Nesting ``n`` deep of one construct: the input, and both passes' results by hand."""

    def __init__(self, kind: str, n: int) -> None:
        self.kind, self.n = kind, n
        self.x = relay.var("x", shape=(2,))
        self.c = relay.var("c", shape=(), dtype="bool")
        self.mod, self.make, self.empty = _box_module()
        self.b = relay.var("b", relay.TypeCall(self.mod.get_global_type_var("Box"), []))

    def params(self):
        return [self.x, self.b] if self.kind == "match" else [self.x, self.c]

    def step(self, inner, other):
        """One level: ``inner`` nested in a branch (or a closure), ``other`` in the other branch."""
        if self.kind == "then":
            return relay.If(self.c, inner, other)
        if self.kind == "else":
            return relay.If(self.c, other, inner)
        if self.kind == "match":
            y = relay.var("y", shape=(2,))
            return relay.Match(self.b, [
                relay.Clause(relay.PatternConstructor(self.make, [relay.PatternVar(y)]), inner),
                relay.Clause(relay.PatternWildcard(), other),
            ])
        return relay.Call(relay.Function([], inner), [])

    def program(self):
        x = self.x
        s = relay.add(x, x)
        e = relay.multiply(x, s)
        for _ in range(self.n):
            e = self.step(e, relay.negative(s))
        if self.kind == "closure":  # s used after the closures too, so it is shared
            e = relay.subtract(e, s)
        return relay.Function(self.params(), e)

    def anf(self):
        x = self.x
        vs = relay.var("s")
        e = _bound(relay.multiply(x, vs))
        if self.kind == "closure":
            for _ in range(self.n):
                f, r = relay.var("f"), relay.var("r")
                e = _lets([(f, relay.Function([], e)), (r, relay.Call(f, []))], r)
            # The closures' let chain is spliced into the body: s first (reached deepest).
            out = relay.var("o")
            bindings = [(vs, relay.add(x, x))]
            node = e
            while isinstance(node, relay.Let):
                bindings.append((node.var, node.value))
                node = node.body
            return relay.Function(self.params(),
                                  _lets(bindings + [(out, relay.subtract(node, vs))], out))
        for i in range(self.n):
            e = self.step(e, _bound(relay.negative(vs)))
            if i < self.n - 1:
                e = _bound(e)
        w = relay.var("w")
        return relay.Function(self.params(), _lets([(vs, relay.add(x, x)), (w, e)], w))

    def bbnf(self):
        x = self.x
        vs = relay.var("s")
        e = relay.multiply(x, vs)
        for _ in range(self.n):
            e = self.step(e, relay.negative(vs))
        if self.kind == "closure":
            e = relay.subtract(e, vs)
        return relay.Function(self.params(), relay.Let(vs, relay.add(x, x), e))

    def module(self, func):
        mod = IRModule(dict(self.mod.functions), dict(self.mod.type_definitions))
        mod["main"] = func
        return mod

    def run(self, func):
        arg = np.array([1.0, 2.0], "float32")
        if self.kind == "match":
            other = self.make(relay.const(arg))
            mod = self.module(relay.Function([self.x], relay.Call(func, [self.x, other])))
            return create_executor(mod=mod).evaluate(mod["main"])(arg).numpy()
        mod = self.module(func)
        return create_executor(mod=mod).evaluate(mod["main"])(arg, np.array(True)).numpy()


KINDS = ["then", "else", "match", "closure"]

#: The interpreter takes time quadratic in the nesting of closures (10 s for 1,000), so
#: their values are checked at this depth.
CLOSURES_RUN = 300


def _same_values(family, out, the_pass):
    """``out`` (``the_pass``'s result on ``family``'s program) computes what the program does."""
    if family.kind == "closure":
        family = _Family("closure", CLOSURES_RUN)
        out = the_pass(family.module(family.program()))["main"]
    np.testing.assert_allclose(family.run(out), family.run(family.program()))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [3, DEEP])
def test_to_a_normal_form_of_deep_nesting_is_the_hand_written_one(kind, n):
    limit = sys.getrecursionlimit()
    family = _Family(kind, n)
    mod = family.module(family.program())
    out = ToANormalForm(mod)["main"]
    assert_structural_equal(out, family.anf(), map_free_vars=True)
    assert sys.getrecursionlimit() == limit
    if n == DEEP:
        assert well_formed(out)
        _same_values(family, out, ToANormalForm)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [3, DEEP])
def test_to_basic_block_normal_form_of_deep_nesting_is_the_hand_written_one(kind, n):
    limit = sys.getrecursionlimit()
    family = _Family(kind, n)
    mod = family.module(family.program())
    out = ToBasicBlockNormalForm(mod)["main"]
    assert_structural_equal(out, family.bbnf(), map_free_vars=True)
    assert sys.getrecursionlimit() == limit
    if n == DEEP:
        _same_values(family, out, ToBasicBlockNormalForm)


class _Refusal(Exception):
    pass


def test_a_refusal_deep_inside_propagates_and_closes_the_suspended_steps():
    # A subclass may refuse a node that opens blocks; refused 10,000 steps deep, the error
    # comes out of visit as it was raised, with every suspended step closed.
    family = _Family("then", DEEP)
    func = family.program()
    innermost = func.body
    while isinstance(innermost.true_branch, relay.If):
        innermost = innermost.true_branch
    started = []

    class Refusing(ScopeFill):
        def rebuild_blocks(self, e):
            if e is innermost:
                raise _Refusal
            step = super().rebuild_blocks(e)
            started.append(step)
            return step

    scopes = binding_scopes(func)
    fill = Refusing(func, scopes.scope_lookup(), scopes.children)
    with pytest.raises(_Refusal):
        fill.visit(func)
    assert len(started) == DEEP - 1
    assert all(step.gi_frame is None for step in started)
