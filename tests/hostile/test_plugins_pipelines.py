"""Hostile plugins, manifests and pipeline files: each is a named error, contained, one line.

What is checked (docs/security.md says what relaypass promises):

* a manifest that is not UTF-8, or nested deeper than the TOML reader can
  follow, is a ManifestError naming its distribution; every other plugin
  keeps working;
* a pipeline file writes and deletes only inside the output folder it is
  loaded for (``out_dir``, ``relaypass --out-dir``);
* a pipeline file that is not UTF-8, nests too deep or holds a number that
  does not fit is a PipelineError naming the file and the key; the CLI exits
  2 with one line;
* plugin code cannot take over quietly: ``sys.exit`` at import is a
  PluginError naming the distribution, a standard pass, instrument or
  operator name keeps meaning the standard one unless the user opts in
  (``overrides`` in a pipeline, ``RELAYPASS_OVERRIDES``), both stay reachable
  by qualified name, no message advises uninstalling relaypass, and a
  plugin's warnings name the plugin;
* crash reproducers are valid TOML whatever the names and values hold.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest
from fake_plugins import (
    PASS_MODULE,
    SMALL_MODEL,
    add_distribution,
    files_under,
    one_error_line,
    pass_manifest,
    relaypass_cli,
)
from hypothesis import given
from hypothesis import strategies as st

from relaypass import relay
from relaypass.entry_points import PluginWarning
from relaypass.ir import IRModule
from relaypass.plugins.discovery import discover
from relaypass.tools.reproducer import reproducer_pipeline
from relaypass.tools.schedule import StepRun, resolve_schedule, runnable
from relaypass.transform import (
    get_pass,
    list_passes,
    load_pipeline,
    parse_pipeline,
    plugin_errors,
    read_pipeline,
    refresh_plugins,
    register_pass,
    unregister_pass,
)
from relaypass.transform.errors import (
    DuplicatePassError,
    ManifestError,
    PassNotFoundError,
    PluginBuildError,
    PluginImportError,
)
from relaypass.transform.pipeline import MAX_NESTING, PipelineError
from relaypass.transform.registry import NameShadowedError, get_registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
O2 = ROOT / "examples" / "pipelines" / "O2.toml"
# Advice to remove relaypass itself (not a distribution whose name starts with it).
UNINSTALL_RELAYPASS = re.compile(r"uninstall relaypass(?![-_.\w])")


@pytest.fixture
def site(tmp_path):
    """A folder on sys.path where tests install fake distributions; removed afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    refresh_plugins()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        packages = {p.name for p in root.iterdir() if p.is_dir()}
        for name in list(sys.modules):
            if name.split(".")[0] in packages:
                del sys.modules[name]
        refresh_plugins()


def _good_plugin(root: Path) -> None:
    add_distribution(root, "good-dist", "2.0", "good_pkg",
                     pass_manifest("GoodPass", "good_pkg.impl:GOOD"),
                     {"impl": PASS_MODULE + "\nGOOD = make('good')\n"})


# --- 1. one bad manifest breaks nothing else -------------------------------------------------------
DEEP_INLINE = "x = " + "{ a = " * 3000 + "1" + " }" * 3000 + "\n"
DEEP_ARRAY = "x = " + "[" * 3000 + "]" * 3000 + "\n"
BAD_MANIFESTS = {
    "not utf-8": (b"format = 1\n# caf\xe9\n[[pass]]\n", "not UTF-8 text"),
    "deep inline tables": (DEEP_INLINE, "nested too deeply"),
    "deep arrays": (DEEP_ARRAY, "nested too deeply"),
    "huge integer": ("format = " + "9" * 5000 + "\n", "not readable"),
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_a_bad_manifest_is_a_manifest_error_and_the_others_keep_working(site, case):
    manifest, problem = BAD_MANIFESTS[case]
    add_distribution(site, "bad-dist", "1.3", "bad_pkg", manifest)
    _good_plugin(site)
    errors = [e for e in plugin_errors() if isinstance(e, ManifestError)]
    assert len(errors) == 1, errors
    assert (errors[0].distribution, errors[0].version) == ("bad-dist", "1.3")
    assert problem in str(errors[0]) and "bad-dist 1.3" in str(errors[0])
    get_pass("GoodPass")(IRModule.from_expr(relay.var("x", shape=(1,))))
    assert {"InferType", "FoldConstant", "GoodPass"} <= {s.name for s in list_passes()}


def test_unreadable_entry_points_of_one_distribution_hide_no_other(site):
    info = site / "broken_meta-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-meta\nVersion: 1.0\n")
    (info / "entry_points.txt").write_bytes(b"[relaypass.plugins]\nx = \xff\xfe\n")
    _good_plugin(site)
    found = discover()
    assert any(p.declarations and p.origin.distribution == "good-dist" for p in found)
    broken = [p.error for p in found if p.error is not None]
    assert any("broken_meta-1.0.dist-info" in str(e) for e in broken), broken
    get_pass("GoodPass")


