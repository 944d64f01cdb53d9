"""Plugin machinery: entry-point discovery, manifests, dependency resolution, hook specs.

Plugin distributions declare a package in the ``relaypass.plugins`` entry-point
group; the package ships ``relaypass-plugin.toml`` describing its passes and
instruments (see :mod:`relaypass.plugins.manifest` and docs/plugins.md).  The
names below are loaded on first use so that ``import relaypass.plugins`` stays
cheap; ``hookimpl`` and ``register_plugin`` import pluggy.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "GROUP": "relaypass.plugins.discovery",
    "MANIFEST_NAME": "relaypass.plugins.manifest",
    "discover": "relaypass.plugins.discovery",
    "bug_tracker": "relaypass.plugins.discovery",
    "hookimpl": "relaypass.plugins.hookspecs",
    "hookspec": "relaypass.plugins.hookspecs",
    "register_plugin": "relaypass.plugins.manager",
    "unregister_plugin": "relaypass.plugins.manager",
    "PassSpec": "relaypass.transform.specs",
    "InstrumentSpec": "relaypass.transform.specs",
    "OptionSpec": "relaypass.transform.specs",
    "Origin": "relaypass.transform.specs",
    "PluginError": "relaypass.transform.errors",
    "ManifestError": "relaypass.transform.errors",
    "PluginHookError": "relaypass.transform.errors",
    "PluginImportError": "relaypass.transform.errors",
    "PluginBuildError": "relaypass.transform.errors",
    "DuplicatePassError": "relaypass.transform.errors",
    "NameShadowedError": "relaypass.transform.registry",
    "PluginWarning": "relaypass.entry_points",
    "MissingDependencyError": "relaypass.transform.errors",
    "DependencyCycleError": "relaypass.transform.errors",
    "RoleConflictError": "relaypass.transform.errors",
    "PassNotFoundError": "relaypass.transform.errors",
    "OptionError": "relaypass.transform.errors",
}

__all__ = sorted([*_LAZY, "get_plugin_manager"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'relaypass.plugins' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def get_plugin_manager() -> Any:
    """The pluggy PluginManager behind the registry (discovering plugins if not done yet)."""
    from .manager import SOURCE

    return SOURCE.plugin_manager
