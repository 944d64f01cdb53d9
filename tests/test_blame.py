"""Whose fault it is: a crashing pass or instrument named with its distribution, the model's own
errors without a reproducer, a pass that edits its input caught by bisect, plugins that cannot
be imported caught by ``check --build``, and names nobody provides.

The plugins are tiny ``*.dist-info`` distributions (tests/fake_plugins.py) on a scratch folder:
``blame-plugin`` (whose metadata names a bug tracker) with a crashing pass, a pass that edits
its input in place, a pass whose module is missing and an instrument that raises;
``quiet-plugin`` (metadata without URLs) with a crashing pass; ``bad-manifest``, whose
manifest is not UTF-8.  The commands run in subprocesses, as users run them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fake_plugins import SMALL_MODEL, add_distribution, one_error_line, relaypass_cli

from relaypass.tools.blame import Blame, bug_report

MANIFEST = """
[[pass]]
name = "Crash"
kind = "module"
opt_level = 0
factory = "blame_plugin.passes:crash"

[[pass]]
name = "EditInPlace"
kind = "function"
opt_level = 0
factory = "blame_plugin.passes:edit_in_place"

[[pass]]
name = "Unimportable"
kind = "module"
opt_level = 0
factory = "blame_plugin.missing:make"

[[instrument]]
name = "Noisy"
factory = "blame_plugin.noisy:Noisy"
"""

PASSES = '''
from relaypass.ir import Call, Op
from relaypass.ir.traversal import post_order


def _give_up(mod):
    raise RuntimeError("blame_plugin cannot cope")


def crash(**options):
    def run(mod, ctx):
        _give_up(mod)
    return run


def edit_in_place(**options):
    def run(func, mod, ctx):
        for node in post_order(func.body):
            if isinstance(node, Call) and node.op is Op.get("add"):
                object.__setattr__(node, "op", Op.get("subtract"))  # what no pass may do
        return func
    return run
'''

NOISY = '''
from relaypass.transform.instrument import PassInstrument


class Noisy(PassInstrument):
    def run_after_pass(self, mod, info):
        raise ValueError(f"Noisy cannot watch {info.name}")
'''

TRACKER = "https://example.org/blame-plugin/issues"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("blame")
    site = root / "site"
    add_distribution(site, "blame-plugin", "2.5", "blame_plugin", MANIFEST, {
        "passes": PASSES, "noisy": NOISY,
        "missing": "raise ImportError('blame_plugin.missing is gone')\n"})
    (site / "blame_plugin-2.5.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: blame-plugin\nVersion: 2.5\n"
        "Project-URL: Homepage, https://example.org/blame-plugin\n"
        f"Project-URL: Bug Tracker, {TRACKER}\n")
    add_distribution(site, "quiet-plugin", "0.1", "quiet_plugin", """
        [[pass]]
        name = "QuietCrash"
        kind = "module"
        opt_level = 0
        factory = "quiet_plugin.passes:crash"
        """, {"passes": "def crash(**options):\n"
                        "    def run(mod, ctx):\n"
                        "        raise KeyError('quiet')\n"
                        "    return run\n"})
    broken = root / "broken_site"
    add_distribution(broken, "bad-manifest", "1.3", "bad_manifest", b"\xff\xfe\x00")
    files = {"site": site, "broken": broken, "root": root}
    for name, text in {
        "crash.toml": 'passes = ["InferType", "Crash"]\n',
        "quiet.toml": 'passes = ["QuietCrash"]\n',
        "noisy.toml": 'passes = ["InferType"]\n[[instruments]]\nname = "Noisy"\n',
        "in_place.toml": 'passes = ["InferType", "FoldConstant", "EditInPlace", "ToANormalForm"]\n',
        "unimportable.toml": 'passes = ["InferType", "Unimportable"]\n',
        "fine.toml": 'passes = ["FoldConstant", "FuseOps"]\n',
        "ghost.toml": 'passes = ["FoldConstant"]\nrequired_pass = ["Ghost"]\n',
        "small.relay": SMALL_MODEL,
    }.items():
        (root / name).write_text(text)
        files[name] = root / name
    return files


def run_all(calls: dict[str, tuple], cwd: Path, paths: tuple[Path, ...]) -> dict:
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(relaypass_cli, *args, cwd=cwd, paths=paths)
                   for k, args in calls.items()}
        return {k: f.result() for k, f in futures.items()}


# --- a crash is blamed on whoever crashed ----------------------------------------------------------
def test_crashes_name_the_pass_or_instrument_its_distribution_and_bug_tracker(site, tmp_path):
    results = run_all({
        "pass": ("run", site["crash.toml"], site["small.relay"], "--no-repro"),
        "no tracker": ("run", site["quiet.toml"], site["small.relay"], "--no-repro"),
        "instrument": ("run", site["noisy.toml"], site["small.relay"]),
    }, tmp_path, (site["site"],))
    for r in results.values():
        assert r.returncode == 3, r.stderr
    where = " (the traceback above shows where)"
    assert results["pass"].stderr.splitlines()[-1] == (
        "relaypass: internal error: RuntimeError: blame_plugin cannot cope [raised in pass "
        "'Crash' (from blame-plugin 2.5)]; this is a bug in pass 'Crash' of blame-plugin 2.5, "
        f"not in relaypass{where}: please report it to the maintainers of blame-plugin at "
        f"{TRACKER}")
    assert results["no tracker"].stderr.splitlines()[-1].endswith(
        "this is a bug in pass 'QuietCrash' of quiet-plugin 0.1, not in relaypass"
        f"{where}: please report it to the maintainers of quiet-plugin (the metadata of "
        "quiet-plugin names no bug tracker)")
    # The instrument, not the pass it was watching, is named.
    assert results["instrument"].stderr.splitlines()[-1] == (
        "relaypass: internal error: ValueError: Noisy cannot watch InferType [raised in "
        "instrument 'Noisy' (from blame-plugin 2.5)]; this is a bug in instrument 'Noisy' of "
        f"blame-plugin 2.5, not in relaypass{where}: please report it to the maintainers of "
        f"blame-plugin at {TRACKER}")
    # Nothing is written where the module goes.
    assert all(r.stdout == "" for r in results.values())


def test_the_traceback_leaves_out_the_pass_managers_frames(site, tmp_path):
    r = relaypass_cli("run", site["crash.toml"], site["small.relay"], "--no-repro", cwd=tmp_path,
                      paths=(site["site"],))
    trace = r.stderr.split("relaypass: internal error:")[0]
    files = re.findall(r'File "([^"]+)"', trace)
    # The plugin's two frames, and none of relaypass's machinery (pass manager, registry, CLI).
    assert [Path(f).name for f in files] == ["passes.py", "passes.py"], trace
    assert all("blame_plugin" in f for f in files), trace
    assert re.search(r"^\(\d+ frames of relaypass's pass manager and command line left out; "
                     r"--traceback shows them\)$", trace, re.M), trace
    full = relaypass_cli("run", site["crash.toml"], site["small.relay"], "--no-repro",
                         "--traceback", cwd=tmp_path, paths=(site["site"],))
    assert "relaypass/transform/passes.py" in full.stderr.replace("\\", "/")


def test_a_bug_of_relaypass_itself_keeps_the_frames_where_it_was_raised():
    """The innermost frames stay even when they are the machinery's: they show the bug."""
    from relaypass.tools.blame import format_traceback
    from relaypass.transform.registry import get_registry

    try:
        get_registry().build_pass(None, {})  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - whatever it raises, its frames are the point
        text = format_traceback(exc)
    assert "relaypass/transform/registry.py" in text.replace("\\", "/"), text


