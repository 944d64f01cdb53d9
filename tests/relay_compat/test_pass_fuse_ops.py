"""FuseOps on the cases of TVM v0.18's test_pass_fuse_ops.py, written as a TVM user.

Only the import lines differ from what such a user writes for TVM, with one
spelling change: TVM marks expected functions with
``with_attr("Primitive", tvm.tir.IntImm("int32", 1))``; ``tvm.tir`` is out of
scope, so they say ``with_attr("Primitive", 1)``.  Likewise ``int64`` shape
dims made with ``tvm.tir.const`` are plain ints.

Out of scope: ``relay.build`` (code generation; the cases that build after
fusing keep their fusion checks), the OpenCL target in ``test_fuse_max``,
``test_fuse_max_num_args`` (its limit comes from a target's
``max_function_args``), ``tvm.topi.testing`` (the softmax reference is
computed with numpy).
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay import transform
from relaypass.relay.testing import run_opt_pass


def one():
    return relay.const(1, "float32")


def kernel(params, body):
    """A fused function as FuseOps writes it."""
    return relay.Function(params, body).with_attr("Primitive", 1)


def typed(func):
    return run_opt_pass(func, transform.InferType())


def fused(func, **options):
    return run_opt_pass(func, transform.FuseOps(**options))


def both_levels_close_over_nothing(func):
    """Fuse at level 0 and at level 2 (TVM checks both leave no free variable); level 2's result."""
    for level in (0, 2):
        out = fused(func, fuse_opt_level=level)
        assert not relay.analysis.free_vars(out)
    return out


def fuse_module(mod, level):
    mod = relay.transform.InferType()(mod)
    return relay.transform.FuseOps(fuse_opt_level=level)(mod)


def test_fuse_simple():
    """add, exp and squeeze end up in one kernel."""

    def chain(t):
        return relay.squeeze(relay.exp(relay.add(t, one())))

    inp = relay.var("inp", shape=(10, 20))
    before = relay.Function([inp], chain(inp))

    p = relay.var("p", shape=(10, 20))
    arg = relay.var("inp", shape=(10, 20))
    expected = relay.Function([arg], relay.Call(kernel([p], chain(p)), [arg]))

    tvm.ir.assert_structural_equal(fused(before), typed(expected))


def test_conv2d_fuse():
    """A conv2d takes the elementwise ops it dominates; a second conv2d takes the add after it."""
    shape = (1, 16, 64, 64)

    def conv(data, weight, size, pad):
        return relay.nn.conv2d(data, weight, kernel_size=(size, size), padding=(pad, pad),
                               channels=16)

    def first_block(data, weight):
        c = conv(data, weight, 3, 1)
        return relay.add(c, relay.add(one(), c))

    inp = relay.var("inp", shape=shape)
    w_a, w_b, w_c = relay.var("w_a"), relay.var("w_b"), relay.var("w_c")
    shifted = relay.add(inp, one())
    block = first_block(shifted, w_a)
    out = relay.add(conv(block, w_b, 1, 0), conv(block, w_c, 3, 1))
    before = relay.Function(relay.analysis.free_vars(out), out)

    def k_add():
        p = relay.var("p0", shape=shape)
        return kernel([p], relay.add(p, one()))

    def k_block():
        p, w = relay.var("p0", shape=shape), relay.var("p1")
        return kernel([p, w], first_block(p, w))

    def k_conv3():
        p, w = relay.var("p0", shape=shape), relay.var("p1")
        return kernel([p, w], conv(p, w, 3, 1))

    def k_conv1_add():
        p, w, other = relay.var("p0", shape=shape), relay.var("p1"), relay.var("p2", shape=shape)
        return kernel([p, w, other], relay.add(conv(p, w, 1, 0), other))

    inp = relay.var("inp", shape=shape)
    w_a, w_b, w_c = relay.var("w_a"), relay.var("w_b"), relay.var("w_c")
    block = relay.Call(k_block(), [relay.Call(k_add(), [inp]), w_a])
    right = relay.Call(k_conv3(), [block, w_c])
    out = relay.Call(k_conv1_add(), [block, w_b, right])
    expected = relay.Function(relay.analysis.free_vars(out), out)

    tvm.ir.assert_structural_equal(fused(before, fuse_opt_level=2), typed(expected))


def _pool(t):
    return relay.nn.max_pool2d(t, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))


def _upsample(t):
    return relay.nn.upsampling(t, scale_h=2, scale_w=2, layout="NCHW")


