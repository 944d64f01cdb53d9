"""The numpy interpreter: Relay's debug executor, the reference semantics of a program.

Passes are checked by running a module before and after them and comparing
the outputs, so this is the one place where the meaning of the IR is
executable.  Values are numpy arrays, Python tuples of values, :class:`Closure`,
:class:`RefValue` and :class:`~relaypass.interp.adt_values.ConstructorValue`
(a constructor applied to values); the executors of ``relay.create_executor``
(:mod:`relaypass.interp.executor`) hand them to users as TVM's runtime values.

How evaluation is organised, and why:

* A *frame* is one dict per function call, mapping variables to their values
  and every node evaluated in that call to its value.  Within a frame a shared
  node is evaluated once (Relay's graph semantics); a new call gets a new
  frame, so a function body called twice never reuses values.
* Dataflow (calls, tuples, projections) is evaluated in post-order with an
  explicit stack, children left to right, and let chains in a loop, so the
  length of a program never turns into Python recursion.
* Python recurses once per *non-tail* Relay call.  A call in tail position
  (the value of a function body, of a let chain, of an If branch or of a
  match clause) replaces the
  current frame instead, so tail-recursive loops run to any depth and
  ``factorial(200)`` written the ordinary way needs about 200 Python frames.
  Once the recursion is :data:`SHALLOW_LEVELS` deep, it moves to a worker
  thread with a large stack (:mod:`relaypass.deep_recursion`), so a naive
  recursive sum runs 100,000 calls deep without the caller raising the
  recursion limit; past :data:`MAX_NESTED_CALLS` it is an EvaluationError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..deep_recursion import run_deep, state
from ..errors import AttrsError, EvaluationError, ModuleError
from ..ir.adt import Constructor, Match
from ..ir.expr import (
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
)
from ..ir.module import IRModule
from ..ir.ndarray import NDArray
from ..ir.op import Op
from ..ir.shape_expr import SizeExpr, free_size_vars, substitute
from ..ir.summary import short_text
from ..ir.types import Any as AnyDim
from ..ir.types import IntImm, SizeVar, TensorType, TupleType
from ..ir.variables import free_vars
from .adt_values import (
    ConstructorValue,
    MatchFailureError,
    convert_value,
    match_pattern,
    value_text,
)

__all__ = ["MAX_NESTED_CALLS", "SHALLOW_LEVELS", "Closure", "Interpreter", "RefValue"]

#: Nested evaluations the calling thread runs itself before the recursion moves
#: to a worker thread with room for any depth.
SHALLOW_LEVELS = 48
#: How deep evaluations may nest (non-tail calls, mostly): a bound on the memory
#: a runaway recursion takes before it is reported.
MAX_NESTED_CALLS = 200_000

_ndarray = np.ndarray


class Closure:
    """A function value: the function and the values of its free variables.

    Calling a closure from Python converts the arguments as the executor's
    callables do, so a closure returned by a program can be used directly.
    """

    __slots__ = ("func", "env", "_interp")

    def __init__(self, func: Function, env: dict[Expr, Any], interp: Interpreter) -> None:
        self.func = func
        self.env = env
        self._interp = interp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._interp._call_from_python(self, args, kwargs)

    def __repr__(self) -> str:
        params = ", ".join("%" + p.name_hint for p in self.func.params)
        return f"<Closure fn({params}) capturing {len(self.env)} value(s)>"


class RefValue:
    """A mutable reference cell, the value of ``ref(...)``; ``value`` is its content."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"RefValue({_value_summary(self.value)})"


