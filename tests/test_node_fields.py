"""Every node kind declares its fields once; the generic children/rebuild helpers follow from that.

What is checked: each declaration matches its class's constructor (every
kind, found by walking the class tree), rebuilding over the same children
gives an equal node, replacing one child replaces exactly it, and a node
kind defined here works with the generic helpers, structural equality and
hashing, and the traversals, without any code written for it.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from relaypass import relay
from relaypass.functor import ExprMutator, ExprVisitor
from relaypass.ir import (
    Any,
    Attrs,
    Call,
    Constant,
    Expr,
    Function,
    FuncType,
    GlobalTypeVar,
    GlobalVar,
    If,
    IncompleteType,
    Let,
    Node,
    Op,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    Span,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeCall,
    TypeVar,
    Var,
    structural_equal,
    structural_hash,
)
from relaypass.ir.fields import (
    DATA,
    EXPR,
    SPAN,
    VAR,
    children,
    fields,
    layout_of,
    map_children,
    rebuild,
    with_children,
    with_fields,
)
from relaypass.ir.structural import assert_structural_equal
from relaypass.ir.traversal import post_order
from relaypass.ir.types import SizeVar
from relaypass.ir.variables import bound_vars, free_vars

ABSTRACT = {"Node", "Expr", "BaseFunc", "Type", "TypeConstraint", "Pattern", "SymbolicDim",
            "_Division"}
"""Kinds no node is an instance of: they declare no fields."""

NOT_DECLARED = {"Attrs"}
"""An attribute record is a value with arbitrary named entries, compared as a whole."""


def _node_classes() -> list[type]:
    out, stack = [], [Node]
    while stack:
        cls = stack.pop()
        if cls.__module__.startswith("relaypass."):
            out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


def _samples() -> list[Node]:
    """One node of every kind, with every field set to something other than its default."""
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    t = TypeVar("T")
    add = Op.get("add")
    call = Call(add, [x, y], Attrs({"k": 1}), [TensorType((2, 3))], Span("s.rly", 1, 2))
    tup = Tuple([x, call])
    ref = RefCreate(x)
    v = Var("v")
    cond = relay.const(True)
    return [
        x, GlobalVar("f"), Constant(np.ones((2,), "float32")), tup, TupleGetItem(tup, 1), call,
        Function([x, y], call, TensorType((2, 3)), [t], {"Primitive": 1}),
        Let(v, call, Tuple([v, v])), If(cond, x, y), ref, RefRead(ref), RefWrite(ref, y), add,
        TensorType((1, Any()), "int8"), TupleType([TensorType(()), t]), t, GlobalTypeVar("G"),
        IncompleteType(), FuncType([t, TensorType(())], t, [t]), RefType(t), Any(),
        relay.TypeRelation(None, [t, TensorType(())], 1, Attrs({"k": 1})),
        Span("s.rly", 1, 2, 3, 4), *_adt_samples(), *_size_samples(),
    ]


def _size_samples() -> list[Node]:
    """A size variable, an expression of it, and the two kinds of division it may hold."""
    n = SizeVar("n", "int32")
    expr = (n + 1) // 2 + n % 3 * 4 + 1
    return [n, expr, *[a for _, m in expr.terms for a in m]]


def _adt_samples() -> list[Node]:
    """The nodes of algebraic data types: a list type, its constructors, a match over it."""
    box = GlobalTypeVar("Box")
    a = TypeVar("A")
    put = relay.Constructor("Put", [a, TypeCall(box, [a])], box, Span("s.rly", 2, 2))
    empty = relay.Constructor("Empty", [], box)
    data = relay.TypeData(box, [a], [put, empty], Span("s.rly", 1, 1))
    h, v = Var("h"), Var("v")
    deep = relay.PatternConstructor(put, [relay.PatternVar(h), relay.PatternWildcard()])
    clauses = [
        relay.Clause(relay.PatternTuple([deep, relay.PatternVar(v)]), Tuple([h, v])),
        relay.Clause(relay.PatternWildcard(Span("s.rly", 3, 3)), Tuple([])),
    ]
    match = relay.Match(Tuple([Var("p"), Var("q")]), clauses, False, Span("s.rly", 4, 4))
    return [TypeCall(box, [a]), data, put, match, *clauses, deep, relay.PatternVar(h), deep.patterns[1],
            clauses[0].lhs]


def _fresh_child(node: Node, i: int) -> Node:
    """A new node of the language of ``node``'s children."""
    if isinstance(node, Expr):
        return Var(f"fresh{i}")
    if isinstance(node, relay.Pattern):
        return relay.PatternWildcard()
    return TypeVar(f"F{i}")


