"""Pass roles: how the core reaches a pass without naming it.

A manifest entry may say ``role = "type-inference"``; the registry answers
``pass_for_role`` / ``get_pass_by_role`` from the declarations alone.  An
unknown role is an error of the manifest that declares it; two passes
claiming one role are an error raised where the role is asked for, so that
every other pass keeps working.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from relaypass import relay
from relaypass.ir import IRModule
from relaypass.plugins.manifest import MANIFEST_NAME, parse_manifest
from relaypass.testing import check_pass
from relaypass.transform import (
    Pass,
    get_pass,
    get_pass_by_role,
    module_pass,
    plugin_errors,
    refresh_plugins,
    register_pass,
    unregister_pass,
)
from relaypass.transform.errors import ManifestError, PassNotFoundError, RoleConflictError
from relaypass.transform.registry import get_registry
from relaypass.transform.specs import PASS_ROLES, TYPE_INFERENCE, Origin

ORIGIN = Origin("demo", "1.0", "demo/relaypass-plugin.toml")

TYPER_MODULE = '''
from relaypass.transform import get_pass, module_pass


def make():
    infer = get_pass("InferType")

    @module_pass(opt_level=0, name="OtherTyper")
    def other_typer(mod, ctx):
        return infer(mod)

    return other_typer
'''

TYPER_MANIFEST = '''
[[pass]]
name = "OtherTyper"
kind = "module"
opt_level = 0
factory = "other_typer.impl:make"
role = "type-inference"
'''


@pytest.fixture
def other_typer(tmp_path):
    """An installed-looking distribution, other-typer 1.0, whose pass claims type-inference."""
    root = tmp_path / "site"
    info = root / "other_typer-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: other-typer\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[relaypass.plugins]\nother_typer = other_typer\n")
    pkg = root / "other_typer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / MANIFEST_NAME).write_text(textwrap.dedent(TYPER_MANIFEST))
    (pkg / "impl.py").write_text(textwrap.dedent(TYPER_MODULE))
    sys.path.insert(0, str(root))
    refresh_plugins()
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.split(".")[0] == "other_typer":
                del sys.modules[name]
        refresh_plugins()


def _module() -> IRModule:
    x = relay.var("x", shape=(3,))
    return IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def _typer(name: str, calls: list[str]) -> Pass:
    infer = get_pass("InferType")

    @module_pass(opt_level=0, name=name)
    def typer(mod, ctx):
        calls.append(name)
        return infer(mod)

    return typer


# --- the standard passes ----------------------------------------------------------------------
def test_the_standard_type_inference_pass_is_found_by_its_role():
    spec = get_registry().pass_for_role(TYPE_INFERENCE)
    assert spec is not None and spec.name == "InferType" and spec.role == "type-inference"
    assert spec.distribution == "relaypass"
    typer = get_pass_by_role("type-inference")
    assert typer.info.name == "InferType"
    assert typer(_module())["main"].body.has_checked_type
    # Only the typing pass has a role among the standard passes.
    assert [s.name for s in get_registry().list_passes() if s.role] == ["InferType"]


def test_asking_for_an_unknown_role_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown pass role 'typing'; the roles: type-inference"):
        get_registry().pass_for_role("typing")


# --- manifests ---------------------------------------------------------------------------------
def _pass(extra: str = "", options: str = "") -> str:
    return ('[[pass]]\nname = "P"\nkind = "module"\nopt_level = 0\nfactory = "m:f"\n'
            + extra + options)


def test_manifest_reads_a_role_and_defaults_to_none():
    (with_role,) = parse_manifest(_pass('role = "type-inference"\n'), ORIGIN).passes
    (without,) = parse_manifest(_pass(), ORIGIN).passes
    assert with_role.role == "type-inference" and without.role is None
    assert set(PASS_ROLES) == {"type-inference"}


@pytest.mark.parametrize("text, problem", [
    (_pass('role = "typing"\n'),
     r"pass\[0\]\.role: unknown role 'typing'; the roles this relaypass knows: 'type-inference' "
     r"\(a newer relaypass may know more: pip install -U relaypass\)"),
    (_pass("role = 1\n"), r"pass\[0\]\.role: unknown role 1"),
    (_pass('role = "type-inference"\n', '[[pass.option]]\nname = "level"\ntype = "int"\n'),
     r"pass\[0\]\.role: a pass with role 'type-inference' is built without options, but "
     r"option\(s\) level have no default"),
    ('[[instrument]]\nname = "I"\nfactory = "m:f"\nrole = "type-inference"\n',
     r"instrument\[0\]: unknown key 'role'"),
])
def test_a_bad_role_is_a_manifest_error_naming_the_distribution_and_the_way_out(text, problem):
    with pytest.raises(ManifestError, match=problem) as err:
        parse_manifest(text, ORIGIN)
    assert err.value.distribution == "demo"
    assert "fix relaypass-plugin.toml of demo" in str(err.value)
    assert "pip uninstall demo" in str(err.value)


# --- two claims ---------------------------------------------------------------------------------
def test_two_installed_passes_claiming_a_role_fail_where_the_role_is_asked_for(other_typer):
    with pytest.raises(RoleConflictError) as err:
        get_pass_by_role("type-inference")
    message = str(err.value)
    assert ("role 'type-inference' is claimed by both pass 'InferType' from relaypass" in message
            and "and pass 'OtherTyper' from other-typer 1.0, so no pass has it" in message)
    assert "pip uninstall other-typer" in message
    # Nothing else is affected: both passes build by name, and no plugin is reported broken.
    assert get_pass("InferType").info.name == "InferType"
    assert get_pass("OtherTyper")(_module())["main"].body.has_checked_type
    assert not plugin_errors()
    # The core's users of the role say so too.
    with pytest.raises(RoleConflictError):
        check_pass(lambda mod: mod, examples=1)


def test_an_in_process_registration_claiming_a_taken_role():
    calls: list[str] = []
    register_pass(_typer("MyTyper", calls), role="type-inference")
    try:
        with pytest.raises(RoleConflictError) as err:
            get_registry().pass_for_role("type-inference")
        message = str(err.value)
        assert "pass 'InferType' from relaypass" in message
        assert "pass 'MyTyper' from in-process registration" in message
        assert "register 'MyTyper' without role= (or with override=True" in message
    finally:
        unregister_pass("MyTyper")
    assert get_registry().pass_for_role("type-inference").name == "InferType"


def test_override_takes_the_role_in_this_process_and_the_core_uses_it():
    calls: list[str] = []
    register_pass(_typer("MyTyper", calls), role="type-inference", override=True)
    try:
        assert get_registry().pass_for_role("type-inference").name == "MyTyper"
        # check_pass types the programs with the pass of the role, whatever its name.
        check_pass(lambda mod: mod, examples=3)
        assert calls and set(calls) == {"MyTyper"}
    finally:
        unregister_pass("MyTyper")
    assert get_registry().pass_for_role("type-inference").name == "InferType"


def test_no_pass_with_the_role():
    # Shadow the standard InferType by an in-process one that claims no role.
    register_pass(_typer("InferType", []), override=True)
    try:
        assert get_registry().pass_for_role("type-inference") is None
        with pytest.raises(PassNotFoundError, match=r"no registered pass has role 'type-inference' "
                           r"\(\d+ registered; list_passes\(\) shows them\); a plugin declares it "
                           r"with role = 'type-inference'"):
            get_pass_by_role("type-inference")
        with pytest.raises(PassNotFoundError, match="no registered pass has role"):
            check_pass(lambda mod: mod, examples=1)
    finally:
        unregister_pass("InferType")
    assert get_pass_by_role("type-inference").info.name == "InferType"


def test_register_pass_checks_the_role():
    with pytest.raises(ValueError, match="register_pass: unknown role 'typer'"):
        register_pass(_typer("Bad", []), role="typer")
    with pytest.raises(ValueError, match="built without options, but level have no default"):
        register_pass(lambda level: None, name="Bad", opt_level=0, role="type-inference",
                      options=[("level", "int")])
    assert not get_registry().has_pass("Bad")


def test_the_role_is_in_the_json_listing():
    import json
    import subprocess

    out = subprocess.run([sys.executable, "-m", "relaypass.tools.cli", "passes", "--json"],
                         capture_output=True, text=True, check=True, cwd=Path(__file__).parent)
    roles = {p["name"]: p["role"] for p in json.loads(out.stdout)}
    assert roles["InferType"] == "type-inference" and roles["FuseOps"] is None
