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
from relaypass.ir.expr import Call, Expr

from .grouper import PARTITIONED_FROM_PATTERN, PatternGrouper
from .matcher import run_deep_if_needed
from .pattern import DFPattern, FunctionPattern, PatternBuildError, _need_pattern, slots
from .rebuild import rebuild_bottom_up
from .rewrite import CallbackError

__all__ = ["partition"]


def _accept_all(_: Expr) -> bool:
    return True


def partition(pattern: DFPattern, expr: Expr, attrs: Mapping[str, Any] | None = None,
              check: Callable[[Expr], bool] | None = None) -> Expr:
    """``expr`` with the matches of ``pattern`` (those ``check`` accepts) made into functions."""
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
        return _partition(pattern, expr, dict(attrs or {}), check)


def _partition(pattern: DFPattern, expr: Expr, extra: dict[str, Any],
               check: Callable[[Expr], bool]) -> Expr:
    grouper = PatternGrouper()
    run_deep_if_needed(grouper.group_matches, pattern, expr)
    by_root = grouper.roots()
    if not by_root:
        return expr

    def at_root(pre: Expr, post: Expr, memo: dict[Expr, Expr]) -> Expr:
        if not check(pre):
            return post
        group = by_root[pre]
        func = group.function.with_attrs({PARTITIONED_FROM_PATTERN: group.name, **extra})
        return Call(func, [memo[a] for a in group.args])

    return rebuild_bottom_up(expr, at_root, by_root)[0]


slots.partition = partition
