"""Microseconds per node for every standard pass, on a long chain, a random DAG and ResNet-50.

One table, one row per standard pass: the input form it runs on, microseconds
per operator call on a chain at each ``--chain`` size and the ratio of the
last to the first (near 1.0 means linear cost), on a random DAG, and
milliseconds on a ResNet-50-shaped graph (the programs are described in
benchmarks/_workloads.py).  Each pass runs on the input it is meant for,
prepared once and not timed:

* ``dataflow``: the program as built (InferType, FoldConstant, ToANormalForm);
* ``anf``: its A-normal form (ToGraphNormalForm, DeadCodeElimination);
* ``typed``: the program typed by InferType, for the passes that require it
  (FuseOps at fuse level 2, SimplifyInference, EliminateCommonSubexpr,
  SimplifyExpr).

A pass that requires InferType (DeadCodeElimination does too, as in Relay,
though it needs no types) has its function alone timed, without the
InferType the pass manager would run first.

On the chain and the DAG most passes find little or nothing to rewrite, which
is the cost of looking.  A second table times the passes that rewrite on
chains made for them, where everything is rewritten: SimplifyInference a chain
of ``batch_norm(...)[0]`` and ``dropout(...)[0]``, EliminateCommonSubexpr two
identical half chains joined at the end, SimplifyExpr a chain of ``1 * x`` and
``x + 0``.

Aims (issues 4, 5 and 6), in microseconds per node: InferType 15,
FoldConstant (with nothing to fold) and ToANormalForm 10, FuseOps 20.  For
scale: TVM 0.27's C++ FuseOps takes about 21 ms on ResNet-50.

Every per-node figure is also a multiple of the *floor* measured on the same
program in the same run (benchmarks/_workloads.py: one visit of each node and
one slotted object per node), and the growth from the smallest size to the
largest is the ratio of the two per-node figures.  The bar (issue 18): every
standard pass at most 10x the floor at the largest size and at most 1.3x growth,
on the chain and on the DAG.  DeadCodeElimination, whose module-level analysis
could grow with the number of global functions, is also timed on a module of
``--functions`` small functions (microseconds per function).

To add a pass, add a row to ``PASSES``: its name, its input form and its aim
(None for none), and its options to ``OPTIONS`` if it needs any.  ``collect()``
returns the figures as rows (benchmarks/run_all.py uses it); ``--json`` prints
them as JSON instead of the tables.

Run: python benchmarks/passes_bench.py [--chain 10000 100000] [--dag 10000 100000]
     [--functions 10000 100000] [--repeat 3] [--seed 0] [--passes NAME ...]
     [--no-resnet] [--no-rewrite] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from _workloads import (
    BUDGET_SECONDS,
    WIDTH,
    WORKLOADS,
    best_cpu_seconds,
    composite_table,
    count_calls,
    count_primitive,
    floor_seconds,
    format_table,
    in_form,
    us,
)

from relaypass import relay
from relaypass.gc_pause import gc_paused
from relaypass.ir import Function, IRModule
from relaypass.transform import FunctionPass, Pass, PassContext, get_pass

# (pass name, input form, aim in us per node)
PASSES: tuple[tuple[str, str, float | None], ...] = (
    ("InferType", "dataflow", 15.0),
    ("FoldConstant", "dataflow", 10.0),
    ("ToANormalForm", "dataflow", 10.0),
    ("ToGraphNormalForm", "anf", None),
    ("DeadCodeElimination", "anf", None),
    ("FuseOps", "typed", 20.0),
    ("SimplifyInference", "typed", None),
    ("EliminateCommonSubexpr", "typed", None),
    ("SimplifyExpr", "typed", None),
    ("AnnotateSpans", "dataflow", None),
    ("DefuseOps", "typed", None),
    ("AnnotateTarget", "typed", None),
    ("MergeCompilerRegions", "typed", None),
    ("PartitionGraph", "typed", None),
    ("MergeComposite", "typed", None),
    ("InlineGlobals", "dataflow", None),
    ("LambdaLift", "typed", None),
    ("RemoveUnusedFunctions", "dataflow", None),
    ("EtaExpand", "dataflow", None),
    ("ToBasicBlockNormalForm", "anf", None),
)

#: Options of the passes that need some: MergeComposite runs a five-entry table.
OPTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "MergeComposite": lambda: {"pattern_table": composite_table()},
    "EtaExpand": lambda: {"expand_global_var": True},
}

#: The passes also timed on a module of many small global functions.
FUNCTION_PASSES = ("DeadCodeElimination",)

#: The bar of issue 18, at the largest size: times the floor, and growth per node.
MAX_FLOOR_MULTIPLE = 10.0
MAX_GROWTH = 1.3

TVM_FUSE_OPS_RESNET50_MS = 21.0


# --- chains on which a pass rewrites everything -------------------------------------------
def rewrite_simplify_inference(n: int) -> IRModule:
    """n calls, each a ``batch_norm`` or a ``dropout`` followed by its projection."""
    x = relay.var("x", shape=(1, WIDTH, 2))
    params = [relay.var(name, shape=(WIDTH,)) for name in ("gamma", "beta", "mean", "var")]
    e = x
    for i in range(n):
        e = relay.nn.batch_norm(e, *params)[0] if i % 2 else relay.nn.dropout(e)
    return IRModule.from_expr(Function([x, *params], e))


def rewrite_eliminate_common_subexpr(n: int) -> IRModule:
    """Two identical chains of n/2 calls joined at the end: one of them is merged away."""
    x = relay.var("x", shape=(1, WIDTH))
    c = relay.const(np.ones((1, WIDTH), "float32"))

    def half() -> relay.Expr:
        e = x
        for i in range(n // 2):
            e = relay.add(e, c) if i % 2 else relay.nn.relu(e)
        return e

    return IRModule.from_expr(Function([x], relay.subtract(half(), half())))


def rewrite_simplify_expr(n: int) -> IRModule:
    """n calls of ``1 * x`` and ``x + 0`` with scalar constants: all of them are eliminated."""
    x = relay.var("x", shape=(1, WIDTH))
    zero, one = relay.const(0.0), relay.const(1.0)
    e = x
    for i in range(n):
        e = relay.add(e, zero) if i % 2 else relay.multiply(one, e)
    return IRModule.from_expr(Function([x], relay.nn.relu(e)))


REWRITES: dict[str, Callable[[int], IRModule]] = {
    "SimplifyInference": rewrite_simplify_inference,
    "EliminateCommonSubexpr": rewrite_eliminate_common_subexpr,
    "SimplifyExpr": rewrite_simplify_expr,
}


# --- measuring ------------------------------------------------------------------------------
def runner(p: Pass, mod: IRModule) -> Callable[[], Any]:
    """A call that runs ``p`` on ``mod`` and nothing else.

    Called as ``p(mod)``, a pass that requires InferType would type the module
    again first; its function is called on the typed ``main`` instead, with the
    cycle collector paused as ``p(mod)`` pauses it.
    """
    if p.info.required:
        main, ctx = mod["main"], PassContext.current()

        def run() -> Any:
            with gc_paused():
                if isinstance(p, FunctionPass):
                    return p.pass_func(main, mod, ctx)
                return p.pass_func(mod, ctx)

        return run
    return lambda: p(mod)


def _measure(p: Pass, name: str, form: str, workload: str, size: int, mod: IRModule,
             calls: int, repeat: int) -> dict[str, object]:
    seconds, out = best_cpu_seconds(runner(p, mod), repeat)
    row: dict[str, object] = {"pass": name, "form": form, "workload": workload, "size": size,
                              "nodes": calls, "seconds": seconds,
                              "us_per_node": seconds * 1e6 / calls}
    if name == "FuseOps" and workload == "resnet50":
        row["fused"] = count_primitive(out)
    return row


def collect(chain: Sequence[int] = (10_000, 100_000), dag: Sequence[int] = (10_000, 100_000),
            resnet: bool = True, rewrite: Sequence[int] = (), repeat: int = 3, seed: int = 0,
            passes: Iterable[str] | None = None,
            functions: Sequence[int] = ()) -> list[dict[str, object]]:
    """One row per pass, workload and size, and one per workload and size for the floor.

    Each row has ``pass`` ("floor" for the floor), ``form``, ``workload``
    ("chain", "dag", "resnet50", "rewrite" or "functions"), ``size`` (the
    calls, or functions, asked for; 0 for ResNet-50), ``nodes`` (the operator
    calls of the program; the global functions for "functions"), ``seconds``
    and ``us_per_node``; FuseOps on ResNet-50 also ``fused``, the number of
    primitive functions it made.  Programs, and their forms, are built one at
    a time (the program as built and one form of it alive at once), so that
    the heap the collector scans during a figure is about the program the
    pass runs on.
    """
    wanted = set(passes) if passes is not None else None
    chosen = [(name, form) for name, form, _aim in PASSES if wanted is None or name in wanted]
    built = {name: get_pass(name, **OPTIONS[name]()) if name in OPTIONS else get_pass(name)
             for name, _form in chosen}
    programs = [("chain", n) for n in chain] + [("dag", n) for n in dag]
    programs += [("resnet50", 0)] if resnet else []
    rows: list[dict[str, object]] = []
    for workload, size in programs:
        dataflow = WORKLOADS[workload](size, seed)
        calls = count_calls(dataflow)
        seconds = floor_seconds(dataflow, repeat)
        rows.append({"pass": "floor", "form": "dataflow", "workload": workload, "size": size,
                     "nodes": calls, "seconds": seconds, "us_per_node": seconds * 1e6 / calls})
        for form in dict.fromkeys(f for _name, f in chosen):
            mod = in_form(dataflow, form)
            for name, _form in [c for c in chosen if c[1] == form]:
                rows.append(_measure(built[name], name, form, workload, size, mod, calls,
                                     repeat))
            del mod
        del dataflow
    for name, _form in chosen:
        if name not in REWRITES:
            continue
        for size in rewrite:
            mod = in_form(REWRITES[name](size), "typed")
            rows.append(_measure(built[name], name, "typed", "rewrite", size, mod,
                                 count_calls(mod), repeat))
    for size in functions:
        for name, form in chosen:
            if name not in FUNCTION_PASSES:
                continue
            mod = in_form(WORKLOADS["functions"](size, seed), form)
            rows.append(_measure(built[name], name, form, "functions", size, mod, len(mod),
                                 repeat))
            del mod
    return rows


def against_floor(rows: list[dict[str, object]], small: int, large: int) -> list[dict[str, object]]:
    """Per pass: microseconds per node on the chain and the DAG at both sizes, the multiple
    of the floor at each, and the growth per node from ``small`` to ``large``; ``ok`` says
    whether the pass meets issue 18's bar on every workload it ran on."""
    floor = {(r["workload"], r["size"]): r["us_per_node"] for r in rows if r["pass"] == "floor"}
    out = []
    for name in dict.fromkeys(str(r["pass"]) for r in rows if r["pass"] != "floor"):
        entry: dict[str, object] = {"pass": name}
        ok = True
        seen = False
        for workload in ("chain", "dag"):
            for size in (small, large):
                value = _figure(rows, name, workload, size)
                base = floor.get((workload, size))
                entry[f"{workload}_{size}"] = value
                entry[f"{workload}_{size}_floor"] = value / base if value and base else None
            lo, hi = entry[f"{workload}_{small}"], entry[f"{workload}_{large}"]
            growth = hi / lo if lo and hi else None
            entry[f"{workload}_growth"] = growth
            multiple = entry[f"{workload}_{large}_floor"]
            if growth is not None and multiple is not None:
                seen = True
                ok = ok and growth <= MAX_GROWTH and multiple <= MAX_FLOOR_MULTIPLE
        per_function = [r for r in rows if r["pass"] == name and r["workload"] == "functions"]
        if len(per_function) > 1:
            sizes = sorted(per_function, key=lambda r: r["size"])
            entry["functions_growth"] = sizes[-1]["us_per_node"] / sizes[0]["us_per_node"]
            ok = ok and entry["functions_growth"] <= MAX_GROWTH
        entry["ok"] = ok if seen else None
        out.append(entry)
    return out


