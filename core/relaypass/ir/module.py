"""IRModule: the unit that passes transform, a mapping from global names to functions.

As in Relay, a module is a container its owner may fill and change
(``mod["f"] = func``); the pass manager hands each pass a copy, so a pass can
never change the module it was given.  Functions themselves are immutable and
shared between copies, which makes copying cheap.

A module also holds the definitions of its algebraic data types
(``mod[List] = TypeData(List, ...)``, keyed by :class:`GlobalTypeVar`), which
copies share as well.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ModuleError
from . import hooks
from .adt import Constructor, TypeData
from .attrs import Attrs
from .container import Map
from .expr import BaseFunc, Expr, Function, GlobalVar
from .types import GlobalTypeVar
from .variables import free_vars


class IRModule:
    """Global functions by :class:`GlobalVar`, type definitions by :class:`GlobalTypeVar`.

    Both are found by name as well.  ``mod[name_or_global_var]`` is a
    function, ``mod[global_type_var]`` a type definition.
    """

    __slots__ = (
        "_functions", "_by_name", "_types", "_types_by_name", "_imports", "attrs", "__weakref__",
    )

    def __init__(
        self,
        functions: Mapping[str | GlobalVar, BaseFunc] | None = None,
        type_definitions: Mapping[str | GlobalTypeVar, TypeData] | None = None,
        attrs: Attrs | Mapping[str, Any] | None = None,
    ) -> None:
        self._functions: dict[GlobalVar, BaseFunc] = {}
        self._by_name: dict[str, GlobalVar] = {}
        self._types: dict[GlobalTypeVar, TypeData] = {}
        self._types_by_name: dict[str, GlobalTypeVar] = {}
        self._imports: set[str] = set()
        self.attrs = attrs if isinstance(attrs, Attrs) else Attrs(attrs or {})
        for key, data in (type_definitions or {}).items():
            self.add_type_def(key, data)
        for key, func in (functions or {}).items():
            self[key] = func

    @staticmethod
    def from_expr(
        expr: Expr,
        functions: Mapping[str | GlobalVar, BaseFunc] | None = None,
        type_defs: Mapping[str | GlobalTypeVar, TypeData] | None = None,
    ) -> IRModule:
        """A module whose ``main`` is ``expr`` (wrapped in a function of its free variables)."""
        mod = IRModule(functions, type_defs)
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

    def __getitem__(self, key: str | GlobalVar | GlobalTypeVar) -> Any:
        if isinstance(key, GlobalTypeVar):
            return self._types[self._type_key(key)]
        return self._functions[self._key(key)]

    def __setitem__(self, key: str | GlobalVar | GlobalTypeVar, value: Any) -> None:
        if isinstance(key, GlobalTypeVar) or isinstance(value, TypeData):
            self.add_type_def(key, value, update=True)  # type: ignore[arg-type]
            return
        self.add(key, value, update=True)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, GlobalVar):
            return key in self._functions or key.name_hint in self._by_name
        if isinstance(key, GlobalTypeVar):
            return key.name_hint in self._types_by_name
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

    # --- type definitions -----------------------------------------------------
    def _type_key(self, key: str | GlobalTypeVar) -> GlobalTypeVar:
        name = key.name_hint if isinstance(key, GlobalTypeVar) else key
        gtv = self._types_by_name.get(name) if isinstance(name, str) else None
        if gtv is None:
            if not isinstance(key, (str, GlobalTypeVar)):
                raise TypeError(f"types are looked up by name or GlobalTypeVar, not "
                                f"{type(key).__name__}")
            have = ", ".join(self._types_by_name) or "none"
            near = difflib.get_close_matches(str(name), list(self._types_by_name), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ModuleError(f"module has no type {name} (it has: {have}){hint}")
        return gtv

    @property
    def type_definitions(self) -> Map:
        """A snapshot of the type definitions, by global type variable (TVM's Map)."""
        return Map(self._types)

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        """The global type variable named ``name``; an unknown name is a :class:`ModuleError`."""
        return self._type_key(name)

    def get_global_type_vars(self) -> list[GlobalTypeVar]:
        return list(self._types)

    def type_data(self, key: str | GlobalTypeVar) -> TypeData:
        """The definition of the type ``key`` (a name or a GlobalTypeVar)."""
        return self._types[self._type_key(key)]

    def get_type(self, name: str) -> tuple[GlobalTypeVar | Constructor, ...]:
        """TVM's ``get_type``: the type's GlobalTypeVar followed by its constructors."""
        data = self.type_data(name)
        return (data.header, *data.constructors)

    def get_constructor(self, type_name: str, name: str) -> Constructor:
        """The constructor ``name`` of the type ``type_name`` (TVM's ``get_constructor``)."""
        data = self.type_data(type_name)
        for ctor in data.constructors:
            if ctor.name_hint == name:
                return ctor
        have = ", ".join(c.name_hint for c in data.constructors) or "none"
        raise ModuleError(f"type {type_name} has no constructor {name} (it has: {have})")

    def add_type_def(
        self, var: str | GlobalTypeVar, data: TypeData, update: bool = False
    ) -> GlobalTypeVar:
        """Define the type ``var`` as ``data``; an existing name is replaced only when ``update``.

        ``data``'s header must be ``var`` (by name), as the module finds a
        type's constructors through it.
        """
        if not isinstance(data, TypeData):
            raise TypeError(f"a module maps a GlobalTypeVar to a TypeData, not "
                            f"{type(data).__name__}")
        name = var.name_hint if isinstance(var, GlobalTypeVar) else str(var)
        if data.header.name_hint != name:
            raise ModuleError(f"cannot define type {name} as the definition of "
                              f"{data.header.name_hint}")
        existing = self._types_by_name.get(name)
        if existing is not None and not update:
            raise ModuleError(f"module already has a type {name}; pass update=True to replace it")
        gtv = existing if existing is not None else data.header
        self._types_by_name[name] = gtv
        self._types[gtv] = data
        return gtv

    def update_type(self, var: str | GlobalTypeVar, data: TypeData) -> None:
        self.add_type_def(var, data, update=True)

    def import_from_std(self, path: str) -> None:
        """Add the definitions of one of relaypass's standard Relay files (TVM's ``import_from_std``).

        ``"prelude.rly"`` and ``"nat.rly"`` (the ``.relay`` spelling works too);
        as in TVM the text is parsed into this module and type-checked, and a
        file already imported is not imported again.
        """
        name = path.removesuffix(".rly").removesuffix(".relay")
        if name in self._imports:
            return
        hooks.import_from_std(self, name)
        self._imports.add(name)

    def global_var_for(self, name: str) -> GlobalVar:
        """The global variable named ``name``, created when the module has none yet."""
        gv = self._by_name.get(name)
        return gv if gv is not None else GlobalVar(name)

    # --- changes ----------------------------------------------------------
    def add(self, var: str | GlobalVar, func: BaseFunc, update: bool = False) -> GlobalVar:
        """Bind ``func`` to ``var``; an existing name is replaced only when ``update``."""
        if not isinstance(func, BaseFunc):
            if isinstance(func, TypeData):
                raise TypeError("a type definition is added under its GlobalTypeVar "
                                "(mod[type_var] = type_data), not under a function's name")
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
        """Add or replace every function of ``other`` (and every type definition of a module)."""
        if isinstance(other, IRModule):
            for gtv, data in other._types.items():
                self.add_type_def(gtv, data, update=True)
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
        mod._types = dict(self._types)
        mod._types_by_name = dict(self._types_by_name)
        mod._imports = set(self._imports)
        mod.attrs = self.attrs
        return mod

    shallow_copy = copy

    def __reduce__(self) -> tuple:
        # Through save_json, as nodes pickle: one document, so that a global variable in a body
        # stays the module's own; which standard files were imported travels beside it.
        return (_unpickle_module, (hooks.save_json(self), sorted(self._imports)))

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


def _unpickle_module(text: str, imports: list[str]) -> IRModule:
    """The module a pickle holds (see ``IRModule.__reduce__``)."""
    mod = hooks.load_json(text)
    mod._imports.update(imports)
    return mod
