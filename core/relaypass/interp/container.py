"""TVM's runtime container for a tuple value: ``tvm.runtime.container.ADT``.

Relay's debug interpreter and VM hand a tuple back as an ADT (tag 0, its
fields by index); :class:`ADT` is that, as a Python tuple, so ``out[0]``,
``len(out)``, unpacking and ``isinstance(out, tuple)`` all work.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["ADT", "tuple_object"]


class ADT(tuple):
    """A runtime algebraic-data-type value; a Relay tuple is one with tag 0.

    ``ADT(tag, fields)`` as in TVM; ``tag`` is the constructor's tag.
    """

    def __new__(cls, tag: int, fields: Iterable[Any]) -> ADT:
        self = super().__new__(cls, fields)
        self._tag = int(tag)
        return self

    @property
    def tag(self) -> int:
        """The constructor's tag: 0 for a tuple."""
        return self._tag

    def __getnewargs__(self) -> tuple[int, tuple[Any, ...]]:  # copies and pickles
        return (self._tag, tuple(self))

    def __repr__(self) -> str:
        return f"ADT(tag={self._tag}, fields=[{', '.join(repr(f) for f in self)}])"


def tuple_object(fields: Iterable[Any] | None = None) -> ADT:
    """A tuple value (an ADT with tag 0) of ``fields``, as ``tvm.runtime.container.tuple_object``."""
    return ADT(0, fields or ())
