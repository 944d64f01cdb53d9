"""The pass manager: PassInfo, PassContext, pass kinds, decorators, config keys, dependencies."""

from __future__ import annotations

import threading

import pytest

from relaypass import relay
from relaypass.errors import RelayPassError, TypeInferenceError
from relaypass.ir import Function, IRModule, assert_structural_equal
from relaypass.transform import (
    ConfigKey,
    ConfigTypeError,
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassResultError,
    PrintIR,
    Sequential,
    UnknownConfigKeyError,
    function_pass,
    get_pass,
    module_pass,
    register_pass,
    unregister_pass,
)
from relaypass.transform.errors import (
    DependencyCycleError,
    DuplicatePassError,
    MissingDependencyError,
)


def _func(name: str = "x") -> Function:
    x = relay.var(name, shape=(3,))
    return relay.Function([x], relay.add(x, x))


def _module(*names: str) -> IRModule:
    mod = IRModule()
    for n in names or ("main",):
        mod[n] = _func()
    return mod


@pytest.fixture
def registered():
    """Register in-process passes for one test and remove them afterwards."""
    names: list[str] = []

    def add(obj, **kwargs):
        register_pass(obj, **kwargs)
        names.append(kwargs.get("name") or obj.info.name)
        return obj

    yield add
    for n in names:
        unregister_pass(n)


def _recorder(name: str, log: list[str], opt_level: int = 0, required=(), preserves=None):
    @module_pass(opt_level=opt_level, name=name, required=list(required), preserves=preserves)
    def record(mod, ctx):
        log.append(name)
        return mod

    return record


# --- PassInfo and decorators ---------------------------------------------------------------
def test_pass_info_holds_name_opt_level_and_required():
    info = PassInfo(2, "FoldConstant", ["InferType"])
    assert (info.opt_level, info.name, info.required) == (2, "FoldConstant", ("InferType",))
    with pytest.raises(AttributeError):
        info.opt_level = 3
    with pytest.raises(TypeError):
        PassInfo("2", "x")


def test_module_pass_decorator_on_a_function():
    @module_pass(opt_level=2)
    def add_abs(mod, ctx):
        new = IRModule({"abs": _func()})
        new.update(mod)
        return new

    assert isinstance(add_abs, ModulePass)
    assert add_abs.info.opt_level == 2 and add_abs.info.name == "add_abs"
    out = add_abs(IRModule())
    assert "abs" in out


def test_module_pass_takes_the_function_as_first_argument_too():
    p = module_pass(lambda mod, ctx: mod, opt_level=1, name="identity")
    assert isinstance(p, ModulePass) and p.info.name == "identity"


def test_decorators_need_opt_level():
    with pytest.raises(ValueError, match="opt_level"):  # TVM's ValueError
        module_pass(lambda mod, ctx: mod)
    with pytest.raises(ValueError, match="opt_level"):
        function_pass(lambda f, mod, ctx: f)


def test_module_pass_decorator_on_a_class():
    @module_pass(opt_level=1)
    class AddFunction:
        def __init__(self, name):
            self.name = name

        def transform_module(self, mod, ctx):
            mod[self.name] = _func()
            return mod

    p = AddFunction("extra")
    assert isinstance(p, ModulePass) and isinstance(p, Pass)
    assert p.info.name == "AddFunction" and p.name == "extra"  # attributes stay reachable
    assert "extra" in p(IRModule())


def test_function_pass_decorator_on_a_class_replaces_each_function():
    replacement = _func("y")

    @function_pass(opt_level=1)
    class ReplaceFunc:
        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            return self.new_func

    fpass = ReplaceFunc(replacement)
    assert isinstance(fpass, FunctionPass)
    out = fpass(_module("a", "b"))
    typed = get_pass("InferType")(IRModule({"y": replacement}))["y"]  # as in Relay: typed after
    assert_structural_equal(out["a"], typed)
    assert_structural_equal(out["b"], typed)


def test_class_decorator_checks_for_the_transform_method():
    with pytest.raises(TypeError, match="transform_function"):
        @function_pass(opt_level=1)
        class Wrong:
            def transform_module(self, mod, ctx):
                return mod


