"""relay.transform.RemoveUnusedFunctions on the cases of TVM v0.18's test_pass_remove_unused_functions.py.

The facts: with main as the entry every prelude function main does not
reach goes; a global main calls stays; so do the prelude functions a
list program calls (and what they call); several entries keep the union of
what they reach; a global passed as a value (not called) counts as used; so
do globals chosen by an If and called without arguments.

``test_globalvar_as_call_arg`` is TVM's, on the prelude's tensor arrays
(``tensor_array_stack`` passes globals to ``map`` and ``foldl`` as values);
``test_a_global_passed_as_a_value_is_kept`` makes the same point with plain
functions.
"""
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.prelude import Prelude


def names(mod):
    return {gv.name_hint for gv in mod.get_global_vars()}


def list_program(p):
    _, cons, nil = p.mod.get_type("List")
    hd = p.mod.get_global_var("hd")
    tl = p.mod.get_global_var("tl")
    items = nil()
    for i in [4, 3, 2, 1, 0]:
        items = cons(relay.const(i), items)
    return relay.Function([], hd(tl(tl(items))))


def test_remove_all_prelude_functions():
    mod = tvm.IRModule()
    Prelude(mod)
    x = relay.var("x", shape=(1, 16))
    mod["main"] = relay.Function([x], x)
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    assert names(mod) == {"main"}


def test_remove_all_prelude_functions_but_referenced_functions():
    mod = tvm.IRModule()
    Prelude(mod)
    x = relay.var("x", shape=(1, 16))
    id_name = relay.GlobalVar("id_func")
    mod[id_name] = relay.Function([x], x)
    mod["main"] = relay.Function([x], id_name(x))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    assert names(mod) == {"id_func", "main"}


def test_keep_only_referenced_prelude_functions():
    mod = tvm.IRModule()
    mod["main"] = list_program(Prelude(mod))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    assert names(mod) == {"tl", "hd", "main"}


def test_multiple_entry_functions():
    mod = tvm.IRModule()
    mod["main1"] = list_program(Prelude(mod))
    x = relay.var("x", shape=(1, 16))
    id_name = relay.GlobalVar("id_func")
    mod[id_name] = relay.Function([x], x)
    mod["main2"] = relay.Function([x], id_name(x))
    mod = relay.transform.RemoveUnusedFunctions(["main1", "main2"])(mod)
    assert names(mod) == {"tl", "hd", "main2", "id_func", "main1"}


def test_the_kept_program_still_runs():
    mod = tvm.IRModule()
    mod["main"] = list_program(Prelude(mod))
    kept = relay.transform.RemoveUnusedFunctions()(mod)
    result = relay.create_executor(mod=kept).evaluate()()
    assert int(result.numpy()) == 2


def test_globalvar_as_call_arg():
    mod = tvm.IRModule()
    p = Prelude(mod)
    tensor_array = p.get_global_var("tensor_array", "int32")
    tensor1 = p.get_ctor(p.get_name("tensor_t", "int32"), "tensor1", "int32")
    write = p.get_global_var("tensor_array_write", "int32")
    stack = p.get_global_var("tensor_array_stack", "int32")
    v = relay.var("v")
    written = write(tensor_array(relay.const(3)), relay.const(0), tensor1(v))
    mod["main"] = relay.Function([v], stack(written))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    kept = names(mod)
    assert "tensor_array_int32" in kept
    # Reached only as arguments of map and foldl inside tensor_array_stack:
    assert {"tensor_expand_dims_int32", "tensor_concatenate_int32"} <= kept
    assert "tensor_array_int8" not in kept


def test_a_global_passed_as_a_value_is_kept():
    mod = tvm.IRModule()
    Prelude(mod)
    t = relay.TensorType((4,), "float32")
    x = relay.var("x", t)
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([x], x * relay.const(2.0))
    f = relay.var("f", relay.FuncType([t], t))
    y = relay.var("y", t)
    twice = relay.GlobalVar("twice")
    mod[twice] = relay.Function([f, y], f(f(y)))
    v = relay.var("v", t)
    mod["main"] = relay.Function([v], twice(double, v))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    assert names(mod) == {"twice", "double", "main"}


def test_call_globalvar_without_args():
    def get_mod():
        mod = tvm.IRModule({})
        g1, g2 = relay.GlobalVar("g1"), relay.GlobalVar("g2")
        mod[g1] = relay.Function([], relay.const(1))
        mod[g2] = relay.Function([], relay.const(2))
        p = relay.var("p", "bool")
        mod["main"] = relay.Function([p], relay.Call(relay.If(p, g1, g2), []))
        return mod

    mod = relay.transform.RemoveUnusedFunctions()(get_mod())
    tvm.ir.assert_structural_equal(mod, get_mod(), map_free_vars=True)


def test_an_entry_the_module_lacks_is_named():
    mod = tvm.IRModule()
    Prelude(mod)
    with pytest.raises(tvm.error.TVMError, match=r"entry function @main is not in the module"):
        relay.transform.RemoveUnusedFunctions()(mod)
