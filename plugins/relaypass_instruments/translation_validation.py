"""Translation validation: run the program around every pass and stop at the first that changes its outputs.

A pass that miscompiles usually produces a perfectly well-formed module; the
only symptom is a wrong number, found (if ever) at the end of a long
pipeline.  This instrument evaluates the module's ``@main`` with the numpy
interpreter on seeded random inputs whenever a pass changed the module, and
compares with the outputs before that pass, so the error names the pass
responsible, the largest difference and where it is.

Which pass is responsible.  Without ``passes`` every change is checked and
blamed on the innermost pass running when it was made: the module is
compared at each before/after event with the module at the previous event.
After a pass that ran no other pass (a leaf) that is exactly what the pass
did; a Sequential hands its input to its first member and returns its last
member's output, so it never has a change of its own to answer for; a pass
that edits the module and then runs another pass itself is blamed for its
own edits when the inner pass starts ("during").  Changes the caller makes
between two top-level pass calls are nobody's: the next pass is compared
with what it was given.  With ``passes``, each run of a named pass is
validated as a whole, from its start to its end, inner passes included; so
naming a Sequential validates it as one step.

Cost.  A module is evaluated only when its functions differ (by identity)
from those of the module last evaluated, so a pass that changes nothing
costs a tuple comparison, and the "after" of one pass is the "before" of the
next.

What can be compared.  Inputs come from ``@main``'s parameter annotations
(:func:`relaypass.testing.random_inputs`: tensors and tuples of tensors;
input set ``k`` uses ``seed + k``).  Results are flattened: tuples field by
field, references to what they hold; closures are compared only as being
closures.  A module whose ``@main`` is missing, has a parameter that is not a
tensor or a tuple of tensors, or that the interpreter cannot run is not
validated (``validator.skipped`` says which and why), and the next module that
can be run becomes the reference.  Once a module could be run, a later
module that cannot (``@main`` gone, parameters changed, evaluation raising)
is an error of the pass that made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from relaypass.errors import RelayPassError
from relaypass.interp import Closure, Interpreter, RefValue
from relaypass.ir.expr import Function
from relaypass.testing.inputs import random_inputs
from relaypass.transform.instrument import PassInstrument

from .options import InstrumentOptionError, count, pass_names

__all__ = ["TranslationValidationError", "TranslationValidator"]

_NAME = "TranslationValidator"


class TranslationValidationError(RelayPassError):
    """A pass changed what ``@main`` computes.

    ``pass_name``: the pass to blame; ``when``: "after" it ran, or "during" it
    (in the module it handed to ``next_pass``, a pass it runs itself);
    ``reason``: what differs, in words.  For a difference in values:
    ``max_abs_diff``, ``output_index`` (in the flattened outputs),
    ``element_index`` (a tuple, ``()`` for a scalar), ``actual`` and
    ``expected`` (after and before the pass); otherwise those are None.
    ``rtol``, ``atol``, ``seed`` and ``input_set`` say how it was compared
    (the inputs were ``random_inputs(module, seed + input_set)``).
    """

    def __init__(
        self,
        pass_name: str,
        when: str,
        next_pass: str | None,
        reason: str,
        rtol: float,
        atol: float,
        seed: int,
        input_set: int | None = None,
        max_abs_diff: float | None = None,
        output_index: int | None = None,
        element_index: tuple[int, ...] | None = None,
        actual: Any = None,
        expected: Any = None,
    ) -> None:
        self.pass_name = pass_name
        self.when = when
        self.next_pass = next_pass
        self.reason = reason
        self.rtol = rtol
        self.atol = atol
        self.seed = seed
        self.input_set = input_set
        self.max_abs_diff = max_abs_diff
        self.output_index = output_index
        self.element_index = element_index
        self.actual = actual
        self.expected = expected
        where = (f"after pass {pass_name}" if when == "after" else
                 f"during pass {pass_name} (in the module it handed to {next_pass})")
        inputs = "" if input_set is None else f" (on random_inputs(mod, seed={seed + input_set}))"
        super().__init__(f"{where}: {reason}{inputs}")


@dataclass(frozen=True)
class _Run:
    """One module evaluated on every input set: the outputs, or why there are none."""

    param_types: tuple[Any, ...] | None
    outputs: tuple[tuple[Any, ...], ...] | None
    problem: str = ""


_CLOSURE = "a closure"


class TranslationValidator(PassInstrument):
    """Raise :class:`TranslationValidationError` at the first pass that changes ``@main``'s outputs.

    ``seed`` seeds the random inputs; ``rtol`` and ``atol`` the tolerance
    ``|after - before| <= atol + rtol * |before|``; ``passes``: validate each
    run of these passes as a whole (empty: every change, blamed on the
    innermost pass that made it); ``inputs``: how many sets of random inputs.
    The options' defaults are the manifest's (the registry gives every
    declared option).
    """

    def __init__(
        self,
        *,
        seed: int,
        rtol: float,
        atol: float,
        passes: Any,
        inputs: int,
    ) -> None:
        self._seed = count(_NAME, "seed", seed)
        self._rtol = _tolerance("rtol", rtol)
        self._atol = _tolerance("atol", atol)
        self._passes = pass_names(_NAME, "passes", passes) if passes else frozenset()
        self._inputs = count(_NAME, "inputs", inputs)
        if self._inputs < 1:
            raise InstrumentOptionError(f"{_NAME}: option 'inputs' must be at least 1")
        #: (pass name, reason) for each module that could not be evaluated, so the pass
        #: that produced it (or, before any pass, that got it) was not validated.
        self.skipped: list[tuple[str, str]] = []
        self._contexts = 0
        self._reset()

    def _reset(self) -> None:
        # The module last evaluated (its functions, by identity) and its run.
        self._last_key: tuple[Any, ...] | None = None
        self._last: _Run | None = None
        # Passes running, innermost last; with ``passes``, each with its starting run.
        self._running: list[tuple[str, _Run | None]] = []

    # --- hooks ----------------------------------------------------------------------
    def enter_pass_ctx(self) -> None:
        self._contexts += 1

    def exit_pass_ctx(self) -> None:
        self._contexts = max(self._contexts - 1, 0)
        if self._contexts == 0:
            self._reset()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        name = info.name
        if self._passes:
            start = None
            if name in self._passes:
                start = self._evaluate(mod)
                if start.outputs is None:
                    self.skipped.append((name, start.problem))
            self._running.append((name, start))
            return
        running = self._running
        if running:
            self._observe(mod, running[-1][0], "during", name)
        else:
            self._observe(mod, None, "before", name)
        running.append((name, None))

    def run_after_pass(self, mod: Any, info: Any) -> None:
        name = info.name
        start = self._running.pop()[1] if self._running else None
        if self._passes:
            if name in self._passes and start is not None and start.outputs is not None:
                self._compare(start, self._evaluate(mod), name, "after", None)
            return
        self._observe(mod, name, "after", None)

    # --- checking -------------------------------------------------------------------
    def _observe(self, mod: Any, blame: str | None, when: str, next_pass: str | None) -> None:
        """Compare ``mod`` with the module at the previous event, blaming ``blame`` for a change."""
        if _key(mod) == self._last_key:
            return
        before = self._last
        after = self._evaluate(mod)
        if before is None or before.outputs is None:
            if after.outputs is None:
                self.skipped.append((blame or next_pass or "", after.problem))
            return
        if blame is not None:
            self._compare(before, after, blame, when, next_pass)

    def _evaluate(self, mod: Any) -> _Run:
        key = _key(mod)
        if key != self._last_key or self._last is None:
            self._last_key, self._last = key, _run(mod, self._seed, self._inputs)
        return self._last

    def _compare(self, before: _Run, after: _Run, name: str, when: str,
                 next_pass: str | None) -> None:
        def fail(reason: str, input_set: int | None = None, **values: Any) -> TranslationValidationError:
            return TranslationValidationError(name, when, next_pass, reason, self._rtol,
                                              self._atol, self._seed, input_set, **values)

        if after.param_types is not None and before.param_types != after.param_types:
            raise fail(f"@main's parameters changed from ({_types(before.param_types)}) "
                       f"to ({_types(after.param_types)})")
        if after.outputs is None:
            raise fail(f"@main could be run before but not after: {after.problem}")
        assert before.outputs is not None
        for k, (was, now) in enumerate(zip(before.outputs, after.outputs)):
            problem = _difference(was, now, self._rtol, self._atol)
            if problem is not None:
                reason, values = problem
                raise fail(reason, k, **values)


def _tolerance(option: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise InstrumentOptionError(
            f"{_NAME}: option {option!r} must be a non-negative number, not {value!r}")
    return float(value)


def _key(mod: Any) -> tuple[Any, ...]:
    """The module's functions by identity: equal keys mean the same program."""
    return tuple(mod.items())


