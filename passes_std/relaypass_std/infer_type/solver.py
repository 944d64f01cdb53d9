"""The constraint solver behind InferType: unification and deferred type relations.

The shape follows Relay's ``TypeSolver``.  Unknown types are
:class:`~relaypass.ir.types.IncompleteType` objects; the solver keeps a
union-find forest over them (``_parent`` maps a variable either to another
variable, which is a union-find link, or to the type it was solved to).
Unifying two types binds free variables, checks that structures agree, and
wakes the relations that were waiting for those variables.

A *relation* is a function from argument types to a result type (an
operator's ``FTypeRelation``, or the projection of a tuple type).  Relay
re-runs relations until a fixed point; relaypass' relations are functional,
so each runs exactly once: as soon as its inputs are known, its result is
unified with the relation's output variable.  A relation that never became
ready means the program's types are underdetermined, which the caller reports.

Unknown tensor extents (``Any``): unifying ``Any`` with a known extent gives
``Any``, as Relay's ``UnifyDim`` does -- the unified type promises only what
both sides promise.  Only variables take the unified type; a type written in
the program (an annotation, an operator's result) keeps its own extents.

Size variables: unifying one with an extent binds it to that extent for the
rest of the function (Relay's shape union-find), so that a variable that
would need two extents is a type mismatch naming the expression that bound
it first; two different variables do not unify, as in Relay.

Unification recurses over the structure of *types*, which is as deep as the
program nests tuples and function types, never as long as the program is;
chains of variables are followed with loops.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence

from relaypass.errors import RelayPassError, TypeInferenceError
from relaypass.ir import shape_expr
from relaypass.ir.fields import with_children
from relaypass.ir.summary import short_text, type_text
from relaypass.ir.types import (
    Any,
    Dim,
    FuncType,
    IncompleteType,
    IntImm,
    RefType,
    SizeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)


class TypeMismatchError(TypeInferenceError):
    """Two types that the program requires to be equal do not unify.

    ``lhs`` and ``rhs`` are the two types (as far as they were solved), and
    ``expr`` the expression whose typing required them to be equal.
    """

    def __init__(self, message: str, lhs: Type | None = None, rhs: Type | None = None) -> None:
        super().__init__(message)
        self.lhs = lhs
        self.rhs = rhs


class UnderdeterminedTypeError(TypeInferenceError):
    """The program does not determine a type: a variable or a call's arguments stay unknown."""


class _Clash(Exception):
    """Internal: the innermost pair of types that failed to unify, and why."""

    def __init__(self, lhs: Type, rhs: Type, detail: str = "") -> None:
        super().__init__(detail)
        self.lhs = lhs
        self.rhs = rhs
        self.detail = detail


DEFAULT_MISMATCH = "{lhs} and {rhs} do not unify"


class Relation:
    """A deferred constraint ``out = func(args)``, run once its inputs are known.

    ``shallow`` relations need only the outermost form of their single input
    (a tuple projection needs to know it has a tuple, not every field's type);
    the others need every input fully known.
    """

    __slots__ = ("func", "args", "out", "where", "shallow", "done")

    def __init__(
        self,
        func: Callable[[list[Type]], Type],
        args: Sequence[Type],
        out: Type,
        where: object,
        shallow: bool,
    ) -> None:
        self.func = func
        self.args = list(args)
        self.out = out
        self.where = where
        self.shallow = shallow
        self.done = False


