"""Walking a pattern: TVM's ``DFPatternVisitor``.

``visit(pattern)`` dispatches each pattern node, once, to
``visit_<kind>_pattern`` (``visit_call_pattern``, ``visit_wildcard_pattern``,
...), whose default visits the sub-patterns in TVM's order (a call's callee
before its arguments, a dominator's parent, path, then child).  Override a
method and call ``super()`` to keep walking.  Self-referencing patterns
(``redirect_to``) are fine: a node is visited once.  The walk recurses along
the pattern, which is written by hand and small, never along a program.
"""

from __future__ import annotations

import re

from . import pattern as _patterns
from .pattern import DFPattern

__all__ = ["DFPatternVisitor"]


def _method_name(kind: type) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", kind.__name__).lower()
    return "visit_" + snake.replace("d_f_pattern", "dfpattern")


class DFPatternVisitor:
    """Visits every node of a pattern once, sub-patterns after their user's method starts."""

    def __init__(self) -> None:
        self.visited: set[DFPattern] = set()

    def visit(self, pattern: DFPattern) -> None:
        if pattern in self.visited:
            return
        self.visited.add(pattern)
        getattr(self, _method_name(type(pattern)))(pattern)

    def visit_default(self, pattern: DFPattern) -> None:
        """What each ``visit_<kind>_pattern`` does unless overridden: visit the sub-patterns."""
        for sub in pattern.sub_patterns():
            self.visit(sub)


# One method per pattern kind (``visit_call_pattern`` ...), each the default walk, so that
# an override can call ``super().visit_call_pattern(p)``.
for _kind in vars(_patterns).values():
    if isinstance(_kind, type) and issubclass(_kind, DFPattern) and _kind is not DFPattern:
        setattr(DFPatternVisitor, _method_name(_kind), DFPatternVisitor.visit_default)
