"""Checking the options users give the standard instruments, and where they write.

Options often come from a pipeline TOML file rather than from Python, so a
wrong value must fail when the instrument is built, with a message naming the
instrument and the option, and not as an obscure error in the middle of a
pipeline.  For the same reason an output is named by something a TOML file
can hold: ``"stdout"``, ``"stderr"`` or a file path; Python callers may also
pass an open text stream.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO

from relaypass.errors import RelayPassError


class InstrumentOptionError(RelayPassError, ValueError):
    """An instrument was given an option value it cannot use."""


def pass_names(instrument: str, option: str, value: object) -> frozenset[str]:
    """The set of pass names in ``value``: a list of names, or one name on its own.

    A lone string is taken as one name (not as a sequence of one-letter names).
    """
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable):
        raise InstrumentOptionError(
            f"{instrument}: option {option!r} must be a list of pass names, "
            f"not {type(value).__name__}"
        )
    names = list(value)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise InstrumentOptionError(
            f"{instrument}: option {option!r} must hold non-empty pass names (strings), "
            f"got {bad[0]!r}"
        )
    return frozenset(names)


def flag(instrument: str, option: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InstrumentOptionError(
            f"{instrument}: option {option!r} must be true or false, not {value!r}"
        )
    return value


def count(instrument: str, option: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InstrumentOptionError(
            f"{instrument}: option {option!r} must be a non-negative integer, not {value!r}"
        )
    return value


class Output:
    """Where an instrument writes its text.

    ``None`` and ``"stdout"`` mean the interpreter's current ``sys.stdout``,
    looked up at each write (so redirections made after the instrument was
    built, such as pytest's capture, are honoured); ``"stderr"`` likewise; any
    other string or path-like is a file that each write appends to; anything
    with a ``write`` method is used as is.
    """

    __slots__ = ("_target",)

    def __init__(self, instrument: str, target: object = None) -> None:
        if target is None:
            target = "stdout"
        if isinstance(target, os.PathLike):
            target = os.fspath(target)
        if isinstance(target, str):
            if not target:
                raise InstrumentOptionError(f"{instrument}: option 'file' must not be empty")
        elif not callable(getattr(target, "write", None)):
            raise InstrumentOptionError(
                f"{instrument}: option 'file' must be \"stdout\", \"stderr\", a file path "
                f"or a text stream, not {type(target).__name__}"
            )
        self._target = target

    def write(self, text: str) -> None:
        target = self._target
        if target == "stdout":
            stream: IO[str] = sys.stdout
        elif target == "stderr":
            stream = sys.stderr
        elif isinstance(target, str):
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(text)
            return
        else:
            stream = target  # type: ignore[assignment]
        stream.write(text)
        flush = getattr(stream, "flush", None)
        if flush is not None:
            flush()
