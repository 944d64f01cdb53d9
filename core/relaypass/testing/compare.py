"""Comparing a program's outputs with reference outputs, and saying where they differ most.

A mismatch report is only useful if it points at something: which output,
which element, both values, and how far outside the tolerance.  The CLI's
``--check`` and its model-zoo check both use this, so a failure reads the
same whichever reference it was compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Comparison", "compare_outputs", "flatten_outputs"]


def flatten_outputs(value: Any) -> list[np.ndarray]:
    """The arrays of an interpreter result, in order: tuples (nested too) are flattened."""
    out: list[np.ndarray] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        else:
            out.append(np.asarray(v))
    return out


@dataclass(frozen=True)
class Comparison:
    """How outputs compared with reference outputs, under ``|out - ref| <= atol + rtol * |ref|``.

    ``worst`` names the element furthest outside (or closest to) its allowed
    difference, with both values; ``problem`` is set when the outputs cannot be compared at
    all (different counts, shapes or NaN patterns).
    """

    ok: bool
    max_abs_diff: float
    worst: str
    rtol: float
    atol: float
    outputs: int
    problem: str = ""

    def summary(self, reference: str) -> str:
        """One line saying how the outputs compare with ``reference`` (e.g. "onnxruntime")."""
        tol = f"rtol {self.rtol:g}, atol {self.atol:g}"
        if self.problem:
            return f"outputs cannot be compared with {reference}: {self.problem}"
        one = self.outputs == 1
        what = "the output" if one else f"all {self.outputs} outputs"
        if self.ok:
            return f"{what} {'matches' if one else 'match'} {reference} within {tol} (largest difference {self.max_abs_diff:.3g})"
        what = "the output" if one else "the outputs"
        return (f"{what} {'differs' if one else 'differ'} from {reference} beyond {tol}: largest difference "
                f"{self.max_abs_diff:.3g}; furthest outside the tolerance at {self.worst}")


def compare_outputs(actual: Sequence[Any], reference: Sequence[Any], rtol: float,
                    atol: float) -> Comparison:
    """Compare ``actual`` arrays with ``reference`` arrays, element by element."""
    if len(actual) != len(reference):
        return Comparison(False, float("inf"), "", rtol, atol, len(reference),
                          f"{len(actual)} outputs, expected {len(reference)}")
    worst_excess = -np.inf
    worst = ""
    max_abs = 0.0
    for i, (a, r) in enumerate(zip(actual, reference)):
        a = np.asarray(a)
        r = np.asarray(r)
        if a.shape != r.shape:
            return Comparison(False, float("inf"), "", rtol, atol, len(reference),
                              f"output {i} has shape {a.shape}, expected {r.shape}")
        if a.size == 0:
            continue
        a64 = a.astype(np.float64)
        r64 = r.astype(np.float64)
        nan_a, nan_r = np.isnan(a64), np.isnan(r64)
        if (nan_a != nan_r).any():
            idx = np.unravel_index(int(np.argmax(nan_a != nan_r)), a.shape)
            return Comparison(False, float("nan"), "", rtol, atol, len(reference),
                              f"{_at(i, idx, a)} is {_num(a[idx])} where the reference is {_num(r[idx])}")
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities differ by nothing
            diff = np.where(nan_a | (a64 == r64), 0.0, np.abs(a64 - r64))
        excess = diff - (atol + rtol * np.abs(np.where(nan_r, 0.0, r64)))
        k = int(np.argmax(excess))
        max_abs = max(max_abs, float(diff.max()))
        if excess.flat[k] > worst_excess:
            worst_excess = float(excess.flat[k])
            idx = np.unravel_index(k, a.shape)
            worst = f"{_at(i, idx, a)}: {_num(a[idx])} vs {_num(r[idx])}"
    ok = worst_excess <= 0
    return Comparison(ok, max_abs, worst, rtol, atol, len(reference))


def _at(i: int, idx: tuple[int, ...], a: np.ndarray) -> str:
    return f"output {i}[{', '.join(str(int(j)) for j in idx)}]" if a.ndim else f"output {i}"


def _num(v: np.generic) -> str:
    x = v.item()
    return f"{x:.7g}" if isinstance(x, float) else repr(x)
