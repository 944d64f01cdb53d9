"""What the operator constructors share: Relay's Python-side argument conventions.

Relay's constructors (``relay.nn.conv2d(x, w, strides=2)``) accept ints where
tuples are meant, lists where tuples are stored, and a ``Constant`` where a
static shape is meant; they normalise these before building the call, so the
attributes a pass reads are always in one canonical form.  Values that are
merely wrong (an axis out of range) are left for the type relation to report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any as _AnyT

import numpy as np

from ..errors import AttrsError
from ..ir.expr import Call, Constant, Expr
from ..ir.op import make_call
from ..ir.types import IntImm


def expr_arg(value: _AnyT, op_name: str, what: str) -> Expr:
    """``value`` if it is an expression; Relay wants numbers wrapped with ``relay.const``."""
    if isinstance(value, Expr):
        return value
    raise AttrsError(
        f"{op_name}: {what} must be a relay expression, got {type(value).__name__} {value!r}; "
        "wrap constants with relay.const"
    )


def call(op_name: str, args: Sequence[_AnyT], **attrs: _AnyT) -> Call:
    """Build a call after checking that every argument is an expression."""
    for i, a in enumerate(args):
        if not isinstance(a, Expr):
            expr_arg(a, op_name, f"argument {i}")
    return make_call(op_name, args, **attrs)


def repeat_int(value: _AnyT, n: int) -> _AnyT:
    """Relay's ``(v,) * n`` for a bare int, the value unchanged otherwise."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    return value


def pad_tuple2d(padding: _AnyT, op_name: str) -> tuple[int, ...]:
    """Relay's ``get_pad_tuple2d``: 1, 2 or 4 values to (top, left, bottom, right)."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        return (int(padding),) * 4
    if isinstance(padding, (list, tuple)):
        if len(padding) == 1:
            return (padding[0],) * 4
        if len(padding) == 2:
            return (padding[0], padding[1], padding[0], padding[1])
        if len(padding) == 4:
            return tuple(padding)
    raise AttrsError(f"{op_name}: padding must be an int or have 1, 2 or 4 values, got {padding!r}")


def static_shape(
    value: _AnyT, op_name: str, what: str = "shape", keep_int64: bool = False
) -> tuple[int, ...]:
    """A shape given as ints, a list, or a Constant holding one (as Relay accepts).

    ``keep_int64``: numpy int64 values (a constant's) become int64 dims, for
    the constructors that hand them to TVM's ``Array<Integer>`` unconverted
    (``broadcast_to``); the types built from them say so (argmax's result
    dtype is the dtype of its input's dims).
    """
    to_dim = _dim if keep_int64 else int
    if isinstance(value, Constant):
        return tuple(to_dim(v) for v in value.array.reshape(-1))
    if isinstance(value, Expr):
        raise AttrsError(
            f"{op_name}: {what} must be static (ints or a constant); dynamic shapes given as "
            f"expressions are not supported"
        )
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (list, tuple, np.ndarray)):
        out = []
        for v in value:
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                out.append(to_dim(v))
            else:
                raise AttrsError(f"{op_name}: {what} must hold integers, got {value!r}")
        return tuple(out)
    raise AttrsError(f"{op_name}: {what} must be an int or a sequence of ints, got {value!r}")


def _dim(value: int | np.integer) -> int:
    """An int, or an int64 :class:`IntImm` for a numpy int64."""
    if isinstance(value, np.int64):
        return IntImm("int64", int(value))
    return int(value)


def axis_list(axis: _AnyT) -> _AnyT:
    """Relay's reduce convention: None stays None, an int becomes a one-element list."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return (int(axis),)
    return axis
