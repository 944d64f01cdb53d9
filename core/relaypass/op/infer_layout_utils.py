"""What an operator says about layouts, and the rules many operators share (Relay's infer_layout_utils).

An operator's ``FInferCorrectLayout`` attribute
(:func:`~relaypass.ir.op_hooks.register_infer_correct_layout`) is called as
``fn(attrs, new_in_layouts, old_in_layouts, old_in_types)`` and returns an
:class:`InferCorrectLayoutOutput`: the layouts it wants its inputs in, the
layouts of its outputs, and its attributes rewritten for those layouts (an
axis moved, padding reordered).  ``old_in_layouts`` are the layouts the
producers of the inputs had before the pass; ``new_in_layouts`` is None on
the first question ("what are your layouts as the program stands?") and the
producers' new layouts on the second ("follow them if you can").  A layout
is a :class:`~relaypass.op.data_layout.Layout` or None when unknown; an
answer with an unknown layout means the operator cannot say, and the layout
passes then give it its inputs in their original layouts.

Elementwise operators follow any layout (:func:`elemwise_arbitrary_layout`);
broadcasting operators follow the larger operand and rename the smaller one's
layout to match (:func:`binary_broadcast_layout`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..ir.attrs import Attrs
from ..ir.types import TensorType, Type
from .data_layout import Layout, LayoutError, layout

__all__ = [
    "InferCorrectLayoutOutput", "adjust_subordinate_factors", "binary_broadcast_layout",
    "elemwise_arbitrary_layout", "isomorphic", "try_transform_like",
]

Layouts = Sequence["Layout | None"]


class InferCorrectLayoutOutput:
    """The answer of an ``FInferCorrectLayout`` function (TVM's ``InferCorrectLayoutOutput``).

    Layouts may be given as strings; they are kept as :class:`Layout` (None when unknown).
    """

    __slots__ = ("input_layouts", "output_layouts", "new_attrs")

    def __init__(self, input_layouts: Sequence[Any], output_layouts: Sequence[Any],
                 new_attrs: Attrs | None):
        self.input_layouts: list[Layout | None] = [layout(x) for x in input_layouts]
        self.output_layouts: list[Layout | None] = [layout(x) for x in output_layouts]
        self.new_attrs = new_attrs

    def __repr__(self) -> str:
        def names(ls):
            return [None if x is None else x.name for x in ls]
        return (f"InferCorrectLayoutOutput({names(self.input_layouts)}, "
                f"{names(self.output_layouts)})")


def elemwise_arbitrary_layout(attrs: Attrs, new_in_layouts: Layouts | None,
                              old_in_layouts: Layouts, old_in_types: Sequence[Type]
                              ) -> InferCorrectLayoutOutput:
    """Every input and the output in one layout: the first new one, else the first known old one."""
    if new_in_layouts is not None:
        ret = new_in_layouts[0]
    else:
        ret = next((x for x in old_in_layouts if x is not None), None)
    return InferCorrectLayoutOutput([ret] * len(old_in_layouts), [ret], attrs)


def binary_broadcast_layout(attrs: Attrs, new_in_layouts: Layouts | None,
                            old_in_layouts: Layouts, old_in_types: Sequence[Type]
                            ) -> InferCorrectLayoutOutput:
    """Layouts for two broadcasting operands: both follow the larger one.

    Before the rewrite, an operand of unknown layout takes the trailing axes
    of the other one's layout (when it has no more axes).  After, the smaller
    operand's layout is renamed the way the larger one's changed, so that the
    two still broadcast: ``C`` against ``NHWC`` becoming ``NCHW`` becomes
    ``NCHW`` too (the smaller operand gets leading unit axes).
    """
    ranks = [len(t.shape) if isinstance(t, TensorType) else 0 for t in old_in_types]
    old_large = 0 if ranks[0] >= ranks[1] else 1
    layouts = list(old_in_layouts)
    fail = InferCorrectLayoutOutput([None, None], [None], attrs)
    if layouts[0] is None and layouts[1] is None:
        return fail
    if layouts[0] is None or layouts[1] is None:
        known = 0 if layouts[0] is not None else 1
        unknown = 1 - known
        if ranks[known] < ranks[unknown]:
            return fail  # the output's layout depends on the operand whose layout is unknown
        layouts[unknown] = layouts[known].sublayout(ranks[known] - ranks[unknown], ranks[unknown])
        out = layouts[known]
    else:
        out = layouts[old_large]
    if new_in_layouts is None:
        return InferCorrectLayoutOutput(layouts, [out], attrs)
    ret = new_in_layouts[old_large]
    large = 0 if new_in_layouts[0].ndim_primal >= new_in_layouts[1].ndim_primal else 1
    small = 1 - large
    target = try_transform_like(layouts[small], layouts[large], new_in_layouts[large])
    if target is None:
        return fail
    small_type = old_in_types[small]
    small_shape = small_type.shape if isinstance(small_type, TensorType) else ()
    new_layouts: list[Layout | None] = [None, None]
    new_layouts[large] = new_in_layouts[large]
    new_layouts[small] = adjust_subordinate_factors(target, layouts[small], small_shape)
    return InferCorrectLayoutOutput(new_layouts, [ret], attrs)


def adjust_subordinate_factors(src: Layout, old: Layout, old_shape: Sequence[Any]) -> Layout:
    """``src`` with the split factor of each sub-axis set to 1 where the old tensor has extent 1.

    An operand that broadcasts along C (extent 1, or no C at all) cannot be
    split into blocks of 16 like the other operand; with a factor of 1 it
    still broadcasts against the blocked one.
    """
    parts = []
    for letter, factor in src.axes:
        if factor is not None:
            primal = letter.upper()
            k = old.index_of(primal)
            if k == -1:
                factor = 1
            else:
                extent = old_shape[k]
                # A unit extent broadcasts, unless the old layout already split that axis.
                if isinstance(extent, int) and extent == 1 and old.index_of(letter) == -1:
                    factor = 1
                else:
                    factor = src.factor_of(primal)
            parts.append(f"{factor}{letter}")
        else:
            parts.append(letter)
    return layout("".join(parts))


def isomorphic(lhs: Layout, rhs: Layout) -> bool:
    """Whether the layouts differ only in the names of their axes (and split alike)."""
    if len(lhs) != len(rhs):
        return False
    to: dict[str, str] = {}
    back: dict[str, str] = {}
    for (a, fa), (b, fb) in zip(lhs.axes, rhs.axes):
        if (fa is None) != (fb is None):
            return False
        if to.setdefault(a, b) != b or back.setdefault(b, a) != a:
            return False
        if fa is not None and lhs.factor_of(a) != rhs.factor_of(b):
            return False
    return True


@lru_cache(maxsize=4096)
def try_transform_like(old: Layout, ref_old: Layout, ref_new: Layout) -> Layout | None:
    """``old`` changed the way ``ref_old`` became ``ref_new``; None when that is not possible.

    ``old`` and ``ref_old`` describe two broadcasting tensors: the one of
    fewer axes must match the trailing axes of the other up to renaming, and
    the leading axes of the larger must be other axes.  So ``W`` (against
    ``NC``, which became ``NC1c``) becomes ``NW1w``.  Layouts are immutable, so
    answers are cached: a network asks the same question at every residual add.
    """
    large, small = (ref_old, old) if len(ref_old) > len(old) else (old, ref_old)
    tail = large.sublayout(len(large) - len(small), len(small))
    rest = large.sublayout(0, len(large) - len(small))
    for letter, _ in rest.axes:
        if tail.index_of(letter.upper()) != -1 or tail.index_of(letter.lower()) != -1:
            return None
    if not isomorphic(tail, small):
        return None
    if len(old) == 0:
        return old
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for j, i in zip(range(len(old) - 1, -1, -1), range(len(ref_old) - 1, -1, -1)):
        name = old.axes[j][0].upper()
        mapping[ref_old.axes[i][0].upper()] = name
        used.add(name)
    for i in range(len(ref_old) - 1, -1, -1):
        ref = ref_old.axes[i][0].upper()
        if ref not in mapping:
            choice = ref if ref not in used else next(
                c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
            mapping[ref] = choice
            used.add(choice)
    out = []
    for ch in ref_new.name:
        if ch.isalpha():
            renamed = mapping.get(ch.upper())
            if renamed is None:
                return None  # ref_new has an axis ref_old lacks: no renaming explains it
            out.append(renamed if ch.isupper() else renamed.lower())
        else:
            out.append(ch)
    try:
        return layout("".join(out))
    except LayoutError:
        return None
