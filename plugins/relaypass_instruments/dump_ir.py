"""Dump the module's text to a folder, one numbered file per pass.

The files are meant to be read in order (``ls``), diffed pairwise, or parsed
back with ``relaypass.parse`` to replay a pipeline from any point, so each
holds nothing but the module text (with its metadata section unless
``show_meta=False``, which ``relaypass run --dump-dir`` gives by default):

- ``000_input.relay``: the module as the first pass of a PassContext got it;
- ``001_InferType.relay``, ``002_FoldConstant.relay``, ...: the module after
  each pass, numbered in the order the passes finished.

Which passes get a file: with ``passes`` given, every run of a pass so named
(a Sequential too, if named).  Without it (or with an empty list), every pass except a container
that has nothing of its own to show: a pass inside which other passes ran
(a Sequential) and whose result is the same module, function for function,
as after the last pass inside it.  Its last member's file already holds it.

Numbering continues across PassContexts that use the same instrument (each
context's input gets the next number), so nothing is overwritten.  Files
named like dumps (``NNN_*.relay``) left in the folder by an earlier run are
removed before the first file is written, unless ``clean=False``.
"""

from __future__ import annotations

import os
import re

from relaypass.transform.instrument import PassInstrument

from .options import InstrumentOptionError, flag, pass_names
from .text import module_text, show_meta_flag

_DUMP_FILE = re.compile(r"^\d{3,}_.*\.relay$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 80


def dump_file_name(number: int, pass_name: str) -> str:
    """The file name for the ``number``-th dump, made safe on every filesystem."""
    safe = _UNSAFE.sub("_", pass_name).strip("._")[:_MAX_NAME] or "pass"
    return f"{number:03d}_{safe}.relay"


class DumpIR(PassInstrument):
    """Write the module text after each pass into ``dir``, one numbered file per pass.

    ``passes``: only after these passes (None or empty: every pass, see the
    module documentation for Sequentials).  ``clean``: remove dumps of an earlier run
    first.  ``show_meta`` (the manifest's default: true): write the metadata
    section, so each file parses back; without it the files are the readable
    text of :mod:`.text`, a fraction of the size for a model with weights.  The folder is created when the first file is written.  The options'
    defaults are the manifest's (the registry gives every declared option).
    """

    def __init__(self, *, dir: object, passes: object, clean: bool,
                 show_meta: object) -> None:
        if isinstance(dir, os.PathLike):
            dir = os.fspath(dir)
        if not isinstance(dir, str) or not dir:
            raise InstrumentOptionError(f"DumpIR: option 'dir' must be a folder path, not {dir!r}")
        if os.path.exists(dir) and not os.path.isdir(dir):
            raise InstrumentOptionError(f"DumpIR: option 'dir' names a file, not a folder: {dir}")
        self._dir = dir
        # An empty list means "every pass" too: a manifest option cannot default to None.
        names = frozenset() if passes is None else pass_names("DumpIR", "passes", passes)
        self._only = names or None
        self._clean = flag("DumpIR", "clean", clean)
        self._show_meta = show_meta_flag("DumpIR", show_meta)
        self._next = 0
        self._started = False
        # One entry per running pass: whether another pass ran inside it.
        self._nested: list[bool] = []
        # The functions and attrs of the module at the latest after-event.
        self._last_after: tuple[dict, object] | None = None

    @property
    def dir(self) -> str:
        return self._dir

    def enter_pass_ctx(self) -> None:
        self._nested = []
        self._last_after = None

    def exit_pass_ctx(self) -> None:
        self._nested = []
        self._last_after = None

    def run_before_pass(self, mod: object, info: object) -> None:
        nested = self._nested
        if nested:
            nested[-1] = True
        elif self._last_after is None:
            self._write("input", mod)
        nested.append(False)

    def run_after_pass(self, mod: object, info: object) -> None:
        ran_passes_inside = self._nested.pop() if self._nested else False
        name = info.name  # type: ignore[attr-defined]
        previous = self._last_after
        current = (mod.functions, mod.attrs)  # type: ignore[attr-defined]
        self._last_after = current
        if self._only is not None:
            if name in self._only:
                self._write(name, mod)
        elif not (ran_passes_inside and previous is not None and _same(previous, current)):
            self._write(name, mod)

    def _write(self, name: str, mod: object) -> None:
        if not self._started:
            os.makedirs(self._dir, exist_ok=True)
            if self._clean:
                for entry in os.listdir(self._dir):
                    if _DUMP_FILE.match(entry):
                        os.remove(os.path.join(self._dir, entry))
            self._started = True
        path = os.path.join(self._dir, dump_file_name(self._next, name))
        self._next += 1
        text = module_text(mod, self._show_meta)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")


def _same(a: tuple[dict, object], b: tuple[dict, object]) -> bool:
    fa, fb = a[0], b[0]
    return a[1] is b[1] and len(fa) == len(fb) and all(fa.get(gv) is f for gv, f in fb.items())
