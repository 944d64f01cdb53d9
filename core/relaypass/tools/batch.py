"""``relaypass batch PIPELINE MODELS...``: a pipeline on a whole corpus of models, in parallel.

A pass author's question is rarely "does my pass work on this model" but
"does it work on every model we care about, and what did it change".  This
command answers it: every model is read, optimized, checked and timed in a
worker (:mod:`relaypass.tools.batch_engines`: a process pool, or Ray), and
gets one record (:mod:`relaypass.tools.batch_record`) in the JSON-lines
report, written as each model finishes, so an interrupted run loses only the
models that were running and ``--resume`` carries on from the report.

The models are files (``.onnx``, Relay text), folders (searched for
``.onnx`` and ``.relay`` files), text files listing models or folders one
per line, and ``--model-zoo all|NAME`` for the models shipped with the onnx
package.  Everything about the command itself (the pipeline, a path that
does not exist, an unknown engine) is checked before any model runs, and is
one error line with exit status 2; anything about one model is that model's
record.  The exit status is 0 only when every model of the report passed:
ran, and matched its check.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ..errors import RelayPassError
from ..transform.pipeline import PipelineError, parse_pipeline
from .arguments import tolerance
from .batch_engines import ENGINES, make_engine
from .batch_record import CHECKS, STATUSES, model_job, pipeline_description
from .describe import table
from .run_report import pipeline_json, schema_id
from .schedule import resolve_schedule

__all__ = ["BatchError", "BatchReportError", "Progress", "collect_models", "format_seconds",
           "largest_first", "pipeline_argument", "read_report", "register", "run", "summary"]

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-5
EXIT_OK, EXIT_FAILED = 0, 1

#: The model files a folder is searched for (a ``.txt`` file may be a list: given only by name).
MODEL_SUFFIXES = {".onnx": "onnx", ".relay": "relay"}


class BatchError(RelayPassError):
    """A ``relaypass batch`` argument is wrong (a path that does not exist, no models at all)."""


class BatchReportError(RelayPassError):
    """A report given to ``--resume`` or compared cannot be read as one."""


# --- the models ----------------------------------------------------------------------------------
# What only a Relay text model has: a version header, a global function, a function literal.
_RELAY_TEXT = re.compile(r"^\s*(#\[version|def\s+@)|\bfn\s*\(", re.MULTILINE)


def _listed(path: str) -> list[str] | None:
    """The entries of a list file (paths relative to its folder), or None if it is not one.

    A list is a UTF-8 text file naming a model, a folder or another list on
    each line that is not blank or a ``#`` comment; a file that reads as
    Relay text (a ``def @`` or a version header) is a model instead.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    if _RELAY_TEXT.search(text):
        return None
    base = os.path.dirname(path)
    lines = (line.strip() for line in text.splitlines())
    return [os.path.join(base, line) for line in lines if line and not line.startswith("#")]


