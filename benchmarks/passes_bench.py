"""Microseconds per node for the standard passes on a long chain and on a random DAG.

Workloads (n operator calls each; "node" below means one of these calls):

* ``chain``: n elementwise/broadcast calls, each consuming the previous one,
  every other one also a shared constant (so FoldConstant sees constants,
  yet nothing can be folded);
* ``dag``: a random DAG of n calls (seeded), binary and unary operators over
  earlier nodes near and far, with constants mixed in; every node is live
  (the result is the tuple of all sinks).

Each pass runs on the input it is meant for: FoldConstant and ToANormalForm on
the dataflow program, ToGraphNormalForm and DeadCodeElimination on its
A-normal form (prepared once, not timed).  A time is the best CPU time of the
process over a few runs, so that other work on a shared machine does not
count.  Aim (issue 5): FoldConstant with nothing to fold and ToANormalForm at
most 10 us per node.

To add a pass, add a row to ``PASSES``: its name, the workload form it takes
("dataflow" or "anf") and its aim in microseconds per node (None for none).
``collect()`` returns the figures as rows (benchmarks/run_all.py uses it).

Run: python benchmarks/passes_bench.py [--chain 100000] [--dag 10000] [--repeat 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np

from relaypass import relay
from relaypass.ir import Call, Function, IRModule, Op, Tuple
from relaypass.transform import Pass

# (pass name, input form, aim in us per node)
PASSES: list[tuple[str, str, float | None]] = [
    ("FoldConstant", "dataflow", 10.0),
    ("ToANormalForm", "dataflow", 10.0),
    ("ToGraphNormalForm", "anf", None),
    ("DeadCodeElimination", "anf", None),
]

_FACTORIES = {
    "FoldConstant": "relaypass_std.fold_constant",
    "ToANormalForm": "relaypass_std.to_a_normal_form",
    "ToGraphNormalForm": "relaypass_std.to_graph_normal_form",
    "DeadCodeElimination": "relaypass_std.dead_code_elimination",
}

WIDTH = 4
BINARY = ("add", "subtract", "multiply", "maximum")
UNARY = ("nn.relu", "negative", "tanh")


def build_pass(name: str) -> Pass:
    """The pass from the registry, or from its module while it is not registered yet."""
    from relaypass.transform import get_pass, list_passes

    if name in {spec.name for spec in list_passes()}:
        return get_pass(name)
    import importlib

    return getattr(importlib.import_module(_FACTORIES[name]), name)()


def chain(n: int, seed: int) -> IRModule:
    x = relay.var("x", shape=(1, WIDTH))
    c = relay.const(np.ones((1, WIDTH), "float32"))
    add, relu, mul = Op.get("add"), Op.get("nn.relu"), Op.get("multiply")
    e = x
    for i in range(n):
        e = Call(add, [e, c]) if i % 3 == 0 else Call(relu, [e]) if i % 3 == 1 else Call(mul, [e, x])
    return IRModule({"main": Function([x], e)})


def dag(n: int, seed: int) -> IRModule:
    rng = random.Random(seed)
    binary = [Op.get(name) for name in BINARY]
    unary = [Op.get(name) for name in UNARY]
    params = [relay.var(f"p{i}", shape=(1, WIDTH)) for i in range(4)]
    consts = [relay.const(np.full((1, WIDTH), k, "float32")) for k in (0.5, 1.0, 2.0)]
    nodes: list = list(params)
    used: set = set()

    def pick():
        # Mostly recent nodes (a local, deep DAG), sometimes any earlier one.
        if rng.random() < 0.1:
            return nodes[rng.randrange(len(nodes))]
        return nodes[len(nodes) - 1 - min(int(rng.expovariate(1 / 8)), len(nodes) - 1)]

    for _ in range(n):
        r = rng.random()
        a = pick()
        if r < 0.5:
            b = pick()
            node = Call(rng.choice(binary), [a, b])
            used.update((a, b))
        elif r < 0.7:
            node = Call(rng.choice(binary), [a, rng.choice(consts)])
            used.add(a)
        else:
            node = Call(rng.choice(unary), [a])
            used.add(a)
        nodes.append(node)
    sinks = [node for node in nodes[len(params):] if node not in used]
    return IRModule({"main": Function(params, Tuple(sinks))})


def cpu_seconds(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
        del result
    return best


WORKLOADS: dict[str, Callable[[int, int], IRModule]] = {"chain": chain, "dag": dag}


def collect(sizes: dict[str, list[int]], repeat: int = 3, seed: int = 0) -> list[dict[str, object]]:
    """One row per pass, workload and size: ``pass``, ``form``, ``workload``, ``size``, ``us_per_node``.

    ``sizes`` maps a workload ("chain", "dag") to its sizes (operator calls).
    """
    to_anf = build_pass("ToANormalForm")
    programs = []
    for wname, wsizes in sizes.items():
        for n in wsizes:
            mod = WORKLOADS[wname](n, seed)
            programs.append((wname, n, {"dataflow": mod, "anf": to_anf(mod)}))
    rows: list[dict[str, object]] = []
    for name, form, _aim in PASSES:
        p = build_pass(name)
        for wname, n, forms in programs:
            mod = forms[form]
            seconds = cpu_seconds(lambda p=p, mod=mod: p(mod), repeat)
            rows.append({"pass": name, "form": form, "workload": wname, "size": n,
                         "us_per_node": seconds / n * 1e6})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, default=100_000, help="calls in the chain")
    parser.add_argument("--dag", type=int, default=10_000, help="calls in the random DAG")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    workloads = {"chain": args.chain, "dag": args.dag}
    rows = collect({name: [n] for name, n in workloads.items()}, args.repeat, args.seed)
    header = f"{'pass [input form]':<30}" + "".join(
        f"{name + ' (' + str(n) + ')':>18}" for name, n in workloads.items()
    )
    print("us per node (best CPU time of", args.repeat, "runs)")
    print(header + f"{'aim':>8}")
    for name, form, aim in PASSES:
        cells = [f"{r['us_per_node']:>18.2f}" for r in rows if r["pass"] == name]
        aim_text = f"{aim:>8.1f}" if aim is not None else f"{'-':>8}"
        print(f"{name + ' [' + form + ']':<30}" + "".join(cells) + aim_text)


if __name__ == "__main__":
    main()
