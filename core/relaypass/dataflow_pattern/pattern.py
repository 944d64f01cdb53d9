"""The nodes of Relay's dataflow pattern language and the functions that build them.

A pattern is a graph of :class:`DFPattern` nodes describing a piece of a
Relay program: ``is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))``
describes a ReLU of a 2-D convolution.  The classes and the builder functions
carry TVM's names and fields, so pattern code written for
``tvm.relay.dataflow_pattern`` runs unchanged; what a pattern matches is
decided by :mod:`.matcher`.

Patterns compare and hash by identity, as TVM's objects do: a callback's
``node_map[self.x]`` finds what the very pattern node ``self.x`` matched, and
reusing one node twice in a pattern (``x + x``) asks for the same expression
twice.  Building a pattern from something that is not one raises
:class:`PatternBuildError`, naming the argument, at once rather than when the
pattern is first matched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from relaypass.errors import RelayPassError
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import Expr
from relaypass.ir.op import Op
from relaypass.ir.summary import clip, short_text
from relaypass.ir.types import Type

__all__ = [
    "AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern", "DataTypePattern",
    "DominatorPattern", "ExprPattern", "FunctionPattern", "IfPattern", "LetPattern",
    "PatternBuildError", "ShapePattern", "TupleGetItemPattern", "TuplePattern", "TypePattern",
    "VarPattern", "WildcardPattern", "dominates", "has_attr", "has_dtype", "has_shape",
    "has_type", "is_constant", "is_expr", "is_if", "is_let", "is_op", "is_tuple",
    "is_tuple_get_item", "is_var", "wildcard",
]


class PatternBuildError(RelayPassError, TypeError):
    """A pattern was built from something that is not a pattern (or not a valid field value)."""


class _Slots:
    """What the pattern classes call but modules built on them define.

    ``pattern.match(expr)``, ``pattern.partition(expr)`` and ``str(pattern)``
    are methods here, while the matcher, the partitioner and the printer are
    built on these classes; each of those modules fills its slot when
    imported (the package imports all of them), so no import goes upwards.
    """

    @staticmethod
    def _unfilled(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("relaypass.dataflow_pattern is not loaded (import the package)")

    match: Callable[[DFPattern, Expr], bool] = _unfilled
    partition: Callable[..., Expr] = _unfilled
    text: Callable[[DFPattern], str] = _unfilled


slots = _Slots


def _need_pattern(value: object, where: str) -> DFPattern:
    if isinstance(value, DFPattern):
        return value
    if isinstance(value, Expr):
        shown = f"{short_text(value, 80)} (wrap an expression with is_expr(...))"
    else:
        shown = clip(repr(value), 80)
    raise PatternBuildError(
        f"{where} must be a dataflow pattern, not {type(value).__name__} {shown}"
    )


def _need_patterns(values: object, where: str) -> tuple[DFPattern, ...] | None:
    """A list of patterns, or None for "any number of anything" (TVM's undefined array)."""
    if values is None:
        return None
    if isinstance(values, (DFPattern, str, bytes)) or not isinstance(values, Sequence):
        raise PatternBuildError(
            f"{where} must be a list of patterns or None, not {type(values).__name__}"
        )
    return tuple(_need_pattern(v, f"{where}[{i}]") for i, v in enumerate(values))


class DFPattern:
    """A node of a dataflow pattern.

    Calling a pattern builds a call pattern (``p(a, b)``; ``p(None)`` matches
    a call with any arguments), ``|`` an alternative, and ``+ - * /`` calls of
    ``add``, ``subtract``, ``multiply`` and ``divide``, as in TVM.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """The sub-patterns, in the order TVM's pattern visitor walks them."""

    def __call__(self, *args: DFPattern | None) -> CallPattern:
        if len(args) == 1 and args[0] is None:
            return CallPattern(self, None)
        return CallPattern(self, list(args))

    def __or__(self, other: DFPattern) -> AltPattern:
        return AltPattern(self, other)

    def __add__(self, other: DFPattern) -> CallPattern:
        return is_op("add")(self, other)

    def __sub__(self, other: DFPattern) -> CallPattern:
        return is_op("subtract")(self, other)

    def __mul__(self, other: DFPattern) -> CallPattern:
        return is_op("multiply")(self, other)

    def __truediv__(self, other: DFPattern) -> CallPattern:
        return is_op("divide")(self, other)

    def has_attr(self, attrs: Mapping[str, Any]) -> AttrPattern:
        """This pattern, further required to carry the attributes ``attrs``."""
        return AttrPattern(self, attrs)

    def has_type(self, ttype: Type) -> TypePattern:
        """This pattern, further required to have type ``ttype``."""
        return has_type(ttype, self)

    def has_dtype(self, dtype: str) -> DataTypePattern:
        """This pattern, further required to be a tensor of ``dtype``."""
        return has_dtype(dtype, self)

    def has_shape(self, shape: Sequence[Any]) -> ShapePattern:
        """This pattern, further required to be a tensor of ``shape``."""
        return has_shape(shape, self)

    def match(self, expr: Expr) -> bool:
        """Whether ``expr`` matches this pattern."""
        return slots.match(self, expr)

    def partition(self, expr: Expr, attrs: Mapping[str, Any] | None = None,
                  check: Callable[[Expr], bool] | None = None) -> Expr:
        """``expr`` with each match of this pattern moved into a function of its own."""
        return slots.partition(self, expr, attrs, check)

    def dominates(self, parent: DFPattern, path: DFPattern | None = None) -> DominatorPattern:
        """A pattern where this one (the child) post-dominates ``parent`` through ``path``."""
        return DominatorPattern(parent, wildcard() if path is None else path, self)

    def optional(self, option_constructor: Callable[[DFPattern], DFPattern]) -> AltPattern:
        """This pattern, or what ``option_constructor`` builds on top of it."""
        if not callable(option_constructor):
            raise PatternBuildError(
                f"optional() takes a function from a pattern to a pattern, not "
                f"{type(option_constructor).__name__}"
            )
        return self | option_constructor(self)

    def astext(self, show_meta_data: bool = True, annotate: object = None) -> str:
        """The pattern as text (TVM's ``astext``; patterns carry no metadata)."""
        return str(self)

    def __str__(self) -> str:
        return slots.text(self)

    def __repr__(self) -> str:
        return str(self)

    def sub_patterns(self) -> tuple[DFPattern, ...]:
        """The patterns this one is built from, in TVM's visiting order."""
        out: list[DFPattern] = []
        for name in self._fields:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, tuple):
                out.extend(value)
            else:
                out.append(value)
        return tuple(out)


