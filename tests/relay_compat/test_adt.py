"""TVM v0.18's test_adt.py cases: the prelude's functions on lists, options, trees and nats.

Written as a TVM user writes them (only the imports differ), with the
interpreter as executor, as TVM's file uses it.  TVM's tensor-array cases
live in test_tensor_array.py, ported next to this file.
"""
import pytest

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay import create_executor
from relaypass.relay.backend.interpreter import ConstructorValue
from relaypass.relay.prelude import Prelude
from relaypass.relay.testing import count as count_
from relaypass.relay.testing import make_nat_expr, make_nat_value

prelude = p = Prelude(tvm.IRModule({}))
p.mod.import_from_std("nat.rly")

dev = tvm.device("llvm", 0)

nat, z, s = p.mod.get_type("nat")
double = p.mod.get_global_var("nat_double")
add = p.mod.get_global_var("nat_add")
optional, some, none = p.mod.get_type("Option")
rlist, cons, nil = p.mod.get_type("List")
tree, rose = p.mod.get_type("Tree")


def count(e):
    return count_(p, e)


def run(expr):
    # The whole module (prelude and nat) is typed again for every expression, as in TVM.
    return create_executor(mod=prelude.mod, device=dev, target="llvm").evaluate(expr)


def to_list(value):
    assert isinstance(value, ConstructorValue)
    items = []
    while value.tag == cons.tag:
        items.append(value.fields[0])
        value = value.fields[1]
    assert value.tag == nil.tag
    return items


def nats(*values):
    """cons(n0, cons(n1, ... nil)) of nat expressions."""
    out = nil()
    for v in reversed(values):
        out = cons(make_nat_expr(prelude, v), out)
    return out


def scalar(value):
    return value.numpy().item()


def tree_to_dict(t):
    assert isinstance(t, ConstructorValue) and t.tag == rose.tag
    return {"member": t.fields[0], "children": [tree_to_dict(c) for c in to_list(t.fields[1])]}


@tvm.testing.uses_gpu
def test_nat_values_count_back():
    assert count(make_nat_value(p, 10)) == 10
    assert count(run(s(s(z())))) == 2


@tvm.testing.uses_gpu
def test_nat_constructors_have_type_nat():
    test_z = relay.GlobalVar("test_z")
    test_sz = relay.GlobalVar("test_sz")
    mod = prelude.mod.copy()
    mod[test_z] = relay.Function([], z())
    mod[test_sz] = relay.Function([], s(z()))
    typed = relay.transform.InferType()(mod)
    assert typed[test_z].body.checked_type == nat()
    assert typed[test_sz].body.checked_type == nat()


@tvm.testing.uses_gpu
def test_double_and_add():
    assert prelude.mod[double].checked_type == relay.FuncType([nat()], nat())
    assert count(run(double(s(z())))) == 2
    assert prelude.mod[add].checked_type == relay.FuncType([nat(), nat()], nat())
    assert count(run(add(s(z()), s(z())))) == 2


@tvm.testing.uses_gpu
def test_a_list_of_nats_has_type_list_of_nat():
    mod = prelude.mod.copy()
    gv = relay.GlobalVar("test_consz")
    mod[gv] = relay.Function([], cons(z(), nil()))
    assert relay.transform.InferType()(mod)[gv].body.checked_type == rlist(nat())


@tvm.testing.uses_gpu
def test_hd_and_tl_walk_a_list():
    items = nats(*range(10))
    got = []
    for _ in range(10):
        got.append(count(run(p.hd(items))))
        items = p.tl(items)
    assert got == list(range(10))


@tvm.testing.uses_gpu
def test_nth_with_int32_positions():
    items = nil()
    for i in reversed(range(10)):
        items = cons(relay.const(i), items)
    nth = prelude.mod.get_global_var("nth")
    assert [scalar(run(nth(items, relay.const(i)))) for i in range(10)] == list(range(10))


@tvm.testing.uses_gpu
def test_update_writes_each_position():
    items = nats(*[0] * 10)
    for i in range(10):
        items = p.update(items, relay.const(i), make_nat_expr(prelude, i))
    assert [count(run(p.nth(items, relay.const(i)))) for i in range(10)] == list(range(10))


