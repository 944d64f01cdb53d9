"""Who an exception raised during a run is to be blamed on, and the traceback that shows it.

When a pipeline crashes, the first question is whose bug it is: relaypass's,
a plugin's, or the user's own code.  :func:`blame` answers from the
exception's traceback: the innermost pass (a module or function pass, not a
Sequential) or instrument hook (``run_before_pass``, ...) whose frame the
exception went through is the culprit, and the registry says which
declaration, hence which distribution and version, it was built from.  A
plugin's metadata may name its bug tracker (:func:`~relaypass.plugins.discovery.bug_tracker`),
so a crash in a third-party pass is reported to the people who can fix it.

:func:`format_traceback` is the traceback the command line shows for a bug:
the frames of relaypass's own machinery (the pass manager, the plugin
registry, the command line) between the command and the culprit's code are
left out, as they are the same for every crash and bury the frames that
differ; the innermost frames are always kept, so a bug in the machinery
itself still shows where it was raised.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from ..entry_points import STANDARD_DISTRIBUTION
from ..transform.instrument import PassInstrument
from ..transform.passes import Pass, Sequential, add_note

__all__ = ["Blame", "blame", "bug_report", "format_traceback", "name_instrument"]

#: The hooks through which the pass manager calls an instrument.
_HOOKS = frozenset({"enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass",
                    "run_after_pass"})

#: How the note naming an instrument begins (the pass manager's notes name passes alike).
_NOTE = "relaypass: raised in instrument "


@dataclass(frozen=True)
class Blame:
    """The pass or instrument an exception came from.

    ``kind`` is "pass" or "instrument"; ``distribution`` and ``version`` are
    those of the installed distribution declaring it ("" for code of this
    process that no plugin declares: then ``module`` says where it is
    defined); ``bug_tracker`` is where that distribution's metadata says bugs
    are reported ("" when it says nothing).
    """

    kind: str
    name: str
    distribution: str = ""
    version: str = ""
    bug_tracker: str = ""
    module: str = ""

    @property
    def origin(self) -> str:
        """``dist version``, or where in-process code is defined."""
        if self.distribution:
            return f"{self.distribution} {self.version}".strip()
        return f"code defined in {self.module}" if self.module else "code of this process"


def blame(exc: BaseException) -> Blame | None:
    """The pass or instrument whose code ``exc`` was raised in (None: neither, e.g. reading a file)."""
    owner: Any = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code.co_name
        if code == "_transform" or code in _HOOKS:
            obj = frame.f_locals.get("self")
            if code == "_transform" and isinstance(obj, Pass) and not isinstance(obj, Sequential):
                owner = obj
            elif code in _HOOKS and isinstance(obj, PassInstrument):
                owner = obj
        tb = tb.tb_next
    return None if owner is None else _describe(owner)


def _describe(owner: Any) -> Blame:
    from ..plugins.discovery import bug_tracker
    from ..transform.registry import get_registry

    kind = "instrument" if isinstance(owner, PassInstrument) else "pass"
    decl = get_registry().declaration_of(owner)
    if kind == "pass":
        name = owner.info.name
        module = getattr(getattr(owner, "pass_func", None), "__module__", None) or ""
    else:
        name = decl.name if decl is not None else type(owner).__name__
        module = type(owner).__module__
    if decl is not None and not decl.origin.in_process:
        dist, version = decl.origin.distribution, decl.origin.version
    elif module.split(".")[0] == "relaypass":  # the tools' own instruments
        from importlib import metadata

        dist = STANDARD_DISTRIBUTION
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:  # run from a source tree that is not installed
            version = ""
    else:
        return Blame(kind, name, module=module)
    return Blame(kind, name, dist, version, bug_tracker(dist), module)


def name_instrument(exc: BaseException) -> Blame | None:
    """:func:`blame`, and when an instrument raised ``exc``, a note naming it.

    The note comes first among relaypass's notes, so the error line names
    the instrument rather than a pass the instrument happened to run in.
    """
    found = blame(exc)
    if found is not None and found.kind == "instrument":
        notes = getattr(exc, "__notes__", None)
        text = f"{_NOTE}{found.name!r} (from {found.origin})"
        if isinstance(notes, list) and text not in notes:
            notes.insert(0, text)
        elif not isinstance(notes, list):
            add_note(exc, text)
    return found


def bug_report(found: Blame | None) -> str:
    """What the error line of a bug (exit 3) says, after ``; this is a bug``: whose, and whom to tell.

    A third-party pass or instrument: its distribution, version and bug
    tracker (from its metadata); code of this process that no plugin
    declares: where it is defined; relaypass's own code: relaypass's tracker
    when its metadata names one.
    """
    where = " (the traceback above shows where)"
    if found is None or found.distribution == STANDARD_DISTRIBUTION:
        at = f" at {found.bug_tracker}" if found is not None and found.bug_tracker else ""
        return f"{where}, please report it{at}"
    what = f"{found.kind} {found.name!r}"
    if not found.distribution:
        return f" in {what}, {found.origin}{where}"
    to = (f"at {found.bug_tracker}" if found.bug_tracker else
          f"(the metadata of {found.distribution} names no bug tracker)")
    return (f" in {what} of {found.origin}, not in relaypass{where}: please report it to "
            f"the maintainers of {found.distribution} {to}")


def format_traceback(exc: BaseException) -> str:
    """``exc``'s traceback (and those it chains to), the frames of relaypass's machinery left out.

    A frame is left out when its file belongs to the pass manager, the plugin
    registry or the command line, and a frame of the code they ran (a pass, an
    instrument, the IR; not the standard library, which they call too)
    follows it; the last line says how many were left out.
    """
    te = traceback.TracebackException.from_exception(exc)
    dropped = 0
    seen: set[int] = set()
    stack = [te]
    while stack:
        part = stack.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        frames = list(part.stack)
        last_other = max((i for i, f in enumerate(frames) if _ran_code(f.filename)), default=-1)
        kept = [f for i, f in enumerate(frames) if i > last_other or not _machinery(f.filename)]
        dropped += len(frames) - len(kept)
        part.stack = traceback.StackSummary.from_list(kept)
        stack.extend(p for p in (part.__cause__, part.__context__) if p is not None)
    text = "".join(te.format())
    if dropped:
        text += (f"({dropped} frame{'s' if dropped != 1 else ''} of relaypass's pass manager and "
                 "command line left out; --traceback shows them)\n")
    return text


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MACHINERY = tuple(os.path.join(_ROOT, part) for part in (
    "transform" + os.sep, "tools" + os.sep, "plugins" + os.sep, "gc_pause.py", "__main__.py"))


_STDLIB = tuple(os.path.abspath(sysconfig.get_paths()[key]) + os.sep
                for key in ("stdlib", "platstdlib"))


def _machinery(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_MACHINERY)


def _ran_code(filename: str) -> bool:
    """A frame of the code the machinery ran (the standard library's frames and frozen
    modules belong to whoever called them)."""
    path = os.path.abspath(filename)
    return not (filename.startswith("<") or path.startswith(_MACHINERY)
                or path.startswith(_STDLIB))
