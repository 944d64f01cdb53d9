"""AlterOpLayout: let registered hooks replace operator calls, fixing layouts around them (Relay's alter_op_layout.cc).

A target (or a user) registers ``register_alter_op_layout("nn.conv2d", fn)``,
``fn(attrs, inputs, tinfos, out_type)`` returning the call to compute a
convolution with instead, typically in a blocked layout such as NCHW16c, or
None to keep it.  As in ConvertLayout, the operators around the replaced
ones follow the new layouts where their ``FInferCorrectLayout`` rules allow,
and ``layout_transform`` goes where layouts meet
(:mod:`relaypass.analysis.layout_rewrite`).  No hook is registered by default
(Relay's are code-generation choices for its targets), so without one the
pass changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.layout_rewrite import LayoutRewriter, argument_types
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import Call, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op_hooks import ALTER_OP_LAYOUT
from relaypass.transform import pass_constructor

__all__ = ["AlterOpLayout", "alter_op_layout"]


def _call_with_new_layouts(ref: Call, attrs: Attrs | None, args: list) -> Call:
    op = ref.op
    alter = op.get_attr(ALTER_OP_LAYOUT)
    value = None if alter is None else alter(attrs, args, argument_types(ref), ref.checked_type)
    return Call(op, args, attrs) if value is None else value


def alter_op_layout(func: Function) -> Function:
    """``func`` with each call replaced by what its operator's alter hook returns."""
    return LayoutRewriter(_call_with_new_layouts, ALTER_OP_LAYOUT).rewrite(func)


def _alter_op_layout_factory() -> Callable[[Function, IRModule, object], Function]:
    """AlterOpLayout's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return alter_op_layout(func)

    return transform


#: The pass ``relay.transform.AlterOpLayout()`` builds; metadata in relaypass-plugin.toml.
AlterOpLayout = pass_constructor("AlterOpLayout")
