"""Elementwise and broadcasting operators, and the operators that create tensors.

Integer semantics follow TVM, not numpy: ``divide`` and ``mod`` truncate
toward zero (C semantics), ``floor_divide``/``floor_mod`` round toward minus
infinity, and rounding functions leave integers as they are.  Every kernel
returns an array of exactly the dtype its relation promises.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..ir.attrs import Attrs
from ..ir.dtype import numpy_dtype
from ..ir.expr import Call, Constant, Expr
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import TensorType, Type
from . import dynamic
from .builder import call, dynamic_arg, expr_arg, static_shape
from .relations import (
    INT_DTYPES,
    attr_bool,
    attr_dtype,
    attr_ints,
    attr_number,
    broadcast_rel,
    broadcast_shapes,
    expect_scalar,
    expect_tensor,
    fail,
    identity_rel,
)

__all__ = [
    "add", "subtract", "multiply", "divide", "floor_divide", "mod", "floor_mod", "power",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_not", "negative", "abs", "exp", "log",
    "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "floor", "ceil", "round", "trunc", "sign", "clip",
    "cast", "cast_like", "where", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "copy", "left_shift", "right_shift", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "asinh", "acosh", "atanh", "isnan", "isinf", "isfinite", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "trilu",
]


# --- kernels ------------------------------------------------------------------------------------


def _is_int(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu"


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _is_int(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b)
            r = np.remainder(a, b)
        # numpy floors; C (and TVM) truncates toward zero.
        fix = (r != 0) & ((a < 0) != (b < 0))
        return np.where(fix, q + 1, q).astype(a.dtype, copy=False)
    return np.divide(a, b)


def _floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _is_int(a):
        return np.floor_divide(a, b)
    return np.floor(np.divide(a, b))


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _is_int(a) and np.any(b < 0):
        # numpy refuses negative integer exponents; C's pow truncates the real result.
        return np.trunc(np.power(a.astype(np.float64), b)).astype(a.dtype)
    return np.power(a, b)


def _shift(op_name: str, fn):
    """A bit shift: numpy's, which (like TVM's code generator) wants integer operands.

    The relation is Relay's BroadcastRel, which lets a float shift type-check;
    evaluating one is an error naming the operator, as compiling it is in TVM.
    """

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind not in "iub":
            raise ValueError(f"{op_name}: operands must have an integer dtype, got {a.dtype}")
        return fn(a, b)

    return kernel


def _bitwise(op_name: str, fn):
    """A bitwise operator: numpy's, on integer or boolean operands only (as TVM's code
    generator; the relation, Relay's, does not look at the dtype)."""

    def kernel(*arrays: np.ndarray) -> np.ndarray:
        if arrays[0].dtype.kind not in "iub":
            raise ValueError(f"{op_name}: operands must have an integer or boolean dtype, got "
                             f"{arrays[0].dtype}")
        return fn(*arrays)

    return kernel


def _logical(fn):
    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return fn(a, b).astype(a.dtype, copy=False)

    return kernel


def _keep_int(fn):
    """A rounding function that is the identity on integers (as TVM's)."""

    def kernel(a: np.ndarray) -> np.ndarray:
        return a.copy() if a.dtype.kind in "iub" else fn(a)

    return kernel


def _sigmoid(a: np.ndarray) -> np.ndarray:
    one = a.dtype.type(1)
    return one / (one + np.exp(-a))


def _rsqrt(a: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(a))


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf(a: np.ndarray) -> np.ndarray:
    """erf to double precision without scipy: a Taylor series below 2.5, erfc's continued
    fraction above, both evaluated for the whole array at once."""
    x = np.asarray(a, dtype=np.float64)
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax < 2.5
    xs = ax[small]
    term = xs.copy()
    total = xs.copy()
    x2 = xs * xs
    for n in range(1, 60):
        term = term * (-x2) / n
        total += term / (2 * n + 1)
    out[small] = total * _TWO_OVER_SQRT_PI
    large = ~small
    xl = ax[large]
    frac = np.zeros_like(xl)
    with np.errstate(invalid="ignore"):
        for k in range(80, 0, -1):
            frac = (k / 2.0) / (xl + frac)
        out[large] = 1.0 - np.exp(-xl * xl) / math.sqrt(math.pi) / (xl + frac)
    return np.copysign(out, x).astype(a.dtype, copy=False)


def _binary_kernel(fn):
    def kernel(args, attrs):
        a = args[0]
        with np.errstate(all="ignore"):
            return np.asarray(fn(a, args[1]), dtype=a.dtype)

    return kernel


