"""Algebraic data types: type definitions, constructors, and ``match`` with its patterns.

Relay's functional side (the prelude's ``List``, ``Option``, ``Tree``; loops
written as recursion over lists) rests on these nodes, with TVM's names and
fields:

* :class:`TypeData` defines a type: its name (a
  :class:`~relaypass.ir.types.GlobalTypeVar`), its type parameters, its
  constructors.  A module maps the name to the definition
  (``mod[List] = TypeData(List, [a], [Cons, Nil])``).
* :class:`Constructor` is an expression: called, it builds a value of the
  type (``Cons(x, xs)``); passed around uncalled, it is a function.
* :class:`Match` takes a value apart: the first :class:`Clause` whose
  pattern fits the value is evaluated, with the pattern's variables bound.
  Patterns are :class:`PatternWildcard` (``_``), :class:`PatternVar`
  (``%x``), :class:`PatternConstructor` (``Cons(%h, _)``) and
  :class:`PatternTuple` (``(%a, %b)``).  A ``match`` claims to cover every
  value (``complete``), a ``match?`` does not.

A match declares its fields as the other nodes do (:mod:`relaypass.ir.fields`),
in a form the generic traversals understand without knowing about matches:
its children are the matched value and the clauses' bodies (each body a
scope of its own, as a branch of an If), and its patterns are a field that
binds variables, each pattern in its own clause's body.  ``match.clauses``
gives TVM's view, a tuple of :class:`Clause`.

A constructor's type and tag depend on the definition it belongs to: building
the :class:`TypeData` sets them (TVM sets the tags when the definition is
added to a module), so a constructor has its ``checked_type`` from then on,
as a variable with a complete annotation has its own.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence

from ..errors import RelayPassError
from . import hooks
from .expr import Expr, Var, set_checked_type
from .fields import BRANCHES, DATA, EXPR, INFO, SPAN, TYPE_VARS, VAR, Kind, fields, with_children
from .node import Node, Span, _init, slot_filler
from .types import FuncType, GlobalTypeVar, Type, TypeCall, TypeVar

__all__ = [
    "Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple",
    "PatternVar", "PatternWildcard", "TypeData", "TypeDefinitionError", "pattern_vars",
]


class TypeDefinitionError(RelayPassError, ValueError):
    """A type definition that cannot be built: a constructor of another type, a repeated name."""


# --------------------------------------------------------------------------- patterns


class Pattern(Node):
    """Base class of the patterns of a match clause (TVM's ``relay.Pattern``)."""

    __slots__ = ("span",)
    _language_ = "pattern"

    def __str__(self) -> str:
        return _pattern_text(self)

    __repr__ = __str__


SUBPATTERNS = Kind("SUBPATTERNS", "pattern", seq=True)
"""The patterns inside a constructor or tuple pattern."""


class PatternWildcard(Pattern):
    """``_``: matches any value and binds nothing."""

    __slots__ = ()
    _fields_ = fields(span=SPAN)

    def __init__(self, span: Span | None = None) -> None:
        _init(self, "span", span)


class PatternVar(Pattern):
    """``%x``: matches any value and binds it to the variable."""

    __slots__ = ("var",)
    _fields_ = fields(var=VAR, span=SPAN)

    def __init__(self, var: Expr, span: Span | None = None) -> None:
        if not isinstance(var, Var):
            raise TypeError(f"PatternVar binds a Var, not {type(var).__name__}")
        _fill_pattern_var(self, var, span)


_fill_pattern_var = slot_filler(PatternVar, "var", "span")


class PatternConstructor(Pattern):
    """``Cons(p1, p2)``: matches a value built by the constructor whose fields match the patterns."""

    __slots__ = ("constructor", "patterns")
    _fields_ = fields(constructor=DATA, patterns=SUBPATTERNS, span=SPAN)

    def __init__(
        self, constructor: Constructor, patterns: Iterable[Pattern] | None = None,
        span: Span | None = None,
    ) -> None:
        if not isinstance(constructor, Constructor):
            raise TypeError(
                f"PatternConstructor needs a Constructor, not {type(constructor).__name__}"
            )
        _fill_pattern_constructor(self, constructor, _patterns(patterns), span)


_fill_pattern_constructor = slot_filler(PatternConstructor, "constructor", "patterns", "span")


class PatternTuple(Pattern):
    """``(p1, p2)``: matches a tuple whose fields match the patterns."""

    __slots__ = ("patterns",)
    _fields_ = fields(patterns=SUBPATTERNS, span=SPAN)

    def __init__(self, patterns: Iterable[Pattern] | None = None, span: Span | None = None) -> None:
        _fill_pattern_tuple(self, _patterns(patterns), span)


_fill_pattern_tuple = slot_filler(PatternTuple, "patterns", "span")


def _patterns(patterns: Iterable[Pattern] | None) -> tuple[Pattern, ...]:
    out = tuple(patterns or ())
    for p in out:
        if not isinstance(p, Pattern):
            raise TypeError(f"a sub-pattern must be a Pattern, not {type(p).__name__}")
    return out


def pattern_vars(pattern: Pattern) -> tuple[Expr, ...]:
    """The variables ``pattern`` binds, left to right."""
    out: list[Expr] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        layout = type(p)._layout_
        out.extend(layout.bound_vars(p))
        stack.extend(reversed(layout.children(p)))
    return tuple(out)


def _clause_pattern_vars(patterns: Sequence[Pattern]) -> tuple[Expr, ...]:
    """What a match's patterns bind, clause after clause."""
    if len(patterns) == 1:
        return pattern_vars(patterns[0])
    return tuple(v for p in patterns for v in pattern_vars(p))


CLAUSE_PATTERNS = Kind("CLAUSE_PATTERNS", "pattern", seq=True, binders=_clause_pattern_vars)
"""A match's patterns: the ``i``-th binds its variables in the ``i``-th clause's body."""


def _pattern_text(pattern: Pattern) -> str:
    """A pattern as Relay text writes it, variables by name (for messages and ``repr``)."""
    t = type(pattern)
    if t is PatternWildcard:
        return "_"
    if t is PatternVar:
        return "%" + pattern.var.name_hint  # type: ignore[attr-defined]
    inner = ", ".join(_pattern_text(p) for p in pattern.patterns)  # type: ignore[attr-defined]
    if t is PatternTuple:
        return f"({inner})"
    name = pattern.constructor.name_hint  # type: ignore[attr-defined]
    return f"{name}({inner})" if pattern.patterns else name  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- definitions


class Constructor(Expr):
    """A constructor of an algebraic data type: ``Cons`` of ``List``.

    ``inputs`` are the types of its fields, written with the type parameters
    of its definition; ``belong_to`` the definition's name.  Called
    (``Cons(x, xs)``, a Call whose op is the constructor) it builds a value;
    ``tag`` tells its values apart at run time (-1 until its
    :class:`TypeData` is built).  Constructors compare structurally by name
    and type, as in TVM; their field types are compared with the definition.
    """

    __slots__ = ("name_hint", "inputs", "belong_to", "tag")
    _fields_ = fields(name_hint=DATA, inputs=INFO, belong_to=DATA, span=SPAN)
    _graph_node_ = False

    def __init__(
        self, name_hint: str, inputs: Iterable[Type], belong_to: GlobalTypeVar,
        span: Span | None = None,
    ) -> None:
        inputs_t = tuple(inputs)
        for t in inputs_t:
            if not isinstance(t, Type):
                raise TypeError(f"the inputs of constructor {name_hint} must be types, not "
                                f"{type(t).__name__}")
        if not isinstance(belong_to, GlobalTypeVar):
            raise TypeError(f"constructor {name_hint} must belong to a GlobalTypeVar, not "
                            f"{type(belong_to).__name__}")
        _fill_constructor(self, str(name_hint), inputs_t, belong_to, -1, span, None)


_fill_constructor = slot_filler(
    Constructor, "name_hint", "inputs", "belong_to", "tag", "span", "_checked_type"
)


class TypeData(Type):
    """The definition of an algebraic data type: ``type List[A] { Cons(A, List[A]), Nil }``.

    ``header`` names the type, ``type_vars`` are its parameters (in scope in
    the constructors' inputs), ``constructors`` its constructors, each
    belonging to ``header``.  Building it gives each constructor its tag
    (a prefix from the type's name, then its position) and its type,
    ``fn [A...](inputs) -> header[A...]`` (with type parameters of its own,
    named as ``type_vars``).
    """

    __slots__ = ("header", "type_vars", "constructors")
    _fields_ = fields(header=DATA, type_vars=TYPE_VARS, constructors=INFO, span=SPAN)

    def __init__(
        self, header: GlobalTypeVar, type_vars: Iterable[TypeVar],
        constructors: Iterable[Constructor], span: Span | None = None,
    ) -> None:
        if not isinstance(header, GlobalTypeVar):
            raise TypeError(f"a TypeData's header is a GlobalTypeVar, not {type(header).__name__}")
        tvars = tuple(type_vars)
        for tv in tvars:
            if type(tv) is not TypeVar:
                raise TypeError(f"the type parameters of {header.name_hint} must be TypeVars, not "
                                f"{type(tv).__name__}")
        ctors = tuple(constructors)
        names: set[str] = set()
        for c in ctors:
            if not isinstance(c, Constructor):
                raise TypeError(f"the constructors of {header.name_hint} must be Constructors, not "
                                f"{type(c).__name__}")
            if c.belong_to != header:
                raise TypeDefinitionError(
                    f"constructor {c.name_hint} belongs to {c.belong_to.name_hint}, so it cannot "
                    f"be a constructor of {header.name_hint}"
                )
            if c.name_hint in names:
                raise TypeDefinitionError(
                    f"type {header.name_hint} has two constructors named {c.name_hint}"
                )
            names.add(c.name_hint)
        _fill_type_data(self, header, tvars, ctors, span)
        prefix = (zlib.crc32(header.name_hint.encode("utf-8")) & 0x7F) << 24
        for i, c in enumerate(ctors):
            _init(c, "tag", prefix | i)
            # A function type binds type parameters of its own (a variable is bound once).
            params = tuple(TypeVar(tv.name_hint, tv.kind) for tv in tvars)
            renamed = dict(zip(tvars, params))
            inputs = [_renamed(t, renamed) for t in c.inputs]
            set_checked_type(c, FuncType(inputs, TypeCall(header, params), params))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TypeData):
            return NotImplemented if not isinstance(other, Type) else False
        return hooks.structural_equal(self, other)

    def __hash__(self) -> int:
        return hash(("type data", self.header, len(self.constructors)))



