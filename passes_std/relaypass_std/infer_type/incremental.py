"""Which functions of a module InferType can keep as they are: typing along a pipeline.

Relay types the whole module again after every pass, which made InferType
over 90% of some compile times.  Nodes here are immutable and only type
inference types them, so a function InferType returned is still correctly
typed when it comes back -- the same object -- as long as every global it
could refer to still exists with the type it had.  InferType remembers, for
each function it returns (weakly, for as long as the function lives), the
*signature* of the module it typed it in: every global's name and type.  A
function comes back *kept* when it is such a function, still bound to a
global variable of its own type, and when every global of its signature is
still in the module with that type.  Only the other functions are typed
again, with the kept ones standing for their types; if one of those comes
out with another type than its global variable had, its callers are not
kept after all and the whole module is typed, as in Relay.  Work is then in
proportion to the functions that changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple
from weakref import ref

from relaypass.ir.expr import Function, GlobalVar
from relaypass.ir.module import IRModule
from relaypass.ir.types import Type

__all__ = ["Kept", "kept_functions", "remember"]


class _Notes:
    """Facts about functions, each kept for as long as its function lives.

    Keyed by identity, as a weak-keyed dictionary, but reading a fact costs
    a dictionary lookup and a call of the stored reference (a
    ``WeakKeyDictionary`` makes a new reference for every lookup).
    """

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ref, object]] = {}

    def get(self, func: Function) -> object | None:
        entry = self._by_id.get(id(func))
        if entry is None or entry[0]() is not func:
            return None
        return entry[1]

    def set(self, func: Function, fact: object) -> None:
        key = id(func)
        entry = self._by_id.get(key)
        if entry is not None and entry[0]() is func:
            self._by_id[key] = (entry[0], fact)
            return
        by_id = self._by_id

        def forget(_dead: ref, key: int = key) -> None:
            current = by_id.get(key)
            if current is not None and current[0]() is None:
                del by_id[key]

        by_id[key] = (ref(func, forget), fact)


#: For each function InferType returned: every global of its module, by name, with its type.
_SIGNATURES = _Notes()


def _same(a: Type | None, b: Type | None) -> bool:
    return a is b or (a is not None and b is not None and a == b)


class Kept(NamedTuple):
    """The functions a run keeps, by name with their (typed) global variables, and the
    signature they were all typed in (None when they come from several)."""

    functions: dict[str, GlobalVar]
    signature: dict[str, Type] | None


def kept_functions(items: Iterable[tuple[GlobalVar, object]]) -> Kept:
    """The functions among ``items`` (a module's) that need no typing; none when the
    module has none, or when one of theirs may call a global that is gone or changed type."""
    items = list(items)
    kept: dict[str, GlobalVar] = {}
    signatures: dict[int, dict[str, Type]] = {}
    for gv, func in items:
        if type(func) is not Function or func._checked_type is None:
            continue
        signature = _SIGNATURES.get(func)
        if signature is None or not _same(gv._checked_type, func._checked_type):
            continue
        kept[gv.name_hint] = gv
        signatures[id(signature)] = signature
    if not kept:
        return Kept({}, None)
    current = {gv.name_hint: gv for gv, _func in items}
    for signature in signatures.values():
        for name, ty in signature.items():
            gv = current.get(name)
            if gv is None or not _same(gv._checked_type, ty):
                return Kept({}, None)
    shared = next(iter(signatures.values())) if len(signatures) == 1 else None
    return Kept(kept, shared)


def remember(mod: IRModule, kept: Kept | None = None, typed: Iterable[str] = ()) -> None:
    """Note that ``mod``, just typed, is typed: its functions can be kept next time.

    ``kept``: the functions kept to type it, and ``typed`` the others (typed
    again, each bound to the global variable it had, of the same type): the
    module's signature is then the one the kept functions share, if they
    share one, and only the functions typed again need a note.
    """
    if (kept is not None and kept.signature is not None
            and len(kept.signature) == len(mod)):  # the same names (every one was found)
        for name in typed:
            _SIGNATURES.set(mod[name], kept.signature)
        return
    signature = {gv.name_hint: gv._checked_type for gv in mod.get_global_vars()}
    for _gv, func in mod.items():
        if type(func) is Function:
            _SIGNATURES.set(func, signature)
