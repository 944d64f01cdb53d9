"""PrintIR: TVM's debugging pass that prints the module and hands it on unchanged."""

from __future__ import annotations

import sys
from typing import Any

from .context import PassContext
from .pass_info import PassInfo
from .passes import PRESERVES_ALL, ModulePass


def PrintIR(header: str = "", show_meta_data: bool = False) -> ModulePass:  # noqa: N802 - TVM's name
    """A pass (opt_level 0) that prints ``PrintIR(header):`` and the module's text.

    As in TVM (which logs it at INFO level), the text goes to standard error,
    so it never mixes with a program's output.  It changes nothing, so it
    preserves every other pass's effect.
    """

    def print_ir(mod: Any, ctx: PassContext) -> Any:
        stream = sys.stderr  # looked up at each run: redirections made later are honoured
        stream.write(f"PrintIR({header}):\n{mod.astext(show_meta_data=show_meta_data)}\n")
        stream.flush()
        return mod

    return ModulePass(print_ir, PassInfo(0, "PrintIR"), (PRESERVES_ALL,))
