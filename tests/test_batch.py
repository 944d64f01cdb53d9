"""``relaypass batch``: a pipeline over a corpus, each model in a worker, one JSON line per model.

What a pass author relies on: every model gets a record with the per-pass
steps, counts and check of ``run --json``; one model's error, crash or
timeout is that model's record and never stops the others; ``--resume``
runs only what the report lacks; the exit status is 0 only when every
model passed; the Ray engine gives the same records as the process pool.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import one_error_line, relaypass
from command_helpers import needs_command, parse_command

from relaypass.tools import batch
from relaypass.tools.batch_engines import ProcessEngine
from relaypass.tools.batch_record import run_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "examples" / "models"
O3 = ROOT / "examples" / "pipelines" / "O3.toml"
HAS_ORT = importlib.util.find_spec("onnxruntime") is not None
HAS_RAY = importlib.util.find_spec("ray") is not None

# A pass that misbehaves on the models whose parameter asks it to.
TROUBLE = '''
import os, signal, time
from relaypass.transform import module_pass

@module_pass(opt_level=0, name="Trouble")
def trouble(mod, ctx):
    name = mod["main"].params[0].name_hint
    if name == "raise_me":
        raise ValueError("Trouble refuses models with a raise_me parameter")
    if name == "hang_me":
        time.sleep(60)
    if name == "block_me":  # out of the reach of the worker's own timer
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(60)
    if name == "crash_me":
        os._exit(7)
    return mod
'''


def _relay(name: str) -> str:
    return f'#[version = "0.0.5"]\ndef @main(%{name}: Tensor[(2, 3), float32]) {{\n  nn.relu(%{name})\n}}\n'


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """mlp.relay, a model per kind of trouble, and an ONNX file that is not ONNX."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    shutil.copy(MODELS / "mlp.relay", folder / "mlp.relay")
    for name in ("raise_me", "hang_me", "crash_me"):
        (folder / f"{name}.relay").write_text(_relay(name))
    (folder / "broken.onnx").write_bytes(b"this is not a protobuf message\xff\xff")
    (tmp_path / "trouble.py").write_text(TROUBLE)
    return folder


def _settings(pipeline_text: str, **extra: object) -> dict:
    """Settings as ``batch`` gives its workers, for an inline pipeline the parent cannot check
    (its pass is registered by --load in the workers only)."""
    described = {"name": "inline", "source": "PIPELINE", "opt_level": 2, "required_pass": [],
                 "disabled_pass": [], "schedule": pipeline_text.split(",")}
    return {"pipeline": {"kind": "inline", "text": pipeline_text, "source": "PIPELINE"},
            "pipeline_json": described, "out_dir": os.getcwd(), "loads": [], "check": "interp",
            "rtol": 1e-3, "atol": 1e-5, "seed": 0, "timeout": None, "threads": 1, **extra}


def _job(path: Path) -> dict:
    fmt = "onnx" if path.suffix == ".onnx" else "relay"
    return {"key": str(path), "name": path.name, "path": str(path), "zoo": None, "format": fmt}


# --- the record of one model -----------------------------------------------------------------
def test_a_record_has_the_steps_counts_and_check_of_run_json():
    spec, pipeline = batch.pipeline_argument(str(O3), os.getcwd())
    from relaypass.tools.run_report import pipeline_json

    settings = {**_settings("x"), "pipeline": pipeline, "pipeline_json": pipeline_json(spec)}
    record = run_model(_job(MODELS / "convnet.relay"), settings)
    json.dumps(record, allow_nan=False)  # strict JSON, as the report is
    assert record["schema"] == "relaypass.batch/1"
    assert record["status"] == "ok" and record["error"] is None
    assert record["check"] == "interp"
    (check,) = record["checks"]
    assert check["ok"] and check["max_abs_error"] < 1e-5 and "max_rel_error" in check
    names = [step["name"] for step in record["passes"]]
    assert names[:2] == ["InferType", "SimplifyInference"] and "FuseOps" in names
    for before, after in zip(record["passes"], record["passes"][1:]):
        assert after["nodes_before"] == before["nodes_after"]  # each step's input is the last output
    assert record["passes"][0]["nodes_before"] == record["input"]["nodes"]
    assert record["passes"][-1]["nodes_after"] == record["output"]["nodes"]
    assert record["input"]["ops"]["nn.batch_norm"] == 2 and "nn.batch_norm" not in record["output"]["ops"]
    seconds = record["seconds"]
    assert all(seconds[k] >= 0 for k in ("import", "passes", "check", "total"))
    assert seconds["total"] >= seconds["passes"]


