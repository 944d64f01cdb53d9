"""``relaypass bisect`` and crash reproducers, run as a user runs them: in subprocesses.

The broken passes come from tests/data/broken_passes, a plugin distribution
found through its ``*.dist-info`` folder once that folder is on PYTHONPATH:
ChangeConstant (shifts every float constant), DropBinding (drops a let,
leaving its variable free), ChangeOp (rewrites nn.relu as negative) and Crash
(raises, with a message that depends on the module it was given).
Independent invocations run together in a thread pool.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import pytest

from relaypass import assert_structural_equal, load, relay
from relaypass.testing.inputs import random_inputs
from relaypass.tools.bisect import bisect_pipeline
from relaypass.transform import function_pass, parse_pipeline, register_pass, unregister_pass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONVNET = ROOT / "examples" / "models" / "convnet.relay"
PLUGIN = ROOT / "tests" / "data" / "broken_passes"
ENV = {"PYTHONPATH": os.pathsep.join([str(PLUGIN), os.environ.get("PYTHONPATH", "")])}

# Eleven passes each once resolved (FuseOps, EliminateCommonSubexpr and DeadCodeElimination
# add an InferType).
PIPELINES = {
    # 1 InferType, 2 SimplifyInference, 3 FoldConstant, 4 InferType, 5 DeadCodeElimination,
    # 6 ChangeConstant, 7 ToANormalForm, 8 ToGraphNormalForm, 9 InferType, 10 FuseOps,
    # 11 ToANormalForm
    "constant": ["InferType", "SimplifyInference", "FoldConstant", "DeadCodeElimination",
                 "ChangeConstant", "ToANormalForm", "ToGraphNormalForm", "FuseOps",
                 "ToANormalForm"],
    # 1 InferType, 2 SimplifyInference, 3 FoldConstant, 4 InferType, 5 FuseOps, 6 ToANormalForm,
    # 7 InferType, 8 DeadCodeElimination, 9 DropBinding, 10 ToGraphNormalForm, 11 FoldConstant
    "binding": ["InferType", "SimplifyInference", "FoldConstant", "FuseOps", "ToANormalForm",
                "DeadCodeElimination", "DropBinding", "ToGraphNormalForm", "FoldConstant"],
    # 1 InferType, 2 SimplifyInference, 3 ChangeOp, 4 FoldConstant, 5 InferType,
    # 6 EliminateCommonSubexpr, 7 InferType, 8 DeadCodeElimination, 9 InferType, 10 FuseOps,
    # 11 ToANormalForm
    "op": ["InferType", "SimplifyInference", "ChangeOp", "FoldConstant", "EliminateCommonSubexpr",
           "DeadCodeElimination", "FuseOps", "ToANormalForm"],
}

CRASH_PIPELINE = """\
name = "crashing"
opt_level = 3
disabled_pass = ["EliminateCommonSubexpr"]
passes = [
    "InferType", "SimplifyInference", "FoldConstant", "FuseOps", "Crash", "ToANormalForm",
    { name = "late", passes = [
        { name = "DeadCodeElimination", options = { inline_once = true } },
        "EliminateCommonSubexpr",
        "FuseOps",
    ] },
]

[config]
"relay.FuseOps.max_depth" = 10

[[instruments]]
name = "PassTimingInstrument"
"""

# What ran before Crash: the module it was given must be this prefix's result.
CRASH_PREFIX = """\
opt_level = 3
passes = ["InferType", "SimplifyInference", "FoldConstant", "FuseOps"]
[config]
"relay.FuseOps.max_depth" = 10
"""


def relaypass(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "relaypass.tools.cli", *map(str, args)],
                          capture_output=True, text=True, env={**os.environ, **ENV}, cwd=cwd)


def run_all(calls: dict[str, tuple]) -> dict[str, subprocess.CompletedProcess]:
    """Several invocations at once: ``{key: (args, cwd)}``."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(relaypass, *args, cwd=cwd) for k, (args, cwd) in calls.items()}
        return {k: f.result() for k, f in futures.items()}


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pipelines")
    out = {}
    for name, passes in PIPELINES.items():
        path = root / f"{name}.toml"
        path.write_text(f'name = "ten"\nopt_level = 3\npasses = {json.dumps(passes)}\n')
        out[name] = path
    return out