def test_bug_report_wording_for_each_kind_of_culprit():
    where = " (the traceback above shows where)"
    assert bug_report(None) == f"{where}, please report it"
    standard = Blame("pass", "FoldConstant", "relaypass", "0.1.0", "")
    assert bug_report(standard) == f"{where}, please report it"
    tracked = Blame("pass", "FoldConstant", "relaypass", "0.1.0", "https://x.org/issues")
    assert bug_report(tracked) == f"{where}, please report it at https://x.org/issues"
    local = Blame("pass", "Mine", module="my_script")
    assert bug_report(local) == f" in pass 'Mine', code defined in my_script{where}"


def test_bug_tracker_reads_the_labelled_url_then_the_home_page(tmp_path, monkeypatch):
    from relaypass.plugins.discovery import bug_tracker

    metadata = {
        "issues-dist": "Project-URL: Source, https://s.org\nProject-URL: Issues, https://i.org\n",
        "home-dist": "Home-page: https://home.org\nProject-URL: Source, https://s.org\n",
        "bare-dist": "Project-URL: Source, https://s.org\n",
    }
    for dist, extra in metadata.items():
        info = tmp_path / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n"
                                       + extra)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert bug_tracker("issues-dist") == "https://i.org"
    assert bug_tracker("home-dist") == "https://home.org"
    assert bug_tracker("bare-dist") == ""
    assert bug_tracker("no-such-distribution-anywhere") == ""


