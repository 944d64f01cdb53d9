"""PassInfo: what the pass manager needs to know about a pass before running it.

The name is how users and the registry refer to the pass, ``opt_level`` decides
whether a Sequential runs it at the context's optimisation level, and
``required`` lists the passes that must have run first.  These three fields are
exactly Relay's; what a pass *preserves* belongs to the registry's declaration
of the pass (its manifest entry) and is kept on the pass (``Pass.preserves``),
not in this record, so PassInfo stays the object instruments already know from
TVM.  (Comparing two passes' metadata therefore compares ``(p.info, p.preserves)``.)
A registered pass gets both from its declaration, however it is built.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Every pass name a PassInfo was made for in this process.  A PassContext that names
#: another one (neither registered nor built) warns that it is probably misspelt.
BUILT_NAMES: set[str] = set()


class PassInfo:
    """Immutable description of a pass: ``PassInfo(opt_level, name, required=None, traceable=False)``.

    ``traceable`` is TVM's flag for its tuning traces (out of scope here): kept,
    compared, and otherwise unused.  ``str(info)`` reads as TVM prints a PassInfo.
    """

    __slots__ = ("opt_level", "name", "required", "traceable")

    def __init__(self, opt_level: int, name: str, required: Iterable[str] | None = None,
                 traceable: bool = False) -> None:
        if isinstance(opt_level, bool) or not isinstance(opt_level, int):
            raise TypeError(f"opt_level must be an int, not {type(opt_level).__name__}")
        if not isinstance(name, str) or not name:
            raise TypeError(f"a pass name must be a non-empty string, not {name!r}")
        if isinstance(required, str):
            required = (required,)
        req = tuple(required) if required else ()
        for r in req:
            if not isinstance(r, str) or not r:
                raise TypeError(f"pass {name!r}: required passes are given by name, not {r!r}")
        object.__setattr__(self, "opt_level", opt_level)
        object.__setattr__(self, "name", name)
        BUILT_NAMES.add(name)
        object.__setattr__(self, "required", req)
        object.__setattr__(self, "traceable", bool(traceable))

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("PassInfo is immutable")

    def _key(self) -> tuple[int, str, tuple[str, ...], bool]:
        return (self.opt_level, self.name, self.required, self.traceable)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PassInfo):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        required = "".join(f"{r}, " for r in self.required)
        required = f"[\n{required}]" if self.required else "[]"
        return (f"The meta data of the pass - pass name: {self.name}, "
                f"opt_level: {self.opt_level}, required passes: {required}\n")

    def __repr__(self) -> str:
        traceable = ", traceable=True" if self.traceable else ""
        return (
            f"PassInfo(opt_level={self.opt_level}, name={self.name!r}, "
            f"required={list(self.required)!r}{traceable})"
        )
