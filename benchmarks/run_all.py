"""Run every benchmark in benchmarks/ and write their figures as one markdown table.

Each benchmark script keeps its own command line and printout; this script
calls their ``collect()`` functions, each benchmark in a fresh process (so
that one benchmark's heap does not slow the next), and the figures are the
ones the scripts print.  The table has one row per figure (area, figure,
value, unit, notes):

* standard passes (passes_bench): microseconds per node of every standard pass
  at 10,000 and 100,000 nodes on a long chain and on a random DAG, each also as
  a multiple of the floor (a bare Python rebuild of the same program, measured
  in the same run), with the growth per node from the smaller size to the
  larger (near 1.0 when the cost is linear) and the aim; for the passes that
  rewrite, on chains made for them; the milliseconds of each on a
  ResNet-50-shaped graph; DeadCodeElimination on modules of many functions;
  and InferType on the programs only infer_type_bench has (let chains,
  deferred closures), the memory a program keeps alive built and typed, and
  InferType along a pipeline that changes one function at a time.  A second
  table gives every standard pass against the floor, and whether it meets the
  bar of issue 18 (at most 10x the floor at 100,000 nodes, at most 1.3x growth
  per node, on the chain and on the DAG);
* IR operations (ir_bench) and the interpreter (interp_bench), per node;
* the tokenizer and parser on hostile texts (tokenizer_bench): growth from n to 10 n chars;
* the pattern language (pattern_bench): rewrite with three callbacks, partition;
* the pass manager's overhead per pass (pass_manager_bench);
* cold start: fresh-process times of listing the plugins and of resolving a
  pass (pass_manager_bench);
* each light model's import and O3 pipeline times, with the time of every
  pass in the notes (model_bench; needs the onnx extra);
* ``relaypass batch``'s throughput on the light models, in models per second
  with 1 and 2 jobs, and the speedup (batch_bench; needs the onnx extra).

A full run takes a few minutes and writes benchmarks/RESULTS.md as well as
stdout; ``--quick`` (sizes 1,000 and 10,000, one run per figure) and
``--only`` print to stdout only unless ``-o`` says where to write.  ``--json``
prints every row, and the comparison with the floor, as JSON instead of
markdown (and writes RESULTS.md all the same on a full run).

Run: python benchmarks/run_all.py [--quick] [--only NAME ...] [-o PATH] [--json]
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"

#: The benchmarks, by the name ``--only`` takes (the script is NAME_bench.py).
BENCHMARKS = ("ir", "tokenizer", "infer_type", "passes", "pattern", "interp", "pass_manager",
              "model", "batch")


@dataclass(frozen=True)
class Settings:
    small: int
    large: int
    repeat: int
    manager_passes: int
    manager_repeat: int
    model_repeat: int
    batch_repeat: int = 1
    #: The sizes of the floor's sweep (None: passes_bench.SWEEP, 2,000 to 200,000).
    sweep: tuple[int, ...] | None = None


FULL = Settings(small=10_000, large=100_000, repeat=3, manager_passes=2000, manager_repeat=7,
                model_repeat=3, batch_repeat=2)
QUICK = Settings(small=1_000, large=10_000, repeat=1, manager_passes=500, manager_repeat=2,
                 model_repeat=1, batch_repeat=1, sweep=(1_000, 5_000, 10_000))

Row = tuple[str, str, str, str, str]  # area, figure, value, unit, notes

#: What a section gives back: its rows, and (passes only) the comparison with the floor.
Section = tuple[list[Row], list[dict[str, object]]]


def _bench(name: str):
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(f"{name}_bench")


def _n(size: int) -> str:
    return f"{size:,}"


def _us(value: float) -> str:
    return f"{value:.2f}"


# --- each benchmark's rows ------------------------------------------------------------------
def _per_size_rows(area: str, label: str, by_size: dict[int, float], s: Settings,
                   unit: str = "µs/node", note: str = "", aim: float | None = None,
                   floor: dict[int, float | None] | None = None, what: str = "nodes") -> list[Row]:
    rows: list[Row] = []
    per = what.rstrip("s")
    for size in (s.small, s.large):
        if size not in by_size:
            continue
        value = by_size[size]
        notes = [note]
        base = (floor or {}).get(size)
        if base:
            notes.append(f"{value / base:.1f}x the floor")
        if aim is not None:
            notes.append(f"aim <= {aim:g}" + (" (over)" if value > aim else ""))
        if size == s.large and s.small in by_size and by_size[s.small]:
            notes.append(f"{value / by_size[s.small]:.2f}x the time per {per} at {_n(s.small)}")
        rows.append((area, f"{label}, {_n(size)} {what}", _us(value), unit,
                     "; ".join(n for n in notes if n)))
    return rows


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def infer_type_rows(s: Settings) -> Section:
    # The chain and the DAG are in passes_bench's figures; these are InferType's own programs.
    bench = _bench("infer_type")
    found = bench.collect([s.small, s.large], programs=["lets", "deferred"], repeat=s.repeat)
    rows: list[Row] = []
    for program in dict.fromkeys(r["program"] for r in found):
        mine = {r["size"]: r["us_per_node"] for r in found if r["program"] == program}
        rows += _per_size_rows("standard passes", f"InferType on {program}", mine, s,
                               note="operator calls", aim=bench.AIM_US)
    for r in bench.memory([s.large]):
        over = " (over)" if r["typed"] > bench.AIM_BYTES_TYPED else ""
        rows.append(("memory", f"{r['program']}, {_n(r['size'])} nodes, as built",
                     f"{r['built']:.0f}", "bytes/node", "operator calls; Python heap kept alive"))
        rows.append(("memory", f"{r['program']}, {_n(r['size'])} nodes, typed by InferType",
                     f"{r['typed']:.0f}", "bytes/node",
                     f"the typed module alone; aim <= {bench.AIM_BYTES_TYPED}{over}"))
    inc = bench.incremental(repeat=s.repeat)
    over = " (over)" if inc["worst_ratio"] > bench.AIM_INCREMENTAL else ""
    rows.append(("standard passes",
                 f"InferType after a pass changed 1 of {inc['functions']} functions "
                 f"({inc['calls_per_function']} calls each), worst of {len(inc['later'])} runs",
                 f"{inc['worst_ratio']:.2f}", "x typing it alone",
                 f"{max(inc['later']) * 1e3:.2f} ms against {max(inc['alone']) * 1e3:.2f} ms; "
                 f"typing the whole module first: {inc['first'] * 1e3:.1f} ms; "
                 f"aim <= {bench.AIM_INCREMENTAL:g}{over}"))
    return rows, []


def passes_rows(s: Settings) -> Section:
    bench = _bench("passes")
    found = bench.collect(chain=[s.small, s.large], dag=[s.small, s.large], resnet=True,
                          rewrite=[s.small, s.large], repeat=s.repeat,
                          functions=[s.small, s.large])
    floor = {(r["workload"], r["size"]): r["us_per_node"] for r in found if r["pass"] == "floor"}
    rows: list[Row] = []
    for workload, what in (("chain", "chain"), ("dag", "random DAG")):
        by_size = {size: v for (w, size), v in floor.items() if w == workload}
        rows += _per_size_rows("standard passes", f"floor on {what} (a bare rebuild)", by_size,
                               s, note="operator calls; one visit and one slotted object per node")
    for name, form, aim in bench.PASSES:
        mine = [r for r in found if r["pass"] == name]
        alone = "without the InferType it requires" if form == "typed" else ""
        note = _join("operator calls", alone)
        for workload, what, aimed in (("chain", "chain", aim), ("dag", "random DAG", aim),
                                      ("rewrite", "chain with everything to rewrite", None)):
            by_size = {r["size"]: r["us_per_node"] for r in mine if r["workload"] == workload}
            rows += _per_size_rows("standard passes", f"{name} on {what} ({form} input)", by_size,
                                   s, note=note, aim=aimed,
                                   floor={n: floor.get((workload, n)) for n in by_size})
        per_function = {r["size"]: r["us_per_node"] for r in mine if r["workload"] == "functions"}
        rows += _per_size_rows("standard passes", f"{name} on a module of small functions",
                               per_function, s, unit="µs/function",
                               note="each calls the next", what="functions")
        for r in mine:
            if r["workload"] != "resnet50":
                continue
            fused = ""
            if "fused" in r:
                fused = (f"{r['fused']} fused functions; TVM 0.27's C++ FuseOps: about "
                         f"{bench.TVM_FUSE_OPS_RESNET50_MS:g} ms")
            rows.append(("standard passes",
                         f"{name} on ResNet-50 ({form} input, {r['nodes']} operator calls)",
                         f"{r['seconds'] * 1e3:.1f}", "ms",
                         _join(f"{_us(r['us_per_node'])} µs/node", alone, fused)))
    sweep = bench.floor_sweep(s.sweep or bench.SWEEP, s.repeat)
    for workload, what in (("chain", "chain"), ("dag", "random DAG")):
        by_size = sweep[workload]
        sizes = sorted(by_size)
        rows.append(("standard passes", f"floor on {what}, {_n(sizes[0])} to {_n(sizes[-1])} nodes",
                     f"{by_size[sizes[-1]] / by_size[sizes[-2]]:.2f}", "x",
                     "growth per node over the last step; µs/node at each size: "
                     + ", ".join(f"{_n(n)}: {_us(v)}" for n, v in by_size.items())))
    return rows, bench.against_floor(found, s.small, s.large)


def ir_rows(s: Settings) -> Section:
    found = _bench("ir").collect([s.small, s.large], repeat=s.repeat)
    rows: list[Row] = []
    for op in found[s.small]:
        mine = {n: found[n][op] * 1e6 for n in found}
        rows += _per_size_rows("IR", f"{op} a chain", mine, s, note="operator calls")
    return rows, []


def pattern_rows(s: Settings) -> Section:
    found = _bench("pattern").collect([s.small, s.large], s.repeat, resnet=True)
    rows: list[Row] = []
    for figure in ("rewrite, 3 callbacks", "partition", "MergeComposite, 5 entries"):
        mine = {r[2]: r[3] for r in found if r[0] == figure and r[1].startswith("chain")}
        sizes = sorted(mine)
        by_size = dict(zip((s.small, s.large), (mine[n] for n in sizes)))
        rows += _per_size_rows("patterns", f"{figure} on a chain", by_size, s,
                               note="operator calls")
        for r in found:
            if r[0] == figure and r[1] == "ResNet-50":
                rows.append(("patterns", f"{figure} on ResNet-50 ({r[2]} operator calls)",
                             f"{r[4]:.1f}", "ms", f"{_us(r[3])} µs/node"))
    return rows, []


def tokenizer_rows(s: Settings) -> Section:
    found = _bench("tokenizer").collect(s.large, s.repeat)
    rows: list[Row] = []
    for r in found:
        for what in ("tokenize", "parse"):
            ratio = r[f"{what}_10"] / r[f"{what}_1"]
            rows.append(("hostile text", f"{what} {r['input']}, {_n(s.large)} -> {_n(10 * s.large)} chars",
                         f"{ratio:.1f}", "x time", f"{r[f'{what}_10'] * 1e3:.1f} ms at the larger; "
                         "linear is 10, aim <= 12"))
    return rows, []


def interp_rows(s: Settings) -> Section:
    found = _bench("interp").collect(s.large, s.repeat)
    return [("interpreter", f"{r['program']}, {_n(s.large)} elementwise calls",
             _us(r["us_per_node"]), "µs/node", f"{r['seconds']:.3f} s in all")
            for r in found], []


def pass_manager_rows(s: Settings) -> Section:
    f = _bench("pass_manager").collect(s.manager_passes, s.manager_repeat)
    seq = f"no-op module pass in a Sequential of {f['passes']:,}"
    fresh = f"fresh process, best of {f['repeat']}"
    return [
        ("pass manager", f"{seq}, no instrument", _us(f["us_per_pass"]), "µs/pass",
         "aim <= 1.5"),
        ("pass manager", f"{seq}, one Python instrument", _us(f["us_per_pass_instrumented"]),
         "µs/pass", ""),
        ("cold start", "python -c pass", f"{f['python_ms']:.1f}", "ms", fresh),
        ("cold start", "python -c 'import numpy'", f"{f['numpy_ms']:.1f}", "ms", fresh),
        ("cold start", "list every pass and instrument", f"{f['listing_ms']:.1f}", "ms",
         f"{fresh}; {f['listing_ms'] / f['numpy_ms']:.2f}x numpy's import (aim <= 1.5x)"),
        ("cold start", f"import relaypass to a resolved get_pass({f['get_pass_name']!r})",
         f"{f['get_pass_ms']:.1f}", "ms", "measured inside a fresh process"),
    ], []


def model_rows(s: Settings) -> Section:
    bench = _bench("model")
    found = bench.collect(bench.MODELS, repeat=s.model_repeat,
                          progress=lambda name: _say(f"  {name} done"))
    rows: list[Row] = []
    for r in found:
        passes = ", ".join(f"{name} {ms:.1f}" for name, ms in r["passes"])
        rows.append(("light models", f"{r['model']}: import ({r['nodes']} nodes)",
                     f"{r['import_ms']:.1f}", "ms", ""))
        rows.append(("light models", f"{r['model']}: O3 pipeline", f"{r['total_ms']:.1f}", "ms",
                     f"{r['us_per_node']:.1f} µs/node; ms per pass: {passes}"))
    return rows, []


def batch_rows(s: Settings) -> Section:
    bench = _bench("batch")
    f = bench.collect(s.batch_repeat, progress=lambda text: _say(f"  {text}"))
    loads = ", ".join(f"{x:.1f}" for x in f["loads"])
    rows: list[Row] = []
    for jobs, run in sorted(f["runs"].items()):
        rows.append(("batch", f"relaypass batch O3 --model-zoo all ({f['models']} models), "
                              f"--jobs {jobs}", f"{run['models_per_second']:.3f}", "models/s",
                     f"{run['seconds']:.1f} s, best of {f['repeat']}; workers' CPU "
                     f"{run['cpu_seconds']:.1f} s"))
    if f["speedup"] is not None:
        aim = bench.AIM
        rows.append(("batch", f"--jobs {max(f['runs'])} over --jobs 1", f"{f['speedup']:.2f}",
                     "x", f"aim >= {aim:g} on {f['cores']} cores"
                          + (" (under)" if f["speedup"] < aim else "")
                          + f"; load average before each run: {loads}"))
    return rows, []


SECTIONS: dict[str, Callable[[Settings], Section]] = {
    "passes": passes_rows, "infer_type": infer_type_rows,
    "pass_manager": pass_manager_rows, "model": model_rows, "ir": ir_rows, "tokenizer": tokenizer_rows, "pattern": pattern_rows,
    "interp": interp_rows, "batch": batch_rows,
}


# --- the report -----------------------------------------------------------------------------
def _in_fresh_process(name: str, settings: Settings) -> Section:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(SECTIONS[name], (settings,))


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def machine() -> list[str]:
    """What the figures were measured on, from the running system."""
    from importlib import metadata

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh
                        if line.startswith("model name")), cpu)
    except OSError:
        pass

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    commit = ""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                                capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return [
        f"- machine: {platform.system()} {platform.release()} {platform.machine()}, {cpu}, "
        f"{os.cpu_count()} CPUs",
        f"- Python {platform.python_implementation()} {platform.python_version()}, numpy "
        f"{version('numpy')}, onnx {version('onnx')}",
        f"- relaypass {version('relaypass')}" + (f" at commit {commit}" if commit else ""),
    ]


def _missing_passes(rows: list[Row]) -> list[str]:
    """The standard passes (of the relaypass distribution) no figure is about."""
    from relaypass.transform import list_passes

    measured = " ".join(r[1] for r in rows if r[0] == "standard passes")
    return [s.name for s in list_passes()
            if s.distribution == "relaypass" and f"{s.name} on " not in measured]


def _cell(value: object, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def floor_table(bar: list[dict[str, object]], s: Settings) -> list[str]:
    """Markdown: every standard pass against the floor, on the chain and the DAG."""
    if not bar:
        return []
    small, large = _n(s.small), _n(s.large)
    lines = [
        "## Standard passes against the floor",
        "",
        f"Microseconds per node at {small} and {large} nodes, the multiple of the floor (a bare "
        "Python rebuild of the same program, measured in the same run) at "
        f"{large}, and the growth per node from {small} to {large}. The bar (issue 18): at most "
        "10x the floor and at most 1.3x growth, on the chain and on the DAG (and, for "
        "DeadCodeElimination, at most 1.3x growth per function on a module of many functions).",
        "",
        "The floor grows too, most on the DAG (see its rows below): not the collector (it is "
        "paused while the floor and every pass run) nor the order in which the workload "
        "builder allocated the nodes (a rebuild of the DAG, node after node in post-order, "
        "grows as much), but the processor's caches. The rebuild's working set (the nodes, "
        "their argument tuples, the memo table, the new objects) is a few megabytes at "
        f"{small} nodes and tens of megabytes at {large}, and the DAG's references to nodes "
        "built long before (one in ten picks any earlier node) turn most of its lookups into "
        "cache misses; the chain, whose inputs were built just before their users, grows far "
        "less. The same graph of plain slotted objects (about 60% of the bytes per node) grows "
        "1.2x from 10,000 to 100,000 nodes and 1.7x by 300,000: the step comes where the "
        "working set leaves the cache, whatever the code. The floor's sweep over many sizes "
        "(its rows below) shows where: flat while the working set fits the caches, rising "
        "once it leaves them; the floor's code does one memo look-up per edge and one object "
        "per node, so nothing in it grows with the program. Every pass pays this as well, so "
        "'÷ floor' is its growth over the floor's growth on the same program: the part of "
        "the growth that is the pass's own. 'bar' judges the raw growth, 'vs floor' the growth "
        "over the floor's.",
        "",
        f"| pass | chain {small} | chain {large} | x floor | growth | ÷ floor | DAG {small} "
        f"| DAG {large} | x floor | growth | ÷ floor | bar | vs floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for e in bar:
        cells = [str(e["pass"])]
        for workload in ("chain", "dag"):
            cells += [_cell(e.get(f"{workload}_{s.small}")), _cell(e.get(f"{workload}_{s.large}")),
                      _cell(e.get(f"{workload}_{s.large}_floor"), 1),
                      _cell(e.get(f"{workload}_growth")),
                      _cell(e.get(f"{workload}_growth_vs_floor"))]
        for key in ("ok", "ok_vs_floor"):
            ok = e.get(key)
            cells.append("-" if ok is None else ("met" if ok else "**missed**"))
        lines.append(f"| {' | '.join(cells)} |")
    return lines + [""]


def render(rows: list[Row], s: Settings, names: list[str], only: bool, seconds: float,
           bar: list[dict[str, object]] | None = None) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    quick = " --quick" if s is QUICK else ""
    only_text = "".join(f" --only {n}" for n in names) if only else ""
    lines = [
        "# relaypass benchmark results",
        "",
        f"`python benchmarks/run_all.py{quick}{only_text}` on {now}, in {seconds:.0f} s.",
        "",
        *machine(),
        "",
        "Per-node and per-pass figures are the best CPU time of the process over a few runs "
        "(other work on a shared machine does not count); fresh-process and model figures are "
        "the best wall time. A node is an operator call, except for the light models (an imported "
        "IR node). "
        "Each benchmark script in benchmarks/ prints its own figures in more detail.",
        "",
        *floor_table(bar or [], s),
        "## Every figure",
        "",
        "| area | figure | value | unit | notes |",
        "|---|---|---:|---|---|",
    ]
    lines += [f"| {' | '.join(cell.replace('|', '/') for cell in row)} |" for row in rows]
    if "passes" in names:
        missing = _missing_passes(rows)
        if missing:
            lines += ["", f"Standard passes without figures yet: {', '.join(missing)} "
                          "(add a row to PASSES in benchmarks/passes_bench.py)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="sizes 1,000 and 10,000 and one run per figure (about 10x faster)")
    parser.add_argument("--only", action="append", metavar="NAME", default=[],
                        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="also write the table here (default: benchmarks/RESULTS.md for a "
                             "full run, nowhere with --quick or --only)")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as JSON (rows, and every standard pass against "
                             "the floor) instead of markdown")
    args = parser.parse_args(argv)
    names = []
    for name in args.only or BENCHMARKS:
        name = name.removesuffix(".py").removesuffix("_bench")
        if name not in BENCHMARKS:
            parser.error(f"--only {name}: no such benchmark; choose from {', '.join(BENCHMARKS)}")
        names.append(name)
    settings = QUICK if args.quick else FULL
    order = [n for n in SECTIONS if n in names]  # the requested figures first, as the table lists them

    rows: list[Row] = []
    bar: list[dict[str, object]] = []
    start = time.perf_counter()
    for name in order:
        _say(f"run_all: {name}_bench ...")
        t = time.perf_counter()
        try:
            found, compared = _in_fresh_process(name, settings)
        except ImportError as exc:  # model_bench without the onnx extra
            _say(f"run_all: {name}_bench skipped: {exc}")
            continue
        rows += found
        bar += compared
        _say(f"run_all: {name}_bench done in {time.perf_counter() - t:.1f} s")
    text = render(rows, settings, order, bool(args.only), time.perf_counter() - start, bar)
    if args.json:
        keys = ("area", "figure", "value", "unit", "notes")
        sys.stdout.write(json.dumps({"rows": [dict(zip(keys, r)) for r in rows],
                                     "against_floor": bar}, indent=1) + "\n")
    else:
        sys.stdout.write(text)
    output = args.output or (None if args.quick or args.only else str(RESULTS))
    if output:
        Path(output).write_text(text, encoding="utf-8")
        _say(f"run_all: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