# --- the input's own errors leave no reproducer ----------------------------------------------------
def test_a_model_that_does_not_type_leaves_no_reproducer_but_a_crash_does(site, tmp_path):
    ill = tmp_path / "ill.relay"
    ill.write_text('#[version = "0.0.5"]\n'
                   "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) {\n"
                   "  add(%x, %y)\n"
                   "}\n")
    typed = relaypass_cli("run", site["crash.toml"], ill, cwd=tmp_path, paths=(site["site"],))
    line = one_error_line(typed)
    assert re.match(r"relaypass: error: .*ill\.relay:3:3: .*not broadcast-compatible.*"
                    r"\[raised in pass 'InferType' \(from relaypass [\d.]+\)\]$", line), line
    assert not (tmp_path / "relaypass-repro").exists()
    crash = relaypass_cli("run", site["crash.toml"], site["small.relay"], cwd=tmp_path,
                          paths=(site["site"],))
    assert crash.returncode == 3
    (folder,) = (tmp_path / "relaypass-repro").iterdir()
    assert folder.name.endswith("-Crash")


# --- bisect: a pass that edits its input ------------------------------------------------------------
def test_bisect_names_the_pass_that_changed_its_input_in_place(site, tmp_path):
    r = relaypass_cli("bisect", site["in_place.toml"], site["small.relay"], cwd=tmp_path,
                      paths=(site["site"],))
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1] == "culprit: pass 3 of 4, EditInPlace (from blame-plugin 2.5)"
    assert lines[2].startswith("  pass EditInPlace changed its input in place: ")
    # The passes before it, whose modules it edited too, are not blamed.
    assert "FoldConstant" not in "\n".join(lines[1:])


def test_bisect_without_edits_in_place_blames_the_pass_that_changes_the_output(site, tmp_path):
    # The same pipeline without the editing pass: nothing to find.
    (tmp_path / "clean.toml").write_text('passes = ["InferType", "FoldConstant", "ToANormalForm"]\n')
    r = relaypass_cli("bisect", tmp_path / "clean.toml", site["small.relay"], cwd=tmp_path,
                      paths=(site["site"],))
    assert r.returncode == 0, r.stderr
    assert "changed its input in place" not in r.stdout


# --- check --build -----------------------------------------------------------------------------------
def test_check_build_imports_and_builds_what_the_pipeline_names(site, tmp_path):
    results = run_all({
        "check": ("check", site["unimportable.toml"]),
        "build": ("check", site["unimportable.toml"], "--build"),
        "fine": ("check", site["fine.toml"], "--build"),
        "instrument": ("check", site["noisy.toml"], "--build"),
    }, tmp_path, (site["site"],))
    assert results["check"].returncode == 0 and results["check"].stdout == "ok: 2 passes, 0 instruments\n"
    line = one_error_line(results["build"])
    assert line.startswith("relaypass: error: cannot import blame_plugin.missing:make for pass "
                           "'Unimportable' of blame-plugin 2.5: ImportError: blame_plugin.missing "
                           "is gone; "), line
    assert line.endswith("[while building 'Unimportable' for "
                         f"{site['unimportable.toml']}: passes[1]]"), line
    # FoldConstant and FuseOps require InferType: it is built too.
    assert results["fine"].stdout == "ok: 2 passes, 0 instruments; built, with the 1 pass they require\n"
    assert results["instrument"].stdout == "ok: 1 pass, 1 instrument; built\n"