def collect_models(paths: Sequence[str], zoo: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The jobs of ``paths`` (files, folders, list files) and model-zoo names, each model once."""
    from . import model_zoo

    jobs: list[dict[str, Any]] = []
    seen_lists: set[str] = set()
    stack = [(p, "") for p in reversed(paths)]
    while stack:
        path, listed_in = stack.pop()
        where = f" (listed in {listed_in})" if listed_in else ""
        if os.path.isdir(path):
            found = sorted(os.path.join(root, f) for root, _dirs, files in os.walk(path)
                           for f in files if os.path.splitext(f)[1].lower() in MODEL_SUFFIXES)
            jobs.extend(model_job(f, None, MODEL_SUFFIXES[os.path.splitext(f)[1].lower()])
                        for f in found)
        elif os.path.isfile(path):
            suffix = os.path.splitext(path)[1].lower()
            entries = None if suffix in MODEL_SUFFIXES else _listed(path)
            if entries is None:
                jobs.append(model_job(path, None, MODEL_SUFFIXES.get(suffix, "relay")))
            elif os.path.realpath(path) not in seen_lists:
                seen_lists.add(os.path.realpath(path))
                stack.extend((e, path) for e in reversed(entries))
        else:
            raise BatchError(f"{path}{where}: no such file or folder")
    names = sorted(model_zoo.LIGHT_MODELS) if "all" in zoo else list(zoo)
    for name in names:
        jobs.append(model_job(None, model_zoo.light_model(name).name, "onnx"))
    unique: dict[str, dict[str, Any]] = {}
    for job in jobs:
        unique.setdefault(job["key"], job)
    return list(unique.values())


def largest_first(jobs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``jobs`` in the order to start them: the costliest first, so that no big model starts
    last and runs alone while the other workers idle (VGG-19 takes as long as five small
    models).  The cost is the bytes of a model's weights: a file's size, or for a model-zoo
    model the weights its file gives the shapes of (they are drawn at random when it runs)."""
    from . import model_zoo

    def cost(job: Mapping[str, Any]) -> int:
        if job["zoo"]:
            import numpy as np
            from onnx import numpy_helper

            graph = model_zoo.light_model(job["zoo"]).load().graph
            shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
            drawn = sum(int(np.prod(shapes[n.input[0]])) for n in graph.node
                        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in shapes)
            return 4 * drawn + graph.ByteSize()
        try:
            return os.path.getsize(job["path"])
        except OSError:
            return 0  # its record will say why

    return sorted(jobs, key=cost, reverse=True)


# --- the report ----------------------------------------------------------------------------------
def read_report(path: str, *, partial_last: bool = False) -> list[dict[str, Any]]:
    """The records of the JSON-lines report ``path``.

    With ``partial_last``, a last line that is not JSON (the run was killed
    while writing it) is left out instead of being an error.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchReportError(f"cannot read the report {path}: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    records = []
    for i, (n, line) in enumerate(numbered):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if partial_last and i == len(numbered) - 1:
                break
            raise BatchReportError(f"{path}:{n}: not a JSON line ({exc.msg})") from None
        if not isinstance(record, dict) or not str(record.get("schema", "")).startswith(
                "relaypass.batch/"):
            raise BatchReportError(f"{path}:{n}: not a record of relaypass batch (its schema is "
                                   f"{record.get('schema') if isinstance(record, dict) else None!r}"
                                   f", expected {schema_id('batch')!r})")
        records.append(record)
    return records


def _resume(path: str, pipeline: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records already in ``path`` (rewritten without a torn last line), checked against
    the pipeline about to run."""
    if not os.path.exists(path):
        return []
    records = read_report(path, partial_last=True)
    mine = {k: v for k, v in pipeline.items() if k != "source"}
    for record in records:
        theirs = {k: v for k, v in (record.get("pipeline") or {}).items() if k != "source"}
        if theirs != mine:
            raise BatchReportError(
                f"--resume {path}: the report was written for another pipeline "
                f"({_pipeline_text(theirs)}), not {_pipeline_text(mine)}; give another "
                "--report, or leave out --resume")
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, allow_nan=False) + "\n" for r in records)
    return records


def _pipeline_text(pipeline: Mapping[str, Any]) -> str:
    passes = ", ".join(pipeline.get("schedule") or [])
    return f"{pipeline.get('name')!r} at opt_level {pipeline.get('opt_level')}: {passes}"


# --- progress and summary ------------------------------------------------------------------------
def format_seconds(seconds: float | None) -> str:
    """``0.52 s``, ``3.1 ms``, or ``-`` for a time not taken."""
    if seconds is None:
        return "-"
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def _error_text(record: Mapping[str, Any]) -> str:
    error = record.get("error")
    return f"{error['kind']}: {error['message']}" if error else ""


def _check_text(record: Mapping[str, Any]) -> str:
    checks = record.get("checks") or []
    if not checks:
        return "-"
    worst = max((c.get("max_abs_error") or 0.0 for c in checks), default=0.0)
    verdict = "ok" if all(c["ok"] for c in checks) else "FAILED"
    return f"{verdict} {worst:.2g}"