# --- bisect -------------------------------------------------------------------------------------
def test_bisect_finds_each_broken_pass_at_its_position(pipelines):
    results = run_all({
        "constant": (("bisect", pipelines["constant"], CONVNET), None),
        "binding": (("bisect", pipelines["binding"], CONVNET), None),
        "op": (("bisect", pipelines["op"], CONVNET), None),
        "op linear": (("bisect", pipelines["op"], CONVNET, "--linear"), None),
        "healthy": (("bisect", pipelines["op"], CONVNET, "--disable", "ChangeOp"), None),
    })
    for key in ("constant", "binding", "op", "op linear"):
        assert results[key].returncode == 1, (key, results[key].stderr)

    out = results["constant"].stdout.splitlines()
    assert out[1] == "culprit: pass 6 of 11, ChangeConstant (from broken-passes 0.1.0)"
    assert re.match(r"  after it, the output differs from the input module beyond rtol 0\.001, "
                    r"atol 1e-05: largest difference [\d.]+", out[2])
    assert out[3] == ("  after pass 5 (DeadCodeElimination) the module is well formed and well "
                      "typed, and the outputs match")

    out = results["binding"].stdout.splitlines()
    assert out[1] == "culprit: pass 9 of 11, DropBinding (from broken-passes 0.1.0)"
    assert out[2].startswith("  after pass DropBinding: @main is ill formed: variable %x is free")

    for key in ("op", "op linear"):
        text = results[key].stdout
        assert "culprit: pass 3 of 11, ChangeOp (from broken-passes 0.1.0)\n" in text
        assert "--- before ChangeOp (after pass 2, SimplifyInference)\n" in text
        assert "+++ after ChangeOp (pass 3)\n" in text
        assert re.search(r"^-  %\d+ = nn\.relu\(", text, re.M)
        assert re.search(r"^\+  %\d+ = negative\(", text, re.M)
        assert "metadata section left out (--show-meta includes it)" in text
        assert "#[metadata]" not in text
    # Bisection evaluates fewer snapshots than the linear scan needs to reach pass 3 and beyond.
    assert "then by bisection" in results["op"].stderr
    assert "then after each pass in order, --linear" in results["op linear"].stderr

    healthy = results["healthy"]
    assert healthy.returncode == 0, healthy.stderr
    assert "no pass changes the output: after each of the 10 passes" in healthy.stdout


def test_bisect_prints_full_texts_and_metadata_on_request(pipelines):
    results = run_all({
        "full": (("bisect", pipelines["op"], CONVNET, "--full"), None),
        "meta": (("bisect", pipelines["constant"], CONVNET, "--show-meta"), None),
    })
    full = results["full"].stdout
    assert results["full"].returncode == 1
    assert "IR before ChangeOp (after pass 2, SimplifyInference)" in full
    assert "IR after ChangeOp (pass 3):" in full
    assert full.count('#[version = "0.0.5"]') == 2 and "@@" not in full
    meta = results["meta"].stdout
    assert results["meta"].returncode == 1
    assert "#[metadata]" in meta and "meta data omitted" not in meta


def test_bisect_input_errors_are_one_line_exit_2(pipelines, tmp_path):
    results = run_all({
        "no model": (("bisect", pipelines["op"]), None),
        "missing model": (("bisect", pipelines["op"], tmp_path / "nope.relay"), None),
        "unknown pass": (("bisect", pipelines["op"], CONVNET, "--disable", "ChangeOps"), None),
    })
    for key, pattern in (("no model", r"bisect needs a MODEL file or --model-zoo NAME"),
                         ("missing model", r"cannot read .*nope\.relay"),
                         ("unknown pass", r"--disable ChangeOps: .*did you mean 'ChangeOp'")):
        r = results[key]
        assert r.returncode == 2, (key, r.stderr)
        (line,) = r.stderr.splitlines()
        assert line.startswith("relaypass: error: ") and re.search(pattern, line), (key, line)