def test_function_pass_gets_func_mod_and_ctx_and_skips_marked_functions():
    seen = []

    @function_pass(opt_level=0)
    def visit(func, mod, ctx):
        seen.append((func, isinstance(mod, IRModule), ctx is PassContext.current()))
        return func

    mod = _module("plain")
    mod["skipped"] = _func().with_attr("SkipOptimization", 1)
    mod["external"] = _func().with_attr("Compiler", "ccompiler")
    visit(mod)
    assert seen == [(mod["plain"], True, True)]


def test_function_pass_result_must_be_a_function():
    bad = function_pass(lambda f, mod, ctx: f.body, opt_level=0, name="bad")
    with pytest.raises(PassResultError, match="bad"):
        bad(_module())


# --- a function pass ends with type inference, as in Relay ------------------------------------
def _names_seen():
    from relaypass.transform.instrument import pass_instrument

    @pass_instrument
    class Names:
        def __init__(self):
            self.seen = []

        def run_before_pass(self, mod, info):
            self.seen.append(info.name)

    return Names()


def test_function_pass_types_its_result_with_the_type_inference_pass():
    x = relay.var("x", shape=(3,))
    untyped = relay.Function([x], relay.add(x, x))
    swap = function_pass(lambda f, m, c: untyped, opt_level=0, name="swap")
    names = _names_seen()
    with PassContext(instruments=[names]):
        out = swap(_module())
    assert out["main"].has_checked_type and out["main"].ret_type is not None
    assert names.seen == ["swap", "InferType"]  # reported inside the function pass


def test_typing_a_result_that_changed_nothing_is_reported_not_computed():
    typed = get_pass("InferType")(_module("a", "b"))
    same = function_pass(lambda f, m, c: f, opt_level=0, name="same")
    names = _names_seen()
    with PassContext(instruments=[names]):
        out = same(typed)
    assert names.seen == ["same", "InferType"]
    assert out["a"] is typed["a"] and out["b"] is typed["b"]  # the module was already typed
    # Untyped functions are typed even when the pass changed none of them (as in Relay).
    assert same(_module())["main"].has_checked_type


def _caller_and_callees():
    """@main calls @double; @other stands alone; all typed."""
    mod = _module("double", "other")
    x = relay.var("x", shape=(3,))
    mod["main"] = relay.Function([x], relay.Call(mod.get_global_var("double"), [x]))
    return get_pass("InferType")(mod)


def _rewrite_only(name, body):
    """A function pass that rewrites only function ``name``, to ``body(param)``."""

    def rewrite(func, mod, ctx):
        if func is not mod[name]:
            return func
        x = relay.var("x", shape=func.params[0].type_annotation.shape)
        return relay.Function([x], body(x))

    return function_pass(rewrite, opt_level=0, name=f"Rewrite_{name}")


def test_only_the_changed_functions_are_typed_again():
    typed = _caller_and_callees()
    out = _rewrite_only("double", lambda x: relay.multiply(x, relay.const(2.0)))(typed)
    assert out["double"].has_checked_type and out["double"].body.has_checked_type
    # The functions the pass kept were typed already: they are the very same objects.
    assert out["main"] is typed["main"] and out["other"] is typed["other"]
    # What full typing would have made of the result.
    assert_structural_equal(out, get_pass("InferType")(out))


def test_a_function_returned_typed_with_its_type_is_kept_as_returned():
    typed = _caller_and_callees()
    returned = []

    def mark(func, mod, ctx):
        returned.append(func.with_attr("Marked", 1))  # a typed copy: same typed body
        return returned[-1]

    out = function_pass(mark, opt_level=0, name="Mark")(typed)
    assert [out[gv] for gv in out.get_global_vars()] == returned


def test_a_changed_function_type_is_checked_against_its_callers():
    typed = _caller_and_callees()
    # @double now returns a (2, 3) tensor, but typed @main declares that it returns (3,):
    # the whole module is typed again, and the caller is found ill-typed, as by Relay.
    wider = _rewrite_only("double", lambda x: relay.stack([x, x], axis=0))
    with pytest.raises(TypeInferenceError, match="in @main: the function body has type"):
        wider(typed)