class Progress:
    """What the user sees while a batch runs: a line rewritten in place on a terminal (done,
    failed, ETA) with failures printed above it; one line per finished model otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.total = total
        self.done = self.failed = 0
        self.start = time.monotonic()
        self._shown = False
        self._last = ""

    def record(self, record: Mapping[str, Any]) -> None:
        self.done += 1
        ok = record["status"] == "ok"
        self.failed += not ok
        line = (f"relaypass: batch [{self.done}/{self.total}] {record['model']['name']}: "
                f"{record['status']} in {format_seconds(record['seconds']['total'])}")
        if not ok and record.get("error"):
            line += f": {_error_text(record)}"
        elif not ok:
            line += f": {_check_text(record)}"
        if not self.tty or not ok:
            self._write(line + "\n")
        self.tick()

    def tick(self) -> None:
        if not self.tty or self.done >= self.total:
            return
        elapsed = time.monotonic() - self.start
        eta = f", ETA {_clock(elapsed / self.done * (self.total - self.done))}" if self.done else ""
        text = (f"relaypass: batch {self.done}/{self.total} done, {self.failed} failed, "
                f"{_clock(elapsed)} elapsed{eta}")
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError, AttributeError):
            width = 80
        if len(text) > width - 1:  # a wrapped line could not be rewritten in place
            text = text[: max(width - 2, 1)] + "…"
        if text != self._last or not self._shown:
            self._last = text
            self._write("\r\x1b[K" + text, transient=True)

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False

    def _write(self, text: str, transient: bool = False) -> None:
        if not transient:
            self.clear()
        self.stream.write(text)
        self.stream.flush()
        self._shown = transient


def summary(records: Sequence[Mapping[str, Any]]) -> str:
    """The table of a report's records, one row per model, and a line of totals."""
    rows = []
    for r in records:
        passes = r.get("passes") or []
        nodes_in = (r.get("input") or {}).get("nodes")
        nodes_out = (r.get("output") or {}).get("nodes")
        nodes = f"{nodes_in} -> {nodes_out}" if nodes_out is not None else \
            (str(nodes_in) if nodes_in is not None else "-")
        error = _error_text(r)
        rows.append((r["model"]["name"], r["status"], format_seconds(r["seconds"].get("import")),
                     f"{format_seconds(r['seconds'].get('passes'))} ({len(passes)})", nodes,
                     _check_text(r), error if len(error) <= 70 else error[:69] + "…"))
    counts = {s: sum(1 for r in records if r["status"] == s) for s in STATUSES}
    totals = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
    head = ("model", "status", "import", "passes (steps)", "nodes", "check", "error")
    n = len(records)
    return (f"{table(head, rows)}\n{n} model{'s' if n != 1 else ''}: {totals or 'none'}"
            if rows else "no models")


# --- the command ---------------------------------------------------------------------------------
def pipeline_argument(text: str, out_dir: str) -> tuple[Any, dict[str, Any]]:
    """A PIPELINE argument (a file, or an inline pipeline): its spec, and the data that
    gives it again in another process (the file's text travels, not its path)."""
    from ..transform.inline_pipeline import parse_inline_pipeline

    if text.lower().endswith(".toml") or os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as fh:
                source = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise PipelineError(text, "", f"cannot read the pipeline file "
                                          f"({getattr(exc, 'strerror', None) or exc})") from None
        return parse_pipeline(source, text, out_dir), {"kind": "file", "text": source,
                                                       "source": text}
    spec = parse_inline_pipeline(text, "PIPELINE", out_dir)
    return spec, {"kind": "inline", "text": text, "source": "PIPELINE"}


