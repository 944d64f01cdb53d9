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
from ..ir.expr import Call, Constant, Expr, Tuple
from ..ir.op import make_call
from ..ir.types import IntImm
from .relations import expand_padding, padding_forms
from .tuple_wrapper import TupleWrapper


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


def dynamic_arg(value: _AnyT) -> bool:
    """Whether a shape-like argument is known only at run time: an expression that is not a
    Constant.  Relay's constructors then build the operator's ``dyn.*`` twin."""
    return isinstance(value, Expr) and not isinstance(value, Constant)


def repeat_int(value: _AnyT, n: int) -> _AnyT:
    """Relay's ``(v,) * n`` for a bare int, the value unchanged otherwise."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    return value


def pad_tuple(padding: _AnyT, ndim: int, op_name: str) -> tuple[int, ...]:
    """Relay's ``get_pad_tuple1d/2d/3d``: an int, or 1, ``ndim`` or ``2 * ndim`` values, to
    (befores..., afters...): (top, left, bottom, right) in 2-D."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        padding = (int(padding),)
    pads = expand_padding(padding, ndim) if isinstance(padding, (list, tuple)) else None
    if pads is None:
        raise AttrsError(f"{op_name}: padding must be an int or have {padding_forms(ndim)} "
                         f"values, got {padding!r}")
    return pads


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


def tuple_arg(data: _AnyT) -> Expr:
    """The tuple argument of concatenate, stack, einsum...: a tuple expression, a
    TupleWrapper, or a list of expressions made into a Tuple."""
    if isinstance(data, TupleWrapper):
        return data.astuple()
    if isinstance(data, Expr):
        return data
    return Tuple(list(data))
