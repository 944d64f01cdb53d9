"""Clean-ups of an exported ONNX graph: the forms ONNX models have, where Relay's differ.

Relay keeps apart what ONNX operators take together (a convolution and its
bias, a matrix product and the C of Gemm), the importer lowers some ONNX
operators onto Relay's (an N-D MatMul onto 3-D ``batch_matmul`` between
reshapes, a Softmax before opset 13 onto a 2-D one between reshapes,
HardSwish onto elementwise operators), and each Relay operator maps back on
its own.  These rewrites, on the finished graph, give the ONNX forms back:

* ``Conv -> BatchNormalization`` (statistics and weights initializers):
  the normalization folded into the convolution's weights and bias;
* ``Conv -> Mul`` / ``Conv -> Add`` by a per-channel constant: the scale
  folded into the weights (and bias), the sum into the bias;
* ``Gemm -> Add`` of a constant that broadcasts to the product: Gemm's C;
* ``MatMul -> Add`` of a weight and a bias on N-D data (a linear layer of a
  transformer): ``Reshape -> Gemm -> Reshape``, where that takes fewer nodes,
  which is when the reshapes merge with the ones around (the one splitting
  attention heads after it, one flattening the input shared by the query,
  key and value projections);
* ``Mul(a, Reciprocal(x))``: ``Div(a, x)``;
* ``Unsqueeze(Unsqueeze(x))`` and ``Reshape(Reshape(x))``: one node;
* ``Reshape -> MatMul -> Reshape`` merging and splitting the same leading
  batch axes of both operands: one N-D MatMul;
* ``Reshape -> Softmax -> Reshape`` whose flattened side has one extent
  that is not 1: one Softmax on that axis;
* ``Clip(x * a + b, 0, 1)``: HardSigmoid; ``x * HardSigmoid(x)`` with
  ``a = 1/6, b = 1/2``: HardSwish.

A rewrite applies only when the intermediate values it removes are read
by nothing else and are not graph outputs.  Then nodes whose results
nothing reads are dropped, and initializers nothing reads with them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain

import numpy as np

from ..ir.shape_expr import known_int
from ..ir.types import Any
from .onnx_export_graph import GraphBuilder, Node

__all__ = ["clean_up"]


def clean_up(b: GraphBuilder, outputs: Sequence[str]) -> None:
    """Rewrite ``b``'s nodes into ONNX's forms, then drop what ``outputs`` do not need."""
    _linears_to_gemm(b, outputs)
    _Rewriter(b, outputs).run()
    _drop_dead(b, outputs)


def _unknown(d: object) -> bool:
    """Whether an extent is not a number (``Any``, a size variable or an expression of them)."""
    return known_int(d) is None


def _static(shape: tuple | None) -> bool:
    return shape is not None and not any(_unknown(d) for d in shape)


def _known(shape: tuple | None) -> bool:
    """Whether every extent is a number or a size variable (an expression of them): extents
    that compare equal are then the same."""
    return shape is not None and not any(isinstance(d, Any) for d in shape)


def _fits_product(c: np.ndarray, shape: tuple | None) -> bool:
    """Whether ``c`` broadcasts to a Gemm product of ``shape`` (M, N) without changing it; an
    unknown M (a dynamic batch) takes a ``c`` that does not depend on it."""
    if shape is None or len(shape) != 2 or _unknown(shape[1]) or c.ndim > 2:
        return False
    m, n = shape
    if c.ndim and c.shape[-1] not in (1, int(n)):
        return False
    if c.ndim == 2 and c.shape[0] != 1 and (_unknown(m) or c.shape[0] != int(m)):
        return False
    return True


class _Rewriter:
    """The rewrites that replace a node (and the single-use nodes before it) by one node.

    Nodes are visited in graph order and a rewritten node is tried again, so
    chains fold (a Conv takes the batch norm after it, then the bias after
    that).  The new node takes the place and the outputs of the last node it
    replaces, which keeps the graph in order; the others become None.
    """

    def __init__(self, b: GraphBuilder, outputs: Sequence[str]) -> None:
        self.b = b
        self.keep = set(outputs)
        self.nodes = b.nodes
        nodes = self.nodes
        self.producer: dict[str, int] = {o: i for i, n in enumerate(nodes) for o in n.outputs}
        self.uses: dict[str, int] = Counter(chain.from_iterable([n.inputs for n in nodes]))
        self._shape_reads: dict[str, int] | None = None

    @property
    def shape_reads(self) -> dict[str, int]:
        """How many Shape nodes read each value (counted when first asked: few graphs need
        it; no rule makes or removes Shape nodes)."""
        if self._shape_reads is None:
            self._shape_reads = Counter([n.inputs[0] for n in self.nodes
                                         if n is not None and n.op_type == "Shape"])
        return self._shape_reads

    def _rules(self) -> dict[str, list]:
        """The rules by the kind of node they rewrite, those that can apply to this graph: one
        needing a kind of node the graph lacks is left out (a rewrite makes a Conv, Gemm,
        MatMul or Softmax only from one, and a HardSigmoid only from a Clip).

        A table of the rules' bound methods kept on the rewriter would make it a reference
        cycle, kept alive with the whole graph until the cyclic collector's next run."""
        present = {n.op_type for n in self.nodes if n is not None}
        table = (
            ("BatchNormalization", self._bn_into_conv, ("Conv",)),
            ("Add", lambda n: self._per_channel_into_conv(n, False), ("Conv",)),
            ("Add", self._add_into_gemm, ("Gemm",)),
            ("Mul", self._reciprocal_to_div, ("Reciprocal",)),
            ("Mul", lambda n: self._per_channel_into_conv(n, True), ("Conv",)),
            ("Mul", self._hard_swish, ("HardSigmoid", "Clip")),
            ("Unsqueeze", self._unsqueeze_pair, ()),
            ("Reshape", self._matmul_nd, ("MatMul",)),
            ("Reshape", self._softmax_nd, ("Softmax", "LogSoftmax")),
            ("Reshape", self._reshape_pair, ()),
            ("Clip", self._hard_sigmoid, ()),
        )
        rules: dict[str, list] = {}
        for op_type, rule, needs in table:
            if op_type in present and (not needs or not present.isdisjoint(needs)):
                rules.setdefault(op_type, []).append(rule)
        return rules

    def run(self) -> None:
        nodes = self.nodes
        rules = self._rules()
        # A rewrite changes the node at i and removes nodes before it, never one after it.
        for i, n in enumerate(nodes):
            if n is None or n.op_type not in rules:
                continue
            changed = True
            while changed and nodes[i] is not None:
                changed = False
                for rule in rules.get(nodes[i].op_type, ()):
                    new = rule(nodes[i])
                    if new is not None:
                        node, removed = new
                        self._replace(i, node, removed)
                        changed = True
                        break

    def _replace(self, i: int, node: Node, removed: Sequence[int]) -> None:
        for r in removed:
            for x in self.nodes[r].inputs:
                self.uses[x] -= 1
            self.nodes[r] = None
        for x in self.nodes[i].inputs:
            self.uses[x] -= 1
        for x in node.inputs:
            self.uses[x] = self.uses.get(x, 0) + 1
        self.nodes[i] = node

    # --- lookups ----------------------------------------------------------------------------
    def source(self, name: str, *op_types: str) -> tuple[int, Node] | None:
        """The node computing ``name`` when it is one of ``op_types`` and ``name`` is read
        only once (and is no graph output)."""
        i = self.producer.get(name)
        if i is None or self.uses.get(name, 0) != 1 or name in self.keep:
            return None
        node = self.nodes[i]
        if node is None or node.op_type not in op_types or node.outputs[0] != name:
            return None
        return i, node

    def _read_by_shapes(self, name: str, op_type: str) -> tuple[int, Node] | None:
        """The node computing ``name`` when it is an ``op_type`` read once besides ``Shape``
        nodes (and is no graph output)."""
        i = self.producer.get(name)
        if (i is None or name in self.keep
                or self.uses.get(name, 0) != 1 + self.shape_reads.get(name, 0)):
            return None
        node = self.nodes[i]
        if node is None or node.op_type != op_type or node.outputs[0] != name:
            return None
        return i, node

    def const(self, name: str) -> np.ndarray | None:
        return self.b.arrays.get(name)

    def store(self, array: np.ndarray) -> str:
        return self.b.name(self.b.const(array))

    def make(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
             like: Node | None = None, **attrs: object) -> Node:
        if like is not None:
            attrs = {**like.attrs, **attrs}
        return self.b.make_node(op_type, inputs, outputs, **attrs)

    def channels(self, name: str) -> int | None:
        shape = self.b.shapes.get(name)
        if shape is None or len(shape) < 3 or _unknown(shape[1]):
            return None
        return int(shape[1])

    def per_channel(self, array: np.ndarray | None, channels: int, rank: int) -> np.ndarray | None:
        """``array`` as C values when it broadcasts along axis 1 of a rank-``rank`` tensor only."""
        if array is None:
            return None
        spatial = (1,) * (rank - 2)
        if array.shape in ((channels, *spatial), (1, channels, *spatial)):
            return array.reshape(channels)
        if array.size == 1 and array.ndim <= rank:
            return np.broadcast_to(array.reshape(()), (channels,))
        return None

    def conv_operand(self, node: Node) -> tuple[int, int, Node, int, int] | None:
        """(index of the operand, producer index, the Conv, channels, rank) for a binary node
        one of whose operands is a single-use Conv output of known channels."""
        for k in (0, 1):
            found = self.source(node.inputs[k], "Conv")
            if found is None:
                continue
            channels = self.channels(node.inputs[k])
            shape = self.b.shapes.get(node.inputs[k])
            if channels is not None and shape is not None:
                return k, found[0], found[1], channels, len(shape)
        return None

    # --- convolutions -----------------------------------------------------------------------
    def _conv_with(self, conv: Node, weight: np.ndarray, bias: np.ndarray,
                   output: str) -> Node:
        return self.make("Conv", [conv.inputs[0], self.store(weight), self.store(bias)], [output],
                         like=conv)

    def _conv_parts(self, conv: Node, channels: int) -> tuple[np.ndarray, np.ndarray] | None:
        weight = self.const(conv.inputs[1])
        if weight is None or weight.shape[0] != channels:
            return None
        if len(conv.inputs) > 2 and conv.inputs[2]:
            bias = self.const(conv.inputs[2])
            if bias is None:
                return None
        else:
            bias = np.zeros(channels, dtype=weight.dtype)
        return weight, bias

    def _bn_into_conv(self, bn: Node) -> tuple[Node, list[int]] | None:
        found = self.source(bn.inputs[0], "Conv")
        if found is None or len(bn.outputs) != 1:
            return None
        i, conv = found
        stats = [self.const(x) for x in bn.inputs[1:5]]
        if any(s is None for s in stats):
            return None
        scale, beta, mean, var = (s.astype(np.float64).reshape(-1) for s in stats)
        parts = self._conv_parts(conv, scale.shape[0])
        if parts is None:
            return None
        weight, bias = parts
        factor = scale / np.sqrt(var + float(bn.attrs.get("epsilon", 1e-5)))
        w = (weight.astype(np.float64) * factor.reshape(-1, *([1] * (weight.ndim - 1))))
        b = (bias.astype(np.float64) - mean) * factor + beta
        return self._conv_with(conv, w.astype(weight.dtype), b.astype(weight.dtype),
                               bn.outputs[0]), [i]

    def _per_channel_into_conv(self, node: Node, scale: bool) -> tuple[Node, list[int]] | None:
        """A Conv followed by the Mul (``scale``) or Add of a per-channel constant: one Conv."""
        found = self.conv_operand(node)
        if found is None:
            return None
        k, i, conv, channels, rank = found
        values = self.per_channel(self.const(node.inputs[1 - k]), channels, rank)
        parts = self._conv_parts(conv, channels)
        if values is None or parts is None:
            return None
        weight, bias = parts
        if scale:
            weight = weight * values.reshape(-1, *([1] * (weight.ndim - 1))).astype(weight.dtype)
            bias = bias * values
        else:
            bias = bias + values
        return self._conv_with(conv, weight, bias.astype(weight.dtype), node.outputs[0]), [i]

    # --- matrix products --------------------------------------------------------------------
    def _add_into_gemm(self, add: Node) -> tuple[Node, list[int]] | None:
        for k in (0, 1):
            found = self.source(add.inputs[k], "Gemm")
            c = self.const(add.inputs[1 - k])
            if found is None or c is None:
                continue
            i, gemm = found
            if gemm.attrs.get("alpha", 1.0) != 1.0 or gemm.attrs.get("beta", 1.0) != 1.0:
                continue
            shape = self.b.shapes.get(add.inputs[k])
            if not _fits_product(c, shape):
                continue
            if len(gemm.inputs) > 2 and gemm.inputs[2]:
                old = self.const(gemm.inputs[2])
                if old is None:
                    continue
                c = old + c
                if not _fits_product(c, shape):
                    continue
            return self.make("Gemm", [*gemm.inputs[:2], self.store(c)], [add.outputs[0]],
                             like=gemm), [i]
        return None

    def _reciprocal_to_div(self, mul: Node) -> tuple[Node, list[int]] | None:
        for k in (0, 1):
            found = self.source(mul.inputs[k], "Reciprocal")
            if found is not None:
                i, recip = found
                return self.make("Div", [mul.inputs[1 - k], recip.inputs[0]], mul.outputs), [i]
        return None

    def _matmul_nd(self, back: Node) -> tuple[Node, list[int]] | None:
        """Reshape(MatMul(Reshape(a), Reshape(b))) -> MatMul(a, b) when the reshapes only merge
        and split the same leading batch axes."""
        producer = self.producer.get(back.inputs[0])
        if producer is None or self.nodes[producer] is None or \
                self.nodes[producer].op_type != "MatMul":  # the common case, ruled out at once
            return None
        found = self.source(back.inputs[0], "MatMul")
        removed_too = True
        if found is None:
            # With dynamic batch axes the split's target reads the 3-D product's Shape: the
            # old product stays for those readers, and goes with them once they are dead.
            found = self._read_by_shapes(back.inputs[0], "MatMul")
            removed_too = False
        if found is None:
            return None
        i, mm = found
        ra, rb = self.source(mm.inputs[0], "Reshape"), self.source(mm.inputs[1], "Reshape")
        if ra is None or rb is None:
            return None
        shapes = self.b.shapes
        sa, sb = shapes.get(ra[1].inputs[0]), shapes.get(rb[1].inputs[0])
        out = shapes.get(back.outputs[0])
        # extents compare as numbers or as size variables (a dynamic batch merged with the
        # heads is the same ``batch`` on both sides); an ``Any`` proves nothing
        if not (_known(sa) and _known(sb) and _known(out)) or len(sa) < 3:
            return None
        if not (len(sa) == len(sb) == len(out) and sa[:-2] == sb[:-2] == out[:-2]
                and sa[-1] == sb[-2] and tuple(out[-2:]) == (sa[-2], sb[-1])):
            return None
        return self.make("MatMul", [ra[1].inputs[0], rb[1].inputs[0]], back.outputs), \
            [i, ra[0], rb[0]] if removed_too else []

    def _softmax_nd(self, back: Node) -> tuple[Node, list[int]] | None:
        """Reshape(Softmax(Reshape(x, (rows, cols))), shape of x) -> Softmax(x) along the one
        axis of the columns whose extent is not 1."""
        found = self.source(back.inputs[0], "Softmax", "LogSoftmax")
        if found is None:
            return None
        i, soft = found
        front = self.source(soft.inputs[0], "Reshape")
        if front is None:
            return None
        x = front[1].inputs[0]
        shape, flat = self.b.shapes.get(x), self.b.shapes.get(soft.inputs[0])
        out = self.b.shapes.get(back.outputs[0])
        if not (_static(shape) and _static(flat) and _static(out)) or tuple(out) != tuple(shape):
            return None
        if len(flat) != 2 or soft.attrs.get("axis", -1) not in (-1, 1):
            return None
        split = next((k for k in range(len(shape) + 1)
                      if int(np.prod(shape[:k], dtype=np.int64)) == flat[0]
                      and int(np.prod(shape[k:], dtype=np.int64)) == flat[1]), None)
        if split is None:
            return None
        wide = [k for k in range(split, len(shape)) if shape[k] != 1]
        if len(wide) > 1 or split == len(shape):
            return None
        axis = wide[0] if wide else split
        return self.make(soft.op_type, [x], back.outputs, axis=axis), [i, front[0]]

    # --- shapes -----------------------------------------------------------------------------
    def _unsqueeze_pair(self, outer: Node) -> tuple[Node, list[int]] | None:
        found = self.source(outer.inputs[0], "Unsqueeze")
        if found is None:
            return None
        i, inner = found
        a1, a2 = self.const(inner.inputs[1]), self.const(outer.inputs[1])
        shape = self.b.shapes.get(outer.outputs[0])
        if a1 is None or a2 is None or shape is None:
            return None
        rank = len(shape)
        final = sorted(int(a) % rank for a in a2.reshape(-1))
        # the intermediate tensor's axes sit, in order, at the final positions not in a2
        kept = [k for k in range(rank) if k not in final]
        middle_rank = rank - len(final)
        axes = sorted(final + [kept[int(a) % middle_rank] for a in a1.reshape(-1)])
        return self.make("Unsqueeze", [inner.inputs[0], self.store(np.asarray(axes, np.int64))],
                         outer.outputs), [i]

    def _reshape_pair(self, outer: Node) -> tuple[Node, list[int]] | None:
        found = self.source(outer.inputs[0], "Reshape")
        if found is None:
            return None
        i, inner = found
        target = self.const(outer.inputs[1])
        if target is None or (0 in target.reshape(-1) and not outer.attrs.get("allowzero", 0)):
            return None
        return self.make("Reshape", [inner.inputs[0], outer.inputs[1]], outer.outputs,
                         like=outer), [i]

    # --- activations ------------------------------------------------------------------------
    def _scalar(self, name: str) -> float | None:
        value = self.const(name)
        return float(value.reshape(-1)[0]) if value is not None and value.size == 1 else None

    def _hard_sigmoid(self, clip: Node) -> tuple[Node, list[int]] | None:
        if len(clip.inputs) != 3 or self._scalar(clip.inputs[1]) != 0.0 or \
                self._scalar(clip.inputs[2]) != 1.0:
            return None
        add = self.source(clip.inputs[0], "Add")
        if add is None:
            return None
        for k in (0, 1):
            beta = self._scalar(add[1].inputs[1 - k])
            mul = self.source(add[1].inputs[k], "Mul")
            if beta is None or mul is None:
                continue
            for j in (0, 1):
                alpha = self._scalar(mul[1].inputs[1 - j])
                if alpha is not None:
                    return self.make("HardSigmoid", [mul[1].inputs[j]], clip.outputs,
                                     alpha=alpha, beta=beta), [add[0], mul[0]]
        return None

    def _hard_swish(self, mul: Node) -> tuple[Node, list[int]] | None:
        for k in (0, 1):
            found = self.source(mul.inputs[k], "HardSigmoid")
            if found is None or found[1].inputs[0] != mul.inputs[1 - k]:
                continue
            hs = found[1]
            if np.isclose(hs.attrs.get("alpha", 0.2), 1 / 6) and np.isclose(
                    hs.attrs.get("beta", 0.5), 0.5):
                return self.make("HardSwish", [mul.inputs[1 - k]], mul.outputs), [found[0]]
        return None


