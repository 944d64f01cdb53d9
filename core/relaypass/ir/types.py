"""Relay's type language: tensors, tuples, functions, type variables, references.

Unlike expressions, types compare structurally with ``==`` (as in TVM, whose
``Type.__eq__`` is structural equality): type inference and type relations
compare types all the time and never care about their identity.  Type
variables and incomplete types are the exception: each is its own variable,
equal only to itself (function types compare their type parameters up to
renaming through :func:`relaypass.ir.structural_equal`).  Each kind declares
its fields once (``_fields_``, see :mod:`relaypass.ir.fields`): a type's
children are its component types.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from ..errors import TypeRelationError
from . import hooks
from .dtype import DTYPE_NAMES, canonical_dtype
from .fields import DATA, INFO, SPAN, TYPE, TYPE_VARS, TYPES, fields
from .node import Node, Span, _init, slot_filler


class TypeKind(enum.IntEnum):
    """What a type variable ranges over (TVM's ``TypeKind``)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class IntImm(int):
    """A tensor dimension: an int that also reads as TVM's ``tir.IntImm``.

    Shapes of tensor types hold these, so code written for TVM works on them
    unchanged -- ``int(dim)``, ``dim.value``, ``dim.dtype``, comparisons,
    arithmetic (which gives plain ints), ``isinstance(dim, tvm.tir.IntImm)`` --
    while every other reader sees an int: it compares, hashes and prints as
    its value.  ``IntImm("int64", 3)`` is TVM's spelling; the dtype is
    ``int32`` unless given or the value needs 64 bits.
    """

    def __new__(cls, dtype: str | int = "int32", value: object = None, span: Span | None = None):
        if value is None:  # IntImm(3): the value alone
            dtype, value = "", dtype
        self = int.__new__(cls, value)  # type: ignore[call-overload]
        if dtype and dtype != _int_dtype(self):
            self.__dict__["_dtype"] = canonical_dtype(dtype)
        return self

    @property
    def value(self) -> int:
        """The value as a plain int (TVM's ``IntImm.value``)."""
        return int(self)

    @property
    def dtype(self) -> str:
        return self.__dict__.get("_dtype") or _int_dtype(self)

    @property
    def span(self) -> None:
        return None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"IntImm is immutable: cannot set {name!r}")

    def same_as(self, other: object) -> bool:
        return self is other

    def astext(self) -> str:
        return int.__repr__(self)

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__

    def __reduce__(self) -> tuple:
        return (IntImm, (self.dtype, int(self)))


def _int_dtype(value: int) -> str:
    return "int32" if -(1 << 31) <= value < (1 << 31) else "int64"


_DIMS: dict[int, IntImm] = {}
"""The dimensions made so far, by value: shapes share them (most dims are small)."""
_DIMS_CACHED = 1 << 16


class Any(Node):
    """An unknown tensor dimension (``?`` in text), Relay's ``relay.Any()`` (``tvm.tir.Any``).

    All unknown dimensions compare equal: a type with ``Any`` says only that the
    extent is not known statically.
    """

    __slots__ = ()
    _fields_ = fields()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Any)

    def __hash__(self) -> int:
        return 0x5EED

    def __repr__(self) -> str:
        return "?"

    __str__ = __repr__

    @property
    def dtype(self) -> str:
        return "int32"


class SymbolicDimError(TypeRelationError, TypeError):
    """A dimension known only at run time was used where a number is needed (``int(n)``)."""


