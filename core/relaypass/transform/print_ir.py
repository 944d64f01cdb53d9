"""PrintIR: TVM's debugging pass that prints the module and hands it on unchanged."""

from __future__ import annotations

from typing import Any

from .context import PassContext
from .pass_info import PassInfo
from .passes import PRESERVES_ALL, ModulePass


def PrintIR(header: str = "", show_meta_data: bool = False) -> ModulePass:  # noqa: N802 - TVM's name
    """A pass (opt_level 0) that prints ``PrintIR(header):`` and the module's text.

    It changes nothing, so it preserves every other pass's effect.
    """

    def print_ir(mod: Any, ctx: PassContext) -> Any:
        print(f"PrintIR({header}):\n{mod.astext(show_meta_data=show_meta_data)}")
        return mod

    return ModulePass(print_ir, PassInfo(0, "PrintIR"), (PRESERVES_ALL,))
