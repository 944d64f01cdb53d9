"""InferType along a pipeline: what it keeps of a module it typed before, and what it types again.

A function InferType returned comes back kept (the same object) when it is
still bound to a global variable of its type and every global of the module
it was typed in is still there with its type; whatever it keeps or types
again, the module must come out exactly as typing it from scratch gives it.
"""

from __future__ import annotations

from relaypass import relay
from relaypass.ir import Call, Function, GlobalVar, IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.transform import get_pass

InferType = get_pass("InferType")


def _unary(op, shape=(1, 4)):
    x = relay.var("x", shape=shape)
    return Function([x], op(x))


def _module(names=("f0", "f1", "f2", "f3", "f4")):
    """Functions ``names`` (relu of tanh) and a ``main`` calling them one after the other."""
    mod = IRModule()
    x = relay.var("x", shape=(1, 4))
    e = x
    for name in names:
        gv = GlobalVar(name)
        mod[gv] = _unary(lambda v: relay.nn.relu(relay.tanh(v)))
        e = Call(gv, [e])
    mod["main"] = Function([x], e)
    return mod


def _untyped_copy(mod):
    """``mod`` with every function rebuilt untyped under new global variables of the same names
    (calls of globals are rebuilt by name), to type from scratch."""
    return relay.fromtext(mod.astext(show_meta_data=False))


def test_each_pass_of_a_pipeline_gets_its_changed_function_typed_and_the_rest_kept():
    mod = InferType(_module())
    ops = [relay.sigmoid, relay.negative, relay.exp, relay.tanh, relay.sigmoid]
    for step, (name, op) in enumerate(zip(["f1", "f3", "f1", "f0", "f4"], ops)):
        changed = mod.copy()
        changed[name] = _unary(op)
        out = InferType(changed)
        for gv, func in mod.items():
            if gv.name_hint != name:
                assert out[gv.name_hint] is func, (step, gv.name_hint)
            assert out.get_global_var(gv.name_hint) is gv  # same type: same global variable
        assert out[name].has_checked_type
        assert_structural_equal(out, InferType(_untyped_copy(changed)))
        mod = out


def test_functions_typed_in_separate_modules_are_kept_together():
    first = InferType(_module(("f0", "f1")))
    x = relay.var("x", shape=(1, 4))
    second = InferType(IRModule({"g": Function([x], relay.exp(x))}))
    both = first.copy()
    both.add(second.get_global_var("g"), second["g"])
    out = InferType(both)
    for source in (first, second):
        for gv, func in source.items():
            assert out[gv.name_hint] is func
    assert_structural_equal(out, InferType(_untyped_copy(both)))


def test_functions_bound_to_other_global_variables_of_their_types_are_kept():
    # Two typings of the same program: the functions of one under the global variables of
    # the other (equal types, other objects) still fit, and are kept.
    one, two = InferType(_module()), InferType(_untyped_copy(_module()))
    mixed = IRModule()
    for gv, _func in one.items():
        mixed.add(gv, two[gv.name_hint])
    out = InferType(mixed)
    for gv, func in two.items():
        assert out[gv.name_hint] is func
    again = mixed.copy()
    again["f2"] = _unary(relay.sigmoid)
    after = InferType(again)
    assert after["f0"] is two["f0"] and after["main"] is two["main"]
    assert_structural_equal(after, InferType(_untyped_copy(again)))


def test_a_new_function_is_typed_and_the_others_kept_then_and_afterwards():
    mod = InferType(_module())
    grown = mod.copy()
    grown["h"] = _unary(relay.negative)
    out = InferType(grown)
    for gv, func in mod.items():
        assert out[gv.name_hint] is func
    assert out["h"].has_checked_type and out.get_global_var("h").has_checked_type
    changed = out.copy()
    changed["f2"] = _unary(relay.exp)
    after = InferType(changed)
    assert after["h"] is out["h"] and after["f4"] is mod["f4"]
    assert_structural_equal(after, InferType(_untyped_copy(changed)))


def test_a_removed_global_types_the_whole_module_again():
    # The functions were typed in a module that had @unused: without it they are not trusted,
    # and the module is typed as from scratch.
    mod = InferType(_module(("f0", "f1")))
    x = relay.var("x", shape=(1, 4))
    grown = mod.copy()
    grown["unused"] = Function([x], x)
    typed = InferType(grown)
    shrunk = typed.copy()
    shrunk.remove("unused")
    out = InferType(shrunk)
    assert out["f0"] is not typed["f0"]
    assert_structural_equal(out, InferType(_untyped_copy(shrunk)))


def test_an_untyped_global_variable_gets_its_function_typed_again():
    mod = InferType(_module(("f0",)))
    rebound = IRModule()
    for gv, func in mod.items():
        rebound[gv.name_hint] = func  # new, untyped global variables
    # main's call still names the old @f0, which is rebuilt by name; the result is typed
    # as the program is from scratch.
    out = InferType(rebound)
    assert out.get_global_var("f0").has_checked_type
    assert_structural_equal(out, InferType(_untyped_copy(mod)))