class SymbolicDim(Node):
    """What size variables and expressions of them share: arithmetic, and no integer value.

    ``n * 4``, ``4 + n``, ``n // 2`` build the canonical expression
    (:mod:`relaypass.ir.shape_expr`, reached through a hook: it builds on
    this module); ``int(n)`` raises :class:`SymbolicDimError`, so a relation
    that needs a number cannot silently take a variable for one.
    """

    __slots__ = ()

    def __add__(self, other: object) -> object:
        return hooks.dim_arith("add", self, other)

    def __radd__(self, other: object) -> object:
        return hooks.dim_arith("add", other, self)

    def __sub__(self, other: object) -> object:
        return hooks.dim_arith("sub", self, other)

    def __rsub__(self, other: object) -> object:
        return hooks.dim_arith("sub", other, self)

    def __mul__(self, other: object) -> object:
        return hooks.dim_arith("mul", self, other)

    def __rmul__(self, other: object) -> object:
        return hooks.dim_arith("mul", other, self)

    def __floordiv__(self, other: object) -> object:
        return hooks.dim_arith("floordiv", self, other)

    def __rfloordiv__(self, other: object) -> object:
        return hooks.dim_arith("floordiv", other, self)

    def __mod__(self, other: object) -> object:
        return hooks.dim_arith("mod", self, other)

    def __rmod__(self, other: object) -> object:
        return hooks.dim_arith("mod", other, self)

    def __neg__(self) -> object:
        return hooks.dim_arith("neg", self, None)

    def __int__(self) -> int:
        raise SymbolicDimError(
            f"the dimension {self} is symbolic: its extent is known only when the program runs"
        )

    __index__ = __int__

    def _compare(self, other: object) -> bool:
        raise SymbolicDimError(
            f"the dimension {self} is symbolic: it cannot be compared with {other} before the "
            "program runs"
        )

    __lt__ = __le__ = __gt__ = __ge__ = _compare


class SizeVar(SymbolicDim):
    """A named tensor dimension known only when the program runs (``n`` in text).

    TVM spells it ``tir.Var("n", "int64")``, ``te.var`` or ``te.size_var``; a
    model's dynamic batch or sequence axis imports as one.  Unlike ``Any``, a
    size variable says that every dimension holding the same variable has the
    same extent, so type relations can propagate it (``(n, 3) + (1, 3)`` is
    ``(n, 3)``).  Each variable is its own: two of the same name are different
    variables, as TVM's ``tir.Var`` are (structural equality maps them to each
    other where first met).  Arithmetic on it gives the dimensions relations
    compute (``n * 4``, see :mod:`relaypass.ir.shape_expr`).
    """

    __slots__ = ("name_hint", "dtype")
    _fields_ = fields(name_hint=INFO, dtype=DATA)

    def __init__(self, name_hint: str = "n", dtype: str = "int64"):
        _fill_size_var(self, str(name_hint), canonical_dtype(dtype))

    @property
    def name(self) -> str:
        """TVM's ``tir.Var.name``."""
        return self.name_hint

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self) >> 4

    def __repr__(self) -> str:
        return self.name_hint

    __str__ = __repr__


_fill_size_var = slot_filler(SizeVar, "name_hint", "dtype")


Dim = IntImm | Any | SymbolicDim
"""A tensor dimension: a number, unknown, a size variable or an expression of them."""


class Type(Node):
    """Base class of every type."""

    __slots__ = ("span",)
    _language_ = "type"

    def astext(self) -> str:
        return hooks.type_to_text(self)

    def __str__(self) -> str:
        return self.astext()

    __repr__ = __str__

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result


def _dim(d: object) -> Dim:
    """A dimension as stored: an :class:`IntImm` (shared per value), ``Any`` or symbolic."""
    t = type(d)
    if t is int:
        dim = _DIMS.get(d)  # type: ignore[call-overload]
        if dim is not None:
            return dim
    elif t is IntImm:
        return d  # type: ignore[return-value]
    elif isinstance(d, (Any, SymbolicDim)):
        return d
    elif d is None:
        return Any()
    if isinstance(d, bool):
        raise TypeError(f"a tensor dimension must be an int, Any or a size variable, not {d!r}")
    try:
        value = int(d)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise TypeError(f"a tensor dimension must be an int, Any or a size variable, not {d!r}") from None
    if value != d:
        raise TypeError(f"a tensor dimension must be an int, Any or a size variable, not {d!r}")
    dim = _DIMS.get(value)
    if dim is None:
        dim = IntImm(_int_dtype(value), value)
        if 0 <= value < _DIMS_CACHED:
            _DIMS[value] = dim
    return dim


