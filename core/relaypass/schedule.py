"""A pipeline's resolved schedule: every pass it would run, in order, each with its options.

:meth:`PipelineSpec.schedule` says what would run and why; this module pairs
each of its steps with the pipeline entry it came from, so that a step
carries what is needed to run it on its own (its options, where the file
names it).  That is what ``relaypass explain`` prints and what the tools
that work pass by pass build on: numbering the passes of a run, cutting a
schedule at a pass (bisection), writing the rest of a schedule as a new
pipeline file (reproducers).

Everything here comes from declarations: no plugin code is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .transform.pipeline import PassRef, PipelineSpec, SequenceRef

__all__ = ["ScheduledPass", "resolve_schedule", "runnable"]


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
