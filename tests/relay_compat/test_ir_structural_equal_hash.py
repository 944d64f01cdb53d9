"""Structural equality and hashing give TVM's answers (TVM's test_ir_structural_equal_hash.py).

Every case checks equality both ways and that hashing agrees with it, as
TVM's ``consistent_equal`` does.  The cases about algebraic data types
(``TypeCall``, constructors, ``Match`` and its patterns) and about type
relations (``TypeRelation``, ``EnvFunc``) are not here: relaypass has
neither.  Beyond TVM's file: graph equality in more shapes, tuples against
lists, ``map_free_vars``, the path in an assertion's message, 100,000-deep
chains.
"""

from __future__ import annotations

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.testing import run_opt_pass


def consistent_equal(x, y, map_free_vars=False):
    """Equality, checked to be symmetric and to agree with the hashes."""
    equal = tvm.ir.structural_equal(x, y, map_free_vars)
    assert equal == tvm.ir.structural_equal(y, x, map_free_vars), f"not symmetric: {x} vs {y}"
    same_hash = tvm.ir.structural_hash(x, map_free_vars) == tvm.ir.structural_hash(y, map_free_vars)
    assert equal == same_hash, f"equal={equal} but hashes equal={same_hash}: {x} vs {y}"
    return equal


# --------------------------------------------------------------------------- types


def test_tensor_types_compare_by_shape_and_dtype():
    assert relay.TensorType((3, 4), "float32") == relay.TensorType((3, 4), "float32")
    assert relay.TensorType((3, 4), "float32") != relay.TensorType((3, 4, 5), "float32")
    assert relay.TensorType((), "float32") == relay.TensorType((), "float32")


def test_incomplete_types_are_equal_only_to_themselves():
    shape_hole = relay.IncompleteType(relay.TypeKind.ShapeVar)
    hole = relay.IncompleteType(relay.TypeKind.Type)
    other = relay.IncompleteType(relay.TypeKind.Type)
    assert hole == hole and shape_hole == shape_hole
    assert shape_hole != hole
    assert hole != other


def test_type_params_are_equal_when_identical_or_bound_alike():
    t1 = relay.TypeVar("v1", relay.TypeKind.Type)
    shape_var = relay.TypeVar("v2", relay.TypeKind.ShapeVar)
    t3 = relay.TypeVar("v3", relay.TypeKind.Type)
    assert t1 == t1 and shape_var == shape_var
    assert t1 != shape_var  # kinds differ
    assert t1 != t3  # free and different
    convert = tvm.runtime.convert
    # Function types bind their type parameters: then they compare up to renaming.
    ft1 = relay.FuncType(convert([]), t1, convert([t1]), convert([]))
    ft3 = relay.FuncType(convert([]), t3, convert([t3]), convert([]))
    wrong_kind = relay.FuncType(convert([]), shape_var, convert([shape_var]), convert([]))
    assert ft1 == ft3
    assert ft1 != wrong_kind


