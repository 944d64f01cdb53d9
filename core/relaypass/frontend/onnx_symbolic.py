"""Symbolic values of an ONNX model's shape computations, where some extents are size variables.

A model exported with dynamic axes computes the shapes it needs in the
graph: ``Shape`` of a ``(batch, sequence, 768)`` tensor, ``Gather`` of its
first two entries, a ``Concat`` with ``[12, 64]``, then ``Reshape``.  With
the axes as size variables, that target's *value* is not known at import
time, but its *entries* are: ``[batch, sequence, 12, 64]``.  Knowing them
lets the importer keep the graph static where it can (the ``Reshape``
becomes ``reshape(x, [0, 0, 12, 64])``, whose type still holds both size
variables) and fold what is fully known (the ``768`` of the third axis),
instead of falling back to an operator whose result shape is unknown.

A symbolic value is a numpy object array whose entries are Python numbers,
symbolic dimensions (:class:`~relaypass.ir.types.SizeVar` and the
expressions of :mod:`relaypass.ir.shape_expr`), or None for an entry nobody
can know (it came from ``Any``, or from arithmetic the dimension algebra
has no exact form for).  Only small tensors are tracked: shape vectors and
the scalars taken from them.

Two kinds of operators are evaluated on such arrays: operators that only
move elements (``take``, ``strided_slice``, ``concatenate``, ``reshape``...),
by running their own kernel on an array of element *positions* and picking
the entries it selects, so no slicing rule is written twice (those that
keep the entries in order, ``reshape``, ``expand_dims``, ``squeeze`` and
joining along the first axis, only reshape them to the shape their type
relation computed); and integer
arithmetic and comparisons, entry by entry, with the dimension algebra's
operators.  Everything else is evaluated only when every argument is fully
known, by its kernel, as the importer folds static values.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.types import Any, IntImm, SizeVar, SymbolicDim, TensorType

__all__ = ["SYMBOLIC_LIMIT", "concrete", "dims_of", "entry", "evaluate", "from_array", "is_number",
           "numeric", "same_dim", "tracks"]

SYMBOLIC_LIMIT = 64
"""Tensors with more elements than this have no symbolic value (shape vectors are short)."""

_MOVES = frozenset({"take", "strided_slice", "concatenate", "reshape", "expand_dims", "squeeze",
                    "transpose", "reverse", "broadcast_to", "tile", "stack", "copy"})
"""Operators whose result elements are elements of their first argument (or of its fields)."""

_KEEPS_ORDER = frozenset({"reshape", "expand_dims", "squeeze", "copy"})
"""Moves whose result holds every element of their argument in the same order: only the shape
changes, and that the type relation has computed."""

_ARITH: dict[str, Callable[..., object]] = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "floor_divide": operator.floordiv, "floor_mod": operator.mod, "negative": operator.neg,
}


def _divide(a: object, b: object) -> object:
    """Integer ``divide`` truncates; on extents (never negative) that is floor division, which is
    the only division the dimension algebra has, so a symbolic dividend needs a positive divisor."""
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    if not (isinstance(b, int) and b > 0):
        return None
    return a // b  # type: ignore[operator]


def _minmax(pick: Callable[[int, int], int]) -> Callable[[object, object], object]:
    def fn(a: object, b: object) -> object:
        if isinstance(a, int) and isinstance(b, int):
            return pick(a, b)
        return a if same_dim(a, b) else None
    return fn


def _compare(equal: bool) -> Callable[[object, object], object]:
    def fn(a: object, b: object) -> object:
        if is_number(a) and is_number(b):
            return (a == b) == equal
        if same_dim(a, b):
            return equal
        if _negative(a) and type(b) is SizeVar or _negative(b) and type(a) is SizeVar:
            return not equal  # an extent is never negative (torch's -1 test of expand's sizes)
        return None
    return fn


def _negative(e: object) -> bool:
    return is_number(e) and e < 0  # type: ignore[operator]


_ARITH.update({"divide": _divide, "trunc_divide": _divide, "minimum": _minmax(min),
               "maximum": _minmax(max), "equal": _compare(True), "not_equal": _compare(False)})


def dims_of(ty: TensorType) -> np.ndarray:
    """A tensor type's shape as a symbolic value (``Any`` extents unknown)."""
    out = np.empty(len(ty.shape), dtype=object)
    out[:] = [entry(d) for d in ty.shape]
    return out


