"""AnnotateTarget on the cases of TVM v0.18's test_pass_annotate_target.py, written as a TVM user.

The facts: each operator a target supports (``register_op_attr(op,
"target.<name>", fn)``) is opened with ``compiler_begin`` and closed with
``compiler_end`` for that target, every other call for ``"default"``; a
value used twice gets one end per use; the support check sees typed calls;
tuples, projections and references join the region their operands agree on
(only with ``include_non_call_ops``); composite functions go to the target
that prefixes their name; running the pass again, or with targets one at a
time, gives what one run with all of them gives; ifs and lets stay outside
regions; a call without arguments and an empty tuple are left alone.

Out of scope: building and running with the DNNL codegen (``check_result``,
``test_extern_dnnl``'s run and ``test_extern_dnnl_mobilenet``, skipped in TVM
too): the DNNL case checks its annotation structurally and runs the
partitioned module on the interpreter instead.  ``relay.op._make`` (TVM's
FFI constructors) is not part of relaypass: ``relay.concatenate`` accepts
the annotated tuple expression directly.  The DNNL operator table
(``relay.op.contrib.dnnl``) is not part of relaypass: the case registers the
two operators it uses.
"""
import numpy as np

import relaypass as tvm
import relaypass.relay.transform as transform
from relaypass import relay


def begin(expr, target):
    return relay.annotation.compiler_begin(expr, target)


def end(expr, target):
    return relay.annotation.compiler_end(expr, target)


def test_extern_dnnl():
    for op_name in ("nn.conv2d", "add"):
        tvm.ir.register_op_attr(op_name, "target.dnnl", lambda expr: True)
    dtype, ishape, wshape = "float32", (1, 32, 14, 14), (32, 1, 3, 3)

    def program():
        data = relay.var("data", shape=ishape, dtype=dtype)
        weight = relay.var("weight1", shape=wshape, dtype=dtype)
        conv1 = relay.nn.conv2d(data, weight, kernel_size=(3, 3), padding=(1, 1), groups=32)
        conv2 = relay.nn.conv2d(conv1, weight, kernel_size=(3, 3), padding=(1, 1), groups=32)
        return tvm.IRModule.from_expr(relay.Function([data, weight], relay.add(conv1, conv2)))

    def annotated():
        data = relay.var("data", shape=ishape, dtype=dtype)
        weight = relay.var("weight1", shape=wshape, dtype=dtype)
        conv1 = relay.nn.conv2d(begin(data, "dnnl"), begin(weight, "dnnl"),
                                kernel_size=(3, 3), padding=(1, 1), groups=32)
        conv2 = relay.nn.conv2d(begin(end(conv1, "dnnl"), "dnnl"), begin(weight, "dnnl"),
                                kernel_size=(3, 3), padding=(1, 1), groups=32)
        out = relay.add(begin(end(conv1, "dnnl"), "dnnl"), begin(end(conv2, "dnnl"), "dnnl"))
        return tvm.IRModule.from_expr(relay.Function([data, weight], end(out, "dnnl")))

    mod = relay.transform.InferType()(transform.AnnotateTarget("dnnl")(program()))
    tvm.ir.assert_structural_equal(mod, relay.transform.InferType()(annotated()))

    # Instead of the DNNL build: the partitioned module computes what the program computes.
    rng = np.random.default_rng(0)
    i_data = rng.uniform(0, 1, ishape).astype(dtype)
    w_data = rng.uniform(0, 1, wshape).astype(dtype)
    expected = relay.create_executor("debug", mod=program()).evaluate()(i_data, w_data)
    partitioned = transform.PartitionGraph()(mod)
    got = relay.create_executor("debug", mod=partitioned).evaluate()(i_data, w_data)
    tvm.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_multiple_ends():
    tvm.ir.register_op_attr("nn.relu", "target.test", lambda expr: True)

    def before():
        x = relay.var("x", shape=(10, 10))
        r = relay.nn.relu(x)
        return tvm.IRModule.from_expr(relay.Function([x], relay.add(relay.abs(r), relay.abs(r))))

    def after():
        x = relay.var("x", shape=(10, 10))
        r = relay.nn.relu(begin(x, "test"))
        left = relay.abs(begin(end(r, "test"), "default"))
        right = relay.abs(begin(end(r, "test"), "default"))
        out = relay.add(begin(end(left, "default"), "default"),
                        begin(end(right, "default"), "default"))
        return tvm.IRModule.from_expr(relay.Function([x], end(out, "default")))

    for non_call in (False, True):
        result = transform.AnnotateTarget("test", non_call)(before())
        tvm.ir.assert_structural_equal(transform.InferType()(after()), result)


