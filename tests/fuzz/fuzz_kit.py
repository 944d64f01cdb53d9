"""What the fuzz tests share: how much to run, mutations of TOML text, and a guard against hangs.

``RELAYPASS_FUZZ_LONG=1`` runs many more examples (for a hunt, not for CI).
Examples are derandomized like the rest of the suite (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LONG = os.environ.get("RELAYPASS_FUZZ_LONG") == "1"


def examples(ci: int) -> int:
    """How many examples a fuzz test runs: ``ci`` normally, fifty times more when long."""
    return ci * 50 if LONG else ci


# Pieces that TOML, the pipeline format or the path rules give a meaning to.
TOKENS = [
    "[", "]", "{", "}", "[[", "]]", "=", ",", ".", '"', "'", '"""', "\n", "#", " ", "\\",
    "\\u007f", "\x7f", "\x00", "\x01", "é", "\U0001f600",
    "1e400", "9" * 40, "-0", "inf", "nan", "true", "1979-05-27",
    "name", "passes", "options", "config", "instruments", "overrides", "opt_level",
    "required_pass", "disabled_pass", "dir", "file", "clean", "kind", "factory", "type",
    "default", "role", "format", "[[pass]]", "[[instrument]]", "[[pass.option]]",
    "relaypass_std:", "relaypass:", "DumpIR", "PrintAfterAll", "InferType", "FoldConstant",
    "../", "..", "/", "/tmp/abs", "link", "stdout", "stderr", "path", "output",
]

# Values a mutation may put anywhere in a parsed document (then written back as TOML).
PATHS = st.sampled_from(["dumps", "a/b", "../escape", "sub/../../escape", "/tmp/abs", "link",
                         "link/inner", "stdout", "stderr", ".", "", "x\x7f"])
SCALARS = st.one_of(
    st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**320),
    st.floats(allow_nan=True), st.text(max_size=8), PATHS,
    st.sampled_from(["InferType", "DumpIR", "PrintAfterAll", "relaypass_std:FoldConstant",
                     "nobody:Thing", "function", "module", "int", "path", "output", "list[str]"]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)


@st.composite
def mutated_bytes(draw: Any, seeds: list[str]) -> bytes:
    """A seed's bytes after a few insertions, deletions, duplications and raw-byte changes."""
    data = bytearray(draw(st.sampled_from(seeds)).encode("utf-8"))
    for _ in range(draw(st.integers(1, 5))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(("token", "token", "delete", "duplicate", "byte")))
        if op == "token":
            data[pos:pos] = draw(st.sampled_from(TOKENS)).encode("utf-8")
        elif op == "delete":
            data[pos:pos + draw(st.integers(1, 20))] = b""
        elif op == "duplicate":
            end = min(len(data), pos + draw(st.integers(1, 60)))
            data[pos:pos] = data[pos:end]
        else:
            data[pos:pos] = bytes([draw(st.integers(0, 255))])
    return bytes(data)


def _slots(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The paths of every value in a parsed document (keys of tables, indices of arrays)."""
    stack = [(doc, path)]
    while stack:
        node, at = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) \
            if isinstance(node, list) else ()
        for key, value in items:
            yield (*at, key)
            stack.append((value, (*at, key)))


@st.composite
def mutated_document(draw: Any, seeds: list[str]) -> str:
    """A seed parsed, with a few values replaced, added or removed, written back as TOML."""
    import tomli_w

    doc = tomllib.loads(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        slots = list(_slots(doc))
        if not slots:
            break
        path = draw(st.sampled_from(slots))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(("replace", "replace", "remove", "add")))
        if op == "remove":
            del parent[path[-1]]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(TOKENS[20:]))] = draw(VALUES)
        else:
            parent[path[-1]] = draw(VALUES)
    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError):  # a value TOML cannot hold (a mixed-type key): keep the seed
        return draw(st.sampled_from(seeds))


class Hang(Exception):
    """An example ran past its time limit."""


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fail with :class:`Hang` when the block runs more than ``seconds`` (POSIX main thread)."""
    if not hasattr(signal, "SIGALRM"):  # pragma: no cover - Windows
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"an example ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def snapshot(folder: str) -> dict[str, bytes | None]:
    """Every file (with its bytes) and folder below ``folder``, symbolic links not followed."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), folder)] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, folder)
            if os.path.islink(path):
                out[rel] = os.readlink(path).encode()
            else:
                with open(path, "rb") as fh:
                    out[rel] = fh.read()
    return out
