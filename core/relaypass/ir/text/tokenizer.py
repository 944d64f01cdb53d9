"""The lexical level of Relay's text format: tokens, names, literals and strings.

What the printer may write and the parser reads, in one place: the version
line, how names and dtypes are spelled, the suffixes of scalar literals, the
escapes of string literals, and :func:`tokenize`, which splits a text into
tokens in one pass of a regular expression run by ``re.findall`` (in C).

Relay's tokenizer is the yardstick: names may hold ``/`` (``%base/x``), block
comments nest (``/* /* */ */``, here up to 16 deep), a run of minus signs
before a number is a sign (``--10`` is 10), infix operators are tokens of
their own (``*``, ``/``, ``+``, ``-``, ``<``, ``<=``, ``>``, ``>=``, ``==``,
``!=``).  Beyond Relay,
names may be dotted (``%conv1.weight``), literals take the suffixes of every
integer dtype (``7u8``), and strings take JSON's escapes as well as Relay's.
Unlike Relay, a dtype is one of :data:`DTYPES` (with lanes), not any bit width.
"""

from __future__ import annotations

import re
from itertools import accumulate
from operator import add, itemgetter

__all__ = [
    "BINARY_OPS", "DTYPES", "DTYPE_RE", "IDENT_RE", "LOCAL_NAME_RE", "RESERVED_TYPE_NAMES",
    "SIMPLE_SCALAR_DTYPES", "SIZE_RESERVED", "SUFFIX_DTYPE", "DTYPE_SUFFIX", "TEXT_VERSION", "NUMBER_RE",
    "escape_string", "line_starts", "string_is_closed", "tokenize", "unescape_string",
]

TEXT_VERSION = "0.0.5"
"""The version line every printed text starts with (Relay's current one)."""

# Literal suffixes, by dtype.  int32 and bool need none; Relay spells int16,
# int64, float16, float32 and float64 this way, the others are relaypass's.
DTYPE_SUFFIX = {
    "float32": "f", "float64": "f64", "float16": "f16",
    "int32": "", "int64": "i64", "int16": "i16", "int8": "i8",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "",
}
SUFFIX_DTYPE = {suffix: dtype for dtype, suffix in DTYPE_SUFFIX.items() if suffix}
SUFFIX_DTYPE.update({"f32": "float32", "i32": "int32", "i": "int32"})

SIMPLE_SCALAR_DTYPES = frozenset(
    {"int16", "int32", "int64", "float16", "float32", "float64", "bool"}
)
"""The dtypes whose scalars Relay writes as literals; every other constant is metadata."""

_SEGMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:/(?![/*])[A-Za-z0-9_]*)*"
_NAME = _SEGMENT + r"(?:\." + _SEGMENT + r")*"
IDENT_RE = re.compile(_NAME + r"\Z")
"""A name the tokenizer reads as one token: operators, attribute keys, globals."""
LOCAL_NAME_RE = IDENT_RE
"""The name of a local variable after ``%`` (the same shape)."""
DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "int4", "uint4", "uint1",
    "e4m3_float8", "e5m2_float8", "handle",
)
"""The element types a text may name (Relay's), each also with lanes: ``int8x4``."""
DTYPE_RE = re.compile(r"(?:" + "|".join(DTYPES) + r")(?:x[1-9][0-9]*)?\Z")

RESERVED_TYPE_NAMES = frozenset({"Tensor", "fn", "ref", "_", "type"})
"""Words a type variable must not be printed as: they mean something else in a type."""

SIZE_RESERVED = frozenset({"floordiv", "floormod"})
"""Words a size variable must not be printed as: in a shape they are TVM's divisions."""

BINARY_OPS = {
    "*": ("multiply", 12), "/": ("divide", 12),
    "+": ("add", 10), "-": ("subtract", 10),
    "<": ("less", 8), "<=": ("less_equal", 8), ">": ("greater", 8), ">=": ("greater_equal", 8),
    "==": ("equal", 7), "!=": ("not_equal", 7),
}
"""Relay's infix operators: the operator each one calls and its precedence (all left-associative)."""

NUMBER_RE = re.compile(
    r"(-*)([0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?|(inf|nan))([A-Za-z_][A-Za-z0-9_]*)?\Z"
)
"""A number token: leading minus signs, the digits (or inf/nan), the fraction, the
exponent, the word, the suffix."""


def _nested_comment(depth: int) -> str:
    """A block comment with comments nested up to ``depth`` levels inside it.

    Each level is an "unrolled loop" (``[^*/]*(?:(?:x|y)[^*/]*)*``), so that
    matching never backtracks more than linearly, even on a comment left open.
    """
    inner = r"/\*[^*/]*(?:(?:\*(?!/)|/(?!\*))[^*/]*)*\*/"
    for _ in range(depth):
        inner = r"/\*[^*/]*(?:(?:\*(?!/)|/(?!\*)|" + inner + r")[^*/]*)*\*/"
    return inner


_COMMENT = r"(?://[^\n]*|" + _nested_comment(15) + r")"

_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[A-Za-z0-9_]*"

# Group 1 skips blanks and comments, group 2 is the token.  Every character
# of the text is covered: a stray character is a token of its own that no
# rule accepts, and the empty match at the end is the end-of-input token.
#
# The scan is linear in the length of the text, whatever the text: no
# alternative fails after a long match only to be retried one character
# further on.  So a run of minus signs is one token (with the number, the
# ``inf`` or the ``>`` that may follow it); a string literal left open runs
# to the end of its line and a block comment left open (or nested more than
# 16 deep) to the end of the text, each one token that the parser rejects
# (see :func:`string_is_closed`).
_TOKEN_RE = re.compile(
    r"([ \t\r\n]*(?:" + _COMMENT + r"[ \t\r\n]*)*)("
    r"[(),;\[\]{}:.?#]|==?"
    r"|%(?:[0-9]+|" + _NAME + r")"
    r"|" + _NAME +
    r"|@" + _NAME +
    r"|" + _NUMBER +
    r"|-+(?:" + _NUMBER + r"|inf[A-Za-z0-9_]*|>)?"
    r'|"(?:[^"\\\n]|\\.)*(?:"|\\?)'
    r"|!=|<=|>=|/\*.*|[+*/<>]"
    r"|.|\Z)",
    re.S,
)

_first = itemgetter(0)
_second = itemgetter(1)
_plus_one = (1).__add__


def tokenize(text: str, end: int) -> tuple[list[str], list[int]]:
    """The tokens of ``text[:end]`` and the offset where each one ends.

    A token starts at its end minus its length.  The list ends with two
    end-of-input tokens (empty strings), so that looking one token ahead
    never overruns.
    """
    pairs = _TOKEN_RE.findall(text, 0, end)
    toks: list[str] = list(map(_second, pairs))
    ends: list[int] = list(accumulate(map(add, map(len, map(_first, pairs)), map(len, toks))))
    toks += ["", ""]
    ends += [end, end]
    return toks, ends


def string_is_closed(token: str) -> bool:
    """Whether a token that starts with ``"`` is a whole string literal, not one left open.

    A closed literal ends with a quote that no backslash escapes; the quote
    that ends a literal left open (if one does) is escaped.
    """
    if len(token) < 2 or token[-1] != '"':
        return False
    body = token[1:-1]
    return (len(body) - len(body.rstrip("\\"))) % 2 == 0


def line_starts(text: str) -> list[int]:
    """The offset where each line starts (a sentinel past the end closes the list)."""
    return [0, *accumulate(map(_plus_one, map(len, text.split("\n"))))]


# --- string literals ------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\r": "\\r", "\n": "\\n"}
_PLAIN = re.compile(r'[ -~]*\Z')


def escape_string(value: str) -> str:
    """``value`` as a quoted string literal, escaped as Relay escapes it.

    Printable ASCII stands for itself (but ``"`` and ``\\``); tab, carriage
    return and newline are ``\\t``, ``\\r``, ``\\n``; any other byte of the
    UTF-8 encoding is ``\\xNN``.
    """
    if _PLAIN.match(value) and '"' not in value and "\\" not in value:
        return '"' + value + '"'
    out = []
    for byte in value.encode("utf-8"):
        c = chr(byte)
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 32 <= byte <= 126:
            out.append(c)
        else:
            out.append(f"\\x{byte:02X}")
    return '"' + "".join(out) + '"'


_UNESCAPE = {'"': 0x22, "\\": 0x5C, "/": 0x2F, "b": 0x08, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09}


def unescape_string(token: str) -> str:
    """The value of a string literal token (quotes included).

    Reads Relay's escapes (``\\xNN`` bytes of UTF-8) and JSON's
    (``\\uXXXX``).  Raises ValueError with what is wrong.
    """
    body = token[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("Invalid \\escape at the end of the string")
        e = body[i + 1]
        if e in _UNESCAPE:
            out.append(_UNESCAPE[e])
            i += 2
        elif e == "x" and re.match(r"[0-9A-Fa-f]{2}", body[i + 2:i + 4]):
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e == "u" and re.match(r"[0-9A-Fa-f]{4}", body[i + 2:i + 6]):
            code = int(body[i + 2:i + 6], 16)
            i += 6
            if 0xD800 <= code < 0xDC00 and body[i:i + 2] == "\\u" and re.match(
                r"[dD][c-fC-F][0-9A-Fa-f]{2}", body[i + 2:i + 6]
            ):
                low = int(body[i + 2:i + 6], 16)
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            out += chr(code).encode("utf-8", "surrogatepass")
        else:
            raise ValueError(f"Invalid \\escape {body[i:i + 2]!r}")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the escaped bytes are not UTF-8: {exc.reason}") from None
