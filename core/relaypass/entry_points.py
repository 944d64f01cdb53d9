"""Installed-distribution metadata: entry points with the distribution that declares them.

Passes, instruments and operators all arrive through entry points.  Names and
versions shown to users always come from here, never from a hard-coded string,
so a third party that copies the standard plugins' glue is listed under its
own distribution.  Standard library only: the IR's operator registry uses it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata as importlib_metadata

EntryPoint = importlib_metadata.EntryPoint


def entry_points_of_group(group: str) -> Iterator[tuple[EntryPoint, str, str]]:
    """Each entry point of ``group`` with its distribution's name and version.

    A distribution that declares the same entry point twice on ``sys.path``
    (an editable install beside a stale copy) is reported once.
    """
    seen: set[tuple[str, str]] = set()
    for ep in importlib_metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        name = dist.metadata["Name"] if dist is not None else "<unknown distribution>"
        version = dist.version if dist is not None else "?"
        key = (name, ep.name)
        if key in seen:
            continue
        seen.add(key)
        yield ep, name, version