def test_concatenate():
    """max_pool2d stays alone; upsampling, the concatenate and the add fuse."""
    shape = (1, 16, 64, 64)
    half = (1, 16, 32, 32)
    inp = relay.var("inp", shape=shape)
    out = relay.add(relay.concatenate((_upsample(_pool(inp)), inp), axis=1), one())
    before = relay.Function(relay.analysis.free_vars(out), out)

    q = relay.var("q", shape=shape)
    pool_k = kernel([q], _pool(q))
    small, big = relay.var("small", shape=half), relay.var("big", shape=shape)
    cat_k = kernel([small, big],
                   relay.add(relay.concatenate((_upsample(small), big), axis=1), one()))
    arg = relay.var("inp", shape=shape)
    expected = relay.Function([arg], relay.Call(cat_k, [relay.Call(pool_k, [arg]), arg]))

    tvm.ir.assert_structural_equal(both_levels_close_over_nothing(before), typed(expected))


def test_tuple_root():
    """A tuple that ends the program stays outside the kernels."""
    shape = (1, 16, 64, 64)
    half = (1, 16, 32, 32)
    inp = relay.var("inp", shape=shape)
    before = relay.Function([inp], relay.Tuple((_upsample(_pool(inp)), inp)))

    q = relay.var("q", shape=shape)
    small = relay.var("small", shape=half)
    arg = relay.var("inp", shape=shape)
    up = relay.Call(kernel([small], _upsample(small)), [relay.Call(kernel([q], _pool(q)), [arg])])
    expected = relay.Function([arg], relay.Tuple((up, arg)))

    tvm.ir.assert_structural_equal(both_levels_close_over_nothing(before), typed(expected))


def test_stop_fusion():
    shape = (10, 20)
    inp = relay.var("inp", shape=shape)
    before = relay.Function(
        [inp], relay.exp(relay.annotation.stop_fusion(relay.add(inp, one())))
    )

    a, b = relay.var("a", shape=shape), relay.var("b", shape=shape)
    arg = relay.var("inp", shape=shape)
    first = relay.Call(kernel([a], relay.add(a, one())), [arg])
    expected = relay.Function([arg], relay.Call(kernel([b], relay.exp(b)), [first]))

    tvm.ir.assert_structural_equal(fused(before), typed(expected))


def test_fuse_myia_regression():
    """Only the comparison is fused; the branches return closures and stay as they are."""

    def program(compare):
        lhs = relay.var("lhs", shape=(), dtype="int64")
        rhs = relay.var("rhs", shape=(), dtype="int64")
        sb = relay.ScopeBuilder()
        with sb.if_scope(compare(lhs, rhs)):
            sb.ret(relay.Function([], lhs))
        with sb.else_scope():
            sb.ret(relay.Function([], rhs))
        return relay.Function([lhs, rhs], relay.Call(sb.get(), []))

    def fused_greater(lhs, rhs):
        a = relay.var("a", shape=(), dtype="int64")
        b = relay.var("b", shape=(), dtype="int64")
        return kernel([a, b], relay.op.greater(a, b))(lhs, rhs)

    tvm.ir.assert_structural_equal(
        fused(program(relay.op.greater)), typed(program(fused_greater))
    )


def test_fuse_tuple_get_elemwise():
    """dense alone; split, its projections and the elementwise ops after them together."""
    dim = 10

    def gates(t):
        parts = relay.split(t, indices_or_sections=3, axis=1)
        return relay.sigmoid(parts[0]) + relay.tanh(parts[1]) * relay.exp(parts[2])

    data = relay.var("data", shape=(1, dim))
    weight = relay.var("weight", shape=(3 * dim, dim))
    before = relay.Function([data, weight], gates(relay.nn.dense(data, weight)))

    d, w = relay.var("d", shape=(1, dim)), relay.var("w", shape=(3 * dim, dim))
    h = relay.var("h", shape=(1, 3 * dim))
    data = relay.var("data", shape=(1, dim))
    weight = relay.var("weight", shape=(3 * dim, dim))
    dense = relay.Call(kernel([d, w], relay.nn.dense(d, w)), [data, weight])
    expected = relay.Function([data, weight], relay.Call(kernel([h], gates(h)), [dense]))

    tvm.ir.assert_structural_equal(both_levels_close_over_nothing(before), typed(expected))