def test_bisection_can_miss_a_change_a_later_pass_undoes_and_linear_finds_it():
    """A pass that negates the output, run twice: the final output matches again."""

    @function_pass(opt_level=0, name="NegateResult")
    def negate(func, mod, ctx):
        return relay.Function(func.params, relay.negative(func.body))

    register_pass(negate)
    try:
        spec = parse_pipeline('passes = ["InferType", "NegateResult", "FoldConstant", '
                              '"NegateResult", "FoldConstant"]')
        mod = load(CONVNET)
        inputs = random_inputs(mod, seed=0)
        binary = bisect_pipeline(spec, mod, inputs, rtol=1e-3, atol=1e-5)
        linear = bisect_pipeline(spec, mod, inputs, rtol=1e-3, atol=1e-5, linear=True)
    finally:
        unregister_pass("NegateResult")
    assert binary.culprit is None and binary.evaluations == 1
    assert linear.culprit is not None and linear.culprit.step.index == 2
    assert linear.breakage is not None and linear.breakage.kind == "output"


# --- reproducers ----------------------------------------------------------------------------------
ERROR = re.compile(r"^(relaypass: internal error: RuntimeError: Crash gives up on @main with \d+ "
                   r"calls \[raised in pass 'Crash' \(from broken-passes 0\.1\.0\)\])"
                   r"; reproducer written to (\./relaypass-repro/\d{8}-\d{6}-Crash)"
                   r"(; this is a bug in pass 'Crash' of broken-passes 0\.1\.0, not in relaypass "
                   r"\(the traceback above shows where\): please report it to the maintainers of "
                   r"broken-passes \(the metadata of broken-passes names no bug tracker\))$")


def test_a_plugin_pass_that_raises_leaves_a_reproducer_that_reproduces(tmp_path):
    (tmp_path / "crash.toml").write_text(CRASH_PIPELINE)
    (tmp_path / "quiet").mkdir()
    argv = ["run", "crash.toml", str(CONVNET), "-o", "out.relay"]
    quiet_argv = ["run", tmp_path / "crash.toml", CONVNET, "-o", "out.relay", "--no-repro"]
    results = run_all({"run": (argv, tmp_path), "no repro": (quiet_argv, tmp_path / "quiet")})
    r = results["run"]
    assert r.returncode == 3 and "Traceback (most recent call last)" in r.stderr
    match = ERROR.match(r.stderr.splitlines()[-1])
    assert match, r.stderr
    error, folder = match.group(1), tmp_path / match.group(2)
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.txt", "input.relay", "options.json", "pipeline.toml", "versions.json"]

    quiet = results["no repro"]
    assert quiet.returncode == 3 and quiet.stderr.splitlines()[-1] == error + match.group(3)
    assert [p.name for p in (tmp_path / "quiet").iterdir()] == []

    # The module given to Crash: what the passes before it made of the model.
    before = parse_pipeline(CRASH_PREFIX).build()(load(CONVNET))
    assert_structural_equal(load(folder / "input.relay"), before)

    pipeline = tomllib.loads((folder / "pipeline.toml").read_text())
    assert pipeline["name"] == "crashing" and pipeline["opt_level"] == 3
    assert pipeline["disabled_pass"] == ["EliminateCommonSubexpr"]
    assert pipeline["config"] == {"relay.FuseOps.max_depth": 10}
    assert "instruments" not in pipeline
    # InferType first: input.relay cannot carry the checked types Crash's input had.
    assert pipeline["passes"] == [
        "InferType", "Crash", "ToANormalForm", "InferType",
        {"name": "DeadCodeElimination", "options": {"inline_once": True}}, "InferType", "FuseOps"]

    options = json.loads((folder / "options.json").read_text())
    assert options["argv"] == argv and options["cwd"] == str(tmp_path)
    assert options["options"]["pipeline"] == "crash.toml"

    versions = json.loads((folder / "versions.json").read_text())
    assert versions["relaypass"] == metadata.version("relaypass")
    assert versions["numpy"] == metadata.version("numpy")
    assert versions["python"].endswith(".".join(map(str, sys.version_info[:3])))
    plugins = {p["distribution"]: p for p in versions["plugins"]}
    assert plugins["broken-passes"]["version"] == "0.1.0"
    assert plugins["broken-passes"]["passes"] == ["Crash"]
    assert plugins["relaypass"]["version"] == metadata.version("relaypass")
    assert "FuseOps" in plugins["relaypass"]["passes"]
    assert plugins["relaypass"]["instruments"] == ["PassTimingInstrument"]
    assert "relaypass run pipeline.toml input.relay" in (folder / "README.txt").read_text()

    again = relaypass("run", "pipeline.toml", "input.relay", cwd=folder)
    assert again.returncode == 3
    repeat = ERROR.match(again.stderr.splitlines()[-1])
    assert repeat, again.stderr
    assert repeat.group(1) == error


