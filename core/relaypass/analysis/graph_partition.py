"""Grouping the nodes of a forward graph into fusable groups: Relay's GraphPartitioner.

Every node starts in a group of its own; groups are merged with a union-find
structure (``parent`` links with path compression), and the representative of
a group is its last node in post-order -- the node whose value leaves the
group, which becomes the call of the fused function.

Three sweeps over the nodes in post-order try to merge each node's group into
the group of its immediate post-dominator:

phase 0
    an out-elemwise-fusable operator (conv2d, dense, ...) joins a post-dominator
    reached through elementwise uses only, when every node between them is at
    most broadcast; elementwise and broadcast operators join a post-dominator
    reached through injective or reduction uses, when everything between is
    at most injective (the post-dominator itself may be a reduction or an
    already anchored group).
phase 1
    the same for elementwise and broadcast operators, and now injective
    operators and tuples join a post-dominator when every node on the way is
    at most injective (deferred, so that convolutions finish fusing first).
phase 2
    injective operators join a tuple that has itself been fused into the
    injective operator that consumes it (concatenate's argument, say), unless
    that would fuse two tuples together.

A merge is refused when the group would hold more than ``max_depth`` nodes,
or, with ``max_function_args`` set, when the fused function would take more
arguments than it allows (counted as Relay counts them: the outputs take
slots, and a dimension of unknown extent costs extra arguments).  When the
argument count depends on a consumer whose inputs are not grouped yet, the
merge is postponed until the sweep reaches that consumer, as in Relay.

The counting follows Relay's exactly, including where it reads a node's own
group record rather than its representative's, because the groups it produces
are what users compare against Relay.  Every walk along the graph (checking
the paths to a post-dominator, merging them, counting nodes and arguments)
uses an explicit stack.
"""

from __future__ import annotations

from relaypass.ir.expr import Call, Tuple, TupleGetItem, Var
from relaypass.ir.op import OpPattern
from relaypass.ir.types import Any, SymbolicDim, TensorType

from .dominator import PostDominatorTree
from .forward_graph import BROADCAST, ELEMWISE, INJECTIVE, OPAQUE, TUPLE, IndexedForwardGraph

__all__ = ["GraphPartitioner"]

COMM_REDUCE = int(OpPattern.COMM_REDUCE)
OUT_ELEMWISE_FUSABLE = int(OpPattern.OUT_ELEMWISE_FUSABLE)


