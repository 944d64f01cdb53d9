"""Layouts as the layout passes reason about them: TVM's ``tir.Layout``.

:mod:`relaypass.op.layout` reads a layout string for a type relation or a
kernel and rejects what the operator cannot take.  ConvertLayout and
AlterOpLayout need more: a layout they can ask for the position and the split
factor of an axis by its letter, cut (``sublayout``), widen to another
layout's primal axes (``expand_primal``) and compare by name, including the
scalar layout ``""`` (a defined layout with no axes).  An *undefined* layout,
"no layout is known", is ``None``, as it is in TVM's Python API, where an
undefined ``Layout`` arrives as ``None``.

Layouts are immutable and compare by name; :func:`layout` caches them, so a
pass may build the same one a hundred thousand times cheaply.  The grammar is
the one :mod:`relaypass.op.layout` checks (``NCHW16c``: upper case for a
primal axis, a factor and a lower-case letter for a sub-axis).
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import RelayPassError, TypeRelationError
from .layout import Layout as _CheckedLayout

__all__ = ["Layout", "LayoutError", "layout"]


class LayoutError(RelayPassError, ValueError):
    """A layout string that is not one, or an axis a layout does not have."""


class Layout:
    """A data layout (TVM's ``tvm.tir.Layout``): ``name`` and its axes, primal or split."""

    __slots__ = ("name", "axes", "_index")

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise LayoutError(f"a layout is a string such as 'NCHW', not {type(name).__name__}")
        if name:
            try:
                axes = tuple(_CheckedLayout(name, "invalid layout", "layout").axes)
            except TypeRelationError as err:
                raise LayoutError(str(err)) from None
        else:
            axes = ()
        self.name = name
        #: (letter, factor) per axis, in order; factor is None for a primal axis.
        self.axes: tuple[tuple[str, int | None], ...] = axes
        self._index = {letter: i for i, (letter, _) in enumerate(axes)}

    def __len__(self) -> int:
        return len(self.axes)

    @property
    def ndim_primal(self) -> int:
        return sum(1 for _, factor in self.axes if factor is None)

    def __getitem__(self, index: int) -> str:
        """The letter of axis ``index`` (negative indices count from the end)."""
        n = len(self.axes)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError(f"layout {self.name!r} has no axis {index}")
        return self.axes[i][0]

    def __contains__(self, axis: object) -> bool:
        return isinstance(axis, str) and axis in self._index

    def index_of(self, axis: str) -> int:
        """The position of the axis named ``axis`` ("C" or "c"), -1 if there is none."""
        return self._index.get(axis, -1)

    def factor_of(self, axis: str) -> int:
        """The split factor of ``axis``'s primal axis (as TVM: -1 when it is not split)."""
        k = self._index.get(axis.lower())
        return -1 if k is None else self.axes[k][1]  # type: ignore[return-value]

    def sublayout(self, pos: int, length: int) -> Layout | None:
        """The ``length`` axes from ``pos`` (fewer at the end); None when ``pos`` is past the end.

        As in TVM, the part need not be a layout one could write: the trailing axes
        ``HW4c`` of ``NCHW4c`` split a C they do not hold, and a broadcast rule may still
        compare them with another layout.
        """
        if pos > len(self.axes):
            return None
        return _part(self.axes[pos:pos + length])

    def expand_primal(self, dst: Layout) -> Layout:
        """This layout after the primal axes of ``dst`` it lacks, which lead in ``dst``'s order."""
        missing = "".join(a for a, f in dst.axes if f is None and a not in self._index)
        return layout(missing + self.name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Layout):
            return self.name == other.name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Layout({self.name!r})"


def _spell(axes: tuple[tuple[str, int | None], ...]) -> str:
    return "".join(letter if factor is None else f"{factor}{letter}" for letter, factor in axes)


@lru_cache(maxsize=4096)
def _part(axes: tuple[tuple[str, int | None], ...]) -> Layout:
    """The layout of ``axes``, taken from a valid layout, without checking it stands alone."""
    part = Layout.__new__(Layout)
    part.name = _spell(axes)
    part.axes = axes
    part._index = {letter: i for i, (letter, _) in enumerate(axes)}
    return part


@lru_cache(maxsize=4096)
def _cached(name: str) -> Layout:
    return Layout(name)


def layout(name: str | Layout | None) -> Layout | None:
    """The layout named ``name`` (TVM's ``tvm.tir.layout``); None for None and ``"__undef__"``."""
    if name is None or isinstance(name, Layout):
        return name
    if name == "__undef__":
        return None
    if not isinstance(name, str):
        raise LayoutError(f"a layout is a string such as 'NCHW', not {type(name).__name__}")
    return _cached(name)
