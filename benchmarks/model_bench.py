"""Import time and the time of each pass of the O3 pipeline on the onnx package's light models.

For each of the nine models shipped in ``onnx/backend/test/data/light``
(AlexNet, DenseNet-121, Inception v1 and v2, ResNet-50, ShuffleNet,
SqueezeNet, VGG-19, ZFNet-512) it prints the number of IR nodes the importer
builds, the import time, the time of every pass the O3 pipeline
(``examples/pipelines/O3.toml``) runs, as PassTimingInstrument measures it,
the pipeline's total and its microseconds per imported node.  Each figure
is the best of ``--repeat`` runs (wall clock, on a machine that may be
shared).  With ``--interpret`` it also times one run of the interpreter on
the optimized module.

For scale: TVM 0.27 takes about 3 s for FoldConstant, LegalizeOps and
FuseOps on the same ResNet-50.

Run: python benchmarks/model_bench.py [--models resnet50 vgg19] [--repeat 3] [--interpret]
Needs the onnx extra: pip install 'relaypass[onnx]'.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np
from _workloads import format_table

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.transform import PassContext, get_instrument, load_pipeline

MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
          "shufflenet", "squeezenet", "vgg19", "zfnet512"]
O3_FILE = Path(__file__).resolve().parents[1] / "examples" / "pipelines" / "O3.toml"


def count_nodes(mod) -> int:
    seen = [0]

    def visit(_expr) -> None:
        seen[0] += 1

    post_order_visit(mod["main"], visit)
    return seen[0]


def time_import(onnx_model, from_onnx, repeat: int):
    best, mod = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        mod, _params = from_onnx(onnx_model)
        best = min(best, time.perf_counter() - start)
    return mod, best * 1e3


def time_pipeline(mod, pipeline, repeat: int):
    """Best time per pass run (in pipeline order) and of the whole pipeline, in ms."""
    spec = pipeline.spec
    best: list[tuple[str, float]] | None = None
    best_total = float("inf")
    optimized = None
    for _ in range(repeat):
        timing = get_instrument("PassTimingInstrument")
        gc.collect()
        with PassContext(opt_level=spec.opt_level, required_pass=spec.required_pass,
                         disabled_pass=spec.disabled_pass, config=dict(spec.config),
                         instruments=[*pipeline.instruments, timing]):
            optimized = pipeline.sequential(mod)
            records = timing.records()  # leaving the context clears them, as in TVM
        total = sum(r.total_ms for r in records if r.parent is None)
        passes = [(r.name, r.total_ms) for r in records if r.depth == 1] or \
                 [(r.name, r.total_ms) for r in records if r.parent is None]
        if best is None:
            best = passes
        else:
            best = [(name, min(ms, old)) for (name, ms), (_, old) in zip(passes, best)]
        best_total = min(best_total, total)
    return optimized, best or [], best_total


def collect(models: list[str], repeat: int = 3, interpret: bool = False,
            progress=None) -> list[dict[str, object]]:
    """One row per model: ``model``, ``nodes``, ``import_ms``, ``passes`` (each pass run of the
    O3 pipeline in order, as (name, ms)), ``total_ms``, ``us_per_node`` and, with
    ``interpret``, ``interp_ms``.  Needs the onnx extra (ImportError otherwise);
    ``progress(name)`` is called after each model."""
    import onnx

    from relaypass.frontend import from_onnx

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    pipeline = load_pipeline(O3_FILE)
    rows: list[dict[str, object]] = []
    for name in models:
        model = onnx.load(str(light / f"light_{name}.onnx"))
        mod, import_ms = time_import(model, from_onnx, repeat)
        nodes = count_nodes(mod)
        optimized, passes, total_ms = time_pipeline(mod, pipeline, repeat)
        row: dict[str, object] = {"model": name, "nodes": nodes, "import_ms": import_ms,
                                  "passes": passes, "total_ms": total_ms,
                                  "us_per_node": 1e3 * total_ms / nodes}
        if interpret:
            inits = {t.name for t in model.graph.initializer}
            (data,) = [i for i in model.graph.input if i.name not in inits]
            shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
            x = np.random.default_rng(0).standard_normal(shape, dtype=np.float32)
            run = relay.create_executor(mod=optimized).evaluate()
            start = time.perf_counter()
            run(x)
            row["interp_ms"] = (time.perf_counter() - start) * 1e3
        rows.append(row)
        if progress is not None:
            progress(name)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=MODELS, choices=MODELS, metavar="NAME",
                        help=f"models to run (default: all of {', '.join(MODELS)})")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is shown)")
    parser.add_argument("--interpret", action="store_true",
                        help="also time one interpreter run of the optimized module")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("model_bench needs the onnx extra: pip install 'relaypass[onnx]'", file=sys.stderr)
        return 1
    found = collect(args.models, args.repeat, args.interpret,
                    progress=lambda name: print(f"{name}: done", file=sys.stderr, flush=True))
    header = [p for p, _ in found[0]["passes"]] if found else []
    rows = []
    for f in found:
        row = [f["model"], str(f["nodes"]), f"{f['import_ms']:.1f}",
               *(f"{ms:.1f}" for _, ms in f["passes"]), f"{f['total_ms']:.1f}",
               f"{f['us_per_node']:.1f}"]
        if args.interpret:
            row.append(f"{f['interp_ms']:.0f}")
        rows.append(row)
    columns = ["model", "nodes", "import ms", *(f"{p} ms" for p in header or []),
               "O3 ms", "us/node"]
    if args.interpret:
        columns.append("interp ms")
    print(f"O3 pipeline ({O3_FILE.name}), best of {args.repeat}; times in ms")
    print(format_table(columns, rows))
    print("For scale: TVM 0.27 takes about 3 s for FoldConstant, LegalizeOps and FuseOps on "
          "ResNet-50.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