def test_cli_lists_around_a_bad_manifest_and_names_it_when_its_pass_is_asked_for(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "bad-dist", "1.3", "bad_pkg", b"\xff\xfe\x00")
    _good_plugin(site)
    (tmp_path / "p.toml").write_text('passes = ["BadPass"]\n')
    (tmp_path / "good.toml").write_text('passes = ["GoodPass"]\n')
    listing = relaypass_cli("passes", cwd=tmp_path, paths=(site,))
    assert listing.returncode == 0, listing.stderr
    assert "GoodPass" in listing.stdout and "FoldConstant" in listing.stdout
    assert "Traceback" not in listing.stderr
    warning, = [line for line in listing.stderr.splitlines() if "bad-dist" in line]
    assert warning.startswith("relaypass: warning: ") and "bad-dist 1.3" in warning
    assert "not UTF-8" in warning
    line = one_error_line(relaypass_cli("check", "p.toml", cwd=tmp_path, paths=(site,)))
    assert "BadPass" in line and "could not be read: bad-dist 1.3" in line
    assert "relaypass passes says why" in line
    ok = relaypass_cli("check", "good.toml", cwd=tmp_path, paths=(site,))
    assert ok.returncode == 0 and ok.stdout.startswith("ok: 1 pass"), ok.stderr


# --- 2. a pipeline file writes only inside the output folder -------------------------------------
def _escapes(tmp_path: Path) -> dict[str, str]:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    if not (out / "link").exists():
        (out / "link").symlink_to(outside, target_is_directory=True)
    return {
        "parent": "../outside",
        "nested parent": "sub/../../outside",
        "absolute": str(outside),
        "symlink": "link",
        "through a symlink": "link/deeper",
    }


ESCAPE_CASES = ["parent", "nested parent", "absolute", "symlink", "through a symlink"]
WRITERS = {
    "DumpIR": ("dir", "{ dir = VALUE, clean = true }"),
    "PrintAfterAll": ("file", "{ file = VALUE }"),
    "PrintBeforeAll": ("file", "{ file = VALUE }"),
    "PrintChanged": ("file", "{ file = VALUE }"),
    "PassTimingInstrument": ("file", "{ print_on_exit = true, file = VALUE }"),
}


def _pipeline_with(instrument: str, value: str) -> str:
    key, options = WRITERS[instrument]
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return (f'passes = ["InferType"]\n[[instruments]]\nname = "{instrument}"\n'
            f'options = {options.replace("VALUE", chr(34) + escaped + chr(34))}\n')


@pytest.mark.parametrize("instrument", sorted(WRITERS))
@pytest.mark.parametrize("case", ESCAPE_CASES)
def test_instrument_paths_may_not_leave_the_output_folder(tmp_path, instrument, case):
    value = _escapes(tmp_path)[case]
    # A dump of an earlier run outside: DumpIR's clean must never reach it.
    (tmp_path / "outside" / "000_keep.relay").write_text("keep")
    path = tmp_path / "p.toml"
    path.write_text(_pipeline_with(instrument, value))
    before = files_under(tmp_path)
    with pytest.raises(PipelineError) as err:
        load_pipeline(path, out_dir=tmp_path / "out")
    key = WRITERS[instrument][0]
    assert err.value.key_path == f"instruments[0].options.{key}"
    assert str(err.value).startswith(f"{path}: instruments[0].options.{key}: ")
    assert files_under(tmp_path) == before


