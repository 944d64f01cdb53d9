"""``relaypass compare-reports A B``: what changed between two runs, model by model and pass by pass.

The question after changing a pass is "what did that do to the corpus":
which models got slower or faster, which lost or gained nodes, which check
broke or got fixed.  A report is any kind relaypass writes: the document
of ``relaypass run --json`` (one model), the record of ``relaypass run
--report FILE.json`` (one model, as a batch record), or the JSON lines of
``relaypass batch --report`` (one record per model).  Models are paired by their key
(the model-zoo name or the path); two one-model reports are paired whatever
their models, since comparing them is what the user asked.

Node counts, statuses and checks are compared exactly.  Times are noisy, so
a time counts as changed only when it moved by more than ``--time-threshold``
(relative, default 20 %) and by at least a millisecond.  The exit status is 1
when a model that passed in A does not pass in B (a regression), else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .batch import BatchReportError, format_seconds, read_report
from .describe import table

__all__ = ["Comparison", "ModelResult", "compare", "load_report", "register", "render", "run"]

DEFAULT_TIME_THRESHOLD = 0.2
#: Below this difference (seconds), a time never counts as changed, whatever the ratio.
TIME_FLOOR = 1e-3
EXIT_OK, EXIT_REGRESSED = 0, 1


@dataclass
class ModelResult:
    """What a report says about one model, whichever kind of report it is."""

    key: str
    name: str
    status: str
    seconds: float | None  # the pipeline's wall time
    nodes_in: int | None
    nodes_out: int | None
    check_ok: bool | None  # None: not checked
    max_abs_error: float | None
    error: str
    passes: list[Mapping[str, Any]] = field(default_factory=list)


def _checks(checks: Sequence[Mapping[str, Any]]) -> tuple[bool | None, float | None]:
    if not checks:
        return None, None
    errors = [c["max_abs_error"] for c in checks if c.get("max_abs_error") is not None]
    return all(c.get("ok") for c in checks), max(errors) if errors else None


def _error_text(error: Mapping[str, Any] | None) -> str:
    return f"{error.get('kind')}: {error.get('message')}" if error else ""


def _from_batch(record: Mapping[str, Any]) -> ModelResult:
    ok, worst = _checks(record.get("checks") or [])
    model = record.get("model") or {}
    return ModelResult(
        key=str(model.get("key")), name=str(model.get("name")), status=str(record.get("status")),
        seconds=(record.get("seconds") or {}).get("passes"),
        nodes_in=(record.get("input") or {}).get("nodes"),
        nodes_out=(record.get("output") or {}).get("nodes"), check_ok=ok, max_abs_error=worst,
        error=_error_text(record.get("error")), passes=list(record.get("passes") or []))


def _from_run(doc: Mapping[str, Any]) -> ModelResult:
    model = doc.get("model") or {}
    key = f"zoo:{model['zoo']}" if model.get("zoo") else str(model.get("path"))
    ok, worst = _checks(doc.get("checks") or [])
    status = "error" if doc.get("error") else "check_failed" if ok is False else "ok"
    return ModelResult(
        key=key, name=model.get("zoo") or str(model.get("path")), status=status,
        seconds=doc.get("seconds"), nodes_in=(doc.get("input") or {}).get("nodes"),
        nodes_out=(doc.get("output") or {}).get("nodes"), check_ok=ok, max_abs_error=worst,
        error=_error_text(doc.get("error")), passes=list(doc.get("passes") or []))


def load_report(path: str) -> dict[str, ModelResult]:
    """The models of a ``run --json`` document, a ``run --report`` record or a ``batch`` report,
    by key."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchReportError(f"cannot read the report {path}: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None  # JSON lines, or not JSON at all: read_report says which
    if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("relaypass.run/"):
        result = _from_run(doc)
        return {result.key: result}
    if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("relaypass.batch/"):
        result = _from_batch(doc)  # one record (run --report), on one line or several
        return {result.key: result}
    if isinstance(doc, dict) and "schema" in doc:
        raise BatchReportError(f"{path}: a {doc['schema']} document; compare-reports reads "
                               "the documents of relaypass run --json, and the reports of "
                               "relaypass run --report and relaypass batch")
    results = [_from_batch(r) for r in read_report(path)]
    return {r.key: r for r in results}


