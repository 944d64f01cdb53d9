"""The ``relaypass`` command line: run, bisect, explain and check pipeline files; list plugins.

Exit statuses (docs/cli.md):

* 0: done;
* 1: the outputs were checked and differ (``run --check``, the model-zoo check),
  or ``bisect`` found the pass that breaks the program;
* 2: bad input -- a missing file, a pipeline or model that does not parse or
  type-check, an unknown pass, a broken plugin, a missing optional extra.
  One line ``relaypass: error: <what and where>`` on stderr;
* 3: a bug (an exception that is not a :class:`~relaypass.errors.RelayPassError`):
  its traceback (relaypass's own frames left out), then one line saying which
  pass or instrument raised it and whose bug it is (:mod:`relaypass.tools.blame`).

When a pass raises during ``run``, a reproducer folder is written
(:mod:`relaypass.tools.reproducer`) and the error line says where, unless the
model itself is at fault (a type error in the model as read).  With
``--json``, ``run``, ``check``, ``explain`` and ``bisect`` print one JSON
document on stdout instead (:mod:`relaypass.tools.run_report`).

``--traceback`` (before or after the subcommand) shows the traceback of input
errors too.  Nothing here imports numpy, the IR or a plugin before a command
needs it, so listing passes stays fast and never runs plugin code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..entry_points import STANDARD_DISTRIBUTION, PluginWarning
from ..errors import RelayPassError
from ..transform import get_pass
from ..transform.instrument import PassInstrument
from ..transform.pattern_tables import pattern_table_errors
from ..transform.pipeline import read_pipeline
from ..transform.targets import target_errors
from . import batch, compare_reports, optimize, run_record, viz
from . import help as help_pages
from .arguments import tolerance as _tolerance
from .batch_record import warm_up_reading
from .byoc_listing import byoc_json, print_byoc_sections
from .defaults import DEFAULT_CHECKER, DEFAULT_TIMER, TYPER_DEFAULT_HELP
from .describe import instrument_json, pass_json
from .describe import table as _table

if TYPE_CHECKING:
    from ..ir.module import IRModule
    from ..transform.pipeline import Pipeline, PipelineSpec
    from .bisect import Bisection
    from .schedule import ScheduledPass, ScheduleTracker, StepRun

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_INPUT_ERROR = 2
EXIT_INTERNAL_ERROR = 3

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-5


class CLIError(RelayPassError):
    """A command-line argument is wrong (an unknown option value, a missing argument)."""


# --- terminal status line ---------------------------------------------------------------
class StatusLine:
    """One line of progress on stderr, rewritten in place; silent unless stderr is a terminal.

    The line is transient: it is erased before anything else is written, so
    logs and piped output never contain it.  While one is enabled,
    ``sys.stdout`` and ``sys.stderr`` erase it before each write (whoever
    writes: the command, an instrument, a warning), so no text is ever glued
    to it; :func:`main` puts the streams back.
    """

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty())
        self._shown = False
        if self.enabled:
            for name in ("stdout", "stderr"):
                current = getattr(sys, name)
                _replaced.append((name, current))
                setattr(sys, name, _ClearingStream(current, self))

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            width = 0
        width = width or 80  # a terminal that does not say its width
        if len(text) > width - 1:
            text = text[: max(width - 2, 1)] + "…"
        self.stream.write("\r\x1b[K" + text)
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


class _ClearingStream:
    """A text stream that erases the status line before anything is written to it."""

    def __init__(self, stream: Any, status: StatusLine) -> None:
        self._stream = stream
        self._status = status

    def write(self, text: str) -> int:
        if text:
            self._status.clear()
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


# The streams a status line replaced, to put back when the command ends.
_replaced: list[tuple[str, Any]] = []


def _restore_streams() -> None:
    while _replaced:
        name, stream = _replaced.pop()
        setattr(sys, name, stream)


class ProgressInstrument(PassInstrument):
    """Shows on the status line which pass is running: ``[3/5] O3 > FuseOps``; counts the passes.

    ``total`` is the number of passes the resolved schedule runs; a pass
    counts as done when it finishes without another pass having run inside it
    (a Sequential is a frame of the path, not a step).  ``done`` is what the
    run reports afterwards, so the instrument runs on a terminal or not.
    """

    def __init__(self, status: StatusLine, total: int) -> None:
        self.status = status
        self.total = total
        self.done = 0
        self._path: list[str] = []
        self._nested: list[bool] = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if self._nested:
            self._nested[-1] = True
        self._path.append(info.name)
        self._nested.append(False)
        step = min(self.done + 1, self.total) if self.total else self.done + 1
        self.status.show(f"relaypass: [{step}/{self.total}] {' > '.join(self._path)}")

    def run_after_pass(self, mod: Any, info: Any) -> None:
        if self._path:
            self._path.pop()
            if not self._nested.pop():
                self.done += 1

    def exit_pass_ctx(self) -> None:
        self.status.clear()


# --- output --------------------------------------------------------------------------------
def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _secs(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


# --- pipelines -----------------------------------------------------------------------------
def _read_spec(args: argparse.Namespace) -> PipelineSpec:
    """The pipeline file, validated, with -O and --disable applied."""
    spec = _read_pipeline(args)
    level = getattr(args, "opt_level", None)
    if level is not None:
        if level < 0:
            raise CLIError(f"-O {level}: the opt_level must be a non-negative integer")
        spec = replace(spec, opt_level=level)
    disabled = getattr(args, "disable", None) or []
    if disabled:
        _check_pass_names(spec, disabled, "--disable")
        spec = replace(spec, disabled_pass=tuple(dict.fromkeys(spec.disabled_pass + tuple(disabled))))
    for option in ("print_before", "print_after"):
        _check_pass_names(spec, getattr(args, option, None) or [], "--" + option.replace("_", "-"))
    for name, options in getattr(args, "instrument", None) or []:
        _check_instrument(name, options)
    return spec


def _read_pipeline(args: argparse.Namespace) -> PipelineSpec:
    """The pipeline file (or -p's inline pipeline), validated; what it writes stays inside
    ``--out-dir``."""
    out_dir = getattr(args, "out_dir", None) or os.getcwd()
    if not os.path.isdir(out_dir):
        raise CLIError(f"--out-dir {out_dir}: not a folder")
    if getattr(args, "inline", None) is not None:
        from ..transform.inline_pipeline import parse_inline_pipeline

        return parse_inline_pipeline(args.inline, "-p", out_dir)
    return read_pipeline(args.pipeline, out_dir)


def _prepare(args: argparse.Namespace) -> None:
    """Run the --load files; make -p take the place of PIPELINE.toml (the first positional
    argument is then the model)."""
    if getattr(args, "load", None):
        from .load import load_pass_file

        for path in args.load:
            load_pass_file(path)
    if not hasattr(args, "inline"):
        return
    command = args.command
    if args.inline is None:
        if args.pipeline is None:
            raise CLIError(f"{command} needs a PIPELINE.toml file, or -p PIPELINE (an inline "
                           "pipeline such as -p 'InferType,FoldConstant')")
    elif args.pipeline is not None:
        if getattr(args, "model", "") is not None:
            raise CLIError(f"{command} takes a PIPELINE.toml file or -p PIPELINE, not both")
        args.model, args.pipeline = args.pipeline, None


def _check_instrument(name: str, options: dict[str, Any]) -> None:
    """An --instrument is registered and its options are declared, of the declared types."""
    from ..transform.registry import check_options, get_registry

    try:
        check_options(get_registry().instrument_spec(name), "instrument", options,
                      check_types=True)
    except RelayPassError as exc:
        raise CLIError(f"--instrument {name}: {_one_line(exc)}") from exc


def _sequence_names(spec: PipelineSpec) -> set[str]:
    from ..transform.pipeline import SequenceRef

    names: set[str] = {spec.passes.name}  # the pipeline's own Sequential runs too
    stack = list(spec.passes.passes)
    while stack:
        ref = stack.pop()
        if isinstance(ref, SequenceRef):
            names.add(ref.name)
            stack.extend(ref.passes)
    return names


def _check_pass_names(spec: PipelineSpec, names: Sequence[str], option: str) -> None:
    import difflib

    from ..transform.registry import get_registry

    registry = get_registry()
    sequences = _sequence_names(spec)
    for name in names:
        if name in sequences or registry.has_pass(name):
            continue
        near = difflib.get_close_matches(name, [*registry.pass_names(), *sorted(sequences)], n=3,
                                         cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else \
            " (relaypass passes lists the registered passes)"
        raise CLIError(f"{option} {name}: no pass named {name!r} is registered{hint}"
                       f"{registry.unreadable_hint()}")


# --- models --------------------------------------------------------------------------------
def _load_model(path: str, shapes: dict[str, tuple[int, ...]] | None) -> IRModule:
    """A Relay text file (``-``: Relay text on stdin), or an ONNX model (needs the ``onnx`` extra)."""
    if path == "-":
        return _read_stdin_model(shapes)
    if path.lower().endswith(".onnx"):
        from . import model_zoo

        return model_zoo.import_onnx(model_zoo.read_onnx(path), shapes)
    if shapes:
        raise CLIError(f"--shape applies to ONNX models; {path} is Relay text, whose "
                       "parameters carry their shapes")
    from ..ir.text.io import load

    return load(path)


def _read_stdin_model(shapes: dict[str, tuple[int, ...]] | None) -> IRModule:
    from ..ir.text.parser import parse

    if shapes:
        raise CLIError("--shape applies to ONNX models; a model read from stdin (-) is Relay text")
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CLIError(f"<stdin>: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                       f"{exc.start}); a model read from stdin is Relay text (give an ONNX "
                       "model as a file)") from None
    return parse(text, source_name="<stdin>")


def _parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    name, sep, dims = text.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        shape = tuple(int(d) for d in dims.replace("x", ",").split(",") if d.strip())
        if any(d < 0 for d in shape):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=D1,D2,... (e.g. input=1,3,224,224), not {text!r}") from None
    return name, shape


def _instrument_argument(text: str) -> tuple[str, dict[str, Any]]:
    """``--instrument NAME[:OPT=VALUE,...]``: the name and options, read (checked later)."""
    from ..transform.inline_pipeline import parse_instrument

    try:
        return parse_instrument(text, repr(text))
    except RelayPassError as exc:
        raise argparse.ArgumentTypeError(_one_line(exc)) from None


def _evaluate(mod: IRModule, inputs: Sequence[Any]) -> list[Any]:
    from ..interp import Interpreter
    from ..testing.compare import flatten_outputs

    return flatten_outputs(Interpreter(mod).evaluate()(*inputs))


# --- running -------------------------------------------------------------------------------
class _Run:
    """One run of a pipeline with the instruments the command line asked for."""

    def __init__(self, args: argparse.Namespace, spec: PipelineSpec, status: StatusLine) -> None:
        from .schedule import ScheduleTracker, resolve_schedule, runnable

        self.spec = spec
        self.schedule: list[ScheduledPass] = resolve_schedule(spec)
        self.steps = runnable(self.schedule)
        self.pipeline: Pipeline = spec.build()
        self.timing: Any = None
        self.timing_table = ""  # read before the context exits, which clears it (as in TVM)
        self.progress: ProgressInstrument
        # The names of the registered instruments of the run (a reproducer records their plugins).
        self.instrument_names = [ref.name for ref in spec.instruments]
        self.instruments = self._instruments(args, status)
        # Last, so that a pass it sees running really ran: which step raised, on what module.
        # With --json, the report's recorder (a tracker that keeps each step) is the tracker.
        self.json_report = getattr(args, "report", None)
        self.tracker: ScheduleTracker = ScheduleTracker(self.schedule)
        if self.json_report is not None:
            self.tracker = self.json_report.tracker(self.schedule)
            # First: a step's time is its pass's, not the printers'.
            self.instruments.insert(0, self.json_report.recorder.stopwatch)
        self.instruments.append(self.tracker)
        self.failed: StepRun | None = None
        self.seconds = 0.0
        output = getattr(args, "output", None)
        self.module_to_stdout = output == "-" or (output is None and args.model_zoo is None)
        # With --json, stdout carries the JSON document: guarded alike.
        self.stdout_taken = self.module_to_stdout or bool(getattr(args, "json", False))

    def _instruments(self, args: argparse.Namespace, status: StatusLine) -> list[Any]:
        from ..transform.registry import get_registry

        registry = get_registry()

        def build(name: str, options: dict[str, Any]) -> Any:
            self.instrument_names.append(name)
            return registry.build_instrument(name, options)

        # Timing first: the printers' work after a pass falls outside its time.
        extra: list[Any] = []
        if getattr(args, "time", False) or getattr(args, "timer", None):
            self.timing = _build_timer(args, build)
            extra.append(self.timing)
        self.progress = ProgressInstrument(status, len(self.steps))  # silent off a terminal
        extra.append(self.progress)
        extra.extend(self.pipeline.instruments)
        extra.extend(build(name, options) for name, options in args.instrument)
        meta = {"show_meta": args.show_meta}
        if args.print_before:
            extra.append(build("PrintBefore", {"passes": list(args.print_before),
                                               "file": "stderr", **meta}))
        if args.print_after:
            extra.append(build("PrintAfter", {"passes": list(args.print_after), "file": "stderr",
                                              **meta}))
        if args.print_after_all:
            extra.append(build("PrintAfterAll", {"file": "stderr", **meta}))
        if args.print_changed:
            extra.append(build("PrintChanged", {"file": "stderr", "types": args.diff_types,
                                                **meta}))
        if args.dump_dir:
            extra.append(build("DumpIR", {"dir": args.dump_dir, **meta}))
        if args.verify_each:
            extra.append(_verifier(args, build))
        if getattr(args, "viz_dir", None):
            from .viz_steps import VizSteps

            extra.append(VizSteps(args.viz_dir, args.viz_format, self.schedule,
                                  args.model_zoo or os.path.basename(args.model or "")))
        return extra

    def __call__(self, mod: IRModule) -> IRModule:
        from ..transform.context import PassContext

        s = self.spec
        ctx = PassContext(opt_level=s.opt_level, required_pass=s.required_pass,
                          disabled_pass=s.disabled_pass, instruments=self.instruments,
                          config=dict(s.config))
        start = time.perf_counter()
        with self._stdout_guard(), ctx:
            try:
                out = self.pipeline.sequential(mod)
            except Exception as exc:
                self.failed = self.tracker.failed_step(exc)
                raise
            if self.timing is not None:
                self.timing_table = self.timing.render()
        self.seconds = time.perf_counter() - start
        return out

    def _stdout_guard(self) -> Any:
        """While the module is bound for stdout, what instruments (or passes) write to stdout
        goes to stderr: the output stays a module file."""
        if self.stdout_taken:
            return contextlib.redirect_stdout(sys.stderr)
        return contextlib.nullcontext()

    def run_or_reproduce(self, mod: IRModule, args: argparse.Namespace, model_format: str) -> IRModule:
        """Run on ``mod``; when a pass raises, write a reproducer and note its path on the error."""
        try:
            return self(mod)
        except Exception as exc:
            from .reproducer import input_at_fault

            # A type error in the model as read is the model's: the error line points into it.
            if (self.failed is not None and not args.no_repro
                    and not input_at_fault(self.failed, mod, exc)):
                self._reproduce(exc, args, model_format)
            raise

    def _reproduce(self, exc: Exception, args: argparse.Namespace, model_format: str) -> None:
        from ..transform.passes import add_note
        from .reproducer import DEFAULT_ROOT, write_reproducer

        assert self.failed is not None
        try:
            folder = write_reproducer(args.repro_dir or DEFAULT_ROOT, self.spec, self.schedule,
                                      self.failed, _error_line(exc), _command_line(args),
                                      self.instrument_names, model_format,
                                      typer=getattr(args, "typer", None))
        except (OSError, RelayPassError) as err:  # e.g. two passes claiming the typing role
            add_note(exc, f"{_REPRO_NOTE}not written ({_one_line(err)})")
            return
        add_note(exc, f"{_REPRO_NOTE}written to {_shown_path(folder)}")
        if self.json_report is not None:
            self.json_report.fields["reproducer"] = folder

    def report(self) -> None:
        n = self.progress.done
        _err(f"relaypass: pipeline {self.spec.name} (opt_level {self.spec.opt_level}) ran "
             f"{n} pass{'es' if n != 1 else ''} in {_secs(self.seconds)}")
        if self.timing is not None:
            _err(self.timing_table)


def _verifier(args: argparse.Namespace, build: Callable[[str, dict[str, Any]], Any]) -> Any:
    """--verify-each: the default checker's checks and the typer's, after every pass."""
    from ..transform.registry import get_registry
    from .verify import VerifyEach

    typer = args.typer or _default_typer()
    return VerifyEach(build(DEFAULT_CHECKER, {}), get_registry().build_pass(typer, {}), typer)


def _build_timer(args: argparse.Namespace, build: Callable[[str, dict[str, Any]], Any]) -> Any:
    """The timing instrument of ``--timer NAME`` (default :data:`DEFAULT_TIMER`), with its table."""
    name = getattr(args, "timer", None) or DEFAULT_TIMER
    timer = build(name, {})
    if not callable(getattr(timer, "render", None)):
        raise CLIError(f"--timer {name}: instrument {name!r} has no render() method giving the "
                       f"timing table (the default, {DEFAULT_TIMER}, has)")
    return timer


def _check_registered(option: str, name: str | None, what: str) -> None:
    """Fail with one line naming ``option`` when ``name`` is not a usable pass or instrument."""
    if name is None:
        return
    from ..transform.registry import get_registry

    registry = get_registry()
    try:
        if what == "pass":
            registry.pass_spec(name)
        else:
            registry.instrument_spec(name)
    except RelayPassError as exc:
        raise CLIError(f"{option} {name}: {_one_line(exc)}") from exc


def _default_typer() -> str:
    """The pass with role "type-inference" (else InferType); two claiming it: one line saying so."""
    from ..transform.errors import RoleConflictError
    from .defaults import default_typer

    try:
        return default_typer()
    except RoleConflictError as exc:
        raise CLIError(f"{_one_line(exc)}; or choose one with --typer NAME") from exc


def _write_module(mod: IRModule, output: str | None) -> None:
    from ..ir.text.io import save

    if output is None or output == "-":
        from ..ir.text.printer import astext

        text = astext(mod, show_meta_data=True)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    else:
        save(mod, output)


def _model_format(path: str) -> str:
    return "onnx" if path.lower().endswith(".onnx") else "relay"


# --- reproducers ---------------------------------------------------------------------------
# The note a written (or failed) reproducer leaves on the exception, for the error line.
_REPRO_NOTE = "relaypass reproducer: "


def _command_line(args: argparse.Namespace) -> dict[str, Any]:
    """What options.json records: the arguments as given, where, and as parsed."""
    options = {k: v for k, v in vars(args).items() if k not in ("func", "argv", "report")}
    return {"argv": getattr(args, "argv", []), "cwd": os.getcwd(), "options": options}


def _shown_path(path: str) -> str:
    """``path`` relative to the working directory when it lies below it (``./relaypass-repro/...``)."""
    rel = os.path.relpath(os.path.abspath(path))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return os.path.abspath(path)
    return os.curdir + os.sep + rel


def _reproducer_text(exc: BaseException) -> str:
    for note in getattr(exc, "__notes__", None) or ():
        if isinstance(note, str) and note.startswith(_REPRO_NOTE):
            return f"; reproducer {note[len(_REPRO_NOTE):]}"
    return ""


def _error_line(exc: BaseException) -> str:
    """The line the user sees for ``exc`` (without the reproducer part)."""
    if _is_input_error(exc):
        return f"relaypass: error: {_one_line(exc)}"
    return f"relaypass: internal error: {_one_line(exc)}"


def _cmd_run(args: argparse.Namespace) -> int:
    if (args.model is None) == (args.model_zoo is None):
        raise CLIError("run needs a MODEL file or --model-zoo NAME (one of them)")
    status = StatusLine()
    spec = _read_spec(args)
    _json_run(args, spec)
    if args.model_zoo is not None:
        return _run_zoo(args, spec, status)
    for option, given in (("--reference", args.reference != "auto"),
                          ("--weights", args.weights is not None)):
        if given:
            raise CLIError(f"{option} applies to --model-zoo models only")
    _check_registered("--timer", args.timer, "instrument")
    _check_registered("--typer", args.typer, "pass")
    shapes = dict(args.shape) if args.shape else None
    if args.report is not None:  # the import time the report gives is the model's own
        warm_up_reading(_model_format(args.model))
    start = time.perf_counter()
    mod = _load_model(args.model, shapes)
    _json_module(args, "input", mod, time.perf_counter() - start)
    run = _Run(args, spec, status)
    inputs: list[Any] = []
    before: list[Any] = []
    if args.check:
        from ..testing.inputs import random_inputs

        status.show("relaypass: evaluating the input module")
        inputs = random_inputs(mod, seed=args.seed)
        before = _evaluate(mod, inputs)
    out = run.run_or_reproduce(mod, args, _model_format(args.model))
    if not args.json or args.output is not None:  # --json: the module only to -o
        _write_module(out, args.output)
    _json_result(args, run, out)
    if run.timing is not None:
        run.report()
    if not args.check:
        return EXIT_OK
    status.show("relaypass: evaluating the result")
    after = _evaluate(out, inputs)
    status.clear()
    return _report_check(after, before, args, f"the input module (seeded inputs, seed {args.seed})")


def _json_run(args: argparse.Namespace, spec: PipelineSpec) -> None:
    """--json: what the document of a run says before it starts (an error document too)."""
    if args.report is None:
        return
    if args.json and args.output == "-":
        raise CLIError("-o -: with --json, stdout carries the JSON document; write the module "
                       "to a file (-o FILE) or leave it out")
    from .run_report import pipeline_json

    model = {"path": args.model, "zoo": args.model_zoo,
             "format": "onnx" if args.model_zoo else _model_format(args.model)}
    args.report.fields.update(pipeline=pipeline_json(spec), model=model, input=None,
                              output=None, seconds=None, checks=[], reproducer=None)


def _json_module(args: argparse.Namespace, key: str, mod: IRModule, seconds: float) -> None:
    """--json, --report: the node and operator counts of the module read, and its import time."""
    if args.report is not None:
        args.report.fields[key] = args.report.counter.counts(mod)
        args.report.import_seconds = seconds


def _json_result(args: argparse.Namespace, run: _Run, out: IRModule) -> None:
    """--json: the pipeline's time, the result's counts and where it was written (or null)."""
    if args.report is not None:
        args.report.fields["seconds"] = run.seconds
        args.report.mark("passes")
        args.report.fields["output"] = {"path": args.output, **args.report.counter.counts(out)}


def _report_check(actual: list[Any], reference: list[Any], args: argparse.Namespace,
                  against: str) -> int:
    from ..testing.compare import compare_outputs

    result = compare_outputs(actual, reference, rtol=args.rtol, atol=args.atol)
    if args.report is not None:
        from .run_report import comparison_json

        args.report.fields["checks"].append(comparison_json(result, actual, reference, against))
        args.report.mark("check")
    if result.ok:
        _err(f"relaypass: check ok: {result.summary(against)}")
        return EXIT_OK
    _err(f"relaypass: check failed: {result.summary(against)}")
    return EXIT_CHECK_FAILED


def _run_zoo(args: argparse.Namespace, spec: PipelineSpec, status: StatusLine) -> int:
    from . import model_zoo

    model = model_zoo.light_model(args.model_zoo)
    reference = args.reference
    if reference == "auto":
        reference = "onnxruntime" if model_zoo.has_onnxruntime() else "stored"
    weights = args.weights or ("random" if reference == "onnxruntime" else "shipped")
    if reference == "stored" and weights == "random":
        raise CLIError("--weights random needs --reference onnxruntime: the stored reference "
                       "output was computed with the shipped weights")
    if reference == "onnxruntime":
        model_zoo.require_onnxruntime()
    _check_registered("--timer", args.timer, "instrument")
    _check_registered("--typer", args.typer, "pass")
    run = _Run(args, spec, status)
    if run.timing is None:  # the model-zoo job always reports where the time went
        from ..transform.registry import get_registry

        def build(name: str, options: dict[str, Any]) -> Any:
            run.instrument_names.append(name)
            return get_registry().build_instrument(name, options)

        run.timing = _build_timer(args, build)
        run.instruments.insert(0, run.timing)

    status.show(f"relaypass: reading {model.name}")
    proto = model.load()
    if weights == "random":
        proto = model_zoo.randomize_weights(proto, seed=args.seed)
        what = f"seeded random weights (seed {args.seed})"
    else:
        what = "the shipped weights"
    if reference == "stored":
        feeds = model_zoo.onnx_test_input(proto)
        what += ", the input of onnx's backend test"
    else:
        feeds = model_zoo.random_input(proto, seed=args.seed)
        what += f", a seeded random input (seed {args.seed})"
    _err(f"relaypass: {model.name} ({model.file_name}, opset {model_zoo.opset(proto)}): {what}")

    if args.report is not None:  # the import time the report gives is the model's own
        warm_up_reading("onnx")
    status.show(f"relaypass: importing {model.name}")
    start = time.perf_counter()
    mod = model_zoo.import_onnx(proto, None)
    imported = time.perf_counter() - start
    status.clear()
    _err(f"relaypass: imported in {_secs(imported)}")
    _json_module(args, "input", mod, imported)

    out = run.run_or_reproduce(mod, args, "onnx")
    _json_result(args, run, out)
    run.report()
    if args.output is not None:
        _write_module(out, args.output)

    inputs = model_zoo.main_arguments(out, feeds)
    status.show("relaypass: evaluating the result with the interpreter")
    start = time.perf_counter()
    actual = _evaluate(out, inputs)
    interp_seconds = time.perf_counter() - start
    status.clear()
    if reference == "stored":
        expected = model.stored_outputs()
        ref_line = f"relaypass: interpreter {_secs(interp_seconds)}"
        against = f"the stored reference output ({model.file_name[:-5]}_output_0.pb)"
    else:
        status.show("relaypass: running onnxruntime")
        start = time.perf_counter()
        expected = model_zoo.run_onnxruntime(proto, feeds)
        ort_seconds = time.perf_counter() - start
        status.clear()
        ref_line = (f"relaypass: interpreter {_secs(interp_seconds)}, "
                    f"onnxruntime {_secs(ort_seconds)}")
        against = "onnxruntime"
    _err(ref_line)
    code = _report_check(actual, expected, args, against)
    if args.check:
        status.show("relaypass: evaluating the imported module")
        before = _evaluate(mod, model_zoo.main_arguments(mod, feeds))
        status.clear()
        code = max(code, _report_check(actual, before, args, "the imported module"))
    return code


# --- bisect -------------------------------------------------------------------------------
def _cmd_bisect(args: argparse.Namespace) -> int:
    if (args.model is None) == (args.model_zoo is None):
        raise CLIError("bisect needs a MODEL file or --model-zoo NAME (one of them)")
    from .bisect import bisect_pipeline

    status = StatusLine()
    spec = _read_spec(args)
    _check_registered("--checker", args.checker, "instrument")
    _check_registered("--typer", args.typer, "pass")
    typer = args.typer or _default_typer()
    if args.model_zoo is not None:
        mod, inputs, what = _zoo_module(args, status)
    else:
        if args.weights is not None:
            raise CLIError("--weights applies to --model-zoo models only")
        from ..testing.inputs import random_inputs

        mod = _load_model(args.model, dict(args.shape) if args.shape else None)
        inputs = random_inputs(mod, seed=args.seed)
        what = f"seeded random inputs (seed {args.seed})"
    try:
        result = bisect_pipeline(spec, mod, inputs, rtol=args.rtol, atol=args.atol,
                                 linear=args.linear, progress=status.show,
                                 checker=args.checker, typer=typer)
    finally:
        status.clear()
    if args.report is None:
        sys.stdout.write(_render_bisection(result, args, what))
        sys.stdout.flush()
    else:
        from .run_report import bisection_json, steps_json

        args.report.fields.update(bisection_json(result, what))
        args.report.fields["passes"] = steps_json(result.runs, result.step_seconds,
                                                  args.report.counter)
    ran = len(result.runs)
    times = result.evaluations + 1
    how = "then after each pass in order, --linear" if result.linear else "then by bisection"
    _err(f"relaypass: bisect: {ran} pass{'es' if ran != 1 else ''} ran in "
         f"{_secs(result.pass_seconds)}, their checks of structure took "
         f"{_secs(result.check_seconds)}; @main was evaluated {times} time{'s' if times != 1 else ''}"
         f" (the input module once, {how}) in {_secs(result.evaluation_seconds)}")
    return EXIT_OK if result.culprit is None else EXIT_CHECK_FAILED


def _zoo_module(args: argparse.Namespace, status: StatusLine) -> tuple[IRModule, list[Any], str]:
    """A model-zoo model (seeded random weights unless --weights shipped) and @main's inputs."""
    from . import model_zoo

    model = model_zoo.light_model(args.model_zoo)
    status.show(f"relaypass: reading {model.name}")
    proto = model.load()
    what = "the shipped weights"
    if (args.weights or "random") == "random":
        proto = model_zoo.randomize_weights(proto, seed=args.seed)
        what = f"seeded random weights (seed {args.seed})"
    status.show(f"relaypass: importing {model.name}")
    mod = model_zoo.import_onnx(proto, None)
    inputs = model_zoo.main_arguments(mod, model_zoo.random_input(proto, seed=args.seed))
    return mod, inputs, f"{model.name} with {what}, a seeded random input (seed {args.seed})"


def _render_bisection(result: Bisection, args: argparse.Namespace, inputs: str) -> str:
    from ..ir.text.printer import astext

    spec = result.spec
    n = result.steps
    head = (f"bisect: pipeline {spec.name} ({spec.source}), opt_level {spec.opt_level}, "
            f"{n} pass{'es' if n != 1 else ''}; @main evaluated on {inputs}\n")
    culprit, breakage = result.culprit, result.breakage
    if culprit is None or breakage is None:
        return head + (f"no pass changes the output: after each of the {len(result.runs)} passes "
                       f"the module is well formed and well typed, and @main's outputs match the "
                       f"input module's within rtol {args.rtol:g}, atol {args.atol:g}\n")
    step = culprit.step
    from ..transform.registry import get_registry

    decl = get_registry().lookup_pass(step.name)
    origin = f" (from {decl.origin})" if decl is not None else ""
    added = f", added: {step.reason}" if step.kind == "dependency" else ""
    lines = [head.rstrip("\n"),
             f"culprit: pass {step.index} of {n}, {step.name}{origin}{added}",
             f"  {_culprit_reason(breakage)}"]
    if breakage.kind == "changed_input":  # the module it was given is gone: nothing to diff
        lines.append(f"  (the IR {step.name} was given cannot be shown: it edited it)")
        return "\n".join(lines) + "\n"
    previous = result.before_culprit
    if previous is not None:
        lines.append(f"  after pass {previous.step.index} ({previous.step.name}) the module is "
                     "well formed and well typed, and the outputs match")
    before_name = (f"after pass {previous.step.index}, {previous.step.name}" if previous is not None
                   else "the input module")
    show_meta = args.show_meta
    before = astext(culprit.before, show_meta_data=show_meta)
    if culprit.after is None:
        lines += [f"IR given to {step.name} ({before_name}):", before.rstrip("\n")]
        return "\n".join(lines) + "\n"
    after = astext(culprit.after, show_meta_data=show_meta)
    meta = "" if show_meta else ", metadata section left out (--show-meta includes it)"
    if args.full:
        lines += [f"IR before {step.name} ({before_name}){meta}:", before.rstrip("\n"),
                  f"IR after {step.name} (pass {step.index}):", after.rstrip("\n")]
        return "\n".join(lines) + "\n"
    import difflib

    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                     f"before {step.name} ({before_name})",
                                     f"after {step.name} (pass {step.index})", lineterm=""))
    if diff:
        lines.append(f"IR before and after {step.name}, unified diff{meta}:")
        lines += diff
    elif not show_meta and astext(culprit.before) != astext(culprit.after):
        lines.append(f"{step.name} changed only the metadata section (the constants); "
                     "--show-meta shows the diff with it")
    else:
        lines.append(f"{step.name} returned the same IR text it was given")
    return "\n".join(lines) + "\n"