def _compare_kernel(fn):
    def kernel(args, attrs):
        return np.asarray(fn(args[0], args[1]))

    return kernel


def _unary_kernel(fn):
    def kernel(args, attrs):
        a = args[0]
        with np.errstate(all="ignore"):
            return np.asarray(fn(a), dtype=a.dtype)

    return kernel


_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _trunc_divide,
    "floor_divide": _floor_divide,
    "mod": np.fmod,
    "floor_mod": np.mod,
    "power": _power,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "logical_and": _logical(np.logical_and),
    "logical_or": _logical(np.logical_or),
    "left_shift": _shift("left_shift", np.left_shift),
    "right_shift": _shift("right_shift", np.right_shift),
    "bitwise_and": _bitwise("bitwise_and", np.bitwise_and),
    "bitwise_or": _bitwise("bitwise_or", np.bitwise_or),
    "bitwise_xor": _bitwise("bitwise_xor", np.bitwise_xor),
}
_COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}
_UNARY = {
    "negative": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "floor": _keep_int(np.floor),
    "ceil": _keep_int(np.ceil),
    "round": _keep_int(np.round),
    "trunc": _keep_int(np.trunc),
    "logical_not": lambda a: np.logical_not(a).astype(a.dtype, copy=False),
    "copy": np.copy,
    "zeros_like": np.zeros_like,
    "ones_like": np.ones_like,
    "bitwise_not": _bitwise("bitwise_not", np.invert),
}
_FLOAT_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "erf": _erf,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
}
# Relay's IdentityCompRel operators: the argument's shape, a bool result.
_CLASSIFY = {
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
}

for _name, _fn in _BINARY.items():
    register_op(
        _name, num_inputs=2, type_relation=broadcast_rel(_name), kernel=_binary_kernel(_fn),
        pattern=OpPattern.BROADCAST, description=f"Elementwise {_name} with numpy broadcasting.",
    )
for _name, _fn in _COMPARE.items():
    register_op(
        _name, num_inputs=2, type_relation=broadcast_rel(_name, "bool"),
        kernel=_compare_kernel(_fn), pattern=OpPattern.BROADCAST,
        description=f"Elementwise {_name} comparison with broadcasting; the result is bool.",
    )
for _name, _fn in _UNARY.items():
    register_op(
        _name, num_inputs=1, type_relation=identity_rel(_name), kernel=_unary_kernel(_fn),
        pattern=OpPattern.ELEMWISE, description=f"Elementwise {_name}.",
    )
for _name, _fn in _FLOAT_UNARY.items():
    register_op(
        _name, num_inputs=1, type_relation=identity_rel(_name), kernel=_unary_kernel(_fn),
        pattern=OpPattern.ELEMWISE,
        description=f"Elementwise {_name} (any dtype type-checks, as Relay's IdentityRel; an "
        "integer result is the real result cast to the dtype).",
    )



def _classify_rel(op_name: str):
    what = f"{op_name}: the argument"

    def rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
        t = expect_tensor(arg_types[0], what)
        return TensorType(t.shape, "bool")

    return rel


def _classify_kernel(fn):
    def kernel(args, attrs):
        a = args[0]
        if a.dtype.kind in "iub":  # integers are never NaN nor infinite
            return np.full(a.shape, fn is np.isfinite)
        return np.asarray(fn(a))

    return kernel


for _name, _fn in _CLASSIFY.items():
    register_op(
        _name, num_inputs=1, type_relation=_classify_rel(_name), kernel=_classify_kernel(_fn),
        pattern=OpPattern.ELEMWISE, description=f"Elementwise {_name}; the result is bool.",
    )


# --- clip, cast, where --------------------------------------------------------------------------


def _clip_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "clip: the argument")
    attr_number(attrs.a_min, "a_min", "clip")
    attr_number(attrs.a_max, "a_max", "clip")
    return t


def _clip_kernel(args, attrs):
    a = args[0]
    lo, hi = float(attrs.a_min), float(attrs.a_max)
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        # TVM casts the bounds to the tensor's dtype, truncating toward zero.
        lo = int(np.clip(np.trunc(lo), info.min, info.max)) if math.isfinite(lo) else (
            info.min if lo < 0 else info.max)
        hi = int(np.clip(np.trunc(hi), info.min, info.max)) if math.isfinite(hi) else (
            info.min if hi < 0 else info.max)
    return np.asarray(np.clip(a, a.dtype.type(lo), a.dtype.type(hi)), dtype=a.dtype)


