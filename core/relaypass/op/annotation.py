"""Annotation operators: calls that carry a hint for passes and compute their argument unchanged.

``annotation.stop_fusion(x)`` tells FuseOps not to fuse ``x`` with what uses
it; FuseOps removes the call once it has split the groups there.  As in Relay
it is opaque (nothing fuses across it), has the type of its argument,
whatever that type is, and evaluates to its argument.

``annotation.compiler_begin(x, compiler)`` and ``annotation.compiler_end(x,
compiler)`` mark the edges of a region that an external compiler is meant to
handle (Relay's "bring your own codegen" flow: AnnotateTarget inserts them,
MergeCompilerRegions joins regions, PartitionGraph lifts each region into a
global function and removes them).  They have the same attributes
(``compiler``, a string, Relay's ``CompilerAttrs``), the type of their
argument and evaluate to it, so an annotated program still runs on the
interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import AttrsError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr
from ..ir.op import REQUIRED, OpPattern, register_op
from ..ir.types import Type
from .builder import call

__all__ = ["compiler_begin", "compiler_end", "stop_fusion"]


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


#: The attribute schema both region annotations share (Relay's ``CompilerAttrs``).
_COMPILER_ATTRS = {"compiler": REQUIRED}

for _name, _what in (
    ("annotation.compiler_begin", "Annotate the start of a region handled by an external compiler."),
    ("annotation.compiler_end", "Annotate the end of a region handled by an external compiler."),
):
    register_op(
        _name, num_inputs=1, type_relation=_same_type_rel, kernel=_identity_kernel,
        pattern=OpPattern.OPAQUE, attrs=_COMPILER_ATTRS,
        attrs_type_key="relay.attrs.CompilerAttrs", description=_what,
    )


def _compiler_name(compiler: Any, op_name: str) -> str:
    if not isinstance(compiler, str):
        raise AttrsError(f"{op_name}: compiler must be a string, got {type(compiler).__name__} {compiler!r}")
    return compiler


def compiler_begin(data: Expr, compiler: str) -> Call:
    """``data``, marked as an input of a region that ``compiler`` handles."""
    name = "annotation.compiler_begin"
    return call(name, [data], compiler=_compiler_name(compiler, name))


def compiler_end(data: Expr, compiler: str) -> Call:
    """``data``, marked as an output of a region that ``compiler`` handles."""
    name = "annotation.compiler_end"
    return call(name, [data], compiler=_compiler_name(compiler, name))
