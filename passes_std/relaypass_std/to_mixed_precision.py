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
of its new value (a function's keeps its own, see below).  With the config key
``relay.ToMixedPrecision.keep_orig_output_dtype`` the function's result is
cast back to its original dtypes, whatever expression gives it (Relay: only
a call or a tuple).

Where Relay retypes things and leaves the program ill typed, this pass keeps
types at the boundaries instead: a nested function, and a global function
other than ``main``, keeps its signature (its result is cast back), so its
calls, its recursive calls and the callers typed against it stay valid; the
arguments of such a call get back the dtypes they had; and when the two
branches of an ``if`` end up in different dtypes, both are cast back to the
if's type.  ``missing_op_mode``: 0, an operator
without a category is an error naming them all; 1, a warning; 2, silence
(such operators FOLLOW).

The pass requires InferType (Relay declares nothing but reads every
type, inferring missing ones expression by expression, which cannot see the
module's other functions).  This is Relay's to_mixed_precision.cc; where
Relay changes variables and
functions in place, this pass builds new ones, so its input is unchanged.
Types of new nodes are computed locally from their operands' types
(casts too, as they are made, so that a tuple of them is typed without
inference); a call rebuilt over arguments whose types did not change keeps
its original's type without running the relation again.  Whole-program
inference (``_type_in_module``) is left for what the type of its operands
cannot tell, so the pass costs the same per call on any graph.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from relaypass.errors import RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.dtype import canonical_dtype
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
    generic_always_op,
    generic_follow_op,
    generic_never_op,
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


#: Marks an operator whose conversion function was not looked up yet (None means it has none).
_UNSEEN = object()


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float") or dtype == "bfloat16"


#: The types a node built here can be given without type inference (no type variables).
_LOCAL_TYPES = (TensorType, TupleType, RefType, FuncType)


def _op_call_type(call: Call, arg_types: list[Type]) -> Type:
    """The type of ``call``, a new call of an operator whose arguments have ``arg_types``.

    One step of the operator's type relation; set on the call, so that what
    is built over it is typed locally too.
    """
    op = call.op
    relation = op.get_attr("FTypeRelation")
    if relation is not None:
        attrs = call.attrs
        if attrs is None and op.attrs_schema is not None:
            attrs = op.attrs_schema.build(op.name, {})
        ty = relation(arg_types, attrs)
        if isinstance(ty, _LOCAL_TYPES):
            set_checked_type(call, ty)
            return ty
    return _type_in_module(call)


def _local_type(expr: Expr) -> Type:
    """``expr``'s type, computed from its operands' when it is new (Relay's GetType).

    The new nodes are casts, calls and tuples over nodes that are already
    typed, so one step of the operator's type relation gives the type, in
    constant time; anything else goes through type inference.
    """
    if expr.has_checked_type:
        return expr.checked_type
    kind = type(expr)
    ty: Type | None = None
    if kind is Call and isinstance(expr.op, Op) and all(a.has_checked_type for a in expr.args):
        return _op_call_type(expr, [a.checked_type for a in expr.args])
    if kind is Tuple and all(f.has_checked_type for f in expr.fields):
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
    if ty is None or not isinstance(ty, _LOCAL_TYPES):
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
    def __init__(self, func: Function, keep_result_dtype: bool, dtype: str) -> None:
        super().__init__()
        self.dtype = dtype
        self.top = func
        self.keep = keep_result_dtype
        self.missing: dict[str, int] = {}
        self.casts: dict[tuple[int, str], Expr] = {}
        self._alive: list[Expr] = []  # keeps cached nodes alive, so their ids stay theirs
        # Each operator's conversion function, looked up once; the generic ones answer the
        # same for every call, so their answer is computed once too.
        self._conversions: dict[Op, object] = {}
        self._follow = (MIXED_PRECISION_FOLLOW, dtype, dtype)
        self._generic = {fn: (category, dtype, dtype) for fn, category in (
            (generic_always_op, MIXED_PRECISION_ALWAYS), (generic_follow_op, MIXED_PRECISION_FOLLOW),
            (generic_never_op, MIXED_PRECISION_NEVER))}

    # --- casts --------------------------------------------------------------------------------
    def _cached_cast(self, expr: Expr, dtype: str, wanted: str) -> Expr:
        if not _is_float(dtype) or dtype == wanted:
            return expr
        key = (id(expr), wanted)
        found = self.casts.get(key)
        if found is not None:
            return found
        result = cast(expr, wanted)
        if expr.has_checked_type:
            _local_type(result)  # typed now, so a tuple or call over it is typed locally too
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
                if type(expr) is Tuple:
                    field = expr.fields[i]
                else:
                    field = TupleGetItem(expr, i)
                    set_checked_type(field, field_type)
                fields.append(self._cast_arg(field, field_type, wanted))
            if type(expr) is Tuple and all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields)
        raise OptionError(f"ToMixedPrecision: cannot cast a value of type {ty} to {wanted}")

    def _restore(self, expr: Expr, old: Type) -> Expr:
        """``expr`` cast back, tensor by tensor, to the dtypes of the type ``old`` it had before.

        What must keep its type (a function's result that callers, recursive
        calls or ``keep_orig_output_dtype`` rely on, the branches of an if)
        goes through here; values of other types (functions, references) keep
        their types anyway and are returned as they are.
        """
        new = _local_type(expr)
        if new == old:
            return expr
        if isinstance(old, TensorType) and isinstance(new, TensorType):
            return self._cached_cast(expr, str(new.dtype), str(old.dtype))
        if isinstance(old, TupleType) and isinstance(new, TupleType):
            fields = [self._restore(expr.fields[i] if type(expr) is Tuple else TupleGetItem(expr, i),
                                    field_type) for i, field_type in enumerate(old.fields)]
            if type(expr) is Tuple and all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields)
        return expr

    # --- categories ---------------------------------------------------------------------------
    def _category(self, pre: Call) -> tuple[int, str, str]:
        op = pre.op
        fn = self._conversions.get(op, _UNSEEN)
        if fn is _UNSEEN:
            fn = self._conversions[op] = op.get_attr(CONVERSION_ATTR)
        if fn is None:
            self.missing[op.name] = self.missing.get(op.name, 0) + 1
            return self._follow
        fixed = self._generic.get(fn)
        if fixed is not None:
            return fixed
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
        if type(ty) is TensorType:
            dtype = ty.dtype
            return dtype == self.dtype or not _is_float(dtype)
        if isinstance(ty, TupleType):
            return all(self._low_precision(t) for t in ty.fields)
        return False

    # --- the rewrite --------------------------------------------------------------------------
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        op = post.op
        if not isinstance(op, Op):
            # Calls of functions and constructors are not converted (Relay's rule).  Every
            # function keeps its signature, so the arguments get back the dtypes they had
            # and the result has the type it had.
            args = [self._restore(a, b.checked_type) for a, b in zip(post.args, pre.args)]
            if all(a is b for a, b in zip(args, pre.args)) and op is pre.op:
                return pre
            out_call = Call(op, args, pre.attrs, pre.type_args, pre.span)
            set_checked_type(out_call, pre.checked_type)
            return out_call
        category, accumulation, output = self._category(pre)
        post_args = post.args
        arg_types = [t if (t := a._checked_type) is not None else _local_type(a) for a in post_args]
        low_dtype = self.dtype
        if category == MIXED_PRECISION_FOLLOW:
            category = MIXED_PRECISION_ALWAYS
            for a, t in zip(post_args, arg_types):
                if type(t) is TensorType:
                    dtype = t.dtype
                    if dtype == low_dtype or not _is_float(dtype):
                        continue
                elif self._low_precision(t):
                    continue
                if type(a) is not Var and type(a) is not Constant:
                    category = MIXED_PRECISION_NEVER
                    break
        low = category == MIXED_PRECISION_ALWAYS and self._attrs_allow(pre.attrs)
        wanted = low_dtype if low else "float32"
        args = []
        type_args = []
        for a, t in zip(post_args, arg_types):
            if type(t) is TensorType:
                # The common case, inline: a tensor already in the dtype wanted, or not a float.
                dtype = t.dtype
                if dtype == wanted or not _is_float(dtype):
                    args.append(a)
                    type_args.append(t)
                    continue
                a = self._cached_cast(a, dtype, wanted)
            else:
                a = self._cast_arg(a, t, wanted)
            args.append(a)
            type_args.append(t if (t := a._checked_type) is not None else _local_type(a))
        if not low:
            same_args = same_types = True
            for a, t, b in zip(args, type_args, pre.args):
                if a is not b:
                    same_args = False
                    if not (t is b._checked_type or t == b._checked_type):
                        same_types = False
                        break
            if same_args and op is pre.op:
                return pre  # nothing changed: keep the typed original
            if same_types and post.type_args == tuple(type_args) and all(
                    a is b for a, b in zip(args, post_args)):
                # ``post`` is new and already what would be built; it has pre's type.
                return set_checked_type(post, pre.checked_type)
            out_call = Call(op, args, pre.attrs, type_args, pre.span)
            if same_types:
                # Same operator, attributes and argument types as the original: the same
                # result type, without running the type relation again.
                set_checked_type(out_call, pre.checked_type)
            else:
                _op_call_type(out_call, type_args)  # typed now: what reads it needs no inference
            return out_call
        out: Expr = Call(op, args, self._new_attrs(pre, accumulation), type_args, pre.span)
        out_type = _op_call_type(out, type_args)  # typed now: what reads it needs no inference
        if accumulation != output:
            out = self._cast_arg(out, out_type, output)
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
        return post

    def visit_function(self, func: Function) -> Expr:
        """The function rewritten; what keeps its signature gets its result cast back.

        A nested function keeps its signature (its result is cast back to the
        dtypes it had), so that its callers, its recursive calls and whatever
        it is passed to stay well typed; so does the function being converted
        when ``keep_orig_output_dtype`` (or, for global functions other than
        ``main``, their callers) asks for it.  Otherwise, as in Relay, its
        return type is left for type inference to work out again.
        """
        out = self.mutate_children(func)
        if func is not self.top or self.keep:
            body = self._restore(out.body, func.body.checked_type)
            if body is not out.body:
                out = with_fields(out, body=body)
            if func is not self.top:
                return out
        return with_fields(out, ret_type=None) if func.ret_type is not None else out

    def visit_if(self, node: If) -> Expr:
        """The if rewritten; branches that now differ in dtype are both cast back to the if's type."""
        out = self.mutate_children(node)
        if out is node:
            return node
        if _local_type(out.true_branch) != _local_type(out.false_branch):
            old = node.checked_type
            out = with_fields(out, true_branch=self._restore(out.true_branch, old),
                              false_branch=self._restore(out.false_branch, old))
        _local_type(out)
        return out

    def visit_let(self, let: Let) -> Expr:
        """Lets in a loop: each value first, then its variable retyped to the value's new type.

        A function keeps its signature, so its variable stays as it was: a
        recursive function's calls of itself, visited inside its value, stay bound.
        """
        chain: list[tuple[Let, Var, Expr]] = []
        node: Expr = let
        while type(node) is Let and node not in self.memo_map:
            if type(node.value) is Function:
                self.memo_map[node.var] = var = node.var
                value = self.visit(node.value)
            else:
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


