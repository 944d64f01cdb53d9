"""Pattern tables: named lists of ``(name, pattern[, check])`` that MergeComposite takes.

A bring-your-own-codegen target describes the operator groups it offloads as
a pattern table (TVM's ``relay.op.contrib.register_pattern_table``).  Tables
come from two places:

* code running in this process, with :func:`register_pattern_table` (TVM's
  decorator: the function is called once, at registration, and its result
  kept, as TVM does); registering a name again replaces the table, as in TVM;
* plugin distributions, whose manifest declares ``[[pattern_table]] name =
  "acme" factory = "pkg.module:function"``; the factory is imported and called
  the first time the table is asked for, so listing tables runs no plugin code.

A table registered in-process takes precedence over a plugin's table of the
same name (that is how a user replaces a target's patterns); two plugins
declaring one name is a :class:`DuplicatePatternTableError`, raised only when
that name is asked for, so every other table keeps working.  A table that is
not a list of ``(name, pattern[, check])`` tuples, holds something that is not
a pattern or a check that is not callable, or uses one composite name twice is
a :class:`PatternTableError` naming the table, where it comes from and the
entry.

The registry sits in the pass manager's room because it is part of running a
pass; the plugin layer above connects installed distributions to it with
:func:`add_source`.  This module imports neither numpy nor the IR until a
table is validated, so that listing stays light.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..errors import RelayPassError
from .config import shown
from .errors import PluginBuildError, PluginError, PluginImportError
from .importing import import_attribute
from .registry import plugin_fix
from .specs import IN_PROCESS, Origin, PatternTableSpec

__all__ = [
    "DuplicatePatternTableError", "PatternTableError", "PatternTableNotFoundError",
    "PatternTableSource", "add_source", "check_pattern_table_name", "get_pattern_table", "list_pattern_tables",
    "pattern_table", "pattern_table_errors", "register_pattern_table", "unreadable_hint",
    "unregister_pattern_table", "validate_pattern_table",
]

#: A validated entry: the composite name, the pattern, and the check (None: accept every match).
Entry = tuple[str, Any, Callable[[Any], bool] | None]


class PatternTableError(PluginError):
    """A pattern table is malformed: not a list of ``(name, pattern[, check])`` tuples."""


class PatternTableNotFoundError(RelayPassError, LookupError):
    """No registered or installed pattern table has the name asked for."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class DuplicatePatternTableError(PluginError):
    """Two plugin distributions declare a pattern table of the same name."""


class PatternTableSource(Protocol):
    """Somewhere pattern tables are declared besides this process (the installed plugins)."""

    def pattern_table_declarations(self) -> tuple[list[PatternTableSpec], list[PluginError]]:
        """Every pattern table declared, and the errors met reading the declarations."""


_sources: list[PatternTableSource] = []
_in_process: dict[str, tuple[PatternTableSpec, list[Entry], list[Any]]] = {}
# Tables built from plugin factories, keyed by their declaration (a refreshed
# discovery gives new declarations, so a reinstalled plugin is loaded afresh).
_loaded: dict[PatternTableSpec, tuple[list[Entry], list[Any]]] = {}


def add_source(source: PatternTableSource) -> None:
    """Make the tables ``source`` declares visible (the plugin layer calls this once)."""
    if source not in _sources:
        _sources.append(source)


def _where(table: str, origin: Origin | None) -> str:
    if origin is None:
        return table
    entry = f", entry point {origin.entry_point!r}" if origin.entry_point else ""
    return f"pattern table {table!r} of {origin}{entry}"


