"""``relay.var`` and ``relay.const``: the shorthands Relay users build programs with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .dtype import numpy_dtype
from .expr import Constant, Var
from .ndarray import NDArray
from .types import TensorType, Type


def var(
    name_hint: str,
    type_annotation: Type | str | None = None,
    shape: Sequence[object] | None = None,
    dtype: str = "float32",
) -> Var:
    """A new variable; ``shape``/``dtype`` build a tensor type annotation.

    As in Relay, a string ``type_annotation`` is a dtype of a scalar tensor.
    """
    if type_annotation is not None and shape is not None:
        raise ValueError("give either type_annotation or shape, not both")
    if shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation)


def const(value: object, dtype: str | None = None) -> Constant:
    """A constant tensor.

    Without ``dtype``, Relay's defaults apply: Python ints and int64 arrays
    become int32, Python floats and float64 arrays become float32.  An
    NDArray (``tvm.nd.array(...)``) keeps its own dtype, as in Relay, which
    then ignores ``dtype``.
    """
    if isinstance(value, Constant):
        return value
    if isinstance(value, NDArray):
        return Constant(value)
    if dtype is not None:
        # Relay's spellings: "float" is float32, "int" int32, "uint1" bool.
        return Constant(np.asarray(value, dtype=numpy_dtype(dtype)))
    arr = np.asarray(value)
    if isinstance(value, bool) or arr.dtype == np.bool_:
        arr = arr.astype("bool")
    elif arr.dtype == np.int64:
        arr = arr.astype("int32")
    elif arr.dtype == np.float64:
        arr = arr.astype("float32")
    return Constant(arr)
