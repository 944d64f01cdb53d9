"""relay.transform.LambdaLift on the cases of TVM v0.18's test_pass_lambda_lift.py, written as a TVM user.

The facts: a local function without free variables becomes one new global;
a closure becomes a global that builds it (marked ``Closure``) and so does
the function it is returned from; a let-bound recursive loop becomes one
global that calls itself.  Beyond TVM's counts, the cases check the lifted
program computes what the original did, on the interpreter.
"""
import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay import transform


def run(mod, *args):
    return relay.create_executor(mod=mod).evaluate()(*args).numpy()


def lift(mod):
    return transform.LambdaLift()(relay.transform.InferType()(mod))


def test_basic():
    mod = tvm.IRModule()
    x2, y2 = relay.var("x2", shape=(10, 5)), relay.var("y2", shape=(1, 5))
    inner = relay.Function([x2, y2], relay.op.add(x2, y2))
    x1, y1 = relay.var("x1", shape=(10, 5)), relay.var("y1", shape=(1, 5))
    mod["main"] = relay.Function([x1, y1], inner(x1, y1))
    new_mod = lift(mod)
    assert len(new_mod.functions) == 2
    # main calls the lifted global, which holds the inner function unchanged.
    (lifted,) = [gv for gv in new_mod.get_global_vars() if gv.name_hint != "main"]
    assert new_mod["main"].body.op.same_as(lifted)
    assert not new_mod[lifted].attrs.get("Closure")
    a = np.ones((10, 5), "float32")
    b = np.arange(5, dtype="float32").reshape(1, 5)
    np.testing.assert_allclose(run(relay.transform.InferType()(new_mod), a, b), a + b)


def test_closure():
    mod = tvm.IRModule()
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    inner = relay.Function([x], x + y)
    outer = relay.Function([y], inner)
    clo = outer(relay.ones(shape=(2,), dtype="float32"))
    mod["main"] = relay.Function([], relay.Call(clo, [relay.zeros(shape=(2,), dtype="float32")]))
    new_mod = lift(mod)
    assert len(new_mod.functions) == 3
    closures = [gv for gv, f in new_mod.functions.items() if f.attrs.get("Closure")]
    assert len(closures) == 1
    # The closure's global takes the captured %y and returns the inner function.
    closure = new_mod[closures[0]]
    assert [p.name_hint for p in closure.params] == ["y"]
    assert isinstance(closure.body, relay.Function)
    np.testing.assert_allclose(run(relay.transform.InferType()(new_mod)), [1.0, 1.0])


def test_recursive():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(2,))
    i = relay.var("i", shape=(), dtype="int32")
    s = relay.var("s", shape=(2,))
    loop = relay.var("while_loop")
    sb = relay.scope_builder.ScopeBuilder()
    with sb.if_scope(i < relay.const(10, dtype="int32")):
        sb.ret(loop(i + relay.const(1, dtype="int32"), s + x))
    with sb.else_scope():
        sb.ret(s)
    func = relay.Function([i, s], sb.get())
    ret = relay.Let(loop, func, loop(relay.const(0, dtype="int32"), relay.zeros(shape=(2,), dtype="float32")))
    mod["main"] = relay.Function([x], ret)
    new_mod = lift(mod)
    assert len(new_mod.functions) == 2
    # No local function is left, and the loop still adds x ten times.
    assert relay.analysis.well_formed(new_mod["main"])
    np.testing.assert_allclose(
        run(relay.transform.InferType()(new_mod), np.array([1.0, 2.0], "float32")), [10.0, 20.0]
    )