def test_a_function_added_by_a_function_pass_is_typed_too():
    def adds_a_global(func, mod, ctx):
        if "added" not in mod:
            mod["added"] = _func()
        return func

    typed = _caller_and_callees()
    out = function_pass(adds_a_global, opt_level=0, name="AddsAGlobal")(typed)
    assert out["added"].has_checked_type


def test_a_required_type_inference_runs_again_after_a_function_pass():
    # As in Relay: the InferType a function pass ends with is its own; a pass that
    # requires InferType still gets it run before itself.
    first = function_pass(lambda f, m, c: f, opt_level=0, name="first")
    needs = module_pass(lambda mod, ctx: mod, opt_level=0, name="needs", required=["InferType"])
    names = _names_seen()
    with PassContext(instruments=[names]):
        Sequential([first, needs])(_module())
    assert names.seen == ["sequential", "first", "InferType", "InferType", "needs"]


def test_an_ill_typed_function_pass_result_names_the_function_pass():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(4,))
    bad = function_pass(lambda f, m, c: relay.Function([x, y], relay.add(x, y)), opt_level=0,
                        name="Mismatch")
    with pytest.raises(TypeInferenceError) as err:
        bad(_module())
    notes = getattr(err.value, "__notes__", [])
    assert any("while typing the result of function pass 'Mismatch'" in n for n in notes)


def test_a_function_pass_without_a_type_inference_pass_says_so(registered):
    from relaypass.transform.errors import PassNotFoundError

    # An in-process InferType that claims no role shadows the standard one.
    registered(module_pass(lambda mod, ctx: mod, opt_level=0, name="InferType"), override=True)
    with pytest.raises(PassNotFoundError, match="no registered pass has role 'type-inference'") as err:
        function_pass(lambda f, m, c: f, opt_level=0, name="lonely")(_module())
    assert any("function pass 'lonely'" in n for n in getattr(err.value, "__notes__", []))


def test_a_typing_pass_that_is_a_function_pass_does_not_type_itself(registered):
    calls = []

    @function_pass(opt_level=0, name="FunctionTyper")
    def typer(func, mod, ctx):
        calls.append(func)
        return func

    registered(typer, role="type-inference", override=True)
    out = function_pass(lambda f, m, c: f, opt_level=0, name="user")(_module())
    assert len(calls) == 1 and "main" in out  # the user pass's typing ran it once, no more


def _edits_its_argument(mod, ctx):
    """Relay code for TVM's mutable IRModule: replaces main, adds a function, returns its argument."""
    mod["main"] = _func("y")
    mod.update_func(mod.get_global_var("main"), mod["main"])
    mod["extra"] = _func("z")
    return mod


@pytest.mark.parametrize("instrumented", [False, True])
def test_a_module_pass_editing_its_argument_leaves_the_callers_module_unchanged(instrumented):
    edit = module_pass(_edits_its_argument, opt_level=0, name="EditsItsArgument")
    mod = _module("main", "other")
    before, attrs = dict(mod.functions), mod.attrs
    with PassContext(instruments=[_names_seen()] if instrumented else None):
        alone = edit(mod)
        in_sequence = Sequential([edit, edit])(mod)
    assert dict(mod.functions) == before and mod.attrs is attrs and "extra" not in mod
    for out in (alone, in_sequence):
        assert out is not mod and "extra" in out and out["main"] is not before[mod.get_global_var("main")]
        assert out["other"] is before[mod.get_global_var("other")]


def test_handed_modules_name_the_module_pass_that_edited_its_argument():
    from relaypass.transform.passes import watch_handed_modules

    edit = module_pass(_edits_its_argument, opt_level=0, name="EditsItsArgument")
    copies = module_pass(lambda mod, ctx: _edits_its_argument(mod.shallow_copy(), ctx), opt_level=0,
                         name="EditsACopy")
    with watch_handed_modules() as handed:
        Sequential([copies, edit, get_pass("InferType")])(_module())
    # EditsACopy made @extra; EditsItsArgument, handed that module, binds both names again.
    assert [(p.info.name, what) for p, what in handed.edits()] == [
        ("EditsItsArgument", "rebound @main, @extra")
    ]
    # Outside the ``with``, nothing is recorded.
    edit(_module())
    assert len(handed.runs) == 3