register_op(
    "clip", num_inputs=1, type_relation=_clip_rel, kernel=_clip_kernel,
    pattern=OpPattern.ELEMWISE, attrs={"a_min": REQUIRED, "a_max": REQUIRED},
    attrs_type_key="relay.attrs.ClipAttrs",
    description="Clamp every element into [a_min, a_max] (bounds cast to the tensor's dtype).",
)


def _cast_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "cast: the argument")
    return TensorType(t.shape, attr_dtype(attrs.dtype, "dtype", "cast"))


def _cast_kernel(args, attrs):
    a = args[0]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(a.astype(numpy_dtype(attrs.dtype)))


register_op(
    "cast", num_inputs=1, type_relation=_cast_rel, kernel=_cast_kernel,
    pattern=OpPattern.ELEMWISE, attrs={"dtype": REQUIRED}, attrs_type_key="relay.attrs.CastAttrs",
    description="Convert every element to another dtype.",
)


def _cast_like_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    t = expect_tensor(arg_types[0], "cast_like: data")
    like = expect_tensor(arg_types[1], "cast_like: dtype_like")
    return TensorType(t.shape, like.dtype)


def _cast_like_kernel(args, attrs):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(args[0].astype(args[1].dtype))


register_op(
    "cast_like", num_inputs=2, type_relation=_cast_like_rel, kernel=_cast_like_kernel,
    pattern=OpPattern.ELEMWISE,
    description="Convert every element to the dtype of a second tensor (whose shape is free).",
)


def _where_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    cond = expect_tensor(arg_types[0], "where: the condition")
    x = expect_tensor(arg_types[1], "where: x")
    y = expect_tensor(arg_types[2], "where: y")
    if x.dtype != y.dtype:
        raise fail("where", f"x and y must have the same dtype, got {x.dtype} and {y.dtype}")
    xy = broadcast_shapes(x.shape, y.shape, "where")
    return TensorType(broadcast_shapes(cond.shape, xy, "where"), x.dtype)


register_op(
    "where", num_inputs=3, type_relation=_where_rel,
    kernel=lambda args, attrs: np.asarray(np.where(args[0] != 0, args[1], args[2]), dtype=args[1].dtype),
    pattern=OpPattern.BROADCAST,
    description="Pick from x where the condition is non-zero, else from y, with broadcasting.",
)


# --- trilu -------------------------------------------------------------------------------------


def _trilu_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    t = expect_tensor(arg_types[0], "trilu: data")
    k = expect_tensor(arg_types[1], "trilu: k")
    expect_scalar(k, "trilu", "k")
    if k.dtype not in INT_DTYPES:
        raise fail("trilu", f"k must have an integer dtype, got {k.dtype}")
    if t.ndim < 2:
        raise fail("trilu", f"data must have rank 2 or more (matrices), got rank {t.ndim}")
    attr_bool(attrs.upper, "upper", "trilu")
    return t


def _trilu_kernel(args, attrs):
    a, k = args[0], int(args[1])
    rows, cols = a.shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # column minus row
    keep = offset >= k if attrs.upper else offset <= k
    return np.where(keep, a, np.zeros((), a.dtype))


register_op(
    "trilu", num_inputs=2, type_relation=_trilu_rel, kernel=_trilu_kernel,
    pattern=OpPattern.ELEMWISE, attrs={"upper": True}, attrs_type_key="relay.attrs.TriluAttrs",
    description="The upper (or lower) triangle of each matrix of the last two axes, from the "
    "k-th diagonal on; the other elements become zero.",
)


# --- creating tensors ---------------------------------------------------------------------------


def _init_rel(op_name: str):
    def rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
        shape = attr_ints(attrs.shape, "shape", op_name, minimum=0)
        return TensorType(shape, attr_dtype(attrs.dtype, "dtype", op_name))

    return rel


def _full_rel(arg_types: Sequence[Type], attrs: Attrs) -> Type:
    fill = expect_tensor(arg_types[0], "full: fill_value")
    expect_scalar(fill, "full", "fill_value")
    shape = attr_ints(attrs.shape, "shape", "full", minimum=0)
    dtype = attr_dtype(attrs.dtype, "dtype", "full", allow_empty=True)
    return TensorType(shape, dtype or fill.dtype)


def _full_like_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    data = expect_tensor(arg_types[0], "full_like: data")
    fill = expect_tensor(arg_types[1], "full_like: fill_value")
    expect_scalar(fill, "full_like", "fill_value")
    return data


_INIT_ATTRS = {"shape": REQUIRED, "dtype": "float32"}

