"""What the 1-, 2- and 3-D operator families share: spatial axes, windows, constructors.

Relay's convolutions, pools and upsamplings come in ranks that differ only in
how many spatial axes they cover (W; H and W; D, H and W), so one
implementation serves all three: a layout names where the spatial axes are,
a window slides along them with a stride and a dilation, and each rank's
constructor (``relay.nn.conv1d``, ``conv2d``, ``conv3d``) is made from one
builder with Relay's parameter list for that rank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from inspect import Parameter, Signature
from typing import Any as _AnyT

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...ir.expr import Call
from ..layout import Layout
from ..relations import fail

#: The spatial axes of a layout of each rank, outermost first, as Relay names them.
SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def axes_phrase(letters: str) -> str:
    """``"H and W axes"``, ``"D, H and W axes"``, ``"W axis"``: for messages."""
    if len(letters) == 1:
        return f"{letters} axis"
    return ", ".join(letters[:-1]) + f" and {letters[-1]} axes"


def spatial_axes(layout_name: str, rank: int, op_name: str, nd: int) -> tuple[int, ...]:
    """Where the ``nd`` spatial axes are in ``layout_name``, checked against the data's rank.

    Any layout with the spatial axes primal and unsplit will do (NCHW, NHWC,
    NCHW16c for 2-D), the other axes are carried along, as Relay's pooling
    and upsampling relations allow.
    """
    layout = Layout(layout_name, op_name, "layout")
    letters = SPATIAL[nd]
    positions = tuple(layout.index(a) for a in letters)
    if min(positions) < 0 or any(layout.factor(a) for a in letters):
        raise fail(op_name, f"layout {layout_name!r} must have unsplit {axes_phrase(letters)}")
    if len(layout) != rank:
        raise fail(op_name, f"data of rank {rank} does not match layout {layout_name!r}")
    return positions


def windows(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int],
            dilation: Sequence[int]) -> np.ndarray:
    """A view of every window of ``x``'s last ``len(kernel)`` axes: shape (..., *outputs,
    *kernel), where output ``o`` of an axis starts at ``o * stride`` and takes every
    ``dilation``-th element.  No data is copied."""
    nd = len(kernel)
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(x, extents, axis=tuple(range(x.ndim - nd, x.ndim)))
    return view[(..., *(slice(None, None, s) for s in strides),
                 *(slice(None, None, d) for d in dilation))]


def rank_constructor(name: str, params: Sequence[tuple[str, _AnyT]], build: Callable[..., Call],
                     doc: str) -> Callable[..., Call]:
    """A constructor ``name`` taking Relay's parameters ``params`` ((name, default) in
    Relay's order; ``Parameter.empty`` for a required one), positionally or by keyword,
    that calls ``build`` with every parameter by name.

    The parameter lists of the 1-, 2- and 3-D constructors differ only in their
    defaults, so they are data here rather than three copies of one function.
    """
    signature = Signature([Parameter(p, Parameter.POSITIONAL_OR_KEYWORD, default=d)
                           for p, d in params])

    def construct(*args: _AnyT, **kwargs: _AnyT) -> Call:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return build(**bound.arguments)

    construct.__name__ = construct.__qualname__ = name
    construct.__module__ = build.__module__
    construct.__doc__ = doc
    construct.__signature__ = signature  # type: ignore[attr-defined]
    return construct