# --- names nobody provides, with a manifest that cannot be read ----------------------------------------
def test_every_no_pass_named_error_names_the_unreadable_distribution(site, tmp_path):
    paths = (site["broken"],)
    results = run_all({
        "passes": ("check", site["unimportable.toml"]),
        "required": ("check", site["ghost.toml"]),
        "disable": ("explain", site["fine.toml"], "--disable", "Ghost"),
    }, tmp_path, paths)
    unreadable = "these plugin distributions could not be read: bad-manifest 1.3"
    for key, r in results.items():
        line = one_error_line(r)
        assert "no pass named" in line and unreadable in line, (key, line)
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "from relaypass import relay\n"
        "from relaypass.transform import PassContext, get_pass, register_pass, module_pass\n"
        "for attempt in (lambda: get_pass('Ghost'), lambda: relay.transform.Ghost):\n"
        "    try:\n"
        "        attempt()\n"
        "    except (LookupError, AttributeError) as exc:\n"
        "        print(exc)\n"
        "@module_pass(opt_level=0, name='Haunted', required=['Ghost'])\n"
        "def haunted(mod, ctx):\n"
        "    return mod\n"
        "register_pass(haunted)\n"
        "try:\n"
        "    get_pass('Haunted')\n"
        "except LookupError as exc:\n"
        "    print(exc)\n"
        "with PassContext(disabled_pass=['Ghost']):\n"
        "    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site["broken"]), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    printed = out.stdout.splitlines()
    assert len(printed) == 3, out.stdout
    for line in printed:
        assert "Ghost" in line and unreadable in line, line
    assert "UnknownPassNameWarning" in out.stderr and unreadable in out.stderr, out.stderr


# --- PassContext: names nobody provides ---------------------------------------------------------------
def test_pass_context_warns_about_unknown_names_with_did_you_mean():
    from relaypass.transform import PassContext
    from relaypass.transform.context import UnknownPassNameWarning

    with pytest.warns(UnknownPassNameWarning) as caught:
        with PassContext(disabled_pass=["FoldConstnt"], required_pass=["ZzNoSuchPassAtAll"]):
            pass
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "PassContext(disabled_pass=...) names 'FoldConstnt', which is neither a registered pass "
        "nor a pass built in this process, so it changes nothing; did you mean 'FoldConstant'?",
        "PassContext(required_pass=...) names 'ZzNoSuchPassAtAll', which is neither a "
        "registered pass nor a pass built in this process, so it changes nothing",
    ]
    assert all(w.filename == __file__ for w in caught)  # it points at the `with`


def test_pass_context_is_quiet_about_registered_and_built_passes():
    from relaypass.transform import PassContext, Sequential, module_pass

    @module_pass(opt_level=0, name="BuiltHereOnly")
    def built(mod, ctx):
        return mod

    seq = Sequential([built], name="MySequenceName")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with PassContext(required_pass=["FoldConstant", "BuiltHereOnly", "relaypass:FuseOps"],
                         disabled_pass=[seq.info.name]):
            pass
        # A context that is never entered checks nothing (nothing to warn about yet).
        PassContext(disabled_pass=["NeverEnteredTypo"])
        # A name far from every registered one waits for the exit: the body may build its pass.
        with PassContext(required_pass=["made_inside_the_body"]):
            module_pass(lambda mod, ctx: mod, opt_level=0, name="made_inside_the_body")


def test_an_unknown_name_left_unbuilt_is_warned_about_when_the_context_exits():
    from relaypass.transform import PassContext
    from relaypass.transform.context import UnknownPassNameWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PassContext(disabled_pass=["never_built_anywhere"]):
            assert caught == []  # not yet: the body might build it
    (warning,) = caught
    assert warning.category is UnknownPassNameWarning
    assert "'never_built_anywhere'" in str(warning.message)


def test_importing_relaypass_reads_no_manifest():
    """The check is lazy: importing relaypass (and making a context) reads no plugin."""
    code = ("import sys\n"
            "import relaypass\n"
            "from relaypass.transform import PassContext\n"
            "PassContext(disabled_pass=['X'])\n"
            "from relaypass.transform.registry import get_registry\n"
            "print(get_registry()._state is None)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr
