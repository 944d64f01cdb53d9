"""Pass timing: how long each pass took, as a tree that follows the passes' nesting.

Relay reports a Sequential to the instruments with its member passes inside
it (before(seq), before(p1), after(p1), ..., after(seq)), and a pass may run
other passes itself, so the timings form a tree: a parent's time includes its
children's.  The table shows both a pass's total time and its own share (what
is left after its children), which is where a slow Sequential's time really
goes.

As with TVM's PassTimingInstrument, the profile is read while the
PassContext is active (``render()``, ``records()``): exiting the context (or
replacing the instruments with ``override_instruments``) ends it and clears
it, after ``print_on_exit`` wrote it out, so ``render()`` is empty there.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter_ns

from relaypass.transform.instrument import PassInstrument

from .options import Output, flag


class _Frame:
    """One run of one pass, while it is being timed and afterwards."""

    __slots__ = ("name", "start", "end", "children", "completed")

    def __init__(self, name: str, start: int) -> None:
        self.name = name
        self.start = start
        self.end: int | None = None
        self.children: list[_Frame] = []
        self.completed = False


@dataclass(frozen=True)
class PassTimingRecord:
    """The timing of one pass run, for machines (JSON, benchmarks, dashboards).

    ``parent`` is the index of the enclosing pass's record in the list that
    :meth:`PassTimingInstrument.records` returns (None for an outermost pass);
    ``completed`` is False while the pass is still running, and in the table
    ``print_on_exit`` writes for a pass that raised (its time runs up to the
    moment the context exited).
    """

    name: str
    depth: int
    parent: int | None
    total_ms: float
    self_ms: float
    percent_of_parent: float
    completed: bool


class PassTimingInstrument(PassInstrument):
    """Times every pass the PassContext reports, nested ones included.

    Read the profile before the context exits: exiting clears it, as TVM's
    does.  ``print_on_exit=True`` writes the table first, when the context
    exits, to ``file`` ("stdout", "stderr", a path, or a text stream).  The
    options' defaults are the manifest's (the registry gives every declared
    option).
    """

    def __init__(self, *, print_on_exit: bool, file: object) -> None:
        self._print_on_exit = flag("PassTimingInstrument", "print_on_exit", print_on_exit)
        self._output = Output("PassTimingInstrument", file)
        self._roots: list[_Frame] = []
        self._running: list[_Frame] = []

    # --- instrument hooks ---------------------------------------------------
    def exit_pass_ctx(self) -> None:
        # A pass that raised never reached run_after_pass: its frame (and its
        # enclosing Sequentials') is still open; it ends here, unfinished.
        end = perf_counter_ns()
        for frame in self._running:
            frame.end = end
        self._running.clear()
        if self._print_on_exit and self._roots:
            self._output.write(self.render() + "\n")
        self.clear()

    def run_before_pass(self, mod: object, info: object) -> None:
        frame = _Frame(info.name, perf_counter_ns())  # type: ignore[attr-defined]
        running = self._running
        (running[-1].children if running else self._roots).append(frame)
        running.append(frame)

    def run_after_pass(self, mod: object, info: object) -> None:
        end = perf_counter_ns()
        running = self._running
        if running:
            frame = running.pop()
            frame.end = end
            frame.completed = True

    # --- results ------------------------------------------------------------
    def clear(self) -> None:
        """Forget every timing recorded so far."""
        self._roots = []
        self._running = []

    def records(self) -> list[PassTimingRecord]:
        """Every timed pass run, in the order the runs started (a pre-order of the tree)."""
        now = perf_counter_ns()
        out: list[PassTimingRecord] = []
        roots = self._roots
        roots_total = sum(_elapsed(f, now) for f in roots)
        stack: list[tuple[_Frame, int, int | None, int]] = [
            (f, 0, None, roots_total) for f in reversed(roots)
        ]
        while stack:
            frame, depth, parent, parent_total = stack.pop()
            total = _elapsed(frame, now)
            children_total = sum(_elapsed(c, now) for c in frame.children)
            index = len(out)
            out.append(
                PassTimingRecord(
                    name=frame.name,
                    depth=depth,
                    parent=parent,
                    total_ms=total / 1e6,
                    self_ms=max(total - children_total, 0) / 1e6,
                    percent_of_parent=100.0 * total / parent_total if parent_total else 0.0,
                    completed=frame.completed,
                )
            )
            stack.extend((c, depth + 1, index, total) for c in reversed(frame.children))
        return out

    def render(self) -> str:
        """The timings as a table: one row per pass run, indented by nesting ("" when none ran)."""
        records = self.records()
        if not records:
            return ""
        total_ms = sum(r.total_ms for r in records if r.parent is None)
        labels = [
            "  " * r.depth + r.name + ("" if r.completed else " (did not finish)")
            for r in records
        ]
        width = max(len("pass"), *(len(label) for label in labels))
        lines = [
            f"Pass timing: {len(records)} pass runs, {total_ms:.3f} ms",
            f"{'pass':<{width}}  {'total ms':>10}  {'self ms':>10}  {'% of parent':>11}",
        ]
        for label, r in zip(labels, records):
            lines.append(
                f"{label:<{width}}  {r.total_ms:>10.3f}  {r.self_ms:>10.3f}  "
                f"{r.percent_of_parent:>10.1f}%"
            )
        return "\n".join(lines)


def _elapsed(frame: _Frame, now: int) -> int:
    return (frame.end if frame.end is not None else now) - frame.start
