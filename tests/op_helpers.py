"""What the operator tests share: calling an operator's relation and kernel directly.

Imported by the tests as ``from op_helpers import ...`` (pytest puts this
folder on ``sys.path`` for the test files in it).
"""

from __future__ import annotations

import numpy as np

from relaypass.ir import Any, TensorType, TupleType
from relaypass.op import TupleWrapper


def T(shape, dtype="float32"):
    return TensorType(shape, dtype)


def relation(call, *types):
    """The type ``call``'s operator relation gives for arguments of ``types``."""
    call = call.astuple() if isinstance(call, TupleWrapper) else call
    return call.op.get_attr("FTypeRelation")(list(types), call.attrs)


def type_of(value):
    """The type of a kernel value: a tensor type for an array, a tuple type for a tuple."""
    if isinstance(value, tuple):
        return TupleType([type_of(v) for v in value])
    return TensorType(value.shape, str(value.dtype))


def assert_has_type(value, ty):
    """``value`` has type ``ty``; a dimension the relation leaves unknown (``?``) fits any size."""
    if isinstance(ty, TupleType):
        assert isinstance(value, tuple) and len(value) == len(ty.fields)
        for v, t in zip(value, ty.fields):
            assert_has_type(v, t)
    else:
        assert isinstance(value, np.ndarray), type(value)
        assert str(value.dtype) == ty.dtype, (value.dtype, ty)
        assert len(value.shape) == ty.ndim, (value.shape, ty)
        assert all(isinstance(d, Any) or d == n for d, n in zip(ty.shape, value.shape)), ty


def evaluate(call, *values):
    """The kernel's result, after checking it has exactly the type the relation promises."""
    call = call.astuple() if isinstance(call, TupleWrapper) else call
    ty = relation(call, *map(type_of, values))
    out = call.op.get_attr("FKernel")(list(values), call.attrs)
    assert_has_type(out, ty)
    return out


def assert_text_round_trip(expr):
    """``expr``, typed as a module's main function, prints, parses back equal and reprints
    the same text; returns that text."""
    from relaypass import relay
    from relaypass.ir import IRModule, assert_structural_equal

    func = relay.Function(relay.analysis.free_vars(expr), expr)
    mod = relay.transform.InferType()(IRModule.from_expr(func))
    text = mod.astext()
    back = relay.parse(text)
    assert_structural_equal(back, mod)
    assert back.astext() == text
    return text
