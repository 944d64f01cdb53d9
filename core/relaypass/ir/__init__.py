"""The Relay IR: expressions, types, modules, attributes, operators, comparison, text."""

from .attrs import Attrs
from .expr import (
    BaseFunc,
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    set_checked_type,
)
from .module import IRModule
from .node import Node, Span
from .op import (
    REQUIRED,
    AttrField,
    AttrsSchema,
    Op,
    OpPattern,
    make_call,
    register_op,
    register_op_attr,
)
from .structural import assert_structural_equal, structural_equal, structural_hash
from .text import printer as _printer  # noqa: F401  (fills hooks.astext: nodes print themselves)
from .types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeKind,
    TypeVar,
    scalar_type,
)

RelayExpr = Expr

__all__ = [
    "Any", "Attrs", "AttrField", "AttrsSchema", "BaseFunc", "Call", "Constant", "Expr",
    "FuncType", "Function", "GlobalTypeVar", "GlobalVar", "IRModule", "If", "IncompleteType",
    "Let", "Node", "Op", "OpPattern", "REQUIRED", "RefCreate", "RefRead", "RefType", "RefWrite",
    "RelayExpr", "Span", "TensorType", "Tuple", "TupleGetItem", "TupleType", "Type", "TypeKind",
    "TypeVar", "Var", "assert_structural_equal", "make_call", "register_op", "register_op_attr",
    "scalar_type", "set_checked_type", "structural_equal", "structural_hash",
]