@tvm.testing.uses_gpu
def test_length():
    a = relay.TypeVar("a")
    assert prelude.mod[p.length].checked_type == relay.FuncType(
        [rlist(a)], relay.scalar_type("int32"), [a]
    )
    assert scalar(run(p.length(cons(z(), cons(z(), cons(z(), nil())))))) == 3


@tvm.testing.uses_gpu
def test_map():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[p.map].checked_type == relay.FuncType(
        [relay.FuncType([a], b), rlist(a)], rlist(b), [a, b]
    )
    x = relay.Var("x")
    ones = to_list(run(p.map(relay.Function([x], s(x)), cons(z(), cons(z(), nil())))))
    assert [count(v) for v in ones] == [1, 1]


@tvm.testing.uses_gpu
def test_foldl_reverses_and_duplicates():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[p.foldl].checked_type == relay.FuncType(
        [relay.FuncType([a, b], a), a, rlist(b)], a, [a, b]
    )
    x, y = relay.Var("x"), relay.Var("y")
    rev_dup = relay.Function([y, x], cons(x, cons(x, y)))
    result = to_list(run(p.foldl(rev_dup, nil(), nats(1, 2, 3))))
    assert [count(v) for v in result] == [3, 3, 2, 2, 1, 1]


@tvm.testing.uses_gpu
def test_foldr_keeps_the_order():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[p.foldr].checked_type == relay.FuncType(
        [relay.FuncType([a, b], b), b, rlist(a)], b, [a, b]
    )
    x, y = relay.Var("x"), relay.Var("y")
    same = to_list(run(p.foldr(relay.Function([x, y], cons(x, y)), nil(), nats(1, 2, 3))))
    assert [count(v) for v in same] == [1, 2, 3]


@tvm.testing.uses_gpu
def test_foldr1_adds_nats():
    a = relay.TypeVar("a")
    assert prelude.mod[p.foldr1].checked_type == relay.FuncType(
        [relay.FuncType([a, a], a), rlist(a)], a, [a]
    )
    x, y = relay.Var("x"), relay.Var("y")
    assert count(run(p.foldr1(relay.Function([x, y], add(x, y)), nats(1, 2, 3)))) == 6


@tvm.testing.uses_gpu
def test_sum():
    int32 = relay.scalar_type("int32")
    assert prelude.mod[p.sum].checked_type == relay.FuncType([rlist(int32)], int32)
    assert scalar(run(p.sum(cons(relay.const(1), cons(relay.const(2), nil()))))) == 3


@tvm.testing.uses_gpu
def test_concat():
    a = relay.TypeVar("a")
    assert prelude.mod[p.concat].checked_type == relay.FuncType([rlist(a), rlist(a)], rlist(a), [a])
    catted = to_list(run(p.concat(nats(1, 2), nats(3, 4))))
    assert [count(v) for v in catted] == [1, 2, 3, 4]


@tvm.testing.uses_gpu
def test_filter_with_a_nested_pattern():
    a = relay.TypeVar("a")
    assert prelude.mod[p.filter].checked_type == relay.FuncType(
        [relay.FuncType([a], relay.scalar_type("bool")), rlist(a)], rlist(a), [a]
    )
    x = relay.Var("x", nat())
    more_than_one = relay.Function(
        [x],
        relay.Match(x, [
            relay.Clause(
                relay.PatternConstructor(s, [relay.PatternConstructor(s, [relay.PatternWildcard()])]),
                relay.const(True),
            ),
            relay.Clause(relay.PatternWildcard(), relay.const(False)),
        ]),
    )
    kept = to_list(run(p.filter(more_than_one, nats(1, 1, 3, 1, 5, 1))))
    assert [count(v) for v in kept] == [3, 5]


