"""The ONNX operator converters: one class per ONNX operator, one method per opset change.

As in Relay's importer, a converter class defines ``_impl_vN`` class methods
and the model's opset picks the newest ``N`` not above it, so an opset-6
``Add`` reads its legacy ``broadcast``/``axis`` attributes while an opset-13
``Softmax`` no longer flattens its input.  A method receives the node's
inputs (Relay expressions; None for an omitted optional input), its
attributes (Python values: ints, floats, strings, lists, numpy arrays for
tensors) and the :class:`~relaypass.frontend.onnx_context.ConversionContext`,
and returns an expression, a list of them (one per output) or a TupleWrapper.

Everything is built from the standard operator set with Relay's names and
attributes.  Where ONNX has an operator the set lacks, the converter
composes it (Elu, Selu, InstanceNormalization, Gelu, ...); where ONNX's
operator is more general than the set's, the converter composes it from
the set's operators.  Forms that cannot be expressed
(a training-mode BatchNormalization, a wrap-mode Pad, ...) raise
UnsupportedOperatorError.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np

from .. import op as _op
from ..ir.expr import Constant, Expr
from ..ir.types import Any
from ..op import dynamic as _dyn
from ..op import nn as _nn
from . import onnx_symbolic
from .onnx_context import ConversionContext, is_static_dim

__all__ = ["CONVERTERS", "OnnxOpConverter", "converter_for", "onnx_dtype"]

Inputs = Sequence["Expr | None"]
Attrs = dict
Ctx = ConversionContext

_IMPL = re.compile(r"_impl_v(\d+)")

CONVERTERS: dict[str, type[OnnxOpConverter]] = {}
"""ONNX operator name (default domain) -> its converter class."""


class OnnxOpConverter:
    """Base of the converters; a subclass defines ``_impl_vN`` class methods."""

    versions: ClassVar[tuple[int, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        found = {int(m.group(1)) for name in dir(cls) if (m := _IMPL.fullmatch(name))}
        cls.versions = tuple(sorted(found))

    @classmethod
    def get_converter(cls, opset: int) -> Callable | None:
        """The ``_impl_vN`` with the largest ``N <= opset``, or None if the operator is newer."""
        best = None
        for v in cls.versions:
            if v <= opset:
                best = v
        return None if best is None else getattr(cls, f"_impl_v{best}")


def _register(*names: str) -> Callable[[type[OnnxOpConverter]], type[OnnxOpConverter]]:
    def deco(cls: type[OnnxOpConverter]) -> type[OnnxOpConverter]:
        for name in names or (cls.__name__,):
            CONVERTERS[name] = cls
        return cls

    return deco


def converter_for(op_type: str, opset: int) -> Callable | None:
    """The conversion function for ``op_type`` at ``opset``, or None when unsupported."""
    cls = CONVERTERS.get(op_type)
    return None if cls is None else cls.get_converter(opset)


# --- small helpers --------------------------------------------------------------------------------


def _opt(inputs: Inputs, i: int) -> Expr | None:
    return inputs[i] if i < len(inputs) else None


def _need(inputs: Inputs, i: int, ctx: Ctx, what: str) -> Expr:
    x = _opt(inputs, i)
    if x is None:
        raise ctx.error(f"the required input {i} ({what}) is missing")
    return x


def _attr(attrs: Attrs, name: str, ctx: Ctx):
    if name not in attrs:
        raise ctx.error(f"the required attribute {name!r} is missing")
    return attrs[name]


def _axis(axis: int, rank: int, ctx: Ctx, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise ctx.error(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis + rank if axis < 0 else axis


def _axes(axes: Sequence[int], rank: int, ctx: Ctx, what: str = "axes") -> list[int]:
    out = [_axis(int(a), rank, ctx, what) for a in axes]
    if len(set(out)) != len(out):
        raise ctx.error(f"{what} {list(axes)} repeat an axis")
    return out


_static = is_static_dim

_TO_END = 2**63 - 1
"""A slice end past every extent (ONNX's and numpy's "to the end")."""


def _prod(dims: Sequence) -> int | None:
    """The product of extents, or None when one of them is unknown."""
    total = 1
    for d in dims:
        if not _static(d):
            return None
        total *= d
    return total


def _reshape_codes(in_shape: Sequence, entries: Sequence, allowzero: bool) -> list[int] | None:
    """A static ``newshape`` for a target known entry by entry (numbers, size variables, None).

    An entry that is the input's extent at the same position becomes Relay's 0
    (copy it), so ``[batch, sequence, 12, 64]`` for a ``(batch, sequence, 768)``
    input is ``[0, 0, 12, 64]`` and the result's type keeps both variables; one
    other unknown entry becomes -1 (inferred from the size).  None when more
    than one entry stays unknown, or one does beside a -1 of the target.
    """
    codes: list[int] = []
    infer = False
    for i, e in enumerate(entries):
        if onnx_symbolic.is_number(e):
            v = int(e)  # type: ignore[call-overload]
            if v == -1:
                if infer:
                    return None
                infer = True
            codes.append(v)
        elif (not allowzero and i < len(in_shape)
              and onnx_symbolic.same_dim(e, onnx_symbolic.entry(in_shape[i]))):
            codes.append(0)
        elif infer:
            return None
        else:
            infer = True
            codes.append(-1)
    return codes


def _reshape_from_source(x: Expr, entries: list, target: Expr, ctx: Ctx) -> Expr | None:
    """A static reshape to a target whose symbolic extents are a run of another tensor's.

    GPT-2 reshapes its ``(batch*sequence, 96)`` projection to ``[batch,
    sequence, 96]``, read from the block's input: no 0/-1 code copies two
    extents out of one, but ``reshape_like`` takes them from that input's
    type.  The data is first reshaped so that one axis stands where the run
    goes (a no-op when it already does); None when the target has no such
    run in a tensor it was computed from.
    """
    unknown = [i for i, e in enumerate(entries) if not onnx_symbolic.is_number(e)]
    j0, j1 = unknown[0], unknown[-1] + 1
    run = entries[j0:j1]
    rest = entries[:j0] + entries[j1:]
    if any(e is None for e in run) or any(int(e) <= 0 for e in rest):
        return None
    for src in ctx.shape_sources(target):
        dims = [onnx_symbolic.entry(d) for d in ctx.shape(src)]
        for rb in range(len(dims) - len(run) + 1):
            if not all(onnx_symbolic.same_dim(a, b) for a, b in zip(run, dims[rb:rb + len(run)])):
                continue
            merged = [*rest[:j0], -1, *rest[j0:]]
            have = [onnx_symbolic.entry(d) for d in ctx.shape(x)]
            if not (len(have) == len(merged) and have[:j0] == rest[:j0]
                    and have[j0 + 1:] == rest[j0:]):
                x = _op.reshape(x, merged)
            return _op.reshape_like(x, src, lhs_begin=j0, lhs_end=j0 + 1, rhs_begin=rb,
                                    rhs_end=rb + len(run))
    return None


def _reshape_to(x: Expr, dims: Sequence, ctx: Ctx, what: str) -> Expr:
    """Reshape to ``dims`` (ints, size variables, Any): extents the input has at the same
    position are copied (0), at most one other unknown extent is inferred (-1)."""
    codes = _reshape_codes(ctx.shape(x), [onnx_symbolic.entry(d) for d in dims], False)
    if codes is None:
        raise ctx.error(f"{what} needs at most one unknown extent, got shape "
                        f"({', '.join(map(str, dims))}); give the input shapes to from_onnx")
    return _op.reshape(x, codes)


def _flatten_axis(attrs: Attrs, rank: int, ctx: Ctx) -> int:
    """ONNX's flattening ``axis`` (default 1) as 0..rank: the axes before it become the rows."""
    axis = attrs.get("axis", 1)
    if not -rank <= axis <= rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _flatten_2d(x: Expr, shape: Sequence, axis: int, ctx: Ctx) -> Expr:
    """``x`` as a matrix: the axes before ``axis`` form the rows, the others the columns."""
    rows, cols = _prod(shape[:axis]), _prod(shape[axis:])
    if rows is None and cols is None:
        raise ctx.error(f"flattening a shape of {tuple(shape)} to 2-D around axis {axis} "
                        f"needs static extents on one side")
    return _op.reshape(x, [-1 if rows is None else rows, -1 if cols is None else cols])


def _dtype_limits(dtype: str) -> tuple[float, float]:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return float("-inf"), float("inf")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return float(info.min), float(info.max)
    return 0.0, 1.0


# --- elementwise: unary ---------------------------------------------------------------------------


