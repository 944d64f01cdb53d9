"""PartitionGraph on the cases of TVM v0.18's test_pass_partition_graph.py, written as a TVM user.

The facts: each region becomes a global function ``tvmgen_default_<target>_
<function>_<region id>`` with ``Primitive``, ``Inline``, ``Compiler`` and
``global_symbol``, called from where the region was (operators of other
targets stay in the caller, FuseOps then fuses them as usual); target names
are sanitized into symbols; every function of the module is partitioned; a
constant input is bound into the lifted function; a region with several
outputs returns a tuple, read with projections, without repeating an output
used twice; a tuple closed by one ``compiler_end`` is flattened; merged
regions keep an output used inside and outside the region.

Where TVM builds the partitioned module with the C source or DNNL codegen and
runs it (``check_result``), the cases here run it on the interpreter and
compare with the unpartitioned program.  The cases left out, with reasons,
are listed in docs/coming-from-relay.md ("BYOC partitioning").
"""
import numpy as np

import relaypass as tvm
import relaypass.relay.transform as transform
from relaypass import relay
from relaypass.relay.build_module import bind_params_by_name
from relaypass.relay.op.annotation import compiler_begin, compiler_end


@transform.function_pass(opt_level=0)
class AllowedListAnnotator:
    """Wraps every call of a listed operator in begin/end annotations for ``compiler``."""

    def __init__(self, op_list, compiler):
        self.op_list = op_list
        self.compiler = compiler

    def transform_function(self, func, mod, dev):
        annotator = self

        class Annotator(tvm.relay.ExprMutator):
            def visit_call(self, call):
                if call.op.name not in annotator.op_list:
                    return super().visit_call(call)
                args = []
                for arg in call.args:  # a loop: zero-argument super() fails in a comprehension
                    args.append(compiler_begin(super().visit(arg), annotator.compiler))
                new_call = relay.Call(call.op, args, call.attrs, call.type_args)
                return compiler_end(new_call, annotator.compiler)

        return Annotator().visit(func)


def set_func_attr(func, compile_name, symbol_name):
    func = func.with_attr("Primitive", tvm.tir.IntImm("int32", 1))
    func = func.with_attr("Inline", tvm.tir.IntImm("int32", 1))
    func = func.with_attr("Compiler", compile_name)
    return func.with_attr("global_symbol", symbol_name)


def run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def check_on_interpreter(partitioned, inputs, expected, tol=1e-5):
    """What check_result builds with a codegen, here: the interpreter runs the partitioned module."""
    result = run(partitioned, *inputs)
    outputs = [r.numpy() for r in result] if isinstance(expected, list) else [result.numpy()]
    for got, want in zip(outputs, expected if isinstance(expected, list) else [expected]):
        tvm.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_extern_ccompiler_single_op():
    x = relay.var("x", shape=(8, 8))
    y = relay.var("y", shape=(8, 8))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([x, y], x + y)
    mod = transform.PartitionGraph()(AllowedListAnnotator(["add"], "ccompiler")(mod))
    assert mod["tvmgen_default_ccompiler_main_0"].attrs["Compiler"] == "ccompiler"
    rng = np.random.default_rng(1)
    x_data, y_data = rng.random((8, 8), "float32"), rng.random((8, 8), "float32")
    check_on_interpreter(mod, [x_data, y_data], x_data + y_data)


def _log_exp_program(shape):
    x = relay.var("x", shape=shape)
    y = relay.var("y", shape=shape)
    add = x + y
    return relay.Function([x, y], relay.concatenate([relay.log(add), relay.exp(add)], axis=0))


def _log_exp_expected(mod, shape, compiler, symbol, caller_names):
    x = relay.var(caller_names[0], shape=shape)
    y = relay.var(caller_names[1], shape=shape)
    x0 = relay.var("x0", shape=shape)
    y0 = relay.var("y0", shape=shape)
    glb = relay.GlobalVar(symbol)
    mod[glb] = set_func_attr(relay.Function([x0, y0], x0 + y0), compiler, symbol)
    p0 = relay.var("p0", shape=shape)
    fused = relay.Function([p0], relay.concatenate([relay.log(p0), relay.exp(p0)], axis=0))
    fused = fused.with_attr("Primitive", tvm.tir.IntImm("int32", 1))
    return relay.Function([x, y], relay.Call(fused, [relay.Call(glb, [x, y])]))


