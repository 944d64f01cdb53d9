"""The pass and instrument registry: every declared name, resolved lazily to code.

The registry merges what its declaration sources declare (installed plugin
distributions, through :mod:`relaypass.plugins`, which the package root
connects) and what code in this process registered (:func:`register_pass`)
into one namespace of passes and one of instruments, plus the config keys the
passes declare.  Everything up to building a pass reads declarations only; a pass's
code is imported by :func:`get_pass` (or a pipeline, or a dependency run)
through its factory, the first time it is built.  The declaration is the
one place a pass's info (name, opt_level, required) and preserves are
written: a factory returning the bare transformation gets a pass made from
it, and a factory returning a whole pass is checked against it.  It is also
the one place option defaults are written: a factory is called with every
declared option, the declared default standing for each one not given.

Failures stay contained: a bad manifest, two plugins declaring one name or a
plugin hook that raised are recorded and reported where the affected name is
used, while every other name keeps working (see :func:`plugin_errors`).

A name is never taken over quietly.  Every installed pass and instrument can
be named ``qualifier:Name`` (the qualifier: its entry point's or its
distribution's name, ``relaypass_std:FoldConstant``); a plain name declared
by the standard distribution and by another keeps meaning the standard one
(the other is reported as shadowed, a :class:`NameShadowedError` in
:func:`plugin_errors` and one :class:`~relaypass.entry_points.PluginWarning`),
unless the user names the other in ``RELAYPASS_OVERRIDES`` (this process) or
in a pipeline file's ``overrides`` (that pipeline).  A name two non-standard
distributions declare is usable only by its qualified names.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..entry_points import (
    OVERRIDES_VARIABLE,
    STANDARD_DISTRIBUTION,
    PluginWarning,
    override_allowed,
    overrides_from_environment,
    plugin_warnings,
    qualifiers,
)
from ..errors import RelayPassError
from . import lookup
from .config import ConfigError, ConfigKey, coerce_value, describe_type, make_config_key, shown
from .errors import (
    DuplicatePassError,
    ManifestError,
    MissingDependencyError,
    OptionError,
    PassNotFoundError,
    PluginBuildError,
    PluginError,
    PluginImportError,
    RoleConflictError,
)
from .instrument import PassInstrument
from .pass_info import PassInfo
from .passes import FunctionPass, ModulePass, Pass, Sequential, add_note
from .resolution import dependency_order
from .specs import IN_PROCESS, PASS_KINDS, PASS_ROLES, InstrumentSpec, OptionSpec, Origin, PassSpec


class NameShadowedError(DuplicatePassError):
    """A plugin declares a name the standard distribution provides; the standard one is kept.

    Not raised: recorded in :func:`plugin_errors` (and warned about once), so
    that listings say which plugin's pass or instrument is reachable only by
    its qualified name.
    """


class DeclarationSource(Protocol):
    """Somewhere passes and instruments are declared, besides this process's registrations.

    :mod:`relaypass.plugins` provides the one the package root connects: the
    installed plugin distributions and the plugin objects given to
    ``register_plugin``.  The registry asks for declarations when it builds its
    merged view, and tells the source what it built and what went wrong, so a
    source can pass those events on (as hooks) to its plugins.
    """

    def declarations(self) -> tuple[list[PassSpec], list[InstrumentSpec], list[PluginError]]:
        """Every pass and instrument declared, and the errors met reading them."""

    def forget(self) -> None:
        """Drop whatever was discovered, so the next ``declarations`` looks again."""

    def pass_built(self, spec: PassSpec, pass_: Pass) -> None: ...

    def instrument_built(self, spec: InstrumentSpec, instrument: PassInstrument) -> None: ...

    def error_reported(self, error: PluginError) -> None: ...


class InProcessDeclarations:
    """The passes and instruments registered by code running in this process."""

    def __init__(self) -> None:
        self.passes: dict[str, PassSpec] = {}
        self.instruments: dict[str, InstrumentSpec] = {}
        #: Names registered with ``override=True``: they shadow an installed plugin's.
        self.overrides: set[str] = set()
        self.instrument_overrides: set[str] = set()


@dataclass
class _State:
    """The merged declarations at one point in time (rebuilt when plugins change)."""

    passes: dict[str, PassSpec] = field(default_factory=dict)
    instruments: dict[str, InstrumentSpec] = field(default_factory=dict)
    pass_conflicts: dict[str, PluginError] = field(default_factory=dict)
    instrument_conflicts: dict[str, PluginError] = field(default_factory=dict)
    config: dict[str, ConfigKey] = field(default_factory=dict)
    config_conflicts: dict[str, ConfigError] = field(default_factory=dict)
    errors: list[PluginError] = field(default_factory=list)
    #: Every installed declaration by qualified name ("dist:Name", "entry_point:Name").
    qualified_passes: dict[str, PassSpec] = field(default_factory=dict)
    qualified_instruments: dict[str, InstrumentSpec] = field(default_factory=dict)
    #: (the declaration not reachable by its plain name, the one that is), for listings.
    shadowed: list[tuple[Any, Any]] = field(default_factory=list)
    plans: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = field(default_factory=dict)
    dependency_passes: dict[str, Pass] = field(default_factory=dict)
    role_passes: dict[str, Pass] = field(default_factory=dict)


def _kind_of(p: Pass) -> str:
    if isinstance(p, FunctionPass):
        return "function"
    if isinstance(p, Sequential):
        return "sequential"
    return "module"


class Registry:
    """Declared passes and instruments, the sources that declare them, and the built factories."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._sources: list[DeclarationSource] = []
        self.in_process = InProcessDeclarations()
        self._state: _State | None = None
        self._factories: dict[tuple[str, str], Callable[..., Any]] = {}
        # The declaration of each instrument built here, so that an error it raises can
        # name its distribution (a pass carries its own ``origin``).
        self._built_instruments: weakref.WeakKeyDictionary[Any, InstrumentSpec] = (
            weakref.WeakKeyDictionary())

    def add_source(self, source: DeclarationSource) -> None:
        """Merge what ``source`` declares from now on."""
        with self._lock:
            self._sources.append(source)
            self.invalidate()

    # --- building the merged view ------------------------------------------------------
    def invalidate(self) -> None:
        """Forget the merged declarations (in-process registrations or plugin objects changed)."""
        with self._lock:
            self._state = None

    def refresh(self) -> None:
        """Rediscover what the sources declare (after ``pip install``/``uninstall`` in this process)."""
        with self._lock:
            for source in self._sources:
                source.forget()
            self._factories.clear()
            self.invalidate()

    def _get_state(self) -> _State:
        state = self._state
        if state is not None:
            return state
        with self._lock:
            if self._state is None:
                self._state = self._build_state()
            return self._state

    def _build_state(self) -> _State:
        state = _State()
        pass_specs: list[PassSpec] = []
        instrument_specs: list[InstrumentSpec] = []
        for source in self._sources:
            passes, instruments, errors = source.declarations()
            pass_specs.extend(passes)
            instrument_specs.extend(instruments)
            state.errors.extend(errors)
        pass_specs.extend(self.in_process.passes.values())
        instrument_specs.extend(self.in_process.instruments.values())
        allowed = overrides_from_environment()
        _qualify(pass_specs, state.qualified_passes)
        _qualify(instrument_specs, state.qualified_instruments)
        self._merge(pass_specs, state.passes, state.pass_conflicts, state.errors,
                    self.in_process.overrides, "pass", allowed, state.shadowed)
        self._merge(instrument_specs, state.instruments, state.instrument_conflicts, state.errors,
                    self.in_process.instrument_overrides, "instrument", allowed, state.shadowed)
        for spec in state.passes.values():
            for key in spec.config:
                self._add_config_key(state, key)
        for error in state.errors:
            for source in self._sources:
                source.error_reported(error)
        return state

    @staticmethod
    def _merge(specs: list[Any], into: dict[str, Any], conflicts: dict[str, Any],
               errors: list[Any], overrides: set[str], what: str, allowed: frozenset[str],
               shadowed: list[tuple[Any, Any]]) -> None:
        by_name: dict[str, list[Any]] = {}
        for spec in specs:
            by_name.setdefault(spec.name, []).append(spec)
        for name, found in by_name.items():
            if len(found) == 1:
                into[name] = found[0]
                continue
            local = [s for s in found if s.origin.in_process]
            if len(local) == 1 and name in overrides:
                into[name] = local[0]
                shadowed.extend((s, local[0]) for s in found if s is not local[0])
                continue
            installed = [s for s in found if not s.origin.in_process]
            standard = [s for s in installed if _is_standard(s)]
            chosen = [s for s in installed if not _is_standard(s) and override_allowed(
                name, s.origin.distribution, s.origin.entry_point, allowed)]
            if not local and len(chosen) == 1:
                into[name] = chosen[0]  # the user named it in RELAYPASS_OVERRIDES
                shadowed.extend((s, chosen[0]) for s in installed if s is not chosen[0])
                continue
            if not local and len(standard) == 1:
                into[name] = standard[0]
                for other in installed:
                    if other is not standard[0]:
                        shadowed.append((other, standard[0]))
                        errors.append(_shadowed_error(what, other, standard[0]))
                continue
            others = [s for s in installed if not _is_standard(s)]
            blame = others[-1] if others else (local[-1] if local else found[-1])
            sources = " and ".join(str(s.origin) for s in found)
            qualified = ", ".join(f"{s.origin.entry_point}:{name}" for s in installed)
            err = DuplicatePassError(
                f"{what} {name!r} is declared by both {sources}, so the plain name cannot be "
                "used" + (f"; name one of them as {qualified}" if installed else ""),
                distribution=blame.origin.distribution if not blame.origin.in_process else "",
                version=blame.origin.version if not blame.origin.in_process else "",
                fix=("rename the in-process registration or register it with override=True"
                     if blame.origin.in_process else plugin_fix(blame.origin, reinstall=True)
                     if _is_standard(blame) else
                     f"choose one for the plain name with {OVERRIDES_VARIABLE} (or a pipeline "
                     f"file's overrides), rename it in the manifest of {blame.origin.distribution}, "
                     f"or uninstall it (pip uninstall {blame.origin.distribution})"),
            )
            conflicts[name] = err
            errors.append(err)

    @staticmethod
    def _add_config_key(state: _State, key: ConfigKey) -> None:
        if key.name in state.config_conflicts:
            return
        existing = state.config.get(key.name)
        if existing is None:
            state.config[key.name] = key
        elif (existing.type, existing.default) != (key.type, key.default):
            del state.config[key.name]
            state.config_conflicts[key.name] = ConfigError(
                f"config key {key.name!r} is declared differently by {existing.declared_by} "
                f"({existing.type}, default {existing.default!r}) and by {key.declared_by} "
                f"({key.type}, default {key.default!r}); it cannot be used until they agree"
            )

    # --- queries ------------------------------------------------------------------------
    def pass_names(self) -> list[str]:
        return sorted(self._get_state().passes)

    def list_passes(self) -> list[PassSpec]:
        state = self._get_state()
        return [state.passes[n] for n in sorted(state.passes)]

    def list_instruments(self) -> list[InstrumentSpec]:
        state = self._get_state()
        return [state.instruments[n] for n in sorted(state.instruments)]

    def has_pass(self, name: str) -> bool:
        state = self._get_state()
        return (name in state.passes or name in state.pass_conflicts
                or name in state.qualified_passes)

    def lookup_pass(self, name: str) -> PassSpec | None:
        """The spec of ``name`` (plain or ``qualifier:Name``), None when unknown.

        A plain name two non-standard plugins declare raises the
        DuplicatePassError saying so.
        """
        state = self._get_state()
        spec = state.passes.get(name)
        if spec is None:
            if name in state.pass_conflicts:
                raise state.pass_conflicts[name]
            spec = state.qualified_passes.get(name)
        return spec

    def declaration_of(self, built: Any) -> PassSpec | InstrumentSpec | None:
        """The declaration a pass or instrument built by this registry came from (None: not
        built here, e.g. a pass made by a decorator and never registered).

        What an error raised by ``built`` is blamed on: its distribution and version.
        """
        if isinstance(built, PassInstrument):
            try:
                return self._built_instruments.get(built)
            except TypeError:  # an unhashable instrument is never recorded
                return None
        info = getattr(built, "info", None)
        origin = getattr(built, "origin", "")
        if info is None or not origin:
            return None
        state = self._get_state()
        for spec in (*state.passes.values(), *state.qualified_passes.values()):
            if spec.name == info.name and str(spec.origin) == origin:
                return spec
        return None

    def shadowed(self) -> list[tuple[Any, Any]]:
        """``(hidden, used)``: each declaration its plain name does not reach, and the one it does.

        The hidden one is reachable by its qualified name (``dist:Name``).
        """
        return list(self._get_state().shadowed)

    def pass_spec(self, name: str) -> PassSpec:
        spec = self.lookup_pass(name)
        if spec is None:
            raise self._not_found("pass", name, list(self._get_state().passes))
        return spec

    def instrument_spec(self, name: str) -> InstrumentSpec:
        state = self._get_state()
        spec = state.instruments.get(name) or state.qualified_instruments.get(name)
        if spec is None:
            if name in state.instrument_conflicts:
                raise state.instrument_conflicts[name]
            raise self._not_found("instrument", name, list(state.instruments))
        return spec

    def _not_found(self, what: str, name: str, names: list[str], listing: str = "") -> Exception:
        near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        listing = listing or ("list_passes()" if what == "pass" else "list_instruments()")
        msg = (f"no {what} named {shown(name)} is registered{hint} ({len(names)} registered; "
               f"{listing} shows them){self.unreadable_hint()}")
        return PassNotFoundError(msg)

    def unreadable_hint(self) -> str:
        """"; these plugin distributions could not be read: ..." ("" when all could be).

        An unreadable manifest's names are unknown, so a name that is not found
        may be one of them: messages about unknown names say so.
        """
        broken = [e for e in self._get_state().errors if isinstance(e, ManifestError)]
        if not broken:
            return ""
        return "; these plugin distributions could not be read: " + "; ".join(
            f"{e.distribution} {e.version}".strip() for e in broken) + " (plugin_errors() says why)"

    def pass_for_role(self, role: str) -> PassSpec | None:
        """The pass declaring ``role`` (one of :data:`~.specs.PASS_ROLES`), None when none does.

        Two passes claiming the role raise :class:`RoleConflictError` naming both,
        here (where the role is asked for) and nowhere else, so every other pass
        keeps working; an in-process registration made with ``override=True``
        takes the role from installed plugins' passes.
        """
        if role not in PASS_ROLES:
            raise ValueError(f"unknown pass role {role!r}; the roles: {', '.join(PASS_ROLES)}")
        claims = [spec for spec in self.list_passes() if spec.role == role]
        if len(claims) > 1:
            chosen = [s for s in claims if s.origin.in_process and s.name in self.in_process.overrides]
            if len(chosen) == 1:
                return chosen[0]
            raise _role_conflict(role, claims)
        return claims[0] if claims else None

    def role_not_found(self, role: str) -> PassNotFoundError:
        """The error for a role no registered pass declares."""
        n = len(self._get_state().passes)
        msg = (f"no registered pass has role {role!r} ({n} registered; list_passes() shows them); "
               f"a plugin declares it with role = {role!r} in its manifest, in-process code "
               f"with register_pass(..., role={role!r})")
        problems = self.errors()
        if problems:
            msg += (f"; {len(problems)} plugin problem(s) may hide the pass that has it "
                    "(plugin_errors() says why)")
        return PassNotFoundError(msg)

    def config_keys(self) -> dict[str, ConfigKey]:
        return self._get_state().config

    def raise_if_config_conflicted(self, key: str) -> None:
        err = self._get_state().config_conflicts.get(key)
        if err is not None:
            raise err

    def errors(self) -> list[PluginError]:
        return list(self._get_state().errors)

    # --- dependencies ---------------------------------------------------------------------
    def dependency_plan(self, info: PassInfo, origin: str = "") -> tuple[str, ...]:
        """The passes to run before the pass ``info`` describes, dependencies first (cached)."""
        state = self._get_state()
        key = (info.name, info.required)
        plan = state.plans.get(key)
        if plan is None:
            plan = self._plan(info.name, info.required, origin, state)
            state.plans[key] = plan
        return plan

    def spec_plan(self, spec: PassSpec) -> tuple[str, ...]:
        """The dependency plan of a declared pass, from its declaration alone."""
        return self.dependency_plan(PassInfo(spec.opt_level, spec.name, spec.required), str(spec.origin))

    def _plan(self, name: str, required: tuple[str, ...], origin: str, state: _State) -> tuple[str, ...]:
        dist = ("", "")
        own = state.passes.get(name)
        if own is not None and str(own.origin) == origin and not own.origin.in_process:
            dist = (own.origin.distribution, own.origin.version)
        try:
            return dependency_order(name, required, origin, self.lookup_pass,
                                    lambda: state.passes, dist)
        except MissingDependencyError as exc:
            hint = self.unreadable_hint()
            if not hint:
                raise
            # The missing pass may be one an unreadable manifest declares: say which.
            raise MissingDependencyError(exc.message + hint, distribution=exc.distribution,
                                         version=exc.version, fix=exc.fix) from None

    def dependency_pass(self, name: str) -> Pass:
        """The pass run when another requires ``name`` (built once, with default options)."""
        state = self._get_state()
        p = state.dependency_passes.get(name)
        if p is None:
            p = state.dependency_passes[name] = self.build_pass(name, {})
        return p

    def role_pass(self, role: str) -> Pass:
        """The pass run for ``role`` (the one declaring it, built once, as a dependency is).

        Raises :class:`PassNotFoundError` when no pass declares the role and
        :class:`RoleConflictError` when two do.
        """
        state = self._get_state()
        p = state.role_passes.get(role)
        if p is None:
            spec = self.pass_for_role(role)
            if spec is None:
                raise self.role_not_found(role)
            p = state.role_passes[role] = self.dependency_pass(spec.name)
        return p

    # --- building -----------------------------------------------------------------------
    def build_pass(self, name: str, options: Mapping[str, Any], *, check_types: bool = False) -> Pass:
        """Build pass ``name`` with ``options`` through its factory, importing its code if needed.

        The factory is called with every declared option: those given, and the
        declared default of each one not given (see :func:`with_defaults`).
        It returns the pass's transformation (``(func, mod, ctx) -> func``
        for a function pass, ``(mod, ctx) -> mod`` for a module pass), which is
        wrapped into a pass whose info comes from the declaration, or a whole
        Pass, which must agree with the declaration.  Either way ``preserves``
        and ``origin`` are the declaration's.
        """
        spec = self.pass_spec(name)
        self.spec_plan(spec)  # dependency problems surface before any import
        opts = with_defaults(spec, check_options(spec, "pass", options, check_types=check_types))
        building = _building_now()
        if name in building:
            raise self._report(PluginBuildError(
                f"the factory {_factory_name(spec)} of pass {name!r} from {spec.origin} asks "
                f"for pass {name!r} again (get_pass, or a constructor like "
                f"relay.transform.{name}), which would never end",
                distribution=spec.distribution, version=spec.version,
                fix="have the factory return the transformation (or a pass) made by its own "
                    "code; a constructor of a pass cannot be that pass's factory",
            ))
        building.add(name)
        try:
            built = self._call_factory(spec, opts)
        finally:
            building.discard(name)
        if not isinstance(built, Pass):
            p = self._declared_pass(spec, built)
        elif problems := _mismatches(spec, built):
            raise self._report(PluginBuildError(
                f"the factory {_factory_name(spec)} of pass {name!r} from {spec.origin} built "
                f"a pass that differs from its declaration: {'; '.join(problems)}",
                distribution=spec.distribution, version=spec.version,
                fix="make the manifest entry and the code agree (listings and dependency "
                    "resolution use the manifest), or have the factory return the "
                    "transformation alone so that the manifest is the only place it is written",
            ))
        else:
            p = built
        p.preserves = frozenset(spec.preserves)
        p.origin = str(spec.origin)
        for source in self._sources:
            source.pass_built(spec, p)
        return p

    def build_instrument(self, name: str, options: Mapping[str, Any], *,
                         check_types: bool = False) -> PassInstrument:
        """Build instrument ``name``: its factory gets ``options`` and the other declared defaults."""
        spec = self.instrument_spec(name)
        opts = with_defaults(spec, check_options(spec, "instrument", options,
                                                 check_types=check_types))
        pi = self._call_factory(spec, opts)
        if not isinstance(pi, PassInstrument):
            raise self._report(PluginBuildError(
                f"the factory {_factory_name(spec)} of instrument {name!r} from {spec.origin} "
                f"returned {type(pi).__name__}, not a PassInstrument",
                distribution=spec.distribution, version=spec.version,
                fix=f"report it to the maintainers of {spec.distribution}",
            ))
        try:
            self._built_instruments[pi] = spec
        except TypeError:  # an instrument class that is unhashable: it goes unnamed in errors
            pass
        for source in self._sources:
            source.instrument_built(spec, pi)
        return pi

    def _report(self, error: PluginError) -> PluginError:
        for source in self._sources:
            source.error_reported(error)
        return error

    def _call_factory(self, spec: Any, options: dict[str, Any]) -> Any:
        factory = self._load_factory(spec)
        what = "pass" if hasattr(spec, "kind") else "instrument"
        try:
            with plugin_warnings(f"{what} {spec.name!r} from {spec.origin}"):
                built = factory(**options)
        except RelayPassError as exc:
            # The plugin rejecting the user's input (an option value): the user's
            # error, kept as it is, with a note saying which plugin rejected it.
            add_note(exc, f"relaypass: raised while building {what} {spec.name!r} from {spec.origin}")
            raise
        except (Exception, SystemExit) as exc:  # sys.exit in plugin code ends no command quietly
            raise self._report(PluginBuildError(
                f"{what} {spec.name!r} from {spec.origin} failed while being built by "
                f"{_factory_name(spec)}: {_raised(exc)}",
                distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin),
            )) from exc
        return built

    def _declared_pass(self, spec: PassSpec, transformation: Any) -> Pass:
        """The pass ``spec`` declares, running ``transformation`` (what its factory returned)."""
        problem = _transformation_problem(spec.kind, transformation)
        if problem:
            raise self._report(PluginBuildError(
                f"the factory {_factory_name(spec)} of pass {spec.name!r} from {spec.origin} "
                f"returned {problem}",
                distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin),
            ))
        if spec.kind == "sequential":  # the members: the declaration gives name, level, requirements
            return Sequential(list(transformation), spec.opt_level, spec.name, list(spec.required))
        cls = FunctionPass if spec.kind == "function" else ModulePass
        return cls(transformation, PassInfo(spec.opt_level, spec.name, spec.required), spec.preserves)

    def _load_factory(self, spec: Any) -> Callable[..., Any]:
        factory = spec.factory
        if not isinstance(factory, str):
            if isinstance(factory, Pass):
                return lambda: factory
            return factory
        key = (factory, spec.origin.distribution)
        loaded = self._factories.get(key)
        if loaded is not None:
            return loaded
        module_name, _, attr_path = factory.partition(":")
        what = "pass" if hasattr(spec, "kind") else "instrument"
        try:
            with plugin_warnings(f"{what} {spec.name!r} from {spec.origin} (importing {factory})"):
                obj: Any = importlib.import_module(module_name)
                for attr in attr_path.split("."):
                    obj = getattr(obj, attr)
        except (Exception, SystemExit) as exc:  # sys.exit at import: an error naming the plugin
            raise self._report(PluginImportError(
                f"cannot import {factory} for {what} {spec.name!r} of {spec.origin}: "
                f"{_raised(exc)}",
                distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin, reinstall=True),
            )) from exc
        if not callable(obj):
            raise self._report(PluginImportError(
                f"{factory} (the factory of {spec.name!r} in {spec.origin}) is a "
                f"{type(obj).__name__}, not callable",
                distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin),
            ))
        self._factories[key] = obj
        return obj

    # --- in-process registration ---------------------------------------------------------
    def add_in_process(self, spec: Any, override: bool) -> None:
        is_pass = hasattr(spec, "kind")
        what = "pass" if is_pass else "instrument"
        with self._lock:
            state = self._get_state()
            table = state.passes if is_pass else state.instruments
            conflicts = state.pass_conflicts if is_pass else state.instrument_conflicts
            existing = table.get(spec.name)
            if (existing is not None or spec.name in conflicts) and not override:
                where = str(existing.origin) if existing is not None else "two plugins"
                raise DuplicatePassError(
                    f"{what} {spec.name!r} is already provided by {where}",
                    distribution=existing.distribution if existing is not None else "",
                    version=existing.version if existing is not None else "",
                    fix=f"choose another name, or pass override=True to register_{what} to "
                        "replace it in this process",
                )
            local = self.in_process
            (local.passes if is_pass else local.instruments)[spec.name] = spec
            overrides = local.overrides if is_pass else local.instrument_overrides
            if override:
                overrides.add(spec.name)
            else:
                overrides.discard(spec.name)
            self.invalidate()

    def remove_in_process(self, name: str, is_pass: bool) -> None:
        local = self.in_process
        table = local.passes if is_pass else local.instruments
        if name not in table:
            raise self._not_found("in-process pass" if is_pass else "in-process instrument",
                                  name, list(table), "the in-process registrations")
        del table[name]
        (local.overrides if is_pass else local.instrument_overrides).discard(name)
        self.invalidate()


