"""Dataflow patterns: match operator graphs and rewrite what matched.

The matcher, the grouping of matches into non-overlapping regions and the
fixed-point rewriter live in :mod:`relaypass.dataflow_pattern.matcher`.
"""

from .matcher import (
    MAX_ROUNDS,
    AltPattern,
    CallPattern,
    ConstantPattern,
    DataflowGraph,
    Match,
    Matcher,
    OpAttrPattern,
    OpPattern,
    Pattern,
    Rewrite,
    RewriteLimitError,
    Wildcard,
    find_groups,
    rewrite_patterns,
)

__all__ = [
    "AltPattern", "CallPattern", "ConstantPattern", "DataflowGraph", "MAX_ROUNDS", "Match",
    "Matcher", "OpAttrPattern", "OpPattern", "Pattern", "Rewrite", "RewriteLimitError",
    "Wildcard", "find_groups", "rewrite_patterns",
]