def entry(d: object) -> object:
    """A dimension or a number as an entry: an int, a symbolic dimension, or None."""
    t = type(d)
    if t is int or t is SizeVar:  # the common cases first: numbers, and a shape's variables
        return d
    if d is None or t is Any:
        return None
    if isinstance(d, SymbolicDim):
        return d
    if isinstance(d, (bool, np.bool_)):
        return bool(d)
    if isinstance(d, (int, np.integer)):
        return int(d)
    if isinstance(d, (float, np.floating)):
        return float(d)
    return None


def is_number(e: object) -> bool:
    """Whether an entry is an integer (not a symbolic dimension, not unknown, not a bool)."""
    return isinstance(e, int) and not isinstance(e, bool)


def same_dim(a: object, b: object) -> bool:
    """Whether two entries are provably the same extent (equal numbers, or the same symbolic
    dimension in the algebra's canonical form)."""
    if a is None or b is None:
        return False
    if isinstance(a, SymbolicDim) != isinstance(b, SymbolicDim):
        return False
    return bool(a == b)


def concrete(value: np.ndarray) -> bool:
    """Whether every entry of a symbolic value is a number."""
    for v in value.flat:
        if v is None or isinstance(v, SymbolicDim):
            return False
    return True


def tracks(ty: object) -> bool:
    """Whether values of type ``ty`` get a symbolic value: small tensors of a static shape.

    Counted with ints (the importer asks this of every shape computation)."""
    if not isinstance(ty, TensorType):
        return False
    size = 1
    for d in ty.shape:
        if type(d) is not IntImm:
            return False
        size *= d
    return size <= SYMBOLIC_LIMIT


def numeric(value: np.ndarray, dtype: str) -> np.ndarray:
    """A concrete symbolic value as a numpy array of ``dtype`` (OverflowError if it cannot be)."""
    return np.array(value.tolist(), dtype=dtype).reshape(value.shape)


def from_array(array: np.ndarray) -> np.ndarray:
    """A numpy array as a symbolic value (entries become Python numbers)."""
    kind = array.dtype.kind
    if kind in "biu" or kind == "f" and array.itemsize <= 8:
        # numpy gives Python bools, ints and floats for these, which are their own entries
        return array.astype(object)
    out = np.empty(array.size, dtype=object)
    out[:] = [entry(v) for v in array.reshape(-1).tolist()]
    return out.reshape(array.shape)


def evaluate(op_name: str, kernel: Callable | None, args: Sequence, arg_dtypes: Sequence,
             attrs: Attrs, out_dtype: str, out_shape: tuple[int, ...] | None = None
             ) -> np.ndarray | None:
    """The symbolic value of a call of ``op_name`` on symbolic values ``args``, or None.

    ``args`` are object arrays (or tuples of them, for a tuple argument);
    ``arg_dtypes`` their dtypes (tuples for tuples), for running the
    operator's numpy ``kernel`` when everything is known.  ``out_shape`` is
    the call's static shape, as its type relation gives it, when known.
    """
    for a in args:
        if not _is_concrete(a):
            break
    else:
        return _run_numeric(kernel, args, arg_dtypes, attrs)
    if op_name in _MOVES:
        if out_shape is not None and kernel is not None:
            kept = _kept_order(op_name, args, attrs, out_shape)
            if kept is not None:
                return kept
        return _move(kernel, args, arg_dtypes, attrs)
    if np.dtype(out_dtype).kind not in "iub":
        return None
    if op_name == "cast":
        return args[0] if np.dtype(out_dtype).kind in "iu" else None
    if op_name == "where":
        cond, x, y = args
        if not _is_concrete(cond):
            return None
        c, x, y = np.broadcast_arrays(cond, x, y)
        return np.where(c.astype(bool), x, y).astype(object)
    fn = _ARITH.get(op_name)
    if fn is None:
        return None
    return _elementwise(fn, args)


