"""MergeComposite, checked against the cases of TVM v0.18's test_pass_merge_composite.py.

Each case builds a function, runs MergeComposite with a pattern table and
compares with the function written out by hand: every match becomes a
function literal marked ``Composite`` and ``PartitionedFromPattern``, called
where the group was.  TVM's einsum case is left out (relaypass's standard
operators have no ``einsum``; docs/coming-from-relay.md).
"""
import relaypass as tvm
from relaypass import relay
from relaypass.relay.dataflow_pattern import TupleGetItemPattern, is_op, wildcard
from relaypass.relay.testing import run_opt_pass


def pattern_add_sub_mul():
    # (x + y) * (x - y), both sides on the same two inputs
    x, y = wildcard(), wildcard()
    return (x + y) * (x - y)


def pattern_add_relu():
    return is_op("nn.relu")(wildcard() + wildcard())


def pattern_conv_bias_relu():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()))


def pattern_conv_bias_optional_relu():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    biased = is_op("nn.bias_add")(conv, wildcard())
    return biased.optional(lambda p: is_op("nn.relu")(p))


def pattern_triple_add():
    # s = x + y; t = x + s; t + s: the inner add is used twice
    x, y = wildcard(), wildcard()
    s = is_op("add")(x, y)
    t = is_op("add")(x, s)
    return is_op("add")(t, s)


def pattern_bn_relu():
    bn = is_op("nn.batch_norm")(wildcard(), wildcard(), wildcard(), wildcard(), wildcard())
    return is_op("nn.relu")(TupleGetItemPattern(bn, 0))


def composite(params, body, name, partitioned_from):
    func = relay.Function(params, body)
    func = func.with_attr("Composite", name)
    return func.with_attr("PartitionedFromPattern", partitioned_from)


def check_result(pattern_table, graph, expected_graph):
    result = run_opt_pass(graph, relay.transform.MergeComposite(pattern_table))
    assert not relay.analysis.free_vars(result), f"free variables left in {result}"
    expected = run_opt_pass(expected_graph, relay.transform.InferType())
    tvm.ir.assert_structural_equal(result, expected, map_free_vars=True)


def test_simple_merge():
    def before():
        p = relay.var("p", shape=(4, 6))
        q = relay.var("q", shape=(4, 6))
        return relay.Function([p, q], relay.nn.relu(relay.add(p, q)))

    def expected():
        p = relay.var("p", shape=(4, 6))
        q = relay.var("q", shape=(4, 6))
        i1 = relay.var("i1", shape=(4, 6))
        i2 = relay.var("i2", shape=(4, 6))
        fn = composite([i1, i2], relay.nn.relu(relay.add(i1, i2)), "add_relu", "add_nn.relu_")
        return relay.Function([p, q], relay.Call(fn, [p, q]))

    check_result([("add_relu", pattern_add_relu())], before(), expected())


def test_branch_merge():
    def before():
        p, q, r = (relay.var(n, shape=(5, 5)) for n in "pqr")
        first = relay.multiply(relay.add(p, q), relay.subtract(p, q))
        second = relay.multiply(relay.add(r, first), relay.subtract(r, first))
        return relay.Function([p, q, r], relay.nn.relu(second))

    def expected():
        p, q, r = (relay.var(n, shape=(5, 5)) for n in "pqr")
        fns = []
        for _ in range(2):
            u = relay.var("u", shape=(5, 5))
            v = relay.var("v", shape=(5, 5))
            body = relay.multiply(relay.add(u, v), relay.subtract(u, v))
            fns.append(composite([u, v], body, "add_sub_mul", "add_subtract_multiply_"))
        inner = relay.Call(fns[0], [p, q])
        outer = relay.Call(fns[1], [r, inner])
        return relay.Function([p, q, r], relay.nn.relu(outer))

    check_result([("add_sub_mul", pattern_add_sub_mul())], before(), expected())


def test_reuse_call_merge():
    def before():
        p = relay.var("p", shape=(3, 3))
        q = relay.var("q", shape=(3, 3))
        diff = relay.subtract(p, q)
        s = relay.add(diff, q)
        t = relay.add(diff, s)
        return relay.Function([p, q], relay.add(t, s))

    def expected():
        p = relay.var("p", shape=(3, 3))
        q = relay.var("q", shape=(3, 3))
        u = relay.var("u", shape=(3, 3))
        v = relay.var("v", shape=(3, 3))
        s = relay.add(u, v)
        body = relay.add(relay.add(u, s), s)
        fn = composite([u, v], body, "add_add_add", "add_add_add_")
        return relay.Function([p, q], relay.Call(fn, [relay.subtract(p, q), q]))

    check_result([("add_add_add", pattern_triple_add())], before(), expected())


