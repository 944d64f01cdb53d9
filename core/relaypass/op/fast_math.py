"""Fast approximations of exp, tanh and erf: ``fast_exp``, ``fast_tanh``, ``fast_erf``.

The FastMath pass swaps the exact operators for these.  Their kernels compute
what TVM's do, so a program behaves after FastMath as it did on TVM (within
float32 rounding), not merely "close to exp":

* ``fast_exp`` (float32): the argument clamped to about +-88.38, split into
  ``n = floor(x*log2(e) + 1/2)`` and ``f = x - n*ln(2)``; ``e^f`` from a
  degree-7 polynomial, ``2^n`` by writing ``n + 127`` into the float's
  exponent bits; the result is at least the argument (TVM's guard).
* ``fast_tanh`` (float32): Eigen's rational approximation, odd degree-13 over
  even degree-6, on the argument clamped to [-9, 9].
* ``fast_erf`` (float32 and float16): Eigen's rational approximation on
  [-4, 4]; float16 is computed in float32 and rounded once.
* ``nn.fast_softmax`` (in :mod:`relaypass.op.nn.activation`) is softmax with
  ``fast_exp``.

Other dtypes use the exact functions, as TVM's kernels fall back to them.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, register_op
from .builder import call
from .relations import identity_rel
from .tensor import _erf

__all__ = ["fast_erf", "fast_exp", "fast_tanh"]

_F32 = np.float32

_EXP_POLY = [_F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                               4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)]
_TANH_ALPHA = [_F32(c) for c in (-2.76076847742355e-16, 2.00018790482477e-13,
                                 -8.60467152213735e-11, 5.12229709037114e-08,
                                 1.48572235717979e-05, 6.37261928875436e-04,
                                 4.89352455891786e-03)]
_TANH_BETA = [_F32(c) for c in (1.19825839466702e-06, 1.18534705686654e-04,
                                2.26843463243900e-03, 4.89352518554385e-03)]
_ERF_ALPHA = [_F32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08,
                                -2.10102402082508e-06, -5.69250639462346e-05,
                                -7.34990630326855e-04, -2.95459980854025e-03,
                                -1.60960333262415e-02)]
_ERF_BETA = [_F32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04,
                               -1.68282697438203e-03, -7.37332916720468e-03,
                               -1.42647390514189e-02)]


def _horner(x: np.ndarray, coefficients: list[np.float32]) -> np.ndarray:
    """``c0*x^k + ... + ck`` by Horner's rule, in the order TVM evaluates it (highest first)."""
    out = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        out = out * x + c
    return out


def _fast_exp_f32(a: np.ndarray) -> np.ndarray:
    x = np.minimum(np.maximum(a, _F32(-88.3762626647949)), _F32(88.3762626647950))
    n = np.floor(x * _F32(1.44269504088896341) + _F32(0.5))
    f = x - n * _F32(0.6931471805599453)
    y = _horner(f, _EXP_POLY) * f * f + f + _F32(1.0)
    two_n = ((n + _F32(127.0)).astype(np.int32) << 23).view(np.float32)
    return np.maximum(two_n * y, a)


def _fast_tanh_f32(a: np.ndarray) -> np.ndarray:
    x = np.maximum(_F32(-9.0), np.minimum(_F32(9.0), a))
    x2 = x * x
    return x * _horner(x2, _TANH_ALPHA) / _horner(x2, _TANH_BETA)


def _fast_erf_f32(a: np.ndarray) -> np.ndarray:
    x = np.maximum(np.minimum(a, _F32(4.0)), _F32(-4.0))
    x2 = x * x
    return x * _horner(x2, _ERF_ALPHA) / _horner(x2, _ERF_BETA)


def fast_exp_values(a: np.ndarray) -> np.ndarray:
    """``fast_exp`` of an array: TVM's approximation for float32, the exact exp otherwise."""
    with np.errstate(all="ignore"):
        if a.dtype == np.float32:
            return _fast_exp_f32(a)
        return np.asarray(np.exp(a), dtype=a.dtype)


def _fast_exp_kernel(args, attrs):
    return fast_exp_values(args[0])


def _fast_tanh_kernel(args, attrs):
    a = args[0]
    with np.errstate(all="ignore"):
        if a.dtype == np.float32:
            return _fast_tanh_f32(a)
        return np.asarray(np.tanh(a), dtype=a.dtype)


def _fast_erf_kernel(args, attrs):
    a = args[0]
    with np.errstate(all="ignore"):
        if a.dtype in (np.float32, np.float16):
            return _fast_erf_f32(a.astype(np.float32)).astype(a.dtype)
        return np.asarray(_erf(a), dtype=a.dtype)


for _name, _kernel, _exact in (("fast_exp", _fast_exp_kernel, "exp"),
                               ("fast_tanh", _fast_tanh_kernel, "tanh"),
                               ("fast_erf", _fast_erf_kernel, "erf")):
    register_op(
        _name, num_inputs=1, type_relation=identity_rel(_name), kernel=_kernel,
        pattern=OpPattern.ELEMWISE,
        description=f"An approximation of {_exact}, computed with TVM's algorithm.",
    )

def fast_exp(data: Expr) -> Call:
    return call("fast_exp", [data])


def fast_tanh(data: Expr) -> Call:
    return call("fast_tanh", [data])


def fast_erf(data: Expr) -> Call:
    return call("fast_erf", [data])