def _culprit_reason(breakage: Any) -> str:
    kind = breakage.kind
    if kind == "output":
        return f"after it, {breakage.message}"
    if kind == "raised":
        return f"it raised: {breakage.message.split(' raised ', 1)[-1]}"
    return breakage.message


# --- listing ------------------------------------------------------------------------------
def _plugin_warnings() -> None:
    from ..transform.registry import get_registry

    for error in get_registry().errors():
        _warning_line(str(error))
    for hidden, used in get_registry().shadowed():
        if used.origin.distribution == STANDARD_DISTRIBUTION:
            continue  # a NameShadowedError above says it
        origin = hidden.origin
        qualified = f"{origin.entry_point or origin.distribution}:{hidden.name}"
        _err(f"relaypass: note: {hidden.name} is overridden: it names the one of {used.origin}; "
             f"{qualified} names the one of {origin}")


_said: set[str] = set()


def _warning_line(text: str) -> None:
    """Write ``relaypass: warning: <first line of text>`` unless this run already did."""
    lines = text.strip().splitlines()
    line = f"relaypass: warning: {lines[0] if lines else text}"
    if line not in _said:
        _said.add(line)
        _err(line)


def _cmd_passes(args: argparse.Namespace) -> int:
    from ..transform.registry import get_registry

    if args.name is not None:
        return _describe(args, "pass")
    specs = get_registry().list_passes()
    if args.json:
        data = [pass_json(s) for s in specs]
        data.extend(byoc_json())
        print(json.dumps(data, indent=2, default=list))
    else:
        rows = [(s.name, s.kind, str(s.opt_level), ", ".join(s.required) or "-",
                 s.distribution, s.version or "-") for s in specs]
        print(_table(("name", "kind", "opt_level", "required", "distribution", "version"), rows))
    if not args.json:
        print_byoc_sections(_table, _warning_line)
    else:
        for error in [*pattern_table_errors(), *target_errors()]:
            _warning_line(str(error))
    _plugin_warnings()
    return EXIT_OK


