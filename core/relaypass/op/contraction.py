"""Tensor contraction: ``einsum``, Relay's Einstein summation over a tuple of tensors.

The equation is numpy's: one term of axis labels (letters) per operand,
separated by commas, an optional ``->`` and output term, and ``...`` for the
axes a term does not name, which broadcast across operands.  Without ``->``
the output holds the broadcast ``...`` axes, then every label used exactly
once, in alphabetical order.  A label's extents must agree across operands,
except that an extent of 1 broadcasts, as in numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import Dim, TensorType, Type
from .builder import call, tuple_arg
from .relations import broadcast_shapes, expect_tensors, fail, is_any, shape_str

__all__ = ["einsum"]

_ELLIPSIS = "..."


class _Term:
    """One term of an equation: the labels before and after its ``...`` (if it has one)."""

    __slots__ = ("before", "after", "ellipsis")

    def __init__(self, text: str, equation: str) -> None:
        self.ellipsis = _ELLIPSIS in text
        if text.count(_ELLIPSIS) > 1:
            raise fail("einsum", f"equation {equation!r}: a term has more than one '...'")
        before, _, after = text.partition(_ELLIPSIS)
        for c in before + after:
            if not c.isalpha():
                raise fail("einsum", f"equation {equation!r}: {c!r} is not an axis label "
                           f"(letters and '...' only)")
        self.before, self.after = list(before), list(after)

    @property
    def labels(self) -> list[str]:
        return self.before + self.after


def parse_equation(equation: str, num_operands: int) -> tuple[list[_Term], _Term]:
    """The operand terms and the output term of ``equation`` (the implicit output made
    explicit)."""
    if not isinstance(equation, str):
        raise fail("einsum", f"attribute equation must be a string, got {equation!r}")
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = [_Term(t, equation) for t in lhs.split(",")]
    if len(terms) != num_operands:
        raise fail("einsum", f"equation {equation!r} has {len(terms)} operand terms, but "
                   f"{num_operands} operands are given")
    if arrow:
        out = _Term(rhs, equation)
        if len(set(out.labels)) != len(out.labels):
            raise fail("einsum", f"equation {equation!r}: the output repeats a label")
        used = {c for t in terms for c in t.labels}
        missing = [c for c in out.labels if c not in used]
        if missing:
            raise fail("einsum", f"equation {equation!r}: output label {missing[0]!r} is not "
                       f"in any operand")
        return terms, out
    counts: dict[str, int] = {}
    for t in terms:
        for c in t.labels:
            counts[c] = counts.get(c, 0) + 1
    once = "".join(sorted(c for c, n in counts.items() if n == 1))
    return terms, _Term((_ELLIPSIS if any(t.ellipsis for t in terms) else "") + once, equation)


def _einsum_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    tensors = expect_tensors(arg_types[0], "einsum")
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise fail("einsum", f"every operand must have the same dtype, got {sorted(dtypes)}")
    terms, out = parse_equation(attrs.equation, len(tensors))
    extents: dict[str, Dim] = {}
    ellipsis: tuple[Dim, ...] = ()
    for i, (t, term) in enumerate(zip(tensors, terms)):
        extra = t.ndim - len(term.labels)
        if extra < 0 or (extra and not term.ellipsis):
            raise fail("einsum", f"operand {i} has shape {shape_str(t.shape)}, which does not "
                       f"fit its term {''.join(term.before)}{'...' if term.ellipsis else ''}"
                       f"{''.join(term.after)}")
        cut = len(term.before)
        named = list(t.shape[:cut]) + list(t.shape[cut + extra:])
        ellipsis = broadcast_shapes(ellipsis, t.shape[cut:cut + extra], "einsum")
        for c, d in zip(term.labels, named):
            known = extents.get(c)
            if known is None or known == 1 or (is_any(known) and d != 1):
                extents[c] = d
            elif d != 1 and not is_any(d) and not is_any(known) and d != known:
                raise fail("einsum", f"label {c!r} has extent {known} in one operand and {d} in "
                           f"operand {i}")
    if ellipsis and not out.ellipsis:
        raise fail("einsum", f"equation {attrs.equation!r}: the operands have '...' axes "
                   f"{shape_str(ellipsis)}, which the output must keep with '...'")
    shape = [extents[c] for c in out.before] + list(ellipsis) + [extents[c] for c in out.after]
    return TensorType(shape, tensors[0].dtype)


def _einsum_kernel(args, attrs):
    arrays = args[0]
    return np.asarray(np.einsum(attrs.equation.replace(" ", ""), *arrays),
                      dtype=arrays[0].dtype)


register_op(
    "einsum", num_inputs=1, type_relation=_einsum_rel, kernel=_einsum_kernel,
    pattern=OpPattern.INJECTIVE, attrs={"equation": REQUIRED},
    attrs_type_key="relay.attrs.EinsumAttrs",
    description="Einstein summation of a tuple of tensors, with numpy's equations.",
)


def einsum(data: Sequence[Expr] | Expr, equation: str) -> Call:
    """The Einstein summation ``equation`` (numpy's notation) of the tensors ``data`` (a list
    of expressions or a tuple expression)."""
    return call("einsum", [tuple_arg(data)], equation=str(equation))

