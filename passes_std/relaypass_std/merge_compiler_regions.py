"""MergeCompilerRegions: join neighbouring annotated regions of one target (Relay's BYOC step 2).

After AnnotateTarget every supported operator is a region of its own.  This
pass (Relay's ``merge_compiler_regions.cc``) merges a region into the one
that consumes it when both have the same target, unless that would create a
cycle: a region may not absorb a parent it also reaches through a region of
another target (the parent is then "restricted" for it, and restrictions
flow down to every region below).  Then each ``compiler_end`` /
``compiler_begin`` pair that now sits inside one region is removed.

Regions are visited in Relay's order: post-order over the dataflow, where
reaching a region's ``compiler_end`` first visits the producers of all of
the region's inputs.  Relay does that by recursion; here it is a stack
machine, so a chain of 100,000 regions merges without recursion.  Finding
the region of a node is a dictionary lookup and merges move the smaller
node set (:mod:`relaypass.analysis.annotated_regions`).  As in Relay, each
region's restriction set starts as a copy of its parents' sets, so a long
chain alternating between two targets costs time quadratic in its length;
one target's chain is linear.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.annotated_regions import AnnotatedRegion, AnnotatedRegionSet
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Expr, Function, If, children
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor

__all__ = ["MergeCompilerRegions", "merge_compiler_regions"]

_BEGIN = Op.get("annotation.compiler_begin")
_END = Op.get("annotation.compiler_end")

# Frames of the region merger's stack machine.
_ENTER, _AFTER_CHILDREN, _MAYBE_VISIT_PARENT, _MERGE = range(4)


class _RegionMerger:
    """Relay's RegionMerger: decides, region by region, which parents to absorb."""

    def __init__(self, regions: AnnotatedRegionSet) -> None:
        self.regions = regions
        self.merged: set[int] = set()  # ids of regions already processed
        self.restrictions: dict[int, set[int]] = {}
        # The inverse of ``restrictions``: which regions list a given region id.
        self.restricted_by: dict[int, set[int]] = {}

    def run(self, expr: Expr) -> None:
        regions = self.regions
        visited: set[Expr] = set()
        stack: list[tuple[int, object]] = [(_ENTER, expr)]
        while stack:
            step, item = stack.pop()
            if step == _ENTER:
                if item in visited or type(item) is Op:
                    continue
                visited.add(item)
                stack.append((_AFTER_CHILDREN, item))
                for kid in reversed(children(item)):
                    if isinstance(kid, Expr) and kid not in visited:
                        stack.append((_ENTER, kid))
            elif step == _AFTER_CHILDREN:
                if type(item) is not Call or item.op is not _END:
                    continue
                region = regions.get_region(item)
                if region is None or region.id in self.merged:
                    continue
                # Producers of every input first (Relay's recursive visit), then the merge.
                stack.append((_MERGE, region))
                for begin in reversed(region.args):
                    stack.append((_MAYBE_VISIT_PARENT, begin))
            elif step == _MAYBE_VISIT_PARENT:
                parent_expr = item.args[0]
                parent = regions.get_region(parent_expr)
                if parent is not None and parent.id not in self.merged:
                    stack.append((_ENTER, parent_expr))
            elif item.id not in self.merged:  # another output of it may have come first
                self._merge_parents(item)

    def _merge_parents(self, region: AnnotatedRegion) -> None:
        regions = self.regions
        mergeable: dict[AnnotatedRegion, None] = {}
        correlative: dict[AnnotatedRegion, None] = {}
        for begin in region.args:
            parent = regions.get_region(begin.args[0])
            if parent is not None:
                mergeable[parent] = None
                correlative[parent] = None
            else:
                self._control_flow_regions(begin.args[0], correlative)
        own = self.restrictions.setdefault(region.id, set())
        for parent in correlative:
            inherited = self.restrictions.get(parent.id, ())
            for rid in inherited:
                self._restrict(region.id, own, rid)
        for parent in mergeable:
            if parent.target != region.target:
                self._restrict(region.id, own, parent.id)
                continue
            if parent.id in own:
                continue
            regions.merge_regions(parent, region)
            # Whoever was kept from merging with the parent is now kept from this region.
            for rid in self.restricted_by.pop(parent.id, ()):
                theirs = self.restrictions[rid]
                theirs.discard(parent.id)
                self._restrict(rid, theirs, region.id)
        self.merged.add(region.id)

    def _restrict(self, rid: int, restrictions: set[int], other: int) -> None:
        restrictions.add(other)
        self.restricted_by.setdefault(other, set()).add(rid)

    def _control_flow_regions(self, expr: Expr, found: dict[AnnotatedRegion, None]) -> None:
        """The regions of the condition and branches of ``expr`` (looking through nested ifs)."""
        regions = self.regions
        stack = [expr]
        while stack:
            node = stack.pop()
            if type(node) is not If:
                continue
            later = []
            for part in (node.cond, node.true_branch, node.false_branch):
                region = regions.get_region(part)
                if region is not None:
                    found[region] = None
                else:
                    later.append(part)
            stack.extend(reversed(later))


class _AnnotationRemover(MixedModeMutator):
    """Drops each ``compiler_begin(compiler_end(x))`` whose two ends are in one region."""

    def __init__(self, regions: AnnotatedRegionSet) -> None:
        super().__init__()
        self.regions = regions

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if pre.op is _BEGIN:
            arg = pre.args[0]
            if type(arg) is Call and arg.op is _END:
                if self.regions.get_region(pre) is self.regions.get_region(arg):
                    return post.args[0].args[0]
        return post


def merge_compiler_regions(expr: Expr) -> Expr:
    """``expr`` with neighbouring regions of one target merged and inner annotations removed."""
    regions = AnnotatedRegionSet(expr, _BEGIN, _END)
    _RegionMerger(regions).run(expr)
    return _AnnotationRemover(regions).visit(expr)


def _merge_compiler_regions_factory() -> Callable[[Function, IRModule, object], Function]:
    """MergeCompilerRegions's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return merge_compiler_regions(func)

    return transform


#: The MergeCompilerRegions pass, the one ``relay.transform.MergeCompilerRegions``
#: builds; its metadata is in relaypass-plugin.toml.
MergeCompilerRegions = pass_constructor("MergeCompilerRegions")
