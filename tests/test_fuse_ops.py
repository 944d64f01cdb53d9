"""FuseOps: Relay's own examples as before/expected pairs, the interpreter, limits and scale.

Each ``test_relay_*`` reproduces an example of Relay's ``test_pass_fuse_ops.py``:
``before`` is fused, ``expected`` is typed, and the two must be structurally
equal.  Shapes are smaller where the size does not matter (the interpreter runs
every example) and ``left_shift`` is ``subtract`` (the same broadcast pattern).
Every example is also run by the interpreter before and after fusion, at fuse
levels 0 and 2.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relaypass import relay
from relaypass.ir.expr import Call, Function, Tuple, TupleGetItem, Var
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay import analysis, transform
from relaypass.testing import random_inputs
from relaypass.testing.strategies import FEATURES, modules
from relaypass.transform import PassContext, get_pass
from relaypass_std.fuse_ops import (
    MAX_DEPTH_KEY,
    MAX_FUNCTION_ARGS_KEY,
    FuseOps,
    FuseOpsError,
    fuse_ops,
)
from relaypass_std.infer_type import infer_type_module


# --- helpers -------------------------------------------------------------------------------
def run_opt_pass(expr, opt_pass):
    """Relay's ``tvm.relay.testing.run_opt_pass``: run on a module made of ``expr``."""
    mod = IRModule.from_expr(expr)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, Function) else entry.body


def infer(expr):
    return run_opt_pass(expr, transform.InferType())


def fused(expr, level=2, config=None):
    with PassContext(config=config or {}):
        return run_opt_pass(expr, transform.FuseOps(fuse_opt_level=level))


def primitive(func: Function) -> Function:
    return func.with_attr("Primitive", 1)


def assert_same_results(before: Function, after: Function, seed: int = 0) -> None:
    """The interpreter computes the same value (bit for bit) from the same random inputs."""
    before = infer(before)  # parameters without annotations get their inferred types
    args = random_inputs(before, seed)
    expected = relay.create_executor(mod=IRModule.from_expr(before)).evaluate()(*args)
    actual = relay.create_executor(mod=IRModule.from_expr(after)).evaluate()(*args)
    _assert_values_equal(expected, actual)


def _assert_values_equal(a, b) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_values_equal(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def check_example(before: Function, expected: Function, level: int = 2, config=None) -> Function:
    """Fuse ``before``; compare with ``expected`` (typed) and run both fuse levels."""
    after = fused(before, level, config)
    assert_structural_equal(after, infer(expected))
    assert not analysis.free_vars(after)
    assert_same_results(before, after)
    assert_same_results(before, fused(before, 0))
    return after


def calls_of(expr) -> list[Call]:
    found: list[Call] = []
    analysis.post_order_visit(expr, lambda e: found.append(e) if isinstance(e, Call) else None)
    return found


def primitive_functions(expr) -> list[Function]:
    found: list[Function] = []

    def visit(e):
        if isinstance(e, Function) and e.attrs.get("Primitive"):
            found.append(e)

    analysis.post_order_visit(expr, visit)
    return found


# --- Relay's examples -------------------------------------------------------------------------
def test_relay_fuse_simple():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        z = relay.exp(y)
        w = relay.squeeze(z)
        return relay.Function([x], w)

    def expected():
        x = relay.var("p", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        z = relay.exp(y)
        w = relay.squeeze(z)
        f1 = primitive(relay.Function([x], w))
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f1, [x]))

    check_example(before(), expected())
    # Without fuse_opt_level the context's opt_level (2 by default) decides.
    after = run_opt_pass(before(), transform.FuseOps())
    assert_structural_equal(after, infer(expected()))


def test_relay_conv2d_fuse():
    dshape = (1, 16, 8, 8)

    def before():
        x = relay.var("x", shape=dshape)
        x = relay.add(x, relay.const(1, "float32"))
        y = relay.nn.conv2d(x, relay.var("w1"), kernel_size=(3, 3), padding=(1, 1), channels=16)
        # this is the next dominator.
        y1 = relay.add(relay.const(1, "float32"), y)
        y = relay.add(y, y1)
        # second path
        z2 = relay.nn.conv2d(y, relay.var("w2"), kernel_size=(1, 1), padding=(0, 0), channels=16)
        z3 = relay.nn.conv2d(y, relay.var("w3"), kernel_size=(3, 3), padding=(1, 1), channels=16)
        # add can only be fused to z1
        z = relay.add(z2, z3)
        return relay.Function(analysis.free_vars(z), z)

    def expected():
        # segment 0
        x = relay.var("p0", shape=dshape)
        f0 = primitive(relay.Function([x], relay.add(x, relay.const(1, "float32"))))
        # segment 1
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1")
        y = relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), channels=16)
        y1 = relay.add(relay.const(1, "float32"), y)
        y = relay.add(y, y1)
        f1 = primitive(relay.Function([x, w], y))
        # segment 2
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1")
        z2 = relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), channels=16)
        f2 = primitive(relay.Function([x, w], z2))
        # segment 3
        x = relay.var("p0", shape=dshape)
        w = relay.var("p1")
        offset = relay.var("p2", shape=dshape)
        z3 = relay.nn.conv2d(x, w, kernel_size=(1, 1), padding=(0, 0), channels=16)
        z3 = relay.add(z3, offset)
        f3 = primitive(relay.Function([x, w, offset], z3))
        # compose
        x = relay.var("x", shape=dshape)
        y = relay.Call(f0, [x])
        y = relay.Call(f1, [y, relay.var("w1")])
        z2 = relay.Call(f2, [y, relay.var("w3")])
        z3 = relay.Call(f3, [y, relay.var("w2"), z2])
        return relay.Function(analysis.free_vars(z3), z3)

    check_example(before(), expected())