def test_type_propagation():
    target = "test_type_propagation"
    tvm.ir.register_op_attr(
        "nn.relu", "target." + target, lambda expr: expr.args[0].checked_type.dtype == "float32")

    x = relay.var("x", shape=(10, 10))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.relu(x))))
    for non_call in (False, True):
        # The predicate reads the argument's type: the pass must see typed calls.
        out = transform.AnnotateTarget(target, non_call)(mod)
        body = out["main"].body
        assert body.op.name == "annotation.compiler_end" and body.attrs.compiler == target


def test_ref_create_read_write():
    target = "relu"
    tvm.ir.register_op_attr("nn.relu", "target." + target, lambda expr: True)

    def before():
        cell = relay.RefCreate(relay.const(1.0))
        return tvm.IRModule.from_expr(relay.RefWrite(cell, relay.nn.relu(relay.RefRead(cell))))

    def after(non_call):
        init = begin(relay.const(1.0), "default") if non_call else relay.const(1.0)
        cell = relay.RefCreate(init)
        write_cell = read_cell = cell
        if non_call:
            write_cell = begin(end(cell, "default"), "default")
            read_cell = begin(end(cell, "default"), "default")
        read = relay.RefRead(read_cell)
        if non_call:
            read = end(read, "default")
        relu = end(relay.nn.relu(begin(read, target)), target)
        if non_call:
            relu = begin(relu, "default")
        out = relay.RefWrite(write_cell, relu)
        if non_call:
            out = end(out, "default")
        return tvm.IRModule.from_expr(out)

    for non_call in (True, False, True):
        result = transform.AnnotateTarget(target, non_call)(before())
        tvm.ir.assert_structural_equal(transform.InferType()(after(non_call)), result)


