"""The ``relaypass`` command line, run as a user runs it: in a subprocess.

Independent invocations are started together (a thread pool of subprocesses)
so that the file stays fast on a busy machine.  The plugins the error paths
need (a pass that changes results, one that crashes, one that cannot be
imported) live in a temporary ``sys.path`` entry as tiny ``*.dist-info``
distributions, and a fake ``onnx`` package that fails to import stands for a
machine without the extra.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import on_a_terminal, one_error_line

from relaypass import load, parse
from relaypass.tools.schedule import resolve_schedule, runnable
from relaypass.transform import PassContext, read_pipeline
from relaypass.transform.instrument import PassInstrument

ROOT = Path(__file__).resolve().parent.parent
PIPELINES = ROOT / "examples" / "pipelines"
MLP = ROOT / "examples" / "models" / "mlp.relay"
CONVNET = ROOT / "examples" / "models" / "convnet.relay"
HAS_ONNX = importlib.util.find_spec("onnx") is not None
HAS_ORT = importlib.util.find_spec("onnxruntime") is not None


# The working directory of the commands: a scratch folder, where a pass that raises leaves
# its reproducer folder (./relaypass-repro/...).
_SCRATCH: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch_cwd(tmp_path_factory):
    _SCRATCH.append(tmp_path_factory.mktemp("cwd"))
    yield
    _SCRATCH.pop()


def relaypass(*args: object, env: dict[str, str] | None = None, cwd: Path | None = None,
              **kwargs) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    cwd = cwd or (_SCRATCH[-1] if _SCRATCH else None)
    return subprocess.run([sys.executable, "-m", "relaypass.tools.cli", *map(str, args)],
                          capture_output=True, text=True, env=full_env, cwd=cwd, **kwargs)


def run_all(calls: dict[str, tuple]) -> dict[str, subprocess.CompletedProcess]:
    """Run several ``relaypass`` invocations at once: ``{key: (args, env)}``."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(relaypass, *args, env=env) for k, (args, env) in calls.items()}
        return {k: f.result() for k, f in futures.items()}


# --- fixtures: plugins and files ----------------------------------------------------------------
PLUGIN_MANIFEST = """
format = 1

[[pass]]
name = "AddOne"
kind = "module"
opt_level = 0
factory = "cli_test_plugin.passes:add_one"

[[pass]]
name = "Crash"
kind = "module"
opt_level = 0
factory = "cli_test_plugin.passes:crash"

[[pass]]
name = "Unimportable"
kind = "module"
opt_level = 0
factory = "cli_test_plugin.unimportable:make"
"""

