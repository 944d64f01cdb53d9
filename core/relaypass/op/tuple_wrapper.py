"""Relay's TupleWrapper: how constructors of multi-output operators hand back their call.

``relay.split`` and ``relay.nn.batch_norm`` build one call whose value is a
tuple; the wrapper lets Python code index it (``bn[0]`` is a TupleGetItem)
and unpack it, while ``astuple()`` gives the call itself for places that take
the whole tuple.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..ir.expr import Expr, TupleGetItem


class TupleWrapper:
    """A tuple-valued expression of known arity, indexable from Python."""

    __slots__ = ("tuple_value", "size")

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        """The wrapped expression, whose value is the whole tuple."""
        return self.tuple_value

    def astext(self) -> str:
        return self.tuple_value.astext()

    def __getitem__(self, index: int) -> TupleGetItem:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"tuple indices must be integers, not {type(index).__name__}")
        if not -self.size <= index < self.size:
            raise IndexError(f"tuple index {index} out of range for a tuple of {self.size} fields")
        if index < 0:
            index += self.size
        return TupleGetItem(self.tuple_value, index, span=self.tuple_value.span)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[TupleGetItem]:
        return (self[i] for i in range(self.size))

    def __repr__(self) -> str:
        return f"TupleWrapper({self.tuple_value!r}, {self.size})"

    def astype(self, dtype: str) -> None:
        raise TypeError("astype cannot be used on a tuple; index the TupleWrapper first")
