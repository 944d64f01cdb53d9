"""The prelude's dynamic tensor arrays: TVM's ``TensorArrayOps``, lists of tensors of any shape.

TensorFlow's ``TensorArray`` and PyTorch's tensor lists reach Relay as a list
(the prelude's ``List``) of ``tensor_<dtype>_t`` values.  That type has one
constructor per rank (``tensor0_<dtype>`` for a scalar up to ``tensor6_<dtype>``
for rank six, every dimension ``?``) and ``tensor_nil_<dtype>`` for a slot
nothing has been written to yet; the functions over it (``tensor_array``,
``tensor_array_read``, ``tensor_array_write``, ``tensor_array_stack``...) are
ordinary Relay functions built from the prelude's list functions and the
standard operators, so they type-check and run in the interpreter like any
program.

:class:`TensorArrayOps` builds them for one dtype under TVM's global names
(``tensor_array_float32``, ``tensor_float32_t``); :class:`~.prelude.Prelude`
registers them for :data:`~.tensor_array_base.TENSOR_ARRAY_DTYPES` when it
loads, as TVM's does.

Two choices differ from TVM on purpose.  ``tensor_concatenate`` (and so
``tensor_array_stack``) takes tensors of every rank from one to six where
TVM's stops at four, a limit of TVM's code generator for ``concatenate``.
TVM's dynamic ``tensor_array_gather`` is left out of its ``register`` (it
calls a method TVM does not have), so it is not here either; the static form
has it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any as _AnyT

from .. import op
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar
from ..ir.expr import Expr, Function, GlobalVar, Let, Var
from ..ir.types import Any, GlobalTypeVar, TensorType
from .tensor_array_base import TensorArrayBuilder, int32_var

__all__ = ["MAX_RANK", "TensorArrayOps", "dynamic_name"]

MAX_RANK = 6
"""The highest rank a ``tensor_<dtype>_t`` holds (constructors ``tensor0`` .. ``tensor6``)."""


def dynamic_name(canonical: str, dtype: str) -> str:
    """TVM's global name of a dynamic tensor-array definition: ``tensor_array`` -> ``tensor_array_int32``.

    The type itself is ``tensor_<dtype>_t``; every other name (functions and
    constructors) gets the dtype as a suffix.
    """
    if canonical == "tensor_t":
        return f"tensor_{dtype}_t"
    return f"{canonical}_{dtype}"


def _any_tensor(rank: int, dtype: str) -> TensorType:
    return TensorType([Any()] * rank, dtype)


class TensorArrayOps(TensorArrayBuilder):
    """Builds the dynamic tensor-array definitions of one dtype into a prelude's module.

    ``prelude`` is a :class:`~.prelude.Prelude` (its module gets the
    definitions; its list functions ``nth``, ``update``, ``map``, ``foldl``,
    ``hd``, ``tl`` are the building blocks).  :meth:`register` adds them all;
    each ``define_*`` adds one, replacing a definition of the same name.
    """

    def __init__(self, prelude: _AnyT, dtype: str) -> None:
        super().__init__(prelude, dtype, "TensorArrayOps")

    # --- names ----------------------------------------------------------------
    def get_name(self, canonical: str) -> str:
        """The global name of ``canonical`` for this dtype (``tensor_take`` -> ``tensor_take_int32``)."""
        return dynamic_name(canonical, self.dtype)

    def get_global_var(self, canonical: str) -> GlobalVar:
        """The module's GlobalVar of the function ``canonical`` for this dtype."""
        return self.prelude.mod.get_global_var(self.get_name(canonical))

    def get_type(self, canonical: str) -> GlobalTypeVar:
        """The module's GlobalTypeVar of the type ``canonical`` (``tensor_t``) for this dtype."""
        return self.prelude.mod.get_global_type_var(self.get_name(canonical))

    def get_ctor(self, canonical: str) -> Constructor:
        """The constructor ``canonical`` (``tensor2``, ``tensor_nil``) of ``tensor_<dtype>_t``."""
        return self.prelude.mod.get_constructor(self.get_name("tensor_t"), self.get_name(canonical))

    def _global(self, canonical: str) -> GlobalVar:
        """The GlobalVar ``canonical`` is defined under (the module's, when it has one)."""
        return self.prelude.mod.global_var_for(self.get_name(canonical))

    def _rank_ctor(self, rank: int) -> Constructor:
        return self.get_ctor(f"tensor{rank}")

    # --- the type -------------------------------------------------------------
    def _element_constructors(self, gtv: GlobalTypeVar) -> list[Constructor]:
        """``tensor_nil``, then ``tensor0`` .. ``tensor6`` holding a tensor of that rank (dims ``?``)."""
        return [Constructor(self.get_name("tensor_nil"), [], gtv)] + [
            Constructor(self.get_name(f"tensor{rank}"), [_any_tensor(rank, self.dtype)], gtv)
            for rank in range(MAX_RANK + 1)
        ]

    # --- one tensor -------------------------------------------------------------
    def _per_rank(self, value: Var, ranks: range, body_of: Callable[[int, Var], Expr]) -> Match:
        """``match? (value) { tensorR(%tR) => body_of(R, %tR), ... }`` over ``ranks``."""
        clauses = []
        for rank in ranks:
            t = Var(f"t{rank}")
            clauses.append(Clause(PatternConstructor(self._rank_ctor(rank), [PatternVar(t)]),
                                  body_of(rank, t)))
        return Match(value, clauses, False)

    def define_tensor_take(self) -> None:
        """``tensor_take(t, lower, upper)``: rows ``lower`` .. ``upper - 1`` of ``t`` (rank >= 1)."""
        t = Var("tensor", self.tensor_type_var())
        lower, upper = int32_var("lower"), int32_var("upper")

        def rows(rank: int, tr: Var) -> Expr:
            return self._rank_ctor(rank)(
                op.take(tr, op.arange(lower, upper, dtype="int32"), axis=0))

        body = self._per_rank(t, range(1, MAX_RANK + 1), rows)
        self._publish(self._global("tensor_take"),
                      Function([t, lower, upper], body, self.tensor_type_var(), []))

    def define_tensor_expand_dims(self) -> None:
        """``tensor_expand_dims(t)``: ``t`` with a new leading axis of length 1 (rank < 6)."""
        x = Var("x", self.tensor_type_var())

        def grown(rank: int, tr: Var) -> Expr:
            return self._rank_ctor(rank + 1)(op.expand_dims(tr, 0, 1))

        body = self._per_rank(x, range(MAX_RANK), grown)
        self._publish(self._global("tensor_expand_dims"),
                      Function([x], body, self.tensor_type_var()))

    def define_tensor_concat(self) -> None:
        """``tensor_concatenate(x, y)``: two tensors of one rank (1 .. 6) joined on axis 0."""
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())

        def joined(rank: int, first: Var) -> Expr:
            second = Var(f"t{rank}_2")
            ctor = self._rank_ctor(rank)
            return Match(y, [Clause(PatternConstructor(ctor, [PatternVar(second)]),
                                    ctor(op.concatenate([first, second], axis=0)))], False)

        body = self._per_rank(x, range(1, MAX_RANK + 1), joined)
        self._publish(self._global("tensor_concatenate"),
                      Function([x, y], body, self.tensor_type_var()))

    # --- the array --------------------------------------------------------------
    def define_tensor_array(self) -> None:
        """``tensor_array(n)``: a list of ``n`` empty slots (``tensor_nil``)."""
        self._define_empty_array(self._global("tensor_array"), self.get_ctor("tensor_nil"))

    def define_tensor_array_read(self) -> None:
        """``tensor_array_read(ta, i)``: the slot ``i``."""
        self._define_read(self._global("tensor_array_read"))

    def define_tensor_array_write(self) -> None:
        """``tensor_array_write(ta, i, v)``: ``ta`` with slot ``i`` replaced by ``v``."""
        self._define_write(self._global("tensor_array_write"))

    def define_tensor_array_unstack(self, rank: int) -> None:
        """``tensor_array_unstack_tensor<rank>(t)``: the rows of a rank-``rank`` tensor, as a list.

        TVM has one method per rank (``define_tensor_array_unstack_tensor1``
        ...); the rank is an argument here.
        """
        canonical = f"tensor_array_unstack_tensor{rank}"

        def row(t: Var, i: Var) -> Expr:
            return op.take(t, i) if rank == 1 else op.take(t, i, axis=0)

        self._define_unstack(self._global(f"{canonical}_helper"), self._global(canonical),
                             _any_tensor(rank, self.dtype), self._rank_ctor(rank - 1),
                             self._list_t(), row)

    def define_tensor_array_scatter(self) -> None:
        """``tensor_array_scatter(ta, indices, values)``: slot ``indices[k]`` gets ``values[k]``."""
        self._define_scatter(self._global("tensor_array_scatter_helper"),
                             self._global("tensor_array_scatter"), _any_tensor(1, "int32"), None,
                             self.get_global_var("tensor_array_write"),
                             self.get_global_var("tensor_array_read"))

    def define_tensor_array_split(self) -> None:
        """``tensor_array_split(ta, value, lengths)``: slot ``k`` gets the next ``lengths[k]`` rows."""
        self._define_split(self._global("ta_split_helper"), self._global("tensor_array_split"),
                           self._list_t(), self.tensor_type_var(), _any_tensor(1, "int32"), None,
                           self.get_global_var("tensor_array_write"),
                           self.get_global_var("tensor_take"))

    def define_tensor_array_concat(self) -> None:
        """``tensor_array_concat(ta)``: the tensors joined on axis 0 (``tensor_nil`` when empty)."""
        self._define_array_concat(self._global("tensor_array_concat"), self.tensor_type_var,
                                  self.get_global_var("tensor_concatenate"),
                                  self.get_ctor("tensor_nil"))

    def define_tensor_array_stack(self) -> None:
        """``tensor_array_stack(ta)``: the tensors stacked on a new axis 0 (``ta`` not empty).

        Each tensor grows a leading axis (``map`` of ``tensor_expand_dims``),
        then ``foldl`` joins them with ``tensor_concatenate``; the grown list
        is let-bound so it is built once (TVM puts the body in A-normal form
        for the same reason).
        """
        ta = Var("tensor_array", self._list_t())
        grown = Var("expanded", self._list_t())
        p = self.prelude
        body = Let(grown, p.map(self.get_global_var("tensor_expand_dims"), ta),
                   p.foldl(self.get_global_var("tensor_concatenate"), p.hd(grown), p.tl(grown)))
        self._publish(self._global("tensor_array_stack"),
                      Function([ta], body, self.tensor_type_var(), []))

    def register(self) -> None:
        """Add every definition for this dtype to the prelude's module (TVM's ``register``)."""
        self.define_tensor_adt()
        self.define_tensor_take()
        self.define_tensor_expand_dims()
        self.define_tensor_concat()
        self.define_tensor_array()
        self.define_tensor_array_read()
        self.define_tensor_array_write()
        for rank in range(1, MAX_RANK + 1):
            self.define_tensor_array_unstack(rank)
        self.define_tensor_array_scatter()
        self.define_tensor_array_split()
        self.define_tensor_array_concat()
        self.define_tensor_array_stack()
