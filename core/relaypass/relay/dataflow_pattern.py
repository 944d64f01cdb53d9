"""TVM's ``tvm.relay.dataflow_pattern``: the pattern language, matcher, rewriter, partitioner.

Re-exports only; the code is in :mod:`relaypass.dataflow_pattern`.
``explain_match`` is relaypass's own: why a pattern does not match.
"""

from ..dataflow_pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DFPatternCallback,
    DFPatternVisitor,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    MatchExplanation,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    explain_match,
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
    match,
    partition,
    rewrite,
    wildcard,
)
from ..ir.expr import Expr

__all__ = [
    "AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
    "DFPatternCallback", "DFPatternVisitor", "DataTypePattern", "DominatorPattern", "Expr",
    "ExprPattern", "FunctionPattern", "IfPattern", "LetPattern", "MatchExplanation",
    "ShapePattern", "TupleGetItemPattern", "TuplePattern", "TypePattern", "VarPattern",
    "WildcardPattern", "dominates", "explain_match", "has_attr", "has_dtype", "has_shape",
    "has_type", "is_constant", "is_expr", "is_if", "is_let", "is_op", "is_tuple",
    "is_tuple_get_item", "is_var", "match", "partition", "rewrite", "wildcard",
]
