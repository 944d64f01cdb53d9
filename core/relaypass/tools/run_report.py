"""The ``--json`` documents of ``relaypass run``, ``check``, ``explain`` and ``bisect``.

CI jobs read what a command did from one JSON document on stdout instead of
parsing its human-readable lines.  The schema is documented in
docs/json-output.md and versioned: every document starts with ``"schema":
"relaypass.<command>/<N>"``, and N changes only when a field is removed or
changes meaning (new fields may appear without it).

Two parts, one concept (what a run did, as data):

* :class:`RunRecorder` follows a run step by step, as the schedule tracker
  it extends, and keeps for each step of the resolved schedule the module it
  was given, the one it returned and its wall time;
* :class:`Report` collects a command's fields and its error, if any, and
  writes the document once, at the end (an error document is a document
  too, with the same exit status as without ``--json``).  The ``*_json``
  functions turn the tools' results (a pipeline, a schedule, a comparison, a
  bisection, an exception) into plain JSON values.

Node and operator counts are computed from the recorded modules when the
document is built, after the run: counting never slows the passes down.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ..errors import RelayPassError
from ..transform.instrument import PassInstrument
from .blame import blame
from .schedule import ScheduledPass, ScheduleTracker, StepRun

__all__ = ["SCHEMA_VERSION", "ModuleCounter", "Report", "ReportFileError", "RunRecorder",
           "comparison_json", "error_json", "pipeline_json", "schedule_json", "schema_id"]

#: The version of every document's schema (``"schema": "relaypass.run/1"``).
SCHEMA_VERSION = 1


def schema_id(command: str) -> str:
    """``relaypass.<command>/<SCHEMA_VERSION>``: what a document says it is."""
    return f"relaypass.{command}/{SCHEMA_VERSION}"


# --- recording a run ------------------------------------------------------------------------------
class _Stopwatch(PassInstrument):
    """The moment the last pass returned, taken by the first instrument of the list.

    The recorder is the last instrument (it must be, as the tracker it
    extends), so by the time it hears that a pass finished, the instruments
    before it (printers, checkers) have done their work: this one, put
    first, notes the time before they do.
    """

    def __init__(self) -> None:
        self.last = 0.0

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self.last = time.perf_counter()


class RunRecorder(ScheduleTracker):
    """A :class:`ScheduleTracker` keeping every step's modules and wall time.

    Put it last in the instrument list, and :attr:`stopwatch` first, so
    that a step's time is that of its pass (and the passes run inside it,
    such as a function pass's typing), not of the other instruments' work.
    ``seconds`` maps ``id(step_run)`` to that time, for the steps that
    finished.  :meth:`step_started` and :meth:`step_finished` are called once
    per step; subclasses extend them.
    """

    def __init__(self, schedule: list[ScheduledPass]) -> None:
        super().__init__(schedule, keep_runs=True)
        self.stopwatch = _Stopwatch()
        self.seconds: dict[int, float] = {}
        self._started: dict[int, float] = {}

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.seconds = {}
        self._started = {}

    def run_before_pass(self, mod: Any, info: Any) -> None:
        super().run_before_pass(mod, info)
        run = self.running()
        if run is not None and id(run) not in self._started:
            self.step_started(run)
            self._started[id(run)] = time.perf_counter()  # last: the pass starts now

    def run_after_pass(self, mod: Any, info: Any) -> None:
        run = self.running()
        super().run_after_pass(mod, info)
        if run is not None and run.after is not None and id(run) not in self.seconds:
            start = self._started[id(run)]
            end = self.stopwatch.last if self.stopwatch.last >= start else time.perf_counter()
            self.seconds[id(run)] = end - start
            self.step_finished(run)

    def step_started(self, run: StepRun) -> None:
        """A step's pass is about to run on ``run.before``."""

    def step_finished(self, run: StepRun) -> None:
        """A step's pass returned ``run.after``."""


class ModuleCounter:
    """Node and operator counts of modules, each function counted once however many modules hold it.

    ``nodes`` counts the distinct expression nodes of each function (a node
    shared inside a function counts once; operators are not nodes here),
    summed over the module's functions; ``ops`` counts the calls of each
    operator, including those inside nested (fused) functions.
    """

    def __init__(self) -> None:
        # Keyed by id; the function is kept so that its id stays its own.
        self._cache: dict[int, tuple[Any, int, dict[str, int]]] = {}

    def counts(self, mod: Any) -> dict[str, Any]:
        nodes = 0
        ops: dict[str, int] = {}
        for _gv, func in mod.items():
            n, func_ops = self._function(func)
            nodes += n
            for name, k in func_ops.items():
                ops[name] = ops.get(name, 0) + k
        return {"nodes": nodes, "op_calls": sum(ops.values()), "ops": dict(sorted(ops.items()))}

    def _function(self, func: Any) -> tuple[int, dict[str, int]]:
        hit = self._cache.get(id(func))
        if hit is not None and hit[0] is func:
            return hit[1], hit[2]
        from ..ir.expr import Call, children
        from ..ir.op import Op

        seen: set[int] = set()
        stack = [func]
        nodes = 0
        ops: dict[str, int] = {}
        while stack:  # an explicit stack: a 100,000-deep chain is fine
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, Op):
                continue
            nodes += 1
            if isinstance(node, Call) and isinstance(node.op, Op):
                ops[node.op.name] = ops.get(node.op.name, 0) + 1
            stack.extend(kid for kid in children(node) if id(kid) not in seen)
        self._cache[id(func)] = (func, nodes, ops)
        return nodes, ops