def test_a_relaypass_error_in_a_pass_leaves_a_reproducer_too(tmp_path):
    """A pass's error on a module an earlier pass made is worth a reproducer (exit 2 or not)."""
    (tmp_path / "p.toml").write_text('passes = ["ToANormalForm", "DropBinding"]\n')
    r = relaypass("run", "p.toml", ROOT / "examples" / "models" / "mlp.relay", "-o", "out.relay",
                  cwd=tmp_path)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    pattern = (r"^relaypass: error: .*mlp\.relay:\d+:\d+: .* \[raised in pass 'InferType' "
               r"\(from relaypass [\d.]+\)\]; reproducer written to "
               r"\./relaypass-repro/\d{8}-\d{6}-DropBinding$")
    assert re.match(pattern, line), line
    (folder,) = (tmp_path / "relaypass-repro").iterdir()
    again = relaypass("run", "pipeline.toml", "input.relay", "--no-repro", cwd=folder)
    assert again.returncode == 2
    # The same error (the text format renames variables), with positions in the reproducer's
    # own input file.
    (again_line,) = again.stderr.splitlines()
    problem = line.split("; reproducer written to")[0].split("): ", 1)[1]
    assert again_line.endswith(problem) and again_line.startswith(
        "relaypass: error: input.relay:"), again_line


def test_no_reproducer_when_the_model_itself_is_ill_typed(tmp_path):
    """A type error in the model as read is the model's: the error points into it, no folder."""
    model = tmp_path / "ill_typed.relay"
    model.write_text('#[version = "0.0.5"]\n'
                     "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) {\n"
                     "  add(%x, %y)\n"
                     "}\n")
    (tmp_path / "p.toml").write_text('passes = ["FoldConstant"]\n')
    r = relaypass("run", "p.toml", model.name, cwd=tmp_path)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    assert re.match(r"^relaypass: error: ill_typed\.relay:3:3: in @main at body: add: shapes "
                    r"\(2, 3\) and \(4,\) are not broadcast-compatible .* \[raised in pass "
                    r"'InferType' \(from relaypass [\d.]+\)\]$", line), line
    assert not (tmp_path / "relaypass-repro").exists()


# --- the checker and the typer: names given, with documented defaults ---------------------------
def test_bisect_uses_the_checker_and_typer_it_is_given():
    """``checker``/``typer`` (``--checker``/``--typer``): any registered instrument and pass."""
    from relaypass.errors import RelayPassError
    from relaypass.transform import (
        get_pass,
        module_pass,
        register_instrument,
        unregister_instrument,
    )
    from relaypass.transform.instrument import PassInstrument

    @function_pass(opt_level=0, name="NegateResult")
    def negate(func, mod, ctx):
        return relay.Function(func.params, relay.negative(func.body))

    def negated(mod):
        body = mod["main"].body
        return getattr(getattr(body, "op", None), "name", None) == "negative"

    infer = get_pass("InferType")

    @module_pass(opt_level=0, name="NoNegativeTyper")
    def typer(mod, ctx):
        if negated(mod):
            raise RelayPassError("@main returns a negation")
        return infer(mod)

    class NoNegativeChecker(PassInstrument):  # no check(): bisect calls run_after_pass
        def run_after_pass(self, mod, info):
            if negated(mod):
                raise RelayPassError(f"after pass {info.name}: @main returns a negation")

    register_pass(negate)
    register_pass(typer)
    register_instrument(NoNegativeChecker)
    try:
        spec = parse_pipeline('passes = ["InferType", "NegateResult", "FoldConstant"]')
        mod = load(CONVNET)
        inputs = random_inputs(mod, seed=0)
        default = bisect_pipeline(spec, mod, inputs, rtol=1e-3, atol=1e-5)
        typed = bisect_pipeline(spec, mod, inputs, rtol=1e-3, atol=1e-5, typer="NoNegativeTyper")
        checked = bisect_pipeline(spec, mod, inputs, rtol=1e-3, atol=1e-5,
                                  checker="NoNegativeChecker", typer="NoNegativeTyper")
    finally:
        unregister_pass("NegateResult")
        unregister_pass("NoNegativeTyper")
        unregister_instrument("NoNegativeChecker")
    # The defaults: WellFormedChecker, and the pass with role "type-inference".
    assert (default.checker, default.typer) == ("WellFormedChecker", "InferType")
    assert default.culprit.step.index == 2 and default.breakage.kind == "output"
    assert typed.culprit.step.index == 2 and typed.breakage.kind == "ill_typed"
    assert typed.breakage.message == ("NoNegativeTyper fails on the module NegateResult returned: "
                                      "RelayPassError: @main returns a negation")
    assert (checked.checker, checked.typer) == ("NoNegativeChecker", "NoNegativeTyper")
    assert checked.breakage.kind == "ill_formed"
    assert checked.breakage.message == "after pass NegateResult: @main returns a negation"