def test_multiple_patterns():
    table = [("conv2d_bias_relu", pattern_conv_bias_relu()), ("add_relu", pattern_add_relu())]

    def inputs():
        return (relay.var("data", shape=(1, 8, 6, 6)), relay.var("weight", shape=(4, 8, 1, 1)),
                relay.var("bias", shape=(4,)), relay.var("a", shape=(1, 4, 6, 6)),
                relay.var("b", shape=(1, 4, 6, 6)))

    def before():
        data, weight, bias, a, b = inputs()
        conv = relay.nn.conv2d(data, weight, kernel_size=(1, 1))
        act = relay.nn.relu(relay.nn.bias_add(conv, bias))
        out = relay.multiply(relay.nn.relu(relay.add(act, a)), b)
        return relay.Function([data, weight, bias, a, b], out)

    def expected():
        data, weight, bias, a, b = inputs()
        x = relay.var("x", shape=(1, 8, 6, 6))
        w = relay.var("w", shape=(4, 8, 1, 1))
        c = relay.var("c", shape=(4,))
        conv = relay.nn.conv2d(x, w, kernel_size=(1, 1))
        cbr = composite([x, w, c], relay.nn.relu(relay.nn.bias_add(conv, c)),
                        "conv2d_bias_relu", "nn.conv2d_nn.bias_add_nn.relu_")
        u = relay.var("u", shape=(1, 4, 6, 6))
        v = relay.var("v", shape=(1, 4, 6, 6))
        ar = composite([u, v], relay.nn.relu(relay.add(u, v)), "add_relu", "add_nn.relu_")
        merged = relay.Call(ar, [relay.Call(cbr, [data, weight, bias]), a])
        return relay.Function([data, weight, bias, a, b], relay.multiply(merged, b))

    check_result(table, before(), expected())


def test_optional_pattern():
    def inputs():
        return (relay.var("x", shape=(1, 2, 5, 5)), relay.var("w1", shape=(2, 2, 1, 1)),
                relay.var("w2", shape=(2, 2, 1, 1)), relay.var("b1", shape=(2,)),
                relay.var("b2", shape=(2,)))

    def before():
        x, w1, w2, b1, b2 = inputs()
        first = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w1, kernel_size=(1, 1)), b1))
        second = relay.nn.bias_add(relay.nn.conv2d(first, w2, kernel_size=(1, 1)), b2)
        return relay.Function([x, w1, w2, b1, b2], second)

    def expected():
        def layer(with_relu):
            d, k, c = relay.var("d"), relay.var("k"), relay.var("c")
            out = relay.nn.bias_add(relay.nn.conv2d(d, k, kernel_size=(1, 1)), c)
            if with_relu:
                return composite([d, k, c], relay.nn.relu(out), "layer",
                                 "nn.conv2d_nn.bias_add_nn.relu_")
            return composite([d, k, c], out, "layer", "nn.conv2d_nn.bias_add_")

        x, w1, w2, b1, b2 = inputs()
        first = layer(True)(x, w1, b1)
        return relay.Function([x, w1, w2, b1, b2], layer(False)(first, w2, b2))

    check_result([("layer", pattern_conv_bias_optional_relu())], before(), expected())


def test_merge_order():
    def add_abs_relu():
        return is_op("nn.relu")(is_op("abs")(is_op("add")(wildcard(), wildcard())))

    def add_abs():
        return is_op("abs")(is_op("add")(wildcard(), wildcard()))

    def abs_relu():
        return is_op("nn.relu")(is_op("abs")(wildcard()))

    def before():
        p = relay.var("p", shape=(7,))
        q = relay.var("q", shape=(7,))
        return relay.Function([p, q], relay.nn.relu(relay.abs(relay.add(p, q))))

    def winner_a():
        p = relay.var("p", shape=(7,))
        q = relay.var("q", shape=(7,))
        u, v = relay.var("u"), relay.var("v")
        fn = composite([u, v], relay.nn.relu(relay.abs(relay.add(u, v))), "A", "add_abs_nn.relu_")
        return relay.Function([p, q], fn(p, q))

    def winner_b():
        p = relay.var("p", shape=(7,))
        q = relay.var("q", shape=(7,))
        u, v = relay.var("u"), relay.var("v")
        fn = composite([u, v], relay.abs(relay.add(u, v)), "B", "add_abs_")
        return relay.Function([p, q], relay.nn.relu(fn(p, q)))

    def winner_c():
        p = relay.var("p", shape=(7,))
        q = relay.var("q", shape=(7,))
        u = relay.var("u")
        fn = composite([u], relay.nn.relu(relay.abs(u)), "C", "abs_nn.relu_")
        return relay.Function([p, q], fn(relay.add(p, q)))

    check_result([("A", add_abs_relu()), ("B", add_abs()), ("C", abs_relu())], before(), winner_a())
    check_result([("B", add_abs()), ("C", abs_relu()), ("A", add_abs_relu())], before(), winner_b())
    check_result([("C", abs_relu()), ("A", add_abs_relu()), ("B", add_abs())], before(), winner_c())


def test_parallel_merge():
    def before():
        p = relay.var("p", shape=(6, 2))
        q = relay.var("q", shape=(6, 2))
        left = relay.multiply(relay.add(p, q), relay.subtract(p, q))
        right = relay.multiply(relay.add(p, q), relay.subtract(p, q))
        return relay.Function([p, q], relay.multiply(left, right))

    def expected():
        p = relay.var("p", shape=(6, 2))
        q = relay.var("q", shape=(6, 2))
        calls = []
        for _ in range(2):
            u, v = relay.var("u"), relay.var("v")
            body = relay.multiply(relay.add(u, v), relay.subtract(u, v))
            calls.append(relay.Call(composite([u, v], body, "add_sub_mul", "add_subtract_multiply_"),
                                    [p, q]))
        return relay.Function([p, q], relay.multiply(*calls))

    check_result([("add_sub_mul", pattern_add_sub_mul())], before(), expected())


def test_multiple_input_subgraphs():
    table = [("add_sub_mul", pattern_add_sub_mul()), ("add_relu", pattern_add_relu())]

    def add_relu_fn():
        u, v = relay.var("u"), relay.var("v")
        return composite([u, v], relay.nn.relu(relay.add(u, v)), "add_relu", "add_nn.relu_")

    def shared_inputs_before():
        ins = [relay.var(f"in{i}", shape=(3, 4)) for i in range(4)]
        r1 = relay.nn.relu(relay.add(ins[0], ins[1]))
        r2 = relay.nn.relu(relay.add(ins[2], ins[3]))
        return relay.Function(ins, relay.multiply(relay.add(r1, r2), relay.subtract(r1, r2)))

    def shared_inputs_after():
        ins = [relay.var(f"in{i}", shape=(3, 4)) for i in range(4)]
        r1 = relay.Call(add_relu_fn(), [ins[0], ins[1]])
        r2 = relay.Call(add_relu_fn(), [ins[2], ins[3]])
        u, v = relay.var("u"), relay.var("v")
        asm = composite([u, v], relay.multiply(relay.add(u, v), relay.subtract(u, v)),
                        "add_sub_mul", "add_subtract_multiply_")
        return relay.Function(ins, relay.Call(asm, [r1, r2]))

    def separate_inputs_before():
        ins = [relay.var(f"in{i}", shape=(3, 4)) for i in range(8)]
        rs = [relay.nn.relu(relay.add(ins[2 * i], ins[2 * i + 1])) for i in range(4)]
        out = relay.multiply(relay.add(rs[0], rs[1]), relay.subtract(rs[2], rs[3]))
        return relay.Function(ins, out)

    def separate_inputs_after():
        ins = [relay.var(f"in{i}", shape=(3, 4)) for i in range(8)]
        rs = [relay.Call(add_relu_fn(), [ins[2 * i], ins[2 * i + 1]]) for i in range(4)]
        out = relay.multiply(relay.add(rs[0], rs[1]), relay.subtract(rs[2], rs[3]))
        return relay.Function(ins, out)

    check_result(table, shared_inputs_before(), shared_inputs_after())
    check_result(table, separate_inputs_before(), separate_inputs_after())


def test_tuple_get_item_merge():
    def inputs():
        return (relay.var("x", shape=(2, 3)), relay.var("g", shape=(3,)), relay.var("b", shape=(3,)),
                relay.var("m", shape=(3,)), relay.var("v", shape=(3,)))

    def before():
        args = inputs()
        return relay.Function(list(args), relay.nn.relu(relay.nn.batch_norm(*args)[0]))

    def expected():
        args = inputs()
        params = [relay.var(f"p{i}", shape=a.type_annotation.shape) for i, a in enumerate(args)]
        body = relay.nn.relu(relay.nn.batch_norm(*params)[0])
        fn = composite(params, body, "bn_relu", "nn.batch_norm_TupleGetItem0_nn.relu_")
        return relay.Function(list(args), relay.Call(fn, list(args)))

    check_result([("bn_relu", pattern_bn_relu())], before(), expected())


