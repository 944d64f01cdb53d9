"""InferType: Relay's type inference, as a module pass.

The result is a new module in which every expression carries
``checked_type``, every variable that had no annotation carries the inferred
one, every function without a return type carries the inferred one, and
every call of a polymorphic function carries its ``type_args``, and every
call of an operator its arguments' types as ``type_args``, as Relay fills
them (structural equality ignores the ``type_args`` of operator calls).

The input is never touched: nodes are immutable and shared, so the output is
a fresh copy of every function -- new global variables (each with its
function's type), new constants sharing their read-only arrays, new
variables where a type must be filled in (substituted consistently).  A
variable annotated with a complete type already has it as its
``checked_type`` and is kept as it is, as TVM keeps its ``vid``: typing an
expression twice gives the same free variables.  So is any node typed
already with the type inference gives it, over the very same (kept)
children: what a pass left alone in a typed module comes back as it was,
and typing the module again costs a walk plus the nodes the pass built.
Operators are singletons and stay untyped; an operator anywhere but in the
callee position of a call is an error.

How it works, and why it is fast on large programs:

1. Constraint generation is one iterative post-order walk over all the
   module's functions (no recursion, so a chain of 100,000 calls or lets is
   fine).  A call of an operator whose argument types are already known --
   the common case in dataflow graphs -- runs the operator's type relation on
   the spot; only calls with unknown argument types become deferred
   relations in the :class:`~.type_solver.TypeSolver`, which runs each as
   soon as its inputs are solved.
2. All functions of the module are inferred together in one solver: a
   global variable has its function's type (declared from annotations when
   the function is fully annotated, else a variable solved from its uses and
   its body), so recursion and mutual recursion need no annotation.
   Functions with type parameters go first so that their callers
   instantiate them.
3. A relation that never ran, or a variable never solved, means the program
   does not determine its types: an error, as in Relay.
4. The output is rebuilt from the post-order of step 1 with every type
   resolved.

Errors are :class:`~relaypass.errors.TypeInferenceError` (type mismatches
are its subclass :class:`~.type_solver.TypeMismatchError`, operator
relation failures :class:`~relaypass.errors.TypeRelationError`); the message
names where (span, else function and field path), the two types, and shows
the expression.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import is_
from typing import Any as _AnyT

from relaypass.analysis.kind_check import KindCheckError, check_kind
from relaypass.errors import AttrsError, RelayPassError, TypeInferenceError, TypeRelationError
from relaypass.ir.adt import Constructor, Match
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import (
    BaseFunc,
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
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.summary import type_text
from relaypass.ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeVar,
    has_incomplete,
)
from relaypass.transform import pass_constructor

from .adt import (
    NonExhaustiveMatchWarning,
    check_constructor_call,
    check_type_definitions,
    constructor_type,
    match_type,
    typed_patterns,
    unknown_only_in_type_arguments,
)
from .diagnostics import expr_text, locate
from .incremental import (
    Kept,
    concrete_type,
    kept_functions,
    remember,
    typed_constant,
)
from .solver import (
    TypeMismatchError,
    TypeSolver,
    UnderdeterminedTypeError,
    substitute_type_vars,
)

__all__ = [
    "InferType",
    "NonExhaustiveMatchWarning",
    "TypeMismatchError",
    "UnderdeterminedTypeError",
    "infer_type_expr",
    "infer_type_module",
    "type_new_nodes",
]

_BOOL_SCALAR = TensorType((), "bool")
_UNIT = TupleType(())


def infer_type_module(mod: IRModule) -> IRModule:
    """A copy of ``mod`` with every expression typed; raises TypeInferenceError if ill-typed."""
    if not isinstance(mod, IRModule):
        raise TypeError(f"infer_type_module expects an IRModule, not {type(mod).__name__}")
    items = list(mod.items())
    type_defs = mod.type_definitions
    check_type_definitions(type_defs)
    if not type_defs:
        kept = kept_functions(items)
        if kept.functions:
            out = _infer_incrementally(mod, kept)
            if out is not None:
                return out
    functions = {gv.name_hint: func for gv, func in items}
    try:
        typed = _type_functions(functions, type_defs)
    except TypeInferenceError as err:
        raise _with_context(err, _roots(functions)) from err.__cause__
    out = IRModule(type_definitions=type_defs, attrs=mod.attrs)
    for gv, _func in items:
        out.add(*typed[gv.name_hint])
    if not type_defs:
        remember(out)
    return out


def _infer_incrementally(mod: IRModule, kept: Kept) -> IRModule | None:
    """``mod`` typed with its ``kept`` functions as they are (:mod:`.incremental`), or None
    when the whole module must be typed: a function typed again changed its type, or
    typing it alone failed (the whole module then decides, and reports errors in context).

    This runs before every InferType of a pipeline: apart from typing the
    changed functions, it only copies the module's tables.
    """
    keys = {gv.name_hint: gv for gv, _func in kept.others}
    todo = {gv.name_hint: func for gv, func in kept.others}
    try:
        typed = _type_functions(todo, known=kept.functions, reuse=keys)
    except TypeInferenceError:
        return None
    same_keys = True
    for name in todo:
        if typed[name][0] is not keys[name]:
            if keys[name]._checked_type is not None:
                return None  # another type than its callers were typed against
            same_keys = False  # a new function
    if same_keys:
        out = mod.copy()
        for name in todo:
            out.add(*typed[name], update=True)
        remember(out, kept, todo)
        return out
    out = IRModule(attrs=mod.attrs)
    for gv, func in mod.items():
        if gv.name_hint in kept.functions:
            out.add(gv, func)
        else:
            out.add(*typed[gv.name_hint])
    remember(out)
    return out


def _type_functions(functions: Mapping[str, BaseFunc], type_defs: Mapping = (),
                    known: Mapping[str, GlobalVar] | None = None,
                    reuse: Mapping[str, GlobalVar] | None = None
                    ) -> dict[str, tuple[GlobalVar, Function]]:
    """``functions`` typed, each with its global variable (the one ``reuse`` gives for it if
    of its type, else a new one); ``known``: typed global variables of other functions.

    Functions of plain dataflow are typed by the :class:`_DataflowTyper`: such a
    function calls no global, so its typing is its own business, and it stands for
    its type (as a known function does) while the others are inferred together.
    """
    fast: dict[str, tuple[GlobalVar, Function]] = {}
    rest: dict[str, BaseFunc] = {}
    typer = None if type_defs else _DataflowTyper(strict=True)
    for name, func in functions.items():
        typed = typer.function(func) if typer is not None else None
        if typed is None:
            rest[name] = func
            continue
        ty = typed._checked_type
        gv = reuse.get(name) if reuse else None
        if gv is None or not (gv._checked_type is ty or gv._checked_type == ty):
            gv = GlobalVar(name)
            set_checked_type(gv, ty)
        fast[name] = (gv, typed)
    if not rest:
        return fast
    if fast:
        known = {**(known or {}), **{name: gv for name, (gv, _func) in fast.items()}}
    inference = _Inference(rest, type_defs, known)
    inference.infer_globals()
    typed = inference.finish(reuse=reuse)
    return {name: fast.get(name) or typed[name] for name in functions}


def infer_type_expr(expr: Expr, mod: IRModule | None = None) -> Expr:
    """The typed copy of ``expr``, whose global variables refer to ``mod``'s functions.

    Free variables annotated with their types stay as they are; others are
    replaced by new variables annotated with the inferred types (relaypass
    nodes are immutable, so the originals cannot be typed).
    """
    if not isinstance(expr, Expr):
        raise TypeError(f"infer_type_expr expects a Relay expression, not {type(expr).__name__}")
    functions = {gv.name_hint: func for gv, func in mod.items()} if mod is not None else {}
    type_defs = mod.type_definitions if mod is not None else {}
    # The module's functions are there for their types: those it can keep stand for theirs.
    kept = kept_functions(list(mod.items())).functions if functions and not type_defs else {}
    todo = {name: func for name, func in functions.items() if name not in kept}
    inference = _Inference(todo, type_defs, kept)
    try:
        inference.infer_globals()
        inference.infer_root(expr, "the expression")
        inference.finish()
    except TypeInferenceError as err:
        roots = [*_roots(functions), ("the expression", expr)]
        raise _with_context(err, roots) from err.__cause__
    return inference.memo[expr]


def type_new_nodes(expr: Expr) -> Expr | None:
    """``expr`` with its untyped nodes typed from the typed nodes below them, or None.

    A rewrite of a typed program builds a few new nodes over typed ones
    (``x * c2 + (c1 * c2)`` over the matched ``x``): typing just those, bottom
    up, gives what InferType would give them (the same relations on the same
    argument types, the same typed copies, operator calls with their
    ``type_args``) at the cost of the new nodes alone, where InferType would
    type the whole function again.  Handled: calls of operators, constants,
    tuples and projections.  For anything else (a new variable, a call of a
    function), or when a relation rejects its arguments, the answer is None
    and the caller runs InferType, which then decides (and reports errors
    with their context).
    """
    return _DataflowTyper().type(expr)


class _DataflowTyper:
    """Types untyped dataflow bottom up from the typed nodes below it, without a solver.

    The nodes of most programs -- an imported model, the new nodes of a
    rewrite -- are operator calls, constants, tuples and projections over
    variables annotated with their types: each type follows from its
    children's on the spot, and the typed copy can be built at once.  This
    is what InferType builds for them (the same relations on the same types,
    operator calls carrying their arguments' types, equal tensor types shared
    as :meth:`_Inference._rebuild` shares them) in one walk, where the
    general inference walks, solves, then walks again to copy.  Anything else
    (a let, an unannotated variable, a global, a relation that rejects its
    arguments) makes :meth:`type` answer None: the general inference then
    types the program, and reports errors with their context.
    """

    __slots__ = ("strict", "memo", "relations", "default_attrs", "tensor_types", "shared",
                 "const_types")

    def __init__(self, strict: bool = False) -> None:
        #: Whether typed nodes other than variables and constants make :meth:`type` give up:
        #: a whole module's typing trusts only what it checks (a typed call may read a global
        #: whose type changed), a rewrite's the typed program it rewrites.
        self.strict = strict
        self.memo: dict[Expr, Expr] = {}
        self.relations: dict[Op, _AnyT] = {}
        self.default_attrs: dict[Op, Attrs | None] = {}
        self.tensor_types: dict[int, TensorType] = {}
        self.shared: dict[tuple, _AnyT] = {}
        self.const_types: dict[tuple, TensorType] = {}

    def type(self, expr: Expr) -> Expr | None:
        """The typed copy of ``expr`` (``expr`` itself when typed), or None."""
        strict = self.strict
        if expr._checked_type is not None:
            return None if strict else expr
        memo = self.memo
        stack: list[Expr] = [expr]
        push = stack.append
        try:
            while stack:
                node = stack[-1]
                if node in memo:
                    stack.pop()
                    continue
                t = type(node)
                if strict and node._checked_type is not None and t is not Constant:
                    return None
                if t is Call:
                    op = node.op
                    if type(op) is not Op:
                        return None
                    kids = node.args
                elif t is Constant:
                    stack.pop()
                    memo[node] = self._constant(node)
                    continue
                elif t is Tuple:
                    kids = node.fields
                elif t is TupleGetItem:
                    kids = (node.tuple_value,)
                else:
                    return None
                pending = False
                for kid in kids:
                    if kid not in memo and (kid._checked_type is None
                                            or strict and type(kid) is not Var):
                        push(kid)
                        pending = True
                if pending:
                    continue
                stack.pop()
                new = [memo.get(k, k) for k in kids]
                if t is Call:
                    typed = self._op_call(node, op, new)
                    if typed is None:
                        return None
                elif t is Tuple:
                    fields = [k._checked_type for k in new]
                    key = (None, *map(id, fields))
                    tuple_type = self.shared.get(key)
                    if tuple_type is None:
                        tuple_type = self.shared[key] = TupleType(fields)
                    typed = t._layout_.rebuild(node, new)
                    set_checked_type(typed, tuple_type)
                else:
                    field = _project(new[0]._checked_type, node.index, node)
                    typed = t._layout_.rebuild(node, new)
                    set_checked_type(typed, self._share(field))
                memo[node] = typed
        except RelayPassError:
            return None
        return memo[expr]

    def _share(self, typ: Type) -> Type:
        """An equal tensor type met before, if any (see :meth:`_Inference._rebuild`)."""
        if type(typ) is TensorType and typ.span is None:
            tensor_types = self.tensor_types
            same = tensor_types.get(typ._hash)
            if same is None:
                tensor_types[typ._hash] = typ
            elif same is not typ and same.dtype == typ.dtype and _same_dims(same, typ):
                return same
        return typ

    def _constant(self, node: Constant) -> Constant:
        if typed_constant(node):
            return node  # typed before, as InferType keeps it
        data = node.array
        key = (data.shape, data.dtype.str)
        typ = self.const_types.get(key)
        if typ is None:
            typ = self.const_types[key] = self._share(
                TensorType(data.shape, data.dtype))
        typed = Constant._layout_.rebuild(node, ())
        set_checked_type(typed, typ)
        return typed

    def _op_call(self, call: Call, op: Op, args: list[Expr]) -> Call | None:
        """The typed copy of an operator call whose arguments are typed, as InferType builds it."""
        rel = self.relations.get(op)
        if rel is None:
            rel = self.relations[op] = op.get_attr("FTypeRelation")
            if rel is None:
                return None
        if op.num_inputs >= 0 and len(args) != op.num_inputs:
            return None
        arg_types = [a._checked_type for a in args]
        for t in arg_types:
            if type(t) is not TensorType and not concrete_type(t):
                return None
        attrs = call.attrs
        if attrs is None and op.attrs_schema is not None:
            attrs = self.default_attrs.get(op)
            if attrs is None:
                attrs = self.default_attrs[op] = op.attrs_schema.build(op.name, {})
        # A relation's complaint (or a result that is not a type) sends the program to the
        # general inference, which reports it with its context.
        out = rel(arg_types, attrs)
        if type(out) is TensorType:
            out = self._share(out)
        elif not concrete_type(out):
            return None
        key = tuple(map(id, arg_types))
        shared = self.shared.get(key)
        if shared is None:
            shared = self.shared[key] = tuple(arg_types)
        new = Call(op, tuple(args), call.attrs, shared, call.span)
        set_checked_type(new, out)
        return new

    def function(self, func: BaseFunc) -> Function | None:
        """The typed copy of a function of dataflow over annotated parameters, or None."""
        if type(func) is not Function or func.type_params:
            return None
        params = func.params
        for p in params:
            ann = p._checked_type
            if ann is None or not concrete_type(ann):
                return None
        body = self.type(func.body)
        if body is None:
            return None
        body_type = body._checked_type
        ret = func.ret_type
        if ret is None:
            typed = rebuild(func, (*params, body), ret_type=body_type)
        elif ret is body_type or ret == body_type:
            typed = Function._layout_.rebuild(func, (*params, body))
        else:
            return None  # the general inference unifies, or says why not
        set_checked_type(typed, FuncType([p._checked_type for p in params], typed.ret_type))
        return typed


def _infer_type_factory() -> Callable[[IRModule, object], IRModule]:
    """InferType's transformation: the manifest's factory (the pass is :data:`InferType`)."""
    return _infer_type_pass


def _infer_type_pass(mod: IRModule, ctx: object) -> IRModule:
    return infer_type_module(mod)


#: The InferType pass, the one ``relay.transform.InferType`` builds;
#: everything about it is declared in relaypass-plugin.toml.
InferType = pass_constructor("InferType")


# --- error context -------------------------------------------------------------
def _roots(functions: Mapping[str, Expr]) -> list[tuple[str, Expr]]:
    return [(f"@{name}", func) for name, func in functions.items()]


def _with_context(err: TypeInferenceError, roots: list[tuple[str, Expr]]) -> TypeInferenceError:
    """A copy of ``err`` whose message says where, and shows the expression.

    Errors are raised deep inside the solver, which knows the expression but
    not the program around it; the location is worked out only here, once.
    """
    expr = getattr(err, "expr", None)
    if expr is None:
        return err
    where = locate(expr, roots)
    out = type(err)(f"{where}: {err}\n  in expression: {expr_text(expr)}")
    out.__dict__.update(err.__dict__)
    out.location = where
    return out


def _error(cls: type[TypeInferenceError], message: str, expr: Expr) -> TypeInferenceError:
    err = cls(message)
    err.expr = expr
    return err


# --- inference ---------------------------------------------------------------------
class _Inference:
    """Typing state of one run: the solver, each node's type, globals, call instantiations."""

    __slots__ = (
        "solver", "ty", "order", "functions", "global_types", "global_decl",
        "instances", "let_bound", "tvar_uses", "tvars_bound", "relations", "default_attrs",
        "const_types",
        "memo", "new_gvars", "type_defs", "kind_mod", "known",
    )

    def __init__(self, functions: Mapping[str, BaseFunc], type_defs: Mapping = (),
                 known: Mapping[str, GlobalVar] | None = None) -> None:
        self.type_defs = dict(type_defs)
        self.kind_mod: IRModule | None = None  # type_defs as a module, for check_kind
        self.solver = TypeSolver()
        self.ty: dict[Expr, Type] = {}
        self.order: list[Expr] = []
        self.functions = dict(functions)
        self.global_types: dict[str, Type] = {}
        self.global_decl: dict[str, bool] = {}
        self.instances: dict[Call, list[Type]] = {}
        self.let_bound: set[Let] = set()
        self.tvar_uses: list[tuple[TypeVar, Expr]] = []
        self.tvars_bound: set[TypeVar] = set()
        self.relations: dict[Op, _AnyT] = {}
        self.default_attrs: dict[Op, Attrs] = {}
        self.const_types: dict[tuple, TensorType] = {}
        self.memo: dict[Expr, Expr] = {}
        self.new_gvars: dict[str, GlobalVar] = {}
        for name, func in self.functions.items():
            if not isinstance(func, Function):
                raise TypeInferenceError(
                    f"@{name} is a {type(func).__name__}; InferType handles Relay functions only"
                )
            declared = _declared_type(func)
            self.global_decl[name] = declared is not None
            self.global_types[name] = declared if declared is not None else IncompleteType()
        # Typed functions not typed again (:mod:`.incremental`): their global variables, typed,
        # which stand for them.  Read when a call names them, not copied into the tables here:
        # an incremental run should cost in proportion to the functions it types.
        self.known: Mapping[str, GlobalVar] = known or {}

    # --- driving ---------------------------------------------------------
    def infer_globals(self) -> None:
        # Polymorphic functions first, so that their callers can instantiate them.
        names = sorted(self.functions, key=lambda n: not self.functions[n].type_params)
        for name in names:
            func = self.functions[name]
            fty = self.infer_root(func, f"@{name}")
            placeholder = self.global_types[name]
            self.solver.unify(
                placeholder, fty, func,
                f"@{name} has type {{rhs}}, but its uses require {{lhs}}",
            )
            # Later uses see the function's own (possibly polymorphic) type.
            if not self.global_decl[name]:
                self.global_types[name] = fty

    def infer_root(self, root: Expr, name: str) -> Type:
        self.tvars_bound = set()
        self.tvar_uses = []
        fty = self._walk(root)
        for tvar, node in self.tvar_uses:
            if tvar not in self.tvars_bound:
                raise _error(
                    TypeInferenceError,
                    f"type variable {tvar.name_hint} is not bound by the type parameters of "
                    f"any function in {name}",
                    node,
                )
        return fty

    def finish(self, reuse: Mapping[str, GlobalVar] | None = None
               ) -> dict[str, tuple[GlobalVar, Function]]:
        """Check that everything is determined, then build the typed copies.

        ``reuse``: global variables to keep for the functions whose type
        they already carry (instead of new ones).
        """
        self._check_relations()
        resolve = self.solver.resolve
        for name in self.functions:
            ty = resolve(self.global_types[name])
            gv = (reuse or {}).get(name)
            if gv is None or not (gv._checked_type is ty or gv._checked_type == ty):
                gv = GlobalVar(name)
                set_checked_type(gv, ty)
            self.new_gvars[name] = gv
        self._rebuild()
        memo = self.memo
        return {name: (self.new_gvars[name], memo[func]) for name, func in self.functions.items()}

    def _check_relations(self) -> None:
        pending = self.solver.pending_relations()
        if not pending:
            return
        rel = pending[0]
        where = rel.where
        args = ", ".join(type_text(self.solver.resolve(a)) for a in rel.args)
        if isinstance(where, Call):
            message = (
                f"cannot infer the types of the arguments of operator {where.op.name} (they are "
                f"({args}), where _ is unknown); annotate the variables they come from"
            )
        else:
            message = (
                f"cannot infer the type of the tuple this projection reads (it is {args}, where "
                "_ is unknown); annotate the variables it comes from"
            )
        raise _error(UnderdeterminedTypeError, message, where)

    def _require_known(self, ty: Type, node: Expr, what: str) -> None:
        if type(ty) is TensorType or self.solver.free_var(ty) is None:
            return
        if unknown_only_in_type_arguments(ty):
            return  # as Relay: Nil's element type may stay unknown (List[_])
        if type(ty) is IncompleteType:
            known = "nothing in the program determines it"
        else:
            known = f"it is only known to be {type_text(ty)} (_ marks the unknown parts)"
        raise _error(
            UnderdeterminedTypeError,
            f"cannot infer the type of {what}: {known}; add a type annotation",
            node,
        )

    # --- constraint generation ---------------------------------------------
    def _walk(self, root: Expr) -> Type:
        """Type every node under ``root`` in post-order, with an explicit stack."""
        ty = self.ty
        if root in ty:
            return ty[root]
        order = self.order
        solver = self.solver
        let_bound = self.let_bound
        stack: list[Expr] = [root]
        push = stack.append
        while stack:
            node = stack[-1]
            if node in ty:
                stack.pop()
                continue
            t = type(node)
            if t is Call:
                pending = False
                for arg in reversed(node.args):
                    if arg not in ty:
                        if type(arg) is Op:
                            raise _op_as_value(arg, node)
                        push(arg)
                        pending = True
                op = node.op
                if type(op) is not Op and op not in ty:
                    push(op)
                    pending = True
                if pending:
                    continue
                stack.pop()
                if type(op) is Op:
                    ty[node] = self._op_call(node, op)
                else:
                    ty[node] = self._call(node)
            elif t is Var:
                stack.pop()
                ann = node.type_annotation
                if ann is None:
                    ty[node] = IncompleteType()
                else:
                    if type(ann) is not TensorType:
                        self._note_type_vars(ann, node)
                    ty[node] = ann
            elif t is Let:
                var, value = node.var, node.value
                if value not in ty or var not in ty:
                    if type(value) is Op:
                        raise _op_as_value(value, node)
                    push(value)
                    push(var)
                    continue
                if node not in let_bound:
                    # Bind before the body is typed, so that uses in the body
                    # see the value's type (and take the fast path).
                    let_bound.add(node)
                    ty[var] = solver.unify(
                        ty[var], ty[value], node,
                        f"the value bound to %{var.name_hint} has type {{rhs}}, "
                        f"but %{var.name_hint} has type {{lhs}}",
                    )
                body = node.body
                if body not in ty:
                    if type(body) is Op:
                        raise _op_as_value(body, node)
                    push(body)
                    continue
                stack.pop()
                ty[node] = ty[body]
            else:
                kids = t._layout_.children(node) if t in _RULES else _unknown_node(node)
                pending = False
                for kid in reversed(kids):
                    if kid not in ty:
                        if type(kid) is Op:
                            raise _op_as_value(kid, node)
                        push(kid)
                        pending = True
                if pending:
                    continue
                stack.pop()
                ty[node] = _RULES[t](self, node)
            order.append(node)
        return ty[root]

    def _note_type_vars(self, ann: Type, node: Expr) -> None:
        """Record the type variables ``ann`` uses, after checking its kinds (as Relay's
        InferType checks each annotation it meets: a shape variable used as a type is an
        error at ``node``, not a confusing mismatch later)."""
        if self.kind_mod is None:
            self.kind_mod = IRModule(type_definitions=self.type_defs)
        try:
            check_kind(ann, self.kind_mod)
        except KindCheckError as err:
            err.expr = node
            raise
        stack = [ann]
        while stack:
            t = stack.pop()
            if isinstance(t, TypeVar):
                self.tvar_uses.append((t, node))
            else:
                # Its component types; the type parameters it binds are no uses.
                layout = type(t)._layout_
                stack.extend(layout.subterms(t))
                self.tvars_bound.update(layout.bound_type_vars(t))

    def _op_call(self, call: Call, op: Op) -> Type:
        rel = self.relations.get(op)
        if rel is None:
            rel = op.get_attr("FTypeRelation")
            if rel is None:
                raise _error(
                    TypeInferenceError,
                    f"operator {op.name} has no type relation (FTypeRelation)",
                    call,
                )
            self.relations[op] = rel
        args = call.args
        if op.num_inputs >= 0 and len(args) != op.num_inputs:
            raise _error(
                TypeInferenceError,
                f"operator {op.name} takes {op.num_inputs} argument"
                f"{'s' if op.num_inputs != 1 else ''}, but the call gives {len(args)}",
                call,
            )
        attrs = call.attrs
        if attrs is None and op.attrs_schema is not None:
            attrs = self._default_attrs(op, call)
        ty = self.ty
        arg_types = [ty[a] for a in args]
        known = True
        for i, t in enumerate(arg_types):
            if type(t) is TensorType:
                continue
            t = self.solver.resolve(t)
            arg_types[i] = t
            if type(t) is not TensorType and self.solver.free_var(t) is not None:
                known = False
        if not known:
            known = self._infer_arg_types(op, args, arg_types, attrs, call)
        if known:
            typed = call._checked_type
            if typed is not None and _same_objects(call.type_args, arg_types):
                # Typed before from the very same argument types (a pass kept the call, or
                # rebuilt it over typed arguments): the relation would give this type again.
                return typed
            return _apply_relation(op, rel, arg_types, attrs, call)
        out = IncompleteType()
        self.solver.add_relation(
            lambda types: _apply_relation(op, rel, types, attrs, call), arg_types, out, call
        )
        return out

    def _infer_arg_types(
        self, op: Op, args: Sequence[Expr], arg_types: list[Type], attrs: Attrs | None, call: Call
    ) -> bool:
        """Type unknown arguments from the operator's ``FInferArgTypes`` (batch_norm's gamma
        from data's channels, as Relay's relations do); True when all are known afterwards."""
        infer = op.get_attr("FInferArgTypes")
        if infer is None:
            return False
        solver = self.solver
        given = [t if type(t) is TensorType or solver.free_var(t) is None else None for t in arg_types]
        try:
            hints = infer(given, attrs)
        except TypeRelationError as err:
            raise _error(TypeRelationError, str(err), call) from err
        known = True
        for i, (t, hint) in enumerate(zip(arg_types, hints)):
            if given[i] is None and hint is not None:
                solver.unify(self.ty[args[i]], hint, call, "argument {lhs} must have type {rhs}")
                t = solver.resolve(t)
                arg_types[i] = t
            if type(t) is not TensorType and solver.free_var(t) is not None:
                known = False
        return known

    def _default_attrs(self, op: Op, call: Call) -> Attrs:
        """The attributes of a call built without any: the schema's defaults, as ``make_call``."""
        attrs = self.default_attrs.get(op)
        if attrs is None:
            try:
                attrs = op.attrs_schema.build(op.name, {})
            except AttrsError as err:
                raise _error(TypeRelationError, f"{op.name}: {err}", call) from err
            self.default_attrs[op] = attrs
        return attrs

    def _call(self, call: Call) -> Type:
        if type(call.op) is Constructor:
            check_constructor_call(call)
        solver = self.solver
        ty = self.ty
        callee = solver.shallow(ty[call.op])
        arg_types = [ty[a] for a in call.args]
        kind = type(callee)
        if kind is FuncType:
            params, ret = callee.arg_types, callee.ret_type
            explicit = call.type_args
            if callee.type_params:
                if len(explicit) > len(callee.type_params):
                    raise _error(
                        TypeInferenceError,
                        f"the call gives {len(explicit)} type arguments, but the callee has "
                        f"{len(callee.type_params)} type parameters ({type_text(callee)})",
                        call,
                    )
                for t in explicit:
                    self._note_type_vars(t, call)
                inst = list(explicit) + [
                    IncompleteType() for _ in range(len(callee.type_params) - len(explicit))
                ]
                mapping = dict(zip(callee.type_params, inst))
                params = [substitute_type_vars(p, mapping) for p in params]
                ret = substitute_type_vars(ret, mapping)
                self.instances[call] = inst
            elif explicit:
                raise _error(
                    TypeInferenceError,
                    f"the call gives {len(explicit)} type arguments, but the callee is not "
                    f"polymorphic ({type_text(callee)})",
                    call,
                )
            if len(params) != len(arg_types):
                raise _error(
                    TypeInferenceError,
                    f"the callee takes {len(params)} argument{'s' if len(params) != 1 else ''}, "
                    f"but the call gives {len(arg_types)} (the callee has type "
                    f"{type_text(solver.resolve(callee))})",
                    call,
                )
            for i, (p, a) in enumerate(zip(params, arg_types)):
                solver.unify(
                    p, a, call, f"argument {i} has type {{rhs}}, but the callee expects {{lhs}}"
                )
            return ret
        if kind is IncompleteType:
            ret = IncompleteType()
            solver.unify(
                callee, FuncType(arg_types, ret), call,
                "the callee has type {lhs}, but the call uses it as {rhs}",
            )
            return ret
        raise _error(
            TypeMismatchError,
            f"only functions can be called, but the callee has type "
            f"{type_text(solver.resolve(callee))}",
            call,
        )

    # --- node rules (other than calls and lets, handled in _walk) ----------
    def _global_var(self, node: GlobalVar) -> Type:
        gtype = self.global_types.get(node.name_hint)
        if gtype is None:
            known = self.known.get(node.name_hint)
            if known is not None:
                return known._checked_type
            have = ", ".join(f"@{n}" for n in self.functions) or "none"
            raise _error(
                TypeInferenceError,
                f"@{node.name_hint} is not defined in the module (it has: {have})",
                node,
            )
        return gtype

    def _constant(self, node: Constant) -> Type:
        if typed_constant(node):
            # Typed before: the same type, kept, so that the calls over it can keep theirs.
            return node._checked_type
        data = node.array
        key = (data.shape, data.dtype.str)
        t = self.const_types.get(key)
        if t is None:
            t = self.const_types[key] = TensorType(data.shape, str(data.dtype))
        return t

    def _tuple(self, node: Tuple) -> Type:
        ty = self.ty
        fields = [ty[f] for f in node.fields]
        typed = node._checked_type
        if type(typed) is TupleType and _same_objects(typed.fields, fields):
            return typed  # typed before, from the very same field types
        return TupleType(fields)

    def _tuple_getitem(self, node: TupleGetItem) -> Type:
        tup = self.solver.shallow(self.ty[node.tuple_value])
        if type(tup) is IncompleteType:
            out = IncompleteType()
            index = node.index
            self.solver.add_relation(
                lambda types: _project(types[0], index, node), [tup], out, node, shallow=True
            )
            return out
        field = _project(tup, node.index, node)
        typed = node._checked_type
        if typed is not None and typed is not field and type(typed) is type(field) \
                and typed == field:
            return typed  # typed before: the same type, kept, so that its users keep theirs
        return field

    def _function(self, node: Function) -> Type:
        ty = self.ty
        self.tvars_bound.update(node.type_params)
        ret = ty[node.body]
        if node.ret_type is not None:
            self._note_type_vars(node.ret_type, node)
            self.solver.unify(
                node.ret_type, ret, node,
                "the function body has type {rhs}, but the function's return type is {lhs}",
            )
            ret = node.ret_type
        return FuncType([ty[p] for p in node.params], ret, node.type_params)

    def _if(self, node: If) -> Type:
        ty = self.ty
        solver = self.solver
        solver.unify(
            _BOOL_SCALAR, ty[node.cond], node,
            "the condition of an If must have type {lhs}, but it has type {rhs}",
        )
        return solver.unify(
            ty[node.true_branch], ty[node.false_branch], node,
            "the branches of the If have types {lhs} and {rhs}, which do not unify",
        )

    def _ref_create(self, node: RefCreate) -> Type:
        return RefType(self.ty[node.value])

    def _ref_read(self, node: RefRead) -> Type:
        value = IncompleteType()
        self.solver.unify(
            RefType(value), self.ty[node.ref], node,
            "ref_read needs a reference ({lhs}), but its argument has type {rhs}",
        )
        return value

    def _ref_write(self, node: RefWrite) -> Type:
        self.solver.unify(
            RefType(self.ty[node.value]), self.ty[node.ref], node,
            "ref_write of this value needs a reference of type {lhs}, but the reference has "
            "type {rhs}",
        )
        return _UNIT

    # --- output ------------------------------------------------------------------
    def _rebuild(self) -> None:
        """Build the typed copy of every node, children first (the order of ``_walk``)."""
        memo = self.memo
        ty = self.ty
        self.solver.freeze()
        resolve = self.solver.resolve
        free_var = self.solver.free_var
        instances = self.instances
        new_gvars = self.new_gvars
        # One object per distinct tensor type, and per distinct list of argument types: most
        # nodes of a program share a few types, and a typed node need not carry its own copy.
        tensor_types: dict[int, TensorType] = {}
        arg_types: dict[tuple, _AnyT] = {}
        for node in self.order:
            t = type(node)
            typ = ty[node]
            if type(typ) is TensorType:
                if typ.span is None:
                    same = tensor_types.get(typ._hash)
                    if same is None:
                        tensor_types[typ._hash] = typ
                    elif (same is not typ and typ is not node._checked_type
                          and same.dtype == typ.dtype and _same_dims(same, typ)):
                        typ = same
            else:
                typ = resolve(typ)
                if type(typ) is not TensorType and free_var(typ) is not None:
                    self._require_known(typ, node, _describe(node))
            if t is GlobalVar:
                gv = new_gvars.get(node.name_hint)
                memo[node] = gv if gv is not None else self.known[node.name_hint]
                continue
            if t is Constructor:
                # Typed by its definition from the start, as the module's constructors are shared.
                memo[node] = node
                continue
            if t is Call and type(node.op) is Op:
                # The common case, without the generic children: as Relay, a call
                # of an operator carries its arguments' types as type arguments.
                args = [memo[a] for a in node.args]
                # The arguments' types, as their typed copies carry them (shared, above).
                type_args = [a._checked_type for a in args]
                if (node._checked_type is typ and _same_objects(args, node.args)
                        and _same_objects(node.type_args, type_args)):
                    # Typed already, over the very same arguments: the copy would equal it.
                    memo[node] = node
                    continue
                key = tuple(map(id, type_args))
                shared = arg_types.get(key)
                if shared is None:
                    shared = arg_types[key] = tuple(type_args)
                new = Call(node.op, args, node.attrs, shared, node.span)
                set_checked_type(new, typ)
                memo[node] = new
                continue
            # Every child was rebuilt before its parent; operators stay as they are.
            layout = t._layout_
            children = layout.children(node)
            kids = [k if type(k) is Op else memo[k] for k in children]
            if (node._checked_type is typ and t is not Var and t is not Function
                    and t is not Match and (t is not Call or node not in instances)
                    and _same_objects(kids, children)):
                # Typed already with this type, over the very same children: nodes are
                # immutable, so the node is its own typed copy (a pass kept it).
                memo[node] = node
                continue
            changes: dict[str, _AnyT] | None = None
            if t is Call:
                inst = instances.get(node)
                if inst is not None:
                    type_args = [resolve(x) for x in inst]
                    # A constructor's are its data type's type arguments, which may stay unknown.
                    for i, arg in enumerate(type_args if type(node.op) is not Constructor else ()):
                        self._require_known(arg, node, f"type argument {i} of this call")
                    changes = {"type_args": type_args}
            elif t is Var:
                ann = node.type_annotation
                if ann is None or node._checked_type is None:
                    # No annotation, or an incomplete one: a copy annotated with the type.
                    changes = {"type_annotation": typ}
                elif ann is typ or ann == typ:
                    # Annotated with its type, which it has from the start: the variable
                    # itself (TVM's copy keeps the vid, so it is the same variable).
                    memo[node] = node
                    continue
            elif t is Function:
                ret_type = node.ret_type
                if ret_type is None or (
                    type(ret_type) is not TensorType and has_incomplete(ret_type)
                ):
                    changes = {"ret_type": typ.ret_type}
            elif t is Match:
                # The patterns bind the typed copies of their variables.
                changes = {"patterns": typed_patterns(node.patterns, memo)}
            elif t is Tuple and type(typ) is TupleType and typ.span is None:
                # The fields' types as the typed fields carry them (shared), the tuple type
                # shared by the tuples of the same field types.
                fields = [k._checked_type for k in kids]
                key = (None, *map(id, fields))
                shared = arg_types.get(key)
                if shared is None:
                    shared = arg_types[key] = TupleType(fields)
                typ = shared
            new = layout.rebuild(node, kids) if changes is None else rebuild(node, kids, **changes)
            set_checked_type(new, typ)
            memo[node] = new


