"""Structural equality and hashing of IR: comparison up to renaming of bound variables.

Nodes compare by identity (so memo tables are O(1)); this module answers the
other question, "are these two programs the same program?", the way TVM's
``structural_equal`` does:

* Bound variables (function parameters, let variables, type parameters)
  compare up to renaming: two binders are mapped to each other when their
  binding constructs are compared, for the scope of those constructs, and a
  use is equal to the use of the variable it was mapped to.  Variable type
  annotations are compared too.
* Free variables are equal only when identical, unless ``map_free_vars`` is
  set, in which case they are mapped on first encounter (consistently).
* Constants compare by dtype, shape and bytes; global variables and operators
  by name; attributes field by field; ``checked_type`` and spans not at all.
* Shared subexpressions compare as trees: a DAG equals the same program with
  the shared part duplicated, even when that part binds variables (a shared
  closure used in both branches of an If equals two copies of it, which is
  what printing and parsing such a program gives).  Pairs already compared
  are not compared again, which keeps heavily shared DAGs linear.

Everything runs on explicit stacks: a chain of 100,000 calls or of 100,000
nested lets needs no recursion.

The hash is consistent with equality (equal implies equal hash) and is
computed bottom-up with a per-call memo by node id, so shared subexpressions
are hashed once.  For that to agree with tree equality, a bound variable
hashes by what its binder looks like rather than by when it was reached: a
parameter by its position and its function's signature, a let variable by
the hash of the value it is bound to.  Free variables hash by identity, or
with ``map_free_vars`` by the order in which they are first met.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any as _AnyT

from .attrs import Attrs
from .expr import (
    Call,
    Constant,
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
from .module import IRModule
from .op import Op
from .summary import clip, short_text, type_text
from .types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeVar,
)

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]


# --------------------------------------------------------------------------- equality


class _Mismatch(Exception):
    """The first difference found: where, what, and the two sides."""

    def __init__(self, path: object, reason: str, lhs: object, rhs: object) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.lhs = lhs
        self.rhs = rhs


_EXIT = object()
"""Stack marker: the scope of the binders that come with it ends here."""

_PATH_LABELS = 40
"""Longer paths (a difference deep in a long chain) show only their two ends."""


def _path_text(path: object) -> str:
    """Paths are linked as (parent, label) pairs while comparing; this joins them."""
    labels: list[str] = []
    while path is not None:
        path, label = path  # type: ignore[misc]
        labels.append(label)
    labels.reverse()
    if len(labels) > _PATH_LABELS:
        # A difference deep in a long chain: keep both ends readable.
        half = _PATH_LABELS // 2
        skipped = len(labels) - 2 * half
        labels = [*labels[:half], f"...({skipped} more)...", *labels[-half:]]
    text = "".join(labels)
    return text[1:] if text.startswith(".") else (text or "(root)")


class _Comparer:
    """One comparison: the variable maps and the pairs already seen.

    With ``track`` every stack entry carries its path, so a mismatch can say
    where it is; without it paths are None and cost nothing.
    """

    __slots__ = ("map_free_vars", "track", "var_map", "rvar_map", "tv_map", "rtv_map", "renamed", "seen")

    def __init__(self, map_free_vars: bool, track: bool) -> None:
        self.map_free_vars = map_free_vars
        self.track = track
        self.var_map: dict[Var, Var] = {}
        self.rvar_map: dict[Var, Var] = {}
        self.tv_map: dict[TypeVar, TypeVar] = {}
        self.rtv_map: dict[TypeVar, TypeVar] = {}
        # True once some variable was mapped to a different one: from then on an
        # identical subtree may still differ (its variables may be renamed).
        self.renamed = False
        self.seen: set[tuple[int, int]] = set()

    def reset(self) -> None:
        """Forget every mapping (in place: a running loop holds references to the tables)."""
        for table in (self.var_map, self.rvar_map, self.tv_map, self.rtv_map, self.seen):
            table.clear()
        self.renamed = False

    # --- failures -----------------------------------------------------------
    def fail(self, path: object, reason: str, a: object, b: object) -> _Mismatch:
        return _Mismatch(path, reason, a, b)

    def sub(self, path: object, label: str) -> object:
        return (path, label) if self.track else None

    # --- binders ------------------------------------------------------------
    def bind_var(self, a: Var, b: Var, path: object) -> None:
        have = self.var_map.get(a)
        if have is not None:
            if have is not b:
                raise self.fail(path, f"%{a.name_hint} is already mapped to %{have.name_hint}", a, b)
            return
        if b in self.rvar_map:
            raise self.fail(path, f"%{b.name_hint} is already mapped from another variable", a, b)
        self.var_map[a] = b
        self.rvar_map[b] = a
        if a is not b:
            self.renamed = True
        ta, tb = a.type_annotation, b.type_annotation
        if ta is None and tb is None or type(ta) is TensorType and ta == tb:
            return
        self.type_equal(ta, tb, self.sub(path, ".type_annotation"))

    def bind_type_var(self, a: TypeVar, b: TypeVar, path: object) -> None:
        if type(a) is not type(b) or a.kind != b.kind:
            raise self.fail(path, "type parameters differ in kind", a, b)
        have = self.tv_map.get(a)
        if have is not None:
            if have is not b:
                raise self.fail(path, f"type variable {a.name_hint} is already mapped", a, b)
            return
        if b in self.rtv_map:
            raise self.fail(path, f"type variable {b.name_hint} is already mapped from another", a, b)
        self.tv_map[a] = b
        self.rtv_map[b] = a
        if a is not b:
            self.renamed = True

    def unbind(self, variables: Sequence[Var], type_vars: Sequence[TypeVar]) -> None:
        """Leave the scope of some binders: outside it, their names mean nothing."""
        for v in variables:
            other = self.var_map.pop(v, None)
            if other is not None:
                self.rvar_map.pop(other, None)
        for tv in type_vars:
            other_tv = self.tv_map.pop(tv, None)
            if other_tv is not None:
                self.rtv_map.pop(other_tv, None)

    # --- types --------------------------------------------------------------
    def type_equal(self, a: object, b: object, path: object) -> None:
        """Compare two types (or None); types are small, so a local stack suffices."""
        if type(a) is TensorType and a == b:
            return
        if a is b and not self.renamed and not self.map_free_vars:
            return
        stack = [(a, b, path)]
        while stack:
            a, b, path = stack.pop()
            ta = type(a)
            if ta is not type(b):
                if a is _EXIT:
                    self.unbind((), b)  # type: ignore[arg-type]
                    continue
                if a is None or b is None:
                    raise self.fail(path, "a type on one side only", a, b)
                raise self.fail(path, f"{ta.__name__} vs {type(b).__name__}", a, b)
            if ta is TensorType:
                if a == b:
                    continue
                if a.dtype != b.dtype:  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".dtype"), "dtypes differ", a, b)
                if len(a.shape) != len(b.shape):  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".shape"), "ranks differ", a, b)
                for i, (x, y) in enumerate(zip(a.shape, b.shape)):  # type: ignore[attr-defined]
                    if x != y or type(x) is not type(y):
                        raise self.fail(self.sub(path, f".shape[{i}]"), f"dimension {x} vs {y}", a, b)
                continue
            if a is None:
                continue
            if ta is TupleType:
                if len(a.fields) != len(b.fields):  # type: ignore[attr-defined]
                    raise self.fail(path, "tuple types of different arity", a, b)
                for i in range(len(a.fields) - 1, -1, -1):  # type: ignore[attr-defined]
                    stack.append((a.fields[i], b.fields[i], self.sub(path, f".fields[{i}]")))  # type: ignore[attr-defined]
            elif ta is FuncType:
                if len(a.type_params) != len(b.type_params):  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".type_params"), "different numbers of type parameters", a, b)
                if len(a.arg_types) != len(b.arg_types):  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".arg_types"), "different numbers of arguments", a, b)
                if len(a.type_constraints) != len(b.type_constraints):  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".type_constraints"), "different constraints", a, b)
                for i, (x, y) in enumerate(zip(a.type_params, b.type_params)):  # type: ignore[attr-defined]
                    self.bind_type_var(x, y, self.sub(path, f".type_params[{i}]"))
                if a.type_params:  # type: ignore[attr-defined]
                    stack.append((_EXIT, a.type_params, None))  # type: ignore[attr-defined]
                for i in range(len(a.type_constraints) - 1, -1, -1):  # type: ignore[attr-defined]
                    stack.append((a.type_constraints[i], b.type_constraints[i],  # type: ignore[attr-defined]
                                  self.sub(path, f".type_constraints[{i}]")))
                stack.append((a.ret_type, b.ret_type, self.sub(path, ".ret_type")))  # type: ignore[attr-defined]
                for i in range(len(a.arg_types) - 1, -1, -1):  # type: ignore[attr-defined]
                    stack.append((a.arg_types[i], b.arg_types[i], self.sub(path, f".arg_types[{i}]")))  # type: ignore[attr-defined]
            elif ta is TypeVar or ta is GlobalTypeVar:
                self.type_var_equal(a, b, path)  # type: ignore[arg-type]
            elif ta is IncompleteType:
                if a.kind != b.kind:  # type: ignore[attr-defined]
                    raise self.fail(path, "incomplete types of different kinds", a, b)
            elif ta is RefType:
                stack.append((a.value, b.value, self.sub(path, ".value")))  # type: ignore[attr-defined]
            elif a != b:
                raise self.fail(path, f"{ta.__name__} values differ", a, b)

    def type_var_equal(self, a: TypeVar, b: TypeVar, path: object) -> None:
        if type(a) is GlobalTypeVar:
            if a.name_hint != b.name_hint or a.kind != b.kind:
                raise self.fail(path, "global type variables differ", a, b)
            return
        have = self.tv_map.get(a)
        if have is not None:
            if have is not b:
                raise self.fail(path, f"type variable {a.name_hint} is mapped to {have.name_hint}", a, b)
            return
        if b in self.rtv_map:
            raise self.fail(path, f"type variable {b.name_hint} is mapped from another", a, b)
        if a is b:
            return
        if self.map_free_vars and a.kind == b.kind:
            self.bind_type_var(a, b, path)
            return
        raise self.fail(path, "different free type variables", a, b)

    # --- attributes ----------------------------------------------------------
    def attrs_equal(self, a: object, b: object, path: object) -> None:
        if a is b or a == b:
            return
        if not isinstance(a, Attrs) or not isinstance(b, Attrs):
            raise self.fail(path, "attributes on one side only", a, b)
        if a.type_key != b.type_key:
            raise self.fail(path, f"attribute kinds differ: {a.type_key} vs {b.type_key}", a, b)
        for key in a:
            if key not in b:
                raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} on the left only", a, b)
            if Attrs({key: a[key]}) != Attrs({key: b[key]}):
                raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} differs", a[key], b[key])
        for key in b:
            if key not in a:
                raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} on the right only", a, b)
        raise self.fail(path, "attributes differ", a, b)

    # --- expressions -------------------------------------------------------
    def run(self, lhs: object, rhs: object, path: object) -> None:
        """Compare two expressions (or types, attrs, sequences); raise _Mismatch on the first difference."""
        track = self.track
        var_map = self.var_map
        seen = self.seen
        stack: list[tuple[object, object, object]] = [(lhs, rhs, path)]
        push = stack.append
        pop = stack.pop
        while stack:
            a, b, path = pop()
            ta = type(a)
            if ta is not type(b):
                if a is _EXIT:
                    self.unbind(*b)  # type: ignore[misc]
                    continue
                raise self.fail(path, f"{ta.__name__} vs {type(b).__name__}", a, b)
            if ta is Var:
                have = var_map.get(a)  # type: ignore[call-overload]
                if have is not None:
                    if have is not b:
                        raise self.fail(path, f"%{a.name_hint} is bound to %{have.name_hint}", a, b)  # type: ignore[attr-defined]
                    continue
                if b in self.rvar_map:
                    raise self.fail(path, "a free variable and a bound one", a, b)
                if a is b:
                    continue
                if self.map_free_vars:
                    self.bind_var(a, b, path)  # type: ignore[arg-type]
                    continue
                raise self.fail(path, "different free variables", a, b)
            if a is b and not self.renamed and not self.map_free_vars:
                continue
            if ta in _SHAREABLE:
                # A pair of shared subexpressions is compared once, however many uses lead to it.
                key = (id(a), id(b))
                if key in seen:
                    continue
                seen.add(key)
            if ta is Call:
                aa, ba = a.args, b.args  # type: ignore[attr-defined]
                n = len(aa)
                if n != len(ba):
                    raise self.fail(self.sub(path, ".args"), f"{n} vs {len(ba)} arguments", a, b)
                if a.attrs is not b.attrs:  # type: ignore[attr-defined]
                    self.attrs_equal(a.attrs, b.attrs, self.sub(path, ".attrs"))  # type: ignore[attr-defined]
                if a.type_args or b.type_args:  # type: ignore[attr-defined]
                    self.type_list_equal(a.type_args, b.type_args, self.sub(path, ".type_args"))  # type: ignore[attr-defined]
                if track:
                    for i in range(n - 1, -1, -1):
                        push((aa[i], ba[i], (path, f".args[{i}]")))
                    push((a.op, b.op, (path, ".op")))  # type: ignore[attr-defined]
                else:
                    for i in range(n - 1, -1, -1):
                        push((aa[i], ba[i], None))
                    push((a.op, b.op, None))  # type: ignore[attr-defined]
            elif ta is Op:
                if a.name != b.name:  # type: ignore[attr-defined]
                    raise self.fail(path, f"operators {a.name} vs {b.name}", a, b)  # type: ignore[attr-defined]
            elif ta is Constant:
                da, db = a.data, b.data  # type: ignore[attr-defined]
                if da.dtype != db.dtype:
                    raise self.fail(self.sub(path, ".data"), f"dtypes {da.dtype} vs {db.dtype}", a, b)
                if da.shape != db.shape:
                    raise self.fail(self.sub(path, ".data"), f"shapes {da.shape} vs {db.shape}", a, b)
                if da is not db and da.tobytes() != db.tobytes():
                    raise self.fail(self.sub(path, ".data"), "values differ", a, b)
            elif ta is Let:
                self.bind_var(a.var, b.var, self.sub(path, ".var"))  # type: ignore[attr-defined]
                push((_EXIT, ((a.var,), ()), None))  # type: ignore[attr-defined]
                push((a.body, b.body, self.sub(path, ".body")))  # type: ignore[attr-defined]
                push((a.value, b.value, self.sub(path, ".value")))  # type: ignore[attr-defined]
            elif ta is Tuple:
                fa, fb = a.fields, b.fields  # type: ignore[attr-defined]
                if len(fa) != len(fb):
                    raise self.fail(path, f"tuples of {len(fa)} vs {len(fb)} fields", a, b)
                for i in range(len(fa) - 1, -1, -1):
                    push((fa[i], fb[i], (path, f".fields[{i}]") if track else None))
            elif ta is TupleGetItem:
                if a.index != b.index:  # type: ignore[attr-defined]
                    raise self.fail(self.sub(path, ".index"), f"index {a.index} vs {b.index}", a, b)  # type: ignore[attr-defined]
                push((a.tuple_value, b.tuple_value, self.sub(path, ".tuple_value")))  # type: ignore[attr-defined]
            elif ta is GlobalVar:
                if a.name_hint != b.name_hint:  # type: ignore[attr-defined]
                    raise self.fail(path, f"@{a.name_hint} vs @{b.name_hint}", a, b)  # type: ignore[attr-defined]
            elif ta is Function:
                self.function_header(a, b, path)  # type: ignore[arg-type]
                push((_EXIT, (a.params, a.type_params), None))  # type: ignore[attr-defined]
                push((a.body, b.body, self.sub(path, ".body")))  # type: ignore[attr-defined]
            elif ta is If:
                push((a.false_branch, b.false_branch, self.sub(path, ".false_branch")))  # type: ignore[attr-defined]
                push((a.true_branch, b.true_branch, self.sub(path, ".true_branch")))  # type: ignore[attr-defined]
                push((a.cond, b.cond, self.sub(path, ".cond")))  # type: ignore[attr-defined]
            elif ta is RefCreate:
                push((a.value, b.value, self.sub(path, ".value")))  # type: ignore[attr-defined]
            elif ta is RefRead:
                push((a.ref, b.ref, self.sub(path, ".ref")))  # type: ignore[attr-defined]
            elif ta is RefWrite:
                push((a.value, b.value, self.sub(path, ".value")))  # type: ignore[attr-defined]
                push((a.ref, b.ref, self.sub(path, ".ref")))  # type: ignore[attr-defined]
            elif ta is tuple or ta is list:
                if len(a) != len(b):  # type: ignore[arg-type]
                    raise self.fail(path, f"sequences of length {len(a)} vs {len(b)}", a, b)  # type: ignore[arg-type]
                for i in range(len(a) - 1, -1, -1):  # type: ignore[arg-type]
                    push((a[i], b[i], self.sub(path, f"[{i}]")))  # type: ignore[index]
            elif ta is Attrs:
                self.attrs_equal(a, b, path)
            elif ta in _TYPE_CLASSES or a is None:
                self.type_equal(a, b, path)
            elif ta is IRModule:
                self.module_equal(a, b, path)  # type: ignore[arg-type]
            elif a != b:
                raise self.fail(path, f"{ta.__name__} values differ", a, b)

    def type_list_equal(self, a: Sequence[object], b: Sequence[object], path: object) -> None:
        if len(a) != len(b):
            raise self.fail(path, f"{len(a)} vs {len(b)} types", a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            self.type_equal(x, y, self.sub(path, f"[{i}]"))

    def function_header(self, a: Function, b: Function, path: object) -> None:
        """Bind the type parameters and parameters of two functions, compare ret_type and attrs."""
        if len(a.type_params) != len(b.type_params):
            raise self.fail(self.sub(path, ".type_params"), "different numbers of type parameters", a, b)
        for i, (x, y) in enumerate(zip(a.type_params, b.type_params)):
            self.bind_type_var(x, y, self.sub(path, f".type_params[{i}]"))
        if len(a.params) != len(b.params):
            raise self.fail(self.sub(path, ".params"), f"{len(a.params)} vs {len(b.params)} parameters", a, b)
        for i, (x, y) in enumerate(zip(a.params, b.params)):
            self.bind_var(x, y, self.sub(path, f".params[{i}]"))
        self.type_equal(a.ret_type, b.ret_type, self.sub(path, ".ret_type"))
        if a.attrs is not b.attrs:
            self.attrs_equal(a.attrs, b.attrs, self.sub(path, ".attrs"))

    def module_equal(self, a: IRModule, b: IRModule, path: object) -> None:
        names_a = [gv.name_hint for gv in a.get_global_vars()]
        names_b = {gv.name_hint for gv in b.get_global_vars()}
        missing = [n for n in names_a if n not in names_b]
        extra = sorted(names_b.difference(names_a))
        if missing or extra:
            what = "; ".join(
                part for part in (
                    f"only the left has {', '.join('@' + n for n in missing)}" if missing else "",
                    f"only the right has {', '.join('@' + n for n in extra)}" if extra else "",
                ) if part
            )
            raise self.fail(path, f"global functions differ: {what}", a, b)
        if a.attrs != b.attrs:
            self.attrs_equal(a.attrs, b.attrs, self.sub(path, ".attrs"))
        for name in names_a:
            # Each function binds its own variables: compare them independently.
            self.reset()
            self.run(a[name], b[name], self.sub(path, f".{name}"))
        self.reset()


_SHAREABLE = frozenset({Call, Let, Tuple, Function, If})
"""The kinds whose pairs are remembered in ``seen``: comparing them again would repeat work."""

_TYPE_CLASSES = frozenset({TensorType, TupleType, FuncType, TypeVar, GlobalTypeVar, IncompleteType, RefType})


def _compare(lhs: object, rhs: object, map_free_vars: bool, track: bool) -> _Mismatch | None:
    comparer = _Comparer(map_free_vars, track)
    try:
        comparer.run(lhs, rhs, None)
    except _Mismatch as mismatch:
        return mismatch
    return None


def structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` are the same program up to renaming of bound variables.

    Works on expressions, types, attributes, modules and lists of them.  With
    ``map_free_vars``, free variables are also compared up to a consistent renaming.
    """
    return _compare(lhs, rhs, map_free_vars, False) is None


