"""Inline pipelines: a pipeline written on one line, as ``mlir-opt -p`` and ``opt -passes`` take it.

::

    InferType,FoldConstant,FuseOps{fuse_opt_level=2}
    InferType,cleanup{opt_level=1}(DeadCodeElimination,FoldConstant),FuseOps

The grammar (docs/pipeline-files.md, "Inline pipelines")::

    pipeline := entry (',' entry)*
    entry    := NAME options? members?
    options  := '{' (KEY '=' VALUE ((',' | ' ') KEY '=' VALUE)*)? '}'
    members  := '(' pipeline? ')'

An entry with members is a nested sequence named NAME (its options are a
sequence's keys, ``opt_level`` and ``required``); any other entry is a pass,
its options the pass's.  NAME is a pass name, qualified or not
(``relaypass_std:FoldConstant``); VALUE is a TOML value (``2``, ``true``,
``"text"``, ``["A", "B"]``), or a bare word taken as a string
(``pattern_table=dnnl``).  Spaces may surround every token.

Reading one gives the tables a pipeline file's TOML would hold, and
:func:`~relaypass.transform.pipeline.pipeline_from_data` validates them, so an
inline pipeline accepts exactly what a file accepts.  Errors are
:class:`~relaypass.transform.pipeline.PipelineError`\\ s whose key path is the
column (1-based) of the name, option or character at fault.  The same option
syntax, without braces, reads an instrument given on the command line
(``PrintAfter:passes=["FuseOps"],file=stderr``; :func:`parse_instrument`).
Nothing here recurses: nesting is followed with an explicit stack, and a
pipeline nested deeper than files allow gets the file's error as soon as the
reader meets the sequence too many.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .config import shown
from .pipeline import MAX_NESTING, PipelineError, PipelineSpec, pipeline_from_data

__all__ = ["INLINE_NAME", "parse_inline_pipeline", "parse_instrument"]

#: The name of an inline pipeline's outer sequence (what instruments and ``explain`` show).
INLINE_NAME = "inline"

_NAME = re.compile(r"[A-Za-z0-9_.:-]+")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.:/+-]*")
_SPACE = " \t\r\n"
# Keys a sequence's syntax sets: NAME(...) gives its name and passes.
_SEQUENCE_SYNTAX = ("name", "passes")


class _Text:
    """A cursor over the text, failing with the column (1-based) of where it is."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0

    def fail(self, problem: str, pos: int | None = None) -> PipelineError:
        return PipelineError(self.source, f"column {(self.pos if pos is None else pos) + 1}",
                             problem)

    def skip_space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _SPACE:
            pos += 1
        self.pos = pos

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def found(self) -> str:
        c = self.peek()
        return f"found {c!r}" if c else "found the end"

    def match(self, pattern: re.Pattern[str]) -> str | None:
        m = pattern.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def options(self, stop: str, what: str) -> tuple[dict[str, Any], dict[str, int]]:
        """``KEY=VALUE`` pairs up to ``stop`` ("}" or the end): the values and each key's position."""
        values: dict[str, Any] = {}
        where: dict[str, int] = {}
        while True:
            self.skip_space()
            c = self.peek()
            if not c:
                if stop:
                    raise self.fail(f"the options of {what} are not closed with '{stop}'")
                return values, where
            if c == stop:
                return values, where
            start = self.pos
            key = self.match(_KEY)
            if key is None:
                raise self.fail(f"expected an option name of {what}, {self.found()}")
            if key in values:
                raise self.fail(f"option {key!r} of {what} is given twice", start)
            self.skip_space()
            if self.peek() != "=":
                raise self.fail(f"expected '=' after option {key!r} of {what}, {self.found()}")
            self.pos += 1
            self.skip_space()
            values[key] = self.value(key)
            where[key] = start
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1

    def value(self, key: str) -> Any:
        """A TOML value (or a bare word, as a string) at the cursor."""
        start = self.pos
        end = self.value_end()
        raw = self.text[start:end]
        if not raw:
            raise self.fail(f"option {key!r} has no value after '='")
        self.pos = end
        try:
            return tomllib.loads(f"v = {raw}")["v"]
        except RecursionError:
            raise self.fail(f"the value of option {key!r} is nested too deeply to read",
                            start) from None
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            if _BARE_WORD.fullmatch(raw):
                return raw
            raise self.fail(f"the value of option {key!r} is not a TOML value ({shown(raw)}: "
                            f"{str(exc).split(' (at ')[0]})", start) from None

    def value_end(self) -> int:
        """Where the value starting at the cursor ends: a string, brackets, or a bare run."""
        text, pos = self.text, self.pos
        depth = 0
        while pos < len(text):
            c = text[pos]
            if c in "\"'":
                pos = self.string_end(pos)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                if depth == 0:
                    return pos
                depth -= 1
                if depth == 0:
                    return pos + 1
            elif depth == 0 and (c in _SPACE or c in ",()"):
                return pos
            pos += 1
        if depth:
            raise self.fail("a value's brackets are not closed", self.pos)
        return pos

    def string_end(self, pos: int) -> int:
        text, quote = self.text, self.text[pos]
        i = pos + 1
        while i < len(text):
            c = text[i]
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                return i + 1
            i += 1
        raise self.fail(f"a string is not closed with {quote}", pos)


