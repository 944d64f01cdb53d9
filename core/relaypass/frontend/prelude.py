"""Relay's standard library: the prelude (lists, options, trees) and ``nat``, as Relay text.

TVM ships its prelude as Relay text (``prelude.rly``) that
``IRModule.import_from_std`` parses into a module and type-checks;
``relay.prelude.Prelude(mod)`` does that and names the prelude's functions
(``p.map``, ``p.foldl``...).  relaypass ships the same definitions, written
out again, as package data next to this module (``prelude.relay``,
``nat.relay``), and gives both entry points their TVM behaviour.

Type-checking needs the pass whose role is "type-inference", which sits above
the IR, so ``IRModule.import_from_std`` reaches :func:`import_from_std` through
a slot of :mod:`relaypass.ir.hooks` that the package root fills.

Not provided: the tensor arrays of TVM's prelude (``TensorArrayOps``,
``StaticTensorArrayOps``), whose functions are written for TVM's dynamic
operators and code generation.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModuleError
from ..ir.module import IRModule
from ..transform.parsing import parse

__all__ = ["PRELUDE_FUNCTIONS", "STD_FILES", "Prelude", "import_from_std"]

STD_FILES = {"prelude": "prelude.relay", "nat": "nat.relay"}
"""The standard files by the name ``import_from_std`` takes (``"prelude.rly"`` also works)."""

PRELUDE_FUNCTIONS = (
    "id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr", "foldr1",
    "concat", "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl", "unfoldr", "sum",
    "length", "tmap", "size", "iterate",
)
"""The prelude's functions a :class:`Prelude` names as attributes (``p.map`` is ``@map``)."""

_HERE = Path(__file__).parent


def import_from_std(mod: IRModule, name: str) -> None:
    """Parse the standard file ``name`` (``"prelude"``, ``"nat"``) into ``mod`` and type it.

    As TVM's import: the text may use ``mod``'s definitions, and afterwards
    ``mod`` holds the file's types and every function typed.  ``mod`` is
    changed only if the whole file parses and types.
    """
    file = STD_FILES.get(name)
    if file is None:
        raise ModuleError(
            f"there is no standard Relay file {name!r}; relaypass ships "
            f"{', '.join(n + '.rly' for n in STD_FILES)}"
        )
    text = (_HERE / file).read_text(encoding="utf-8")
    typed = parse(text, f"std/{file}", init_module=mod.copy())
    mod.update(typed)



class Prelude:
    """Relay's standard definitions in a module (TVM's ``relay.prelude.Prelude``).

    ``Prelude(mod)`` imports the prelude into ``mod`` (a new module when
    None), which it keeps as ``self.mod``; each function of
    :data:`PRELUDE_FUNCTIONS` is an attribute holding its GlobalVar
    (``p.map``), and the types are in the module (``mod.get_type("List")``
    gives ``List`` and its constructors ``Cons``, ``Nil``).
    """

    def __init__(self, mod: IRModule | None = None) -> None:
        if mod is None:
            mod = IRModule()
        elif not isinstance(mod, IRModule):
            raise TypeError(f"Prelude expects an IRModule, not {type(mod).__name__}")
        self.mod = mod
        self.load_prelude()

    def load_prelude(self) -> None:
        """Import the prelude into ``self.mod`` and name its functions (TVM's ``load_prelude``)."""
        self.mod.import_from_std("prelude.rly")
        for name in PRELUDE_FUNCTIONS:
            setattr(self, name, self.mod.get_global_var(name))