def test_tuple_get_root():
    """A projection that ends a group is the kernel's result."""
    dim = 10
    data = relay.var("data", shape=(1, 3 * dim))
    weight = relay.var("weight", shape=(dim, dim))
    first = relay.split(data, indices_or_sections=3, axis=1)[0]
    before = relay.Function([data, weight], relay.nn.dense(first, weight))

    s = relay.var("s", shape=(1, 3 * dim))
    d, w = relay.var("d", shape=(1, dim)), relay.var("w", shape=(dim, dim))
    data = relay.var("data", shape=(1, 3 * dim))
    weight = relay.var("weight", shape=(dim, dim))
    part = relay.Call(kernel([s], relay.split(s, indices_or_sections=3, axis=1)[0]), [data])
    expected = relay.Function(
        [data, weight], relay.Call(kernel([d, w], relay.nn.dense(d, w)), [part, weight])
    )

    tvm.ir.assert_structural_equal(both_levels_close_over_nothing(before), typed(expected))


def test_tuple_intermediate():
    """Injective ops around a concatenate: the whole function is one kernel."""
    shape = (1, 16, 64, 64)

    def body_of(t):
        sq = relay.squeeze(t)
        branches = (
            relay.add(sq, one()),
            relay.add(relay.add(relay.squeeze(sq), one()), one()),
            relay.add(sq, one()),
        )
        return relay.add(relay.squeeze(relay.concatenate(branches, axis=1)), one())

    inp = relay.var("inp", shape=shape)
    before = relay.Function([inp], body_of(inp))
    fuse_module(tvm.IRModule.from_expr(before), 0)
    mod = fuse_module(tvm.IRModule.from_expr(before), 2)

    p = relay.var("p", shape=shape)
    arg = relay.var("inp", shape=shape)
    expected = relay.Function([arg], relay.Call(kernel([p], body_of(p)), [arg]))
    tvm.ir.assert_structural_equal(mod["main"], typed(expected))


def test_tuple_consecutive():
    """Nested concatenates fuse together; max_pool2d takes one add, the last add is alone."""
    shape = (1, 16, 64, 64)

    def three_adds_concat(t):
        cat = relay.concatenate([relay.add(t, one()) for _ in range(3)], axis=1)
        return relay.add(cat, one())

    def nine_way(t):
        return relay.concatenate([three_adds_concat(t) for _ in range(3)], axis=1)

    inp = relay.var("inp", shape=shape)
    pooled = relay.add(_pool(nine_way(inp)), one())
    before = relay.Function([inp], relay.Tuple((pooled, relay.add(pooled, one()))))
    fuse_module(tvm.IRModule.from_expr(before), 0)
    mod = fuse_module(tvm.IRModule.from_expr(before), 2)

    a = relay.var("a", shape=shape)
    b = relay.var("b", shape=(1, 144, 64, 64))
    c = relay.var("c", shape=(1, 144, 32, 32))
    arg = relay.var("inp", shape=shape)
    pooled = relay.Call(kernel([b], relay.add(_pool(b), one())),
                        [relay.Call(kernel([a], nine_way(a)), [arg])])
    last = relay.Call(kernel([c], relay.add(c, one())), [pooled])
    expected = relay.Function([arg], relay.Tuple((pooled, last)))
    tvm.ir.assert_structural_equal(mod["main"], typed(expected))


def test_inception_like():
    """Each conv2d + relu is a kernel; each concatenate of two of them is another."""
    shape = (1, 16, 64, 64)
    wide = (1, 32, 64, 64)

    def conv_relu(t, weight):
        c = relay.nn.conv2d(t, weight, kernel_size=(3, 3), padding=(1, 1), channels=16)
        return relay.nn.relu(data=c)

    def block(t, names):
        return relay.concatenate([conv_relu(t, relay.var(n)) for n in names], axis=1)

    inp = relay.var("inp", shape=shape)
    out = block(block(inp, ["w1", "w2"]), ["w3", "w4"])
    before = relay.Function(relay.analysis.free_vars(out), out)
    fuse_module(tvm.IRModule.from_expr(before), 0)
    mod = fuse_module(tvm.IRModule.from_expr(before), 2)

    def conv_kernel(in_shape):
        t, w = relay.var("t", shape=in_shape), relay.var("w")
        return kernel([t, w], conv_relu(t, w))

    def concat_kernel():
        a, b = relay.var("a", shape=shape), relay.var("b", shape=shape)
        return kernel([a, b], relay.concatenate((a, b), axis=1))

    inp = relay.var("inp", shape=shape)
    ws = [relay.var(f"w{k}") for k in range(1, 5)]
    first = relay.Call(concat_kernel(), [relay.Call(conv_kernel(shape), [inp, ws[0]]),
                                         relay.Call(conv_kernel(shape), [inp, ws[1]])])
    second = relay.Call(concat_kernel(), [relay.Call(conv_kernel(wide), [first, ws[2]]),
                                          relay.Call(conv_kernel(wide), [first, ws[3]])])
    expected = relay.Function(relay.analysis.free_vars(second), second)
    tvm.ir.assert_structural_equal(mod["main"], typed(expected))