# --- printing -------------------------------------------------------------------------------
def _figure(rows: list[dict[str, object]], name: str, workload: str, size: int) -> float | None:
    """The microseconds per node of ``name`` on that workload and size, if measured."""
    for r in rows:
        if r["pass"] == name and r["workload"] == workload and r["size"] == size:
            return r["us_per_node"]  # type: ignore[return-value]
    return None


def report(rows: list[dict[str, object]], chain: Sequence[int], dag: Sequence[int],
           rewrite: Sequence[int], functions: Sequence[int] = ()) -> str:
    """The tables ``main`` prints."""
    rows_of_passes = [r for r in rows if r["pass"] != "floor"]
    names = list(dict.fromkeys(str(r["pass"]) for r in rows_of_passes))
    aims = {name: aim for name, _form, aim in PASSES}
    forms = {name: form for name, form, _aim in PASSES}
    resnet = {r["pass"]: r for r in rows_of_passes if r["workload"] == "resnet50"}
    floor = {(r["workload"], r["size"]): r["us_per_node"] for r in rows if r["pass"] == "floor"}
    columns = ["pass", "input"]
    for what, sizes in (("chain", chain), ("DAG", dag)):
        for n in sizes:
            columns += [f"{what} {n:,}", "x floor"]
        columns += ["growth"] if len(sizes) > 1 else []
    columns += ["ResNet-50 ms"] if resnet else []
    columns += ["aim", ""]
    table = [["floor", "", *[cell for what, sizes in (("chain", chain), ("dag", dag))
                            for cell in _floor_cells(floor, what, sizes)],
              *(["-"] if resnet else []), "", ""]]
    missed = []
    for name in names:
        cells = [name, forms[name]]
        worst = None
        for workload, sizes in (("chain", chain), ("dag", dag)):
            values = [_figure(rows, name, workload, n) for n in sizes]
            for n, v in zip(sizes, values):
                base = floor.get((workload, n))
                cells += [us(v), f"{v / base:.1f}" if v and base else "-"]
            if len(sizes) > 1:
                cells.append(f"{values[-1] / values[0]:.2f}" if values[0] and values[-1] else "-")
            worst = max([worst or 0.0, *(v for v in values if v is not None)])
        if resnet:
            cells.append(f"{resnet[name]['seconds'] * 1e3:.1f}" if name in resnet else "-")
        aim = aims[name]
        over = aim is not None and worst is not None and worst > aim
        if over:
            missed.append(f"{name} {worst:.2f} > {aim:g}")
        cells += ["-" if aim is None else f"{aim:g}", "over the aim" if over else ""]
        table.append(cells)
    lines = [format_table(columns, table)]
    if len(chain) > 1 and len(dag) > 1:
        bar = against_floor(rows, min(min(chain), min(dag)), max(max(chain), max(dag)))
        failing = [e["pass"] for e in bar if e["ok"] is False]
        lines.append(f"issue 18's bar (at most {MAX_FLOOR_MULTIPLE:g}x the floor at the largest "
                     f"size, at most {MAX_GROWTH:g}x growth per node, chain and DAG): "
                     + ("met by every pass" if not failing else "missed by " + ", ".join(failing)))
    if resnet:
        sample = next(iter(resnet.values()))
        text = f"ResNet-50: {sample['nodes']} operator calls"
        if "FuseOps" in resnet:
            fuse = resnet["FuseOps"]
            text += (f"; FuseOps makes {fuse['fused']} primitive functions in "
                     f"{fuse['seconds'] * 1e3:.1f} ms, {fuse['us_per_node']:.2f} us per call "
                     f"(TVM 0.27's C++ FuseOps: about {TVM_FUSE_OPS_RESNET50_MS:g} ms)")
        lines.append(text)
    lines.append("all aims met" if not missed else "aims missed: " + "; ".join(missed))
    rewriting = [name for name in names if name in REWRITES]
    if rewrite and rewriting:
        lines += ["", "us per node on a chain made for the pass, where it rewrites everything"]
        lines.append(format_table(
            ["pass", *(f"chain {n:,}" for n in rewrite)],
            [[name, *(us(_figure(rows, name, "rewrite", n)) for n in rewrite)]
             for name in rewriting]))
    per_function = [name for name in names if name in FUNCTION_PASSES]
    if functions and per_function:
        lines += ["", "us per global function on a module of small functions calling each other"]
        lines.append(format_table(
            ["pass", *(f"{n:,} functions" for n in functions), "growth"],
            [[name, *(us(_figure(rows, name, "functions", n)) for n in functions),
              _growth(rows, name, "functions", functions)] for name in per_function]))
    return "\n".join(lines)