def steps_json(runs: Sequence[StepRun], seconds: Mapping[int, float],
               counter: ModuleCounter, failed: StepRun | None = None) -> list[dict[str, Any]]:
    """One entry per step that ran (and the step that raised, last, with ``"status": "raised"``)."""
    from ..ir.structural import structural_equal
    from ..transform.registry import get_registry

    registry = get_registry()
    out = []
    extra = [failed] if failed is not None and all(r is not failed for r in runs) else []
    for run in [*runs, *extra]:
        step = run.step
        try:
            decl = registry.lookup_pass(step.name)
        except RelayPassError:  # a name two plugins declare: the run used a qualified one
            decl = None
        before = counter.counts(run.before)
        entry: dict[str, Any] = {
            "index": step.index, "name": step.name, "kind": step.kind,
            "distribution": decl.distribution if decl is not None else None,
            "version": decl.version if decl is not None else None,
            "status": "raised" if run.after is None else "ok",
            "seconds": _number(seconds.get(id(run))),
            "nodes_before": before["nodes"], "ops_before": before["ops"],
        }
        if run.after is not None:
            after = counter.counts(run.after)
            entry.update(nodes_after=after["nodes"], ops_after=after["ops"],
                         changed=not (run.after is run.before
                                      or structural_equal(run.after, run.before)))
        else:
            entry.update(nodes_after=None, ops_after=None, changed=None)
        out.append(entry)
    return out


# --- documents ------------------------------------------------------------------------------------
class Report:
    """The JSON document of one command: filled while it runs, written once when it ends.

    ``fields`` are the command's own (see docs/json-output.md); a run's
    steps come from the :class:`RunRecorder` made by :meth:`tracker` (also
    after an error: the steps that ran before it are part of the document).

    ``relaypass run`` fills one whether it was asked for ``--json`` (the
    document on stdout: :attr:`stdout`), for ``--report FILE.json`` (the
    same run as a batch record, :mod:`relaypass.tools.run_record`:
    :attr:`record_file`), or both; :meth:`arm` says which, once the command
    line is parsed.  For the record it also keeps the phases' times.
    """

    def __init__(self, command: str, stdout: bool = True) -> None:
        self.command = command
        self.fields: dict[str, Any] = {}
        self.recorder: RunRecorder | None = None
        self.error: dict[str, Any] | None = None
        self.counter = ModuleCounter()
        self.stdout = stdout
        self.record_file: str | None = None
        #: The resolved schedule of the run (None until :meth:`tracker`).
        self.schedule: list[ScheduledPass] | None = None
        #: Seconds the model took to read (Relay text) or import (ONNX).
        self.import_seconds: float | None = None
        self.started = time.perf_counter()
        #: When each phase ("passes", "check") last ended (perf_counter()).
        self.ended: dict[str, float] = {}

    def arm(self, json_output: bool, record_file: str | None) -> Report | None:
        """What the parsed command line asked for: self, or None when it asked for nothing.

        A ``record_file`` whose folder does not exist, or that is a folder,
        is refused here, before anything runs.
        """
        if record_file is not None:
            folder = os.path.dirname(os.path.abspath(record_file))
            if os.path.isdir(record_file) or not os.path.isdir(folder):
                what = "is a folder" if os.path.isdir(record_file) else "its folder does not exist"
                raise ReportFileError(f"--report {record_file}: cannot write the report there "
                                      f"({what})")
        self.stdout = json_output
        self.record_file = record_file
        return self if json_output or record_file is not None else None

    def mark(self, phase: str) -> None:
        """``phase`` ("passes", or "check": one check of the outputs) has just ended."""
        self.ended[phase] = time.perf_counter()

    def tracker(self, schedule: list[ScheduledPass]) -> RunRecorder:
        """The recorder of the run whose steps the document lists (one per document)."""
        self.schedule = schedule
        self.recorder = RunRecorder(schedule)
        return self.recorder

    def fail(self, exc: BaseException, message: str) -> None:
        """Record the error the command ends with; ``message`` is its line as the user reads it."""
        self.error = error_json(exc, message)

    def document(self, exit_code: int) -> dict[str, Any]:
        from .. import __version__

        doc: dict[str, Any] = {"schema": schema_id(self.command), "relaypass": __version__,
                               "exit_code": exit_code}
        doc.update(self.fields)
        rec = self.recorder
        if rec is not None:
            failed = rec.running() if self.error is not None else None
            doc["passes"] = steps_json(rec.runs, rec.seconds, self.counter, failed)
        doc["error"] = self.error
        return doc

    def write(self, exit_code: int, stream: TextIO) -> None:
        stream.write(json.dumps(_plain(self.document(exit_code)), indent=2, allow_nan=False))
        stream.write("\n")
        stream.flush()