def test_fuse_parallel_injective():
    """Two injective ops side by side feed one broadcast op (a left shift, as in TVM)."""

    def body_of(t):
        shifted = relay.add(t, one())
        return relay.left_shift(relay.squeeze(shifted), relay.transpose(shifted, axes=[0, 1]))

    inp = relay.var("inp", shape=(10, 20))
    before = relay.Function([inp], body_of(inp))

    p = relay.var("p", shape=(10, 20))
    arg = relay.var("inp", shape=(10, 20))
    expected = relay.Function([arg], relay.Call(kernel([p], body_of(p)), [arg]))
    tvm.ir.assert_structural_equal(both_levels_close_over_nothing(before), typed(expected))


def test_immutable():
    """FuseOps leaves the module it is given as it was."""

    def body_of(t):
        return relay.squeeze(relay.exp(relay.add(t, one())))

    def module(func):
        mod = tvm.IRModule()
        mod["main"] = func
        return mod

    def original():
        inp = relay.var("inp", shape=(10, 20))
        return module(relay.Function([inp], body_of(inp)))

    p = relay.var("p", shape=(10, 20))
    arg = relay.var("inp", shape=(10, 20))
    expected = module(relay.Function([arg], relay.Call(kernel([p], body_of(p)), [arg])))

    mod = transform.InferType()(original())
    result = transform.FuseOps(fuse_opt_level=2)(mod)
    tvm.ir.assert_structural_equal(mod, transform.InferType()(original()))
    tvm.ir.assert_structural_equal(result, transform.InferType()(expected))


def test_split():
    """Projections of a split around a reference round trip: the result is well formed."""
    data = relay.var("data", shape=(6, 9))
    parts = relay.split(data, 3).astuple()
    first, second, third = (relay.TupleGetItem(parts, k) for k in range(3))
    mod = tvm.IRModule()
    mod["main"] = relay.Function(
        [data], first + relay.RefRead(relay.RefCreate(second)) + third
    )
    mod = transform.FuseOps()(transform.InferType()(mod))
    assert relay.analysis.well_formed(mod["main"])


def _exp_chain(t, n):
    for _ in range(n):
        t = relay.exp(t)
    return t


def _split_chain(total, first_len):
    """fn (%inp) { kernel(first_len exps)(...) then kernel(the rest)(...) }"""
    a = relay.var("a", shape=(10, 20))
    b = relay.var("b", shape=(10, 20))
    arg = relay.var("inp", shape=(10, 20))
    head = relay.Call(kernel([a], _exp_chain(a, first_len)), [arg])
    tail = relay.Call(kernel([b], _exp_chain(b, total - first_len)), [head])
    return relay.Function([arg], tail)


def test_fuse_max():
    """A group holds at most max_depth operators (256 unless configured)."""
    inp = relay.var("inp", shape=(10, 20))
    long_chain = relay.Function([inp], _exp_chain(inp, 300))
    fused(long_chain, fuse_opt_level=2)
    tvm.ir.assert_structural_equal(fused(long_chain), typed(_split_chain(300, 256)))

    inp = relay.var("inp", shape=(10, 20))
    short_chain = relay.Function([inp], _exp_chain(inp, 20))
    with tvm.transform.PassContext(config={"relay.FuseOps.max_depth": 10}):
        result = fused(short_chain)
    tvm.ir.assert_structural_equal(result, typed(_split_chain(20, 10)))


def _indexing_case(op_name):
    """(before, expected(link_params)) for TVM's test_fuse_take / test_fuse_gather_nd."""
    if op_name == "take":
        values, index_shape = [0], (1,)

        def index(data, indices):
            return relay.op.take(data, indices=indices)
    else:
        values, index_shape = [[0, 1], [1, 0]], (2, 2)

        def index(data, indices):
            return relay.gather_nd(data, indices=indices)

    def doubled(t):
        return relay.concatenate([t, t], axis=-1)

    def before():
        inp = relay.var("inp", shape=(10, 1))
        out = index(doubled(inp), relay.const(values, dtype="int64"))
        return relay.Function([inp], out)

    def expected(link_params):
        const = relay.const(values, dtype="int64")
        t = relay.var("t", shape=(10, 1))
        inp = relay.var("inp", shape=(10, 1))
        if link_params:
            k = kernel([t], index(doubled(t), const))
            return relay.Function([inp], relay.Call(k, [inp]))
        idx = relay.var("idx", shape=index_shape, dtype="int64")
        k = kernel([t, idx], index(doubled(t), idx))
        return relay.Function([inp], relay.Call(k, [inp, const]))

    return before, expected