class TypeSolver:
    """Union-find over incomplete types, unification, and relations waiting on variables."""

    __slots__ = ("_parent", "_waiting", "_queue", "_relations", "_draining", "_resolved", "_known",
                 "_sizes", "_where")

    def __init__(self) -> None:
        self._parent: dict[IncompleteType, Type] = {}
        self._waiting: dict[IncompleteType, list[Relation]] = {}
        self._queue: deque[Relation] = deque()
        self._relations: list[Relation] = []
        self._draining = False
        # Once solving is over (``freeze``): composite types already resolved or
        # checked, by identity.  A type shared by many nodes (the type of a deep
        # let chain, a nested tuple) is then walked once, not once per node.
        self._resolved: dict[int, Type] | None = None
        self._known: dict[int, IncompleteType | None] | None = None
        # Size variables unification bound to an extent, with the expression that bound them;
        # ``_where`` is the expression of the unification under way.
        self._sizes: dict[SizeVar, tuple[Dim, object]] = {}
        self._where: object = None

    def freeze(self) -> None:
        """Solving is over: remember resolved composite types from now on."""
        self._resolved = {}
        self._known = {}

    # --- variables ----------------------------------------------------------
    def _root(self, var: IncompleteType) -> IncompleteType:
        """The representative variable of ``var``'s class (path-compressing)."""
        parent = self._parent
        up = parent.get(var)
        if type(up) is not IncompleteType:
            return var
        root = up
        while True:
            nxt = parent.get(root)
            if type(nxt) is not IncompleteType:
                break
            root = nxt
        while var is not root:
            nxt = parent[var]
            parent[var] = root
            var = nxt
        return root

    def shallow(self, ty: Type) -> Type:
        """``ty`` with its outermost variable replaced by what it was solved to.

        The result is a free variable only when nothing is known about ``ty``.
        """
        if type(ty) is not IncompleteType:
            return ty
        root = self._root(ty)
        bound = self._parent.get(root)
        return root if bound is None else bound

    def resolve(self, ty: Type) -> Type:
        """``ty`` with every solved variable substituted; free variables stay."""
        t = type(ty)
        if t is TensorType or t is TypeVar:
            return ty
        if t is IncompleteType:
            root = self._root(ty)
            bound = self._parent.get(root)
            if bound is None:
                return root
            resolved = self.resolve(bound)
            if resolved is not bound:
                # Cache the substitution: later lookups of this class are O(1).
                self._parent[root] = resolved
            return resolved
        # Any other type: over its resolved component types (itself if none changed).
        kids = t._layout_.children(ty)
        if not kids:
            return ty
        cache = self._resolved
        if cache is None:
            return with_children(ty, [self.resolve(k) for k in kids])
        out = cache.get(id(ty))
        if out is None:
            out = cache[id(ty)] = with_children(ty, [self.resolve(k) for k in kids])
        return out

    def free_var(self, ty: Type) -> IncompleteType | None:
        """A variable of ``ty`` that is still unknown, or None when ``ty`` is fully known."""
        known = self._known
        if known is None or type(ty) is TensorType:
            return self._free_var(ty)
        key = id(ty)
        if key not in known:
            known[key] = self._free_var(ty)
        return known[key]

    def _free_var(self, ty: Type) -> IncompleteType | None:
        stack = [ty]
        while stack:
            t = stack.pop()
            k = type(t)
            if k is TensorType:
                continue
            if k is IncompleteType:
                root = self._root(t)
                bound = self._parent.get(root)
                if bound is None:
                    return root
                stack.append(bound)
            else:
                stack.extend(k._layout_.subterms(t))  # its component types
        return None

    # --- unification --------------------------------------------------------
    def unify(
        self, lhs: Type, rhs: Type, where: object = None, what: str = DEFAULT_MISMATCH
    ) -> Type:
        """Make ``lhs`` and ``rhs`` equal and return the unified type.

        On failure raises :class:`TypeMismatchError` whose message is ``what``
        (with ``{lhs}`` and ``{rhs}`` filled in) plus the innermost
        difference; ``where`` becomes the error's ``expr``.
        """
        if lhs is rhs:
            return lhs
        if type(lhs) is TensorType and type(rhs) is TensorType and lhs == rhs:
            return lhs
        self._where = where
        try:
            unified = self._unify(lhs, rhs)
        except _Clash as clash:
            raise self._mismatch(lhs, rhs, clash, where, what) from None
        if self._queue and not self._draining:
            self.solve()
        return unified

    def _mismatch(
        self, lhs: Type, rhs: Type, clash: _Clash, where: object, what: str
    ) -> TypeMismatchError:
        lhs_r, rhs_r = self.resolve(lhs), self.resolve(rhs)
        message = what.format(lhs=type_text(lhs_r), rhs=type_text(rhs_r))
        inner_l, inner_r = self.resolve(clash.lhs), self.resolve(clash.rhs)
        notes = []
        if not (inner_l is lhs_r and inner_r is rhs_r) and not (
            inner_l is rhs_r and inner_r is lhs_r
        ):
            notes.append(f"{type_text(inner_l)} vs {type_text(inner_r)}")
        if clash.detail:
            notes.append(clash.detail)
        if notes:
            message += f" (in particular: {'; '.join(notes)})"
        err = TypeMismatchError(message, lhs_r, rhs_r)
        err.expr = where
        return err

    def _unify(self, a: Type, b: Type) -> Type:
        parent = self._parent
        root_a = root_b = None
        if type(a) is IncompleteType:
            root_a = self._root(a)
            a = parent.get(root_a, root_a)
        if type(b) is IncompleteType:
            root_b = self._root(b)
            b = parent.get(root_b, root_b)
        if a is b:
            return a
        if type(a) is IncompleteType:
            if type(b) is not IncompleteType:
                self._occurs(a, b)
            parent[a] = b
            self._wake(a)
            return b
        if type(b) is IncompleteType:
            self._occurs(b, a)
            parent[b] = a
            self._wake(b)
            return a
        unified = self._unify_structure(a, b)
        # A variable takes the unified type (which may have traded a known
        # extent for Any); types written in the program keep theirs.
        if root_a is not None and unified is not a:
            parent[root_a] = unified
        if root_b is not None and unified is not b:
            parent[root_b] = unified
        return unified

    def _unify_structure(self, a: Type, b: Type) -> Type:
        ta = type(a)
        if ta is TensorType:
            if type(b) is not TensorType:
                raise _Clash(a, b)
            return self._unify_tensor(a, b)
        if ta is TupleType:
            if type(b) is not TupleType:
                raise _Clash(a, b)
            if len(a.fields) != len(b.fields):
                raise _Clash(a, b, f"tuples of {len(a.fields)} and {len(b.fields)} fields")
            fields = [self._unify(x, y) for x, y in zip(a.fields, b.fields)]
            if all(f is x for f, x in zip(fields, a.fields)):
                return a
            if all(f is y for f, y in zip(fields, b.fields)):
                return b
            return TupleType(fields)
        if ta is FuncType:
            if type(b) is not FuncType:
                raise _Clash(a, b)
            return self._unify_func(a, b)
        if ta is RefType:
            if type(b) is not RefType:
                raise _Clash(a, b)
            value = self._unify(a.value, b.value)
            if value is a.value:
                return a
            return b if value is b.value else RefType(value)
        if ta is TypeCall:
            if type(b) is not TypeCall:
                raise _Clash(a, b)
            return self._unify_type_call(a, b)
        # Type variables (rigid inside their function) and anything else are
        # equal only to themselves, which ``_unify`` already checked.
        raise _Clash(a, b)

    def _unify_tensor(self, a: TensorType, b: TensorType) -> TensorType:
        if a.dtype != b.dtype:
            raise _Clash(a, b, f"dtype {a.dtype} vs {b.dtype}")
        if len(a.shape) != len(b.shape):
            raise _Clash(a, b, f"rank {len(a.shape)} vs {len(b.shape)}")
        dims = []
        keeps_a = keeps_b = True
        symbolic = a.symbolic or b.symbolic
        for i, (x, y) in enumerate(zip(a.shape, b.shape)):
            if x == y:
                dims.append(x)
            elif isinstance(x, Any):
                dims.append(x)
                keeps_b = False
            elif isinstance(y, Any):
                dims.append(y)
                keeps_a = False
            elif symbolic:
                d = self._unify_dim(x, y)
                if d is None:
                    raise _Clash(a, b, self._dim_clash(i, x, y))
                dims.append(d)
                keeps_a = keeps_a and d is x
                keeps_b = keeps_b and d is y
            else:
                raise _Clash(a, b, f"dimension {i}: {x} vs {y}")
        if keeps_a:
            return a
        if keeps_b:
            return b
        return TensorType(dims, a.dtype)

    def _dim_value(self, d: Dim) -> Dim:
        """A dimension with the size variables unification has bound replaced by their extents."""
        if not self._sizes or not shape_expr.is_symbolic(d):
            return d
        values = {v: self._sizes[v][0] for v in shape_expr.free_size_vars([d]) if v in self._sizes}
        return shape_expr.substitute(d, values) if values else d

    def _unify_dim(self, x: Dim, y: Dim) -> Dim | None:
        """Relay's ``UnifyDim``: a size variable meeting an extent is bound to it, for the
        whole function; two different variables, or expressions, do not unify."""
        vx, vy = self._dim_value(x), self._dim_value(y)
        if vx == vy:
            return x if vx is x else y if vy is y else vx
        if isinstance(vx, Any) or isinstance(vy, Any):
            return Any()
        if type(vx) is SizeVar and type(vy) is IntImm:
            self._sizes[vx] = (vy, self._where)
            return vy
        if type(vy) is SizeVar and type(vx) is IntImm:
            self._sizes[vy] = (vx, self._where)
            return vx
        return None

    def _dim_clash(self, i: int, x: Dim, y: Dim) -> str:
        """Why dimension ``i`` does not unify, naming where a size variable got its extent."""
        detail = f"dimension {i}: {x} vs {y}"
        for d in (x, y):
            for v in shape_expr.free_size_vars([d]):
                bound = self._sizes.get(v)
                if bound is not None:
                    where = bound[1]
                    at = f" by {short_text(where)}" if where is not None else ""
                    detail += (f"; size variable {v} was bound to {bound[0]}{at}, "
                               "so it cannot take another extent")
        return detail

    def _unify_func(self, a: FuncType, b: FuncType) -> FuncType:
        if len(a.arg_types) != len(b.arg_types):
            raise _Clash(
                a, b, f"functions of {len(a.arg_types)} and {len(b.arg_types)} parameters"
            )
        # As Relay: rename the type parameters of the more polymorphic side to
        # the other side's, and instantiate the ones it has in excess.
        if len(a.type_params) < len(b.type_params):
            a, b = b, a
        if a.type_params:
            mapping: dict[TypeVar, Type] = {}
            for i, param in enumerate(a.type_params):
                mapping[param] = b.type_params[i] if i < len(b.type_params) else IncompleteType()
            a_args = [substitute_type_vars(t, mapping) for t in a.arg_types]
            a_ret = substitute_type_vars(a.ret_type, mapping)
        else:
            a_args, a_ret = list(a.arg_types), a.ret_type
        args = [self._unify(x, y) for x, y in zip(a_args, b.arg_types)]
        ret = self._unify(a_ret, b.ret_type)
        if ret is b.ret_type and all(x is y for x, y in zip(args, b.arg_types)):
            return b
        return FuncType(args, ret, b.type_params)

    def _unify_type_call(self, a: TypeCall, b: TypeCall) -> TypeCall:
        """An algebraic data type applied to arguments: the same type, arguments unified."""
        if a.func != b.func:
            raise _Clash(a, b)
        if len(a.args) != len(b.args):
            raise _Clash(a, b, f"{len(a.args)} and {len(b.args)} type arguments")
        args = [self._unify(x, y) for x, y in zip(a.args, b.args)]
        if all(x is y for x, y in zip(args, a.args)):
            return a
        if all(x is y for x, y in zip(args, b.args)):
            return b
        return TypeCall(a.func, args, a.span)

    def _occurs(self, var: IncompleteType, ty: Type) -> None:
        """Refuse to bind ``var`` to a type that contains it (an infinite type)."""
        stack = [ty]
        while stack:
            t = stack.pop()
            k = type(t)
            if k is IncompleteType:
                root = self._root(t)
                if root is var:
                    raise _Clash(var, ty, "a type cannot contain itself")
                bound = self._parent.get(root)
                if bound is not None:
                    stack.append(bound)
            else:
                stack.extend(k._layout_.subterms(t))  # its component types

    # --- relations ----------------------------------------------------------
    def add_relation(
        self,
        func: Callable[[list[Type]], Type],
        args: Sequence[Type],
        out: Type,
        where: object,
        shallow: bool = False,
    ) -> Relation:
        """Constrain ``out`` to ``func(args)``: now if the inputs are known, else once they are.

        ``func`` raises a :class:`~relaypass.errors.RelayPassError` when the
        inputs do not fit; it propagates with ``where`` as its ``expr``.
        """
        rel = Relation(func, args, out, where, shallow)
        self._relations.append(rel)
        self._try(rel)
        if self._queue and not self._draining:
            self.solve()
        return rel

    def _wake(self, var: IncompleteType) -> None:
        waiting = self._waiting.pop(var, None)
        if waiting:
            self._queue.extend(waiting)

    def _try(self, rel: Relation) -> None:
        if rel.shallow:
            arg = self.shallow(rel.args[0])
            if type(arg) is IncompleteType:
                self._waiting.setdefault(arg, []).append(rel)
                return
            args = [arg]
        else:
            args = []
            for a in rel.args:
                resolved = a if type(a) is TensorType else self.resolve(a)
                if type(resolved) is not TensorType:
                    free = self.free_var(resolved)
                    if free is not None:
                        self._waiting.setdefault(free, []).append(rel)
                        return
                args.append(resolved)
        rel.done = True
        try:
            result = rel.func(args)
        except RelayPassError as err:
            if getattr(err, "expr", None) is None:
                err.expr = rel.where
            raise
        self.unify(
            rel.out, result, rel.where,
            "the call's result has type {rhs}, but its use requires {lhs}",
        )

    def solve(self) -> None:
        """Run every relation woken by the latest unifications, until none is left."""
        if self._draining:
            return
        self._draining = True
        try:
            queue = self._queue
            while queue:
                rel = queue.popleft()
                if not rel.done:
                    self._try(rel)
        finally:
            self._draining = False

    def pending_relations(self) -> list[Relation]:
        """The relations whose inputs never became known, in the order they were added."""
        return [rel for rel in self._relations if not rel.done]


def substitute_type_vars(ty: Type, mapping: Mapping[TypeVar, Type]) -> Type:
    """``ty`` with the type variables of ``mapping`` replaced (respecting inner binders)."""
    if isinstance(ty, TypeVar):
        return mapping.get(ty, ty)
    layout = type(ty)._layout_
    kids = layout.children(ty)
    if not kids:
        return ty
    inner = mapping
    params = layout.bound_type_vars(ty)
    if params and any(p in mapping for p in params):
        # The type's own parameters shadow the mapping inside it.
        inner = {k: v for k, v in mapping.items() if k not in params}
    return with_children(ty, [substitute_type_vars(k, inner) for k in kids])