register_op(
    "zeros", num_inputs=0, type_relation=_init_rel("zeros"),
    kernel=lambda args, attrs: np.zeros(attrs.shape, dtype=numpy_dtype(attrs.dtype)),
    pattern=OpPattern.ELEMWISE, attrs=_INIT_ATTRS, attrs_type_key="relay.attrs.InitOpAttrs",
    description="A tensor of zeros of a static shape.",
)
register_op(
    "ones", num_inputs=0, type_relation=_init_rel("ones"),
    kernel=lambda args, attrs: np.ones(attrs.shape, dtype=numpy_dtype(attrs.dtype)),
    pattern=OpPattern.ELEMWISE, attrs=_INIT_ATTRS, attrs_type_key="relay.attrs.InitOpAttrs",
    description="A tensor of ones of a static shape.",
)
register_op(
    "full", num_inputs=1, type_relation=_full_rel,
    kernel=lambda args, attrs: np.full(
        attrs.shape, args[0], dtype=numpy_dtype(attrs.dtype) if attrs.dtype else args[0].dtype
    ),
    pattern=OpPattern.ELEMWISE, attrs={"shape": REQUIRED, "dtype": ""},
    attrs_type_key="relay.attrs.InitOpAttrs",
    description="A tensor of a static shape filled with a scalar.",
)
register_op(
    "full_like", num_inputs=2, type_relation=_full_like_rel,
    kernel=lambda args, attrs: np.full(args[0].shape, args[1], dtype=args[0].dtype),
    pattern=OpPattern.ELEMWISE,
    description="A tensor shaped like data, filled with a scalar.",
)


# --- constructors -------------------------------------------------------------------------------


def add(lhs: Expr, rhs: Expr) -> Call:
    """Elementwise sum with numpy broadcasting."""
    return call("add", [lhs, rhs])


def subtract(lhs: Expr, rhs: Expr) -> Call:
    return call("subtract", [lhs, rhs])


def multiply(lhs: Expr, rhs: Expr) -> Call:
    return call("multiply", [lhs, rhs])


def divide(lhs: Expr, rhs: Expr) -> Call:
    """Division; truncates toward zero on integers, as TVM does."""
    return call("divide", [lhs, rhs])


def floor_divide(lhs: Expr, rhs: Expr) -> Call:
    return call("floor_divide", [lhs, rhs])


def mod(lhs: Expr, rhs: Expr) -> Call:
    """Remainder with the sign of ``lhs`` (C's fmod), as TVM's ``mod``."""
    return call("mod", [lhs, rhs])


def floor_mod(lhs: Expr, rhs: Expr) -> Call:
    """Remainder with the sign of ``rhs`` (Python's ``%``)."""
    return call("floor_mod", [lhs, rhs])


def power(lhs: Expr, rhs: Expr) -> Call:
    return call("power", [lhs, rhs])


def maximum(lhs: Expr, rhs: Expr) -> Call:
    return call("maximum", [lhs, rhs])


def minimum(lhs: Expr, rhs: Expr) -> Call:
    return call("minimum", [lhs, rhs])


def equal(lhs: Expr, rhs: Expr) -> Call:
    return call("equal", [lhs, rhs])


def not_equal(lhs: Expr, rhs: Expr) -> Call:
    return call("not_equal", [lhs, rhs])


def less(lhs: Expr, rhs: Expr) -> Call:
    return call("less", [lhs, rhs])


def less_equal(lhs: Expr, rhs: Expr) -> Call:
    return call("less_equal", [lhs, rhs])


def greater(lhs: Expr, rhs: Expr) -> Call:
    return call("greater", [lhs, rhs])


def greater_equal(lhs: Expr, rhs: Expr) -> Call:
    return call("greater_equal", [lhs, rhs])


def logical_and(lhs: Expr, rhs: Expr) -> Call:
    return call("logical_and", [lhs, rhs])


def logical_or(lhs: Expr, rhs: Expr) -> Call:
    return call("logical_or", [lhs, rhs])


def logical_not(data: Expr) -> Call:
    return call("logical_not", [data])


def negative(data: Expr) -> Call:
    return call("negative", [data])


def abs(data: Expr) -> Call:
    return call("abs", [data])


def exp(data: Expr) -> Call:
    return call("exp", [data])


def log(data: Expr) -> Call:
    return call("log", [data])


def sqrt(data: Expr) -> Call:
    return call("sqrt", [data])


def rsqrt(data: Expr) -> Call:
    """``1 / sqrt(data)``."""
    return call("rsqrt", [data])


def sigmoid(data: Expr) -> Call:
    return call("sigmoid", [data])


def tanh(data: Expr) -> Call:
    return call("tanh", [data])


