"""The post-dominator tree of an indexed forward graph.

A node's immediate post-dominator is the nearest node that every path from it
to the end of the dataflow goes through: in a diamond, the node where the
branches meet.  Fusion asks each node whether it can join its post-dominator,
so this tree is what lets a convolution absorb a diamond of elementwise
operations behind it without ever fusing half a diamond.

The graph is a DAG numbered in post-order (consumers after producers), so the
tree is built in one sweep from the last node to the first: a node's parent is
the least common ancestor, in the tree built so far, of all its consumers.
While climbing to that ancestor the sweep also records the strongest pattern
met on the way (edge patterns and the patterns of the tree nodes passed), which
is what decides whether the path from a node to its post-dominator is fusable.
A value used outside the dataflow (``extern_ref``) has no post-dominator.
"""

from __future__ import annotations

from .forward_graph import ELEMWISE, OPAQUE, IndexedForwardGraph

__all__ = ["PostDominatorTree"]


class PostDominatorTree:
    """For each node of a forward graph: its immediate post-dominator and the pattern on the way.

    ``parent[i]`` is the number of the immediate post-dominator of node ``i``
    (-1 for none), ``depth[i]`` its depth in the tree (roots have depth 1) and
    ``pattern[i]`` the combined (strongest) pattern of the paths from ``i`` to
    its parent.
    """

    __slots__ = ("parent", "depth", "pattern")

    def __init__(self, graph: IndexedForwardGraph) -> None:
        n = len(graph.nodes)
        parent = [-1] * n
        depth = [1] * n
        pattern = [OPAQUE] * n
        extern_ref = graph.extern_ref
        outputs = graph.outputs
        edge_patterns = graph.edge_patterns
        for i in range(n - 1, -1, -1):
            if extern_ref[i]:
                continue
            outs = outputs[i]
            if not outs:
                pattern[i] = ELEMWISE
                continue
            pats = edge_patterns[i]
            # Merge the consumers deepest first: the ancestor found so far then only
            # climbs, so a value with many consumers along a chain (a shared scalar
            # constant) costs one walk up the chain, not one per consumer.  The
            # combined pattern covers every path up to the final ancestor whatever
            # the order.
            order = (
                sorted(range(len(outs)), key=lambda k: depth[outs[k]], reverse=True)
                if len(outs) > 2 else range(len(outs))
            )
            first = order[0]
            lca = outs[first]
            combined = pats[first] if pats[first] > ELEMWISE else ELEMWISE
            for k in order[1:]:
                other = outs[k]
                # Climb from both sides to their least common ancestor, keeping the
                # strongest pattern of the tree nodes passed.
                while lca != other:
                    if lca < 0 or other < 0:
                        lca = -1
                        break
                    dl = depth[lca]
                    do = depth[other]
                    if dl < do:
                        if pattern[other] > combined:
                            combined = pattern[other]
                        other = parent[other]
                    elif do < dl:
                        if pattern[lca] > combined:
                            combined = pattern[lca]
                        lca = parent[lca]
                    else:
                        if pattern[lca] > combined:
                            combined = pattern[lca]
                        if pattern[other] > combined:
                            combined = pattern[other]
                        lca = parent[lca]
                        other = parent[other]
                if pats[k] > combined:
                    combined = pats[k]
            parent[i] = lca
            depth[i] = depth[lca] + 1 if lca >= 0 else 1
            pattern[i] = combined
        self.parent = parent
        self.depth = depth
        self.pattern = pattern