def test_tuple():
    target = "test_tuple"
    for op_name in ("nn.relu", "concatenate"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def before():
        x = relay.var("x", shape=(10, 5))
        y = relay.var("y", shape=(10, 5))
        out = relay.concatenate((relay.nn.relu(x), relay.nn.relu(y)), axis=1)
        return tvm.IRModule.from_expr(relay.Function([x, y], out))

    def after(non_call):
        x = relay.var("x", shape=(10, 5))
        y = relay.var("y", shape=(10, 5))
        left = end(relay.nn.relu(begin(x, target)), target)
        right = end(relay.nn.relu(begin(y, target)), target)
        if non_call:
            tup = end(relay.Tuple([begin(left, target), begin(right, target)]), target)
        else:
            tup = relay.Tuple([left, right])
        out = relay.concatenate(begin(tup, target), 1)  # TVM: relay.op._make.concatenate
        return tvm.IRModule.from_expr(relay.Function([x, y], end(out, target)))

    for non_call in (False, True):
        result = transform.AnnotateTarget(target, non_call)(before())
        tvm.ir.assert_structural_equal(transform.InferType()(after(non_call)), result)


def _add_relu_composite():
    in_1 = relay.var("in_1", shape=(10, 10))
    in_2 = relay.var("in_2", shape=(10, 10))
    func = relay.Function([in_1, in_2], relay.nn.relu(relay.add(in_1, in_2)))
    return func.with_attr("Composite", "test.add_relu")


def test_composite_function():
    a = relay.var("a", shape=(10, 10))
    b = relay.var("b", shape=(10, 10))
    before = tvm.IRModule.from_expr(relay.Function([a, b], relay.Call(_add_relu_composite(), [a, b])))

    a2 = relay.var("a", shape=(10, 10))
    b2 = relay.var("b", shape=(10, 10))
    call = relay.Call(_add_relu_composite(), [begin(a2, "test"), begin(b2, "test")])
    after = tvm.IRModule.from_expr(relay.Function([a2, b2], end(call, "test")))

    result = transform.AnnotateTarget("test")(before)
    tvm.ir.assert_structural_equal(transform.InferType()(after), result)


def test_double_target():
    tvm.ir.register_op_attr("nn.relu", "target.double.A", lambda expr: True)
    x = relay.var("x", shape=(10, 5))
    mod = tvm.IRModule.from_expr(relay.nn.relu(x))
    for non_call in (True, False):
        once = transform.AnnotateTarget("double.A", non_call)(mod)
        twice = transform.AnnotateTarget("double.A", non_call)(once)
        tvm.ir.assert_structural_equal(once, twice)


def test_different_targets():
    tvm.ir.register_op_attr("nn.relu", "target.different.A", lambda expr: True)
    tvm.ir.register_op_attr("add", "target.different.B", lambda expr: True)
    x = relay.var("x", shape=(10, 5))
    relu = relay.nn.relu(x)
    mod = tvm.IRModule.from_expr(relay.add(relu, relu))
    for non_call in (True, False):
        one_by_one = transform.AnnotateTarget("different.A", non_call)(mod)
        one_by_one = transform.AnnotateTarget("different.B", non_call)(one_by_one)
        together = transform.AnnotateTarget(["different.A", "different.B"], non_call)(mod)
        tvm.ir.assert_structural_equal(one_by_one, together)


def test_multiple_runs():
    tvm.ir.register_op_attr("nn.relu", "target.A", lambda expr: True)
    tvm.ir.register_op_attr("add", "target.B", lambda expr: True)

    def before():
        x = relay.var("x", shape=(10, 5))
        relu = relay.nn.relu(x)
        out = relay.add(relay.abs(relu), relay.nn.relu(relu))
        return tvm.IRModule.from_expr(relay.Function([x], out))

    for non_call in (True, False):
        mod = transform.AnnotateTarget("A", non_call)(before())
        mod = transform.AnnotateTarget("B", non_call)(mod)
        expected = transform.AnnotateTarget(["A", "B"], non_call)(before())
        tvm.ir.assert_structural_equal(expected, mod)


def test_ends_with_tuple():
    target = "clip"
    tvm.ir.register_op_attr("clip", "target." + target, lambda expr: True)

    def model(get_item):
        a = relay.var("a", shape=(1, 16, 16, 4), dtype="uint8")
        z = relay.op.clip(a, 0, 255)
        tup = relay.Tuple((relay.op.clip(z, 16, 31), relay.op.clip(z, 0, 15)))
        return tvm.IRModule.from_expr(relay.TupleGetItem(tup, 1) if get_item else tup)

    def expected(non_call, get_item):
        a = relay.var("a", shape=(1, 16, 16, 4), dtype="uint8")
        z = relay.op.clip(begin(a, target), 0, 255)
        b = end(relay.op.clip(begin(end(z, target), target), 0, 15), target)
        c = end(relay.op.clip(begin(end(z, target), target), 16, 31), target)
        if non_call:
            b, c = begin(b, target), begin(c, target)
        out = relay.Tuple((c, b))
        if non_call:
            out = end(out, target)
        if get_item:
            out = relay.TupleGetItem(begin(out, target) if non_call else out, 1)
            if non_call:
                out = end(out, target)
        return tvm.IRModule.from_expr(relay.Function([a], out))

    for get_item in (True, False):
        for non_call in (False, True):
            result = transform.AnnotateTarget(target, non_call)(model(get_item))
            want = transform.InferType()(expected(non_call, get_item))
            tvm.ir.assert_structural_equal(want, result)


def test_if_else():
    target = "test_if_else"
    for op_name in ("equal", "tanh", "sigmoid", "erf"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def before():
        data = relay.var("data", shape=(1, 32))
        e1 = relay.var("e1", shape=[], dtype="float32")
        e2 = relay.var("e2", shape=[], dtype="float32")
        cond = relay.If(relay.equal(e1, e2), relay.tanh(data), relay.sigmoid(data))
        return tvm.IRModule.from_expr(relay.Function([data, e1, e2], relay.erf(cond)))

    def after():
        data = relay.var("data", shape=(1, 32))
        e1 = relay.var("e1", shape=[], dtype="float32")
        e2 = relay.var("e2", shape=[], dtype="float32")
        test = end(relay.equal(begin(e1, target), begin(e2, target)), target)
        then = end(relay.tanh(begin(data, target)), target)
        other = end(relay.sigmoid(begin(data, target)), target)
        out = end(relay.erf(begin(relay.If(test, then, other), target)), target)
        return tvm.IRModule.from_expr(relay.Function([data, e1, e2], out))

    expected = transform.InferType()(after())
    for non_call in (True, False):
        tvm.ir.assert_structural_equal(expected, transform.AnnotateTarget(target, non_call)(before()))


def test_while_let():
    target = "test_while_let"
    for op_name in ("less", "add", "zeros_like"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def before():
        var1 = relay.var("var1", shape=(2,))
        var2 = relay.var("var2", shape=(), dtype="int32")
        var3 = relay.var("var3", shape=(2,))
        loop = relay.var("while_loop")
        body = relay.If(relay.less(var2, relay.const(10, dtype="int32")),
                        loop(var2 + relay.const(1, dtype="int32"), var3 + var1), var3)
        step = relay.Function([var2, var3], body)
        ret = relay.Let(loop, step, loop(relay.const(0, dtype="int32"), relay.zeros_like(var1)))
        return tvm.IRModule.from_expr(relay.Function([var1], ret))

    def after(non_call):
        def dflt(expr, annotate):
            return annotate(expr, "default") if non_call else expr

        var1 = relay.var("var1", shape=(2,))
        var2 = relay.var("var2", shape=(), dtype="int32")
        var3 = relay.var("var3", shape=(2,))
        loop = relay.var("while_loop")
        test = end(relay.less(begin(var2, target), begin(relay.const(10, dtype="int32"), target)),
                   target)
        count = end(relay.add(begin(var2, target), begin(relay.const(1, dtype="int32"), target)),
                    target)
        total = end(relay.add(begin(var3, target), begin(var1, target)), target)
        again = dflt(loop(dflt(count, begin), dflt(total, begin)), end)
        step = relay.Function([var2, var3], relay.If(test, again, var3))
        zeros = end(relay.zeros_like(begin(var1, target)), target)
        first = dflt(loop(dflt(relay.const(0, dtype="int32"), begin), dflt(zeros, begin)), end)
        return tvm.IRModule.from_expr(relay.Function([var1], relay.Let(loop, step, first)))

    for non_call in (False, True):
        result = transform.AnnotateTarget(target, non_call)(before())
        tvm.ir.assert_structural_equal(transform.InferType()(after(non_call)), result)


def test_if_free_vars():
    target = "test_if_free_vars"
    for op_name in ("equal", "sigmoid", "erf"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def before():
        data = relay.var("data", shape=(1, 32))
        e1 = relay.var("e1", shape=[], dtype="float32")
        e2 = relay.var("e2", shape=[], dtype="float32")
        cond = relay.If(relay.equal(e1, e2), relay.zeros(shape=(1, 32), dtype="float32"),
                        relay.sigmoid(data))
        return tvm.IRModule.from_expr(relay.Function([data, e1, e2], relay.erf(cond)))

    def after():
        data = relay.var("data", shape=(1, 32))
        e1 = relay.var("e1", shape=[], dtype="float32")
        e2 = relay.var("e2", shape=[], dtype="float32")
        test = end(relay.equal(begin(e1, target), begin(e2, target)), target)
        other = end(relay.sigmoid(begin(data, target)), target)
        cond = relay.If(test, relay.zeros(shape=(1, 32), dtype="float32"), other)
        out = end(relay.erf(begin(cond, target)), target)
        return tvm.IRModule.from_expr(relay.Function([data, e1, e2], out))

    for non_call in (True, False):
        result = transform.AnnotateTarget(target, non_call)(before())
        tvm.ir.assert_structural_equal(transform.InferType()(after()), result)


def test_free_vars_zeros():
    def program():
        return tvm.IRModule.from_expr(relay.Function([], relay.zeros(shape=(0), dtype="float32")))

    result = transform.AnnotateTarget("test_free_vars_zeros")(program())
    tvm.ir.assert_structural_equal(transform.InferType()(program()), result)


def test_empty_tuple():
    def program():
        return tvm.IRModule.from_expr(relay.Function([], relay.Tuple([])))

    for non_call in (True, False):
        result = transform.AnnotateTarget("test_empty_tuple", non_call)(program())
        tvm.ir.assert_structural_equal(transform.InferType()(program()), result)