def _same_objects(a: Sequence[_AnyT], b: Sequence[_AnyT]) -> bool:
    """Whether two sequences hold the very same objects, in order."""
    return len(a) == len(b) and all(map(is_, a, b))


def _same_dims(a: TensorType, b: TensorType) -> bool:
    """The very same dimensions (an int64 dimension equals an int32 one of its value, but is
    not the same: one type may not stand for the other)."""
    sa, sb = a.shape, b.shape
    return len(sa) == len(sb) and all(map(is_, sa, sb))


def _declared_type(func: Function) -> FuncType | None:
    """The type a fully annotated function declares: callers can use it before it is typed."""
    if func.ret_type is None:
        return None
    params = []
    for p in func.params:
        if p.type_annotation is None:
            return None
        params.append(p.type_annotation)
    return FuncType(params, func.ret_type, func.type_params)


def _apply_relation(
    op: Op, rel: _AnyT, arg_types: list[Type], attrs: Attrs | None, call: Call
) -> Type:
    """Run ``op``'s type relation; its complaints become errors about ``call``."""
    try:
        out = rel(arg_types, attrs)
    except TypeRelationError as err:
        message = str(err)
        if not message.startswith(op.name):
            message = f"{op.name}: {message}"
        raise _error(TypeRelationError, message, call) from err
    except RelayPassError as err:
        raise _error(TypeRelationError, f"{op.name}: {err}", call) from err
    if not isinstance(out, Type):
        raise _error(
            TypeRelationError,
            f"the type relation of operator {op.name} returned {out!r}, not a type",
            call,
        )
    return out