# --- comparing -----------------------------------------------------------------------------------
@dataclass
class Comparison:
    """What changed from report A to report B."""

    only_a: list[str]
    only_b: list[str]
    #: (model A, model B, lines saying what changed; empty when nothing did)
    pairs: list[tuple[ModelResult, ModelResult, list[str]]]
    threshold: float

    @property
    def regressions(self) -> list[str]:
        """The models that passed in A and do not in B."""
        return [b.name for a, b, _ in self.pairs if a.status == "ok" and b.status != "ok"]


def _time_changed(a: float | None, b: float | None, threshold: float) -> bool:
    if a is None or b is None:
        return False
    return abs(b - a) >= TIME_FLOOR and abs(b - a) > threshold * a


def _time_text(a: float | None, b: float | None) -> str:
    change = f" ({(b - a) / a:+.0%})" if a and b is not None else ""
    return f"{format_seconds(a)} -> {format_seconds(b)}{change}"


def _ops_text(a: Mapping[str, int] | None, b: Mapping[str, int] | None, most: int = 4) -> str:
    a, b = a or {}, b or {}
    moved = [(name, a.get(name, 0), b.get(name, 0)) for name in sorted({*a, *b})
             if a.get(name, 0) != b.get(name, 0)]
    shown = ", ".join(f"{name} {x} -> {y}" for name, x, y in moved[:most])
    return shown + (f", {len(moved) - most} more" if len(moved) > most else "")


def _pass_changes(a: ModelResult, b: ModelResult, threshold: float) -> list[str]:
    """One line per pass whose result or time changed; steps pair by name and occurrence."""

    def keyed(steps: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], Mapping[str, Any]]:
        seen: dict[str, int] = {}
        out = {}
        for step in steps:
            n = seen[step["name"]] = seen.get(step["name"], 0) + 1
            out[(step["name"], n)] = step
        return out

    steps_a, steps_b = keyed(a.passes), keyed(b.passes)
    lines = []
    for key in [*steps_b, *(k for k in steps_a if k not in steps_b)]:
        sa, sb = steps_a.get(key), steps_b.get(key)
        label = f"{key[0]}" + (f" (run {key[1]})" if key[1] > 1 else "")
        if sa is None or sb is None:
            lines.append(f"{label}: {'only in B' if sa is None else 'only in A'}")
            continue
        what = []
        if sa.get("status") != sb.get("status"):
            what.append(f"{sa.get('status')} -> {sb.get('status')}")
        if sa.get("nodes_after") != sb.get("nodes_after"):
            what.append(f"nodes after {sa.get('nodes_after')} -> {sb.get('nodes_after')}")
        ops = _ops_text(sa.get("ops_after"), sb.get("ops_after"))
        if ops:
            what.append(f"ops {ops}")
        if sa.get("changed") != sb.get("changed") and None not in (sa.get("changed"),
                                                                   sb.get("changed")):
            what.append("now changes the module" if sb.get("changed") else
                        "no longer changes the module")
        if _time_changed(sa.get("seconds"), sb.get("seconds"), threshold):
            what.append(_time_text(sa.get("seconds"), sb.get("seconds")))
        if what:
            lines.append(f"{label}: {'; '.join(what)}")
    return lines


