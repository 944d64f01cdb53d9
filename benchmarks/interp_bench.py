"""Microseconds per node for the numpy interpreter on long elementwise programs.

The interpreter checks every pass's output, so its overhead per node (on top
of the numpy kernel itself) decides how cheap that check is.  Measured on
small tensors, where the kernels cost little and the interpreter's own work
shows; the cost of the kernels alone is printed for comparison.  A time is
the best CPU time of a few runs (benchmarks/_workloads.py says how).

Run: python benchmarks/interp_bench.py [number_of_nodes] [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from _workloads import best_cpu_seconds

from relaypass import relay
from relaypass.ir import Op

OPS = ("add", "multiply", "nn.relu", "negative")


def graph_chain(n: int) -> relay.Function:
    """``n`` elementwise calls, each consuming the previous one (graph normal form)."""
    x = relay.var("x", shape=(4,))
    c = relay.const(np.full((4,), 0.5, "float32"))
    e = x
    for i in range(n):
        name = OPS[i % len(OPS)]
        e = relay.nn.relu(e) if name == "nn.relu" else (
            relay.negative(e) if name == "negative" else getattr(relay, name)(e, c)
        )
    return relay.Function([x], e)


def let_chain(n: int) -> relay.Function:
    """The same program in A-normal form: ``n`` nested lets."""
    x = relay.var("x", shape=(4,))
    c = relay.const(np.full((4,), 0.5, "float32"))
    sb = relay.ScopeBuilder()
    e = x
    for i in range(n):
        name = OPS[i % len(OPS)]
        if name == "nn.relu":
            value = relay.nn.relu(e)
        elif name == "negative":
            value = relay.negative(e)
        else:
            value = getattr(relay, name)(e, c)
        e = sb.let(f"v{i}", value)
    sb.ret(e)
    return relay.Function([x], sb.get())


def kernels_only(n: int) -> np.ndarray:
    """The same computation by calling the kernels directly, without the interpreter."""
    kernels = [(Op.get(name).get_attr("FKernel"), name) for name in OPS]
    c = np.full((4,), 0.5, "float32")
    v = np.ones(4, "float32")
    for i in range(n):
        kernel, name = kernels[i % len(kernels)]
        v = kernel([v] if name in ("nn.relu", "negative") else [v, c], None)
    return v


def collect(n: int, repeat: int = 3) -> list[dict[str, object]]:
    """One row per program form (and the kernels alone): ``program``, ``us_per_node``, ``seconds``."""
    data = np.ones(4, "float32")
    rows: list[dict[str, object]] = []
    for label, build in (("graph form (dataflow chain)", graph_chain), ("A-normal form (let chain)", let_chain)):
        func = build(n)
        ex = relay.create_executor("debug")
        run = ex.evaluate(func)
        seconds, _ = best_cpu_seconds(lambda run=run: run(data), repeat)
        rows.append({"program": label, "us_per_node": seconds * 1e6 / n, "seconds": seconds})
    seconds, _ = best_cpu_seconds(lambda: kernels_only(n), repeat)
    rows.append({"program": "kernels alone", "us_per_node": seconds * 1e6 / n, "seconds": seconds})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int, nargs="?", default=100_000,
                        help="elementwise calls in each program (default: 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    args = parser.parse_args(argv)
    n = args.nodes
    print(f"interpreter, {n} elementwise calls on float32[4]")
    for row in collect(n, args.repeat):
        print(f"  {row['program']:30s} {row['us_per_node']:6.2f} us/node  ({row['seconds']:.3f} s)")


if __name__ == "__main__":
    main()