class ExprPattern(DFPattern):
    """An expression structurally equal to ``expr`` (``is_op`` builds one around an operator)."""

    __slots__ = ("expr",)

    def __init__(self, expr: Expr):
        if not isinstance(expr, Expr):
            raise PatternBuildError(
                f"ExprPattern takes a Relay expression, not {type(expr).__name__} "
                f"{clip(repr(expr), 80)}"
            )
        self.expr = expr


class VarPattern(DFPattern):
    """A variable; named ``name`` unless the name is empty."""

    __slots__ = ("name",)

    def __init__(self, name_hint: str = ""):
        if not isinstance(name_hint, str):
            raise PatternBuildError(
                f"VarPattern takes a variable name (str), not {type(name_hint).__name__}"
            )
        self.name = name_hint

    @property
    def name_hint(self) -> str:
        return self.name


class ConstantPattern(DFPattern):
    """Any constant."""

    __slots__ = ()


class WildcardPattern(DFPattern):
    """Anything; once redirected (``redirect_to``), what the other pattern matches.

    Redirection is how a pattern refers to itself: ``w = wildcard();
    p = is_op("cast")(w); w.redirect_to(p | q)`` matches a chain of casts of
    any length ending in ``q``.
    """

    __slots__ = ("pattern",)
    _fields = ("pattern",)

    def __init__(self) -> None:
        self.pattern: DFPattern | None = None

    def redirect_to(self, pat: DFPattern) -> None:
        """Make this wildcard stand for ``pat`` (which may contain this wildcard)."""
        self.pattern = _need_pattern(pat, "redirect_to's pattern")


class CallPattern(DFPattern):
    """A call whose callee matches ``op`` and whose arguments match ``args`` (None: any)."""

    __slots__ = ("op", "_args")
    _fields = ("op", "args")

    def __init__(self, op: DFPattern, args: Sequence[DFPattern] | None):
        self.op = _need_pattern(op, "CallPattern's op")
        self.args = args

    @property
    def args(self) -> tuple[DFPattern, ...] | None:
        return self._args

    @args.setter
    def args(self, args: Sequence[DFPattern] | None) -> None:
        # Settable after construction: one way to make a pattern refer to itself.
        self._args = _need_patterns(args, "CallPattern's args")


