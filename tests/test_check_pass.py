"""relaypass.testing.check_pass: it catches broken passes, names the property, and passes the standard ones.

The broken passes below are kept here (and reused by
test_translation_validation.py) as the kinds of bug a pass author makes.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import relaypass
from relaypass.dataflow_pattern import is_op, wildcard
from relaypass.functor import ExprMutator, post_order_visit
from relaypass.ir import Call, Constant, Function, IRModule, Let, Op, TensorType, Var
from relaypass.testing import PROPERTIES, PassCheckError, check_pass
from relaypass.transform import (
    ModulePass,
    Sequential,
    function_pass,
    get_pass,
    list_passes,
    module_pass,
    register_pass,
    unregister_pass,
)

# --------------------------------------------------------------------------- broken passes


class _ShiftConstants(ExprMutator):
    def visit_constant(self, const: Constant) -> Constant:
        data = const.array
        if data.dtype == np.bool_:
            return Constant(np.logical_not(data))
        return Constant((data + 1).astype(data.dtype))


@function_pass(opt_level=0, name="ChangeConstant")
def change_constant(func, mod, ctx):
    """Off by one: every constant grows by one (a folding rule with a wrong formula)."""
    return _ShiftConstants().visit(func)


@module_pass(opt_level=0, name="DropBinding")
def drop_binding(mod, ctx):
    """Drops the first let of each function, leaving its variable free where it is used.

    A module pass: a function pass ends with type inference (as in Relay), which
    would reject the free variable before the module is returned.  It edits a
    copy of its argument, as a module pass should.
    """
    mod = mod.shallow_copy()
    for gv, func in mod.items():
        body = func.body
        if isinstance(body, Let):
            mod[gv] = Function(func.params, body.body, func.ret_type, func.type_params, func.attrs)
    return mod


class _Substitute(ExprMutator):
    def __init__(self, var: Var, value: Constant) -> None:
        super().__init__()
        self.var = var
        self.value = value

    def visit_var(self, var: Var):
        return self.value if var is self.var else var


@module_pass(opt_level=0, name="DropBindingForZeros", required=["InferType"])
def drop_binding_for_zeros(mod, ctx):
    """Drops main's first let and uses zeros instead of its value (needs types to make them)."""
    func = mod["main"]
    body = func.body
    if not isinstance(body, Let) or not isinstance(body.value.checked_type, TensorType):
        return mod
    ty = body.value.checked_type
    zeros = Constant(np.zeros(ty.concrete_shape, ty.dtype))
    new_body = _Substitute(body.var, zeros).visit(body.body)
    mod = mod.shallow_copy()
    mod["main"] = Function(func.params, new_body, func.ret_type, func.type_params, func.attrs)
    return mod


class RebindsCallersMain(ModulePass):
    """A pass object whose ``__call__`` also writes its result into the caller's module."""

    def __call__(self, mod):
        out = ModulePass.__call__(self, mod)
        main = mod["main"]
        mod["main"] = Function(main.params, main.body, main.ret_type, main.type_params, main.attrs)
        return out


rebinds_callers_main = RebindsCallersMain(lambda mod, ctx: mod, relaypass.transform.PassInfo(0, "RebindsMain"))


def edits_module_in_place(mod):
    """A plain callable that edits the module it is given and returns it."""
    main = mod["main"]
    mod["main"] = Function(main.params, main.body, main.ret_type, main.type_params, main.attrs)
    return mod


@module_pass(opt_level=0, name="ReplacesMainAndAddsAFunction")
def replaces_main_and_adds_a_function(mod, ctx):
    """Relay code written for TVM's mutable IRModule: it edits its argument and returns it."""
    main = mod["main"]
    mod["main"] = Function(main.params, main.body, main.ret_type, main.type_params, main.attrs)
    mod.update_func(mod.get_global_var("main"), mod["main"])
    mod["helper_added_in_place"] = Function(main.params, main.body)
    return mod


@module_pass(opt_level=0, name="EditConstantInPlace")
def edit_constant_in_place(mod, ctx):
    """Goes around immutability: rewrites a constant's array inside the shared node."""
    found = []
    post_order_visit(mod["main"], lambda n: found.append(n) if isinstance(n, Constant) else None)
    for const in found[:1]:
        data = const.array
        new = Constant(np.logical_not(data) if data.dtype == np.bool_ else (data + 1).astype(data.dtype))
        object.__setattr__(const, "data", new.data)
        object.__setattr__(const, "array", new.array)
    return mod


