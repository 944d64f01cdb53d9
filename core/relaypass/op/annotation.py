"""Annotation operators: calls that carry a hint for passes and compute their argument unchanged.

``annotation.stop_fusion(x)`` tells FuseOps not to fuse ``x`` with what uses
it; FuseOps removes the call once it has split the groups there.  As in Relay
it is opaque (nothing fuses across it), has the type of its argument,
whatever that type is, and evaluates to its argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, register_op
from ..ir.types import Type
from .builder import call

__all__ = ["stop_fusion"]


def _same_type_rel(arg_types: Sequence[Type], attrs: Attrs | None) -> Type:
    return arg_types[0]


def _identity_kernel(args: Sequence[Any], attrs: Attrs | None) -> Any:
    return args[0]


register_op(
    "annotation.stop_fusion", num_inputs=1, type_relation=_same_type_rel,
    kernel=_identity_kernel, pattern=OpPattern.OPAQUE,
    description="Annotate an expression so that it is not fused with the expressions that use it.",
)


def stop_fusion(data: Expr) -> Call:
    """``data``, annotated so that operator fusion keeps it apart from its users."""
    return call("annotation.stop_fusion", [data])
