"""The metadata section of Relay's text format: constants as ``.npy`` bytes.

A constant that is not a scalar literal is written as a reference,
``meta[relay.Constant][i]``, to the ``i``-th entry of the section that ends
the text::

    #[metadata]
    {
      "relay.Constant": [
        "k05VTVBZAQB2AHsnZGVzY3InOi..."
      ]
    }

Each entry is base64 of the constant's ``.npy`` bytes (``numpy.save`` with
``allow_pickle=False``), so a text never carries a pickle.  Relay writes its
metadata as TVM's JSON node graph instead; relaypass reads only its own form
and says so for any other.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any as _AnyT

import numpy as np

from ...errors import ParseError
from ..expr import Constant
from ..node import Span

__all__ = [
    "CONSTANT_KIND", "MetaTable", "find_section", "merge_tables", "npy_base64", "read_section",
]

CONSTANT_KIND = "relay.Constant"
"""The one kind of metadata entry: a constant (TVM's type key)."""

_SECTION_RE = re.compile(r"^#\[metadata\][ \t\r]*$", re.M)


def npy_base64(data: np.ndarray) -> str:
    """``data`` as base64 of its ``.npy`` bytes (never pickled)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(data), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


class MetaTable:
    """The constants a printing refers to, numbered in the order they are met."""

    __slots__ = ("constants", "index")

    def __init__(self) -> None:
        self.constants: list[Constant] = []
        self.index: dict[Constant, int] = {}

    def __bool__(self) -> bool:
        return bool(self.constants)

    def reference(self, const: Constant) -> str:
        """``meta[relay.Constant][i]``: one entry per constant, however often it is referred to."""
        i = self.index.get(const)
        if i is None:
            i = self.index[const] = len(self.constants)
            self.constants.append(const)
        return f"meta[{CONSTANT_KIND}][{i}]"

    def section(self) -> str:
        """The JSON object that follows ``#[metadata]``."""
        entries = ",\n".join(f'    "{npy_base64(c.array)}"' for c in self.constants)
        return '{\n  "' + CONSTANT_KIND + '": [\n' + entries + "\n  ]\n}"


def find_section(text: str) -> tuple[int, int] | None:
    """Where the ``#[metadata]`` line starts and ends, or None when the text has none."""
    found = _SECTION_RE.search(text)
    return (found.start(), found.end()) if found else None


#: ``error_at(offset, message)``: the ParseError for ``message`` at ``offset`` of the text.
ErrorAt = Callable[[int, str], ParseError]
#: ``span_at(offset)``: the span of a node that starts at ``offset`` of the text.
SpanAt = Callable[[int], Span]


def read_section(
    text: str,
    offset: int,
    error_at: ErrorAt,
    span_at: SpanAt,
    extra: Mapping[str, Sequence[_AnyT]] | None = None,
) -> dict[str, list[_AnyT]]:
    """The entries of the JSON object after ``#[metadata]`` (at ``offset``), by kind.

    ``extra`` entries (TVM's ``init_meta_table``) follow those of the text,
    so the text's references keep their indices.
    """
    decoder = json.JSONDecoder()
    start = offset
    while start < len(text) and text[start] in " \t\r\n":
        start += 1
    try:
        value, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise error_at(exc.pos, f"bad metadata section: {exc.msg}") from None
    rest = text[end:]
    if rest.strip():
        raise error_at(end + len(rest) - len(rest.lstrip()), "unexpected text after the metadata section")
    if not isinstance(value, dict):
        raise error_at(start, "the metadata section must be a JSON object")
    out: dict[str, list[_AnyT]] = {}
    for kind, entries in value.items():
        if kind != CONSTANT_KIND:
            raise error_at(
                text.find(json.dumps(kind), start),
                f"unknown metadata kind {kind!r}: relaypass metadata holds only "
                f"\"{CONSTANT_KIND}\" entries (base64 .npy), not TVM's JSON node graph",
            )
        if not isinstance(entries, list):
            raise error_at(start, f"metadata {kind!r} must be a list")
        constants = []
        search_from = start
        for index, entry in enumerate(entries):
            where = text.find(json.dumps(entry), search_from) if isinstance(entry, str) else -1
            if where >= 0:
                search_from = where
            try:
                if not isinstance(entry, str):
                    raise ValueError("not a string")
                raw = base64.b64decode(entry, validate=True)
                data = np.load(io.BytesIO(raw), allow_pickle=False)
            except (ValueError, binascii.Error, OSError, EOFError) as exc:
                raise error_at(
                    where if where >= 0 else start,
                    f"metadata {kind}[{index}] is not base64 of .npy bytes: {exc}",
                ) from None
            constants.append(Constant(data, span_at(where if where >= 0 else start)))
        out[kind] = constants
    return merge_tables(out, extra)


def merge_tables(
    table: dict[str, list[_AnyT]], extra: Mapping[str, Sequence[_AnyT]] | None
) -> dict[str, list[_AnyT]]:
    """``table`` with each kind's ``extra`` entries appended (TVM's ``init_meta_table``)."""
    if extra:
        for kind, entries in extra.items():
            table[kind] = [*table.get(kind, []), *entries]
    return table
