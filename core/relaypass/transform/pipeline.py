"""Pipeline files: an optimisation pipeline described in TOML, validated before anything runs.

A pipeline file names registered passes and instruments only; it has no way
to name a module, a factory or a path to code, so loading one can never run
code that is not already an installed (or in-process registered) plugin.
docs/pipeline-files.md is the reference; in short::

    name = "inference"               # optional (default: the file's stem)
    opt_level = 3                    # optional (default 2)
    required_pass = ["FoldConstant"] # optional, PassContext(required_pass=...)
    disabled_pass = []               # optional
    passes = [
        "InferType",                                   # a pass by name
        { name = "FuseOps", options = { fuse_opt_level = 2 } },
        { name = "cleanup", opt_level = 0, passes = ["DeadCodeElimination"] },
    ]

    [config]
    "relay.FuseOps.max_depth" = 10

    [[instruments]]
    name = "PassTimingInstrument"
    options = { print_on_exit = true, file = "timing.txt" }

:func:`read_pipeline` validates a file from declarations alone (no plugin is
imported); :func:`load_pipeline` then builds the passes and instruments.
Every problem is a :class:`PipelineError` naming the file, the key path and
what would be valid: also bytes that are not UTF-8, nesting too deep to read
and numbers that do not fit, so a hostile file gets the same one-line error
as a mistaken one.

A pipeline file writes only inside the output folder it is loaded for
(``out_dir``, by default the current directory; ``relaypass --out-dir``).
Option and config values declared with type ``path`` or ``output`` are
resolved there when the file is read: an absolute path, a ``..`` part or a
symbolic link leading out of the folder is a PipelineError naming the key,
and the factories get the resolved absolute path.  ``overrides =
["dist:Name"]`` makes the plain name ``Name`` mean that plugin's pass or
instrument in this pipeline, where it would otherwise mean the standard one
(see :mod:`relaypass.transform.registry`).
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..entry_points import split_qualified
from ..errors import RelayPassError
from .config import NAME_TYPES, OUTPUT_STREAMS, PATH_TYPES, shown, unknown_key_error
from .context import PassContext, pass_enabled
from .pass_info import PassInfo
from .passes import PRESERVES_ALL, Sequential, effect_holds
from .pattern_tables import check_pattern_table_name
from .registry import add_note, check_options, get_registry
from .targets import check_target_names

_TOP_KEYS = ("name", "opt_level", "required_pass", "disabled_pass", "passes", "config", "instruments",
             "overrides")
_PASS_KEYS = ("name", "options")
_SEQUENCE_KEYS = ("name", "passes", "opt_level", "required")
_INSTRUMENT_KEYS = ("name", "options")

#: How deep sequences may nest in a pipeline file (deeper is a PipelineError, never a
#: RecursionError while reading, building or running it).
MAX_NESTING = 50

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_MAX_KEY_PATH = 200


class PipelineError(RelayPassError):
    """A pipeline file is invalid; ``source`` and ``key_path`` say where."""

    def __init__(self, source: str, key_path: str, problem: str) -> None:
        self.source = source
        self.key_path = key_path
        self.problem = problem
        shown_path = key_path if len(key_path) <= _MAX_KEY_PATH else (
            key_path[: _MAX_KEY_PATH // 2] + " ... " + key_path[-_MAX_KEY_PATH // 2:])
        where = f"{source}: {shown_path}: " if key_path else f"{source}: "
        super().__init__(where + problem)


@dataclass(frozen=True)
class PassRef:
    """A pass named in a pipeline, with its options and where it was named.

    ``name`` is the pass's own name (what instruments and schedules see);
    ``lookup`` is the name the registry builds it by: a qualified name
    (``dist:Name``) when the file gave one or its ``overrides`` chose one.
    """

    name: str
    options: Mapping[str, Any]
    key_path: str
    lookup: str = ""

    def __post_init__(self) -> None:
        if not self.lookup:
            object.__setattr__(self, "lookup", self.name)


@dataclass(frozen=True)
class SequenceRef:
    """A (nested) sequence of a pipeline: becomes a Sequential."""

    name: str
    passes: tuple[PassRef | SequenceRef, ...]
    opt_level: int
    required: tuple[str, ...]
    key_path: str


@dataclass(frozen=True)
class InstrumentRef:
    name: str
    options: Mapping[str, Any]
    key_path: str


@dataclass(frozen=True)
class ScheduleStep:
    """One line of a pipeline's explained schedule.

    ``action`` is "run" or "skip"; ``reason`` says why (the enabled rule,
    "required by X", "effect of X still holds", ...); ``depth`` is the nesting.
    """

    depth: int
    name: str
    action: str
    reason: str


class _Reader:
    def __init__(self, source: str, out_dir: str) -> None:
        self.source = source
        self.out_dir = os.path.realpath(out_dir)
        self.registry = get_registry()
        self.sequence_names: set[str] = set()
        #: Plain name -> the qualified name the pipeline's ``overrides`` chose for it.
        self.overrides: dict[str, str] = {}

    def fail(self, key_path: str, problem: str) -> PipelineError:
        return PipelineError(self.source, key_path, problem)

    def keys(self, table: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in table:
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                hint = f"; did you mean {near[0]!r}?" if near else "."
                raise self.fail(_join(path, key), f"unknown key {shown(key)}{hint} Valid keys "
                                f"here: {', '.join(allowed)}")

    def opt_level(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(path, f"opt_level must be a non-negative integer, not {shown(value)}")
        return value

    def name_list(self, value: Any, path: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(path, f"expected a list of pass names, not {shown(value)}")
        return tuple(value)

    def options(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"options must be a table (e.g. {{ key = value }}), not "
                                  f"{shown(value)}")
        return value

    def pass_spec(self, name: str, path: str) -> Any:
        name = self.overrides.get(name, name)
        try:
            spec = self.registry.lookup_pass(name)
        except RelayPassError as exc:  # declared twice: the plugin error says by whom
            raise self.fail(path, str(exc)) from None
        if spec is None:
            raise self.fail(path, f"no pass named {shown(name)} is registered{self.near(name)}"
                                  f"{self.registry.unreadable_hint()}")
        return spec

    def read_overrides(self, value: Any, path: str) -> None:
        """``overrides = ["dist:Name", ...]``: in this pipeline, ``Name`` means that plugin's."""
        for i, qualified in enumerate(self.name_list(value, path)):
            where = f"{path}[{i}]"
            parts = split_qualified(qualified)
            if parts is None:
                raise self.fail(where, f"{shown(qualified)} is not a qualified name: an override "
                                       "names the plugin and the pass or instrument, as "
                                       "\"dist:Name\" (relaypass passes lists them)")
            plain = parts[1]
            try:
                spec = self.registry.lookup_pass(qualified)
                if spec is None:
                    self.registry.instrument_spec(qualified)
            except RelayPassError:
                raise self.fail(where, f"no installed plugin provides {shown(qualified)} "
                                       "(relaypass passes and relaypass instruments list the "
                                       "qualified names)") from None
            if plain in self.overrides and self.overrides[plain] != qualified:
                raise self.fail(where, f"{plain!r} is overridden twice, by "
                                       f"{self.overrides[plain]!r} and {qualified!r}")
            self.overrides[plain] = qualified

    def place(self, tname: str, value: str, key_path: str) -> str:
        """A ``path``/``output`` value resolved inside the output folder (or a stream name)."""
        if tname == "output" and value in OUTPUT_STREAMS:
            return value
        try:
            return contained_path(self.out_dir, value)
        except ValueError as exc:
            raise self.fail(key_path, str(exc)) from None

    def places(self, declared: Any, options: dict[str, Any], path: str) -> dict[str, Any]:
        """``options`` with each value of a declared path type resolved by :meth:`place`."""
        types = {o.name: o.type for o in declared or ()}
        return {key: self.place(types[key], value, _join(path, key))
                if types.get(key) in PATH_TYPES else value for key, value in options.items()}

    def provided(self, declared: Any, options: dict[str, Any], path: str) -> None:
        """Each value of a declared name type names a pattern table or target that exists.

        A pipeline naming a misspelt target would offload nothing, silently;
        here it fails where it is written, with the names that would work.
        """
        types = {o.name: o.type for o in declared or ()}
        for key, value in options.items():
            tname = types.get(key, "")
            if tname.removeprefix("list[").removesuffix("]") not in NAME_TYPES:
                continue
            names = value if isinstance(value, list) else [value]
            for i, name in enumerate(names):
                where = _join(path, key) + (f"[{i}]" if isinstance(value, list) else "")
                try:
                    if tname == "pattern_table":
                        check_pattern_table_name(name)
                    else:
                        check_target_names([name])
                except RelayPassError as exc:
                    raise self.fail(where, str(exc)) from None

    def near(self, name: str) -> str:
        names = list(self.registry.pass_names()) + sorted(self.sequence_names)
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        if near:
            return f"; did you mean {', '.join(repr(n) for n in near)}?"
        return " (list_passes() shows the registered passes)"

    def entry(self, item: Any, path: str, depth: int) -> PassRef | SequenceRef:
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict):
            raise self.fail(path, "a pass is a name, { name = ..., options = {...} } or a sequence "
                            f"{{ name = ..., passes = [...] }}, not {shown(item)}")
        if "passes" in item:
            if depth >= MAX_NESTING:
                raise self.fail(path, f"sequences nest more than {MAX_NESTING} deep")
            return self.sequence(item, path, depth + 1)
        self.keys(item, _PASS_KEYS, path)
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(_join(path, "name"), f"a pass entry needs a pass name, not {shown(name)}")
        spec = self.pass_spec(name, _join(path, "name"))
        opts = self.options(item.get("options", {}), _join(path, "options"))
        try:
            checked = check_options(spec, "pass", opts, check_types=True)
        except RelayPassError as exc:
            raise self.fail(_join(path, "options"), str(exc)) from None
        checked = self.places(spec.options, checked, _join(path, "options"))
        self.provided(spec.options, checked, _join(path, "options"))
        self.dependencies(spec.name, spec.required, path, spec)
        return PassRef(spec.name, checked, path, self.overrides.get(name, name))

    def sequence(self, item: Mapping[str, Any], path: str, depth: int = 0) -> SequenceRef:
        self.keys(item, _SEQUENCE_KEYS, path)
        name = item.get("name", "sequential")
        if not isinstance(name, str) or not name:
            raise self.fail(_join(path, "name"), "a sequence name must be a non-empty string, "
                                                 f"not {shown(name)}")
        opt_level = self.opt_level(item.get("opt_level", 0), _join(path, "opt_level"))
        required = self.name_list(item.get("required", []), _join(path, "required"))
        members = item["passes"]
        if not isinstance(members, list):
            raise self.fail(_join(path, "passes"), f"expected a list of passes, not {shown(members)}")
        self.sequence_names.add(name)
        for i, dep in enumerate(required):
            self.pass_spec(dep, f"{_join(path, 'required')}[{i}]")
        self.dependencies(name, required, path, None)
        refs = tuple(self.entry(m, f"{_join(path, 'passes')}[{i}]", depth)
                     for i, m in enumerate(members))
        return SequenceRef(name, refs, opt_level, required, path)

    def dependencies(self, name: str, required: tuple[str, ...], path: str, spec: Any) -> None:
        try:
            if spec is not None:
                self.registry.spec_plan(spec)
            elif required:
                self.registry.dependency_plan(PassInfo(0, name, required), f"pipeline {self.source}")
        except RelayPassError as exc:
            raise self.fail(path, str(exc)) from None

    def config(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"config must be a table of key = value, not {shown(value)}")
        flat = _flatten(value, path)
        declared = self.registry.config_keys()
        out = {}
        for key, (val, key_path) in flat.items():
            decl = declared.get(key)
            if decl is None:
                try:
                    self.registry.raise_if_config_conflicted(key)
                except RelayPassError as exc:
                    raise self.fail(key_path, str(exc)) from None
                raise self.fail(key_path, str(unknown_key_error(key, declared)))
            try:
                out[key] = decl.check(val)
            except RelayPassError as exc:
                raise self.fail(key_path, str(exc)) from None
            if decl.type in PATH_TYPES:
                out[key] = self.place(decl.type, out[key], key_path)
        return out

    def instruments(self, value: Any, path: str) -> tuple[InstrumentRef, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected an array of tables ([[instruments]]), not {shown(value)}")
        refs = []
        for i, item in enumerate(value):
            ipath = f"{path}[{i}]"
            if isinstance(item, str):
                item = {"name": item}
            if not isinstance(item, dict):
                raise self.fail(ipath, "an instrument is a name or { name = ..., options = {...} }, "
                                       f"not {shown(item)}")
            self.keys(item, _INSTRUMENT_KEYS, ipath)
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise self.fail(_join(ipath, "name"), "an instrument entry needs a name, not "
                                                      f"{shown(name)}")
            name = self.overrides.get(name, name)
            try:
                spec = self.registry.instrument_spec(name)
                opts = check_options(spec, "instrument",
                                     self.options(item.get("options", {}), _join(ipath, "options")),
                                     check_types=True)
            except PipelineError:
                raise
            except RelayPassError as exc:
                raise self.fail(_join(ipath, "name" if "no instrument" in str(exc) else "options"),
                                str(exc)) from None
            opts = self.places(spec.options, opts, _join(ipath, "options"))
            refs.append(InstrumentRef(name, opts, ipath))
        return tuple(refs)

    def read(self, data: Mapping[str, Any], default_name: str) -> PipelineSpec:
        self.keys(data, _TOP_KEYS, "")
        self.read_overrides(data.get("overrides", []), "overrides")
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name:
            raise self.fail("name", f"the pipeline name must be a non-empty string, not {shown(name)}")
        opt_level = self.opt_level(data.get("opt_level", 2), "opt_level")
        if "passes" not in data:
            raise self.fail("passes", "missing: a pipeline lists its passes, e.g. passes = [\"MyPass\"]")
        root = self.sequence({"name": name, "passes": data["passes"]}, "")
        root = SequenceRef(root.name, root.passes, 0, (), "passes")
        required_pass = self.name_list(data.get("required_pass", []), "required_pass")
        disabled_pass = self.name_list(data.get("disabled_pass", []), "disabled_pass")
        for key, names in (("required_pass", required_pass), ("disabled_pass", disabled_pass)):
            for i, n in enumerate(names):
                if n not in self.sequence_names and not self.registry.has_pass(n):
                    raise self.fail(f"{key}[{i}]", f"no pass named {shown(n)} is registered"
                                                   f"{self.near(n)}"
                                                   f"{self.registry.unreadable_hint()}")
        config = self.config(data.get("config", {}), "config")
        instruments = self.instruments(data.get("instruments", []), "instruments")
        return PipelineSpec(self.source, name, opt_level, required_pass, disabled_pass, config,
                            root, instruments)


def _key(key: str) -> str:
    """A TOML key as a key path shows it: bare when it can be, else quoted with escapes."""
    if _BARE_KEY.match(key):
        return key
    escaped = "".join(c if c.isprintable() and c not in '"\\' else
                      ("\\" + c if c in '"\\' else f"\\u{ord(c):04x}") for c in key)
    return f'"{escaped}"'


def _join(path: str, key: str) -> str:
    return f"{path}.{_key(key)}" if path else _key(key)


def _flatten(table: Mapping[str, Any], path: str) -> dict[str, tuple[Any, str]]:
    """``{dotted key: (value, key path)}`` of a (nested) config table, without recursion.

    ``[config.relay.FuseOps] max_depth = 3`` and ``"relay.FuseOps.max_depth" = 3``
    are one key.  A dotted key of thousands of parts nests as deep: a loop reads it.
    """
    out: dict[str, tuple[Any, str]] = {}
    stack: list[tuple[Mapping[str, Any], str, str]] = [(table, "", path)]
    while stack:
        current, prefix, key_path = stack.pop()
        items = list(current.items())
        for key, value in reversed(items):
            name = f"{prefix}.{key}" if prefix else key
            sub_path = _join(key_path, key)
            if isinstance(value, dict):
                stack.append((value, name, sub_path))
            else:
                out[name] = (value, sub_path)
    return out


def contained_path(out_dir: str, value: str) -> str:
    """``value``, a relative path, resolved inside ``out_dir``; ValueError when it leaves it.

    Refused: an absolute path (or one with a drive), a ``..`` part, and a path
    that a symbolic link (existing now) leads out of the folder.
    """
    root = os.path.realpath(out_dir)
    parts = re.split(r"[\\/]+", value)
    if os.path.isabs(value) or os.path.splitdrive(value)[0] or value.startswith(("/", "\\")):
        raise ValueError(f"{shown(value)} is an absolute path; a pipeline file writes only "
                         f"inside the output folder {root} (give a path relative to it)")
    if ".." in parts:
        raise ValueError(f"{shown(value)} has a '..' part; a pipeline file writes only inside "
                         f"the output folder {root}")
    resolved = os.path.realpath(os.path.join(root, value))
    if os.path.commonpath([resolved, root]) != root:
        raise ValueError(f"{shown(value)} leads out of the output folder {root} through a "
                         f"symbolic link (to {resolved})")
    return resolved


class _StandIn:
    """What the schedule simulation records for a pass that would run."""

    __slots__ = ("info", "preserves")

    def __init__(self, name: str, preserves: frozenset[str]) -> None:
        self.info = _Info(name)
        self.preserves = preserves


class _Info:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


@dataclass(frozen=True)
class PipelineSpec:
    """A validated pipeline file: everything it says, before any plugin is imported."""

    source: str
    name: str
    opt_level: int
    required_pass: tuple[str, ...]
    disabled_pass: tuple[str, ...]
    config: Mapping[str, Any]
    passes: SequenceRef
    instruments: tuple[InstrumentRef, ...] = field(default=())

    def build(self) -> Pipeline:
        """Build the passes and instruments (importing their plugins): a runnable Pipeline."""
        registry = get_registry()

        def at(ref: Any, build: Any) -> Any:
            try:
                return build()
            except RelayPassError as exc:
                add_note(exc, f"relaypass: while building {ref.name!r} for {self.source}: {ref.key_path}")
                raise

        def sequential(seq: SequenceRef) -> Sequential:
            members = []
            for ref in seq.passes:
                if isinstance(ref, SequenceRef):
                    members.append(sequential(ref))
                else:
                    members.append(at(ref, lambda r=ref: registry.build_pass(r.lookup, r.options)))
            return Sequential(members, seq.opt_level, seq.name, seq.required)

        seq = sequential(self.passes)
        instruments = [at(ref, lambda r=ref: registry.build_instrument(r.name, r.options))
                       for ref in self.instruments]
        return Pipeline(self, seq, instruments)

    def schedule(self) -> list[ScheduleStep]:
        """What running the pipeline would do, pass by pass, from declarations alone.

        Applies the enabled rule, adds required passes where they would run and
        leaves out those whose effect would still hold.  Instruments'
        ``should_run`` answers cannot be known in advance and are not simulated.
        """
        registry = get_registry()
        steps: list[ScheduleStep] = []
        log: list[_StandIn] = []
        disabled, required = set(self.disabled_pass), set(self.required_pass)

        def preserves(name: str) -> frozenset[str]:
            spec = registry.lookup_pass(name)
            return frozenset(spec.preserves) if spec is not None else frozenset()

        def deps(name: str, required_names: tuple[str, ...], depth: int, spec: Any) -> None:
            plan = registry.spec_plan(spec) if spec is not None else registry.dependency_plan(
                _plan_info(name, required_names), f"pipeline {self.source}")
            for dep in plan:
                if effect_holds(log, dep):
                    steps.append(ScheduleStep(depth, dep, "skip", f"required by {name}; its effect still holds"))
                else:
                    steps.append(ScheduleStep(depth, dep, "run", f"required by {name}"))
                    log.append(_StandIn(dep, preserves(dep)))

        def walk(seq: SequenceRef, depth: int) -> None:
            for ref in seq.passes:
                if isinstance(ref, SequenceRef):
                    name, level, req, spec = ref.name, ref.opt_level, ref.required, None
                else:
                    spec = registry.pass_spec(ref.lookup)
                    name, level, req = spec.name, spec.opt_level, spec.required
                if not pass_enabled(name, level, self.opt_level, required, disabled):
                    why = ("disabled_pass" if name in disabled
                           else f"opt_level {level} > pipeline opt_level {self.opt_level}")
                    steps.append(ScheduleStep(depth, name, "skip", why))
                    continue
                why = "required_pass" if name in required else f"opt_level {level} <= {self.opt_level}"
                if req:
                    deps(name, req, depth, spec)
                steps.append(ScheduleStep(depth, name, "run", why))
                if isinstance(ref, SequenceRef):
                    walk(ref, depth + 1)
                    log.append(_StandIn(name, frozenset((PRESERVES_ALL,))))
                else:
                    log.append(_StandIn(name, preserves(name)))

        steps.append(ScheduleStep(0, self.passes.name, "run", "the pipeline"))
        walk(self.passes, 1)
        return steps

    def explain(self) -> str:
        """The schedule as indented text, one pass per line."""
        lines = [f"pipeline {self.name} ({self.source}), opt_level {self.opt_level}"]
        for step in self.schedule()[1:]:
            mark = "+" if step.action == "run" else "-"
            lines.append(f"{'  ' * step.depth}{mark} {step.name}  ({step.reason})")
        return "\n".join(lines)


def _plan_info(name: str, required: tuple[str, ...]) -> Any:
    return PassInfo(0, name, required)


class Pipeline:
    """A loaded pipeline: its Sequential, its instruments and the context they run in.

    ``pipeline(mod)`` runs it under :meth:`context`; or enter ``pipeline.context()``
    yourself and call ``pipeline.sequential``.  ``instruments`` are built once,
    so what they keep can be read after a run; what an instrument clears when
    its context exits (a timing profile, as in TVM) is read inside
    ``with pipeline.context():``, or written out on exit (``print_on_exit``).
    """

    __slots__ = ("spec", "sequential", "instruments")

    def __init__(self, spec: PipelineSpec, sequential: Sequential, instruments: list[Any]) -> None:
        self.spec = spec
        self.sequential = sequential
        self.instruments = instruments

    def context(self) -> PassContext:
        """A new PassContext with the pipeline's opt_level, required/disabled passes, config, instruments."""
        s = self.spec
        return PassContext(opt_level=s.opt_level, required_pass=s.required_pass,
                           disabled_pass=s.disabled_pass, instruments=self.instruments,
                           config=dict(s.config))

    def __call__(self, mod: Any) -> Any:
        with self.context():
            return self.sequential(mod)

    run = __call__

    def __repr__(self) -> str:
        return f"<Pipeline {self.spec.name} from {self.spec.source}>"


def parse_pipeline(text: str, source: str = "<string>",
                   out_dir: str | os.PathLike[str] | None = None) -> PipelineSpec:
    """Validate pipeline TOML ``text`` (``source`` names it in errors) from declarations alone.

    ``out_dir`` is the folder the pipeline may write in (default: the current
    directory): its ``path`` and ``output`` values are resolved there.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PipelineError(source, "", f"not valid TOML: {exc}") from None
    except RecursionError:
        raise PipelineError(source, "", "not readable: arrays or inline tables nested too deeply "
                                        "for the TOML reader") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise PipelineError(source, "", f"not readable ({shown(str(exc), 120)})") from None
    stem = os.path.splitext(os.path.basename(source))[0] if source != "<string>" else "pipeline"
    return pipeline_from_data(data, source, out_dir, stem or "pipeline")


def pipeline_from_data(data: Mapping[str, Any], source: str,
                       out_dir: str | os.PathLike[str] | None = None,
                       default_name: str = "pipeline") -> PipelineSpec:
    """Validate a pipeline given as the tables a pipeline file's TOML holds.

    Another syntax for pipelines (:mod:`relaypass.transform.inline_pipeline`)
    gives its reading here, so that what it accepts and the errors it gets are
    exactly a file's.  ``out_dir``: see :func:`parse_pipeline`.
    """
    folder = os.getcwd() if out_dir is None else os.fspath(out_dir)
    return _Reader(source, folder).read(data, default_name)


def read_pipeline(path: str | os.PathLike[str],
                  out_dir: str | os.PathLike[str] | None = None) -> PipelineSpec:
    """Validate the pipeline file at ``path`` without importing any plugin (``out_dir``: see
    :func:`parse_pipeline`)."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise PipelineError(source, "", f"cannot read the pipeline file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PipelineError(source, "", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                                        f"{exc.start})") from None
    return parse_pipeline(text, source, out_dir)


def load_pipeline(path: str | os.PathLike[str],
                  out_dir: str | os.PathLike[str] | None = None) -> Pipeline:
    """Validate, then build, the pipeline file at ``path``; nothing runs until it is called.

    The pipeline writes only inside ``out_dir`` (default: the current directory).
    """
    return read_pipeline(path, out_dir).build()
