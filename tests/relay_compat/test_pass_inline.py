"""relay.transform.Inline on the cases of TVM v0.18's test_pass_inline.py, written as a TVM user.

The facts: a global function marked ``Inline`` is replaced by its body where
it is called and then removed; a chain of them collapses into the caller;
one handed to an external ``Compiler`` is called as a function literal
instead; recursive functions, functions that nobody calls, and functions
that call one that cannot be inlined stay; a global used as a value (not
called) becomes the function literal.  All sixteen cases are here; none
needs symbolic shapes.
"""
import relaypass as tvm
from relaypass import relay


def inline_attr(func, compiler=None):
    func = func.with_attr("Inline", tvm.tir.IntImm("int32", 1))
    return func.with_attr("Compiler", compiler) if compiler else func


def var35(name):
    return relay.var(name, shape=(3, 5))


def binary(kind, names=("x", "y"), shape=(3, 5)):
    a, b = (relay.var(n, shape=shape) for n in names)
    return relay.Function([a, b], kind(a, b))


def main_of_two(mod, left, right):
    """main(p0..p3) = left(p0, p1) * right(p2, p3), with left/right a global or a function."""
    p = [var35(f"p{i}") for i in range(4)]
    mod["main"] = relay.Function(p, relay.Call(left, p[:2]) * relay.Call(right, p[2:]))


def count_loop():
    """A module whose @sum_up (recursive, marked Inline) adds the numbers up to i; main calls it."""
    mod = tvm.IRModule({})
    sum_up = relay.GlobalVar("sum_up")
    i = relay.var("i", shape=[], dtype="int32")
    sb = relay.ScopeBuilder()
    with sb.if_scope(relay.equal(i, relay.const(0, dtype="int32"))):
        sb.ret(i)
    with sb.else_scope():
        sb.ret(relay.add(relay.Call(sum_up, [relay.subtract(i, relay.const(1, dtype="int32"))]), i))
    mod[sum_up] = inline_attr(relay.Function([i], sb.get(), ret_type=relay.TensorType([], "int32")))
    j = relay.var("i", shape=[], dtype="int32")
    mod["main"] = relay.Function([j], sum_up(j))
    return mod, sum_up


def check(before, after):
    tvm.ir.assert_structural_equal(relay.transform.Inline()(before), after, map_free_vars=True)


def leaf_module(mark_middle, leaf_compiler=None):
    """main -> g1 (marked if mark_middle) -> g11 (marked); main -> g2."""
    mod = tvm.IRModule({})
    g11 = relay.GlobalVar("g11")
    x11 = var35("x11")
    mod[g11] = inline_attr(relay.Function([x11], x11), leaf_compiler)
    x1, y1 = var35("x1"), var35("y1")
    f1 = relay.Function([x1, y1], x1 + y1 + g11(x1))
    g1 = relay.GlobalVar("g1")
    mod[g1] = inline_attr(f1) if mark_middle else f1
    g2 = relay.GlobalVar("g2")
    mod[g2] = binary(relay.subtract, ("x2", "y2"))
    main_of_two(mod, g1, g2)
    return mod


def test_call_chain_inline_leaf():
    expected = tvm.IRModule({})
    x1, y1 = var35("x1"), var35("y1")
    g1 = relay.GlobalVar("g1")
    expected[g1] = relay.Function([x1, y1], x1 + y1 + x1)
    g2 = relay.GlobalVar("g2")
    expected[g2] = binary(relay.subtract, ("x2", "y2"))
    main_of_two(expected, g1, g2)
    check(leaf_module(mark_middle=False), expected)


def test_call_chain_inline_multiple_levels():
    expected = tvm.IRModule({})
    g2 = relay.GlobalVar("g2")
    expected[g2] = binary(relay.subtract, ("x2", "y2"))
    p = [var35(f"p{i}") for i in range(4)]
    expected["main"] = relay.Function(p, (p[0] + p[1] + p[0]) * g2(p[2], p[3]))
    check(leaf_module(mark_middle=True), expected)


