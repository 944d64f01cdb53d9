"""How the pass manager reaches the registry without importing it.

Running a pass resolves its required passes by name, a function pass types
its result with the pass of the "type-inference" role, a PassContext checks
its config keys against those the passes declare (and the pass names it is
given against the registered ones), and ``ir.instrument.<Name>``
builds a registered instrument: all of them need the registry, and the
registry needs the pass classes to build and check passes.  So the pass
manager asks this module, and :mod:`relaypass.transform.registry` installs
itself here when it is imported (``relaypass.transform`` always imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class PassLookup(Protocol):
    """What the pass manager asks of the registry."""

    def has_pass(self, name: str) -> bool:
        """Whether ``name`` (plain or ``qualifier:Name``) is a registered pass."""

    def pass_names(self) -> list[str]:
        """The registered passes' names, sorted."""

    def unreadable_hint(self) -> str:
        """A clause naming the plugin distributions whose manifests could not be read ("" if none)."""

    def config_keys(self) -> Mapping[str, Any]:
        """Every declared PassContext config key, by name."""

    def raise_if_config_conflicted(self, key: str) -> None:
        """Raise the error that makes ``key`` unusable, if two passes declare it differently."""

    def dependency_plan(self, info: Any, origin: str = "") -> tuple[str, ...]:
        """The passes to run before the pass ``info`` describes, dependencies first."""

    def dependency_pass(self, name: str) -> Any:
        """The pass run when another requires ``name``."""

    def role_pass(self, role: str) -> Any:
        """The pass run for ``role`` (built once); raises when no pass, or two, declare it."""

    def instrument_spec(self, name: str) -> Any:
        """The declaration of instrument ``name`` (raises LookupError when unknown)."""

    def build_instrument(self, name: str, options: Mapping[str, Any]) -> Any:
        """Instrument ``name`` built with ``options``."""


_current: PassLookup | None = None


def install(registry: PassLookup) -> None:
    """Make ``registry`` the one the pass manager asks."""
    global _current
    _current = registry


def registry() -> PassLookup:
    """The installed registry."""
    if _current is None:
        raise RuntimeError("no pass registry is installed: import relaypass.transform first")
    return _current
