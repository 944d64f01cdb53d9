"""The indexed dataflow graph of an expression, with its post-dominator tree.

What TVM's ``IndexedGraph<Expr>`` gives the matcher and the grouper: every
node of the expression numbered in post-order (children first), each node's
inputs and outputs, and the post-dominator tree over those edges (the
expression itself is the root).  Dominator patterns walk the inputs; the
grouper tries roots from the last index to the first and checks, with the
tree, that a value leaving a matched group comes back to its root.

Edges follow TVM's: a call's inputs are its callee and arguments, a
function's only its body, a ``let``'s its body (the bound value flows into
the bound variable instead).  Everything is built with explicit stacks and
loops, and only when first needed (most groupings never ask about edges);
dominance questions are answered in constant time from the tree's
entry and exit numbers.
"""

from __future__ import annotations

from relaypass.ir.expr import Call, Expr, Function, Let, children
from relaypass.ir.op import Op

__all__ = ["IndexedGraph"]


def _inputs(node: Expr) -> tuple[Expr, ...]:
    kind = type(node)
    if kind is Function:
        return (node.body,)
    if kind is Let:
        return (node.body,)
    if kind is Call:
        return (node.op, *node.args)
    return tuple(children(node))


class IndexedGraph:
    """Nodes of ``root`` by post-order index, their edges and post-dominators."""

    __slots__ = ("nodes", "index", "_inputs", "_outputs", "_enter", "_leave", "_by_op",
                 "_functions")

    def __init__(self, root: Expr) -> None:
        self.nodes, self.index = _post_order_indexed(root)
        self._inputs: list[tuple[Expr, ...]] | None = None
        self._outputs: list[list[int]] | None = None
        self._enter: list[int] | None = None
        self._by_op: dict[str, list[int]] | None = None
        self._functions: list[int] = []

    @classmethod
    def from_order(cls, nodes: list[Expr], index: dict[Expr, int]) -> IndexedGraph:
        """The graph of ``nodes[-1]`` from an order the caller already has, without a walk.

        ``nodes`` must hold every node reachable from the last one exactly
        once, each after its inputs; ``index`` numbers them.  Any such order
        gives the same edges and post-dominators, so a rewriter that has just
        rebuilt a program in order need not walk it again.
        """
        graph = cls.__new__(cls)
        graph.nodes, graph.index = nodes, index
        graph._inputs = None
        graph._outputs = None
        graph._enter = None
        graph._by_op = None
        graph._functions = []
        return graph

    def __len__(self) -> int:
        return len(self.nodes)

    def _edges(self) -> None:
        index = self.index
        inputs: list[tuple[Expr, ...]] = []
        outputs: list[list[int]] = [[] for _ in self.nodes]
        for k, node in enumerate(self.nodes):
            ins = _inputs(node)
            inputs.append(ins)
            for kid in ins:
                outputs[index[kid]].append(k)
            if type(node) is Let:
                outputs[index[node.value]].append(index[node.var])
        self._inputs = inputs
        self._outputs = outputs

    def positions(self, op_names: frozenset[str]) -> list[int]:
        """Indices of the calls of the operators ``op_names`` and of all functions, ascending.

        Lets a grouper whose pattern can only match calls of a few operators
        skip every other node (functions are included: earlier partitions
        are recognised by them).
        """
        if self._by_op is None:
            by_op: dict[str, list[int]] = {}
            for k, node in enumerate(self.nodes):
                kind = type(node)
                if kind is Call and type(node.op) is Op:
                    by_op.setdefault(node.op.name, []).append(k)
                elif kind is Function:
                    self._functions.append(k)
            self._by_op = by_op
        found = [k for name in op_names for k in self._by_op.get(name, ())]
        found.extend(self._functions)
        found.sort()
        return found

    def inputs_of(self, node: Expr) -> tuple[Expr, ...]:
        """What flows into ``node`` (its callee and arguments, a function's body ...)."""
        if self._inputs is None:
            self._edges()
        return self._inputs[self.index[node]]

    def users(self, node: Expr) -> list[Expr]:
        """The nodes that take ``node`` as an input."""
        if self._outputs is None:
            self._edges()
        nodes = self.nodes
        return [nodes[k] for k in self._outputs[self.index[node]]]

    def _post_dominators(self) -> tuple[list[int], list[int]]:
        """The tree's entry and exit numbers, computed when a dominance question first comes."""
        if self._enter is not None:
            return self._enter, self._leave
        if self._outputs is None:
            self._edges()
        count = len(self.nodes)
        parent = [-1] * count
        depth = [0] * count
        outputs = self._outputs
        for k in range(count - 1, -1, -1):
            outs = outputs[k]
            if k == count - 1 or not outs:
                depth[k] = 1
                continue
            lca = outs[0]
            for other in outs[1:]:
                lca = _common_ancestor(lca, other, parent, depth)
                if lca < 0:
                    break
            parent[k] = lca
            depth[k] = depth[lca] + 1 if lca >= 0 else 1
        kids: list[list[int]] = [[] for _ in range(count)]
        for k, p in enumerate(parent):
            if p >= 0:
                kids[p].append(k)
        enter = [0] * count
        leave = [0] * count
        clock = 0
        for start in range(count - 1, -1, -1):
            if parent[start] >= 0:
                continue
            stack = [(start, False)]
            while stack:
                k, done = stack.pop()
                if done:
                    leave[k] = clock
                    clock += 1
                    continue
                enter[k] = clock
                clock += 1
                stack.append((k, True))
                stack.extend((c, False) for c in kids[k])
        self._enter = enter
        self._leave = leave
        return enter, leave

    def dominates(self, node: Expr, other: Expr) -> bool:
        """True when every path from ``other`` to the root passes through ``node`` (strictly)."""
        enter, leave = self._post_dominators()
        a = self.index[node]
        b = self.index[other]
        return a != b and enter[a] < enter[b] and leave[b] < leave[a]

    def dominated_by(self, node: Expr) -> list[Expr]:
        """The nodes ``node`` strictly post-dominates, in reverse post-order."""
        enter, leave = self._post_dominators()
        a = self.index[node]
        return [self.nodes[k] for k in range(a - 1, -1, -1)
                if enter[a] < enter[k] and leave[k] < leave[a]]


def _post_order_indexed(root: Expr) -> tuple[list[Expr], dict[Expr, int]]:
    """``post_order(root)`` and each node's place in it, in one walk.

    The same order as :func:`relaypass.ir.traversal.post_order` (children in
    field order, each node where it is first finished), with the index
    doubling as the set of finished nodes.
    """
    nodes: list[Expr] = []
    index: dict[Expr, int] = {}
    expanded: set[Expr] = set()
    stack: list[Expr] = [root]
    pop, push, expand = stack.pop, stack.append, expanded.add
    while stack:
        node = pop()
        if node in expanded:
            if node not in index:
                index[node] = len(nodes)
                nodes.append(node)
            continue
        if node in index:
            continue
        expand(node)
        push(node)
        for kid in reversed(type(node)._layout_.children(node)):
            if kid not in index and kid not in expanded:
                push(kid)
    return nodes, index


def _common_ancestor(a: int, b: int, parent: list[int], depth: list[int]) -> int:
    while a != b:
        if a < 0 or b < 0:
            return -1
        if depth[a] < depth[b]:
            b = parent[b]
        elif depth[a] > depth[b]:
            a = parent[a]
        else:
            a = parent[a]
            b = parent[b]
    return a