def assert_structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> None:
    """Raise AssertionError naming the path to the first difference and showing both sides."""
    mismatch = _compare(lhs, rhs, map_free_vars, True)
    if mismatch is None:
        return
    where = _path_text(mismatch.path)
    raise AssertionError(
        f"structural mismatch at {where}: {mismatch.reason}\n"
        f"  lhs: {_short(mismatch.lhs)}\n"
        f"  rhs: {_short(mismatch.rhs)}"
    )


_SHORT_CHARS = 240


def _short(node: object) -> str:
    """A one-line, truncated text form of ``node`` for failure messages.

    A variable shows its annotation and a constant its values: those are
    what differ when the path ends there.
    """
    if isinstance(node, Var):
        text = f"%{node.name_hint}"
        if node.type_annotation is not None:
            text += f": {type_text(node.type_annotation)}"
    elif isinstance(node, Constant):
        data = node.data
        text = f"Constant({data.dtype}{list(data.shape)}: {_array_text(data)})"
    elif isinstance(node, IRModule):
        text = "IRModule(" + ", ".join("@" + gv.name_hint for gv in node.get_global_vars()) + ")"
    else:
        return short_text(node, max_chars=_SHORT_CHARS)
    return clip(text, _SHORT_CHARS)


def _array_text(data: _AnyT) -> str:
    import numpy as np

    return np.array2string(data, threshold=8, edgeitems=2, separator=", ").replace("\n", "")


