"""Microseconds per node of the pattern rewriter and partitioner, on long chains and ResNet-50.

``rewrite`` runs a list of three callbacks, as a pass written with patterns
does: one that rewrites everything it matches, one that matches and keeps
what it found (returns ``post``), one whose pattern never matches (the cost
of looking).  On the chain of benchmarks/_workloads.py (``add`` of a
constant, ``nn.relu``, ``multiply``, ``tanh``, repeated):

* ``tanh(multiply(*, *))`` -> ``sigmoid(multiply(...))`` (a quarter of the
  nodes rewritten; a second round finds nothing and stops);
* ``nn.relu(add(*, const))`` kept;
* ``nn.bias_add(nn.conv2d(*, *), *)`` never there.

On ResNet-50 (as a frontend gives it): ``nn.relu(nn.batch_norm(nn.conv2d(*,
*), ...)[0])`` kept, ``nn.relu(add(*, *))`` (after each residual join)
rewritten to ``clip(add(...), 0, inf)``, ``nn.bias_add(nn.dense(*, *), *)``
kept.  ``partition`` groups ``nn.relu(add(*, const))`` on the chain and the
conv/batch-norm/relu triples on ResNet-50.  ``MergeComposite`` runs a
five-entry pattern table (:func:`composite_table`) on the typed program, as
a BYOC pipeline does: two entries that match, three that never do (the table is
benchmarks/_workloads.py's, which passes_bench.py times MergeComposite with too).

Figures: microseconds per operator call at each ``--chain`` size, the ratio
of the largest to the smallest (near 1.0 means linear), and milliseconds on
ResNet-50.  Timing as in the other benchmarks (best CPU time of a few runs).

Run: python benchmarks/pattern_bench.py [--chain 10000 100000] [--repeat 3] [--no-resnet]
"""

from __future__ import annotations

import argparse
from typing import Any

from _workloads import (
    best_cpu_seconds,
    chain,
    composite_table,
    count_calls,
    format_table,
    resnet50,
    us,
)

from relaypass import relay
from relaypass.relay.dataflow_pattern import (
    DFPatternCallback,
    is_constant,
    is_op,
    is_tuple_get_item,
    partition,
    rewrite,
    wildcard,
)


class _Keep(DFPatternCallback):
    """Matches and keeps what it found: the cost of matching and of the callback."""

    def __init__(self, pattern):
        super().__init__()
        self.pattern = pattern

    def callback(self, pre, post, node_map):
        return post


class _TanhToSigmoid(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.product = is_op("multiply")(wildcard(), wildcard())
        self.pattern = is_op("tanh")(self.product)

    def callback(self, pre, post, node_map):
        return relay.sigmoid(node_map[self.product][0])


class _ReluToClip(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.sum = is_op("add")(wildcard(), wildcard())
        self.pattern = is_op("nn.relu")(self.sum)

    def callback(self, pre, post, node_map):
        return relay.clip(node_map[self.sum][0], 0.0, float("inf"))


def chain_callbacks() -> list[DFPatternCallback]:
    return [
        _TanhToSigmoid(),
        _Keep(is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))),
        _Keep(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard())),
    ]


def resnet_callbacks() -> list[DFPatternCallback]:
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    bn = is_tuple_get_item(is_op("nn.batch_norm")(conv, wildcard(), wildcard(), wildcard(),
                                                  wildcard()), 0)
    return [
        _Keep(is_op("nn.relu")(bn)),
        _ReluToClip(),
        _Keep(is_op("nn.bias_add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard())),
    ]


def _merge_composite(mod):
    """A call that runs MergeComposite's function on ``mod``'s typed main (no re-typing)."""
    from passes_bench import runner

    from relaypass.transform import get_pass

    typed = get_pass("InferType")(mod)
    return runner(get_pass("MergeComposite", pattern_table=composite_table()), typed)


def _time(run, repeat: int) -> float:
    seconds, _ = best_cpu_seconds(run, repeat)
    return seconds


def collect(chain_sizes: list[int], repeat: int, resnet: bool = True) -> list[list[Any]]:
    """Rows: (figure, workload, nodes, microseconds per node or None, milliseconds)."""
    rows: list[list[Any]] = []
    for n in chain_sizes:
        body = chain(n)["main"].body
        nodes = count_calls(chain(n))
        callbacks = chain_callbacks()
        seconds = _time(lambda body=body, callbacks=callbacks: rewrite(callbacks, body), repeat)
        rows.append(["rewrite, 3 callbacks", f"chain {n}", nodes, seconds * 1e6 / nodes,
                     seconds * 1e3])
        pat = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
        seconds = _time(lambda body=body, pat=pat: partition(pat, body), repeat)
        rows.append(["partition", f"chain {n}", nodes, seconds * 1e6 / nodes, seconds * 1e3])
        seconds = _time(_merge_composite(chain(n)), repeat)
        rows.append(["MergeComposite, 5 entries", f"chain {n}", nodes, seconds * 1e6 / nodes,
                     seconds * 1e3])
    if resnet:
        mod = resnet50()
        body = mod["main"].body
        nodes = count_calls(mod)
        callbacks = resnet_callbacks()
        seconds = _time(lambda: rewrite(callbacks, body), repeat)
        rows.append(["rewrite, 3 callbacks", "ResNet-50", nodes, seconds * 1e6 / nodes,
                     seconds * 1e3])
        triple = callbacks[0].pattern
        seconds = _time(lambda: partition(triple, body), repeat)
        rows.append(["partition", "ResNet-50", nodes, seconds * 1e6 / nodes, seconds * 1e3])
        seconds = _time(_merge_composite(mod), repeat)
        rows.append(["MergeComposite, 5 entries", "ResNet-50", nodes, seconds * 1e6 / nodes,
                     seconds * 1e3])
    return rows


def growth(rows: list[list[Any]], figure: str) -> float | None:
    """The ratio of microseconds per node at the largest chain to the smallest."""
    per_node = [r[3] for r in rows if r[0] == figure and r[1].startswith("chain")]
    return per_node[-1] / per_node[0] if len(per_node) > 1 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-resnet", action="store_true")
    args = parser.parse_args()
    rows = collect(sorted(args.chain), args.repeat, not args.no_resnet)
    table = [[r[0], r[1], str(r[2]), us(r[3]), f"{r[4]:.1f}"] for r in rows]
    print(format_table(["figure", "workload", "nodes", "us/node", "ms"], table))
    for figure in ("rewrite, 3 callbacks", "partition", "MergeComposite, 5 entries"):
        ratio = growth(rows, figure)
        if ratio is not None:
            print(f"{figure}: us/node at {max(args.chain)} / at {min(args.chain)} = {ratio:.2f}")


if __name__ == "__main__":
    main()