def _positive(kind: type) -> Any:
    def convert(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__}, not {text!r}") from None
        if not value > 0 or value == float("inf"):
            raise argparse.ArgumentTypeError(f"expected a number > 0, not {text}")
        return value

    return convert


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add the ``batch`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "batch", parents=list(parents), help="run a pipeline on many models in parallel, "
        "check and time each, write a JSON-lines report",
        description="Run a pipeline on every model given (files, folders, text files listing "
                    "them, --model-zoo), each in a worker process (or a Ray task), check each "
                    "result, and write one JSON line per model to --report. One model's "
                    "failure, crash or timeout never stops the others. Exit 0 only when every "
                    "model ran and passed its check, 1 otherwise (relaypass help corpus).")
    p.add_argument("pipeline", metavar="PIPELINE",
                   help="a pipeline file (PIPELINE.toml) or an inline pipeline "
                        "('InferType,FoldConstant')")
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help="a model (.onnx, or Relay text), a folder (searched for .onnx and "
                        ".relay files), or a text file naming one of those per line")
    p.add_argument("--model-zoo", action="append", default=[], metavar="all|NAME",
                   help="also the models shipped with the onnx package: all of them, or one "
                        "(repeatable)")
    p.add_argument("-j", "--jobs", type=_positive(int), metavar="N",
                   help="models running at once (default: the number of cores; with Ray, the "
                        "cluster's CPUs)")
    p.add_argument("--engine", choices=ENGINES, default="process",
                   help="process: a pool of worker processes on this machine (default); ray: "
                        "Ray tasks on the cluster at RAY_ADDRESS, or a local Ray "
                        "(pip install 'relaypass[ray]')")
    p.add_argument("--report", dest="report_file", metavar="REPORT.jsonl",
                   help="write one JSON line per model here, as each finishes")
    p.add_argument("--resume", action="store_true",
                   help="keep the records already in --report and run only the models it lacks")
    p.add_argument("--check", choices=CHECKS, default="auto",
                   help="compare the result's outputs on seeded inputs with onnxruntime on the "
                        "ONNX model, or with the interpreter on the module as read; auto "
                        "(default): onnxruntime for ONNX models when installed, else interp")
    p.add_argument("--timeout", type=_positive(float), metavar="S",
                   help="give up on a model after S seconds (import, passes and check)")
    p.add_argument("--rtol", type=tolerance, default=DEFAULT_RTOL,
                   help=f"relative tolerance of the checks (default {DEFAULT_RTOL:g})")
    p.add_argument("--atol", type=tolerance, default=DEFAULT_ATOL,
                   help=f"absolute tolerance of the checks (default {DEFAULT_ATOL:g})")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the inputs and of the model-zoo weights (default 0)")
    p.add_argument("--load", action="append", default=[], metavar="FILE.py",
                   help="register the passes this Python file defines, in every worker "
                        "(repeatable)")
    p.add_argument("--out-dir", metavar="DIR",
                   help="the folder the pipeline's instruments may write in (default: the "
                        "current directory)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The ``batch`` command: the summary table goes to ``out`` (default stdout)."""
    from .load import load_pass_file

    out = out or sys.stdout
    if args.resume and not args.report_file:
        raise BatchError("--resume needs --report REPORT.jsonl: the report it carries on from")
    out_dir = args.out_dir or os.getcwd()
    if not os.path.isdir(out_dir):
        raise BatchError(f"--out-dir {out_dir}: not a folder")
    loads = [os.path.abspath(path) for path in args.load]
    for path in loads:
        load_pass_file(path)  # here first: a file that does not load is one error line
    spec, pipeline = pipeline_argument(args.pipeline, out_dir)
    spec.build()  # here first: a pass or instrument that does not build is one error line
    jobs = collect_models(args.models, args.model_zoo)
    if not jobs:
        raise BatchError("no models: give MODEL files or folders, or --model-zoo all|NAME")
    engine = make_engine(args.engine, args.jobs)
    # The passes it runs, so that --resume knows two inline pipelines apart.
    described = pipeline_description(pipeline_json(spec), resolve_schedule(spec))
    settings = {"pipeline": pipeline, "pipeline_json": described, "out_dir": out_dir,
                "loads": loads, "check": args.check, "rtol": args.rtol, "atol": args.atol,
                "seed": args.seed, "timeout": args.timeout, "threads": 0}
    previous = _resume(args.report_file, settings["pipeline_json"]) if args.resume else []
    done = {r["model"]["key"] for r in previous}
    todo = largest_first([job for job in jobs if job["key"] not in done])
    running = min(len(todo), args.jobs or os.cpu_count() or 1)
    # Each worker's share of the cores for BLAS and onnxruntime; a Ray task asks for one CPU.
    settings["threads"] = 1 if args.engine == "ray" else max(1, (os.cpu_count() or 1) // max(running, 1))
    records = {r["model"]["key"]: r for r in previous}
    progress = Progress(len(todo))
    if previous:
        sys.stderr.write(f"relaypass: batch: {len(previous)} model(s) already in {args.report_file}, "
                         f"{len(todo)} to run\n")
    report = open(args.report_file, "a" if args.resume else "w", encoding="utf-8") \
        if args.report_file else None
    start = time.monotonic()

    def on_record(record: dict[str, Any]) -> None:
        records[record["model"]["key"]] = record
        if report is not None:
            report.write(json.dumps(record, allow_nan=False) + "\n")
            report.flush()
        progress.record(record)

    try:
        if todo:
            engine.run(todo, settings, on_record, progress.tick)
    except KeyboardInterrupt:
        progress.clear()
        left = len(todo) - progress.done
        resume = f"; --resume carries on from {args.report_file}" if args.report_file else ""
        sys.stderr.write(f"relaypass: batch: interrupted with {left} model(s) not run{resume}\n")
        raise
    finally:
        progress.clear()
        if report is not None:
            report.close()
    ordered = [records[job["key"]] for job in jobs if job["key"] in records]
    out.write(summary(ordered) + "\n")
    out.flush()
    if todo:
        elapsed = time.monotonic() - start
        sys.stderr.write(f"relaypass: batch: {len(todo)} model(s) in {format_seconds(elapsed)}, "
                         f"{engine.concurrency} at once ({engine.name} engine): "
                         f"{len(todo) / elapsed:.2f} models/s\n")
    return EXIT_OK if all(r["status"] == "ok" for r in ordered) else EXIT_FAILED
