"""``relay.ty``: Relay's types (``relay.ty.TensorType((), "float32")``)."""

from ..ir.type_relation import TypeConstraint, TypeRelation
from ..ir.types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeKind,
    TypeVar,
    scalar_type,
)

RelayRefType = RefType

__all__ = [
    "Any", "FuncType", "GlobalTypeVar", "IncompleteType", "RefType", "RelayRefType", "TensorType",
    "TupleType", "Type", "TypeCall", "TypeConstraint", "TypeKind", "TypeRelation", "TypeVar",
    "scalar_type",
]