def _partition_log_exp(compiler, functions):
    """Partition, fuse and compare with TVM's expected module.

    ``functions``: (global name, shape, lifted symbol, caller's parameter names).
    """
    mod = tvm.IRModule()
    for name, shape, _, _ in functions:
        mod[name] = _log_exp_program(shape)
    mod = AllowedListAnnotator(["add", "subtract", "multiply"], compiler)(mod)
    partitioned = transform.PartitionGraph()(mod)

    expected_mod = tvm.IRModule()
    for name, shape, symbol, names in functions:
        expected_mod[name] = _log_exp_expected(expected_mod, shape, compiler, symbol, names)
    expected_mod = transform.InferType()(expected_mod)
    tvm.ir.assert_structural_equal(transform.FuseOps(2)(partitioned), expected_mod,
                                   map_free_vars=True)
    return partitioned


def _check_log_exp_values(partitioned, seed):
    rng = np.random.default_rng(seed)
    x_data, y_data = rng.random((8, 8), "float32"), rng.random((8, 8), "float32")
    total = x_data + y_data
    check_on_interpreter(partitioned, [x_data, y_data],
                         np.concatenate([np.log(total), np.exp(total)]))


def test_extern_ccompiler_default_ops():
    partitioned = _partition_log_exp(
        "ccompiler", [("main", (8, 8), "tvmgen_default_ccompiler_main_0", ("x", "y"))])
    _check_log_exp_values(partitioned, 2)


def test_extern_compiler_sanitized_ops():
    _partition_log_exp(
        "unsanitary-name++",
        [("main", (8, 8), "tvmgen_default_unsanitary_name___main_0", ("x", "y"))])


def test_extern_ccompiler_multiple_functions():
    partitioned = _partition_log_exp("ccompiler", [
        ("main", (8, 8), "tvmgen_default_ccompiler_main_0", ("x", "y")),
        ("subfunction", (16, 16), "tvmgen_default_ccompiler_subfunction_0", ("a", "b")),
    ])
    _check_log_exp_values(partitioned, 3)


def test_extern_ccompiler():
    x = relay.var("x", shape=(2, 2))
    y = relay.var("y", shape=(2, 2))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([x, y], (y * y) - (x + x))
    mod = transform.PartitionGraph()(
        AllowedListAnnotator(["add", "subtract", "multiply"], "ccompiler")(mod))
    rng = np.random.default_rng(4)
    x_data, y_data = rng.random((2, 2), "float32"), rng.random((2, 2), "float32")
    check_on_interpreter(mod, [x_data, y_data], (y_data * y_data) - (x_data + x_data))


