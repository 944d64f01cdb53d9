"""``relay.expr``: the expression classes and builders under TVM's module name.

Pass code written for TVM reaches the node classes through this module as
well as through ``relay`` itself (``isinstance(e, relay.expr.Call)``,
``from tvm.relay.expr import Var, Constant``); both name the same classes.
``ExprWithOp`` (TVM's base that gives expressions ``+``, ``astype`` and
calls) is :class:`~relaypass.ir.expr.Expr` here, which has those methods.
"""

from ..analysis.substitution import bind
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.expr_builders import const, var
from ..ir.node import Node
from ..op.tuple_wrapper import TupleWrapper

RelayExpr = Expr
ExprWithOp = Expr

__all__ = [
    "Call", "Constant", "Expr", "ExprWithOp", "GlobalVar", "If", "Let", "Node", "RefCreate",
    "RefRead", "RefWrite", "RelayExpr", "Tuple", "TupleGetItem", "TupleWrapper", "Var", "bind",
    "const", "var",
]