def _types(types: tuple[Any, ...] | None) -> str:
    return ", ".join("?" if t is None else t.astext() for t in types or ())


def _run(mod: Any, seed: int, inputs: int) -> _Run:
    """Evaluate ``mod``'s @main on ``inputs`` sets of random inputs."""
    if "main" not in mod:
        return _Run(None, None, "the module has no @main")
    main = mod["main"]
    if not isinstance(main, Function):
        return _Run(None, None, "@main is not a Relay function")
    params = tuple(p.type_annotation for p in main.params)
    try:
        arguments = [random_inputs(mod, seed + k) for k in range(inputs)]
    except TypeError as exc:
        return _Run(params, None, f"no random inputs can be drawn for @main: {exc}")
    outputs = []
    try:
        with np.errstate(all="ignore"):
            interp = Interpreter(mod)
            for args in arguments:
                outputs.append(_leaves(interp.evaluate()(*args)))
    except Exception as exc:  # what the interpreter cannot run is reported, not raised
        return _Run(params, None, f"the interpreter cannot run @main: {type(exc).__name__}: {exc}")
    return _Run(params, tuple(outputs))


def _leaves(value: Any) -> tuple[Any, ...]:
    """The comparable parts of a result, in order: arrays, and closures as a marker."""
    out: list[Any] = []
    stack = [value]
    seen: set[int] = set()
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(reversed(v))
        elif isinstance(v, RefValue):
            if id(v) not in seen:  # a reference that (indirectly) holds itself
                seen.add(id(v))
                stack.append(v.value)
        elif isinstance(v, Closure):
            out.append(_CLOSURE)
        else:
            out.append(np.asarray(v))
    return tuple(out)


