"""Reading and writing modules as text files (``relaypass.load`` / ``relaypass.save``).

The file format is the text format of :mod:`relaypass.ir.text.printer`, UTF-8
encoded; constants travel in its metadata section
(:mod:`relaypass.ir.text.metadata`) as ``.npy`` bytes, so a saved model never
contains a pickle.
"""

from __future__ import annotations

import os

from ...errors import RelayPassError
from ..module import IRModule
from .parser import parse
from .printer import astext

__all__ = ["ModelFileError", "load", "save"]


class ModelFileError(RelayPassError, OSError):
    """A model file could not be read or written (missing, unreadable, not UTF-8)."""


def load(path: str | os.PathLike[str]) -> IRModule:
    """Parse the module in the text file ``path``; parse errors name the file."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{name}: not UTF-8 text (byte {exc.start}): {exc.reason}") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {name}: {exc.strerror or exc}") from None
    return parse(text, source_name=name)


def save(mod: IRModule, path: str | os.PathLike[str]) -> None:
    """Write ``mod`` to ``path`` in the text format (with its metadata section)."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"save expects an IRModule, not {type(mod).__name__}")
    name = os.fspath(path)
    text = astext(mod, show_meta_data=True)
    if not text.endswith("\n"):
        text += "\n"  # a text file ends with a newline (the metadata section does not)
    try:
        with open(name, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    except OSError as exc:
        raise ModelFileError(f"cannot write {name}: {exc.strerror or exc}") from None
