"""The text of a pattern, written the way patterns are built.

``str(is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), is_constant())))`` reads
``nn.relu(nn.conv2d(*, const))``: an operator by its name, a wildcard as
``*``, a variable as ``%name``.  A node used more than once is written in
full the first time, as ``$1=...``, and as ``$1`` afterwards, so shared
sub-patterns and self-referencing patterns (``redirect_to``) print finitely.
Explanations of failed matches put this text next to the expression's.
"""

from __future__ import annotations

from relaypass.ir.op import Op
from relaypass.ir.summary import clip, short_text, type_text

from .pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    slots,
)

__all__ = ["MAX_CHARS", "pattern_text"]

MAX_CHARS = 400
"""Longest pattern text; longer ones are clipped."""


def pattern_text(pattern: DFPattern, max_chars: int = MAX_CHARS) -> str:
    """One line of text for ``pattern``."""
    return clip(_Printer(pattern).text(pattern), max_chars)


class _Printer:
    def __init__(self, root: DFPattern) -> None:
        uses: dict[DFPattern, int] = {}
        stack = [root]
        while stack:
            node = stack.pop()
            uses[node] = uses.get(node, 0) + 1
            if uses[node] == 1:
                stack.extend(node.sub_patterns())
        self.shared = {node for node, count in uses.items() if count > 1}
        self.labels: dict[DFPattern, str] = {}

    def text(self, node: DFPattern) -> str:
        if node in self.shared:
            label = self.labels.get(node)
            if label is not None:
                return label
            label = self.labels[node] = f"${len(self.labels) + 1}"
            return f"{label}={self._body(node)}"
        return self._body(node)

    def _many(self, nodes: tuple[DFPattern, ...] | None) -> str:
        return "..." if nodes is None else ", ".join(self.text(n) for n in nodes)

    def _body(self, p: DFPattern) -> str:
        kind = type(p)
        if kind is ExprPattern:
            expr = p.expr
            return expr.name if type(expr) is Op else f"is_expr({short_text(expr, 80)})"
        if kind is VarPattern:
            return f"%{p.name or '*'}"
        if kind is ConstantPattern:
            return "const"
        if kind is WildcardPattern:
            return "*" if p.pattern is None else f"*->{self.text(p.pattern)}"
        if kind is CallPattern:
            return f"{self.text(p.op)}({self._many(p.args)})"
        if kind is FunctionPattern:
            return f"fn ({self._many(p.params)}) {{ {self.text(p.body)} }}"
        if kind is TuplePattern:
            one = p.fields is not None and len(p.fields) == 1  # ``(p,)``: ``(p)`` is p itself
            return f"({self._many(p.fields)}{',' if one else ''})"
        if kind is TupleGetItemPattern:
            return f"{self.text(p.tuple)}.{'*' if p.index == -1 else p.index}"
        if kind is IfPattern:
            return (f"if ({self.text(p.cond)}) {{ {self.text(p.true_branch)} }} "
                    f"else {{ {self.text(p.false_branch)} }}")
        if kind is LetPattern:
            return f"let {self.text(p.var)} = {self.text(p.value)}; {self.text(p.body)}"
        if kind is AltPattern:
            return f"({self.text(p.left)} | {self.text(p.right)})"
        if kind is TypePattern:
            return f"{self.text(p.pattern)}.has_type({type_text(p.type)})"
        if kind is DataTypePattern:
            return f"{self.text(p.pattern)}.has_dtype({p.dtype!r})"
        if kind is ShapePattern:
            dims = ", ".join(str(getattr(d, "value", d)) for d in p.shape)
            return f"{self.text(p.pattern)}.has_shape([{dims}])"
        if kind is AttrPattern:
            items = ", ".join(f"{k!r}: {v!r}" for k, v in p.attrs.items())
            return f"{self.text(p.pattern)}.has_attr({{{items}}})"
        if kind is DominatorPattern:
            return (f"dominates({self.text(p.parent)}, {self.text(p.path)}, "
                    f"{self.text(p.child)})")
        return f"<{kind.__name__}>"


slots.text = pattern_text