def _difference(was: tuple[Any, ...], now: tuple[Any, ...], rtol: float,
                atol: float) -> tuple[str, dict[str, Any]] | None:
    """How the outputs ``now`` differ from ``was`` beyond the tolerance; None when they agree.

    Of the elements outside the tolerance, the one with the largest absolute
    difference is reported (a NaN where there was none, or the reverse, counts
    as an infinite difference).
    """
    if len(was) != len(now):
        return f"@main returns {len(now)} value(s) where it returned {len(was)}", {}
    worst: tuple[float, int, tuple[int, ...], Any, Any] | None = None
    for i, (b, a) in enumerate(zip(was, now)):
        if isinstance(b, str) or isinstance(a, str):
            if not (isinstance(b, str) and isinstance(a, str)):
                kinds = (b if isinstance(b, str) else "a tensor", a if isinstance(a, str) else "a tensor")
                return f"output {i} is {kinds[1]} where it was {kinds[0]}", {"output_index": i}
            continue
        if a.shape != b.shape:
            return (f"output {i} has shape {tuple(a.shape)} where it had shape {tuple(b.shape)}",
                    {"output_index": i})
        if a.dtype != b.dtype:
            return (f"output {i} has dtype {a.dtype} where it had dtype {b.dtype}",
                    {"output_index": i})
        if a.size == 0:
            continue
        a64 = a.astype(np.float64)
        b64 = b.astype(np.float64)
        nan_a, nan_b = np.isnan(a64), np.isnan(b64)
        with np.errstate(invalid="ignore"):
            diff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))  # equal infinities: no difference
        diff = np.where(nan_a & nan_b, 0.0, np.where(nan_a | nan_b, np.inf, diff))
        diff = np.where(np.isnan(diff), np.inf, diff)  # inf vs -inf
        allowed = atol + rtol * np.abs(np.where(nan_b, 0.0, b64))
        outside = diff > allowed
        if not outside.any():
            continue
        k = int(np.argmax(np.where(outside, diff, -1.0)))
        d = float(diff.flat[k])
        if worst is None or d > worst[0]:
            idx = tuple(int(j) for j in np.unravel_index(k, a.shape))
            worst = (d, i, idx, a[idx].item(), b[idx].item())
    if worst is None:
        return None
    d, i, idx, actual, expected = worst
    element = f"[{', '.join(map(str, idx))}]" if idx else "(a scalar)"
    reason = (f"@main's outputs changed: largest absolute difference {_num(d)} at output {i}, "
              f"element {element}: {_num(actual)} after, {_num(expected)} before "
              f"(tolerance rtol={rtol:g}, atol={atol:g})")
    return reason, {"max_abs_diff": d, "output_index": i, "element_index": idx,
                    "actual": actual, "expected": expected}


def _num(x: Any) -> str:
    return f"{x:.7g}" if isinstance(x, float) else repr(x)
