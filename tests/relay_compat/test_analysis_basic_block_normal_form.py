"""relay.analysis.check_basic_block_normal_form on the cases of TVM v0.18's test_analysis_basic_block_normal_form.py.

The facts: dataflow in one block and a let of a variable are in the normal
form; a value (a variable, a computed value) reached from two branches of
an If without a let binding it is not, nor is one shared by two local
functions (returned in a tuple, or chosen by an If); binding it with a let
before the If makes the program valid.  TVM marks the invalid cases
``xfail(raises=TVMError)``; here they assert the error (a ``TVMError``, so
TVM's ``except`` clauses catch it) and what it names.
"""
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.analysis import check_basic_block_normal_form


def not_in_normal_form(expr, named):
    with pytest.raises(tvm.error.TVMError, match="not in basic block normal form") as info:
        check_basic_block_normal_form(expr)
    assert named in str(info.value)


def test_one_block():
    x = relay.var("x")
    y = relay.add(x, x)
    assert check_basic_block_normal_form(relay.add(x, y))


def test_let():
    x, y = relay.var("x"), relay.var("y")
    assert check_basic_block_normal_form(relay.Let(y, x, y))


def shared_in_branches():
    cond = relay.var("cond", dtype="bool", shape=())
    shared = relay.var("shared")
    return shared, relay.If(cond, shared, relay.add(shared, shared))


def test_invalid_if():
    # %shared is reached from both branches first from inside the true one.
    _, body = shared_in_branches()
    not_in_normal_form(body, "%shared")


def test_valid_if():
    shared, body = shared_in_branches()
    bound = relay.var("shared_bound", shape=(1,), dtype="float32")
    assert check_basic_block_normal_form(relay.Let(shared, bound, body))


def if_of_shared_value(bound):
    x = relay.var("x", shape=(), dtype="float32")
    one, two = relay.const(1, dtype="float32"), relay.const(2, dtype="float32")
    v1 = relay.var("v1") if bound else relay.add(x, one)
    body = relay.If(relay.equal(x, two), relay.multiply(v1, two), relay.multiply(v1, one))
    if bound:
        body = relay.Let(v1, relay.add(x, one), body)
    return relay.Function([x], body)


def test_invalid_if2():
    not_in_normal_form(if_of_shared_value(bound=False), "add(%x, 1")


def test_valid_if2():
    assert check_basic_block_normal_form(if_of_shared_value(bound=True))


def two_functions_sharing():
    x, y, z = (relay.var(n, shape=(1,), dtype="float32") for n in "xyz")
    x2 = relay.add(x, x)
    return relay.Function([x], relay.Tuple([relay.Function([y], relay.add(x2, y)),
                                            relay.Function([z], relay.add(x2, z))]))


def test_func():
    # TVM's test_higher_order_return checks this same program.
    not_in_normal_form(two_functions_sharing(), "add(%x, %x)")


def test_higher_order_nested():
    x = relay.var("x", dtype="float32", shape=(1,))
    s = relay.var("s", dtype="float32", shape=(1,))
    shared = relay.add(s, s)
    f = relay.Var("f", relay.FuncType([], relay.scalar_type("bool")))
    z = relay.Var("z")
    body = relay.If(f(), relay.Function([x], relay.add(x, shared)),
                    relay.Function([z], relay.add(z, shared)))
    not_in_normal_form(relay.Function([f, s], body), "add(%s, %s)")


def test_a_value_computed_in_the_condition_may_be_reused_in_a_branch():
    # First reached outside the branches: its block already encloses every use.
    x = relay.var("x", shape=(), dtype="float32")
    c = relay.less(x, relay.const(0.0))
    assert check_basic_block_normal_form(relay.Function([x], relay.If(c, c, relay.const(False))))


def test_a_value_first_used_in_a_branch_then_after_the_if_is_not():
    x = relay.var("x", shape=(), dtype="float32")
    c = relay.var("c", shape=(), dtype="bool")
    v = relay.exp(x)
    body = relay.add(relay.If(c, v, relay.const(1.0)), v)
    not_in_normal_form(relay.Function([x, c], body), "exp(%x)")


def test_not_an_expression():
    with pytest.raises(TypeError, match="Relay expression"):
        check_basic_block_normal_form(tvm.IRModule())