_renames = itertools.count()


class _Rename(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.suffix = next(_renames)
        self.vars: dict[Var, Var] = {}

    def visit_var(self, var: Var):
        new = self.vars.get(var)
        if new is None:
            new = self.vars[var] = Var(f"{var.name_hint}_{self.suffix}", var.type_annotation)
        return new


@function_pass(opt_level=0, name="CounterRenaming")
def counter_renaming(func, mod, ctx):
    """Names variables from a process-wide counter: the output depends on what ran before."""
    return _Rename().visit(func)


_swaps = itertools.count()


class _SwapAdds(ExprMutator):
    def visit_call(self, call: Call):
        new = super().visit_call(call)
        if isinstance(new, Call) and new.op is Op.get("add"):
            return Call(new.op, [new.args[1], new.args[0]], new.attrs)
        return new


@module_pass(opt_level=0, name="SometimesSwapAdds")
def sometimes_swap_adds(mod, ctx):
    """Picks between two correct rewrites by a counter (think: set iteration order)."""
    if next(_swaps) % 2:
        mod = mod.shallow_copy()
        for gv, func in mod.items():
            mod[gv] = _SwapAdds().visit(func)
    return mod


@function_pass(opt_level=0, name="WidenResult")
def widen_result(func, mod, ctx):
    """Adds a broadcast zero to the result, which changes main's return type."""
    zeros = Constant(np.zeros((5, 1, 1, 1, 1), "float32"))
    return Function(func.params, Call(Op.get("add"), [func.body, zeros]))


@function_pass(opt_level=0, name="FailsOnIf")
def fails_on_if(func, mod, ctx):
    found = []
    post_order_visit(func, lambda n: found.append(n) if type(n).__name__ == "If" else None)
    if found:
        raise ValueError("cannot handle conditionals")
    return func


def _lines(program) -> int:
    return len([line for line in program.astext().splitlines() if line.strip()])


# --------------------------------------------------------------------------- each broken pass is caught


def test_changed_constant_is_an_output_mismatch_on_a_shrunk_program():
    with pytest.raises(PassCheckError) as info:
        check_pass(change_constant, examples=60, size=(1, 6))
    err = info.value
    assert err.property == "outputs"
    assert err.pass_name == "ChangeConstant"
    message = str(err)
    assert message.startswith("pass ChangeConstant breaks property 'outputs' (a pass must keep")
    assert "largest difference" in message
    # The shrunk program is tiny, is shown in text form, and still exhibits the bug.
    assert _lines(err.program) <= 8, message
    assert err.program.astext().rstrip() in message and err.output.astext().rstrip() in message
    found = []
    post_order_visit(err.program["main"], lambda n: found.append(n) if isinstance(n, Constant) else None)
    assert found


def test_dropped_binding_leaves_a_free_variable():
    with pytest.raises(PassCheckError) as info:
        check_pass(drop_binding, examples=60)
    err = info.value
    assert err.property == "well_formed"
    assert "free variable" in str(err)
    assert isinstance(err.program["main"].body, Let)
    assert _lines(err.program) <= 8, str(err)


def test_binding_replaced_by_zeros_is_caught_with_types_inferred_first():
    with pytest.raises(PassCheckError) as info:
        check_pass(drop_binding_for_zeros, examples=60, size=(1, 6))
    err = info.value
    assert err.property == "outputs"
    assert "InferType ran on it first" in str(err)


@pytest.mark.parametrize("broken", [rebinds_callers_main, edits_module_in_place])
def test_rebinding_the_callers_main_is_caught(broken):
    with pytest.raises(PassCheckError) as info:
        check_pass(broken, examples=10)
    err = info.value
    assert err.property == "input_unchanged"
    assert "@main is bound to another function object" in str(err)


def test_a_module_pass_editing_its_argument_is_caught_though_the_caller_is_protected():
    # Through the pass manager the caller's module stays as it was ...
    x = Var("x", TensorType((2,), "float32"))
    mod = IRModule.from_expr(Function([x], Call(Op.get("exp"), [x])))
    before = dict(mod.functions)
    out = replaces_main_and_adds_a_function(mod)
    assert dict(mod.functions) == before and "helper_added_in_place" not in mod
    assert "helper_added_in_place" in out
    # ... yet check_pass tells the author, naming the pass and what it did.
    with pytest.raises(PassCheckError) as info:
        check_pass(replaces_main_and_adds_a_function, examples=5)
    err = info.value
    assert err.property == "input_unchanged"
    message = str(err)
    assert "module pass 'ReplacesMainAndAddsAFunction' edits the module it is handed" in message
    assert "rebound @main, added @helper_added_in_place" in message


def test_a_sequential_member_editing_its_argument_is_named():
    seq = Sequential([get_pass("InferType"), replaces_main_and_adds_a_function], name="Wrapped")
    with pytest.raises(PassCheckError) as info:
        check_pass(seq, examples=3)
    assert info.value.property == "input_unchanged" and info.value.pass_name == "Wrapped"
    assert "module pass 'ReplacesMainAndAddsAFunction' edits" in str(info.value)


def test_editing_a_node_in_place_is_caught():
    with pytest.raises(PassCheckError) as info:
        check_pass(edit_constant_in_place, examples=60, size=(1, 6))
    err = info.value
    assert err.property == "input_unchanged"
    assert "in place" in str(err) and "structural mismatch" in str(err)


def test_names_from_a_counter_are_nondeterministic():
    with pytest.raises(PassCheckError) as info:
        check_pass(counter_renaming, examples=10)
    err = info.value
    assert err.property == "deterministic"
    assert "print differently" in str(err)
    assert "first run" in err.details and "second run" in err.details


def test_alternating_rewrites_are_nondeterministic():
    with pytest.raises(PassCheckError) as info:
        check_pass(sometimes_swap_adds, examples=60, size=(1, 6))
    err = info.value
    assert err.property == "deterministic"
    assert "structurally different" in str(err)
    assert "add(" in err.program.astext()


def test_changed_main_type_is_a_typing_failure():
    with pytest.raises(PassCheckError) as info:
        check_pass(widen_result, examples=10)
    assert info.value.property == "well_typed"
    assert "@main had type" in str(info.value)


def test_exception_in_the_pass_is_reported_with_the_program():
    with pytest.raises(PassCheckError) as info:
        check_pass(fails_on_if, examples=30, size=(1, 6), max_depth=1)
    err = info.value
    assert err.property == "raises"
    assert "ValueError: cannot handle conditionals" in str(err)
    assert "if (" in err.program.astext()


def test_a_pass_checked_by_its_registered_name():
    register_pass(counter_renaming)
    try:
        with pytest.raises(PassCheckError) as info:
            check_pass("CounterRenaming", examples=10)
        assert info.value.property == "deterministic"
    finally:
        unregister_pass("CounterRenaming")


def test_importing_the_kit_loads_hypothesis_only_when_needed():
    code = (
        "import sys\n"
        "from relaypass.testing import random_inputs, PassCheckError\n"
        "assert 'hypothesis' not in sys.modules\n"
        "from relaypass.testing import check_pass\n"  # the function, not its submodule
        "assert check_pass.__name__ == 'check_pass' and callable(check_pass)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_property_key_is_documented():
    assert list(PROPERTIES) == [
        "raises", "input_unchanged", "well_formed", "well_typed", "outputs", "deterministic",
    ]


# --------------------------------------------------------------------------- reproducibility and options


def test_runs_are_reproducible_and_seeds_draw_other_programs():
    def programs_seen(**kw):
        texts = []

        def record(mod):
            texts.append(mod.astext())
            return mod

        check_pass(record, examples=8, **kw)
        return texts

    default = programs_seen()
    assert programs_seen() == default
    assert programs_seen(seed=7) == programs_seen(seed=7) != default


def test_the_reported_program_is_the_same_every_run():
    def failure():
        with pytest.raises(PassCheckError) as info:
            check_pass(sometimes_swap_adds, examples=30, size=(1, 6))
        return info.value.program.astext()

    assert failure() == failure()


def test_returns_the_number_of_programs_checked():
    assert check_pass("ToANormalForm", examples=7) == 7


def test_bare_functions_are_checked_the_old_style_way():
    seen = []

    def identity(func):
        seen.append(func)
        return func

    assert check_pass(identity, examples=5, input_kind="function") == 5
    assert all(isinstance(f, Function) for f in seen)
    with pytest.raises(PassCheckError) as info:
        check_pass(lambda func: IRModule.from_expr(func), examples=5, input_kind="function")
    assert info.value.property == "well_formed"


def test_infer_types_option_types_the_programs_a_plain_callable_gets():
    def reads_types(mod):
        _ = mod["main"].body.checked_type  # raises when the program is not typed
        return mod

    check_pass(reads_types, examples=5, infer_types=True)
    with pytest.raises(PassCheckError) as info:
        check_pass(reads_types, examples=5)
    assert info.value.property == "raises"


def test_the_operator_mix_and_features_reach_the_generator():
    seen = []

    def record(mod):
        post_order_visit(mod["main"], lambda n: seen.append(n.op.name) if isinstance(n, Call) else None)
        return mod

    check_pass(record, examples=10, ops=["add"], features=(), size=3)
    assert seen and set(seen) == {"add"}


def test_tolerance_decides_what_counts_as_a_mismatch():
    @function_pass(opt_level=0, name="Nudge")
    def nudge(func, mod, ctx):
        body = Call(Op.get("add"), [func.body, Constant(np.full((), 1e-4, "float32"))])
        return Function(func.params, body, func.ret_type)

    check_pass(nudge, examples=5, ops=["add", "multiply"], features=(), atol=1e-3)
    with pytest.raises(PassCheckError) as info:
        check_pass(nudge, examples=5, ops=["add", "multiply"], features=(), atol=1e-6, rtol=0)
    assert info.value.property == "outputs"
    assert "atol 1e-06" in str(info.value)


def test_options_are_passed_to_a_pass_given_by_name():
    check_pass("DeadCodeElimination", examples=10, pass_options={"inline_once": True})
    with pytest.raises(TypeError, match="pass_options"):
        check_pass(change_constant, examples=1, pass_options={"x": 1})


@pytest.mark.parametrize("kwargs, match", [
    ({"examples": 0}, "examples"),
    ({"input_kind": "expr"}, "input_kind"),
    ({"inputs": 0}, "inputs"),
    ({"rtol": -1.0}, "rtol"),
])
def test_bad_arguments_are_rejected_before_anything_runs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_pass("InferType", **kwargs)


def test_an_unknown_pass_name_is_the_registrys_error():
    with pytest.raises(relaypass.errors.RelayPassError, match="FoldConstnt"):
        check_pass("FoldConstnt", examples=1)


def test_check_pass_sees_the_given_pass_context():
    levels = []

    @module_pass(opt_level=0, name="SeesLevel")
    def sees_level(mod, ctx):
        levels.append(ctx.opt_level)
        return mod

    check_pass(sees_level, examples=2, opt_level=3)
    assert set(levels) == {3}


# --------------------------------------------------------------------------- the standard passes pass


def _standard_passes() -> list[str]:
    return sorted(s.name for s in list_passes()
                  if isinstance(s.factory, str) and s.factory.startswith("relaypass_std."))


def test_the_standard_set_is_all_there():
    assert {"InferType", "FoldConstant", "DeadCodeElimination", "ToANormalForm",
            "ToGraphNormalForm", "FuseOps"} <= set(_standard_passes())


def _required_options(name: str) -> dict | None:
    """Values for the options a standard pass declares without a default, or whose defaults
    Relay rejects (None: it has none)."""
    if name == "EtaExpand":  # Relay's defaults expand nothing, which it refuses
        return {"expand_global_var": True, "expand_constructor": True}
    if name == "ToMixedPrecision":  # float16 changes values and types by design; float32 keeps
        return {"mixed_precision_type": "float32"}  # both, and still runs all the machinery
    if name == "ConvertLayout":
        return {"desired_layouts": {"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"]}}
    if name == "MergeComposite":
        add_relu = is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))
        return {"pattern_table": [("add_relu", add_relu),
                                  ("mul", is_op("multiply")(wildcard(), wildcard()))]}
    return None


#: Passes that add global functions: called on a bare function (Relay's old-style
#: invocation) they would hand back only main, so they are checked on modules only.
_MODULE_ONLY = {"LambdaLift"}


@pytest.mark.parametrize("name", _standard_passes())
def test_standard_pass_keeps_every_property(name):
    options = _required_options(name)
    check_pass(name, examples=25, pass_options=options)
    if name not in _MODULE_ONLY:
        check_pass(name, examples=15, input_kind="function", seed=1, pass_options=options)
    check_pass(name, examples=15, features={"let", "if", "tuple", "fn", "ref", "global"}, seed=2,
               pass_options=options)


def test_fuse_ops_at_every_level_and_dce_inlining():
    for level in (0, 1, 3):
        check_pass("FuseOps", examples=10, opt_level=level)
    check_pass(get_pass("DeadCodeElimination", inline_once=True), examples=15)