def validate_pattern_table(table: Any, what: str, origin: Origin | None = None) -> list[Entry]:
    """``table`` as ``(name, pattern, check)`` entries; PatternTableError naming ``what`` otherwise.

    ``what`` names the table in messages (``"pattern table 'acme' of acme-npu
    1.0"``, ``"MergeComposite's pattern_table"``).  The check of a two-element
    entry is None, which accepts every match, as TVM's default does.
    """
    from ..dataflow_pattern.pattern import DFPattern  # the IR and numpy: only when validating

    def fail(problem: str) -> PatternTableError:
        return PatternTableError(
            f"{what}: {problem}",
            distribution=origin.distribution if origin and not origin.in_process else "",
            version=origin.version if origin else "",
            fix=plugin_fix(origin) if origin else "",
        )

    if isinstance(table, (str, bytes, Mapping)) or not isinstance(table, Sequence):
        raise fail(f"expected a list of (name, pattern) or (name, pattern, check) tuples, "
                   f"not {type(table).__name__} {shown(table)}")
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(table):
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) not in (2, 3):
            raise fail(f"entry {i} is {shown(item)}; expected a tuple (name, pattern) or "
                       "(name, pattern, check)")
        name, pattern = item[0], item[1]
        check = item[2] if len(item) == 3 else None
        if not isinstance(name, str) or not name:
            raise fail(f"entry {i}: the composite name must be a non-empty string, not {shown(name)}")
        if not isinstance(pattern, DFPattern):
            raise fail(f"entry {i} ({name!r}): {type(pattern).__name__} {shown(pattern)} is not "
                       "a dataflow pattern (build one with is_op, wildcard, ...)")
        if len(item) == 3 and not callable(check):
            raise fail(f"entry {i} ({name!r}): the check must be callable (expr -> bool), "
                       f"not {type(check).__name__} {shown(check)}")
        if name in seen:
            raise fail(f"entry {i}: composite name {name!r} is already used by entry {seen[name]}")
        seen[name] = i
        entries.append((name, pattern, check))
    return entries


