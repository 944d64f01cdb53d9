"""AnnotateSpans: give every node of a module a span into the module's own text.

A module built in Python has no spans, so an error found later (by InferType,
say) can only show the expression, not point at a line.  Relay's answer, kept
here, is to print the module (with its metadata) and parse that text back:
every node of the result then has a span into the printed text, whose source
name is ``GeneratedSource``.  The result is structurally equal to the input;
its nodes are new (the input module is left as it is).
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.ir.module import IRModule
from relaypass.ir.text.parser import parse
from relaypass.transform import pass_constructor

__all__ = ["AnnotateSpans", "GENERATED_SOURCE", "annotate_spans"]

#: The source name the spans point into, as Relay names it.
GENERATED_SOURCE = "GeneratedSource"


def annotate_spans(mod: IRModule) -> IRModule:
    """``mod`` printed with its metadata and parsed back, so that every node has a span."""
    return parse(mod.astext(show_meta_data=True), GENERATED_SOURCE)


def _annotate_spans_factory() -> Callable[[IRModule, object], IRModule]:
    """AnnotateSpans's transformation: the manifest's factory."""

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return annotate_spans(mod)

    return transform


#: The AnnotateSpans pass, the one ``relay.transform.AnnotateSpans`` builds;
#: everything about it is declared in relaypass-plugin.toml.
AnnotateSpans = pass_constructor("AnnotateSpans")