def test_every_node_kind_declares_its_constructor_fields():
    seen = set()
    for cls in _node_classes():
        name = cls.__name__
        if name in ABSTRACT or name in NOT_DECLARED:
            assert cls._fields_ is None, name
            continue
        seen.add(name)
        layout = layout_of(cls)
        # What rebuilds call: the class, or its _from_fields_ when its constructor differs.
        params = list(inspect.signature(layout.build).parameters)
        assert list(layout.names) == params, f"{name}: fields {layout.names} vs constructor {params}"
        assert "_checked_type" not in layout.names and "checked_type" not in layout.names
        assert layout.cls is cls  # a subclass rebuilds as itself, not as its parent
    assert {"Var", "Call", "Function", "Let", "If", "Op", "FuncType", "TensorType", "Span"} <= seen


def test_samples_cover_every_kind_and_fields_read_back():
    kinds = {type(n).__name__ for n in _samples()}
    expected = {c.__name__ for c in _node_classes()} - ABSTRACT - NOT_DECLARED
    assert kinds >= expected
    for node in _samples():
        for name in layout_of(node).names:
            getattr(node, name)  # a declared field is an attribute of the node


@pytest.mark.parametrize("node", _samples(), ids=lambda n: type(n).__name__)
def test_rebuilding_over_the_same_children_gives_an_equal_node(node):
    kids = children(node)
    new = rebuild(node, kids)
    assert type(new) is type(node)
    assert new is not node
    assert children(new) == kids
    if isinstance(node, Expr):
        # (A rebuilt variable is another variable: compare free variables by position.)
        assert_structural_equal(new, node, map_free_vars=True)
        assert structural_hash(new, map_free_vars=True) == structural_hash(node, map_free_vars=True)
    for name in layout_of(node).names:
        a, b = getattr(new, name), getattr(node, name)
        assert a is b or a == b, name
    assert with_children(node, list(kids)) is node
    assert map_children(node, lambda k: k) is node
    assert with_fields(node) is not node


@pytest.mark.parametrize("node", [n for n in _samples() if children(n)], ids=lambda n: type(n).__name__)
def test_replacing_one_child_replaces_exactly_it(node):
    kids = children(node)
    layout = layout_of(node)
    others = [f.name for f in layout.fields if f not in layout.child_fields]
    for i in range(len(kids)):
        fresh = _fresh_child(node, i)
        new = with_children(node, [fresh if j == i else k for j, k in enumerate(kids)])
        assert new is not node and type(new) is type(node)
        new_kids = children(new)
        assert len(new_kids) == len(kids)
        for j, (a, b) in enumerate(zip(new_kids, kids)):
            assert (a is fresh) if j == i else (a is b)
        for name in others:
            assert getattr(new, name) is getattr(node, name), name


@pytest.mark.parametrize("node", _samples(), ids=lambda n: type(n).__name__)
def test_remap_visits_children_in_field_order_and_keeps_an_unchanged_node(node):
    layout = layout_of(node)
    seen = []

    def same(kid):
        seen.append(kid)
        return kid

    assert layout.remap(node, same, {}) is node
    assert seen == list(children(node))
    # Children found in the memo table are taken from it, not mapped again.
    memo = {kid: kid for kid in children(node)}
    seen.clear()
    assert layout.remap(node, same, memo) is node
    assert seen == []


@pytest.mark.parametrize("node", _samples(), ids=lambda n: type(n).__name__)
def test_walk_calls_on_each_child_not_in_the_memo_table_in_field_order(node):
    layout = layout_of(node)
    seen = []
    layout.walk(node, seen.append, {})
    assert seen == list(children(node))
    kids = children(node)
    if kids:
        seen.clear()
        layout.walk(node, seen.append, {kids[0]: None})
        assert seen == [k for k in kids if k is not kids[0]]


@pytest.mark.parametrize("node", [n for n in _samples() if children(n)], ids=lambda n: type(n).__name__)
def test_remap_replaces_each_child_it_maps_to_another(node):
    kids = children(node)
    layout = layout_of(node)
    for i in range(len(kids)):
        fresh = _fresh_child(node, i)
        memo = {kids[i]: fresh}
        new = layout.remap(node, lambda k: k, memo)
        assert new is not node and type(new) is type(node)
        assert all(
            (a is fresh) if kid is kids[i] else (a is kid) for a, kid in zip(children(new), kids)
        )
        assert with_children(node, list(children(new))) is not node


