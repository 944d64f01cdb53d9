"""MergeCompilerRegions on the cases of TVM v0.18's test_pass_merge_compiler_regions.py.

The facts: in a diamond whose one side is unsupported, the supported
operators merge only as far as they can without the two regions depending
on each other; on the example graph of the RFC ("improved graph partitioning
algorithm") adds of the target and subtracts of ``default`` merge into the
regions the RFC draws; with an ``if`` between two supported operators the
restriction travels through the condition and branches, and partitioning
the result works (TVM checks only that it does not crash; here the
partitioned module also computes what the program computes).
"""
import numpy as np

import relaypass as tvm
import relaypass.relay.transform as transform
from relaypass import relay
from relaypass.relay.op.annotation import compiler_begin, compiler_end
from relaypass.relay.testing import run_opt_pass


def test_diamond_graph_fanouts():
    def diamond():
        data = relay.var("data", shape=(10, 10))
        top = relay.abs(compiler_begin(data, "test"))
        left = relay.nn.relu(compiler_begin(compiler_end(top, "test"), "test"))
        right = relay.tanh(compiler_begin(compiler_end(top, "test"), "default"))
        out = relay.add(compiler_begin(compiler_end(left, "test"), "test"),
                        compiler_begin(compiler_end(right, "default"), "test"))
        return relay.Function([data], compiler_end(out, "test"))

    def expected():
        data = relay.var("data", shape=(10, 10))
        top = relay.abs(compiler_begin(data, "test"))
        left = compiler_end(relay.nn.relu(top), "test")
        right = compiler_end(relay.tanh(compiler_begin(compiler_end(top, "test"), "default")),
                             "default")
        out = relay.add(compiler_begin(left, "test"), compiler_begin(right, "test"))
        return relay.Function([data], compiler_end(out, "test"))

    result = run_opt_pass(diamond(), relay.transform.MergeCompilerRegions())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), relay.transform.InferType()))


def _inputs():
    return [relay.var(f"in_{i}", shape=(10, 10), dtype="float32") for i in range(1, 11)]


def test_example_graph():
    def annotated():
        ins = _inputs()
        i1, i2, i3, i4, i5, i6, i7, i8, i9, i10 = ins

        def t(e):
            return compiler_begin(e, "test")

        def d(e):
            return compiler_begin(e, "default")

        n0 = relay.add(t(i1), t(i2))
        n1 = relay.add(t(i3), t(i4))
        n2 = relay.add(t(compiler_end(n0, "test")), t(compiler_end(n1, "test")))
        n3 = relay.subtract(d(i5), d(i6))
        n4 = relay.subtract(d(i7), d(compiler_end(n3, "default")))
        n5 = relay.add(t(compiler_end(n2, "test")), t(compiler_end(n4, "default")))
        n6 = relay.subtract(d(i8), d(compiler_end(n5, "test")))
        n7 = relay.add(t(i9), t(compiler_end(n5, "test")))
        n8 = relay.add(t(compiler_end(n6, "default")), t(compiler_end(n7, "test")))
        n9 = relay.add(t(i10), t(compiler_end(n8, "test")))
        return tvm.IRModule.from_expr(relay.Function(ins, compiler_end(n9, "test")))

    def expected():
        ins = _inputs()
        i1, i2, i3, i4, i5, i6, i7, i8, i9, i10 = ins
        n0 = relay.add(compiler_begin(i1, "test"), compiler_begin(i2, "test"))
        n1 = relay.add(compiler_begin(i3, "test"), compiler_begin(i4, "test"))
        n2 = relay.add(n0, n1)
        n3 = relay.subtract(compiler_begin(i5, "default"), compiler_begin(i6, "default"))
        n4 = compiler_end(relay.subtract(compiler_begin(i7, "default"), n3), "default")
        n5 = relay.add(n2, compiler_begin(n4, "test"))
        n6 = relay.subtract(compiler_begin(i8, "default"),
                            compiler_begin(compiler_end(n5, "test"), "default"))
        n6 = compiler_end(n6, "default")
        n7 = compiler_end(relay.add(compiler_begin(i9, "test"), n5), "test")
        n8 = relay.add(compiler_begin(n6, "test"), compiler_begin(n7, "test"))
        n9 = relay.add(compiler_begin(i10, "test"), n8)
        return tvm.IRModule.from_expr(relay.Function(ins, compiler_end(n9, "test")))

    mod = relay.transform.InferType()(relay.transform.MergeCompilerRegions()(annotated()))
    tvm.ir.assert_structural_equal(mod, relay.transform.InferType()(expected()))


def test_if_else():
    target = "test_if_else_merge"
    for op_name in ("sigmoid", "erf", "add"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def program():
        data = relay.var("data", shape=(1, 32))
        add0 = relay.add(data, data)
        sub0 = relay.subtract(add0, data)
        cond = relay.If(relay.equal(relay.sum(add0), relay.sum(sub0)),
                        relay.sigmoid(add0), relay.sigmoid(sub0))
        return tvm.IRModule.from_expr(relay.Function([data], relay.add(add0, relay.erf(cond))))

    data = np.linspace(-1, 1, 32, dtype="float32").reshape(1, 32)
    want = relay.create_executor("debug", mod=program()).evaluate()(data).numpy()
    for non_call in (True, False):
        merged = transform.MergeCompilerRegions()(
            transform.AnnotateTarget(target, non_call)(program()))
        partitioned = transform.PartitionGraph()(merged)
        got = relay.create_executor("debug", mod=partitioned).evaluate()(data).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