def _cmd_instruments(args: argparse.Namespace) -> int:
    from ..transform.registry import get_registry

    if args.name is not None:
        return _describe(args, "instrument")
    specs = get_registry().list_instruments()
    if args.json:
        data = [instrument_json(s) for s in specs]
        print(json.dumps(data, indent=2, default=list))
    else:
        rows = [(s.name, "instrument",
                 ", ".join(o.name for o in s.options) if s.options else "-",
                 s.distribution, s.version or "-") for s in specs]
        print(_table(("name", "kind", "options", "distribution", "version"), rows))
    _plugin_warnings()
    return EXIT_OK


def _describe(args: argparse.Namespace, what: str) -> int:
    """``relaypass passes NAME`` / ``instruments NAME``: one declaration in full (text or JSON)."""
    from ..transform.registry import get_registry
    from .describe import describe_instrument, describe_pass

    registry = get_registry()
    name = args.name
    try:
        spec: Any = registry.pass_spec(name) if what == "pass" else registry.instrument_spec(name)
    except RelayPassError as exc:
        other = "instrument" if what == "pass" else "pass"
        try:
            registry.instrument_spec(name) if what == "pass" else registry.pass_spec(name)
        except RelayPassError:
            raise CLIError(_one_line(exc)) from exc
        article = {"pass": "a pass", "instrument": "an instrument"}
        raise CLIError(f"{name!r} is {article[other]}, not {article[what]}: relaypass "
                       f"{other}{'es' if other == 'pass' else 's'} {name} shows it") from exc
    if args.json:
        data = pass_json(spec, full=True) if what == "pass" else instrument_json(spec, full=True)
        print(json.dumps(data, indent=2, default=list))
    else:
        print(describe_pass(spec) if what == "pass" else describe_instrument(spec))
    return EXIT_OK


