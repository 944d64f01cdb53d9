"""The kind checker: is each part of a type the sort of thing its place wants?

Relay's ``relay.analysis.check_kind`` (``kind_check.cc``).  Types have kinds
(:class:`~relaypass.ir.types.TypeKind`): tensor, tuple, function, reference
and ADT types are of kind ``Type``; a type variable, an incomplete type or a
global type variable has the kind it was made with; a
:class:`~relaypass.ir.type_relation.TypeRelation` is a ``Constraint``; a
:class:`~relaypass.ir.adt.TypeData` a ``TypeData``.  Where a type is built
from others, each part must be of the kind its place takes: the fields of a
tuple type, the arguments and result of a function type and what a
reference holds are ``Type``s; a function type's constraints are
``Constraint``s; a type call applies an ``AdtHandle`` (a global type
variable that the module defines, with one argument per type parameter) to
``Type``s; a type definition's header is an ``AdtHandle`` and its
parameters and constructor inputs are ``Type``s.  So a shape variable
(``TypeVar("n", TypeKind.ShapeVar)``) used as a tuple field or a function
result is a :class:`KindCheckError`, which says which part, inside what,
has which kind.

The checker walks the type with an explicit stack (children before their
parent, as Relay's visitor reports the innermost problem first), so any
depth of nesting is fine.
"""

from __future__ import annotations

from ..errors import TypeInferenceError
from ..ir.adt import TypeData
from ..ir.module import IRModule
from ..ir.type_relation import TypeRelation
from ..ir.types import (
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
)

__all__ = ["KindCheckError", "check_kind"]


class KindCheckError(TypeInferenceError):
    """A part of a type is of the wrong kind (a shape variable used as a type...)."""


_K = TypeKind


def _kind_name(kind: TypeKind) -> str:
    return TypeKind(kind).name


def _text(ty: Type) -> str:
    """``ty`` on one bounded line, for messages."""
    text = " ".join(str(ty).split())
    return text if len(text) <= 80 else text[:77] + "..."


def _own_kind(ty: Type) -> TypeKind:
    """The kind a type is by what it is (its parts are checked separately)."""
    t = type(ty)
    if t in (TypeVar, IncompleteType, GlobalTypeVar):
        return TypeKind(ty.kind)
    if isinstance(ty, TypeRelation):
        return _K.Constraint
    if t is TypeData:
        return _K.TypeData
    if isinstance(ty, (TensorType, TupleType, FuncType, RefType, TypeCall)):
        return _K.Type
    raise KindCheckError(f"cannot check the kind of {type(ty).__name__} {_text(ty)}: it is not "
                         "a Relay type")


def _parts(ty: Type) -> list[tuple[Type, TypeKind, str]]:
    """The parts of ``ty`` with the kind each must have and what the part is, in Relay's order."""
    t = type(ty)
    if t is TupleType:
        return [(f, _K.Type, "tuple member") for f in ty.fields]
    if t is FuncType:
        return ([(a, _K.Type, "function type parameter") for a in ty.arg_types]
                + [(ty.ret_type, _K.Type, "function return type")]
                + [(c, _K.Constraint, "function type constraint") for c in ty.type_constraints])
    if t is RefType:
        return [(ty.value, _K.Type, "ref contents")]
    if isinstance(ty, TypeRelation):
        return [(a, _K.Type, "argument to type relation") for a in ty.args]
    if t is TypeCall:
        if type(ty.func) is not GlobalTypeVar:
            raise KindCheckError(f"the callee in {_text(ty)} is not a global type variable, but "
                                 f"{_text(ty.func)}")
        return ([(ty.func, _K.AdtHandle, "type call function")]
                + [(a, _K.Type, "type call argument") for a in ty.args])
    if t is TypeData:
        return ([(ty.header, _K.AdtHandle, "type data header")]
                + [(v, _K.Type, "ADT type var") for v in ty.type_vars]
                + [(i, _K.Type, "ADT constructor input")
                   for c in ty.constructors for i in c.inputs])
    return []


def _check_type_call(call: TypeCall, mod: IRModule) -> None:
    """A type call's callee is defined by the module, with as many parameters as arguments."""
    gtv = call.func
    definitions = mod.type_definitions
    data = next((d for g, d in definitions.items() if g == gtv), None)
    if data is None:
        raise KindCheckError(f"the type variable `{gtv.name_hint}` of {_text(call)} is undefined "
                             "in the module")
    if len(data.type_vars) != len(call.args):
        raise KindCheckError(f"expected {len(data.type_vars)} arguments for {_text(call)}; got "
                             f"{len(call.args)}")


def check_kind(ty: Type, mod: IRModule | None = None) -> TypeKind:
    """The kind of ``ty``, after checking that each of its parts has the kind its place takes.

    ``mod`` defines the algebraic data types that type calls apply (an empty
    module when not given).  Raises :class:`KindCheckError` for the first
    part, innermost first, of the wrong kind.
    """
    if not isinstance(ty, Type):
        raise TypeError(f"check_kind expects a Relay type, not {type(ty).__name__}")
    if mod is None:
        mod = IRModule()
    # Frames: [type, its parts, next part, (outer, expected kind, what) or None for the root].
    frames: list[list] = [[ty, _parts(ty), 0, None]]
    while frames:
        frame = frames[-1]
        node, parts, i, place = frame
        if i < len(parts):
            frame[2] = i + 1
            part, expected, what = parts[i]
            frames.append([part, _parts(part), 0, (node, expected, what)])
            continue
        frames.pop()
        if type(node) is TypeCall:
            _check_type_call(node, mod)
        if place is not None:
            outer, expected, what = place
            kind = _own_kind(node)
            if kind != expected:
                span = f" at {node.span}" if getattr(node, "span", None) is not None else ""
                raise KindCheckError(
                    f"incorrect kind for a {what}: type {_text(node)}{span} inside "
                    f"{_text(outer)} is of kind {_kind_name(kind)} but was expected to be "
                    f"{_kind_name(expected)}")
    return _own_kind(ty)
