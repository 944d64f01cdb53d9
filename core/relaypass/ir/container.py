"""TVM's containers, ``tvm.ir.container.Array`` and ``Map``, as Python pass code sees them.

In TVM, lists reaching the IR become ``Array`` objects (a call's ``args``, a
function's ``params``, an attribute such as ``strides``) and dicts become
``Map`` objects.  relaypass stores immutable tuples and :class:`Map`:

* :class:`Array` is a tuple subclass (what ``convert([...])`` returns), and
  *every* tuple is an instance of it, so TVM code asking
  ``isinstance(attrs.axis, tvm.ir.container.Array)`` or
  ``isinstance(call.args, tvm.ir.Array)`` gets the answer it got from TVM.
  Indexing, ``len``, iteration and ``list(...)`` are a tuple's.  ``==``
  compares items, so ``relay.Tuple(fields).fields == fields`` holds as in TVM;
  an Array is never equal to a list (TVM compares an Array with a list by
  identity: always False).
* :class:`Map` is an immutable mapping whose keys keep their identity
  (variables, global variables) or their value (strings, numbers), with
  TVM's ``items()``, ``keys()``, ``values()``, ``get``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["Array", "Map"]


class _ArrayMeta(type):
    """Makes every tuple an ``Array``: the IR stores tuples where TVM has Arrays."""

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, tuple)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, tuple)


class Array(tuple, metaclass=_ArrayMeta):
    """TVM's Array: an immutable sequence.  ``Array([a, b])`` or ``convert([a, b])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[" + ", ".join(map(repr, self)) + "]"

    @property
    def type_key(self) -> str:
        return "Array"

    def same_as(self, other: object) -> bool:
        return self is other


class Map(Mapping):
    """TVM's Map: an immutable mapping; ``Map({"a": 1})`` or ``convert({...})``.

    Keys are looked up as Python looks them up: IR nodes by identity, strings
    and numbers by value.  Iteration follows insertion order.
    """

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        object.__setattr__(self, "_items", dict(items))
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Map is immutable: cannot set {name!r}")

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        try:
            return key in self._items
        except TypeError:
            return False

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        """The (key, value) pairs, as TVM's ``Map.items()``: a list."""
        return list(self._items.items())

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Map):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(("Map", frozenset(self._items.items())))
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self._items.items()) + "}"

    @property
    def type_key(self) -> str:
        return "Map"

    def same_as(self, other: object) -> bool:
        return self is other
