"""Immutable attribute records: call attributes and function attributes.

A call's attributes (``call.attrs.strides``) and a function's attributes
(``func.attrs["Primitive"]``) are both an :class:`Attrs`: a frozen record whose
fields read as attributes and as mapping keys.  Values are normalised on the
way in (lists become tuples, numpy scalars become Python numbers) so that two
records built from equal values compare and hash equal, which structural
equality relies on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from . import hooks
from .container import Map
from .node import Node, _init, slot_filler

_SCALARS = frozenset({bool, int, float, str, type(None)})
"""The types of values that are already canonical and plain."""


def normalize_attr_value(value: Any) -> Any:
    """Turn a user-supplied attribute value into its canonical immutable form.

    Lists become tuples, numpy values Python ones; a mapping with string keys
    becomes a nested :class:`Attrs`, any other mapping (keyed by variables,
    as TVM's ``Map<Var, ...>``) a :class:`~relaypass.ir.container.Map`.
    """
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return tuple(normalize_attr_value(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return tuple(normalize_attr_value(v) for v in value.tolist())
    if isinstance(value, Node):
        return value
    if isinstance(value, Map) or isinstance(value, Mapping) and not all(
        isinstance(k, str) for k in value
    ):
        return Map({k: normalize_attr_value(v) for k, v in value.items()})
    if isinstance(value, Mapping):
        return Attrs(value)
    raise TypeError(f"unsupported attribute value {value!r} of type {type(value).__name__}")


def is_plain_value(value: Any) -> bool:
    """True when ``value`` holds no IR node and no Map: it compares and hashes by value alone."""
    if type(value) is tuple:
        return all(is_plain_value(v) for v in value)
    if isinstance(value, Attrs):
        return value._plain
    return not isinstance(value, (Node, Map))


class Attrs(Node, Mapping):
    """A frozen record of named attribute values.

    ``type_key`` names the schema (``"relay.attrs.Conv2DAttrs"`` for calls,
    ``"DictAttrs"`` for functions); equality compares the key and the fields.
    """

    # ``__dict__`` holds the fields that no attribute of the class shadows (usually the very
    # dict ``_fields`` is), so that ``attrs.axis`` is an ordinary attribute read: reading a
    # field through ``__getattr__`` costs ten times more, and relations read them all the time.
    __slots__ = ("type_key", "_fields", "_hash", "_plain", "__dict__")

    def __init__(self, fields: Mapping[str, Any] | None = None, type_key: str = "DictAttrs"):
        normalized = {}
        plain = True  # no IR node anywhere in the values: equal and hash by value alone
        for k, v in (fields or {}).items():
            # Most values are plain numbers and strings, or sequences of them: those skip the
            # general checks (isinstance against abstract classes costs more than the rest).
            t = type(v)
            if t not in _SCALARS:
                if (t is tuple or t is list) and all(type(e) in _SCALARS for e in v):
                    v = tuple(v)
                else:
                    v = normalize_attr_value(v)
                    plain = plain and is_plain_value(v)
            normalized[k if type(k) is str else str(k)] = v
        _fill_attrs(self, type_key, normalized, None, plain)
        shadowed = _ATTRS_NAMES if type(self) is Attrs else frozenset(dir(type(self)))
        _init(self, "__dict__", normalized if shadowed.isdisjoint(normalized)
              else {k: v for k, v in normalized.items() if k not in shadowed})

    def __getattr__(self, name: str) -> Any:
        # Only called when neither the class nor the fields in ``__dict__`` have the name: a
        # missing field (a field shadowed by a method of the class reads as the method).
        try:
            return object.__getattribute__(self, "_fields")[name]
        except KeyError:
            fields = object.__getattribute__(self, "_fields")
            raise AttributeError(
                f"{self.type_key} has no attribute {name!r}; it has: {', '.join(fields) or 'none'}"
            ) from None

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def get(self, key: str, default: Any = None) -> Any:
        return self._fields.get(key, default)

    # TVM's accessors (``tvm.ir.Attrs``).
    def get_int(self, key: str) -> int:
        return int(self._fields[key])

    def get_int_tuple(self, key: str) -> tuple[int, ...]:
        return tuple(int(v) for v in self._fields[key])

    def get_str(self, key: str) -> str:
        return str(self._fields[key])

    def list_field_info(self) -> list[str]:
        """The field names (TVM gives field descriptions; the names are what code reads)."""
        return list(self._fields)

    def _dict(self) -> dict[str, Any]:
        return dict(self._fields)

    def with_fields(self, **updates: Any) -> Attrs:
        """A copy with some fields replaced or added."""
        merged = dict(self._fields)
        merged.update(updates)
        return Attrs(merged, self.type_key)

    def without(self, key: str) -> Attrs:
        """A copy without ``key``."""
        return Attrs({k: v for k, v in self._fields.items() if k != key}, self.type_key)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Attrs):
            return NotImplemented
        return self.type_key == other.type_key and _values_equal(self._fields, other._fields)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            # Plain values hash as they are (field names are distinct: sorting never compares
            # the values); others through _hashable.
            items = (sorted(self._fields.items()) if self._plain
                     else sorted((k, _hashable(v)) for k, v in self._fields.items()))
            h = hash((self.type_key, tuple(items)))
            _init(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"{self.type_key}({body})"


_fill_attrs = slot_filler(Attrs, "type_key", "_fields", "_hash", "_plain")
_ATTRS_NAMES = frozenset(dir(Attrs))
"""The names the class resolves itself (methods, slots...): they win over fields."""


def _hashable(value: Any) -> Any:
    if isinstance(value, Node) and not isinstance(value, Attrs):
        return hooks.structural_hash(value)
    return value


def _values_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for k, va in a.items():
        vb = b[k]
        if isinstance(va, Node) and not isinstance(va, Attrs):
            if not isinstance(vb, Node) or not hooks.structural_equal(va, vb):
                return False
        elif type(va) is not type(vb) and not (
            isinstance(va, (int, float)) and isinstance(vb, (int, float))
            and not isinstance(va, bool) and not isinstance(vb, bool)
        ):
            return False
        elif va != vb and not (_is_nan(va) and _is_nan(vb)):
            return False
    return True


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


EMPTY_DICT_ATTRS = Attrs()