class _Linear:
    """A ``MatMul(x, W) -> Add(b)`` pair on N-D data, and what turning it into Gemm costs."""

    __slots__ = ("matmul", "add", "weight", "bias", "next_reshape")

    def __init__(self, matmul: Node, add: Node, weight: np.ndarray, bias: np.ndarray,
                 next_reshape: Node) -> None:
        self.matmul = matmul
        self.add = add
        self.weight = weight
        self.bias = bias
        self.next_reshape = next_reshape


def _linears_to_gemm(b: GraphBuilder, outputs: Sequence[str]) -> None:
    """``MatMul -> Add`` on N-D data as ``Reshape -> Gemm -> Reshape`` where that saves nodes.

    The reshape before is free when the data comes from a Reshape read by
    nothing else (its target becomes 2-D), and shared by the layers reading
    the same data; the reshape after is free when a Reshape (to a shape
    without 0s) reads the result.  A group of layers on the same data is
    rewritten when it then takes fewer nodes.
    """
    nodes = b.nodes
    matmuls = [n for n in nodes if n.op_type == "MatMul"]
    if not matmuls:
        return
    keep = set(outputs)
    producer = {o: n for n in nodes for o in n.outputs}
    reads = Counter(chain.from_iterable([n.inputs for n in nodes]))
    last_reader = {x: n for n in nodes for x in n.inputs}

    def only_reader(name: str, op_type: str) -> Node:
        if reads.get(name, 0) != 1 or name in keep or last_reader[name].op_type != op_type:
            return None
        return last_reader[name]

    groups: dict[str, list[_Linear]] = {}
    for n in matmuls:
        x, w = n.inputs
        weight = b.arrays.get(w)
        shape = b.shapes.get(x)
        add = only_reader(n.outputs[0], "Add")
        if weight is None or weight.ndim != 2 or shape is None or len(shape) < 3 or add is None:
            continue
        bias = b.arrays.get(add.inputs[1] if add.inputs[0] == n.outputs[0] else add.inputs[0])
        out = b.shapes.get(add.outputs[0])
        if bias is None or bias.size != weight.shape[1] or bias.shape[-1] != weight.shape[1] or \
                out is None or sum(_unknown(d) for d in out) > 1:
            continue
        after = only_reader(add.outputs[0], "Reshape")
        target = None if after is None else b.arrays.get(after.inputs[1])
        if target is None or 0 in target.reshape(-1):
            after = None
        groups.setdefault(x, []).append(_Linear(n, add, weight, bias, after))
    replaced: dict[int, list[Node]] = {}
    for x, linears in groups.items():
        source = producer.get(x)
        free_in = (source is not None and source.op_type == "Reshape" and x not in keep
                   and reads.get(x, 0) == len(linears))
        cost = (0 if free_in else 1) + sum(lin.next_reshape is None for lin in linears)
        if cost >= len(linears):
            continue
        k = linears[0].weight.shape[0]
        flat = b.name(b.ints([-1, k]))
        if free_in:
            replaced[id(source)] = [b.make_node("Reshape", [source.inputs[0], flat], [x])]
            rows = b.shapes.get(x, ())[:-1]
            b.shapes[x] = (Any() if any(_unknown(d) for d in rows)
                           else int(np.prod(rows, dtype=np.int64)), k)
            x2 = x
        else:
            x2 = b.fresh("flat")
            first = linears[0].matmul
            replaced[id(first)] = [b.make_node("Reshape", [x, flat], [x2])]
        for lin in linears:
            gemm_out = b.fresh("gemm")
            gemm = b.make_node("Gemm", [x2, lin.matmul.inputs[1],
                                        b.name(b.const(lin.bias.reshape(-1)))], [gemm_out])
            replaced.setdefault(id(lin.matmul), []).append(gemm)
            if lin.next_reshape is not None:
                lin.next_reshape.inputs[0] = gemm_out
                replaced[id(lin.add)] = []
            else:
                dims = [-1 if _unknown(d) else int(d) for d in b.shapes[lin.add.outputs[0]]]
                replaced[id(lin.add)] = [b.make_node("Reshape", [gemm_out, b.name(b.ints(dims))],
                                                     list(lin.add.outputs))]
    if replaced:
        new_nodes: list[Node] = []
        for n in nodes:
            instead = replaced.get(id(n))
            if instead is None:
                new_nodes.append(n)
            else:
                new_nodes.extend(instead)
        b.nodes[:] = new_nodes


def _drop_dead(b: GraphBuilder, outputs: Sequence[str]) -> None:
    live = set(outputs)
    kept = []
    for n in reversed(b.nodes):
        if n is not None and not live.isdisjoint(n.outputs):
            kept.append(n)
            live.update(n.inputs)
    live.discard("")  # an omitted optional input
    kept.reverse()
    b.nodes[:] = kept
    b.initializers[:] = [name for name in b.initializers if name in live]
