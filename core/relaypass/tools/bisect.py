"""Bisecting a pipeline: the first pass of its schedule after which the program is broken.

A pipeline that changes a model's outputs says so only at its end, ten
passes after the cause.  Bisection runs the pipeline once, keeping the
module after every step of its resolved schedule (modules are immutable and
share their unchanged nodes, so the snapshots cost little), and then looks
for the first step whose module is broken:

* structurally: the pass raised, or left the module ill formed (the checks
  of the checker instrument, by default ``WellFormedChecker``), or the typing
  pass (by default the pass with role "type-inference", InferType among the
  standard passes) no longer accepts it.  These checks cost about as much as a pass and run on every snapshot,
  in order, so the first structural break is always found;
* in place: the pass changed the module it was given (its structural hash
  differs after the pass ran).  Modules share their unchanged nodes, so
  such an edit changes the snapshots of the passes before it too, and they
  would take the blame; the pass that did it is reported instead, before
  any other check;
* in its outputs: ``@main``, evaluated by the interpreter on seeded random
  inputs, differs from the input module's outputs beyond the tolerance.
  Evaluation is what costs (a pipeline of ten passes on a convnet runs in
  milliseconds; one evaluation takes longer than all of them), so by default
  the outputs are searched by bisection over the snapshots before the first
  structural break: the reference once, then about log2(n) evaluations,
  "prefix k matches" being assumed to hold up to the culprit and fail after
  it.  A pass may break the outputs and a later one happen to restore them;
  bisection then finds a pass after which the outputs differ (if the last
  snapshot checked still matches, it reports none), while ``linear=True``
  evaluates every snapshot in order and finds the first.

Passes are reached by name through the registry, like everything in the
core: the checker and the typer are names given by the caller, with the
defaults of :mod:`relaypass.tools.defaults` (what ``relaypass bisect
--checker/--typer`` say in their help).  The pipeline file's own
instruments are left out (the checks here replace them, and their output
would be noise).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RelayPassError
from ..ir.module import IRModule
from ..ir.structural import structural_hash
from ..testing.compare import Comparison, compare_outputs, flatten_outputs
from ..transform.context import PassContext
from ..transform.pipeline import PipelineSpec
from .defaults import DEFAULT_CHECKER, DEFAULT_TYPER, default_typer
from .run_report import RunRecorder
from .schedule import StepRun, resolve_schedule, runnable

__all__ = ["BisectInputError", "Bisection", "Breakage", "Recording", "bisect_pipeline",
           "record_schedule"]


class BisectInputError(RelayPassError):
    """The input module cannot be the reference: it is ill formed, ill typed or does not evaluate."""


@dataclass(frozen=True)
class Breakage:
    """What is wrong after a pass.

    ``kind`` is "raised" (the pass raised), "changed_input" (it changed the
    module it was given in place), "ill_formed", "ill_typed" (the typing
    pass fails on its result), "evaluation" (the interpreter fails on it) or
    "output" (the outputs differ; ``comparison`` says how much and where).
    """

    kind: str
    message: str
    comparison: Comparison | None = None


@dataclass
class Recording:
    """A pipeline run step by step.

    ``runs`` holds each step that ran with the module it was given and the
    one it returned; when a pass raised, ``error`` is its exception and the
    last run is that step, with ``after`` None.  ``step_seconds`` maps
    ``id(run)`` to the wall time of each step that finished;
    ``changed_input`` is the first step whose pass changed the module it was
    given in place (None when none did).
    """

    runs: list[StepRun]
    error: BaseException | None
    seconds: float
    step_seconds: Mapping[int, float] = field(default_factory=dict)
    changed_input: StepRun | None = None


class _InputWatch(RunRecorder):
    """A recorder that also notices a pass changing the module it was given.

    The module's structural hash is taken when the step starts and again
    when it ends (or raised): nodes are immutable by contract, so the two
    differ only if the pass edited nodes in place.
    """

    def __init__(self, schedule: Any) -> None:
        super().__init__(schedule)
        self._hashes: dict[int, int] = {}
        self.changed: StepRun | None = None

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self._hashes = {}
        self.changed = None

    def step_started(self, run: StepRun) -> None:
        self._hashes[id(run)] = structural_hash(run.before)

    def step_finished(self, run: StepRun) -> None:
        self.check(run)

    def check(self, run: StepRun) -> None:
        """Note ``run`` as the first step that changed its input, if it did."""
        was = self._hashes.get(id(run))
        if self.changed is None and was is not None and structural_hash(run.before) != was:
            self.changed = run


def record_schedule(spec: PipelineSpec, mod: IRModule) -> Recording:
    """Run ``spec`` on ``mod`` under its context (instruments left out), keeping every step."""
    schedule = resolve_schedule(spec)
    pipeline = spec.build()
    tracker = _InputWatch(schedule)
    ctx = PassContext(opt_level=spec.opt_level, required_pass=spec.required_pass,
                      disabled_pass=spec.disabled_pass, instruments=[tracker],
                      config=dict(spec.config))
    error: BaseException | None = None
    start = time.perf_counter()
    with ctx:
        try:
            pipeline.sequential(mod)
        except Exception as exc:
            failed = tracker.failed_step(exc)
            if failed is None:
                raise
            error = exc
    seconds = time.perf_counter() - start
    runs = list(tracker.runs)
    if error is not None:
        tracker.check(failed)
        runs.append(failed)
    return Recording(runs, error, seconds, dict(tracker.seconds), tracker.changed)


@dataclass
class Bisection:
    """The result of :func:`bisect_pipeline`.

    ``culprit`` is the step to blame (None when every step keeps the program
    intact) and ``breakage`` what is wrong after it; ``steps`` counts the
    passes the schedule runs, ``evaluations`` the evaluations of ``@main``
    beyond the reference; ``checker`` and ``typer`` name the instrument and
    the pass the structural checks used; ``step_seconds`` maps ``id(run)``
    to each finished step's wall time.
    """

    spec: PipelineSpec
    runs: list[StepRun]
    steps: int
    culprit: StepRun | None
    breakage: Breakage | None
    linear: bool
    evaluations: int
    pass_seconds: float
    check_seconds: float
    evaluation_seconds: float
    checker: str = DEFAULT_CHECKER
    typer: str = DEFAULT_TYPER
    step_seconds: Mapping[int, float] = field(default_factory=dict)

    @property
    def before_culprit(self) -> StepRun | None:
        """The step that ran just before the culprit (None when it is the first)."""
        if self.culprit is None:
            return None
        i = next(i for i, r in enumerate(self.runs) if r is self.culprit)
        return self.runs[i - 1] if i else None


class _Checks:
    """The checks applied to a snapshot, with what they cost."""

    def __init__(self, inputs: Sequence[Any], rtol: float, atol: float, checker: str,
                 typer: str) -> None:
        from ..transform.registry import get_registry

        registry = get_registry()
        self.inputs = list(inputs)
        self.rtol = rtol
        self.atol = atol
        # The standard checker remembers the functions it verified, by identity:
        # a snapshot costs only the functions its pass rebuilt.
        self.checker_name = checker
        self.checker = registry.build_instrument(checker, {})
        self.checker.enter_pass_ctx()
        self.typer = typer
        self.infer = registry.build_pass(typer, {})
        self.reference: list[Any] = []
        self.evaluations = 0
        self.check_seconds = 0.0
        self.evaluation_seconds = 0.0
        self._outputs: dict[tuple[tuple[str, int], ...], Breakage | None] = {}

    def structure(self, mod: IRModule, after: str | None) -> Breakage | None:
        """What is structurally wrong with ``mod``, the result of pass ``after`` (None: the input)."""
        start = time.perf_counter()
        try:
            try:
                self._check(mod, after)
            except RelayPassError as exc:
                message = str(exc)
                if after is None:  # the checker blames a pass; here there is none
                    message = message.split(": ", 1)[-1]
                return Breakage("ill_formed", message)
            try:
                with PassContext():
                    self.infer(mod)
            except Exception as exc:
                what = f"the module {after} returned" if after else "the input module"
                return Breakage("ill_typed", f"{self.typer} fails on {what}: {_first_line(exc)}")
            return None
        finally:
            self.check_seconds += time.perf_counter() - start

    def _check(self, mod: IRModule, after: str | None) -> None:
        """Run the checker on ``mod``: its ``check(mod, pass_name)`` when it has one (the
        standard checker does), else what any instrument does after a pass."""
        check = getattr(self.checker, "check", None)
        if callable(check):
            check(mod, after or "")
            return
        from ..transform.pass_info import PassInfo

        self.checker.run_after_pass(mod, PassInfo(0, after or _INPUT))

    def evaluate(self, mod: IRModule) -> list[Any]:
        from ..interp import Interpreter

        start = time.perf_counter()
        try:
            return flatten_outputs(Interpreter(mod).evaluate()(*self.inputs))
        finally:
            self.evaluation_seconds += time.perf_counter() - start

    def outputs(self, mod: IRModule, after: str) -> Breakage | None:
        # A module whose functions are the previous snapshot's (a pass that
        # changed nothing) computes what it computed: evaluated once.
        key = tuple((gv.name_hint, id(f)) for gv, f in mod.items())
        if key in self._outputs:
            return self._outputs[key]
        self.evaluations += 1
        try:
            actual = self.evaluate(mod)
        except Exception as exc:
            result: Breakage | None = Breakage(
                "evaluation", f"evaluating @main after {after} raised {_first_line(exc)}")
        else:
            comparison = compare_outputs(actual, self.reference, rtol=self.rtol, atol=self.atol)
            result = None if comparison.ok else Breakage(
                "output", comparison.summary("the input module"), comparison)
        self._outputs[key] = result
        return result


def bisect_pipeline(spec: PipelineSpec, mod: IRModule, inputs: Sequence[Any], *,
                    rtol: float, atol: float, linear: bool = False,
                    progress: Callable[[str], None] | None = None,
                    checker: str | None = None, typer: str | None = None) -> Bisection:
    """The first step of ``spec``'s schedule after which ``mod`` is broken (module docstring).

    ``inputs`` are the arguments of ``@main``; ``progress`` is told what is
    being done (a status line).  ``checker`` names the registered instrument
    that decides whether a module is well formed (None: ``DEFAULT_CHECKER``;
    its ``check(mod, pass_name)`` is called when it has one, else its
    ``run_after_pass``, and a RelayPassError from it means "ill formed");
    ``typer`` the registered pass that must accept every module (None:
    ``default_typer()``, both of :mod:`relaypass.tools.defaults`).  Both are
    built with their default options.
    Raises :class:`BisectInputError` when ``mod`` itself is ill formed, ill
    typed or cannot be evaluated.
    """
    say = progress or (lambda text: None)
    checker = checker or DEFAULT_CHECKER
    typer = typer or default_typer()
    checks = _Checks(inputs, rtol, atol, checker, typer)
    say("relaypass: bisect: checking the input module")
    problem = checks.structure(mod, None)
    if problem is not None:
        raise BisectInputError(f"the input module cannot be the reference: {problem.message}")
    try:
        checks.reference = checks.evaluate(mod)
    except Exception as exc:
        raise BisectInputError("the input module cannot be the reference: evaluating @main "
                               f"raised {_first_line(exc)}") from exc

    say("relaypass: bisect: running the pipeline")
    recording = record_schedule(spec, mod)
    runs = recording.runs
    steps = len(runnable(resolve_schedule(spec)))

    def result(culprit: int | None, breakage: Breakage | None) -> Bisection:
        return Bisection(spec, runs, steps, runs[culprit] if culprit is not None else None,
                         breakage, linear, checks.evaluations, recording.seconds,
                         checks.check_seconds, checks.evaluation_seconds, checker, typer,
                         recording.step_seconds)

    # A pass that edited its input edited the snapshots before it too: it comes first.
    changed = recording.changed_input
    if changed is not None:
        name = changed.step.name
        return result(next(i for i, r in enumerate(runs) if r is changed), Breakage(
            "changed_input",
            f"pass {name} changed its input in place: the module it was given hashes "
            "differently after it ran (a pass must build new nodes, never edit those it is "
            "given), so the modules of the passes before it changed with it and cannot be "
            "blamed"))

    # Structure, every snapshot in order: cheap, and the first break is exact.
    limit, breakage = len(runs), None
    for i, run in enumerate(runs):
        name = run.step.name
        if run.after is None:
            limit, breakage = i, Breakage("raised", f"{name} raised {_first_line(recording.error)}")
            break
        say(f"relaypass: bisect: checking the module after pass {run.step.index} ({name})")
        problem = checks.structure(run.after, name)
        if problem is not None:
            limit, breakage = i, problem
            break

    # Outputs, over the snapshots before the first structural break.
    def outputs(i: int) -> Breakage | None:
        run = runs[i]
        say(f"relaypass: bisect: evaluating @main after pass {run.step.index} ({run.step.name})")
        return checks.outputs(run.after, run.step.name)

    culprit = limit if breakage is not None else None
    if linear:
        for i in range(limit):
            problem = outputs(i)
            if problem is not None:
                culprit, breakage = i, problem
                break
    elif limit:
        problem = outputs(limit - 1)
        if problem is not None:
            good, bad = -1, limit - 1  # -1: the input module, the reference
            while bad - good > 1:
                mid = (good + bad) // 2
                found = outputs(mid)
                if found is None:
                    good = mid
                else:
                    bad, problem = mid, found
            culprit, breakage = bad, problem

    return result(culprit, breakage)


# The pass name a checker without check() is told for the input module (no pass made it).
_INPUT = "input"


def _first_line(exc: BaseException | None) -> str:
    if exc is None:
        return "an exception"
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__
