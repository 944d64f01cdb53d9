"""Microseconds per node for FuseOps on a long chain and a random DAG, and its time on ResNet-50.

Programs (typed once beforehand; only FuseOps is timed, at fuse level 2):

* ``chain``: n elementwise calls, each consuming the previous one (groups of
  256, the default max_depth);
* ``dag``: a random DAG of n calls (seeded) mixing broadcasting binary ops,
  elementwise unary ops, reductions, transposes and concatenations of earlier
  nodes, near and far, so that diamonds, tuples and every fusion phase occur;
* ``resnet50``: the ResNet-50 graph at batch 1, 224x224 (the stem, 16
  bottleneck blocks with batch norms and projection shortcuts, global average
  pooling and the classifier), about 300 operator calls and projections.

A time is the best CPU time of the process over a few runs (the machine may
be shared).  Aim (issue 6): at most 20 us per node.  For scale: TVM 0.27's C++
FuseOps takes about 21 ms on ResNet-50.

Run: python benchmarks/fuse_ops_bench.py [--chain 100000] [--dag 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import gc
import random
import time

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir import Call, Function, IRModule, Op, Tuple
from relaypass.ir.op import make_call
from relaypass_std.fuse_ops import fuse_ops
from relaypass_std.infer_type import infer_type_module

AIM_US = 20.0
WIDTH = 16


def chain(n: int, seed: int) -> Function:
    x = relay.var("x", shape=(1, WIDTH))
    ops = [Op.get(name) for name in ("exp", "nn.relu", "negative", "tanh")]
    e = x
    for i in range(n):
        e = Call(ops[i % 4], [e])
    return Function([x], e)


def dag(n: int, seed: int) -> Function:
    """n calls over tensors of shape (rows, WIDTH), rows 1..4, drawn from earlier nodes."""
    rng = random.Random(seed)
    binary = [Op.get(name) for name in ("add", "subtract", "multiply", "maximum")]
    unary = [Op.get(name) for name in ("nn.relu", "negative", "exp", "tanh")]
    reduce = ("sum", "max")
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
        elif r < 0.5:
            a, _ = pick(nodes)
            node = make_call(rng.choice(reduce), [a], axis=[0], keepdims=True)
            rows, args = 1, (a,)
        elif r < 0.55:
            a, rows = pick(nodes)
            node, args = make_call("transpose", [a], axes=[0, 1]), (a,)
        elif r < 0.85:
            a, rows = pick(nodes)
            node, args = Call(rng.choice(unary), [a]), (a,)
        else:
            a, ra = pick(nodes)
            if ra == 4:
                node, rows, args = Call(rng.choice(unary), [a]), ra, (a,)
            else:
                rb = rng.randint(1, 4 - ra)
                b = pick(by_rows[rb])
                node = make_call("concatenate", [Tuple([a, b])], axis=0)
                rows, args = ra + rb, (a, b)
        used.update(args)
        nodes.append((node, rows))
        by_rows[rows].append(node)
    sinks = [node for node, _ in nodes[len(params):] if node not in used]
    return Function(params, Tuple(sinks))


def resnet50(n: int, seed: int) -> Function:
    """ResNet-50 (v1) for a 1x3x224x224 image; ``n`` and ``seed`` are not used."""
    weights: list = []

    def param(shape):
        v = relay.var(f"w{len(weights)}", shape=shape)
        weights.append(v)
        return v

    def conv_bn(x, cin, cout, kernel, stride, relu):
        pad = kernel // 2
        y = relay.nn.conv2d(x, param((cout, cin, kernel, kernel)), strides=(stride, stride),
                            padding=(pad, pad), channels=cout, kernel_size=(kernel, kernel))
        y = relay.nn.batch_norm(y, param((cout,)), param((cout,)), param((cout,)),
                                param((cout,)))[0]
        return relay.nn.relu(y) if relu else y

    data = relay.var("data", shape=(1, 3, 224, 224))
    x = conv_bn(data, 3, 64, 7, 2, relu=True)
    x = relay.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    cin = 64
    for stage, (blocks, width) in enumerate(((3, 64), (4, 128), (6, 256), (3, 512))):
        cout = width * 4
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 0 else 1
            y = conv_bn(x, cin, width, 1, 1, relu=True)
            y = conv_bn(y, width, width, 3, stride, relu=True)
            y = conv_bn(y, width, cout, 1, 1, relu=False)
            shortcut = conv_bn(x, cin, cout, 1, stride, relu=False) if block == 0 else x
            x = relay.nn.relu(relay.add(y, shortcut))
            cin = cout
    x = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(x))
    x = relay.nn.dense(x, param((1000, 2048)))
    return Function([data, *weights], x)


PROGRAMS = {"chain": chain, "dag": dag, "resnet50": resnet50}


def count_nodes(func: Function) -> int:
    """Expression nodes of the function (operators, which are singletons, not counted)."""
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        if not isinstance(node, Op):
            count += 1

    post_order_visit(func, visit)
    return count


def typed(func: Function) -> Function:
    return infer_type_module(IRModule({"main": func}))["main"]


def time_fuse(func: Function, repeat: int) -> tuple[float, Function]:
    """Best CPU time of ``repeat`` runs of FuseOps, and its result."""
    best = float("inf")
    out = func
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        out = fuse_ops(func)
        best = min(best, time.process_time() - start)
    return best, out


def count_primitive(func: Function) -> int:
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        if isinstance(node, Function) and node.attrs.get("Primitive"):
            count += 1

    post_order_visit(func, visit)
    return count


def collect(sizes: dict[str, int | list[int]], seed: int = 0) -> list[dict[str, object]]:
    """One row per program and size: ``program``, ``size``, ``nodes``, ``groups``, ``ms``, ``us_per_node``.

    ``sizes`` maps a program of ``PROGRAMS`` to its size or sizes (``resnet50`` takes 0).
    """
    rows: list[dict[str, object]] = []
    for name, wanted in sizes.items():
        for size in ([wanted] if isinstance(wanted, int) else wanted):
            func = typed(PROGRAMS[name](size, seed))
            nodes = count_nodes(func)
            seconds, out = time_fuse(func, repeat=3 if nodes > 20_000 else 7)
            rows.append({"program": name, "size": size, "nodes": nodes,
                         "groups": count_primitive(out), "ms": seconds * 1e3,
                         "us_per_node": seconds * 1e6 / nodes})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chain", type=int, default=100_000)
    parser.add_argument("--dag", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = {"chain": args.chain, "dag": args.dag, "resnet50": 0}
    print(f"FuseOps (fuse level 2), microseconds per node (aim <= {AIM_US:g})")
    print(f"{'program':<10}{'nodes':>9}{'groups':>9}{'ms':>10}{'us/node':>10}")
    for row in collect(sizes, args.seed):
        per_node = row["us_per_node"]
        flag = "" if per_node <= AIM_US else "  (over the aim)"
        print(f"{row['program']:<10}{row['nodes']:>9}{row['groups']:>9}{row['ms']:>10.1f}"
              f"{per_node:>10.2f}{flag}")


if __name__ == "__main__":
    main()
