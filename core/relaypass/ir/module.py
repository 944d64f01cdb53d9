"""IRModule: the unit that passes transform, a mapping from global names to functions.

As in Relay, a module is a container its owner may fill and change
(``mod["f"] = func``); the pass manager hands each pass a copy, so a pass can
never change the module it was given.  Functions themselves are immutable and
shared between copies, which makes copying cheap.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ModuleError
from . import hooks
from .attrs import Attrs
from .expr import BaseFunc, Expr, Function, GlobalVar
from .variables import free_vars


class IRModule:
    """Global functions by :class:`GlobalVar`, with lookup by name."""

    __slots__ = ("_functions", "_by_name", "attrs", "__weakref__")

    def __init__(
        self,
        functions: Mapping[str | GlobalVar, BaseFunc] | None = None,
        type_definitions: Mapping[Any, Any] | None = None,
        attrs: Attrs | Mapping[str, Any] | None = None,
    ) -> None:
        if type_definitions:
            raise NotImplementedError("relaypass has no algebraic data types yet")
        self._functions: dict[GlobalVar, BaseFunc] = {}
        self._by_name: dict[str, GlobalVar] = {}
        self.attrs = attrs if isinstance(attrs, Attrs) else Attrs(attrs or {})
        for key, func in (functions or {}).items():
            self[key] = func

    @staticmethod
    def from_expr(
        expr: Expr,
        functions: Mapping[str | GlobalVar, BaseFunc] | None = None,
    ) -> IRModule:
        """A module whose ``main`` is ``expr`` (wrapped in a function of its free variables)."""
        mod = IRModule(functions)
        if not isinstance(expr, Function):
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    # --- lookup -----------------------------------------------------------
    def _key(self, key: str | GlobalVar) -> GlobalVar:
        if isinstance(key, GlobalVar):
            if self._functions.get(key) is not None:
                return key
            gv = self._by_name.get(key.name_hint)
            if gv is None:
                raise self._missing(key.name_hint)
            return gv
        if isinstance(key, str):
            gv = self._by_name.get(key)
            if gv is None:
                raise self._missing(key)
            return gv
        raise TypeError(f"a module is indexed by name or GlobalVar, not {type(key).__name__}")

    def _missing(self, name: str) -> ModuleError:
        near = difflib.get_close_matches(name, list(self._by_name), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join('@' + n for n in near)}?" if near else ""
        have = ", ".join("@" + n for n in self._by_name) or "none"
        return ModuleError(f"module has no global function @{name} (it has: {have}){hint}")

    def __getitem__(self, key: str | GlobalVar) -> BaseFunc:
        return self._functions[self._key(key)]

    def __setitem__(self, key: str | GlobalVar, func: BaseFunc) -> None:
        self.add(key, func, update=True)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, GlobalVar):
            return key in self._functions or key.name_hint in self._by_name
        return key in self._by_name

    def __iter__(self) -> Iterator[GlobalVar]:
        return iter(list(self._functions))

    def __len__(self) -> int:
        return len(self._functions)

    def items(self) -> Iterator[tuple[GlobalVar, BaseFunc]]:
        return iter(list(self._functions.items()))

    @property
    def functions(self) -> dict[GlobalVar, BaseFunc]:
        """A snapshot of the functions, by global variable."""
        return dict(self._functions)

    def get_global_var(self, name: str) -> GlobalVar:
        """The global variable named ``name``; an unknown name is a :class:`ModuleError`."""
        return self._key(name)

    def get_global_vars(self) -> list[GlobalVar]:
        return list(self._functions)

    def global_var_for(self, name: str) -> GlobalVar:
        """The global variable named ``name``, created when the module has none yet."""
        gv = self._by_name.get(name)
        return gv if gv is not None else GlobalVar(name)

    # --- changes ----------------------------------------------------------
    def add(self, var: str | GlobalVar, func: BaseFunc, update: bool = False) -> GlobalVar:
        """Bind ``func`` to ``var``; an existing name is replaced only when ``update``."""
        if not isinstance(func, BaseFunc):
            raise TypeError(f"a module holds functions, not {type(func).__name__}")
        name = var.name_hint if isinstance(var, GlobalVar) else str(var)
        existing = self._by_name.get(name)
        if existing is not None:
            if not update:
                raise ModuleError(f"module already has a function @{name}; pass update=True to replace it")
            gv = existing
        else:
            gv = var if isinstance(var, GlobalVar) else GlobalVar(name)
            self._by_name[name] = gv
        self._functions[gv] = func
        return gv

    def remove(self, var: str | GlobalVar) -> None:
        gv = self._key(var)
        del self._functions[gv]
        del self._by_name[gv.name_hint]

    def update(self, other: IRModule | Mapping[str | GlobalVar, BaseFunc]) -> None:
        """Add or replace every function of ``other``."""
        items = other.items() if isinstance(other, (IRModule, Mapping)) else other
        for key, func in items:
            self.add(key, func, update=True)

    def update_func(self, var: str | GlobalVar, func: BaseFunc) -> None:
        self.add(var, func, update=True)

    def with_attr(self, key: str, value: Any) -> IRModule:
        """A copy of this module with module attribute ``key`` set."""
        mod = self.copy()
        mod.attrs = self.attrs.with_fields(**{key: value})
        return mod

    def copy(self) -> IRModule:
        """A new module holding the same (immutable) functions under the same global variables."""
        mod = IRModule.__new__(IRModule)
        mod._functions = dict(self._functions)
        mod._by_name = dict(self._by_name)
        mod.attrs = self.attrs
        return mod

    shallow_copy = copy

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is this very module, as TVM's ``same_as``.

        A module is a container its owner fills, so two modules with equal
        contents are still two modules; a pass that hands back the module it
        was given is told apart from one that built a new module this way.
        """
        return self is other

    # --- text -------------------------------------------------------------
    def astext(self, show_meta_data: bool = True, annotate: Any | None = None) -> str:
        """The Relay text form of the module (``annotate(node)``: a comment per node)."""
        return hooks.astext(self, show_meta_data=show_meta_data, annotate=annotate)

    def __str__(self) -> str:
        return hooks.pretty_print(self)

    def __repr__(self) -> str:
        return self.astext()
