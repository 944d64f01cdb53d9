"""ConvertLayout: compute convolutions and pools in the layouts asked for (Relay's convert_layout.cc).

``ConvertLayout({"nn.conv2d": ["NHWC", "default"]})`` makes every conv2d
compute in NHWC, its kernel in the layout Relay pairs with NHWC (HWIO, or
HWOI for a depthwise one), through the operator's ``FTVMConvertOpLayout``
(:mod:`relaypass.op.layout_conversion`).  The operators between them follow
the new layout through their ``FInferCorrectLayout`` rules (relu, add,
concatenate, reductions, transpose, pad, batch norm...), so a network
converted end to end has one ``layout_transform`` at each input and output,
not one around every operator; where an operator cannot follow, its inputs
are transformed back.  The machinery is shared with AlterOpLayout
(:mod:`relaypass.analysis.layout_rewrite`).  Like Relay's, the pass requires
CanonicalizeOps, which turns ``nn.bias_add`` into an ``add`` that can follow.

``LayoutConfig(skip_layers=[...])`` (``relay.transform.LayoutConfig``)
keeps chosen conv2d calls as they are.  ``desired_layouts`` naming an
unknown operator or a string that is not a layout is an
:class:`~relaypass.transform.errors.OptionError` when the pass is made; an
operator without a conversion is accepted with a warning and follows its
inputs, as Relay lets it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

from relaypass.analysis.layout_rewrite import LayoutRewriter, argument_types
from relaypass.errors import UnknownOpError
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import Call, Function
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.op_hooks import CONVERT_OP_LAYOUT
from relaypass.op.data_layout import LayoutError, layout
from relaypass.transform import pass_constructor
from relaypass.transform.errors import OptionError

__all__ = ["ConvertLayout", "convert_layout"]


def convert_layout(func: Function, desired_layouts: Mapping[str, Sequence[str]]) -> Function:
    """``func`` with the operators named in ``desired_layouts`` converted, the rest following."""

    def call_with_new_layouts(ref: Call, attrs: Attrs | None, args: list) -> Call:
        op = ref.op
        convert = op.get_attr(CONVERT_OP_LAYOUT)
        wanted = desired_layouts.get(op.name)
        value = None
        if convert is not None and wanted is not None:
            value = convert(attrs, args, argument_types(ref), list(wanted))
        if value is None:
            return Call(op, args, attrs, None, ref.span)
        if not isinstance(value, Call):
            return value  # the rewriter says what is wrong with it
        return Call(value.op, value.args, value.attrs, value.type_args, ref.span)

    return LayoutRewriter(call_with_new_layouts, CONVERT_OP_LAYOUT).rewrite(func)


def _convertible() -> str:
    return ", ".join(n for n in Op.list_op_names() if Op.get(n).has_attr(CONVERT_OP_LAYOUT))


def check_desired_layouts(desired_layouts: object) -> dict[str, list[str]]:
    """``desired_layouts`` as a dict, or an OptionError saying which entry is wrong and why."""
    if not isinstance(desired_layouts, Mapping):
        raise OptionError("ConvertLayout: desired_layouts must map operator names to lists of "
                          "layouts, such as {'nn.conv2d': ['NHWC', 'default']}, not "
                          f"{type(desired_layouts).__name__}")
    out: dict[str, list[str]] = {}
    for name, layouts in desired_layouts.items():
        try:
            op = Op.get(name) if isinstance(name, str) else None
        except UnknownOpError as err:
            raise OptionError(f"ConvertLayout: desired_layouts: {err}; operators that convert: "
                              f"{_convertible()}") from None
        if op is None:
            raise OptionError(f"ConvertLayout: desired_layouts keys are operator names, not "
                              f"{name!r}; operators that convert: {_convertible()}")
        if not op.has_attr(CONVERT_OP_LAYOUT):
            # Relay accepts such an entry and ignores it (TVM's own tests name nn.batch_norm);
            # a warning says so, since a user who wrote it expected something to happen.
            warnings.warn(
                f"ConvertLayout: desired_layouts names {name!r}, which has no layout conversion "
                f"({CONVERT_OP_LAYOUT}); it follows the layouts of its inputs, as in Relay. "
                f"Operators that convert: {_convertible()}", UserWarning, stacklevel=2)
        if isinstance(layouts, str) or not isinstance(layouts, Sequence):
            raise OptionError(f"ConvertLayout: desired_layouts[{name!r}] must be a list of "
                              f"layouts, such as ['NHWC', 'default'], not {layouts!r}")
        for wanted in layouts:
            if wanted == "default":
                continue
            try:
                if not isinstance(wanted, str) or not wanted:
                    raise LayoutError(f"a layout is a non-empty string, not {wanted!r}")
                layout(wanted)
            except LayoutError as err:
                raise OptionError(f"ConvertLayout: desired_layouts[{name!r}]: {err}; give a "
                                  f"layout such as 'NHWC' or 'default'") from None
        out[name] = [str(x) for x in layouts]
    return out


def _convert_layout_factory(*, desired_layouts: object) -> Callable[[Function, IRModule, object], Function]:
    """ConvertLayout's transformation: the manifest's factory."""
    wanted = check_desired_layouts(desired_layouts)

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return convert_layout(func, wanted)

    return transform


#: The pass ``relay.transform.ConvertLayout(desired_layouts)`` builds; metadata in relaypass-plugin.toml.
ConvertLayout = pass_constructor("ConvertLayout")