def test_an_onnxruntime_check_of_a_relay_model_is_that_models_error():
    spec, pipeline = batch.pipeline_argument("InferType", os.getcwd())
    settings = {**_settings("InferType"), "pipeline": pipeline, "check": "onnxruntime"}
    record = run_model(_job(MODELS / "mlp.relay"), settings)
    assert record["status"] == "error"
    assert record["error"]["kind"] == "BatchModelError"
    assert "--check interp" in record["error"]["message"]


# --- the engine: one model's trouble is its own ----------------------------------------------
def test_errors_crashes_and_timeouts_are_records_and_the_others_complete(corpus: Path):
    (corpus / "block_me.relay").write_text(_relay("block_me"))
    jobs = [_job(p) for p in sorted(corpus.iterdir())]
    settings = _settings("InferType,Trouble", loads=[str(corpus.parent / "trouble.py")],
                         timeout=1.0)
    records: dict[str, dict] = {}
    ProcessEngine(2).run(jobs, settings, lambda r: records.setdefault(r["model"]["name"], r))
    assert sorted(records) == sorted(j["name"] for j in jobs)
    status = {name: r["status"] for name, r in records.items()}
    assert status == {"mlp.relay": "ok", "raise_me.relay": "error", "hang_me.relay": "timeout",
                      "block_me.relay": "timeout", "crash_me.relay": "crashed",
                      "broken.onnx": "error"}
    error = {name: r["error"] for name, r in records.items()}
    assert error["raise_me.relay"]["kind"] == "ValueError"
    assert error["raise_me.relay"]["pass"] == "Trouble"
    assert "refuses" in error["raise_me.relay"]["message"]
    # The worker's own timer stops a pass in Python code: the record names it, with the steps
    # that ran before it.
    assert error["hang_me.relay"]["kind"] == "ModelTimeoutError"
    assert error["hang_me.relay"]["pass"] == "Trouble"
    assert [s["status"] for s in records["hang_me.relay"]["passes"]] == ["ok", "raised"]
    # A pass that blocks the timer is stopped by the engine, which kills its worker.
    assert error["block_me.relay"]["kind"] == "ModelTimeoutError"
    assert "stopped while running pass 2 Trouble" in error["block_me.relay"]["message"]
    assert error["block_me.relay"]["pass"] == "Trouble"
    assert error["crash_me.relay"]["kind"] == "WorkerCrashError"
    assert "exit status 7" in error["crash_me.relay"]["message"]
    assert error["broken.onnx"]["kind"] == "ModelZooError"
    assert "not an ONNX model" in error["broken.onnx"]["message"]
    for record in records.values():
        json.dumps(record, allow_nan=False)


# --- the models a batch runs -----------------------------------------------------------------
def test_models_come_from_files_folders_and_lists(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "zoo" / "deep").mkdir(parents=True)
    shutil.copy(MODELS / "mlp.relay", tmp_path / "zoo" / "b.relay")
    shutil.copy(MODELS / "mlp.relay", tmp_path / "zoo" / "deep" / "a.relay")
    (tmp_path / "zoo" / "notes.md").write_text("not a model")
    (tmp_path / "zoo" / "x.onnx").write_bytes(b"")
    shutil.copy(MODELS / "convnet.relay", tmp_path / "single.txt")  # Relay text named .txt
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "models.txt").write_text("# my corpus\n../zoo/b.relay\n\n../single.txt\n"
                                                   "more.txt\n")
    (tmp_path / "lists" / "more.txt").write_text("../zoo/deep\nmodels.txt\n")  # a cycle: once
    jobs = batch.collect_models(["zoo", "lists/models.txt", "zoo/b.relay"])
    assert [(j["key"], j["format"]) for j in jobs] == [
        ("zoo/b.relay", "relay"), ("zoo/deep/a.relay", "relay"), ("zoo/x.onnx", "onnx"),
        ("single.txt", "relay")]
    assert all(j["name"] == j["key"] == j["path"] and j["zoo"] is None for j in jobs)