def _nhwc_net():
    x = relay.var("x", shape=(1, 6, 6, 4))
    w = relay.var("w", shape=(4, 4, 3, 3))
    b = relay.var("b", shape=(4,))
    conv = relay.nn.conv2d(x, w, kernel_size=(3, 3), kernel_layout="OIHW", data_layout="NHWC")
    return x, w, b, relay.nn.relu(relay.nn.bias_add(conv, b))


def test_pattern_with_check():
    def layout_is(layout):
        def check(root):
            return root.args[0].args[0].attrs.data_layout == layout
        return check

    def before():
        x, w, b, out = _nhwc_net()
        return relay.Function([x, w, b], out)

    def expected():
        d, k, c = relay.var("d"), relay.var("k"), relay.var("c")
        conv = relay.nn.conv2d(d, k, kernel_size=(3, 3), kernel_layout="OIHW", data_layout="NHWC")
        fn = composite([d, k, c], relay.nn.relu(relay.nn.bias_add(conv, c)), "conv_bias_relu",
                       "nn.conv2d_nn.bias_add_nn.relu_")
        x, w, b, _ = _nhwc_net()
        return relay.Function([x, w, b], fn(x, w, b))

    rejected = [("conv_bias_relu", pattern_conv_bias_relu(), layout_is("NCHW"))]
    check_result(rejected, before(), before())
    accepted = [("conv_bias_relu", pattern_conv_bias_relu(), layout_is("NHWC"))]
    check_result(accepted, before(), expected())


def test_diamond_not_merge():
    # relu feeds both the multiply and (through an add) the clip: the pattern wants
    # the clip to read relu directly, so nothing matches.
    conv_relu = pattern_conv_bias_relu()
    pattern = is_op("multiply")(conv_relu, is_op("clip")(conv_relu, wildcard(), wildcard()))
    data = relay.var("data", shape=(1, 8, 4, 4))
    weight = relay.var("weight", shape=(4, 8, 1, 1))
    conv = relay.nn.conv2d(data, weight, kernel_size=(1, 1))
    relu = relay.nn.relu(relay.nn.bias_add(conv, relay.var("bias", shape=(4,))))
    clipped = relay.op.clip(relay.op.add(relu, relay.const(1.0)), 0, 255)
    out = relay.op.multiply(relu, clipped)
    net = relay.Function(relay.analysis.free_vars(out), out)
    check_result([("pat", pattern)], net, net)


def test_type_check():
    def before():
        x = relay.var("x", shape=(1, 6, 6, 4))
        w = relay.var("w", shape=(4, 4, 3, 3))
        b = relay.var("b", shape=(4,))
        act = relay.nn.relu(relay.op.add(x, x))
        conv = relay.nn.conv2d(act, w, kernel_size=(3, 3), kernel_layout="OIHW", data_layout="NHWC")
        out = relay.nn.relu(relay.nn.bias_add(conv, b))
        return run_opt_pass(relay.Function([x, w, b], out), relay.transform.InferType())

    def expected(conv_merged):
        x = relay.var("x", shape=(1, 6, 6, 4))
        w = relay.var("w", shape=(4, 4, 3, 3))
        b = relay.var("b", shape=(4,))
        t = relay.var("t")
        ar = composite([t], relay.nn.relu(relay.op.add(t, t)), "add_relu", "add_nn.relu_")
        act = relay.Call(ar, [x])
        if not conv_merged:
            conv = relay.nn.conv2d(act, w, kernel_size=(3, 3), kernel_layout="OIHW",
                                   data_layout="NHWC")
            return relay.Function([x, w, b], relay.nn.relu(relay.nn.bias_add(conv, b)))
        d, k, c = relay.var("d"), relay.var("k"), relay.var("c")
        conv = relay.nn.conv2d(d, k, kernel_size=(3, 3), kernel_layout="OIHW", data_layout="NHWC")
        cbr = composite([d, k, c], relay.nn.relu(relay.nn.bias_add(conv, c)), "conv_bias_relu",
                        "nn.conv2d_nn.bias_add_nn.relu_")
        return relay.Function([x, w, b], relay.Call(cbr, [act, w, b]))

    def batch_is_one(expected_answer):
        # The first pattern rebuilt the conv (its input became a composite call):
        # it has a type only because the pass types the function between patterns.
        def check(root):
            conv = root.args[0].args[0]
            return (conv.checked_type.shape[0] == 1) == expected_answer
        return check

    table_false = [("add_relu", pattern_add_relu()),
                   ("conv_bias_relu", pattern_conv_bias_relu(), batch_is_one(False))]
    check_result(table_false, before(), expected(False))
    table_true = [("add_relu", pattern_add_relu()),
                  ("conv_bias_relu", pattern_conv_bias_relu(), batch_is_one(True))]
    check_result(table_true, before(), expected(True))