def test_relay_concatenate():
    dshape = (1, 4, 8, 8)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        upsampled = relay.nn.upsampling(pooled, scale_h=2, scale_w=2, layout="NCHW")
        concat = relay.concatenate((upsampled, x), axis=1)
        out = relay.add(concat, relay.const(1, "float32"))
        return relay.Function(analysis.free_vars(out), out)

    def expected():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        f0 = primitive(relay.Function([x], pooled))

        p0 = relay.var("p0", shape=(dshape[0], dshape[1], dshape[2] // 2, dshape[3] // 2))
        p1 = relay.var("p1", shape=dshape)
        upsampled = relay.nn.upsampling(p0, scale_h=2, scale_w=2, layout="NCHW")
        concat = relay.concatenate((upsampled, p1), axis=1)
        out = relay.add(concat, relay.const(1, "float32"))
        f1 = primitive(relay.Function([p0, p1], out))

        x = relay.var("x", shape=dshape)
        y = relay.Call(f0, [x])
        return relay.Function([x], relay.Call(f1, [y, x]))

    assert not analysis.free_vars(fused(before(), 0))
    check_example(before(), expected())


def test_relay_tuple_root():
    dshape = (1, 4, 8, 8)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        upsampled = relay.nn.upsampling(pooled, scale_h=2, scale_w=2, layout="NCHW")
        out = relay.Tuple((upsampled, x))
        return relay.Function(analysis.free_vars(out), out)

    def expected():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        f0 = primitive(relay.Function([x], pooled))

        p0 = relay.var("p0", shape=(dshape[0], dshape[1], dshape[2] // 2, dshape[3] // 2))
        upsampled = relay.nn.upsampling(p0, scale_h=2, scale_w=2, layout="NCHW")
        f1 = primitive(relay.Function([p0], upsampled))

        x = relay.var("x", shape=dshape)
        y = relay.Call(f0, [x])
        z = relay.Call(f1, [y])
        return relay.Function([x], relay.Tuple((z, x)))

    check_example(before(), expected())


def test_relay_stop_fusion():
    dshape = (10, 20)

    def before():
        x = relay.var("x", shape=dshape)
        y = relay.add(x, relay.const(1, "float32"))
        y = relay.annotation.stop_fusion(y)
        z = relay.exp(y)
        return relay.Function([x], z)

    def expected():
        x = relay.var("p0", shape=dshape)
        f1 = primitive(relay.Function([x], relay.add(x, relay.const(1, "float32"))))
        x = relay.var("p01", shape=dshape)
        f2 = primitive(relay.Function([x], relay.exp(x)))
        x = relay.var("x", shape=dshape)
        y = relay.Call(f1, [x])
        return relay.Function([x], relay.Call(f2, [y]))

    after = check_example(before(), expected())
    assert all(c.op.name != "annotation.stop_fusion" for c in calls_of(after) if isinstance(c.op, Op))
    # Without the annotation the two operators are one kernel.
    x = relay.var("x", shape=dshape)
    plain = relay.Function([x], relay.exp(relay.add(x, relay.const(1, "float32"))))
    assert len(primitive_functions(fused(plain))) == 1


def test_relay_fuse_myia_regression():
    dshape = ()
    dtype = "int64"

    def before():
        x = relay.var("x", shape=dshape, dtype=dtype)
        y = relay.var("y", shape=dshape, dtype=dtype)
        sb = relay.ScopeBuilder()
        with sb.if_scope(relay.greater(x, y)):
            sb.ret(relay.Function([], x))
        with sb.else_scope():
            sb.ret(relay.Function([], y))
        return relay.Function([x, y], relay.Call(sb.get(), []))

    def expected():
        x = relay.var("x", shape=dshape, dtype=dtype)
        y = relay.var("y", shape=dshape, dtype=dtype)
        sb = relay.ScopeBuilder()
        p1 = relay.var("p1", shape=dshape, dtype=dtype)
        p2 = relay.var("p2", shape=dshape, dtype=dtype)
        fused_gt = primitive(relay.Function([p1, p2], relay.greater(p1, p2)))
        with sb.if_scope(fused_gt(x, y)):
            sb.ret(relay.Function([], x))
        with sb.else_scope():
            sb.ret(relay.Function([], y))
        return relay.Function([x, y], relay.Call(sb.get(), []))

    check_example(before(), expected())


def test_relay_fuse_tuple_get_elemwise():
    dim = 10

    def before():
        X = relay.var("X", shape=(1, dim))
        W = relay.var("W", shape=(3 * dim, dim))
        matmul = relay.nn.dense(X, W)
        splitted = relay.split(matmul, indices_or_sections=3, axis=1)
        out = relay.sigmoid(splitted[0]) + relay.tanh(splitted[1]) * relay.exp(splitted[2])
        return relay.Function([X, W], out)

    def expected():
        p0 = relay.var("p0", shape=(1, dim))
        p1 = relay.var("p1", shape=(3 * dim, dim))
        f0 = primitive(relay.Function([p0, p1], relay.nn.dense(p0, p1)))

        p01 = relay.var("p01", shape=(1, 3 * dim))
        splitted = relay.split(p01, indices_or_sections=3, axis=1)
        out = relay.sigmoid(splitted[0]) + relay.tanh(splitted[1]) * relay.exp(splitted[2])
        f1 = primitive(relay.Function([p01], out))

        X = relay.var("X", shape=(1, dim))
        W = relay.var("W", shape=(3 * dim, dim))
        y = relay.Call(f0, [X, W])
        return relay.Function([X, W], relay.Call(f1, [y]))

    check_example(before(), expected())


def test_relay_tuple_get_root():
    dim = 10

    def before():
        X = relay.var("X", shape=(1, 3 * dim))
        W = relay.var("W", shape=(dim, dim))
        splitted = relay.split(X, indices_or_sections=3, axis=1)
        out = relay.nn.dense(splitted[0], W)
        return relay.Function([X, W], out)

    def expected():
        p0 = relay.var("p0", shape=(1, 3 * dim))
        splitted = relay.split(p0, indices_or_sections=3, axis=1)
        f0 = primitive(relay.Function([p0], splitted[0]))

        p01 = relay.var("p01", shape=(1, dim))
        p1 = relay.var("p1", shape=(dim, dim))
        f1 = primitive(relay.Function([p01, p1], relay.nn.dense(p01, p1)))

        X = relay.var("X", shape=(1, 3 * dim))
        W = relay.var("W", shape=(dim, dim))
        y = relay.Call(f0, [X])
        return relay.Function([X, W], relay.Call(f1, [y, W]))

    check_example(before(), expected())


def test_relay_tuple_intermediate():
    dshape = (1, 4, 8, 8)

    def before(x):
        inj = relay.squeeze(x)
        y1 = relay.add(inj, relay.const(1, "float32"))
        tmp = relay.squeeze(inj)
        tmp = relay.add(tmp, relay.const(1, "float32"))
        y2 = relay.add(tmp, relay.const(1, "float32"))
        y3 = relay.add(inj, relay.const(1, "float32"))
        concat = relay.concatenate((y1, y2, y3), axis=1)
        out_inj = relay.squeeze(concat)
        out = relay.add(out_inj, relay.const(1, "float32"))
        return relay.Function(analysis.free_vars(out), out)

    def expected():
        f1 = primitive(before(relay.var("p0", shape=dshape)))
        x = relay.var("x", shape=dshape)
        return relay.Function([x], relay.Call(f1, [x]))

    check_example(before(relay.var("x", shape=dshape)), expected())


def test_relay_tuple_consecutive():
    dshape = (1, 2, 4, 4)

    def gen_intermediate_tuple(x):
        y1 = relay.add(x, relay.const(1, "float32"))
        y2 = relay.add(x, relay.const(1, "float32"))
        y3 = relay.add(x, relay.const(1, "float32"))
        concat = relay.concatenate((y1, y2, y3), axis=1)
        return relay.add(concat, relay.const(1, "float32"))

    def gen_consecutive_tuple(x):
        y1 = gen_intermediate_tuple(x)
        y2 = gen_intermediate_tuple(x)
        y3 = gen_intermediate_tuple(x)
        return relay.concatenate((y1, y2, y3), axis=1)

    def before():
        x = relay.var("x", shape=dshape)
        concat = gen_consecutive_tuple(x)
        pooled = relay.nn.max_pool2d(concat, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        out = relay.add(pooled, relay.const(1, "float32"))
        out2 = relay.add(out, relay.const(1, "float32"))
        out_tup = relay.Tuple((out, out2))
        return relay.Function(analysis.free_vars(out_tup), out_tup)

    def expected():
        p0 = relay.var("p0", shape=dshape)
        f0 = primitive(relay.Function([p0], gen_consecutive_tuple(p0)))

        p01 = relay.var("p01", shape=(1, dshape[1] * 9, dshape[2], dshape[3]))
        pooled = relay.nn.max_pool2d(p01, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))
        out = relay.add(pooled, relay.const(1, "float32"))
        f1 = primitive(relay.Function([p01], out))

        p02 = relay.var("p02", shape=(1, dshape[1] * 9, dshape[2] // 2, dshape[3] // 2))
        f2 = primitive(relay.Function([p02], relay.add(p02, relay.const(1, "float32"))))

        x = relay.var("x", shape=dshape)
        y = relay.Call(f0, [x])
        z = relay.Call(f1, [y])
        z2 = relay.Call(f2, [z])
        return relay.Function([x], relay.Tuple((z, z2)))

    check_example(before(), expected())


def test_relay_inception_like():
    dshape = (1, 4, 4, 4)

    def conv(data):
        y = relay.nn.conv2d(data, relay.var("w"), kernel_size=(3, 3), padding=(1, 1), channels=4)
        return relay.nn.relu(data=y)

    def inception_like(data):
        c0 = conv(data)
        c1 = conv(data)
        return relay.concatenate((c0, c1), axis=1)

    def before():
        x = relay.var("x", shape=dshape)
        in1 = inception_like(x)
        in2 = inception_like(in1)
        return relay.Function(analysis.free_vars(in2), in2)

    def expected():
        dshape2 = (dshape[0], dshape[1] * 2, dshape[2], dshape[3])

        def conv_func(shape):
            p = relay.var("p0", shape=shape)
            c = conv(p)
            return primitive(relay.Function(analysis.free_vars(c), c))

        def concat_func():
            a = relay.var("p0", shape=dshape)
            b = relay.var("p1", shape=dshape)
            return primitive(relay.Function([a, b], relay.concatenate((a, b), axis=1)))

        x = relay.var("x", shape=dshape)
        c1 = relay.Call(conv_func(dshape), [x, relay.var("w1")])
        c2 = relay.Call(conv_func(dshape), [x, relay.var("w2")])
        concat = relay.Call(concat_func(), [c1, c2])
        c3 = relay.Call(conv_func(dshape2), [concat, relay.var("w3")])
        c4 = relay.Call(conv_func(dshape2), [concat, relay.var("w4")])
        out = relay.Call(concat_func(), [c3, c4])
        return relay.Function(analysis.free_vars(out), out)

    check_example(before(), expected())


def test_relay_fuse_parallel_injective():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        z = relay.squeeze(y)
        u = relay.transpose(y, axes=[0, 1])
        w = relay.subtract(z, u)
        return relay.Function([x], w)

    def expected():
        x = relay.var("p", shape=(10, 20))
        y = relay.add(x, relay.const(1, "float32"))
        z = relay.squeeze(y)
        u = relay.transpose(y, axes=[0, 1])
        w = relay.subtract(z, u)
        f1 = primitive(relay.Function([x], w))
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f1, [x]))

    assert not analysis.free_vars(fused(before(), 0))
    check_example(before(), expected())


def test_relay_immutable():
    """The pass does not change the module it is given."""

    def before():
        x = relay.var("x", shape=(10, 20))
        w = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
        return IRModule({"main": relay.Function([x], w)})

    def expected():
        x = relay.var("p", shape=(10, 20))
        w = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
        f1 = primitive(relay.Function([x], w))
        x = relay.var("x", shape=(10, 20))
        return IRModule({"main": relay.Function([x], relay.Call(f1, [x]))})

    mod = transform.InferType()(before())
    text = mod.astext()
    main = mod["main"]
    new_mod = transform.FuseOps(fuse_opt_level=2)(mod)
    assert mod["main"] is main and mod.astext() == text
    assert_structural_equal(mod, transform.InferType()(before()))
    assert_structural_equal(new_mod, transform.InferType()(expected()))


def test_relay_split():
    """Projections feeding a reference and elementwise operators: the result still runs."""
    x = relay.var("x", shape=(6, 9))
    y = relay.split(x, 3).astuple()
    a = relay.TupleGetItem(y, 0)
    b = relay.TupleGetItem(y, 1)
    c = relay.TupleGetItem(y, 2)
    func = relay.Function([x], a + relay.RefRead(relay.RefCreate(b)) + c)
    mod = transform.FuseOps()(transform.InferType()(IRModule({"main": func})))
    assert analysis.well_formed(mod["main"])
    assert_same_results(infer(func), mod["main"])


def test_relay_fuse_max():
    """The number of operators in one group: 256 by default, or relay.FuseOps.max_depth."""

    def before(n):
        x = relay.var("x", shape=(10, 20))
        y = x
        for _ in range(n):
            y = relay.exp(y)
        return relay.Function([x], y)

    def expected(n, max_fused_ops):
        x = relay.var("p", shape=(10, 20))
        y = x
        for _ in range(max_fused_ops):
            y = relay.exp(y)
        f1 = primitive(relay.Function([x], y))
        x = relay.var("x", shape=(10, 20))
        z = relay.Call(f1, [x])
        xx = relay.var("pp", shape=(10, 20))
        yy = xx
        for _ in range(n - max_fused_ops):
            yy = relay.exp(yy)
        f2 = primitive(relay.Function([xx], yy))
        return relay.Function([x], relay.Call(f2, [z]))

    after = run_opt_pass(before(300), transform.FuseOps())
    assert_structural_equal(after, infer(expected(300, 256)))
    after = fused(before(20), config={MAX_DEPTH_KEY: 10})
    assert_structural_equal(after, infer(expected(20, 10)))
    assert_same_results(before(20), after)


@pytest.mark.parametrize("op_name", ["take", "gather_nd"])
def test_relay_fuse_take_and_gather_nd(op_name):
    """A non-scalar constant is passed in as an argument; the tuple (x, x) takes one parameter."""
    indices = [0] if op_name == "take" else [[0, 1], [1, 0]]

    def make(data, idx):
        concat = relay.concatenate([data, data], axis=-1)
        if op_name == "take":
            return relay.take(concat, indices=idx)
        return relay.gather_nd(concat, indices=idx)

    def before():
        x = relay.var("x", shape=(10, 1))
        out = make(x, relay.const(indices, dtype="int64"))
        return relay.Function(analysis.free_vars(out), out)

    def expected():
        x = relay.var("x", shape=(10, 1))
        p0 = relay.var("p0", shape=(10, 1))
        p1 = relay.var("p1", shape=np.shape(indices), dtype="int64")
        f0 = primitive(relay.Function([p0, p1], make(p0, p1)))
        c = relay.const(indices, dtype="int64")
        return relay.Function([x], relay.Call(f0, [x, c]))

    check_example(before(), expected())


@pytest.mark.parametrize("op_name", ["take", "gather_nd"])
def test_link_params_writes_constants_into_the_fused_function(op_name):
    """Relay's link_params: the constant is part of the body, not an argument."""
    indices = [0] if op_name == "take" else [[0, 1], [1, 0]]

    def make(data, idx):
        concat = relay.concatenate([data, data], axis=-1)
        if op_name == "take":
            return relay.take(concat, indices=idx)
        return relay.gather_nd(concat, indices=idx)

    x = relay.var("x", shape=(10, 1))
    before = infer(relay.Function([x], make(x, relay.const(indices, dtype="int64"))))

    p0 = relay.var("p0", shape=(10, 1))
    f0 = primitive(relay.Function([p0], make(p0, relay.const(indices, dtype="int64"))))
    x = relay.var("x", shape=(10, 1))
    expected = infer(relay.Function([x], relay.Call(f0, [x])))
    assert_structural_equal(fuse_ops(before, link_params=True), expected)

    # At fuse level 0 the constant is still no argument of take's own function.
    level0 = fuse_ops(before, 0, link_params=True)
    last = level0.body.op
    assert [type(a) for a in last.body.args] == [Var, type(relay.const(0))]


def test_relay_fuse_bcast_reduce_scalar():
    def before():
        x = relay.var("x", shape=(), dtype="int32")
        less = relay.less(x, relay.const(10, dtype="int32"))
        return relay.Function([x], relay.min(less))

    def expected():
        p0 = relay.var("p0", shape=(), dtype="int32")
        less = relay.less(p0, relay.const(10, dtype="int32"))
        f0 = primitive(relay.Function([p0], relay.min(less)))
        x = relay.var("x", shape=(), dtype="int32")
        return relay.Function([x], relay.Call(f0, [x]))

    check_example(before(), expected())


def test_relay_fuse_max_diamond():
    def create_diamond(x, branch_len):
        x1 = x
        x2 = x
        for _ in range(branch_len):
            x1 = relay.exp(x1)
            x2 = relay.exp(x2)
        return relay.add(x1, x2)

    def before(branch_len, num_diamond):
        x = relay.var("x", shape=(10, 20))
        out = x
        for _ in range(num_diamond):
            out = create_diamond(out, branch_len)
        return relay.Function([x], out)

    def after(branch_len, num_diamond):
        def create_diamond_func(inp):
            inp_var = relay.var("p", shape=(10, 20))
            d = create_diamond(inp_var, branch_len)
            f = primitive(relay.Function([inp_var], d))
            return relay.Call(f, [inp])

        inp = relay.var("x", shape=(10, 20))
        out = inp
        for _ in range(num_diamond):
            out = create_diamond_func(out)
        return relay.Function([inp], out)

    branch_len = 5
    max_fused_ops = branch_len * 2 + 1  # the number of ops in one diamond
    check_example(before(branch_len, 3), after(branch_len, 3),
                  config={MAX_DEPTH_KEY: max_fused_ops})
    # One operator less and a diamond no longer fits in a group.
    smaller = fused(before(branch_len, 3), config={MAX_DEPTH_KEY: max_fused_ops - 1})
    assert len(primitive_functions(smaller)) > 3


def test_relay_fuse_dynamic_squeeze_slice_take():
    x = relay.var("p0107", shape=(relay.Any(), relay.Any(), 4), dtype="float32")
    take_val = relay.var("p166", shape=(relay.Any(),), dtype="int64")
    squeeze = relay.squeeze(x, axis=[0])
    strided_slice = relay.strided_slice(squeeze, begin=[0, 0], end=[15130, 2147483647],
                                        strides=[1, 1])
    take = relay.take(strided_slice, take_val, axis=0)
    func = infer(relay.Function([x, take_val], take))
    after = fused(func)
    assert len(primitive_functions(after)) == 1
    data = np.random.default_rng(0).random((1, 2, 4)).astype("float32")
    index = np.array([0], dtype="int64")
    result = relay.create_executor(mod=IRModule.from_expr(after)).evaluate()(data, index)
    np.testing.assert_array_equal(result, np.take(np.squeeze(data, axis=0), index, axis=0))


def test_relay_fuse_softmax():
    channel_size = 16

    def before():
        x = relay.var("x", shape=(16, channel_size))
        out = relay.cast(relay.nn.softmax(x), "float16")
        return relay.Function([x], out)

    def expected():
        p0 = relay.var("p0", shape=(16, channel_size))
        out = relay.cast(relay.nn.softmax(p0), "float16")
        f0 = primitive(relay.Function([p0], out))
        x = relay.var("x", shape=(16, channel_size))
        return relay.Function([x], relay.Call(f0, [x]))

    after = check_example(before(), expected())
    inp = np.random.default_rng(1).standard_normal((16, channel_size)).astype("float32")
    e = np.exp(inp - inp.max(axis=-1, keepdims=True))
    ref = (e / e.sum(axis=-1, keepdims=True)).astype("float16")
    result = relay.create_executor(mod=IRModule.from_expr(after)).evaluate()(inp)
    np.testing.assert_allclose(result.numpy().astype("float32"), ref.astype("float32"), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("max_function_args", [0, 31, 128])
@pytest.mark.parametrize("shape_type", ["dynamic", "static"])
def test_relay_fuse_max_num_args(max_function_args, shape_type):
    """A limit of M arguments, the output included: M - 1 inputs (fewer with unknown dims)."""
    if shape_type == "dynamic":
        shape = (relay.Any(), 20)
        number_of_any_dims = 1
    else:
        shape = (10, 20)
        number_of_any_dims = 0
    ndims = len(shape)
    ops_num = 300

    def _base_func(name):
        x = relay.var(name, shape=shape)
        y = relay.add(x, relay.const(1, "float32"))
        return x, relay.exp(y)

    def before(n):
        inp = []
        out = []
        for i in range(n):
            x, w = _base_func(f"x{i}")
            inp.append(x)
            out.append(w)
        w = out[0]
        for i in range(len(out) - 1):
            w = relay.add(w, out[i + 1])
        return relay.Function(inp, w)

    def after(n):
        def create_fused_func(limit):
            added_args = 0
            inputs = []
            input_vars = []
            res = None
            i = 0
            while added_args < limit:
                inp, out = _base_func(f"p{i}")
                curr_args = 1 + number_of_any_dims
                if number_of_any_dims > 0:
                    curr_args += ndims
                if added_args + curr_args > limit:
                    break
                input_vars.append(relay.var(f"x{i}", shape=shape))
                inputs.append(inp)
                res = out if res is None else relay.add(res, out)
                added_args += curr_args
                i += 1
            return i, input_vars, primitive(relay.Function(inputs, res))

        def create_accum_func(args_limit):
            if args_limit == 0:
                inputs = [relay.var(f"x{i}", shape=shape) for i in range(n)]
                f = primitive(before(n))
                return relay.Function(inputs, relay.Call(f, inputs))
            i, inputs, func = create_fused_func(args_limit)
            out = relay.Call(func, inputs)
            while i < n:
                inp, func = _base_func(f"p{i}")
                inputs.append(relay.var(f"xa{i}", shape=shape))
                f = primitive(relay.Function([inp], func))
                w = relay.Call(f, [inputs[-1]])
                a = relay.var("a", shape=shape)
                b = relay.var("b", shape=shape)
                f = primitive(relay.Function([a, b], relay.add(a, b)))
                out = relay.Call(f, [out, w])
                i += 1
            return relay.Function(inputs, out)

        args_limit = max(max_function_args - (1 + number_of_any_dims), 0)
        return create_accum_func(args_limit)

    config = {MAX_DEPTH_KEY: ops_num * 5, MAX_FUNCTION_ARGS_KEY: max_function_args}
    result = fused(before(ops_num), config=config)
    assert_structural_equal(result, infer(after(ops_num)))


# --- fuse levels, boundaries, attributes --------------------------------------------------------
def _simple_chain():
    x = relay.var("x", shape=(10, 20))
    return relay.Function([x], relay.nn.relu(relay.exp(relay.add(x, relay.const(1, "float32")))))


def test_fuse_level_0_gives_every_operator_call_its_own_function():
    x = relay.var("p0", shape=(10, 20))
    c = relay.var("p1", shape=(), dtype="float32")
    f_add = primitive(relay.Function([x, c], relay.add(x, c)))
    x = relay.var("p0", shape=(10, 20))
    f_exp = primitive(relay.Function([x], relay.exp(x)))
    x = relay.var("p0", shape=(10, 20))
    f_relu = primitive(relay.Function([x], relay.nn.relu(x)))
    x = relay.var("x", shape=(10, 20))
    body = relay.Call(f_relu, [relay.Call(f_exp, [relay.Call(f_add, [x, relay.const(1, "float32")])])])
    expected = infer(relay.Function([x], body))

    assert_structural_equal(fused(_simple_chain(), level=0), expected)
    # fuse_opt_level=-1 (the default) takes the level from the context.
    with PassContext(opt_level=0):
        assert_structural_equal(run_opt_pass(_simple_chain(), transform.FuseOps()), expected)
    with PassContext(opt_level=1):
        assert len(primitive_functions(run_opt_pass(_simple_chain(), transform.FuseOps()))) == 1


def test_lets_ifs_and_local_functions_are_fused_inside_never_across():
    def before():
        x = relay.var("x", shape=(8,))
        a = relay.var("a", shape=(8,))
        v = relay.var("v", shape=(8,))
        g = relay.var("g")
        local = relay.Function([a], relay.nn.relu(relay.negative(a)))
        cond = relay.less(relay.sum(v), relay.const(0, "float32"))
        branch = relay.If(cond, relay.Call(g, [v]), relay.exp(v))
        body = relay.Let(g, local, branch)
        body = relay.Let(v, relay.exp(relay.add(x, relay.const(1, "float32"))), body)
        return relay.Function([x], body)

    def expected():
        p = relay.var("p0", shape=(8,))
        f_value = primitive(relay.Function([p], relay.exp(relay.add(p, relay.const(1, "float32")))))
        p = relay.var("p0", shape=(8,))
        f_local = primitive(relay.Function([p], relay.nn.relu(relay.negative(p))))
        p = relay.var("p0", shape=(8,))
        f_sum = primitive(relay.Function([p], relay.sum(p)))
        p = relay.var("p0", shape=())
        f_less = primitive(relay.Function([p], relay.less(p, relay.const(0, "float32"))))
        p = relay.var("p0", shape=(8,))
        f_exp = primitive(relay.Function([p], relay.exp(p)))
        x = relay.var("x", shape=(8,))
        a = relay.var("a", shape=(8,))
        v = relay.var("v", shape=(8,))
        g = relay.var("g")
        local = relay.Function([a], relay.Call(f_local, [a]))
        cond = relay.Call(f_less, [relay.Call(f_sum, [v])])
        branch = relay.If(cond, relay.Call(g, [v]), relay.Call(f_exp, [v]))
        body = relay.Let(g, local, branch)
        body = relay.Let(v, relay.Call(f_value, [x]), body)
        return relay.Function([x], body)

    check_example(before(), expected())


def test_a_diamond_fuses_only_when_every_path_is_fusable():
    """exp feeds relu and a reduction that meet at add: the reduction path stops exp."""

    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.exp(x)
        z = relay.add(relay.nn.relu(y), relay.sum(y, axis=[1], keepdims=True))
        return relay.Function([x], z)

    def expected():
        p = relay.var("p0", shape=(10, 20))
        f_exp = primitive(relay.Function([p], relay.exp(p)))
        p = relay.var("p0", shape=(10, 20))
        f_sum = primitive(relay.Function([p], relay.sum(p, axis=[1], keepdims=True)))
        p0 = relay.var("p0", shape=(10, 20))
        p1 = relay.var("p1", shape=(10, 1))
        f_add = primitive(relay.Function([p0, p1], relay.add(relay.nn.relu(p0), p1)))
        x = relay.var("x", shape=(10, 20))
        e = relay.Call(f_exp, [x])
        return relay.Function([x], relay.Call(f_add, [e, relay.Call(f_sum, [e])]))

    check_example(before(), expected())


def test_primitive_functions_are_left_alone():
    p = relay.var("p", shape=(4,))
    kernel = primitive(relay.Function([p], relay.add(p, relay.const(1, "float32"))))
    x = relay.var("x", shape=(4,))
    func = infer(relay.Function([x], relay.exp(relay.Call(kernel, [x]))))
    after = fuse_ops(func)
    assert after.body.args[0].op is func.body.args[0].op  # the very same function
    assert isinstance(after.body.op, Function) and after.body.op.body.op.name == "exp"
    mod = transform.InferType()(IRModule({"main": func, "kernel": kernel}))
    assert fuse_ops(mod["kernel"]) is mod["kernel"]
    assert_structural_equal(transform.FuseOps()(mod)["kernel"], mod["kernel"])


def test_a_group_without_a_call_is_not_primitive():
    """A projection of a tuple built in the same group (no operator call) gives Primitive=0."""
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    item = relay.TupleGetItem(relay.Tuple([x, y]), 0)
    after = fused(relay.Function([x, y], relay.annotation.stop_fusion(item)))
    func = after.body.op
    assert func.attrs["Primitive"] == 0
    assert isinstance(func.body, TupleGetItem) and isinstance(func.body.tuple_value, Tuple)


def test_reshape_only_groups_are_marked(monkeypatch):
    """As in Relay, a group made only of operators flagged TReshapeOp is marked ReshapeOnly."""
    for name in ("reshape", "squeeze"):
        monkeypatch.setitem(Op.get(name)._attrs, "TReshapeOp", True)
    x = relay.var("x", shape=(10, 20))
    reshaped = relay.Function([x], relay.squeeze(relay.reshape(x, (1, 200))))
    func = fused(reshaped).body.op
    assert func.attrs["Primitive"] == 1 and func.attrs["ReshapeOnly"] == 1
    assert "ReshapeOnly" not in fused(_simple_chain()).body.op.attrs


def test_the_output_is_typed_as_type_inference_types_it():
    after = fused(_simple_chain())
    assert_typed_as_inferred(IRModule({"main": after}))


def assert_typed_as_inferred(mod: IRModule) -> None:
    """Every node carries the type InferType gives it, and InferType changes nothing else."""
    again = infer_type_module(mod)
    assert_structural_equal(again, mod)
    for gv, func in mod.items():
        ours: list = []
        theirs: list = []
        analysis.post_order_visit(func, ours.append)
        analysis.post_order_visit(again[gv.name_hint], theirs.append)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            if isinstance(a, Op):
                continue
            assert a.has_checked_type, a
            assert a.checked_type == b.checked_type, (a, a.checked_type, b.checked_type)
            if isinstance(a, Var):
                assert a.type_annotation == b.type_annotation


def test_untyped_input_is_typed_first():
    assert_structural_equal(fuse_ops(_simple_chain()), fused(_simple_chain()))


def test_bad_settings_are_reported():
    with pytest.raises(FuseOpsError, match="fuse_opt_level must be at least 0"):
        FuseOps(fuse_opt_level=-2)
    with pytest.raises(TypeError, match="must be an int"):
        FuseOps(fuse_opt_level="2")
    with pytest.raises(TypeError, match="has no option 'max_depth'. Its options: fuse_opt_level"):
        FuseOps(max_depth=3)
    with pytest.raises(FuseOpsError, match="relay.FuseOps.max_depth' must be at least 1"):
        fused(_simple_chain(), config={MAX_DEPTH_KEY: 0})
    with pytest.raises(FuseOpsError, match="max_function_args' must be at least 0"):
        fused(_simple_chain(), config={MAX_FUNCTION_ARGS_KEY: -1})
    with pytest.raises(FuseOpsError, match="max_depth must be at least 1"):
        fuse_ops(_simple_chain(), max_depth=0)
    with pytest.raises(TypeError, match="expects a Relay expression"):
        fuse_ops(IRModule.from_expr(_simple_chain()))


def test_registered_as_relay_declares_it():
    p = get_pass("FuseOps", fuse_opt_level=1)
    assert (p.info.name, p.info.opt_level, tuple(p.info.required)) == ("FuseOps", 0, ("InferType",))
    keys = PassContext.list_configs()
    assert keys[MAX_DEPTH_KEY].default == 256 and keys[MAX_FUNCTION_ARGS_KEY].default == 0


# --- random programs and scale -------------------------------------------------------------------
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(modules(size=(1, 25), features=FEATURES), st.sampled_from([0, 2]))
def test_random_programs_compute_the_same_after_fusion(mod, level):
    typed = infer_type_module(mod)
    main = typed["main"]
    with PassContext(opt_level=level):
        after = transform.FuseOps()(typed)
    assert typed["main"] is main  # the input module is untouched
    args = random_inputs(typed, 0)
    with np.errstate(all="ignore"):
        expected = relay.create_executor(mod=typed).evaluate()(*args)
        actual = relay.create_executor(mod=after).evaluate()(*args)
    _assert_values_equal(expected, actual)
    assert_typed_as_inferred(after)
    for func in primitive_functions(after["main"]):
        assert not analysis.free_vars(func)


def test_a_chain_of_100000_calls_fuses_into_groups_of_max_depth():
    x = relay.var("x", shape=(2,))
    y = x
    n = 100_000
    for _ in range(n):
        y = relay.exp(y)
    limit = sys.getrecursionlimit()
    after = fused(relay.Function([x], y))
    assert sys.getrecursionlimit() == limit
    sizes = []
    node = after.body
    while isinstance(node, Call):
        count = 0
        inner = node.op.body
        while isinstance(inner, Call):
            count += 1
            inner = inner.args[0]
        sizes.append(count)
        node = node.args[0]
    assert node is after.params[0]
    assert sum(sizes) == n and max(sizes) == 256
    assert sizes[-1] == 256 and len(sizes) == -(-n // 256)


def test_a_chain_sharing_one_scalar_constant_fuses_into_groups_of_max_depth():
    """A scalar constant used by every other call of a long chain (the benchmark's
    workload) is passed into each group, as Relay does; building the post-dominator
    tree for its 50,000 consumers must not walk the chain once per consumer."""
    x = relay.var("x", shape=(2,))
    c = relay.const(2.0)
    y = x
    n = 100_000
    for i in range(n):
        y = relay.add(y, c) if i % 2 else relay.exp(y)
    after = fused(relay.Function([x], y))
    groups = 0
    node = after.body
    while isinstance(node, Call):
        groups += 1
        assert len(node.args) == 2 and isinstance(node.args[1], relay.Constant)
        assert float(node.args[1].data.numpy()) == 2.0
        node = node.args[0]
    assert node is after.params[0]
    assert groups == -(-n // 256)


def test_a_long_let_chain_fuses_each_bound_value_on_its_own():
    """Let-bound values are boundaries: each becomes its own kernel, with no recursion."""
    n = 20_000
    x = relay.var("x", shape=(2,))
    names = [relay.var(f"v{i}") for i in range(n)]
    body = names[-1]
    for i in reversed(range(n)):
        body = relay.Let(names[i], relay.exp(names[i - 1] if i else x), body)
    after = fused(relay.Function([x], body))
    node = after.body
    count = 0
    while isinstance(node, relay.Let):
        assert node.value.op.attrs["Primitive"] == 1
        count += 1
        node = node.body
    assert count == n


def test_FuseOps_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("FuseOps", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
