"""The module text the printing instruments write: readable by default, complete on request.

A model's weights are most of its text: ResNet-50 written with its metadata
section is about 130 MB, so printing it after each of 15 passes writes
gigabytes of base64 that nobody reads.  By default the instruments write
what TVM's ``str(mod)`` shows: scalar constants as literals (``1f``), every
other constant as ``meta[relay.Constant][i]``, and one comment line saying
the metadata section was left out; ``show_meta`` writes it (and the text
then parses back).  Type annotations (``/* ty=... */``) may be left out too,
which is what keeps diffs to the lines a pass really changed.
"""

from __future__ import annotations

from relaypass.ir.text.printer import METADATA_OMITTED

from .options import flag

#: What replaces TVM's multi-line note when the metadata section is left out.
METADATA_NOTE = ("/* metadata section omitted (the non-scalar constants): option show_meta = true, "
                 "or relaypass run --show-meta, includes it */")


def _no_annotation(node: object) -> str:
    return ""


def module_text(mod: object, show_meta: bool, types: bool = True) -> str:
    """``mod``'s text: with its metadata section when ``show_meta``, with type comments when ``types``."""
    annotate = None if types else _no_annotation
    text = mod.astext(show_meta_data=show_meta, annotate=annotate)  # type: ignore[attr-defined]
    if not show_meta and text.endswith(METADATA_OMITTED):
        text = text[: -len(METADATA_OMITTED)] + METADATA_NOTE
    return text


def show_meta_flag(instrument: str, value: object) -> bool:
    return flag(instrument, "show_meta", value)