def test_module_pass_result_must_be_a_module():
    bad = module_pass(lambda mod, ctx: None, opt_level=0, name="returns_none")
    with pytest.raises(PassResultError, match="returns_none"):
        bad(_module())


# --- what a pass may do to its input --------------------------------------------------------
def test_a_pass_never_changes_its_input_module():
    @module_pass(opt_level=0)
    def vandal(mod, ctx):
        mod["main"] = _func("other")
        mod["added"] = _func()
        return mod

    mod = _module()
    before = mod["main"]
    out = vandal(mod)
    assert mod["main"] is before and "added" not in mod and len(mod) == 1
    assert "added" in out


def test_function_pass_does_not_change_its_input_module():
    other = _func("z")
    mod = _module("a")
    before = mod["a"]
    out = function_pass(lambda f, m, c: other, opt_level=0, name="swap")(mod)
    assert mod["a"] is before and out["a"].params[0].name_hint == "z"


def test_old_style_invocation_on_a_function_gives_a_function():
    replacement = _func("q")
    p = function_pass(lambda f, m, c: replacement, opt_level=0, name="swap")
    out = p(_func())
    assert isinstance(out, Function) and out.params[0].name_hint == "q" and out.ret_type is not None


def test_old_style_invocation_on_an_expression_gives_an_expression():
    x = relay.var("x", shape=(3,))
    seen = []

    @module_pass(opt_level=0)
    def look(mod, ctx):
        seen.append(list(mod["main"].params))
        return mod

    expr = relay.add(x, x)
    assert look(expr) is expr
    assert seen == [[x]]  # wrapped in a function of its free variables


def test_a_pass_rejects_what_is_neither_module_nor_expression():
    with pytest.raises(TypeError, match="IRModule"):
        PrintIR()("not a module")


# --- the enabled rule -----------------------------------------------------------------------
def test_sequential_skips_passes_above_the_context_opt_level():
    log: list[str] = []
    seq = Sequential([_recorder("low", log, 1), _recorder("high", log, 3)])
    with PassContext(opt_level=2):
        seq(_module())
    assert log == ["low"]


def test_disabled_pass_is_skipped_even_at_a_low_opt_level():
    log: list[str] = []
    seq = Sequential([_recorder("a", log, 0), _recorder("b", log, 0)])
    with PassContext(opt_level=3, disabled_pass=["a"]):
        seq(_module())
    assert log == ["b"]


def test_required_pass_runs_above_the_opt_level():
    log: list[str] = []
    seq = Sequential([_recorder("high", log, 4)])
    with PassContext(opt_level=1, required_pass=["high"]):
        seq(_module())
    assert log == ["high"]


def test_disabled_wins_over_required():
    log: list[str] = []
    seq = Sequential([_recorder("a", log, 0)])
    with PassContext(required_pass=["a"], disabled_pass=["a"]):
        seq(_module())
    assert log == []


def test_required_and_disabled_accept_unregistered_names():
    ctx = PassContext(required_pass=["NoSuchPass"], disabled_pass=("AnotherOne",))
    assert ctx.required_pass == ("NoSuchPass",) and ctx.disabled_pass == ("AnotherOne",)


def test_required_and_disabled_must_be_lists_of_names():
    with pytest.raises(TypeError, match="required_pass"):
        PassContext(required_pass="FoldConstant")


def test_a_pass_called_directly_runs_whatever_the_context_says():
    log: list[str] = []
    with PassContext(opt_level=0, disabled_pass=["high"]):
        _recorder("high", log, 3)(_module())
    assert log == ["high"]


