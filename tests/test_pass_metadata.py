"""A pass's metadata is written once, in its declaration, and every way of making it agrees.

The standard passes' manifest entries are the only place their opt_level,
required passes and preserves are written: their factories return the bare
transformation and the registry makes the pass.  Option defaults too are
written only in declarations: the registry calls a factory with every declared
option, filling those not given with their declared defaults.  ``module.Name()``,
``relay.transform.Name()`` and ``get_pass("Name")`` all go through the
registry, so they give equal ``(info, preserves)``.  PassInfo stays TVM's
three fields; preserves is compared beside it.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

from relaypass import relay
from relaypass.ir import IRModule
from relaypass.transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassConstructor,
    PassInfo,
    get_instrument,
    get_pass,
    list_instruments,
    list_passes,
    pass_constructor,
    register_instrument,
    register_pass,
    unregister_instrument,
    unregister_pass,
)
from relaypass.transform.context import pass_enabled
from relaypass.transform.errors import OptionError, PassNotFoundError, PluginBuildError
from relaypass.transform.instrument import PassInstrument

STANDARD = sorted(s.name for s in list_passes()
                  if not s.origin.in_process and s.distribution == "relaypass")


def _spec(name: str):
    [spec] = [s for s in list_passes() if s.name == name]
    return spec


def _module_of(name: str):
    return importlib.import_module(_spec(name).factory.partition(":")[0])


#: Values for the options a standard pass declares without a default (it cannot be built without).
REQUIRED_OPTIONS: dict[str, dict] = {
    "MergeComposite": {"pattern_table": []},
    "ConvertLayout": {"desired_layouts": {"nn.conv2d": ["NHWC", "default"]}},
}


def _declared_defaults(spec) -> dict:
    return {**{o.name: o.default for o in spec.options or () if not o.required},
            **REQUIRED_OPTIONS.get(spec.name, {})}


def _declared(name: str) -> tuple[PassInfo, frozenset[str]]:
    spec = _spec(name)
    return PassInfo(spec.opt_level, spec.name, spec.required), frozenset(spec.preserves)


def test_the_standard_passes_are_all_there():
    assert {"InferType", "FoldConstant", "DeadCodeElimination", "ToANormalForm",
            "ToGraphNormalForm", "FuseOps", "SimplifyInference", "EliminateCommonSubexpr",
            "SimplifyExpr"} <= set(STANDARD)


@pytest.mark.parametrize("name", STANDARD)
def test_every_way_of_making_a_standard_pass_gives_the_same_info(name):
    needed = REQUIRED_OPTIONS.get(name, {})
    module_made = getattr(_module_of(name), name)(**needed)
    relay_made = getattr(relay.transform, name)(**needed)
    registry_made = get_pass(name, **needed)
    assert module_made.info == relay_made.info == registry_made.info
    assert module_made.preserves == relay_made.preserves == registry_made.preserves
    assert (registry_made.info, registry_made.preserves) == _declared(name)
    assert module_made.origin == relay_made.origin == registry_made.origin


@pytest.mark.parametrize("name", STANDARD)
def test_the_standard_modules_export_constructors_and_manifest_factories_give_transformations(name):
    module = _module_of(name)
    assert getattr(module, name) == PassConstructor(name)
    factory = getattr(module, _spec(name).factory.partition(":")[2])
    built = factory(**_declared_defaults(_spec(name)))  # as the registry calls it
    if _spec(name).kind == "sequential":  # its members; the declaration makes the Sequential
        assert isinstance(built, list) and all(isinstance(p, Pass) for p in built)
    else:
        assert callable(built) and not isinstance(built, Pass) and not inspect.isclass(built)


@pytest.mark.parametrize("name", STANDARD)
def test_no_standard_pass_restates_its_declaration_in_code(name):
    source = inspect.getsource(_module_of(name))
    for restated in ("opt_level=", "required=", "preserves=", "function_pass(", "module_pass("):
        assert restated not in source, f"{name}'s module writes {restated!r}"


def test_positional_arguments_fill_the_declared_options_in_order():
    skipped = []

    def fskip(expr):
        skipped.append(expr)
        return False

    for construct in (relay.transform.EliminateCommonSubexpr,
                      _module_of("EliminateCommonSubexpr").EliminateCommonSubexpr):
        p = construct(fskip)
        x = relay.var("x", shape=(2,))
        p(IRModule.from_expr(relay.add(relay.nn.relu(x), relay.nn.relu(x))))
        assert skipped
        skipped.clear()
        with pytest.raises(TypeError, match="at most 1 positional"):
            construct(fskip, fskip)
        with pytest.raises(TypeError, match="got option 'fskip' twice"):
            construct(fskip, fskip=fskip)
    with pytest.raises(OptionError, match="has no option 'inline'"):
        relay.transform.DeadCodeElimination(inline=True)


def test_a_constructor_reads_the_registry_only_when_called():
    later = pass_constructor("RegisteredLater")
    assert later.__name__ == "RegisteredLater"
    assert repr(later) == "<pass constructor RegisteredLater>"
    with pytest.raises(PassNotFoundError):
        later()

    def factory():
        return lambda mod, ctx: mod

    register_pass(factory, name="RegisteredLater", opt_level=1, help="Registered after.")
    try:
        assert later().info == PassInfo(1, "RegisteredLater")
        assert later == relay.transform.RegisteredLater
        assert later.__doc__.startswith("Registered after.") and "in-process" in later.__doc__
    finally:
        unregister_pass("RegisteredLater")
    with pytest.raises(PassNotFoundError):
        later()


def test_constructor_doc_is_the_declarations_help_and_options():
    doc = relay.transform.FuseOps.__doc__
    assert doc.startswith(_spec("FuseOps").help)
    assert "fuse_opt_level (int, default -1)" in doc and "(from relaypass " in doc


def test_reading_relay_transform_attributes_imports_no_plugin_code():
    code = (
        "import sys\n"
        "from relaypass import relay\n"
        "c = relay.transform.FuseOps\n"
        "assert c.__doc__ and c.__name__ == 'FuseOps'\n"
        "print(sorted(m for m in sys.modules if m.startswith('relaypass_std.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# --- factories returning the transformation (in-process, as a manifest's would) -------
@pytest.fixture
def register():
    names: list[str] = []

    def add(factory, **kwargs):
        register_pass(factory, **kwargs)
        names.append(kwargs["name"])

    yield add
    for name in names:
        unregister_pass(name)


def test_a_factory_returning_a_function_transformation_gets_the_declared_info(register):
    def factory(scale=1):
        def transform(func, mod, ctx):
            return func

        return transform

    register(factory, name="Declared", kind="function", opt_level=2, required=["InferType"],
             preserves=["InferType"], options=[("scale", int, 1, "unused")])
    for p in (get_pass("Declared", scale=2), relay.transform.Declared(3),
              pass_constructor("Declared")()):
        assert isinstance(p, FunctionPass)
        assert (p.info, p.preserves) == (PassInfo(2, "Declared", ["InferType"]),
                                         frozenset({"InferType"}))
        assert p.origin.startswith("in-process registration")
    x = relay.var("x", shape=(2,))
    out = get_pass("Declared")(IRModule.from_expr(relay.nn.relu(x)))
    assert out["main"].checked_type is not None  # InferType ran first, as declared


def test_a_factory_returning_a_module_transformation_makes_a_module_pass(register):
    register(lambda: (lambda mod, ctx: mod), name="DeclaredModule", opt_level=0)
    p = get_pass("DeclaredModule")
    assert isinstance(p, ModulePass) and p.info == PassInfo(0, "DeclaredModule")


@pytest.mark.parametrize("returned, kind, message", [
    (lambda mod, ctx: mod, "function", r"cannot be called as \(func, mod, ctx\) -> Function"),
    (lambda func, mod, ctx: func, "module", r"cannot be called as \(mod, ctx\) -> IRModule"),
    (42, "module", "int, not a Pass or a module pass's transformation"),
    (FunctionPass, "function", "the class FunctionPass, not a Pass"),
    (lambda mod: mod, "sequential", "not a Sequential or its member passes"),
])
def test_a_factory_returning_something_unusable_is_named(register, returned, kind, message):
    register(lambda: returned, name="Unusable", kind=kind, opt_level=0)
    with pytest.raises(PluginBuildError, match=message):
        get_pass("Unusable")


def test_a_factory_returning_a_pass_is_still_checked_against_its_declaration(register):
    def factory():
        return FunctionPass(lambda f, m, c: f, PassInfo(3, "Drifting"))

    register(factory, name="Drifting", kind="function", opt_level=1)
    with pytest.raises(PluginBuildError, match=r"opt_level 3 \(declared 1\)"):
        get_pass("Drifting")


def test_a_constructor_used_as_its_own_factory_is_an_error_not_a_recursion(register):
    register(pass_constructor("Itself"), name="Itself", opt_level=0)
    with pytest.raises(PluginBuildError, match="asks for pass 'Itself' again"):
        get_pass("Itself")


# --- option defaults are written once, in the declaration ------------------------------
STANDARD_INSTRUMENTS = sorted(s.name for s in list_instruments()
                              if not s.origin.in_process and s.distribution == "relaypass")


def _factory_of(spec):
    module, _, attr = spec.factory.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("spec", [_spec(n) for n in STANDARD]
                         + [s for s in list_instruments() if s.name in STANDARD_INSTRUMENTS],
                         ids=lambda s: s.name)
def test_no_standard_factory_restates_an_option_default(spec):
    parameters = inspect.signature(_factory_of(spec)).parameters
    # Every declared option is a keyword parameter without a default, and there is no other.
    assert {p.name for p in parameters.values()} == {o.name for o in spec.options}
    for p in parameters.values():
        assert p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD), p
        assert p.default is p.empty, f"{spec.name}'s factory restates the default of {p.name!r}"


def test_a_factory_gets_the_declared_default_of_each_option_not_given(register):
    seen = []

    def factory(*, scale, names, label):  # no defaults: the declaration has them
        seen.append({"scale": scale, "names": names, "label": label})
        return lambda mod, ctx: mod

    register(factory, name="Defaulted", opt_level=0, options=[
        ("scale", int, 2, ""), ("names", "list[str]", ["a"], ""), {"name": "label", "type": str}])
    with pytest.raises(OptionError, match="needs option.s. label"):
        get_pass("Defaulted")  # declared without a default: still required
    get_pass("Defaulted", label="x")
    relay.transform.Defaulted(5, label="y")
    assert seen == [{"scale": 2, "names": ["a"], "label": "x"},
                    {"scale": 5, "names": ["a"], "label": "y"}]
    assert seen[0]["names"] is not seen[1]["names"]  # a fresh list each time
    seen[0]["names"].append("b")
    get_pass("Defaulted", label="z")
    assert seen[-1]["names"] == ["a"]


def test_a_factory_with_a_parameter_not_declared_fails_to_build(register):
    def factory(*, scale, extra):
        return lambda mod, ctx: mod

    register(factory, name="Undeclared", opt_level=0, options=[("scale", int, 2, "")])
    with pytest.raises(OptionError, match="has no option 'extra'"):
        get_pass("Undeclared", extra=1)
    with pytest.raises(PluginBuildError, match="extra"):
        get_pass("Undeclared")


def test_undeclared_options_of_an_in_process_factory_are_passed_through(register):
    seen = []

    def factory(scale=3, **more):  # no options= declared: the factory's own defaults apply
        seen.append((scale, more))
        return lambda mod, ctx: mod

    register(factory, name="Unchecked", opt_level=0)
    get_pass("Unchecked")
    get_pass("Unchecked", anything=1)
    assert seen == [(3, {}), (3, {"anything": 1})]


def test_an_instrument_factory_gets_the_declared_defaults():
    seen = []

    class Recorder(PassInstrument):
        def __init__(self, *, tag, level):
            seen.append((tag, level))

    register_instrument(Recorder, name="DefaultedRecorder",
                        options=[("tag", str, "t", ""), ("level", int, 1, "")])
    try:
        get_instrument("DefaultedRecorder")
        get_instrument("DefaultedRecorder", level=4)
    finally:
        unregister_instrument("DefaultedRecorder")
    assert seen == [("t", 1), ("t", 4)]


def test_the_standard_instruments_get_the_manifests_defaults():
    timing = get_instrument("PassTimingInstrument")
    assert isinstance(timing, PassInstrument)
    validator = get_instrument("TranslationValidator")
    assert (validator._seed, validator._rtol, validator._atol, validator._inputs) == \
        (0, 1e-5, 1e-6, 1)


# --- the enabled rule ------------------------------------------------------------------
@pytest.mark.parametrize("name, level, required, disabled, enabled", [
    ("P", 2, (), (), True),          # opt_level 2 <= 2
    ("P", 3, (), (), False),         # above the context's level
    ("P", 3, ("P",), (), True),      # required_pass lifts the level
    ("P", 0, (), ("P",), False),     # disabled_pass
    ("P", 0, ("P",), ("P",), False),  # disabled wins over required, as in Relay
])
def test_pass_enabled_is_relays_rule(name, level, required, disabled, enabled):
    assert pass_enabled(name, level, 2, frozenset(required), frozenset(disabled)) is enabled