def test_rebuild_can_change_named_fields_too():
    x = relay.var("x", shape=(2,))
    func = Function([x], relay.negative(x))
    body = relay.exp(x)
    new = rebuild(func, (x, body), ret_type=TensorType((2,)))
    assert new.body is body and new.params == (x,) and new.ret_type == TensorType((2,))
    assert with_fields(func, ret_type=TensorType((2,))).body is func.body
    with pytest.raises(TypeError, match="no field 'retype'"):
        with_fields(func, retype=None)
    assert rebuild(func, (body,), ret_type=None).params == ()  # the lone sequence takes the rest
    with pytest.raises(ValueError, match="children"):
        rebuild(func, (), ret_type=None)


def test_a_call_may_get_more_arguments_and_keeps_everything_else():
    x, y = relay.var("x"), relay.var("y")
    call = Call(Op.get("concatenate"), [x], Attrs({"axis": 0}), None, Span("a", 1, 1))
    new = rebuild(call, (call.op, x, y))
    assert new.args == (x, y) and new.attrs is call.attrs and new.span is call.span


# --------------------------------------------------------------------------- a new kind


class Twice(Expr):
    """A made-up expression kind: ``value`` evaluated ``times`` times."""

    __slots__ = ("value", "times")
    _fields_ = fields(value=EXPR, times=DATA, span=SPAN)

    def __init__(self, value: Expr, times: int, span: Span | None = None):
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "_checked_type", None)


class Lam(Expr):
    """A made-up binding kind: a one-parameter function ``\\param. body``."""

    __slots__ = ("param", "body")
    _fields_ = fields(param=VAR, body=EXPR, span=SPAN)

    def __init__(self, param: Var, body: Expr, span: Span | None = None):
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "_checked_type", None)


class LoggedCall(Call):
    """A subclass of a declared kind inherits its declaration and rebuilds as itself."""

    __slots__ = ()


def test_a_new_kind_works_with_the_generic_helpers():
    x = relay.var("x", shape=(2,))
    node = Twice(relay.negative(x), 3)
    assert children(node) == (node.value,)
    new = with_children(node, [x])
    assert type(new) is Twice and new.value is x and new.times == 3
    assert with_children(node, [node.value]) is node
    assert with_fields(node, times=4).times == 4
    assert [type(n).__name__ for n in post_order(node)] == ["Op", "Var", "Call", "Twice"]
    assert free_vars(node) == [x]


def test_a_new_kind_compares_and_hashes_by_its_declaration():
    x = relay.var("x", shape=(2,))
    a, b = Twice(relay.negative(x), 3), Twice(relay.negative(x), 3)
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    c = Twice(relay.negative(x), 4)
    assert not structural_equal(a, c) and structural_hash(a) != structural_hash(c)
    with pytest.raises(AssertionError, match=r"at times: times: 3 vs 4"):
        assert_structural_equal(a, c)
    with pytest.raises(AssertionError, match=r"at value\.args\[0\]"):
        assert_structural_equal(a, Twice(relay.negative(relay.var("z", shape=(2,))), 3))


def test_a_new_binding_kind_compares_up_to_renaming():
    p, q = relay.var("p", shape=(2,)), relay.var("q", shape=(2,))
    f, g = Lam(p, relay.exp(p)), Lam(q, relay.exp(q))
    assert structural_equal(f, g) and structural_hash(f) == structural_hash(g)
    assert bound_vars(f) == [p] and free_vars(f) == []
    other = relay.var("o", shape=(2,))
    h = Lam(q, relay.exp(other))
    assert not structural_equal(f, h) and structural_hash(f) != structural_hash(h)
    wrong_type = Lam(relay.var("r", shape=(3,)), relay.exp(relay.var("r2", shape=(3,))))
    with pytest.raises(AssertionError, match=r"at param\.type_annotation\.shape\[0\]"):
        assert_structural_equal(f, wrong_type)


def test_a_subclass_of_a_kind_is_visited_and_rebuilt_as_itself():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    call = LoggedCall(Op.get("add"), [x, x])
    assert layout_of(LoggedCall).cls is LoggedCall

    class Swap(ExprMutator):
        def visit_var(self, var):
            return y if var is x else var

    out = Swap().visit(relay.negative(call))
    assert type(out.args[0]) is LoggedCall and out.args[0].args == (y, y)

    seen = []

    class Calls(ExprVisitor):
        def visit_call(self, c):
            seen.append(type(c).__name__)
            super().visit_call(c)

    Calls().visit(relay.negative(call))
    assert sorted(seen) == ["Call", "LoggedCall"]