def compare(a: Mapping[str, ModelResult], b: Mapping[str, ModelResult],
            threshold: float = DEFAULT_TIME_THRESHOLD) -> Comparison:
    """Pair the models of two reports and list what changed for each."""
    if len(a) == 1 and len(b) == 1:
        pairs_keys = [(next(iter(a)), next(iter(b)))]
        only_a: list[str] = []
        only_b: list[str] = []
    else:
        pairs_keys = [(k, k) for k in a if k in b]
        only_a = [a[k].name for k in a if k not in b]
        only_b = [b[k].name for k in b if k not in a]
    pairs = []
    for ka, kb in pairs_keys:
        ma, mb = a[ka], b[kb]
        lines = []
        if ma.status != mb.status:
            lines.append(f"status {ma.status} -> {mb.status}" +
                         (f": {mb.error}" if mb.error else ""))
        if ma.nodes_out != mb.nodes_out:
            lines.append(f"nodes out {ma.nodes_out} -> {mb.nodes_out}")
        if ma.check_ok != mb.check_ok or ma.max_abs_error != mb.max_abs_error:
            lines.append(f"check {_check_text(ma)} -> {_check_text(mb)}")
        if _time_changed(ma.seconds, mb.seconds, threshold):
            lines.append(f"passes {_time_text(ma.seconds, mb.seconds)}")
        lines.extend("  " + line for line in _pass_changes(ma, mb, threshold))
        pairs.append((ma, mb, lines))
    return Comparison(only_a, only_b, pairs, threshold)


def _check_text(m: ModelResult) -> str:
    if m.check_ok is None:
        return "none"
    worst = "-" if m.max_abs_error is None else f"{m.max_abs_error:.3g}"
    return f"{'ok' if m.check_ok else 'FAILED'} (max abs error {worst})"


def render(comparison: Comparison, name_a: str, name_b: str) -> str:
    """The comparison as the command prints it."""
    c = comparison
    out = [f"compare-reports: {name_a} -> {name_b}: {len(c.pairs)} model(s) in both"]
    if c.only_a:
        out.append(f"only in A ({len(c.only_a)}): {', '.join(c.only_a)}")
    if c.only_b:
        out.append(f"only in B ({len(c.only_b)}): {', '.join(c.only_b)}")
    rows = [(a.name, f"{a.status} -> {b.status}" if a.status != b.status else b.status,
             _time_text(a.seconds, b.seconds),
             f"{a.nodes_out} -> {b.nodes_out}" if a.nodes_out != b.nodes_out else
             str(b.nodes_out), _check_text(b))
            for a, b, lines in c.pairs if lines]
    if rows:
        out.append(table(("model", "status", "passes time", "nodes out", "check in B"), rows))
        for _, b, lines in c.pairs:
            if lines:
                out.append(f"{b.name}:")
                out.extend(f"  {line}" for line in lines)
    same = sum(1 for *_, lines in c.pairs if not lines)
    total_a = sum(a.seconds or 0.0 for a, _, _ in c.pairs)
    total_b = sum(b.seconds or 0.0 for _, b, _ in c.pairs)
    out.append(f"{same} model(s) unchanged (times within {c.threshold:.0%}); pass time of the "
               f"models in both {_time_text(total_a, total_b)}")
    if c.regressions:
        out.append(f"regressions: {len(c.regressions)} model(s) passed in A and do not in B: "
                   f"{', '.join(c.regressions)}")
    return "\n".join(out)


# --- the command ---------------------------------------------------------------------------------
def _fraction(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction (0.2) or a percentage (20%), "
                                         f"not {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, not {text}")
    return value


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add the ``compare-reports`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "compare-reports", parents=list(parents),
        help="what changed between two reports (run --json documents or batch reports)",
        description="Compare two reports model by model and pass by pass: statuses, node and "
                    "operator counts, checks, and times that moved by more than "
                    "--time-threshold. Exit 1 when a model that passed in A does not pass in "
                    "B, else 0.")
    p.add_argument("a", metavar="A", help="the report before (run --json, or batch --report)")
    p.add_argument("b", metavar="B", help="the report after")
    p.add_argument("--time-threshold", type=_fraction, default=DEFAULT_TIME_THRESHOLD,
                   metavar="F",
                   help=f"report a time only when it moved by more than this fraction (0.2 or "
                        f"20%%; default {DEFAULT_TIME_THRESHOLD:g}) and by at least 1 ms")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``compare-reports`` command: prints the comparison on ``out`` (default stdout)."""
    out = out or sys.stdout
    comparison = compare(load_report(args.a), load_report(args.b), args.time_threshold)
    out.write(render(comparison, args.a, args.b) + "\n")
    return EXIT_REGRESSED if comparison.regressions else EXIT_OK
