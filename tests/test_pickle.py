"""IR objects pickle, as TVM's do (through their JSON form).

Users send modules to worker processes (multiprocessing, Ray) and cache
them on disk with pickle; in TVM every Relay object pickles through
``save_json``.  Here too: shared nodes stay shared, a deep chain needs no
recursion, and what comes back is structurally equal to what went in.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.ir.structural import structural_equal


def _round_trip(obj):
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def test_a_typed_function_comes_back_equal_with_one_variable_per_variable():
    x = relay.var("x", shape=(2, 3), dtype="float32")
    w = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    y = relay.add(relay.nn.relu(x), w)
    func = relay.Function([x], relay.Tuple([y, relay.multiply(y, x)]))
    back = _round_trip(func)
    assert structural_equal(back, func, map_free_vars=False)
    # The parameter and its uses are one object, and the shared ``y`` is built once.
    assert back.body.fields[1].args[1] is back.params[0]
    assert back.body.fields[1].args[0] is back.body.fields[0]
    np.testing.assert_array_equal(back.body.fields[0].args[1].data.numpy(), w.data.numpy())


@pytest.mark.parametrize("make", [
    lambda: relay.TensorType((1, relay.Any(), 4), "int8"),
    lambda: relay.FuncType([relay.TensorType((2,), "float32")], relay.TupleType([])),
    lambda: relay.nn.softmax(relay.var("x", shape=(2, 2)), axis=1).attrs,
    lambda: relay.var("v", shape=(3,)),
], ids=["tensor type", "function type", "attributes", "variable"])
def test_types_attributes_and_variables_come_back_equal(make):
    obj = make()
    assert structural_equal(_round_trip(obj), obj, map_free_vars=True)


def test_a_module_keeps_its_global_variables_and_type_definitions():
    mod = tvm.IRModule()
    mod.import_from_std("prelude.rly")
    f = relay.GlobalVar("f")
    x = relay.var("x", shape=(), dtype="int32")
    mod[f] = relay.Function([x], relay.add(x, relay.const(1)))
    y = relay.var("y", shape=(), dtype="int32")
    mod["main"] = relay.Function([y], relay.Call(f, [relay.Call(f, [y])]))
    back = _round_trip(mod)
    assert tvm.ir.structural_equal(back, mod)
    f_back = back.get_global_var("f")
    assert back["main"].body.op is f_back  # the body calls the module's own @f
    assert back.get_global_type_var("List") is not None
    # Importing the prelude again is a no-op, as it is on the original.
    before = len(back.functions)
    back.import_from_std("prelude.rly")
    assert len(back.functions) == before
    out = relay.create_executor(mod=back).evaluate()(np.int32(5))
    assert int(out.numpy()) == 7


def test_a_100000_call_chain_pickles_without_recursion():
    x = relay.var("x", shape=(4,))
    e = x
    for i in range(100_000):
        e = relay.nn.relu(e) if i % 2 else relay.negative(e)
    back = _round_trip(relay.Function([x], e))
    depth, node = 0, back.body
    while not isinstance(node, relay.Var):
        node, depth = node.args[0], depth + 1
    assert depth == 100_000 and node is back.params[0]


def test_operators_stay_the_registered_operator():
    assert _round_trip(relay.op.get("nn.relu")) is relay.op.get("nn.relu")
