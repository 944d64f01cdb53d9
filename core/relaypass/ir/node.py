"""The base of every IR object: immutability, identity equality and spans.

Nodes compare and hash by identity so that memo tables keyed by node are
O(1); structural comparison is the separate :mod:`relaypass.ir.structural`.
Fields are set once, in ``__init__``, through the class's slot filler
(:func:`slot_filler`; ``_init``, object.__setattr__, for rare cases);
assigning a field afterwards raises, because passes share subtrees freely and a
changed node would silently change every module that holds it.

Each concrete kind declares its fields once, as ``_fields_`` (see
:mod:`relaypass.ir.fields`); creating the class compiles that declaration into
the class's ``_layout_``, from which children, rebuilds and comparisons come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any as _AnyT

from . import hooks
from .fields import DATA, Layout, compile_source, fields

_init = object.__setattr__


def slot_filler(cls: type, *names: str) -> Callable[..., None]:
    """``fill(node, v1, v2, ...)``: set the named slots of a new ``cls`` node, in that order.

    Nodes refuse assignment, so a constructor sets its fields past the guard.
    ``object.__setattr__(node, "op", v)`` finds the slot by name on each call;
    the generated filler calls each slot's own descriptor instead, which makes
    building a node about a third cheaper -- and passes build one per node
    they touch.  Constructors call it once, with every field's final value.
    """
    namespace: dict[str, object] = {f"set_{name}": getattr(cls, name).__set__ for name in names}
    params = ", ".join(names)
    body = "".join(f"    set_{name}(n, {name})\n" for name in names)
    source = f"def fill(n, {params}):\n{body}"
    return compile_source(source, namespace, f"<slot filler of {cls.__module__}.{cls.__qualname__}>")[
        "fill"
    ]


class Node:
    """An immutable IR object."""

    __slots__ = ()

    _fields_: tuple | None = None
    """The declared fields, in constructor order (None for abstract kinds)."""
    _layout_: Layout | None = None
    _language_: str | None = None
    """Which fields are children: those holding nodes of this language ("expr", "type")."""

    def __init_subclass__(cls, **kwargs: _AnyT) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls._fields_
        # Every class gets its own layout, even one that inherits the declaration,
        # so that a rebuild constructs the subclass.
        cls._layout_ = None if declared is None else Layout(cls, declared, cls._language_)

    def __setattr__(self, name: str, value: _AnyT) -> None:
        raise AttributeError(
            f"{type(self).__name__} is immutable: cannot set {name!r}; build a new node instead"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def same_as(self, other: object) -> bool:
        """Identity comparison, as TVM's ``same_as``."""
        return self is other

    def __copy__(self) -> Node:
        return self

    def __deepcopy__(self, memo: dict) -> Node:
        return self

    def __reduce__(self) -> tuple:
        # Pickled as TVM pickles its objects, through save_json: one document for the whole
        # graph keeps shared nodes shared (a variable stays one variable), a chain of any
        # depth needs no recursion, and unpickling builds nodes through their constructors
        # (which the immutability guard requires).  As in TVM, checked types are not kept.
        return (hooks.load_json, (hooks.save_json(self),))


class SourceName(str):
    """The name of a source text a span points into (TVM's ``tvm.ir.SourceName``).

    A string, so it prints and compares as its name; ``.name`` as in TVM.
    """

    __slots__ = ()

    @property
    def name(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"SourceName({str.__repr__(self)})"


class Span(Node):
    """Where a node came from in a source text (1-based lines and columns).

    The constructor takes TVM's order: ``Span(source_name, line, end_line,
    column, end_column)``; a missing end is the start.  ``source_name`` is a
    :class:`SourceName` (a string given is made one), or None.
    """

    __slots__ = ("source_name", "line", "end_line", "column", "end_column")
    _fields_ = fields(source_name=DATA, line=DATA, end_line=DATA, column=DATA, end_column=DATA)

    def __init__(
        self,
        source_name: str | None,
        line: int,
        end_line: int | None = None,
        column: int = 0,
        end_column: int | None = None,
    ) -> None:
        if source_name is not None and type(source_name) is not SourceName:
            source_name = SourceName(source_name)
        _init(self, "source_name", source_name)
        _init(self, "line", line)
        _init(self, "end_line", line if end_line is None else end_line)
        _init(self, "column", column)
        _init(self, "end_column", column if end_column is None else end_column)

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.column}"

    def __repr__(self) -> str:
        return (f"Span({str(self.source_name)!r}, {self.line}, {self.end_line}, {self.column}, "
                f"{self.end_column})")