class Interpreter:
    """Evaluates expressions and module functions with numpy kernels.

    ``mod`` supplies the global functions; ``device`` and ``target`` are kept
    for the signature Relay users know and do not change anything here.
    """

    def __init__(self, mod: IRModule | None = None, device: Any = None, target: Any = None) -> None:
        self.mod = mod if mod is not None else IRModule()
        self.device = device
        self.target = target
        # Free variables of each Function literal closed over so far; a function's
        # free variables never change (nodes are immutable), so computing them
        # once per executor keeps closure creation O(captures).
        self._free_vars: dict[Function, tuple[Var, ...]] = {}
        # Each operator's kernel and arity, looked up once per executor.
        self._kernels: dict[Op, tuple[Callable[[list[Any], Any], Any], int, Any]] = {}
        # A constructor used as a value is the function that calls it, made once.
        self._constructor_functions: dict[Constructor, Function] = {}

    # --- the public entry point ----------------------------------------------
    def evaluate(self, expr: Expr | None = None, binds: Mapping[Var, Any] | None = None) -> Any:
        """Evaluate ``expr``, as Relay's ``Executor.evaluate``.

        With no ``expr``, ``mod["main"]`` as a callable; a Function or a
        GlobalVar gives a callable (a :class:`Closure`) taking numpy arrays,
        NDArrays or Python numbers, positionally or by parameter name; any other closed
        expression gives its value.  ``binds`` maps free variables of ``expr``
        to values (arrays, numbers or expressions).
        """
        env = self._binds_env(binds)
        if expr is None:
            return Closure(self._global_function(self._main_var(), None), {}, self)
        if not isinstance(expr, Expr):
            raise TypeError(f"evaluate expects a Relay expression, got {type(expr).__name__}")
        if type(expr) is GlobalVar:
            return Closure(self._global_function(expr, None), {}, self)
        if type(expr) is Function and not env:
            return Closure(expr, {}, self)
        return self._run(expr, env)

    def _main_var(self) -> GlobalVar:
        try:
            return self.mod.get_global_var("main")
        except ModuleError as exc:
            raise EvaluationError(f"evaluate() without an expression runs @main: {exc}") from None

    def _binds_env(self, binds: Mapping[Var, Any] | None) -> dict[Expr, Any]:
        env: dict[Expr, Any] = {}
        for var, value in (binds or {}).items():
            if not isinstance(var, Var):
                raise TypeError(f"binds maps variables to values, got a key of type {type(var).__name__}")
            if isinstance(value, Expr):
                value = self._run(value, {})
            env[var] = _convert_arg(value, var)
        return env

    def _run(self, expr: Expr, env: dict[Expr, Any]) -> Any:
        """Evaluate from Python, turning runaway recursion into an EvaluationError."""
        try:
            return self._eval(expr, env)
        except RecursionError:
            raise EvaluationError(
                f"evaluation exceeded the recursion limit: the program nests more than "
                f"{MAX_NESTED_CALLS:,} non-tail function calls"
            ) from None

    def _eval(self, expr: Expr, memo: dict[Expr, Any]) -> Any:
        """The value of ``expr`` in the frame ``memo`` (see :meth:`_eval_frame`), at any depth.

        Every nested evaluation comes through here: the first SHALLOW_LEVELS
        run on the calling thread, deeper ones on a worker thread whose stack
        and recursion limit fit MAX_NESTED_CALLS of them.
        """
        here = state
        level = here.level
        if level >= MAX_NESTED_CALLS:
            raise RecursionError  # reported by _run, on the calling thread
        if level >= SHALLOW_LEVELS and not here.worker:
            return run_deep(self._eval, expr, memo)
        here.level = level + 1
        try:
            return self._eval_frame(expr, memo)
        finally:
            here.level = level

    def _call_from_python(self, closure: Closure, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        func = closure.func
        params = func.params
        values = _match_arguments(func, args, kwargs)
        env = dict(closure.env)
        sizes = _SizeBindings()
        for param, value in zip(params, values):
            env[param] = _convert_arg(value, param, sizes)
        sizes.check_expressions()
        return self._run(func.body, env)

    # --- evaluation --------------------------------------------------------------
    def _eval_frame(self, expr: Expr, memo: dict[Expr, Any]) -> Any:
        """The value of ``expr`` in the frame ``memo``.

        ``expr`` and the dataflow nodes below it are memoized in ``memo``.  A
        tail call switches ``memo`` to the callee's fresh frame; the nodes of
        the original frame that such a call stood for are memoized on return.
        """
        start = memo
        start_expr = expr
        tail_nodes: list[Expr] | None = None
        # The let whose value (a dataflow node) is being evaluated in this loop.
        pending_let: Let | None = None
        kernels = self._kernels
        while True:
            if expr in memo:
                value = memo[expr]
                break
            t = type(expr)
            if t is Call or t is Tuple or t is TupleGetItem:
                # Post-order over the dataflow graph rooted at expr.
                root = expr
                stack = [root]
                tail: tuple[Expr, dict[Expr, Any]] | None = None
                while stack:
                    node = stack[-1]
                    if node in memo:
                        stack.pop()
                        continue
                    nt = type(node)
                    pending = False
                    if nt is Call:
                        kids = node.args
                        op = node.op
                        ot = type(op)
                        # The callee is evaluated after the arguments, as in Relay:
                        # pushed first, it sits below them on the stack.
                        if (ot is not Op and ot is not GlobalVar and ot is not Constructor
                                and op not in memo):
                            if ot is Var:
                                raise self._unbound(op, node)
                            stack.append(op)
                            pending = True
                    elif nt is Tuple:
                        kids = node.fields
                    elif nt is TupleGetItem:
                        kids = (node.tuple_value,)
                    else:
                        # Not dataflow: evaluate it in this frame (recursion is bounded
                        # by how deeply such nodes nest, not by program length).
                        stack.pop()
                        if nt is Function:
                            memo[node] = self._closure(node, memo, None)
                        elif nt is GlobalVar:
                            memo[node] = Closure(self._global_function(node, None), {}, self)
                        else:
                            memo[node] = self._eval(node, memo)
                        continue
                    for kid in reversed(kids):
                        if kid not in memo:
                            kt = type(kid)
                            if kt is Constant:
                                memo[kid] = kid.array
                            elif kt is Var:
                                raise self._unbound(kid, node)
                            else:
                                stack.append(kid)
                                pending = True
                    if pending:
                        continue
                    stack.pop()

                    if nt is Call:
                        args = [memo[a] for a in kids]
                        if ot is Op:
                            entry = kernels.get(op)
                            if entry is None:
                                entry = self._kernel_entry(op, node)
                            kernel, arity, default_attrs = entry
                            if arity != len(args) and arity >= 0:
                                raise EvaluationError(
                                    f"operator {op.name} takes {arity} argument(s), got "
                                    f"{len(args)}: {_located(node)}"
                                )
                            try:
                                attrs = node.attrs
                                result = kernel(args, default_attrs if attrs is None else attrs)
                            except Exception as exc:
                                _kernel_failed(op, node, args, exc)
                            if type(result) is not _ndarray:
                                result = _normalize_result(result, op, node)
                            memo[node] = result
                            continue
                        if ot is Constructor:
                            if len(args) != len(op.inputs):
                                raise EvaluationError(
                                    f"constructor {op.name_hint} takes {len(op.inputs)} "
                                    f"argument(s), got {len(args)}: {_located(node)}"
                                )
                            memo[node] = ConstructorValue(op.tag, args, op)
                            continue
                        if ot is GlobalVar:
                            func = self._global_function(op, node)
                            env: dict[Expr, Any] = {}
                        else:
                            callee = memo[op]
                            if type(callee) is not Closure:
                                raise EvaluationError(
                                    f"cannot call {_value_summary(callee)}: "
                                    f"{_located(node)} calls a value that is not a function"
                                )
                            func = callee.func
                            env = dict(callee.env)
                        params = func.params
                        if len(params) != len(args):
                            raise self._arity_error(func, node, len(args))
                        for param, arg in zip(params, args):
                            env[param] = arg
                        if node is root and pending_let is None:
                            tail = (func.body, env)
                        else:
                            memo[node] = self._eval(func.body, env)
                    elif nt is Tuple:
                        memo[node] = tuple([memo[f] for f in kids])
                    else:
                        memo[node] = self._project(node, memo[kids[0]])
                if tail is None:
                    if pending_let is None:
                        value = memo[root]
                        break
                    memo[pending_let.var] = memo[root]
                    expr = pending_let.body
                    pending_let = None
                    continue
                if memo is start:
                    if tail_nodes is None:
                        tail_nodes = []
                    tail_nodes.append(root)
                expr, memo = tail
            elif t is Let:
                while True:
                    value_expr = expr.value
                    if value_expr in memo:
                        bound = memo[value_expr]
                    else:
                        vt = type(value_expr)
                        if vt is Call or vt is Tuple or vt is TupleGetItem:
                            # Evaluated by the dataflow loop above, which binds it.
                            pending_let = expr
                            expr = value_expr
                            break
                        if vt is Function:
                            # The let-bound variable is in scope in its own value, so
                            # a function bound by a let may call itself.
                            bound = self._closure(value_expr, memo, expr.var)
                        else:
                            bound = self._eval(value_expr, memo)
                    memo[expr.var] = bound
                    expr = expr.body
                    if type(expr) is not Let:
                        break
            elif t is If:
                cond = expr.cond
                flag = memo[cond] if cond in memo else self._eval(cond, memo)
                if type(flag) is not _ndarray or flag.dtype.kind != "b" or flag.ndim != 0:
                    raise EvaluationError(
                        f"the condition of an If must be a boolean scalar, got "
                        f"{_value_summary(flag)}: {_located(expr)}"
                    )
                expr = expr.true_branch if flag else expr.false_branch
            elif t is Match:
                # The chosen clause's body is in tail position, as an If's branch.
                expr = self._choose_clause(expr, memo)
            elif t is Constant:
                value = expr.array
                break
            elif t is Var:
                raise self._unbound(expr, None)
            elif t is Function:
                value = self._closure(expr, memo, None)
                break
            elif t is GlobalVar:
                value = Closure(self._global_function(expr, None), {}, self)
                break
            elif t is Constructor:
                value = Closure(self._constructor_function(expr), {}, self)
                break
            elif t is RefCreate:
                inner = expr.value
                value = RefValue(memo[inner] if inner in memo else self._eval(inner, memo))
                break
            elif t is RefRead:
                value = self._ref(expr, memo).value
                break
            elif t is RefWrite:
                ref = self._ref(expr, memo)
                inner = expr.value
                ref.value = memo[inner] if inner in memo else self._eval(inner, memo)
                value = ()
                break
            elif t is Op:
                raise EvaluationError(
                    f"operator {expr.name} is used as a value; operators can only be called"
                )
            else:
                raise EvaluationError(f"cannot evaluate a {t.__name__}: {_located(expr)}")
        start[start_expr] = value
        if tail_nodes is not None:
            for node in tail_nodes:
                start[node] = value
        return value

    def _choose_clause(self, match: Match, memo: dict[Expr, Any]) -> Expr:
        """The body of the first clause whose pattern fits the matched value; its variables bound."""
        data = match.data
        value = memo[data] if data in memo else self._eval(data, memo)
        for pattern, body in zip(match.patterns, match.bodies):
            bindings: dict[Any, Any] = {}
            try:
                fits = match_pattern(pattern, value, bindings)
            except EvaluationError as exc:  # a pattern that does not fit its constructor
                raise EvaluationError(f"{exc}: {_located(match)}") from None
            if fits:
                memo.update(bindings)
                return body
        ctor = value.constructor if type(value) is ConstructorValue else None
        what = f"constructor {ctor.name_hint}: {value_text(value)}" if ctor is not None else (
            _value_summary(value)
        )
        raise MatchFailureError(
            f"no clause of the match handles the value of {what}; the match: {_located(match)}",
            ctor,
        )

    def _constructor_function(self, ctor: Constructor) -> Function:
        """``fn (%field0, ...) { ctor(%field0, ...) }``: a constructor passed as a function."""
        func = self._constructor_functions.get(ctor)
        if func is None:
            params = [Var(f"field{i}", t) for i, t in enumerate(ctor.inputs)]
            func = self._constructor_functions[ctor] = Function(params, Call(ctor, params))
        return func

    def _kernel_entry(self, op: Op, call: Call) -> tuple[Callable[[list[Any], Any], Any], int, Any]:
        kernel = op.get_attr("FKernel")
        if kernel is None:
            raise EvaluationError(
                f"operator {op.name} has no numpy kernel (FKernel), so {_located(call)} "
                "cannot be evaluated"
            )
        # A call built without attributes means the schema's defaults, as for InferType.
        schema = op.attrs_schema
        try:
            defaults = schema.build(op.name, {}) if schema is not None else None
        except AttrsError:
            defaults = None  # the operator has required attributes: every call carries its own
        entry = (kernel, op.num_inputs, defaults)
        self._kernels[op] = entry
        return entry

    def _project(self, node: TupleGetItem, value: Any) -> Any:
        if type(value) is not tuple:
            raise EvaluationError(
                f"cannot take field {node.index} of {_value_summary(value)}, which is not a tuple: "
                f"{_located(node)}"
            )
        if not -len(value) <= node.index < len(value):
            raise EvaluationError(
                f"tuple index {node.index} is out of range for a tuple of {len(value)} field(s): "
                f"{_located(node)}"
            )
        return value[node.index]

    def _ref(self, expr: RefRead | RefWrite, memo: dict[Expr, Any]) -> RefValue:
        inner = expr.ref
        ref = memo[inner] if inner in memo else self._eval(inner, memo)
        if type(ref) is not RefValue:
            raise EvaluationError(
                f"expected a reference, got {_value_summary(ref)}: {_located(expr)}"
            )
        return ref

    def _closure(self, func: Function, memo: dict[Expr, Any], self_var: Var | None) -> Closure:
        free = self._free_vars.get(func)
        if free is None:
            free = tuple(free_vars(func))
            self._free_vars[func] = free
        env: dict[Expr, Any] = {}
        closure = Closure(func, env, self)
        for var in free:
            if var is self_var:
                env[var] = closure
            elif var in memo:
                env[var] = memo[var]
            else:
                raise self._unbound(var, func)
        return closure

    def _global_function(self, gv: GlobalVar, call: Call | None) -> Function:
        try:
            func = self.mod[gv]
        except ModuleError as exc:
            where = f" (called by {_located(call)})" if call is not None else ""
            raise EvaluationError(f"{exc}{where}") from None
        if not isinstance(func, Function):
            raise EvaluationError(f"@{gv.name_hint} is a {type(func).__name__}, not a Relay function")
        return func

    # --- error messages --------------------------------------------------------
    @staticmethod
    def _unbound(var: Var, user: Expr | None) -> EvaluationError:
        where = f" at {var.span}" if var.span is not None else ""
        used = f", used by {_located(user)}" if user is not None else ""
        return EvaluationError(f"unbound variable %{var.name_hint}{where}{used}")

    @staticmethod
    def _arity_error(func: Function, call: Call, given: int) -> EvaluationError:
        params = ", ".join("%" + p.name_hint for p in func.params)
        return EvaluationError(
            f"function fn({params}) takes {len(func.params)} argument(s), got {given}: "
            f"{_located(call)}"
        )


# --- arguments from Python -------------------------------------------------------
def _match_arguments(func: Function, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
    """Positional and keyword arguments in parameter order, as Relay's executors accept them."""
    params = func.params
    names = [p.name_hint for p in params]
    if len(args) > len(params):
        raise EvaluationError(
            f"function fn({', '.join('%' + n for n in names)}) takes {len(params)} argument(s), "
            f"got {len(args)}"
        )
    values = list(args)
    if kwargs:
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise EvaluationError(
                f"no parameter named {unknown[0]!r}; the parameters are "
                f"{', '.join(names) or 'none'}"
            )
        for i, name in enumerate(names[: len(args)]):
            if name in kwargs:
                raise EvaluationError(f"argument {name!r} given both by position ({i}) and by keyword")
    missing = [n for n in names[len(args):] if n not in kwargs]
    if missing:
        raise EvaluationError(
            f"missing argument(s) {', '.join(repr(n) for n in missing)}: "
            f"fn({', '.join('%' + n for n in names)}) takes {len(params)}"
        )
    values.extend(kwargs[n] for n in names[len(args):])
    return values


class SizeBindingError(EvaluationError):
    """Arguments give one size variable two different extents (``n`` is 3 in %x, 4 in %y)."""


class _SizeBindings:
    """The extent each size variable of a function's parameter types takes from the arguments.

    A dimension that is a size variable accepts any extent the first time it
    is met and the same extent after that; a dimension that is an expression
    of them (``n*2``) is checked once every argument is in, if its variables
    were all bound by then.  ``Any`` accepts every extent.
    """

    __slots__ = ("values", "where", "pending")

    def __init__(self) -> None:
        self.values: dict[SizeVar, Any] = {}
        self.where: dict[SizeVar, str] = {}
        self.pending: list[tuple[Any, int, str]] = []

    def dim(self, d: Any, extent: int, where: str) -> bool:
        """Whether ``extent`` fits the dimension ``d``; binds a size variable met first here."""
        if type(d) is SizeVar:
            have = self.values.get(d)
            if have is None:
                self.values[d] = IntImm(int(extent))
                self.where[d] = where
                return True
            if have != extent:
                raise SizeBindingError(
                    f"size variable {d} is {have} in {self.where[d]} but {extent} in {where}: "
                    "every dimension holding one size variable has the same extent"
                )
            return True
        if type(d) is SizeExpr:
            self.pending.append((d, extent, where))
            return True
        return isinstance(d, AnyDim) or d == extent

    def check_expressions(self) -> None:
        """The symbolic dimensions whose variables the arguments bound have the extent they say."""
        for d, extent, where in self.pending:
            value = substitute(d, self.values)
            if type(value) is IntImm and value != extent:
                raise SizeBindingError(
                    f"{where} has extent {extent}, but its type says {d} = {value} "
                    f"(with {_bindings_text(d, self.values)})"
                )


def _bindings_text(d: Any, values: dict[SizeVar, Any]) -> str:
    return ", ".join(f"{v} = {values[v]}" for v in free_size_vars([d]) if v in values)


def _convert_arg(value: Any, param: Var, sizes: _SizeBindings | None = None) -> Any:
    """A Python argument as an interpreter value, in the parameter's annotated dtype."""
    try:
        return _to_value(value, param.type_annotation, sizes, f"argument %{param.name_hint}")
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"argument for %{param.name_hint}: {exc}") from None


def _to_value(value: Any, ty: Any, sizes: _SizeBindings | None = None, where: str = "") -> Any:
    if type(value) is NDArray:
        value = np.asarray(value)  # its array, not a copy: the interpreter never writes into one
    if type(value) is ConstructorValue:
        if isinstance(ty, (TensorType, TupleType)):
            raise TypeError(f"expected a value of type {ty}, got {_value_summary(value)}")
        # Its fields may be runtime values an executor handed back (NDArrays, ADTs).
        return convert_value(value, lambda v: _to_value(v, None), tuple)
    if isinstance(value, (Closure, RefValue)):
        if isinstance(ty, (TensorType, TupleType)):
            raise TypeError(f"expected a value of type {ty}, got {_value_summary(value)}")
        return value
    if isinstance(value, tuple) or (isinstance(value, list) and isinstance(ty, TupleType)):
        if isinstance(ty, TupleType):
            if len(ty.fields) != len(value):
                raise ValueError(f"expected a tuple of {len(ty.fields)} field(s), got {len(value)}")
            return tuple(_to_value(v, f, sizes, f"{where}.{i}")
                         for i, (v, f) in enumerate(zip(value, ty.fields)))
        if isinstance(ty, TensorType):
            raise TypeError(f"expected a tensor of type {ty}, got a tuple")
        return tuple(_to_value(v, None) for v in value)
    if isinstance(ty, TensorType):
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TypeError(f"cannot convert {type(value).__name__} to a tensor")
        if arr.dtype != ty.dtype:
            if not np.can_cast(arr.dtype, ty.dtype, casting="same_kind"):
                raise TypeError(f"expected {ty.dtype}, got {arr.dtype} (a different kind of number)")
            arr = arr.astype(ty.dtype)
        if len(ty.shape) != arr.ndim:
            raise ValueError(f"expected a tensor of type {ty}, got shape {tuple(arr.shape)}")
        if ty.symbolic:
            sizes = sizes if sizes is not None else _SizeBindings()
            for axis, (d, n) in enumerate(zip(ty.shape, arr.shape)):
                if not sizes.dim(d, n, f"{where} (axis {axis})"):
                    raise ValueError(f"expected a tensor of type {ty}, got shape {tuple(arr.shape)}")
        elif any(not isinstance(d, AnyDim) and d != n for d, n in zip(ty.shape, arr.shape)):
            raise ValueError(f"expected a tensor of type {ty}, got shape {tuple(arr.shape)}")
        return arr
    if isinstance(value, _ndarray):
        return value
    if isinstance(value, (bool, int, float, list, np.generic)):
        arr = np.asarray(value)
        # Relay's defaults for Python values: int32 (when the values fit) and float32.
        if arr.dtype == np.int64 and not isinstance(value, np.generic):
            if arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31):
                arr = arr.astype("int32")
        elif arr.dtype == np.float64 and not isinstance(value, np.generic):
            arr = arr.astype("float32")
        elif arr.dtype == object:
            raise TypeError(f"cannot convert {value!r} to a tensor")
        return arr
    raise TypeError(f"cannot pass a {type(value).__name__} to a Relay function")


