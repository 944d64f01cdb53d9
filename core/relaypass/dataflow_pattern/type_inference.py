"""Types for the matcher and the rewriter, from the pass manager above this room.

TVM's type patterns (``has_type``, ``has_dtype``, ``has_shape``) type the
expression they look at when it has no type yet, and ``rewrite`` runs
InferType before each callback that sets ``require_type``.  Type inference
is a pass, reached through the pass registry by its role, and the registry
sits above this room; so the package root (``relaypass/__init__.py``), which
wires the layers together, hands the two functions over with
:func:`connect` when this package is first imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from relaypass.errors import RelayPassError
from relaypass.ir.expr import Expr, Function
from relaypass.ir.module import IRModule
from relaypass.ir.types import Type
from relaypass.ir.variables import free_type_vars, free_vars

__all__ = ["PatternTypeError", "connect", "infer_type_with_module", "type_of"]


class PatternTypeError(RelayPassError):
    """A pattern or a callback needs types, and they cannot be had."""


class _Connection:
    infer_type_local: Callable[[Expr], Type] | None = None
    type_inference_pass: Callable[[], Any] | None = None


def connect(infer_type_local: Callable[[Expr], Type],
            type_inference_pass: Callable[[], Any]) -> None:
    """Install ``InferTypeLocal`` and a getter of the type-inference pass (the package root)."""
    _Connection.infer_type_local = infer_type_local
    _Connection.type_inference_pass = type_inference_pass


def _missing(what: str) -> PatternTypeError:
    return PatternTypeError(
        f"{what} needs type inference, which is not connected: import relaypass "
        "(its root wires the pass of role 'type-inference' into relaypass.dataflow_pattern)"
    )


def type_of(expr: Expr) -> Type:
    """``expr``'s checked type, inferred (and kept on its nodes) when it has none yet.

    Inference fills the type of every node of ``expr`` at once, so a
    matcher asking for the types of many nodes of one program pays for one
    inference, not one per node.
    """
    if expr.has_checked_type:
        return expr.checked_type
    infer = _Connection.infer_type_local
    if infer is None:
        raise _missing("a type, dtype or shape pattern on an untyped expression")
    return infer(expr)


def infer_type_with_module(expr: Expr, mod: IRModule) -> Expr:
    """A typed copy of ``expr``, typed in (a copy of) ``mod`` so that globals resolve.

    As TVM's rewriter: the expression becomes a function of a fresh global
    (a function as it is, anything else over its free variables), the
    module is typed, and the typed function, or its body, is returned.
    """
    get_pass = _Connection.type_inference_pass
    if get_pass is None:
        raise _missing("a callback with require_type=True")
    scratch = IRModule(dict(mod.functions))
    taken = {gv.name_hint for gv in mod.get_global_vars()}
    name = "_tmp"
    while name in taken:
        name += "_"
    if isinstance(expr, Function):
        func = expr
    else:
        func = Function(free_vars(expr), expr, None, free_type_vars(expr))
    scratch[name] = func
    typed = get_pass()(scratch)[name]
    return typed if isinstance(expr, Function) else typed.body
