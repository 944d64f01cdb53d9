"""Seeded random arguments for a module's ``main``: what translation validation feeds both sides.

Kept apart from the hypothesis strategies so that instruments and the CLI can
draw inputs without the test extra installed.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Function
from ..ir.module import IRModule
from ..ir.shape_expr import free_size_vars, substitute
from ..ir.types import Any, TensorType, TupleType, Type

__all__ = ["random_inputs", "random_value"]


def random_value(ty: Type, rng: np.random.Generator, what: str = "value") -> object:
    """A random value of type ``ty``: a numpy array, or a tuple of values for a tuple type.

    Floats are standard normal, integers lie in [-5, 5], booleans are fair coins;
    an unknown dimension (``?``) becomes 1, and so does every size variable
    (so that dimensions sharing one agree; ``n*4`` becomes 4).
    """
    if isinstance(ty, TupleType):
        return tuple(random_value(f, rng, f"{what}[{i}]") for i, f in enumerate(ty.fields))
    if not isinstance(ty, TensorType):
        raise TypeError(f"cannot make a random input for {what} of type {ty}")
    shape = _extents(ty)
    dtype = np.dtype(ty.dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-5, 6, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    raise TypeError(f"cannot make a random input of dtype {ty.dtype} for {what}")


def random_inputs(mod: IRModule | Function, seed: int = 0) -> list[object]:
    """Random arguments for ``main``'s parameters (or a function's), in parameter order.

    The same seed always gives the same arrays.  Every parameter needs a type
    annotation, since that is where shapes and dtypes come from.
    """
    func = mod["main"] if isinstance(mod, IRModule) else mod
    if not isinstance(func, Function):
        raise TypeError(f"random_inputs needs an IRModule or a Function, not {type(mod).__name__}")
    rng = np.random.default_rng(seed)
    out: list[object] = []
    for p in func.params:
        if p.type_annotation is None:
            raise TypeError(f"parameter %{p.name_hint} has no type annotation to draw an input from")
        out.append(random_value(p.type_annotation, rng, f"%{p.name_hint}"))
    return out


def _extents(ty: TensorType) -> tuple[int, ...]:
    """The shape of a random value of ``ty``: ``Any`` and size variables taken as 1."""
    if ty.is_static:
        return ty.concrete_shape
    ones = {v: 1 for v in free_size_vars(ty.shape)}
    return tuple(1 if isinstance(d, Any) else max(int(substitute(d, ones)), 0) for d in ty.shape)
