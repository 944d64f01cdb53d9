"""FoldConstant: evaluate at compile time whatever depends only on constants.

Relay's ConstantFolder (``fold_constant.cc``), as a post-order rewrite that
never recurses along dataflow or let chains:

* a *constant* is a :class:`Constant`, or a :class:`Tuple` whose fields are
  all constants (:class:`ConstantChecker`, memoized);
* ``let %x = <folds to a Constant>; body`` is dropped and the constant used
  for ``%x`` in the body;
* ``(a, b, c).1`` of a literal tuple becomes ``b``, constant or not;
* a call of an operator with at least one argument, not stateful
  (``TOpIsStateful``), not ``TNonComputational``, all of whose arguments are
  constants, is evaluated by the operator's numpy kernel and replaced by its
  value (a Tuple of Constants for a tuple result);
* a call without arguments (``zeros(shape=...)``, ``ones``) is evaluated
  too, unless the option ``fold_nullary`` is false.  Relay leaves them alone
  (a constant is bigger than the call that makes it), but a model whose
  weights are made by such calls (an ONNX ``ConstantOfShape`` that
  SimplifyExpr turned into ``zeros``) is only constant once they are folded,
  and exporting it, or anything reading the weights, needs them folded;
  ``FoldConstant(fold_nullary=False)`` keeps Relay's choice;
* ``shape_of(e)`` and ``ndarray_size(e)`` fold when the type of ``e`` has a
  static shape, whatever ``e`` is;
* an If whose condition folds to a constant becomes the branch it selects;
* nothing inside a function marked ``Primitive`` changes.

A typed function comes back typed: a folded value is a Constant typed from
its array, and a node rebuilt over children of the types they had keeps its
type (:func:`~relaypass.transform.infer_type_local.carry_type`), so the
typing that ends the pass finds nothing to do.

Types are needed only for ``shape_of``/``ndarray_size`` of a non-constant.
They are read from ``checked_type`` (or a variable's annotation); when a
function has such a call and no types, it is typed once with InferType
(found through the pass registry) and folded again.

Two cases where Relay's folding disagrees with its own operators are not
copied: ``shape_of`` of a scalar folds to the empty shape ``[]`` (Relay makes
a rank-0 tensor) and ``ndarray_size`` of a scalar folds to 1 (Relay says 0),
so a folded program computes what it computed before.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import is_

import numpy as np

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
    Tuple,
    TupleGetItem,
    Var,
    set_checked_type,
)
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import TensorType, TupleType
from relaypass.transform import pass_constructor
from relaypass.transform.infer_type_local import carry_type

__all__ = ["ConstantChecker", "FoldConstant", "fold_constant"]

_SHAPE_OPS = frozenset({"shape_of", "vm.shape_of"})
_SIZE_OPS = frozenset({"ndarray_size"})
_NEVER_EVALUATED = frozenset({"device_copy"}) | _SHAPE_OPS | _SIZE_OPS

# What a kernel may raise on arguments it cannot handle; such a call is left unfolded, so
# that a failure surfaces only if and when the program really evaluates it.
_KERNEL_FAILURES = (RelayPassError, ArithmeticError, ValueError, TypeError, IndexError)


class ConstantChecker:
    """Decides what is constant: a Constant, or a Tuple of constants, at any nesting.

    Results for tuples are memoized by node, so a tuple shared by many calls
    is examined once.
    """

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: dict[Tuple, bool] = {}

    def check(self, expr: Expr) -> bool:
        t = type(expr)
        if t is Constant:
            return True
        if t is not Tuple:
            return False
        memo = self.memo
        known = memo.get(expr)
        if known is not None:
            return known
        stack = [expr]
        while stack:
            node = stack[-1]
            result = True
            for field in node.fields:
                tf = type(field)
                if tf is Constant:
                    continue
                if tf is not Tuple:
                    result = False
                    break
                inner = memo.get(field)
                if inner is None:
                    stack.append(field)
                    result = None
                    break
                if not inner:
                    result = False
                    break
            if result is not None:
                memo[node] = result
                stack.pop()
        return memo[expr]


def _to_value(expr: Expr) -> object:
    """A constant expression as a kernel argument: an array or a tuple of values."""
    if type(expr) is Constant:
        return expr.array
    return tuple(_to_value(f) for f in expr.fields)


def _to_expr(value: object) -> Expr:
    """A kernel result as an expression: a Constant or a Tuple of them, typed."""
    if isinstance(value, (tuple, list)):
        tup = Tuple([_to_expr(v) for v in value])
        set_checked_type(tup, TupleType([f.checked_type for f in tup.fields]))
        return tup
    arr = np.asarray(value)
    if arr.base is None and arr.flags.writeable:
        # A fresh result nobody else holds: the Constant may keep it without a copy.
        arr.flags.writeable = False
    return _typed_constant(arr)


def _typed_constant(arr: np.ndarray) -> Constant:
    """A Constant of ``arr`` with the type InferType gives it (its users can keep theirs)."""
    const = Constant(arr)
    data = const.array
    set_checked_type(const, TensorType(data.shape, str(data.dtype)))
    return const


def _static_shape(expr: Expr) -> tuple[int, ...] | None:
    if type(expr) is Constant:
        return expr.array.shape
    ty = expr._checked_type
    if ty is None and type(expr) is Var:
        ty = expr.type_annotation
    if isinstance(ty, TensorType) and ty.is_static:
        return ty.concrete_shape
    return None


class _Folder(MixedModeMutator):
    def __init__(self, fold_nullary: bool = True) -> None:
        super().__init__()
        self.checker = ConstantChecker()
        self.needs_types = False
        self.fold_nullary = fold_nullary

    # --- dataflow -------------------------------------------------------------------------
    def visit_call(self, call: Call) -> Expr:
        # Relay's Rewrite_(pre, post) for calls, deciding before ``post`` is built, so that
        # a call that folds never allocates its rebuilt version.
        visit = self.visit
        op = call.op
        if type(op) is not Op:  # an operator is its own rewrite
            op = visit(op)
        memo = self.memo_map
        args = [memo[a] if a in memo else visit(a) for a in call.args]
        unchanged = op is call.op and all(map(is_, args, call.args))
        if not args and not self.fold_nullary:
            return call
        if type(op) is Op:
            attrs = op._attrs
            if not attrs.get("TOpIsStateful"):
                name = op.name
                if name in _SHAPE_OPS or name in _SIZE_OPS:
                    folded = self._fold_shape(call, name)
                    if folded is not None:
                        return folded
                elif name not in _NEVER_EVALUATED and not attrs.get("TNonComputational"):
                    folded = self._evaluate(attrs.get("FKernel"), args, call.attrs)
                    if folded is not None:
                        return folded
        if unchanged:
            return call
        return carry_type(call, rebuild(call, (op, *args)))

    def _evaluate(self, kernel, args: list[Expr], attrs) -> Expr | None:
        """The value of an operator call on constant arguments, or None."""
        if kernel is None:
            return None
        check = self.checker.check
        for arg in args:
            if not check(arg):
                return None
        try:
            value = kernel([_to_value(a) for a in args], attrs)
        except _KERNEL_FAILURES:
            return None
        return _to_expr(value)

    def _fold_shape(self, call: Call, name: str) -> Expr | None:
        """``shape_of``/``ndarray_size`` from the type of the argument of the original call."""
        arg = call.args[0]
        shape = _static_shape(arg)
        if shape is None:
            if arg._checked_type is None:
                self.needs_types = True
            return None
        dtype = call.attrs.get("dtype", "int32") if call.attrs is not None else "int32"
        if name in _SIZE_OPS:
            data = np.asarray(math.prod(shape), dtype=dtype)
        else:
            data = np.asarray(shape, dtype=dtype).reshape(len(shape))
        return _typed_constant(data)

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        return post if post is pre else carry_type(pre, post)

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        tup = post.tuple_value
        if type(tup) is Tuple and 0 <= post.index < len(tup.fields):
            return tup.fields[post.index]
        return post if post is pre else carry_type(pre, post)

    # --- scopes ---------------------------------------------------------------------------
    def visit_let(self, let: Let) -> Expr:
        return self.rewrite_let_chain(let, self._fold_binding)

    def _fold_binding(self, let: Let) -> Expr | None:
        value = self.visit(let.value)
        if type(value) is Constant:
            # Dropped: every use of the variable reads the constant from the memo table.
            self.memo_map[let.var] = value
            return None
        return value

    def visit_if(self, if_expr: If) -> Expr:
        cond = self.visit(if_expr.cond)
        if type(cond) is Constant:
            flat = cond.array.reshape(-1)
            taken = if_expr.true_branch if flat.size and flat[0] else if_expr.false_branch
            return self.visit(taken)
        return super().visit_if(if_expr)  # the condition is memoized: not folded twice

    def visit_function(self, func: Function) -> Expr:
        if func.attrs.get("Primitive"):
            return func
        post = super().visit_function(func)
        return post if post is func else carry_type(func, post)


def _infer_types(func: Function, mod: IRModule | None) -> Function | None:
    """``func`` typed in the context of (a copy of) ``mod``; None when it cannot be typed."""
    work = mod.copy() if mod is not None else IRModule()
    name = "__fold_constant_target"
    while name in work:
        name += "_"
    work.add(GlobalVar(name), func)
    try:
        return _infer_type_pass()(work)[name]
    except (ImportError, RelayPassError):
        # Ill-typed (or no InferType installed): shape_of/ndarray_size simply stay unfolded.
        return None


def _infer_type_pass():
    try:
        from relaypass.transform import get_pass

        return get_pass("InferType")
    except (ImportError, RelayPassError):
        from .infer_type import InferType

        return InferType()


def fold_constant(expr: Expr, mod: IRModule | None = None, fold_nullary: bool = True) -> Expr:
    """``expr`` with every constant subexpression evaluated.

    ``mod`` is the module ``expr`` lives in; it is only read, to type ``expr``
    when a ``shape_of``/``ndarray_size`` call needs types it does not have.
    With ``fold_nullary=False`` calls without arguments stay, as in Relay.
    """
    # Evaluation follows the interpreter: no floating-point warnings.
    with np.errstate(all="ignore"):
        folder = _Folder(fold_nullary)
        out = folder.visit(expr)
        if folder.needs_types:
            func = expr if isinstance(expr, Function) else Function(_free_vars(expr), expr)
            typed = _infer_types(func, mod)
            if typed is not None:
                folded = _Folder(fold_nullary).visit(typed)
                out = folded if isinstance(expr, Function) else folded.body
    return out


def _free_vars(expr: Expr) -> list[Var]:
    from relaypass.analysis import free_vars

    return free_vars(expr)


def _fold_constant_factory(*, fold_nullary: bool) -> Callable[[Function, IRModule, object], Function]:
    """FoldConstant's transformation: the manifest's factory (the pass is :data:`FoldConstant`;
    the option's default is the manifest's)."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return fold_constant(func, mod, fold_nullary=fold_nullary)

    return transform


#: The FoldConstant pass, the one ``relay.transform.FoldConstant`` builds;
#: everything about it is declared in relaypass-plugin.toml.
FoldConstant = pass_constructor("FoldConstant")