@tvm.testing.uses_gpu
def test_zip_stops_at_the_shorter_list():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[p.zip].checked_type == relay.FuncType(
        [rlist(a), rlist(b)], rlist(relay.TupleType([a, b])), [a, b]
    )
    lists = cons(nil(), cons(cons(nil(), nil()), cons(cons(nil(), cons(nil(), nil())), nil())))
    pairs = to_list(run(p.zip(nats(1, 2, 3), lists)))
    assert [(count(n), len(to_list(lst))) for n, lst in pairs] == [(1, 0), (2, 1), (3, 2)]
    pairs = to_list(run(p.zip(nats(4, 5), lists)))
    assert [(count(n), len(to_list(lst))) for n, lst in pairs] == [(4, 0), (5, 1)]
    pairs = to_list(run(p.zip(nats(4, 5), cons(nil(), nil()))))
    assert [(count(n), len(to_list(lst))) for n, lst in pairs] == [(4, 0)]


@tvm.testing.uses_gpu
def test_rev():
    a = relay.TypeVar("a")
    assert prelude.mod[p.rev].checked_type == relay.FuncType([rlist(a)], rlist(a), [a])
    assert [count(v) for v in to_list(run(p.rev(nats(1, 2, 3))))] == [3, 2, 1]


def count_down():
    x = relay.Var("x", nat())
    n = relay.Var("n", nat())
    return relay.Function([x], relay.Match(x, [
        relay.Clause(relay.PatternConstructor(s, [relay.PatternVar(n)]), some(relay.Tuple([n, x]))),
        relay.Clause(relay.PatternConstructor(z, []), none()),
    ]))


@pytest.mark.parametrize("unfold, expected", [("unfoldr", [3, 2, 1]), ("unfoldl", [1, 2, 3])])
def test_unfold(unfold, expected):
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[getattr(p, unfold)].checked_type == relay.FuncType(
        [relay.FuncType([a], optional(relay.TupleType([a, b]))), a], rlist(b), [a, b]
    )
    unfolded = to_list(run(getattr(p, unfold)(count_down(), make_nat_expr(prelude, 3))))
    assert [count(v) for v in unfolded] == expected


@pytest.mark.parametrize("name", ["map_accumr", "map_accuml"])
def test_map_accum_type(name):
    a, b, c = relay.TypeVar("a"), relay.TypeVar("b"), relay.TypeVar("c")
    assert prelude.mod[getattr(p, name)].checked_type == relay.FuncType(
        [relay.FuncType([a, b], relay.TupleType([a, c])), a, rlist(b)],
        relay.TupleType([a, rlist(c)]),
        [a, b, c],
    )


@tvm.testing.uses_gpu
def test_map_accumr_from_the_right():
    acc, x = relay.Var("acc", nat()), relay.Var("x", nat())
    step = relay.Function([acc, x], relay.Tuple([add(x, acc), add(x, acc)]))
    res = run(p.map_accumr(step, z(), nats(1, 2, 3)))
    assert count(res[0]) == 6
    assert [count(v) for v in to_list(res[1])] == [6, 5, 3]


@tvm.testing.uses_gpu
def test_map_accuml_from_the_left():
    acc, x = relay.Var("acc", nat()), relay.Var("x", nat())
    step = relay.Function([acc, x], relay.Tuple([add(x, acc), x]))
    res = run(p.map_accuml(step, z(), nats(1, 2, 3)))
    assert count(res[0]) == 6
    assert [count(v) for v in to_list(res[1])] == [3, 2, 1]


@tvm.testing.uses_gpu
def test_matching_options():
    x, y, v = relay.Var("x"), relay.Var("y"), relay.Var("v")
    condense = relay.Function([x, y], relay.Match(x, [
        relay.Clause(relay.PatternConstructor(some, [relay.PatternVar(v)]), cons(v, y)),
        relay.Clause(relay.PatternConstructor(none), y),
    ]))
    options = cons(some(make_nat_expr(prelude, 3)),
                   cons(none(), cons(some(make_nat_expr(prelude, 1)), nil())))
    assert [count(v) for v in to_list(run(p.foldr(condense, nil(), options)))] == [3, 1]


@tvm.testing.uses_gpu
def test_tmap():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    assert prelude.mod[p.tmap].checked_type == relay.FuncType(
        [relay.FuncType([a], b), tree(a)], tree(b), [a, b]
    )
    x = relay.Var("x")
    t = rose(z(), cons(rose(z(), nil()), cons(rose(z(), nil()), nil())))
    result = tree_to_dict(run(p.tmap(relay.Function([x], s(x)), t)))
    assert count(result["member"]) == 1
    assert len(result["children"]) == 2
    for child in result["children"]:
        assert count(child["member"]) == 1 and child["children"] == []


