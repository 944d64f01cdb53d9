"""Microseconds per node for InferType on long chains, random DAGs, let chains and closures.

Issue 4's benchmark.  Programs (n operator calls each; all nodes are typed and
a typed copy is built):

* ``chain``, ``dag``: the chain and the random DAG of benchmarks/_workloads.py,
  the same programs benchmarks/passes_bench.py times every standard pass on;
* ``lets``: the chain in A-normal form, n nested lets whose variables carry
  no annotation, so that each type comes from its value;
* ``deferred``: a chain inside a closure whose parameter is unannotated, so
  that every relation waits for the call site and then runs in one cascade
  (the solver's slow path).

For each it prints microseconds per operator call at two sizes and the ratio
of the two (near 1.0 means linear scaling).  A time is the best CPU time of the
process over a few runs (benchmarks/_workloads.py says how).  Aim (issue 4):
at most 15 us per node, linear scaling.

Run: python benchmarks/infer_type_bench.py [--sizes 10000 100000] [--seed 0]
     [--programs chain lets dag deferred] [--repeat 3]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from _workloads import (
    BUDGET_SECONDS,
    WIDTH,
    best_cpu_seconds,
    chain,
    count_calls,
    dag,
    format_table,
    in_form,
    us,
)

from relaypass import relay
from relaypass.ir import Call, Function, IRModule, Let, Op
from relaypass.transform import get_pass

AIM_US = 15.0


def lets(n: int, seed: int = 0) -> IRModule:
    return in_form(chain(n, seed), "anf")


def deferred(n: int, seed: int = 0) -> IRModule:
    a = relay.var("a")
    negative, relu = Op.get("negative"), Op.get("nn.relu")
    e = a
    for i in range(n):
        e = Call(negative if i % 2 else relu, [e])
    g = relay.var("g")
    x = relay.var("x", shape=(1, WIDTH))
    return IRModule({"main": Function([x], Let(g, Function([a], e), g(x)))})


PROGRAMS: dict[str, Callable[[int, int], IRModule]] = {
    "chain": chain, "lets": lets, "dag": dag, "deferred": deferred,
}


def collect(sizes: Sequence[int], seed: int = 0, programs: Sequence[str] | None = None,
            repeat: int = 3) -> list[dict[str, object]]:
    """One row per program and size: ``program``, ``size``, ``nodes`` (operator calls),
    ``us_per_node``."""
    infer_type = get_pass("InferType")
    rows: list[dict[str, object]] = []
    for name in programs or list(PROGRAMS):
        for size in sizes:
            mod = PROGRAMS[name](size, seed)
            nodes = count_calls(mod)
            seconds, _ = best_cpu_seconds(lambda mod=mod: infer_type(mod), repeat)
            rows.append({"program": name, "size": size, "nodes": nodes,
                         "us_per_node": seconds * 1e6 / nodes})
            del mod
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000],
                        metavar=("SMALL", "LARGE"), help="operator calls (default: 10000 100000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random DAG")
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS),
                        metavar="NAME", help=f"programs to run (default: {' '.join(PROGRAMS)})")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per figure, the best is kept (fewer once they took "
                             f"{BUDGET_SECONDS:g} s)")
    args = parser.parse_args(argv)
    small, large = args.sizes
    rows = collect([small, large], args.seed, args.programs, args.repeat)
    table = []
    for name in args.programs:
        mine = {r["size"]: r["us_per_node"] for r in rows if r["program"] == name}
        ratio = mine[large] / mine[small]
        over = max(mine.values()) > AIM_US
        table.append([name, us(mine[small]), us(mine[large]), f"{ratio:.2f}",
                      "over the aim" if over else ""])
    print(f"InferType, us per operator call (aim <= {AIM_US:g}), best CPU time of "
          f"{args.repeat} runs")
    print(format_table(["program", f"{small:,}", f"{large:,}", "ratio", ""], table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
