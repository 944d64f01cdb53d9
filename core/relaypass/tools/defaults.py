"""The passes and instruments the tools use unless told otherwise.

The core names no pass or instrument: it reaches one by a name it was given,
or by the role a manifest declares (``role = "type-inference"``).  Only the
tools pick a default by name, here, and the ``--help`` of the command-line
option that changes each default says which it is.  Importing this module
imports nothing else (the command line's start-up stays light).
"""

from __future__ import annotations

__all__ = ["DEFAULT_CHECKER", "DEFAULT_TIMER", "DEFAULT_TYPER", "default_typer"]

#: ``relaypass bisect --checker``: the instrument whose checks decide that a module is
#: ill formed (its ``check(mod, pass_name)``, or its ``run_after_pass``, raises).
DEFAULT_CHECKER = "WellFormedChecker"

#: ``relaypass run --timer``: the instrument timing the passes (it has ``render() -> str``).
DEFAULT_TIMER = "PassTimingInstrument"

#: ``--typer`` (bisect, and run's reproducers) when no registered pass declares
#: role "type-inference".
DEFAULT_TYPER = "InferType"

#: What ``--help`` says of the typer's default.
TYPER_DEFAULT_HELP = ('default: the pass whose manifest declares role = "type-inference", '
                      f"else {DEFAULT_TYPER}")


def default_typer() -> str:
    """The name of the default typing pass: the pass with role "type-inference", else :data:`DEFAULT_TYPER`.

    Two passes claiming the role raise the registry's ``RoleConflictError``
    (naming both).
    """
    from ..transform.registry import get_registry
    from ..transform.specs import TYPE_INFERENCE

    spec = get_registry().pass_for_role(TYPE_INFERENCE)
    return spec.name if spec is not None else DEFAULT_TYPER
