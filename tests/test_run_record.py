"""``relaypass run ... --report FILE.json`` and ``--viz-dir DIR``: one run as data and as pictures.

What CI relies on: the record of a run is the record ``relaypass batch``
gives the same model (so ``compare-reports`` diffs two runs, or a run and a
corpus), it is written after an error too, and it never changes what the run
writes on stdout.  ``--viz-dir`` draws the module before the pipeline and
after each step, in files ordered and named by step, and writes nowhere else.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import one_error_line, relaypass, run_all

from relaypass.tools import batch
from relaypass.tools.batch_record import model_job, pipeline_description, run_model
from relaypass.tools.run_report import pipeline_json
from relaypass.tools.schedule import resolve_schedule
from relaypass.tools.viz_steps import picture_name

ROOT = Path(__file__).resolve().parent.parent
CONVNET = "examples/models/convnet.relay"
MLP = "examples/models/mlp.relay"
O3 = "examples/pipelines/O3.toml"
HAS_DOT = shutil.which("dot") is not None

# A pass that raises on every model, registered with --load.
BROKEN = '''
from relaypass.transform import module_pass

@module_pass(opt_level=0, name="Broken")
def broken(mod, ctx):
    raise ValueError("Broken refuses every model")
'''


def _steps(record: dict) -> list[tuple]:
    return [(s["index"], s["name"], s["status"], s["nodes_before"], s["nodes_after"],
             s["ops_before"], s["ops_after"], s["changed"]) for s in record["passes"]]


# --- run --report ----------------------------------------------------------------------------
def test_the_record_of_a_run_is_the_record_batch_gives_the_model(tmp_path: Path, monkeypatch):
    out = tmp_path / "run.json"
    result = relaypass("run", O3, CONVNET, "--check", "--report", out, "-o", tmp_path / "o.relay",
                       cwd=ROOT)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.count("\n") == 1 and text.endswith("}\n")  # one JSON line: a one-model report
    (record,) = batch.read_report(str(out))

    monkeypatch.chdir(ROOT)
    spec, pipeline = batch.pipeline_argument(O3, str(ROOT))
    settings = {"pipeline": pipeline,
                "pipeline_json": pipeline_description(pipeline_json(spec), resolve_schedule(spec)),
                "out_dir": str(ROOT), "loads": [], "check": "interp", "rtol": 1e-3,
                "atol": 1e-5, "seed": 0, "timeout": None, "threads": 1}
    expected = run_model(model_job(CONVNET, None, "relay"), settings)

    assert set(record) == set(expected)
    for key in ("schema", "model", "pipeline", "check", "status", "input", "output", "error"):
        assert record[key] == expected[key], key
    assert _steps(record) == _steps(expected)
    assert [(c["ok"], c["outputs"], c["max_abs_error"]) for c in record["checks"]] == [
        (c["ok"], c["outputs"], c["max_abs_error"]) for c in expected["checks"]]
    seconds = record["seconds"]
    assert set(seconds) == {"import", "passes", "check", "total"}
    assert all(seconds[k] > 0 for k in seconds) and seconds["total"] > seconds["passes"]
    assert all(s["seconds"] >= 0 for s in record["passes"])
    # The steps chain: each one's input is the last one's output, from the input to the output.
    assert record["passes"][0]["nodes_before"] == record["input"]["nodes"]
    assert record["passes"][-1]["nodes_after"] == record["output"]["nodes"]
    for before, after in zip(record["passes"], record["passes"][1:]):
        assert after["nodes_before"] == before["nodes_after"]


@pytest.mark.skipif(importlib.util.find_spec("onnxruntime") is None, reason="needs onnxruntime")
def test_a_model_zoo_run_is_recorded_as_batch_records_it(tmp_path: Path, monkeypatch):
    out = tmp_path / "zoo.json"
    result = relaypass("run", O3, "--model-zoo", "squeezenet", "--report", out, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    (record,) = batch.read_report(str(out))
    monkeypatch.chdir(ROOT)
    spec, pipeline = batch.pipeline_argument(O3, str(ROOT))
    settings = {"pipeline": pipeline,
                "pipeline_json": pipeline_description(pipeline_json(spec), resolve_schedule(spec)),
                "out_dir": str(ROOT), "loads": [], "check": "auto", "rtol": 1e-3,
                "atol": 1e-5, "seed": 0, "timeout": None, "threads": 1}
    (job,) = batch.collect_models([], ["squeezenet"])
    expected = run_model(job, settings)
    for key in ("model", "pipeline", "check", "status", "input", "output", "error"):
        assert record[key] == expected[key], key
    assert record["check"] == "onnxruntime" and record["checks"][0]["ok"]
    assert _steps(record) == _steps(expected)


def test_report_and_json_and_the_module_on_stdout(tmp_path: Path):
    runs = run_all({
        "plain": ("run", "-p", "InferType,FoldConstant", MLP),
        "report": ("run", "-p", "InferType,FoldConstant", MLP, "--report", tmp_path / "r.json"),
        "both": ("run", "-p", "InferType,FoldConstant", MLP, "--report", tmp_path / "b.json",
                 "--json"),
    }, cwd=ROOT)
    assert all(r.returncode == 0 for r in runs.values()), {k: r.stderr for k, r in runs.items()}
    # --report leaves stdout to the module, as without it.
    assert runs["report"].stdout == runs["plain"].stdout and "def @main" in runs["plain"].stdout
    doc = json.loads(runs["both"].stdout)
    assert doc["schema"] == "relaypass.run/1"
    (record,) = batch.read_report(str(tmp_path / "b.json"))
    assert record["schema"] == "relaypass.batch/1" and record["check"] == "none"
    assert [s["name"] for s in record["passes"]] == [s["name"] for s in doc["passes"]] == [
        "InferType", "FoldConstant"]
    assert record["output"] == {k: v for k, v in doc["output"].items() if k != "path"}
    assert record["seconds"]["check"] is None and record["checks"] == []


def test_a_failed_run_is_recorded_with_its_error(tmp_path: Path):
    (tmp_path / "broken.py").write_text(BROKEN)
    out = tmp_path / "failed.json"
    result = relaypass("run", "-p", "InferType,Broken", MLP, "--load", tmp_path / "broken.py",
                       "--report", out, "--no-repro", cwd=ROOT)
    assert result.returncode == 3  # a pass's own bug, as without --report
    (record,) = batch.read_report(str(out))
    assert record["status"] == "error" and record["output"] is None
    assert record["error"]["kind"] == "ValueError" and record["error"]["pass"] == "Broken"
    assert "refuses every model" in record["error"]["message"]
    assert [(s["name"], s["status"]) for s in record["passes"]] == [("InferType", "ok"),
                                                                    ("Broken", "raised")]
    assert record["seconds"]["import"] > 0 and record["seconds"]["passes"] is None


def test_compare_reports_diffs_two_runs(tmp_path: Path):
    (tmp_path / "broken.py").write_text(BROKEN)
    a, b, c = (tmp_path / f"{n}.json" for n in "abc")
    runs = run_all({
        "a": ("run", O3, CONVNET, "--check", "--report", a, "-o", tmp_path / "a.relay"),
        "b": ("run", O3, CONVNET, "--check", "--report", b, "-o", tmp_path / "b.relay",
              "--disable", "FoldScaleAxis"),
        "c": ("run", "-p", "InferType,Broken", CONVNET, "--load", tmp_path / "broken.py",
              "--report", c, "--no-repro"),
    }, cwd=ROOT)
    assert runs["a"].returncode == runs["b"].returncode == 0 and runs["c"].returncode == 3
    changed = relaypass("compare-reports", a, b, cwd=ROOT)
    assert changed.returncode == 0, changed.stderr
    assert "1 model(s) in both" in changed.stdout
    assert "FoldScaleAxis: only in A" in changed.stdout
    nodes = json.loads(a.read_text())["output"]["nodes"], json.loads(b.read_text())["output"]["nodes"]
    assert nodes[0] != nodes[1] and f"nodes out {nodes[0]} -> {nodes[1]}" in changed.stdout
    regressed = relaypass("compare-reports", a, c, cwd=ROOT)
    assert regressed.returncode == 1
    assert "status ok -> error: ValueError" in regressed.stdout
    assert "regressions: 1 model(s)" in regressed.stdout


def test_a_report_that_cannot_be_written_is_one_line_before_the_run(tmp_path: Path):
    line = one_error_line(relaypass("run", "-p", "InferType", MLP, "--report",
                                    tmp_path / "nowhere" / "r.json", cwd=ROOT))
    assert "--report" in line and "its folder does not exist" in line
    line = one_error_line(relaypass("run", "-p", "InferType", MLP, "--report", tmp_path,
                                    cwd=ROOT))
    assert "is a folder" in line


# --- run --viz-dir ---------------------------------------------------------------------------
def _clusters(dot: str) -> int:
    return len(re.findall(r'subgraph "cluster_\d+"', dot))


def test_viz_dir_draws_the_input_and_every_step_in_order(tmp_path: Path):
    pics = tmp_path / "pics"
    result = relaypass("run", O3, CONVNET, "--viz-dir", pics, "--viz-format", "dot", "-o",
                       tmp_path / "out.relay", "--report", tmp_path / "r.json", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    (record,) = batch.read_report(str(tmp_path / "r.json"))
    steps = [(s["index"], s["name"]) for s in record["passes"]]
    names = sorted(os.listdir(pics))
    assert names == ["000_input.dot"] + [f"{i:03d}_{name}.dot" for i, name in steps]
    assert "010_FuseOps.dot" in names
    for name in names:
        text = (pics / name).read_text()
        assert text.startswith('digraph "@main"') and "convnet.relay @main" in text
        if HAS_DOT:
            parsed = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True,
                                    text=True)
            assert parsed.returncode == 0 and not parsed.stderr, (name, parsed.stderr)
    # Before FuseOps nothing is a cluster; after it every fused function is one.
    assert _clusters((pics / "009_InferType.dot").read_text()) == 0
    fused = (pics / "010_FuseOps.dot").read_text()
    assert _clusters(fused) == 7 and "fused_nn_conv2d_add_nn_relu" in fused
    assert "after 10 FuseOps" in fused
    # The pictures follow what each step did: SimplifyInference removes the batch norms.
    assert "nn.batch_norm" in (pics / "000_input.dot").read_text()
    assert "nn.batch_norm" not in (pics / "002_SimplifyInference.dot").read_text()


@pytest.mark.skipif(not HAS_DOT, reason="needs Graphviz's dot")
def test_viz_dir_svg_by_default(tmp_path: Path):
    pytest.importorskip("graphviz")
    pics = tmp_path / "pics"
    result = relaypass("run", "-p", "InferType,FuseOps", CONVNET, "--viz-dir", pics, "-o",
                       tmp_path / "out.relay", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(pics)) == ["000_input.svg", "001_InferType.svg", "002_FuseOps.svg"]
    svg = ET.parse(pics / "002_FuseOps.svg").getroot()
    clusters = svg.findall(".//{http://www.w3.org/2000/svg}g[@class='cluster']")
    fused = (tmp_path / "out.relay").read_text().count("Primitive=1")
    assert fused > 1 and len(clusters) == fused
    assert not ET.parse(pics / "001_InferType.svg").getroot().findall(
        ".//{http://www.w3.org/2000/svg}g[@class='cluster']")


def test_viz_dir_writes_only_in_its_folder(tmp_path: Path):
    pics = tmp_path / "pics"
    pics.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    # A stale picture of an earlier run, and a link planted under a picture's name.
    (pics / "007_Old.dot").write_text("stale")
    (pics / "001_InferType.dot").symlink_to(outside)
    (pics / "notes.txt").write_text("mine")
    before = {p for p in tmp_path.rglob("*")}
    result = relaypass("run", "-p", "InferType,FoldConstant", MLP, "--viz-dir", pics,
                       "--viz-format", "dot", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "keep me"
    assert sorted(os.listdir(pics)) == ["000_input.dot", "001_InferType.dot",
                                        "002_FoldConstant.dot", "notes.txt"]
    assert not any(p.is_symlink() for p in pics.iterdir())
    after = {p for p in tmp_path.rglob("*")}
    assert {p for p in after - before} <= {pics / "000_input.dot", pics / "002_FoldConstant.dot"}
    assert all(p.parent == pics for p in after ^ before)


def test_picture_names_are_safe_and_viz_dir_errors_are_one_line(tmp_path: Path):
    assert picture_name(3, "../../etc/passwd", "svg") == "003_etc_passwd.svg"
    assert picture_name(12, "my.plugin:Pass", "dot") == "012_my.plugin_Pass.dot"
    assert picture_name(1000, "...", "html") == "1000_pass.html"
    (tmp_path / "file").write_text("")
    line = one_error_line(relaypass("run", "-p", "InferType", MLP, "--viz-dir",
                                    tmp_path / "file", cwd=ROOT))
    assert "--viz-dir" in line and "not a folder" in line


def test_viz_dir_without_graphviz_says_what_to_install(tmp_path: Path):
    import sys

    bare = {"PATH": os.path.dirname(sys.executable)}  # no dot on the PATH
    line = one_error_line(relaypass("run", "-p", "InferType", MLP, "--viz-dir", tmp_path / "v",
                                    env=bare, cwd=ROOT))
    assert "apt install graphviz" in line or "pip install graphviz" in line
    assert not (tmp_path / "v").exists()