# --- values ------------------------------------------------------------------------
def _kernel_failed(op: Op, call: Call, args: list[Any], exc: Exception) -> None:
    """Re-raise a kernel's exception as an EvaluationError naming the call and its arguments."""
    if isinstance(exc, (EvaluationError, RecursionError)):
        raise exc
    arg_text = ", ".join(_value_summary(a) for a in args)
    raise EvaluationError(
        f"{op.name} failed on {_located(call)} with arguments ({arg_text}): "
        f"{type(exc).__name__}: {str(exc).strip()}"
    ) from exc


def _normalize_result(result: Any, op: Op, call: Call) -> Any:
    """A kernel's result as an interpreter value: arrays (rank 0 for scalars) and tuples."""
    if isinstance(result, _ndarray):
        return np.asarray(result)
    if isinstance(result, (tuple, list)):
        return tuple(
            r if type(r) is _ndarray else _normalize_result(r, op, call) for r in result
        )
    if isinstance(result, (np.generic, bool, int, float, complex)):
        return np.asarray(result)
    if type(result) is RefValue or type(result) is Closure or type(result) is ConstructorValue:
        return result  # passed through, as the annotation operators pass any value
    raise EvaluationError(
        f"the kernel of {op.name} returned a {type(result).__name__}, not an array or a tuple: "
        f"{_located(call)}"
    )


def _value_summary(value: Any) -> str:
    if isinstance(value, _ndarray):
        return f"Tensor[({', '.join(str(d) for d in value.shape)}), {value.dtype}]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_value_summary(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, Closure):
        return "a closure"
    if isinstance(value, RefValue):
        return "a reference"
    if isinstance(value, ConstructorValue):
        return f"a value of constructor {value.constructor.name_hint}"
    return f"a Python {type(value).__name__}"


# --- naming expressions in messages --------------------------------------------------
def _located(expr: Expr) -> str:
    """The expression's text, shortened, with its source location when it has one."""
    text = short_text(expr)
    span = getattr(expr, "span", None)
    return f"{text} at {span}" if span is not None else text
