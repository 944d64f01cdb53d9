"""``relaypass match PATTERN MODEL``: where a pattern matches in a model, and why not.

The question a pattern author asks of a real model is "which nodes does my
pattern match here, and if none, what is the closest it gets?".  This tool
answers both on every function of a module: each call (or other node) the
pattern matches, printed in one line, and when nothing matches, the
explanation of the node where the match got deepest
(:func:`relaypass.dataflow_pattern.explain_match`'s answer: the sub-pattern
that failed, the node it was tried on, and why).

The pattern is text (:func:`relaypass.dataflow_pattern.parse_pattern`), given
on the command line or in a file, so reading it runs no code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..dataflow_pattern import DFPattern, MatchExplanation, parse_pattern
from ..dataflow_pattern.matcher import DFPatternMatcher
from ..errors import RelayPassError
from ..ir.expr import Constant, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.traversal import post_order

__all__ = ["MatchReport", "PatternFileError", "match_module", "read_pattern"]

#: Largest pattern file read.
MAX_PATTERN_BYTES = 64 * 1024


class PatternFileError(RelayPassError):
    """A pattern file that cannot be read (missing, too large, not UTF-8)."""


def read_pattern(argument: str) -> DFPattern:
    """The pattern ``argument`` writes, or the one in the file it names.

    A file holds one pattern, over as many lines as it likes; lines starting
    with ``#`` are comments.
    """
    path = Path(argument)
    if not path.is_file():
        return parse_pattern(argument)
    try:
        if path.stat().st_size > MAX_PATTERN_BYTES:
            raise PatternFileError(f"{argument}: larger than {MAX_PATTERN_BYTES} bytes; "
                                   "a pattern file holds one pattern")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise PatternFileError(f"{argument}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise PatternFileError(f"{argument}: {err.strerror}") from None
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return parse_pattern(" ".join(lines))


@dataclass
class MatchReport:
    """Where a pattern matched in a module, or the closest miss when it matched nowhere."""

    pattern: DFPattern
    #: (function name, node) for each node the pattern matches, in post-order
    matches: list[tuple[str, Expr]] = field(default_factory=list)
    #: when nothing matched: the function and the explanation that got deepest
    closest: tuple[str, MatchExplanation] | None = None


_SKIPPED = (Op, Var, GlobalVar, Constant)


def match_module(pattern: DFPattern, mod: IRModule) -> MatchReport:
    """Try ``pattern`` on every node of every function of ``mod`` (its roots, not leaves)."""
    report = MatchReport(pattern)
    functions = [
        (gv.name_hint, func.body, [n for n in post_order(func.body) if not isinstance(n, _SKIPPED)])
        for gv, func in mod.functions.items() if isinstance(func, Function)
    ]
    for name, body, nodes in functions:
        matcher = DFPatternMatcher(body)
        report.matches.extend((name, node) for node in nodes if matcher.match(pattern, node))
    if report.matches:
        return report
    # Nothing matched: explain the node where the match got deepest.
    best_depth = -1
    for name, body, nodes in functions:
        explainer = DFPatternMatcher(body, explain=True)
        for node in nodes:
            explainer.match(pattern, node)
            depth = explainer.failure.depth if explainer.failure is not None else 0
            if depth > best_depth:
                best_depth = depth
                report.closest = (name, MatchExplanation(pattern, node, explainer, False))
    return report