def test_instrument_paths_inside_the_output_folder_are_written_there(tmp_path, monkeypatch):
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    (out / "dumps").mkdir()
    (out / "dumps" / "007_old.relay").write_text("an earlier run")
    path = tmp_path / "p.toml"
    path.write_text('passes = ["InferType"]\n'
                    '[[instruments]]\nname = "DumpIR"\noptions = { dir = "dumps" }\n'
                    '[[instruments]]\nname = "PrintAfterAll"\noptions = { file = "after.txt" }\n'
                    '[[instruments]]\nname = "PrintBeforeAll"\noptions = { file = "stderr" }\n')
    pipeline = load_pipeline(path, out_dir=out)
    pipeline(IRModule.from_expr(relay.add(relay.var("x", shape=(2,)), relay.const(1.0))))
    assert files_under(cwd) == set()
    assert files_under(out) == {"dumps", "dumps/000_input.relay", "dumps/001_InferType.relay",
                                "after.txt"}
    assert (out / "after.txt").read_text().startswith("// IR after pass InferType")


def test_the_cli_keeps_writes_in_out_dir(tmp_path):
    (tmp_path / "model.relay").write_text(SMALL_MODEL)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "001_keep.relay").write_text("keep")
    (tmp_path / "out").mkdir()
    (tmp_path / "dump.toml").write_text(
        'passes = ["InferType"]\n[[instruments]]\nname = "DumpIR"\noptions = { dir = "dumps" }\n')
    (tmp_path / "escape.toml").write_text(
        'passes = ["InferType"]\n[[instruments]]\nname = "DumpIR"\n'
        'options = { dir = "../outside" }\n')
    ok = relaypass_cli("run", "dump.toml", "model.relay", "-o", "-", "--out-dir", "out",
                       cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert files_under(tmp_path / "out") == {"dumps", "dumps/000_input.relay",
                                             "dumps/001_InferType.relay"}
    for command in (("run", "escape.toml", "model.relay", "--out-dir", "out"),
                    ("check", "escape.toml", "--out-dir", "out"), ("explain", "escape.toml")):
        line = one_error_line(relaypass_cli(*command, cwd=tmp_path))
        assert "escape.toml: instruments[0].options.dir: '../outside' has a '..' part" in line
    assert files_under(tmp_path / "outside") == {"001_keep.relay"}


def test_path_options_and_config_keys_of_plugins_are_contained_too(tmp_path):
    seen = []

    def factory(report):
        seen.append(report)
        return lambda mod, ctx: mod

    register_pass(factory, name="Reporter", opt_level=0, options=[("report", "path")],
                  config=[("test.Reporter.log", "output", "stderr", "where to log")])
    try:
        parse_pipeline('passes = [{ name = "Reporter", options = { report = "r.txt" } }]\n'
                       '[config]\n"test.Reporter.log" = "stdout"\n', out_dir=tmp_path).build()
        assert seen == [str((tmp_path / "r.txt").resolve())]
        with pytest.raises(PipelineError) as err:
            parse_pipeline('passes = [{ name = "Reporter", options = { report = "/tmp/r" } }]',
                           out_dir=tmp_path)
        assert err.value.key_path == "passes[0].options.report"
        with pytest.raises(PipelineError) as err:
            parse_pipeline('passes = [{ name = "Reporter", options = { report = "r" } }]\n'
                           '[config]\n"test.Reporter.log" = "../log.txt"\n', out_dir=tmp_path)
        assert err.value.key_path == 'config."test.Reporter.log"'
    finally:
        unregister_pass("Reporter")


# --- 4. pipeline files raise only PipelineError -------------------------------------------------
HOSTILE_PIPELINES = {
    "not utf-8": (b'passes = ["InferType"]\nname = "caf\xe9"\n', "", "not UTF-8 text (byte 0xe9"),
    "deep arrays": ("passes = " + "[" * 3000 + "]" * 3000 + "\n", "", "nested too deeply"),
    "deep inline tables": ('passes = ["InferType"]\nx = ' + "{a=" * 3000 + "1" + "}" * 3000,
                           "", "nested too deeply"),
    "2000-part dotted key": ('passes = ["InferType"]\n[config]\n' + ".".join(["k"] * 2000)
                             + " = 1\n", "config.k.k.k", "unknown PassContext config key"),
    "deep dotted table": ('passes = ["InferType"]\n[name.' + ".".join(["n"] * 2000) + "]\n",
                          "name", "the pipeline name must be a non-empty string"),
    "float that does not fit": (
        'passes = ["InferType"]\n[[instruments]]\nname = "TranslationValidator"\n'
        "options = { rtol = 1" + "0" * 400 + " }\n", "instruments[0].options", "takes a float"),
    "huge integer": ('passes = ["InferType"]\nopt_level = ' + "7" * 5000 + "\n", "",
                     "not readable"),
    "sequences nested too deep": ("".join(
        f"[[passes{'.passes' * i}]]\nname = \"s{i}\"\n" for i in range(2 * MAX_NESTING)),
        "passes[0]" + ".passes[0]" * MAX_NESTING, f"nest more than {MAX_NESTING} deep"),
    "control characters in a key": ('passes = ["InferType"]\n"bad\\u007f\\nkey" = 1\n',
                                    '"bad\\u007f\\u000akey"', "unknown key"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_PIPELINES))
def test_hostile_pipeline_files_are_pipeline_errors_naming_file_and_key(tmp_path, case):
    content, key_path, problem = HOSTILE_PIPELINES[case]
    path = tmp_path / "hostile.toml"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    with pytest.raises(PipelineError) as err:
        read_pipeline(path, out_dir=tmp_path)
    assert err.value.source == str(path)
    assert err.value.key_path.startswith(key_path), err.value.key_path
    assert problem in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 2000


def test_the_cli_reports_hostile_pipeline_files_in_one_line(tmp_path):
    for i, case in enumerate(sorted(HOSTILE_PIPELINES)):
        content = HOSTILE_PIPELINES[case][0]
        path = tmp_path / f"h{i}.toml"
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    for i in range(len(HOSTILE_PIPELINES)):
        line = one_error_line(relaypass_cli("check", f"h{i}.toml", cwd=tmp_path))
        assert line.startswith(f"relaypass: error: h{i}.toml: ")


# --- 6. plugins do not take over quietly ------------------------------------------------------------
EXITING = "import sys\nsys.exit(3)\n"


def test_sys_exit_at_import_is_a_plugin_error_naming_the_distribution(site):
    add_distribution(site, "exit-dist", "0.2", "exit_pkg",
                     pass_manifest("Quitter", "exit_pkg.impl:make"), {"impl": EXITING})
    with pytest.raises(PluginImportError) as err:
        get_pass("Quitter")
    assert (err.value.distribution, err.value.version) == ("exit-dist", "0.2")
    assert "sys.exit(3)" in str(err.value)


def test_sys_exit_in_a_factory_is_a_plugin_error(site):
    add_distribution(site, "exit-dist", "0.2", "exit_pkg",
                     pass_manifest("Quitter", "exit_pkg.impl:make"),
                     {"impl": "import sys\n\ndef make():\n    sys.exit('bye')\n"})
    with pytest.raises(PluginBuildError) as err:
        get_pass("Quitter")
    assert err.value.distribution == "exit-dist" and "sys.exit('bye')" in str(err.value)


def test_the_cli_reports_a_plugin_exiting_at_import(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "exit-dist", "0.2", "exit_pkg",
                     pass_manifest("Quitter", "exit_pkg.impl:make"), {"impl": EXITING})
    (tmp_path / "model.relay").write_text(SMALL_MODEL)
    (tmp_path / "p.toml").write_text('passes = ["Quitter"]\n')
    line = one_error_line(relaypass_cli("run", "p.toml", "model.relay", cwd=tmp_path,
                                        paths=(site,)))
    assert "exit-dist 0.2" in line and "sys.exit(3)" in line


def _shadowing_plugin(root: Path, names: tuple[str, ...] = ("InferType", "FoldConstant")) -> None:
    manifest = "".join(pass_manifest(n, f"shadow_pkg.impl:{n.upper()}", opt_level=2)
                       for n in names)
    module = PASS_MODULE + "".join(f"\n{n.upper()} = make('shadow {n}')\n" for n in names)
    add_distribution(root, "shadow-dist", "6.6", "shadow_pkg", manifest, {"impl": module})


def test_a_plugin_pass_named_like_a_standard_one_leaves_the_standard_one(site):
    _shadowing_plugin(site)
    with pytest.warns(PluginWarning, match="shadow-dist 6.6"):
        names = {s.name: s for s in list_passes()}
    assert names["InferType"].distribution == "relaypass"
    assert names["FoldConstant"].distribution == "relaypass"
    shadowed = [e for e in plugin_errors() if isinstance(e, NameShadowedError)]
    assert {e.distribution for e in shadowed} == {"shadow-dist"} and len(shadowed) == 2
    assert "shadow_pkg:FoldConstant" in str(shadowed[0]) + str(shadowed[1])
    # Both reachable by qualified name.
    assert get_pass("shadow_pkg:FoldConstant").origin == "shadow-dist 6.6"
    assert get_pass("shadow-dist:FoldConstant").origin == "shadow-dist 6.6"
    assert get_pass("relaypass_std:FoldConstant").origin.startswith("relaypass ")
    assert get_pass("FoldConstant").origin.startswith("relaypass ")
    # O2 keeps running the standard passes.
    impl = sys.modules.get("shadow_pkg.impl")
    mod = relay.fromtext(SMALL_MODEL)
    load_pipeline(O2)(mod)
    assert impl is None or impl.CALLS == []


def test_a_pipeline_opts_in_to_a_plugin_replacing_a_standard_pass(site, tmp_path):
    _shadowing_plugin(site)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        text = ('overrides = ["shadow-dist:FoldConstant"]\n'
                'passes = ["FoldConstant", "relaypass_std:FoldConstant", "InferType"]\n')
        spec = parse_pipeline(text, out_dir=tmp_path)
        assert [(r.name, r.lookup) for r in spec.passes.passes] == [
            ("FoldConstant", "shadow-dist:FoldConstant"),
            ("FoldConstant", "relaypass_std:FoldConstant"), ("InferType", "InferType")]
        spec.build()(relay.fromtext(SMALL_MODEL))
        assert sys.modules["shadow_pkg.impl"].CALLS == ["shadow FoldConstant"]
        for bad, problem in (('["FoldConstant"]', "not a qualified name"),
                             ('["nobody:FoldConstant"]', "no installed plugin provides")):
            with pytest.raises(PipelineError, match=problem) as err:
                parse_pipeline(f'overrides = {bad}\npasses = ["InferType"]\n')
            assert err.value.key_path == "overrides[0]"


def test_the_cli_runs_overrides_and_qualified_names_and_reproduces_them(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "shadow-dist", "6.6", "shadow_pkg",
                     pass_manifest("FoldConstant", "shadow_pkg.impl:make", opt_level=2),
                     {"impl": "def make():\n    def run(mod, ctx):\n"
                              "        raise RuntimeError('the shadow FoldConstant ran')\n"
                              "    return run\n"})
    (tmp_path / "model.relay").write_text(SMALL_MODEL)
    (tmp_path / "std.toml").write_text(
        'passes = ["relaypass_std:InferType", "FoldConstant", "relaypass:FoldConstant"]\n')
    (tmp_path / "over.toml").write_text(
        'overrides = ["shadow-dist:FoldConstant"]\npasses = ["InferType", "FoldConstant"]\n')
    ok = relaypass_cli("run", "std.toml", "model.relay", "-o", "out.relay", cwd=tmp_path,
                       paths=(site,))
    assert ok.returncode == 0, ok.stderr
    explained = relaypass_cli("explain", "over.toml", cwd=tmp_path, paths=(site,))
    assert explained.returncode == 0 and "FoldConstant" in explained.stdout, explained.stderr
    crash = relaypass_cli("run", "over.toml", "model.relay", cwd=tmp_path, paths=(site,))
    assert crash.returncode == 3 and "the shadow FoldConstant ran" in crash.stderr
    folder, = (tmp_path / "relaypass-repro").iterdir()
    passes = tomllib.loads((folder / "pipeline.toml").read_text())["passes"]
    assert passes[-1] == "shadow-dist:FoldConstant"


def test_relaypass_overrides_opts_in_for_the_whole_process(site, monkeypatch):
    _shadowing_plugin(site, ("FoldConstant",))
    monkeypatch.setenv("RELAYPASS_OVERRIDES", "shadow_pkg:FoldConstant")
    refresh_plugins()
    try:
        assert get_pass("FoldConstant").origin == "shadow-dist 6.6"
        assert get_pass("relaypass_std:FoldConstant").origin.startswith("relaypass ")
        assert not [e for e in plugin_errors() if isinstance(e, NameShadowedError)]
        assert [(h.distribution, u.distribution) for h, u in get_registry().shadowed()] == [
            ("relaypass", "shadow-dist")]
    finally:
        monkeypatch.delenv("RELAYPASS_OVERRIDES")
        refresh_plugins()


def test_relaypass_passes_shows_shadowed_and_overridden_names(tmp_path):
    site = tmp_path / "site"
    _shadowing_plugin(site, ("FoldConstant",))
    plain = relaypass_cli("passes", cwd=tmp_path, paths=(site,))
    assert plain.returncode == 0, plain.stderr
    lines = [line for line in plain.stderr.splitlines() if "shadow" in line]
    assert len(lines) == 1 and "shadow_pkg:FoldConstant" in lines[0], plain.stderr
    assert "shadow-dist 6.6" in lines[0] and not UNINSTALL_RELAYPASS.search(plain.stderr)
    chosen = relaypass_cli("passes", cwd=tmp_path, paths=(site,),
                           env={"RELAYPASS_OVERRIDES": "shadow-dist:FoldConstant"})
    assert "FoldConstant is overridden" in chosen.stderr, chosen.stderr
    assert "relaypass_std:FoldConstant names the one of relaypass" in chosen.stderr


def test_a_plugin_cannot_quietly_replace_a_standard_operator(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "evil-ops", "1.0", "evil_ops", operators="ops", modules={"ops": '''
        from relaypass.ir.op import Op, register_op

        standard = Op.get("add")
        register_op("add", num_inputs=2, type_relation=standard.get_attr("FTypeRelation"),
                    description="EVIL", override=True)
        register_op("evil.new_op", num_inputs=1, type_relation=standard.get_attr("FTypeRelation"))
        '''})
    script = ("import warnings; warnings.simplefilter('always')\n"
              "from relaypass.ir.op import Op\n"
              "print(Op.get('add').description == 'EVIL', 'evil.new_op' in Op.list_op_names())\n")
    kept = relaypass_python(script, tmp_path, site)
    assert kept.stdout.split() == ["False", "True"], kept.stderr
    assert "evil-ops" in kept.stderr and "standard operator 'add'" in kept.stderr
    assert "RELAYPASS_OVERRIDES" in kept.stderr
    chosen = relaypass_python(script, tmp_path, site, {"RELAYPASS_OVERRIDES": "evil-ops:add"})
    assert chosen.stdout.split() == ["True", "True"], chosen.stderr


def relaypass_python(script: str, cwd: Path, site: Path, env: dict[str, str] | None = None):
    import os
    import subprocess

    full = {**os.environ, **(env or {}),
            "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=cwd, env=full, timeout=120)


def test_no_message_advises_uninstalling_relaypass(site):
    # A role claimed twice, and a name two plugins declare.
    add_distribution(site, "typer-dist", "1.0", "typer_pkg",
                     pass_manifest("OtherTyper", "typer_pkg.impl:T", extra='role = "type-inference"'),
                     {"impl": PASS_MODULE + "\nT = make('t')\n"})
    _shadowing_plugin(site, ("FoldConstant",))
    add_distribution(site, "twin-dist", "1.0", "twin_pkg",
                     pass_manifest("FoldConstant", "twin_pkg.impl:F"),
                     {"impl": PASS_MODULE + "\nF = make('twin')\n"})
    messages = [str(e) for e in plugin_errors()]
    for ask in (lambda: get_registry().pass_for_role("type-inference"),
                lambda: get_pass("FoldConstant")):
        try:
            ask()
        except Exception as exc:  # the errors these raise are what is checked
            messages.append(str(exc))
    # relaypass's own manifest, were it broken, is to be reinstalled.
    from relaypass.plugins.manifest import parse_manifest
    from relaypass.transform.specs import Origin

    with pytest.raises(ManifestError) as err:
        parse_manifest("[[pass]]\nname = 1\n", Origin("relaypass", "0.1.0", "m.toml", "x"))
    messages.append(str(err.value))
    assert "pip install --force-reinstall relaypass" in messages[-1]
    assert any("type-inference" in m for m in messages)
    for message in messages:
        assert not UNINSTALL_RELAYPASS.search(message), message


def test_two_plugins_sharing_a_name_are_reachable_by_qualified_names(site):
    for dist, pkg in (("one-dist", "one_pkg"), ("two-dist", "two_pkg")):
        add_distribution(site, dist, "1.0", pkg, pass_manifest("Twin", f"{pkg}.impl:T"),
                         {"impl": PASS_MODULE + f"\nT = make('{pkg}')\n"})
    with pytest.raises(DuplicatePassError, match="one_pkg:Twin"):
        get_pass("Twin")
    assert get_pass("one_pkg:Twin").origin == "one-dist 1.0"
    assert get_pass("two-dist:Twin").origin == "two-dist 1.0"
    with pytest.raises(PassNotFoundError):
        get_pass("three_pkg:Twin")


def test_plugin_warnings_name_the_plugin(site):
    add_distribution(site, "noisy-dist", "0.9", "noisy_pkg",
                     pass_manifest("Noisy", "noisy_pkg.impl:make"),
                     {"impl": "import warnings\nwarnings.warn('at import')\n\n"
                              "def make():\n    warnings.warn('while building')\n"
                              "    return lambda mod, ctx: mod\n"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        get_pass("Noisy")
    texts = [str(w.message) for w in caught]
    assert all(w.category is PluginWarning for w in caught), texts
    assert len(texts) == 2 and all("noisy-dist 0.9" in t for t in texts), texts
    assert "UserWarning: at import" in texts[0] and "while building" in texts[1]


def test_the_cli_shows_plugin_warnings_as_one_line_naming_the_plugin(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "noisy-dist", "0.9", "noisy_pkg",
                     pass_manifest("Noisy", "noisy_pkg.impl:make"),
                     {"impl": "import warnings\nwarnings.warn('at import')\n\n"
                              "def make():\n    return lambda mod, ctx: mod\n"})
    (tmp_path / "model.relay").write_text(SMALL_MODEL)
    (tmp_path / "p.toml").write_text('passes = ["Noisy"]\n')
    r = relaypass_cli("run", "p.toml", "model.relay", "-o", "out.relay", cwd=tmp_path,
                      paths=(site,))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        "relaypass: warning: pass 'Noisy' from noisy-dist 0.9 (importing noisy_pkg.impl:make): "
        "UserWarning: at import"]


# --- 9. reproducers are valid TOML ---------------------------------------------------------------
def test_a_reproducer_with_control_characters_parses_and_reproduces(tmp_path):
    site = tmp_path / "site"
    add_distribution(site, "crash-dist", "1.0", "crash_pkg",
                     pass_manifest("Crash", "crash_pkg.impl:make", extra=(
                         '[[pass.option]]\n    name = "note"\n    type = "str"\n')),
                     {"impl": "def make(note):\n    def run(mod, ctx):\n"
                              "        raise RuntimeError('crash ' + repr(note))\n"
                              "    return run\n"})
    (tmp_path / "model.relay").write_text(SMALL_MODEL)
    (tmp_path / "p.toml").write_text(
        'name = "odd\\u007fname\\u0001"\n'
        'passes = [{ name = "Crash", options = { note = "a\\u007fb\\nc\\"d" } }]\n')
    r = relaypass_cli("run", "p.toml", "model.relay", cwd=tmp_path, paths=(site,))
    assert r.returncode == 3, r.stderr
    folder, = (tmp_path / "relaypass-repro").iterdir()
    text = (folder / "pipeline.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["name"] == "odd\x7fname\x01"
    assert data["passes"] == [{"name": "Crash", "options": {"note": 'a\x7fb\nc"d'}}]
    again = relaypass_cli("run", "pipeline.toml", "input.relay", cwd=folder, paths=(site,))
    assert again.returncode == 3 and "crash 'a\\x7fb\\nc\"d'" in again.stderr


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@given(name=_TEXT.filter(bool), note=_TEXT, value=_TEXT, error=_TEXT)
def test_every_reproducer_pipeline_parses(name, note, value, error):
    import tomli_w

    register_pass(lambda note: (lambda mod, ctx: mod), name="Echo", opt_level=0,
                  options=[("note", "str", "")], config=[("test.Echo.value", "str", "", "")],
                  override=True)
    try:
        text = tomli_w.dumps({"name": name, "passes": [
            {"name": "Echo", "options": {"note": note}}, "Echo"],
            "config": {"test.Echo.value": value}})
        spec = parse_pipeline(text, source=f"dir/{name}.toml")
        schedule = resolve_schedule(spec)
        mod = IRModule.from_expr(relay.var("x", shape=(1,)))
        out = reproducer_pipeline(spec, schedule, StepRun(runnable(schedule)[0], mod),
                                  error_line=error, typer="Echo")
        data = tomllib.loads(out)
        assert data["name"] == name
        assert data["passes"] == [{"name": "Echo", "options": {"note": note}}, "Echo"]
        assert data["config"] == {"test.Echo.value": value}
    finally:
        unregister_pass("Echo")