def test_a_missing_model_is_an_error_naming_the_list(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(MODELS / "mlp.relay", tmp_path / "a.relay")
    (tmp_path / "list.txt").write_text("a.relay\nnope.relay\n")
    with pytest.raises(batch.BatchError,
                       match=r"nope\.relay \(listed in list\.txt\): no such file or folder"):
        batch.collect_models(["list.txt"])
    with pytest.raises(batch.BatchError, match=r"^gone\.onnx: no such file or folder"):
        batch.collect_models(["a.relay", "gone.onnx"])


@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="needs the onnx extra")
def test_model_zoo_all_is_every_bundled_model():
    from relaypass.tools.model_zoo import LIGHT_MODELS

    jobs = batch.collect_models([], ["all", "resnet50"])
    assert [j["key"] for j in jobs] == [f"zoo:{n}" for n in sorted(LIGHT_MODELS)]


# --- reports ---------------------------------------------------------------------------------
def _run(tmp_path: Path, *args: object) -> tuple[int, str]:
    out = io.StringIO()
    code = batch.run(parse_command(batch, "batch", *args), out=out)
    return code, out.getvalue()


def test_a_report_line_per_model_and_resume_runs_only_what_is_missing(tmp_path: Path, capsys):
    report = tmp_path / "report.jsonl"
    code, table = _run(tmp_path, O3, MODELS / "mlp.relay", "--report", report, "--jobs", "1")
    assert code == 0
    assert "mlp.relay" in table and "1 model: 1 ok" in table
    (first,) = batch.read_report(str(report))
    # An interrupted run may leave a torn last line: --resume drops it and carries on.
    with open(report, "a") as fh:
        fh.write('{"schema": "relaypass.batch/1", "mod')
    code, table = _run(tmp_path, O3, MODELS, "--report", report, "--resume", "--jobs", "2")
    assert code == 0
    assert "1 model(s) already in" in capsys.readouterr().err
    records = batch.read_report(str(report))
    assert [r["model"]["name"] for r in records][0] == first["model"]["name"]
    assert sorted(r["model"]["name"] for r in records) == sorted(
        str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else str(p)
        for p in (MODELS / "convnet.relay", MODELS / "mlp.relay"))
    assert records[0] == first  # kept as it was
    # Everything is done: nothing runs, and the table covers the whole corpus.
    code, table = _run(tmp_path, O3, MODELS, "--report", report, "--resume")
    assert code == 0 and "2 models: 2 ok" in table
    assert "0 to run" in capsys.readouterr().err
    assert len(batch.read_report(str(report))) == 2


def test_resume_refuses_a_report_of_another_pipeline(tmp_path: Path):
    report = tmp_path / "report.jsonl"
    assert _run(tmp_path, "InferType", MODELS / "mlp.relay", "--report", report)[0] == 0
    with pytest.raises(batch.BatchReportError, match="another pipeline .*InferType.*FoldConstant"):
        _run(tmp_path, "InferType,FoldConstant", MODELS / "mlp.relay", "--report", report,
             "--resume")


def test_a_report_that_is_not_one_is_an_error_naming_the_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "relaypass.batch/1", "model": {}}\nnot json\n{}\n')
    with pytest.raises(batch.BatchReportError, match=r"bad\.jsonl:2: not a JSON line"):
        batch.read_report(str(bad))
    bad.write_text('{"schema": "relaypass.run/1"}\n')
    with pytest.raises(batch.BatchReportError, match=r"bad\.jsonl:1: not a record of relaypass batch"):
        batch.read_report(str(bad))