_fill_type_data = slot_filler(TypeData, "header", "type_vars", "constructors", "span")


def _renamed(ty: Type, mapping: dict[TypeVar, TypeVar]) -> Type:
    """``ty`` with the type variables of ``mapping`` renamed (types nest shallowly: recursion)."""
    if type(ty) is TypeVar:
        return mapping.get(ty, ty)
    layout = type(ty)._layout_
    return with_children(ty, [_renamed(k, mapping) for k in layout.children(ty)])


# --------------------------------------------------------------------------- match


PATTERN = Kind("PATTERN", "pattern")
"""One pattern (a clause's left-hand side)."""


class Clause(Node):
    """One case of a match: ``lhs => rhs`` (TVM's ``relay.Clause``).

    A match keeps its clauses' two sides as fields of its own (see
    :class:`Match`); a clause is TVM's view of one pair, with no children.
    """

    __slots__ = ("lhs", "rhs")
    _fields_ = fields(lhs=PATTERN, rhs=EXPR)

    def __init__(self, lhs: Pattern, rhs: Expr) -> None:
        if not isinstance(lhs, Pattern):
            raise TypeError(f"a clause's left-hand side is a Pattern, not {type(lhs).__name__}")
        if not isinstance(rhs, Expr):
            raise TypeError(f"a clause's right-hand side is an expression, not {type(rhs).__name__}")
        _fill_clause(self, lhs, rhs)

    def __repr__(self) -> str:
        return f"Clause({_pattern_text(self.lhs)} => {self.rhs!r:.60})"


