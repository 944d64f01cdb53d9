"""The pluggy PluginManager and the plugin objects it manages.

Three kinds of plugin object are registered, in this order:

* one :class:`ManifestPlugin` per discovered entry point, answering the
  declaration hooks from its manifest (no plugin code is imported);
* the :data:`IN_PROCESS` plugin, holding what ``register_pass`` and
  ``register_instrument`` declared in this process;
* objects registered with :func:`register_plugin` (any hooks of
  :mod:`relaypass.plugins.hookspecs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pluggy

from ..transform.specs import IN_PROCESS as IN_PROCESS_NAME
from ..transform.specs import Declarations, InstrumentSpec, PassSpec
from . import hookspecs
from .discovery import DiscoveredPlugin
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


class InProcessPlugin:
    """The passes and instruments registered by code running in this process."""

    def __init__(self) -> None:
        self.passes: dict[str, PassSpec] = {}
        self.instruments: dict[str, InstrumentSpec] = {}
        #: Names registered with ``override=True``: they shadow an installed plugin's.
        self.overrides: set[str] = set()
        self.instrument_overrides: set[str] = set()

    @hookimpl
    def relaypass_pass_specs(self) -> Sequence[PassSpec]:
        return list(self.passes.values())

    @hookimpl
    def relaypass_instrument_specs(self) -> Sequence[InstrumentSpec]:
        return list(self.instruments.values())


IN_PROCESS = InProcessPlugin()

_user_plugins: list[tuple[object, str | None]] = []


def make_plugin_manager(discovered: Sequence[DiscoveredPlugin]) -> pluggy.PluginManager:
    """A PluginManager with the hook specs, the discovered manifests and the in-process plugins."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for plugin in discovered:
        if plugin.declarations is not None:
            pm.register(ManifestPlugin(plugin.declarations), name=plugin.name)
    pm.register(IN_PROCESS, name=IN_PROCESS_NAME)
    for obj, name in _user_plugins:
        pm.register(obj, name=name)
    return pm


def register_plugin(plugin: object, name: str | None = None) -> object:
    """Register a plugin object implementing relaypass hooks for the rest of this process.

    Its hook implementations are validated now; its declarations take effect
    at once (the registry is rebuilt on next use).  Returns ``plugin``.
    """
    check = pluggy.PluginManager(hookspecs.PROJECT)
    check.add_hookspecs(hookspecs)
    check.register(plugin, name=name)  # raises PluginValidationError for a misspelt hook
    _user_plugins.append((plugin, name))
    _registry_changed()
    return plugin


def unregister_plugin(plugin: object) -> None:
    """Undo :func:`register_plugin`."""
    _user_plugins[:] = [(p, n) for p, n in _user_plugins if p is not plugin]
    _registry_changed()


def _registry_changed() -> None:
    from ..transform.registry import get_registry

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
        except Exception as exc:  # contained: reported as a PluginHookError by the caller
            out.append((impl.plugin, None, exc))
    return out
