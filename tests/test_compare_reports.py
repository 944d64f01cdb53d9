"""``relaypass compare-reports A B``: what changed between two reports, model by model, pass by pass.

Reports are ``run --json`` documents or ``batch`` JSON lines; statuses,
node and operator counts and checks are compared exactly, times only beyond
a threshold; the exit status says whether a model that passed no longer does.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_helpers import one_error_line, relaypass
from command_helpers import needs_command, parse_command

from relaypass.tools import compare_reports
from relaypass.tools.batch import BatchReportError

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "examples" / "models" / "mlp.relay"


def _step(name: str, nodes_before: int, nodes_after: int | None, seconds: float | None,
          ops: dict | None = None, status: str = "ok") -> dict:
    return {"index": 1, "name": name, "kind": "pass", "status": status, "seconds": seconds,
            "nodes_before": nodes_before, "nodes_after": nodes_after, "ops_before": {},
            "ops_after": ops if ops is not None else {}, "changed": nodes_after != nodes_before}


def _record(key: str, status: str = "ok", nodes_out: int = 10, seconds: float = 0.1,
            steps: list | None = None, error: float = 1e-7, ok: bool = True) -> dict:
    return {"schema": "relaypass.batch/1", "model": {"key": key, "name": key},
            "status": status, "seconds": {"import": 0.01, "passes": seconds, "total": 1.0},
            "input": {"nodes": 12}, "output": {"nodes": nodes_out},
            "passes": steps if steps is not None else [],
            "checks": [{"ok": ok, "max_abs_error": error}],
            "error": {"kind": "ValueError", "message": "boom"} if status == "error" else None}


def _write(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _compare(a: str, b: str, *options: str) -> tuple[int, str]:
    out = io.StringIO()
    code = compare_reports.run(parse_command(compare_reports, "compare-reports", a, b, *options),
                               out=out)
    return code, out.getvalue()


def test_changes_in_nodes_ops_checks_and_status_are_listed(tmp_path: Path):
    a = _write(tmp_path / "a.jsonl", [
        _record("same"),
        _record("fewer", steps=[_step("FoldConstant", 12, 10, 0.05, {"add": 3})]),
        _record("broken"),
        _record("gone"),
    ])
    b = _write(tmp_path / "b.jsonl", [
        _record("same", seconds=0.105),  # 5 % slower: noise, below the threshold
        _record("fewer", nodes_out=8, steps=[_step("FoldConstant", 12, 8, 0.05, {"add": 1})]),
        _record("broken", status="error"),
        _record("new"),
    ])
    code, text = _compare(a, b)
    assert code == 1  # "broken" passed in A and does not in B
    assert "3 model(s) in both" in text
    assert "only in A (1): gone" in text and "only in B (1): new" in text
    assert "nodes out 10 -> 8" in text
    assert "FoldConstant: nodes after 10 -> 8; ops add 3 -> 1" in text
    assert "status ok -> error: ValueError: boom" in text
    assert "regressions: 1 model(s) passed in A and do not in B: broken" in text
    assert "1 model(s) unchanged" in text
    assert "\nsame:" not in text


def test_times_count_beyond_the_threshold_and_a_millisecond(tmp_path: Path):
    steps_a = [_step("InferType", 5, 5, 0.010), _step("FuseOps", 5, 7, 0.0002)]
    steps_b = [_step("InferType", 5, 5, 0.030), _step("FuseOps", 5, 7, 0.0006)]
    a = _write(tmp_path / "a.jsonl", [_record("m", seconds=0.2, steps=steps_a)])
    b = _write(tmp_path / "b.jsonl", [_record("m", seconds=0.3, steps=steps_b)])
    code, text = _compare(a, b)
    assert code == 0
    assert "passes 0.20 s -> 0.30 s (+50%)" in text
    assert "InferType: 10.0 ms -> 30.0 ms (+200%)" in text
    assert "FuseOps" not in text  # tripled, but by less than a millisecond
    code, text = _compare(a, b, "--time-threshold", "300%")
    assert "InferType" not in text and "1 model(s) unchanged (times within 300%)" in text


def test_steps_pair_by_name_and_occurrence(tmp_path: Path):
    a = _write(tmp_path / "a.jsonl", [_record("m", steps=[
        _step("InferType", 5, 5, 0.01), _step("FoldConstant", 5, 4, 0.01),
        _step("InferType", 4, 4, 0.01)])])
    b = _write(tmp_path / "b.jsonl", [_record("m", steps=[
        _step("InferType", 5, 5, 0.01), _step("SimplifyExpr", 5, 5, 0.01),
        _step("FoldConstant", 5, 3, 0.01), _step("InferType", 3, 3, 0.01)])])
    _, text = _compare(a, b)
    assert "SimplifyExpr: only in B" in text
    assert "FoldConstant: nodes after 4 -> 3" in text
    assert "InferType (run 2): nodes after 4 -> 3" in text


def test_a_run_json_document_compares_with_a_batch_record(tmp_path: Path):
    result = relaypass("run", "-p", "InferType,FoldConstant", MLP, "--json", "--check")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    run_doc = tmp_path / "run.json"
    run_doc.write_text(result.stdout)
    models = compare_reports.load_report(str(run_doc))
    (model,) = models.values()
    assert model.status == "ok" and model.check_ok is True
    assert model.nodes_out == doc["output"]["nodes"] and model.seconds == doc["seconds"]
    assert [s["name"] for s in model.passes] == [s["name"] for s in doc["passes"]]
    # A batch record of the same model, two nodes fewer: two one-model reports always pair.
    record = _record("elsewhere/mlp.relay", nodes_out=doc["output"]["nodes"] - 2,
                     steps=doc["passes"])
    code, text = _compare(str(run_doc), _write(tmp_path / "b.jsonl", [record]))
    assert code == 0
    assert f"nodes out {doc['output']['nodes']} -> {doc['output']['nodes'] - 2}" in text


def test_one_record_reads_on_one_line_or_pretty_printed(tmp_path: Path):
    record = _record("examples/models/mlp.relay", nodes_out=7)
    one_line = _write(tmp_path / "run.json", [record])  # as run --report writes it
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(record, indent=2))
    for path in (one_line, str(pretty)):
        (model,) = compare_reports.load_report(path).values()
        assert (model.key, model.nodes_out, model.status) == ("examples/models/mlp.relay", 7, "ok")


def test_what_is_not_a_report_is_an_error(tmp_path: Path):
    explain = tmp_path / "explain.json"
    explain.write_text(json.dumps({"schema": "relaypass.explain/1", "steps": []}))
    with pytest.raises(BatchReportError, match="a relaypass.explain/1 document"):
        compare_reports.load_report(str(explain))
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("hello\n")
    with pytest.raises(BatchReportError, match=r"garbage\.txt:1: not a JSON line"):
        compare_reports.load_report(str(garbage))
    with pytest.raises(BatchReportError, match="cannot read the report"):
        compare_reports.load_report(str(tmp_path / "missing.jsonl"))


@needs_command("compare-reports")
def test_the_command(tmp_path: Path):
    a = _write(tmp_path / "a.jsonl", [_record("m")])
    b = _write(tmp_path / "b.jsonl", [_record("m", status="check_failed", ok=False, error=0.5)])
    result = relaypass("compare-reports", a, b)
    assert result.returncode == 1
    assert "check ok (max abs error 1e-07) -> FAILED (max abs error 0.5)" in result.stdout
    line = one_error_line(relaypass("compare-reports", a, tmp_path / "nope.jsonl"))
    assert "nope.jsonl" in line
    line = one_error_line(relaypass("compare-reports", a, b, "--time-threshold", "soon"))
    assert "--time-threshold" in line
