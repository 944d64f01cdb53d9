"""Microseconds per node for the IR's basic operations on long dataflow chains.

Run ``python benchmarks/ir_bench.py`` (``--sizes 10000 100000`` by default).
For each chain length it times building the chain, printing it, parsing the
text back, structural hashing, visiting with an ExprVisitor, mutating with an
ExprMutator that rebuilds every ``add`` as a ``subtract``, and rewriting the
same way with a MixedModeMutator.  The last column is the per-node cost at the
largest size over that at the smallest: near 1.0 means linear scaling.

Aims (issue 2): visiting and rewriting at most 3 us per node, printing and
parsing at most 15 us per node, and the ratio at most 1.3.

Each figure is the best of ``--repeat`` runs in CPU time of this process
(benchmarks/_workloads.py says how); the cycle collector is off while
timing, as ``timeit`` does, unless ``--gc`` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from _workloads import best_cpu_seconds, format_table, us

from relaypass import relay
from relaypass.functor import ExprMutator, ExprVisitor, MixedModeMutator
from relaypass.ir import Call, Function, IRModule, Op
from relaypass.ir.structural import structural_hash
from relaypass.ir.text.parser import parse

AIMS = {"visit": 3.0, "rewrite": 3.0, "print": 15.0, "parse": 15.0}


def build_chain(n: int) -> IRModule:
    """``main(x, y)``: n calls alternating ``add(prev, y)`` and ``multiply(prev, y)``."""
    x = relay.var("x", shape=(1, 16))
    y = relay.var("y", shape=(1, 16))
    cur = x
    for i in range(n):
        cur = relay.add(cur, y) if i % 2 == 0 else relay.multiply(cur, y)
    return IRModule.from_expr(Function([x, y], cur))


class _CountingVisitor(ExprVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def visit_call(self, call: Call) -> None:
        self.calls += 1
        super().visit_call(call)


class _AddToSubtract(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.add = Op.get("add")
        self.subtract = Op.get("subtract")

    def visit_call(self, call: Call) -> Call:
        args = [self.visit(a) for a in call.args]
        op = self.subtract if call.op is self.add else call.op
        return Call(op, args, call.attrs, call.type_args, call.span)


class _AddToSubtractRewriter(MixedModeMutator):
    def __init__(self) -> None:
        super().__init__()
        self.add = Op.get("add")
        self.subtract = Op.get("subtract")

    def rewrite_call(self, pre: Call, post: Call) -> Call:
        if post.op is self.add:
            return Call(self.subtract, post.args, post.attrs, post.type_args, post.span)
        return post


#: ``timed(fn)``: the best CPU time of a few runs of ``fn``, and its last result.
Timed = Callable[[Callable[[], object]], tuple[float, object]]


def measure(n: int, timed: Timed) -> dict[str, float]:
    """Seconds per node of each operation on a chain of ``n`` calls."""
    out: dict[str, float] = {}
    seconds, mod = timed(lambda: build_chain(n))
    out["build"] = seconds / n
    seconds, text = timed(mod.astext)
    out["print"] = seconds / n
    seconds, parsed = timed(lambda: parse(text))
    out["parse"] = seconds / n
    if parsed.astext() != text:
        raise SystemExit("benchmark sanity check failed: print(parse(print(m))) != print(m)")
    main = mod["main"]
    seconds, _ = timed(lambda: structural_hash(main))
    out["hash"] = seconds / n

    def visit() -> _CountingVisitor:
        visitor = _CountingVisitor()
        visitor.visit(main)
        return visitor

    seconds, visitor = timed(visit)
    if visitor.calls != n:
        raise SystemExit(f"visitor saw {visitor.calls} calls, expected {n}")
    out["visit"] = seconds / n
    seconds, _ = timed(lambda: _AddToSubtract().visit(main))
    out["mutate"] = seconds / n
    seconds, _ = timed(lambda: _AddToSubtractRewriter().visit(main))
    out["rewrite"] = seconds / n
    return out


def collect(sizes: list[int], repeat: int = 3, keep_gc: bool = False) -> dict[int, dict[str, float]]:
    """Seconds per node of each operation (build, print, ...) at each chain length."""
    def timed(fn: Callable[[], object]) -> tuple[float, object]:
        return best_cpu_seconds(fn, repeat, gc_on=keep_gc)

    return {n: measure(n, timed) for n in sorted(sizes)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], metavar="N",
                    help="chain lengths, one figure per length (default: 10000 100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    ap.add_argument("--gc", action="store_true", help="keep the garbage collector on while timing")
    args = ap.parse_args(argv)
    sizes = sorted(args.sizes)
    print(
        f"python {sys.version.split()[0]}, recursion limit {sys.getrecursionlimit()}, "
        f"best of {args.repeat}, gc {'on' if args.gc else 'off'} while timing"
    )
    results = collect(sizes, args.repeat, args.gc)
    table = []
    missed = []
    for metric in results[sizes[0]]:
        values = [results[n][metric] * 1e6 for n in sizes]
        ratio = values[-1] / values[0]
        if len(sizes) > 1 and ratio > 1.3:
            missed.append(f"{metric} ratio {ratio:.2f} > 1.3")
        aim = AIMS.get(metric)
        if aim and max(values) > aim:
            missed.append(f"{metric} {max(values):.2f} us/node > {aim}")
        table.append([metric, *(us(v) for v in values), f"{ratio:.2f}", f"{aim:g}" if aim else ""])
    print(format_table(["us/node", *(f"{n:,}" for n in sizes), "ratio", "aim"], table))
    print("all aims met" if not missed else "aims missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