# --------------------------------------------------------------------------- hashing

_MASK = (1 << 61) - 1

# Tags keep node kinds apart in the hash.
_T_VAR_FREE, _T_VAR_MAPPED, _T_PARAM, _T_LET_REC = 11, 12, 13, 14
_T_CALL, _T_TUPLE, _T_TGI, _T_FUNC, _T_LET, _T_IF = 21, 22, 23, 24, 25, 26
_T_REFC, _T_REFR, _T_REFW, _T_CONST, _T_OP, _T_GV = 27, 28, 29, 30, 31, 32
_T_TUPLE_TY, _T_FUNC_TY, _T_TVAR, _T_INC, _T_REF_TY, _T_NONE, _T_LIST, _T_MOD = (
    41, 42, 43, 44, 45, 46, 47, 48)


class _Hasher:
    """One hash computation: a memo by node id, and tokens for variables by their binders."""

    __slots__ = ("map_free_vars", "memo", "var_tokens", "tv_tokens", "free_count")

    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.memo: dict[int, int] = {}
        self.var_tokens: dict[Var, int] = {}
        self.tv_tokens: dict[TypeVar, int] = {}
        self.free_count = 0

    # --- variables -----------------------------------------------------------
    def var(self, v: Var) -> int:
        token = self.var_tokens.get(v)
        if token is not None:
            return token
        if self.map_free_vars:
            token = hash((_T_VAR_MAPPED, self.free_count, self.type_hash(v.type_annotation)))
            self.free_count += 1
        else:
            token = hash((_T_VAR_FREE, id(v)))
        self.var_tokens[v] = token
        return token

    def type_var(self, tv: TypeVar) -> int:
        token = self.tv_tokens.get(tv)
        if token is not None:
            return token
        if type(tv) is GlobalTypeVar:
            token = hash((_T_TVAR, "global", tv.name_hint, int(tv.kind)))
        elif self.map_free_vars:
            token = hash((_T_TVAR, "free", self.free_count, int(tv.kind)))
            self.free_count += 1
        else:
            token = hash((_T_TVAR, id(tv)))
        self.tv_tokens[tv] = token
        return token

    def bind_type_params(self, params: Sequence[TypeVar], signature: int) -> None:
        n = len(params)
        for i, tv in enumerate(params):
            self.tv_tokens[tv] = hash((_T_TVAR, "bound", i, n, int(tv.kind), signature))

    def unbind(self, variables: Sequence[Var], type_vars: Sequence[TypeVar]) -> None:
        """Leave the scope of some binders: outside it, their names mean nothing."""
        for v in variables:
            other = self.var_map.pop(v, None)
            if other is not None:
                self.rvar_map.pop(other, None)
        for tv in type_vars:
            other_tv = self.tv_map.pop(tv, None)
            if other_tv is not None:
                self.rtv_map.pop(other_tv, None)

    # --- types ---------------------------------------------------------------
    def type_hash(self, ty: object) -> int:
        if ty is None:
            return _T_NONE
        if type(ty) is TensorType:
            return ty._hash  # type: ignore[attr-defined]
        # Post-order on an explicit stack: (type, expanded?)
        out: list[int] = []
        stack: list[tuple[object, bool]] = [(ty, False)]
        while stack:
            t, expanded = stack.pop()
            tt = type(t)
            if tt is TensorType:
                out.append(t._hash)  # type: ignore[attr-defined]
            elif t is None:
                out.append(_T_NONE)
            elif tt is TupleType:
                n = len(t.fields)  # type: ignore[attr-defined]
                if expanded:
                    h = hash((_T_TUPLE_TY, *out[len(out) - n:]))
                    del out[len(out) - n:]
                    out.append(h)
                else:
                    stack.append((t, True))
                    stack.extend((f, False) for f in reversed(t.fields))  # type: ignore[attr-defined]
            elif tt is FuncType:
                n = len(t.arg_types) + len(t.type_constraints) + 1  # type: ignore[attr-defined]
                if expanded:
                    h = hash((_T_FUNC_TY, len(t.type_params), *out[len(out) - n:]))  # type: ignore[attr-defined]
                    del out[len(out) - n:]
                    out.append(h)
                else:
                    self.bind_type_params(t.type_params, len(t.arg_types))  # type: ignore[attr-defined]
                    stack.append((t, True))
                    kids = (*t.arg_types, t.ret_type, *t.type_constraints)  # type: ignore[attr-defined]
                    stack.extend((k, False) for k in reversed(kids))
            elif tt is TypeVar or tt is GlobalTypeVar:
                out.append(self.type_var(t))  # type: ignore[arg-type]
            elif tt is IncompleteType:
                out.append(hash((_T_INC, int(t.kind))))  # type: ignore[attr-defined]
            elif tt is RefType:
                if expanded:
                    out[-1] = hash((_T_REF_TY, out[-1]))
                else:
                    stack.append((t, True))
                    stack.append((t.value, False))  # type: ignore[attr-defined]
            else:
                out.append(hash(t))
        return out[0]

    def attrs_hash(self, attrs: object) -> int:
        return _T_NONE if attrs is None else hash(attrs)

    # --- expressions -----------------------------------------------------------
    def expr_hash(self, root: object) -> int:
        memo = self.memo
        var_tokens = self.var_tokens
        var_token = self.var
        type_hash = self.type_hash
        # Entries are (node, phase): phase 0 expands a node, later phases combine.
        # Leaves (constants, operators, globals) are hashed as soon as they are met,
        # and variables when their parent combines, so neither goes on the stack.
        stack: list[tuple[object, int]] = [(root, 0)]
        push = stack.append
        pop = stack.pop
        pre: dict[int, int] = {}  # node-local parts hashed on the way down

        def leaf_or_push(k: object) -> None:
            tk = type(k)
            if tk is Var or id(k) in memo:
                return
            if tk is Constant:
                data = k.data  # type: ignore[attr-defined]
                memo[id(k)] = hash((_T_CONST, data.dtype.str, data.shape, data.tobytes()))
            elif tk is Op:
                memo[id(k)] = hash((_T_OP, k.name))  # type: ignore[attr-defined]
            elif tk is GlobalVar:
                memo[id(k)] = hash((_T_GV, k.name_hint))  # type: ignore[attr-defined]
            else:
                push((k, 0))

        leaf_or_push(root)
        if type(root) is Var:
            return var_token(root)  # type: ignore[arg-type]
        while stack:
            node, phase = pop()
            t = type(node)
            nid = id(node)
            if phase == 0:
                if nid in memo:
                    continue
                if t is Call:
                    push((node, 1))
                    args = node.args  # type: ignore[attr-defined]
                    for i in range(len(args) - 1, -1, -1):
                        k = args[i]
                        tk = type(k)
                        if tk is Var or id(k) in memo:
                            continue
                        if tk is Constant:
                            data = k.data
                            memo[id(k)] = hash((_T_CONST, data.dtype.str, data.shape, data.tobytes()))
                        else:
                            leaf_or_push(k)
                    leaf_or_push(node.op)  # type: ignore[attr-defined]
                elif t is Let:
                    var = node.var  # type: ignore[attr-defined]
                    ty = var.type_annotation
                    ann = _T_NONE if ty is None else type_hash(ty)
                    pre[nid] = ann
                    # What a use inside the variable's own value (a recursive closure) hashes to.
                    var_tokens[var] = hash((_T_LET_REC, ann))
                    push((node, 1))
                    leaf_or_push(node.value)  # type: ignore[attr-defined]
                elif t is Function:
                    pre[nid] = self.function_header(node)  # type: ignore[arg-type]
                    push((node, 1))
                    leaf_or_push(node.body)  # type: ignore[attr-defined]
                else:
                    kids = _HASH_CHILDREN.get(t)
                    if kids is None:
                        memo[nid] = self.other_hash(node)
                        continue
                    push((node, 1))
                    for k in reversed(kids(node)):
                        leaf_or_push(k)
                continue
            if t is Call:
                op = node.op  # type: ignore[attr-defined]
                attrs = node.attrs  # type: ignore[attr-defined]
                type_args = node.type_args  # type: ignore[attr-defined]
                memo[nid] = hash((
                    _T_CALL,
                    var_token(op) if type(op) is Var else memo[id(op)],
                    _T_NONE if attrs is None else hash(attrs),
                    tuple(type_hash(x) for x in type_args) if type_args else 0,
                    *[var_tokens.get(a) or var_token(a) if type(a) is Var else memo[id(a)]
                      for a in node.args],  # type: ignore[attr-defined]
                ))
            elif t is Let:
                value = node.value  # type: ignore[attr-defined]
                vh = var_token(value) if type(value) is Var else memo[id(value)]
                if phase == 1:
                    var_tokens[node.var] = hash((_T_LET, pre[nid], vh))  # type: ignore[attr-defined]
                    push((node, 2))
                    leaf_or_push(node.body)  # type: ignore[attr-defined]
                else:
                    body = node.body  # type: ignore[attr-defined]
                    bh = var_token(body) if type(body) is Var else memo[id(body)]
                    memo[nid] = hash((_T_LET, pre.pop(nid), vh, bh))
                    var_tokens.pop(node.var, None)  # type: ignore[attr-defined]
            elif t is Function:
                body = node.body  # type: ignore[attr-defined]
                bh = var_token(body) if type(body) is Var else memo[id(body)]
                memo[nid] = hash((_T_FUNC, pre.pop(nid), bh))
                # Scopes end: outside, the same variables would be free.
                for p in node.params:  # type: ignore[attr-defined]
                    var_tokens.pop(p, None)
                for tv in node.type_params:  # type: ignore[attr-defined]
                    self.tv_tokens.pop(tv, None)
            elif t is TupleGetItem:
                tv = node.tuple_value  # type: ignore[attr-defined]
                th = var_token(tv) if type(tv) is Var else memo[id(tv)]
                memo[nid] = hash((_T_TGI, node.index, th))  # type: ignore[attr-defined]
            else:
                memo[nid] = hash((_TAGS[t], *[var_token(k) if type(k) is Var else memo[id(k)]
                                              for k in _HASH_CHILDREN[t](node)]))
        return memo[id(root)]

    def function_header(self, func: Function) -> int:
        """Hash a function's signature and give its parameters their tokens."""
        # Type parameters first: the annotations below may use them.
        self.bind_type_params(func.type_params, len(func.params))
        ann = tuple(self.type_hash(p.type_annotation) for p in func.params)
        ret = self.type_hash(func.ret_type)
        signature = hash((len(func.type_params), ann, ret))
        n = len(func.params)
        for i, p in enumerate(func.params):
            self.var_tokens[p] = hash((_T_PARAM, i, n, signature))
        return hash((signature, self.attrs_hash(func.attrs)))

    def other_hash(self, node: object) -> int:
        """Everything that is not an expression: types, attrs, modules, sequences, plain values."""
        t = type(node)
        if t in _TYPE_CLASSES or node is None:
            return self.type_hash(node)
        if isinstance(node, Attrs):
            return hash(node)
        if t is IRModule:
            # Each function binds its own variables, so each is hashed on its own.
            parts = [
                (gv.name_hint, _Hasher(self.map_free_vars).expr_hash(node[gv]))  # type: ignore[index]
                for gv in sorted(node.get_global_vars(), key=lambda g: g.name_hint)  # type: ignore[attr-defined]
            ]
            return hash((_T_MOD, hash(node.attrs), tuple(parts)))  # type: ignore[attr-defined]
        if t is tuple or t is list:
            return hash((_T_LIST, *[self.top(x) for x in node]))  # type: ignore[attr-defined]
        return hash(node)

    def top(self, node: object) -> int:
        if type(node) is Var:
            return self.var(node)  # type: ignore[arg-type]
        return self.expr_hash(node)


_HASH_CHILDREN = {
    Tuple: lambda e: e.fields,
    TupleGetItem: lambda e: (e.tuple_value,),
    If: lambda e: (e.cond, e.true_branch, e.false_branch),
    RefCreate: lambda e: (e.value,),
    RefRead: lambda e: (e.ref,),
    RefWrite: lambda e: (e.ref, e.value),
}
_TAGS = {Tuple: _T_TUPLE, TupleGetItem: _T_TGI, If: _T_IF, RefCreate: _T_REFC, RefRead: _T_REFR,
         RefWrite: _T_REFW}


def structural_hash(node: object, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`: equal programs hash alike.

    Invariant under renaming of bound variables; free variables hash by
    identity, or with ``map_free_vars`` by the order in which they are met.
    """
    return _Hasher(map_free_vars).top(node) & _MASK
