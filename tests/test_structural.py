"""Structural equality and hashing: alpha-equivalence, free variables, paths, deep programs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relaypass import relay
from relaypass.functor import ExprMutator
from relaypass.ir import (
    Any,
    Attrs,
    Call,
    Constant,
    Function,
    FuncType,
    GlobalVar,
    IncompleteType,
    IRModule,
    Let,
    Op,
    RefType,
    Span,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeKind,
    TypeVar,
    Var,
    assert_structural_equal,
    set_checked_type,
    structural_equal,
    structural_hash,
)
from relaypass.testing.strategies import FEATURES, modules, programs

F32 = TensorType((2, 3), "float32")


def both(a, b, map_free_vars=False):
    """Equality, checked to agree with hashing when it holds."""
    eq = structural_equal(a, b, map_free_vars)
    if eq:
        assert structural_hash(a, map_free_vars) == structural_hash(b, map_free_vars)
    return eq


def differ(a, b, map_free_vars=False):
    """Not equal, and (for these hand-picked differences) not hashing alike either."""
    return (not structural_equal(a, b, map_free_vars)
            and structural_hash(a, map_free_vars) != structural_hash(b, map_free_vars))


def fn_add_const(name="x", value=1.0, shape=(2, 3), dtype="float32"):
    x = relay.var(name, shape=shape, dtype=dtype)
    return relay.Function([x], relay.add(x, relay.const(np.full(shape, value, dtype))))


# --------------------------------------------------------------------------- alpha-equivalence


def test_alpha_equivalent_functions_are_equal():
    assert both(fn_add_const("x"), fn_add_const("y"))
    a, b = relay.var("a", F32), relay.var("b", F32)
    c, d = relay.var("c", F32), relay.var("d", F32)
    f = relay.Function([a, b], relay.subtract(a, b))
    g = relay.Function([c, d], relay.subtract(c, d))
    assert both(f, g)
    # Swapping the parameters is not a renaming.
    assert differ(f, relay.Function([d, c], relay.subtract(c, d)))


def test_let_variables_compare_up_to_renaming():
    def prog(n1, n2):
        x = relay.var("x", F32)
        v1, v2 = relay.var(n1), relay.var(n2)
        body = Let(v1, relay.nn.relu(x), Let(v2, relay.add(v1, x), relay.multiply(v2, v1)))
        return relay.Function([x], body)

    assert both(prog("a", "b"), prog("p", "q"))
    x = relay.var("x", F32)
    v1, v2 = relay.var("a"), relay.var("b")
    swapped = relay.Function(
        [x], Let(v1, relay.nn.relu(x), Let(v2, relay.add(v1, x), relay.multiply(v1, v2))))
    assert differ(prog("a", "b"), swapped)


def test_recursive_let_and_nested_functions():
    def prog(tag):
        f = relay.var("f" + tag)
        n = relay.var("n" + tag, F32)
        m = relay.var("m" + tag, F32)
        inner = relay.Function([m], relay.add(m, n))
        body = relay.Function([n], Call(inner, [Call(f, [n])]))
        return Let(f, body, f)

    assert both(prog("1"), prog("2"))


def test_type_annotations_of_variables_are_compared():
    x, y = relay.var("x", F32), relay.var("y")
    assert not structural_equal(relay.Function([x], x), relay.Function([y], y))
    x64 = relay.var("x", TensorType((2, 3), "float64"))
    assert differ(relay.Function([x], x), relay.Function([x64], x64))
    v, w = relay.var("v", F32), relay.var("w")
    p = relay.var("p", F32)
    assert differ(relay.Function([p], Let(v, p, v)), relay.Function([p], Let(w, p, w)))


def test_bound_and_free_variables_do_not_match():
    x, y = relay.var("x", F32), relay.var("y", F32)
    assert not structural_equal(relay.Function([x], x), relay.Function([x], y))
    assert not structural_equal(relay.Function([x], y), relay.Function([x], x))


# --------------------------------------------------------------------------- differences


def test_different_constants_are_not_equal():
    assert differ(fn_add_const(value=1.0), fn_add_const(value=2.0))
    assert differ(relay.const(1.0), relay.const(1.0, "float64"))
    assert differ(relay.const(np.zeros((2, 3), "float32")), relay.const(np.zeros((3, 2), "float32")))
    assert differ(relay.const(np.zeros((6,), "float32")), relay.const(np.zeros((2, 3), "float32")))
    assert both(relay.const(np.arange(6.0, dtype="float32")), relay.const(np.arange(6.0, dtype="float32")))
    nan = np.array([np.nan], "float32")
    assert both(relay.const(nan), relay.const(nan.copy()))


def test_different_attributes_are_not_equal():
    x = relay.var("x", shape=(2, 2))
    a = relay.concatenate([x, x], axis=0)
    b = relay.concatenate([x, x], axis=1)
    assert differ(a, b)
    assert both(a, relay.concatenate([x, x], axis=0))
    f = relay.Function([x], x)
    assert differ(f.with_attr("Primitive", 1), f.with_attr("Primitive", 0))
    assert differ(f.with_attr("Primitive", 1), f)
    assert both(f.with_attr("Primitive", 1), relay.Function([x], x).with_attr("Primitive", 1))


def test_different_types_shapes_and_dtypes_are_not_equal():
    assert differ(fn_add_const(shape=(2, 3)), fn_add_const(shape=(3, 2)))
    assert differ(fn_add_const(dtype="float32"), fn_add_const(dtype="float64"))
    assert both(TensorType((1, Any(), 3)), TensorType((1, Any(), 3)))
    assert differ(TensorType((1, Any(), 3)), TensorType((1, 2, 3)))
    assert differ(TensorType((1, 2)), TupleType([TensorType((1, 2))]))
    assert both(TupleType([F32, TupleType([])]), TupleType([F32, TupleType([])]))
    assert differ(TupleType([F32]), TupleType([F32, F32]))
    assert both(RefType(F32), RefType(TensorType((2, 3))))
    assert differ(RefType(F32), RefType(TensorType((2, 3), "int32")))
    # Incomplete types are variables (TVM): equal to themselves, or mapped with map_free_vars.
    hole = IncompleteType()
    assert both(hole, hole)
    assert not structural_equal(IncompleteType(), IncompleteType())
    assert both(IncompleteType(), IncompleteType(), map_free_vars=True)
    assert not structural_equal(IncompleteType(TypeKind.Type), IncompleteType(TypeKind.ShapeVar),
                                map_free_vars=True)


def test_function_types_compare_type_params_up_to_renaming():
    t1, t2, u = TypeVar("t"), TypeVar("s"), TypeVar("u")
    f1 = FuncType([t1, F32], t1, [t1])
    f2 = FuncType([t2, F32], t2, [t2])
    assert both(f1, f2)
    assert f1 == f2 and hash(f1) == hash(f2)  # FuncType.__eq__ is structural
    assert differ(f1, FuncType([t2, F32], F32, [t2]))
    assert not structural_equal(FuncType([t1], t1, [t1]), FuncType([t2], t2, [t2, u]))
    # Free type variables: equal only when identical, unless mapped.
    assert not structural_equal(FuncType([t1], F32), FuncType([t2], F32))
    assert both(FuncType([t1], F32), FuncType([t1], F32))
    assert both(FuncType([t1], F32), FuncType([t2], F32), map_free_vars=True)


def test_function_type_params_are_bound_in_annotations():
    def poly(name):
        t = TypeVar(name)
        x = relay.var("x", t)
        return Function([x], x, ret_type=t, type_params=[t])

    assert both(poly("a"), poly("b"))


def test_different_ops_arity_and_let_structure_are_not_equal():
    x, y = relay.var("x", F32), relay.var("y", F32)
    assert differ(relay.add(x, y), relay.subtract(x, y))
    assert differ(Tuple([x, y]), Tuple([x, y, x]))
    assert differ(Tuple([x]), TupleGetItem(Tuple([x]), 0))
    assert differ(TupleGetItem(Tuple([x, y]), 0), TupleGetItem(Tuple([x, y]), 1))
    v = relay.var("v")
    let_form = relay.Function([x], Let(v, relay.nn.relu(x), v))
    graph_form = relay.Function([x], relay.nn.relu(x))
    assert differ(let_form, graph_form)
    w = relay.var("w")
    nested = relay.Function([x], Let(v, relay.nn.relu(x), Let(w, v, w)))
    assert differ(let_form, nested)
    assert differ(relay.If(relay.const(True), x, y), relay.If(relay.const(True), y, x))
    assert differ(GlobalVar("f"), GlobalVar("g"))
    assert both(GlobalVar("f"), GlobalVar("f"))
    assert differ(relay.RefRead(relay.RefCreate(x)), relay.RefCreate(x))


def test_checked_type_and_span_are_ignored():
    x = relay.var("x", F32)
    a = relay.nn.relu(x)
    b = Call(Op.get("nn.relu"), [x], None, None, Span("file.relay", 3, 4))
    set_checked_type(a, F32)
    assert both(a, b)


def test_sharing_must_match_graph_equality():
    # TVM: a node used twice equals a node used twice, not two copies of it.
    x = relay.var("x", F32)
    shared = relay.nn.relu(x)
    dag = relay.add(shared, shared)
    other = relay.nn.relu(x)
    assert both(dag, relay.add(other, other))
    tree = relay.add(relay.nn.relu(x), relay.nn.relu(x))
    assert differ(dag, tree)
    assert not structural_equal(tree, dag)
    # Constants, projections, globals and operators are compared afresh wherever they occur.
    c = relay.const(1.0)
    assert both(relay.add(c, c), relay.add(relay.const(1.0), relay.const(1.0)))
    t = Tuple([x, x])
    item = TupleGetItem(t, 0)
    assert both(relay.add(item, item), relay.add(TupleGetItem(t, 0), TupleGetItem(t, 0)))
    # ... and so is the empty tuple; a non-empty tuple is a graph node.
    unit = Tuple([])
    assert both(Tuple([unit, unit]), Tuple([Tuple([]), Tuple([])]))
    pair = Tuple([x])
    assert not structural_equal(Tuple([pair, pair]), Tuple([Tuple([x]), Tuple([x])]))


def test_shared_binders_compare_as_graphs():
    def closure_call():
        a = relay.var("a", F32)
        return Call(relay.Function([a], relay.nn.relu(a)), [relay.var("x", F32)])

    cond = relay.var("c", "bool")
    shared = closure_call()
    dag = relay.If(cond, shared, relay.negative(shared))
    x_dag = shared.args[0]
    first, second = closure_call(), closure_call()
    copies = relay.If(cond, Call(first.op, [x_dag]), relay.negative(Call(second.op, [x_dag])))
    assert not structural_equal(dag, copies)
    again = Call(first.op, [x_dag])
    assert both(dag, relay.If(cond, again, relay.negative(again)))
    # Mappings are not scoped (TVM): after the function, %a still stands for %a2.
    a, a2 = relay.var("a", F32), relay.var("a2", F32)
    assert both(Tuple([relay.Function([a], a), a]), Tuple([relay.Function([a2], a2), a2]))
    assert not structural_equal(Tuple([relay.Function([a], a), a]),
                                Tuple([relay.Function([a2], a2), a]))


def test_identical_subtrees_are_mapped_to_themselves():
    # Comparing a shared subtree with itself maps its nodes to themselves, so a later
    # copy of one of them on the other side is a difference in sharing.
    x = relay.var("x", F32)
    y = relay.add(x, x)
    assert not structural_equal([y, relay.nn.relu(y)], [y, relay.nn.relu(relay.add(x, x))])
    assert both([y, relay.nn.relu(y)], [y, relay.nn.relu(y)])
    big = relay.Function([x], relay.nn.relu(y))
    assert structural_equal(big, big)


def test_heavily_shared_dag_stays_linear():
    def diamonds(name, n=2000):
        x = relay.var(name, F32)
        e = x
        for _ in range(n):
            e = relay.add(e, e)
        return relay.Function([x], e)

    a, b = diamonds("x"), diamonds("y")
    assert both(a, b)
    assert not structural_equal(a, diamonds("y", 1999))


# --------------------------------------------------------------------------- free variables


def test_free_variables_and_map_free_vars():
    x, y = relay.var("x", F32), relay.var("y", F32)
    a, b = relay.var("a", F32), relay.var("b", F32)
    assert both(relay.add(x, y), relay.add(x, y))
    assert not structural_equal(relay.add(x, y), relay.add(a, b))
    assert both(relay.add(x, y), relay.add(a, b), map_free_vars=True)
    # The mapping is consistent: x cannot stand for both a and b.
    assert not structural_equal(relay.add(x, x), relay.add(a, b), map_free_vars=True)
    assert not structural_equal(relay.add(x, y), relay.add(a, a), map_free_vars=True)
    assert both(relay.add(x, x), relay.add(a, a), map_free_vars=True)
    # Annotations of mapped free variables must agree.
    assert not structural_equal(x, relay.var("z"), map_free_vars=True)
    # Hashes: identity without mapping, order of first use with it.
    assert structural_hash(relay.add(x, y)) != structural_hash(relay.add(a, b))
    assert structural_hash(relay.add(x, y), True) == structural_hash(relay.add(a, b), True)


# --------------------------------------------------------------------------- modules


def make_module(const=1.0, extra=False):
    f_x = relay.var("x", F32)
    gv_f = GlobalVar("f")
    m_x = relay.var("x", F32)
    mod = IRModule()
    mod[gv_f] = relay.Function([f_x], relay.multiply(f_x, relay.const(np.float32(2.0))))
    main = relay.Function(
        [m_x], Call(gv_f, [m_x, Tuple([relay.const(np.float32(const))])]))
    mod["main"] = main
    if extra:
        mod["g"] = relay.Function([relay.var("y", F32)], relay.const(0.0))
    return mod


def test_module_equality():
    assert both(make_module(), make_module())  # different GlobalVar objects, same names
    assert differ(make_module(1.0), make_module(3.0))
    assert differ(make_module(), make_module(extra=True))
    mod = make_module()
    assert structural_equal(mod, mod.copy())
    assert not structural_equal(mod, mod.with_attr("executor", "graph"))


def test_assert_message_names_the_path_and_both_sides():
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(make_module(1.0), make_module(3.0))
    message = str(info.value)
    assert "main.body.args[1].fields[0].data" in message
    assert "1" in message and "3" in message
    lhs_line, rhs_line = message.splitlines()[1:3]
    assert lhs_line.strip().startswith("lhs:") and "1" in lhs_line
    assert rhs_line.strip().startswith("rhs:") and "3" in rhs_line

    with pytest.raises(AssertionError, match=r"only the right has @g"):
        assert_structural_equal(make_module(), make_module(extra=True))
    x = relay.var("x", shape=(2, 2))
    with pytest.raises(AssertionError, match=r"at args\[0\]\.attrs\.axis"):
        assert_structural_equal(relay.nn.relu(relay.concatenate([x, x], axis=0)),
                                relay.nn.relu(relay.concatenate([x, x], axis=1)))
    with pytest.raises(AssertionError, match=r"at params\[0\]\.type_annotation\.shape\[1\]"):
        assert_structural_equal(fn_add_const(shape=(2, 3)), fn_add_const(shape=(2, 4)))
    assert_structural_equal(fn_add_const("a"), fn_add_const("b"))


def test_assert_message_without_a_printer(monkeypatch):
    from relaypass.ir import expr as expr_module

    def broken(self, show_meta_data=True):
        raise ImportError("no printer")

    monkeypatch.setattr(expr_module.Expr, "astext", broken)
    x = relay.var("x", F32)
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(relay.Function([x], relay.nn.relu(x)),
                                relay.Function([x], relay.negative(x)))
    message = str(info.value)
    assert "body.op" in message and "nn.relu" in message and "negative" in message


def test_attrs_and_sequences_compare_directly():
    assert both(Attrs({"axis": 1}), Attrs({"axis": 1}))
    assert differ(Attrs({"axis": 1}), Attrs({"axis": 2}))
    x = relay.var("x", F32)
    assert both([relay.nn.relu(x), x], [relay.nn.relu(x), x])
    assert not structural_equal([x], [x, x])


# --------------------------------------------------------------------------- deep programs


def chain(n, name):
    add = Op.get("add")
    consts = [Constant(np.float32(i)) for i in range(7)]
    x = relay.var(name, TensorType((1,), "float32"))
    e = x
    for i in range(n):
        e = Call(add, [e, consts[i % 7]])
    return Function([x], e)


def let_chain(n, name, last=1.0):
    add = Op.get("add")
    one = Constant(np.float32(1.0))
    x = relay.var(name, TensorType((1,), "float32"))
    v = Var(f"{name}{n - 1}")
    body = v
    value = Call(add, [Var(f"{name}{n - 2}"), Constant(np.float32(last))])
    for i in range(n - 1, -1, -1):
        body = Let(v, value, body)
        if i:
            v = value.args[0]
            value = Call(add, [Var(f"{name}{i - 2}") if i > 1 else x, one])
    return Function([x], body)


def test_100k_call_chain_compares_and_hashes():
    a, b = chain(100_000, "x"), chain(100_000, "y")
    assert structural_equal(a, b)
    hash_a = structural_hash(a)
    assert hash_a == structural_hash(b)
    different = Function(b.params, relay.add(b.body.args[0], relay.const(np.float32(9.0))))
    assert not structural_equal(a, different)
    assert hash_a != structural_hash(different)
    with pytest.raises(AssertionError, match=r"at body\.args\[1\]\.data"):
        assert_structural_equal(a, different)


def test_100k_nested_lets_compare_and_hash():
    a, b = let_chain(100_000, "x"), let_chain(100_000, "y")
    assert structural_equal(a, b)
    hash_a = structural_hash(a)
    assert hash_a == structural_hash(b)
    c = let_chain(100_000, "z", last=5.0)
    assert not structural_equal(a, c)
    assert hash_a != structural_hash(c)
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(a, c)
    message = str(info.value)
    where = message.split(":")[0]
    assert "more" in where and where.endswith(".value.args[1].data") and len(where) < 1000


# --------------------------------------------------------------------------- random programs


class Renamer(ExprMutator):
    """A copy with every bound variable renamed and every constant a fresh object."""

    def __init__(self):
        super().__init__()
        self.fresh = {}

    def visit_var(self, var):
        new = self.fresh.get(var)
        if new is None:
            new = self.fresh[var] = Var(var.name_hint + "_r", var.type_annotation)
        return new

    def visit_constant(self, const):
        return Constant(const.data.numpy())


class Mutation(ExprMutator):
    """Changes the ``index``-th node of one kind; records whether it found one."""

    def __init__(self, kind, index):
        super().__init__()
        self.kind, self.index, self.done = kind, index, False

    def hit(self):
        self.index -= 1
        if self.index < 0 and not self.done:
            self.done = True
            return True
        return False

    def visit_constant(self, const):
        if self.kind == "constant" and self.hit():
            data = const.data.numpy()
            changed = ~data if data.dtype == np.bool_ else data + np.ones((), data.dtype)
            return Constant(np.asarray(changed, data.dtype))
        return const

    def visit_call(self, call):
        new = super().visit_call(call)
        if self.kind == "op" and isinstance(call.op, Op) and call.op.name in SWAP and self.hit():
            return Call(Op.get(SWAP[call.op.name]), new.args, new.attrs, new.type_args)
        return new

    def visit_function(self, func):
        new = super().visit_function(func)
        if self.kind == "annotation" and func.params and self.hit():
            p = new.params[0]
            ty = p.type_annotation
            other = TensorType((*ty.shape, 1), ty.dtype) if isinstance(ty, TensorType) else F32
            q = Var(p.name_hint, other)
            body = relay.Let(p, q, new.body)  # keeps the body well scoped
            return Function([q, *new.params[1:]], body, new.ret_type, new.type_params, new.attrs)
        return new


SWAP = {"add": "subtract", "subtract": "add", "multiply": "divide", "divide": "multiply",
        "nn.relu": "negative", "negative": "nn.relu", "less": "greater", "greater": "less"}


def mutate(func, kind, index):
    """``func`` with one change of ``kind``; a tuple around the body when there is nothing to change."""
    for i in (index, 0):
        mutation = Mutation(kind, i)
        changed = mutation.visit(func)
        if mutation.done:
            return changed
    return Function(func.params, Tuple([func.body]), None, func.type_params, func.attrs)


# 250 programs x (one renamed copy + three mutations) = 1,000 pairs.
@settings(max_examples=250, deadline=None)
@given(programs(size=(1, 15), features=FEATURES), st.integers(0, 5))
def test_hash_agrees_with_equality_on_random_pairs(func, index):
    copy = Renamer().visit(func)
    assert structural_equal(func, copy)
    assert structural_hash(func) == structural_hash(copy)
    assert_structural_equal(func, copy)
    for kind in ("constant", "op", "annotation"):
        changed = mutate(func, kind, index)
        assert not structural_equal(func, changed)
        assert not structural_equal(copy, changed)
        assert structural_hash(func) != structural_hash(changed)
        with pytest.raises(AssertionError, match="structural mismatch at "):
            assert_structural_equal(copy, changed)


@settings(max_examples=60, deadline=None)
@given(modules(size=(1, 10), features=FEATURES), modules(size=(1, 10), features=FEATURES))
def test_hash_agrees_with_equality_on_independent_modules(m1, m2):
    eq = structural_equal(m1, m2)
    assert eq == (structural_hash(m1) == structural_hash(m2))
    assert structural_equal(m1, m1) and structural_equal(m2, m2)
