"""Data type names as Relay spells them, and every alias Relay accepts.

TVM parses a dtype string into (code, bits, lanes) and prints it back, so the
spellings that mean the same type become one: ``"float"`` is ``float32``,
``"int"`` is ``int32``, ``"uint"`` is ``uint32``, ``"bfloat"`` is
``bfloat16``, and ``"uint1"`` -- one unsigned bit -- is ``bool``.  A vector
of one lane is its element type (``"int8x1"`` is ``int8``).  numpy dtypes
and scalar types give their names.  :func:`canonical_dtype` does that
normalization once, where a type or an attribute is built, so that every
comparison afterwards is a string comparison.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import RelayPassError

__all__ = ["DTYPE_NAMES", "UnsupportedDtypeError", "canonical_dtype", "numpy_dtype"]


class UnsupportedDtypeError(RelayPassError, TypeError):
    """A Relay dtype numpy cannot hold here: bfloat16 without the ml_dtypes package.

    Such dtypes type-check like any other; only computing with their data
    (the interpreter, constant folding) needs an array type for them.
    """

_PREFIXES = ("e4m3_float", "e5m2_float", "bfloat", "float", "uint", "int")
_DEFAULT_BITS = {"int": 32, "uint": 32, "float": 32, "bfloat": 16, "e4m3_float": 8, "e5m2_float": 8}
_SHAPE = re.compile(r"^(e4m3_float|e5m2_float|bfloat|float|uint|int|handle)(\d*)(?:x(\d+))?$")

DTYPE_NAMES: dict[Any, str] = {"": "", "void": "void", "bool": "bool", "handle": "handle"}
"""Every spelling seen so far, and its canonical name: the hot path is one lookup
(``DTYPE_NAMES.get(d) or canonical_dtype(d)``; ``""`` maps to itself, falsy)."""


def canonical_dtype(dtype: Any) -> str:
    """The canonical name of ``dtype``: ``"float"`` -> ``"float32"``, ``"uint1"`` -> ``"bool"``.

    Accepts a dtype string (``""`` stays ``""``: "no dtype", as an empty
    ``out_dtype`` attribute), a numpy dtype or a numpy scalar type, or an
    object whose ``dtype`` is such a string (a tensor type).  Raises
    ValueError for a string that names no data type.
    """
    try:
        known = DTYPE_NAMES.get(dtype)
    except TypeError:  # an unhashable value: not a dtype
        known = None
    if known is not None:
        return known
    if not isinstance(dtype, str) and isinstance(getattr(dtype, "dtype", None), str):
        # What numpy 1.x accepted and Relay's tests rely on: an object whose ``dtype``
        # names one, such as a TensorType (``relay.const(0, relay.scalar_type("int32"))``).
        return canonical_dtype(dtype.dtype)
    name = _parse(dtype)
    try:
        DTYPE_NAMES[dtype] = name
    except TypeError:
        pass
    return name


def _parse(dtype: Any) -> str:
    if not isinstance(dtype, str):
        try:
            import numpy as np

            dtype = np.dtype(dtype).name
        except TypeError:
            raise ValueError(f"not a data type: {dtype!r}") from None
        dtype = {"bool_": "bool"}.get(dtype, dtype)
    m = _SHAPE.match(dtype)
    if m is None:
        if dtype in DTYPE_NAMES:
            return DTYPE_NAMES[dtype]
        raise ValueError(
            f"do not know how to handle data type {dtype!r} (Relay's are bool, int8..int64, "
            "uint8..uint64, float16..float64, bfloat16, with aliases int, uint, float)"
        )
    head, bits_text, lanes_text = m.groups()
    if head == "handle":
        bits = 64
    else:
        bits = int(bits_text) if bits_text else _DEFAULT_BITS[head]
    lanes = int(lanes_text) if lanes_text else 1
    if head == "uint" and bits == 1 and lanes == 1:
        return "bool"
    name = head if head == "handle" else f"{head}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


def numpy_dtype(dtype: str) -> Any:
    """The numpy dtype that holds data of the Relay dtype ``dtype``.

    numpy has no bfloat16; ml_dtypes provides one, used when it is installed
    (relaypass does not depend on it).  Without it, bfloat16 data raises
    :class:`UnsupportedDtypeError`.
    """
    import numpy as np

    name = canonical_dtype(dtype)
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise UnsupportedDtypeError(
                "bfloat16 data needs the ml_dtypes package (numpy has no bfloat16); "
                "bfloat16 types and casts type-check without it"
            ) from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)
