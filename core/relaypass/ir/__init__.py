"""The Relay IR: expressions, types, modules, attributes, operators, comparison, text.

Also TVM's ``tvm.ir`` glue that pass code touches: ``Array``/``Map``
(:mod:`.container`), ``make_node`` (:mod:`.object_api`), ``save_json`` /
``load_json`` (:mod:`.node_json`), ``Span``/``SourceName``.
"""

from . import container
from . import shape_expr as _shape_expr  # noqa: F401  (fills hooks.dim_arith: n * 4 works)
from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .attrs import Attrs
from .container import Array, Map
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
from .node import Node, SourceName, Span
from .node_json import load_json, save_json
from .object_api import make_node
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
from .structural import (
    StructuralMismatchError,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from .text import printer as _printer  # noqa: F401  (fills hooks.astext: nodes print themselves)
from .types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    IntImm,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeKind,
    TypeVar,
    scalar_type,
)

RelayExpr = Expr
DictAttrs = Attrs
RelayRefType = RefType

__all__ = [
    "Array", "DictAttrs", "IntImm", "Map", "RelayRefType", "SourceName", "StructuralMismatchError",
    "container", "load_json", "make_node", "save_json",
    "Any", "Attrs", "AttrField", "AttrsSchema", "BaseFunc", "Call", "Constant", "Expr",
    "FuncType", "Function", "GlobalTypeVar", "GlobalVar", "IRModule", "If", "IncompleteType",
    "Let", "Node", "Op", "OpPattern", "REQUIRED", "RefCreate", "RefRead", "RefType", "RefWrite",
    "RelayExpr", "Span", "TensorType", "Tuple", "TupleGetItem", "TupleType", "Type", "TypeKind",
    "TypeVar", "Var", "assert_structural_equal", "make_call", "register_op", "register_op_attr",
    "scalar_type", "set_checked_type", "structural_equal", "structural_hash",
    "Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple",
    "PatternVar", "PatternWildcard", "TypeCall", "TypeData",
]
