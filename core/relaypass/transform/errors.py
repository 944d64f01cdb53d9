"""The errors a plugin distribution can cause, each naming the distribution and the way out.

A broken plugin must never hide the healthy ones, so discovery records these
errors instead of raising them; each is raised where the broken part is
actually used (asking for a pass from a manifest that did not parse, building
a pass whose factory cannot be imported, running a pass whose dependencies
are missing) and the listing shows all of them.
"""

from __future__ import annotations

from ..errors import RelayPassError


class PluginError(RelayPassError):
    """Base class: something about an installed (or in-process) plugin is wrong.

    ``distribution`` and ``version`` name the distribution responsible (from
    its installed metadata); ``fix`` is the way out, also part of the message.
    """

    def __init__(self, message: str, *, distribution: str = "", version: str = "", fix: str = "") -> None:
        self.distribution = distribution
        self.version = version
        self.fix = fix
        self.message = message
        super().__init__(f"{message}; {fix}" if fix else message)


class ManifestError(PluginError):
    """A plugin manifest is missing, does not parse, or declares something invalid."""


class PluginHookError(PluginError):
    """A plugin object registered with the plugin manager raised in one of its hooks."""


class PluginImportError(PluginError):
    """A pass or instrument factory named by a manifest could not be imported."""


class PluginBuildError(PluginError):
    """A factory raised while building its pass or instrument, or built the wrong thing."""


class DuplicatePassError(PluginError):
    """Two distributions (or registrations) declare a pass or instrument of the same name."""


class RoleConflictError(PluginError):
    """Two passes claim the same role (``role = "type-inference"``), so the role has no pass."""


class MissingDependencyError(PluginError, LookupError):
    """A pass requires a pass that no installed plugin provides."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DependencyCycleError(PluginError):
    """The ``required`` lists of some passes form a cycle."""


class PassNotFoundError(RelayPassError, LookupError):
    """No registered pass (or instrument) has the name asked for."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class OptionError(RelayPassError, TypeError):
    """Options given to a pass or instrument factory do not match its declared options."""