class ReportFileError(RelayPassError):
    """The file of ``relaypass run --report`` cannot be written."""


def pipeline_json(spec: Any) -> dict[str, Any]:
    """What a document says about the pipeline: its name, file, opt_level, required and disabled."""
    return {"name": spec.name, "source": spec.source, "opt_level": spec.opt_level,
            "required_pass": list(spec.required_pass), "disabled_pass": list(spec.disabled_pass)}


def schedule_json(schedule: Sequence[ScheduledPass]) -> list[dict[str, Any]]:
    """A resolved schedule, step by step (``relaypass explain``)."""
    return [{"index": s.index or None, "name": s.name, "kind": s.kind, "action": s.action,
             "reason": s.reason, "depth": s.depth, "options": dict(s.options),
             "key_path": s.key_path or None} for s in schedule]


def comparison_json(comparison: Any, actual: Sequence[Any], reference: Sequence[Any],
                    against: str) -> dict[str, Any]:
    """A check of outputs against a reference: pass/fail and the largest errors.

    ``max_rel_error`` is the largest ``|actual - reference| / |reference|``
    over the elements whose reference is not zero (None when the outputs
    cannot be compared, or every reference element is zero).
    """
    return {"against": against, "ok": bool(comparison.ok), "rtol": comparison.rtol,
            "atol": comparison.atol, "outputs": comparison.outputs,
            "max_abs_error": None if comparison.problem else _number(comparison.max_abs_diff),
            "max_rel_error": None if comparison.problem else _max_rel(actual, reference),
            "worst": comparison.worst or None, "problem": comparison.problem or None,
            "summary": comparison.summary(against)}


def bisection_json(result: Any, inputs: str) -> dict[str, Any]:
    """The fields of a ``relaypass bisect`` document (``result``: a Bisection)."""
    culprit = None
    if result.culprit is not None and result.breakage is not None:
        from ..transform.registry import get_registry

        step, breakage = result.culprit.step, result.breakage
        try:
            decl = get_registry().lookup_pass(step.name)
        except RelayPassError:
            decl = None
        comparison = breakage.comparison
        culprit = {
            "index": step.index, "name": step.name, "kind": step.kind,
            "distribution": decl.distribution if decl is not None else None,
            "version": decl.version if decl is not None else None,
            "breakage": breakage.kind, "message": breakage.message,
            "max_abs_error": (_number(comparison.max_abs_diff)
                              if comparison is not None and not comparison.problem else None),
        }
    return {
        "pipeline": pipeline_json(result.spec), "inputs": inputs, "steps": result.steps,
        "mode": "linear" if result.linear else "bisection", "checker": result.checker,
        "typer": result.typer, "culprit": culprit, "evaluations": result.evaluations,
        "seconds": {"passes": _number(result.pass_seconds),
                    "checks": _number(result.check_seconds),
                    "evaluation": _number(result.evaluation_seconds)},
    }


def error_json(exc: BaseException, message: str) -> dict[str, Any]:
    """An error as data: its class, its line, and the pass, instrument and distribution behind it."""
    found = blame(exc)
    dist = getattr(exc, "distribution", "") or ""  # a plugin error names its distribution
    version = getattr(exc, "version", "") or ""
    if found is not None and found.distribution:
        dist, version = found.distribution, found.version
    return {
        "kind": type(exc).__name__,
        "message": message,
        "input_error": isinstance(exc, (RelayPassError, OSError)),
        "pass": found.name if found is not None and found.kind == "pass" else None,
        "instrument": found.name if found is not None and found.kind == "instrument" else None,
        "distribution": dist or None,
        "version": version or None,
        "bug_tracker": (found.bug_tracker or None) if found is not None else None,
    }


# --- helpers --------------------------------------------------------------------------------------
def _number(x: float | None) -> float | None:
    """A float JSON can carry (None for NaN and infinities, which JSON has no words for)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _max_rel(actual: Sequence[Any], reference: Sequence[Any]) -> float | None:
    import numpy as np

    worst: float | None = None
    for a, r in zip(actual, reference):
        a64 = np.asarray(a, dtype=np.float64)
        r64 = np.asarray(r, dtype=np.float64)
        mask = (r64 != 0) & np.isfinite(r64) & np.isfinite(a64)
        if a64.shape != r64.shape or not mask.any():
            continue
        rel = float(np.max(np.abs(a64[mask] - r64[mask]) / np.abs(r64[mask])))
        worst = rel if worst is None else max(worst, rel)
    return _number(worst)


def _plain(value: Any) -> Any:
    """``value`` with tuples made lists and non-finite floats made None (strict JSON)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return _number(value)
    return value