def test_function_lifting():
    def partition():
        data = relay.var("data", relay.TensorType((1, 3, 224, 224), "float32"))
        weight = relay.var("weight", relay.TensorType((16, 3, 3, 3), "float32"))
        bn = [relay.var(n, relay.TensorType((16,), "float32"))
              for n in ("bn_gamma", "bn_beta", "bn_mean", "bn_var")]
        conv = relay.nn.conv2d(data=data, weight=weight, kernel_size=(3, 3), channels=16,
                               padding=(1, 1))
        out = relay.nn.batch_norm(conv, *bn)
        mod = tvm.IRModule()
        mod["main"] = relay.Function([data, weight, *bn], out.astuple())
        mod = relay.transform.InferType()(mod)
        mod = AllowedListAnnotator(["nn.batch_norm", "nn.conv2d"], "test_compiler")(mod)
        # TVM's sequence also runs AlterOpLayout, which relaypass does not have; it
        # changes nothing here (Compiler functions are skipped by function passes).
        opt_pass = tvm.transform.Sequential([
            transform.InferType(), transform.PartitionGraph(), transform.SimplifyInference(),
            transform.FoldConstant(),
        ])
        with tvm.transform.PassContext(opt_level=3):
            return opt_pass(mod)

    def expected():
        mod = tvm.IRModule()
        data0 = relay.var("data0", relay.TensorType((1, 16, 224, 224), "float32"))
        bn1 = [relay.var(n, relay.TensorType((16,), "float32"))
               for n in ("bn_gamma1", "bn_beta1", "bn_mean1", "bn_var1")]
        func0 = relay.Function([data0, *bn1], relay.nn.batch_norm(data0, *bn1).astuple())
        gv0 = relay.GlobalVar("tvmgen_default_test_compiler_main_2")
        mod[gv0] = set_func_attr(func0, "test_compiler", "tvmgen_default_test_compiler_main_2")

        data1 = relay.var("data1", relay.TensorType((1, 3, 224, 224), "float32"))
        weight1 = relay.var("weight1", relay.TensorType((16, 3, 3, 3), "float32"))
        conv = relay.nn.conv2d(data=data1, weight=weight1, kernel_size=(3, 3), channels=16,
                               padding=(1, 1))
        gv1 = relay.GlobalVar("tvmgen_default_test_compiler_main_0")
        mod[gv1] = set_func_attr(relay.Function([data1, weight1], conv), "test_compiler",
                                 "tvmgen_default_test_compiler_main_0")

        data = relay.var("data", relay.TensorType((1, 3, 224, 224), "float32"))
        weight = relay.var("weight", relay.TensorType((16, 3, 3, 3), "float32"))
        bn = [relay.var(n, relay.TensorType((16,), "float32"))
              for n in ("bn_gamma", "bn_beta", "bn_mean", "bn_var")]
        mod["main"] = relay.Function([data, weight, *bn], gv0(gv1(data, weight), *bn))
        return transform.InferType()(mod)

    tvm.ir.assert_structural_equal(partition(), expected(), map_free_vars=True)


def test_constant_propagation():
    ones = np.ones(shape=(8, 8), dtype="float32")

    def expected():
        mod = tvm.IRModule()
        y = relay.var("y", shape=(8, 8))
        y0 = relay.var("y0", shape=(8, 8))
        func = relay.Function([y0], relay.const(ones) + y0)
        glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
        mod[glb_0] = set_func_attr(func, "ccompiler", "tvmgen_default_ccompiler_main_0")
        mod["main"] = relay.Function([y], relay.log(relay.Call(glb_0, [y])))
        return relay.transform.InferType()(mod)

    x = relay.var("x", shape=(8, 8))
    y = relay.var("y", shape=(8, 8))
    f = bind_params_by_name(relay.Function([x, y], relay.log(x + y)), {"x": tvm.nd.array(ones)})
    mod = tvm.IRModule()
    mod["main"] = f
    mod = AllowedListAnnotator(["add"], "ccompiler")(mod)
    mod = relay.transform.InferType()(transform.PartitionGraph()(mod))
    tvm.ir.assert_structural_equal(mod, expected(), map_free_vars=True)

    y_data = np.random.default_rng(5).random((8, 8), "float32")
    check_on_interpreter(mod, [y_data], np.log(ones + y_data))