PLUGIN_PASSES = '''
from relaypass import relay
from relaypass.transform import module_pass


def add_one():
    @module_pass(opt_level=0, name="AddOne")
    def run(mod, ctx):
        main = mod["main"]
        mod["main"] = relay.Function(main.params, relay.add(main.body, relay.const(1.0)))
        return mod
    return run


def crash():
    @module_pass(opt_level=0, name="Crash")
    def run(mod, ctx):
        raise RuntimeError("the Crash pass always crashes")
    return run
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli")
    site = root / "site"
    (site / "cli_test_plugin").mkdir(parents=True)
    info = site / "cli_test_plugin-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-test-plugin\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[relaypass.plugins]\ncli_test_plugin = cli_test_plugin\n")
    (site / "cli_test_plugin" / "__init__.py").write_text("")
    (site / "cli_test_plugin" / "relaypass-plugin.toml").write_text(PLUGIN_MANIFEST)
    (site / "cli_test_plugin" / "passes.py").write_text(PLUGIN_PASSES)
    (site / "cli_test_plugin" / "unimportable.py").write_text("raise ImportError('no such luck')\n")
    no_onnx = root / "no_onnx"
    (no_onnx / "onnx").mkdir(parents=True)
    (no_onnx / "onnx" / "__init__.py").write_text("raise ImportError('onnx is blocked here')\n")

    def write(name: str, text: str) -> Path:
        path = root / name
        path.write_text(textwrap.dedent(text))
        return path

    out = {
        "site": site,
        "no_onnx": no_onnx,
        "root": root,
        "bad_toml": write("bad.toml", 'passes = ["InferType"\n'),
        "unknown_pass": write("unknown.toml", 'passes = ["InferType", "FoldConstnt"]\n'),
        "infer": write("infer.toml", 'passes = ["InferType"]\n'),
        "add_one": write("add_one.toml", 'passes = ["InferType", "AddOne"]\n'),
        "crash": write("crash.toml", 'passes = ["Crash"]\n'),
        "unimportable": write("unimportable.toml", 'passes = ["Unimportable"]\n'),
        "with_instruments": write("instr.toml", """
            name = "timed"
            passes = ["InferType", { name = "tail", passes = ["FoldConstant"] }]
            [[instruments]]
            name = "PassTimingInstrument"
            """),
        "parse_error": write("parse_error.relay", """\
            #[version = "0.0.5"]
            def @main(%x: Tensor[(2, 3), float32]) {
              add(%x, )
            }
            """),
        "type_error": write("type_error.relay", """\
            #[version = "0.0.5"]
            def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) {
              add(%x, %y)
            }
            """),
        "fake_onnx": write("model.onnx", "not a protobuf"),
    }
    return out


def plugin_env(files) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(files["site"]), os.environ.get("PYTHONPATH", "")])}


def no_onnx_env(files) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(files["no_onnx"]), os.environ.get("PYTHONPATH", "")])}


# --- listing ----------------------------------------------------------------------------------------
def test_passes_and_instruments_tables_and_json():
    results = run_all({
        "passes": (("passes",), None), "passes_json": (("passes", "--json"), None),
        "instruments": (("instruments",), None),
        "instruments_json": (("instruments", "--json"), None),
    })
    version = importlib.metadata.version("relaypass")
    for r in results.values():
        assert r.returncode == 0 and r.stderr == "", r.stderr
    table = results["passes"].stdout.splitlines()
    assert table[0].split() == ["name", "kind", "opt_level", "required", "distribution", "version"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["InferType"] == ["InferType", "module", "0", "-", "relaypass", version]
    assert rows["FuseOps"][1:4] == ["function", "0", "InferType"]
    data = {p["name"]: p for p in json.loads(results["passes_json"].stdout)}
    assert data["FuseOps"]["required"] == ["InferType"]
    assert data["DeadCodeElimination"]["options"][0]["name"] == "inline_once"
    assert data["InferType"]["distribution"] == "relaypass" and data["InferType"]["version"] == version
    instruments = {line.split()[0] for line in results["instruments"].stdout.splitlines()[1:]}
    assert {"PassTimingInstrument", "PrintAfter", "PrintChanged", "DumpIR"} <= instruments
    idata = {i["name"]: i for i in json.loads(results["instruments_json"].stdout)}
    assert [o["name"] for o in idata["DumpIR"]["options"]] == ["dir", "passes", "clean", "show_meta"]


def test_listing_reads_manifests_only():
    code = (
        "import sys\n"
        "from relaypass.tools.cli import main\n"
        "assert main(['passes']) == 0 and main(['instruments', '--json']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('relaypass_std', "
        "'relaypass_instruments', 'numpy', 'relaypass.ir'))), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]", out.stderr


def test_listing_shows_broken_plugins_as_warnings(files):
    broken = files["root"] / "broken_site"
    (broken / "badman").mkdir(parents=True)
    info = broken / "badman-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: badman\nVersion: 2.0\n")
    (info / "entry_points.txt").write_text("[relaypass.plugins]\nbadman = badman\n")
    (broken / "badman" / "__init__.py").write_text("")
    (broken / "badman" / "relaypass-plugin.toml").write_text("format = 1\n[[pass]\n")
    r = relaypass("passes", env={"PYTHONPATH": str(broken)})
    assert r.returncode == 0
    assert "InferType" in r.stdout
    assert re.fullmatch(r"relaypass: warning: invalid plugin manifest of badman 2\.0: .*\n", r.stderr)


# --- explain and check ------------------------------------------------------------------------------
def test_explain_marks_added_and_skipped_passes():
    results = run_all({
        "o3": (("explain", PIPELINES / "O3.toml"), None),
        "o1": (("explain", PIPELINES / "O3.toml", "-O", "1", "--disable", "DeadCodeElimination"), None),
    })
    o3 = results["o3"].stdout.splitlines()
    assert o3[0].startswith("pipeline O3 (") and o3[0].endswith("opt_level 3: 11 passes run")
    assert o3[1].split() == ["#", "pass", "action", "why"]
    assert [line.split()[:3] for line in o3[2:]] == [
        ["1", "InferType", "run"],
        ["InferType", "skipped", "required"],
        ["2", "SimplifyInference", "run"], ["3", "InferType", "added"],
        ["4", "EliminateCommonSubexpr", "run"], ["5", "FoldConstant", "run"],
        ["6", "FoldScaleAxis", "run"],
        ["7", "InferType", "added"], ["8", "DeadCodeElimination", "run"],
        ["9", "InferType", "added"], ["10", "FuseOps", "run"], ["11", "ToANormalForm", "run"],
    ]
    assert o3[3].endswith("required by SimplifyInference; its effect still holds")
    assert o3[5].endswith("required by EliminateCommonSubexpr")
    assert o3[9].endswith("required by DeadCodeElimination")
    assert o3[11].endswith("required by FuseOps")
    o1 = results["o1"].stdout
    assert re.search(r"^ +EliminateCommonSubexpr +skipped +opt_level 3 > 1$", o1, re.M), o1
    assert re.search(r"^ +FoldConstant +skipped +opt_level 2 > 1$", o1, re.M), o1
    assert re.search(r"^ +DeadCodeElimination +skipped +disabled$", o1, re.M), o1
    assert re.search(r"^5 +FuseOps +run +opt_level 0 <= 1$", o1, re.M), o1


def test_check_counts_passes_and_instruments(files):
    results = run_all({
        "o3": (("check", PIPELINES / "O3.toml"), None),
        "instr": (("check", files["with_instruments"]), None),
    })
    assert results["o3"].stdout == "ok: 8 passes, 0 instruments\n"
    assert results["instr"].stdout == "ok: 2 passes, 1 instrument\n"


def test_bundled_pipelines_follow_relays_build_levels():
    expected = {
        "O0": ["InferType", "SimplifyInference", "FuseOps"],
        "O2": ["InferType", "SimplifyInference", "FoldConstant", "FuseOps"],
        "O3": ["InferType", "SimplifyInference", "EliminateCommonSubexpr", "FoldConstant",
               "FoldScaleAxis", "DeadCodeElimination", "FuseOps", "ToANormalForm"],
    }
    for name, passes in expected.items():
        steps = runnable(resolve_schedule(read_pipeline(PIPELINES / f"{name}.toml")))
        assert [s.name for s in steps if s.kind == "pass"] == passes
        # Whatever else the passes declare, all that is ever added is type inference.
        assert {s.name for s in steps if s.kind == "dependency"} <= {"InferType"}


class _Leaves(PassInstrument):
    """The passes reported directly inside the pipeline's sequences (``sequences``), in order.

    What runs inside such a pass is its own: the type inference a function pass
    ends with (as in Relay), or the passes a module pass runs itself.
    """

    def __init__(self, sequences):
        self.sequences, self.leaves, self._running = set(sequences), [], []

    def run_before_pass(self, mod, info):
        parent = self._running[-1] if self._running else None
        if parent in self.sequences and info.name not in self.sequences:
            self.leaves.append(info.name)
        self._running.append(info.name if not self._running or parent in self.sequences else None)

    def run_after_pass(self, mod, info):
        self._running.pop()


@pytest.mark.parametrize("name", ["O0", "O2", "O3"])
def test_resolved_schedule_is_what_runs(name, files):
    from dataclasses import replace

    base = read_pipeline(PIPELINES / f"{name}.toml")
    for spec in (base, replace(base, opt_level=1), replace(base, disabled_pass=("FoldConstant",))):
        pipeline = spec.build()
        schedule = resolve_schedule(spec)
        leaves = _Leaves([spec.passes.name, *(s.name for s in schedule if s.kind == "sequence")])
        with PassContext(opt_level=spec.opt_level, disabled_pass=spec.disabled_pass,
                         instruments=[leaves]):
            pipeline.sequential(load(CONVNET))
        assert leaves.leaves == [s.name for s in runnable(schedule)]


# --- run ---------------------------------------------------------------------------------------------
def test_run_writes_the_result_and_checks_it(tmp_path):
    out = tmp_path / "out.relay"
    dump = tmp_path / "dumps"
    results = run_all({
        "stdout": (("run", PIPELINES / "O2.toml", MLP), None),
        "file": (("run", PIPELINES / "O3.toml", CONVNET, "-o", out, "--check", "--time",
                  "--dump-dir", dump), None),
    })
    r = results["stdout"]
    assert r.returncode == 0 and r.stderr == ""
    fused = parse(r.stdout)
    assert "Primitive=1" in r.stdout and fused["main"] is not None
    r = results["file"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert load(out)["main"] is not None
    assert re.search(r"^relaypass: check ok: the output matches the input module \(seeded "
                     r"inputs, seed 0\) within rtol 0\.001, atol 1e-05", r.stderr, re.M), r.stderr
    assert "Pass timing:" in r.stderr and re.search(r"^  ToANormalForm ", r.stderr, re.M)
    assert sorted(p.name for p in dump.iterdir())[:2] == ["000_input.relay", "001_InferType.relay"]


def test_run_printing_options_and_levels():
    results = run_all({
        "after": (("run", PIPELINES / "O2.toml", MLP, "--print-after", "FoldConstant",
                   "--print-changed"), None),
        "all": (("run", PIPELINES / "O2.toml", MLP, "--print-after-all", "-O", "1"), None),
        "disabled": (("run", PIPELINES / "O2.toml", MLP, "--print-after-all", "--disable",
                      "FuseOps", "--traceback"), None),
    })
    after = results["after"].stderr
    assert after.count("// IR after pass ") == 1 and "// IR after pass FoldConstant" in after
    assert re.search(r"^\+.*Primitive=1", after, re.M), after  # the diff of FuseOps
    headers = re.findall(r"^// IR after pass (\S+)", results["all"].stderr, re.M)
    # FoldConstant is opt_level 2 > 1; FuseOps needs types again after SimplifyInference.
    # As in Relay, a function pass ends by typing its result: an InferType inside it,
    # reported (and printed) before the function pass ends.
    assert headers == ["InferType", "InferType", "SimplifyInference", "InferType", "InferType",
                       "FuseOps", "O2"]
    headers = re.findall(r"^// IR after pass (\S+)", results["disabled"].stderr, re.M)
    assert headers == ["InferType", "InferType", "SimplifyInference", "InferType",
                       "FoldConstant", "O2"]
    assert "Primitive" not in results["disabled"].stdout
    for r in results.values():
        assert r.returncode == 0 and "Pass timing" not in r.stderr


def test_check_failure_exits_1_with_the_largest_difference(files):
    r = relaypass("run", files["add_one"], MLP, "--check", env=plugin_env(files))
    assert r.returncode == 1, r.stderr
    assert re.fullmatch(r"relaypass: check failed: the output differs from the input module .*"
                        r"largest difference 1; furthest outside the tolerance at output 0\[0, \d\]: "
                        r"\S+ vs \S+\n", r.stderr), r.stderr
    assert "def @main" in r.stdout  # the result is still written, to look at


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_line_only_on_a_terminal():
    code, tty, stdout = on_a_terminal(["run", PIPELINES / "O3.toml", MLP])
    assert code == 0
    assert "\r\x1b[K" in tty and re.search(r"\[\d+/\d+\] O3 > FuseOps", tty)
    assert tty.endswith("\r\x1b[K")  # erased at the end
    piped = relaypass("run", PIPELINES / "O3.toml", MLP)
    assert piped.stderr == "" and piped.stdout == stdout


# --- errors ----------------------------------------------------------------------------------------
def test_every_input_error_is_one_line_and_exit_2(files, tmp_path):
    infer = files["infer"]
    plugins = plugin_env(files)
    cases = {
        "missing pipeline": (("run", tmp_path / "nope.toml", MLP), None,
                             r"nope\.toml: cannot read the pipeline file \(No such file"),
        "missing model": (("run", infer, tmp_path / "nope.relay"), None,
                          r"cannot read .*nope\.relay: No such file"),
        "bad toml": (("check", files["bad_toml"]), None, r"bad\.toml: not valid TOML"),
        "unknown pass": (("explain", files["unknown_pass"]), None,
                         r"unknown\.toml: passes\[1\]\.name: no pass named 'FoldConstnt' is "
                         r"registered; did you mean 'FoldConstant'\?"),
        "parse error": (("run", infer, files["parse_error"]), None,
                        r"parse_error\.relay:3:\d+: "),
        "type error": (("run", infer, files["type_error"]), None,
                       r"type_error\.relay:3:\d+: .*not broadcast-compatible.* \[raised in pass "
                       r"'InferType' \(from relaypass [\d.]+\)\]"),
        "broken plugin": (("run", files["unimportable"], MLP), plugins,
                          r"cannot import cli_test_plugin\.unimportable:make for pass "
                          r"'Unimportable' of cli-test-plugin 1\.2: ImportError: no such luck"),
        "onnx missing": (("run", infer, files["fake_onnx"]), no_onnx_env(files),
                         r"ONNX models need the onnx extra, which is not installed: "
                         r"pip install 'relaypass\[onnx\]'"),
        "zoo onnx missing": (("run", infer, "--model-zoo", "resnet50"), no_onnx_env(files),
                             r"ONNX models need the onnx extra"),
        "unknown zoo model": (("run", infer, "--model-zoo", "resnet5"), None,
                              r"no model named 'resnet5' in the model zoo; choose one of alexnet, "),
        "model and zoo": (("run", infer, MLP, "--model-zoo", "resnet50"), None,
                          r"run needs a MODEL file or --model-zoo NAME \(one of them\)"),
        "unknown disable": (("explain", infer, "--disable", "FoldConst"), None,
                            r"--disable FoldConst: no pass named 'FoldConst' is registered; did "
                            r"you mean 'FoldConstant'"),
        "usage": (("run", infer, MLP, "--frobnicate"), None,
                  r"unrecognized arguments: --frobnicate"),
        "bad -O": (("run", infer, MLP, "-O", "high"), None, r"argument -O: invalid int value"),
        "output not writable": (("run", infer, MLP, "-o", tmp_path / "no" / "dir" / "x.relay"),
                                None, r"cannot write .*x\.relay: No such file"),
        "shape on relay text": (("run", infer, MLP, "--shape", "x=1,32"), None,
                                r"--shape applies to ONNX models"),
        "zoo option on a file": (("run", infer, MLP, "--weights", "shipped"), None,
                                 r"--weights applies to --model-zoo models only"),
    }
    results = run_all({k: (args, env) for k, (args, env, _) in cases.items()})
    for key, (_, _, pattern) in cases.items():
        line = one_error_line(results[key])
        assert re.search(pattern, line), (key, line)


def test_traceback_option_before_or_after_the_command(files):
    results = run_all({
        "before": (("--traceback", "run", files["infer"], files["type_error"]), None),
        "after": (("run", files["infer"], files["type_error"], "--traceback"), None),
    })
    for r in results.values():
        assert r.returncode != 0 and "Traceback (most recent call last)" in r.stderr
        assert "TypeInferenceError" in r.stderr or "TypeRelationError" in r.stderr


def test_a_crashing_pass_is_a_bug_report_with_exit_3(files, tmp_path):
    results = run_all({
        "repro": (("run", files["crash"], MLP, "--repro-dir", tmp_path), plugin_env(files)),
        "no repro": (("run", files["crash"], MLP, "--no-repro"), plugin_env(files)),
    })
    error = ("relaypass: internal error: RuntimeError: the Crash pass always crashes [raised in "
             "pass 'Crash' (from cli-test-plugin 1.2)]")
    bug = ("; this is a bug in pass 'Crash' of cli-test-plugin 1.2, not in relaypass (the "
           "traceback above shows where): please report it to the maintainers of cli-test-plugin "
           "(the metadata of cli-test-plugin names no bug tracker)")
    for r in results.values():
        assert r.returncode == 3
        assert "Traceback (most recent call last)" in r.stderr
    assert results["no repro"].stderr.splitlines()[-1] == error + bug
    (folder,) = tmp_path.iterdir()
    assert results["repro"].stderr.splitlines()[-1] == (
        f"{error}; reproducer written to {folder}{bug}")


# --- print -------------------------------------------------------------------------------------------
def test_print_round_trips_the_bundled_models():
    results = run_all({"mlp": (("print", MLP, "--show-meta"), None),
                       "convnet": (("print", CONVNET, "--show-meta"), None)})
    for key, path in (("mlp", MLP), ("convnet", CONVNET)):
        r = results[key]
        assert r.returncode == 0 and r.stdout == path.read_text()


def test_bundled_models_are_what_make_models_writes(tmp_path):
    script = (ROOT / "examples" / "make_models.py").read_text()
    copy = tmp_path / "examples"
    copy.mkdir()
    (copy / "make_models.py").write_text(script)
    subprocess.run([sys.executable, copy / "make_models.py"], check=True, capture_output=True)
    for name in ("mlp.relay", "convnet.relay"):
        assert (copy / "models" / name).read_text() == (ROOT / "examples" / "models" / name).read_text()


# --- ONNX models ---------------------------------------------------------------------------------------
def _small_onnx(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Softmax", ["r"], ["y"], axis=1)],
        "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


@pytest.mark.skipif(not HAS_ONNX, reason="the onnx extra is not installed")
def test_run_and_print_an_onnx_file(tmp_path):
    model = tmp_path / "small.onnx"
    _small_onnx(model)
    results = run_all({
        "run": (("run", PIPELINES / "O2.toml", model, "--shape", "x=2,4", "--check"), None),
        "print": (("print", model), None),
        "garbage": (("run", PIPELINES / "O2.toml", tmp_path / "nothing.onnx"), None),
    })
    r = results["run"]
    assert r.returncode == 0, r.stderr
    assert "Tensor[(2, 4), float32]" in r.stdout and "check ok" in r.stderr
    assert results["print"].stdout.startswith('#[version = "0.0.5"]')
    assert re.match(r"relaypass: error: cannot read .*nothing\.onnx", one_error_line(results["garbage"]))


@pytest.mark.skipif(not (HAS_ONNX and HAS_ORT), reason="needs the onnx extra (onnx, onnxruntime)")
def test_model_zoo_job_checks_against_onnxruntime_and_the_stored_output(tmp_path):
    out = tmp_path / "shufflenet.relay"
    results = run_all({
        "ort": (("run", PIPELINES / "O3.toml", "--model-zoo", "shufflenet", "-o", out), None),
        "stored": (("run", PIPELINES / "O2.toml", "--model-zoo", "shufflenet", "--reference",
                    "stored"), None),
        "conflict": (("run", PIPELINES / "O2.toml", "--model-zoo", "shufflenet", "--reference",
                      "stored", "--weights", "random"), None),
    })
    r = results["ort"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert "seeded random weights (seed 0), a seeded random input (seed 0)" in r.stderr
    assert re.search(r"^relaypass: check ok: the output matches onnxruntime within rtol 0\.001, "
                     r"atol 1e-05", r.stderr, re.M), r.stderr
    assert re.search(r"^  FuseOps +\d", r.stderr, re.M)  # the timing table, always shown
    assert "Primitive=1" in out.read_text()
    r = results["stored"]
    assert r.returncode == 0, r.stderr
    assert "the shipped weights, the input of onnx's backend test" in r.stderr
    assert "matches the stored reference output (light_shufflenet_output_0.pb)" in r.stderr
    assert re.match(r"relaypass: error: --weights random needs --reference onnxruntime",
                    one_error_line(results["conflict"]))


def test_run_timer_and_typer_options():
    """``--timer NAME`` chooses the timing instrument (default PassTimingInstrument; implies
    --time), ``--typer NAME`` the pass a reproducer restores types with; both are checked first."""
    results = run_all({
        "default": (("run", PIPELINES / "O2.toml", MLP, "--time"), None),
        "timer": (("run", PIPELINES / "O2.toml", MLP, "--timer", "PassTimingInstrument"), None),
        "typer": (("run", PIPELINES / "O2.toml", MLP, "--typer", "InferType"), None),
        "no render": (("run", PIPELINES / "O2.toml", MLP, "--timer", "PrintAfterAll"), None),
        "unknown timer": (("run", PIPELINES / "O2.toml", MLP, "--timer", "PassTiming"), None),
        "unknown typer": (("run", PIPELINES / "O2.toml", MLP, "--typer", "InferTyp"), None),
    })
    for key in ("default", "timer"):
        r = results[key]
        assert r.returncode == 0, (key, r.stderr)
        assert re.search(r"^Pass timing: \d+ pass runs", r.stderr, re.M), (key, r.stderr)
    assert results["typer"].returncode == 0 and "Pass timing" not in results["typer"].stderr
    for key, pattern in (
            ("no render", r"--timer PrintAfterAll: instrument 'PrintAfterAll' has no render\(\) "
                          r"method giving the timing table \(the default, PassTimingInstrument, "
                          r"has\)$"),
            ("unknown timer", r"--timer PassTiming: no instrument named 'PassTiming' is "
                              r"registered; did you mean 'PassTimingInstrument'\?"),
            ("unknown typer", r"--typer InferTyp: no pass named 'InferTyp' is registered; did "
                              r"you mean 'InferType'\?")):
        line = one_error_line(results[key])
        assert re.search(pattern, line), (key, line)


def test_help_names_the_default_passes_and_instruments():
    results = run_all({"run": (("run", "--help"), None), "bisect": (("bisect", "--help"), None)})
    run_help = " ".join(results["run"].stdout.split())
    bisect_help = " ".join(results["bisect"].stdout.split())
    for text in ("(default PassTimingInstrument)", 'role = "type-inference", else InferType',
                 "instrument PrintAfter)", "instrument PrintAfterAll)", "instrument PrintChanged)",
                 "instrument DumpIR)"):
        assert text in run_help, text
    for text in ("(default WellFormedChecker)", 'role = "type-inference", else InferType'):
        assert text in bisect_help, text


def test_python_dash_m_relaypass_is_the_command():
    out = subprocess.run([sys.executable, "-m", "relaypass", "passes"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "InferType" in out.stdout and "FuseOps" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "relaypass", "run", "no-such-pipeline.toml"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
