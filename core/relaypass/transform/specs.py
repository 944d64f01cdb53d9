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

#: The role of the pass that infers types (see :data:`PASS_ROLES`).
TYPE_INFERENCE = "type-inference"

#: The roles a pass may declare (``role = "..."`` in a manifest, ``register_pass(role=...)``),
#: each with what a pass taking it promises.  The core reaches such a pass only through
#: its role (``Registry.pass_for_role``, ``get_pass_by_role``), never by its name; at most
#: one registered pass may claim a role.
PASS_ROLES: dict[str, str] = {
    TYPE_INFERENCE: (
        "a pass built without options that takes a module and returns it with the type of "
        "every expression inferred (checked_type filled), raising on a program that does "
        "not type-check; the passes that need typed input require it, and tools run it to "
        "check or restore types"
    ),
}

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


class _Declared:
    """What every declaration has: where it comes from (``origin``), read as distribution and version."""

    origin: Origin

    @property
    def distribution(self) -> str:
        return self.origin.distribution

    @property
    def version(self) -> str:
        return self.origin.version


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
class PassSpec(_Declared):
    """A declared pass.

    ``factory`` is ``"module:attr"`` (manifests) or a callable (in-process);
    ``options`` is None when the options are not declared (in-process factories
    whose keywords are passed through unchecked); ``role`` is one of
    :data:`PASS_ROLES`, or None.
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
    role: str | None = None


@dataclass(frozen=True)
class InstrumentSpec(_Declared):
    """A declared instrument: name, factory, options, help."""

    name: str
    factory: Factory
    origin: Origin
    options: tuple[OptionSpec, ...] | None = ()
    help: str = ""


@dataclass(frozen=True)
class PatternTableSpec(_Declared):
    """A declared pattern table (``[[pattern_table]]``): its name, factory, origin, help.

    The factory, called without arguments, returns the table MergeComposite
    takes: a list of ``(name, pattern)`` or ``(name, pattern, check)``.
    """

    name: str
    factory: Factory
    origin: Origin
    help: str = ""


@dataclass(frozen=True)
class TargetSpec(_Declared):
    """A declared BYOC target (``[[target]]``): the operators its compiler takes.

    ``operators`` pairs each operator name with ``True`` (every call of it is
    supported) or ``"module:function"``, a predicate imported on first use
    and called with the typed call, as a ``target.<name>`` operator attribute
    would be in TVM.
    """

    name: str
    operators: tuple[tuple[str, bool | str], ...]
    origin: Origin
    help: str = ""


@dataclass
class Declarations:
    """What one plugin contributes: its passes, instruments, pattern tables and targets."""

    passes: list[PassSpec] = field(default_factory=list)
    instruments: list[InstrumentSpec] = field(default_factory=list)
    pattern_tables: list[PatternTableSpec] = field(default_factory=list)
    targets: list[TargetSpec] = field(default_factory=list)