_fill_clause = slot_filler(Clause, "lhs", "rhs")


class Match(Expr):
    """``match (data) { lhs => rhs, ... }``: the first clause whose pattern fits ``data``.

    ``complete`` (``match``, the default) says the clauses cover every value,
    which type inference checks; ``complete=False`` is ``match?``.  Besides
    TVM's ``data``, ``clauses`` and ``complete``, ``patterns`` and ``bodies``
    hold the clauses' two sides, as the field declaration has them.
    """

    __slots__ = ("data", "clauses", "complete", "patterns", "bodies")
    _fields_ = fields(
        data=EXPR, patterns=CLAUSE_PATTERNS, bodies=BRANCHES, complete=DATA, span=SPAN
    )

    def __init__(
        self, data: Expr, clauses: Iterable[Clause], complete: bool = True,
        span: Span | None = None,
    ) -> None:
        if not isinstance(data, Expr):
            raise TypeError(f"a match takes apart an expression, not {type(data).__name__}")
        clauses_t = tuple(clauses)
        for c in clauses_t:
            if not isinstance(c, Clause):
                raise TypeError(f"the clauses of a match must be Clauses, not {type(c).__name__}")
        _fill_match(
            self, data, clauses_t, bool(complete), tuple([c.lhs for c in clauses_t]),
            tuple([c.rhs for c in clauses_t]), span, None,
        )

    @classmethod
    def _from_fields_(
        cls, data: Expr, patterns: Sequence[Pattern], bodies: Sequence[Expr], complete: bool,
        span: Span | None,
    ) -> Match:
        """A match from its declared fields (what rebuilds call): clauses from patterns and bodies.

        The given sequences are kept as they are (as tuples), so that a
        rebuild over new bodies shares the patterns of the node it rebuilds.
        """
        patterns = patterns if type(patterns) is tuple else tuple(patterns)
        bodies = bodies if type(bodies) is tuple else tuple(bodies)
        if len(patterns) != len(bodies):
            raise ValueError(f"a match of {len(patterns)} patterns needs as many bodies, "
                             f"got {len(bodies)}")
        clauses = tuple([Clause(p, b) for p, b in zip(patterns, bodies)])  # checks both sides
        if not isinstance(data, Expr):
            raise TypeError(f"a match takes apart an expression, not {type(data).__name__}")
        node = cls.__new__(cls)
        _fill_match(node, data, clauses, bool(complete), patterns, bodies, span, None)
        return node


_fill_match = slot_filler(
    Match, "data", "clauses", "complete", "patterns", "bodies", "span", "_checked_type"
)

