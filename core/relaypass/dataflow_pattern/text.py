"""Patterns written as text: what a pattern prints as, read back.

``relaypass match 'nn.relu(nn.conv2d(*, const))' model.onnx`` and pattern
files need a pattern without running Python, so a pattern file is data, as
a pipeline file is.  The syntax is the printer's (:mod:`.printer`):

=========================  ==================================================
``nn.conv2d(*, const)``    a call of an operator; ``*`` any expression,
                           ``const`` any constant, ``%x`` a variable named
                           ``x`` (``%*`` any variable)
``f(...)``                 a call with any arguments
``(a | b)``, ``a | b``     either
``(a, b)``, ``(a,)``       a tuple; ``t.0`` (``t.*``) a field of one
``p.has_dtype("int8")``    also ``.has_shape([1, 3])``, ``.has_type(Tensor[(3), float32])``,
                           ``.has_attr({"axis": 1})`` (Python literals)
``dominates(p, q, c)``     a dominator pattern
``$1=p`` ... ``$1``        one pattern used twice (the same sub-pattern)
=========================  ==================================================

Errors are a :class:`PatternSyntaxError` with the column.  Nesting is
limited (:data:`MAX_DEPTH`), so hostile text cannot exhaust the stack.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from relaypass.errors import RelayPassError, UnknownOpError
from relaypass.ir.text.parser import parse_type

from .pattern import (
    CallPattern,
    DFPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)

__all__ = ["MAX_DEPTH", "PatternSyntaxError", "parse_pattern"]

MAX_DEPTH = 200
"""Deepest nesting a pattern text may have."""


class PatternSyntaxError(RelayPassError, ValueError):
    """A pattern text that is not a pattern; the message gives the column."""


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<label>\$\d+)
  | (?P<var>%(?:[A-Za-z_][\w.]*|\*))
  | (?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)
  | (?P<int>\d+)
  | (?P<punct>[()|,*=.])
""", re.VERBOSE)

_METHODS = {"has_dtype", "has_shape", "has_type", "has_attr"}