def test_func_types_compare_args_return_and_type_params():
    # TVM's case without its type relations (relaypass has no TypeRelation).
    t1 = relay.TensorType((1, 2), "float32")
    t2 = relay.TensorType((1, 2, 3), "float32")
    tp1 = relay.TypeVar("v1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("v2", relay.TypeKind.Type)
    tp3 = relay.TypeVar("v3", relay.TypeKind.ShapeVar)
    tp4 = relay.TypeVar("v3", relay.TypeKind.ShapeVar)
    ft = relay.FuncType([t1, t2], tp1, [tp1, tp3])
    assert ft == relay.FuncType([t1, t2], tp2, [tp2, tp4])
    assert ft != relay.FuncType([t1], tp1, [tp1, tp3])
    assert ft != relay.FuncType([t2, t1], tp1, [tp1, tp3])
    assert ft != relay.FuncType([t1, t2], tp2, [tp1, tp2, tp3])
    assert ft != relay.FuncType([t1, t2], tp1, [tp1, tp2, tp3, tp4])


def test_tuple_types_compare_fields_in_order():
    t1 = relay.TensorType((1, 2, 3), "float32")
    t2 = relay.TensorType((1, 2, 3, 4), "float32")
    tp1 = relay.TypeVar("v1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("v2", relay.TypeKind.Type)
    convert = tvm.runtime.convert
    tup = relay.TupleType(convert([t1, t2, tp1]))
    assert tup == relay.TupleType(convert([t1, t2, tp1]))
    assert tup != relay.TupleType(convert([t2, t1, tp1]))
    assert tup != relay.TupleType(convert([t1, t2, tp2]))


def test_type_vars_of_different_kinds_or_objects_differ():
    assert not consistent_equal(relay.TypeVar("v1", 6), relay.TypeVar("v2", 6))
    assert not consistent_equal(relay.TypeVar("v1", 0), relay.TypeVar("v2", 6))


def test_a_type_never_equals_an_expression():
    assert not consistent_equal(relay.TypeVar("v1", 6), relay.Var("v2"))


# --------------------------------------------------------------------------- expressions


def test_constants_compare_by_value():
    x = relay.const(1)
    assert consistent_equal(x, x)
    assert not consistent_equal(x, relay.const(2))
    assert consistent_equal(x, relay.const(1))


def test_vars_compare_by_binding_and_annotation():
    v1, v2 = relay.Var("v1"), relay.Var("v2")
    assert consistent_equal(v1, v1)
    assert not consistent_equal(v1, v2)
    # A let maps its variable.
    assert consistent_equal(relay.Let(v1, relay.const(1), v1), relay.Let(v2, relay.const(1), v2))
    assert not consistent_equal(relay.Let(v1, relay.const(1), v1), relay.Let(v1, relay.const(1), v2))
    # Annotations must agree.
    v3 = relay.Var("v3", relay.TensorType([], "int32"))
    v4 = relay.Var("v4", relay.TensorType([], "int32"))
    v5 = relay.Var("v5", relay.TensorType([], "int64"))
    l4 = relay.Let(v3, relay.const(1), v3)
    assert consistent_equal(l4, relay.Let(v4, relay.const(1), v4))
    assert not consistent_equal(l4, relay.Let(v5, relay.const(1), v5))
    assert not consistent_equal(relay.Let(v1, relay.const(1), v1), l4)  # one annotation missing


def test_global_vars():
    v1, v2 = relay.GlobalVar("v1"), relay.GlobalVar("v2")
    assert consistent_equal(v1, v1)
    assert not consistent_equal(v1, v2)


def test_tuples_compare_field_by_field():
    v0, v1, v2 = relay.Var("v0"), relay.Var("v1"), relay.Var("v2")
    assert consistent_equal(relay.Tuple([]), relay.Tuple([]))

    def fields(last=4, first=v0):
        return [first, relay.const(2), relay.const(3), relay.Tuple([relay.const(last)])]

    tup = relay.Tuple(fields())
    assert consistent_equal(tup, relay.Tuple(fields()))
    assert consistent_equal(relay.Let(v1, tup, v1), relay.Let(v2, relay.Tuple(fields()), v2))
    assert not consistent_equal(tup, relay.Tuple([*fields(first=v1), v2]))
    assert not consistent_equal(tup, relay.Tuple(fields(first=v1)[:3]))
    assert not consistent_equal(tup, relay.Tuple(fields(last=5, first=v1)))
    assert not consistent_equal(tup, relay.Tuple(fields(first=v2)))
    longer = relay.Tuple([v1, relay.const(2), relay.const(3),
                          relay.Tuple([relay.const(4), relay.const(5)])])
    assert not consistent_equal(tup, longer)


def test_tuple_get_item_compares_tuple_and_index():
    x, y = relay.Var("x"), relay.Var("y")
    assert not consistent_equal(relay.TupleGetItem(x, 1), relay.TupleGetItem(y, 1))
    assert not consistent_equal(relay.TupleGetItem(x, 1), relay.TupleGetItem(x, 2))
    assert consistent_equal(relay.TupleGetItem(x, 1), relay.TupleGetItem(x, 1))


def _add_sub_mul(names, func_name):
    x, *w = (relay.var(n, shape=(10, 10)) for n in names)
    body = relay.multiply(relay.subtract(relay.add(x, w[0]), w[1]), w[2])
    return relay.Function([x, *w], body).with_attr("FuncName", func_name)


def test_function_attributes_are_compared():
    assert not consistent_equal(_add_sub_mul(["x0", "w00", "w01", "w02"], "a"),
                                _add_sub_mul(["x1", "w10", "w11", "w12"], "b"))
    assert consistent_equal(_add_sub_mul(["x0", "w00", "w01", "w02"], "a"),
                            _add_sub_mul(["x1", "w10", "w11", "w12"], "a"))


def test_functions_compare_params_body_return_type_and_type_params():
    tt1 = relay.TensorType((1, 2, 3), "float32")
    tt2 = relay.TensorType((4, 5, 6), "int8")
    tt3 = relay.TupleType([tt1, tt2])
    v1, v2, v3, v4 = relay.Var("v1", tt1), relay.Var("v2", tt2), relay.Var("v3", tt3), relay.Var("v4", tt2)
    tp1 = relay.TypeVar("tp1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.Type)
    tp3 = relay.TypeVar("tp3", relay.TypeKind.ShapeVar)
    tp4 = relay.TypeVar("tp4", relay.TypeKind.ShapeVar)
    assert isinstance(relay.Constant(tvm.nd.array(np.ones(1))), relay.Constant)

    args = [relay.Var("v3", tt1), relay.Var("v4", tt2)]
    tps = [tp1, tp2]
    func = relay.Function([v1, v2], v1, tt2, tps)
    assert consistent_equal(func, relay.Function(args, args[0], tt2, tps))
    assert not consistent_equal(func, relay.Function([relay.Var("v4", tt2)], v4, tt2, tps))
    more = [relay.Var("v3", tt1), relay.Var("v4", tt2), relay.Var("v2", tt2)]
    assert not consistent_equal(func, relay.Function(more, v4, tt2, tps))
    assert not consistent_equal(func, relay.Function([v2, v1], v1, tt2, tps))
    assert not consistent_equal(func, relay.Function([v1, v3], v1, tt2, tps))
    assert not consistent_equal(func, relay.Function(args, v4, tt1, tps))
    assert not consistent_equal(func, relay.Function(args, v3, tt2, tps))
    assert not consistent_equal(func, relay.Function(args, v4, tt2, [tp1]))
    assert not consistent_equal(func, relay.Function(args, v4, tt2, [tp1, tp2, tp3]))
    assert not consistent_equal(func, relay.Function(args, v4, tt2, [tp2, tp1]))
    assert not consistent_equal(func, relay.Function(args, v4, tt2, [tp3, tp4]))
    assert not consistent_equal(func, relay.Function(args, relay.Tuple([v3, v4]), tt3))
    no_ret_type = relay.Function(args, v4, None, [tp1, tp2])
    assert consistent_equal(no_ret_type, no_ret_type)
    assert not consistent_equal(func, no_ret_type)
    assert not consistent_equal(no_ret_type, func)


def test_calls_compare_callee_args_attrs_and_type_args():
    v1, v2 = relay.Var("v1"), relay.Var("v2")
    attr1 = tvm.ir.make_node("attrs.TestAttrs", name="attr", padding=(3, 4))
    attr1_same = tvm.ir.make_node("attrs.TestAttrs", name="attr", padding=(3, 4))
    attr2 = tvm.ir.make_node("attrs.TestAttrs", name="attr", padding=(3, 4, 4))
    tt1 = relay.TensorType((1, 2, 3), "float32")
    tt2 = relay.TensorType((), "int8")
    basic_args = [relay.const(1), relay.const(2), v2, relay.Tuple([])]
    # The arguments written out again: equality must not rest on identity.
    call = relay.Call(v1, [relay.const(1), relay.const(2), v2, relay.Tuple([])], attr1, [tt1])
    assert consistent_equal(call, relay.Call(v1, basic_args, attr1, [tt1]))
    assert not consistent_equal(call, relay.Call(v2, basic_args, attr1, [tt1]))
    assert not consistent_equal(call, relay.Call(v1, [relay.const(1), relay.const(2), v2], attr1, [tt1]))
    reordered = [relay.const(2), relay.const(1), relay.Tuple([]), v2]
    assert not consistent_equal(call, relay.Call(v1, reordered, attr1, [tt1]))
    different = [relay.const(1), relay.const(2), relay.const(3)]
    assert not consistent_equal(call, relay.Call(v1, different, attr1, [tt1]))
    more = [*basic_args, relay.const(3), relay.const(4)]
    assert not consistent_equal(call, relay.Call(v1, more, attr1, [tt1]))
    assert not consistent_equal(call, relay.Call(v1, basic_args, attr2, [tt1]))
    assert consistent_equal(call, relay.Call(v1, basic_args, attr1_same, [tt1]))
    assert not consistent_equal(call, relay.Call(v1, basic_args, attr1))
    assert not consistent_equal(call, relay.Call(v1, basic_args, attr1, [tt1, tt2]))
    assert not consistent_equal(call, relay.Call(v1, basic_args, attr1, [tt2]))


def test_lets_compare_binding_value_and_body():
    tt1 = relay.TensorType((), "float32")
    v1, v2, v3 = relay.Var("v1"), relay.Var("v2"), relay.Var("v3")
    v1_typed = relay.Var("v1", tt1)
    let = relay.Let(v1, relay.const(2), v1)
    assert consistent_equal(let, relay.Let(v2, relay.const(2), v2))
    assert not consistent_equal(let, relay.Let(v2, relay.const(2), v3))
    assert not consistent_equal(let, relay.Let(v2, relay.const(3), v2))
    assert not consistent_equal(let, relay.Let(v2, relay.const(3), relay.const(12)))
    typed = relay.Let(v1_typed, relay.const(2), v1_typed)
    assert consistent_equal(typed, relay.Let(v1_typed, relay.const(2), v1_typed))
    assert not consistent_equal(let, typed)
    v_int8 = relay.Var("v1", relay.TensorType((), "int8"))
    assert not consistent_equal(typed, relay.Let(v_int8, relay.const(2), v_int8))


def test_ifs_compare_condition_and_branches():
    v1, v2 = relay.Var("v1"), relay.Var("v2")

    def if_(cond, then, other):
        return relay.If(cond, then, other)

    sample = if_(v1, relay.const(1), relay.Tuple([relay.const(2), relay.const(3)]))
    assert consistent_equal(sample, if_(v1, relay.const(1), relay.Tuple([relay.const(2), relay.const(3)])))
    assert not consistent_equal(sample, if_(v2, relay.const(1), relay.Tuple([relay.const(2), relay.const(3)])))
    assert not consistent_equal(sample, if_(v1, relay.const(2), relay.Tuple([relay.const(2), relay.const(3)])))
    assert not consistent_equal(sample, if_(v1, relay.const(1), relay.Tuple([])))


def test_operators_compare_by_name():
    assert consistent_equal(relay.op.get("add"), relay.op.get("add"))
    assert not consistent_equal(relay.op.get("add"), relay.op.get("take"))


def test_graph_equality_tells_a_dag_from_the_tree_copying_it():
    x = relay.var("x")
    y0 = relay.add(x, x)
    z0 = relay.add(y0, y0)
    y1 = relay.add(x, x)
    z1 = relay.add(y1, y1)
    z3 = relay.add(relay.add(x, x), relay.add(x, x))
    assert consistent_equal(z0, z1)
    # z0 computes add(x, x) once and uses it twice; z3 computes it twice.
    assert not consistent_equal(z0, z3)


def test_hash_differs_with_shapes():
    def add_fn(shape, names):
        a, b = (relay.var(n, shape=shape, dtype="float32") for n in names)
        return relay.Function([a, b], relay.add(a, b))

    assert consistent_equal(add_fn((10, 10), "xy"), add_fn((10, 10), "ab"))
    assert not consistent_equal(add_fn((10, 10), "xy"), add_fn((20, 10), "ab"))


def test_typed_functions_differ_by_an_attribute():
    def typed_add(names, attr=None):
        a, b = (relay.var(n, shape=(10, 10)) for n in names)
        fn = relay.Function([a, b], relay.add(a, b))
        if attr is not None:
            fn = fn.with_attr("TestAttribute", attr)
        return run_opt_pass(fn, relay.transform.InferType())

    plain, tagged = typed_add("ab"), typed_add("cd", "test")
    assert not consistent_equal(tagged, plain)
    assert not consistent_equal(plain, tagged)


def test_attribute_maps_keyed_by_parameters():
    # TVM's test_fn_vid_map with the variables as keys (relaypass variables have no vid).
    def get_fn():
        x = relay.var("x", shape=(10,), dtype="float32")
        return relay.Function([x], x).with_attr("dict", {x: 1})

    assert consistent_equal(get_fn(), get_fn())
    one, other = get_fn(), get_fn()
    stray = relay.var("x", shape=(10,), dtype="float32")
    assert not consistent_equal(one, relay.Function(other.params, other.body).with_attr("dict", {stray: 1}))
    assert not consistent_equal(one, other.with_attr("dict", {other.params[0]: 2}))


def test_let_bindings_compare_up_to_renaming_but_in_order():
    shape = (5, 5)

    def func(order, names=("a0", "a1")):
        sb = relay.ScopeBuilder()
        p0 = relay.var("p0", shape=shape)
        p1 = relay.var("p1", shape=shape)
        params = {"p0": p0, "p1": p1}
        first = sb.let(names[0], relay.add(params[order[0]], relay.const(1)))
        second = sb.let(names[1], relay.add(params[order[1]], relay.const(1)))
        sb.ret(sb.let("a2", relay.add(first, second)))
        return relay.Function([p0, p1], sb.get())

    tvm.ir.assert_structural_equal(func(("p0", "p1")), func(("p0", "p1"), names=("a1", "a0")))
    # The same sum, computed in another order of bindings, is another program.
    assert not tvm.ir.structural_equal(func(("p0", "p1")), func(("p1", "p0")))


# --------------------------------------------------------------------------- beyond TVM's file


def test_sharing_is_compared_in_every_kind_of_graph_node():
    x = relay.var("x", shape=(2,))
    fn = relay.Function([x], relay.nn.relu(x))
    call = relay.Call(fn, [x])
    other = relay.Call(relay.Function([x], relay.nn.relu(x)), [x])
    assert consistent_equal(relay.Tuple([call, call]), relay.Tuple([other, other]))
    assert not consistent_equal(relay.Tuple([call, call]), relay.Tuple([call, other]))
    ref = relay.RefCreate(x)
    assert not consistent_equal(relay.Tuple([ref, ref]), relay.Tuple([relay.RefCreate(x), relay.RefCreate(x)]))
    # Constants and projections are compared afresh: sharing them does not matter.
    c = relay.const(np.ones(2, "float32"))
    assert consistent_equal(relay.add(c, c), relay.add(relay.const(np.ones(2, "float32")),
                                                       relay.const(np.ones(2, "float32"))))
    t = relay.Tuple([x, x])
    assert consistent_equal(relay.Tuple([relay.TupleGetItem(t, 0)] * 2),
                            relay.Tuple([relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 0)]))


def test_a_tuple_equals_a_list_of_the_same_items():
    x, y = relay.var("x"), relay.var("y")
    assert consistent_equal([x, y], (x, y))
    assert consistent_equal(tvm.runtime.convert([x, y]), [x, y])
    assert not consistent_equal([x, y], (y, x))
    tt = relay.TensorType((2,), "float32")
    assert consistent_equal(relay.Call(x, [y], None, [tt]).type_args, [tt])


def test_type_args_of_operator_calls_are_not_compared():
    x = relay.var("x", shape=(2,))
    add = relay.op.get("add")
    tt = relay.TensorType((2,), "float32")
    assert consistent_equal(relay.Call(add, [x, x], None, [tt, tt]), relay.Call(add, [x, x]))
    f = relay.var("f")
    assert not consistent_equal(relay.Call(f, [x], None, [tt]), relay.Call(f, [x]))


def test_map_free_vars():
    x, y, a, b = (relay.var(n, shape=(2,)) for n in "xyab")
    assert not consistent_equal(relay.add(x, y), relay.add(a, b))
    assert consistent_equal(relay.add(x, y), relay.add(a, b), map_free_vars=True)
    # The mapping is one to one, and stays for the whole comparison.
    assert not consistent_equal(relay.add(x, x), relay.add(a, b), map_free_vars=True)
    assert not consistent_equal(relay.add(x, y), relay.add(a, a), map_free_vars=True)
    assert consistent_equal(relay.Tuple([relay.add(x, y), x]), relay.Tuple([relay.add(a, b), a]),
                            map_free_vars=True)
    # Annotations of mapped variables must agree.
    assert not consistent_equal(x, relay.var("z", shape=(3,)), map_free_vars=True)
    # Free type variables too.
    t, u = relay.TypeVar("t"), relay.TypeVar("u")
    assert not consistent_equal(relay.FuncType([t], t), relay.FuncType([u], u))
    assert consistent_equal(relay.FuncType([t], t), relay.FuncType([u], u), map_free_vars=True)


def test_assertion_is_a_value_error_naming_the_path():
    x = relay.var("x", shape=(2, 2))
    lhs = relay.Function([x], relay.nn.relu(relay.concatenate([x, x], axis=0)))
    y = relay.var("y", shape=(2, 2))
    rhs = relay.Function([y], relay.nn.relu(relay.concatenate([y, y], axis=1)))
    with pytest.raises(ValueError, match=r"at body\.args\[0\]\.attrs\.axis"):
        tvm.ir.assert_structural_equal(lhs, rhs)
    with pytest.raises(AssertionError):
        tvm.ir.assert_structural_equal(lhs, rhs)
    y0 = relay.add(x, x)
    with pytest.raises(ValueError, match=r"at args\[1\]: sharing differs"):
        tvm.ir.assert_structural_equal(relay.add(y0, y0), relay.add(relay.add(x, x), relay.add(x, x)))


def test_100k_chains_compare_and_hash():
    def chain(name, n=100_000, shared=True):
        x = relay.var(name, shape=(1,))
        e = x
        for _ in range(n):
            e = relay.add(e, e) if shared else relay.nn.relu(e)
        return relay.Function([x], e)

    assert consistent_equal(chain("a"), chain("b"))
    assert consistent_equal(chain("a", shared=False), chain("b", shared=False))
    assert not consistent_equal(chain("a"), chain("b", n=99_999))
