"""Dataflow patterns: TVM's pattern language, matcher, rewriter and partitioner.

``from relaypass.relay.dataflow_pattern import *`` gives TVM's names; this
package holds them, one concept per module:

* :mod:`.pattern` -- the pattern nodes and their builders (``is_op``,
  ``wildcard``, ``dominates`` ...);
* :mod:`.printer` -- a pattern's text; :mod:`.visitor` -- ``DFPatternVisitor``;
* :mod:`.graph` -- a program's indexed graph and post-dominator tree;
* :mod:`.matcher` -- matching, with TVM's rules;
* :mod:`.grouper` -- the non-overlapping matches in a program;
* :mod:`.rewrite` -- ``DFPatternCallback`` and ``rewrite``;
  :mod:`.partition` -- ``partition``;
* :mod:`.explain` -- ``explain_match``, why a pattern does not match;
* :mod:`.text` -- ``parse_pattern``, a pattern from its printed form (pattern files);
* :mod:`.typed_rewrite` -- the typed, round-based driver SimplifyExpr uses;
* :mod:`.type_inference` -- types from the pass manager, which the package root connects.
"""

from .explain import MatchExplanation, explain_match
from .grouper import PARTITIONED_FROM_PATTERN, Group, PatternGrouper
from .matcher import DFPatternMatcher, match
from .partition import partition
from .pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    PatternBuildError,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)
from .rewrite import CallbackError, DFPatternCallback, RewriteLimitError, rewrite
from .text import PatternSyntaxError, parse_pattern
from .type_inference import PatternTypeError, connect
from .typed_rewrite import MAX_ROUNDS, Match, OpAttrPattern, OpPattern, Rewrite, rewrite_patterns
from .visitor import DFPatternVisitor

#: The older names of two node classes, which the standard rewrites are written with.
Pattern = DFPattern
Wildcard = WildcardPattern

__all__ = [
    "AltPattern", "AttrPattern", "CallPattern", "CallbackError", "ConstantPattern",
    "DFPattern", "DFPatternCallback", "DFPatternMatcher", "DFPatternVisitor", "DataTypePattern",
    "DominatorPattern", "ExprPattern", "FunctionPattern", "Group", "IfPattern", "LetPattern",
    "MAX_ROUNDS", "Match", "MatchExplanation", "OpAttrPattern", "OpPattern",
    "PARTITIONED_FROM_PATTERN", "Pattern", "PatternBuildError", "PatternGrouper",
    "PatternSyntaxError",
    "PatternTypeError", "Rewrite", "RewriteLimitError", "ShapePattern", "TupleGetItemPattern",
    "TuplePattern", "TypePattern", "VarPattern", "Wildcard", "WildcardPattern", "connect",
    "dominates", "explain_match", "has_attr", "has_dtype", "has_shape", "has_type",
    "is_constant", "is_expr", "is_if", "is_let", "is_op", "is_tuple", "is_tuple_get_item",
    "is_var", "match", "parse_pattern", "partition", "rewrite", "rewrite_patterns", "wildcard",
]
