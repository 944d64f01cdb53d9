"""The prelude's static tensor arrays: TVM's ``StaticTensorArrayOps``, lists of tensors of one shape.

When a front end knows the shape of a tensor array's elements (``?`` allowed
in any dimension), TVM gives the array its own type, named after dtype and
shape: ``static_tensor_float32_2_3_t`` holds a ``Tensor[(2, 3), float32]``
(constructor ``tensor_constructor_float32_2_3``) or nothing yet
(``tensor_nil_float32_2_3``); a scalar is ``..._scalar_t``, a ``?`` is
``any``.  The functions are named the same way (``tensor_array_read_float32_2_3``)
and built from the prelude's list functions and standard operators as the
dynamic ones are, so they type-check and run in the interpreter.

Functions whose result has another shape (``tensor_take`` gives
``[?, 3]`` rows of ``[2, 3]``, ``tensor_array_stack`` a ``[?, 2, 3]``) use
the type of that shape, defined on the way.  ``batch_dim=1`` marks an array
known to hold one tensor: the names of its functions say ``batch1`` and the
stacked axis is 1 rather than ``?``.

:func:`get_tensor_array_shape` reads the element shape back from the type of
an expression, as TVM's front ends do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any as _AnyT

from .. import op
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar
from ..ir.expr import Expr, Function, GlobalVar, If, Var
from ..ir.expr_builders import const
from ..ir.summary import short_text
from ..ir.types import Any, GlobalTypeVar, TensorType, TypeCall
from ..ir.variables import free_vars
from ..transform import get_pass_by_role
from .tensor_array_base import (
    TensorArrayBuilder,
    TensorArrayError,
    int32_var,
    tensor_array_dtype,
)

__all__ = ["StaticTensorArrayOps", "get_tensor_array_shape", "static_name", "static_shape"]

Shape = Sequence[_AnyT]


def static_shape(shape: _AnyT, where: str = "a static tensor array") -> tuple[int | Any, ...]:
    """``shape`` as a tuple of sizes (ints >= 0) and ``Any``; anything else is a TensorArrayError.

    Sizes may come as numpy integers or nodes with an integer ``value``
    (``tir.IntImm``); a symbolic size has no name in TVM's naming scheme.
    """
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
        raise TensorArrayError(f"{where}: the shape must be a list of sizes, not "
                               f"{short_text(shape)}")
    dims: list[int | Any] = []
    for dim in shape:
        if isinstance(dim, Any):
            dims.append(dim)
            continue
        value = getattr(dim, "value", dim)
        try:
            size = int(value)
        except (TypeError, ValueError):
            size = -1
        if size < 0 or isinstance(value, (bool, float)) or size != value:
            raise TensorArrayError(
                f"{where}: every dimension of the shape must be a size >= 0 or relay.Any(), "
                f"not {short_text(dim)} (shape {short_text(list(shape))})")
        dims.append(size)
    return tuple(dims)


def _static_length(shape: tuple[int | Any, ...]) -> int | None:
    """The length of axis 0 of a tensor of ``shape`` when it is known, else None."""
    return shape[0] if shape and not isinstance(shape[0], Any) else None


def _shape_text(shape: Shape) -> str:
    return "_".join("any" if isinstance(d, Any) else str(d) for d in shape)


def static_name(canonical: str, dtype: str, shape: Shape, batch_dim: int | None = None,
                extra_shapes: Mapping[str, Shape] | None = None) -> str:
    """TVM's global name of a static tensor-array definition.

    ``tensor_t`` names the type (``static_tensor_float32_2_3_t``); the others
    get dtype and shape as suffixes (``tensor_array_float32_2_3``), with
    ``batch1`` before the shape for an array of one tensor (``batch_dim=1``;
    never for the type's constructors) and ``_<name>_<shape>`` after it for
    each extra shape a function was specialized to (``indices``).
    """
    text = _shape_text(shape)
    for name, extra in (extra_shapes or {}).items():
        text += f"_{name}_{_shape_text(extra)}"
    text = text or "scalar"
    if canonical == "tensor_t":
        return f"static_tensor_{dtype}_{text}_t"
    if batch_dim == 1 and canonical not in ("tensor_constructor", "tensor_nil"):
        return f"{canonical}_{dtype}_batch1_{text}"
    return f"{canonical}_{dtype}_{text}"


def get_tensor_array_shape(expr: _AnyT, dtype: str, prelude: _AnyT) -> tuple[int | Any, ...] | None:
    """The element shape of the static tensor array ``expr``; None for a dynamic one.

    As TVM's: ``expr`` becomes ``main`` of the prelude's module (a function
    of its free variables) and is type-checked; the name of its element type
    (``static_tensor_<dtype>_<shape>_t``) gives the shape.  An expression
    whose type is not a list is a TensorArrayError.
    """
    dtype = tensor_array_dtype(dtype, "get_tensor_array_shape")
    mod = prelude.mod
    mod["main"] = Function(free_vars(expr), expr)
    typed = get_pass_by_role("type-inference")(mod)
    ty = typed["main"].body.checked_type
    element = ty.args[0] if isinstance(ty, TypeCall) and ty.args else None
    if not isinstance(element, TypeCall):
        raise TensorArrayError(f"get_tensor_array_shape: the expression's type is "
                               f"{short_text(ty)}, not a tensor array (a List of a tensor type)")
    prefix, suffix = f"static_tensor_{dtype}_", "_t"
    name = element.func.name_hint
    if not (name.startswith(prefix) and name.endswith(suffix)):
        return None
    text = name[len(prefix):-len(suffix)]
    if text == "scalar":
        return ()
    return tuple(Any() if d in ("any", "?") else int(d) for d in text.split("_"))


class StaticTensorArrayOps(TensorArrayBuilder):
    """Builds the static tensor-array definitions of one dtype and element shape.

    ``prelude`` is a :class:`~.prelude.Prelude`; ``shape`` a list of sizes and
    ``relay.Any()``; ``batch_dim=1`` for an array of one tensor.
    :meth:`register` adds every definition; the type is defined once per
    module, and each function is left alone when the module has it already,
    except those TVM redefines (``tensor_array``, ``tensor_expand_dims``,
    ``tensor_array_unstack``, ``tensor_array_stack``, ``tensor_array_gather``,
    ``tensor_get_data``), which are replaced by equal ones.
    """

    def __init__(self, prelude: _AnyT, dtype: str, shape: Shape, batch_dim: int | None = None
                 ) -> None:
        super().__init__(prelude, dtype, "StaticTensorArrayOps")
        self.shape = list(static_shape(shape, f"StaticTensorArrayOps({dtype!r})"))
        self.batch_dim = batch_dim

    # --- names ----------------------------------------------------------------
    def get_name(self, canonical: str, extra_shapes: Mapping[str, Shape] | None = None) -> str:
        """The global name of ``canonical`` for this dtype, shape and batch."""
        return static_name(canonical, self.dtype, self.shape, self.batch_dim, extra_shapes)

    def get_global_var(self, canonical: str) -> GlobalVar:
        """The module's GlobalVar of the function ``canonical`` (defined on first use)."""
        return self.prelude.get_global_var_static(canonical, self.dtype, self.shape, self.batch_dim)

    def get_type(self, canonical: str) -> GlobalTypeVar:
        """The module's GlobalTypeVar of the type ``canonical`` (``tensor_t``)."""
        return self.prelude.get_type_static(canonical, self.dtype, self.shape)

    def get_ctor(self, canonical: str) -> Constructor:
        """The constructor ``canonical`` (``tensor_constructor``, ``tensor_nil``) of the type."""
        return self.prelude.get_ctor_static("tensor_t", canonical, self.dtype, self.shape)

    def is_cached(self, name: str) -> bool:
        """Whether the module has a function called ``name`` already."""
        return name in self.prelude.mod

    def _create_global_var(self, name: str) -> GlobalVar:
        """The module's GlobalVar called ``name``, or a new one (TVM's ``_create_global_var``)."""
        return self.prelude.mod.global_var_for(name)

    def _get_adt_by_shape(self, shape: Shape) -> tuple[GlobalTypeVar, Constructor,
                                                       StaticTensorArrayOps]:
        """The type of ``shape`` (defined when new), its tensor constructor, and its ops."""
        ops = StaticTensorArrayOps(self.prelude, self.dtype, shape, self.batch_dim)
        ops.define_tensor_adt()
        return ops.tensor_type_var, ops.get_ctor("tensor_constructor"), ops

    def _element(self) -> TensorType:
        return TensorType(self.shape, self.dtype)

    def _stacked_axis(self) -> int | Any:
        """The new leading axis of a stack: 1 for an array of one tensor, else ``?``."""
        return 1 if self.batch_dim == 1 else Any()

    # --- the type -------------------------------------------------------------
    def _element_constructors(self, gtv: GlobalTypeVar) -> list[Constructor]:
        """``tensor_nil``, then ``tensor_constructor`` holding a ``Tensor[shape, dtype]``."""
        return [Constructor(self.get_name("tensor_nil"), [], gtv),
                Constructor(self.get_name("tensor_constructor"), [self._element()], gtv)]

    # --- one tensor -------------------------------------------------------------
    def _unwrap(self, value: Var, body_of: Callable[[Var], Expr]) -> Match:
        """``match? (value) { tensor_constructor(%t) => body_of(%t) }``."""
        t = Var("t")
        return Match(value, [Clause(PatternConstructor(self.get_ctor("tensor_constructor"),
                                                       [PatternVar(t)]), body_of(t))], False)

    def define_tensor_take(self) -> None:
        """``tensor_take(t, lower, upper)``: rows ``lower`` .. ``upper - 1``, a ``[?, ...]`` tensor."""
        name = self.get_name("tensor_take")
        if not self.shape or self.is_cached(name):
            return
        out_t, out_ctor, _ = self._get_adt_by_shape([Any(), *self.shape[1:]])
        t = Var("tensor", self.tensor_type_var())
        lower, upper = int32_var("lower"), int32_var("upper")
        body = self._unwrap(t, lambda x: out_ctor(
            op.take(x, op.arange(lower, upper, dtype="int32"), axis=0)))
        self._publish(GlobalVar(name), Function([t, lower, upper], body, out_t(), []))

    def define_tensor_concatenate(self) -> None:
        """``tensor_concatenate(x, y)``: two tensors joined on axis 0, a ``[?, ...]`` tensor."""
        name = self.get_name("tensor_concatenate")
        if not self.shape or self.is_cached(name):
            return
        out_t, out_ctor, _ = self._get_adt_by_shape([Any(), *self.shape[1:]])
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())
        body = self._unwrap(x, lambda first: self._unwrap(
            y, lambda second: out_ctor(op.concatenate([first, second], axis=0))))
        self._publish(GlobalVar(name), Function([x, y], body, out_t(), []))

    def define_tensor_expand_dims(self) -> None:
        """``tensor_expand_dims(t)``: ``t`` with a new leading axis (``?``, or 1 for one tensor).

        The type says ``?`` although the axis has length 1, because stacking
        concatenates the grown tensors into one of the same type.
        """
        gv = self._create_global_var(self.get_name("tensor_expand_dims"))
        out_t, out_ctor, _ = self._get_adt_by_shape([self._stacked_axis(), *self.shape])
        x = Var("x", self.tensor_type_var())
        body = self._unwrap(x, lambda t: out_ctor(op.expand_dims(t, 0, 1)))
        self._publish(gv, Function([x], body, out_t(), []))

    def define_tensor_get_data(self) -> None:
        """``tensor_get_data(t)``: the tensor a ``tensor_constructor`` holds."""
        gv = self._create_global_var(self.get_name("tensor_get_data"))
        t = Var("tensor", self.tensor_type_var())
        self._publish(gv, Function([t], self._unwrap(t, lambda x: x), self._element(), []))

    # --- the array --------------------------------------------------------------
    def define_tensor_array(self) -> None:
        """``tensor_array(n)``: a list of ``n`` empty slots."""
        self._define_empty_array(self._create_global_var(self.get_name("tensor_array")),
                                 self.get_ctor("tensor_nil"))

    def define_tensor_array_read(self) -> None:
        """``tensor_array_read(ta, i)``: the slot ``i``."""
        name = self.get_name("tensor_array_read")
        if not self.is_cached(name):
            self._define_read(GlobalVar(name))

    def define_tensor_array_write(self) -> None:
        """``tensor_array_write(ta, i, v)``: ``ta`` with slot ``i`` replaced by ``v``."""
        name = self.get_name("tensor_array_write")
        if not self.is_cached(name):
            self._define_write(GlobalVar(name))

    def define_tensor_array_unstack(self) -> None:
        """``tensor_array_unstack(t)``: the rows of a ``Tensor[shape]``, in the array type of a row."""
        if not self.shape:
            return
        row_t, row_ctor, _ = self._get_adt_by_shape(self.shape[1:])
        self._define_unstack(
            self._create_global_var(self.get_name("tensor_array_unstack_helper")),
            self._create_global_var(self.get_name("tensor_array_unstack")), self._element(),
            row_ctor, self._list_t(row_t), lambda t, i: op.take(t, i, axis=0))

    def define_tensor_array_scatter(self, indices_shape: Shape | None = None,
                                    force_update: bool = False) -> None:
        """``tensor_array_scatter(ta, indices, values)``: slot ``indices[k]`` gets ``values[k]``.

        ``indices_shape`` specializes it to indices of that static shape (the
        name then says so, ``..._indices_2``); an existing definition is
        replaced only with ``force_update``.
        """
        extra = None
        if indices_shape is not None:
            extra = {"indices": static_shape(indices_shape, "tensor_array_scatter: indices_shape")}
        name = self.get_name("tensor_array_scatter", extra)
        if hasattr(self.prelude, name) and not force_update:
            return
        indices = extra["indices"] if extra else (Any(),)
        count = _static_length(indices)
        self._define_scatter(
            self._create_global_var(self.get_name("tensor_array_scatter_helper", extra)),
            self._create_global_var(name), TensorType(indices, "int32"), count,
            self.get_global_var("tensor_array_write"), self.get_global_var("tensor_array_read"))

    def define_tensor_array_split(self, value_shape: Shape | None = None,
                                  lengths_shape: Shape | None = None,
                                  force_update: bool = False) -> None:
        """``tensor_array_split(ta, value, lengths)``: slot ``k`` gets the next ``lengths[k]`` rows.

        The array holds ``[?, ...]`` tensors (rows of this shape).
        ``value_shape`` takes the value in the type of that shape instead of
        this one; ``lengths_shape`` gives the lengths a static shape.  An
        existing definition is replaced only with ``force_update`` (under
        the same names).
        """
        if not self.shape:
            return
        split = self._create_global_var(self.get_name("tensor_array_split"))
        if self.is_cached(split.name_hint) and not force_update:
            return
        out_t, _, out_ops = self._get_adt_by_shape([Any(), *self.shape[1:]])
        out_ops.define_tensor_array_write()
        if value_shape is None:
            value_t, take = self.tensor_type_var, self.get_global_var("tensor_take")
        else:
            value_t, _, value_ops = self._get_adt_by_shape(value_shape)
            value_ops.define_tensor_take()
            take = value_ops.get_global_var("tensor_take")
        lengths: tuple[int | Any, ...] = (Any(),)
        if lengths_shape is not None:
            lengths = static_shape(lengths_shape, "tensor_array_split: lengths_shape")
        count = _static_length(lengths)
        self._define_split(
            self._create_global_var(self.get_name("ta_split_helper")), split,
            self._list_t(out_t), value_t(), TensorType(lengths, "int32"), count,
            out_ops.get_global_var("tensor_array_write"), take)

    def define_tensor_array_concat(self) -> None:
        """``tensor_array_concat(ta)``: an array of ``[?, ...]`` tensors joined on axis 0."""
        name = self.get_name("tensor_array_concat")
        if not self.shape or self.is_cached(name):
            return
        out_t, _, out_ops = self._get_adt_by_shape([Any(), *self.shape[1:]])
        out_ops.define_tensor_concatenate()
        self._define_array_concat(GlobalVar(name), out_t,
                                  out_ops.get_global_var("tensor_concatenate"),
                                  out_ops.get_ctor("tensor_nil"))

    def define_tensor_array_stack(self) -> None:
        """``tensor_array_stack(ta)``: the tensors stacked on a new axis 0 (``ta`` not empty).

        Each tensor grows a leading axis, then ``foldl`` joins them with the
        grown shape's ``tensor_concatenate``; an array of one tensor
        (``batch_dim=1``) is just its grown tensor.
        """
        gv = self._create_global_var(self.get_name("tensor_array_stack"))
        ta = Var("tensor_array", self._list_t())
        out_t, _, out_ops = self._get_adt_by_shape([self._stacked_axis(), *self.shape])
        out_ops.define_tensor_concatenate()
        p = self.prelude
        grown = p.map(self.get_global_var("tensor_expand_dims"), ta)
        if self.batch_dim == 1:
            body = p.id(p.hd(grown))
        else:
            body = p.foldl(out_ops.get_global_var("tensor_concatenate"), p.hd(grown), p.tl(grown))
        self._publish(gv, Function([ta], body, out_t(), []))

    def define_tensor_array_gather(self) -> None:
        """``tensor_array_gather(ta, indices)``: the slots ``indices`` stacked on a new axis 0.

        The helper collects the slots from the last index down, so the
        collected list is in the order of ``indices`` when it is stacked.
        """
        helper = self._create_global_var(self.get_name("tensor_array_gather_helper"))
        out_t, _, _ = self._get_adt_by_shape([self._stacked_axis(), *self.shape])
        stack = self.get_global_var("tensor_array_stack")
        read = self.get_global_var("tensor_array_read")
        ta, accu = Var("ta", self._list_t()), Var("accu", self._list_t())
        current, limit = int32_var("current"), int32_var("limit")
        indices_ = Var("indices_", TensorType([Any()], "int32"))
        before = op.subtract(current, const(1))
        body = If(op.equal(current, const(0)), stack(accu),
                  helper(ta, self.cons(read(ta, op.take(indices_, before)), accu), before,
                         limit, indices_))
        self._publish(helper, Function([ta, accu, current, limit, indices_], body, out_t(), []))
        gather = self._create_global_var(self.get_name("tensor_array_gather"))
        tensor_array = Var("tensor_array", self._list_t())
        indices = Var("indices", TensorType([Any()], "int32"))
        count = op.take(op.shape_of(indices), const(0))
        self._publish(gather, Function([tensor_array, indices],
                                       helper(tensor_array, self.nil(), count, count, indices),
                                       out_t(), []))

    def register(self) -> None:
        """Add every definition for this dtype and shape (TVM's ``register``)."""
        self.define_tensor_adt()
        self.define_tensor_take()
        self.define_tensor_concatenate()
        self.define_tensor_expand_dims()
        self.define_tensor_array()
        self.define_tensor_array_read()
        self.define_tensor_array_write()
        self.define_tensor_array_unstack()
        self.define_tensor_array_scatter()
        self.define_tensor_array_split()
        self.define_tensor_array_concat()
        self.define_tensor_array_stack()
        self.define_tensor_array_gather()
        self.define_tensor_get_data()