link_params = tvm.testing.parameter(False, True)


@pytest.mark.parametrize("op_name", ["take", "gather_nd"])
def test_fuse_take_and_gather_nd(op_name, link_params):
    """concatenate then take / gather_nd of constant indices (TVM's two tests)."""
    before, expected = _indexing_case(op_name)
    config = {"relay.FuseOps.link_params": link_params}
    with tvm.transform.PassContext(opt_level=2, config=config):
        result = fused(typed(before()))
    tvm.ir.assert_structural_equal(result, typed(expected(link_params)))


@pytest.mark.parametrize("op_name", ["take", "gather_nd"])
def test_fuse_take_and_gather_nd_without_link_params(op_name):
    """TVM's default (no link_params): the constant indices are an argument of the kernel."""
    before, expected = _indexing_case(op_name)
    with tvm.transform.PassContext(opt_level=2):
        result = fused(typed(before()))
    tvm.ir.assert_structural_equal(result, typed(expected(False)))


def test_fuse_bcast_reduce_scalar():
    """A broadcast on a scalar and the reduction after it form one kernel."""

    def body_of(t):
        return relay.min(relay.less(t, relay.const(10, dtype="int32")))

    inp = relay.var("inp", shape=(), dtype="int32")
    mod = fuse_module(tvm.IRModule.from_expr(relay.Function([inp], body_of(inp))), 2)

    p = relay.var("p", shape=(), dtype="int32")
    arg = relay.var("inp", shape=(), dtype="int32")
    expected = relay.Function([arg], relay.Call(kernel([p], body_of(p)), [arg]))
    tvm.ir.assert_structural_equal(mod["main"], typed(expected))


def test_fuse_max_diamond():
    """With max_depth the size of one diamond, each diamond is its own kernel."""
    arm = 5
    count = 3

    def diamond(t):
        return relay.add(_exp_chain(t, arm), _exp_chain(t, arm))

    inp = relay.var("inp", shape=(10, 20))
    out = inp
    for _ in range(count):
        out = diamond(out)
    with tvm.transform.PassContext(config={"relay.FuseOps.max_depth": 2 * arm + 1}):
        result = fused(relay.Function([inp], out))

    arg = relay.var("inp", shape=(10, 20))
    out = arg
    for _ in range(count):
        p = relay.var("p", shape=(10, 20))
        out = relay.Call(kernel([p], diamond(p)), [out])
    tvm.ir.assert_structural_equal(result, typed(relay.Function([arg], out)))


def test_fuse_dynamic_squeeze_slice_take():
    """squeeze, strided_slice and take on dynamic shapes run on the VM executor."""
    data = np.random.default_rng(3).random((1, 2, 4)).astype("float32")
    rows = np.array([0]).astype("int64")

    x = relay.var("x", shape=(relay.Any(), relay.Any(), 4), dtype="float32")
    idx = relay.var("idx", shape=(relay.Any(),), dtype="int64")
    sliced = relay.op.strided_slice(
        relay.op.squeeze(x, axis=[0]), begin=[0, 0], end=[15130, 2147483647], strides=[1, 1]
    )
    mod = tvm.IRModule.from_expr(relay.op.take(sliced, idx, axis=0))
    run = relay.create_executor("vm", mod=mod, device=tvm.cpu(), target="llvm").evaluate()
    result = run(data, rows)
    assert np.allclose(result.numpy(), np.squeeze(data[:, rows[0], :], axis=0))


def test_fuse_softmax():
    """softmax fuses with the cast after it."""

    def body_of(t):
        return relay.cast(relay.nn.softmax(t), "float16")

    inp = relay.var("inp", shape=(16, 16))
    mod = fuse_module(tvm.IRModule.from_expr(relay.Function([inp], body_of(inp))), 2)

    p = relay.var("p", shape=(16, 16))
    arg = relay.var("inp", shape=(16, 16))
    expected = relay.Function([arg], relay.Call(kernel([p], body_of(p)), [arg]))
    tvm.ir.assert_structural_equal(mod["main"], typed(expected))

    data = np.random.default_rng(5).standard_normal((16, 16)).astype("float32")
    e = np.exp(data - data.max(axis=1, keepdims=True))
    reference = (e / e.sum(axis=1, keepdims=True)).astype("float16")
    for target, dev in tvm.testing.enabled_targets():
        run = relay.create_executor("graph", mod=mod, device=dev, target=target).evaluate()
        tvm.testing.assert_allclose(run(data).numpy(), reference, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    tvm.testing.main()