def _raised(exc: BaseException) -> str:
    """What plugin code raised, for a message (sys.exit said as such: it is no error type)."""
    if isinstance(exc, SystemExit):
        return f"its code called sys.exit({shown(exc.code)})"
    return f"{type(exc).__name__}: {exc}"


def _is_standard(spec: Any) -> bool:
    return spec.origin.distribution == STANDARD_DISTRIBUTION


def _qualify(specs: list[Any], into: dict[str, Any]) -> None:
    """Index installed declarations by qualified name; a qualifier two of them share is left out."""
    ambiguous: set[str] = set()
    for spec in specs:
        if spec.origin.in_process:
            continue
        for q in qualifiers(spec.origin.distribution, spec.origin.entry_point):
            key = f"{q}:{spec.name}"
            if key in into and into[key] is not spec:
                ambiguous.add(key)
            into[key] = spec
    for key in ambiguous:
        del into[key]


_WARNED: set[tuple[str, str, str]] = set()


def _shadowed_error(what: str, hidden: Any, used: Any) -> NameShadowedError:
    """The record (and, once per process, the warning) that ``hidden`` lost its plain name."""
    name, origin = hidden.name, hidden.origin
    qualified = f"{origin.entry_point or origin.distribution}:{name}"
    err = NameShadowedError(
        f"{what} {name!r} of {origin} is shadowed by the standard {what} of {used.origin}: "
        f"{name!r} means the standard one, {qualified} names the one of {origin.distribution}",
        distribution=origin.distribution, version=origin.version,
        fix=(f"to make it replace the standard one, list {qualified} in a pipeline file's "
             f"overrides or in {OVERRIDES_VARIABLE}; or rename it in the manifest of "
             f"{origin.distribution}"),
    )
    key = (what, name, origin.distribution)
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(PluginWarning(str(err)), stacklevel=2)
    return err


