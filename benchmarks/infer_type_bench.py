"""Microseconds per node for InferType on long chains and on random dataflow DAGs.

Programs (all nodes of every program are typed, and a typed copy is built):

* ``chain``: n elementwise/broadcast calls, each consuming the previous one;
* ``lets``: the same chain in A-normal form, n nested unannotated lets;
* ``dag``: a random DAG of n calls (seeded), mixing binary broadcasting ops,
  unary ops, reductions and concatenations of earlier nodes, reusing nodes
  near and far (every node is live: the result is the tuple of all sinks);
* ``deferred``: the chain inside a closure whose parameter is unannotated, so
  every relation waits for the call site and then runs in one cascade (the
  solver's slow path).

For each it prints microseconds per node at 10,000 and 100,000 calls and the
ratio of the two (near 1.0 means linear scaling).  A time is the best CPU
time of the process over a few runs, so that other work on a shared machine
does not count.  Aim (issue 4): at most 15 us per node, linear scaling.

Run: python benchmarks/infer_type_bench.py [--sizes 10000 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Callable

from relaypass import relay
from relaypass.errors import UnknownOpError
from relaypass.functor import post_order_visit
from relaypass.ir import Call, Function, IRModule, Let, Op, Tuple, Var
from relaypass.ir.op import make_call
from relaypass_std.infer_type import infer_type_module

AIM_US = 15.0
WIDTH = 16
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum")
UNARY = ("nn.relu", "negative", "exp", "tanh", "sigmoid", "abs")
REDUCE = ("sum", "mean", "max", "min")


def _available(names: tuple[str, ...]) -> list[Op]:
    """The operators of ``names`` that are registered (the operator set is still growing)."""
    ops = []
    for name in names:
        try:
            ops.append(Op.get(name))
        except UnknownOpError:
            continue
    return ops


def chain(n: int, seed: int) -> IRModule:
    x = relay.var("x", shape=(1, WIDTH))
    y = relay.var("y", shape=(1, WIDTH))
    ops = [Op.get(name) for name in ("add", "nn.relu", "multiply", "negative")]
    e = x
    for i in range(n):
        e = Call(ops[i % 4], [e, y] if i % 2 == 0 else [e])
    return IRModule({"main": Function([x, y], e)})


def lets(n: int, seed: int) -> IRModule:
    x = relay.var("x", shape=(1, WIDTH))
    y = relay.var("y", shape=(1, WIDTH))
    add, relu = Op.get("add"), Op.get("nn.relu")
    variables = [Var(f"v{i}") for i in range(n)]
    body = variables[-1]
    for i in reversed(range(n)):
        prev = variables[i - 1] if i else x
        value = Call(add, [prev, y]) if i % 2 == 0 else Call(relu, [prev])
        body = Let(variables[i], value, body)
    return IRModule({"main": Function([x, y], body)})


def dag(n: int, seed: int) -> IRModule:
    """n calls over tensors of shape (rows, WIDTH), rows 1..4, drawn from earlier nodes."""
    rng = random.Random(seed)
    binary, unary, reduce = _available(BINARY), _available(UNARY), _available(REDUCE)
    params = [relay.var(f"p{i}", shape=(rows, WIDTH)) for i, rows in enumerate((1, 2, 3, 4))]
    by_rows: dict[int, list] = {rows: [p] for rows, p in zip((1, 2, 3, 4), params)}
    nodes = [(p, rows) for rows, p in zip((1, 2, 3, 4), params)]

    def pick(pool: list):
        # Mostly recent entries (a local, deep DAG), sometimes any earlier one.
        if rng.random() < 0.1:
            return pool[rng.randrange(len(pool))]
        return pool[len(pool) - 1 - min(int(rng.expovariate(1 / 8)), len(pool) - 1)]

    used: set = set()
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            a, rows = pick(nodes)
            b = pick(by_rows[rng.choice((1, rows))])
            node, args = Call(rng.choice(binary), [a, b]), (a, b)
        elif r < 0.55 and reduce:
            # A reduction over the rows brings the row count back to 1.
            a, _ = pick(nodes)
            node = make_call(rng.choice(reduce).name, [a], axis=[0], keepdims=True)
            rows, args = 1, (a,)
        elif r < 0.85:
            a, rows = pick(nodes)
            node, args = Call(rng.choice(unary), [a]), (a,)
        else:
            a, ra = pick(nodes)
            rb = rng.randint(1, 4 - ra) if ra < 4 else None
            if rb is None:
                node, rows, args = Call(rng.choice(unary), [a]), ra, (a,)
            else:
                b = pick(by_rows[rb])
                node = make_call("concatenate", [Tuple([a, b])], axis=0)
                rows, args = ra + rb, (a, b)
        used.update(args)
        nodes.append((node, rows))
        by_rows[rows].append(node)
    # The result is every node nothing else uses, so that the whole DAG is live.
    sinks = [node for node, _ in nodes[len(params):] if node not in used]
    return IRModule({"main": Function(params, Tuple(sinks))})


def deferred(n: int, seed: int) -> IRModule:
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


def count_nodes(mod: IRModule) -> int:
    """Expression nodes InferType types (operators are singletons and are not typed)."""
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        if not isinstance(node, Op):
            count += 1

    for _gv, func in mod.items():
        post_order_visit(func, visit)
    return count


def time_infer(mod: IRModule, repeat: int) -> float:
    """Best CPU time of ``repeat`` runs: the machine may be shared, and CPU time ignores waiting."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            infer_type_module(mod)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def collect(sizes: list[int], seed: int = 0, programs: list[str] | None = None,
            repeat: int | None = None) -> list[dict[str, object]]:
    """One row per program and size: ``program``, ``size``, ``nodes``, ``us_per_node``.

    ``repeat`` defaults to 5 runs at up to 20,000 calls and 3 above.
    """
    rows: list[dict[str, object]] = []
    for name in programs or list(PROGRAMS):
        for size in sizes:
            mod = PROGRAMS[name](size, seed)
            nodes = count_nodes(mod)
            runs = repeat or (5 if size <= 20_000 else 3)
            seconds = time_infer(mod, repeat=runs)
            rows.append({"program": name, "size": size, "nodes": nodes,
                         "us_per_node": seconds * 1e6 / nodes})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--programs", nargs="*", default=list(PROGRAMS))
    args = parser.parse_args()
    small, large = args.sizes
    print(f"InferType, microseconds per node (aim <= {AIM_US:g}); ratio = large / small")
    print(f"{'program':<10}{'nodes@' + str(small):>14}{'us/node':>10}"
          f"{'nodes@' + str(large):>15}{'us/node':>10}{'ratio':>8}")
    rows = collect([small, large], args.seed, args.programs)
    for name in args.programs:
        mine = [r for r in rows if r["program"] == name]
        per_node = [r["us_per_node"] for r in mine]
        counts = [r["nodes"] for r in mine]
        flag = "" if max(per_node) <= AIM_US else "  (over the aim)"
        print(f"{name:<10}{counts[0]:>14}{per_node[0]:>10.2f}{counts[1]:>15}{per_node[1]:>10.2f}"
              f"{per_node[1] / per_node[0]:>8.2f}{flag}")


if __name__ == "__main__":
    main()