# --- pipelines: explain, check -----------------------------------------------------------------
def _cmd_explain(args: argparse.Namespace) -> int:
    from .schedule import resolve_schedule

    spec = _read_spec(args)
    schedule = resolve_schedule(spec)
    runs = sum(1 for s in schedule if s.index)
    if args.report is not None:
        from .run_report import pipeline_json, schedule_json

        args.report.fields.update(pipeline=pipeline_json(spec), runs=runs,
                                  steps=schedule_json(schedule),
                                  instruments=[ref.name for ref in spec.instruments])
        return EXIT_OK
    print(f"pipeline {spec.name} ({spec.source}), opt_level {spec.opt_level}: "
          f"{runs} pass{'es' if runs != 1 else ''} run")
    rows = []
    for s in schedule:
        number = str(s.index) if s.index else ""
        label = "  " * s.depth + s.name
        if s.kind == "sequence":
            label += "/"
        rows.append((number, label, _explain_action(s), _explain_reason(s, spec)))
    print(_table(("#", "pass", "action", "why"), rows))
    if spec.instruments:
        print(f"instruments: {', '.join(ref.name for ref in spec.instruments)}")
    return EXIT_OK


def _explain_action(step: ScheduledPass) -> str:
    if step.action == "skip":
        return "skipped"
    return "added" if step.kind == "dependency" else "run"


