"""``relaypass optimize`` against the ONNX optimizers people use, on the same models.

The tools, each run in a subprocess of its own on a model file, its time
measured inside the subprocess around load -> optimize -> save (the best
of ``--repeat`` runs; interpreter start-up and imports are not counted):

* ``relaypass``: :func:`relaypass.tools.optimize.optimize_model` with its
  default pipeline (examples/pipelines/onnx.toml);
* ``onnxsim``: ``onnxsim.simplify`` (onnx-simplifier), its defaults;
* ``onnxoptimizer``: ``onnxoptimizer.optimize`` with its default passes;
* ``onnxscript``: ``onnxscript.optimizer.optimize``;
* ``ort-basic`` / ``ort-extended``: onnxruntime's offline optimizer
  (``SessionOptions.optimized_model_filepath`` at ``ORT_ENABLE_BASIC`` and
  ``ORT_ENABLE_EXTENDED``; extended writes com.microsoft fused operators,
  which only onnxruntime runs).

The peers are never dependencies of relaypass: they are pip-installed on
demand into a virtual environment cached in ``~/.cache/relaypass/onnx-peers``
(``--venv`` elsewhere), made with ``--system-site-packages`` so that it
reuses the installed onnx and onnxruntime where their versions suit.

The models: the onnx package's nine light models with seeded random weights
(:func:`relaypass.tools.model_zoo.randomize_weights`; their initializers no
longer listed as graph inputs, as from IR version 4), and the test corpus
``tests/onnx_corpus.py`` (transformer blocks and CNN blocks as exporters
write them, with fixed shapes and with dynamic batch and sequence axes).
For each model and tool the table gives the node count after, the time, and
whether onnxruntime's outputs on the optimized model still match its outputs
on the original (seeded inputs; rtol 1e-4, atol 1e-5).

Run: python benchmarks/onnx_peers.py [--models NAME ...] [--tools NAME ...] [--repeat 3]
                                      [--markdown] [--venv DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

TOOLS = ["relaypass", "onnxsim", "onnxoptimizer", "onnxscript", "ort-basic", "ort-extended"]
PEER_PACKAGES = {"onnxsim": "onnxsim", "onnxoptimizer": "onnxoptimizer",
                 "onnxscript": "onnxscript"}
DEFAULT_VENV = Path.home() / ".cache" / "relaypass" / "onnx-peers"
RTOL, ATOL = 1e-4, 1e-5

# One script per tool, run as `python -c SCRIPT IN OUT REPEAT`: its imports, then the timed
# work (load, optimize, save) `REPEAT` times; it prints the best time.
_SETUP = {
    "relaypass": "from relaypass.tools.optimize import optimize_model",
    "onnxsim": "import onnxsim",
    "onnxoptimizer": "import onnxoptimizer",
    "onnxscript": "import onnxscript.optimizer",
    "ort-basic": "import onnxruntime as ort",
    "ort-extended": "import onnxruntime as ort",
}
_WORK = {
    "relaypass": "optimize_model(src, dst)",
    "onnxsim": "model, ok = onnxsim.simplify(onnx.load(src)); onnx.save(model, dst)",
    "onnxoptimizer": "onnx.save(onnxoptimizer.optimize(onnx.load(src)), dst)",
    "onnxscript": "onnx.save(onnxscript.optimizer.optimize(onnx.load(src)), dst)",
    "ort-basic": "ort_optimize(src, dst, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)",
    "ort-extended": "ort_optimize(src, dst, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)",
}
_SCRIPT = """
import sys, time, onnx
{setup}
src, dst, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])

def ort_optimize(src, dst, level):
    o = ort.SessionOptions()
    o.log_severity_level = 3
    o.graph_optimization_level = level
    o.optimized_model_filepath = dst
    ort.InferenceSession(src, o, providers=["CPUExecutionProvider"])

best = float("inf")
for _ in range(repeat):
    start = time.perf_counter()
    {work}
    best = min(best, time.perf_counter() - start)
print(best)
"""


def peers_python(venv_dir: Path, tools: list[str]) -> str:
    """The venv's python, with the peers the chosen tools need installed (once)."""
    python = venv_dir / "bin" / "python"
    if not python.exists():
        print(f"creating the peers' virtual environment in {venv_dir}", file=sys.stderr)
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(venv_dir)
    missing = []
    for tool in tools:
        package = PEER_PACKAGES.get(tool)
        if package is None:
            continue
        probe = subprocess.run([str(python), "-c", f"import {package}"], capture_output=True)
        if probe.returncode != 0:
            missing.append(package)
    if missing:
        print(f"installing {', '.join(missing)} into {venv_dir}", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *missing], check=True)
    return str(python)


def corpus_models() -> dict[str, object]:
    from onnx_corpus import CORPUS

    return {name: build for name, build in CORPUS.items()}


