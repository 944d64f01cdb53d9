"""A pipeline's resolved schedule: every pass it would run, in order, each with its options.

:meth:`PipelineSpec.schedule` says what would run and why; this module pairs
each of its steps with the pipeline entry it came from, so that a step
carries what is needed to run it on its own (its options, where the file
names it).  That is what ``relaypass explain`` prints and what the tools
that work pass by pass build on: numbering the passes of a run, cutting a
schedule at a pass (bisection), writing the rest of a schedule as a new
pipeline file (reproducers).

Resolving a schedule reads declarations only: no plugin code is imported.
:class:`ScheduleTracker` then follows a real run and pairs each pass that
runs with its step, with the module the pass was given and the one it
returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..transform.instrument import PassInstrument
from ..transform.passes import PassResultError
from ..transform.pipeline import PassRef, PipelineSpec, SequenceRef

__all__ = ["ScheduleTracker", "ScheduledPass", "StepRun", "resolve_schedule", "runnable"]


@dataclass(frozen=True)
class ScheduledPass:
    """One step of a resolved schedule.

    ``kind`` is "pass" (named in the file), "sequence" (a nested sequence of
    the file; its members follow at ``depth + 1``) or "dependency" (added
    because a pass or sequence requires it; built with default options).
    ``action`` is "run" or "skip"; ``reason`` says why.  ``index`` numbers
    the passes that run (1, 2, ...), sequences excluded; it is 0 otherwise.
    ``key_path`` says where the file names the step ("" for dependencies).
    """

    index: int
    name: str
    kind: str
    action: str
    reason: str
    depth: int
    options: Mapping[str, Any] = field(default_factory=dict)
    key_path: str = ""

    @property
    def runs(self) -> bool:
        return self.action == "run"


class ScheduleMismatchError(RuntimeError):
    """The schedule simulation and the pipeline's entries disagree: a bug, not bad input."""


def resolve_schedule(spec: PipelineSpec) -> list[ScheduledPass]:
    """The steps of ``spec``'s schedule, in order, the outer sequence left out.

    Apply ``dataclasses.replace`` to ``spec`` first to resolve it under
    another opt_level or other disabled passes.
    """
    steps = spec.schedule()[1:]
    # The entries, pre-order; a sequence's members join only when it runs,
    # exactly as the simulation walks them.  A dependency step always precedes
    # the entry requiring it and never shares its name (a pass cannot require
    # itself), so a step is an entry's exactly when the names agree.
    pending: list[PassRef | SequenceRef] = list(reversed(spec.passes.passes))
    out: list[ScheduledPass] = []
    index = 0
    for step in steps:
        ref = pending[-1] if pending else None
        if ref is not None and ref.name == step.name:
            pending.pop()
            if isinstance(ref, SequenceRef):
                kind, options = "sequence", {}
                if step.action == "run":
                    pending.extend(reversed(ref.passes))
            else:
                kind, options = "pass", dict(ref.options)
            key_path = ref.key_path
        else:
            kind, options, key_path = "dependency", {}, ""
        runs = step.action == "run" and kind != "sequence"
        if runs:
            index += 1
        out.append(ScheduledPass(index if runs else 0, step.name, kind, step.action, step.reason,
                                 step.depth - 1, options, key_path))
    if pending:
        raise ScheduleMismatchError(
            f"{spec.source}: the schedule of pipeline {spec.name!r} leaves out "
            f"{pending[-1].name!r} ({pending[-1].key_path}); please report this bug"
        )
    return out


def runnable(schedule: list[ScheduledPass]) -> list[ScheduledPass]:
    """The passes that would run, in order (sequences and skipped steps left out)."""
    return [s for s in schedule if s.index]


@dataclass
class StepRun:
    """One step of a schedule as it ran: the module its pass was given, and the one it returned.

    ``after`` is None while the pass runs, and stays None when it raised.
    """

    step: ScheduledPass
    before: Any
    after: Any = None


# The note the pass manager adds to an exception raised by a pass function.
_RAISED_IN_PASS = "relaypass: raised in pass "

# What the tracker knows about each pass on the instruments' stack.
_OUTER, _SEQUENCE, _STEP, _INSIDE = range(4)


class ScheduleTracker(PassInstrument):
    """Follows a pipeline's run and says which step of its schedule each pass that runs is.

    The pipeline's outer Sequential comes first; the passes reported directly
    inside it or inside a nested sequence are the schedule's steps, in order;
    passes reported while a step runs (a pass running another pass itself)
    belong to that step.  A step missing from the run (an instrument's
    ``should_run`` said no) is skipped over by name.

    Put the tracker last in the instrument list: it then sees a pass after
    every other instrument's ``run_before_pass`` returned, so a pass on its
    stack when an exception arrives was really running.  With
    ``keep_runs=True`` every finished step is kept in :attr:`runs` (bisection
    uses the modules); otherwise only the running steps are held.
    """

    def __init__(self, schedule: list[ScheduledPass], keep_runs: bool = False) -> None:
        self._expected = [s for s in schedule if s.runs]
        self._keep = keep_runs
        self._next = 0
        self._stack: list[tuple[int, StepRun | None]] = []
        self.runs: list[StepRun] = []

    def enter_pass_ctx(self) -> None:
        self._next = 0
        self._stack = []
        self.runs = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        stack = self._stack
        if not stack:
            stack.append((_OUTER, None))
            return
        if stack[-1][0] in (_STEP, _INSIDE):
            stack.append((_INSIDE, None))
            return
        step = self._match(info.name)
        if step is None:  # not a step of this schedule: whatever runs inside it is its own
            stack.append((_INSIDE, None))
        elif step.kind == "sequence":
            stack.append((_SEQUENCE, None))
        else:
            stack.append((_STEP, StepRun(step, mod)))

    def run_after_pass(self, mod: Any, info: Any) -> None:
        if not self._stack:
            return
        kind, run = self._stack.pop()
        if kind == _STEP and run is not None:
            run.after = mod
            if self._keep:
                self.runs.append(run)

    def _match(self, name: str) -> ScheduledPass | None:
        expected = self._expected
        for i in range(self._next, len(expected)):
            if expected[i].name == name:
                self._next = i + 1
                return expected[i]
        return None

    def running(self) -> StepRun | None:
        """The innermost step still running (after an exception: the step it came from)."""
        for kind, run in reversed(self._stack):
            if kind == _STEP:
                return run
        return None

    def failed_step(self, exc: BaseException) -> StepRun | None:
        """The step whose pass raised ``exc``; None when a pass did not raise it.

        The pass manager notes on every exception a pass function raises which
        pass that was; an instrument's error, or an error building a pass,
        carries no such note and is nobody's step.
        """
        run = self.running()
        if run is None:
            return None
        if isinstance(exc, PassResultError):
            return run
        notes = getattr(exc, "__notes__", None) or ()
        if any(isinstance(n, str) and n.startswith(_RAISED_IN_PASS) for n in notes):
            return run
        return None
