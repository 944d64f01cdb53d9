"""``--json`` on ``relaypass run``, ``check``, ``explain`` and ``bisect``: one versioned document
on stdout (docs/json-output.md), the same exit statuses as without it.

The commands run in subprocesses (stdout and stderr are what is tested); a tiny plugin
distribution provides a pass that changes the output (AddOne) and one that crashes (Crash).
The node and operator counts are also tested in-process, on programs built here.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fake_plugins import add_distribution, relaypass_cli

from relaypass import relay
from relaypass.ir.module import IRModule
from relaypass.testing.compare import compare_outputs
from relaypass.tools.run_report import ModuleCounter, comparison_json, schema_id

ROOT = Path(__file__).resolve().parent.parent
PIPELINES = ROOT / "examples" / "pipelines"
MLP = ROOT / "examples" / "models" / "mlp.relay"
CONVNET = ROOT / "examples" / "models" / "convnet.relay"

MANIFEST = """
[[pass]]
name = "AddOne"
kind = "module"
opt_level = 0
factory = "json_plugin.passes:add_one"

[[pass]]
name = "Crash"
kind = "module"
opt_level = 0
factory = "json_plugin.passes:crash"
"""

PASSES = '''
from relaypass import relay


def add_one(**options):
    def run(mod, ctx):
        main = mod["main"]
        mod["main"] = relay.Function(main.params, relay.add(main.body, relay.const(1.0)))
        return mod
    return run


def crash(**options):
    def run(mod, ctx):
        raise RuntimeError("json_plugin's Crash crashes")
    return run
'''


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("json")
    add_distribution(root / "site", "json-plugin", "3.0", "json_plugin", MANIFEST,
                     {"passes": PASSES})
    files = {"site": root / "site", "root": root}
    for name, text in {
        "add_one.toml": 'passes = ["InferType", "AddOne", "FoldConstant"]\n',
        "crash.toml": 'passes = ["InferType", "SimplifyInference", "Crash"]\n',
        "unknown.toml": 'passes = ["InferType", "FoldConstnt"]\n',
        "timed.toml": ('passes = ["InferType", { name = "tail", passes = ["FoldConstant"] }]\n'
                       '[[instruments]]\nname = "PassTimingInstrument"\n'),
    }.items():
        (root / name).write_text(text)
        files[name] = root / name
    return files


def run_all(calls: dict[str, tuple], cwd: Path, paths: tuple[Path, ...] = ()) -> dict:
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(relaypass_cli, *args, cwd=cwd, paths=paths)
                   for k, args in calls.items()}
        return {k: f.result() for k, f in futures.items()}


def document(result, command: str) -> dict:
    """The JSON document a command printed: all of stdout, strict JSON, of ``command``'s schema."""
    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    doc = json.loads(result.stdout, parse_constant=no_constants)
    assert doc["schema"] == f"relaypass.{command}/1" == schema_id(command)
    assert doc["exit_code"] == result.returncode
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", doc["relaypass"])
    return doc


# --- run ---------------------------------------------------------------------------------------------
def test_run_json_lists_every_step_with_its_time_and_counts(env, tmp_path):
    out = tmp_path / "out.relay"
    results = run_all({
        "json": ("run", PIPELINES / "O3.toml", CONVNET, "--json", "--check"),
        "file": ("run", PIPELINES / "O3.toml", CONVNET, "--json", "-o", out),
        "explain": ("explain", PIPELINES / "O3.toml", "--json"),
        "plain": ("run", PIPELINES / "O3.toml", CONVNET),
    }, tmp_path)
    doc = document(results["json"], "run")
    assert doc["error"] is None and doc["reproducer"] is None
    assert doc["pipeline"] == {"name": "O3", "source": str(PIPELINES / "O3.toml"), "opt_level": 3,
                               "required_pass": [], "disabled_pass": []}
    assert doc["model"] == {"path": str(CONVNET), "zoo": None, "format": "relay"}
    # The steps are the schedule's (what explain says runs), in order.
    steps = [s for s in document(results["explain"], "explain")["steps"] if s["index"]]
    assert [(p["index"], p["name"], p["kind"]) for p in doc["passes"]] == [
        (s["index"], s["name"], s["kind"]) for s in steps]
    for p in doc["passes"]:
        assert p["status"] == "ok" and p["seconds"] >= 0
        assert p["distribution"] == "relaypass" and p["version"] == doc["relaypass"]
        assert p["nodes_before"] > 0 and p["nodes_after"] > 0
        assert isinstance(p["changed"], bool)
    # Each step starts from what the one before returned.
    for a, b in zip(doc["passes"], doc["passes"][1:]):
        assert (a["nodes_after"], a["ops_after"]) == (b["nodes_before"], b["ops_before"])
    assert doc["passes"][0]["ops_before"] == doc["input"]["ops"]
    assert doc["passes"][-1]["ops_after"] == doc["output"]["ops"]
    assert doc["input"]["ops"]["nn.conv2d"] == doc["output"]["ops"]["nn.conv2d"] > 0
    assert doc["input"]["op_calls"] == sum(doc["input"]["ops"].values())
    assert doc["output"]["path"] is None and doc["seconds"] > 0
    # FoldConstant folds; FuseOps wraps calls in functions (more nodes).
    by_name = {p["name"]: p for p in doc["passes"]}
    assert by_name["FuseOps"]["changed"] and by_name["FuseOps"]["nodes_after"] > \
        by_name["FuseOps"]["nodes_before"]
    (check,) = doc["checks"]
    assert check["ok"] is True and check["max_abs_error"] < 1e-5
    assert check["max_rel_error"] is not None and check["rtol"] == 1e-3
    assert check["against"] == "the input module (seeded inputs, seed 0)"
    # With -o, the module goes to the file; stdout is still only the document.
    assert results["file"].stdout, (results["file"].returncode, results["file"].stderr)
    with_file = document(results["file"], "run")
    assert with_file["output"]["path"] == str(out)
    assert out.read_text() == results["plain"].stdout
    assert results["plain"].stdout.startswith('#[version = "0.0.5"]')