def _floor_cells(floor: dict, workload: str, sizes: Sequence[int]) -> list[str]:
    cells = []
    for n in sizes:
        cells += [us(floor.get((workload, n))), "1.0"]
    if len(sizes) > 1:
        lo, hi = floor.get((workload, sizes[0])), floor.get((workload, sizes[-1]))
        cells.append(f"{hi / lo:.2f}" if lo and hi else "-")
    return cells


def _growth(rows: list[dict[str, object]], name: str, workload: str, sizes: Sequence[int]) -> str:
    lo, hi = _figure(rows, name, workload, sizes[0]), _figure(rows, name, workload, sizes[-1])
    return f"{hi / lo:.2f}" if lo and hi else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, nargs="+", default=[10_000, 100_000], metavar="N",
                        help="calls in the chain, one figure per size (default: 10000 100000)")
    parser.add_argument("--dag", type=int, nargs="+", default=[10_000, 100_000], metavar="N",
                        help="calls in the random DAG, one figure per size (default: 10000 "
                             "100000)")
    parser.add_argument("--functions", type=int, nargs="*", default=[10_000, 100_000],
                        metavar="N", help="global functions in the module of many functions "
                                          f"({', '.join(FUNCTION_PASSES)}; default: 10000 "
                                          "100000; none to leave it out)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per figure, the best is kept (fewer once they took "
                             f"{BUDGET_SECONDS:g} s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random DAG")
    parser.add_argument("--passes", nargs="+", metavar="NAME", choices=[p[0] for p in PASSES],
                        help="only these passes (default: all)")
    parser.add_argument("--no-resnet", action="store_true", help="leave out ResNet-50")
    parser.add_argument("--no-rewrite", action="store_true",
                        help="leave out the chains made for a pass to rewrite")
    parser.add_argument("--json", action="store_true",
                        help="print the rows (and the comparison with the floor) as JSON")
    args = parser.parse_args(argv)
    chain, dag = sorted(args.chain), sorted(args.dag)
    rewrite = [] if args.no_rewrite else chain
    rows = collect(chain, dag, not args.no_resnet, rewrite, args.repeat, args.seed,
                   args.passes, sorted(args.functions))
    if args.json:
        sizes = sorted({*chain, *dag})
        print(json.dumps({"rows": rows,
                          "against_floor": against_floor(rows, sizes[0], sizes[-1])}, indent=1))
        return 0
    print(f"us per node (operator call), best CPU time of {args.repeat} runs; x floor = the "
          "figure over the floor's on the same program; growth = per node at the largest "
          "size over the smallest")
    print(report(rows, chain, dag, rewrite, sorted(args.functions)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
