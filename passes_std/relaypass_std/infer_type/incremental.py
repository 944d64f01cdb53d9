"""Which functions of a module InferType can keep as they are: typing along a pipeline.

Relay types the whole module again after every pass, which made InferType
over 90% of some compile times.  Nodes here are immutable and only type
inference types them, so a function InferType returned is still correctly
typed when it comes back -- the same object -- as long as every global it
could refer to still exists with the type it had.  InferType remembers, for
each function it returns (weakly, for as long as the function lives), the
global variable it bound it to and the *signature* of the module it typed it
in: that module's global variables, each typed.  A function comes back
*kept* when it is such a function, still bound to a global variable of its
own type, and when every global of its signature is still in the module with
that type.  Only the other functions are typed again, with the kept ones
standing for their types; if one of those comes out with another type than
its global variable had, its callers are not kept after all and the whole
module is typed, as in Relay.  Work is then in proportion to the functions
that changed.

The check runs before every InferType of a pipeline, so its cost is what a
run over an unchanged module costs: a few dictionary lookups per function.
Global variables are immutable too, so the usual case -- a pass replaced
some functions under the same global variables -- is told by identity: the
function is bound to the very global variable it was noted with, and the
module has the very global variables of the signature (one list comparison,
done in C).  Names and types are compared only when those differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple
from weakref import ref

from relaypass.ir.expr import BaseFunc, Function, GlobalVar
from relaypass.ir.module import IRModule
from relaypass.ir.types import Type

__all__ = ["Kept", "kept_functions", "remember"]


class _Signature:
    """The global variables of a module InferType returned, typed, in the module's order."""

    __slots__ = ("gvs",)

    def __init__(self, gvs: list[GlobalVar]) -> None:
        self.gvs = gvs

    def holds_in(self, gvs: list[GlobalVar], by_name: dict[str, GlobalVar] | None) -> bool:
        """Whether every global of this signature is among ``gvs`` (a module's, ``by_name``
        the same by name, built on demand) with the type it has here."""
        if self.gvs == gvs:  # the very same global variables (identity comes first)
            return True
        if by_name is None:
            by_name = {gv.name_hint: gv for gv in gvs}
        for gv in self.gvs:
            now = by_name.get(gv.name_hint)
            if now is None or not _same(now._checked_type, gv._checked_type):
                return False
        return True


class _Notes:
    """For each function InferType returned, for as long as the function lives: the global
    variable it was bound to and the module's signature.

    Keyed by identity, as a weak-keyed dictionary, but reading a note costs
    a dictionary lookup and a call of the stored reference (a
    ``WeakKeyDictionary`` makes a new reference for every lookup).
    """

    __slots__ = ("by_id",)

    def __init__(self) -> None:
        #: id(function) -> (weak reference to it, its global variable, its signature)
        self.by_id: dict[int, tuple[ref, GlobalVar, _Signature]] = {}

    def set(self, func: Function, gv: GlobalVar, signature: _Signature) -> None:
        key = id(func)
        entry = self.by_id.get(key)
        if entry is not None and entry[0]() is func:
            self.by_id[key] = (entry[0], gv, signature)
            return
        by_id = self.by_id

        def forget(_dead: ref, key: int = key) -> None:
            current = by_id.get(key)
            if current is not None and current[0]() is None:
                del by_id[key]

        by_id[key] = (ref(func, forget), gv, signature)


_NOTES = _Notes()


def _same(a: Type | None, b: Type | None) -> bool:
    return a is b or (a is not None and b is not None and a == b)


class Kept(NamedTuple):
    """What a run can keep of a module: ``functions``, by name with their (typed) global
    variables; ``others``, the module's other functions with their global variables (in the
    module's order); ``signature``, the one signature the kept functions share when the
    module has exactly its global variables (None otherwise)."""

    functions: dict[str, GlobalVar]
    others: list[tuple[GlobalVar, BaseFunc]]
    signature: _Signature | None


def kept_functions(items: Sequence[tuple[GlobalVar, BaseFunc]]) -> Kept:
    """What of ``items`` (a module's functions) needs no typing: nothing when the module has
    no such function, or when one of them may call a global that is gone or changed type."""
    lookup = _NOTES.by_id.get
    kept: dict[str, GlobalVar] = {}
    others: list[tuple[GlobalVar, BaseFunc]] = []
    signatures: dict[int, _Signature] = {}
    last = None
    for item in items:
        gv, func = item
        entry = lookup(id(func))
        if (entry is None or entry[0]() is not func
                or (entry[1] is not gv and not _same(gv._checked_type, func._checked_type))):
            others.append(item)
            continue
        kept[gv.name_hint] = gv
        if entry[2] is not last:
            last = entry[2]
            signatures[id(last)] = last
    if not kept:
        return Kept({}, others, None)
    gvs = [gv for gv, _func in items]
    by_name = None if len(signatures) == 1 else {gv.name_hint: gv for gv in gvs}
    for signature in signatures.values():
        if not signature.holds_in(gvs, by_name):
            return Kept({}, list(items), None)
    shared = last if len(signatures) == 1 and last.gvs == gvs else None
    return Kept(kept, others, shared)


def remember(mod: IRModule, kept: Kept | None = None, typed: Iterable[str] = ()) -> None:
    """Note that ``mod``, just typed, is typed: its functions can be kept next time.

    ``kept``: what was kept to type it, and ``typed`` the names of the others
    (typed again, each bound to the global variable it had, of the same
    type): when the kept functions share a signature that is exactly the
    module's global variables, only the functions typed again need a note.
    """
    if kept is not None and kept.signature is not None:
        signature = kept.signature
        for name in typed:
            gv = mod.get_global_var(name)
            _NOTES.set(mod[gv], gv, signature)
        return
    items = list(mod.items())
    signature = _Signature([gv for gv, _func in items])
    for gv, func in items:
        if type(func) is Function:
            _NOTES.set(func, gv, signature)