def _project(tup: Type, index: int, node: TupleGetItem) -> Type:
    if type(tup) is not TupleType:
        raise _error(
            TypeMismatchError,
            f"cannot take field {index} of a value of type {type_text(tup)}: it is not a tuple",
            node,
        )
    if not 0 <= index < len(tup.fields):
        raise _error(
            TypeInferenceError,
            f"tuple index {index} is out of range for a tuple of {len(tup.fields)} "
            f"field{'s' if len(tup.fields) != 1 else ''} ({type_text(tup)})",
            node,
        )
    return tup.fields[index]


def _op_as_value(op: Op, parent: Expr) -> TypeInferenceError:
    return _error(
        TypeInferenceError,
        f"operator {op.name} is used as a value; an operator can only be called (wrap it in "
        f"a function, e.g. fn (%x) {{ {op.name}(%x) }}, to pass it around)",
        parent,
    )


def _unknown_node(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Op):
        raise _error(
            TypeInferenceError,
            f"operator {node.name} is not a value; an operator can only be called",
            node,
        )
    raise TypeInferenceError(
        f"InferType does not handle {type(node).__name__} nodes ({node!r:.80})"
    )


def _describe(node: Expr) -> str:
    if type(node) is Var:
        return f"%{node.name_hint}"
    return f"this {type(node).__name__}"


_RULES = {
    GlobalVar: _Inference._global_var,
    Constant: _Inference._constant,
    Tuple: _Inference._tuple,
    TupleGetItem: _Inference._tuple_getitem,
    Function: _Inference._function,
    If: _Inference._if,
    RefCreate: _Inference._ref_create,
    RefRead: _Inference._ref_read,
    RefWrite: _Inference._ref_write,
    Constructor: constructor_type,
    Match: match_type,
}