def test_multiple_outputs():
    def create_graph():
        names = ("data", "weight", "bn_gamma", "bn_beta", "bn_mean", "bn_var")
        shapes = ((1, 3, 224, 224), (16, 3, 3, 3), (16,), (16,), (16,), (16,))
        params = [relay.var(n, relay.TensorType(s, "float32")) for n, s in zip(names, shapes)]
        begins = [compiler_begin(p, "test_target") for p in params]
        conv = relay.nn.conv2d(data=begins[0], weight=begins[1], kernel_size=(3, 3),
                               channels=16, padding=(1, 1))
        bn = relay.nn.batch_norm(conv, *begins[2:])
        relu = compiler_end(relay.nn.relu(bn[0]), "test_target")
        mean = compiler_end(bn[1], "test_target")
        var = compiler_end(bn[2], "test_target")
        return relay.Function(params, relay.Tuple((relu, relay.abs(mean), relay.abs(var))))

    def expected():
        mod = tvm.IRModule()
        shapes = ((1, 3, 224, 224), (16, 3, 3, 3), (16,), (16,), (16,), (16,))
        inner = [relay.var(f"test_target_0_i{i}", relay.TensorType(s, "float32"))
                 for i, s in enumerate(shapes)]
        conv = relay.nn.conv2d(data=inner[0], weight=inner[1], kernel_size=(3, 3), channels=16,
                               padding=(1, 1))
        bn = relay.nn.batch_norm(conv, *inner[2:])
        func0 = relay.Function(inner, relay.Tuple((relay.nn.relu(bn[0]), bn[1], bn[2])))
        gv0 = relay.GlobalVar("tvmgen_default_test_target_main_0")
        mod[gv0] = set_func_attr(func0, "test_target", "tvmgen_default_test_target_main_0")

        names = ("data", "weight", "bn_gamma", "bn_beta", "bn_mean", "bn_var")
        params = [relay.var(n, relay.TensorType(s, "float32")) for n, s in zip(names, shapes)]
        out = gv0(*params)
        body = relay.Tuple((relay.TupleGetItem(out, 0), relay.abs(relay.TupleGetItem(out, 1)),
                            relay.abs(relay.TupleGetItem(out, 2))))
        mod["main"] = relay.Function(params, body)
        return relay.transform.InferType()(mod)

    mod = tvm.IRModule()
    mod["main"] = create_graph()
    tvm.ir.assert_structural_equal(transform.PartitionGraph()(mod), expected(),
                                   map_free_vars=True)


def test_mixed_single_multiple_outputs():
    def create_graph():
        data = relay.var("data", shape=(10, 10))
        o_1 = relay.abs(compiler_begin(data, "test_target"))
        ce_2 = compiler_end(o_1, "test_target")
        ce_3 = compiler_end(relay.nn.relu(o_1), "test_target")
        x = relay.tanh(ce_2)
        o_3 = relay.add(compiler_begin(ce_3, "test_target"), compiler_begin(x, "test_target"))
        return relay.Function([data], compiler_end(o_3, "test_target"))

    def expected():
        mod = tvm.IRModule()
        f1_in = relay.var("test_target_0_i0", shape=(10, 10))
        f1_o1 = relay.abs(f1_in)
        func1 = relay.Function([f1_in], relay.Tuple((relay.nn.relu(f1_o1), f1_o1)))
        gv1 = relay.GlobalVar("tvmgen_default_test_target_main_0")
        mod[gv1] = set_func_attr(func1, "test_target", "tvmgen_default_test_target_main_0")

        a = relay.var("test_target_1_i0", shape=(10, 10))
        b = relay.var("test_target_1_i1", shape=(10, 10))
        gv0 = relay.GlobalVar("tvmgen_default_test_target_main_1")
        mod[gv0] = set_func_attr(relay.Function([a, b], relay.add(a, b)), "test_target",
                                 "tvmgen_default_test_target_main_1")

        data = relay.var("data", shape=(10, 10))
        out = gv1(data)
        x = relay.tanh(relay.TupleGetItem(out, 1))
        mod["main"] = relay.Function([data], gv0(relay.TupleGetItem(out, 0), x))
        return relay.transform.InferType()(mod)

    mod = tvm.IRModule()
    mod["main"] = create_graph()
    mod = transform.InferType()(mod)
    tvm.ir.assert_structural_equal(transform.PartitionGraph()(mod), expected(),
                                   map_free_vars=True)