def test_bisect_checker_and_typer_options(pipelines):
    results = run_all({
        "explicit": (("bisect", pipelines["op"], CONVNET, "--checker", "WellFormedChecker",
                      "--typer", "InferType"), None),
        # A checker that checks nothing: DropBinding's free variable is then found only when
        # @main is evaluated (InferType accepts it: %x keeps its annotation).
        "lenient": (("bisect", pipelines["binding"], CONVNET, "--checker", "PassTimingInstrument"),
                    None),
        "no checker": (("bisect", pipelines["op"], CONVNET, "--checker", "WellFormedChecka"), None),
        "no typer": (("bisect", pipelines["op"], CONVNET, "--typer", "InferTyp"), None),
    })
    explicit = results["explicit"]
    assert explicit.returncode == 1, explicit.stderr
    assert "culprit: pass 3 of 11, ChangeOp (from broken-passes 0.1.0)\n" in explicit.stdout
    lenient = results["lenient"]
    assert lenient.returncode == 1, lenient.stderr
    out = lenient.stdout.splitlines()
    assert out[1] == "culprit: pass 9 of 11, DropBinding (from broken-passes 0.1.0)"
    assert out[2].startswith("  evaluating @main after DropBinding raised EvaluationError: "
                             "unbound variable %x"), out[2]
    for key, pattern in (
            ("no checker", r"--checker WellFormedChecka: no instrument named 'WellFormedChecka' is "
                           r"registered; did you mean 'WellFormedChecker'\?.*relaypass instruments "
                           r"shows them"),
            ("no typer", r"--typer InferTyp: no pass named 'InferTyp' is registered; did you mean "
                         r"'InferType'\?")):
        r = results[key]
        assert r.returncode == 2, (key, r.stderr)
        (line,) = r.stderr.splitlines()
        assert line.startswith("relaypass: error: ") and re.search(pattern, line), (key, line)


def test_a_reproducer_restores_types_with_the_typer_given_or_the_roles_pass(tmp_path, monkeypatch,
                                                                            capsys):
    """``run --typer NAME``; by default the pass with role "type-inference" (here: in-process)."""
    from relaypass.tools.cli import main
    from relaypass.transform import get_pass, module_pass

    @function_pass(opt_level=0, name="CrashHere")
    def crash(func, mod, ctx):
        raise RuntimeError("CrashHere gives up")

    infer = get_pass("InferType")

    @module_pass(opt_level=0, name="MyTyper")
    def my_typer(mod, ctx):
        return infer(mod)

    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.toml").write_text('passes = ["InferType", "CrashHere"]\n')

    def first_pass(*options):
        before = set(tmp_path.glob("relaypass-repro/*"))
        assert main(["run", "p.toml", str(CONVNET), "-o", "out.relay", *options]) == 3
        (folder,) = set(tmp_path.glob("relaypass-repro/*")) - before
        readme = (folder / "README.txt").read_text()
        return tomllib.loads((folder / "pipeline.toml").read_text())["passes"][0], readme

    register_pass(crash)
    register_pass(my_typer, role="type-inference", override=True)
    try:
        role_pass, readme = first_pass()
        given, _ = first_pass("--typer", "InferType")
    finally:
        unregister_pass("CrashHere")
        unregister_pass("MyTyper")
    capsys.readouterr()
    assert role_pass == "MyTyper" and "so pipeline.toml runs MyTyper first" in readme
    assert given == "InferType"
