"""The operator attributes Relay's graph passes read, registered under TVM's names.

Relay lets code outside a pass change what the pass does to one operator:
``register_legalize("nn.conv2d", fn)`` tells Legalize how to rewrite a
convolution, ``register_convert_op_layout`` tells ConvertLayout which layouts
an operator accepts, and so on.  Each is an operator attribute under a fixed
key, registered with TVM's levels (:func:`~relaypass.ir.op.register_op_attr`),
so Relay code that registers these hooks ports unchanged; the pass that reads
a key is named with it.  Like ``register_op_attr`` each is a decorator when
the function is left out.
"""

from __future__ import annotations

from typing import Any

from .op import DEFAULT_ATTR_LEVEL, register_op_attr

__all__ = [
    "ALTER_OP_LAYOUT", "CANONICALIZE", "CONVERT_OP_LAYOUT", "INFER_CORRECT_LAYOUT", "LEGALIZE",
    "MIXED_PRECISION_CONVERSION", "register_alter_op_layout", "register_canonicalize",
    "register_convert_op_layout", "register_infer_correct_layout", "register_legalize",
    "register_mixed_precision_conversion",
]

#: ``fn(attrs, inputs, tinfos, out_type) -> Expr | None``, read by AlterOpLayout.
ALTER_OP_LAYOUT = "FTVMAlterOpLayout"
#: ``fn(attrs, inputs, tinfos, desired_layouts) -> Expr``, read by ConvertLayout.
CONVERT_OP_LAYOUT = "FTVMConvertOpLayout"
#: ``fn(attrs, new_in_layouts, old_in_layouts, old_in_types)``, read by the layout passes.
INFER_CORRECT_LAYOUT = "FInferCorrectLayout"
#: ``fn(attrs, inputs, types) -> Expr | None``, read by Legalize.
LEGALIZE = "FTVMLegalize"
#: ``fn(attrs, inputs, types) -> Expr``, read by CanonicalizeOps.
CANONICALIZE = "FTVMCanonicalize"
#: ``fn(call, mixed_precision_type) -> [category, accumulation dtype, output dtype]``,
#: read by ToMixedPrecision.
MIXED_PRECISION_CONVERSION = "FTVMMixedPrecisionConversionType"


def register_alter_op_layout(op_name: str, alter_layout: Any = None,
                             level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register how AlterOpLayout rewrites calls of ``op_name`` (TVM's name and signature)."""
    return register_op_attr(op_name, ALTER_OP_LAYOUT, alter_layout, level)


def register_convert_op_layout(op_name: str, convert_layout: Any = None,
                               level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register how ConvertLayout converts calls of ``op_name`` to the desired layouts."""
    return register_op_attr(op_name, CONVERT_OP_LAYOUT, convert_layout, level)


def register_infer_correct_layout(op_name: str, infer_layout: Any = None,
                                  level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register the layouts ``op_name`` takes and gives, for the layout passes."""
    return register_op_attr(op_name, INFER_CORRECT_LAYOUT, infer_layout, level)


def register_legalize(op_name: str, legal_op: Any = None, level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register how Legalize rewrites calls of ``op_name``."""
    return register_op_attr(op_name, LEGALIZE, legal_op, level)


def register_canonicalize(op_name: str, canonicalize: Any = None,
                          level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register how CanonicalizeOps rewrites calls of ``op_name``."""
    return register_op_attr(op_name, CANONICALIZE, canonicalize, level)


def register_mixed_precision_conversion(op_name: str, func: Any = None,
                                        level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Register how ToMixedPrecision treats calls of ``op_name``."""
    return register_op_attr(op_name, MIXED_PRECISION_CONVERSION, func, level)