def test_run_json_check_failure_and_instruments_keep_stdout_for_the_document(env, tmp_path):
    results = run_all({
        "differs": ("run", env["add_one.toml"], MLP, "--json", "--check"),
        "timed": ("run", env["timed.toml"], MLP, "--json", "--time", "--print-after-all"),
    }, tmp_path, (env["site"],))
    doc = document(results["differs"], "run")
    assert results["differs"].returncode == 1
    (check,) = doc["checks"]
    assert check["ok"] is False and check["max_abs_error"] == pytest.approx(1.0)
    assert check["max_rel_error"] > 0 and check["worst"].startswith("output 0[")
    add_one = next(p for p in doc["passes"] if p["name"] == "AddOne")
    assert add_one["distribution"] == "json-plugin" and add_one["version"] == "3.0"
    assert add_one["ops_after"]["add"] == add_one["ops_before"].get("add", 0) + 1
    # The timing table and the printed IR go to stderr.
    timed = document(results["timed"], "run")
    assert [p["name"] for p in timed["passes"]] == ["InferType", "FoldConstant"]
    assert "def @main" in results["timed"].stderr
    assert results["timed"].returncode == 0 and "check failed" not in results["timed"].stderr


def test_run_json_errors_are_documents_with_the_same_exit_status(env, tmp_path):
    repro = tmp_path / "repro"
    results = run_all({
        "unknown pass": ("run", env["unknown.toml"], MLP, "--json"),
        "crash": ("run", env["crash.toml"], MLP, "--json", "--repro-dir", repro),
        "stdout taken": ("run", PIPELINES / "O2.toml", MLP, "--json", "-o", "-"),
        "usage": ("run", PIPELINES / "O2.toml", MLP, "--json", "--frobnicate"),
        "explain": ("explain", env["unknown.toml"], "--json"),
    }, tmp_path, (env["site"],))
    unknown = document(results["unknown pass"], "run")
    assert results["unknown pass"].returncode == 2
    err = unknown["error"]
    assert err["kind"] == "PipelineError" and err["input_error"] is True
    assert err["message"].endswith("passes[1].name: no pass named 'FoldConstnt' is registered; "
                                   "did you mean 'FoldConstant'?")
    assert results["unknown pass"].stderr == f"relaypass: error: {err['message']}\n"
    assert document(results["explain"], "explain")["error"]["kind"] == "PipelineError"

    crash = document(results["crash"], "run")
    assert results["crash"].returncode == 3
    assert crash["error"] == {
        "kind": "RuntimeError", "message": crash["error"]["message"], "input_error": False,
        "pass": "Crash", "instrument": None, "distribution": "json-plugin", "version": "3.0",
        "bug_tracker": None}
    assert crash["error"]["message"].startswith(
        "RuntimeError: json_plugin's Crash crashes [raised in pass 'Crash' (from json-plugin "
        "3.0)]; reproducer written to ")
    (folder,) = repro.iterdir()
    assert crash["reproducer"] == str(folder)
    # The steps before the crash, then the one that raised.
    assert [(p["name"], p["status"]) for p in crash["passes"]] == [
        ("InferType", "ok"), ("SimplifyInference", "ok"), ("Crash", "raised")]
    assert crash["passes"][-1]["nodes_after"] is None and crash["passes"][-1]["seconds"] is None
    assert "Traceback" in results["crash"].stderr  # the human report goes on as before

    taken = document(results["stdout taken"], "run")
    assert results["stdout taken"].returncode == 2
    assert taken["error"]["kind"] == "CLIError" and "stdout carries the JSON" in \
        taken["error"]["message"]
    usage = document(results["usage"], "run")
    assert results["usage"].returncode == 2 and "--frobnicate" in usage["error"]["message"]


