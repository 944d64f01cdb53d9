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

``Prelude`` also carries TVM's tensor arrays, lists of tensors that
TensorFlow's and PyTorch's front ends build on: loading defines the dynamic
ones for TVM's nine dtypes (:mod:`.tensor_array`), as TVM's does, and its
lookups (``get_global_var(canonical, dtype, shape=None)``, ``get_type``,
``get_ctor``, ``get_tensor_ctor``, TVM's ``*_static`` ones) define the static
ones of a shape (:mod:`.tensor_array_static`), or the dynamic ones of another
dtype, on first use.  They are ordinary Relay functions over the prelude's
``List`` and the standard operators (``take``, ``arange``, ``shape_of``,
``concatenate``, ``expand_dims``), so type inference and the interpreter
handle them with no code generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ModuleError
from ..ir.adt import Constructor
from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from ..ir.summary import short_text
from ..ir.types import GlobalTypeVar
from ..transform.parsing import parse
from .tensor_array import TensorArrayOps, dynamic_name
from .tensor_array_base import TENSOR_ARRAY_DTYPES, TensorArrayError, tensor_array_dtype
from .tensor_array_static import StaticTensorArrayOps, static_name, static_shape

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

    As TVM's, it also defines the dynamic tensor arrays of each dtype of
    :data:`~.tensor_array_base.TENSOR_ARRAY_DTYPES` (``tensor_float32_t``,
    ``tensor_array_float32``...).  The lookups below find them by canonical
    name and dtype; given a ``shape`` they find the static tensor arrays of
    that element shape instead (TVM's ``*_static`` methods, also here).  A
    lookup defines what it looks for on first use: the tensor arrays of a
    dtype outside TVM's list, or of a static shape no
    :class:`~.tensor_array_static.StaticTensorArrayOps` registered yet.
    """

    def __init__(self, mod: IRModule | None = None) -> None:
        if mod is None:
            mod = IRModule()
        elif not isinstance(mod, IRModule):
            raise TypeError(f"Prelude expects an IRModule, not {type(mod).__name__}")
        self.mod = mod
        self._registered: set[tuple[str, tuple | None, int | None]] = set()
        self.load_prelude()

    # --- names ------------------------------------------------------------------
    def get_name(self, canonical: str, dtype: str, shape: Sequence[Any] | None = None) -> str:
        """The global name of a tensor-array definition: ``("tensor_array", "int32")`` -> ``tensor_array_int32``.

        With ``shape``, the static form's name (``get_name_static``).
        """
        if shape is not None:
            return self.get_name_static(canonical, dtype, shape)
        return dynamic_name(canonical, tensor_array_dtype(dtype, f"get_name({canonical!r})"))

    def get_name_static(self, canonical: str, dtype: str, shape: Sequence[Any],
                        batch_dim: int | None = None) -> str:
        """The global name of a static tensor-array definition (``tensor_array_float32_2_3``)."""
        where = f"get_name_static({canonical!r})"
        return static_name(canonical, tensor_array_dtype(dtype, where), static_shape(shape, where),
                           batch_dim)

    # --- lookups (defining on first use) --------------------------------------------
    def _ensure(self, dtype: str, shape: Sequence[Any] | None, batch_dim: int | None = None
                ) -> None:
        """Define the tensor arrays of ``dtype`` (and ``shape``) unless this prelude did already."""
        key = (tensor_array_dtype(dtype, "tensor array"),
               None if shape is None else static_shape(shape), batch_dim)
        if key in self._registered:
            return
        self._registered.add(key)
        if shape is None:
            TensorArrayOps(self, dtype).register()
        else:
            StaticTensorArrayOps(self, dtype, shape, batch_dim).register()

    def _missing(self, what: str, canonical: str, name: str, dtype: str,
                 shape: Sequence[Any] | None) -> TensorArrayError:
        form = f"dtype {dtype}"
        if shape is not None:
            form += f" and shape {short_text(list(shape))}"
        return TensorArrayError(f"the prelude has no tensor-array {what} {canonical!r} for "
                                f"{form} (looked for {name})")

    def get_global_var(self, canonical: str, dtype: str, shape: Sequence[Any] | None = None
                       ) -> GlobalVar:
        """The GlobalVar of the tensor-array function ``canonical`` for ``dtype`` (and ``shape``)."""
        if shape is not None:
            return self.get_global_var_static(canonical, dtype, shape)
        name = self.get_name(canonical, dtype)
        self._ensure(dtype, None)
        if name not in self.mod:
            raise self._missing("function", canonical, name, dtype, None)
        return self.mod.get_global_var(name)

    def get_global_var_static(self, canonical: str, dtype: str, shape: Sequence[Any],
                              batch_dim: int | None = None) -> GlobalVar:
        """The GlobalVar of the static tensor-array function ``canonical``."""
        name = self.get_name_static(canonical, dtype, shape, batch_dim)
        if name not in self.mod:
            self._ensure(dtype, shape, batch_dim)
        if name not in self.mod:
            raise self._missing("function", canonical, name, dtype, shape)
        return self.mod.get_global_var(name)

    def get_type(self, canonical: str, dtype: str, shape: Sequence[Any] | None = None
                 ) -> GlobalTypeVar:
        """The GlobalTypeVar of the tensor-array type ``canonical`` (``"tensor_t"``)."""
        if shape is not None:
            return self.get_type_static(canonical, dtype, shape)
        name = self.get_name(canonical, dtype)
        self._ensure(dtype, None)
        return self._type_var(name, canonical, dtype, None)

    def get_type_static(self, canonical: str, dtype: str, shape: Sequence[Any]) -> GlobalTypeVar:
        """The GlobalTypeVar of the static tensor-array type ``canonical`` (``"tensor_t"``)."""
        name = self.get_name_static(canonical, dtype, shape)
        if name not in self._type_names():
            self._ensure(dtype, shape)
        return self._type_var(name, canonical, dtype, shape)

    def _type_names(self) -> set[str]:
        return {gtv.name_hint for gtv in self.mod.get_global_type_vars()}

    def _type_var(self, name: str, canonical: str, dtype: str, shape: Sequence[Any] | None
                  ) -> GlobalTypeVar:
        if name not in self._type_names():
            raise self._missing("type", canonical, name, dtype, shape)
        return self.mod.get_global_type_var(name)

    def get_ctor(self, ty_name: str, canonical: str, dtype: str,
                 shape: Sequence[Any] | None = None) -> Constructor:
        """The constructor ``canonical`` (``"tensor1"``) of the type ``ty_name`` for ``dtype``.

        ``ty_name`` is the type's global name (``p.get_name("tensor_t", dtype)``),
        as in TVM, or its canonical name ``"tensor_t"``.  With ``shape``, a
        constructor of the static type (``"tensor_constructor"``, ``"tensor_nil"``).
        """
        if shape is not None:
            return self.get_ctor_static(ty_name, canonical, dtype, shape)
        if ty_name in ("tensor_t", self.get_name("tensor_t", dtype)):
            ty_name = self.get_type("tensor_t", dtype).name_hint  # defined on first use
        return self._ctor(ty_name, self.get_name(canonical, dtype), canonical, dtype, None)

    def get_ctor_static(self, ty_name: str, name: str, dtype: str, shape: Sequence[Any]
                        ) -> Constructor:
        """The constructor ``name`` (canonical) of the static type ``ty_name`` (canonical)."""
        ty = self.get_type_static(ty_name, dtype, shape)
        return self._ctor(ty.name_hint, self.get_name_static(name, dtype, shape), name, dtype,
                          shape)

    def _ctor(self, ty_name: str, name: str, canonical: str, dtype: str,
              shape: Sequence[Any] | None) -> Constructor:
        if ty_name not in self._type_names():
            raise TensorArrayError(f"the module has no type {ty_name} to take constructor "
                                   f"{canonical!r} from")
        for ctor in self.mod.get_type(ty_name)[1:]:
            if ctor.name_hint == name:
                return ctor
        raise self._missing(f"constructor of {ty_name}", canonical, name, dtype, shape)

    def get_tensor_ctor(self, canonical: str, dtype: str, shape: Sequence[Any] | None = None
                        ) -> Constructor:
        """The constructor ``canonical`` of the tensor type for ``dtype`` (and ``shape``)."""
        return self.get_ctor("tensor_t", canonical, dtype, shape)

    def get_tensor_ctor_static(self, name: str, dtype: str, shape: Sequence[Any]) -> Constructor:
        """The constructor ``name`` of the static tensor type for ``dtype`` and ``shape``."""
        return self.get_ctor_static("tensor_t", name, dtype, shape)

    def load_prelude(self) -> None:
        """Import the prelude into ``self.mod`` and name its functions (TVM's ``load_prelude``).

        Then define the dynamic tensor arrays of TVM's dtypes, as TVM's does.
        """
        self.mod.import_from_std("prelude.rly")
        for name in PRELUDE_FUNCTIONS:
            setattr(self, name, self.mod.get_global_var(name))
        for dtype in TENSOR_ARRAY_DTYPES:
            self._ensure(dtype, None)
