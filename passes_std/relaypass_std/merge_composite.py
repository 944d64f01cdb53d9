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
be done (an untyped input, say).  A target's table is long and most of its
entries name operators the program never calls: an entry is skipped, without
walking the program, when an operator every match of its pattern must call is
not called anywhere in the function (rewriting only copies calls into
composite functions, so a later pattern finds no operator that was not
there at the start).  The composite functions a pattern makes hold only new
nodes, operators, constants and variables; a later *plain* pattern
(:func:`~relaypass.dataflow_pattern.matcher.plain_matcher`: operator calls,
wildcards, constants, tuples, projections, the shape of most table entries)
cannot look inside them, so it is grouped on a graph that leaves their
insides out (``IndexedGraph``'s ``opaque``) and finds the same groups at the
cost of the program outside them.  The matching and the rewriting are :func:`relaypass.dataflow_pattern.partition`
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
from relaypass.dataflow_pattern.grouper import pattern_post_order
from relaypass.dataflow_pattern.matcher import plain_matcher
from relaypass.dataflow_pattern.pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    DataTypePattern,
    DFPattern,
    ExprPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
)
from relaypass.dataflow_pattern.type_inference import infer_type_with_module
from relaypass.gc_pause import gc_paused
from relaypass.ir.expr import Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor
from relaypass.transform.pattern_tables import Entry, pattern_table, validate_pattern_table

__all__ = ["MergeComposite", "merge_composite"]


#: Operators a pattern may match in another guise (the matcher reassociates ``(a * b) / c``
#: and ``(a / b) * c``): never counted as required.
_REASSOCIATED = frozenset({"divide", "multiply"})


def _required_operators(pattern: DFPattern) -> frozenset[str]:
    """Names of operators that every expression matching ``pattern`` calls.

    A call pattern of ``is_op(name)`` requires ``name`` and what its
    arguments require; a tuple, a projection and a type or attribute
    condition require what their parts require; an alternative requires
    what both sides do.  Any other pattern (a wildcard, a dominator, a
    function, an if, a let ...) requires nothing: the answer may be too
    small, never too large.
    """
    required: dict[DFPattern, frozenset[str]] = {}
    for p in pattern_post_order(pattern):
        kind = type(p)
        names: frozenset[str] = frozenset()
        if kind is CallPattern:
            callee = p.op
            if (type(callee) is ExprPattern and type(callee.expr) is Op
                    and callee.expr.name not in _REASSOCIATED):
                names = frozenset({callee.expr.name})
            for arg in p.args or ():
                names |= required[arg]
        elif kind is TuplePattern:
            for field in p.fields or ():
                names |= required[field]
        elif kind is TupleGetItemPattern:
            names = required[p.tuple]
        elif kind in (AttrPattern, TypePattern, DataTypePattern, ShapePattern):
            names = required[p.pattern] if p.pattern is not None else names
        elif kind is AltPattern:
            names = required[p.left] & required[p.right]
        required[p] = names
    return required[pattern]


def merge_composite(func: Function, entries: list[Entry], mod: IRModule) -> Function:
    """``func`` with the matches of ``entries`` (validated table entries) made composite.

    ``mod`` supplies the globals that typing between patterns needs; it is
    not changed.
    """
    with gc_paused():  # whole-program work that makes no cycles (relaypass.gc_pause)
        return _merge(func, entries, mod)


def _merge(func: Function, entries: list[Entry], mod: IRModule) -> Function:
    last = len(entries) - 1
    graph = IndexedGraph(func)  # of ``func``, shared by the patterns that leave it as it is
    called = graph.called_ops()
    # The composite functions made since ``func`` was last typed or grouped by a pattern
    # that is not plain: no later plain pattern looks inside them (IndexedGraph's opaque).
    sealed: list[Function] = []
    for i, (name, pattern, check) in enumerate(entries):
        if not _required_operators(pattern) <= called:
            continue  # no match anywhere: partition would return ``func`` itself
        plain = plain_matcher(pattern) is not None
        if not plain:
            sealed.clear()
            if graph is not None and graph.opaque:
                graph = None
        if graph is None:
            graph = IndexedGraph(func, frozenset(sealed))
        merged = partition(pattern, func, {"Composite": name}, check, keep_types=True,
                           graph=graph, sealed=sealed)
        if merged is not func:
            graph = None
            if i < last and merged._checked_type is None:
                # A later check may read types of the calls this pattern just built (Relay
                # types after every pattern; after the last, the pass manager does it).
                merged = infer_type_with_module(merged, mod)
                sealed.clear()
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