def register_pattern_table(name: str, table: Callable[[], Any] | None = None) -> Any:
    """Register the pattern table of target ``name`` (TVM's decorator).

    ``@register_pattern_table("acme")`` over a function returning the table,
    or ``register_pattern_table("acme", function)``.  As in TVM the function
    is called now and its table kept; it is validated now too, so a malformed
    table fails where it is written.  Returns the function.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_pattern_table needs a target name, not {name!r}")

    def register(function: Callable[[], Any]) -> Callable[[], Any]:
        if not callable(function):
            raise TypeError(f"register_pattern_table({name!r}) takes a function returning the "
                            f"table, not {type(function).__name__}")
        origin = Origin(IN_PROCESS, module=getattr(function, "__module__", "") or "")
        spec = PatternTableSpec(name, function, origin, _first_line(function.__doc__))
        raw = function()
        entries = validate_pattern_table(raw, _where(name, origin), origin)
        _in_process[name] = (spec, entries, list(raw))
        return function

    return register(table) if table is not None else register


def unregister_pattern_table(name: str) -> None:
    """Remove a table registered in this process with :func:`register_pattern_table`."""
    if _in_process.pop(name, None) is None:
        raise PatternTableNotFoundError(f"no pattern table {name!r} is registered in this process")


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if (doc or "").strip() else ""


def _declared() -> tuple[dict[str, list[PatternTableSpec]], list[PluginError]]:
    by_name: dict[str, list[PatternTableSpec]] = {}
    errors: list[PluginError] = []
    for source in _sources:
        specs, errs = source.pattern_table_declarations()
        errors.extend(errs)
        for spec in specs:
            by_name.setdefault(spec.name, []).append(spec)
    return by_name, errors


def list_pattern_tables() -> list[PatternTableSpec]:
    """Every pattern table's declaration, by name (no plugin code is imported).

    A name declared by several plugins is listed once per declaration; asking
    for it raises :class:`DuplicatePatternTableError`.
    """
    by_name, _ = _declared()
    out: list[PatternTableSpec] = []
    for name in sorted(set(by_name) | set(_in_process)):
        if name in _in_process:
            out.append(_in_process[name][0])
        else:
            out.extend(by_name[name])
    return out


def pattern_table_errors() -> list[PluginError]:
    """The problems met reading pattern-table declarations, plus the duplicate names."""
    by_name, errors = _declared()
    return errors + [_duplicate(name, specs) for name, specs in sorted(by_name.items())
                     if len(specs) > 1 and name not in _in_process]


def _duplicate(name: str, specs: list[PatternTableSpec]) -> DuplicatePatternTableError:
    who = " and ".join(str(s.origin) for s in specs)
    return DuplicatePatternTableError(
        f"pattern table {name!r} is declared by {who}",
        distribution=specs[-1].distribution, version=specs[-1].version,
        fix=f"uninstall one of them (pip uninstall {specs[-1].distribution}), or register "
            f"the table you want in-process with register_pattern_table({name!r})",
    )


def _resolve(name: str) -> tuple[list[Entry], list[Any]] | None:
    if name in _in_process:
        _, entries, raw = _in_process[name]
        return entries, raw
    by_name, _ = _declared()
    specs = by_name.get(name)
    if not specs:
        return None
    if len(specs) > 1:
        raise _duplicate(name, specs)
    spec = specs[0]
    loaded = _loaded.get(spec)
    if loaded is None:
        raw = _build(spec)
        loaded = _loaded[spec] = (validate_pattern_table(raw, _where(name, spec.origin), spec.origin),
                                  list(raw))
    return loaded


def _build(spec: PatternTableSpec) -> Any:
    where = _where(spec.name, spec.origin)
    factory = spec.factory
    if isinstance(factory, str):
        try:
            obj: Any = import_attribute(factory)
        except (Exception, SystemExit) as exc:  # sys.exit at import: an error naming the plugin
            raise PluginImportError(
                f"cannot import {factory} for {where}: {type(exc).__name__}: {shown(str(exc), 200)}",
                distribution=spec.distribution, version=spec.version,
                fix=(f"reinstall or upgrade {spec.distribution} (pip install --force-reinstall "
                     f"{spec.distribution}), or uninstall it (pip uninstall {spec.distribution})"),
            ) from exc
        factory = obj
    if not callable(factory):
        raise PluginImportError(
            f"{spec.factory} (the factory of {where}) is a {type(factory).__name__}, not callable",
            distribution=spec.distribution, version=spec.version, fix=plugin_fix(spec.origin))
    try:
        return factory()
    except (Exception, SystemExit) as exc:
        raise PluginBuildError(
            f"the factory {spec.factory} of {where} raised {type(exc).__name__}: "
            f"{shown(str(exc), 200)}",
            distribution=spec.distribution, version=spec.version, fix=plugin_fix(spec.origin),
        ) from exc


def get_pattern_table(name: str) -> list[Any] | None:
    """The pattern table of target ``name`` as it was given, or None (TVM's behaviour).

    A plugin's table is imported and validated on first use; a broken one
    raises its error here (and only here).
    """
    found = _resolve(name)
    return None if found is None else list(found[1])


def pattern_table(name: str) -> list[Entry]:
    """The validated entries of table ``name``; PatternTableNotFoundError naming the tables known."""
    found = _resolve(name)
    if found is None:
        raise _not_found(name)
    return list(found[0])


def check_pattern_table_name(name: str) -> None:
    """PatternTableNotFoundError unless a table ``name`` is registered or installed (nothing is imported)."""
    if name not in _in_process and name not in _declared()[0]:
        raise _not_found(name)


def _not_found(name: str) -> PatternTableNotFoundError:
    known = sorted({s.name for s in list_pattern_tables()})
    near = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    listing = ", ".join(known) if known else "none is registered or installed"
    unread = unreadable_hint(_declared()[1])
    return PatternTableNotFoundError(
        f"no pattern table named {name!r}{hint} (the pattern tables: {listing}; "
        "relaypass passes lists them; a target registers one with "
        f"register_pattern_table or a [[pattern_table]] entry in its plugin manifest){unread}")


def unreadable_hint(errors: Sequence[PluginError]) -> str:
    """"; N plugin distribution(s) could not be read, and may declare it: <first error>" or "".

    A name that is not found may be declared by a plugin whose manifest did
    not parse; an error about an unknown table or target says so.
    """
    if not errors:
        return ""
    return (f"; {len(errors)} plugin distribution(s) could not be read, and may declare it: "
            f"{errors[0].message}")