def _is_main(func: Function, mod: IRModule) -> bool:
    return "main" not in mod or mod["main"] is func


#: The types a program can compute in here (the floating-point types the operators take).
_MIXED_PRECISION_TYPES = ("float16", "bfloat16", "float32", "float64")


def _factory(*, mixed_precision_type: str, missing_op_mode: int
             ) -> Callable[[Function, IRModule, object], Function]:
    """ToMixedPrecision's transformation: the manifest's factory (options checked here, once)."""
    try:
        dtype = canonical_dtype(str(mixed_precision_type))
    except ValueError:
        dtype = ""
    if dtype not in _MIXED_PRECISION_TYPES:
        raise OptionError("ToMixedPrecision: mixed_precision_type must be a floating-point type "
                          f"({', '.join(_MIXED_PRECISION_TYPES)}), got {mixed_precision_type!r}")
    if isinstance(missing_op_mode, bool) or missing_op_mode not in (0, 1, 2):
        raise OptionError(f"ToMixedPrecision: missing_op_mode must be 0, 1 or 2, got {missing_op_mode!r}")

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        # A global function other than main keeps its result's dtypes: its callers were
        # typed against them (Relay retypes it, and its callers no longer type-check).
        keep = bool(ctx.config.get(KEEP_ORIG_OUTPUT_DTYPE)) or not _is_main(func, mod)
        return to_mixed_precision(func, dtype, missing_op_mode, keep, mod)

    return transform


#: The pass ``relay.transform.ToMixedPrecision(mixed_precision_type="float16", missing_op_mode=1)``.
ToMixedPrecision = pass_constructor("ToMixedPrecision")