def _read(text: str, source: str) -> tuple[list[Any], dict[str, int]]:
    """The ``passes`` list a file would hold, and the column of each key path in it."""
    cur = _Text(text, source)
    where: dict[str, int] = {}
    root: list[Any] = []
    # The lists being filled: (list, its key path, position of its '(').
    stack: list[tuple[list[Any], str, int]] = [(root, "passes", -1)]
    cur.skip_space()
    if not cur.peek():
        raise cur.fail("the pipeline is empty: name its passes, comma-separated (-p 'PassA,PassB{key=value}')")
    expect_entry = True
    while True:
        cur.skip_space()
        members, list_path, _ = stack[-1]
        if expect_entry:
            start = cur.pos
            name = cur.match(_NAME)
            if name is None:
                raise cur.fail(f"expected a pass name, {cur.found()}")
            path = f"{list_path}[{len(members)}]"
            where[path] = where[f"{path}.name"] = start
            cur.skip_space()
            options: dict[str, Any] = {}
            keys: dict[str, int] = {}
            brace = cur.pos
            braces = cur.peek() == "{"
            if braces:
                cur.pos += 1
                options, keys = cur.options("}", repr(name))
                cur.pos += 1
                cur.skip_space()
            if cur.peek() == "(":
                if len(stack) > MAX_NESTING:  # a file's limit, checked before key paths grow
                    raise cur.fail(f"sequences nest more than {MAX_NESTING} deep", start)
                for key in _SEQUENCE_SYNTAX:
                    if key in options:
                        raise cur.fail(f"a sequence's {key} is set by NAME(...), not as an option",
                                       keys[key])
                entry: dict[str, Any] = {"name": name, **options, "passes": []}
                members.append(entry)
                where.update({f"{path}.{k}": p for k, p in keys.items()})
                stack.append((entry["passes"], f"{path}.passes", cur.pos))
                cur.pos += 1
                cur.skip_space()
                if cur.peek() == ")":
                    expect_entry = False
                continue
            if braces:
                members.append({"name": name, "options": options})
                where[f"{path}.options"] = brace
                where.update({f"{path}.options.{k}": p for k, p in keys.items()})
            else:
                members.append(name)
            expect_entry = False
            continue
        c = cur.peek()
        if c == ",":
            cur.pos += 1
            expect_entry = True
        elif c == ")":
            if len(stack) == 1:
                raise cur.fail("')' closes no '('")
            stack.pop()
            cur.pos += 1
        elif not c:
            if len(stack) > 1:
                raise cur.fail("'(' is not closed with ')'", stack[-1][2])
            return root, where
        else:
            raise cur.fail(f"expected ',', ')' or the end after a pass, {cur.found()}")


def _column_of(key_path: str, where: dict[str, int]) -> int | None:
    """The position of the longest key path in ``where`` that ``key_path`` starts with."""
    best, found = -1, None
    for path, pos in where.items():
        if len(path) > best and (key_path == path or key_path.startswith((path + ".", path + "["))):
            best, found = len(path), pos
    return found


def parse_inline_pipeline(text: str, source: str = "-p",
                          out_dir: str | os.PathLike[str] | None = None,
                          name: str = INLINE_NAME) -> PipelineSpec:
    """Validate the inline pipeline ``text`` (``source`` names it in errors): a PipelineSpec.

    The pipeline has the defaults of a file that lists only its passes
    (opt_level 2, no config, no instruments); ``out_dir`` is the folder it
    may write in (:func:`~relaypass.transform.pipeline.parse_pipeline`).
    """
    passes, where = _read(text, source)
    try:
        return pipeline_from_data({"name": name, "passes": passes}, source, out_dir)
    except PipelineError as exc:
        pos = _column_of(exc.key_path, where)
        if pos is None:
            raise
        raise PipelineError(source, f"column {pos + 1}", exc.problem) from None


def parse_instrument(text: str, source: str = "--instrument") -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:KEY=VALUE,...``: an instrument's name and options, unchecked.

    NAME may be qualified (``dist:Name``): the options start at the first
    ``:`` followed by ``KEY=``.  Values are read as in an inline pipeline.
    """
    cur = _Text(text, source)
    name_end = len(text)
    for m in re.finditer(":", text):
        if re.match(r"\s*[A-Za-z_][A-Za-z0-9_-]*\s*=", text[m.end():]):
            name_end = m.start()
            break
    name = text[:name_end].strip()
    if not name or not _NAME.fullmatch(name):
        raise cur.fail(f"expected an instrument name (NAME or NAME:option=value,...), not "
                       f"{shown(text[:name_end])}", 0)
    if name_end == len(text):
        return name, {}
    cur.pos = name_end + 1
    options, _ = cur.options("", repr(name))
    return name, options
