"""MergeComposite: turn each match of a target's patterns into a composite function.

The first step of Relay's bring-your-own-codegen flow (then AnnotateTarget,
MergeCompilerRegions, PartitionGraph).  A code generator that implements
``conv2d + bias_add + relu`` as one kernel declares that group as a pattern;
this pass moves every match into a function literal carrying
``Composite="<name>"`` and ``PartitionedFromPattern`` (the matched operators
in post-order), called in place of the group, so later passes see one call
per kernel.

As Relay's ``merge_composite.cc``: the table is a list of ``(name, pattern)``
or ``(name, pattern, check)``; the patterns are applied one after the other,
in table order, so an earlier entry has priority over a later one that would
match an overlapping group; a match is kept only when ``check(root)`` is
true; and between two patterns the function is typed, so that a later check
can read the ``checked_type`` of what an earlier pattern rewrote.  Relay types
the whole function again for that; here each new composite function and its
call are typed from the types of the match they replace (``partition``'s
``keep_types``), and the whole function is typed again only when that cannot
be done (an untyped input, say).  The matching
and the rewriting are :func:`relaypass.dataflow_pattern.partition`
(non-recursive, so a 100,000-deep chain is fine).

The option ``pattern_table`` is the table itself (Python, as TVM) or the name
of a registered table (a pipeline file: ``MergeComposite = { pattern_table =
"acme" }``), resolved when the pass is built so that an unknown or malformed
table fails before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from relaypass.dataflow_pattern import partition
from relaypass.dataflow_pattern.graph import IndexedGraph
from relaypass.dataflow_pattern.type_inference import infer_type_with_module
from relaypass.ir.expr import Function
from relaypass.ir.module import IRModule
from relaypass.transform import pass_constructor
from relaypass.transform.pattern_tables import Entry, pattern_table, validate_pattern_table

__all__ = ["MergeComposite", "merge_composite"]


def merge_composite(func: Function, entries: list[Entry], mod: IRModule) -> Function:
    """``func`` with the matches of ``entries`` (validated table entries) made composite.

    ``mod`` supplies the globals that typing between patterns needs; it is
    not changed.
    """
    last = len(entries) - 1
    graph = None  # of ``func``, shared by the patterns that leave it as it is
    for i, (name, pattern, check) in enumerate(entries):
        if graph is None:
            graph = IndexedGraph(func)
        merged = partition(pattern, func, {"Composite": name}, check, keep_types=True,
                           graph=graph)
        if merged is not func:
            graph = None
            if i < last and merged._checked_type is None:
                # A later check may read types of the calls this pattern just built (Relay
                # types after every pattern; after the last, the pass manager does it).
                merged = infer_type_with_module(merged, mod)
        func = merged
    return func


def _entries(table: Any) -> list[Entry]:
    if isinstance(table, str):
        return pattern_table(table)
    return validate_pattern_table(table, "MergeComposite's pattern_table")


def _merge_composite_factory(pattern_table: Any) -> Callable[[Function, IRModule, object], Function]:
    """MergeComposite's transformation: the manifest's factory.

    The pass is :data:`MergeComposite`.
    """
    entries = _entries(pattern_table)

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return merge_composite(func, entries, mod)

    return transform


#: The MergeComposite pass, the one ``relay.transform.MergeComposite`` builds;
#: everything about it is declared in relaypass-plugin.toml.
MergeComposite = pass_constructor("MergeComposite")