def _role_conflict(role: str, claims: list[PassSpec]) -> RoleConflictError:
    who = " and ".join(f"pass {s.name!r} from {s.origin}" for s in claims)
    installed = [s for s in claims if not s.origin.in_process]
    local = [s for s in claims if s.origin.in_process]
    blame = installed[-1] if installed else claims[-1]
    if local:
        fix = ("register " + ", ".join(repr(s.name) for s in local) + " without role= (or with "
               "override=True to take the role in this process)")
        others = [s for s in installed if not _is_standard(s)]
        if others:
            fix += f", or uninstall {others[-1].distribution}"
    else:
        others = [s for s in installed if not _is_standard(s)] or installed
        fix = (f"remove the role from the manifest of {others[-1].distribution}, or uninstall "
               f"it (pip uninstall {others[-1].distribution})")
    return RoleConflictError(
        f"role {role!r} is claimed by both {who}, so no pass has it",
        distribution=blame.distribution if installed else "",
        version=blame.version if installed else "", fix=fix,
    )


def _factory_name(spec: Any) -> str:
    f = spec.factory
    if isinstance(f, str):
        return f
    return getattr(f, "__qualname__", None) or repr(f)


def plugin_fix(origin: Origin, reinstall: bool = False) -> str:
    """The way out of a plugin's failure, for its error message: fix, reinstall or uninstall it."""
    if origin.in_process:
        return f"fix the code registered from {origin.module or 'this process'}"
    if origin.distribution == STANDARD_DISTRIBUTION:
        return ("reinstall relaypass (pip install --force-reinstall relaypass) and report it "
                "at the relaypass issue tracker")
    if reinstall:
        return (f"reinstall or upgrade {origin.distribution} (pip install --force-reinstall "
                f"{origin.distribution}), or uninstall it (pip uninstall {origin.distribution})")
    return (f"report it to the maintainers of {origin.distribution}, or uninstall it "
            f"(pip uninstall {origin.distribution})")