def test_the_summary_and_the_progress_line():
    records = [
        {"model": {"name": "a.relay"}, "status": "ok", "error": None, "passes": [{}, {}],
         "seconds": {"import": 0.002, "passes": 0.5, "total": 1.0},
         "input": {"nodes": 10}, "output": {"nodes": 7},
         "checks": [{"ok": True, "max_abs_error": 1e-7}]},
        {"model": {"name": "b.relay"}, "status": "timeout", "passes": [], "checks": [],
         "error": {"kind": "ModelTimeoutError", "message": "b.relay: no result after 2 s"},
         "seconds": {"import": None, "passes": None, "total": 2.0}, "input": None,
         "output": None},
    ]
    text = batch.summary(records)
    lines = text.splitlines()
    assert lines[0].split() == ["model", "status", "import", "passes", "(steps)", "nodes",
                                "check", "error"]
    assert lines[1].split()[:7] == ["a.relay", "ok", "2.0", "ms", "0.50", "s", "(2)"]
    assert "10 -> 7" in lines[1] and "ok 1e-07" in lines[1]
    assert "ModelTimeoutError: b.relay: no result after 2 s" in lines[2]
    assert lines[-1] == "2 models: 1 ok, 1 timeout"

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    progress = batch.Progress(3, tty)
    progress.record(records[0])
    progress.record(records[1])
    shown = tty.getvalue()
    assert "batch 1/3 done, 0 failed" in shown and "ETA" in shown
    assert "batch 2/3 done, 1 failed" in shown
    # On a terminal only failures get a line of their own; elsewhere every model does.
    assert "[2/3] b.relay: timeout" in shown and "[1/3] a.relay" not in shown
    plain = io.StringIO()
    progress = batch.Progress(2, plain)
    progress.record(records[0])
    assert plain.getvalue() == "relaypass: batch [1/2] a.relay: ok in 1.00 s\n"


# --- the command, as a user runs it ----------------------------------------------------------
@needs_command("batch")
def test_the_issue_corpus_exit_status_and_resume(corpus: Path, tmp_path: Path):
    report = tmp_path / "report.jsonl"
    args = ("batch", "InferType,Trouble", corpus, "--load", corpus.parent / "trouble.py",
            "--timeout", "1.5", "--report", report, "--jobs", "2")
    result = relaypass(*args)
    assert result.returncode == 1, result.stderr
    records = {Path(r["model"]["path"]).name: r for r in batch.read_report(str(report))}
    assert {k: r["status"] for k, r in records.items()} == {
        "mlp.relay": "ok", "raise_me.relay": "error", "hang_me.relay": "timeout",
        "crash_me.relay": "crashed", "broken.onnx": "error"}
    assert {k: (r["error"] or {}).get("kind") for k, r in records.items()} == {
        "mlp.relay": None, "raise_me.relay": "ValueError", "hang_me.relay": "ModelTimeoutError",
        "crash_me.relay": "WorkerCrashError", "broken.onnx": "ModelZooError"}
    assert "5 models: 1 ok, 2 error, 1 timeout, 1 crashed" in result.stdout
    before = report.read_text()
    again = relaypass(*args, "--resume")
    assert again.returncode == 1
    assert "5 model(s) already in" in again.stderr and "0 to run" in again.stderr
    assert report.read_text() == before


@needs_command("batch")
def test_bad_arguments_are_one_line(tmp_path: Path):
    line = one_error_line(relaypass("batch", O3, tmp_path / "nowhere.relay"))
    assert "nowhere.relay: no such file or folder" in line
    line = one_error_line(relaypass("batch", O3, MODELS, "--resume"))
    assert "--resume needs --report" in line
    line = one_error_line(relaypass("batch", "NoSuchPass", MODELS))
    assert "NoSuchPass" in line
    if not HAS_RAY:
        line = one_error_line(relaypass("batch", O3, MODELS, "--engine", "ray"))
        assert "pip install 'relaypass[ray]'" in line


def _same(record: dict) -> tuple:
    """What must not depend on the engine: everything but the times (and the messages' paths)."""
    steps = [(s["name"], s["status"], s["nodes_before"], s["nodes_after"], s["ops_after"])
             for s in record["passes"]]
    checks = [(c["ok"], c["outputs"]) for c in record["checks"]]
    error = record["error"] and (record["error"]["kind"], record["error"]["pass"])
    return record["status"], record["input"], record["output"], steps, checks, error


