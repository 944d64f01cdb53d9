"""Moving each match of a pattern into a function of its own (TVM's ``partition``).

Each group (:mod:`.grouper`) whose root passes ``check(root)`` is replaced by
a call of its function on the group's inputs, rewritten.  The function
carries ``PartitionedFromPattern`` (the matched nodes' names in post-order,
``"nn.conv2d_nn.bias_add_nn.relu_"``) and then the attributes given
(``{"Composite": "conv_bias_relu"}``).  A pattern that is itself a function
pattern is left alone, with a warning, as TVM does: a function that is not
called has nothing to partition.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from relaypass.gc_pause import gc_paused
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import Call, Expr, children, set_checked_type
from relaypass.ir.fields import rebuild

from .graph import IndexedGraph
from .grouper import PARTITIONED_FROM_PATTERN, PatternGrouper
from .matcher import run_deep_if_needed
from .pattern import DFPattern, FunctionPattern, PatternBuildError, _need_pattern, slots
from .rebuild import rebuild_bottom_up
from .rewrite import CallbackError

__all__ = ["partition"]


def _accept_all(_: Expr) -> bool:
    return True


def partition(pattern: DFPattern, expr: Expr, attrs: Mapping[str, Any] | None = None,
              check: Callable[[Expr], bool] | None = None, *, keep_types: bool = False,
              graph: IndexedGraph | None = None) -> Expr:
    """``expr`` with the matches of ``pattern`` (those ``check`` accepts) made into functions.

    Beyond TVM: ``keep_types`` keeps a typed ``expr`` typed, as InferType
    would type the result: each new function and its call are typed from the
    types of the match they replace (:meth:`.Group.partitioned`), and the
    nodes rebuilt above keep their types, since the call has the type of the
    match.  Where a match's inputs are not all typed, the result's outermost
    node is left untyped, telling the caller to run type inference.
    ``graph``: the :class:`~.graph.IndexedGraph` of ``expr``, when the caller
    partitions one program with several patterns (each changed program needs
    its own).
    """
    _need_pattern(pattern, "partition's pattern")
    if not isinstance(expr, Expr):
        raise PatternBuildError(f"partition takes a Relay expression, not {type(expr).__name__}")
    if attrs is not None and not isinstance(attrs, Mapping):
        raise PatternBuildError(
            f"partition's attrs must be a mapping of attribute names, not {type(attrs).__name__}"
        )
    if check is None:
        check = _accept_all
    elif not callable(check):
        raise CallbackError(f"partition's check must be callable, not {type(check).__name__}")
    if isinstance(pattern, FunctionPattern):
        warnings.warn(
            "partition: a function pattern matches functions that are not called; "
            "nothing to partition, the expression is returned unchanged",
            stacklevel=2,
        )
        return expr
    with gc_paused():  # whole-program work that makes no cycles (relaypass.gc_pause)
        return _partition(pattern, expr, dict(attrs or {}), check,
                          keep_types and expr._checked_type is not None,
                          graph if graph is not None else IndexedGraph(expr))


def _partition(pattern: DFPattern, expr: Expr, extra: dict[str, Any],
               check: Callable[[Expr], bool], typed: bool, graph: IndexedGraph) -> Expr:
    grouper = PatternGrouper(functions=True)
    run_deep_if_needed(grouper.group_matches, pattern, expr, graph)
    by_root = grouper.roots()
    if not by_root:
        return expr

    stale = False
    by_name: dict[str, Attrs] = {}  # the functions' attributes, one object per name

    def attrs_of(name: str) -> Attrs:
        attrs = by_name.get(name)
        if attrs is None:
            attrs = by_name[name] = Attrs({PARTITIONED_FROM_PATTERN: name, **extra})
        return attrs

    def at_root(pre: Expr, post: Expr, memo: dict[Expr, Expr]) -> Expr:
        nonlocal stale
        if not check(pre):
            return post
        group = by_root[pre]
        args = [memo[a] for a in group.args]
        if typed and not stale and pre._checked_type is not None:
            types = [a._checked_type for a in args]
            if not any(t is None for t in types):
                call = Call(group.partitioned(attrs_of, types), args)
                set_checked_type(call, pre._checked_type)
                return call
        stale = True
        return Call(group.partitioned(attrs_of), args)

    out = rebuild_bottom_up(expr, at_root, by_root, keep_types=typed, graph=graph)[0]
    if typed and stale:
        out = rebuild(out, children(out))  # the same node, untyped
    return out


slots.partition = partition