class _Building(threading.local):
    def __init__(self) -> None:
        self.names: set[str] = set()


_BUILDING = _Building()


def _building_now() -> set[str]:
    """The passes whose factories are running in this thread (a factory building itself is caught)."""
    return _BUILDING.names


#: What a factory may return instead of a Pass, by declared kind: the transformation's parameters.
_TRANSFORMATIONS = {"function": "(func, mod, ctx) -> Function", "module": "(mod, ctx) -> IRModule"}


def _transformation_problem(kind: str, obj: Any) -> str:
    """Why ``obj`` cannot be the transformation of a ``kind`` pass ("" when it can)."""
    shape = _TRANSFORMATIONS.get(kind)
    if shape is None:  # a Sequential has members, not a transformation
        if isinstance(obj, (list, tuple)) and obj and all(isinstance(p, Pass) for p in obj):
            return ""
        return (f"{type(obj).__name__}, not a Sequential or its member passes (a non-empty "
                f"list of Pass)")
    expected = f"a Pass or a {kind} pass's transformation {shape}"
    if inspect.isclass(obj):
        return f"the class {obj.__qualname__}, not {expected}"
    if not callable(obj):
        return f"{type(obj).__name__}, not {expected}"
    params = shape[1:shape.index(")")].split(", ")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # no readable signature (a builtin): trust it
        return ""
    try:
        signature.bind(*params)
    except TypeError:
        return f"a callable{signature} that cannot be called as {shape}, instead of {expected}"
    return ""


