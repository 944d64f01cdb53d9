"""Relay's expression language: the nodes every pass reads and builds.

Names and fields follow Relay so that code written against ``tvm.relay``
reads the same.  Every expression carries ``span`` (where it came from) and
``checked_type`` (filled by type inference; reading it earlier raises, as in
Relay).  Expressions compare by identity; see :mod:`relaypass.ir.structural`
for comparison by structure.  Each kind declares its fields once
(``_fields_``, see :mod:`relaypass.ir.fields`); :func:`children`, rebuilds and
comparisons are derived from those declarations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any as _AnyT

from ..errors import UncheckedTypeError
from . import hooks
from .attrs import EMPTY_DICT_ATTRS, Attrs
from .fields import (
    ATTRS,
    BRANCH,
    CALLEE,
    DATA,
    EXPR,
    EXPRS,
    INFO,
    SPAN,
    TENSOR,
    TYPE,
    TYPE_VARS,
    TYPES,
    VAR,
    VARS,
    fields,
    with_fields,
)
from .fields import children as children  # the generic one, where traversals look for it
from .ndarray import read_only
from .node import Node, Span, slot_filler
from .types import Type, TypeVar, has_incomplete


class Expr(Node):
    """Base class of every Relay expression (Relay's ``RelayExpr``).

    Python's arithmetic and comparison operators build calls to the standard
    operators (``x + y`` is ``add(x, y)``), as in Relay; ``==`` stays identity.
    """

    __slots__ = ("span", "_checked_type")
    _language_ = "expr"
    _graph_node_ = True
    """Structural equality maps each node of one side to one node of the other (TVM's
    "graph nodes": a shared node equals a shared node, not two copies); False for the
    kinds compared afresh wherever they occur (constants, projections, globals, operators).
    A node of a kind with children that has none (the empty tuple) is compared afresh too."""

    @property
    def checked_type(self) -> Type:
        """The type inferred for this expression by InferType."""
        t = self._checked_type
        if t is None:
            raise UncheckedTypeError(
                "The type checker has not populated the checked_type for this node; "
                "run type inference first (the pass whose role is \"type-inference\")"
            )
        return t

    @property
    def has_checked_type(self) -> bool:
        return self._checked_type is not None

    def astext(self, show_meta_data: bool = True, annotate: _AnyT | None = None) -> str:
        """The Relay text form of this expression (``annotate(node)``: a comment per node)."""
        return hooks.astext(self, show_meta_data=show_meta_data, annotate=annotate)

    def __str__(self) -> str:
        return hooks.pretty_print(self)

    def __repr__(self) -> str:
        return self.astext()

    # Operator sugar, as Relay's ``ExprWithOp``.
    def __add__(self, other: Expr) -> Call:
        return _binary("add", self, other)

    def __radd__(self, other: Expr) -> Call:
        return _binary("add", other, self)

    def __sub__(self, other: Expr) -> Call:
        return _binary("subtract", self, other)

    def __rsub__(self, other: Expr) -> Call:
        return _binary("subtract", other, self)

    def __mul__(self, other: Expr) -> Call:
        return _binary("multiply", self, other)

    def __rmul__(self, other: Expr) -> Call:
        return _binary("multiply", other, self)

    def __truediv__(self, other: Expr) -> Call:
        return _binary("divide", self, other)

    def __rtruediv__(self, other: Expr) -> Call:
        return _binary("divide", other, self)

    def __neg__(self) -> Call:
        return Call(hooks.get_op("negative"), [self])

    def __lt__(self, other: Expr) -> Call:
        return _binary("less", self, other)

    def __le__(self, other: Expr) -> Call:
        return _binary("less_equal", self, other)

    def __gt__(self, other: Expr) -> Call:
        return _binary("greater", self, other)

    def __ge__(self, other: Expr) -> Call:
        return _binary("greater_equal", self, other)

    def astype(self, dtype: str) -> Call:
        """Cast to ``dtype`` (Relay's ``expr.astype``)."""
        return hooks.make_call("cast", [self], dtype=dtype)

    def __call__(self, *args: Expr) -> Call:
        return Call(self, args)


def _binary(op_name: str, lhs: object, rhs: object) -> Call:
    if not isinstance(lhs, Expr) or not isinstance(rhs, Expr):
        other = rhs if isinstance(lhs, Expr) else lhs
        raise TypeError(f'convert "{other!r}" with `const` first')
    return Call(hooks.get_op(op_name), [lhs, rhs])


#: Sets a node's ``checked_type`` slot past the immutability guard (see ``slot_filler``).
_write_checked_type = Expr._checked_type.__set__  # type: ignore[attr-defined]


def set_checked_type(expr: Expr, ty: Type) -> Expr:
    """Fill ``expr.checked_type``; for type inference on nodes it has just built."""
    _write_checked_type(expr, ty)
    return expr


class Var(Expr):
    """A local variable: a function parameter or a let-bound name (``%x``).

    A variable annotated with a complete type (no ``IncompleteType`` in it)
    has that type as its ``checked_type`` from the start: it is the type
    inference would give it, so type inference keeps such a variable as it is
    instead of copying it, and a variable stays the same variable through any
    number of typings (TVM keeps its ``vid`` for the same reason).
    """

    __slots__ = ("name_hint", "type_annotation")
    # The name is a hint for printing: variables compare by binding, not by name.
    _fields_ = fields(name_hint=INFO, type_annotation=TYPE, span=SPAN)

    def __init__(self, name_hint: str, type_annotation: Type | None = None, span: Span | None = None):
        _fill_var(self, name_hint, type_annotation, span, _complete_type(type_annotation))


_fill_var = slot_filler(Var, "name_hint", "type_annotation", "span", "_checked_type")


def _complete_type(ty: Type | None) -> Type | None:
    """``ty`` when it holds no ``IncompleteType`` (None included), else None."""
    return None if ty is not None and has_incomplete(ty) else ty


class GlobalVar(Expr):
    """The name of a function in a module (``@main``)."""

    __slots__ = ("name_hint",)
    _fields_ = fields(name_hint=DATA, span=SPAN)
    _graph_node_ = False

    def __init__(self, name_hint: str, span: Span | None = None):
        _fill_global_var(self, name_hint, span, None)


_fill_global_var = slot_filler(GlobalVar, "name_hint", "span", "_checked_type")


class Constant(Expr):
    """A tensor literal.

    ``data`` is its value as TVM gives it: a read-only
    :class:`~relaypass.ir.ndarray.NDArray` (``const.data.numpy()`` is a
    writable copy).  ``array`` is the read-only numpy array behind it, for
    code that computes with the value without copying it.  ``data`` may be
    given as an NDArray, a numpy array or anything numpy converts; a writable
    array is copied, so the constant never changes.
    """

    __slots__ = ("data", "array")
    _fields_ = fields(data=TENSOR, span=SPAN)
    _graph_node_ = False

    def __init__(self, data: object, span: Span | None = None):
        view, arr = read_only(data)
        _fill_constant(self, view, arr, span, None)


_fill_constant = slot_filler(Constant, "data", "array", "span", "_checked_type")


class Tuple(Expr):
    """A tuple of expressions: ``(%a, %b)``."""

    __slots__ = ("fields",)
    _fields_ = fields(fields=EXPRS, span=SPAN)

    def __init__(self, fields: Iterable[Expr], span: Span | None = None):
        _fill_tuple(self, tuple(fields), span, None)

    def __len__(self) -> int:
        return len(self.fields)

    def __bool__(self) -> bool:
        return True

    def __getitem__(self, index: int) -> Expr:
        return self.fields[index]

    def astuple(self) -> Tuple:
        return self


_fill_tuple = slot_filler(Tuple, "fields", "span", "_checked_type")


class TupleGetItem(Expr):
    """A projection out of a tuple: ``%t.1``."""

    __slots__ = ("tuple_value", "index")
    _fields_ = fields(tuple_value=EXPR, index=DATA, span=SPAN)
    _graph_node_ = False

    def __init__(self, tuple_value: Expr, index: int, span: Span | None = None):
        _fill_tuple_get_item(self, tuple_value, int(index), span, None)


_fill_tuple_get_item = slot_filler(TupleGetItem, "tuple_value", "index", "span", "_checked_type")


class Call(Expr):
    """A call of an operator, a function, a global or a closure."""

    __slots__ = ("op", "args", "attrs", "type_args")
    _fields_ = fields(op=CALLEE, args=EXPRS, attrs=ATTRS, type_args=TYPES, span=SPAN)

    def __init__(
        self,
        op: Expr,
        args: Iterable[Expr],
        attrs: Attrs | None = None,
        type_args: Sequence[Type] | None = None,
        span: Span | None = None,
    ):
        args = args if type(args) is tuple else tuple(args)
        _fill_call(self, op, args, attrs, tuple(type_args) if type_args else (), span, None)


_fill_call = slot_filler(Call, "op", "args", "attrs", "type_args", "span", "_checked_type")


class BaseFunc(Expr):
    """What a module maps global variables to."""

    __slots__ = ()


class Function(BaseFunc):
    """A function ``fn (%x: T) -> R { body }`` with optional type parameters and attributes."""

    # Weakly referenceable: analyses may remember facts about a function for as long as it lives.
    __slots__ = ("params", "body", "ret_type", "type_params", "attrs", "__weakref__")
    _fields_ = fields(
        params=VARS, body=EXPR, ret_type=TYPE, type_params=TYPE_VARS, attrs=ATTRS, span=SPAN
    )

    def __init__(
        self,
        params: Iterable[Var],
        body: Expr,
        ret_type: Type | None = None,
        type_params: Sequence[TypeVar] | None = None,
        attrs: Attrs | Mapping[str, _AnyT] | None = None,
        span: Span | None = None,
    ):
        if attrs is None:
            attrs = EMPTY_DICT_ATTRS
        elif not isinstance(attrs, Attrs):
            attrs = Attrs(attrs)
        type_params = tuple(type_params) if type_params else ()
        _fill_function(self, tuple(params), body, ret_type, type_params, attrs, span, None)

    def with_attr(self, key: str, value: _AnyT) -> Function:
        """A copy of this function with attribute ``key`` set to ``value``."""
        return self.with_attrs({key: value})

    def with_attrs(self, updates: Mapping[str, _AnyT]) -> Function:
        """A copy of this function with several attributes set."""
        func = with_fields(self, attrs=self.attrs.with_fields(**updates))
        _write_checked_type(func, self._checked_type)
        return func

    def without_attr(self, key: str) -> Function:
        """A copy of this function without attribute ``key``."""
        func = with_fields(self, attrs=self.attrs.without(key))
        _write_checked_type(func, self._checked_type)
        return func


_fill_function = slot_filler(
    Function, "params", "body", "ret_type", "type_params", "attrs", "span", "_checked_type"
)


class Let(Expr):
    """``let %var = value; body``."""

    __slots__ = ("var", "value", "body")
    # The variable is in scope in the value too (a recursive closure) and in the body.
    _fields_ = fields(var=VAR, value=EXPR, body=EXPR, span=SPAN)

    def __init__(self, var: Var, value: Expr, body: Expr, span: Span | None = None):
        _fill_let(self, var, value, body, span, None)


_fill_let = slot_filler(Let, "var", "value", "body", "span", "_checked_type")


class If(Expr):
    """``if (cond) { true_branch } else { false_branch }``; cond is a boolean scalar."""

    __slots__ = ("cond", "true_branch", "false_branch")
    _fields_ = fields(cond=EXPR, true_branch=BRANCH, false_branch=BRANCH, span=SPAN)

    def __init__(self, cond: Expr, true_branch: Expr, false_branch: Expr, span: Span | None = None):
        _fill_if(self, cond, true_branch, false_branch, span, None)


_fill_if = slot_filler(If, "cond", "true_branch", "false_branch", "span", "_checked_type")


class RefCreate(Expr):
    """Allocate a mutable reference cell holding ``value``: ``ref(%v)``."""

    __slots__ = ("value",)
    _fields_ = fields(value=EXPR, span=SPAN)

    def __init__(self, value: Expr, span: Span | None = None):
        _fill_ref_create(self, value, span, None)


_fill_ref_create = slot_filler(RefCreate, "value", "span", "_checked_type")


class RefRead(Expr):
    """Read a reference cell: ``ref_read(%r)``."""

    __slots__ = ("ref",)
    _fields_ = fields(ref=EXPR, span=SPAN)

    def __init__(self, ref: Expr, span: Span | None = None):
        _fill_ref_read(self, ref, span, None)


_fill_ref_read = slot_filler(RefRead, "ref", "span", "_checked_type")


class RefWrite(Expr):
    """Write ``value`` into a reference cell: ``ref_write(%r, %v)``; evaluates to ``()``."""

    __slots__ = ("ref", "value")
    _fields_ = fields(ref=EXPR, value=EXPR, span=SPAN)

    def __init__(self, ref: Expr, value: Expr, span: Span | None = None):
        _fill_ref_write(self, ref, value, span, None)


_fill_ref_write = slot_filler(RefWrite, "ref", "value", "span", "_checked_type")