class GraphPartitioner:
    """Partition a forward graph into groups; :meth:`partition` returns each node's representative.

    ``opt_level`` 0 keeps every node in a group of its own; ``max_depth`` bounds
    the number of nodes in a group; ``max_function_args`` (0 for no limit)
    bounds the arguments of the function a group becomes.
    """

    __slots__ = (
        "graph", "opt_level", "max_depth", "max_function_args",
        "parent", "pattern", "anchor", "num_nodes", "args_num",
        "_mark", "_stamp", "_postponed", "_postpone_node",
    )

    def __init__(self, graph: IndexedForwardGraph, opt_level: int, max_depth: int,
                 max_function_args: int = 0) -> None:
        self.graph = graph
        self.opt_level = opt_level
        self.max_depth = max_depth
        self.max_function_args = max_function_args
        n = len(graph.nodes)
        # Group records, one per node to begin with; a record stops being a
        # representative when its parent is set.
        self.parent = [-1] * n
        self.pattern = list(graph.pattern)
        self.anchor = [i if p == OUT_ELEMWISE_FUSABLE else -1 for i, p in enumerate(graph.pattern)]
        self.num_nodes = [1] * n
        self.args_num = _initial_args(graph) if max_function_args > 0 else [0] * n
        self._mark = [0] * n
        self._stamp = 0
        self._postponed: dict[int, list[int]] = {}
        self._postpone_node = -1

    # --- union-find ------------------------------------------------------------------------
    def find(self, i: int) -> int:
        """The representative of node ``i``'s group (compressing the path on the way)."""
        return _find(self.parent, i)

    def _merge(self, child: int, parent: int) -> None:
        links = self.parent
        if links[child] >= 0:
            child = _find(links, child)
        if links[parent] >= 0:
            parent = _find(links, parent)
        if child == parent:
            return
        self.num_nodes[parent] += self.num_nodes[child]
        self.args_num[parent] += self.args_num[child]
        links[child] = parent
        if self.anchor[child] >= 0:
            self.anchor[parent] = self.anchor[child]
            if self.pattern[child] > self.pattern[parent]:
                self.pattern[parent] = self.pattern[child]

    # --- the algorithm --------------------------------------------------------------------
    def partition(self) -> list[int]:
        """Run the fusion phases; the representative of every node's group, by node number."""
        n = len(self.graph.nodes)
        if self.opt_level != 0:
            dom = PostDominatorTree(self.graph)
            for phase in range(3):
                self._run_phase(dom, phase)
        links = self.parent
        return [i if links[i] < 0 else _find(links, i) for i in range(n)]

    def _run_phase(self, dom: PostDominatorTree, phase: int) -> None:
        links = self.parent
        own_pattern = self.pattern
        dom_parent = dom.parent
        dom_pattern = dom.pattern
        max_depth = self.max_depth
        limit_args = self.max_function_args > 0
        postponed = self._postponed
        for nid in range(len(dom_parent)):
            self._postpone_node = -1
            if postponed and nid in postponed:
                self._run_postponed(nid, dom)
            # The node's own record: its pattern changes only while it represents
            # a group that absorbs an anchor (Relay reads it the same way).
            pat = own_pattern[nid]
            if pat == OPAQUE:
                continue
            sink = dom_parent[nid]
            if sink < 0:
                continue
            # Decide what would be tried, then check the limits, then the paths.
            if phase == 2:
                if pat > INJECTIVE:
                    continue
                sink_root = sink if links[sink] < 0 else _find(links, sink)
                if own_pattern[sink_root] == TUPLE:
                    continue
                if not (own_pattern[sink] == TUPLE and own_pattern[sink_root] <= INJECTIVE):
                    continue
                inner, last = INJECTIVE, INJECTIVE
            else:
                root = nid if links[nid] < 0 else _find(links, nid)
                if root == (sink if links[sink] < 0 else _find(links, sink)):
                    continue
                if own_pattern[sink] == TUPLE:
                    continue
                if pat == OUT_ELEMWISE_FUSABLE:
                    if phase != 0 or dom_pattern[nid] != ELEMWISE:
                        continue
                    inner, last = BROADCAST, BROADCAST
                elif pat <= BROADCAST:
                    dpat = dom_pattern[nid]
                    if not (dpat <= INJECTIVE or dpat == COMM_REDUCE):
                        continue
                    inner, last = INJECTIVE, OUT_ELEMWISE_FUSABLE
                elif pat == INJECTIVE or pat == TUPLE:
                    if phase != 1:
                        continue
                    inner, last = INJECTIVE, INJECTIVE
                else:  # a reduction never joins what follows it
                    continue
            if self._count_fused_nodes(nid, sink) > max_depth:
                continue
            if limit_args:
                limit = self._count_args_limit(nid)
                if limit > 0 and self._count_fused_args(nid) > limit:
                    continue
            if self._check_path(nid, sink, inner, last):
                self._commit_fuse(nid, sink)

    def _run_postponed(self, nid: int, dom: PostDominatorTree) -> None:
        """Fuse the inputs whose fusion waited for node ``nid`` to be reached, if the args fit."""
        for src in self._postponed.pop(nid):
            if self._count_args(nid, False) <= self._count_args_limit(nid):
                sink = dom.parent[src]
                if self.anchor[sink] >= 0:
                    continue
                self._commit_fuse(src, sink)

    # --- walks between a node and its post-dominator ----------------------------------------
    def _next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    def _check_path(self, src: int, sink: int, inner: int, last: int) -> bool:
        """Whether every group met after ``src`` is at most ``inner``, and ``sink``'s at most ``last``."""
        links = self.parent
        pattern = self.pattern
        outputs = self.graph.outputs
        outs = outputs[src]
        if len(outs) == 1 and outs[0] == sink:
            return pattern[sink if links[sink] < 0 else _find(links, sink)] <= last
        mark = self._mark
        stamp = self._next_stamp()
        stack = list(outs)
        while stack:
            v = stack.pop()
            if mark[v] == stamp:
                continue
            mark[v] = stamp
            p = pattern[v if links[v] < 0 else _find(links, v)]
            if v == sink:
                if p > last:
                    return False
                continue
            if p > inner:
                return False
            stack.extend(outputs[v])
        return True

    def _commit_fuse(self, src: int, sink: int) -> None:
        """Merge every node from ``src`` up to (not including) ``sink`` into ``sink``'s group."""
        if self._postpone_node >= 0:
            self._postponed.setdefault(self._postpone_node, []).append(src)
            return
        outputs = self.graph.outputs
        outs = outputs[src]
        if len(outs) == 1 and outs[0] == sink:
            self._merge(src, sink)
            return
        mark = self._mark
        stamp = self._next_stamp()
        stack = [src]
        while stack:
            v = stack.pop()
            if v == sink or mark[v] == stamp:
                continue
            mark[v] = stamp
            self._merge(v, sink)
            stack.extend(outputs[v])

    def _count_fused_nodes(self, child: int, sink: int) -> int:
        """The size of ``sink``'s group once ``child`` and everything up to ``sink`` joins it."""
        num_nodes = self.num_nodes
        links = self.parent
        total = num_nodes[sink if links[sink] < 0 else _find(links, sink)]
        outputs = self.graph.outputs
        outs = outputs[child]
        if len(outs) == 1 and outs[0] == sink:
            return total + num_nodes[child]
        mark = self._mark
        stamp = self._next_stamp()
        stack = [child]
        while stack:
            v = stack.pop()
            if v == sink or mark[v] == stamp:
                continue
            mark[v] = stamp
            total += num_nodes[v]
            stack.extend(outputs[v])
        return total

    # --- argument counting (only with max_function_args) ---------------------------------------
    def _count_args_limit(self, child: int) -> int:
        """How many inputs a function may take once the outputs of ``child`` took their slots."""
        nodes = self.graph.nodes
        used = 0
        for o in self.graph.outputs[child]:
            used += 1
            node = nodes[o]
            if type(node) is Call:
                ty = node.checked_type
                if type(ty) is TensorType:
                    used += _unknown_dims(ty, with_strides=False)
        limit = self.max_function_args
        return limit - used if limit > used else 0

    def _count_fused_args(self, child: int) -> int:
        """The largest argument count among the groups of ``child``'s consumers."""
        best = 0
        for o in self.graph.outputs[child]:
            count = self._count_args(o, True)
            if count > best:
                best = count
        return best

    def _count_args(self, src: int, update_postpone: bool) -> int:
        """The arguments of ``src``'s group plus those of the distinct groups feeding ``src``.

        A feeding group with no arguments counted yet either postpones the
        fusion being considered (``update_postpone``) or is counted through the
        nodes feeding it, each level with its own set of groups already seen.
        """
        find = self.find
        args_num = self.args_num
        index = self.graph.index
        nodes = self.graph.nodes
        frames = [[_operands(nodes[src]), 0, {find(src)}, args_num[src], src]]
        while True:
            frame = frames[-1]
            operands, pos, seen = frame[0], frame[1], frame[2]
            descended = False
            while pos < len(operands):
                arg = operands[pos]
                pos += 1
                if type(arg) is Var:
                    continue
                j = index.get(arg)
                if j is None:
                    continue
                group = find(j)
                if group in seen:
                    continue
                seen.add(group)
                if args_num[group] > 0:
                    frame[3] += args_num[group]
                elif update_postpone:
                    self._postpone_node = frame[4]
                else:
                    frame[1] = pos
                    frames.append([_operands(nodes[j]), 0, {group}, args_num[j], j])
                    descended = True
                    break
            if descended:
                continue
            frames.pop()
            if not frames:
                return frame[3]
            frames[-1][3] += frame[3]


