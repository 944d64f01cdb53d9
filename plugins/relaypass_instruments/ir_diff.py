"""Show what each pass changed, as a unified diff of the module's text form.

Attribution rule: every change is reported once, under the innermost pass
that was running when it was made.  Concretely, the instrument keeps the
module as last seen at any before/after event and compares against it at the
next event:

- after a pass that ran no other pass (a leaf), that is the module it was
  given, so the diff is exactly what the pass did;
- a Sequential hands its input to its first member unchanged and returns its
  last member's output, so after its members have been reported it has no
  change of its own left and prints nothing: its changes are not reported
  twice;
- a pass that edits the module and then runs another pass itself has those
  edits reported under its own name when the inner pass starts (the diff
  runs from "before OUTER" to "before INNER"), and the rest after it ends.

Changes made between two top-level pass runs (by the caller, not by a pass)
are not reported.  The text compared is :mod:`.text`'s: by default without
the metadata section (a constant shows as ``meta[relay.Constant][i]``) and
without ``/* ty=... */`` comments, so that a diff holds the lines a pass
changed rather than every type annotation below them; ``types`` and
``show_meta`` put them back.  Comparison is cheap for passes that change nothing: the
functions are compared by identity first and the text is only rendered when
some function object differs; a pass that rebuilt identical functions prints
nothing either.
"""

from __future__ import annotations

import difflib

from relaypass.transform.instrument import PassInstrument

from .options import Output, count, flag
from .text import module_text, show_meta_flag


class _Snapshot:
    """A module as it was at one moment (``label``), with its text rendered on demand."""

    __slots__ = ("module", "functions", "attrs", "label", "_text", "_show_meta", "_types")

    def __init__(self, mod: object, label: str, show_meta: bool, types: bool) -> None:
        # The copy shares the (immutable) functions; it guards against the
        # owner of ``mod`` editing it later, which would change the baseline.
        self.module = mod.copy()  # type: ignore[attr-defined]
        self.functions = self.module.functions
        self.attrs = self.module.attrs
        self.label = label
        self._show_meta = show_meta
        self._types = types
        self._text: str | None = None

    def same_objects(self, mod: object) -> bool:
        funcs = self.functions
        if len(funcs) != len(mod) or self.attrs is not mod.attrs:  # type: ignore[arg-type, attr-defined]
            return False
        return all(funcs.get(gv) is f for gv, f in mod.items())  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = module_text(self.module, self._show_meta, self._types)
        return self._text


class PrintChanged(PassInstrument):
    """Print a unified diff of the module text for every pass that changed it.

    ``file``: "stdout", "stderr", a path (appended to) or a text stream.
    ``context``: lines of unchanged text around each change.  ``types``: keep
    the type comments; ``show_meta``: include the metadata section.  Each diff
    is preceded by a line ``// NAME changed the module``.  The options'
    defaults are the manifest's (the registry gives every declared option).
    """

    def __init__(self, *, file: object, context: int, types: object,
                 show_meta: object) -> None:
        self._output = Output("PrintChanged", file)
        self._context = count("PrintChanged", "context", context)
        self._types = flag("PrintChanged", "types", types)
        self._show_meta = show_meta_flag("PrintChanged", show_meta)
        self._running: list[str] = []
        self._baseline: _Snapshot | None = None
        self._contexts = 0

    def enter_pass_ctx(self) -> None:
        if self._contexts == 0:
            self._running = []
            self._baseline = None
        self._contexts += 1

    def exit_pass_ctx(self) -> None:
        self._contexts = max(self._contexts - 1, 0)
        if self._contexts == 0:
            self._running = []
            self._baseline = None

    def run_before_pass(self, mod: object, info: object) -> None:
        name = info.name  # type: ignore[attr-defined]
        running = self._running
        label = f"before {name}"
        if running:
            self._compare(mod, running[-1], label)
        elif self._baseline is not None and self._baseline.same_objects(mod):
            self._baseline.label = label
        else:
            # Between top-level runs the caller may have edited the module:
            # that is nobody's change to report, only a new baseline.
            self._baseline = self._snapshot(mod, label)
        running.append(name)

    def run_after_pass(self, mod: object, info: object) -> None:
        name = info.name  # type: ignore[attr-defined]
        if self._running:
            self._running.pop()
        self._compare(mod, name, f"after {name}")

    def _compare(self, mod: object, changed_by: str, label: str) -> None:
        old = self._baseline
        if old is None or not old.same_objects(mod):
            new = self._snapshot(mod, label)
            self._baseline = new
            if old is not None and old.text != new.text:
                self._print_diff(changed_by, old, new)
        else:
            old.label = label

    def _snapshot(self, mod: object, label: str) -> _Snapshot:
        return _Snapshot(mod, label, self._show_meta, self._types)

    def _print_diff(self, changed_by: str, old: _Snapshot, new: _Snapshot) -> None:
        diff = difflib.unified_diff(
            old.text.splitlines(),
            new.text.splitlines(),
            fromfile=old.label,
            tofile=new.label,
            n=self._context,
            lineterm="",
        )
        self._output.write(f"// {changed_by} changed the module\n" + "\n".join(diff) + "\n\n")
