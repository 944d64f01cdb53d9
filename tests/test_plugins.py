"""Plugins: entry points, manifests, lazy imports, hooks, and contained failures.

Broken distributions are built as tiny ``*.dist-info`` folders (METADATA and
entry_points.txt) beside their package on a temporary ``sys.path`` entry:
that is all importlib.metadata needs to see an installed distribution.  A
real one, the plugin template ``examples/plugin_template``, is pip-installed
into a fresh virtual environment at the end of this file.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from relaypass import relay
from relaypass.ir import IRModule
from relaypass.plugins import hookimpl, register_plugin, unregister_plugin
from relaypass.plugins.manifest import MANIFEST_NAME, parse_manifest
from relaypass.transform import (
    PassContext,
    get_instrument,
    get_pass,
    list_instruments,
    list_passes,
    plugin_errors,
    refresh_plugins,
    register_instrument,
    unregister_instrument,
)
from relaypass.transform.errors import (
    DependencyCycleError,
    DuplicatePassError,
    ManifestError,
    MissingDependencyError,
    OptionError,
    PassNotFoundError,
    PluginBuildError,
    PluginHookError,
    PluginImportError,
)
from relaypass.transform.instrument import PassInstrument
from relaypass.transform.specs import Origin, PassSpec

PASS_MODULE = '''
from relaypass.transform import module_pass

BUILT = []


def make(name, opt_level=1, required=()):
    def factory(**options):
        BUILT.append(name)

        @module_pass(opt_level=opt_level, name=name, required=list(required))
        def run(mod, ctx):
            return mod

        return run

    return factory
'''


class Distributions:
    """Creates installed-looking distributions under one temporary sys.path entry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.packages: list[str] = []

    def add(self, dist: str, version: str, package: str, manifest: str,
            modules: dict[str, str] | None = None, entry_value: str | None = None) -> None:
        # As pip names it: the normalized name, so that "a-b" and "a-c" stay distinct.
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(
            f"[relaypass.plugins]\n{package} = {entry_value or package}\n")
        pkg = self.root / package
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / MANIFEST_NAME).write_text(textwrap.dedent(manifest))
        for name, text in (modules or {}).items():
            (pkg / f"{name}.py").write_text(textwrap.dedent(text))
        self.packages.append(package)
        refresh_plugins()