class TensorType(Type):
    """A tensor of a static rank: ``Tensor[(1, 3, ?), float32]``, ``Tensor[(n, n*4), float32]``.

    ``symbolic`` says whether a dimension is a size variable or an expression
    of them (set once, at construction): printing, structural comparison and
    the interpreter treat those shapes apart, and skip the work on the rest.
    """

    __slots__ = ("shape", "dtype", "_hash", "symbolic")
    _fields_ = fields(shape=DATA, dtype=DATA, span=SPAN)

    def __init__(self, shape: Iterable[object], dtype: str = "float32", span: Span | None = None):
        # Dims taken from other types need no conversion: only numbers do.
        shape_t = tuple([d if type(d) is IntImm or type(d) is SizeVar else _dim(d) for d in shape])
        dtype_s = DTYPE_NAMES.get(dtype) or canonical_dtype(dtype)  # type: ignore[call-overload]
        symbolic = False
        for d in shape_t:
            if type(d) is not IntImm and type(d) is not Any:
                symbolic = True
                break
        _fill_tensor_type(self, shape_t, dtype_s, span, hash((shape_t, dtype_s)), symbolic)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        """True when every dimension is an integer (none is ``Any`` or a size variable)."""
        return all(type(d) is IntImm for d in self.shape)

    @property
    def concrete_shape(self) -> tuple[int, ...]:
        """The shape as plain ints; raises when a dimension is ``Any`` or symbolic."""
        if not self.is_static:
            raise ValueError(f"{self} has unknown dimensions")
        return tuple([int(d) for d in self.shape])

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TensorType):
            return NotImplemented if not isinstance(other, Type) else False
        return self._hash == other._hash and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return self._hash


_fill_tensor_type = slot_filler(TensorType, "shape", "dtype", "span", "_hash", "symbolic")


def scalar_type(dtype: str) -> TensorType:
    """The rank-0 tensor type of ``dtype``."""
    return TensorType((), dtype)


class TupleType(Type):
    """The type of a tuple: ``(Tensor[(1), float32], Tensor[(2), int32])``."""

    __slots__ = ("fields", "_hash")
    _fields_ = fields(fields=TYPES, span=SPAN)

    def __init__(self, fields: Iterable[Type], span: Span | None = None):
        fields_t = tuple(fields)
        for f in fields_t:
            if not isinstance(f, Type):
                raise TypeError(f"TupleType fields must be types, not {type(f).__name__}")
        _fill_tuple_type(self, fields_t, span, None)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TupleType):
            return NotImplemented if not isinstance(other, Type) else False
        return self.fields == other.fields

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("tuple", self.fields))
            _init(self, "_hash", h)
        return h

    def __len__(self) -> int:
        return len(self.fields)


_fill_tuple_type = slot_filler(TupleType, "fields", "span", "_hash")


class TypeVar(Type):
    """A type variable, bound by a function type's ``type_params``."""

    __slots__ = ("name_hint", "kind")
    # Type variables compare by binding, not by name (global ones by name: see structural).
    _fields_ = fields(name_hint=INFO, kind=DATA, span=SPAN)

    def __init__(self, name_hint: str, kind: TypeKind = TypeKind.Type, span: Span | None = None):
        _fill_type_var(self, str(name_hint), TypeKind(kind), span)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self) >> 4


_fill_type_var = slot_filler(TypeVar, "name_hint", "kind", "span")


