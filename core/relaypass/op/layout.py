"""Data layouts as Relay writes them: ``"NCHW"``, ``"NHWC"``, ``"NCHW16c"``, ``"OIHW"``.

An upper-case letter is a primal axis; a number followed by the same letter in
lower case is a sub-axis that splits the primal axis by that factor (so
``NCHW16c`` holds C as C/16 outer blocks of 16).  A layout tells the
relations how to find an axis by its letter and lets ``layout_transform``
move between any two layouts with the same primal axes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ..ir.types import Any, Dim
from .relations import fail


class Layout:
    """A parsed layout: ``axes`` lists (letter, factor), factor None for a primal axis."""

    __slots__ = ("name", "axes", "_index")

    def __init__(self, name: str, op_name: str, what: str = "layout"):
        if not isinstance(name, str) or not name:
            raise fail(op_name, f"{what} must be a non-empty layout string like 'NCHW', got {name!r}")
        axes: list[tuple[str, int | None]] = []
        i = 0
        while i < len(name):
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            if j == len(name):
                raise fail(op_name, f"{what} {name!r} ends with a number that splits no axis")
            letter = name[j]
            if not letter.isalpha():
                raise fail(op_name, f"{what} {name!r} has an invalid character {letter!r}")
            if j > i:
                if not letter.islower():
                    raise fail(op_name, f"{what} {name!r}: a split factor must precede a lower-case "
                               f"sub-axis, as in 'NCHW16c'")
                factor = int(name[i:j])
                if factor <= 0:
                    raise fail(op_name, f"{what} {name!r} has a non-positive split factor")
                axes.append((letter, factor))
            else:
                if letter.islower():
                    raise fail(op_name, f"{what} {name!r}: sub-axis {letter!r} needs a factor, "
                               f"as in '16{letter}'")
                axes.append((letter, None))
            i = j + 1
        letters = [a for a, _ in axes]
        if len(set(letters)) != len(letters):
            raise fail(op_name, f"{what} {name!r} names an axis twice")
        for letter, factor in axes:
            if factor is not None and letter.upper() not in letters:
                raise fail(op_name, f"{what} {name!r} splits {letter.upper()!r} but has no primal "
                           f"axis {letter.upper()!r}")
        self.name = name
        self.axes = axes
        self._index = {a: k for k, a in enumerate(letters)}

    def __len__(self) -> int:
        return len(self.axes)

    @property
    def primal(self) -> list[str]:
        return [a for a, f in self.axes if f is None]

    @property
    def is_primal(self) -> bool:
        return all(f is None for _, f in self.axes)

    def index(self, letter: str) -> int:
        """Position of axis ``letter``, or -1."""
        return self._index.get(letter, -1)

    def factor(self, primal: str) -> int | None:
        k = self._index.get(primal.lower())
        return None if k is None else self.axes[k][1]

    def require_primal(self, letters: str, op_name: str, what: str) -> list[int]:
        """The positions of exactly the primal axes ``letters`` (e.g. "NCHW"), or an error."""
        if not self.is_primal or sorted(self.primal) != sorted(letters):
            raise fail(op_name, f"{what} {self.name!r} is not supported; use a permutation of "
                       f"{letters!r}")
        return [self._index[a] for a in letters]

    def primal_extents(self, shape: Sequence[Dim], op_name: str) -> dict[str, Dim]:
        """The extent of every primal axis of a tensor of ``shape`` in this layout."""
        if len(shape) != len(self.axes):
            raise fail(op_name, f"a tensor of rank {len(shape)} cannot have layout {self.name!r}")
        extents: dict[str, Dim] = {}
        for (letter, factor), d in zip(self.axes, shape):
            if factor is None:
                inner = self.factor(letter)
                if inner is not None:
                    sub = shape[self._index[letter.lower()]]
                    if sub != inner and type(sub) is not Any:
                        raise fail(op_name, f"axis {letter.lower()!r} of layout {self.name!r} "
                                   f"must have extent {inner}, got {sub}")
                    d = Any() if type(d) is Any else d * inner
                extents[letter] = d
        return extents

    def shape_from_primal(self, extents: dict[str, Dim], op_name: str) -> tuple[Dim, ...]:
        """The shape, in this layout, of a tensor whose primal extents are ``extents``."""
        out: list[Dim] = []
        for letter, factor in self.axes:
            if factor is not None:
                out.append(factor)
                continue
            d = extents[letter]
            inner = self.factor(letter)
            if inner is not None and type(d) is not Any:
                if d % inner:
                    raise fail(op_name, f"axis {letter!r} of extent {d} cannot be split into "
                               f"blocks of {inner} (layout {self.name!r})")
                d //= inner
            out.append(d)
        return tuple(out)


@functools.lru_cache(maxsize=1024)
def parse_layout(name: str, op_name: str, what: str = "layout") -> Layout:
    """``Layout(name, ...)``, parsed once per distinct string: type relations ask for the
    same few layouts on every call (a model's convolutions all say "NCHW" and "OIHW"), and
    a Layout is never changed once made.  A bad name raises each time (nothing is cached)."""
    return Layout(name, op_name, what)


def check_convertible(src: Layout, dst: Layout, op_name: str) -> None:
    if sorted(src.primal) != sorted(dst.primal):
        raise fail(op_name, f"cannot convert layout {src.name!r} to {dst.name!r}: "
                   f"their primal axes differ")


def transform_array(x: np.ndarray, src: Layout, dst: Layout) -> np.ndarray:
    """``x`` (in layout ``src``) rearranged into layout ``dst``, without copying more than once."""
    if src.name == dst.name:
        return x
    order = dst.primal
    perm: list[int] = []
    primal_shape: list[int] = []
    for letter in order:
        k = src.index(letter)
        perm.append(k)
        extent = x.shape[k]
        inner = src.index(letter.lower())
        if inner >= 0:
            perm.append(inner)
            extent *= x.shape[inner]
        primal_shape.append(extent)
    y = x.transpose(perm).reshape(primal_shape)
    split_shape: list[int] = []
    labels: list[str] = []
    for letter, extent in zip(order, primal_shape):
        f = dst.factor(letter)
        if f is None:
            split_shape.append(extent)
            labels.append(letter)
        else:
            split_shape.extend((extent // f, f))
            labels.extend((letter, letter.lower()))
    y = y.reshape(split_shape)
    return y.transpose([labels.index(a) for a, _ in dst.axes])
