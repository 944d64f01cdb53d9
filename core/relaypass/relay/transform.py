"""``relay.transform``: the pass namespace a TVM Relay user knows.

Every registered pass is an attribute resolved by name when first read: its
pass constructor (:func:`relaypass.transform.pass_constructor`), so
``relay.transform.FoldConstant()`` is ``get_pass("FoldConstant")`` and
arguments become the pass's options.  The pass-manager classes and decorators
are re-exported, so ``from relaypass.relay import transform`` reads like
``from tvm.relay import transform``.  Reading a pass attribute consults only
the plugins' manifests; the pass's code loads when it is called.
"""

from __future__ import annotations

import sys

from ..op import infer_layout_utils
from ..op.layout_conversion import LayoutConfig
from ..transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassConstructor,
    PassContext,
    PassInfo,
    PrintIR,
    Sequential,
    function_pass,
    get_pass,
    list_passes,
    load_pipeline,
    mixed_precision,  # noqa: F401  (relay.transform.mixed_precision)
    module_pass,
    register_pass,
)
from ..transform.constructors import pass_attribute, registered_pass_names
from ..transform.infer_type_local import InferTypeLocal

__all__ = [
    "FunctionPass", "InferTypeLocal", "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR", "Sequential",
    "function_pass", "get_pass", "list_passes", "load_pipeline", "module_pass", "register_pass",
    "Inline", "mixed_precision", "LayoutConfig", "infer_layout_utils",
]

# ``from tvm.relay.transform.infer_layout_utils import InferCorrectLayoutOutput``, ported.
sys.modules[f"{__name__}.infer_layout_utils"] = infer_layout_utils

#: Relay's Python name for the pass it registers as InlineGlobals (``relay.transform.Inline()``
#: gives a pass whose ``info.name`` is "InlineGlobals", as in TVM).
Inline = PassConstructor("InlineGlobals")


def __getattr__(name: str) -> PassConstructor:
    # Not cached in the module: a pass registered, shadowed or uninstalled later
    # must be seen the next time the name is read.
    return pass_attribute("relay.transform", name)


def __dir__() -> list[str]:
    return sorted({*globals(), *registered_pass_names()})
