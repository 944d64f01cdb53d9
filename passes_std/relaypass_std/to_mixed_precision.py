"""ToMixedPrecision: run what is safe in float16 (or bfloat16), the rest in float32 (Relay's pass).

Every operator has a conversion category, registered as the operator
attribute ``FTVMMixedPrecisionConversionType`` (``register_mixed_precision_conversion``):
a function ``fn(call, mixed_precision_type) -> [category, accumulation dtype,
output dtype]``.  The categories and Relay's default lists are in
:mod:`relaypass.transform.mixed_precision` (``relay.transform.mixed_precision``):

* ALWAYS (convolutions, dense, batch_matmul): computed in the low precision;
* FOLLOW (elementwise arithmetic, shape operators, ...): in the low precision
  when every argument already is (variables and constants can be cast),
  else in float32;
* NEVER (exp, softmax, sums, ...): in float32.

Arguments are cast to what the call runs in (each cast made once per value
and dtype, and casting back returns the original), the call's
``out_dtype``/``dtype`` attribute becomes the accumulation dtype, and its
result is cast to the output dtype when they differ.  Calls of functions and
of global or local variables are left alone; a let's variable takes the type
of its new value.  With the config key
``relay.ToMixedPrecision.keep_orig_output_dtype`` the function's result is
cast back to its original dtype.  ``missing_op_mode``: 0, an operator
without a category is an error naming them all; 1, a warning; 2, silence
(such operators FOLLOW).

The pass requires InferType (Relay declares nothing but reads every
type, inferring missing ones expression by expression, which cannot see the
module's other functions).  This is Relay's to_mixed_precision.cc; where
Relay changes variables and
functions in place, this pass builds new ones, so its input is unchanged.
Types of new nodes are computed locally from their operands' types.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from relaypass.errors import RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    set_checked_type,
)
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, RefType, TensorType, TupleType, Type
from relaypass.ir.variables import free_vars
from relaypass.op import cast
from relaypass.transform import pass_constructor
from relaypass.transform.errors import OptionError
from relaypass.transform.infer_type_local import InferTypeLocal, copy_types
from relaypass.transform.mixed_precision import (
    CONVERSION_ATTR,
    MIXED_PRECISION_ALWAYS,
    MIXED_PRECISION_FOLLOW,
    MIXED_PRECISION_NEVER,
    register_default_conversions,
)
from relaypass.transform.registry import get_pass_by_role

__all__ = ["MissingMixedPrecisionOpError", "ToMixedPrecision", "to_mixed_precision"]

KEEP_ORIG_OUTPUT_DTYPE = "relay.ToMixedPrecision.keep_orig_output_dtype"

#: The largest finite values of the low-precision types, for clip bounds.
_MAX_FINITE = {"float16": 65504.0, "bfloat16": 3.38953139e38}


class MissingMixedPrecisionOpError(RelayPassError):
    """``missing_op_mode=0`` and some operators have no mixed-precision category."""


class MixedPrecisionWarning(UserWarning):
    """Operators without a mixed-precision category were treated as FOLLOW."""


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float") or dtype == "bfloat16"


def _local_type(expr: Expr) -> Type:
    """``expr``'s type, computed from its operands' when it is new (Relay's GetType).

    The new nodes are casts, calls and tuples over nodes that are already
    typed, so one step of the operator's type relation gives the type, in
    constant time; anything else goes through InferTypeLocal.
    """
    if expr.has_checked_type:
        return expr.checked_type
    kind = type(expr)
    ty: Type | None = None
    if kind is Call and isinstance(expr.op, Op) and all(a.has_checked_type for a in expr.args):
        relation = expr.op.get_attr("FTypeRelation")
        attrs = expr.attrs
        if attrs is None and expr.op.attrs_schema is not None:
            attrs = expr.op.attrs_schema.build(expr.op.name, {})
        if relation is not None:
            ty = relation([a.checked_type for a in expr.args], attrs)
    elif kind is Tuple and all(f.has_checked_type for f in expr.fields):
        ty = TupleType([f.checked_type for f in expr.fields])
    elif kind is TupleGetItem and expr.tuple_value.has_checked_type:
        ty = expr.tuple_value.checked_type.fields[expr.index]
    elif kind is If and expr.true_branch.has_checked_type:
        ty = expr.true_branch.checked_type
    elif kind is Let and expr.body.has_checked_type:
        ty = expr.body.checked_type
    elif kind is RefCreate and expr.value.has_checked_type:
        ty = RefType(expr.value.checked_type)
    elif kind is RefRead and expr.ref.has_checked_type:
        ty = expr.ref.checked_type.value
    elif kind is RefWrite:
        ty = TupleType([])
    elif kind is Function and expr.body.has_checked_type and all(
            p.type_annotation is not None for p in expr.params):
        ty = FuncType([p.type_annotation for p in expr.params], expr.body.checked_type)
    elif kind is Call and type(expr.op) is Function and expr.op.body.has_checked_type:
        ty = expr.op.body.checked_type  # a call of a function literal gives its body's type
    if ty is None or not isinstance(ty, (TensorType, TupleType, RefType, FuncType)):
        return _type_in_module(expr)
    set_checked_type(expr, ty)
    return ty


#: The module whose function is being converted: new expressions that need full type
#: inference are typed with its global functions in view.
_module: list[IRModule] = []


def _type_in_module(expr: Expr) -> Type:
    """``expr``'s type from type inference in a copy of the module being converted.

    An expression can call the module's global functions, which an expression
    typed on its own (InferTypeLocal) cannot see.
    """
    if not _module:
        return InferTypeLocal(expr)
    mod = _module[-1].copy()
    scratch = GlobalVar("__to_mixed_precision_scratch")
    mod[scratch] = Function(free_vars(expr), expr)
    typed = get_pass_by_role("type-inference")(mod)[scratch].body
    copy_types(expr, typed)
    return expr.checked_type


class _MixedPrecision(MixedModeMutator):
    def __init__(self, func: Function, keep_orig_output_dtype: bool, dtype: str) -> None:
        super().__init__()
        self.dtype = dtype
        self.root = func.body
        self.keep = keep_orig_output_dtype
        self.original: list[str] = []
        self.missing: dict[str, int] = {}
        self.casts: dict[tuple[int, str], Expr] = {}
        self._alive: list[Expr] = []  # keeps cached nodes alive, so their ids stay theirs
        if keep_orig_output_dtype:
            root_type = self.root.checked_type
            if type(self.root) is Tuple:
                self.original = [str(t.dtype) for t in root_type.fields]
            elif type(self.root) is Call:
                self.original = [str(root_type.dtype)]

    # --- casts --------------------------------------------------------------------------------
    def _cached_cast(self, expr: Expr, dtype: str, wanted: str) -> Expr:
        if not _is_float(dtype) or dtype == wanted:
            return expr
        key = (id(expr), wanted)
        found = self.casts.get(key)
        if found is not None:
            return found
        result = cast(expr, wanted)
        self.casts[key] = result
        self.casts[(id(result), dtype)] = expr  # casting back gives the original
        self._alive.extend((expr, result))
        return result

    def _cast_arg(self, expr: Expr, ty: Type, wanted: str) -> Expr:
        if isinstance(ty, TensorType):
            return self._cached_cast(expr, str(ty.dtype), wanted)
        if isinstance(ty, TupleType):
            fields = []
            for i, field_type in enumerate(ty.fields):
                field = expr.fields[i] if type(expr) is Tuple else TupleGetItem(expr, i)
                fields.append(self._cast_arg(field, field_type, wanted))
            if type(expr) is Tuple and all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields)
        raise OptionError(f"ToMixedPrecision: cannot cast a value of type {ty} to {wanted}")

    # --- categories ---------------------------------------------------------------------------
    def _category(self, pre: Call) -> tuple[int, str, str]:
        op = pre.op
        if type(op) is Function:  # keep the function's signature
            return MIXED_PRECISION_NEVER, "float32", "float32"
        fn = op.get_attr(CONVERSION_ATTR)
        if fn is None:
            self.missing[op.name] = self.missing.get(op.name, 0) + 1
            return MIXED_PRECISION_FOLLOW, self.dtype, self.dtype
        described = list(fn(pre, self.dtype))
        if len(described) != 3:
            raise OptionError(
                f"ToMixedPrecision: the {CONVERSION_ATTR} function of {op.name!r} returned "
                f"{len(described)} values; it must return [category, accumulation dtype, output dtype]")
        return int(described[0]), str(described[1]), str(described[2])

    def _attrs_allow(self, attrs: object) -> bool:
        bound = _MAX_FINITE.get(self.dtype)
        if bound is None or attrs is None or not hasattr(attrs, "a_min"):
            return True
        return -bound <= attrs.a_min and attrs.a_max <= bound

    def _low_precision(self, ty: Type) -> bool:
        if isinstance(ty, TensorType):
            dtype = str(ty.dtype)
            return not _is_float(dtype) or dtype == self.dtype
        if isinstance(ty, TupleType):
            return all(self._low_precision(t) for t in ty.fields)
        return False

    # --- the rewrite --------------------------------------------------------------------------
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        op = post.op
        if not isinstance(op, (Op, Function)):
            # Calls of global or local functions and constructors are left alone (Relay's
            # rule); their result type is the one they had.
            if all(a is b for a, b in zip(post.args, pre.args)) and post.op is pre.op:
                return pre
            if pre.has_checked_type and not post.has_checked_type:
                set_checked_type(post, pre.checked_type)
            return post
        category, accumulation, output = self._category(pre)
        arg_types = [_local_type(a) for a in post.args]
        if category == MIXED_PRECISION_FOLLOW:
            follows = all(self._low_precision(t) or type(a) in (Var, Constant)
                          for a, t in zip(post.args, arg_types))
            category = MIXED_PRECISION_ALWAYS if follows else MIXED_PRECISION_NEVER
        low = category == MIXED_PRECISION_ALWAYS and self._attrs_allow(pre.attrs)
        wanted = self.dtype if low else "float32"
        args = [self._cast_arg(a, t, wanted) for a, t in zip(post.args, arg_types)]
        type_args = pre.type_args if type(op) is Function else [_local_type(a) for a in args]
        if not low:
            if op is pre.op and all(a is b for a, b in zip(args, pre.args)):
                return pre  # nothing changed: keep the typed original
            out_call = Call(op, args, pre.attrs, type_args, pre.span)
            if isinstance(op, Op):
                _local_type(out_call)  # typed now, so what reads it needs no inference
            return out_call
        out: Expr = Call(op, args, self._new_attrs(pre, accumulation), type_args, pre.span)
        if isinstance(op, Op):
            _local_type(out)  # typed now, so what reads it needs no inference
        if accumulation != output:
            out = self._cast_arg(out, _local_type(out), output)
        if pre is self.root and self.keep and self.original[0] != output:
            out = self._cast_arg(out, _local_type(out), self.original[0])
        return out

    @staticmethod
    def _new_attrs(call: Call, accumulation: str) -> object:
        attrs = call.attrs
        if attrs is None:
            return attrs
        for field in ("out_dtype", "dtype"):
            if field in attrs:
                current = str(attrs[field] or "")
                if current == "" or _is_float(current):
                    return attrs.with_fields(**{field: accumulation})
                return attrs
        return attrs

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        if post is not pre and all(f.has_checked_type for f in post.fields):
            _local_type(post)
        if pre is self.root and self.keep:
            fields = [self._cast_arg(f, _local_type(f), dtype)
                      for f, dtype in zip(post.fields, self.original)]
            if any(a is not b for a, b in zip(fields, post.fields)):
                return Tuple(fields)
        return post

    def visit_function(self, func: Function) -> Expr:
        """The function rewritten, its return type left for type inference to work out again."""
        out = self.mutate_children(func)
        return with_fields(out, ret_type=None) if func.ret_type is not None else out

    def visit_let(self, let: Let) -> Expr:
        """Lets in a loop: each value first, then its variable retyped to the value's new type."""
        chain: list[tuple[Let, Var, Expr]] = []
        node: Expr = let
        while type(node) is Let and node not in self.memo_map:
            value = self.visit(node.value)
            var = Var(node.var.name_hint, _local_type(value))
            self.memo_map[node.var] = var
            chain.append((node, var, value))
            node = node.body
        body = self.visit(node)
        for old, var, value in reversed(chain):
            body = Let(var, value, body, old.span)
            self.memo_map[old] = body
        return body


def to_mixed_precision(func: Function, mixed_precision_type: str = "float16",
                       missing_op_mode: int = 1, keep_orig_output_dtype: bool = False,
                       mod: IRModule | None = None) -> Function:
    """``func`` computed in ``mixed_precision_type`` where its operators' categories allow.

    ``mod``: the module ``func`` belongs to, for typing expressions that call its globals.
    """
    register_default_conversions()
    converter = _MixedPrecision(func, keep_orig_output_dtype, mixed_precision_type)
    if mod is not None:
        _module.append(mod)
    try:
        out = converter.visit(func)
    finally:
        if mod is not None:
            _module.pop()
    if converter.missing and missing_op_mode != 2:
        listing = ", ".join(f"{name!r} ({n} times)" for name, n in sorted(converter.missing.items()))
        if missing_op_mode == 0:
            raise MissingMixedPrecisionOpError(
                f"ToMixedPrecision: operators without a mixed-precision category "
                f"({CONVERSION_ATTR}): {listing}; register one with "
                "register_mixed_precision_conversion, or pass missing_op_mode=1 or 2")
        warnings.warn(f"ToMixedPrecision: operators without a mixed-precision category, treated "
                      f"as FOLLOW: {listing}", MixedPrecisionWarning, stacklevel=2)
    return out


def _factory(*, mixed_precision_type: str, missing_op_mode: int
             ) -> Callable[[Function, IRModule, object], Function]:
    """ToMixedPrecision's transformation: the manifest's factory (options checked here, once)."""
    dtype = str(mixed_precision_type)
    if not _is_float(dtype):
        raise OptionError("ToMixedPrecision: mixed_precision_type must be a floating-point type "
                          f"(float16, bfloat16, ...), got {mixed_precision_type!r}")
    if isinstance(missing_op_mode, bool) or missing_op_mode not in (0, 1, 2):
        raise OptionError(f"ToMixedPrecision: missing_op_mode must be 0, 1 or 2, got {missing_op_mode!r}")

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        keep = bool(ctx.config.get(KEEP_ORIG_OUTPUT_DTYPE))
        return to_mixed_precision(func, dtype, missing_op_mode, keep, mod)

    return transform


#: The pass ``relay.transform.ToMixedPrecision(mixed_precision_type="float16", missing_op_mode=1)``.
ToMixedPrecision = pass_constructor("ToMixedPrecision")
