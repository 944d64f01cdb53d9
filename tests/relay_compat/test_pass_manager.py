"""The pass manager on the cases of TVM v0.18's tests/python/relay/test_pass_manager.py.

Written as a TVM user writes them; only the import lines differ.  The facts
carried over: module and function passes made by the decorators (on a
function, with or without the decorator syntax, and on a class), their
``info``; a function pass types its result, as Relay's FunctionPass ends with
InferType (so ``ret_type`` is filled and instruments see that run: a
Sequential of InferType, FoldConstant and DeadCodeElimination is reported as
six pass runs); Sequential, its ``required_pass`` rule and nested Sequentials
under a scoped PassContext; PrintIR writes to stderr; an instrument's context
hooks around a Sequential.

Out of scope: ``AlterOpLayout`` and the ``tvm.target.Target("llvm")`` scope in
``test_sequential_with_scoping`` (layouts need targets and operator
strategies), so that case runs the other three passes.
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.ir import instrument as _instrument  # noqa: F401  (as TVM's test imports it)
from relaypass.relay import Call, ExprFunctor, Function
from relaypass.relay import transform as _transform
from relaypass.relay.testing import run_infer_type


def get_var_func():
    tp = relay.TensorType((5, 10), "float32")
    x = relay.var("x", tp)
    return relay.GlobalVar("myAbs"), relay.Function([x], relay.abs(x))


def extract_var_func(mod, name):
    var = mod.get_global_var(name)
    return var, mod[var]


def update_func(func):
    """Doubles every variable and constant use: ``x`` becomes ``x + x``."""

    class DoubleValues(ExprFunctor):
        def visit_constant(self, const):
            return relay.add(const, const)

        def visit_var(self, var):
            return relay.add(var, var)

        def visit_call(self, call):
            return Call(self.visit(call.op), [self.visit(a) for a in call.args], call.attrs)

        def visit_global_var(self, gvar):
            return gvar

        def visit_op(self, op):
            return op

        def visit_function(self, fn):
            body = self.visit(fn.body)
            return Function(list(fn.params), body, fn.ret_type, fn.type_params, fn.attrs)

    return DoubleValues().visit(func)


class OptTester:
    """What the test passes do: add @myAbs to a module, double the values of a function."""

    def __init__(self, mod):
        if not isinstance(mod, tvm.IRModule):
            raise TypeError("OptTester wants a tvm.IRModule")
        self.mod = mod

    @staticmethod
    def transform(node, ctx=None):
        if isinstance(node, tvm.IRModule):
            gv, func = get_var_func()
            mod = tvm.IRModule({gv: func})
            mod.update(node)
            return mod
        if isinstance(node, relay.Function):
            return update_func(node)
        raise TypeError("OptTester transforms modules and functions only")


def get_rand(shape, dtype="float32"):
    return tvm.nd.array(np.random.rand(*shape).astype(dtype))


def check_func(func, ref_func):
    tvm.ir.assert_structural_equal(run_infer_type(func), run_infer_type(ref_func))


def check_runs(func, args, expected):
    for target, dev in tvm.testing.enabled_targets():
        for kind in ("graph", "debug"):
            res = relay.create_executor(kind, device=dev, target=target).evaluate(func)(*args)
            tvm.testing.assert_allclose(res.numpy(), expected, rtol=1e-5)


@tvm.testing.uses_gpu
def test_module_pass():
    shape, dtype = (5, 10), "float32"
    tp = relay.TensorType(shape, dtype)
    x, y = relay.var("x", tp), relay.var("y", tp)
    v_add = relay.GlobalVar("myAdd")
    func = relay.Function([x, y], x + y)
    mod = tvm.IRModule({v_add: func})
    opt_tester = OptTester(mod)

    @tvm.transform.module_pass(opt_level=0, name="module_pass_test")
    def transform(expr, ctx):
        return opt_tester.transform(expr, ctx)

    assert isinstance(transform, tvm.transform.ModulePass)
    assert transform.info.name == "module_pass_test" and transform.info.opt_level == 0

    def direct_transform(expr, ctx):
        return opt_tester.transform(expr, ctx)

    undecorated = tvm.transform.module_pass(direct_transform, opt_level=3)
    assert isinstance(undecorated, tvm.transform.ModulePass)
    assert undecorated.info.name == "direct_transform" and undecorated.info.opt_level == 3

    assert "module_pass_test" in str(transform)
    updated_mod = transform(mod)
    assert isinstance(updated_mod, tvm.IRModule)
    v_abs, myabs = get_var_func()
    check_func(updated_mod[updated_mod.get_global_var(v_abs.name_hint)], myabs)
    new_add = updated_mod[updated_mod.get_global_var(v_add.name_hint)]
    check_func(new_add, func)
    ret = opt_tester.transform(mod)
    check_func(new_add, mod[ret.get_global_var(v_add.name_hint)])

    x_nd, y_nd = get_rand(shape, dtype), get_rand(shape, dtype)
    check_runs(new_add, (x_nd, y_nd), x_nd.numpy() + y_nd.numpy())


def test_function_class_pass():
    @relay.transform.function_pass(opt_level=1)
    class TestReplaceFunc:
        """Replaces every function by the one it was given."""

        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            return self.new_func

    x = relay.var("x", shape=(10, 20))
    f1 = relay.Function([x], x)
    f2 = relay.Function([x], relay.log(x))
    fpass = TestReplaceFunc(f1)
    assert fpass.info.opt_level == 1 and fpass.info.name == "TestReplaceFunc"
    mod = fpass(tvm.IRModule.from_expr(f2))
    # The result is typed, as after InferType: the function pass ran it.
    expected = tvm.relay.transform.InferType()(tvm.IRModule.from_expr(f1))
    tvm.ir.assert_structural_equal(mod["main"], expected["main"])


@tvm.testing.uses_gpu
def test_function_pass():
    shape, dtype = (10,), "float32"
    x = relay.var("x", relay.TensorType(shape, dtype))
    v_log = relay.GlobalVar("myLog")
    log = relay.Function([x], relay.log(x))
    mod = tvm.IRModule({v_log: log})
    opt_tester = OptTester(mod)

    @_transform.function_pass(opt_level=1, name="function_pass_test")
    def transform(expr, mod, ctx):
        return opt_tester.transform(expr, ctx)

    assert isinstance(transform, _transform.FunctionPass)
    assert transform.info.name == "function_pass_test" and transform.info.opt_level == 1

    def direct_transform(expr, ctx):
        return opt_tester.transform(expr, ctx)

    undecorated = _transform.function_pass(direct_transform, opt_level=0)
    assert isinstance(undecorated, _transform.FunctionPass)
    assert undecorated.info.name == "direct_transform" and undecorated.info.opt_level == 0

    assert "function_pass_test" in str(transform)
    updated_mod = transform(mod)
    assert isinstance(updated_mod, tvm.IRModule)
    new_log = updated_mod[updated_mod.get_global_var(v_log.name_hint)]
    check_func(new_log, relay.Function([x], relay.log(relay.add(x, x))))
    check_func(new_log, opt_tester.transform(log))
    assert new_log.ret_type is not None  # typed by the InferType the function pass ends with

    x_nd = get_rand(shape, dtype)
    check_runs(new_log, (x_nd,), np.log(x_nd.numpy() * 2))


def test_module_class_pass():
    @tvm.transform.module_pass(opt_level=1)
    class TestPipeline:
        """Hands back the module it was given, or another one."""

        def __init__(self, new_mod, replace):
            self.new_mod = new_mod
            self.replace = replace

        def transform_module(self, mod, ctx):
            return self.new_mod if self.replace else mod

    x = relay.var("x", shape=(10, 20))
    m1 = tvm.IRModule.from_expr(relay.Function([x], x))
    m2 = tvm.IRModule.from_expr(relay.Function([x], relay.log(x)))
    fpass = TestPipeline(m2, replace=True)
    assert fpass.info.name == "TestPipeline"
    assert fpass(m1).same_as(m2)
    assert TestPipeline(m2, replace=False)(m1).same_as(m1)


def test_module_same_as_is_identity_not_equality():
    # A copy holds the same functions, yet is another module: same_as tells them apart.
    x = relay.var("x", shape=(10, 20))
    m1 = tvm.IRModule.from_expr(relay.Function([x], x))
    twin = m1.copy()
    tvm.ir.assert_structural_equal(twin, m1)
    assert m1.same_as(m1)
    assert not twin.same_as(m1)
    assert not m1.same_as(m1["main"])


def test_pass_info():
    info = tvm.transform.PassInfo(opt_level=1, name="xyz")
    assert info.opt_level == 1 and info.name == "xyz"
    assert tvm.ir.transform.PassInfo(1, "xyz", None, False) == info
    assert str(info) == "The meta data of the pass - pass name: xyz, opt_level: 1, required passes: []\n"


@tvm.testing.uses_gpu
def test_sequential_pass():
    shape, dtype = (10,), "float32"
    tp = relay.TensorType(shape, dtype)
    x, y, z = relay.var("x", tp), relay.var("y", tp), relay.var("z", tp)
    v_sub, v_log = relay.GlobalVar("mySub"), relay.GlobalVar("myLog")
    sub = relay.Function([x, y], relay.subtract(x, y))
    log = relay.Function([z], relay.log(z))
    mod = tvm.IRModule({v_sub: sub, v_log: log})

    def get_ref_log():
        return relay.Function([x], relay.log(relay.add(x, x)))

    def get_ref_sub():
        return relay.Function([x, y], relay.subtract(relay.add(x, x), relay.add(y, y)))

    def get_ref_abs():
        a = relay.var("a", relay.TensorType((5, 10), "float32"))
        return relay.Function([a], relay.abs(relay.add(a, a)))

    opt_tester = OptTester(mod)

    @tvm.transform.module_pass(opt_level=1)
    def mod_transform(expr, ctx):
        return opt_tester.transform(expr, ctx)

    @_transform.function_pass(opt_level=1)
    def func_transform(expr, mod, ctx):
        return opt_tester.transform(expr, ctx)

    sequential = tvm.transform.Sequential(passes=[mod_transform, func_transform], opt_level=2)
    assert sequential.info.name == "sequential" and sequential.info.opt_level == 2

    # No pass: the module comes back as it was.
    ret_mod = tvm.transform.Sequential(opt_level=1, passes=[])(mod)
    check_func(sub, ret_mod[v_sub])

    # Only the module pass.
    with tvm.transform.PassContext(required_pass=["mod_transform"]):
        ret_mod = tvm.transform.Sequential(opt_level=1, passes=[mod_transform])(mod)
    check_func(extract_var_func(ret_mod, v_sub.name_hint)[1], sub)
    abs_var, abs_func = get_var_func()
    check_func(extract_var_func(ret_mod, abs_var.name_hint)[1], abs_func)

    # Only the function pass.
    with tvm.transform.PassContext(required_pass=["func_transform"]):
        ret_mod = tvm.transform.Sequential(opt_level=1, passes=[func_transform])(mod)
    check_func(extract_var_func(ret_mod, v_sub.name_hint)[1], get_ref_sub())
    check_func(extract_var_func(ret_mod, v_log.name_hint)[1], get_ref_log())

    # Both, on a fresh module.
    mod = tvm.IRModule({v_sub: sub, v_log: log})
    with tvm.transform.PassContext(required_pass=["mod_transform", "func_transform"]):
        ret_mod = tvm.transform.Sequential(opt_level=1, passes=[mod_transform, func_transform])(mod)
    _, new_abs = extract_var_func(ret_mod, abs_var.name_hint)
    check_func(new_abs, get_ref_abs())
    _, new_sub = extract_var_func(ret_mod, v_sub.name_hint)
    check_func(new_sub, get_ref_sub())
    check_func(extract_var_func(ret_mod, v_log.name_hint)[1], get_ref_log())

    x_nd, y_nd = get_rand(shape, dtype), get_rand(shape, dtype)
    check_runs(new_sub, (x_nd, y_nd), np.subtract(x_nd.numpy() * 2, y_nd.numpy() * 2))
    a_nd = get_rand((5, 10), dtype)
    check_runs(new_abs, (a_nd,), np.abs(a_nd.numpy() * 2))


def test_sequential_with_scoping():
    shape = (1, 2, 3)
    c_data = np.array(shape).astype("float32")
    tp = relay.TensorType(shape, "float32")

    def before():
        c = relay.const(c_data)
        x = relay.var("x", tp)
        y = relay.multiply(relay.add(c, c), relay.const(2, "float32"))
        y = relay.add(x, y)
        z2 = relay.add(relay.add(y, c), relay.add(y, c))
        return relay.Function([x], z2)

    def expected():
        x = relay.var("x", tp)
        y = relay.add(x, relay.const((c_data + c_data) * 2))
        z = relay.add(y, relay.const(c_data))
        return relay.Function([x], relay.add(z, z))

    seq = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.FoldConstant(),
        relay.transform.EliminateCommonSubexpr(),
    ])
    mod = tvm.IRModule({"main": before()})
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    tvm.ir.assert_structural_equal(mod["main"], run_infer_type(expected()))


def test_nested_sequential_with_scoping():
    def before():
        x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
        w = relay.var("w", shape=(32, 16, 3, 3), dtype="float32")
        y = relay.nn.conv2d(x, w, padding=(1, 1))
        y = relay.reshape(y, newshape=(1, 16, -1))
        y = relay.reshape(y, newshape=(4, 8, -1, 16))
        y = relay.reverse_reshape(y, newshape=(32, 0, -1))
        return tvm.IRModule.from_expr(y)

    def expected():
        x = relay.var("x", shape=(1, 16, 16, 16), dtype="float32")
        w = relay.var("w", shape=(32, 16, 3, 3), dtype="float32")
        y = relay.nn.conv2d(x, w, padding=(1, 1))
        return tvm.IRModule.from_expr(relay.reshape(y, newshape=(32, 16, 16)))

    passes = [tvm.transform.Sequential([relay.transform.SimplifyExpr()])]
    with tvm.transform.PassContext(opt_level=1):
        zz = tvm.transform.Sequential(passes)(before())
    tvm.ir.assert_structural_equal(zz, relay.transform.InferType()(expected()))


def test_print_ir(capfd):
    x = relay.var("x", relay.TensorType((1, 2, 3), "float32"))
    y = relay.multiply(relay.add(x, x), relay.const(2, "float32"))
    seq = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.FoldConstant(),
        tvm.transform.PrintIR(),
        relay.transform.DeadCodeElimination(),
    ])
    mod = tvm.IRModule({"main": relay.Function([x], y)})
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    out = capfd.readouterr().err
    assert "PrintIR" in out and "multiply" in out


@tvm.instrument.pass_instrument
class PassCounter:
    def __init__(self):
        self.counts = 1234  # entering a context resets it

    def enter_pass_ctx(self):
        self.counts = 0

    def exit_pass_ctx(self):
        self.counts = 0

    def run_before_pass(self, module, info):
        self.counts += 1

    def get_counts(self):
        return self.counts


def test_print_debug_callback():
    x = relay.var("x", relay.TensorType((1, 2, 3), "float32"))
    y = relay.multiply(relay.add(x, x), relay.const(2, "float32"))
    seq = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.FoldConstant(),
        relay.transform.DeadCodeElimination(),
    ])
    mod = tvm.IRModule({"main": relay.Function([x], y)})
    pass_counter = PassCounter()
    with tvm.transform.PassContext(opt_level=3, instruments=[pass_counter]):
        assert pass_counter.get_counts() == 0
        mod = seq(mod)
        # The Sequential, its three members and the InferType the function passes
        # among them end with: six runs, as TVM counts them.
        assert pass_counter.get_counts() == 6
    assert pass_counter.get_counts() == 0


# --- the names a ported pass reaches -----------------------------------------------------------
def test_ir_transform_and_ir_instrument_are_the_pass_manager():
    from relaypass.ir.instrument import PassInstrument, pass_instrument
    from relaypass.ir.transform import PassContext, module_pass

    assert tvm.ir.transform is tvm.transform and tvm.ir.instrument is tvm.instrument
    assert PassContext is tvm.transform.PassContext and module_pass is tvm.transform.module_pass
    assert pass_instrument is tvm.ir.instrument.pass_instrument
    assert PassInstrument is tvm.ir.instrument.PassInstrument
    assert isinstance(tvm.transform.PassContext.current(), tvm.ir.transform.PassContext)
    assert isinstance(tvm.ir.instrument.PassTimingInstrument(), PassInstrument)


def test_pass_kinds_read_as_in_tvm():
    seq = tvm.transform.Sequential([relay.transform.InferType(), relay.transform.FoldConstant()],
                                   opt_level=2, name="demo")
    assert str(seq) == ("Run Sequential pass: demo at the optimization level 2. "
                        "The passes will be executed are: [InferType FoldConstant ]")
    assert str(relay.transform.InferType()) == "Run Module pass: InferType at the optimization level 0"
    assert str(relay.transform.FoldConstant()) == (
        "Run Function pass: FoldConstant at the optimization level 2")
    assert tvm.transform.Sequential([], traceable=True).info.traceable
    with pytest.raises(ValueError):
        tvm.transform.module_pass(lambda mod, ctx: mod)


def test_a_function_pass_that_changes_nothing_still_reports_its_typing():
    @tvm.ir.instrument.pass_instrument
    class Names:
        def __init__(self):
            self.seen = []

        def run_before_pass(self, mod, info):
            self.seen.append(info.name)

    names = Names()
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.var("x", shape=(2,))))
    unchanged = relay.transform.function_pass(lambda f, m, c: f, opt_level=0, name="Same")
    with tvm.transform.PassContext(instruments=[names]):
        out = unchanged(mod)
    assert names.seen == ["Same", "InferType"]
    tvm.ir.assert_structural_equal(out, mod)