def _explain_reason(step: ScheduledPass, spec: PipelineSpec) -> str:
    reason = step.reason
    if reason == "disabled_pass":
        return "disabled"
    if reason.startswith("opt_level ") and " > pipeline opt_level " in reason:
        return reason.replace(" > pipeline opt_level ", " > ")
    if step.options:
        opts = ", ".join(f"{k}={json.dumps(v)}" for k, v in step.options.items())
        return f"{reason}; options {opts}"
    return reason


def _cmd_check(args: argparse.Namespace) -> int:
    spec = _read_pipeline(args)
    names = _leaf_names(spec)
    n = len(names)
    m = len(spec.instruments)
    required = _build_all(spec) if args.build else None
    if args.report is not None:
        from .run_report import pipeline_json

        args.report.fields.update(pipeline=pipeline_json(spec), passes=names,
                                  instruments=[ref.name for ref in spec.instruments],
                                  built=args.build, required=required)
        return EXIT_OK
    built = "" if required is None else (
        f"; built, with the {len(required)} pass{'es' if len(required) != 1 else ''} they "
        "require" if required else "; built")
    print(f"ok: {n} pass{'es' if n != 1 else ''}, {m} instrument{'s' if m != 1 else ''}{built}")
    return EXIT_OK


def _build_all(spec: PipelineSpec) -> list[str]:
    """check --build: build every pass and instrument of ``spec`` (importing their plugins'
    code, as run would), then the passes they require; the names of those, sorted."""
    from ..transform.passes import Sequential
    from ..transform.registry import get_registry

    registry = get_registry()
    stack: list[Any] = [spec.build().sequential]
    required: set[str] = set()
    while stack:
        p = stack.pop()
        if isinstance(p, Sequential):
            stack.extend(p.passes)
        required.update(registry.dependency_plan(p.info, p.origin))
    for name in sorted(required):
        registry.dependency_pass(name)
    return sorted(required)