def test_multiple_use_of_an_output():
    def get_mod():
        x = relay.var("x", shape=(8, 8))
        y = relay.var("y", shape=(8, 8))
        z = relay.var("z", shape=(8, 8))
        add = x + y
        mod = tvm.IRModule()
        mod["main"] = relay.Function([x, y, z], relay.log(add) * (add - z))
        return mod

    def expected_same_output_region():
        mod = tvm.IRModule()
        x0 = relay.var("x0", shape=(8, 8))
        y0 = relay.var("y0", shape=(8, 8))
        func = relay.Function([x0, y0], relay.log(x0) * (x0 - y0))
        glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
        mod[glb_0] = set_func_attr(func, "ccompiler", "tvmgen_default_ccompiler_main_0")
        x = relay.var("x", shape=(8, 8))
        y = relay.var("y", shape=(8, 8))
        z = relay.var("z", shape=(8, 8))
        mod["main"] = relay.Function([x, y, z], relay.Call(glb_0, [x + y, z]))
        return transform.InferType()(mod)

    def expected_different_output_region():
        mod = tvm.IRModule()
        i0 = relay.var("i0", shape=(8, 8))
        glb_0 = relay.GlobalVar("tvmgen_default_ccompiler_main_0")
        mod[glb_0] = set_func_attr(relay.Function([i0], relay.log(i0)), "ccompiler",
                                   "tvmgen_default_ccompiler_main_0")
        x0 = relay.var("x0", shape=(8, 8))
        y0 = relay.var("y0", shape=(8, 8))
        glb_1 = relay.GlobalVar("tvmgen_default_ccompiler_main_1")
        mod[glb_1] = set_func_attr(relay.Function([x0, y0], x0 - y0), "ccompiler",
                                   "tvmgen_default_ccompiler_main_1")
        x = relay.var("x", shape=(8, 8))
        y = relay.var("y", shape=(8, 8))
        z = relay.var("z", shape=(8, 8))
        add = x + y
        body = relay.Call(glb_0, [add]) * relay.Call(glb_1, [add, z])
        mod["main"] = relay.Function([x, y, z], body)
        return transform.InferType()(mod)

    for ops, expected in ((["subtract", "log", "multiply"], expected_same_output_region),
                          (["subtract", "log"], expected_different_output_region)):
        mod = AllowedListAnnotator(ops, "ccompiler")(get_mod())
        mod = transform.PartitionGraph()(transform.MergeCompilerRegions()(mod))
        tvm.ir.assert_structural_equal(mod, expected(), map_free_vars=True)


def _byoc_sequence(target):
    return tvm.transform.Sequential([
        transform.AnnotateTarget(target), transform.MergeCompilerRegions(),
        transform.PartitionGraph(),
    ])


def test_duplicate_outputs():
    target = "test_duplicate_outputs"
    tvm.ir.register_op_attr("abs", "target." + target, lambda expr: True)

    data = relay.var("data", shape=(10, 10))
    x = relay.abs(data)
    mod = tvm.IRModule()
    mod["main"] = relay.Function(
        [data], relay.Tuple([relay.nn.relu(x), relay.tanh(x), relay.log(x)]))

    expected = tvm.IRModule()
    f0_i0 = relay.var(target + "_0_i0", shape=(10, 10))
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(relay.Function([f0_i0], relay.abs(f0_i0)), target,
                                  "tvmgen_default_" + target + "_main_0")
    data2 = relay.var("data", shape=(10, 10))
    out = gv0(data2)
    expected["main"] = relay.Function(
        [data2], relay.Tuple([relay.nn.relu(out), relay.tanh(out), relay.log(out)]))
    expected = transform.InferType()(expected)

    tvm.ir.assert_structural_equal(_byoc_sequence(target)(mod), expected, map_free_vars=True)