def _unary(name: str, build: Callable[[Expr, Attrs, Ctx], Expr], since: int = 1) -> None:
    def impl(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return build(_need(inputs, 0, ctx, "X"), attrs, ctx)

    cls = type(name, (OnnxOpConverter,), {f"_impl_v{since}": classmethod(impl),
                                          "__doc__": f"ONNX {name}, from opset {since}."})
    CONVERTERS[name] = cls


for _name, _fn in (("Relu", _nn.relu), ("Sigmoid", _op.sigmoid), ("Tanh", _op.tanh),
                   ("Exp", _op.exp), ("Log", _op.log), ("Sqrt", _op.sqrt), ("Abs", _op.abs),
                   ("Neg", _op.negative), ("Floor", _op.floor), ("Ceil", _op.ceil),
                   ("Not", _op.logical_not)):
    _unary(_name, lambda x, attrs, ctx, fn=_fn: fn(x))
_unary("Erf", lambda x, attrs, ctx: _op.erf(x), since=9)
_unary("Sign", lambda x, attrs, ctx: _op.sign(x), since=9)
_unary("Round", lambda x, attrs, ctx: _op.round(x), since=11)
_unary("Identity", lambda x, attrs, ctx: x)
for _name, _fn, _since in (("Sin", _op.sin, 7), ("Cos", _op.cos, 7), ("Tan", _op.tan, 7),
                           ("Asin", _op.asin, 7), ("Acos", _op.acos, 7), ("Atan", _op.atan, 7),
                           ("Sinh", _op.sinh, 9), ("Cosh", _op.cosh, 9), ("Asinh", _op.asinh, 9),
                           ("Acosh", _op.acosh, 9), ("Atanh", _op.atanh, 9),
                           ("IsNaN", _op.isnan, 9), ("BitwiseNot", _op.bitwise_not, 18)):
    _unary(_name, lambda x, attrs, ctx, fn=_fn: fn(x), since=_since)


def _is_inf(x: Expr, attrs: Attrs, ctx: Ctx) -> Expr:
    """isinf, narrowed to one sign when detect_negative or detect_positive is 0."""
    negative, positive = attrs.get("detect_negative", 1), attrs.get("detect_positive", 1)
    inf = _op.isinf(x)
    if negative and positive:
        return inf
    if not negative and not positive:
        return _op.logical_and(inf, _op.logical_not(inf))
    side = _op.greater if positive else _op.less
    return _op.logical_and(inf, side(x, ctx.scalar(0, x)))


_unary("IsInf", _is_inf, since=10)
_unary("Reciprocal", lambda x, attrs, ctx: _op.divide(ctx.scalar(1, x), x))
_unary("LeakyRelu", lambda x, attrs, ctx: _nn.leaky_relu(x, attrs.get("alpha", 0.01)))
_unary("Softsign", lambda x, attrs, ctx: _op.divide(x, _op.add(ctx.scalar(1, x), _op.abs(x))))


def _softplus(x: Expr, ctx: Ctx) -> Expr:
    # log(1 + exp(x)) overflows for large x; max(x, 0) + log(1 + exp(-|x|)) does not.
    return _op.add(_nn.relu(x), _op.log(_op.add(ctx.scalar(1, x), _op.exp(_op.negative(_op.abs(x))))))


def _elu(x: Expr, alpha: float, ctx: Ctx) -> Expr:
    """alpha * (exp(x) - 1) for x < 0, x otherwise (exp of the negative part only)."""
    neg = _op.minimum(x, ctx.scalar(0, x))
    return _op.add(_nn.relu(x), _op.multiply(ctx.scalar(alpha, x),
                                             _op.subtract(_op.exp(neg), ctx.scalar(1, x))))


def _hard_sigmoid(x: Expr, alpha: float, beta: float, ctx: Ctx) -> Expr:
    return _op.clip(_op.add(_op.multiply(x, ctx.scalar(alpha, x)), ctx.scalar(beta, x)), 0.0, 1.0)


_unary("Softplus", lambda x, attrs, ctx: _softplus(x, ctx))
_unary("Elu", lambda x, attrs, ctx: _elu(x, attrs.get("alpha", 1.0), ctx))
_unary("Selu", lambda x, attrs, ctx: _op.multiply(
    ctx.scalar(attrs.get("gamma", 1.05070102214813232421875), x),
    _elu(x, attrs.get("alpha", 1.67326319217681884765625), ctx)))
_unary("Celu", lambda x, attrs, ctx: _op.add(
    _nn.relu(x), _op.minimum(ctx.scalar(0, x), _op.multiply(
        ctx.scalar(attrs.get("alpha", 1.0), x),
        _op.subtract(_op.exp(_op.divide(x, ctx.scalar(attrs.get("alpha", 1.0), x))),
                     ctx.scalar(1, x))))), since=12)
_unary("HardSigmoid", lambda x, attrs, ctx: _hard_sigmoid(
    x, attrs.get("alpha", 0.2), attrs.get("beta", 0.5), ctx))
_unary("HardSwish", lambda x, attrs, ctx: _op.multiply(x, _hard_sigmoid(x, 1 / 6, 0.5, ctx)),
       since=14)
_unary("ThresholdedRelu", lambda x, attrs, ctx: _op.where(
    _op.greater(x, ctx.scalar(attrs.get("alpha", 1.0), x)), x, ctx.scalar(0, x)), since=10)
_unary("Mish", lambda x, attrs, ctx: _op.multiply(x, _op.tanh(_softplus(x, ctx))), since=18)


@_register()
class Gelu(OnnxOpConverter):
    """x * Phi(x), exactly (with erf) or with the tanh approximation."""

    @classmethod
    def _impl_v20(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        half = _op.multiply(ctx.scalar(0.5, x), x)
        approximate = attrs.get("approximate", "none")
        if approximate == "none":
            inner = _op.erf(_op.multiply(x, ctx.scalar(1 / math.sqrt(2), x)))
        elif approximate == "tanh":
            cube = _op.multiply(ctx.scalar(0.044715, x), _op.multiply(x, _op.multiply(x, x)))
            inner = _op.tanh(_op.multiply(ctx.scalar(math.sqrt(2 / math.pi), x), _op.add(x, cube)))
        else:
            raise ctx.error(f"unknown approximate={approximate!r}; expected 'none' or 'tanh'")
        return _op.multiply(half, _op.add(ctx.scalar(1, x), inner))


@_register()
class Cast(OnnxOpConverter):
    """Cast; before opset 6 the target type was a name ("FLOAT"), since then an enum."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        to = _attr(attrs, "to", ctx)
        dtype = _legacy_type_name(to, ctx) if isinstance(to, str) else _onnx_dtype(to, ctx)
        return _op.cast(_need(inputs, 0, ctx, "input"), dtype)

    @classmethod
    def _impl_v6(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.cast(_need(inputs, 0, ctx, "input"), _onnx_dtype(_attr(attrs, "to", ctx), ctx))


@_register()
class CastLike(OnnxOpConverter):
    @classmethod
    def _impl_v15(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        return _op.cast(x, ctx.dtype(_need(inputs, 1, ctx, "target_type")))


_LEGACY_TYPES = {
    "FLOAT": "float32", "FLOAT16": "float16", "DOUBLE": "float64", "INT8": "int8",
    "INT16": "int16", "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16",
    "UINT32": "uint32", "UINT64": "uint64", "BOOL": "bool",
}


def _legacy_type_name(name: str, ctx: Ctx) -> str:
    dtype = _LEGACY_TYPES.get(name.upper())
    if dtype is None:
        raise ctx.unsupported(f"cannot cast to {name!r}")
    return dtype


_ONNX_DTYPES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
    9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
}
_ONNX_TYPE_NAMES = {
    0: "UNDEFINED", 8: "STRING", 14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16",
    17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ",
    21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
}


def onnx_dtype(code: int) -> str:
    """The Relay dtype of an ONNX ``TensorProto.DataType`` code; ValueError if there is none."""
    dtype = _ONNX_DTYPES.get(int(code))
    if dtype is None:
        name = _ONNX_TYPE_NAMES.get(int(code), f"code {code}")
        raise ValueError(f"the ONNX element type {name} has no Relay dtype")
    return dtype


def _onnx_dtype(code: int, ctx: Ctx) -> str:
    try:
        return onnx_dtype(code)
    except ValueError as exc:
        raise ctx.unsupported(str(exc)) from None


@_register()
class Clip(OnnxOpConverter):
    """Clip: bounds are attributes until opset 11, optional inputs since."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        lo, hi = _dtype_limits(ctx.dtype(x))
        return _op.clip(x, float(attrs.get("min", lo)), float(attrs.get("max", hi)))

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        lo_e, hi_e = _opt(inputs, 1), _opt(inputs, 2)
        lo_v = None if lo_e is None else ctx.value(lo_e)
        hi_v = None if hi_e is None else ctx.value(hi_e)
        if (lo_e is None or lo_v is not None) and (hi_e is None or hi_v is not None):
            lo, hi = _dtype_limits(ctx.dtype(x))
            return _op.clip(x, float(lo if lo_v is None else np.asarray(lo_v).item()),
                            float(hi if hi_v is None else np.asarray(hi_v).item()))
        out = x
        if lo_e is not None:
            out = _op.maximum(out, lo_e)
        if hi_e is not None:
            out = _op.minimum(out, hi_e)
        return out


# --- elementwise: binary --------------------------------------------------------------------------


def _legacy_broadcast(a: Expr, b: Expr, attrs: Attrs, ctx: Ctx) -> Expr:
    """Before opset 7, ``broadcast=1`` lets B broadcast onto A, aligned at ``axis`` if given.

    Without ``axis`` the alignment is on the trailing axes, which is numpy's
    rule; with it, B gets trailing unit axes so that numpy aligns it there.
    ``broadcast=0`` (the default) demands equal shapes.
    """
    sa, sb = ctx.shape(a), ctx.shape(b)
    if not attrs.get("broadcast", 0):
        same = len(sa) == len(sb) and all(
            not _static(x) or not _static(y) or x == y for x, y in zip(sa, sb))
        if not same:
            raise ctx.error(f"without broadcast=1 (opset {ctx.opset} < 7) both inputs must have "
                            f"the same shape, got {tuple(sa)} and {tuple(sb)}")
        return b
    if "axis" not in attrs:
        return b
    axis = attrs["axis"]
    axis = axis + len(sa) if axis < 0 else axis
    trailing = len(sa) - axis - len(sb)
    if axis < 0 or trailing < 0:
        raise ctx.error(f"broadcast axis {attrs['axis']} does not fit a {len(sb)}-D B onto a "
                        f"{len(sa)}-D A")
    return _op.expand_dims(b, len(sb), trailing) if trailing else b


class _Binary(OnnxOpConverter):
    """A binary elementwise operator: legacy broadcast until opset 7, numpy rules since."""

    build: ClassVar[Callable[[Expr, Expr], Expr]]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        a, b = _need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B")
        return cls.build(a, _legacy_broadcast(a, b, attrs, ctx))

    @classmethod
    def _impl_v7(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls.build(_need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B"))


def _binary(name: str, fn: Callable[[Expr, Expr], Expr]) -> None:
    CONVERTERS[name] = type(name, (_Binary,), {"build": staticmethod(fn),
                                               "__doc__": f"ONNX {name}."})


for _name, _fn in (("Add", _op.add), ("Sub", _op.subtract), ("Mul", _op.multiply),
                   ("Div", _op.divide), ("And", _op.logical_and), ("Or", _op.logical_or),
                   ("Xor", _op.not_equal), ("Equal", _op.equal), ("Less", _op.less),
                   ("Greater", _op.greater)):
    _binary(_name, _fn)


for _name, _fn in (("BitwiseAnd", _op.bitwise_and), ("BitwiseOr", _op.bitwise_or),
                   ("BitwiseXor", _op.bitwise_xor)):
    CONVERTERS[_name] = type(_name, (OnnxOpConverter,), {
        "_impl_v18": classmethod(lambda cls, inputs, attrs, ctx, fn=_fn: fn(
            _need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B"))),
        "__doc__": f"ONNX {_name}, from opset 18."})


@_register()
class BitShift(OnnxOpConverter):
    """left_shift or right_shift by ``direction`` (ONNX shifts unsigned integers only, so a
    right shift is a logical one)."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, y = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "Y")
        direction = _attr(attrs, "direction", ctx)
        if direction not in ("LEFT", "RIGHT"):
            raise ctx.error(f"direction must be 'LEFT' or 'RIGHT', got {direction!r}")
        return (_op.left_shift if direction == "LEFT" else _op.right_shift)(x, y)


@_register()
class Pow(_Binary):
    """Pow; since opset 12 the exponent may have another dtype, cast to the base's."""

    build = staticmethod(_op.power)

    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        a, b = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "Y")
        if ctx.dtype(b) != ctx.dtype(a):
            b = _op.cast(b, ctx.dtype(a))
        return _op.power(a, b)


@_register()
class LessOrEqual(OnnxOpConverter):
    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.less_equal(_need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B"))


@_register()
class GreaterOrEqual(OnnxOpConverter):
    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.greater_equal(_need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B"))


@_register()
class Mod(OnnxOpConverter):
    """Mod: the sign of the divisor (floor_mod) unless fmod=1 (C's fmod, Relay's mod)."""

    @classmethod
    def _impl_v10(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        a, b = _need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B")
        fmod = attrs.get("fmod", 0)
        if not fmod and np.dtype(ctx.dtype(a)).kind == "f":
            raise ctx.error("fmod must be 1 for floating-point inputs")
        return (_op.mod if fmod else _op.floor_mod)(a, b)


class _Variadic(OnnxOpConverter):
    """Sum, Max, Min, Mean of one or more inputs (broadcasting, as every opset allows for
    inputs of equal shape)."""

    build: ClassVar[Callable[[Expr, Expr], Expr]]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        args = [x for x in inputs if x is not None]
        if not args:
            raise ctx.error("needs at least one input")
        out = args[0]
        for x in args[1:]:
            out = cls.build(out, x)
        return cls.finish(out, len(args), ctx)

    @classmethod
    def finish(cls, out: Expr, count: int, ctx: Ctx) -> Expr:
        return out


for _name, _fn in (("Sum", _op.add), ("Max", _op.maximum), ("Min", _op.minimum)):
    CONVERTERS[_name] = type(_name, (_Variadic,), {"build": staticmethod(_fn),
                                                   "__doc__": f"ONNX {_name}."})


@_register()
class Mean(_Variadic):
    build = staticmethod(_op.add)

    @classmethod
    def finish(cls, out: Expr, count: int, ctx: Ctx) -> Expr:
        return out if count == 1 else _op.divide(out, ctx.scalar(count, out))


@_register()
class PRelu(OnnxOpConverter):
    """PRelu: a per-channel slope maps to nn.prelu, any other slope broadcasts numpy-style.

    Before opset 7 a slope of C values applies along the channel axis; since
    then the slope broadcasts onto X unidirectionally (so a per-channel slope
    of an NCHW tensor has shape (C, 1, 1)).
    """

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, slope = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "slope")
        shape, sshape = ctx.shape(x), ctx.shape(slope)
        n = _prod(sshape)
        if len(shape) >= 2 and n is not None and n > 1 and n == shape[1]:
            return _nn.prelu(x, _op.reshape(slope, [n]) if len(sshape) != 1 else slope, axis=1)
        return cls._generic(x, slope, ctx)

    @classmethod
    def _impl_v7(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, slope = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "slope")
        shape, sshape = ctx.shape(x), ctx.shape(slope)
        per_channel = (len(shape) >= 2 and len(sshape) == len(shape) - 1
                       and _static(sshape[0]) and sshape[0] > 1
                       and sshape[0] == shape[1] and all(d == 1 for d in sshape[1:]))
        if per_channel:
            return _nn.prelu(x, _op.reshape(slope, [sshape[0]]) if len(sshape) > 1 else slope,
                             axis=1)
        return cls._generic(x, slope, ctx)

    @staticmethod
    def _generic(x: Expr, slope: Expr, ctx: Ctx) -> Expr:
        return _op.where(_op.less(x, ctx.scalar(0, x)), _op.multiply(x, slope), x)


@_register()
class Where(OnnxOpConverter):
    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.where(_need(inputs, 0, ctx, "condition"), _need(inputs, 1, ctx, "X"),
                         _need(inputs, 2, ctx, "Y"))


# --- convolution and pooling ----------------------------------------------------------------------


def _spatial_rank(x: Expr, ctx: Ctx, what: str) -> int:
    """How many spatial axes ``x`` (N, C, spatial...) has: 1, 2 or 3, as Relay's operators."""
    rank = ctx.rank(x)
    if rank < 3:
        raise ctx.error(f"{what} needs an input of rank 3 or more, got rank {rank}")
    if rank > 5:
        raise ctx.unsupported(f"{rank - 2}-D {what} is not supported (up to 3-D)")
    return rank - 2


def _ints_attr(attrs: Attrs, name: str, n: int, default: int, ctx: Ctx) -> list[int]:
    values = [int(v) for v in attrs.get(name, [default] * n)]
    if len(values) != n:
        raise ctx.error(f"{name} {values} should have {n} values")
    return values


def _pads(attrs: Attrs, in_dims: Sequence, kernel: Sequence[int], strides: Sequence[int],
          dilations: Sequence[int], ctx: Ctx) -> list[int]:
    """Explicit pads (begin..., end...) from ``pads`` or ``auto_pad``."""
    n = len(kernel)
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return _ints_attr(attrs, "pads", 2 * n, 0, ctx)
    if auto == "VALID":
        return [0] * (2 * n)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"unknown auto_pad {auto!r}")
    begins, ends = [], []
    for i in range(n):
        d = in_dims[i]
        if not _static(d):
            raise ctx.error(f"auto_pad={auto} needs static spatial extents, got {tuple(in_dims)}")
        out = -(-d // strides[i])
        total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - d, 0)
        small, big = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else big)
        ends.append(big if auto == "SAME_UPPER" else small)
    return begins + ends


def _kernel_shape(attrs: Attrs, w: Expr | None, n: int, ctx: Ctx) -> list[int]:
    if "kernel_shape" in attrs:
        return _ints_attr(attrs, "kernel_shape", n, 1, ctx)
    if w is None:
        raise ctx.error("the required attribute 'kernel_shape' is missing")
    return list(ctx.static_shape(w, "the weight")[2:])


def _nd_op(name: str, n: int) -> Callable[..., Expr]:
    """Relay's constructor of the ``n``-D form of an operator family: ``conv{n}d``..."""
    return getattr(_nn, name.format(n=n))


@_register()
class Conv(OnnxOpConverter):
    """Convolution over 1, 2 or 3 spatial axes as nn.conv1d/2d/3d (+ nn.bias_add)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, w, b = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "W"), _opt(inputs, 2)
        n = _spatial_rank(x, ctx, "convolution")
        kernel = _kernel_shape(attrs, w, n, ctx)
        strides = _ints_attr(attrs, "strides", n, 1, ctx)
        dilations = _ints_attr(attrs, "dilations", n, 1, ctx)
        pads = _pads(attrs, ctx.shape(x)[2:], kernel, strides, dilations, ctx)
        out_channels = ctx.shape(w)[0]
        out = _nd_op("conv{n}d", n)(
            x, w, strides=strides, padding=pads, dilation=dilations,
            groups=int(attrs.get("group", 1)),
            channels=None if not _static(out_channels) else out_channels, kernel_size=kernel)
        return out if b is None else _nn.bias_add(out, b, axis=1)


@_register()
class ConvTranspose(OnnxOpConverter):
    """Transposed convolution as nn.conv1d/2d/3d_transpose; ``output_shape`` and SAME padding
    are turned into explicit pads."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, w, b = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "W"), _opt(inputs, 2)
        n = _spatial_rank(x, ctx, "transposed convolution")
        kernel = _kernel_shape(attrs, w, n, ctx)
        strides = _ints_attr(attrs, "strides", n, 1, ctx)
        dilations = _ints_attr(attrs, "dilations", n, 1, ctx)
        out_pad = _ints_attr(attrs, "output_padding", n, 0, ctx)
        group = int(attrs.get("group", 1))
        auto = attrs.get("auto_pad", "NOTSET")
        out_shape = attrs.get("output_shape")
        if out_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
            in_dims = ctx.static_shape(x, "the input")[2:]
            if out_shape is None:
                out_shape = [d * s for d, s in zip(in_dims, strides)]
            out_shape = list(out_shape)[-n:]
            begins, ends = [], []
            for i in range(n):
                total = (strides[i] * (in_dims[i] - 1) + out_pad[i]
                         + (kernel[i] - 1) * dilations[i] + 1 - out_shape[i])
                if total < 0:
                    raise ctx.unsupported(f"output_shape {out_shape} is larger than the "
                                          f"transposed convolution can produce")
                small, big = total // 2, total - total // 2
                begins.append(small if auto == "SAME_UPPER" else big)
                ends.append(big if auto == "SAME_UPPER" else small)
            pads = begins + ends
        elif auto == "VALID":
            pads = [0] * (2 * n)
        else:
            pads = _ints_attr(attrs, "pads", 2 * n, 0, ctx)
        wshape = ctx.shape(w)
        channels = None if not _static(wshape[1]) else wshape[1] * group
        out = _nd_op("conv{n}d_transpose", n)(
            x, w, strides=strides, padding=pads, dilation=dilations, groups=group,
            channels=channels, kernel_size=kernel, output_padding=out_pad)
        return out if b is None else _nn.bias_add(out, b, axis=1)


class _Pool(OnnxOpConverter):
    """MaxPool / AveragePool over 1-, 2- or 3-D windows as nn.max_pool1d/2d/3d or
    nn.avg_pool1d/2d/3d (ceil_mode and dilations from opset 10, count_include_pad from
    opset 7; off before)."""

    average: ClassVar[bool]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        n = _spatial_rank(x, ctx, "pooling")
        _attr(attrs, "kernel_shape", ctx)
        kernel = _ints_attr(attrs, "kernel_shape", n, 1, ctx)
        strides = _ints_attr(attrs, "strides", n, 1, ctx)
        dilations = _ints_attr(attrs, "dilations", n, 1, ctx)
        pads = _pads(attrs, ctx.shape(x)[2:], kernel, strides, dilations, ctx)
        ceil_mode = bool(attrs.get("ceil_mode", 0))
        if cls.average:
            return _nd_op("avg_pool{n}d", n)(
                x, kernel, strides, dilations, pads, ceil_mode=ceil_mode,
                count_include_pad=bool(attrs.get("count_include_pad", 0)))
        return _nd_op("max_pool{n}d", n)(x, kernel, strides, dilations, pads, ceil_mode=ceil_mode)


@_register()
class MaxPool(_Pool):
    average = False


@_register()
class AveragePool(_Pool):
    average = True


class _GlobalPool(OnnxOpConverter):
    average: ClassVar[bool]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        rank = ctx.rank(x)
        if 3 <= rank <= 5:
            return _nd_op("global_avg_pool{n}d" if cls.average else "global_max_pool{n}d",
                          rank - 2)(x)
        if rank < 3:
            raise ctx.error(f"global pooling needs an input of rank 3 or more, got rank {rank}")
        return (_op.mean if cls.average else _op.max)(x, list(range(2, rank)), keepdims=True)


@_register()
class GlobalAveragePool(_GlobalPool):
    average = True


@_register()
class GlobalMaxPool(_GlobalPool):
    average = False


# --- normalization --------------------------------------------------------------------------------


def _bn_inference(inputs: Inputs, epsilon: float, spatial: bool, ctx: Ctx) -> Expr:
    x = _need(inputs, 0, ctx, "X")
    scale, bias = _need(inputs, 1, ctx, "scale"), _need(inputs, 2, ctx, "B")
    mean, var = _need(inputs, 3, ctx, "mean"), _need(inputs, 4, ctx, "var")
    if spatial:
        return _nn.batch_norm(x, scale, bias, mean, var, axis=1, epsilon=epsilon)[0]
    # spatial=0: statistics per activation, shaped like one sample (C, D1, ..., Dn).
    norm = _op.multiply(_op.subtract(x, mean), _op.rsqrt(_op.add(var, ctx.scalar(epsilon, var))))
    return _op.add(_op.multiply(norm, scale), bias)


def _bn_extra_outputs(ctx: Ctx) -> None:
    if any(ctx.outputs_used[1:]):
        raise ctx.unsupported("the running-statistics outputs of training-mode "
                              "BatchNormalization are not supported")


@_register()
class BatchNormalization(OnnxOpConverter):
    """Batch normalization at inference, as nn.batch_norm (field 0 of its TupleWrapper).

    Opset 1 and 6 carry ``is_test`` (0, training, is not supported) and
    ``spatial``; opset 7 drops ``is_test``; opset 9 drops ``spatial``
    (always per channel); opset 14 adds ``training_mode``.
    """

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        if not attrs.get("is_test", 0):
            raise ctx.unsupported("is_test=0 asks for training-mode batch normalization (batch "
                                  "statistics); relaypass imports models for inference")
        _bn_extra_outputs(ctx)
        return _bn_inference(inputs, attrs.get("epsilon", 1e-5), bool(attrs.get("spatial", 1)), ctx)

    @classmethod
    def _impl_v7(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        _bn_extra_outputs(ctx)
        return _bn_inference(inputs, attrs.get("epsilon", 1e-5), bool(attrs.get("spatial", 1)), ctx)

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        _bn_extra_outputs(ctx)
        return _bn_inference(inputs, attrs.get("epsilon", 1e-5), True, ctx)

    @classmethod
    def _impl_v14(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        if attrs.get("training_mode", 0):
            raise ctx.unsupported("training_mode=1 asks for training-mode batch normalization; "
                                  "relaypass imports models for inference")
        return cls._impl_v9(inputs, attrs, ctx)


def _normalize(x: Expr, axes: list[int], epsilon: float, ctx: Ctx) -> Expr:
    """(x - mean) / sqrt(var + epsilon) over ``axes``, the statistics kept as broadcastable."""
    mean = _op.mean(x, axes, keepdims=True)
    centered = _op.subtract(x, mean)
    var = _op.mean(_op.multiply(centered, centered), axes, keepdims=True)
    return _op.multiply(centered, _op.rsqrt(_op.add(var, ctx.scalar(epsilon, x))))


@_register()
class InstanceNormalization(OnnxOpConverter):
    """Per-sample, per-channel normalization, composed from mean and rsqrt (the operator set
    has no nn.instance_norm)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        scale, bias = _need(inputs, 1, ctx, "scale"), _need(inputs, 2, ctx, "B")
        rank = ctx.rank(x)
        if rank < 3:
            raise ctx.error(f"needs an input of rank 3 or more, got rank {rank}")
        norm = _normalize(x, list(range(2, rank)), attrs.get("epsilon", 1e-5), ctx)
        scale = _op.expand_dims(scale, 1, rank - 2)
        bias = _op.expand_dims(bias, 1, rank - 2)
        return _op.add(_op.multiply(norm, scale), bias)


@_register()
class LayerNormalization(OnnxOpConverter):
    """nn.layer_norm when normalizing over the last axis; composed for several axes."""

    @classmethod
    def _impl_v17(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        if any(ctx.outputs_used[1:]):
            raise ctx.unsupported("the Mean and InvStdDev outputs of LayerNormalization are "
                                  "not supported")
        x, scale, bias = _need(inputs, 0, ctx, "X"), _need(inputs, 1, ctx, "Scale"), _opt(inputs, 2)
        rank = ctx.rank(x)
        axis = _axis(attrs.get("axis", -1), rank, ctx)
        epsilon = attrs.get("epsilon", 1e-5)
        if axis == rank - 1 and ctx.rank(scale) == 1:
            beta = _op.zeros_like(scale) if bias is None else bias
            return _nn.layer_norm(x, scale, beta, axis=-1, epsilon=epsilon, center=bias is not None)
        out = _op.multiply(_normalize(x, list(range(axis, rank)), epsilon, ctx), scale)
        return out if bias is None else _op.add(out, bias)


@_register()
class LRN(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _nn.lrn(_need(inputs, 0, ctx, "X"), size=int(_attr(attrs, "size", ctx)), axis=1,
                       bias=attrs.get("bias", 1.0), alpha=attrs.get("alpha", 1e-4),
                       beta=attrs.get("beta", 0.75))


@_register()
class Dropout(OnnxOpConverter):
    """nn.dropout, which is the identity at inference (SimplifyInference removes it).

    The optional mask output keeps every element at inference (typed like
    the data before opset 10, bool since).  The ``ratio`` attribute becomes
    an input in opset 12, with ``training_mode``: a model whose
    training_mode is a true constant is rejected, its outputs being random.
    ``is_test`` (before opset 7) is ignored: as in Relay, nn.dropout means
    dropout in training and the identity at inference.
    """

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        x = _need(inputs, 0, ctx, "data")
        return cls._build(x, float(attrs.get("ratio", 0.5)), ctx.dtype(x), ctx)

    @classmethod
    def _impl_v10(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        return cls._build(_need(inputs, 0, ctx, "data"), float(attrs.get("ratio", 0.5)), "bool",
                          ctx)

    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        x = _need(inputs, 0, ctx, "data")
        ratio_e, training_e = _opt(inputs, 1), _opt(inputs, 2)
        if training_e is not None and ctx.static_scalar(training_e, "training_mode"):
            raise ctx.unsupported("training_mode=true asks for random dropout; relaypass "
                                  "imports models for inference")
        ratio = 0.5 if ratio_e is None else float(ctx.static_scalar(ratio_e, "ratio"))
        return cls._build(x, ratio, "bool", ctx)

    @staticmethod
    def _build(x: Expr, ratio: float, mask_dtype: str, ctx: Ctx) -> list[Expr]:
        out = [_nn.dropout(x, ratio)]
        if len(ctx.outputs_used) > 1 and ctx.outputs_used[1]:
            out.append(_op.cast(_op.ones_like(x), mask_dtype))
        return out


# --- matrix products ------------------------------------------------------------------------------


@_register()
class Gemm(OnnxOpConverter):
    """alpha * A' B' + beta * C as nn.dense; before opset 7, C broadcasts only if broadcast=1."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        c = _need(inputs, 2, ctx, "C")
        out = cls._product(inputs, attrs, ctx)
        if not attrs.get("broadcast", 0) and attrs.get("beta", 1.0) != 0:
            so, sc = ctx.shape(out), ctx.shape(c)
            if len(sc) != 2 or any(_static(a) and _static(b) and a != b
                                   for a, b in zip(so, sc)):
                raise ctx.error(f"without broadcast=1 (opset {ctx.opset} < 7) C must have the "
                                f"output's shape {tuple(so)}, got {tuple(sc)}")
        return cls._add_c(out, c, attrs, ctx)

    @classmethod
    def _impl_v7(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        out = cls._product(inputs, attrs, ctx)
        return cls._add_c(out, _need(inputs, 2, ctx, "C"), attrs, ctx)

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls._add_c(cls._product(inputs, attrs, ctx), _opt(inputs, 2), attrs, ctx)

    @staticmethod
    def _product(inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        a, b = _need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B")
        if ctx.rank(a) != 2 or ctx.rank(b) != 2:
            raise ctx.error(f"A and B must be matrices, got shapes {tuple(ctx.shape(a))} and "
                            f"{tuple(ctx.shape(b))}")
        if attrs.get("transA", 0):
            a = _op.transpose(a, (1, 0))
        if not attrs.get("transB", 0):
            b = _matrix_transpose(b, ctx)
        units = ctx.shape(b)[0]
        out = _nn.dense(a, b, units=None if not _static(units) else units)
        alpha = attrs.get("alpha", 1.0)
        return out if alpha == 1.0 else _op.multiply(out, ctx.scalar(alpha, out))

    @staticmethod
    def _add_c(out: Expr, c: Expr | None, attrs: Attrs, ctx: Ctx) -> Expr:
        beta = attrs.get("beta", 1.0)
        if c is None or beta == 0:
            return out
        if beta != 1.0:
            c = _op.multiply(c, ctx.scalar(beta, c))
        return _op.add(out, c)


def _matrix_transpose(x: Expr, ctx: Ctx) -> Expr:
    """``x`` (a matrix) transposed: nn.dense's (N, K) weight, from the (K, N) one of ONNX's
    MatMul and Gemm.  A constant weight is transposed here rather than by FoldConstant: the
    transpose is an artefact of the conversion, not a computation of the model, and left
    to FoldConstant it makes the pass rewrite every layer (and the module be typed again)."""
    if isinstance(x, Constant):
        return ctx.transposed_weight(x)
    return _op.transpose(x, (1, 0))


@_register()
class MatMul(OnnxOpConverter):
    """numpy's matmul: nn.dense for a matrix right operand, nn.batch_matmul for stacks."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        a, b = _need(inputs, 0, ctx, "A"), _need(inputs, 1, ctx, "B")
        ra, rb = ctx.rank(a), ctx.rank(b)
        if ra == 0 or rb == 0:
            raise ctx.error("MatMul does not take scalars")
        if ra == 1:
            return _op.squeeze(cls._impl_v1([_op.expand_dims(a, 0), b], attrs, ctx), [-2])
        if rb == 1:
            return _op.squeeze(cls._impl_v1([a, _op.expand_dims(b, 1)], attrs, ctx), [-1])
        if rb == 2:
            n = ctx.shape(b)[1]
            return _nn.dense(a, _matrix_transpose(b, ctx), units=None if not _static(n) else n)
        sa, sb = ctx.shape(a), ctx.shape(b)
        batch = _broadcast_dims(sa[:-2], sb[:-2], ctx)
        a3 = cls._stack(a, sa, batch, ctx)
        b3 = cls._stack(b, sb, batch, ctx)
        out = _nn.batch_matmul(a3, b3, transpose_b=False)
        if len(batch) == 1:
            return out
        target = [*batch, sa[-2], sb[-1]]
        if all(_static(d) for d in target):
            return _op.reshape(out, [int(d) for d in target])
        return cls._split_batch(out, batch, ctx)

    @staticmethod
    def _split_batch(x: Expr, batch: Sequence, ctx: Ctx) -> Expr:
        """Split the merged leading axis of ``x`` back into ``batch``, one axis at a time with
        Relay's -4 code, so that size variables among the batch axes stay in the type."""
        for i in range(len(batch) - 1):
            rest = _prod(batch[i + 1:])
            head = int(batch[i]) if _static(batch[i]) else -1
            if head == -1 and rest is None:
                raise ctx.error(f"the batch axes {tuple(batch)} have more than one dynamic "
                                f"extent; fix the input shapes with from_onnx(shape=...)")
            x = _op.reshape(x, [0] * i + [-4, head, -1 if rest is None else rest, -2])
        return x

    @staticmethod
    def _stack(x: Expr, shape: Sequence, batch: Sequence, ctx: Ctx) -> Expr:
        """``x`` as a 3-D stack of matrices over the (broadcast) batch axes."""
        target = (*batch, *shape[-2:])
        if len(shape) != len(target) or any(a is not b and a != b for a, b in zip(shape, target)):
            if any(not _static(d) for d in target):
                raise ctx.error(f"broadcasting the batch axes of {tuple(shape)} needs static "
                                f"shapes")
            x = _op.broadcast_to(x, target)
        if len(batch) == 1:
            return x
        if all(_static(d) for d in target):
            return _op.reshape(x, [_prod(batch), *(int(d) for d in shape[-2:])])
        for _ in range(len(batch) - 1):  # merge the batch axes two at a time (Relay's -3)
            x = _op.reshape(x, [-3, -2])
        return x


def _broadcast_symbolic(x, y):
    """The broadcast of two extents one of which is symbolic: a size variable is either 1 or
    the other extent, so the static side wins (unless it is 1), as does the same variable."""
    if x == 1:
        return y
    if y == 1 or _static(x):
        return x
    if _static(y):
        return y
    return x if onnx_symbolic.same_dim(x, y) else Any()


def _broadcast_dims(a: Sequence, b: Sequence, ctx: Ctx) -> list:
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if type(x) is Any or type(y) is Any:
            out.append(y if x == 1 else x if y == 1 else Any())
        elif not _static(x) or not _static(y):
            out.append(_broadcast_symbolic(x, y))
        elif x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ctx.error(f"shapes {tuple(a)} and {tuple(b)} do not broadcast")
    return out[::-1]


@_register()
class Einsum(OnnxOpConverter):
    """einsum of the inputs; ONNX's equations are numpy's (spaces are dropped)."""

    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        args = [x for x in inputs if x is not None]
        if not args:
            raise ctx.error("needs at least one input")
        return _op.einsum(args, str(_attr(attrs, "equation", ctx)).replace(" ", ""))


# --- softmax family -------------------------------------------------------------------------------


class _SoftmaxLike(OnnxOpConverter):
    """Before opset 13 the input is seen as 2-D: the axes before ``axis`` (default 1) form the
    rows and the rest the columns; since opset 13 it is a plain softmax along ``axis``
    (default -1)."""

    build: ClassVar[Callable[[Expr, int], Expr]]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        shape = ctx.shape(x)
        axis = _flatten_axis(attrs, len(shape), ctx)
        if axis == len(shape) - 1:
            return cls.build(x, -1)
        flat = _flatten_2d(x, shape, axis, ctx)
        return _reshape_to(cls.build(flat, 1), shape, ctx, "restoring the input's shape")

    @classmethod
    def _impl_v13(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        return cls.build(x, _axis(attrs.get("axis", -1), ctx.rank(x), ctx))


@_register()
class Softmax(_SoftmaxLike):
    build = staticmethod(lambda x, axis: _nn.softmax(x, axis))


@_register()
class LogSoftmax(_SoftmaxLike):
    build = staticmethod(lambda x, axis: _nn.log_softmax(x, axis))


# --- shapes and data movement ---------------------------------------------------------------------


def _reshape(x: Expr, shape: Sequence[int], allowzero: bool, ctx: Ctx) -> Expr:
    if any(v < -1 for v in shape):
        raise ctx.error(f"shape {list(shape)} has a value below -1")
    return _op.reshape(x, list(shape), allowzero=allowzero)


@_register()
class Reshape(OnnxOpConverter):
    """The target shape is an attribute until opset 5, an input since; ``allowzero`` from 14."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _reshape(_need(inputs, 0, ctx, "data"), _attr(attrs, "shape", ctx), False, ctx)

    @classmethod
    def _impl_v5(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, target = _need(inputs, 0, ctx, "data"), _need(inputs, 1, ctx, "shape")
        allowzero = bool(attrs.get("allowzero", 0))
        if ctx.value(target) is not None:
            return _reshape(x, ctx.static_ints(target, "the target shape"), allowzero, ctx)
        entries = ctx.symbolic_entries(target)
        if entries is not None:
            # allowzero only changes what a 0 in the target means: without one, Relay's copy
            # code 0 is free for the extents the target shares with the input
            allowzero = allowzero and any(onnx_symbolic.is_number(e) and e == 0 for e in entries)
            codes = _reshape_codes(ctx.shape(x), entries, allowzero)
            if codes is not None:
                return _reshape(x, codes, allowzero, ctx)
            like = _reshape_from_source(x, entries, target, ctx)
            if like is not None:
                return like
        return _dyn.reshape(x, _as_int64(target, ctx), allowzero)


@_register()
class Flatten(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        shape = ctx.shape(x)
        axis = _flatten_axis(attrs, len(shape), ctx)
        if axis == 1:
            return _nn.batch_flatten(x)
        return _flatten_2d(x, shape, axis, ctx)


@_register()
class Transpose(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        perm = attrs.get("perm")
        return _op.transpose(_need(inputs, 0, ctx, "data"), None if perm is None else list(perm))


@_register()
class Concat(OnnxOpConverter):
    """Concat; ``axis`` defaulted to 1 in opset 1, is required since opset 4."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls._build(inputs, attrs.get("axis", 1), ctx)

    @classmethod
    def _impl_v4(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls._build(inputs, _attr(attrs, "axis", ctx), ctx)

    @staticmethod
    def _build(inputs: Inputs, axis: int, ctx: Ctx) -> Expr:
        args = [x for x in inputs if x is not None]
        if not args:
            raise ctx.error("needs at least one input")
        if len(args) == 1:
            return args[0]
        return _op.concatenate(args, _axis(axis, ctx.rank(args[0]), ctx))


class _SplitBase(OnnxOpConverter):
    @staticmethod
    def _split(x: Expr, axis: int, sizes: Sequence[int] | None, ctx: Ctx,
               uneven: bool = False) -> list[Expr]:
        shape = ctx.shape(x)
        axis = _axis(axis, len(shape), ctx)
        count = ctx.num_outputs
        extent = shape[axis]
        if sizes is None:
            if count == 1:
                return [x]
            if not _static(extent):
                if uneven:
                    raise ctx.error("an uneven split needs a static extent along the axis")
                return list(_op.split(x, count, axis))
            if extent % count:
                if not uneven:
                    raise ctx.error(f"cannot split an extent of {extent} into {count} equal parts")
                step = -(-extent // count)
                sizes = [step] * (count - 1) + [extent - step * (count - 1)]
            else:
                return list(_op.split(x, count, axis))
        sizes = [int(s) for s in sizes]
        if len(sizes) != count:
            raise ctx.error(f"split sizes {sizes} do not match the {count} outputs")
        if _static(extent) and sum(sizes) != extent:
            raise ctx.error(f"split sizes {sizes} do not add up to the extent {extent}")
        if count == 1:
            return [x]
        indices = list(np.cumsum(sizes[:-1]).tolist())
        return list(_op.split(x, indices, axis))


@_register()
class Split(_SplitBase):
    """Split: sizes from the attribute or, in opset 1 and from 13, the second input; opset 18
    adds ``num_outputs`` for uneven splits."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        sizes = attrs.get("split")
        if sizes is None and _opt(inputs, 1) is not None:
            sizes = ctx.static_ints(inputs[1], "split")
        return cls._split(_need(inputs, 0, ctx, "input"), attrs.get("axis", 0), sizes, ctx)

    @classmethod
    def _impl_v2(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        return cls._split(_need(inputs, 0, ctx, "input"), attrs.get("axis", 0),
                          attrs.get("split"), ctx)

    @classmethod
    def _impl_v13(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        split = _opt(inputs, 1)
        sizes = None if split is None else ctx.static_ints(split, "split")
        return cls._split(_need(inputs, 0, ctx, "input"), attrs.get("axis", 0), sizes, ctx)

    @classmethod
    def _impl_v18(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        split = _opt(inputs, 1)
        sizes = None if split is None else ctx.static_ints(split, "split")
        if sizes is None and "num_outputs" in attrs and attrs["num_outputs"] != ctx.num_outputs:
            raise ctx.error(f"num_outputs={attrs['num_outputs']} but the node has "
                            f"{ctx.num_outputs} outputs")
        return cls._split(_need(inputs, 0, ctx, "input"), attrs.get("axis", 0), sizes, ctx,
                          uneven=True)


@_register()
class Slice(OnnxOpConverter):
    """strided_slice; bounds are attributes until opset 10, inputs (with steps) since."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls._build(_need(inputs, 0, ctx, "data"), _attr(attrs, "starts", ctx),
                          _attr(attrs, "ends", ctx), attrs.get("axes"), None, ctx)

    @classmethod
    def _impl_v10(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        data = _need(inputs, 0, ctx, "data")
        starts_e, ends_e = _need(inputs, 1, ctx, "starts"), _need(inputs, 2, ctx, "ends")
        axes = None if _opt(inputs, 3) is None else ctx.static_ints(inputs[3], "axes")
        steps = None if _opt(inputs, 4) is None else ctx.static_ints(inputs[4], "steps")
        if ctx.value(starts_e) is not None and ctx.value(ends_e) is not None:
            return cls._build(data, ctx.static_ints(starts_e, "starts"),
                              ctx.static_ints(ends_e, "ends"), axes, steps, ctx)
        starts, ends = ctx.symbolic_entries(starts_e), ctx.symbolic_entries(ends_e)
        if starts is None or ends is None:
            raise ctx.error("starts and ends must be 1-D integer tensors of a static length")
        n = len(starts)
        axes = list(range(n)) if axes is None else _axes(axes, ctx.rank(data), ctx)
        steps = [1] * n if steps is None else list(steps)
        if not len(ends) == len(axes) == len(steps) == n:
            raise ctx.error(f"starts, ends, axes {axes} and steps {steps} must have the same "
                            f"length")
        shape = ctx.shape(data)
        fixed_starts = [_slice_bound(b, shape[a], s) for b, a, s in zip(starts, axes, steps)]
        fixed_ends = [_slice_bound(e, shape[a], s) for e, a, s in zip(ends, axes, steps)]
        if None not in fixed_starts and None not in fixed_ends:
            # An axis taken whole because its end is the axis's own symbolic extent is left out,
            # so that the result's type keeps that extent.
            kept = [i for i in range(n) if not (fixed_starts[i] == 0 and steps[i] == 1
                                                and fixed_ends[i] == _TO_END
                                                and not onnx_symbolic.is_number(ends[i]))]
            if not kept:
                return data
            return cls._build(data, [fixed_starts[i] for i in kept],
                              [fixed_ends[i] for i in kept], [axes[i] for i in kept],
                              [steps[i] for i in kept], ctx)
        return cls._dynamic(data, _as_int64(starts_e, ctx), _as_int64(ends_e, ctx), axes, steps,
                            ctx)

    @staticmethod
    def _dynamic(data: Expr, starts: Expr, ends: Expr, axes: list[int], steps: list[int],
                 ctx: Ctx) -> Expr:
        """dyn.strided_slice, whose bounds cover the leading axes up to the last sliced one:
        the given bounds where ONNX slices, the whole extent elsewhere."""
        if 0 in steps:
            raise ctx.error("a step of 0 is not allowed")
        count = max(axes) + 1
        if axes == list(range(count)):
            begin, end = starts, ends
        else:
            where = {a: i for i, a in enumerate(axes)}
            begin = _op.concatenate([_op.strided_slice(starts, [where[a]], [where[a] + 1])
                                     if a in where else Constant(np.zeros(1, np.int64))
                                     for a in range(count)], 0)
            end = _op.concatenate([_op.strided_slice(ends, [where[a]], [where[a] + 1])
                                   if a in where else Constant(np.array([_TO_END], np.int64))
                                   for a in range(count)], 0)
        by_axis = dict(zip(axes, steps))
        strides = Constant(np.array([by_axis.get(a, 1) for a in range(count)], np.int64))
        return _dyn.strided_slice(data, begin, end, strides)

    @staticmethod
    def _build(x: Expr, starts, ends, axes, steps, ctx: Ctx) -> Expr:
        rank = ctx.rank(x)
        starts, ends = list(starts), list(ends)
        axes = list(range(len(starts))) if axes is None else _axes(axes, rank, ctx)
        steps = [1] * len(starts) if steps is None else list(steps)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise ctx.error(f"starts {starts}, ends {ends}, axes {axes} and steps {steps} "
                            f"must have the same length")
        if 0 in steps:
            raise ctx.error("a step of 0 is not allowed")
        return _op.strided_slice(x, starts, ends, steps, axes=axes)


def _slice_bound(bound, extent, step: int) -> int | None:
    """A slice bound known entry by entry, as a number: a symbolic bound at or past the
    extent of the axis (the sequence length of a tensor of that length) is "to the end" for a
    positive step; None when the bound is known only when the model runs."""
    if onnx_symbolic.is_number(bound):
        return int(bound)
    if step > 0 and bound is not None and not _static(extent):
        past = onnx_symbolic.entry(bound - extent)
        if onnx_symbolic.is_number(past) and past >= 0:
            return _TO_END
    return None


@_register()
class Gather(OnnxOpConverter):
    """take along ``axis``; constant negative indices are made positive, others wrap."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        data, indices = _need(inputs, 0, ctx, "data"), _need(inputs, 1, ctx, "indices")
        shape = ctx.shape(data)
        axis = _axis(attrs.get("axis", 0), len(shape), ctx)
        if isinstance(indices, Constant) and _static(shape[axis]):
            idx = indices.array
            if idx.size and idx.min() < 0:
                indices = Constant(np.where(idx < 0, idx + shape[axis], idx).astype(idx.dtype))
            return _op.take(data, indices, axis=axis)
        return _op.take(data, indices, axis=axis, mode="wrap")


@_register()
class GatherElements(OnnxOpConverter):
    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        data, indices = _need(inputs, 0, ctx, "data"), _need(inputs, 1, ctx, "indices")
        return _op.gather(data, _axis(attrs.get("axis", 0), ctx.rank(data), ctx), indices)


@_register()
class GatherND(OnnxOpConverter):
    """gather_nd, whose indices put the coordinate axis first (ONNX puts it last)."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        data, indices = _need(inputs, 0, ctx, "data"), _need(inputs, 1, ctx, "indices")
        ishape = ctx.shape(indices)
        r = len(ishape)
        if r < 1 or not _static(ishape[-1]):
            raise ctx.error(f"indices of shape {tuple(ishape)} need a static last axis")
        moved = _op.transpose(indices, [r - 1, *range(r - 1)]) if r > 1 else indices
        return _op.gather_nd(data, moved, batch_dims=int(attrs.get("batch_dims", 0)),
                             index_rank=int(ishape[-1]))


def _unsqueeze(x: Expr, axes: Sequence[int], ctx: Ctx) -> Expr:
    out_rank = ctx.rank(x) + len(axes)
    for a in sorted(_axes(axes, out_rank, ctx)):
        x = _op.expand_dims(x, a)
    return x


@_register()
class Unsqueeze(OnnxOpConverter):
    """expand_dims per new axis; axes are an attribute until opset 13, an input since."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _unsqueeze(_need(inputs, 0, ctx, "data"), _attr(attrs, "axes", ctx), ctx)

    @classmethod
    def _impl_v13(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        axes = ctx.static_ints(_need(inputs, 1, ctx, "axes"), "axes")
        return _unsqueeze(_need(inputs, 0, ctx, "data"), axes, ctx)


def _squeeze(x: Expr, axes: Sequence[int] | None, ctx: Ctx) -> Expr:
    shape = ctx.shape(x)
    if axes is None:
        if any(not _static(d) for d in shape):
            raise ctx.error(f"squeezing every unit axis of {tuple(shape)} needs a static shape")
        return _op.squeeze(x, None)
    axes = _axes(axes, len(shape), ctx)
    return _op.squeeze(x, axes) if axes else x


@_register()
class Squeeze(OnnxOpConverter):
    """squeeze; axes are an attribute until opset 13, an optional input since."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _squeeze(_need(inputs, 0, ctx, "data"), attrs.get("axes"), ctx)

    @classmethod
    def _impl_v13(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        axes = None if _opt(inputs, 1) is None else ctx.static_ints(inputs[1], "axes")
        return _squeeze(_need(inputs, 0, ctx, "data"), axes, ctx)


@_register()
class Shape(OnnxOpConverter):
    """shape_of as int64; opset 15 adds ``start``/``end`` to take a slice of it."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.shape_of(_need(inputs, 0, ctx, "data"), "int64")

    @classmethod
    def _impl_v15(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        out = _op.shape_of(x, "int64")
        if "start" not in attrs and "end" not in attrs:
            return out
        rank = ctx.rank(x)
        start, end = attrs.get("start", 0), attrs.get("end", rank)
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
        if end <= start:
            raise ctx.unsupported(f"start={attrs.get('start')} and end={attrs.get('end')} select "
                                  f"no axis; empty tensors are not supported")
        return _op.strided_slice(out, [start], [end])


@_register()
class Size(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _op.ndarray_size(_need(inputs, 0, ctx, "data"), "int64")


@_register()
class Expand(OnnxOpConverter):
    """broadcast_to the numpy broadcast of the input's shape and the given one; dyn.broadcast_to
    when that shape is known only when the model runs."""

    @classmethod
    def _impl_v8(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, target = _need(inputs, 0, ctx, "input"), _need(inputs, 1, ctx, "shape")
        in_shape = tuple(ctx.shape(x))
        value = ctx.value(target)
        if value is not None:
            shape = _broadcast_dims(in_shape, ctx.static_ints(target, "the target shape"), ctx)
            if tuple(shape) == in_shape:
                return x
            if all(_static(d) for d in shape):
                return _op.broadcast_to(x, shape)
        entries = ctx.symbolic_entries(target)
        if entries is None:
            if ctx.rank(target) != 1 or not _static(ctx.shape(target)[0]):
                raise ctx.error(f"the target shape must be a 1-D tensor of a static length, "
                                f"got shape {tuple(ctx.shape(target))}")
            entries = [None] * int(ctx.shape(target)[0])
        rank = max(len(in_shape), len(entries))
        have = [1] * (rank - len(in_shape)) + [onnx_symbolic.entry(d) for d in in_shape]
        want = [1] * (rank - len(entries)) + list(entries)
        out = [_expanded(a, t) for a, t in zip(have, want)]
        if len(in_shape) == rank and all(onnx_symbolic.same_dim(o, a) for o, a in zip(out, have)):
            return x
        if all(onnx_symbolic.is_number(o) for o in out):
            return _op.broadcast_to(x, [int(o) for o in out])
        reps = _tile_reps(have, out)
        if reps is not None:
            return _op.tile(x, reps)
        return _dyn.broadcast_to(x, cls._shape(x, target, have, want, len(entries), ctx))

    @staticmethod
    def _shape(x: Expr, target: Expr, have: list, want: list, target_len: int, ctx: Ctx) -> Expr:
        """The result's shape as a tensor: the target itself where it alone decides every
        extent, else the elementwise maximum of both shapes (padded with ones), which is
        numpy's broadcast for shapes that broadcast."""
        target = _as_int64(target, ctx)
        rank = len(have)
        if target_len == rank and all(
                a == 1 or (onnx_symbolic.is_number(t) and t != 1) or onnx_symbolic.same_dim(a, t)
                for a, t in zip(have, want)):
            return target
        ones = Constant(np.ones(rank, dtype=np.int64))
        shape = _op.shape_of(x, "int64")
        if ctx.rank(x) < rank:
            shape = _op.concatenate([_op.strided_slice(ones, [0], [rank - ctx.rank(x)]), shape], 0)
        if target_len < rank:
            pad = rank - target_len
            target = _op.concatenate([_op.strided_slice(ones, [0], [pad]), target], 0)
        return _op.maximum(shape, target)


def _tile_reps(have: list, out: list) -> list[int] | None:
    """Static repeats that expand ``have`` to ``out`` (as entries): each axis keeps its extent
    (a size variable among them) or grows from 1 to a number.  Tiling a unit axis is
    broadcasting it, and unlike ``broadcast_to`` it needs no number for the kept axes, so the
    result's type keeps their size variables."""
    reps = []
    for a, o in zip(have, out):
        if onnx_symbolic.same_dim(a, o):
            reps.append(1)
        elif onnx_symbolic.is_number(a) and a == 1 and onnx_symbolic.is_number(o) and o >= 0:
            reps.append(int(o))
        else:
            return None
    return reps


def _expanded(have, want):
    """One extent of Expand's result, from the input's and the target's entries (None: unknown)."""
    if onnx_symbolic.is_number(want) and want == 1:
        return have
    if onnx_symbolic.is_number(have) and have == 1:
        return want
    if onnx_symbolic.is_number(have):
        return have  # the target holds the same extent (or 1)
    if onnx_symbolic.is_number(want) or onnx_symbolic.same_dim(have, want):
        return want
    return None


def _as_int64(x: Expr, ctx: Ctx) -> Expr:
    """A shape tensor as int64, the dtype the ``dyn.*`` operators' shape arguments share."""
    return x if ctx.dtype(x) == "int64" else _op.cast(x, "int64")


@_register()
class Tile(OnnxOpConverter):
    @classmethod
    def _impl_v6(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x, reps_e = _need(inputs, 0, ctx, "input"), _need(inputs, 1, ctx, "repeats")
        if ctx.value(reps_e) is None:
            if tuple(ctx.shape(reps_e)) != (ctx.rank(x),):
                raise ctx.error(f"repeats of shape {tuple(ctx.shape(reps_e))} must have one "
                                f"value per axis of the input")
            return _dyn.tile(x, _as_int64(reps_e, ctx))
        reps = ctx.static_ints(reps_e, "repeats")
        if len(reps) != ctx.rank(x):
            raise ctx.error(f"repeats {reps} must have one value per axis of the input")
        return _op.tile(x, reps)


@_register()
class Pad(OnnxOpConverter):
    """nn.pad; pads are an attribute (``paddings`` in opset 1) until opset 11, then an input;
    opset 18 adds ``axes``.  Negative pads crop (a strided_slice after the padding)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        return cls._build(x, _attr(attrs, "paddings", ctx), attrs.get("mode", "constant"),
                          attrs.get("value", 0.0), None, ctx)

    @classmethod
    def _impl_v2(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        return cls._build(x, _attr(attrs, "pads", ctx), attrs.get("mode", "constant"),
                          attrs.get("value", 0.0), None, ctx)

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        pads = ctx.static_ints(_need(inputs, 1, ctx, "pads"), "pads")
        value = _opt(inputs, 2)
        axes = None if _opt(inputs, 3) is None else ctx.static_ints(inputs[3], "axes")
        return cls._build(x, pads, attrs.get("mode", "constant"), value, axes, ctx)

    @staticmethod
    def _build(x: Expr, pads: Sequence[int], mode: str, value, axes, ctx: Ctx) -> Expr:
        rank = ctx.rank(x)
        axes = list(range(rank)) if axes is None else _axes(axes, rank, ctx)
        n = len(axes)
        pads = [int(p) for p in pads]
        if len(pads) != 2 * n:
            raise ctx.error(f"pads {pads} should have {2 * n} values")
        relay_mode = {"constant": "constant", "reflect": "reflect", "edge": "edge"}.get(mode)
        if relay_mode is None:
            raise ctx.unsupported(f"pad mode {mode!r} is not supported (constant, reflect, edge)")
        widths = [(0, 0)] * rank
        for i, a in enumerate(axes):
            widths[a] = (pads[i], pads[i + n])
        if value is None or isinstance(value, (int, float)):
            fill = ctx.scalar(0 if value is None else value, x)
        else:
            fill = value
            if ctx.rank(fill) != 0:
                fill = _op.reshape(fill, [])
        out = x
        if any(b > 0 or e > 0 for b, e in widths):
            out = _nn.pad(x, [(max(b, 0), max(e, 0)) for b, e in widths], fill, relay_mode)
        if any(b < 0 or e < 0 for b, e in widths):
            crop = [(k, -b if b < 0 else 0, e if e < 0 else 2**63 - 1)
                    for k, (b, e) in enumerate(widths) if b < 0 or e < 0]
            out = _op.strided_slice(out, [c[1] for c in crop], [c[2] for c in crop],
                                    axes=[c[0] for c in crop])
        return out


@_register()
class DepthToSpace(OnnxOpConverter):
    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _nn.depth_to_space(_need(inputs, 0, ctx, "input"),
                                  int(_attr(attrs, "blocksize", ctx)), mode="DCR")

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _nn.depth_to_space(_need(inputs, 0, ctx, "input"),
                                  int(_attr(attrs, "blocksize", ctx)),
                                  mode=attrs.get("mode", "DCR"))


@_register()
class SpaceToDepth(OnnxOpConverter):
    """Composed of reshape and transpose (the operator set has no nn.space_to_depth)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        b = int(_attr(attrs, "blocksize", ctx))
        n, c, h, w = ctx.static_shape(x, "the input")
        if h % b or w % b:
            raise ctx.error(f"H={h} and W={w} must be multiples of the block size {b}")
        y = _op.reshape(x, [n, c, h // b, b, w // b, b])
        y = _op.transpose(y, [0, 3, 5, 1, 2, 4])
        return _op.reshape(y, [n, c * b * b, h // b, w // b])


@_register()
class Upsample(OnnxOpConverter):
    """nn.upsampling of the H and W axes of a 4-D tensor; scales are an attribute in opset 7,
    an input from opset 9."""

    @classmethod
    def _impl_v7(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return cls._build(_need(inputs, 0, ctx, "X"), _attr(attrs, "scales", ctx),
                          attrs.get("mode", "nearest"), ctx)

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        scales = ctx.static_value(_need(inputs, 1, ctx, "scales"), "scales")
        return cls._build(inputs[0], [float(s) for s in scales.reshape(-1)],
                          attrs.get("mode", "nearest"), ctx)

    @staticmethod
    def _build(x: Expr, scales: Sequence[float], mode: str, ctx: Ctx) -> Expr:
        if ctx.rank(x) != 4 or len(scales) != 4 or scales[0] != 1 or scales[1] != 1:
            raise ctx.unsupported(f"only the H and W axes of a 4-D tensor can be scaled, got "
                                  f"scales {list(scales)}")
        method = {"nearest": "nearest_neighbor", "linear": "bilinear",
                  "bilinear": "bilinear"}.get(mode)
        if method is None:
            raise ctx.unsupported(f"mode {mode!r} is not supported (nearest, linear)")
        return _nn.upsampling(x, scales[2], scales[3], method=method)


@_register()
class Trilu(OnnxOpConverter):
    """trilu; ``k`` (an optional int64 scalar input) defaults to 0, ``upper`` to 1."""

    @classmethod
    def _impl_v14(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "input")
        if ctx.rank(x) < 2:
            raise ctx.error(f"needs an input of rank 2 or more, got rank {ctx.rank(x)}")
        k = _opt(inputs, 1)
        if k is None:
            k = Constant(np.array(0, "int64"))
        elif ctx.rank(k) != 0:
            k = _op.reshape(k, [])
        return _op.trilu(x, k, upper=bool(attrs.get("upper", 1)))


def _wrapped_indices(indices: Expr, extent, ctx: Ctx) -> Expr:
    """Negative indices (allowed by ONNX) made positive, for operators whose kernels would
    not wrap them; constants are fixed at import."""
    if isinstance(indices, Constant):
        idx = indices.array
        if (idx < 0).any() and _static(extent):
            return Constant(np.where(idx < 0, idx + extent, idx).astype(idx.dtype))
        return indices
    if not _static(extent):
        raise ctx.error("negative indices need a static extent along the indexed axis")
    return _op.where(_op.less(indices, ctx.scalar(0, indices)),
                     _op.add(indices, ctx.scalar(extent, indices)), indices)


_SCATTER_REDUCTIONS = {"none": "update", "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter_mode(attrs: Attrs, ctx: Ctx) -> str:
    name = attrs.get("reduction", "none")
    mode = _SCATTER_REDUCTIONS.get(name)
    if mode is None:
        raise ctx.error(f"unknown reduction {name!r}; expected one of "
                        f"{', '.join(map(repr, _SCATTER_REDUCTIONS))}")
    return mode


def _scatter_elements(inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
    data = _need(inputs, 0, ctx, "data")
    indices, updates = _need(inputs, 1, ctx, "indices"), _need(inputs, 2, ctx, "updates")
    axis = _axis(attrs.get("axis", 0), ctx.rank(data), ctx)
    return _op.scatter_elements(data, indices, updates, axis=axis,
                                reduction=_scatter_mode(attrs, ctx))


@_register()
class ScatterElements(OnnxOpConverter):
    """scatter_elements along ``axis``; ``reduction`` from opset 16 (add, mul), 18 (max,
    min)."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _scatter_elements(inputs, attrs, ctx)


@_register()
class Scatter(OnnxOpConverter):
    """The deprecated name of ScatterElements (opsets 9 and 10), without reduction."""

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return _scatter_elements(inputs, attrs, ctx)


@_register()
class ScatterND(OnnxOpConverter):
    """scatter_nd, whose indices put the coordinate axis first (ONNX puts it last);
    ``reduction`` from opset 16 (add, mul), 18 (max, min)."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        data = _need(inputs, 0, ctx, "data")
        indices, updates = _need(inputs, 1, ctx, "indices"), _need(inputs, 2, ctx, "updates")
        ishape = ctx.shape(indices)
        r = len(ishape)
        if r < 1 or not _static(ishape[-1]):
            raise ctx.error(f"indices of shape {tuple(ishape)} need a static last axis")
        moved = _op.transpose(indices, [r - 1, *range(r - 1)]) if r > 1 else indices
        return _op.scatter_nd(data, moved, updates, mode=_scatter_mode(attrs, ctx))


@_register()
class OneHot(OnnxOpConverter):
    """one_hot; negative indices count from the end (ONNX), indices and depth of any numeric
    type are read as integers, ``values`` is [off, on]."""

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        indices = _need(inputs, 0, ctx, "indices")
        depth = int(ctx.static_scalar(_need(inputs, 1, ctx, "depth"), "depth"))
        values = _need(inputs, 2, ctx, "values")
        if depth < 1:
            raise ctx.error(f"depth must be at least 1, got {depth}")
        if np.dtype(ctx.dtype(indices)).kind != "i":
            indices = _op.cast(indices, "int64")
        indices = _wrapped_indices(indices, depth, ctx)
        rank = ctx.rank(indices)
        axis = attrs.get("axis", -1)
        if not -rank - 1 <= axis <= rank:
            raise ctx.error(f"axis {axis} is out of range for a result of rank {rank + 1}")
        axis = axis + rank + 1 if axis < 0 else axis
        dtype = ctx.dtype(values)
        known = ctx.value(values)
        if known is not None:
            flat = np.asarray(known).reshape(-1)
            if flat.size != 2:
                raise ctx.error(f"values must hold two elements [off, on], got {flat.size}")
            off, on = Constant(flat[0].copy()), Constant(flat[1].copy())
        else:
            flat = _op.reshape(values, [2])
            off = _op.take(flat, Constant(np.array(0, "int64")), axis=0)
            on = _op.take(flat, Constant(np.array(1, "int64")), axis=0)
        return _op.one_hot(indices, on, off, depth, -1 if axis == rank else axis, dtype)


@_register()
class NonZero(OnnxOpConverter):
    """The coordinates of the non-zero elements, one column each (int64, shape (rank, n)).

    How many there are depends on the values: when they are known at import
    (a constant, or computed from constants and shapes) the result is a
    constant of static shape; otherwise it is argwhere, transposed, whose
    second extent is unknown (``?``), so only operators that accept unknown
    extents may follow it.
    """

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        if ctx.rank(x) == 0:
            raise ctx.error("needs an input of rank 1 or more")
        known = ctx.value(x)
        if known is not None:
            return Constant(np.array(np.nonzero(np.asarray(known)), dtype="int64").reshape(
                np.ndim(known), -1))
        return _op.transpose(_op.cast(_op.argwhere(x), "int64"), [1, 0])


@_register()
class TopK(OnnxOpConverter):
    """topk; ``k`` is an attribute in opset 1, an input since 10 (known at import); opset
    11 adds ``largest`` and ``sorted`` (unsorted results come sorted)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        return cls._build(_need(inputs, 0, ctx, "X"), int(_attr(attrs, "k", ctx)), attrs, ctx)

    @classmethod
    def _impl_v10(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        k = ctx.static_ints(_need(inputs, 1, ctx, "K"), "K")
        if len(k) != 1:
            raise ctx.error(f"K must hold one value, got {k}")
        return cls._build(_need(inputs, 0, ctx, "X"), k[0], attrs, ctx)

    @staticmethod
    def _build(x: Expr, k: int, attrs: Attrs, ctx: Ctx) -> list[Expr]:
        shape = ctx.shape(x)
        axis = _axis(attrs.get("axis", -1), len(shape), ctx)
        extent = shape[axis]
        if k < 1 or (_static(extent) and k > extent):
            raise ctx.error(f"K={k} must be between 1 and the extent {extent} of axis {axis}")
        out = _op.topk(x, k, axis=axis, ret_type="both",
                       is_ascend=not attrs.get("largest", 1), dtype="int64")
        return [out[0], out[1]]


@_register()
class CumSum(OnnxOpConverter):
    """cumsum along the ``axis`` input; ``reverse`` runs from the end (reverse, scan,
    reverse), ``exclusive`` leaves each element out of its own sum."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "x")
        axis = int(ctx.static_scalar(_need(inputs, 1, ctx, "axis"), "axis"))
        axis = _axis(axis, ctx.rank(x), ctx)
        exclusive = bool(attrs.get("exclusive", 0))
        if not attrs.get("reverse", 0):
            return _op.cumsum(x, axis=axis, exclusive=exclusive)
        out = _op.cumsum(_op.reverse(x, axis), axis=axis, exclusive=exclusive)
        return _op.reverse(out, axis)


_RESIZE_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_RESIZE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                 "tf_half_pixel_for_nn", "tf_crop_and_resize")


@_register()
class Resize(OnnxOpConverter):
    """image.resize2d of the last two axes of a 4-D tensor (N and C are not scaled).

    Opset 10 has ``scales`` only and the asymmetric transformation; opset 11
    adds ``roi``, ``sizes``, the transformation modes, cubic interpolation and
    the nearest modes; opset 18 adds ``axes``, ``antialias`` and
    ``keep_aspect_ratio_policy``.  Relay computes an axis's scale as the ratio
    of its extents, so ``scales`` whose product with an extent is not a whole
    number (where ONNX samples with the given scale, not the ratio) are not
    supported, nor are antialiasing and the aspect-ratio policies.
    """

    @classmethod
    def _impl_v10(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        scales = ctx.static_value(_need(inputs, 1, ctx, "scales"), "scales")
        mode = attrs.get("mode", "nearest")
        return cls._build(x, [float(v) for v in scales.reshape(-1)], None, None,
                          {"mode": mode, "coordinate_transformation_mode": "asymmetric",
                           "nearest_mode": "floor"}, ctx)

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "X")
        roi_e, scales_e, sizes_e = _opt(inputs, 1), _opt(inputs, 2), _opt(inputs, 3)
        roi = None if roi_e is None else [float(v) for v in
                                          ctx.static_value(roi_e, "roi").reshape(-1)]
        scales = None if scales_e is None else [float(v) for v in
                                                ctx.static_value(scales_e, "scales").reshape(-1)]
        sizes = None if sizes_e is None else ctx.static_ints(sizes_e, "sizes")
        if scales is not None and not scales:
            scales = None  # an empty scales tensor stands for "not given" before opset 13
        if attrs.get("antialias", 0):
            raise ctx.unsupported("antialias=1 is not supported")
        policy = attrs.get("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch" and sizes is not None:
            raise ctx.unsupported(f"keep_aspect_ratio_policy={policy!r} is not supported "
                                  f"(stretch only)")
        axes = attrs.get("axes")
        if axes is not None:
            rank = ctx.rank(x)
            axes = _axes(axes, rank, ctx)
            full_roi = None if roi is None else [0.0] * rank + [1.0] * rank
            full_scales = None if scales is None else [1.0] * rank
            full_sizes = None if sizes is None else list(ctx.static_shape(x, "the input"))
            for i, a in enumerate(axes):
                if full_roi is not None:
                    full_roi[a], full_roi[a + rank] = roi[i], roi[i + len(axes)]
                if full_scales is not None:
                    full_scales[a] = scales[i]
                if full_sizes is not None:
                    full_sizes[a] = sizes[i]
            roi, scales, sizes = full_roi, full_scales, full_sizes
        return cls._build(x, scales, sizes, roi, attrs, ctx)

    @staticmethod
    def _build(x: Expr, scales, sizes, roi, attrs: Attrs, ctx: Ctx) -> Expr:
        shape = ctx.shape(x)
        if len(shape) != 4:
            raise ctx.unsupported(f"only 4-D inputs (N, C, H, W) can be resized, got rank "
                                  f"{len(shape)}")
        if any(not _static(d) for d in shape[2:]):
            raise ctx.error(f"resizing needs static H and W extents, got {tuple(shape)}")
        if sizes is not None:
            if len(sizes) != 4:
                raise ctx.error(f"sizes {sizes} should have 4 values")
            if any(_static(d) and d != n for d, n in zip(shape[:2], sizes[:2])):
                raise ctx.unsupported(f"sizes {sizes} change N or C; only H and W can be resized")
            out_hw = list(sizes[2:])
        elif scales is not None:
            if len(scales) != 4:
                raise ctx.error(f"scales {scales} should have 4 values")
            if scales[0] != 1 or scales[1] != 1:
                raise ctx.unsupported(f"scales {scales} scale N or C; only H and W can be "
                                      f"resized")
            out_hw = []
            for d, sc in zip(shape[2:], scales[2:]):
                n = math.floor(d * sc)
                if n < 1 or not math.isclose(n / d, sc, rel_tol=1e-6):
                    raise ctx.unsupported(f"scale {sc} of an extent of {d} gives {d * sc} "
                                          f"pixels, not a whole number; relaypass resizes by the "
                                          f"ratio of extents (give sizes instead)")
                out_hw.append(n)
        else:
            raise ctx.error("needs scales or sizes")
        mode = attrs.get("mode", "nearest")
        method = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic"}.get(mode)
        if method is None:
            raise ctx.error(f"unknown mode {mode!r}; expected nearest, linear or cubic")
        transform = attrs.get("coordinate_transformation_mode", "half_pixel")
        if transform not in _RESIZE_MODES:
            raise ctx.unsupported(f"coordinate_transformation_mode {transform!r} is not "
                                  f"supported ({', '.join(_RESIZE_MODES)})")
        nearest = attrs.get("nearest_mode", "round_prefer_floor")
        if nearest not in _RESIZE_NEAREST:
            raise ctx.error(f"unknown nearest_mode {nearest!r}")
        box = (0.0, 0.0, 1.0, 1.0)
        if transform == "tf_crop_and_resize":
            if roi is None or len(roi) != 8:
                raise ctx.error("tf_crop_and_resize needs a roi of 8 values (starts and ends "
                                "of the 4 axes)")
            if roi[0] != 0 or roi[1] != 0 or roi[4] != 1 or roi[5] != 1:
                raise ctx.unsupported(f"roi {roi} crops N or C; only H and W can be cropped")
            box = (roi[2], roi[3], roi[6], roi[7])
        return _op.image.resize2d(
            x, out_hw, roi=box, layout="NCHW", method=method,
            coordinate_transformation_mode=transform,
            rounding_method=nearest if method == "nearest_neighbor" else "",
            cubic_alpha=attrs.get("cubic_coeff_a", -0.75),
            cubic_exclude=int(attrs.get("exclude_outside", 0)),
            extrapolation_value=attrs.get("extrapolation_value", 0.0))


# --- reductions -----------------------------------------------------------------------------------


class _Reduce(OnnxOpConverter):
    """Reductions: ``axes`` an attribute, then an input (ReduceSum from opset 13, the others
    from 18) with ``noop_with_empty_axes``; ``keepdims`` defaults to 1."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        return cls._build(x, attrs.get("axes"), bool(attrs.get("keepdims", 1)), ctx)

    @classmethod
    def _from_input(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        axes = None if _opt(inputs, 1) is None else ctx.static_ints(inputs[1], "axes")
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return x
            axes = None
        return cls._build(x, axes, bool(attrs.get("keepdims", 1)), ctx)

    @classmethod
    def _build(cls, x: Expr, axes, keepdims: bool, ctx: Ctx) -> Expr:
        rank = ctx.rank(x)
        axes = list(range(rank)) if axes is None else _axes(axes, rank, ctx)
        return cls.reduce(x, axes, keepdims, ctx)

    @staticmethod
    def reduce(x: Expr, axes: list[int], keepdims: bool, ctx: Ctx) -> Expr:
        raise NotImplementedError


def _reduction(name: str, reduce: Callable[[Expr, list[int], bool, Ctx], Expr],
               input_axes_since: int) -> None:
    body = {"reduce": staticmethod(reduce), "__doc__": f"ONNX {name}."}
    body[f"_impl_v{input_axes_since}"] = classmethod(lambda cls, i, a, c: cls._from_input(i, a, c))
    CONVERTERS[name] = type(name, (_Reduce,), body)


def _square(x: Expr) -> Expr:
    return _op.multiply(x, x)


def _log_sum_exp(x: Expr, axes: list[int], keepdims: bool, ctx: Ctx) -> Expr:
    peak = _op.max(x, axes, keepdims=True)
    out = _op.add(_op.log(_op.sum(_op.exp(_op.subtract(x, peak)), axes, keepdims=True)), peak)
    return out if keepdims else _op.squeeze(out, axes)


_reduction("ReduceSum", lambda x, axes, k, ctx: _op.sum(x, axes, k), 13)
_reduction("ReduceMean", lambda x, axes, k, ctx: _op.mean(x, axes, k), 18)
_reduction("ReduceMax", lambda x, axes, k, ctx: _op.max(x, axes, k), 18)
_reduction("ReduceMin", lambda x, axes, k, ctx: _op.min(x, axes, k), 18)
_reduction("ReduceProd", lambda x, axes, k, ctx: _op.prod(x, axes, k), 18)
_reduction("ReduceL1", lambda x, axes, k, ctx: _op.sum(_op.abs(x), axes, k), 18)
_reduction("ReduceL2", lambda x, axes, k, ctx: _op.sqrt(_op.sum(_square(x), axes, k)), 18)
_reduction("ReduceSumSquare", lambda x, axes, k, ctx: _op.sum(_square(x), axes, k), 18)
_reduction("ReduceLogSum", lambda x, axes, k, ctx: _op.log(_op.sum(x, axes, k)), 18)
_reduction("ReduceLogSumExp", _log_sum_exp, 18)


class _ArgReduce(OnnxOpConverter):
    """argmax/argmin along one axis, cast to ONNX's int64; select_last_index from opset 12."""

    build: ClassVar[Callable[..., Expr]]

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        x = _need(inputs, 0, ctx, "data")
        axis = _axis(attrs.get("axis", 0), ctx.rank(x), ctx)
        out = cls.build(x, [axis], keepdims=bool(attrs.get("keepdims", 1)),
                        select_last_index=bool(attrs.get("select_last_index", 0)))
        return _op.cast(out, "int64")


@_register()
class ArgMax(_ArgReduce):
    build = staticmethod(_op.argmax)


@_register()
class ArgMin(_ArgReduce):
    build = staticmethod(_op.argmin)


# --- constants ------------------------------------------------------------------------------------


@_register("Constant")
class ConstantNode(OnnxOpConverter):
    """A Relay Constant; ``value`` until opset 12, which adds value_float(s), value_int(s)."""

    @classmethod
    def _impl_v1(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        return Constant(np.asarray(_attr(attrs, "value", ctx)))

    @classmethod
    def _impl_v12(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        for key, dtype in (("value", None), ("value_float", "float32"), ("value_floats", "float32"),
                           ("value_int", "int64"), ("value_ints", "int64")):
            if key in attrs:
                return Constant(np.asarray(attrs[key], dtype=dtype))
        if "sparse_value" in attrs or "value_string" in attrs or "value_strings" in attrs:
            raise ctx.unsupported("sparse and string constants are not supported")
        raise ctx.error("has no value attribute")



@_register()
class ConstantOfShape(OnnxOpConverter):
    """full(value, shape): a call, so that FoldConstant (not the importer) makes the tensor."""

    @classmethod
    def _impl_v9(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        shape_e = _need(inputs, 0, ctx, "input")
        value = attrs.get("value")
        value = np.zeros((), "float32") if value is None else np.asarray(value)
        if value.size != 1:
            raise ctx.error(f"value must hold one element, got shape {value.shape}")
        fill = Constant(value.reshape(()))
        if ctx.value(shape_e) is None:  # known when the model runs: dyn.full
            if ctx.rank(shape_e) != 1 or not _static(ctx.shape(shape_e)[0]):
                raise ctx.error(f"the shape must be a 1-D tensor of a static length, got shape "
                                f"{tuple(ctx.shape(shape_e))}")
            return _dyn.full(fill, _as_int64(shape_e, ctx), str(value.dtype))
        shape = ctx.static_ints(shape_e, "the shape")
        if any(d < 0 for d in shape):
            raise ctx.error(f"shape {shape} has a negative extent")
        return _op.full(fill, shape, str(value.dtype))


@_register()
class Range(OnnxOpConverter):
    """arange; bounds whose values are known are passed as constants, which gives the result
    a static length (arange's relation reads constant bounds only)."""

    @classmethod
    def _impl_v11(cls, inputs: Inputs, attrs: Attrs, ctx: Ctx) -> Expr:
        start = ctx.known(_need(inputs, 0, ctx, "start"))
        limit = ctx.known(_need(inputs, 1, ctx, "limit"))
        delta = ctx.known(_need(inputs, 2, ctx, "delta"))
        for what, e in (("start", start), ("limit", limit), ("delta", delta)):
            if ctx.rank(e) != 0:
                raise ctx.error(f"{what} must be a scalar, got shape {tuple(ctx.shape(e))}")
        return _op.arange(start, limit, delta, dtype=ctx.dtype(start))
