"""The helpers of TVM's ``relay.frontend.common`` that converters use on partial graphs.

``infer_type(node)`` types an intermediate expression (in a module of its
own, with ``mod``'s functions), ``infer_shape(node)`` reads its shape as ints,
and ``infer_value(node, params)`` evaluates it given values for its free
variables.  Typing uses the pass whose manifest declares ``role =
"type-inference"``; evaluation the numpy interpreter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..interp import create_executor
from ..ir.expr import Expr, Function
from ..ir.module import IRModule
from ..ir.types import Any as AnyDim
from ..ir.variables import free_vars
from ..transform import get_pass_by_role

__all__ = ["get_const_tuple", "infer_shape", "infer_type", "infer_value"]


def infer_type(node: Expr, mod: IRModule | None = None) -> Expr:
    """``node`` typed: a function comes back as the typed function, anything else as its body.

    With a module ``mod``, its functions are in scope; as in TVM, ``mod``'s
    ``main`` is replaced by a function of ``node``'s free variables.
    """
    typer = get_pass_by_role("type-inference")
    if isinstance(mod, IRModule):
        mod["main"] = Function(free_vars(node), node)
        return typer(mod)["main"].body
    new_mod = IRModule.from_expr(node)
    if mod is not None:
        new_mod.update(mod)
    entry = typer(new_mod)["main"]
    return entry if isinstance(node, Function) else entry.body


def get_const_tuple(shape: Any) -> tuple:
    """A shape as a tuple of ints (unknown dimensions stay ``Any``)."""
    return tuple(d if isinstance(d, AnyDim) else int(d) for d in shape)


def infer_shape(inputs: Expr, mod: IRModule | None = None) -> Any:
    """The shape of ``inputs``' type as ints; its type when it is not a tensor."""
    checked_type = infer_type(inputs, mod=mod).checked_type
    if hasattr(checked_type, "shape"):
        return get_const_tuple(checked_type.shape)
    return checked_type


def infer_value(input_val: Expr, params: Mapping[str, Any], mod: IRModule | None = None) -> Any:
    """The value of ``input_val``, its free variables taken by name from ``params``."""
    missing = [v.name_hint for v in free_vars(input_val) if v.name_hint not in params]
    if missing:
        raise ValueError(
            "All inputs to infer must be available in params "
            f"(missing: {', '.join('%' + n for n in missing)})"
        )
    func = Function(free_vars(input_val), input_val)
    if isinstance(mod, IRModule):
        mod["main"] = func
    else:
        mod = IRModule.from_expr(func)
    inputs = [params[p.name_hint] for p in mod["main"].params]
    return create_executor("debug", mod=mod).evaluate()(*inputs)