def test_call_chain_inline_multiple_levels_extern_compiler():
    expected = tvm.IRModule({})
    x11 = var35("x11")
    leaf = inline_attr(relay.Function([x11], x11), "a")
    g2 = relay.GlobalVar("g2")
    expected[g2] = binary(relay.subtract, ("x2", "y2"))
    p = [var35(f"p{i}") for i in range(4)]
    expected["main"] = relay.Function(p, (p[0] + p[1] + leaf(p[0])) * g2(p[2], p[3]))
    check(leaf_module(mark_middle=True, leaf_compiler="a"), expected)


def test_recursive_call_with_global():
    def module(inline_gx):
        mod = tvm.IRModule({})
        gx = relay.GlobalVar("gx")
        if not inline_gx:
            x = relay.var("x", shape=[], dtype="int32")
            mod[gx] = inline_attr(relay.Function([x], x))
        sum_up = relay.GlobalVar("sum_up")
        i = relay.var("i", shape=[], dtype="int32")
        sb = relay.ScopeBuilder()
        with sb.if_scope(relay.equal(i, relay.const(0, dtype="int32"))):
            sb.ret(i)
        with sb.else_scope():
            rest = relay.Call(sum_up, [relay.subtract(i, relay.const(1, dtype="int32"))])
            sb.ret(relay.add(rest + (i if inline_gx else gx(i)), i))
        mod[sum_up] = inline_attr(relay.Function([i], sb.get(), ret_type=relay.TensorType([], "int32")))
        j = relay.var("i", shape=[], dtype="int32")
        mod["main"] = relay.Function([j], sum_up(j))
        return mod

    check(module(inline_gx=False), module(inline_gx=True))


def test_recursive_called():
    mod, sum_up = count_loop()
    i = relay.var("i", shape=[], dtype="int32")
    mod["main"] = relay.Function([i], sum_up(i))
    check(mod, mod)


def with_g1_called_by_main(mod, compiler=None, inline_it=False):
    x, y = relay.var("x", shape=(2, 2)), relay.var("y", shape=(2, 2))
    x1 = relay.var("x1", shape=(2, 2))
    fn1 = inline_attr(relay.Function([x1], x1), compiler)
    if inline_it:
        mod["main"] = relay.Function([x, y], x + y + (fn1(x) if compiler else x))
    else:
        g1 = relay.GlobalVar("g1")
        mod[g1] = fn1
        mod["main"] = relay.Function([x, y], x + y + g1(x))
    return mod


def test_recursive_not_called():
    # main no longer calls the recursive @sum_up: it stays, @g1 is inlined.
    check(with_g1_called_by_main(count_loop()[0]),
          with_g1_called_by_main(count_loop()[0], inline_it=True))


def test_recursive_not_called_extern_compiler():
    check(with_g1_called_by_main(count_loop()[0], "a"),
          with_g1_called_by_main(count_loop()[0], "a", inline_it=True))


def test_globalvar_as_call_arg():
    mod = tvm.IRModule({})
    g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
    mod[g1] = inline_attr(binary(relay.add, ("x1", "y1")))
    mod[g2] = inline_attr(binary(relay.subtract, ("x2", "y2")))
    main_of_two(mod, g1, g2)
    expected = tvm.IRModule({})
    p = [var35(f"p{i}") for i in range(4)]
    expected["main"] = relay.Function(p, (p[0] + p[1]) * (p[2] - p[3]))
    check(mod, expected)


def test_globalvar_as_call_arg_extern_compiler():
    fn1 = inline_attr(binary(relay.add, ("x1", "y1")), "a")
    fn2 = inline_attr(binary(relay.subtract, ("x2", "y2")), "b")
    mod = tvm.IRModule({})
    g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
    mod[g1] = fn1
    mod[g2] = fn2
    main_of_two(mod, g1, g2)
    expected = tvm.IRModule({})
    main_of_two(expected, fn1, fn2)
    check(mod, expected)


def nullary_pair(compilers=(None, None)):
    return [inline_attr(relay.Function([], relay.const(v)), c) for v, c in zip((1, 2), compilers)]


