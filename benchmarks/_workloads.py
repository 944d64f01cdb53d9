"""What the benchmark scripts share: their programs, their timer and their tables.

One set of programs serves every per-pass figure, so that the figures of two
passes (or of InferType in passes_bench.py and infer_type_bench.py) are about
the same input:

* :func:`chain`: ``n`` calls, each consuming the previous one, cycling through
  ``add`` of a shared constant, ``nn.relu``, ``multiply`` by a parameter and
  ``tanh`` (FoldConstant sees a constant in every fourth call, yet nothing can
  be folded; SimplifyExpr and SimplifyInference find nothing to rewrite);
* :func:`dag`: a seeded random DAG of ``n`` calls over tensors of 1 to 4 rows:
  broadcasting binary operators over earlier nodes near and far or with a
  constant, unary operators, reductions over the rows, transposes and
  concatenations, so that diamonds, tuples and every fusion phase occur; every
  node is live (the result is the tuple of all sinks);
* :func:`resnet50`: ResNet-50 (v1) at batch 1, 224x224, as a pass pipeline
  receives it from a frontend: the stem, 16 bottleneck blocks of convolutions
  with batch norms and projection shortcuts, global average pooling and the
  classifier;
* :func:`functions`: a module of ``n`` small global functions, each binding
  a value it never uses and calling the next one (the last reads a
  reference, an effect), for the passes whose cost could grow with the
  number of functions rather than their size.

The *floor* (:func:`floor_seconds`) is what any pass over a program must at
least pay in Python: visiting every node once, children first, and creating
one slotted object per node holding its rebuilt inputs.  Per-node figures are
also given as a multiple of the floor measured on the same program in the
same run.

A "node" in a figure is an operator call (:func:`count_calls`), whatever the
form the program is in when the pass runs (:func:`in_form`).

The timer keeps the best CPU time of the process over a few runs: other work
on a shared machine does not count, and the best run is the one least
disturbed.  It stops repeating once a figure's runs took ``BUDGET_SECONDS``.
The cycle collector runs before each run, so that no run pays for the garbage
of the one before, and is left on unless the caller switches it off: a pass
pauses it itself (``relaypass.gc_pause``), as it does when a user runs it.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.gc_pause import gc_paused
from relaypass.ir import Call, Function, IRModule, Op, Tuple
from relaypass.ir.expr import GlobalVar, Let, RefCreate, RefRead, children
from relaypass.ir.op import make_call

WIDTH = 16

#: Seconds of runs after which the timer stops repeating a figure.
BUDGET_SECONDS = 10.0

#: The forms a pass takes its input in: as built, in A-normal form, or typed by InferType.
FORMS = ("dataflow", "anf", "typed")


# --- timing ---------------------------------------------------------------------------------
def best_cpu_seconds(run: Callable[[], Any], repeat: int, gc_on: bool = True,
                     budget: float = BUDGET_SECONDS) -> tuple[float, Any]:
    """The best CPU time of ``repeat`` runs of ``run``, and the last result.

    There is always one run, and no further one once the runs took ``budget``
    seconds in all: a best-of-N guards short runs against noise, while a run
    that takes many seconds is its own average (and repeating it would make
    a slow pass stall the whole benchmark).  The previous result is dropped
    before each run, so that only one is alive at a time and the heap the
    collector scans stays the same size.
    """
    best = float("inf")
    spent = 0.0
    result = None
    for _ in range(max(1, repeat)):
        if spent >= budget:
            break
        result = None
        gc.collect()
        was_on = gc.isenabled()
        if not gc_on:
            gc.disable()
        try:
            start = time.process_time()
            result = run()
            seconds = time.process_time() - start
        finally:
            if was_on:
                gc.enable()
        best = min(best, seconds)
        spent += seconds
    return best, result


# --- programs -------------------------------------------------------------------------------
def chain(n: int, seed: int = 0) -> IRModule:
    """``main(x, y)``: ``n`` calls in a line (``seed`` is not used; the chain is fixed)."""
    x = relay.var("x", shape=(1, WIDTH))
    y = relay.var("y", shape=(1, WIDTH))
    c = relay.const(np.full((1, WIDTH), 0.5, "float32"))
    add, relu, multiply, tanh = (Op.get(name) for name in ("add", "nn.relu", "multiply", "tanh"))
    e = x
    for i in range(n):
        step = i % 4
        if step == 0:
            e = Call(add, [e, c])
        elif step == 1:
            e = Call(relu, [e])
        elif step == 2:
            e = Call(multiply, [e, y])
        else:
            e = Call(tanh, [e])
    return IRModule({"main": Function([x, y], e)})


BINARY = ("add", "subtract", "multiply", "maximum", "minimum")
UNARY = ("nn.relu", "negative", "exp", "tanh", "sigmoid")
REDUCE = ("sum", "mean", "max", "min")


def dag(n: int, seed: int = 0) -> IRModule:
    """``main(p0, ..., p3)``: ``n`` calls over tensors of shape (rows, WIDTH), rows 1 to 4."""
    rng = random.Random(seed)
    binary = [Op.get(name) for name in BINARY]
    unary = [Op.get(name) for name in UNARY]
    consts = [relay.const(np.full((1, WIDTH), k, "float32")) for k in (0.5, 1.5, 2.0)]
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
        if r < 0.35:
            a, rows = pick(nodes)
            b = pick(by_rows[rng.choice((1, rows))])
            node, args = Call(rng.choice(binary), [a, b]), (a, b)
        elif r < 0.45:
            a, rows = pick(nodes)
            node, args = Call(rng.choice(binary), [a, rng.choice(consts)]), (a,)
        elif r < 0.55:
            a, _ = pick(nodes)
            node = make_call(rng.choice(REDUCE), [a], axis=[0], keepdims=True)
            rows, args = 1, (a,)
        elif r < 0.6:
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
    return IRModule({"main": Function(params, Tuple(sinks))})


def resnet50(n: int = 0, seed: int = 0) -> IRModule:
    """ResNet-50 for a 1x3x224x224 image (``n`` and ``seed`` are not used; its size is fixed)."""
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
    return IRModule({"main": Function([data, *weights], x)})


def functions(n: int, seed: int = 0) -> IRModule:
    """``n`` global functions ``f0 ... f{n-1}`` and ``main``: each binds ``relu(x)`` it never
    uses and returns ``f{i+1}(x + 1)``; the last reads a reference it creates (an effect that
    makes every function impure, one caller at a time)."""
    x_type = relay.TensorType((1, WIDTH), "float32")
    one = relay.const(np.ones((1, WIDTH), "float32"))
    gvs = [GlobalVar(f"f{i}") for i in range(n)]
    funcs: dict[str | GlobalVar, Function] = {}
    for i, gv in enumerate(gvs):
        x = relay.var("x", x_type)
        dead = relay.var("dead")
        if i + 1 < n:
            tail = Call(gvs[i + 1], [Call(Op.get("add"), [x, one])])
        else:
            tail = RefRead(RefCreate(x))
        funcs[gv] = Function([x], Let(dead, Call(Op.get("nn.relu"), [x]), tail), x_type)
    x = relay.var("x", x_type)
    funcs["main"] = Function([x], Call(gvs[0], [x]), x_type)
    return IRModule(funcs)


WORKLOADS: dict[str, Callable[[int, int], IRModule]] = {
    "chain": chain, "dag": dag, "resnet50": resnet50, "functions": functions,
}


# --- the floor ------------------------------------------------------------------------------
class _Rebuilt:
    """What the floor builds for a node: one slotted object with its rebuilt inputs."""

    __slots__ = ("node", "inputs")

    def __init__(self, node: object, inputs: tuple) -> None:
        self.node = node
        self.inputs = inputs


def rebuild_floor(mod: IRModule) -> list[_Rebuilt]:
    """Every function of ``mod`` rebuilt as :class:`_Rebuilt` objects, children first.

    The least a pass can do in Python: one explicit-stack visit of each node
    (shared nodes once, through a memo table) and one object per node.
    """
    out = []
    for _gv, func in mod.items():
        memo: dict[object, _Rebuilt] = {}
        stack: list[tuple[object, bool]] = [(func, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                memo[node] = _Rebuilt(node, tuple([memo[k] for k in children(node)]))
                continue
            if node in memo:
                continue
            stack.append((node, True))
            for kid in children(node):
                if kid not in memo:
                    stack.append((kid, False))
        out.append(memo[func])
    return out


def floor_seconds(mod: IRModule, repeat: int) -> float:
    """The best CPU time of :func:`rebuild_floor` on ``mod``, the collector paused as a pass
    pauses it."""
    def run() -> list[_Rebuilt]:
        with gc_paused():
            return rebuild_floor(mod)

    return best_cpu_seconds(run, repeat)[0]


# --- memory ---------------------------------------------------------------------------------
def retained_bytes(make: Callable[[], Any]) -> tuple[int, Any]:
    """The bytes of Python heap that ``make()``'s result keeps alive (tracemalloc), and the
    result."""
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = make()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, result


# --- a target's pattern table ---------------------------------------------------------------
def composite_table() -> list[tuple[str, Any]]:
    """Five MergeComposite entries in priority order, as a target's pattern table looks: on
    the chain two of them match, on ResNet-50 two others; the rest never do."""
    from relaypass.relay.dataflow_pattern import is_constant, is_op, is_tuple_get_item, wildcard

    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    bn = is_tuple_get_item(is_op("nn.batch_norm")(conv, wildcard(), wildcard(), wildcard(),
                                                  wildcard()), 0)
    return [
        ("bench.conv_bias_relu", is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()))),
        ("bench.conv_bn_relu", is_op("nn.relu")(bn)),
        ("bench.add_relu", is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))),
        ("bench.mul_tanh", is_op("tanh")(is_op("multiply")(wildcard(), wildcard()))),
        ("bench.dense_add", is_op("add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard())),
    ]


def count_calls(mod: IRModule) -> int:
    """Operator calls in the module's functions: the "nodes" of every per-node figure."""
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        if isinstance(node, Call) and isinstance(node.op, Op):
            count += 1

    for _gv, func in mod.items():
        post_order_visit(func, visit)
    return count


def count_primitive(expr: object) -> int:
    """Functions marked ``Primitive`` in ``expr`` (FuseOps's groups)."""
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        if isinstance(node, Function) and node.attrs and node.attrs.get("Primitive"):
            count += 1

    post_order_visit(expr, visit)
    return count


def in_form(mod: IRModule, form: str) -> IRModule:
    """``mod`` as a pass of that input form takes it (one of :data:`FORMS`)."""
    from relaypass.transform import get_pass

    if form == "dataflow":
        return mod
    if form == "anf":
        return get_pass("ToANormalForm")(mod)
    if form == "typed":
        return get_pass("InferType")(mod)
    raise ValueError(f"no input form {form!r}; choose from {', '.join(FORMS)}")


# --- printing -------------------------------------------------------------------------------
def format_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns as wide as their widest cell: the first aligned left, the others right."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
              for i, c in enumerate(columns)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.rjust(w) if i else cell.ljust(w)
                         for i, (cell, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(columns), *(line(r) for r in rows)])


def us(value: float | None) -> str:
    """Microseconds with two decimals, or a dash where there is no figure."""
    return "-" if value is None else f"{value:.2f}"