def test_nested_sequential_and_its_own_opt_level():
    log: list[str] = []
    inner = Sequential([_recorder("inner", log, 0)], opt_level=3, name="inner_seq")
    outer = Sequential([_recorder("first", log, 0), inner, _recorder("last", log, 0)])
    with PassContext(opt_level=2):
        outer(_module())
    assert log == ["first", "last"]
    log.clear()
    with PassContext(opt_level=3):
        outer(_module())
    assert log == ["first", "inner", "last"]


def test_sequential_holds_only_passes():
    with pytest.raises(TypeError, match="holds passes"):
        Sequential([lambda mod: mod])


# --- contexts -------------------------------------------------------------------------------
def test_current_context_is_the_default_outside_any_with():
    ctx = PassContext.current()
    assert ctx.opt_level == 2 and ctx is PassContext.current()


def test_nested_contexts_restore_the_outer_one():
    outer, inner = PassContext(opt_level=1), PassContext(opt_level=3)
    with outer:
        with inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is not outer


def test_nested_contexts_restore_when_the_body_raises():
    outer = PassContext(opt_level=1)
    with outer:
        with pytest.raises(ValueError):
            with PassContext(opt_level=3):
                raise ValueError("boom")
        assert PassContext.current() is outer


def test_contexts_are_per_thread():
    seen = []
    with PassContext(opt_level=3):
        t = threading.Thread(target=lambda: seen.append(PassContext.current().opt_level))
        t.start()
        t.join()
    assert seen == [2]


def test_passes_see_the_current_context():
    seen = []

    @module_pass(opt_level=0)
    def look(mod, ctx):
        seen.append(ctx.opt_level)
        return mod

    with PassContext(opt_level=3):
        look(_module())
    assert seen == [3]


# --- config keys ----------------------------------------------------------------------------
@pytest.fixture
def config_pass(registered):
    seen = {}

    @module_pass(opt_level=0, name="Tunable")
    def tunable(mod, ctx):
        seen["depth"] = ctx.config.get("test.Tunable.max_depth")
        seen["ratio"] = ctx.config.get("test.Tunable.ratio", 0.5)
        return mod

    registered(tunable, config=[
        ConfigKey("test.Tunable.max_depth", "int", 4, "how deep to go"),
        ("test.Tunable.ratio", float, 0.25, "a float knob"),
    ])
    return tunable, seen


def test_config_values_reach_the_pass(config_pass):
    tunable, seen = config_pass
    with PassContext(config={"test.Tunable.max_depth": 7}):
        tunable(_module())
    assert seen == {"depth": 7, "ratio": 0.5}


def test_config_get_without_default_gives_the_declared_default(config_pass):
    tunable, seen = config_pass
    tunable(_module())
    assert seen["depth"] == 4


def test_unknown_config_key_lists_the_valid_keys(config_pass):
    with pytest.raises(UnknownConfigKeyError) as err:
        PassContext(config={"test.Tunable.max_dept": 3})
    text = str(err.value)
    assert "test.Tunable.max_depth" in text and "test.Tunable.ratio" in text
    assert "did you mean 'test.Tunable.max_depth'" in text


def test_config_value_of_the_wrong_type_is_an_error(config_pass):
    with pytest.raises(ConfigTypeError, match="takes a int"):
        PassContext(config={"test.Tunable.max_depth": "deep"})
    with pytest.raises(ConfigTypeError):
        PassContext(config={"test.Tunable.max_depth": True})
    ctx = PassContext(config={"test.Tunable.ratio": 1})  # an int is a fine float
    assert ctx.config["test.Tunable.ratio"] == 1.0


def test_list_configs_shows_declared_keys(config_pass):
    keys = PassContext.list_configs()
    key = keys["test.Tunable.max_depth"]
    assert (key.type, key.default, key.help) == ("int", 4, "how deep to go")
    assert "Tunable" in key.declared_by


# --- dependencies ---------------------------------------------------------------------------
def test_required_passes_run_first_in_a_sequential(registered):
    log: list[str] = []
    registered(_recorder("Base", log))
    seq = Sequential([_recorder("Other", log), _recorder("User", log, required=["Base"])])
    seq(_module())
    assert log == ["Other", "Base", "User"]


