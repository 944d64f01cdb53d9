"""TVM's object glue: type keys, ``make_node`` and ``convert``.

TVM names every object class by a type key (``"relay.Call"``,
``"relay.attrs.Conv2DAttrs"``) and builds objects from a key and fields
(``tvm.ir.make_node``); ``tvm.runtime.convert`` turns Python values into
objects (lists into Arrays, dicts into Maps).  Here the IR's classes are
registered under TVM's type keys in the object registry of
:mod:`relaypass._ffi` -- the same registry ``tvm.register_object`` fills --
so that ``make_node``, :mod:`relaypass.ir.node_json` and user code agree on
the names.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Number
from typing import Any

from .._ffi.registry import object_type, register_object, type_key_of
from .adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .attrs import Attrs
from .container import Array, Map
from .expr import (
    Call,
    Constant,
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
)
from .module import IRModule
from .ndarray import NDArray
from .node import Node, SourceName, Span
from .op import Op
from .types import (
    Any as AnyDim,
)
from .types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    IntImm,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)

__all__ = ["convert", "make_node", "type_key"]

TYPE_KEYS: dict[str, type] = {
    "relay.Var": Var, "GlobalVar": GlobalVar, "relay.Constant": Constant,
    "relay.Tuple": Tuple, "relay.TupleGetItem": TupleGetItem, "relay.Call": Call,
    "relay.Function": Function, "relay.Let": Let, "relay.If": If,
    "relay.RefCreate": RefCreate, "relay.RefRead": RefRead, "relay.RefWrite": RefWrite,
    "Op": Op, "relay.TensorType": TensorType, "TupleType": TupleType, "FuncType": FuncType,
    "TypeVar": TypeVar, "GlobalTypeVar": GlobalTypeVar, "IncompleteType": IncompleteType,
    "relay.RefType": RefType, "tir.Any": AnyDim, "IntImm": IntImm, "Span": Span,
    "SourceName": SourceName, "IRModule": IRModule, "DictAttrs": Attrs, "Array": Array,
    "Map": Map, "runtime.NDArray": NDArray,
    "TypeCall": TypeCall, "relay.TypeData": TypeData, "relay.Constructor": Constructor,
    "relay.Match": Match, "relay.Clause": Clause, "relay.PatternWildcard": PatternWildcard,
    "relay.PatternVar": PatternVar, "relay.PatternConstructor": PatternConstructor,
    "relay.PatternTuple": PatternTuple,
}
"""TVM's type key of each IR class (``type_key(cls)`` reads it back)."""

for _key, _cls in TYPE_KEYS.items():
    register_object(_key)(_cls)


def type_key(obj: object) -> str | None:
    """TVM's type key of an object or class: ``"relay.Call"``, ``"relay.attrs.Conv2DAttrs"``."""
    if isinstance(obj, Attrs):
        return obj.type_key
    cls = obj if isinstance(obj, type) else type(obj)
    return type_key_of(cls)


def _operator_attrs(type_key: str, fields: Mapping[str, Any]) -> Attrs:
    """The attributes record ``type_key`` of a registered operator, defaults filled in.

    TVM's node system gives every field of a registered attributes type its
    default and rejects a field the type does not have; an operator's schema
    holds both.  A key no operator uses gives a record of exactly ``fields``.
    """
    for name in Op.list_op_names():
        schema = Op.get(name).attrs_schema
        if schema is not None and schema.type_key == type_key:
            return schema.build(name, fields)
    return Attrs(fields, type_key)


def _is_attrs_key(key: str) -> bool:
    return key == "DictAttrs" or key.endswith("Attrs") or key.startswith(("attrs.", "relay.attrs."))


def make_node(type_key: str, **fields: Any) -> Any:
    """Build the object of type ``type_key`` from its fields, as ``tvm.ir.make_node``.

    Attribute records (``make_node("relay.attrs.Conv2DAttrs", strides=(1, 1))``,
    any key naming attributes, ``"DictAttrs"``) become :class:`Attrs` -- or
    an instance of the class registered under the key with
    ``register_object``; IR nodes (``make_node("relay.Var", name_hint="x")``)
    are built by their constructor from the named fields.
    """
    cls = object_type(type_key)
    if cls is not None and issubclass(cls, Attrs):
        return cls(fields, type_key)
    if cls is None:
        if _is_attrs_key(type_key):
            return _operator_attrs(type_key, fields)
        raise TypeError(
            f"make_node: unknown type key {type_key!r}; register its class with "
            "register_object, or use an attributes key such as 'relay.attrs.MyAttrs'"
        )
    if cls is Op:
        return Op.get(fields["name"])
    try:
        return cls(**fields)
    except TypeError as err:
        raise TypeError(f"make_node({type_key!r}): {err}") from None


def convert(value: Any) -> Any:
    """A Python value as an IR object, as ``tvm.runtime.convert``.

    Lists and tuples become :class:`Array` (items converted), dicts become
    :class:`Map` (keys must be objects, strings or numbers), and IR objects,
    numbers, strings, callables and None stay what they are.
    """
    if isinstance(value, (Node, NDArray, IRModule, Map, str, Number)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return Array([convert(v) for v in value])
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, (Node, str, Number)):
                raise ValueError("key of map must already been a container type")
        return Map({k: convert(v) for k, v in value.items()})
    if callable(value):
        return value
    raise TypeError(f"don't know how to convert type {type(value)} to object")