def _leaf_names(spec: PipelineSpec) -> list[str]:
    from ..transform.pipeline import SequenceRef

    names: list[str] = []
    stack = list(reversed(spec.passes.passes))
    while stack:
        ref = stack.pop()
        if isinstance(ref, SequenceRef):
            stack.extend(reversed(ref.passes))
        else:
            names.append(ref.name)
    return names


def _cmd_print(args: argparse.Namespace) -> int:
    mod = _load_model(args.model, None)
    if args.show_meta:
        _write_module(mod, None)
        return EXIT_OK
    from ..ir.text.printer import METADATA_OMITTED, astext

    text = astext(mod, show_meta_data=False)
    if text.endswith(METADATA_OMITTED):
        text = text[: -len(METADATA_OMITTED)] + _METADATA_NOTE
    print(text)
    return EXIT_OK


# What `relaypass print` writes in place of TVM's note when it leaves the constants out.
_METADATA_NOTE = ("/* metadata section omitted (the non-scalar constants): relaypass print "
                  "--show-meta includes it */")


# --- match ---------------------------------------------------------------------------------
def _cmd_match(args: argparse.Namespace) -> int:
    from ..ir.summary import short_text
    from .match import match_module, read_pattern

    pattern = read_pattern(args.pattern)
    if args.typed:
        _check_registered("--typer", args.typer, "pass")
    mod = _load_model(args.model, None)
    if args.typed:
        mod = get_pass(args.typer or _default_typer())(mod)
    report = match_module(pattern, mod)
    if report.matches:
        count = len(report.matches)
        print(f"{count} match{'es' if count != 1 else ''} of {pattern}")
        for name, node in report.matches[: args.limit]:
            print(f"  @{name}: {short_text(node, 160)}")
        if count > args.limit:
            print(f"  ... and {count - args.limit} more (--limit)")
        return EXIT_OK
    print(f"no match of {pattern}")
    if report.closest is not None:
        name, why = report.closest
        print(f"closest, in @{name}:")
        for line in str(why).splitlines()[1:]:
            print(f"  {line}")
    return EXIT_CHECK_FAILED


# --- port ----------------------------------------------------------------------------------
def _cmd_port(args: argparse.Namespace) -> int:
    from .port import run_port

    problems = run_port(args.files, write=args.write, out=sys.stdout, err=_err)
    return EXIT_CHECK_FAILED if args.check and problems else EXIT_OK


# --- the parser ----------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """Usage errors become one line and exit status 2, like every other input error."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        raise CLIError(f"{message} (see {self.prog} --help)")


def _model_zoo_names() -> list[str]:
    from .model_zoo import LIGHT_MODELS

    return sorted(LIGHT_MODELS)