def _kept_order(op_name: str, args: Sequence, attrs: Attrs,
                out_shape: tuple[int, ...]) -> np.ndarray | None:
    """The result of a move that keeps the order of the entries, in the shape its type
    relation computed: what running the kernel on positions would pick, without running it.
    Such are the moves of :data:`_KEEPS_ORDER`, and concatenating along the first axis (the
    fields' entries laid end to end); None for any other move."""
    first = args[0]
    if op_name in _KEEPS_ORDER:
        flat = first if type(first) is np.ndarray else None
    elif op_name == "concatenate" and type(first) is tuple and first and attrs.axis in (
            0, -first[0].ndim):
        flat = np.concatenate([f.reshape(-1) for f in first])
    else:
        return None
    if flat is None or flat.size != math.prod(out_shape):
        return None
    return flat.reshape(out_shape)


def _is_concrete(arg: object) -> bool:
    if type(arg) is tuple:
        return all(_is_concrete(a) for a in arg)
    return concrete(arg)  # type: ignore[arg-type]


def _run_numeric(kernel: Callable | None, args: Sequence, arg_dtypes: Sequence,
                 attrs: Attrs) -> np.ndarray | None:
    if kernel is None:
        return None
    try:
        values = [tuple(numeric(f, d) for f, d in zip(a, dt)) if isinstance(a, tuple)
                  else numeric(a, dt) for a, dt in zip(args, arg_dtypes)]
        out = kernel(values, attrs)
    except (ValueError, TypeError, IndexError, ArithmeticError):
        # The numbers do not fit the dtype, or the kernel refuses them: evaluating the model
        # reports that where it happens; the importer keeps the computation.
        return None
    if not isinstance(out, np.ndarray) and not np.isscalar(out):
        return None
    return from_array(np.asarray(out))


def _move(kernel: Callable | None, args: Sequence, arg_dtypes: Sequence,
          attrs: Attrs) -> np.ndarray | None:
    """Run a data-movement kernel on element positions, then pick the entries it selected."""
    if kernel is None or not all(_is_concrete(a) for a in args[1:]):
        return None
    # The positions of the first argument's elements in ``table``, its entries laid end to end
    # (the fields' one after another, for a tuple).
    first = args[0]
    if isinstance(first, tuple):
        table = np.concatenate([f.reshape(-1) for f in first]) if first else np.empty(0, object)
        starts = np.cumsum([0] + [f.size for f in first])
        moved: object = tuple(np.arange(start, start + f.size, dtype=np.int64).reshape(f.shape)
                              for start, f in zip(starts.tolist(), first))
    else:
        table = first.reshape(-1)
        moved = np.arange(first.size, dtype=np.int64).reshape(first.shape)
    try:
        rest = [numeric(a, d) for a, d in zip(args[1:], arg_dtypes[1:])]
        out = kernel([moved, *rest], attrs)
    except (ValueError, TypeError, IndexError, ArithmeticError):
        return None
    if not isinstance(out, (np.ndarray, np.generic)):
        return None
    picked = np.asarray(out, dtype=np.int64)
    return table[picked.reshape(-1)].reshape(picked.shape)


def _elementwise(fn: Callable[..., object], args: Sequence) -> np.ndarray | None:
    try:
        arrays = np.broadcast_arrays(*args)
    except ValueError:
        return None
    out = np.empty(arrays[0].shape, dtype=object)
    for idx in np.ndindex(out.shape):
        vals = [a[idx] for a in arrays]
        if any(v is None for v in vals):
            out[idx] = None
            continue
        try:
            out[idx] = entry(fn(*vals))
        except (TypeError, ArithmeticError):  # SymbolicDimError is a TypeError
            out[idx] = None
    return out
