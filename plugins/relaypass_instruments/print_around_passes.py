"""Print the module's text before or after chosen passes, or around every pass.

This is TVM's ``PrintIR`` pass without having to edit the pipeline: the
instrument watches the passes the PassContext reports and prints the module
around the ones asked for.  "All" means every pass the context reports,
Sequentials included (a Sequential is printed before its first member and
after its last), exactly as TVM's PrintBeforeAll / PrintAfterAll do.

Each printout starts with a header line ``// IR before pass NAME`` (a Relay
text comment).  The module is printed as :mod:`.text` says: without its
metadata section unless ``show_meta`` (then a printout parses back).
"""

from __future__ import annotations

from relaypass.transform.instrument import PassInstrument

from .options import Output, pass_names
from .text import module_text, show_meta_flag


class _IRPrinter(PassInstrument):
    """Prints the module before and/or after the passes it is asked about.

    ``before``/``after`` are sets of pass names, or None for every pass.
    """

    def __init__(
        self,
        instrument: str,
        before: frozenset[str] | None,
        after: frozenset[str] | None,
        print_before: bool,
        print_after: bool,
        file: object,
        show_meta: object,
    ) -> None:
        self._show_meta = show_meta_flag(instrument, show_meta)
        self._before = before
        self._after = after
        self._print_before = print_before
        self._print_after = print_after
        self._output = Output(instrument, file)

    def run_before_pass(self, mod: object, info: object) -> None:
        if self._print_before and (self._before is None or info.name in self._before):  # type: ignore[attr-defined]
            self._print("before", mod, info)

    def run_after_pass(self, mod: object, info: object) -> None:
        if self._print_after and (self._after is None or info.name in self._after):  # type: ignore[attr-defined]
            self._print("after", mod, info)

    def _print(self, when: str, mod: object, info: object) -> None:
        text = module_text(mod, self._show_meta)
        self._output.write(f"// IR {when} pass {info.name}\n{text.rstrip()}\n\n")  # type: ignore[attr-defined]


class PrintBefore(_IRPrinter):
    """Print the module before each run of the passes named in ``passes``."""

    def __init__(self, *, passes: object, file: object, show_meta: object) -> None:
        names = pass_names("PrintBefore", "passes", passes)
        super().__init__("PrintBefore", names, None, True, False, file, show_meta)


class PrintAfter(_IRPrinter):
    """Print the module after each run of the passes named in ``passes``."""

    def __init__(self, *, passes: object, file: object, show_meta: object) -> None:
        names = pass_names("PrintAfter", "passes", passes)
        super().__init__("PrintAfter", None, names, False, True, file, show_meta)


class PrintBeforeAll(_IRPrinter):
    """Print the module before every pass."""

    def __init__(self, *, file: object, show_meta: object) -> None:
        super().__init__("PrintBeforeAll", None, None, True, False, file, show_meta)


class PrintAfterAll(_IRPrinter):
    """Print the module after every pass."""

    def __init__(self, *, file: object, show_meta: object) -> None:
        super().__init__("PrintAfterAll", None, None, False, True, file, show_meta)


class PassPrintingInstrument(_IRPrinter):
    """TVM's ``PassPrintingInstrument``: print before some passes and after others.

    Kept under TVM's name, argument names and argument order
    (``PassPrintingInstrument(print_before_pass_names, print_after_pass_names)``)
    and printing what TVM's prints, ``Print IR before: NAME``, the module and
    two blank lines, so that code written for ``tvm.ir.instrument`` ports by
    changing its import.
    """

    def __init__(
        self,
        *,
        print_before_pass_names: object,
        print_after_pass_names: object,
        file: object,
    ) -> None:
        name = "PassPrintingInstrument"
        before = pass_names(name, "print_before_pass_names", print_before_pass_names)
        after = pass_names(name, "print_after_pass_names", print_after_pass_names)
        super().__init__(name, before, after, bool(before), bool(after), file, False)

    def _print(self, when: str, mod: object, info: object) -> None:
        self._output.write(f"Print IR {when}: {info.name}\n{mod}\n\n\n")  # type: ignore[attr-defined]
