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
    "GROUP": "discovery",
    "MANIFEST_NAME": "manifest",
    "discover": "discovery",
    "hookimpl": "hookspecs",
    "hookspec": "hookspecs",
    "register_plugin": "manager",
    "unregister_plugin": "manager",
    "PassSpec": "specs",
    "InstrumentSpec": "specs",
    "OptionSpec": "specs",
    "Origin": "specs",
    "PluginError": "errors",
    "ManifestError": "errors",
    "PluginHookError": "errors",
    "PluginImportError": "errors",
    "PluginBuildError": "errors",
    "DuplicatePassError": "errors",
    "MissingDependencyError": "errors",
    "DependencyCycleError": "errors",
    "PassNotFoundError": "errors",
    "OptionError": "errors",
}

__all__ = sorted([*_LAZY, "get_plugin_manager"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'relaypass.plugins' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"relaypass.plugins.{module}"), name)
    globals()[name] = value
    return value


def get_plugin_manager() -> Any:
    """The pluggy PluginManager behind the registry (discovering plugins if not done yet)."""
    from ..transform.registry import get_registry

    return get_registry().plugin_manager
