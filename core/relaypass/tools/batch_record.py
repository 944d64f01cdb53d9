"""One model of ``relaypass batch``: read it, run the pipeline, check it, and say so as a record.

A record is the JSON line the batch report holds for one model.  It is made
here, in the worker process (or the Ray task) that ran the model, from plain
data in and plain data out (a *job*: which model; *settings*: the pipeline,
the check, the seed, the same for every model), so that the process pool
and Ray give the same record for the same model.  Its pieces are those of
``run --json`` (:mod:`relaypass.tools.run_report`): the same per-pass
steps, node and operator counts, check and error objects.

Whatever goes wrong with one model (a file that is not a model, an
importer or a pass that raises, a failed check) ends up in its record,
never as an exception out of :func:`run_model`.  Only what stops the
worker itself, a crash or a pass that blocks past ``--timeout``, is
recorded by the engine, with :func:`failure_record`.

A soft deadline is kept here: where the platform has ``SIGALRM`` and the
model runs on the main thread, a timer raises :class:`ModelTimeoutError` at
the deadline inside whatever Python code is running (a pass, the
interpreter), so the record says which pass it was, with the steps that ran
before.  Code that does not return to Python (a long C call, blocked
signals) is stopped by the engine, which kills the worker a little later.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import RelayPassError
from ..transform.context import PassContext
from ..transform.pipeline import parse_pipeline
from .run_report import (
    ModuleCounter,
    RunRecorder,
    comparison_json,
    error_json,
    schema_id,
    steps_json,
)
from .schedule import resolve_schedule, runnable

__all__ = ["CHECKS", "STATUSES", "BatchModelError", "ModelTimeoutError", "WorkerCrashError",
           "base_record", "failure_record", "model_job", "pipeline_description", "read_spec",
           "record_status", "run_model", "warm_up", "warm_up_reading"]

#: The values of ``--check``: ``auto`` is onnxruntime for ONNX models when it is installed,
#: else the interpreter on the module before the pipeline.
CHECKS = ("auto", "interp", "onnxruntime", "none")

#: A record's ``status``: "ok" is the only one that passes.
STATUSES = ("ok", "check_failed", "error", "timeout", "crashed")


class BatchModelError(RelayPassError):
    """A model of a batch cannot be run as asked (an onnxruntime check of a Relay text model)."""


class ModelTimeoutError(RelayPassError):
    """A model took longer than ``--timeout``."""


class WorkerCrashError(RuntimeError):
    """The process running a model died before it gave a result (a crash, a kill, ``os._exit``).

    Not a :class:`~relaypass.errors.RelayPassError`: a crash is a bug (of a
    pass, or of native code it calls), not bad input, and its record says so
    (``"input_error": false``).
    """


def read_spec(settings: Mapping[str, Any]) -> Any:
    """The pipeline the settings carry, validated (its text travels, so a Ray node needs no file)."""
    pipeline = settings["pipeline"]
    out_dir = settings.get("out_dir") or os.getcwd()
    if pipeline["kind"] == "inline":
        from ..transform.inline_pipeline import parse_inline_pipeline

        return parse_inline_pipeline(pipeline["text"], "PIPELINE", out_dir)
    return parse_pipeline(pipeline["text"], pipeline["source"], out_dir)


def warm_up_reading(fmt: str) -> None:
    """Import what reading a model of format ``fmt`` needs and load the operator sets, so that
    a record's import time is the model's own, not the process's first use of the reader.
    The IR is imported here, not at module level: the CLI's listing commands import this
    module and must start without the IR or numpy."""
    from ..ir.op import Op

    if fmt == "onnx":
        from ..frontend import from_onnx  # noqa: F401
    else:
        from ..ir.text.parser import parse  # noqa: F401
    Op.list_op_names()


def warm_up(settings: Mapping[str, Any]) -> None:
    """Import what running a model needs (the parser, the importer, the interpreter, the
    pipeline's plugins), so that the first model's import time is not the worker's start-up."""
    import importlib.util

    from ..interp import Interpreter  # noqa: F401

    warm_up_reading("relay")
    if importlib.util.find_spec("onnx") is not None:
        warm_up_reading("onnx")
    read_spec(settings).build()


def model_job(path: str | None, zoo: str | None, fmt: str) -> dict[str, Any]:
    """What a record says about its model (and how a worker finds it).

    A model-zoo model is keyed ``zoo:NAME``; a file by its path, shown
    relative to the current folder when it lies below it (absolute
    otherwise), so that two runs from the same checkout key it alike.
    """
    if zoo:
        return {"key": f"zoo:{zoo}", "name": zoo, "path": None, "zoo": zoo, "format": "onnx"}
    assert path is not None
    full = os.path.abspath(path)
    rel = os.path.relpath(full)
    shown = full if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel
    return {"key": shown, "name": shown, "path": shown, "zoo": None, "format": fmt}


def pipeline_description(pipeline: Mapping[str, Any], schedule: Any) -> dict[str, Any]:
    """A record's ``pipeline``: ``run --json``'s description and the passes its schedule runs
    (two inline pipelines differ by them alone; ``--resume`` tells them apart so)."""

    names = None if schedule is None else [s.name for s in runnable(schedule)]
    return {**pipeline, "schedule": names}


def record_status(record: Mapping[str, Any]) -> str:
    """A finished record's ``status``: its error's kind, else whether every check passed."""
    error = record.get("error")
    if error is not None:
        return "timeout" if error.get("kind") == ModelTimeoutError.__name__ else "error"
    return "ok" if all(c["ok"] for c in record.get("checks") or ()) else "check_failed"


def base_record(job: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """A record with what is known before the model runs; the other fields are null."""
    from .. import __version__

    return {
        "schema": schema_id("batch"), "relaypass": __version__,
        "model": {key: job.get(key) for key in ("key", "name", "path", "zoo", "format")},
        "pipeline": settings["pipeline_json"], "check": settings["check"], "status": None,
        "seconds": {"import": None, "passes": None, "check": None, "total": None},
        "input": None, "output": None, "passes": [], "checks": [], "error": None,
    }


def failure_record(job: Mapping[str, Any], settings: Mapping[str, Any], status: str,
                   exc: BaseException, seconds: float | None) -> dict[str, Any]:
    """The record of a model whose worker gave no result: ``status`` "timeout" or "crashed"."""
    record = base_record(job, settings)
    record["status"] = status
    record["seconds"]["total"] = seconds
    record["error"] = error_json(exc, _message(exc))
    return record


def run_model(job: Mapping[str, Any], settings: Mapping[str, Any],
              stage: Any = None) -> dict[str, Any]:
    """Run the settings' pipeline on the job's model: its record (never raises for the model).

    ``stage(text)``, when given, hears what the model is doing ("import",
    "pass 3 FoldConstant", "check"): the process engine names it when it
    has to kill a worker.
    """
    record = base_record(job, settings)
    counter = ModuleCounter()
    say = stage or (lambda text: None)
    start = time.perf_counter()
    recorder = None
    try:
        with _deadline(settings.get("timeout"), job):
            say("import")
            mod, onnx_model, feeds, record["seconds"]["import"] = _read_model(job, settings)
            record["input"] = counter.counts(mod)
            check = _check_kind(settings["check"], job, onnx_model)
            record["check"] = check
            inputs = _inputs(mod, feeds, settings) if check != "none" else []
            before = _evaluate(mod, inputs) if check == "interp" else None
            spec = read_spec(settings)
            recorder = _recorder(spec, say)
            seconds, out = _run_pipeline(spec, recorder, mod)
            record["seconds"]["passes"] = seconds
            record["output"] = counter.counts(out)
            record["passes"] = _steps(recorder, counter, None)
            if check != "none":
                say("check")
                mark = time.perf_counter()
                record["checks"].append(_check(check, out, inputs, before, onnx_model, feeds,
                                               settings))
                record["seconds"]["check"] = time.perf_counter() - mark
    except Exception as exc:
        if recorder is not None and not record["passes"]:
            record["passes"] = _steps(recorder, counter, recorder.running())
        record["error"] = error_json(exc, _message(exc))
    record["status"] = record_status(record)
    record["seconds"]["total"] = time.perf_counter() - start
    return record


# --- reading ---------------------------------------------------------------------------------------
def _read_model(job: Mapping[str, Any],
                settings: Mapping[str, Any]) -> tuple[Any, Any, Any, float]:
    """(module, the ONNX model or None, the ONNX feeds or None, seconds of the import proper).

    The model's bytes come with the job (Ray ships them) or are read from
    its path; a model-zoo model comes from the onnx package, with seeded
    random weights as ``run --model-zoo`` uses them.
    """
    from . import model_zoo

    seed = int(settings.get("seed", 0))
    if job.get("zoo"):
        proto = model_zoo.randomize_weights(model_zoo.light_model(job["zoo"]).load(), seed=seed)
        start = time.perf_counter()
        mod = model_zoo.import_onnx(proto)
        return mod, proto, _onnx_feeds(proto, seed), time.perf_counter() - start
    path = job["path"]
    data = job.get("data")
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise BatchModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    start = time.perf_counter()
    if job["format"] == "onnx":
        proto = _parse_onnx(data, path)
        mod = model_zoo.import_onnx(proto)
        return mod, proto, _onnx_feeds(proto, seed), time.perf_counter() - start
    from ..ir.text.io import ModelFileError
    from ..ir.text.parser import parse

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{path}: not UTF-8 text (byte {exc.start}): {exc.reason}") from None
    return parse(text, source_name=path), None, None, time.perf_counter() - start


def _parse_onnx(data: bytes, path: str) -> Any:
    from . import model_zoo

    onnx = model_zoo._onnx()
    try:
        return onnx.load_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and its relatives
        raise model_zoo.ModelZooError(f"{path}: not an ONNX model ({type(exc).__name__}: "
                                      f"{exc})") from None


def _onnx_feeds(proto: Any, seed: int) -> dict[str, Any]:
    from .optimize import seeded_inputs

    return seeded_inputs(proto, seed=seed)


# --- running -------------------------------------------------------------------------------------
def _recorder(spec: Any, say: Any) -> Any:
    """A recorder of every step of ``spec``'s schedule that tells ``say`` when each starts."""

    class Recorder(RunRecorder):
        def step_started(self, run: Any) -> None:
            say(f"pass {run.step.index} {run.step.name}")

    return Recorder(resolve_schedule(spec))


def _run_pipeline(spec: Any, recorder: Any, mod: Any) -> tuple[float, Any]:
    """Run ``spec`` on ``mod``, ``recorder`` last among the instruments: (seconds, result)."""

    pipeline = spec.build()
    ctx = PassContext(opt_level=spec.opt_level, required_pass=spec.required_pass,
                      disabled_pass=spec.disabled_pass,
                      instruments=[recorder.stopwatch, *pipeline.instruments, recorder],
                      config=dict(spec.config))
    start = time.perf_counter()
    with ctx:
        out = pipeline.sequential(mod)
    return time.perf_counter() - start, out


def _steps(recorder: Any, counter: ModuleCounter, failed: Any) -> list[dict[str, Any]]:

    return steps_json(recorder.runs, recorder.seconds, counter, failed)


# --- checking ------------------------------------------------------------------------------------
def _check_kind(asked: str, job: Mapping[str, Any], onnx_model: Any) -> str:
    from .model_zoo import has_onnxruntime

    if asked == "auto":
        return "onnxruntime" if onnx_model is not None and has_onnxruntime() else "interp"
    if asked == "onnxruntime" and onnx_model is None:
        raise BatchModelError(f"{job['name']}: --check onnxruntime needs an ONNX model; this one "
                              "is Relay text (--check interp checks it against the module as "
                              "read)")
    return asked


def _inputs(mod: Any, feeds: Mapping[str, Any] | None, settings: Mapping[str, Any]) -> list[Any]:
    if feeds is not None:
        from .model_zoo import main_arguments

        return main_arguments(mod, feeds)
    from ..testing.inputs import random_inputs

    return random_inputs(mod, seed=int(settings.get("seed", 0)))


def _evaluate(mod: Any, inputs: list[Any]) -> list[Any]:
    from ..interp import Interpreter
    from ..testing.compare import flatten_outputs

    return flatten_outputs(Interpreter(mod).evaluate()(*inputs))


def _check(kind: str, out: Any, inputs: list[Any], before: list[Any] | None, onnx_model: Any,
           feeds: Mapping[str, Any] | None, settings: Mapping[str, Any]) -> dict[str, Any]:
    from ..testing.compare import compare_outputs

    actual = _evaluate(out, inputs)
    if kind == "onnxruntime":
        reference = _onnxruntime(onnx_model, feeds or {}, int(settings.get("threads") or 0))
        against = "onnxruntime"
    else:
        reference = before or []
        against = f"the module as read (seeded inputs, seed {int(settings.get('seed', 0))})"
    result = compare_outputs(actual, reference, rtol=settings["rtol"], atol=settings["atol"])
    return comparison_json(result, actual, reference, against)


def _onnxruntime(model: Any, feeds: Mapping[str, Any], threads: int) -> list[Any]:
    """onnxruntime's outputs, with ``threads`` threads (0: its default) so workers share the cores."""
    import numpy as np

    from .model_zoo import require_onnxruntime

    require_onnxruntime()
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1 if threads else 0
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


# --- time limit and messages ---------------------------------------------------------------------
@contextlib.contextmanager
def _deadline(seconds: float | None, job: Mapping[str, Any]) -> Iterator[None]:
    """Raise :class:`ModelTimeoutError` in the running code once ``seconds`` have passed."""
    usable = (seconds and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise ModelTimeoutError(f"{job['name']}: no result after {seconds:g} s (--timeout)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _message(exc: BaseException) -> str:
    """The error's line as a report shows it: its first line, with the pass it was raised in."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    for note in getattr(exc, "__notes__", None) or ():
        if isinstance(note, str) and note.startswith("relaypass: "):
            line += f" [{note[len('relaypass: '):]}]"
            break
    return line