def erf(data: Expr) -> Call:
    return call("erf", [data])


def floor(data: Expr) -> Call:
    return call("floor", [data])


def ceil(data: Expr) -> Call:
    return call("ceil", [data])


def round(data: Expr) -> Call:
    """Round half to even, as TVM's ``round``."""
    return call("round", [data])


def trunc(data: Expr) -> Call:
    return call("trunc", [data])


def sign(data: Expr) -> Call:
    return call("sign", [data])


def clip(a: Expr, a_min: float, a_max: float) -> Call:
    """Clamp every element of ``a`` into ``[a_min, a_max]``."""
    return call("clip", [a], a_min=a_min, a_max=a_max)


def cast(data: Expr, dtype: str) -> Call:
    return call("cast", [data], dtype=str(dtype))


def cast_like(data: Expr, dtype_like: Expr) -> Call:
    """``data`` cast to the dtype of ``dtype_like``; only its type matters, not its values."""
    return call("cast_like", [data, dtype_like])


def left_shift(lhs: Expr, rhs: Expr) -> Call:
    """``lhs << rhs`` elementwise, with numpy broadcasting."""
    return call("left_shift", [lhs, rhs])


def right_shift(lhs: Expr, rhs: Expr) -> Call:
    """``lhs >> rhs`` elementwise (arithmetic for signed dtypes), with numpy broadcasting."""
    return call("right_shift", [lhs, rhs])


def _unary_constructor(name: str):
    def build(data: Expr) -> Call:
        return call(name, [data])

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Elementwise ``{name}``."
    return build


sin = _unary_constructor("sin")
cos = _unary_constructor("cos")
tan = _unary_constructor("tan")
asin = _unary_constructor("asin")
acos = _unary_constructor("acos")
atan = _unary_constructor("atan")
sinh = _unary_constructor("sinh")
cosh = _unary_constructor("cosh")
asinh = _unary_constructor("asinh")
acosh = _unary_constructor("acosh")
atanh = _unary_constructor("atanh")
isnan = _unary_constructor("isnan")
isinf = _unary_constructor("isinf")
isfinite = _unary_constructor("isfinite")
bitwise_not = _unary_constructor("bitwise_not")


def bitwise_and(lhs: Expr, rhs: Expr) -> Call:
    return call("bitwise_and", [lhs, rhs])


def bitwise_or(lhs: Expr, rhs: Expr) -> Call:
    return call("bitwise_or", [lhs, rhs])


def bitwise_xor(lhs: Expr, rhs: Expr) -> Call:
    return call("bitwise_xor", [lhs, rhs])


def trilu(data: Expr, k=0, upper: bool = True) -> Call:
    """The upper (``upper=True``) or lower triangle of the matrices of ``data`` from the
    ``k``-th diagonal; ``k`` is an expression (an int is made an int32 constant, as in Relay)."""
    if not isinstance(k, Expr):
        k = Constant(np.asarray(k, dtype="int32"))
    return call("trilu", [data, k], upper=bool(upper))


def where(condition: Expr, x: Expr, y: Expr) -> Call:
    """Elements of ``x`` where ``condition`` is non-zero, of ``y`` elsewhere, broadcast."""
    return call("where", [condition, x, y])


def zeros(shape, dtype: str = "float32") -> Call:
    """A tensor of zeros; ``shape`` is static (ints, or a Constant holding them), or an
    expression, which makes ``dyn.zeros``."""
    if dynamic_arg(shape):
        return dynamic.zeros(shape, dtype)
    return call("zeros", [], shape=static_shape(shape, "zeros"), dtype=str(dtype))


def ones(shape, dtype: str = "float32") -> Call:
    if dynamic_arg(shape):
        return dynamic.ones(shape, dtype)
    return call("ones", [], shape=static_shape(shape, "ones"), dtype=str(dtype))


def full(fill_value: Expr, shape=(), dtype: str = "") -> Call:
    """A tensor filled with the scalar ``fill_value``; dtype "" keeps the fill value's."""
    expr_arg(fill_value, "full", "fill_value")
    if dynamic_arg(shape):
        return dynamic.full(fill_value, shape, dtype)
    return call("full", [fill_value], shape=static_shape(shape, "full"), dtype=str(dtype))


def zeros_like(data: Expr) -> Call:
    return call("zeros_like", [data])


def ones_like(data: Expr) -> Call:
    return call("ones_like", [data])


def full_like(data: Expr, fill_value: Expr) -> Call:
    return call("full_like", [data, fill_value])


def copy(data: Expr) -> Call:
    return call("copy", [data])

