"""The pluggy PluginManager, and the registry's source of installed plugins.

Two kinds of plugin object are registered with the PluginManager:

* one :class:`ManifestPlugin` per discovered entry point, answering the
  declaration hooks from its manifest (no plugin code is imported);
* objects registered with :func:`register_plugin` (any hooks of
  :mod:`relaypass.plugins.hookspecs`).

:class:`PluginSource` is how the pass registry (which sits below this
package) sees them: it declares what the hooks answer, and passes the
registry's events back to the plugins as hooks.  The package root connects
one to the registry with :func:`connect`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Sequence
from typing import Any

import pluggy

from ..transform.errors import PluginError, PluginHookError
from ..transform.instrument import PassInstrument
from ..transform.passes import Pass
from ..transform.pattern_tables import add_source as add_pattern_table_source
from ..transform.registry import get_registry
from ..transform.specs import Declarations, InstrumentSpec, PassSpec, PatternTableSpec, TargetSpec
from ..transform.targets import add_source as add_target_source
from . import hookspecs
from .discovery import DiscoveredPlugin, discover
from .hookspecs import hookimpl


class ManifestPlugin:
    """An installed distribution's manifest, answering the declaration hooks."""

    def __init__(self, declarations: Declarations) -> None:
        self.declarations = declarations

    @hookimpl
    def relaypass_pass_specs(self) -> Sequence[PassSpec]:
        return self.declarations.passes

    @hookimpl
    def relaypass_instrument_specs(self) -> Sequence[InstrumentSpec]:
        return self.declarations.instruments


_user_plugins: list[tuple[object, str | None]] = []


def make_plugin_manager(discovered: Sequence[DiscoveredPlugin]) -> pluggy.PluginManager:
    """A PluginManager with the hook specs, the discovered manifests and the registered plugins."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for plugin in discovered:
        if plugin.declarations is not None:
            pm.register(ManifestPlugin(plugin.declarations), name=plugin.name)
    for obj, name in _user_plugins:
        pm.register(obj, name=name)
    return pm


class PluginSource:
    """Installed plugin distributions and registered plugin objects, as the registry sees them."""

    def __init__(self) -> None:
        self._discovered: list[DiscoveredPlugin] | None = None
        self._pm: pluggy.PluginManager | None = None

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The PluginManager behind the registry's current view (built on first use)."""
        if self._pm is None:
            get_registry().list_passes()  # builds the view, which asks declarations()
        if self._pm is None:  # nothing asked yet: this source is not connected
            self._pm = make_plugin_manager(self._discovered_plugins())
        return self._pm

    def _discovered_plugins(self) -> list[DiscoveredPlugin]:
        if self._discovered is None:
            self._discovered = discover()
        return self._discovered

    def declarations(self) -> tuple[list[PassSpec], list[InstrumentSpec], list[PluginError]]:
        discovered = self._discovered_plugins()
        pm = self._pm = make_plugin_manager(discovered)
        errors: list[PluginError] = [d.error for d in discovered if d.error is not None]

        def collect(hook: Any, hook_name: str) -> list[Any]:
            specs: list[Any] = []
            for plugin, result, exc in call_each(hook):
                if exc is not None:
                    name = pm.get_name(plugin) or repr(plugin)
                    errors.append(PluginHookError(
                        f"plugin {name} raised in {hook_name}: {type(exc).__name__}: {exc}",
                        fix=f"fix or unregister plugin {name}",
                    ))
                    continue
                specs.extend(result or ())
            return specs

        passes = collect(pm.hook.relaypass_pass_specs, "relaypass_pass_specs")
        instruments = collect(pm.hook.relaypass_instrument_specs, "relaypass_instrument_specs")
        return passes, instruments, errors

    def pattern_table_declarations(self) -> tuple[list[PatternTableSpec], list[PluginError]]:
        """The pattern tables the discovered manifests declare (read from manifests only).

        The errors are those of manifests that did not parse: such a plugin
        may have declared pattern tables, which are then missing.
        """
        return self._declared("pattern_tables")

    def target_declarations(self) -> tuple[list[TargetSpec], list[PluginError]]:
        """The BYOC targets the discovered manifests declare (errors as for pattern tables)."""
        return self._declared("targets")

    def _declared(self, kind: str) -> tuple[list[Any], list[PluginError]]:
        discovered = self._discovered_plugins()
        specs = [spec for d in discovered if d.declarations is not None
                 for spec in getattr(d.declarations, kind)]
        return specs, [d.error for d in discovered if d.error is not None]

    def forget(self) -> None:
        importlib.invalidate_caches()
        # importlib.metadata keeps each sys.path directory's listing keyed by the
        # directory's mtime, whose resolution can hide an install made moments
        # ago; its own invalidate_caches is broken on 3.10/3.11 (not a classmethod).
        clear = getattr(getattr(getattr(importlib.metadata, "FastPath", None), "__new__", None),
                        "cache_clear", None)
        if clear is not None:
            clear()
        self._discovered = None
        self._pm = None

    def pass_built(self, spec: PassSpec, pass_: Pass) -> None:
        self.plugin_manager.hook.relaypass_pass_built(spec=spec, pass_=pass_)

    def instrument_built(self, spec: InstrumentSpec, instrument: PassInstrument) -> None:
        self.plugin_manager.hook.relaypass_instrument_built(spec=spec, instrument=instrument)

    def error_reported(self, error: PluginError) -> None:
        if self._pm is not None:
            self._pm.hook.relaypass_plugin_error(error=error)


SOURCE = PluginSource()
"""The source the package root connects to the registry."""

_connected = False


def connect() -> None:
    """Make the registry see installed plugins (the package root calls this once)."""
    global _connected
    if not _connected:
        _connected = True
        get_registry().add_source(SOURCE)
        add_pattern_table_source(SOURCE)
        add_target_source(SOURCE)


def register_plugin(plugin: object, name: str | None = None) -> object:
    """Register a plugin object implementing relaypass hooks for the rest of this process.

    Its hook implementations are validated now; its declarations take effect
    at once (the registry is rebuilt on next use).  Returns ``plugin``.
    """
    check = pluggy.PluginManager(hookspecs.PROJECT)
    check.add_hookspecs(hookspecs)
    check.register(plugin, name=name)  # raises PluginValidationError for a misspelt hook
    _user_plugins.append((plugin, name))
    get_registry().invalidate()
    return plugin


def unregister_plugin(plugin: object) -> None:
    """Undo :func:`register_plugin`."""
    _user_plugins[:] = [(p, n) for p, n in _user_plugins if p is not plugin]
    get_registry().invalidate()


def call_each(hook: Any) -> list[tuple[object, Any, BaseException | None]]:
    """Call every implementation of a no-argument hook separately: (plugin, result, error).

    Calling them one by one is what lets one failing plugin be reported and
    left out without losing the others' answers.
    """
    out: list[tuple[object, Any, BaseException | None]] = []
    for impl in hook.get_hookimpls():
        try:
            out.append((impl.plugin, impl.function(), None))
        except (Exception, SystemExit) as exc:  # contained: a PluginHookError, by the caller
            out.append((impl.plugin, None, exc))
    return out
