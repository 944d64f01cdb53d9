"""BYOC targets: which operators an external compiler takes, and which target names exist.

AnnotateTarget asks, for every call and every target it was given, whether
that target's compiler supports the call.  In TVM the answer is an operator
attribute, ``register_op_attr("nn.relu", "target.acme", predicate)``, set by
code the user imports first; that works here too and takes precedence.  A
plugin distribution can instead declare its target's support as data, in its
manifest::

    [[target]]
    name = "acme"
    help = "the acme NPU"
    [target.operators]
    "nn.relu" = true                                 # every call
    "nn.conv2d" = "acme_byoc.support:conv2d_ok"      # when predicate(call) is true

so that installing the package is all a pipeline file needs.  Predicates are
imported the first time a pass asks for the target, and a broken one is an
error naming the distribution and the operator, raised only then.

A target name is *known* when a plugin declares it, a pattern table has its
name (composite functions ``"acme.*"`` go to target ``acme``), or some
operator has a ``target.<name>`` attribute.  Pipeline files may only name
known targets (a misspelt target would otherwise offload nothing, silently);
Python callers keep TVM's behaviour, where any name is accepted.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..errors import RelayPassError
from .config import shown
from .errors import PluginError
from .importing import import_attribute
from .pattern_tables import list_pattern_tables, unreadable_hint
from .registry import plugin_fix
from .specs import TargetSpec

__all__ = [
    "DuplicateTargetError", "TargetSource", "TargetSupportError", "UnknownTargetError",
    "add_source", "check_target_names", "known_target_names", "list_targets",
    "operator_support", "target_errors",
]

#: A support predicate: called with a typed call of the operator, true when the target takes it.
Predicate = Callable[[Any], bool]


class TargetSupportError(PluginError):
    """A target's declared operator support cannot be used (a predicate fails to import)."""


class DuplicateTargetError(PluginError):
    """Two plugin distributions declare a target of the same name."""


class UnknownTargetError(RelayPassError, LookupError):
    """A target name that no plugin declares, no pattern table has and no operator supports."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class TargetSource(Protocol):
    """Somewhere targets are declared besides this process (the installed plugins)."""

    def target_declarations(self) -> tuple[list[TargetSpec], list[PluginError]]:
        """Every target declared, and the errors met reading the declarations."""


_sources: list[TargetSource] = []
# Support tables built from declarations, keyed by the declaration (a reinstalled
# plugin gives a new declaration and is loaded afresh).
_loaded: dict[TargetSpec, dict[str, Predicate]] = {}


def add_source(source: TargetSource) -> None:
    """Make the targets ``source`` declares visible (the plugin layer calls this once)."""
    if source not in _sources:
        _sources.append(source)


def _declared() -> tuple[dict[str, list[TargetSpec]], list[PluginError]]:
    by_name: dict[str, list[TargetSpec]] = {}
    errors: list[PluginError] = []
    for source in _sources:
        specs, errs = source.target_declarations()
        errors.extend(errs)
        for spec in specs:
            by_name.setdefault(spec.name, []).append(spec)
    return by_name, errors


def list_targets() -> list[TargetSpec]:
    """Every declared target, by name (no plugin code is imported)."""
    by_name, _ = _declared()
    return [spec for name in sorted(by_name) for spec in by_name[name]]


def target_errors() -> list[PluginError]:
    """The problems met reading target declarations, plus names declared twice."""
    by_name, errors = _declared()
    return errors + [_duplicate(name, specs) for name, specs in sorted(by_name.items())
                     if len(specs) > 1]


def _duplicate(name: str, specs: list[TargetSpec]) -> DuplicateTargetError:
    who = " and ".join(str(s.origin) for s in specs)
    return DuplicateTargetError(
        f"target {name!r} is declared by {who}",
        distribution=specs[-1].distribution, version=specs[-1].version,
        fix=f"uninstall one of them (pip uninstall {specs[-1].distribution})")


def _always(call: Any) -> bool:
    return True


def _build(spec: TargetSpec) -> dict[str, Predicate]:
    support: dict[str, Predicate] = {}
    for op_name, how in spec.operators:
        if how is True:
            support[op_name] = _always
            continue
        where = f"operator {op_name!r} of target {spec.name!r} ({spec.origin})"
        try:
            predicate = import_attribute(str(how))
        except (Exception, SystemExit) as exc:  # sys.exit at import: an error naming the plugin
            raise TargetSupportError(
                f"cannot import {how} for {where}: {type(exc).__name__}: {shown(str(exc), 200)}",
                distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin, reinstall=True)) from exc
        if not callable(predicate):
            raise TargetSupportError(
                f"{how} (the support predicate of {where}) is a {type(predicate).__name__}, "
                "not callable", distribution=spec.distribution, version=spec.version,
                fix=plugin_fix(spec.origin, reinstall=True))
        support[op_name] = predicate
    return support


def operator_support(name: str) -> dict[str, Predicate]:
    """The operators a plugin declares target ``name`` supports, each with its predicate.

    Empty when no plugin declares the target (its support may still come from
    ``target.<name>`` operator attributes).  Predicates are imported now, on
    first use; a broken declaration raises its error here, and only here.
    """
    by_name, _ = _declared()
    specs = by_name.get(name)
    if not specs:
        return {}
    if len(specs) > 1:
        raise _duplicate(name, specs)
    spec = specs[0]
    support = _loaded.get(spec)
    if support is None:
        support = _loaded[spec] = _build(spec)
    return support


def known_target_names() -> set[str]:
    """Every target name that would offload something: declared, a pattern table, an op attribute."""
    from ..ir.op import Op  # the operator registry (and numpy): only when a name is checked

    names = set(_declared()[0]) | {t.name for t in list_pattern_tables()}
    for op_name in Op.list_op_names():
        names.update(key[len("target."):] for key in Op.get(op_name).list_attr_keys()
                     if key.startswith("target."))
    return names


def check_target_names(names: Sequence[str]) -> None:
    """UnknownTargetError for the first of ``names`` that is not a known target."""
    known = known_target_names()
    for name in names:
        if name in known:
            continue
        near = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        listing = ", ".join(sorted(known)) or "none is installed"
        unread = unreadable_hint(_declared()[1])
        raise UnknownTargetError(
            f"no target named {name!r}{hint} (the targets: {listing}; a plugin declares one "
            f"with a [[target]] entry in its manifest, or code registers its operators with "
            f"register_op_attr(op, 'target.{name}', predicate)){unread}")
