"""Declarations of passes and instruments: everything known about them before their code loads.

A spec is what a manifest entry (or an in-process registration) says: enough
to list the pass, validate a pipeline that names it, check the options given
to it and order its dependencies, all without importing the plugin.  The
``factory`` is only resolved when the pass or instrument is first built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .config import ConfigKey

#: The pass kinds a manifest may declare, and the class each must build.
PASS_KINDS = ("module", "function", "sequential")

IN_PROCESS = "<in-process>"


@dataclass(frozen=True)
class Origin:
    """Where a declaration comes from: a distribution (from its metadata) or an in-process registration."""

    distribution: str
    version: str = ""
    manifest: str = ""
    entry_point: str = ""
    module: str = ""

    @property
    def in_process(self) -> bool:
        return self.distribution == IN_PROCESS

    def __str__(self) -> str:
        if self.in_process:
            return f"in-process registration from {self.module}" if self.module else "in-process registration"
        return f"{self.distribution} {self.version}".strip()


@dataclass(frozen=True)
class OptionSpec:
    """A keyword option of a factory: name, value type, default, help.

    An option without a default must be given.
    """

    name: str
    type: str
    default: Any = None
    help: str = ""
    required: bool = False


Factory = str | Callable[..., Any]


@dataclass(frozen=True)
class PassSpec:
    """A declared pass.

    ``factory`` is ``"module:attr"`` (manifests) or a callable (in-process);
    ``options`` is None when the options are not declared (in-process factories
    whose keywords are passed through unchecked).
    """

    name: str
    kind: str
    opt_level: int
    factory: Factory
    origin: Origin
    required: tuple[str, ...] = ()
    preserves: tuple[str, ...] = ()
    config: tuple[ConfigKey, ...] = ()
    options: tuple[OptionSpec, ...] | None = ()
    help: str = ""

    @property
    def distribution(self) -> str:
        return self.origin.distribution

    @property
    def version(self) -> str:
        return self.origin.version


@dataclass(frozen=True)
class InstrumentSpec:
    """A declared instrument: name, factory, options, help."""

    name: str
    factory: Factory
    origin: Origin
    options: tuple[OptionSpec, ...] | None = ()
    help: str = ""

    @property
    def distribution(self) -> str:
        return self.origin.distribution

    @property
    def version(self) -> str:
        return self.origin.version


@dataclass
class Declarations:
    """What one plugin contributes: its passes and its instruments."""

    passes: list[PassSpec] = field(default_factory=list)
    instruments: list[InstrumentSpec] = field(default_factory=list)