def choose(mod, f1, f2):
    p = relay.var("p", "bool")
    mod["main"] = relay.Function([p], relay.Call(relay.If(p, f1, f2), []))
    return mod


def test_inline_globalvar_without_args():
    fn1, fn2 = nullary_pair()
    mod = tvm.IRModule({})
    g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
    mod[g1] = fn1
    mod = relay.transform.InferType()(mod)
    mod[g2] = fn2
    mod = relay.transform.InferType()(choose(mod, g1, g2))
    expected = relay.transform.InferType()(choose(tvm.IRModule({}), *nullary_pair()))
    check(mod, expected)


def test_inline_globalvar_without_args_extern_compiler():
    fn1, fn2 = nullary_pair(("a", "b"))
    mod = tvm.IRModule({})
    g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
    mod[g1] = fn1
    mod[g2] = fn2
    check(choose(mod, g1, g2), choose(tvm.IRModule({}), *nullary_pair(("a", "b"))))


def test_globalvar_called_by_multiple_functions():
    def g0_of(callee):
        x0, y0, z0 = var35("x0"), var35("y0"), var35("z0")
        inner = callee(x0, y0) if isinstance(callee, relay.GlobalVar) else x0 - y0
        return relay.Function([x0, y0, z0], inner + z0)

    mod = tvm.IRModule({})
    g1, g2, g0 = relay.GlobalVar("g1"), relay.GlobalVar("g2"), relay.GlobalVar("g0")
    mod[g1] = binary(relay.add, ("x1", "y1"))
    mod[g2] = inline_attr(binary(relay.subtract, ("x2", "y2")))
    mod[g0] = g0_of(g2)
    main_of_two(mod, g1, g2)

    expected = tvm.IRModule({})
    expected[g1] = binary(relay.add, ("x1", "y1"))
    p = [var35(f"p{i}") for i in range(4)]
    expected["main"] = relay.Function(p, g1(p[0], p[1]) * (p[2] - p[3]))
    expected[g0] = g0_of(None)
    check(mod, expected)


def test_entry_with_inline():
    def module():
        mod = tvm.IRModule({})
        mod[relay.GlobalVar("g1")] = inline_attr(binary(relay.add, ("x1", "y1")))
        mod[relay.GlobalVar("g2")] = inline_attr(binary(relay.subtract, ("x2", "y2")))
        return mod

    # Nobody calls them: entry points stay, marked or not.
    check(module(), module())


def test_callee_not_inline():
    def module():
        mod = tvm.IRModule({})
        g1 = relay.GlobalVar("g1")
        mod[g1] = binary(relay.add, ("x1", "y1"))
        x2, y2 = var35("x2"), var35("y2")
        mod[relay.GlobalVar("g2")] = inline_attr(relay.Function([x2, y2], x2 - g1(x2, y2)))
        return mod

    check(module(), module())


def three_levels(leaf_compiler=None, inlined=False):
    """g2 (marked) -> g1 -> g0 (marked); nobody calls g2."""
    mod = tvm.IRModule({})
    x0, y0 = var35("x0"), var35("y0")
    fn0 = inline_attr(relay.Function([x0, y0], x0 * y0), leaf_compiler)
    g0 = relay.GlobalVar("g0")
    x1, y1 = var35("x1"), var35("y1")
    if inlined:
        use = fn0(x1, y1) if leaf_compiler else x1 * y1
    else:
        mod[g0] = fn0
        use = g0(x1, y1)
    g1 = relay.GlobalVar("g1")
    mod[g1] = relay.Function([x1, y1], x1 + use)
    x2, y2 = var35("x2"), var35("y2")
    mod[relay.GlobalVar("g2")] = inline_attr(relay.Function([x2, y2], x2 - g1(x2, y2)))
    return mod


def test_callee_not_inline_leaf_inline():
    check(three_levels(), three_levels(inlined=True))


def test_callee_not_inline_leaf_inline_extern_compiler():
    check(three_levels("aa"), three_levels("aa", inlined=True))
