"""Crash reproducers: what someone needs to see a pass fail again, in one folder.

When a pass raises during ``relaypass run``, the useful bug report is not the
model and the whole pipeline but the module *that pass* was given and the
passes from it on.  :func:`write_reproducer` writes:

``input.relay``
    the module as it was given to the failing pass (text format, constants
    in its metadata section);
``pipeline.toml``
    a pipeline file holding the failing pass and the rest of the schedule
    after it, flattened into one list, with the pipeline's opt_level, config,
    required and disabled passes; the instruments are left out;
``options.json``
    the command line of the failing run;
``versions.json``
    the versions of relaypass, Python, numpy and of every plugin
    distribution whose passes or instruments took part, from the installed
    metadata;
``README.txt``
    what failed and how to run it again: ``relaypass run pipeline.toml input.relay``.

The text format does not keep the checked types the typing pass filled in,
so when the module given to the failing pass was typed, the reproducer
pipeline runs that pass first to restore them: the ``typer`` given (``relaypass
run --typer``), by default the pass with role "type-inference" (InferType
among the standard passes; see :mod:`relaypass.tools.defaults`).
Positions in error messages then refer to ``input.relay`` instead of the
original model file.

No reproducer is written when the input itself is at fault
(:func:`input_at_fault`): the model file and the pipeline already reproduce
that failure, and the error names the place in the model.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import tomli_w

from ..errors import RelayPassError
from ..transform.pipeline import PipelineSpec, SequenceRef
from .schedule import ScheduledPass, StepRun, runnable

__all__ = ["DEFAULT_ROOT", "input_at_fault", "reproducer_pipeline", "versions",
           "write_reproducer"]

#: Where reproducer folders go unless told otherwise (relative to the working directory).
DEFAULT_ROOT = "relaypass-repro"

_TYPES_RESTORED = "restores the checked types the module had (the text format does not keep them)"


def write_reproducer(root: str, spec: PipelineSpec, schedule: list[ScheduledPass],
                     failed: StepRun, error_line: str, options: Mapping[str, Any],
                     instruments: Sequence[str] = (), model_format: str = "relay",
                     typer: str | None = None) -> str:
    """Write a reproducer folder under ``root`` for the step ``failed``; return its path.

    ``error_line`` is the error as the user saw it; ``options`` the command
    line (JSON-able); ``instruments`` the names of the instruments of the
    run, whose distributions are recorded too; ``model_format`` "onnx" adds
    the onnx version; ``typer`` the pass that restores checked types (None:
    the default typing pass, see :func:`reproducer_pipeline`).
    """
    from ..ir.text.io import save

    typer = _typer(typer)
    folder = _new_folder(root, failed.step.name)
    save(failed.before, os.path.join(folder, "input.relay"))
    _write(folder, "pipeline.toml", reproducer_pipeline(spec, schedule, failed, error_line, typer))
    _write(folder, "options.json", json.dumps(options, indent=2, default=str) + "\n")
    lookups = _lookups(spec)
    names = [lookups.get(s.key_path, s.name) for s in runnable(schedule)]
    if _restores_types(failed, typer):
        names.append(typer)  # its distribution takes part too
    found = versions(names, instruments, model_format)
    _write(folder, "versions.json", json.dumps(found, indent=2) + "\n")
    _write(folder, "README.txt", _readme(spec, schedule, failed, error_line, found, typer))
    return folder


def input_at_fault(failed: StepRun, given: Any, exc: BaseException) -> bool:
    """Whether the failure of step ``failed`` is the fault of ``given``, the module the run began with.

    It is when the failing pass was handed that module unchanged (no pass
    before it had altered it) and rejected it as bad input, with a
    :class:`~relaypass.errors.RelayPassError`: typically the typing pass
    finding a type error in the user's model.  A reproducer would only copy
    the model and the pipeline.  Any other exception on the same module is
    still a bug of the pass, worth a reproducer (its folder records the
    versions involved).
    """
    if not isinstance(exc, RelayPassError):
        return False
    before = failed.before
    if before is given:
        return True
    kept = given.functions
    return (before.attrs is given.attrs and len(before) == len(kept)
            and all(kept.get(gv) is f for gv, f in before.items()))


def reproducer_pipeline(spec: PipelineSpec, schedule: list[ScheduledPass], failed: StepRun,
                        error_line: str = "", typer: str | None = None) -> str:
    """The text of a pipeline file running ``failed``'s pass and the rest of the schedule.

    Every step from the failing one on is listed in the order it ran,
    dependencies included (so a requirement is not run twice and the failing
    pass finds what it found); a dependency above the pipeline's opt_level
    is added to ``required_pass`` so that it still runs.  Sequences are
    flattened: a sequence only groups passes and never changes what runs.
    When the failing pass was given a typed module, the pass ``typer`` (None:
    the pass with role "type-inference", else InferType) runs first to restore
    the types; it is left out when it is not registered.
    """
    from ..transform.registry import get_registry

    typer = _typer(typer)
    registry = get_registry()
    steps = runnable(schedule)
    start = next(i for i, s in enumerate(steps) if s.index == failed.step.index)
    tail = steps[start:]
    required = [n for n in spec.required_pass if registry.has_pass(n)]
    for s in tail:
        if s.kind == "dependency":
            decl = registry.lookup_pass(s.name)
            if decl is not None and decl.opt_level > spec.opt_level and s.name not in required:
                required.append(s.name)
    disabled = [n for n in spec.disabled_pass if registry.has_pass(n)]

    entries: list[Any] = []
    notes: list[str] = []
    if _restores_types(failed, typer) and registry.has_pass(typer):
        entries.append(typer)
        notes.append(f"{typer}: {_TYPES_RESTORED}")
    total = len(steps)
    lookups = _lookups(spec)
    for s in tail:
        name = lookups.get(s.key_path, s.name) if s.kind == "pass" else s.name
        entries.append(name if not s.options else {"name": name, "options": dict(s.options)})
        note = f"step {s.index} of {total}"
        if s is tail[0]:
            note += ", the pass that raised"
        elif s.kind == "dependency":
            note += f", {s.reason}"
        notes.append(f"{s.name}: {note}")

    lines = [f"Reproducer: {failed.step.name} and the rest of the schedule of pipeline "
             f"{spec.name} ({spec.source}) after it."]
    if error_line:
        lines.append(f"It failed with: {error_line}")
    lines += ["Run: relaypass run pipeline.toml input.relay", "", "The passes, in order:"]
    lines += [f"  {i}. {note}" for i, note in enumerate(notes, 1)]
    document: dict[str, Any] = {"name": spec.name, "opt_level": spec.opt_level}
    if required:
        document["required_pass"] = required
    if disabled:
        document["disabled_pass"] = disabled
    document["passes"] = entries
    if spec.config:
        document["config"] = {key: _plain(value) for key, value in spec.config.items()}
    return "".join(_comment(line) for line in lines) + "\n" + tomli_w.dumps(_plain(document))


def versions(passes: Sequence[str], instruments: Sequence[str] = (),
             model_format: str = "relay") -> dict[str, Any]:
    """The versions that matter to a reproduction, read from the installed metadata.

    ``plugins`` lists each distribution providing one of ``passes`` or
    ``instruments``, with the names it provided.
    """
    from importlib import metadata

    from ..transform.registry import get_registry

    def installed(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    out: dict[str, Any] = {
        "relaypass": installed("relaypass"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": installed("numpy"),
        "platform": platform.platform(),
    }
    if model_format == "onnx":
        out["onnx"] = installed("onnx")
    registry = get_registry()
    plugins: dict[tuple[str, str], dict[str, Any]] = {}

    def add(origin: Any, what: str, name: str) -> None:
        dist = origin.distribution if not origin.in_process else f"in-process ({origin.module})"
        entry = plugins.setdefault((dist, origin.version), {
            "distribution": dist, "version": origin.version, "passes": [], "instruments": []})
        if name not in entry[what]:
            entry[what].append(name)

    for name in passes:
        spec = registry.lookup_pass(name)
        if spec is not None:
            add(spec.origin, "passes", name)
    for name in instruments:
        add(registry.instrument_spec(name).origin, "instruments", name)
    out["plugins"] = list(plugins.values())
    return out


# --- helpers --------------------------------------------------------------------------------
def _new_folder(root: str, pass_name: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = os.path.join(root, f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', pass_name)}")
    path, n = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            n += 1
            path = f"{base}-{n}"


def _write(folder: str, name: str, text: str) -> None:
    with open(os.path.join(folder, name), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def _typer(typer: str | None) -> str:
    if typer:
        return typer
    from .defaults import default_typer

    return default_typer()


def _restores_types(failed: StepRun, typer: str) -> bool:
    """Whether the reproducer runs ``typer`` first: the failing pass got typed input and is not it."""
    return _typed(failed.before) and failed.step.name != typer


def _typed(mod: Any) -> bool:
    from ..ir.expr import Function

    return any(isinstance(f, Function) and f.body.has_checked_type for _, f in mod.items())


def _lookups(spec: PipelineSpec) -> dict[str, str]:
    """The name each pass entry of ``spec`` is built by (qualified when the file chose a
    plugin's pass by ``dist:Name`` or ``overrides``), by key path."""
    out: dict[str, str] = {}
    stack: list[Any] = [spec.passes]
    while stack:
        ref = stack.pop()
        if isinstance(ref, SequenceRef):
            stack.extend(ref.passes)
        else:
            out[ref.key_path] = ref.lookup
    return out


def _plain(value: Any) -> Any:
    """``value`` with tuples made lists, as the TOML writer takes them (values are TOML's own)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _comment(text: str) -> str:
    """``text`` as a TOML comment line: control characters, which TOML forbids there, escaped."""
    safe = "".join(c if c == "\t" or c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return f"# {safe}".rstrip() + "\n"


def _readme(spec: PipelineSpec, schedule: list[ScheduledPass], failed: StepRun,
            error_line: str, found: Mapping[str, Any], typer: str) -> str:
    from ..transform.registry import get_registry

    step = failed.step
    total = len(runnable(schedule))
    origin = next((f"{p['distribution']} {p['version']}" for p in found["plugins"]
                   if step.name in p["passes"]), "")
    came = f" (from {origin})" if origin else ""
    added = f", {step.reason}" if step.kind == "dependency" else ""
    typed = _restores_types(failed, typer) and get_registry().has_pass(typer)
    lines = [
        "relaypass crash reproducer",
        "",
        f"Pass {step.name}{came}, step {step.index} of {total}{added} of pipeline "
        f"{spec.name} ({spec.source}), raised:",
        "",
        f"    {error_line}",
        "",
        "To see it again, from this folder:",
        "",
        "    relaypass run pipeline.toml input.relay",
        "",
        "(add --no-repro not to write another reproducer of it).",
        "",
        f"input.relay    the module as it was given to {step.name}",
        f"pipeline.toml  {step.name} and the {total - step.index} passes after it in the schedule, "
        "with the",
        "               pipeline's opt_level, config, required and disabled passes "
        "(instruments left out)",
        "options.json   the command line of the failing run",
        "versions.json  the versions of relaypass, Python, numpy and the plugin distributions "
        "involved",
    ]
    if typed:
        lines += ["", f"The module given to {step.name} had checked types; the text format does "
                  "not keep them,", f"so pipeline.toml runs {typer} first to restore them."]
    lines += ["", "Positions in error messages refer to input.relay, not to the original model."]
    return "\n".join(lines) + "\n"
