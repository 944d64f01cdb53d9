"""RemoveUnusedFunctions: keep the entry functions and what they refer to, drop the other globals.

A module accumulates helpers nobody calls any more: after inlining, after
lambda lifting, or when a library of functions (Relay's prelude) is loaded
into it whole.  This pass (Relay's ``remove_unused_funcs.cc``, run by its VM
compiler) keeps each entry function and every global function reachable from
one through global variables, wherever they occur (called, passed as a
value, chosen by an If), and removes the others.  The functions kept keep
their order.

The entries are named by ``entry_functions`` (default ``["main"]``); an entry
the module does not define, and a global variable that names no function of
the module, are errors (:class:`RemoveUnusedFunctionsError`), as in Relay.
The walk over the globals is a worklist and each function is walked with an
explicit stack, so neither long call chains nor deep dataflow recurse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from relaypass.errors import RelayPassError
from relaypass.ir.expr import GlobalVar
from relaypass.ir.module import IRModule
from relaypass.ir.traversal import post_order_visit
from relaypass.transform import pass_constructor

__all__ = ["RemoveUnusedFunctions", "RemoveUnusedFunctionsError", "remove_unused_functions"]


class RemoveUnusedFunctionsError(RelayPassError, LookupError):
    """An entry function, or a global function referred to, that the module does not define."""


def _defined(mod: IRModule) -> str:
    return ", ".join("@" + gv.name_hint for gv in mod.get_global_vars()) or "none"


def _referenced(func: object) -> dict[str, None]:
    """The names of the global variables ``func`` refers to, in the order first reached."""
    names: dict[str, None] = {}

    def note(node: object) -> None:
        if type(node) is GlobalVar:
            names[node.name_hint] = None

    post_order_visit(func, note)
    return names


def used_functions(mod: IRModule, entry_functions: Iterable[str]) -> set[str]:
    """The names of the entry functions and of every global function reachable from one."""
    used: set[str] = set()
    work: list[tuple[str, str | None]] = []
    for name in entry_functions:
        if name not in mod:
            raise RemoveUnusedFunctionsError(
                f"RemoveUnusedFunctions: entry function @{name} is not in the module "
                f"(it defines: {_defined(mod)}); name the entry functions with entry_functions"
            )
        work.append((name, None))
    while work:
        name, referrer = work.pop()
        if name in used:
            continue
        if name not in mod:
            raise RemoveUnusedFunctionsError(
                f"RemoveUnusedFunctions: @{referrer} refers to @{name}, which the module does "
                f"not define (it defines: {_defined(mod)})"
            )
        used.add(name)
        work.extend((callee, name) for callee in _referenced(mod[name]) if callee not in used)
    return used


def remove_unused_functions(mod: IRModule, entry_functions: Iterable[str] = ("main",)) -> IRModule:
    """A copy of ``mod`` without the global functions no entry function reaches."""
    used = used_functions(mod, entry_functions)
    out = mod.copy()
    for gv in mod.get_global_vars():
        if gv.name_hint not in used:
            out.remove(gv)
    return out


def _entry_names(entry_functions: object) -> list[str]:
    """The entry functions as a list of names: None is Relay's default, ``["main"]``."""
    if entry_functions is None:
        return ["main"]
    if isinstance(entry_functions, str):
        raise RemoveUnusedFunctionsError(
            f"RemoveUnusedFunctions: entry_functions is a list of names, not the string "
            f"{entry_functions!r}; write [{entry_functions!r}]"
        )
    names = list(entry_functions)  # type: ignore[call-overload]
    for name in names:
        if not isinstance(name, str):
            raise RemoveUnusedFunctionsError(
                f"RemoveUnusedFunctions: entry_functions holds {name!r}, a "
                f"{type(name).__name__}; it takes function names"
            )
    return names


def _remove_unused_functions_factory(
    *, entry_functions: Iterable[str] | None,
) -> Callable[[IRModule, object], IRModule]:
    """RemoveUnusedFunctions's transformation: the manifest's factory.

    The pass is :data:`RemoveUnusedFunctions`.
    """
    entries = _entry_names(entry_functions)

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return remove_unused_functions(mod, entries)

    return transform


#: The RemoveUnusedFunctions pass, the one ``relay.transform.RemoveUnusedFunctions``
#: builds; everything about it is declared in relaypass-plugin.toml.
RemoveUnusedFunctions = pass_constructor("RemoveUnusedFunctions")
