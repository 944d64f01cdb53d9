"""Microseconds per node for SimplifyInference, EliminateCommonSubexpr and SimplifyExpr.

Each pass runs on two typed chains of n operator calls (typed once, not
timed), and is timed on its own -- its function called on the typed
``main`` -- so that the InferType it requires is not counted (see
infer_type_bench.py for that):

* ``idle``: a chain of elementwise and broadcast calls in which the pass finds
  nothing to do: the cost of looking;
* ``busy``: a chain made for the pass, where it rewrites everything:
  SimplifyInference a chain of ``batch_norm(...)[0]`` and ``dropout(...)[0]``;
  EliminateCommonSubexpr two identical chains of n/2 calls joined at the end
  (one half is merged away); SimplifyExpr a chain of ``x * 1`` and ``x + 0``
  with scalar constants (all of it is eliminated).

A time is the best CPU time of a few runs.

Run: python benchmarks/more_passes_bench.py [--n 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from relaypass import relay
from relaypass.ir import Call, Function, IRModule, Op
from relaypass.transform import PassContext, get_pass

PASSES = ("SimplifyInference", "EliminateCommonSubexpr", "SimplifyExpr")
WIDTH = 4


def idle(n: int) -> Function:
    x = relay.var("x", shape=(1, WIDTH))
    c = relay.const(np.ones((1, WIDTH), "float32"))
    add, relu, mul = Op.get("add"), Op.get("nn.relu"), Op.get("multiply")
    e = x
    for i in range(n):
        e = Call(add, [e, c]) if i % 3 == 0 else Call(relu, [e]) if i % 3 == 1 else Call(mul, [e, x])
    return Function([x], e)


def busy_simplify_inference(n: int) -> Function:
    # n calls: each batch_norm block is one call plus its projection, each dropout the same.
    x = relay.var("x", shape=(1, WIDTH, 2))
    params = [relay.var(name, shape=(WIDTH,)) for name in ("gamma", "beta", "mean", "var")]
    e = x
    for i in range(n // 2):
        e = relay.nn.batch_norm(e, *params)[0] if i % 2 else relay.nn.dropout(e)
    return Function([x, *params], e)


def busy_eliminate_common_subexpr(n: int) -> Function:
    x = relay.var("x", shape=(1, WIDTH))
    c = relay.const(np.ones((1, WIDTH), "float32"))

    def half() -> relay.Expr:
        e = x
        for i in range(n // 2):
            e = relay.add(e, c) if i % 2 else relay.nn.relu(e)
        return e

    return Function([x], relay.subtract(half(), half()))


def busy_simplify_expr(n: int) -> Function:
    x = relay.var("x", shape=(1, WIDTH))
    zero, one = relay.const(0.0), relay.const(1.0)
    e = x
    for i in range(n):
        e = relay.add(e, zero) if i % 2 else relay.multiply(one, e)
    return Function([x], relay.nn.relu(e))


BUSY: dict[str, Callable[[int], Function]] = {
    "SimplifyInference": busy_simplify_inference,
    "EliminateCommonSubexpr": busy_eliminate_common_subexpr,
    "SimplifyExpr": busy_simplify_expr,
}


def typed(func: Function) -> IRModule:
    return get_pass("InferType")(IRModule.from_expr(func))


def cpu_seconds(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
        del result
    return best


def collect(n: int, repeat: int = 3) -> list[dict[str, object]]:
    """One row per pass and workload: ``pass``, ``workload``, ``size``, ``us_per_node``."""
    ctx = PassContext.current()
    rows: list[dict[str, object]] = []
    idle_mod = typed(idle(n))
    for name in PASSES:
        p = get_pass(name)
        for workload, mod in (("idle", idle_mod), ("busy", typed(BUSY[name](n)))):
            main = mod["main"]
            seconds = cpu_seconds(lambda p=p, main=main, mod=mod: p.pass_func(main, mod, ctx),
                                  repeat)
            rows.append({"pass": name, "workload": workload, "size": n,
                         "us_per_node": seconds / n * 1e6})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="operator calls per chain")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    args = parser.parse_args()
    rows = collect(args.n, args.repeat)
    print(f"us per node (best CPU time of {args.repeat} runs, chains of {args.n} calls)")
    print(f"{'pass':<26}{'idle':>10}{'busy':>10}")
    for name in PASSES:
        cells = [f"{r['us_per_node']:>10.2f}" for r in rows if r["pass"] == name]
        print(f"{name:<26}" + "".join(cells))


if __name__ == "__main__":
    main()