def test_required_passes_run_for_a_pass_called_alone(registered):
    log: list[str] = []
    registered(_recorder("Base", log))
    _recorder("User", log, required=["Base"])(_module())
    assert log == ["Base", "User"]


def test_required_closure_runs_in_dependency_order(registered):
    log: list[str] = []
    registered(_recorder("A", log))
    registered(_recorder("B", log, required=["A"]))
    registered(_recorder("C", log, required=["B", "A"]))
    _recorder("D", log, required=["C"])(_module())
    assert log == ["A", "B", "C", "D"]


def test_required_pass_runs_even_when_disabled_or_above_opt_level(registered):
    # As in TVM, the enabled rule applies to a Sequential's members, not to what they require.
    log: list[str] = []
    registered(_recorder("Base", log, opt_level=3))
    with PassContext(opt_level=0, disabled_pass=["Base"]):
        Sequential([_recorder("User", log, required=["Base"])])(_module())
    assert log == ["Base", "User"]


def test_required_pass_whose_effect_holds_is_not_run_again(registered):
    log: list[str] = []
    registered(_recorder("Analysis", log))
    seq = Sequential([
        _recorder("U1", log, required=["Analysis"], preserves=["Analysis"]),
        _recorder("Keeps", log, preserves=["Analysis"]),
        _recorder("U2", log, required=["Analysis"]),
    ])
    seq(_module())
    assert log == ["Analysis", "U1", "Keeps", "U2"]


def test_required_pass_runs_again_after_a_pass_that_does_not_preserve_it(registered):
    log: list[str] = []
    registered(_recorder("Analysis", log))
    seq = Sequential([
        _recorder("U1", log, required=["Analysis"], preserves=["Analysis"]),
        _recorder("Changes", log),
        _recorder("U2", log, required=["Analysis"]),
    ])
    seq(_module())
    assert log == ["Analysis", "U1", "Changes", "Analysis", "U2"]


def test_explicit_run_counts_for_the_preserves_rule(registered):
    log: list[str] = []
    analysis = registered(_recorder("Analysis", log))
    seq = Sequential([analysis, PrintIR_silent(), _recorder("User", log, required=["Analysis"])])
    seq(_module())
    assert log == ["Analysis", "User"]


def PrintIR_silent():  # noqa: N802 - reads like the pass it stands for
    """A pass that preserves everything, like PrintIR, without printing."""
    return module_pass(lambda mod, ctx: mod, opt_level=0, name="Quiet", preserves=["*"])


def test_missing_dependency_names_the_pass_and_near_matches(registered):
    registered(_recorder("InferShapes", []))
    user = _recorder("User", [], required=["InferShape"])
    with pytest.raises(MissingDependencyError) as err:
        user(_module())
    text = str(err.value)
    assert "'User'" in text and "'InferShape'" in text and "did you mean 'InferShapes'" in text


def test_missing_dependency_of_a_registered_pass_names_where_it_was_declared(registered):
    registered(_recorder("Needy", [], required=["Nowhere"]))
    with pytest.raises(MissingDependencyError) as err:
        get_pass("Needy")
    assert "'Needy'" in str(err.value) and "in-process registration" in str(err.value)


def test_dependency_cycle_is_an_error_that_prints_the_cycle(registered):
    registered(_recorder("P", [], required=["Q"]))
    registered(_recorder("Q", [], required=["R"]))
    registered(_recorder("R", [], required=["P"]))
    with pytest.raises(DependencyCycleError) as err:
        Sequential([_recorder("User", [], required=["P"])])(_module())
    assert "P" in str(err.value) and "Q" in str(err.value) and "R" in str(err.value)
    assert " -> " in str(err.value)


def test_registering_a_taken_name_is_an_error_unless_override(registered):
    registered(_recorder("Taken", []))
    with pytest.raises(DuplicatePassError, match="override=True"):
        register_pass(_recorder("Taken", []))
    replacement = _recorder("Taken", [])
    register_pass(replacement, override=True)
    assert get_pass("Taken") is replacement