def _mismatches(spec: PassSpec, p: Pass) -> list[str]:
    info = p.info
    problems = []
    if info.name != spec.name:
        problems.append(f"name {info.name!r} (declared {spec.name!r})")
    if info.opt_level != spec.opt_level:
        problems.append(f"opt_level {info.opt_level} (declared {spec.opt_level})")
    if set(info.required) != set(spec.required):
        problems.append(f"required {list(info.required)} (declared {list(spec.required)})")
    kind = _kind_of(p)
    if kind != spec.kind:
        problems.append(f"a {kind} pass (declared kind {spec.kind!r})")
    return problems


def check_options(spec: Any, what: str, options: Mapping[str, Any], *,
                  check_types: bool = False, where: str = "") -> dict[str, Any]:
    """``options`` checked against the declared options of ``spec``.

    Names are always checked (an unknown option, a missing required one).
    Types are checked when ``check_types`` (pipeline files: values come from
    TOML); Python callers may pass any object the factory accepts.
    """
    declared: tuple[OptionSpec, ...] | None = spec.options
    if declared is None:
        return dict(options)
    by_name = {o.name: o for o in declared}
    prefix = f"{where}: " if where else ""
    for key in options:
        if key not in by_name:
            near = difflib.get_close_matches(key, list(by_name), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else "."
            valid = ", ".join(
                f"{o.name} ({o.type}{'' if o.required else f', default {o.default!r}'})"
                for o in declared
            ) or "none"
            raise OptionError(
                f"{prefix}{what} {spec.name!r} has no option {key!r}{hint} Its options: {valid}"
            )
    missing = [o.name for o in declared if o.required and o.name not in options]
    if missing:
        raise OptionError(f"{prefix}{what} {spec.name!r} needs option(s) {', '.join(missing)}")
    out = dict(options)
    if check_types:
        for key, value in options.items():
            decl = by_name[key]
            coerced = coerce_value(decl.type, value)
            if coerced is None:
                raise OptionError(
                    f"{prefix}option {key!r} of {what} {spec.name!r} takes a {decl.type}, not "
                    f"{describe_type(value)} {shown(value)}"
                )
            out[key] = list(coerced) if isinstance(coerced, tuple) else coerced
    return out


def with_defaults(spec: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` (already checked) plus the declared default of each declared option not given.

    The declaration is the one place an option's default is written: a factory
    is called with every declared option, so its signature needs no defaults
    (an option declared without a default is required, and ``check_options``
    made sure it was given).  List defaults are given as fresh lists, as list
    values from pipeline files are.  Options of a spec that declares none
    (``options`` None: an in-process factory's keywords, passed through
    unchecked) are left as they are: the factory applies its own defaults.
    """
    out = dict(options)
    for option in spec.options or ():
        if option.name not in out and not option.required:
            default = option.default
            out[option.name] = list(default) if isinstance(default, (tuple, list)) else default
    return out


# --- the process-wide registry and the public functions --------------------------------
_REGISTRY = Registry()
lookup.install(_REGISTRY)


def get_registry() -> Registry:
    return _REGISTRY


def get_pass(name: str, **options: Any) -> Pass:
    """The registered pass ``name``, built with ``options`` (Relay's ``GetPass``).

    Reading the declaration, checking the options and resolving the pass's
    dependencies happen before the plugin's code is imported; errors name the
    plugin distribution responsible.
    """
    return _REGISTRY.build_pass(name, options)


def get_pass_by_role(role: str, **options: Any) -> Pass:
    """The registered pass declaring ``role`` (e.g. "type-inference"), built with ``options``.

    This is how code that must not name a pass reaches one.  Raises
    :class:`PassNotFoundError` when no pass declares the role and
    :class:`RoleConflictError` when two do (naming both).
    """
    spec = _REGISTRY.pass_for_role(role)
    if spec is None:
        raise _REGISTRY.role_not_found(role)
    return _REGISTRY.build_pass(spec.name, options)


def list_passes() -> list[PassSpec]:
    """Every registered pass's declaration (name, kind, opt_level, required, origin, ...), by name."""
    return _REGISTRY.list_passes()


def get_instrument(name: str, **options: Any) -> PassInstrument:
    """The registered instrument ``name``, built with ``options``."""
    return _REGISTRY.build_instrument(name, options)


def list_instruments() -> list[InstrumentSpec]:
    """Every registered instrument's declaration, by name."""
    return _REGISTRY.list_instruments()


def plugin_errors() -> list[PluginError]:
    """The contained plugin failures: unreadable manifests, duplicate names, failing hooks."""
    return _REGISTRY.errors()


def refresh_plugins() -> None:
    """Rediscover installed plugin distributions (after installing or uninstalling one)."""
    _REGISTRY.refresh()


def _defined_in(obj: Any) -> str:
    target = getattr(obj, "pass_func", None) or obj
    return getattr(target, "__module__", None) or type(obj).__module__


def _first_line(doc: str | None) -> str:
    return inspect.cleandoc(doc).splitlines()[0] if doc and doc.strip() else ""


def register_pass(
    obj: Any = None,
    *,
    name: str | None = None,
    kind: str | None = None,
    opt_level: int | None = None,
    required: Iterable[str] | None = None,
    preserves: Iterable[str] | None = None,
    config: Iterable[Any] | None = None,
    options: Iterable[Any] | None = None,
    help: str | None = None,
    role: str | None = None,
    override: bool = False,
) -> Any:
    """Register a pass in this process, without packaging it; returns ``obj``.

    ``obj`` is a pass object (``register_pass(my_pass)``, or as a decorator over
    ``@module_pass``), a class made by ``@module_pass``/``@function_pass`` (its
    constructor keywords become the pass's options), or any factory
    ``callable(**options)`` returning a Pass or, as a manifest's factory may,
    the pass's transformation (then ``name`` and ``opt_level`` are needed,
    ``kind`` defaults to "module").  ``config`` declares PassContext
    keys as ``ConfigKey``, mappings or ``(name, type, default, help)`` tuples;
    ``options`` declares factory options the same way (the factory then gets
    every declared option, the declared default for each one not given;
    without ``options``, the keywords given are passed through unchecked).
    ``role``: one of :data:`~relaypass.transform.specs.PASS_ROLES` (``role =
    ...`` of a manifest).
    A name already registered is an error unless ``override=True``, which
    also lets the pass take its role from an installed plugin's pass.
    """
    if obj is None:
        return lambda o: register_pass(
            o, name=name, kind=kind, opt_level=opt_level, required=required, preserves=preserves,
            config=config, options=options, help=help, role=role, override=override,
        )
    if role is not None and role not in PASS_ROLES:
        raise ValueError(f"register_pass: unknown role {role!r}; the roles: {', '.join(PASS_ROLES)}")
    template: PassInfo | None = None
    factory: Any = obj
    built_kind: str | None = None
    opts: tuple[OptionSpec, ...] | None = None
    if isinstance(obj, Pass):
        template, built_kind, opts = obj.info, _kind_of(obj), ()
        if preserves is None:
            preserves = obj.preserves
    elif inspect.isclass(obj) and isinstance(getattr(obj, "_relaypass_info", None), PassInfo):
        template = obj._relaypass_info
        built_kind = "function" if issubclass(obj, FunctionPass) else "module"
    elif not callable(obj):
        raise TypeError(f"register_pass takes a pass, a pass class or a factory, not {obj!r}")
    if template is not None:
        for label, given, actual in (("name", name, template.name),
                                     ("opt_level", opt_level, template.opt_level),
                                     ("kind", kind, built_kind)):
            if given is not None and given != actual:
                raise ValueError(f"register_pass: {label}={given!r} contradicts the pass's own {actual!r}")
        if required is not None and set(required) != set(template.required):
            raise ValueError(f"register_pass: required={list(required)} contradicts the pass's own "
                             f"{list(template.required)}")
        name, opt_level, kind, required = template.name, template.opt_level, built_kind, template.required
    if name is None or opt_level is None:
        raise TypeError("register_pass: a factory needs name= and opt_level=")
    kind = kind or "module"
    if kind not in PASS_KINDS:
        raise ValueError(f"register_pass: kind must be one of {', '.join(PASS_KINDS)}, not {kind!r}")
    info = PassInfo(opt_level, name, required)  # validates name, opt_level and required
    origin = Origin(IN_PROCESS, module=_defined_in(obj))
    declared_by = f"{name} ({origin})"
    keys = tuple(make_config_key(k, declared_by) for k in (config or ()))
    if options is not None:
        opts = tuple(_option_spec(o) for o in options)
    if role is not None and opts and any(o.required for o in opts):
        raise ValueError(f"register_pass: a pass with role {role!r} is built without options, but "
                         f"{', '.join(o.name for o in opts if o.required)} have no default")
    if help is None:
        help = _first_line(getattr(getattr(obj, "pass_func", obj), "__doc__", None))
    spec = PassSpec(
        name=name, kind=kind, opt_level=opt_level, factory=factory, origin=origin,
        required=info.required, preserves=tuple(preserves or ()), config=keys, options=opts,
        help=help, role=role,
    )
    _REGISTRY.add_in_process(spec, override)
    return obj


def _option_spec(decl: Any) -> OptionSpec:
    if isinstance(decl, OptionSpec):
        return decl
    key = make_config_key(decl)
    has_default = (isinstance(decl, Mapping) and "default" in decl) or (
        isinstance(decl, tuple) and len(decl) >= 3)
    return OptionSpec(key.name, key.type, key.default, key.help, required=not has_default)


def unregister_pass(name: str) -> None:
    """Remove a pass registered in this process with :func:`register_pass`."""
    _REGISTRY.remove_in_process(name, is_pass=True)


def register_instrument(
    obj: Any = None,
    *,
    name: str | None = None,
    options: Iterable[Any] | None = None,
    help: str | None = None,
    override: bool = False,
) -> Any:
    """Register an instrument factory (a PassInstrument class or ``callable(**options)``) in-process."""
    if obj is None:
        return lambda o: register_instrument(o, name=name, options=options, help=help, override=override)
    if not callable(obj):
        raise TypeError(f"register_instrument takes a class or a factory, not {obj!r}")
    name = name or getattr(obj, "__name__", None)
    if not name:
        raise TypeError("register_instrument: name= is needed for this factory")
    opts = tuple(_option_spec(o) for o in options) if options is not None else None
    spec = InstrumentSpec(name=name, factory=obj, origin=Origin(IN_PROCESS, module=_defined_in(obj)),
                          options=opts, help=help if help is not None else _first_line(obj.__doc__))
    _REGISTRY.add_in_process(spec, override)
    return obj


def unregister_instrument(name: str) -> None:
    """Remove an instrument registered in this process with :func:`register_instrument`."""
    _REGISTRY.remove_in_process(name, is_pass=False)
