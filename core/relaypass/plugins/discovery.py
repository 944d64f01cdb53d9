"""Finding plugin distributions and their manifests without importing them.

A distribution declares, in its ``pyproject.toml``::

    [project.entry-points."relaypass.plugins"]
    my_passes = "my_passes"          # the package holding relaypass-plugin.toml

The entry point names a package (a dotted module path, no ``:attr``).  Its
directory is found with ``importlib.util.find_spec`` on the top-level package,
which locates a package without executing its ``__init__``, and the rest of
the dotted path is followed on disk; so listing plugins never runs plugin code.
The distribution's name and version always come from its installed metadata.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass

from ..entry_points import STANDARD_DISTRIBUTION, entry_points_of_group
from ..transform.config import shown
from ..transform.errors import ManifestError, PluginError
from ..transform.specs import Declarations, Origin
from .manifest import MANIFEST_NAME, manifest_fix, read_manifest

#: The entry-point group plugin distributions declare their manifest package in.
GROUP = "relaypass.plugins"


@dataclass
class DiscoveredPlugin:
    """One entry point: where it comes from, and its declarations or the error reading them."""

    origin: Origin
    declarations: Declarations | None
    error: PluginError | None = None

    @property
    def name(self) -> str:
        return f"{self.origin.distribution}:{self.origin.entry_point}"


def package_directories(module: str) -> list[str]:
    """The directories of package ``module``, found without executing any of its code."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None:
        return []
    if spec.submodule_search_locations is not None:
        dirs = [str(d) for d in spec.submodule_search_locations]
    else:
        return []  # a plain module, not a package: nowhere to keep a manifest
    for part in rest:
        dirs = [os.path.join(d, part) for d in dirs if os.path.isdir(os.path.join(d, part))]
    return dirs


def locate_manifest(module: str) -> str | None:
    """The path of ``relaypass-plugin.toml`` in package ``module``, or None."""
    for directory in package_directories(module):
        candidate = os.path.join(directory, MANIFEST_NAME)
        if os.path.isfile(candidate):
            return candidate
    return None


def discover() -> list[DiscoveredPlugin]:
    """Every entry point of the ``relaypass.plugins`` group, with its manifest read.

    Problems (an entry point that does not name a package, a missing or
    invalid manifest, a distribution whose metadata cannot be read) are
    recorded on the plugin, never raised, so one broken distribution cannot
    hide the others.
    """
    found: list[DiscoveredPlugin] = []
    unreadable: list[tuple[str, str]] = []
    for ep, dist_name, dist_version in entry_points_of_group(GROUP, unreadable):
        origin = Origin(dist_name, dist_version, entry_point=ep.name)
        try:
            found.append(DiscoveredPlugin(origin, _declarations(ep.value, origin)))
        except PluginError as exc:
            found.append(DiscoveredPlugin(origin, None, exc))
        except Exception as exc:  # a manifest no check foresaw: contained all the same
            found.append(DiscoveredPlugin(origin, None, ManifestError(
                f"the plugin manifest of {origin} cannot be read "
                f"({type(exc).__name__}: {shown(str(exc), 200)})",
                distribution=dist_name, version=dist_version, fix=manifest_fix(origin))))
    for where, why in unreadable:
        origin = Origin(where, "", entry_point="?")
        found.append(DiscoveredPlugin(origin, None, ManifestError(
            f"the metadata of the installed distribution at {where} cannot be read ({why}), "
            "so any relaypass plugin it holds is left out",
            distribution=where, fix="reinstall or remove that distribution")))
    return found


def _declarations(value: str, origin: Origin) -> Declarations:
    module = value.strip()
    if ":" in module or not module:
        raise ManifestError(
            f"entry point {origin.entry_point!r} of {origin} in group {GROUP!r} is {value!r}; "
            f"it must name the package that holds {MANIFEST_NAME} (e.g. \"my_package\")",
            distribution=origin.distribution, version=origin.version,
            fix=manifest_fix(origin) if origin.distribution == STANDARD_DISTRIBUTION else
                f"fix the entry point in the project metadata of {origin.distribution} "
                f"or uninstall it (pip uninstall {origin.distribution})",
        )
    try:
        path = locate_manifest(module)
    except (ImportError, ValueError) as exc:  # a parent package that cannot be located
        path = None
        reason = f"package {module!r} cannot be located ({exc})"
    else:
        reason = f"package {module!r} is not installed" if not package_directories(module) else (
            f"package {module!r} has no {MANIFEST_NAME}"
        )
    if path is None:
        raise ManifestError(
            f"plugin distribution {origin} declares entry point {origin.entry_point!r} = "
            f"{value!r}, but {reason}",
            distribution=origin.distribution, version=origin.version, fix=manifest_fix(origin),
        )
    origin = Origin(origin.distribution, origin.version, path, origin.entry_point)
    return read_manifest(path, origin)


#: Project-URL labels that name where a distribution's bugs are reported, compared with
#: case, spaces, hyphens and underscores left out (``Bug Tracker``, ``bug-tracker``, ``Issues``).
_BUG_TRACKER_LABELS = ("bugtracker", "issues", "issuetracker", "bugs", "bugreports", "tracker")


def bug_tracker(distribution: str) -> str:
    """Where the bugs of installed ``distribution`` are reported, from its metadata ("" if unsaid).

    A crash in a plugin's pass is a bug report to its maintainers, not to
    relaypass's, so the message that says so gives their address: the
    ``Project-URL`` labelled as a bug tracker (``Bug Tracker``, ``Issues``,
    ...), else the ``Home-page``, else a ``Project-URL`` labelled
    ``Homepage``.  Reads the metadata only; nothing is imported.
    """
    from importlib import metadata

    try:
        meta = metadata.metadata(distribution)
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return ""
    if meta is None:  # a dist-info folder without METADATA
        return ""
    urls: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or ():
        label, sep, url = str(entry).partition(",")
        if sep and url.strip():
            urls.setdefault(re.sub(r"[\s_-]+", "", label).lower(), url.strip())
    for label in _BUG_TRACKER_LABELS:
        if label in urls:
            return urls[label]
    home = str(meta.get("Home-page") or "").strip()
    if home and home.upper() != "UNKNOWN":
        return home
    return urls.get("homepage", "")