@pytest.fixture
def dists(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    made = Distributions(root)
    try:
        yield made
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.split(".")[0] in made.packages:
                del sys.modules[name]
        refresh_plugins()


def _manifest_pass(name: str, factory: str, opt_level: int = 1, required=(), kind="module") -> str:
    req = ", ".join(f'"{r}"' for r in required)
    return f'''
    [[pass]]
    name = "{name}"
    kind = "{kind}"
    opt_level = {opt_level}
    required = [{req}]
    factory = "{factory}"
    '''


def _module() -> IRModule:
    x = relay.var("x", shape=(3,))
    return IRModule.from_expr(relay.Function([x], relay.add(x, x)))


# --- the standard plugins -------------------------------------------------------------------
def test_standard_passes_are_listed_under_the_installed_distribution():
    version = importlib.metadata.version("relaypass")
    specs = {s.name: s for s in list_passes()}
    assert specs["InferType"].distribution == "relaypass"
    assert specs["InferType"].version == version
    assert (specs["InferType"].kind, specs["InferType"].opt_level) == ("module", 0)
    names = {s.name for s in list_instruments()}
    assert {"PassTimingInstrument", "PrintBefore", "PrintAfter", "PrintBeforeAll", "PrintAfterAll",
            "PrintChanged", "DumpIR"} <= names


def test_listing_and_resolving_dependencies_import_no_plugin_code():
    code = (
        "import sys\n"
        "from relaypass.transform import list_passes, list_instruments, PassContext\n"
        "from relaypass.transform.registry import get_registry\n"
        "assert list_passes() and list_instruments()\n"
        "for spec in list_passes(): get_registry().spec_plan(spec)\n"
        "PassContext.list_configs()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('relaypass_std', "
        "'relaypass_instruments', 'numpy', 'relaypass.ir'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # The packages themselves may be located, never their pass or instrument modules.
    assert out.stdout.strip() == "[]", out.stdout


def test_get_pass_builds_standard_passes_and_instruments():
    p = get_pass("InferType")
    assert p.info.name == "InferType" and p.origin.startswith("relaypass ")
    assert isinstance(get_instrument("PassTimingInstrument"), PassInstrument)


def test_relay_transform_builds_plugin_passes():
    assert relay.transform.InferType().info.opt_level == 0


def test_options_are_checked_against_the_manifest():
    with pytest.raises(OptionError, match="needs option"):
        get_instrument("PrintBefore")
    with pytest.raises(OptionError, match="did you mean 'passes'"):
        get_instrument("PrintBefore", passe=["InferType"])


# --- a healthy third-party distribution -----------------------------------------------------
def test_plugin_code_is_imported_only_when_a_pass_is_first_built(dists):
    dists.add("lazy-plugin", "2.3", "lazy_plugin", _manifest_pass("LazyPass", "lazy_plugin.impl:LAZY"),
              {"impl": PASS_MODULE + "\nLAZY = make('LazyPass')\n"})
    spec = {s.name: s for s in list_passes()}["LazyPass"]
    assert (spec.distribution, spec.version) == ("lazy-plugin", "2.3")
    assert "lazy_plugin.impl" not in sys.modules and "lazy_plugin" not in sys.modules
    p = get_pass("LazyPass")
    assert "lazy_plugin.impl" in sys.modules and p.origin == "lazy-plugin 2.3"
    assert p(_module()) is not None


def test_entry_point_must_name_a_package(dists):
    dists.add("colon-plugin", "1.0", "colon_plugin", "", entry_value="colon_plugin:thing")
    [err] = [e for e in plugin_errors() if e.distribution == "colon-plugin"]
    assert isinstance(err, ManifestError) and "must name the package" in str(err)


# --- broken distributions: each its own error, the others keep working ----------------------
def test_bad_manifest_is_named_and_standard_passes_still_resolve(dists):
    dists.add("bad-manifest", "0.1", "bad_manifest", "[[pass]]\nname = 'Oops'\nkind = \n")
    [err] = [e for e in plugin_errors() if e.distribution == "bad-manifest"]
    assert isinstance(err, ManifestError) and err.version == "0.1"
    assert "not valid TOML" in str(err) and "pip uninstall bad-manifest" in str(err)
    assert get_pass("InferType").info.name == "InferType"
    with pytest.raises(PassNotFoundError, match="bad-manifest 0.1"):
        get_pass("Oops")


def test_invalid_manifest_entry_names_the_key_path(dists):
    dists.add("wrong-level", "1.0", "wrong_level",
              _manifest_pass("Lvl", "wrong_level.x:Y").replace("opt_level = 1", 'opt_level = "high"'))
    [err] = [e for e in plugin_errors() if e.distribution == "wrong-level"]
    assert "pass[0].opt_level" in str(err) and "non-negative integer" in str(err)
    assert get_pass("InferType")


def test_factory_import_error_is_named_and_others_keep_working(dists):
    dists.add("broken-import", "3.1", "broken_import",
              _manifest_pass("Fine", "broken_import.fine:FINE")
              + _manifest_pass("NoImport", "broken_import.missing:Pass"),
              {"fine": PASS_MODULE + "\nFINE = make('Fine')\n"})
    with pytest.raises(PluginImportError) as err:
        get_pass("NoImport")
    assert (err.value.distribution, err.value.version) == ("broken-import", "3.1")
    assert "broken_import.missing" in str(err.value) and "pip install --force-reinstall" in str(err.value)
    assert get_pass("Fine").info.name == "Fine"
    assert get_pass("InferType")


def test_plugin_raising_while_built_is_named(dists):
    dists.add("raising", "1.0", "raising", _manifest_pass("Raises", "raising.impl:factory"),
              {"impl": "def factory(**options):\n    raise ZeroDivisionError('oops')\n"})
    with pytest.raises(PluginBuildError, match="raising 1.0") as err:
        get_pass("Raises")
    assert isinstance(err.value.__cause__, ZeroDivisionError)
    assert get_pass("InferType")


def test_built_pass_must_match_its_declaration(dists):
    dists.add("drift", "1.0", "drift", _manifest_pass("Drifted", "drift.impl:D", opt_level=1),
              {"impl": PASS_MODULE + "\nD = make('Drifted', opt_level=3)\n"})
    with pytest.raises(PluginBuildError, match="opt_level 3 \\(declared 1\\)"):
        get_pass("Drifted")


def test_same_name_from_two_distributions(dists):
    dists.add("first-dist", "1.0", "first_dist",
              _manifest_pass("Shared", "first_dist.impl:S") + _manifest_pass("OnlyFirst", "first_dist.impl:F"),
              {"impl": PASS_MODULE + "\nS = make('Shared')\nF = make('OnlyFirst')\n"})
    dists.add("second-dist", "2.0", "second_dist", _manifest_pass("Shared", "second_dist.impl:S"),
              {"impl": PASS_MODULE + "\nS = make('Shared')\n"})
    with pytest.raises(DuplicatePassError) as err:
        get_pass("Shared")
    assert "first-dist 1.0" in str(err.value) and "second-dist 2.0" in str(err.value)
    assert "pip uninstall" in str(err.value)
    assert any(isinstance(e, DuplicatePassError) for e in plugin_errors())
    assert get_pass("OnlyFirst").info.name == "OnlyFirst"
    assert get_pass("InferType")


def test_missing_dependency_names_the_pass_the_distribution_and_near_matches(dists):
    dists.add("needy", "0.4", "needy", _manifest_pass("Needy", "needy.impl:N", required=["InferTyp"]),
              {"impl": PASS_MODULE + "\nN = make('Needy', required=['InferTyp'])\n"})
    with pytest.raises(MissingDependencyError) as err:
        get_pass("Needy")
    text = str(err.value)
    assert "'Needy'" in text and "needy 0.4" in text and "did you mean 'InferType'" in text
    assert (err.value.distribution, err.value.version) == ("needy", "0.4")
    assert "needy.impl" not in sys.modules  # found from the manifest, before any import
    assert get_pass("InferType")


def test_dependency_cycle_across_distributions_prints_the_cycle(dists):
    dists.add("cyc-a", "1.0", "cyc_a", _manifest_pass("CycA", "cyc_a.impl:A", required=["CycB"]))
    dists.add("cyc-b", "1.0", "cyc_b", _manifest_pass("CycB", "cyc_b.impl:B", required=["CycA"]))
    with pytest.raises(DependencyCycleError) as err:
        get_pass("CycA")
    assert "CycA (cyc-a 1.0) -> CycB (cyc-b 1.0) -> CycA" in str(err.value)
    assert get_pass("InferType")


# --- the plugin manager's hooks -------------------------------------------------------------
def test_a_plugin_object_can_declare_passes_and_observe_builds():
    built = []

    class Provider:
        @hookimpl
        def relaypass_pass_specs(self):
            return [PassSpec("FromHook", "module", 1, _factory, Origin("<in-process>"))]

        @hookimpl
        def relaypass_pass_built(self, spec, pass_):
            built.append((spec.name, pass_.info.name))

    def _factory():
        from relaypass.transform import module_pass

        return module_pass(lambda mod, ctx: mod, opt_level=1, name="FromHook")

    provider = register_plugin(Provider())
    try:
        assert "FromHook" in {s.name for s in list_passes()}
        get_pass("FromHook")
        get_pass("InferType")
        assert built == [("FromHook", "FromHook"), ("InferType", "InferType")]
    finally:
        unregister_plugin(provider)
    assert "FromHook" not in {s.name for s in list_passes()}


def test_a_failing_hook_is_contained_and_reported(dists):
    reported = []

    class Failing:
        @hookimpl
        def relaypass_pass_specs(self):
            raise RuntimeError("cannot declare")

    class Reporter:
        @hookimpl
        def relaypass_plugin_error(self, error):
            reported.append(type(error).__name__)

    register_plugin(Failing(), name="failing")
    register_plugin(Reporter(), name="reporter")
    try:
        dists.add("bad-too", "1.0", "bad_too", "nonsense = [")
        errors = plugin_errors()
        assert any(isinstance(e, PluginHookError) and "failing" in str(e) for e in errors)
        assert get_pass("InferType")
        assert "PluginHookError" in reported and "ManifestError" in reported
    finally:
        unregister_plugin_by_name("failing")
        unregister_plugin_by_name("reporter")


def unregister_plugin_by_name(name):
    from relaypass.plugins.manager import _user_plugins

    for plugin, n in list(_user_plugins):
        if n == name:
            unregister_plugin(plugin)


def test_register_instrument_in_process():
    class Counter(PassInstrument):
        def __init__(self, start=0):
            self.count = start

        def run_after_pass(self, mod, info):
            self.count += 1

    register_instrument(Counter, options=[("start", int, 0, "first value")])
    try:
        pi = get_instrument("Counter", start=2)
        with PassContext(instruments=[pi]):
            get_pass("InferType")(_module())
        assert pi.count == 3
    finally:
        unregister_instrument("Counter")


# --- manifest format ------------------------------------------------------------------------
ORIGIN = Origin("demo", "1.0", "demo/relaypass-plugin.toml")


def test_manifest_reads_passes_config_options_and_instruments():
    decls = parse_manifest('''
        [[pass]]
        name = "Fold"
        kind = "function"
        opt_level = 2
        required = ["InferType"]
        preserves = ["InferType"]
        factory = "demo.fold:Fold"
        help = "fold things"
        [[pass.config]]
        name = "demo.Fold.limit"
        type = "int"
        default = 3
        help = "max size"
        [[pass.option]]
        name = "aggressive"
        type = "bool"
        default = false

        [[instrument]]
        name = "Timer"
        factory = "demo.timer:Timer"
        [[instrument.option]]
        name = "file"
        type = "str"
    ''', ORIGIN)
    [fold] = decls.passes
    assert (fold.kind, fold.opt_level, fold.required, fold.preserves) == (
        "function", 2, ("InferType",), ("InferType",))
    assert fold.config[0].name == "demo.Fold.limit" and fold.config[0].default == 3
    assert fold.options[0].name == "aggressive" and not fold.options[0].required
    [timer] = decls.instruments
    assert timer.options[0].required  # no default: must be given


@pytest.mark.parametrize("text, where", [
    ('[[pass]]\nname = "X"\nkind = "loop"\nopt_level = 1\nfactory = "a:b"\n', "pass[0].kind"),
    ('[[pass]]\nname = "X"\nkind = "module"\nopt_level = 1\nfactory = "a.b"\n', "pass[0].factory"),
    ('[[pass]]\nname = "X"\nkind = "module"\nopt_level = 1\nfactory = "a:b"\nextra = 1\n', "unknown key 'extra'"),
    ('[[pass]]\nname = "X"\nkind = "module"\nfactory = "a:b"\n', "missing required key 'opt_level'"),
    ('[[pass]]\nname = "X"\nkind = "module"\nopt_level = 1\nfactory = "a:b"\n'
     '[[pass.config]]\nname = "k"\ntype = "int"\ndefault = "three"\n', "pass[0].config[0].default"),
    ('format = 2\n', "unsupported manifest format"),
])
def test_manifest_errors_name_the_key_path(text, where):
    with pytest.raises(ManifestError) as err:
        parse_manifest(text, ORIGIN)
    assert where in str(err.value) and "demo 1.0" in str(err.value)


# --- the plugin template: a real third-party distribution, pip-installed into a fresh venv ----
TEMPLATE = Path(__file__).resolve().parents[1] / "examples" / "plugin_template"
TEMPLATE_DIST, TEMPLATE_VERSION = "relaypass-example-plugin", "0.1.0"

TEMPLATE_PIPELINE = """
opt_level = 1
passes = ["RemoveIdentities"]

[config]
"relaypass_example.RemoveIdentities.signed_zeros" = true

[[instruments]]
name = "OpCounter"
options = { label = "demo count" }
"""

VENV_CHECK = """
import json, sys
from collections import Counter
from relaypass import parse
from relaypass.functor import post_order_visit
from relaypass.relay import Call, Op
from relaypass.transform import (
    PassContext, get_instrument, get_pass, list_instruments, list_passes, load_pipeline)
from relaypass.transform.errors import PassNotFoundError


def ops(mod):
    found = Counter()
    post_order_visit(mod["main"], lambda e: isinstance(e, Call) and isinstance(e.op, Op)
                     and found.update([e.op.name]))
    return dict(found)


report = {
    "passes": {s.name: [s.distribution, s.version] for s in list_passes()},
    "instruments": {s.name: [s.distribution, s.version] for s in list_instruments()},
}
mod = parse('''#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32]) {
  %0 = add(%x, 0f);
  multiply(%0, 1f)
}
''')
try:
    remove = get_pass("RemoveIdentities")
except PassNotFoundError as exc:
    report["get_pass"] = "not found: " + str(exc)
else:
    counter = get_instrument("OpCounter")
    with PassContext(instruments=[counter]):
        out = remove(mod)
    report["get_pass"] = {"ran": [r.name for r in counter.records], "ops": ops(out)}
    pipeline = load_pipeline(sys.argv[1])
    report["pipeline"] = ops(pipeline(mod))
print("REPORT " + json.dumps(report))
"""


def _run_in(python: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    return subprocess.run([str(python), *args], capture_output=True, text=True, env=env, check=True)


def _offline_build_flags() -> tuple[str, ...]:
    """pip's flags to build the template (a setuptools project) without the network, if this can.

    setuptools builds wheels by itself from 70.1, with the ``wheel`` package
    before that.  Otherwise pip builds in an isolated environment, fetching
    setuptools from the package index (or its cache), as it does for a user.
    """
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return ()
    major_minor = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if major_minor >= (70, 1) or (major_minor >= (64, 0) and importlib.util.find_spec("wheel")):
        return ("--no-build-isolation", "--no-index")
    return ()


@dataclass
class TemplateVenv:
    python: Path  # the virtual environment's interpreter
    source: Path  # the copy of the template it was installed from
    pipeline: Path  # TEMPLATE_PIPELINE's file
    install: tuple[str, ...]  # the pip command that installed it
    installed: bool = True


def venv_seeing_this_relaypass(venv: Path) -> Path:
    """A new virtual environment at ``venv`` that sees this relaypass and pip; its interpreter.

    The new environment sees this interpreter's packages even when the tests
    themselves run inside a virtual environment, which --system-site-packages
    alone would not give: a .pth line runs site.addsitedir on each of our site dirs.
    """
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True)
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    ours = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run_in(python, "-c", where).stdout.strip())
    (purelib / "_relaypass_test_parent.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in ours))
    return python


@pytest.fixture(scope="session")
def template_venv_once(tmp_path_factory) -> TemplateVenv:
    """A virtual environment (seeing this relaypass) with the plugin template pip-installed; made once."""
    root = tmp_path_factory.mktemp("template_venv")
    python = venv_seeing_this_relaypass(root / "venv")
    source = root / "plugin_template"  # built from a copy: the build leaves files behind
    shutil.copytree(TEMPLATE, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    install = ("-m", "pip", "install", "-q", "--no-deps", *_offline_build_flags(), str(source))
    try:
        _run_in(python, *install)
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"pip install of {TEMPLATE} failed (to build it without the network, install "
                    f"setuptools>=70.1 here):\n{exc.stdout}\n{exc.stderr}")
    pipeline = root / "template.toml"
    pipeline.write_text(TEMPLATE_PIPELINE)
    return TemplateVenv(python, source, pipeline, install)


@pytest.fixture
def template_venv(template_venv_once: TemplateVenv) -> TemplateVenv:
    """The session's environment, with the template installed again if a test uninstalled it."""
    if not template_venv_once.installed:
        _run_in(template_venv_once.python, *template_venv_once.install)
        template_venv_once.installed = True
    return template_venv_once


def _report(python: Path, pipeline: Path) -> dict:
    out = _run_in(python, "-c", VENV_CHECK, str(pipeline)).stdout
    [line] = [ln for ln in out.splitlines() if ln.startswith("REPORT ")]
    report = json.loads(line[len("REPORT "):])
    report["stdout"] = out
    return report


def test_pip_installed_plugin_is_listed_built_and_usable_from_a_pipeline(template_venv):
    report = _report(template_venv.python, template_venv.pipeline)
    assert report["passes"]["RemoveIdentities"] == [TEMPLATE_DIST, TEMPLATE_VERSION]
    assert report["instruments"]["OpCounter"] == [TEMPLATE_DIST, TEMPLATE_VERSION]
    assert report["passes"]["InferType"][0] == "relaypass"
    # get_pass ran InferType first (RemoveIdentities requires it) and read the config
    # key's default (signed_zeros = false: add(x, 0f) is removed too); as a function pass,
    # RemoveIdentities ended by typing its result (as in Relay): InferType again.
    assert report["get_pass"] == {"ran": ["InferType", "RemoveIdentities", "InferType"],
                                  "ops": {}}
    # The pipeline set the config key (add(x, 0f) stays) and ran the plugin's instrument
    # with its option: the Sequential, InferType (added), RemoveIdentities and its typing.
    assert report["pipeline"] == {"add": 1}
    assert "demo count: 4 passes" in report["stdout"]


def test_pip_installed_plugin_is_listed_by_the_cli(template_venv):
    python = template_venv.python
    passes = json.loads(_run_in(python, "-m", "relaypass.tools.cli", "passes", "--json").stdout)
    [spec] = [p for p in passes if p["name"] == "RemoveIdentities"]
    assert (spec["distribution"], spec["version"]) == (TEMPLATE_DIST, TEMPLATE_VERSION)
    assert (spec["kind"], spec["opt_level"], spec["required"]) == ("function", 1, ["InferType"])
    assert [o["name"] for o in spec["options"]] == ["double_negative"]
    assert [c["name"] for c in spec["config"]] == ["relaypass_example.RemoveIdentities.signed_zeros"]
    table = _run_in(python, "-m", "relaypass.tools.cli", "instruments").stdout.splitlines()
    assert any(line.split()[0] == "OpCounter" and TEMPLATE_DIST in line for line in table)


def test_plugin_template_passes_its_own_tests_once_installed(template_venv):
    # From the template's folder: its pyproject.toml sets pytest's rootdir, and with the
    # src/ layout the tests import the installed package, not the source next to them.
    result = subprocess.run(
        [str(template_venv.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        capture_output=True, text=True, cwd=template_venv.source)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "skipped" not in result.stdout


def test_pip_uninstalled_plugin_is_gone(template_venv):
    _run_in(template_venv.python, "-m", "pip", "uninstall", "-y", "-q", TEMPLATE_DIST)
    template_venv.installed = False  # the next test using it installs it again
    report = _report(template_venv.python, template_venv.pipeline)
    assert "RemoveIdentities" not in report["passes"] and "OpCounter" not in report["instruments"]
    assert report["get_pass"].startswith("not found: no pass named 'RemoveIdentities'")
    assert "InferType" in report["passes"]
