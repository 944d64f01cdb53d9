"""Ordering the passes a pass requires: the closure of ``required``, dependencies first.

Works on declarations only (manifest data), so a pipeline's schedule can be
explained and its dependency errors reported before any plugin is imported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence

from .errors import DependencyCycleError, MissingDependencyError
from .specs import PassSpec


def _where(origin: str) -> str:
    return f" (from {origin})" if origin else " (defined in this process, not registered)"


def dependency_order(
    root: str,
    required: Sequence[str],
    root_origin: str,
    lookup: Callable[[str], PassSpec | None],
    known_names: Callable[[], Iterable[str]],
    root_distribution: tuple[str, str] = ("", ""),
) -> tuple[str, ...]:
    """The transitive ``required`` passes of ``root``, each after the passes it requires.

    ``lookup(name)`` gives a registered pass's spec or None.  A name nobody
    provides is a :class:`MissingDependencyError` naming the pass that needs it
    and where that pass was declared, with near-matching registered names; a
    cycle (including one through ``root``) is a :class:`DependencyCycleError`
    showing the whole cycle.
    """
    order: list[str] = []
    done: set[str] = set()
    path: list[tuple[str, str]] = [(root, root_origin)]

    def visit(name: str, needed_by: str, needed_by_origin: str, needed_by_dist: tuple[str, str]) -> None:
        if name in done:
            return
        for i, (on_path, _) in enumerate(path):
            if on_path == name:
                raise _cycle_error([*path[i:], (name, "")], lookup)
        spec = lookup(name)
        if spec is None:
            near = difflib.get_close_matches(name, list(known_names()), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
            dist = needed_by_dist[0]
            fix = (
                f"install the distribution that provides {name!r}, or fix the `required` list of "
                f"{needed_by!r} in the manifest of {dist}" if dist else
                f"register a pass named {name!r} or remove it from the `required` of {needed_by!r}"
            )
            raise MissingDependencyError(
                f"pass {needed_by!r}{_where(needed_by_origin)} requires {name!r}, "
                f"which no registered plugin provides{hint}",
                distribution=needed_by_dist[0], version=needed_by_dist[1], fix=fix,
            )
        path.append((name, str(spec.origin)))
        dist = ("", "") if spec.origin.in_process else (spec.origin.distribution, spec.origin.version)
        for dep in spec.required:
            visit(dep, name, str(spec.origin), dist)
        path.pop()
        done.add(name)
        order.append(name)

    for dep in required:
        visit(dep, root, root_origin, root_distribution)
    return tuple(order)


def _cycle_error(cycle: list[tuple[str, str]], lookup: Callable[[str], PassSpec | None]) -> DependencyCycleError:
    shown = " -> ".join(f"{n} ({o})" if o else n for n, o in cycle)
    dists: list[tuple[str, str]] = []
    for name, _ in cycle:
        spec = lookup(name)
        if spec is not None and not spec.origin.in_process:
            key = (spec.origin.distribution, spec.origin.version)
            if key not in dists:
                dists.append(key)
    where = ", ".join(d for d, _ in dists) or "the in-process registrations"
    first = dists[0] if dists else ("", "")
    return DependencyCycleError(
        f"passes require each other in a cycle: {shown}",
        distribution=first[0], version=first[1],
        fix=f"break the cycle in the `required` lists of {where}",
    )
