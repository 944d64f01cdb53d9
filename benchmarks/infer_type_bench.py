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

Two more figures (issue 18):

* memory: the bytes per operator call a program keeps alive once built, and
  once typed (the typed module alone, the untyped one dropped), on the chain
  and the DAG; aim at most 250 bytes per typed node;
* incremental typing: a module of ``--functions`` functions of
  ``--function-calls`` calls each is typed, then ten module passes each replace
  one function by an untyped copy with one operator changed, and InferType
  runs after each.  Each of those runs is compared with typing the changed
  function alone (a module holding only it); aim at most 1.5x.  Both take
  under a millisecond, so each is the best of at least 20 runs.

Run: python benchmarks/infer_type_bench.py [--sizes 10000 100000] [--seed 0]
     [--programs chain lets dag deferred] [--repeat 3] [--functions 100]
     [--function-calls 200] [--parts speed memory incremental]
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
    retained_bytes,
    us,
)

from relaypass import relay
from relaypass.ir import Call, Function, GlobalVar, IRModule, Let, Op
from relaypass.transform import get_pass, module_pass

AIM_US = 15.0
AIM_BYTES_TYPED = 250
AIM_INCREMENTAL = 1.5
PARTS = ("speed", "memory", "incremental")
SHORT_RUNS = 20  # the fewest runs whose best is a figure of the incremental part


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


def memory(sizes: Sequence[int], seed: int = 0) -> list[dict[str, object]]:
    """Bytes per operator call of the chain and the DAG, as built and typed (``built``, ``typed``)."""
    infer_type = get_pass("InferType")
    rows: list[dict[str, object]] = []
    for name, build in (("chain", chain), ("dag", dag)):
        for size in sizes:
            built, mod = retained_bytes(lambda build=build, size=size: build(size, seed))
            nodes = count_calls(mod)
            del mod
            typed, _ = retained_bytes(lambda build=build, size=size: infer_type(build(size, seed)))
            rows.append({"program": name, "size": size, "nodes": nodes,
                         "built": built / nodes, "typed": typed / nodes})
    return rows


# --- incremental typing along a pipeline ----------------------------------------------------
def _function(calls: int, variant: int) -> Function:
    """A chain of ``calls`` unary calls over an annotated parameter; ``variant`` picks which
    call is a ``sigmoid`` instead of a ``tanh`` (the type stays the same)."""
    x = relay.var("x", shape=(1, WIDTH))
    relu, tanh, sigmoid = Op.get("nn.relu"), Op.get("tanh"), Op.get("sigmoid")
    e = x
    for i in range(calls):
        op = relu if i % 2 else (sigmoid if i == (variant * 2) % calls else tanh)
        e = Call(op, [e])
    return Function([x], e)


def functions_module(count: int, calls: int) -> IRModule:
    """``count`` functions ``f0 ...`` (no return type: each one's type is inferred) and a
    ``main`` that calls them one after the other."""
    mod = IRModule()
    gvs = [GlobalVar(f"f{i}") for i in range(count)]
    for gv in gvs:
        mod[gv] = _function(calls, 0)
    x = relay.var("x", shape=(1, WIDTH))
    e = x
    for gv in gvs:
        e = Call(gv, [e])
    mod["main"] = Function([x], e)
    return mod


def incremental(count: int = 100, calls: int = 200, passes: int = 10,
                repeat: int = 3) -> dict[str, object]:
    """InferType, then ``passes`` module passes that each change one function, each followed
    by InferType: the seconds of the first run, of each later one and of typing each changed
    function alone."""
    infer_type = get_pass("InferType")
    changes = []
    for k in range(passes):
        name = f"f{(k * 37) % count}"

        def change(mod, ctx, name=name, k=k):
            out = mod.copy()
            out[name] = _function(calls, k + 1)
            return out

        changes.append((name, module_pass(change, opt_level=0, name=f"Change{k}")))
    start = functions_module(count, calls)
    first, mod = best_cpu_seconds(lambda: infer_type(start), repeat)
    # The later runs take under a millisecond: one of them preempted on a busy machine would
    # decide a ratio, so each is the best of more runs (still well under a second).
    short = max(repeat, SHORT_RUNS)
    later = []
    alone = []
    for name, change in changes:
        changed = change(mod)
        seconds, typed = best_cpu_seconds(lambda changed=changed: infer_type(changed), short)
        later.append(seconds)
        single = IRModule({name: changed[name]})
        alone.append(best_cpu_seconds(lambda single=single: infer_type(single), short)[0])
        mod = typed
    ratios = [a / b for a, b in zip(later, alone)]
    return {"functions": count, "calls_per_function": calls, "first": first, "later": later,
            "alone": alone, "ratios": ratios, "worst_ratio": max(ratios)}


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
    parser.add_argument("--functions", type=int, default=100,
                        help="functions of the module typed incrementally (default: 100)")
    parser.add_argument("--function-calls", type=int, default=200,
                        help="operator calls in each of those functions (default: 200)")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        metavar="PART", help="figures to print: speed (us per node), memory "
                        "(bytes per node), incremental (typing along a pipeline); default: all")
    args = parser.parse_args(argv)
    small, large = args.sizes
    blocks = []
    if "speed" in args.parts:
        blocks.append(_speed(args, small, large))
    if "memory" in args.parts:
        blocks.append(_memory(args, small, large))
    if "incremental" in args.parts:
        blocks.append(_incremental(args))
    print("\n\n".join(blocks))
    return 0


def _speed(args: argparse.Namespace, small: int, large: int) -> str:
    rows = collect([small, large], args.seed, args.programs, args.repeat)
    table = []
    for name in args.programs:
        mine = {r["size"]: r["us_per_node"] for r in rows if r["program"] == name}
        ratio = mine[large] / mine[small]
        over = max(mine.values()) > AIM_US
        table.append([name, us(mine[small]), us(mine[large]), f"{ratio:.2f}",
                      "over the aim" if over else ""])
    return (f"InferType, us per operator call (aim <= {AIM_US:g}), best CPU time of "
            f"{args.repeat} runs\n"
            + format_table(["program", f"{small:,}", f"{large:,}", "ratio", ""], table))


def _memory(args: argparse.Namespace, small: int, large: int) -> str:
    return (f"bytes per operator call kept alive (aim <= {AIM_BYTES_TYPED} once typed)\n"
            + format_table(["program", "size", "built", "typed"],
                           [[r["program"], f"{r['size']:,}", f"{r['built']:.0f}",
                             f"{r['typed']:.0f}"]
                            for r in memory([small, large], args.seed)]))


def _incremental(args: argparse.Namespace) -> str:
    inc = incremental(args.functions, args.function_calls, repeat=args.repeat)
    return (f"InferType along a pipeline: {inc['functions']} functions of "
            f"{inc['calls_per_function']} calls; the first run {inc['first'] * 1e3:.2f} ms; after "
            f"each pass that changes one function (ms), against typing that function alone:\n"
            + format_table(["run", "ms", "alone ms", "ratio"],
                           [[str(k + 1), f"{a * 1e3:.3f}", f"{b * 1e3:.3f}", f"{r:.2f}"]
                            for k, (a, b, r) in enumerate(zip(inc["later"], inc["alone"],
                                                              inc["ratios"]))])
            + f"\nworst ratio {inc['worst_ratio']:.2f} (aim <= {AIM_INCREMENTAL:g})")

if __name__ == "__main__":
    raise SystemExit(main())
