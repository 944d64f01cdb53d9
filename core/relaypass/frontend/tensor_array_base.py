"""What the prelude's two forms of tensor array share: the dtype check, the error, the bodies.

A tensor array is a prelude ``List`` of an element type with a "nothing
written yet" constructor and one or more constructors holding a tensor.  The
dynamic form (:mod:`.tensor_array`, one element type per dtype, a
constructor per rank) and the static form (:mod:`.tensor_array_static`, one
element type per dtype and shape) build the same functions over their
element types: an array of empty slots, read, write, scatter, split,
concatenation of the whole array, unstacking a tensor into rows.
:class:`TensorArrayBuilder` builds those from the types, constructors and
helper functions a form hands it, so each body is written once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any as _AnyT

from .. import op
from ..errors import ModuleError
from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..ir.dtype import UnsupportedDtypeError, canonical_dtype, numpy_dtype
from ..ir.expr import Expr, Function, GlobalVar, If, Var
from ..ir.expr_builders import const
from ..ir.types import GlobalTypeVar, TensorType, Type, TypeCall, scalar_type

__all__ = ["TENSOR_ARRAY_DTYPES", "TensorArrayBuilder", "TensorArrayError", "tensor_array_dtype"]

TENSOR_ARRAY_DTYPES = (
    "float32", "float16", "float64", "int32", "uint8", "int8", "int16", "uint16", "int64",
)
"""The dtypes whose dynamic tensor arrays the prelude defines when it loads (TVM's, in order)."""


class TensorArrayError(ModuleError):
    """A tensor-array definition was asked for that the prelude cannot have.

    An unknown dtype, a shape that is not a list of sizes, a canonical name
    that names no definition: each message names what was asked.  It is a
    :class:`~relaypass.errors.ModuleError` because each is a failed lookup
    in the prelude's module.
    """


def tensor_array_dtype(dtype: object, where: str) -> str:
    """``dtype``'s canonical name (``"float"`` -> ``"float32"``); not a dtype: a TensorArrayError.

    A tensor array's elements are data, so the dtype must be one the
    interpreter holds in numpy (bfloat16 counts: it needs only ml_dtypes).
    """
    name = ""
    if isinstance(dtype, str):
        try:
            name = canonical_dtype(dtype)
            numpy_dtype(name)
        except UnsupportedDtypeError:
            pass
        except (TypeError, ValueError):
            name = ""
    if not name or name in ("void", "handle"):
        raise TensorArrayError(f"{where}: {dtype!r} is not a tensor dtype; the prelude's tensor "
                               f"arrays are defined for {', '.join(TENSOR_ARRAY_DTYPES)} "
                               f"(and any other numeric dtype on first use)")
    return name


def int32_var(name: str) -> Var:
    """A variable of type ``Tensor[(), int32]``: a position, a count, a bound."""
    return Var(name, scalar_type("int32"))


def _length_of(tensor: Expr) -> Expr:
    """The length of ``tensor``'s axis 0, read at run time."""
    return op.take(op.shape_of(tensor), const(0))


class TensorArrayBuilder(ABC):
    """The part of ``TensorArrayOps`` and ``StaticTensorArrayOps`` that does not depend on the form.

    Subclasses give their naming (:meth:`get_name`) and the element type's
    constructors; the builders here take the GlobalVars to define and the
    functions and constructors to call, and put each definition into the
    prelude's module.
    """

    def __init__(self, prelude: _AnyT, dtype: str, where: str) -> None:
        self.prelude = prelude
        self.dtype = tensor_array_dtype(dtype, where)
        self.list, self.cons, self.nil = prelude.mod.get_type("List")
        self._tensor_type_var: GlobalTypeVar | None = None

    def define_tensor_adt(self) -> None:
        """Define the element type, unless the module has it (TVM's ``define_tensor_adt``).

        A type already there is kept: values and programs built before refer
        to its constructors, so registering a dtype or shape twice is harmless.
        """
        name = self.get_name("tensor_t")
        for gtv in self.prelude.mod.get_global_type_vars():
            if gtv.name_hint == name:
                self._tensor_type_var = gtv
                return
        gtv = self._tensor_type_var = GlobalTypeVar(name)
        self.prelude.mod[gtv] = TypeData(gtv, [], self._element_constructors(gtv))

    @abstractmethod
    def get_name(self, canonical: str) -> str:
        """The global name of ``canonical`` (each form names its definitions its own way)."""

    @abstractmethod
    def _element_constructors(self, gtv: GlobalTypeVar) -> list[Constructor]:
        """The constructors of the element type ``gtv``: "nothing written yet" first."""

    @property
    def tensor_type_var(self) -> GlobalTypeVar:
        """The element type's GlobalTypeVar, defined first if need be.

        A ``define_*`` method may be called before :meth:`define_tensor_adt`
        (TVM's front ends redefine ``tensor_array_scatter`` that way).
        """
        if self._tensor_type_var is None:
            self.define_tensor_adt()
        return self._tensor_type_var

    def _list_t(self, element: GlobalTypeVar | None = None) -> TypeCall:
        """``List[element]`` (the element type by default)."""
        return self.list((element or self.tensor_type_var)())

    def _publish(self, gv: GlobalVar, func: Function) -> None:
        """Define ``gv`` and name it on the prelude (``p.tensor_array_int32``), as TVM does."""
        self.prelude.mod[gv] = func
        setattr(self.prelude, gv.name_hint, gv)

    # --- the shared definitions ---------------------------------------------------------
    def _define_empty_array(self, gv: GlobalVar, nil: Constructor) -> None:
        """``gv(n)``: a list of ``n`` slots holding ``nil()``."""
        n = int32_var("x")
        body = If(op.equal(n, const(0)), self.nil(),
                  self.cons(nil(), gv(op.subtract(n, const(1)))))
        self._publish(gv, Function([n], body, self._list_t(), []))

    def _define_read(self, gv: GlobalVar) -> None:
        """``gv(ta, i)``: the slot ``i`` (the prelude's ``nth``; out of range, a match failure)."""
        ta, n = Var("tensor_array", self._list_t()), int32_var("x")
        self._publish(gv, Function([ta, n], self.prelude.nth(ta, n), self.tensor_type_var(), []))

    def _define_write(self, gv: GlobalVar) -> None:
        """``gv(ta, i, v)``: ``ta`` with slot ``i`` replaced by ``v`` (the prelude's ``update``)."""
        ta, n = Var("tensor_array", self._list_t()), int32_var("x")
        v = Var("v", self.tensor_type_var())
        self._publish(gv, Function([ta, n, v], self.prelude.update(ta, n, v), self._list_t(), []))

    def _define_unstack(self, helper: GlobalVar, gv: GlobalVar, tensor_t: TensorType,
                        row_ctor: Constructor, rows_t: Type, row: Callable[[Var, Var], Expr]
                        ) -> None:
        """``gv(t)``: the rows ``row(t, i)`` of ``t``, each wrapped in ``row_ctor``, as a list.

        ``helper(i, up, t)`` walks ``i`` up to ``up``, the length of axis 0
        read at run time.
        """
        i, up, t = int32_var("i"), int32_var("up"), Var("t", tensor_t)
        body = If(op.equal(i, up), self.nil(),
                  self.cons(row_ctor(row(t, i)), helper(op.add(i, const(1)), up, t)))
        self._publish(helper, Function([i, up, t], body, rows_t, []))
        tensor = Var("tensor", tensor_t)
        self._publish(gv, Function([tensor], helper(const(0), _length_of(tensor), tensor),
                                   rows_t, []))

    def _define_scatter(self, helper: GlobalVar, gv: GlobalVar, indices_t: TensorType,
                        count: int | None, write: GlobalVar, read: GlobalVar) -> None:
        """``gv(ta, indices, values)``: slot ``indices[k]`` gets ``values[k]``, for each k.

        ``count`` is the number of indices when their shape is static, else
        it is read at run time.
        """
        list_t = self._list_t()
        ta, values_ = Var("ta", list_t), Var("values_", list_t)
        current, limit = int32_var("current"), int32_var("limit")
        indices_ = Var("indices_", indices_t)
        step = write(ta, op.take(indices_, current), read(values_, current))
        body = If(op.equal(current, limit), ta,
                  helper(step, op.add(current, const(1)), limit, indices_, values_))
        self._publish(helper, Function([ta, current, limit, indices_, values_], body, list_t, []))
        tensor_array, values = Var("tensor_array", list_t), Var("values", list_t)
        indices = Var("indices", indices_t)
        n = const(count) if count is not None else _length_of(indices)
        self._publish(gv, Function([tensor_array, indices, values],
                                   helper(tensor_array, const(0), n, indices, values), list_t, []))

    def _define_split(self, helper: GlobalVar, gv: GlobalVar, list_t: Type, value_t: Type,
                      lengths_t: TensorType, count: int | None, write: GlobalVar,
                      take: GlobalVar) -> None:
        """``gv(ta, value, lengths)``: slot ``k`` gets the next ``lengths[k]`` rows of ``value``.

        ``helper`` recurses first and writes on the way back, so slot ``k``
        is written after the slots behind it, as TVM's does.
        """
        ta1, value1 = Var("tensor_array", list_t), Var("value1", value_t)
        offset1, current1, limit1 = (int32_var(n) for n in ("offset1", "current1", "limit1"))
        lengths1 = Var("lengths", lengths_t)
        length = op.take(lengths1, current1)
        rest = helper(ta1, value1, op.add(offset1, length), op.add(current1, const(1)), limit1,
                      lengths1)
        body = If(op.equal(current1, limit1), ta1,
                  write(rest, current1, take(value1, offset1, op.add(length, offset1))))
        self._publish(helper, Function([ta1, value1, offset1, current1, limit1, lengths1], body,
                                       list_t, []))
        tensor_array, value = Var("tensor_array", list_t), Var("value", value_t)
        lengths = Var("lengths", lengths_t)
        n = const(count) if count is not None else _length_of(lengths)
        self._publish(gv, Function([tensor_array, value, lengths],
                                   helper(tensor_array, value, const(0), const(0), n, lengths),
                                   list_t, []))

    def _define_array_concat(self, gv: GlobalVar, element: GlobalTypeVar, concat: GlobalVar,
                             nil: Constructor) -> None:
        """``gv(ta)``: the tensors of ``ta`` (a list of ``element``) joined by ``concat``.

        An empty array gives ``nil()``.
        """
        ta = Var("tensor_array", self._list_t(element))
        hd, tl = Var("hd"), Var("tl")
        rest = Match(tl, [Clause(PatternConstructor(self.nil), hd),
                          Clause(PatternWildcard(), concat(hd, gv(tl)))], False)
        body = Match(ta, [
            Clause(PatternConstructor(self.nil), nil()),
            Clause(PatternConstructor(self.cons, [PatternVar(hd), PatternVar(tl)]), rest),
        ], False)
        self._publish(gv, Function([ta], body, element(), []))