def parse_pattern(text: str) -> DFPattern:
    """The pattern ``text`` writes (the syntax of a pattern's printed form)."""
    return _Reader(text).read()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.labels: dict[str, DFPattern] = {}

    # --- tokens ----------------------------------------------------------------------
    def error(self, message: str, pos: int | None = None) -> PatternSyntaxError:
        at = self.pos if pos is None else pos
        return PatternSyntaxError(f"pattern, column {at + 1}: {message}")

    def peek(self) -> tuple[str, str, int]:
        """The next token's kind, text and position (kind ``end`` at the end)."""
        while True:
            if self.pos >= len(self.text):
                return "end", "", self.pos
            m = _TOKEN.match(self.text, self.pos)
            if m is None:
                raise self.error(f"unexpected character {self.text[self.pos]!r}")
            if m.lastgroup == "space":
                self.pos = m.end()
                continue
            return m.lastgroup or "", m.group(), self.pos

    def take(self) -> tuple[str, str, int]:
        kind, tok, at = self.peek()
        self.pos = at + len(tok)
        return kind, tok, at

    def expect(self, tok: str) -> None:
        _kind, got, at = self.take()
        if got != tok:
            raise self.error(f"expected {tok!r} but found {got or 'the end'!r}", at)

    # --- grammar ---------------------------------------------------------------------
    def read(self) -> DFPattern:
        pattern = self.alternatives()
        kind, tok, at = self.peek()
        if kind != "end":
            raise self.error(f"expected the end of the pattern but found {tok!r}", at)
        return pattern

    def alternatives(self) -> DFPattern:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"pattern nested more than {MAX_DEPTH} deep")
        pattern = self.postfix()
        while self.peek()[1] == "|":
            self.take()
            pattern = pattern | self.postfix()
        self.depth -= 1
        return pattern

    def postfix(self) -> DFPattern:
        pattern = self.primary()
        while True:
            tok = self.peek()[1]
            if tok == "(":
                self.take()
                if self._any_arguments():
                    pattern = CallPattern(pattern, None)
                else:
                    pattern = pattern(*self.arguments(")"))
            elif tok == ".":
                self.take()
                pattern = self.member(pattern)
            else:
                return pattern

    def _any_arguments(self) -> bool:
        """``f(...)``: a call with any arguments."""
        if self.text.startswith("...)", self.peek()[2]):
            self.pos = self.peek()[2] + 4
            return True
        return False

    def arguments(self, closing: str) -> list[DFPattern]:
        items: list[DFPattern] = []
        if self.peek()[1] == closing:
            self.take()
            return items
        while True:
            items.append(self.alternatives())
            _kind, tok, at = self.take()
            if tok == closing:
                return items
            if tok != ",":
                raise self.error(f"expected ',' or {closing!r} but found {tok or 'the end'!r}", at)
            if self.peek()[1] == closing:  # a trailing comma
                self.take()
                return items

    def member(self, pattern: DFPattern) -> DFPattern:
        kind, tok, at = self.take()
        if kind == "int":
            return is_tuple_get_item(pattern, int(tok))
        if tok == "*":
            return is_tuple_get_item(pattern)
        if tok not in _METHODS:
            raise self.error(f"expected a field index or one of {', '.join(sorted(_METHODS))}, "
                             f"found {tok or 'the end'!r}", at)
        self.expect("(")
        argument = self.balanced(")")
        if tok == "has_type":
            return has_type(self._type(argument, at), pattern)
        value = self.literal(argument, at)
        if tok == "has_dtype":
            if not isinstance(value, str):
                raise self.error("has_dtype takes a dtype name in quotes", at)
            return has_dtype(value, pattern)
        if tok == "has_shape":
            if not isinstance(value, (list, tuple)):
                raise self.error("has_shape takes a list of dimensions", at)
            return has_shape(list(value), pattern)
        if not isinstance(value, dict):
            raise self.error("has_attr takes a dict of attribute values", at)
        return has_attr(value, pattern)

    def balanced(self, closing: str) -> str:
        """The text up to the matching ``closing`` (quotes and brackets respected)."""
        depth = 0
        start = self.pos
        quote = ""
        for i in range(self.pos, len(self.text)):
            c = self.text[i]
            if quote:
                if c == quote and self.text[i - 1] != "\\":
                    quote = ""
            elif c in "'\"":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    if c != closing:
                        break
                    self.pos = i + 1
                    return self.text[start:i]
                depth -= 1
        raise self.error(f"no matching {closing!r}", start)

    def literal(self, source: str, at: int) -> Any:
        try:
            return ast.literal_eval(source.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise self.error(f"expected a Python literal, found {source.strip()[:40]!r}", at) \
                from None

    def _type(self, source: str, at: int) -> Any:
        try:
            return parse_type(source)
        except RelayPassError as err:
            raise self.error(f"has_type: {err}", at) from None

    def primary(self) -> DFPattern:
        kind, tok, at = self.take()
        if tok == "*":
            return wildcard()
        if kind == "var":
            return is_var("" if tok == "%*" else tok[1:])
        if kind == "label":
            if self.peek()[1] == "=":
                self.take()
                if tok in self.labels:
                    raise self.error(f"{tok} is defined twice", at)
                pattern = self.labels[tok] = self.postfix()
                return pattern
            if tok not in self.labels:
                raise self.error(f"{tok} is used before it is defined ({tok}=...)", at)
            return self.labels[tok]
        if tok == "(":
            items = []
            while True:
                items.append(self.alternatives())
                _k, sep, sat = self.take()
                if sep == ")":
                    break
                if sep != ",":
                    raise self.error(f"expected ',', '|' or ')' but found {sep or 'the end'!r}", sat)
                if self.peek()[1] == ")":
                    self.take()
                    return is_tuple(items)
            return items[0] if len(items) == 1 else is_tuple(items)
        if kind == "name":
            if tok == "const":
                return is_constant()
            if tok == "dominates" and self.peek()[1] == "(":
                self.take()
                parts = self.arguments(")")
                if len(parts) != 3:
                    raise self.error("dominates takes three patterns (parent, path, child)", at)
                return dominates(*parts)
            head, _dot, last = tok.rpartition(".")
            if head and last in _METHODS:
                # ``nn.relu.has_dtype(...)`` would read as one name: the method is not part of it.
                tok = head
                self.pos = at + len(head)
            try:
                return is_op(tok)
            except UnknownOpError as err:
                raise self.error(str(err), at) from None
        raise self.error(f"expected a pattern but found {tok or 'the end'!r}", at)

