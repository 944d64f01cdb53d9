"""The regions an expression's ``compiler_begin`` / ``compiler_end`` annotations delimit.

Relay's BYOC passes (MergeCompilerRegions, PartitionGraph) both need to know,
for an annotated expression, which nodes belong together: a region starts at
``compiler_begin`` calls (its inputs), holds what is computed from them, and
stops at ``compiler_end`` calls (its outputs).  This is Relay's
``AnnotatedRegionSet``: the same regions, the same ids (numbered in the
post-order in which their first ``compiler_begin`` is reached), the same
inputs and outputs in the same order, and ``merge_regions`` with Relay's rules
(an output of the source that feeds an input of the destination becomes
internal).

Differences that do not change a result: looking a node's region up is a
dictionary lookup (Relay scans every region), and a merge moves the smaller
of the two node sets, with merged regions forwarding to the survivor, so a
chain of 100,000 merges stays linear.  The walk uses an explicit stack.

Annotations that do not pair raise :class:`RegionAnnotationError`: an
operator fed both from inside a region and from outside any region, a
``compiler_end`` whose argument is in no region, or one whose compiler is not
its region's.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import RelayPassError
from ..ir.expr import (
    Call,
    Expr,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    children,
)
from ..ir.op import Op
from ..ir.summary import short_text

__all__ = ["AnnotatedRegion", "AnnotatedRegionSet", "RegionAnnotationError"]


class RegionAnnotationError(RelayPassError):
    """``compiler_begin`` / ``compiler_end`` annotations that do not delimit regions."""


class AnnotatedRegion:
    """One region: its id, target, the function it is in, its nodes, inputs and outputs.

    ``args`` are the region's ``compiler_begin`` calls and ``rets`` its
    ``compiler_end`` calls, in Relay's order; ``nodes`` includes both.
    """

    __slots__ = ("id", "name", "target", "_nodes", "_ins", "_outs", "_merged_into")

    def __init__(self, region_id: int, name: str, target: str) -> None:
        self.id = region_id
        self.name = name
        self.target = target
        self._nodes: set[Expr] = set()
        # Ordered sets: dicts with None values keep Relay's list order and remove in O(1).
        self._ins: dict[Expr, None] = {}
        self._outs: dict[Expr, None] = {}
        self._merged_into: AnnotatedRegion | None = None

    @property
    def nodes(self) -> frozenset[Expr]:
        return frozenset(self._nodes)

    @property
    def args(self) -> list[Expr]:
        return list(self._ins)

    @property
    def rets(self) -> list[Expr]:
        return list(self._outs)

    # Relay's accessor names, for ported code.
    def get_id(self) -> int:
        return self.id

    def get_name(self) -> str:
        return self.name

    def get_target(self) -> str:
        return self.target

    def get_inputs(self) -> list[Expr]:
        return self.args

    def get_outputs(self) -> list[Expr]:
        return self.rets

    def get_nodes(self) -> frozenset[Expr]:
        return self.nodes

    def __repr__(self) -> str:
        return (f"AnnotatedRegion(id={self.id}, target={self.target!r}, "
                f"{len(self._nodes)} nodes, {len(self._ins)} args, {len(self._outs)} rets)")


class AnnotatedRegionSet:
    """The regions of ``expr`` delimited by calls of ``begin_op`` and ``end_op``.

    ``func_name`` is recorded as each region's ``name`` (PartitionGraph names
    the lifted functions after it).  ``begin_op`` / ``end_op`` are operators
    or their names, as Relay's Python ``AnnotatedRegionSet(expr, begin, end)``.
    """

    def __init__(
        self,
        expr: Expr,
        begin_op: Op | str = "annotation.compiler_begin",
        end_op: Op | str = "annotation.compiler_end",
        func_name: str = "default",
    ) -> None:
        self._begin = Op.get(begin_op) if isinstance(begin_op, str) else begin_op
        self._end = Op.get(end_op) if isinstance(end_op, str) else end_op
        self._func_name = func_name
        self._regions: dict[int, AnnotatedRegion] = {}
        self._owner: dict[Expr, AnnotatedRegion] = {}
        self._build(expr)

    # --- queries ---------------------------------------------------------------
    def get_region(self, expr: Expr) -> AnnotatedRegion | None:
        """The region ``expr`` belongs to, or None."""
        region = self._owner.get(expr)
        if region is None or region._merged_into is None:
            return region
        root = region
        while root._merged_into is not None:
            root = root._merged_into
        # Path compression: every region passed on the way forwards straight to the survivor.
        while region._merged_into is not None and region._merged_into is not root:
            region._merged_into, region = root, region._merged_into
        self._owner[expr] = root
        return root

    def __iter__(self) -> Iterator[AnnotatedRegion]:
        return iter(list(self._regions.values()))

    def __len__(self) -> int:
        return len(self._regions)

    # --- changes ---------------------------------------------------------------
    def merge_regions(self, src: AnnotatedRegion, dest: AnnotatedRegion) -> None:
        """Move everything of ``src`` into ``dest`` and drop ``src`` (Relay's MergeRegions).

        An input of the merged region whose argument is an output of ``src``
        is now internal: it leaves the inputs and that output leaves the outputs.
        """
        if src is dest:
            return
        src_nodes = src._nodes
        if len(src_nodes) > len(dest._nodes):
            dest._nodes, src_nodes = src_nodes, dest._nodes
        dest._nodes.update(src_nodes)
        dest._ins.update(src._ins)
        dest._outs.update(src._outs)
        internal = [begin for begin in dest._ins if self.get_region(begin.args[0]) is src]
        for begin in internal:
            dest._outs.pop(begin.args[0], None)
            del dest._ins[begin]
        src._merged_into = dest
        src._nodes = set()
        del self._regions[src.id]

    def _add_to_region(self, dest: AnnotatedRegion, expr: Expr) -> None:
        src = self.get_region(expr)
        if src is not None:
            self.merge_regions(src, dest)
        else:
            dest._nodes.add(expr)
            self._owner[expr] = dest

    def _make_region(self, target: str) -> AnnotatedRegion:
        region = AnnotatedRegion(len(self._regions_made), self._func_name, target)
        self._regions_made.append(region)
        self._regions[region.id] = region
        return region

    # --- construction ----------------------------------------------------------
    def _build(self, expr: Expr) -> None:
        """Walk ``expr`` post-order (explicit stack) and grow the regions.

        As in Relay, calls, tuples and projections join their arguments'
        region after the arguments were seen; lets, ifs and references look
        at their operands before descending into them.
        """
        self._regions_made: list[AnnotatedRegion] = []
        visited: set[Expr] = set()
        stack: list[tuple[Expr, bool]] = [(expr, False)]
        pre_kinds = (Let, If, RefCreate, RefRead, RefWrite)
        while stack:
            node, expanded = stack.pop()
            if expanded:
                self._visit_post(node)
                continue
            if node in visited or type(node) is Op:
                continue
            visited.add(node)
            kind = type(node)
            if kind in pre_kinds:
                self._add_to_arg_region(node, _operands(node))
            else:
                stack.append((node, True))
            kids = children(node)
            for kid in reversed(kids):
                if isinstance(kid, Expr) and kid not in visited:
                    stack.append((kid, False))
        del self._regions_made

    def _visit_post(self, node: Expr) -> None:
        kind = type(node)
        if kind is Call:
            if node.op is self._begin:
                self._open(node)
            elif node.op is self._end:
                self._close(node)
            else:
                self._add_to_arg_region(node, node.args)
        elif kind is Tuple:
            self._add_to_arg_region(node, node.fields)
        elif kind is TupleGetItem:
            self._add_to_arg_region(node, (node.tuple_value,))

    def _open(self, begin: Call) -> None:
        if len(begin.args) != 1:
            raise RegionAnnotationError(
                f"compiler_begin takes one argument, got {len(begin.args)}: {short_text(begin)}")
        region = self._make_region(begin.attrs.compiler)
        region._nodes.add(begin)
        region._ins[begin] = None
        self._owner[begin] = region

    def _close(self, end: Call) -> None:
        if len(end.args) != 1:
            raise RegionAnnotationError(
                f"compiler_end takes one argument, got {len(end.args)}: {short_text(end)}")
        region = self.get_region(end.args[0])
        if region is None:
            raise RegionAnnotationError(
                f"compiler_end has no matching compiler_begin (its argument is in no region): "
                f"{short_text(end)}")
        if region.target != end.attrs.compiler:
            raise RegionAnnotationError(
                f"compiler_end for {end.attrs.compiler!r} closes a region that began for "
                f"{region.target!r}: {short_text(end)}")
        region._nodes.add(end)
        region._outs[end] = None
        self._owner[end] = region

    def _add_to_arg_region(self, expr: Expr, args: tuple[Expr, ...]) -> None:
        """Put ``expr`` in the region of its open arguments, merging those regions (Relay's rule)."""
        end_op = self._end
        open_args = [a for a in args if not (type(a) is Call and a.op is end_op)]
        region = None
        for arg in open_args:
            region = self.get_region(arg)
            if region is not None:
                break
        for arg in open_args:
            arg_region = self.get_region(arg)
            # ``region`` is the first open argument's region: only a None can disagree.
            if arg_region is None and region is not None:
                raise RegionAnnotationError(
                    "an expression takes operands both from inside an annotated region and from "
                    "outside any region (a missing compiler_begin or compiler_end?): "
                    f"{short_text(expr)}, operand {short_text(arg)}")
            if region is not None and arg_region is not region:
                self.merge_regions(arg_region, region)
        if region is not None:
            self._add_to_region(region, expr)


def _operands(node: Expr) -> tuple[Expr, ...]:
    """What Relay's region builder looks at for a let, an if or a reference node."""
    kind = type(node)
    if kind is Let:
        return (node.var, node.value, node.body)
    if kind is If:
        return (node.cond, node.true_branch, node.false_branch)
    if kind is RefCreate:
        return (node.value,)
    if kind is RefRead:
        return (node.ref,)
    return (node.ref,)  # RefWrite: Relay looks at the reference only