class FunctionPattern(DFPattern):
    """A function whose parameters match ``params`` (None: any) and whose body matches ``body``."""

    __slots__ = ("params", "body")
    _fields = ("params", "body")

    def __init__(self, params: Sequence[DFPattern] | None, body: DFPattern):
        self.params = _need_patterns(params, "FunctionPattern's params")
        self.body = _need_pattern(body, "FunctionPattern's body")


class TuplePattern(DFPattern):
    """A tuple whose fields match ``fields`` (None: any fields)."""

    __slots__ = ("fields",)
    _fields = ("fields",)

    def __init__(self, fields: Sequence[DFPattern] | None):
        self.fields = _need_patterns(fields, "TuplePattern's fields")

    def __getitem__(self, index: int) -> DFPattern:
        if self.fields is None or index >= len(self.fields):
            raise IndexError("TuplePattern index out of range")
        return self.fields[index]

    def __len__(self) -> int:
        return 0 if self.fields is None else len(self.fields)

    def astype(self, _: object) -> None:
        raise TypeError("astype cannot be used on TuplePattern")


class TupleGetItemPattern(DFPattern):
    """Field ``index`` (None or -1: any field) of a tuple matching ``tuple``."""

    __slots__ = ("tuple", "index")
    _fields = ("tuple",)

    def __init__(self, tuple_value: DFPattern, index: int | None = None):
        self.tuple = _need_pattern(tuple_value, "TupleGetItemPattern's tuple")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise PatternBuildError(
                f"TupleGetItemPattern's index must be an int or None, not {type(index).__name__}"
            )
        self.index = -1 if index is None else index


class IfPattern(DFPattern):
    """An ``if`` whose condition and branches match the three patterns."""

    __slots__ = ("cond", "true_branch", "false_branch")
    _fields = ("cond", "true_branch", "false_branch")

    def __init__(self, cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern):
        self.cond = _need_pattern(cond, "IfPattern's cond")
        self.true_branch = _need_pattern(true_branch, "IfPattern's true_branch")
        self.false_branch = _need_pattern(false_branch, "IfPattern's false_branch")


class LetPattern(DFPattern):
    """A ``let`` whose variable, value and body match the three patterns."""

    __slots__ = ("var", "value", "body")
    _fields = ("var", "value", "body")

    def __init__(self, var: DFPattern, value: DFPattern, body: DFPattern):
        self.var = _need_pattern(var, "LetPattern's var")
        self.value = _need_pattern(value, "LetPattern's value")
        self.body = _need_pattern(body, "LetPattern's body")


class AltPattern(DFPattern):
    """``left``, or else ``right``."""

    __slots__ = ("left", "right")
    _fields = ("left", "right")

    def __init__(self, left: DFPattern, right: DFPattern):
        self.left = _need_pattern(left, "the left side of |")
        self.right = _need_pattern(right, "the right side of |")


class TypePattern(DFPattern):
    """What ``pattern`` matches, when its type is ``type``."""

    __slots__ = ("pattern", "type")
    _fields = ("pattern",)

    def __init__(self, pattern: DFPattern, ttype: Type):
        self.pattern = _need_pattern(pattern, "TypePattern's pattern")
        if not isinstance(ttype, Type):
            raise PatternBuildError(
                f"TypePattern's type must be a Relay type, not {type(ttype).__name__}"
            )
        self.type = ttype


class DataTypePattern(DFPattern):
    """What ``pattern`` matches, when it is a tensor of ``dtype``."""

    __slots__ = ("pattern", "dtype")
    _fields = ("pattern",)

    def __init__(self, pattern: DFPattern, dtype: str):
        self.pattern = _need_pattern(pattern, "DataTypePattern's pattern")
        if not isinstance(dtype, str):
            dtype_text = str(dtype) if type(dtype).__name__ in ("DataType", "dtype") else None
            if dtype_text is None:
                raise PatternBuildError(
                    f"DataTypePattern's dtype must be a dtype name, not {type(dtype).__name__}"
                )
            dtype = dtype_text
        self.dtype = dtype


