"""relay.analysis.detect_feature and Feature, as TVM v0.18's test_analysis_feature.py uses them.

TVM's two cases need the prelude (algebraic data types) and ``gradient``,
neither of which relaypass has; the cases here check the same rules on
programs relaypass can build: one feature per kind of node reached, fGraph
for a shared non-atomic node, fLetRec for a let whose value uses its own
variable, nothing inside a primitive function, a module's functions each on
their own.
"""
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.analysis import Feature, detect_feature
from relaypass.relay.testing import run_opt_pass

transform = relay.transform


def test_feature_values_are_tvms():
    assert [f.name for f in Feature] == [
        "fVar", "fGlobalVar", "fConstant", "fTuple", "fTupleGetItem", "fFunction", "fOp",
        "fCall", "fLet", "fIf", "fRefCreate", "fRefRead", "fRefWrite", "fConstructor",
        "fMatch", "fGraph", "fLetRec",
    ]
    assert [int(f) for f in Feature] == list(range(17))
    assert relay.analysis.feature.Feature is Feature


def test_tree_of_calls():
    x = relay.var("x", shape=(3,))
    f = relay.Function([x], relay.nn.relu(relay.add(x, relay.const(1.0))))
    assert detect_feature(f) == {
        Feature.fVar, Feature.fFunction, Feature.fCall, Feature.fOp, Feature.fConstant,
    }


def test_shared_call_is_a_graph_but_shared_atoms_are_not():
    x = relay.var("x", shape=(3,))
    one = relay.const(1.0)
    tree = relay.Function([x], relay.multiply(relay.add(x, one), relay.add(x, one)))
    assert Feature.fGraph not in detect_feature(tree)  # x, the constant and the op repeat

    shared = relay.add(x, one)
    graph = relay.Function([x], relay.multiply(shared, shared))
    assert Feature.fGraph in detect_feature(graph)


def test_every_kind_of_node():
    x = relay.var("x", shape=())
    r = relay.var("r")
    cond = relay.var("c", shape=(), dtype="bool")
    gv = relay.GlobalVar("g")
    body = relay.Let(
        r, relay.RefCreate(x),
        relay.If(cond, relay.RefRead(r), relay.TupleGetItem(relay.Tuple([x, gv(x)]), 0)),
    )
    write = relay.RefWrite(r, x)
    f = relay.Function([x, cond], relay.Tuple([body, relay.Let(r, relay.RefCreate(x), write)]))
    assert detect_feature(f) == {
        Feature.fVar, Feature.fGlobalVar, Feature.fTuple, Feature.fTupleGetItem,
        Feature.fFunction, Feature.fCall, Feature.fLet, Feature.fIf, Feature.fRefCreate,
        Feature.fRefRead, Feature.fRefWrite,
    }


def test_let_rec():
    n = relay.var("n", shape=(), dtype="int32")
    f = relay.var("f")
    loop = relay.Function(
        [n], relay.If(relay.equal(n, relay.const(0)), n, f(relay.subtract(n, relay.const(1))))
    )
    rec = relay.Let(f, loop, f(relay.const(3)))
    assert Feature.fLetRec in detect_feature(rec)

    g = relay.var("g")
    plain = relay.Let(g, relay.Function([n], n), g(relay.const(3)))
    assert Feature.fLetRec not in detect_feature(plain)
    # Used in the body only (after its value): no recursion either.
    assert Feature.fLetRec not in detect_feature(relay.Let(g, relay.Function([n], n), g))


def test_primitive_function_body_is_not_looked_into():
    x = relay.var("x", shape=(2,))
    inner = relay.Function([x], relay.Let(relay.var("t"), x, x)).with_attr("Primitive", 1)
    y = relay.var("y", shape=(2,))
    outer = relay.Function([y], inner(y))
    found = detect_feature(outer)
    assert Feature.fFunction in found and Feature.fLet not in found


def test_module_and_expression_together_in_either_order():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Let(relay.var("t"), x, x)))
    expr = relay.Tuple([relay.const(1.0)])
    both = {Feature.fVar, Feature.fFunction, Feature.fLet, Feature.fTuple, Feature.fConstant}
    assert detect_feature(expr, mod) == both
    assert detect_feature(mod, expr) == both
    assert detect_feature(mod) == {Feature.fVar, Feature.fFunction, Feature.fLet}


def test_node_shared_between_two_module_functions_is_not_a_graph():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    shared = relay.nn.relu(relay.const([1.0, 2.0]))
    mod = tvm.IRModule({
        "main": relay.Function([x], relay.add(x, shared)),
        "other": relay.Function([y], relay.add(y, shared)),
    })
    assert Feature.fGraph not in detect_feature(mod)


def test_normal_forms():
    one = relay.const(1.0)
    two = relay.add(one, one)
    f = relay.Function([], relay.multiply(two, two))
    assert Feature.fGraph in detect_feature(f) and Feature.fLet not in detect_feature(f)
    anf = run_opt_pass(f, transform.ToANormalForm())
    assert Feature.fLet in detect_feature(anf) and Feature.fGraph not in detect_feature(anf)
    gnf = run_opt_pass(anf, transform.ToGraphNormalForm())
    assert Feature.fLet not in detect_feature(gnf) and Feature.fGraph in detect_feature(gnf)


def test_deep_chains():
    x = relay.var("x", shape=())
    body = x
    for _ in range(100_000):
        body = relay.negative(body)
    assert detect_feature(relay.Function([x], body)) == {
        Feature.fVar, Feature.fFunction, Feature.fCall, Feature.fOp,
    }

    lets = x
    for i in range(100_000):
        v = relay.var(f"v{i}")
        lets = relay.Let(v, relay.negative(x), relay.Tuple([v, lets]))
    found = detect_feature(relay.Function([x], lets))
    assert Feature.fLet in found and Feature.fTuple in found
    assert Feature.fLetRec not in found and Feature.fGraph not in found


def test_bad_input():
    from relaypass.errors import RelayPassError

    x = relay.var("x")
    with pytest.raises(RelayPassError, match="expression or an IRModule, got int"):
        detect_feature(3)
    with pytest.raises(RelayPassError, match="at most one expression and one IRModule"):
        detect_feature(x, x)