def light_models() -> dict[str, object]:
    from relaypass.tools import model_zoo

    def build(name: str):
        model = model_zoo.randomize_weights(model_zoo.light_model(name).load())
        # IR 3 lists every initializer as a graph input too; onnxruntime's optimizer then keeps
        # them as inputs of the file it writes.  The models as IR 4 and later write them.
        inits = {t.name for t in model.graph.initializer}
        inputs = [vi for vi in model.graph.input if vi.name not in inits]
        del model.graph.input[:]
        model.graph.input.extend(inputs)
        model.ir_version = max(model.ir_version, 4)
        return model

    return {name: (lambda n=name: build(n)) for name in sorted(model_zoo.LIGHT_MODELS)}


def run_tool(tool: str, python: str, src: str, dst: str, repeat: int) -> tuple[float | None, str]:
    """(seconds, error text) of one tool on one model file."""
    script = _SCRIPT.format(setup=_SETUP[tool], work=_WORK[tool])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "core"), str(ROOT / "passes_std"),
                                         str(ROOT / "plugins"), env.get("PYTHONPATH", "")])
    exe = sys.executable if tool in ("relaypass", "ort-basic", "ort-extended") else python
    done = subprocess.run([exe, "-c", script, src, dst, str(repeat)], capture_output=True,
                          text=True, env=env, timeout=1800)
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        return None, lines[-1] if lines else f"exit status {done.returncode}"
    return float(done.stdout.strip().splitlines()[-1]), ""


def measure(name: str, model, tools: list[str], python: str, repeat: int) -> dict:
    import onnx

    from relaypass.tools.optimize import check_outputs, seeded_inputs

    row: dict = {"model": name, "nodes": len(model.graph.node), "tools": {}}
    from onnx_corpus import fixed_shapes

    shapes = fixed_shapes(model) if ":" in name else None
    feeds = seeded_inputs(model, shapes)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "model.onnx")
        onnx.save(model, src)
        for tool in tools:
            dst = os.path.join(tmp, f"{tool}.onnx")
            seconds, error = run_tool(tool, python, src, dst, repeat)
            entry: dict = {"seconds": seconds, "error": error}
            if seconds is not None:
                out = onnx.load(dst)
                entry["nodes"] = len(out.graph.node)
                try:
                    entry["match"] = check_outputs(model, dst, feeds, rtol=RTOL, atol=ATOL).ok
                except Exception as exc:  # a peer's output onnxruntime cannot run
                    entry["match"] = False
                    entry["error"] = f"onnxruntime: {str(exc).splitlines()[0][:120]}"
            row["tools"][tool] = entry
            print(f"  {name} {tool}: {entry}", file=sys.stderr)
    return row


def table(rows: list[dict], tools: list[str]) -> str:
    head = "| model | nodes | " + " | ".join(tools) + " |"
    lines = [head, "|" + "---|" * (len(tools) + 2)]
    for row in rows:
        cells = []
        for tool in tools:
            e = row["tools"].get(tool)
            if e is None:
                cells.append("")
            elif e["seconds"] is None:
                cells.append("fails")
            else:
                mark = "" if e.get("match") else " ✗"
                cells.append(f"{e['nodes']} / {e['seconds'] * 1e3:.0f} ms{mark}")
        lines.append(f"| {row['model']} | {row['nodes']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    named = [(r["model"], r["tools"].get("relaypass"), r["tools"].get("onnxsim")) for r in rows]
    named = [(m, a, b) for m, a, b in named if a and b and b["seconds"] is not None]
    if not named:
        return ""
    done = [(m, a, b) for m, a, b in named if a["seconds"] is not None]
    fewer = sum(a["nodes"] <= b["nodes"] for _, a, b in done)
    faster = sum(a["seconds"] < b["seconds"] for _, a, b in done)
    matches = sum(bool(a.get("match")) for _, a, _ in done)
    text = (f"relaypass against onnxsim on {len(named)} models: no more nodes on {fewer}, "
            f"faster on {faster}, outputs matching on {matches}, failing on "
            f"{len(named) - len(done)}.")
    ratios = sorted((a["seconds"] / b["seconds"], m) for m, a, b in done)
    if ratios:
        worst, where = ratios[-1]
        text += (f" relaypass's time over onnxsim's: median {ratios[len(ratios) // 2][0]:.2f}, "
                 f"largest {worst:.2f} ({where}).")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", help="model names (default: all)")
    parser.add_argument("--tools", nargs="*", choices=TOOLS, default=TOOLS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--venv", type=Path, default=Path(os.environ.get(
        "RELAYPASS_PEERS_VENV", DEFAULT_VENV)))
    parser.add_argument("--markdown", action="store_true", help="print only the markdown table")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args()
    models = {**light_models(), **corpus_models()}
    names = args.models or list(models)
    unknown = [n for n in names if n not in models]
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {sorted(models)}")
    python = peers_python(args.venv, args.tools)
    rows = [measure(n, models[n](), args.tools, python, args.repeat) for n in names]
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(table(rows, args.tools))
    print()
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
