"""DeadCodeElimination on the cases of TVM v0.18's test_pass_dead_code_elimination.py.

Written as a TVM user writes them; only the import lines differ.  TVM writes
its programs in the text format (``tvm.relay.parse``, with the ``int``
shorthand for ``int32``); the same programs are built here with the Python
API, and one test takes the text route.  Out of scope:
``test_impure_op`` and ``test_impure_func`` (``memory.alloc_storage`` and
``memory.kill`` are not relaypass operators, and their VirtualDevice needs
targets); the refs test covers effects that DCE must keep.
"""
import pytest

import relaypass as tvm
import relaypass.testing  # noqa: F401
from relaypass import relay
from relaypass.relay import Function, transform
from relaypass.relay.testing import inception_v3

INT = relay.TensorType((), "int32")


def optimize_and_check(before_program, after_program, passes):
    if isinstance(before_program, str):
        before_program = tvm.relay.parse(before_program)
    if isinstance(after_program, str):
        after_program = tvm.relay.parse(after_program)
    if not isinstance(passes, list):
        passes = [passes]
    optimize = tvm.transform.Sequential(passes)
    optimized_program = optimize(before_program)
    tvm.ir.assert_structural_equal(optimized_program, after_program, map_free_vars=True)


def main_module(func):
    """A module with ``func`` as main, typed as ``tvm.relay.parse`` hands its modules back."""
    mod = tvm.IRModule()
    mod["main"] = func
    return transform.InferType()(mod)


def int_const(value):
    return relay.const(value, "int32")


def test_dead_let():
    def program(with_dead_let):
        z = relay.var("z", INT)
        body = relay.Let(relay.var("x"), int_const(1), z) if with_dead_let else z
        return main_module(Function([z], body))

    optimize_and_check(program(True), program(False), transform.DeadCodeElimination())


def test_one_live_let():
    def program(with_dead_let):
        z = relay.var("z", INT)
        x = relay.var("x")
        body = x + x
        if with_dead_let:
            body = relay.Let(relay.var("y"), int_const(2), body)
        return main_module(Function([z], relay.Let(x, int_const(1), body)))

    optimize_and_check(program(True), program(False), transform.DeadCodeElimination())


def test_nested_let():
    def program(with_dead_let):
        d = relay.var("d", INT)
        b = relay.var("b", INT)
        c = relay.var("c")
        body = relay.Let(c, d, c)
        if with_dead_let:
            body = relay.Let(relay.var("a"), b, body)
        return main_module(Function([d, b], body))

    optimize_and_check(program(True), program(False), transform.DeadCodeElimination())


def countdown_with_log(dtype):
    """``let %f = fn (%n, %data) { if %n == 0 { %data } else { %f(%n - 1, log(%data)) } }``.

    Returns %f and its value; %n is an int32 scalar and %data a scalar of ``dtype``.
    """
    data_type = relay.TensorType((), dtype)
    f = relay.var("f")
    n = relay.var("n", INT)
    data = relay.var("data", data_type)
    body = relay.If(
        relay.equal(n, int_const(0)), data, f(n - int_const(1), relay.log(data))
    )
    return f, Function([n, data], body, data_type)


# TVM's program takes the log of an int; the same program on float32 checks the pass itself.
DATA_DTYPES = ["int32", "float32"]


@pytest.mark.parametrize("dtype", DATA_DTYPES)
def test_live_recursion(dtype):
    def program():
        f, value = countdown_with_log(dtype)
        call = f(int_const(2), relay.const(10000, dtype))
        return main_module(Function([], relay.Let(f, value, call)))

    optimize_and_check(
        program(), program(), [transform.DeadCodeElimination(), transform.InferType()]
    )


@pytest.mark.parametrize("dtype", DATA_DTYPES)
def test_dead_recursion(dtype):
    f, value = countdown_with_log(dtype)
    before = main_module(Function([], relay.Let(f, value, relay.Tuple([]))))
    after = main_module(Function([], relay.Tuple([])))
    optimize_and_check(before, after, [transform.DeadCodeElimination(), transform.InferType()])


def test_add_with_let():
    a = relay.var("a")
    before = main_module(Function([], relay.Let(a, int_const(1), int_const(3)) + int_const(2)))
    after = main_module(Function([], int_const(3) + int_const(2)))
    optimize_and_check(before, after, [transform.DeadCodeElimination(), transform.InferType()])


def test_tuple_get_item():
    def program(with_dead_let):
        body = relay.TupleGetItem(relay.Tuple([int_const(k) for k in (1, 2, 3, 4)]), 0)
        if with_dead_let:
            body = relay.Let(relay.var("a"), int_const(100), body)
        return main_module(Function([], body))

    optimize_and_check(program(True), program(False), transform.DeadCodeElimination())


def test_inline_into_function():
    """A value used inside a local function is not inlined into it; one used once is."""

    def program(inlined):
        x = relay.var("x")
        f = relay.var("f")
        y = relay.var("y", INT)
        if inlined:
            f_body = x + (y + y)
        else:
            z = relay.var("z")
            f_body = relay.Let(z, y + y, x + z)
        body = relay.Tuple([f(int_const(2)), f(int_const(3))])
        body = relay.Let(f, Function([y], f_body, INT), body)
        return main_module(Function([], relay.Let(x, int_const(1) + int_const(1), body)))

    optimize_and_check(
        program(False), program(True), transform.DeadCodeElimination(inline_once=True)
    )


def test_refs():
    """Bindings with reference effects stay, used or not, even with inline_once."""

    def program():
        mod = tvm.IRModule()
        f = relay.GlobalVar("f")
        r = relay.var("r")
        v, u = relay.var("v"), relay.var("u")
        f_body = relay.Let(
            v, relay.RefRead(r), relay.Let(u, relay.RefWrite(r, v + int_const(1)), v)
        )
        mod[f] = Function([r], f_body, INT)
        r2, y, z = relay.var("r"), relay.var("y"), relay.var("z")
        main_body = relay.Let(z, f(r2), z)
        main_body = relay.Let(y, f(r2), main_body)
        main_body = relay.Let(r2, relay.RefCreate(int_const(0)), main_body)
        mod["main"] = Function([], main_body, INT)
        return transform.InferType()(mod)

    optimize_and_check(
        program(),
        program(),
        [transform.InferType(), transform.DeadCodeElimination(inline_once=True)],
    )


def test_complexity():
    mod = transform.InferType()(
        tvm.IRModule.from_expr(inception_v3.get_net(1, 1000, (3, 299, 299), "float32"))
    )
    optimize_and_check(mod, mod, transform.DeadCodeElimination(inline_once=True))


def test_dead_let_written_as_text():
    before = """
    #[version = "0.0.5"]
    def @main(%w: int) {
        let %unused = 5;
        %w
    }
    """
    after = """
    #[version = "0.0.5"]
    def @main(%w: int) {
        %w
    }
    """
    optimize_and_check(before, after, transform.DeadCodeElimination())


def test_pass_info_as_tvm_declares_it():
    dce = transform.DeadCodeElimination()
    assert isinstance(dce, tvm.transform.ModulePass)
    assert dce.info.opt_level == 1
    assert list(dce.info.required) == ["InferType"]


if __name__ == "__main__":
    tvm.testing.main()