def _valid_zoo_record(record: dict, schedule: list[str]) -> None:
    """A record of a bundled model run with O3 and checked against onnxruntime, as the issue asks."""
    json.dumps(record, allow_nan=False)
    name = record["model"]["zoo"]
    assert record["schema"] == "relaypass.batch/1", name
    assert record["model"] == {"key": f"zoo:{name}", "name": name, "path": None, "zoo": name,
                               "format": "onnx"}
    assert record["status"] == "ok" and record["error"] is None, (name, record["error"])
    assert record["pipeline"]["name"] == "O3" and record["pipeline"]["schedule"] == schedule
    assert record["check"] == "onnxruntime"
    (check,) = record["checks"]
    assert check["against"] == "onnxruntime" and check["ok"] and check["outputs"] >= 1, name
    assert 0 <= check["max_abs_error"] <= 1e-2 and check["max_rel_error"] is not None, name
    assert [s["name"] for s in record["passes"]] == schedule
    assert all(s["status"] == "ok" and s["seconds"] >= 0 for s in record["passes"])
    assert record["passes"][0]["nodes_before"] == record["input"]["nodes"] > 40
    assert record["passes"][-1]["nodes_after"] == record["output"]["nodes"]
    for before, after in zip(record["passes"], record["passes"][1:]):
        assert after["nodes_before"] == before["nodes_after"], name
        assert after["ops_before"] == before["ops_after"], name
    seconds = record["seconds"]
    assert all(seconds[k] > 0 for k in ("import", "passes", "check", "total")), name
    assert seconds["total"] >= seconds["import"] + seconds["passes"] + seconds["check"]


@needs_command("batch")
@pytest.mark.skipif(not HAS_ORT, reason="needs onnxruntime")
def test_the_bundled_models_against_onnxruntime_and_the_same_on_ray(tmp_path: Path):
    """The issue's command on every bundled model; then Ray, started here with 2 CPUs."""
    from relaypass.tools.model_zoo import LIGHT_MODELS
    from relaypass.tools.schedule import resolve_schedule, runnable

    report = tmp_path / "pool.jsonl"
    result = relaypass("batch", "examples/pipelines/O3.toml", "--model-zoo", "all", "--jobs", "2",
                       "--report", report, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(LIGHT_MODELS)} models: {len(LIGHT_MODELS)} ok" in result.stdout
    pool = {r["model"]["key"]: r for r in batch.read_report(str(report))}
    assert sorted(pool) == sorted(f"zoo:{name}" for name in LIGHT_MODELS)
    schedule = [s.name for s in runnable(resolve_schedule(batch.pipeline_argument(
        str(O3), os.getcwd())[0]))]
    for record in pool.values():
        _valid_zoo_record(record, schedule)

    if not HAS_RAY:
        pytest.skip("the process pool passed; Ray is not installed (pip install 'relaypass[ray]')")
    import ray

    ray_report = tmp_path / "ray.jsonl"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        code, table = _run(tmp_path, O3, "--model-zoo", "all", "--engine", "ray", "--jobs", "2",
                           "--report", ray_report)
    finally:
        ray.shutdown()
    assert code == 0, table
    on_ray = {r["model"]["key"]: r for r in batch.read_report(str(ray_report))}
    assert sorted(on_ray) == sorted(pool)
    for key, record in on_ray.items():
        _valid_zoo_record(record, schedule)
        assert _same(record) == _same(pool[key]), key


def test_the_costliest_models_start_first(tmp_path: Path):
    small, big = tmp_path / "small.relay", tmp_path / "big.relay"
    shutil.copy(MODELS / "mlp.relay", small)
    big.write_text(small.read_text() + "\n" * 100_000)
    jobs = batch.collect_models([str(small), str(big)])
    assert [j["path"] for j in batch.largest_first(jobs)] == [j["path"] for j in jobs[::-1]]
    if importlib.util.find_spec("onnx") is not None:
        zoo = batch.collect_models([], ["squeezenet", "vgg19", "resnet50"])
        # VGG-19 draws 143 million weights, ResNet-50 25 million, SqueezeNet 1.2 million.
        assert [j["zoo"] for j in batch.largest_first(zoo)] == ["vgg19", "resnet50",
                                                                "squeezenet"]


@needs_command("batch")
@pytest.mark.skipif(not HAS_RAY, reason="Ray is not installed (the ray extra)")
def test_ray_gives_the_records_the_process_pool_gives(corpus: Path, tmp_path: Path):
    def run(engine: str) -> dict:
        report = tmp_path / f"{engine}.jsonl"
        relaypass("batch", "InferType,Trouble,FoldConstant", corpus, "--load",
                  corpus.parent / "trouble.py", "--timeout", "3", "--report", report,
                  "--jobs", "2", "--engine", engine, env={"RAY_ADDRESS": ""})
        return {r["model"]["key"]: r for r in batch.read_report(str(report))}

    pool, ray = run("process"), run("ray")
    assert sorted(pool) == sorted(ray)
    for key in pool:
        assert _same(pool[key]) == _same(ray[key]), key