def test_duplicate_merge_and_tuplegetitem():
    target = "test_duplicate_merge_and_tuplegetitem"
    for op_name in ("nn.batch_norm", "nn.relu"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    def params():
        return [relay.var("data", shape=(10, 10))] + [
            relay.var(n) for n in ("bn_gamma", "bn_beta", "bn_mean", "bn_var")]

    inputs = params()
    bn = relay.nn.batch_norm(*inputs)
    bn_out_1 = bn[1]  # one projection, used twice
    mod = tvm.IRModule()
    mod["main"] = relay.Function(
        inputs, relay.Tuple([relay.nn.relu(bn[0]), relay.tanh(bn_out_1), relay.log(bn_out_1)]))
    mod = transform.InferType()(mod)

    expected = tvm.IRModule()
    inner = [relay.var(target + "_0_i0", shape=(10, 10))] + [
        relay.var(f"{target}_0_i{i}") for i in range(1, 5)]
    inner_bn = relay.nn.batch_norm(*inner)
    func0 = relay.Function(inner, relay.Tuple([relay.nn.relu(inner_bn[0]), inner_bn[1]]))
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(func0, target, "tvmgen_default_" + target + "_main_0")
    outer = params()
    out = gv0(*outer)
    second = relay.TupleGetItem(out, 1)
    expected["main"] = relay.Function(
        outer, relay.Tuple([relay.TupleGetItem(out, 0), relay.tanh(second), relay.log(second)]))
    expected = transform.InferType()(expected)

    tvm.ir.assert_structural_equal(_byoc_sequence(target)(mod), expected, map_free_vars=True)


def test_flatten_tuple_output():
    target = "test_flatten_tuple_output"
    for op_name in ("split", "abs"):
        tvm.ir.register_op_attr(op_name, "target." + target, lambda expr: True)

    a = relay.var("a", shape=(10, 10), dtype="uint8")
    a_split = relay.split(a, 2)
    first_abs = relay.abs(relay.TupleGetItem(a_split.astuple(), 0))
    # TVM's concatenate turns the split's TupleWrapper into a tuple of projections;
    # relaypass's passes the split's tuple on as it is, so the tuple is written out.
    pieces = relay.Tuple([relay.TupleGetItem(a_split.astuple(), i) for i in range(2)])
    out = relay.Tuple((relay.concatenate(pieces, 0), relay.nn.relu(first_abs)))
    mod = transform.InferType()(tvm.IRModule.from_expr(relay.Function([a], out)))

    expected = tvm.IRModule()
    f0_i0 = relay.var(target + "_0_i0", shape=(10, 10), dtype="uint8")
    split = relay.split(f0_i0, 2).astuple()
    inner = relay.Tuple((relay.TupleGetItem(split, 0), relay.TupleGetItem(split, 1),
                         relay.abs(relay.TupleGetItem(split, 0))))
    gv0 = relay.GlobalVar("tvmgen_default_" + target + "_main_0")
    expected[gv0] = set_func_attr(relay.Function([f0_i0], inner), target,
                                  "tvmgen_default_" + target + "_main_0")
    data = relay.var("a", shape=(10, 10), dtype="uint8")
    f_out = gv0(data)
    concat = relay.concatenate(relay.Tuple((relay.TupleGetItem(f_out, 0),
                                            relay.TupleGetItem(f_out, 1))), 0)
    body = relay.Tuple((concat, relay.nn.relu(relay.TupleGetItem(f_out, 2))))
    expected["main"] = relay.Function([data], body)
    expected = transform.InferType()(expected)

    partitioned = transform.InferType()(_byoc_sequence(target)(mod))
    tvm.ir.assert_structural_equal(partitioned, expected, map_free_vars=True)


def test_tuple_output_exec():
    a = relay.var("a", shape=(10, 10), dtype="float32")
    b = relay.var("b", shape=(10, 10), dtype="float32")
    ba = compiler_begin(a, "ccompiler")
    bb = compiler_begin(b, "ccompiler")
    out = compiler_end(relay.Tuple((relay.add(ba, bb), relay.subtract(ba, bb))), "ccompiler")
    mod = tvm.IRModule()
    mod["main"] = relay.Function([a, b], out)
    mod = transform.PartitionGraph()(transform.InferType()(mod))

    rng = np.random.default_rng(6)
    a_data, b_data = rng.random((10, 10), "float32"), rng.random((10, 10), "float32")
    check_on_interpreter(mod, [a_data, b_data], [a_data + b_data, a_data - b_data])