class ShapePattern(DFPattern):
    """What ``pattern`` matches, when it is a tensor of ``shape``."""

    __slots__ = ("pattern", "shape")
    _fields = ("pattern",)

    def __init__(self, pattern: DFPattern, shape: Sequence[Any]):
        self.pattern = _need_pattern(pattern, "ShapePattern's pattern")
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
            raise PatternBuildError(
                f"ShapePattern's shape must be a list of dimensions, not {type(shape).__name__}"
            )
        self.shape = tuple(shape)


class AttrPattern(DFPattern):
    """What ``pattern`` matches, when it carries the attributes ``attrs``.

    On an operator the attributes are its registered ones (``TOpPattern``),
    on a call the call's attributes, on a function the function's.
    """

    __slots__ = ("pattern", "attrs")
    _fields = ("pattern",)

    def __init__(self, pattern: DFPattern, attrs: Mapping[str, Any]):
        self.pattern = _need_pattern(pattern, "AttrPattern's pattern")
        if not isinstance(attrs, Mapping) or not all(isinstance(k, str) for k in attrs):
            raise PatternBuildError(
                f"has_attr takes a mapping from attribute names to values, not "
                f"{type(attrs).__name__}"
            )
        try:
            self.attrs = attrs if isinstance(attrs, Attrs) else Attrs(attrs)
        except TypeError as err:
            raise PatternBuildError(f"has_attr: {err}") from None


class DominatorPattern(DFPattern):
    """``child``, which post-dominates ``parent``, every node in between matching ``path``.

    ``path`` is fuzzy: it may match any number of nodes (chains, diamonds) as
    long as each input of the child, followed upwards, meets the parent or a
    node matching ``path``.
    """

    __slots__ = ("parent", "path", "child")
    _fields = ("parent", "path", "child")

    def __init__(self, parent: DFPattern, path: DFPattern, child: DFPattern):
        self.parent = _need_pattern(parent, "DominatorPattern's parent")
        self.path = _need_pattern(path, "DominatorPattern's path")
        self.child = _need_pattern(child, "DominatorPattern's child")


# --- builders (TVM's syntactic sugar) ------------------------------------------------------


def is_var(name: str = "") -> VarPattern:
    """A variable named ``name`` (any variable when empty)."""
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    """Any constant."""
    return ConstantPattern()


def is_expr(expr: Expr) -> ExprPattern:
    """An expression structurally equal to ``expr``."""
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """The registered operator ``op_name``; call it to describe a call of the operator."""
    if not isinstance(op_name, str):
        raise PatternBuildError(f"is_op takes an operator name, not {type(op_name).__name__}")
    return ExprPattern(Op.get(op_name))


def is_tuple(fields: Sequence[DFPattern] | None) -> TuplePattern:
    """A tuple of fields matching ``fields`` (None: any fields)."""
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value: DFPattern, index: int | None = None) -> TupleGetItemPattern:
    """Field ``index`` (None: any) of a tuple matching ``tuple_value``."""
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern) -> IfPattern:
    """An ``if`` expression."""
    return IfPattern(cond, true_branch, false_branch)


def is_let(var: DFPattern, value: DFPattern, body: DFPattern) -> LetPattern:
    """A ``let`` expression."""
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    """Anything."""
    return WildcardPattern()


def has_type(ttype: Type, pattern: DFPattern | None = None) -> TypePattern:
    """``pattern`` (anything by default) of type ``ttype``."""
    return TypePattern(wildcard() if pattern is None else pattern, ttype)


def has_dtype(dtype: str, pattern: DFPattern | None = None) -> DataTypePattern:
    """``pattern`` (anything by default), a tensor of ``dtype``."""
    return DataTypePattern(wildcard() if pattern is None else pattern, dtype)


def has_shape(shape: Sequence[Any], pattern: DFPattern | None = None) -> ShapePattern:
    """``pattern`` (anything by default), a tensor of ``shape``."""
    return ShapePattern(wildcard() if pattern is None else pattern, shape)


def has_attr(attrs: Mapping[str, Any], pattern: DFPattern | None = None) -> AttrPattern:
    """``pattern`` (anything by default) carrying ``attrs``."""
    return AttrPattern(wildcard() if pattern is None else pattern, attrs)


def dominates(parent: DFPattern, path: DFPattern, child: DFPattern) -> DominatorPattern:
    """``child`` post-dominating ``parent``, with ``path`` matching everything between."""
    return DominatorPattern(parent, path, child)