def _json_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true",
                   help=f"print one JSON document on stdout ({what}; relaypass help json-output)")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    common = _Parser(add_help=False)
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback of errors")

    parser = _Parser(
        prog="relaypass",
        description="Run Relay-style compiler pass pipelines on tensor programs.",
        epilog="relaypass help cli describes every command, option and exit status.",
    )
    parser.add_argument("--version", action="version", version=f"relaypass {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def load_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--load", action="append", metavar="FILE.py", default=[],
                       help="run this Python file and register the passes and instruments it "
                            "defines, without packaging them (repeatable; relaypass help cli)")

    def pipeline_source(p: argparse.ArgumentParser) -> None:
        p.add_argument("pipeline", nargs="?", metavar="PIPELINE.toml",
                       help="a pipeline file (or give -p)")
        p.add_argument("-p", "--pass-pipeline", dest="inline", metavar="PIPELINE",
                       help="an inline pipeline instead of a file: 'InferType,FoldConstant,"
                            "FuseOps{fuse_opt_level=2}' (relaypass help pipeline-files)")
        load_option(p)

    def out_dir_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--out-dir", metavar="DIR",
                       help="the folder the pipeline file's instruments may write in: their "
                            "file and folder options are relative to it, and may not leave it "
                            "(default: the current directory)")

    def pipeline_options(p: argparse.ArgumentParser) -> None:
        pipeline_source(p)
        out_dir_option(p)
        p.add_argument("-O", dest="opt_level", type=int, metavar="N",
                       help="run at opt_level N instead of the file's")
        p.add_argument("--disable", action="append", metavar="NAME", default=[],
                       help="never run pass NAME (repeatable)")

    p_run = sub.add_parser("run", parents=[common], help="run a pipeline on a model",
                           description="Run a pipeline file on a model and write the result "
                                       "as Relay text.")
    pipeline_options(p_run)
    p_run.add_argument("model", nargs="?", metavar="MODEL",
                       help="a Relay text file (.relay, .txt; - reads it from stdin), or .onnx "
                            "with the onnx extra")
    p_run.add_argument("--model-zoo", metavar="NAME",
                       help="instead of MODEL, a model shipped with the onnx package: "
                            + ", ".join(_model_zoo_names()))
    p_run.add_argument("-o", "--output", metavar="OUT",
                       help="write the result here (default, or -: stdout; with --model-zoo, "
                            "only written when given)")
    p_run.add_argument("--shape", action="append", type=_parse_shape, metavar="NAME=D1,D2,...",
                       help="the shape of an ONNX input (repeatable)")
    p_run.add_argument("--print-before", action="append", metavar="NAME", default=[],
                       help="print the module before each run of pass NAME (stderr; repeatable; "
                            "instrument PrintBefore)")
    p_run.add_argument("--print-after", action="append", metavar="NAME", default=[],
                       help="print the module after each run of pass NAME (stderr; repeatable; "
                            "instrument PrintAfter)")
    p_run.add_argument("--print-after-all", action="store_true",
                       help="print the module after every pass (stderr; instrument PrintAfterAll)")
    p_run.add_argument("--print-changed", action="store_true",
                       help="print a diff of what each pass changed (stderr; instrument "
                            "PrintChanged), without type annotations unless --diff-types")
    p_run.add_argument("--diff-types", action="store_true",
                       help="keep the /* ty=... */ annotations in --print-changed's diffs")
    p_run.add_argument("--show-meta", action="store_true",
                       help="include the metadata section (the large constants) in the IR that "
                            "--print-before/--print-after(-all), --print-changed and --dump-dir "
                            "write")
    p_run.add_argument("--instrument", action="append", metavar="NAME[:OPT=VALUE,...]",
                       default=[], type=_instrument_argument,
                       help="run the registered instrument NAME with these options (TOML "
                            "values; repeatable)")
    p_run.add_argument("--verify-each", action="store_true",
                       help=f"after every pass, check that the module is well formed (instrument "
                            f"{DEFAULT_CHECKER}) and that the --typer pass accepts it; stop at "
                            "the first pass that breaks it")
    p_run.add_argument("--time", action="store_true",
                       help="print the pass timing table (stderr; the --timer instrument)")
    p_run.add_argument("--timer", metavar="NAME",
                       help=f"the instrument that times the passes for --time and --model-zoo, "
                            f"one with a render() method (default {DEFAULT_TIMER}); implies --time")
    p_run.add_argument("--typer", metavar="NAME",
                       help="the pass a crash reproducer's pipeline runs first to restore the "
                            "checked types, and that --verify-each runs after every pass "
                            f"({TYPER_DEFAULT_HELP})")
    p_run.add_argument("--dump-dir", metavar="DIR",
                       help="write the module after each pass into DIR, one numbered file per pass "
                            "(instrument DumpIR)")
    p_run.add_argument("--repro-dir", metavar="DIR",
                       help="when a pass raises, write the reproducer folder under DIR "
                            "(default ./relaypass-repro)")
    p_run.add_argument("--no-repro", action="store_true",
                       help="write no reproducer folder when a pass raises")
    p_run.add_argument("--check", action="store_true",
                       help="run the interpreter on seeded random inputs before and after the "
                            "pipeline; exit 1 if the outputs differ")
    p_run.add_argument("--rtol", type=_tolerance, default=DEFAULT_RTOL,
                       help=f"relative tolerance of the checks (default {DEFAULT_RTOL:g})")
    p_run.add_argument("--atol", type=_tolerance, default=DEFAULT_ATOL,
                       help=f"absolute tolerance of the checks (default {DEFAULT_ATOL:g})")
    p_run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p_run.add_argument("--reference", choices=("auto", "onnxruntime", "stored"), default="auto",
                       help="--model-zoo: what the result is checked against (default auto: "
                            "onnxruntime when installed, else the stored reference output)")
    p_run.add_argument("--weights", choices=("random", "shipped"),
                       help="--model-zoo: seeded random weights in place of the shipped uniform "
                            "ones (default with onnxruntime), or the shipped ones")
    _json_option(p_run, "with it, the module is written only with -o FILE")
    p_run.add_argument("--report", dest="report_file", metavar="FILE.json",
                       help="also write what the run did as one record of relaypass batch's "
                            "report (import time, per-pass times and counts, checks, error), "
                            "for relaypass compare-reports (relaypass help corpus)")
    p_run.add_argument("--viz-dir", metavar="DIR",
                       help="draw @main before the pipeline and after each pass into DIR, one "
                            "numbered file per pass (relaypass help corpus)")
    p_run.add_argument("--viz-format", choices=viz.FORMATS, default="svg",
                       help="the pictures' format for --viz-dir (default svg; svg and html need "
                            "Graphviz, dot needs nothing)")
    p_run.set_defaults(func=_cmd_run)

    p_bisect = sub.add_parser(
        "bisect", parents=[common],
        help="find the first pass after which the output changes or the module breaks",
        description="Run a pipeline pass by pass on a model and find the first pass of its "
                    "resolved schedule after which @main's output (on seeded random inputs) "
                    "differs from the input module's, or the module is ill formed or ill typed, "
                    "or the pass raises. Exit 0 when there is none, 1 when found.")
    pipeline_options(p_bisect)
    p_bisect.add_argument("model", nargs="?", metavar="MODEL",
                          help="a Relay text file (.relay, .txt), or .onnx with the onnx extra")
    p_bisect.add_argument("--model-zoo", metavar="NAME",
                          help="instead of MODEL, a model shipped with the onnx package")
    p_bisect.add_argument("--shape", action="append", type=_parse_shape,
                          metavar="NAME=D1,D2,...", help="the shape of an ONNX input (repeatable)")
    p_bisect.add_argument("--seed", type=int, default=0,
                          help="seed of the random inputs (and model-zoo weights; default 0)")
    p_bisect.add_argument("--rtol", type=_tolerance, default=DEFAULT_RTOL,
                          help=f"relative tolerance (default {DEFAULT_RTOL:g})")
    p_bisect.add_argument("--atol", type=_tolerance, default=DEFAULT_ATOL,
                          help=f"absolute tolerance (default {DEFAULT_ATOL:g})")
    p_bisect.add_argument("--weights", choices=("random", "shipped"),
                          help="--model-zoo: seeded random weights (default) or the shipped ones")
    p_bisect.add_argument("--checker", metavar="NAME",
                          help="the instrument whose checks decide that a module is ill formed "
                               f"(default {DEFAULT_CHECKER})")
    p_bisect.add_argument("--typer", metavar="NAME",
                          help=f"the pass that must accept the module after each pass "
                               f"({TYPER_DEFAULT_HELP})")
    p_bisect.add_argument("--linear", action="store_true",
                          help="evaluate @main after every pass in order instead of bisecting "
                               "(finds the first change even when a later pass undoes it)")
    p_bisect.add_argument("--full", action="store_true",
                          help="print the IR before and after the culprit in full, not as a diff")
    p_bisect.add_argument("--show-meta", action="store_true",
                          help="include the metadata section (constants) in the printed IR")
    _json_option(p_bisect, "instead of the report and the IR")
    p_bisect.set_defaults(func=_cmd_bisect)

    for name, func, what in (("passes", _cmd_passes, "passes"),
                             ("instruments", _cmd_instruments, "instruments")):
        p = sub.add_parser(name, parents=[common], help=f"list the registered {what}",
                           description=f"List the registered {what}, from the plugins' "
                                       "manifests (no plugin code is imported).")
        p.add_argument("name", nargs="?", metavar="NAME",
                       help=f"show this one's declaration in full: options (types, defaults)"
                            f"{', config keys, requirements' if what == 'passes' else ''}")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        load_option(p)
        p.set_defaults(func=func)

    p_explain = sub.add_parser("explain", parents=[common],
                               help="show the passes a pipeline would run, and why",
                               description="Show a pipeline's resolved schedule: the passes "
                                           "that run, the ones added as dependencies and the "
                                           "ones skipped, with the reason for each.")
    pipeline_options(p_explain)
    _json_option(p_explain, "instead of the table")
    p_explain.set_defaults(func=_cmd_explain)

    p_check = sub.add_parser("check", parents=[common], help="validate a pipeline file",
                             description="Validate a pipeline file without running it.")
    pipeline_source(p_check)
    out_dir_option(p_check)
    p_check.add_argument("--build", action="store_true",
                         help="also import and build every pass and instrument the pipeline "
                              "names, and the passes they require (runs the plugins' code)")
    _json_option(p_check, "instead of the ok line")
    p_check.set_defaults(func=_cmd_check)

    p_print = sub.add_parser("print", parents=[common],
                             help="parse a model and print it as Relay text",
                             description="Parse a Relay text model (or import an ONNX model) "
                                         "and print it as Relay text.")
    p_print.add_argument("model", metavar="MODEL", help="a Relay text file (- reads stdin), or .onnx")
    p_print.add_argument("--show-meta", action="store_true",
                         help="include the metadata section (the non-scalar constants), so that "
                              "the text parses back (without it they show as "
                              "meta[relay.Constant][i])")
    p_print.set_defaults(func=_cmd_print)

    p_match = sub.add_parser(
        "match", parents=[common], help="where a dataflow pattern matches in a model, or why not",
        description="Try a dataflow pattern (its text, as patterns print: "
                    "'nn.relu(nn.conv2d(*, *))'; or a file holding it) on every node of a "
                    "model. Prints each match; when there is none, the closest miss: the "
                    "sub-pattern that failed, the node it was tried on and why. Exit 0 when "
                    "the pattern matches somewhere, 1 when it matches nowhere.")
    p_match.add_argument("pattern", metavar="PATTERN", help="a pattern's text, or a file holding it")
    p_match.add_argument("model", metavar="MODEL", help="a Relay text file, or .onnx")
    p_match.add_argument("--untyped", dest="typed", action="store_false",
                         help="match the model as read, without type inference first "
                              "(type, shape and dtype checks then fail)")
    p_match.add_argument("--typer", metavar="PASS", default=None,
                         help=f"the type inference pass to run first ({TYPER_DEFAULT_HELP})")
    p_match.add_argument("--limit", type=int, default=20, metavar="N",
                         help="list at most N matches (default: 20)")
    p_match.set_defaults(func=_cmd_match)

    p_port = sub.add_parser("port", parents=[common],
                            help="port TVM Relay pass files: rewrite their tvm imports",
                            description="Rewrite the tvm imports of Python files to relaypass "
                                        "(nothing else changes) and list every name they use "
                                        "that relaypass does not provide. Prints a unified "
                                        "diff unless --write. The files are parsed, never run.")
    p_port.add_argument("files", nargs="+", metavar="FILE", help="a Python file (repeatable)")
    port_mode = p_port.add_mutually_exclusive_group()
    port_mode.add_argument("--write", action="store_true",
                           help="rewrite the files in place instead of printing the diff")
    port_mode.add_argument("--check", action="store_true",
                           help="exit 1 if a file would change or uses a name relaypass "
                                "does not provide")
    p_port.set_defaults(func=_cmd_port)
    # Commands whose code lives in a module of their own.
    optimize.register(sub, [common])
    batch.register(sub, [common])
    compare_reports.register(sub, [common])
    viz.register(sub, [common])
    help_pages.register(sub, [common])
    return parser


