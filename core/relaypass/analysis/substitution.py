"""Substituting expressions for variables: Relay's ``relay.bind`` and ``bind_params_by_name``.

``bind(expr, binds)`` replaces each free occurrence of a variable that is a
key of ``binds`` by its value.  On a function, the body is rewritten and the
bound parameters leave the parameter list; variables that only the new values
bring in are appended to it, so the function stays closed over what it was
closed over before.  A variable that the expression itself binds (a let
variable, the parameter of an inner function) cannot be bound, as in Relay.

``bind_params_by_name(func, params)`` turns a name → array mapping into
constants for the function's parameters of those names, the way model
parameters are folded into a graph before constant folding.

Both walk the program with :class:`~relaypass.functor.MixedModeMutator` and
explicit stacks, so any chain length works under the default recursion limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import RelayPassError
from ..functor import MixedModeMutator
from ..ir.expr import Constant, Expr, Function, Let, Var
from ..ir.expr_builders import const
from ..ir.fields import with_fields
from ..ir.summary import short_text
from ..ir.traversal import post_order_visit
from ..ir.variables import free_vars

__all__ = ["BindError", "bind", "bind_params_by_name"]


class BindError(RelayPassError, ValueError):
    """A substitution Relay refuses: an inner binder, an ambiguous name, a lost free variable."""


class _Substitute(MixedModeMutator):
    """Rebuilds an expression with every use of a key of ``binds`` replaced by its value."""

    def __init__(self, binds: Mapping[Var, Expr]):
        super().__init__()
        self._binds = binds

    def visit_var(self, var: Var) -> Expr:
        return self._binds.get(var, var)


def _check_binds(binds: Mapping[Any, Any]) -> dict[Var, Expr]:
    if not isinstance(binds, Mapping):
        raise TypeError(f"bind expects a mapping from Var to Expr, got {type(binds).__name__}")
    checked: dict[Var, Expr] = {}
    for key, value in binds.items():
        if not isinstance(key, Var):
            raise TypeError(f"bind: a key of the bindings is a {type(key).__name__}, not a Var")
        if not isinstance(value, Expr):
            raise TypeError(
                f"bind: the value bound to %{key.name_hint} is a {type(value).__name__}, "
                "not a Relay expression (wrap arrays with relay.const)"
            )
        checked[key] = value
    return checked


def _refuse_inner_binders(expr: Expr, binds: Mapping[Var, Expr]) -> None:
    """Relay cannot bind a variable that ``expr`` itself binds; say which binder holds it."""

    def check(node: Expr) -> None:
        for v in type(node)._layout_.bound_vars(node):
            if v in binds:
                if isinstance(node, Let):
                    what = "the variable of a let"
                elif isinstance(node, Function):
                    what = "a parameter of an inner function"
                else:
                    what = f"a variable bound by a {type(node).__name__}"
                raise BindError(
                    f"cannot bind %{v.name_hint}: it is {what} inside the expression "
                    f"({short_text(node)}); only free variables and the parameters of the "
                    "function passed to bind can be bound"
                )

    post_order_visit(expr, check)


def bind(expr: Expr, binds: Mapping[Var, Expr]) -> Expr:
    """Substitute ``binds[v]`` for every free use of each variable ``v`` in ``expr``.

    On a :class:`Function`, its parameters that are keys of ``binds`` are
    removed (the others keep their order) and the variables the substituted
    values introduce are appended as new parameters.  An unchanged function is
    returned as is.  Binding a variable that ``expr`` binds itself, or a free
    variable of a function that is not one of its parameters, raises
    :class:`BindError`, as Relay refuses both.
    """
    if not isinstance(expr, Expr):
        raise TypeError(f"bind expects a Relay expression, got {type(expr).__name__}")
    binds = _check_binds(binds)
    if not isinstance(expr, Function):
        _refuse_inner_binders(expr, binds)
        return _Substitute(binds).visit(expr)

    _refuse_inner_binders(expr.body, binds)
    body = _Substitute(binds).visit(expr.body)
    params = [p for p in expr.params if p not in binds]
    if body is expr.body and len(params) == len(expr.params):
        return expr
    outer = set(free_vars(expr))
    candidate = with_fields(expr, params=params, body=body)
    params.extend(v for v in free_vars(candidate) if v not in outer)
    result = with_fields(expr, params=params, body=body)
    remaining = free_vars(result)
    if len(remaining) != len(outer):
        lost = [v.name_hint for v in outer if v not in set(remaining)]
        names = ", ".join(f"%{n}" for n in lost)
        raise BindError(
            f"cannot bind {names}: free in the function but not among its parameters; "
            "bind the function's body instead, or make the variable a parameter"
        )
    return result


def _as_constant(name: str, value: Any) -> Constant:
    """The constant a parameter value becomes; an array keeps its dtype."""
    if isinstance(value, Constant):
        return value
    dtype = getattr(value, "dtype", None)
    try:
        return const(value, dtype=str(dtype)) if dtype is not None else const(value)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"bind_params_by_name: the value of parameter {name!r} is a "
            f"{type(value).__name__}, not an array: {err}"
        ) from None


def bind_params_by_name(func: Function, params: Mapping[str, Any]) -> Function:
    """Bind the parameters of ``func`` named in ``params`` to constants holding the arrays.

    Names that are not parameters of ``func`` are ignored.  If a named
    parameter's name is shared by several parameters, which one is meant is
    ambiguous and :class:`BindError` is raised, as in Relay.
    """
    if not isinstance(func, Function):
        raise TypeError(
            f"bind_params_by_name expects a Relay Function, got {type(func).__name__}"
        )
    by_name: dict[str, Var] = {}
    repeated: set[str] = set()
    for p in func.params:
        if p.name_hint in by_name:
            repeated.add(p.name_hint)
        else:
            by_name[p.name_hint] = p
    # Every value becomes a constant first (a bad one is reported even under an unknown name).
    constants = {name: _as_constant(name, value) for name, value in params.items()}
    binds: dict[Var, Expr] = {}
    for name, constant in constants.items():
        param = by_name.get(name)
        if param is None:
            continue
        if name in repeated:
            raise BindError(
                f"cannot bind parameter {name!r} by name: the function has several "
                f"parameters named {name!r}"
            )
        binds[param] = constant
    result = bind(func, binds)
    assert isinstance(result, Function)
    return result
