"""The BYOC section of ``relaypass passes``: pattern tables and targets the plugins provide.

MergeComposite names a pattern table and AnnotateTarget names targets; a user
writing a pipeline file needs to see which exist, where they come from and,
for a target, which operators it takes.  Everything here is read from
manifests: listing imports no plugin code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..transform.pattern_tables import list_pattern_tables, pattern_table_errors
from ..transform.targets import list_targets, target_errors

__all__ = ["byoc_json", "print_byoc_sections"]

Table = Callable[[Sequence[str], Sequence[Sequence[str]]], str]


def byoc_json() -> list[dict[str, Any]]:
    """Entries of kind ``pattern_table`` and ``target``, after the passes in ``passes --json``."""
    tables = [{"name": t.name, "kind": "pattern_table", "distribution": t.distribution,
               "version": t.version, "help": t.help} for t in list_pattern_tables()]
    targets = [{"name": t.name, "kind": "target", "distribution": t.distribution,
                "version": t.version, "help": t.help,
                "operators": [op for op, _ in t.operators]} for t in list_targets()]
    return tables + targets


def print_byoc_sections(table: Table, warn: Callable[[str], None]) -> None:
    """Print a section for pattern tables and one for targets (when there are any); warn of errors."""
    tables = list_pattern_tables()
    if tables:
        rows = [(t.name, t.distribution, t.version or "-", t.help or "-") for t in tables]
        print("\npattern tables (MergeComposite = { pattern_table = \"<name>\" }):")
        print(table(("name", "distribution", "version", "help"), rows))
    targets = list_targets()
    if targets:
        rows = [(t.name, t.distribution, t.version or "-", ", ".join(op for op, _ in t.operators))
                for t in targets]
        print("\ntargets (AnnotateTarget = { targets = [\"<name>\"] }):")
        print(table(("name", "distribution", "version", "operators"), rows))
    for error in [*pattern_table_errors(), *target_errors()]:
        warn(str(error))
