"""Throughput of ``relaypass batch``: models per second with 1 and with 2 jobs.

Runs ``relaypass batch examples/pipelines/O3.toml --model-zoo all`` (the
onnx package's light models, each imported with seeded random weights,
optimized with O3 and checked against onnxruntime) with ``--jobs 1`` and
``--jobs 2``, the way a user does, in this process (the engine starts its
worker processes; their start-up is part of every figure).  The aim, from
issue 19: 2 jobs at least 1.6x as fast as 1 on a 2-core machine.

Each figure is the best of ``--repeat`` runs, the runs of 1 and 2 jobs
interleaved, so that a burst of other work on a shared machine weighs on
both alike.  The load average before each run is printed: on a machine
already busy, two jobs cannot get two cores.  A model that fails its check
stops the benchmark (a figure over failing models means nothing).

Run: python benchmarks/batch_bench.py [--repeat 2] [--jobs 1 2] [--models NAME ...]
Needs the onnx extra: pip install 'relaypass[onnx]'.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

O3_FILE = Path(__file__).resolve().parents[1] / "examples" / "pipelines" / "O3.toml"

#: The bar of issue 19: 2 jobs at least this many times as fast as 1.
AIM = 1.6


def _batch_once(jobs: int, models: list[str], report: str) -> dict[str, float]:
    """One ``relaypass batch`` run: its wall time, models, and the CPU time of its workers."""
    from relaypass.tools import batch
    from relaypass.tools.cli import build_parser

    zoo = [arg for name in models for arg in ("--model-zoo", name)]
    args = build_parser().parse_args(["batch", str(O3_FILE), *zoo, "--jobs", str(jobs),
                                      "--report", report])
    load = os.getloadavg()[0]
    children = os.times()
    start = time.perf_counter()
    with contextlib.redirect_stderr(io.StringIO()):  # the progress lines
        code = batch.run(args, out=io.StringIO())
    seconds = time.perf_counter() - start
    after = os.times()
    records = batch.read_report(report)
    if code != 0:
        bad = [f"{r['model']['name']}: {r['status']}" for r in records if r["status"] != "ok"]
        raise RuntimeError(f"batch --jobs {jobs} did not pass: {', '.join(bad)}")
    cpu = (after.children_user - children.children_user
           + after.children_system - children.children_system)
    return {"seconds": seconds, "models": len(records), "load": load, "cpu_seconds": cpu}


def collect(repeat: int = 2, jobs: tuple[int, ...] = (1, 2), models: list[str] | None = None,
            progress=None) -> dict[str, object]:
    """``runs`` ({jobs: best run}), ``speedup`` (of the most jobs over 1), ``loads`` (the load
    average before every run) and ``cores``.  ImportError without the onnx extra."""
    import onnx  # noqa: F401  (the model zoo's models come with it)

    from relaypass.tools.model_zoo import LIGHT_MODELS

    names = models or ["all"]
    best: dict[int, dict[str, float]] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for n in jobs:
                run = _batch_once(n, names, os.path.join(tmp, f"jobs{n}-{i}.jsonl"))
                loads.append(run["load"])
                if progress is not None:
                    progress(f"--jobs {n}: {run['models'] / run['seconds']:.3f} models/s "
                             f"({run['seconds']:.1f} s, load average {run['load']:.1f})")
                if n not in best or run["seconds"] < best[n]["seconds"]:
                    best[n] = run
    for run in best.values():
        run["models_per_second"] = run["models"] / run["seconds"]
    most = max(jobs)
    speedup = (best[most]["models_per_second"] / best[1]["models_per_second"]
               if 1 in best and most != 1 else None)
    return {"runs": best, "speedup": speedup, "loads": loads, "cores": os.cpu_count(),
            "models": len(LIGHT_MODELS) if names == ["all"] else len(names), "repeat": repeat}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure (best is shown)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], metavar="N",
                        help="the --jobs values to measure (default 1 2)")
    parser.add_argument("--models", nargs="+", metavar="NAME",
                        help="model-zoo models to run (default: all of them)")
    args = parser.parse_args(argv)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    try:
        found = collect(args.repeat, tuple(args.jobs), args.models, progress=say)
    except ImportError as exc:
        say(f"batch_bench needs the onnx extra ({exc}): pip install 'relaypass[onnx]'")
        return 1
    print(f"relaypass batch {O3_FILE.name} on {found['models']} model-zoo models, "
          f"{found['cores']} cores, best of {found['repeat']}")
    for n, run in sorted(found["runs"].items()):
        print(f"  --jobs {n}: {run['models_per_second']:.3f} models/s ({run['seconds']:.1f} s; "
              f"workers' CPU {run['cpu_seconds']:.1f} s; load average {run['load']:.1f} before)")
    if found["speedup"] is not None:
        verdict = "meets" if found["speedup"] >= AIM else "below"
        print(f"  speedup {found['speedup']:.2f}x ({verdict} the aim of {AIM}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
