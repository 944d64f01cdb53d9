"""Installed-distribution metadata: entry points with the distribution that declares them.

Passes, instruments and operators all arrive through entry points.  Names and
versions shown to users always come from here, never from a hard-coded string,
so a third party that copies the standard plugins' glue is listed under its
own distribution.  Standard library only: the IR's operator registry uses it too.

Two rules every kind of plugin shares live here as well, so that the operator
registry (in ``ir/``) and the pass registry (in ``transform/``) apply them alike:

* which plugin may replace a name the standard distribution provides: only one
  the user names in ``RELAYPASS_OVERRIDES`` (or, for passes and instruments, in
  a pipeline file's ``overrides``), by its qualified name ``dist:Name``;
* warnings raised by plugin code reach the user as :class:`PluginWarning`
  naming the plugin, through :mod:`warnings`, never as a bare line pointing
  into a file of the plugin.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata as importlib_metadata

EntryPoint = importlib_metadata.EntryPoint

#: The distribution whose passes, instruments and operators are the standard ones.
STANDARD_DISTRIBUTION = "relaypass"

#: The environment variable naming the plugin names allowed to replace standard ones.
OVERRIDES_VARIABLE = "RELAYPASS_OVERRIDES"


class PluginWarning(UserWarning):
    """A warning raised by plugin code, re-issued with the plugin (distribution, name) named."""


def normalized(distribution: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``My.Plugin`` and ``my-plugin`` match."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def qualifiers(distribution: str, entry_point: str) -> tuple[str, ...]:
    """The prefixes that qualify a name a plugin declares: its entry point's name, its distribution's."""
    out = [entry_point] if entry_point else []
    for q in (distribution, normalized(distribution)):
        if q and q not in out:
            out.append(q)
    return tuple(out)


def split_qualified(name: str) -> tuple[str, str] | None:
    """``("dist", "Name")`` for ``"dist:Name"``; None for a plain name."""
    qual, sep, plain = name.partition(":")
    if not sep or not qual or not plain:
        return None
    return qual, plain


def overrides_from_environment() -> frozenset[str]:
    """The qualified names listed in ``RELAYPASS_OVERRIDES`` (separated by commas or spaces).

    ``RELAYPASS_OVERRIDES="otherdist:FoldConstant otherdist:add"`` lets the pass
    ``FoldConstant`` and the operator ``add`` of distribution ``otherdist``
    replace the standard ones in this process.
    """
    text = os.environ.get(OVERRIDES_VARIABLE, "")
    return frozenset(p for p in re.split(r"[\s,]+", text) if split_qualified(p) is not None)


def override_allowed(name: str, distribution: str, entry_point: str,
                     allowed: frozenset[str]) -> bool:
    """Whether ``allowed`` (qualified names) lets this plugin's ``name`` replace the standard one."""
    return any(f"{q}:{name}" in allowed for q in qualifiers(distribution, entry_point))


@contextmanager
def plugin_warnings(who: str) -> Iterator[None]:
    """Run plugin code, re-issuing each warning it raises as a :class:`PluginWarning` naming ``who``.

    The user's warning filters still decide which warnings are raised at all
    (an ignored DeprecationWarning stays ignored); those raised are issued
    again after the block, also when it raised.
    """
    with warnings.catch_warnings(record=True) as caught:
        try:
            yield
        finally:
            recorded = list(caught)
    for w in recorded:
        text = str(w.message).strip().splitlines()
        warnings.warn(PluginWarning(f"{who}: {w.category.__name__}: {text[0] if text else ''}"),
                      stacklevel=3)


def entry_points_of_group(group: str,
                          problems: list[tuple[str, str]] | None = None
                          ) -> Iterator[tuple[EntryPoint, str, str]]:
    """Each entry point of ``group`` with its distribution's name and version.

    Distributions are read one by one, so one whose metadata cannot be read
    (bytes that are not UTF-8, an ``entry_points.txt`` that does not parse)
    hides no other: it is left out, and ``(where, why)`` is appended to
    ``problems`` when given.  A distribution that declares the same entry
    point twice on ``sys.path`` (an editable install beside a stale copy) is
    reported once.
    """
    seen: set[tuple[str, str]] = set()
    for dist in importlib_metadata.distributions():
        try:
            eps = [ep for ep in dist.entry_points if ep.group == group]
            if not eps:
                continue
            name = dist.metadata["Name"] or "<unnamed distribution>"
            version = dist.version or "?"
        except Exception as exc:  # contained: one unreadable distribution hides no other
            if problems is not None:
                where = str(getattr(dist, "_path", "") or dist)
                problems.append((where, f"{type(exc).__name__}: {exc}"))
            continue
        for ep in eps:
            key = (normalized(name), ep.name)
            if key in seen:
                continue
            seen.add(key)
            yield ep, name, version
