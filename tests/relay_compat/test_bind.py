"""``relay.bind`` and ``relay.build_module.bind_params_by_name`` behave as Relay's.

Relay's rules: binding a function's parameters removes them (the others keep
their order) and appends the variables the new values bring in; an unchanged
function comes back as is; variables the expression binds itself cannot be
bound; ``bind_params_by_name`` ignores unknown names and refuses a name that
several parameters share.
"""

from __future__ import annotations

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.analysis.substitution import BindError
from relaypass.errors import RelayPassError
from relaypass.relay.build_module import bind_params_by_name

CHAIN = 100_000


def test_bind_function_params_and_expressions():
    x = relay.var("x")
    y = relay.var("y")
    z = relay.add(x, y)
    f = relay.Function([x, y], z)
    bound = relay.bind(f, {x: relay.const(1, "float32")})
    tvm.ir.assert_structural_equal(bound, relay.Function([y], relay.add(relay.const(1, "float32"), y)))

    expr = relay.bind(z, {y: x})
    tvm.ir.assert_structural_equal(expr, relay.add(x, x))
    assert expr.args[0] is x and expr.args[1] is x


def test_bound_params_leave_and_new_free_vars_are_appended():
    a, b, c = (relay.var(n, shape=(2,)) for n in "abc")
    w = relay.var("w", shape=(2,))
    f = relay.Function([a, b, c], relay.multiply(relay.add(a, b), c))
    g = relay.bind(f, {b: relay.subtract(w, a)})
    assert [p.name_hint for p in g.params] == ["a", "c", "w"]
    assert g.params[2] is w
    assert relay.analysis.free_vars(g) == []

    # A value that only uses variables the function already has adds nothing.
    h = relay.bind(f, {c: a})
    assert list(h.params) == [a, b]


def test_unchanged_function_is_returned_as_is():
    x = relay.var("x")
    f = relay.Function([x], relay.nn.relu(x))
    assert relay.bind(f, {}) is f
    assert relay.bind(f, {relay.var("other"): relay.const(1.0)}) is f


def test_function_attrs_and_ret_type_are_kept():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    f = relay.Function([x, y], relay.add(x, y), relay.TensorType((3,), "float32"))
    f = f.with_attr("Primitive", 1)
    g = relay.bind(f, {y: relay.const(np.ones(3, "float32"))})
    assert g.ret_type == relay.TensorType((3,), "float32")
    assert g.attrs["Primitive"] == 1


def test_shared_subexpressions_stay_shared():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    shared = relay.add(x, x)
    expr = relay.multiply(shared, shared)
    out = relay.bind(expr, {x: y})
    assert out.args[0] is out.args[1]
    assert out.args[0].args[0] is y


def test_inner_binders_cannot_be_bound():
    x = relay.var("x")
    y = relay.var("y")
    let = relay.Let(x, y, relay.nn.relu(x))
    with pytest.raises(BindError, match="let"):
        relay.bind(let, {x: relay.const(1.0)})
    assert relay.bind(let, {y: relay.const(1.0)}).value.data.numpy() == 1.0

    inner = relay.Function([x], relay.add(x, y))
    with pytest.raises(BindError, match="inner function"):
        relay.bind(relay.Call(inner, [y]), {x: y})
    with pytest.raises(BindError, match="inner function"):
        relay.bind(relay.Function([y], relay.Call(inner, [y])), {x: y})


def test_free_variable_of_a_function_that_is_not_a_parameter():
    # Relay loses track of such a variable and refuses; binding the body works.
    x = relay.var("x")
    y = relay.var("y")
    f = relay.Function([x], relay.add(x, y))
    with pytest.raises(BindError, match="%y"):
        relay.bind(f, {y: relay.const(2.0)})
    body = relay.bind(f.body, {y: relay.const(2.0)})
    assert isinstance(body.args[1], relay.Constant)


def test_bind_errors_are_relaypass_errors_and_types_are_checked():
    assert issubclass(BindError, RelayPassError)
    x = relay.var("x")
    with pytest.raises(TypeError):
        relay.bind(x, {"x": relay.const(1.0)})
    with pytest.raises(TypeError):
        relay.bind(x, {x: 1.0})
    with pytest.raises(TypeError):
        relay.bind("x", {})


def test_bind_params_by_name():
    a = relay.var("a", shape=(2,), dtype="float64")
    b = relay.var("b", shape=(2,))
    f = relay.Function([a, b], relay.add(a, relay.cast(b, "float64")))
    g = bind_params_by_name(f, {"a": np.array([1.0, 2.0]), "unknown": np.zeros(3)})
    assert [p.name_hint for p in g.params] == ["b"]
    const = g.body.args[0]
    assert isinstance(const, relay.Constant)
    assert np.asarray(const.data).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(const.data), [1.0, 2.0])

    listed = bind_params_by_name(f, {"b": [3.0, 4.0]})
    assert np.asarray(listed.body.args[1].args[0].data).dtype == np.float32

    assert bind_params_by_name(f, {}) is f
    assert relay.build_module.bind_params_by_name is bind_params_by_name


def test_bind_params_by_name_duplicate_names():
    a = relay.var("a", shape=(1,))
    aa = relay.var("a", shape=(1,))
    func = relay.Function([a, aa], a + aa)
    with pytest.raises(BindError, match="'a'"):
        bind_params_by_name(func, {"a": [1.0]})
    # A shared name that is not asked for is no problem.
    c = relay.var("c", shape=(1,))
    func = relay.Function([a, aa, c], a + aa + c)
    assert [p.name_hint for p in bind_params_by_name(func, {"c": [1.0]}).params] == ["a", "a"]


def test_bind_params_by_name_needs_a_function():
    x = relay.var("x")
    with pytest.raises(TypeError):
        bind_params_by_name(relay.nn.relu(x), {"x": [1.0]})


def test_bound_workload_computes_the_same():
    mod, params = relay.testing.mlp.get_workload(batch_size=1)
    bound = bind_params_by_name(mod["main"], params)
    assert [p.name_hint for p in bound.params] == ["data"]
    data = np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype("float32")
    args = [data] + [np.asarray(params[p.name_hint]) for p in mod["main"].params[1:]]
    expected = relay.create_executor("debug", mod=mod).evaluate()(*args)
    got = relay.create_executor("debug", mod=tvm.IRModule.from_expr(bound)).evaluate()(data)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


# --- deep programs: no recursion ----------------------------------------------------------------
def _chain(x, y, n=CHAIN):
    e = x
    for _ in range(n):
        e = relay.add(e, y)
    return e


def test_bind_a_100k_chain():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.Function([x, y], _chain(x, y))
    g = bind_params_by_name(f, {"y": np.ones(2, "float32")})
    assert [p.name_hint for p in g.params] == ["x"]
    node, depth = g.body, 0
    const = node.args[1]
    while isinstance(node, relay.Call):
        assert node.args[1] is const
        node, depth = node.args[0], depth + 1
    assert depth == CHAIN and node is x


def test_bind_a_100k_let_chain():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    z = relay.var("z", shape=(2,))
    lets = []
    prev = x
    for i in range(CHAIN):
        v = relay.var(f"v{i}", shape=(2,))
        lets.append((v, relay.add(prev, y)))
        prev = v
    body = prev
    for v, value in reversed(lets):
        body = relay.Let(v, value, body)
    out = relay.bind(body, {y: z})
    node, count = out, 0
    while isinstance(node, relay.Let):
        assert node.value.args[1] is z
        node, count = node.body, count + 1
    assert count == CHAIN