@tvm.testing.uses_gpu
def test_size():
    a = relay.TypeVar("a")
    assert prelude.mod[p.size].checked_type == relay.FuncType(
        [tree(a)], relay.scalar_type("int32"), [a]
    )
    root = rose(z(), cons(rose(z(), nil()), cons(rose(z(), nil()), nil())))
    t = rose(z(), cons(root, cons(root, cons(root, nil()))))
    assert scalar(run(p.size(t))) == 10


@tvm.testing.uses_gpu
def test_a_lone_wildcard_matches_anything():
    x = relay.Var("x", nat())
    copy = relay.Function([x], relay.Match(x, [relay.Clause(relay.PatternWildcard(), x)]), nat())
    assert count(run(copy(s(s(s(z())))))) == 3


@tvm.testing.uses_gpu
def test_clauses_are_tried_in_order():
    x = relay.Var("x", rlist(nat()))
    y, a = relay.Var("y"), relay.Var("a")
    first_wins = relay.Function([x], relay.Match(x, [
        relay.Clause(relay.PatternWildcard(), z()),
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(y), relay.PatternVar(a)]), y),
        relay.Clause(relay.PatternConstructor(nil), s(z())),
    ]), nat())
    assert count(run(first_wins(cons(s(z()), nil())))) == 0


@tvm.testing.uses_gpu
def test_nested_matches_flatten_a_list_of_lists():
    a = relay.TypeVar("a")
    x = relay.Var("x", type_annotation=rlist(rlist(a)))
    y, w, h, t = relay.Var("y"), relay.Var("w"), relay.Var("h"), relay.Var("t")
    flatten = relay.GlobalVar("flatten")
    inner = relay.Match(y, [
        relay.Clause(relay.PatternConstructor(nil), flatten(w)),
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(h), relay.PatternVar(t)]),
                     cons(h, flatten(cons(t, w)))),
    ])
    mod = prelude.mod.copy()
    mod[flatten] = relay.Function([x], relay.Match(x, [
        relay.Clause(relay.PatternConstructor(nil), nil()),
        relay.Clause(relay.PatternConstructor(cons, [relay.PatternVar(y), relay.PatternVar(w)]),
                     inner),
    ]), rlist(a), [a])
    nested = cons(nats(1, 2, 3), cons(nats(4, 5, 6), nil()))
    flat = to_list(create_executor(mod=mod, device=dev, target="llvm").evaluate(flatten(nested)))
    assert [count(v) for v in flat] == [1, 2, 3, 4, 5, 6]


@tvm.testing.uses_gpu
def test_a_variable_pattern_matches_the_whole_value():
    x, v = relay.Var("x"), relay.Var("v")
    ident = relay.Function([x], relay.Match(x, [relay.Clause(relay.PatternVar(v), v)]))
    assert to_list(run(ident(nil()))) == []
    assert [count(e) for e in to_list(run(ident(cons(z(), cons(z(), nil())))))] == [0, 0]


@tvm.testing.uses_gpu
def test_a_nested_constructor_pattern_takes_the_second_element():
    x = relay.Var("x", rlist(nat()))
    h1, h2, t = relay.Var("h1"), relay.Var("h2"), relay.Var("t")
    second = relay.Function([x], relay.Match(x, [
        relay.Clause(
            relay.PatternConstructor(cons, [
                relay.PatternVar(h1),
                relay.PatternConstructor(cons, [relay.PatternVar(h2), relay.PatternVar(t)]),
            ]),
            h2,
        ),
        relay.Clause(relay.PatternWildcard(), z()),
    ]))
    assert count(run(second(cons(s(z()), cons(s(s(z())), nil()))))) == 2


@tvm.testing.uses_gpu
def test_compose():
    n = relay.Var("n")
    inc = relay.Function([n], s(n))
    assert count(run(relay.Call(p.compose(inc, double), [s(s(z()))]))) == 5


@tvm.testing.uses_gpu
def test_iterate():
    expr = relay.Call(p.iterate(double, relay.const(2)), [make_nat_expr(prelude, 3)])
    assert count(run(relay.Function([], expr)())) == 12