# --- errors -------------------------------------------------------------------------------
def _is_input_error(exc: BaseException) -> bool:
    return isinstance(exc, (RelayPassError, OSError))


# Messages written for Python callers point at the Python API; here the commands do the same.
_API_HINTS = (("list_passes() shows", "relaypass passes shows"),
              ("list_instruments() shows", "relaypass instruments shows"),
              ("plugin_errors() says why", "relaypass passes says why"))


def _one_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, with the pass it was raised in when one was."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    for api, command in _API_HINTS:
        line = line.replace(api, command)
    if not isinstance(exc, RelayPassError):
        line = f"{type(exc).__name__}: {line}"
    for note in getattr(exc, "__notes__", None) or ():
        if isinstance(note, str) and note.startswith("relaypass: "):
            line += f" [{note[len('relaypass: '):]}]"
            break
    return line


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """A warning as one line ``relaypass: warning: ...`` (a plugin's names the plugin)."""
    text = str(message).strip() or category.__name__
    if not issubclass(category, PluginWarning):
        text = f"{category.__name__}: {text}"
    _warning_line(text)


def main(argv: Sequence[str] | None = None) -> int:
    shown_before = warnings.showwarning
    warnings.showwarning = _show_warning
    _said.clear()
    try:
        return _main(argv)
    finally:
        warnings.showwarning = shown_before
        _restore_streams()


def _main(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    traceback_requested = "--traceback" in given
    # Made before parsing, so that a usage error is a JSON document too.
    report = _json_report(given)
    try:
        code = _dispatch(given, report)
        if report is not None:
            code = run_record.finish(report, code, sys.stdout)
        return code
    except KeyboardInterrupt:
        _err("relaypass: interrupted")
        return 130
    except BrokenPipeError:  # stdout closed early (| head): nothing more to say
        # Python flushes stdout again at exit; point it at devnull so that is silent too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if traceback_requested:
            raise
        code = _report_error(exc)
        if report is not None:
            report.fail(exc, _one_line(exc) + _reproducer_text(exc))
            code = run_record.finish(report, code, sys.stdout)
        return code


def _dispatch(given: list[str], report: Any) -> int:
    parser = build_parser()
    args = parser.parse_args(given)
    args.argv = given
    # run's Report records for --json and --report alike; nothing when neither is asked for.
    args.report = None if report is None else report.arm(getattr(args, "json", False),
                                                         getattr(args, "report_file", None))
    _prepare(args)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT_ERROR
    return func(args)


#: The commands whose --json prints one versioned document (run_report; relaypass help json-output).
_JSON_COMMANDS = ("run", "check", "explain", "bisect")


def _json_report(given: list[str]) -> Any:
    """The Report of ``relaypass COMMAND ... --json`` for a command of :data:`_JSON_COMMANDS`,
    and of every ``run`` (its ``--report FILE.json`` is known once parsed: Report.arm)."""
    command = next((a for a in given if not a.startswith("-")), None)
    json_output = command in _JSON_COMMANDS and "--json" in given
    if not json_output and command != "run":  # run may ask for --report FILE.json
        return None
    from .run_report import Report

    return Report(command, stdout=json_output)


def _report_error(exc: Exception) -> int:
    """Say what went wrong on stderr, and return the exit status.

    An input error is one line.  A bug is its traceback (relaypass's own
    frames left out) and one line naming the pass or instrument it came
    from, with the distribution to report it to.
    """
    from .blame import bug_report, format_traceback, name_instrument

    found = name_instrument(exc)
    line = _error_line(exc) + _reproducer_text(exc)
    if _is_input_error(exc):
        _err(line)
        return EXIT_INPUT_ERROR
    sys.stderr.write(format_traceback(exc))
    _err(f"{line}; this is a bug{bug_report(found)}")
    return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
