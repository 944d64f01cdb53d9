"""Why a pattern does not match: the deepest point the match reached and what failed there.

TVM answers ``pattern.match(expr)`` with a bare ``False``; with a pattern of a
dozen nodes and a program of thousands that leaves the user guessing.
``explain_match(pattern, expr)`` runs the same match (the same rules, the
same result) while keeping the failure met deepest in the pattern -- the
first one at that depth -- and returns a :class:`MatchExplanation`: the
sub-pattern that failed, the node it was tried on, the kind of failure and a
sentence about it, and what the match had bound by then.  Printed, it shows
both sides: the pattern's text and the expression's
(:func:`relaypass.ir.summary.short_text`).

Kinds of failure: ``op`` (a call of another operator, or a callee that does
not match), ``attr`` (an attribute missing or different), ``arity`` (another
number of arguments, fields or parameters), ``type``, ``dtype``, ``shape``,
``kind`` (another kind of expression), ``var-name``, ``index``, ``expr`` (not
equal to the expression of ``is_expr``), ``binding`` (a pattern node already
bound to another expression), ``dominator-path`` (a node between a
dominator's child and parent matching neither parent nor path) and
``dominator-parent`` (the child does not post-dominate the parent).
"""

from __future__ import annotations

from relaypass.ir.expr import Expr
from relaypass.ir.summary import short_text

from .matcher import DFPatternMatcher, run_deep_if_needed
from .pattern import DFPattern, PatternBuildError, _need_pattern
from .printer import pattern_text

__all__ = ["MatchExplanation", "explain_match"]


class MatchExplanation:
    """The outcome of one match, with the deepest failure when it did not match."""

    __slots__ = ("pattern", "expr", "matched", "kind", "failed_pattern", "failed_expr",
                 "reason", "bound")

    def __init__(self, pattern: DFPattern, expr: Expr, matcher: DFPatternMatcher,
                 matched: bool) -> None:
        self.pattern = pattern
        self.expr = expr
        self.matched = matched
        failure = None if matched else matcher.failure
        #: the kind of failure (see the module's documentation); None when it matched
        self.kind = failure.kind if failure else None
        #: the sub-pattern that failed, and the node it was tried on
        self.failed_pattern = failure.pattern if failure else None
        self.failed_expr = failure.expr if failure else None
        #: one sentence on what was found instead of what the pattern asks for
        self.reason = failure.detail if failure else None
        #: the partial match: what each pattern node was bound to when the failure happened
        self.bound = (failure.bound if failure else
                      {p: list(es) for p, es in matcher.memo.items()})

    def __bool__(self) -> bool:
        return self.matched

    def __str__(self) -> str:
        lines = [f"pattern: {pattern_text(self.pattern)}",
                 f"expression: {short_text(self.expr)}"]
        if self.matched:
            lines.append("matches")
            return "\n".join(lines)
        if self.failed_pattern is None:
            lines.append("does not match")
            return "\n".join(lines)
        lines += [
            f"does not match ({self.kind}): {self.reason}",
            f"  sub-pattern: {pattern_text(self.failed_pattern, 200)}",
            f"  tried on:    {short_text(self.failed_expr)}",
            f"  matched so far: {len(self.bound)} pattern node(s)",
        ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = "matched" if self.matched else f"failed {self.kind}"
        return f"<MatchExplanation {state}>"


def _explain(pattern: DFPattern, expr: Expr) -> MatchExplanation:
    matcher = DFPatternMatcher(expr, explain=True)
    ok = matcher.match(pattern, expr)
    return MatchExplanation(pattern, expr, matcher, ok)


def explain_match(pattern: DFPattern, expr: Expr) -> MatchExplanation:
    """Match ``pattern`` against ``expr`` and say where and why it failed, if it did."""
    _need_pattern(pattern, "explain_match's pattern")
    if not isinstance(expr, Expr):
        raise PatternBuildError(
            f"explain_match takes a Relay expression, not {type(expr).__name__}"
        )
    return run_deep_if_needed(_explain, pattern, expr)