def test_register_pass_as_a_factory_decorator(registered):
    @register_pass(name="Scaled", opt_level=1, options=[("factor", int, 2, "how much")])
    def make_scaled(factor=2):
        return module_pass(lambda mod, ctx: mod, opt_level=1, name="Scaled")

    try:
        assert get_pass("Scaled", factor=3).info.name == "Scaled"
        with pytest.raises(RelayPassError, match="has no option 'factr'"):
            get_pass("Scaled", factr=3)
    finally:
        unregister_pass("Scaled")


def test_register_pass_with_a_decorated_class(registered):
    @module_pass(opt_level=1, name="Counting")
    class Counting:
        def __init__(self, start=0):
            self.start = start

        def transform_module(self, mod, ctx):
            return mod

    registered(Counting, name="Counting")
    built = get_pass("Counting", start=5)
    assert isinstance(built, ModulePass) and built.start == 5


# --- exceptions -----------------------------------------------------------------------------
def test_an_exception_in_a_pass_keeps_its_type_and_gets_a_note():
    @module_pass(opt_level=0)
    def broken(mod, ctx):
        raise TypeInferenceError("cannot type %x")

    with pytest.raises(TypeInferenceError, match="cannot type") as err:
        Sequential([broken])(_module())
    notes = getattr(err.value, "__notes__", [])
    assert any("'broken'" in n for n in notes)
    assert sum("relaypass:" in n for n in notes) == 1  # the innermost pass only


def test_print_ir_prints_and_returns_the_module_unchanged(capsys):
    mod = _module()
    out = PrintIR("after fold")(mod)
    printed = capsys.readouterr()
    assert printed.err.startswith("PrintIR(after fold):\n") and not printed.out  # stderr, as TVM logs it
    assert "def @main" in printed.err
    assert out["main"] is mod["main"]
    assert PrintIR().info.opt_level == 0 and PrintIR().info.name == "PrintIR"


# --- the Relay namespace --------------------------------------------------------------------
def test_relay_transform_resolves_registered_passes_by_attribute(registered):
    log: list[str] = []
    registered(_recorder("MyRegistered", log))
    built = relay.transform.MyRegistered()
    built(_module())
    assert log == ["MyRegistered"]
    with pytest.raises(AttributeError, match="did you mean MyRegistered"):
        relay.transform.MyRegistere  # noqa: B018


def test_relay_transform_reexports_the_pass_manager():
    from relaypass import transform

    t = relay.transform
    assert t.PassContext is transform.PassContext and t.Sequential is transform.Sequential
    assert t.module_pass is transform.module_pass and t.function_pass is transform.function_pass
    assert "InferType" in dir(t)


def test_the_cycle_collector_is_paused_while_a_pass_runs_and_restored_after():
    import gc

    from relaypass import relay
    from relaypass.transform import module_pass

    seen = []

    @module_pass(opt_level=0, name="SeesGC")
    def sees_gc(mod, ctx):
        seen.append(gc.isenabled())
        return mod

    assert gc.isenabled()
    sees_gc(relay.IRModule.from_expr(relay.var("x", shape=(1,))))
    assert seen == [False] and gc.isenabled()

    @module_pass(opt_level=0, name="Raises")
    def raises(mod, ctx):
        raise ValueError("boom")

    with pytest.raises(ValueError):
        raises(relay.IRModule.from_expr(relay.var("x", shape=(1,))))
    assert gc.isenabled()


def test_a_bare_function_cannot_take_back_the_globals_a_pass_adds():
    # LambdaLift moves the closure to a new global; handing back main alone would leave its
    # call dangling, so the old-style invocation refuses and says what to do instead.
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    func = relay.Function([x], relay.Call(relay.Function([y], relay.add(y, x)), [x]))
    with pytest.raises(PassResultError, match=r"'LambdaLift' added global functions \(@lifted"):
        relay.transform.LambdaLift()(func)
    lifted = relay.transform.LambdaLift()(IRModule.from_expr(func))
    assert len(lifted.get_global_vars()) == 2
