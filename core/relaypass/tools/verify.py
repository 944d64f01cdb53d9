"""``relaypass run --verify-each``: check the module after every pass, as ``mlir-opt --verify-each`` does.

A pass that leaves a variable unbound or a type wrong rarely fails itself;
the pass that trips over it does, later.  After every pass this instrument
runs two checks and stops the run at the first failure, naming the pass:

* the checker instrument's (:data:`~relaypass.tools.defaults.DEFAULT_CHECKER`,
  the standard ``WellFormedChecker``): every variable bound once and in scope,
  every global defined, the types type inference filled consistent;
* the typing pass (the one with ``role = "type-inference"``, or ``--typer``)
  must accept the module, in a PassContext of its own so that the run's
  instruments do not see it (a relaypass error from it is the verdict; any
  other exception is the typing pass's own bug, and propagates).

Modules are immutable and passes share what they do not change, so a pass
that returns the functions it was given is not checked again.
"""

from __future__ import annotations

from typing import Any

from ..errors import RelayPassError
from ..transform.context import PassContext
from ..transform.instrument import PassInstrument

__all__ = ["ModuleVerificationError", "VerifyEach"]


class ModuleVerificationError(RelayPassError):
    """After a pass, the typing pass rejects the module (``pass_name``: the pass to blame)."""

    def __init__(self, message: str, pass_name: str) -> None:
        self.pass_name = pass_name
        super().__init__(message)


class VerifyEach(PassInstrument):
    """After each pass: ``checker``'s checks, then ``typer`` (named ``typer_name``) on a copy.

    ``checker`` is an instrument (its ``run_before_pass``/``run_after_pass``
    raise on an ill-formed module); ``typer`` a pass that raises on a module
    that does not type-check.
    """

    def __init__(self, checker: PassInstrument, typer: Any, typer_name: str) -> None:
        self.checker = checker
        self.typer = typer
        self.typer_name = typer_name
        self._typed: tuple[int, ...] | None = None

    def enter_pass_ctx(self) -> None:
        self._typed = None
        self.checker.enter_pass_ctx()

    def exit_pass_ctx(self) -> None:
        self.checker.exit_pass_ctx()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self.checker.run_before_pass(mod, info)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self.checker.run_after_pass(mod, info)
        key = tuple(id(f) for _, f in mod.items())
        if key == self._typed:
            return
        try:
            with PassContext():
                self.typer(mod)
        except RelayPassError as exc:
            text = str(exc).strip().splitlines()
            why = text[0] if text else type(exc).__name__
            raise ModuleVerificationError(
                f"after pass {info.name}: the module is ill typed: {self.typer_name} rejects it: "
                f"{why}", info.name) from exc
        self._typed = key