def _find(parent: list[int], i: int) -> int:
    root = i
    while parent[root] >= 0:
        root = parent[root]
    while i != root:
        nxt = parent[i]
        if nxt == root:
            break
        parent[i] = root
        i = nxt
    return root


def _operands(node: object) -> tuple:
    """What a call or a tuple takes in (its arguments, its fields); nothing for other nodes."""
    t = type(node)
    if t is Call or t is Tuple:
        return t._layout_.operands(node)  # type: ignore[attr-defined]
    return ()


def _unknown_dims(ty: TensorType, with_strides: bool = True) -> int:
    """The extra arguments a tensor of unknown extents costs: one per unknown dim, plus strides."""
    count = 0
    for d in ty.shape:
        if isinstance(d, Any) or isinstance(d, SymbolicDim):  # known only at run time
            count += 1
    if with_strides and count:
        count += len(ty.shape)
    return count


def _initial_args(graph: IndexedForwardGraph) -> list[int]:
    """Each node's own argument count: its variable and projection operands (or itself, a variable)."""
    out = [0] * len(graph.nodes)
    for i, node in enumerate(graph.nodes):
        t = type(node)
        if t is Var:
            out[i] = 1 + _tensor_extra(node)
        elif t is Call or t is Tuple:
            count = 0
            for arg in _operands(node):
                ta = type(arg)
                if ta is Var or ta is TupleGetItem:
                    count += 1 + _tensor_extra(arg)
            out[i] = count
    return out


def _tensor_extra(expr: object) -> int:
    ty = expr.checked_type  # type: ignore[attr-defined]
    return _unknown_dims(ty) if type(ty) is TensorType else 0
