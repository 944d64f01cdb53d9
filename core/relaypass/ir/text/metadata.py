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
    "CONSTANT_KIND", "MetaTable", "NPY_DTYPES", "find_section", "merge_tables", "npy_base64",
    "read_npy", "read_section",
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

    The section has one shape, ``{"relay.Constant": ["<base64>", ...]}``, and
    is read as that shape in one loop: a JSON decoder would recurse into
    whatever nesting a text holds (a RecursionError, not a ParseError), and
    reading it ourselves tells where each entry starts.  ``extra`` entries
    (TVM's ``init_meta_table``) follow those of the text, so the text's
    references keep their indices.
    """
    reader = _SectionReader(text, offset, error_at)
    # First the JSON, then the entries' bytes: a syntax error is reported before them.
    found: dict[str, list[tuple[int, str]]] = {}
    reader.expect("{", "the metadata section must be a JSON object")
    while not reader.take("}"):
        if found:
            reader.expect(",", "bad metadata section: expecting ',' or '}'")
        key_at = reader.skip_blanks()
        kind = reader.string("bad metadata section: expecting a kind such as \"relay.Constant\"")
        if kind != CONSTANT_KIND:
            raise error_at(
                key_at,
                f"unknown metadata kind {kind[:40]!r}: relaypass metadata holds only "
                f"\"{CONSTANT_KIND}\" entries (base64 .npy), not TVM's JSON node graph",
            )
        if kind in found:
            raise error_at(key_at, f"metadata kind {kind!r} appears twice")
        reader.expect(":", "bad metadata section: expecting ':'")
        reader.expect("[", f"metadata {kind!r} must be a list")
        entries = found[kind] = []
        while not reader.take("]"):
            if entries:
                reader.expect(",", "bad metadata section: expecting ',' or ']'")
            where = reader.skip_blanks()
            entries.append((where, reader.string(
                f"bad metadata section: expecting a string (base64 of .npy bytes) for "
                f"{kind}[{len(entries)}]"
            )))
    end = reader.skip_blanks()
    if end < len(text):
        raise error_at(end, "unexpected text after the metadata section")
    out: dict[str, list[_AnyT]] = {}
    for kind, entries in found.items():
        constants = out[kind] = []
        for index, (where, entry) in enumerate(entries):
            try:
                data = read_npy(base64.b64decode(entry, validate=True))
            except (ValueError, binascii.Error) as exc:
                raise error_at(
                    where, f"metadata {kind}[{index}] is not base64 of .npy bytes: {exc}"
                ) from None
            constants.append(Constant(data, span_at(where)))
    return merge_tables(out, extra)


class _SectionReader:
    """A cursor over the JSON text of the metadata section."""

    __slots__ = ("text", "pos", "error_at", "decoder")

    def __init__(self, text: str, pos: int, error_at: ErrorAt) -> None:
        self.text = text
        self.pos = pos
        self.error_at = error_at
        self.decoder = json.JSONDecoder()

    def skip_blanks(self) -> int:
        """Move past JSON whitespace; the new position."""
        self.pos = _BLANKS.match(self.text, self.pos).end()
        return self.pos

    def take(self, char: str) -> bool:
        """Move past ``char`` if it comes next (after blanks)."""
        if self.text.startswith(char, self.skip_blanks()):
            self.pos += 1
            return True
        return False

    def expect(self, char: str, message: str) -> None:
        if not self.take(char):
            raise self._error(message)

    def string(self, message: str) -> str:
        """The JSON string that comes next (after blanks); ``message`` when something else does."""
        pos = self.skip_blanks()
        if not self.text.startswith('"', pos):
            raise self._error(message)
        try:
            value, self.pos = self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise self.error_at(exc.pos, f"bad metadata section: {exc.msg}") from None
        return value

    def _error(self, message: str) -> ParseError:
        pos = self.pos
        if pos >= len(self.text):
            return self.error_at(pos, f"{message} but the text ends")
        return self.error_at(pos, f"{message} but found {self.text[pos]!r}")


_BLANKS = re.compile(r"[ \t\r\n]*")

NPY_DTYPES = frozenset({
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
})
"""The dtypes a constant of the metadata section may have: those of the IR that numpy holds."""

_NPY_MAGIC = b"\x93NUMPY"
_NPY_HEADER_LENGTH = {1: 2, 2: 4, 3: 4}  # bytes of the header length, by format version
_NPY_MAX_HEADER = 10_000  # numpy's own limit for reading a header safely
# What np.save writes for an array of one plain dtype (keys in this order, any spacing).
_NPY_HEADER_RE = re.compile(
    r"\{\s*'descr'\s*:\s*'([^']*)'\s*,\s*'fortran_order'\s*:\s*(True|False)\s*,"
    r"\s*'shape'\s*:\s*\(\s*((?:[0-9]+\s*,\s*)*(?:[0-9]+\s*)?)\)\s*,?\s*\}\s*\Z"
)
_NPY_DESCR_RE = re.compile(r"[<>|=][biuf][0-9]{1,2}\Z")


def read_npy(raw: bytes) -> np.ndarray:
    """The array of the ``.npy`` bytes ``raw``, in native byte order.

    Only a plain ``.npy`` of a dtype in :data:`NPY_DTYPES` (either byte
    order) is read: no ``.npz`` archive, no structured, string, complex or
    object array, never a pickle.  The header is checked against the data
    before anything is allocated, so a header that declares a huge array
    costs nothing.  Raises ValueError saying what is wrong.
    """
    if raw[:2] == b"PK":
        raise ValueError("a .npz archive (zip); a constant is the bytes of one .npy file")
    if raw[:6] != _NPY_MAGIC or len(raw) < 8:
        raise ValueError("the bytes do not start with the .npy magic string")
    version = raw[6]
    size_bytes = _NPY_HEADER_LENGTH.get(version)
    if size_bytes is None:
        raise ValueError(f".npy format version {version}.{raw[7]} is not one numpy writes")
    start = 8 + size_bytes
    length = int.from_bytes(raw[8:start], "little")
    if len(raw) < start or length > _NPY_MAX_HEADER or start + length > len(raw):
        raise ValueError("the .npy header is cut short or longer than 10,000 bytes")
    header = raw[start:start + length].decode("latin-1")
    m = _NPY_HEADER_RE.match(header)
    if m is None:
        raise ValueError(f"the .npy header is not that of a plain array: {header.strip()[:80]!r}")
    descr, fortran, dims = m.groups()
    if not _NPY_DESCR_RE.match(descr):
        raise ValueError(f"dtype {descr[:20]!r} is not one the IR supports ({', '.join(sorted(NPY_DTYPES))})")
    try:
        dtype = np.dtype(descr)
    except TypeError:
        raise ValueError(f"dtype {descr!r} is not one numpy knows") from None
    if dtype.name not in NPY_DTYPES:
        raise ValueError(f"dtype {dtype.name} is not one the IR supports ({', '.join(sorted(NPY_DTYPES))})")
    digits = [d.strip() for d in dims.split(",") if d.strip()]
    if any(len(d.lstrip("0")) > 19 for d in digits):
        raise ValueError("a dimension of the array is out of range (int64)")
    shape = tuple(int(d) for d in digits)
    count = 1
    for d in shape:
        count *= d
    data_start = start + length
    if count * dtype.itemsize != len(raw) - data_start:
        raise ValueError(
            f"the header declares {count} element(s) of {dtype.name} ({count * dtype.itemsize} "
            f"bytes) but {len(raw) - data_start} bytes of data follow"
        )
    flat = np.frombuffer(raw, dtype=dtype, count=count, offset=data_start)
    if dtype.kind == "b":
        flat = flat.view(np.uint8) != 0  # a bool byte other than 0 and 1 is True
    array = flat.reshape(shape[::-1]).T if fortran == "True" else flat.reshape(shape)
    return np.ascontiguousarray(array, dtype=dtype.newbyteorder("="))


def merge_tables(
    table: dict[str, list[_AnyT]], extra: Mapping[str, Sequence[_AnyT]] | None
) -> dict[str, list[_AnyT]]:
    """``table`` with each kind's ``extra`` entries appended (TVM's ``init_meta_table``)."""
    if extra:
        for kind, entries in extra.items():
            table[kind] = [*table.get(kind, []), *entries]
    return table