class GlobalTypeVar(Type):
    """The name of an algebraic data type of a module (``List``), TVM's ``GlobalTypeVar``.

    A module maps it to the type's :class:`~relaypass.ir.adt.TypeData`;
    applied to type arguments (``List(a)``, ``List[A]`` in text) it is a
    :class:`TypeCall`.  Like a module's global variables, it is known by its
    name: two of the same name and kind are equal and hash alike, so a type
    read back from text is the type that was printed.  It is not a type
    variable (nothing binds it), as in TVM.
    """

    __slots__ = ("name_hint", "kind", "_hash")
    _fields_ = fields(name_hint=DATA, kind=DATA, span=SPAN)

    def __init__(self, name_hint: str, kind: TypeKind = TypeKind.AdtHandle, span: Span | None = None):
        kind = TypeKind(kind)
        _fill_global_type_var(self, str(name_hint), kind, span, hash(("global type", name_hint, kind)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, GlobalTypeVar):
            return NotImplemented if not isinstance(other, Type) else False
        return self.name_hint == other.name_hint and self.kind == other.kind

    def __hash__(self) -> int:
        return self._hash

    def __call__(self, *args: Type) -> TypeCall:
        """``List(a)``: this type applied to type arguments (TVM's ``GlobalTypeVar.__call__``)."""
        return TypeCall(self, args)


_fill_global_type_var = slot_filler(GlobalTypeVar, "name_hint", "kind", "span", "_hash")


class TypeCall(Type):
    """An algebraic data type applied to type arguments: ``List[Tensor[(), int32]]``.

    ``func`` is the type's :class:`GlobalTypeVar`; ``args`` one type per type
    parameter of its definition (none for a type without parameters).
    """

    __slots__ = ("func", "args", "_hash")
    _fields_ = fields(func=TYPE, args=TYPES, span=SPAN)

    def __init__(self, func: Type, args: Iterable[Type], span: Span | None = None):
        args_t = tuple(args)
        for a in args_t:
            if not isinstance(a, Type):
                raise TypeError(f"TypeCall arguments must be types, not {type(a).__name__}")
        if not isinstance(func, Type):
            raise TypeError(f"TypeCall applies a type (a GlobalTypeVar), not {type(func).__name__}")
        _fill_type_call(self, func, args_t, span, None)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TypeCall):
            return NotImplemented if not isinstance(other, Type) else False
        return self.func == other.func and self.args == other.args

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("type call", self.func, self.args))
            _init(self, "_hash", h)
        return h


_fill_type_call = slot_filler(TypeCall, "func", "args", "span", "_hash")


class IncompleteType(Type):
    """A type not known yet, to be solved by type inference (``_`` in text)."""

    __slots__ = ("kind",)
    _fields_ = fields(kind=DATA, span=SPAN)

    def __init__(self, kind: TypeKind = TypeKind.Type, span: Span | None = None):
        _fill_incomplete_type(self, TypeKind(kind), span)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self) >> 4


_fill_incomplete_type = slot_filler(IncompleteType, "kind", "span")


def has_incomplete(ty: Type) -> bool:
    """Whether an ``IncompleteType`` occurs anywhere in ``ty`` (a type inference has not finished)."""
    if type(ty) is TensorType:
        return False
    stack = [ty]
    while stack:
        t = stack.pop()
        if type(t) is IncompleteType:
            return True
        stack.extend(type(t)._layout_.subterms(t))  # its component types
    return False


class FuncType(Type):
    """A function type ``fn <T>(arg_types) -> ret_type``."""

    __slots__ = ("arg_types", "ret_type", "type_params", "type_constraints")
    _fields_ = fields(
        arg_types=TYPES, ret_type=TYPE, type_params=TYPE_VARS, type_constraints=TYPES, span=SPAN
    )

    def __init__(
        self,
        arg_types: Sequence[Type],
        ret_type: Type,
        type_params: Sequence[TypeVar] | None = None,
        type_constraints: Sequence[Type] | None = None,
        span: Span | None = None,
    ):
        type_params = tuple(type_params or ())
        type_constraints = tuple(type_constraints or ())
        _fill_func_type(self, tuple(arg_types), ret_type, type_params, type_constraints, span)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, FuncType):
            return NotImplemented if not isinstance(other, Type) else False
        return hooks.structural_equal(self, other)

    def __hash__(self) -> int:
        return hooks.structural_hash(self)


_fill_func_type = slot_filler(
    FuncType, "arg_types", "ret_type", "type_params", "type_constraints", "span"
)


class RefType(Type):
    """The type of a mutable reference cell: ``ref(Tensor[(), float32])``."""

    __slots__ = ("value",)
    _fields_ = fields(value=TYPE, span=SPAN)

    def __init__(self, value: Type, span: Span | None = None):
        _fill_ref_type(self, value, span)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, RefType):
            return NotImplemented if not isinstance(other, Type) else False
        return self.value == other.value

    def __hash__(self) -> int:
        return hash(("ref", self.value))


_fill_ref_type = slot_filler(RefType, "value", "span")