# --- check, explain, bisect ---------------------------------------------------------------------------
def test_check_explain_and_bisect_documents(env, tmp_path):
    results = run_all({
        "check": ("check", PIPELINES / "O3.toml", "--json"),
        "check build": ("check", PIPELINES / "O3.toml", "--json", "--build"),
        "explain": ("explain", PIPELINES / "O3.toml", "--json", "-O", "1"),
        "explain text": ("explain", PIPELINES / "O3.toml", "-O", "1"),
        "bisect": ("bisect", env["add_one.toml"], MLP, "--json"),
        "bisect clean": ("bisect", PIPELINES / "O2.toml", MLP, "--json", "--linear"),
    }, tmp_path, (env["site"],))
    check = document(results["check"], "check")
    assert check["passes"] == _entries(PIPELINES / "O3.toml")
    assert check["instruments"] == [] and check["built"] is False and check["required"] is None
    built = document(results["check build"], "check")
    assert built["built"] is True and built["required"] == ["InferType"]

    explain = document(results["explain"], "explain")
    assert explain["pipeline"]["opt_level"] == 1
    text_rows = results["explain text"].stdout.splitlines()[2:]
    assert len(explain["steps"]) == len(text_rows)
    assert explain["runs"] == sum(1 for s in explain["steps"] if s["index"])
    skipped = {s["name"]: s["reason"] for s in explain["steps"] if s["action"] == "skip"}
    assert skipped["FoldConstant"] == "opt_level 2 > pipeline opt_level 1"

    bisect = document(results["bisect"], "bisect")
    assert results["bisect"].returncode == 1
    culprit = bisect["culprit"]
    assert (culprit["name"], culprit["index"], culprit["breakage"]) == ("AddOne", 2, "output")
    assert culprit["distribution"] == "json-plugin" and culprit["max_abs_error"] == \
        pytest.approx(1.0)
    assert [p["name"] for p in bisect["passes"]] == ["InferType", "AddOne", "FoldConstant"]
    assert bisect["mode"] == "bisection" and bisect["typer"] == "InferType"
    assert set(bisect["seconds"]) == {"passes", "checks", "evaluation"}
    assert "bisect:" in results["bisect"].stderr  # the summary line stays on stderr
    clean = document(results["bisect clean"], "bisect")
    assert results["bisect clean"].returncode == 0
    assert clean["culprit"] is None and clean["mode"] == "linear"
    # Linear: every snapshot a pass changed is evaluated (unchanged ones are not again).
    changed = sum(1 for p in clean["passes"] if p["changed"])
    assert changed <= clean["evaluations"] <= len(clean["passes"])


def _entries(path: Path) -> list[str]:
    """The pass entries of a pipeline file, in order (sequences opened)."""
    from relaypass.transform import read_pipeline
    from relaypass.transform.pipeline import SequenceRef

    out: list[str] = []
    stack = list(reversed(read_pipeline(path).passes.passes))
    while stack:
        ref = stack.pop()
        if isinstance(ref, SequenceRef):
            stack.extend(reversed(ref.passes))
        else:
            out.append(ref.name)
    return out


# --- counts and comparisons, in-process ------------------------------------------------------------
def test_counts_take_shared_nodes_once_and_ops_by_name():
    x = relay.var("x", shape=(2, 2))
    shared = relay.add(x, x)
    body = relay.multiply(shared, relay.nn.relu(shared))
    mod = IRModule.from_expr(relay.Function([x], body))
    counts = ModuleCounter().counts(mod)
    # Function, x, add, relu, multiply: the operators themselves are not nodes.
    assert counts == {"nodes": 5, "op_calls": 3,
                      "ops": {"add": 1, "multiply": 1, "nn.relu": 1}}


def test_counts_walk_a_100000_deep_chain():
    x = relay.var("x", shape=(1,))
    y = x
    for _ in range(100_000):
        y = relay.negative(y)
    counts = ModuleCounter().counts(IRModule.from_expr(relay.Function([x], y)))
    assert counts["nodes"] == 100_002 and counts["ops"] == {"negative": 100_000}


def test_comparison_json_says_the_largest_errors_in_strict_json():
    reference = [np.array([1.0, -2.0, 0.0], dtype=np.float32)]
    actual = [np.array([1.1, -2.0, 0.5], dtype=np.float32)]
    comparison = compare_outputs(actual, reference, rtol=1e-3, atol=1e-5)
    data = comparison_json(comparison, actual, reference, "the reference")
    assert data["ok"] is False and data["max_abs_error"] == pytest.approx(0.5)
    # Elements whose reference is zero have no relative error.
    assert data["max_rel_error"] == pytest.approx(0.1, rel=1e-5)
    shape = compare_outputs([np.zeros(2)], [np.zeros(3)], rtol=1e-3, atol=1e-5)
    data = comparison_json(shape, [np.zeros(2)], [np.zeros(3)], "x")
    assert data["max_abs_error"] is None and data["problem"].startswith("output 0 has shape")
    json.dumps(data, allow_nan=False)
