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

What a node is compared by is what its kind declares (:mod:`relaypass.ir.fields`),
walked the same way for every kind: the variables it binds are matched
first (type parameters before the variables whose annotations may use them)
and stay mapped for the whole node; then its data fields (``==``, tuples item
by item), attributes, types and tensors, in declaration order; then its
children, on the stack.  Fields of kind INFO and SPAN (a variable's name
hint, spans) are not compared.  Only variables are handled by kind, since
what they mean is their binding.  A mismatch names the path of fields that
leads to it (``body.args[1].data``).  The code comparing (and hashing) one
kind is generated from its declaration once, by the rules below, one per kind
of field: it is the code one would write by hand for that kind, so the
generic walk costs what a hand-written one did.

Everything runs on explicit stacks: a chain of 100,000 calls or of 100,000
nested lets needs no recursion.

The hash is consistent with equality (equal implies equal hash) and is
computed bottom-up with a per-call memo by node id, so shared subexpressions
are hashed once.  For that to agree with tree equality, a bound variable
hashes by what its binder looks like rather than by when it was reached: by
its position among the node's binders and the node's header (its data,
attributes, types and binder annotations), folded with the hash of each
child of the node finished before the next one starts.  So a function's
parameter hashes by its position and the function's signature, and a let
variable by the value it is bound to.  Free variables hash by identity, or
with ``map_free_vars`` by the order in which they are first met.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any as _AnyT

from . import hooks
from .attrs import Attrs
from .expr import Constant, Expr, Var
from .fields import ATTRS, TENSOR, Field, Layout, PerKind, compile_source, tuple_source
from .module import IRModule
from .summary import clip, short_text, type_text
from .types import GlobalTypeVar, TensorType, Type, TypeVar

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]


def _layout_in(cls: type, base: type) -> Layout | None:
    """The field layout of ``cls`` if it is a declared kind of ``base``, else None."""
    return cls._layout_ if issubclass(cls, base) else None  # type: ignore[attr-defined]




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
        push = stack.append
        while stack:
            a, b, path = stack.pop()
            ta = type(a)
            if ta is not type(b):
                if a is _EXIT:
                    self.unbind(*b)  # type: ignore[misc]
                    continue
                if a is None or b is None:
                    raise self.fail(path, "a type on one side only", a, b)
                raise self.fail(path, f"{ta.__name__} vs {type(b).__name__}", a, b)
            if a is None or ta is TensorType and a == b:
                continue
            if issubclass(ta, TypeVar):
                self.type_var_equal(a, b, path)  # type: ignore[arg-type]
                continue
            equal = _TYPE_EQUAL[self.track][ta]
            if equal is None:
                if a != b:
                    raise self.fail(path, f"{ta.__name__} values differ", a, b)
                continue
            equal(self, a, b, path, push, self.seen)

    def type_list_equal(self, a: Sequence[object], b: Sequence[object], path: object) -> None:
        if len(a) != len(b):
            raise self.fail(path, f"{len(a)} vs {len(b)} types", a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            self.type_equal(x, y, self.sub(path, f"[{i}]"))

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

    # --- what the generated comparisons call ----------------------------------
    def bind_all(self, a: object, b: object, name: str, bind: _AnyT, path: object) -> None:
        """Map a sequence of binders (parameters, type parameters) pairwise."""
        xs, ys = getattr(a, name), getattr(b, name)
        if len(xs) != len(ys):
            self.length_mismatch(a, b, name, path)
        sub = self.sub
        for i, (x, y) in enumerate(zip(xs, ys)):
            bind(x, y, sub(path, f".{name}[{i}]"))

    def length_mismatch(self, a: object, b: object, name: str, path: object) -> None:
        x, y = getattr(a, name), getattr(b, name)
        raise self.fail(self.sub(path, "." + name), f"{len(x)} vs {len(y)} {name}", a, b)

    def data_mismatch(self, a: object, b: object, name: str, path: object) -> None:
        """Raise for a data field that differs; a tuple (a shape) names its first differing item."""
        x, y = getattr(a, name), getattr(b, name)
        where = self.sub(path, "." + name)
        if type(x) is tuple and type(y) is tuple and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y)):
                if p != q:
                    raise self.fail(self.sub(where, f"[{i}]"), f"{name}[{i}]: {p!r} vs {q!r}", a, b)
        raise self.fail(where, f"{name}: {x!r} vs {y!r}", a, b)

    def tensor_equal(self, a: object, b: object, x: _AnyT, y: _AnyT, where: object) -> None:
        if x is y:
            return
        x, y = x.__array__(), y.__array__()  # a constant's NDArray: its numpy array
        if x.dtype != y.dtype:
            raise self.fail(where, f"dtypes {x.dtype} vs {y.dtype}", a, b)
        if x.shape != y.shape:
            raise self.fail(where, f"shapes {x.shape} vs {y.shape}", a, b)
        if x.tobytes() != y.tobytes():
            raise self.fail(where, "values differ", a, b)

    # --- the walk ----------------------------------------------------------
    def run(self, lhs: object, rhs: object, path: object) -> None:
        """Compare two expressions (or types, attrs, sequences); raise _Mismatch on the first difference."""
        var_map = self.var_map
        seen = self.seen
        compiled = _EXPR_EQUAL[self.track]
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
            if a is b and (ta in _CLOSED or not self.renamed and not self.map_free_vars):
                continue
            equal = compiled[ta]
            if equal is not None:
                equal(self, a, b, path, push, seen)
            elif ta is tuple or ta is list:
                if len(a) != len(b):  # type: ignore[arg-type]
                    raise self.fail(path, f"sequences of length {len(a)} vs {len(b)}", a, b)  # type: ignore[arg-type]
                for i in range(len(a) - 1, -1, -1):  # type: ignore[arg-type]
                    push((a[i], b[i], self.sub(path, f"[{i}]")))  # type: ignore[index]
            elif ta is Attrs:
                self.attrs_equal(a, b, path)
            elif a is None or issubclass(ta, Type):
                self.type_equal(a, b, path)
            elif ta is IRModule:
                self.module_equal(a, b, path)  # type: ignore[arg-type]
            elif a != b:
                raise self.fail(path, f"{ta.__name__} values differ", a, b)

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


def _equal_source(layout: Layout, track: bool) -> str:
    """The comparison of two nodes of ``layout``'s kind, as Python source, by the rules per field kind.

    ``equal(self, a, b, path, push, seen)`` raises on a difference in the
    node's own fields and pushes the pairs of its children, right to left, so
    that they are compared left to right; with ``track``, each with its path.
    """
    lines = ["def equal(self, a, b, path, push, seen):"]
    emit = lines.append
    if layout.binds or len(layout.subterm_fields) > 1 or any(f.kind.seq for f in layout.subterm_fields):
        # A pair of shared subexpressions is compared once, however many uses lead to it
        # (not worth it for a node with one child: its child's pair is remembered).
        emit("    pair = (id(a), id(b))")
        emit("    if pair in seen:")
        emit("        return")
        emit("    seen.add(pair)")
    # Binders first, type parameters before the variables whose annotations use them.
    for f in (*layout.type_var_fields, *layout.var_fields):
        bind = "self.bind_var" if f.kind.lang == "expr" else "self.bind_type_var"
        if f.kind.seq:
            emit(f"    self.bind_all(a, b, {f.name!r}, {bind}, path)")
        else:
            emit(f"    {bind}(a.{f.name}, b.{f.name}, self.sub(path, {'.' + f.name!r}))")
    for f in layout.check_fields:
        emit(_EQUAL_RULE[_rule(f, layout)].format(n=f.name, at=f"self.sub(path, {'.' + f.name!r})"))
    if layout.binds:
        bound = tuple_source(layout.var_fields, "a")
        bound_types = tuple_source(layout.type_var_fields, "a")
        emit(f"    push((_EXIT, ({bound}, {bound_types}), None))")
    for f in reversed(layout.subterm_fields):
        # With its path when tracking (for the message), without otherwise.
        if f.kind.seq:
            emit(f"    x, y = a.{f.name}, b.{f.name}")
            emit("    for i in range(len(x) - 1, -1, -1):")
            emit(f"        push((x[i], y[i], (path, f'.{f.name}[{{i}}]')))" if track else
                 "        push((x[i], y[i], None))")
        else:
            emit(f"    push((a.{f.name}, b.{f.name}, (path, '.{f.name}')))" if track else
                 f"    push((a.{f.name}, b.{f.name}, None))")
    return "\n".join(lines) + "\n"


def _rule(f: Field, layout: Layout) -> str:
    """Which rule compares and hashes field ``f`` (one of the node's own fields, not a child)."""
    kind = f.kind
    if kind is ATTRS or kind is TENSOR:
        return kind.name
    if kind.seq and f in layout.child_fields:
        return "LENGTH"
    if kind.lang == "type":
        return "TYPES" if kind.seq else "TYPE"
    return "DATA"


_EQUAL_RULE = {
    "LENGTH": "    if len(a.{n}) != len(b.{n}): self.length_mismatch(a, b, '{n}', path)",
    "DATA": "    if a.{n} != b.{n}: self.data_mismatch(a, b, '{n}', path)",
    "ATTRS": "    if a.{n} is not b.{n}: self.attrs_equal(a.{n}, b.{n}, {at})",
    "TENSOR": "    self.tensor_equal(a, b, a.{n}, b.{n}, {at})",
    "TYPE": "    self.type_equal(a.{n}, b.{n}, {at})",
    "TYPES": "    if a.{n} or b.{n}: self.type_list_equal(a.{n}, b.{n}, {at})",
}
"""How each kind of own field is compared, as a line of the generated comparison."""

_CLOSED: set[type] = set()
"""Expression kinds that hold no variables (no children, no types): an identical node is always equal."""


def _equal_function(layout: Layout | None, track: bool) -> Callable[..., None] | None:
    """The generated comparison of one kind (None for what is not a declared kind)."""
    if layout is None:
        return None
    namespace = {"layout": layout, "_EXIT": _EXIT}
    mode = "tracked " if track else ""
    name = f"<{mode}structural equality of {layout.cls.__module__}.{layout.cls.__qualname__}>"
    return compile_source(_equal_source(layout, track), namespace, name)["equal"]


def _expr_equal(cls: type, track: bool) -> Callable[..., None] | None:
    layout = _layout_in(cls, Expr)
    if layout is not None and layout.leaf and not layout.type_fields:
        _CLOSED.add(cls)
    return _equal_function(layout, track)


# The generated comparisons by kind, without paths and with them (``track``).
_EXPR_EQUAL = (PerKind(lambda cls: _expr_equal(cls, False)), PerKind(lambda cls: _expr_equal(cls, True)))
_TYPE_EQUAL = (
    PerKind(lambda cls: _equal_function(_layout_in(cls, Type), False)),
    PerKind(lambda cls: _equal_function(_layout_in(cls, Type), True)),
)


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
        data = node.array
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

# Tags keep kinds of things apart in the hash; node kinds use their layout's tag.
_T_VAR_FREE, _T_VAR_MAPPED, _T_BOUND, _T_TVAR, _T_NONE, _T_LIST, _T_MOD = 11, 12, 13, 43, 46, 47, 48


class _Hasher:
    """One hash computation: a memo by node id, and tokens for variables by their binders."""

    __slots__ = ("map_free_vars", "memo", "var_tokens", "tv_tokens", "free_count", "headers")

    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.memo: dict[int, int] = {}
        self.var_tokens: dict[Var, int] = {}
        self.tv_tokens: dict[TypeVar, int] = {}
        self.free_count = 0
        self.headers: dict[int, int] = {}  # binding nodes being hashed: their header

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

    def bind_type_params(self, params: Sequence[TypeVar]) -> None:
        """Type parameters hash by position and kind (and their binder's fields, through its hash)."""
        n = len(params)
        for i, tv in enumerate(params):
            self.tv_tokens[tv] = hash((_T_TVAR, "bound", i, n, int(tv.kind)))

    def unbind(self, node: object, layout: Layout) -> None:
        """Leave the scope of a node's binders: outside it, their names mean nothing."""
        for v in layout.bound_vars(node):
            self.var_tokens.pop(v, None)
        for tv in layout.bound_type_vars(node):
            self.tv_tokens.pop(tv, None)

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
                continue
            if t is None:
                out.append(_T_NONE)
                continue
            if issubclass(tt, TypeVar):
                out.append(self.type_var(t))  # type: ignore[arg-type]
                continue
            layout = _layout_in(tt, Type)
            if layout is None:
                out.append(hash(t))
                continue
            if expanded:
                n = len(layout.subterms(t))
                h = hash((layout.tag, layout.key(t), *out[len(out) - n:]))
                del out[len(out) - n:]
                out.append(h)
                self.unbind(t, layout)
                continue
            self.bind_type_params(layout.bound_type_vars(t))
            kids = layout.subterms(t)
            if not kids:
                out.append(hash((layout.tag, layout.key(t))))
                continue
            stack.append((t, True))
            stack.extend((k, False) for k in reversed(kids))
        return out[0]

    # --- expressions -----------------------------------------------------------
    def expr_hash(self, root: object) -> int:
        memo = self.memo
        token = self.var
        expanders = _HASH_EXPAND
        if type(root) is Var:
            return token(root)  # type: ignore[arg-type]
        # Entries are (node, then, phase): a node to expand (then is None), or
        # the generated continuation of a node whose children were pushed above
        # it.  Variables are hashed when their parent combines, never pushed.
        stack: list[tuple[object, _AnyT, int]] = [(root, None, 0)]
        push = stack.append
        pop = stack.pop
        while stack:
            node, then, phase = pop()
            if then is not None:
                then(self, node, phase, push, memo, token)
                continue
            if id(node) not in memo:
                expanders[type(node)](self, node, push, memo)
        return memo[id(root)]

    def other_hash(self, node: object) -> int:
        """Everything that is not an expression: types, attrs, modules, sequences, plain values."""
        t = type(node)
        if node is None or issubclass(t, Type):
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
            return hash((_T_LIST, *[self.expr_hash(x) for x in node]))  # type: ignore[attr-defined]
        return hash(node)


_HASH_RULE = {
    "LENGTH": "len(n.{n})",
    "DATA": "n.{n}",
    "ATTRS": "n.{n}",
    "TENSOR": "(n.{n}.__array__().dtype.str, n.{n}.shape, n.{n}.__array__().tobytes())",
    "TYPE": "th(n.{n})",
    "TYPES": "(tuple([th(t) for t in n.{n}]) if n.{n} else 0)",
}
"""How each kind of own field enters the hash, as an expression of the generated code."""

_PUSH_AFTER_CONTINUATION = """\
{ind}if type(k) is not Var and id(k) not in memo:
{ind}    if not waiting:
{ind}        push((n, combine, 0))
{ind}        waiting = True
{ind}    push((k, None, 0))"""


def _of(expr: str) -> str:
    """The generated hash of a finished child ``expr``: a variable's token, or the memo.

    ``tokens`` (the known tokens) is read first: ``token`` hands out new ones.
    """
    return f"((tokens.get({expr}) or token({expr})) if type({expr}) is Var else memo[id({expr})])"


def _hash_source(layout: Layout) -> str:
    """The hashing of one expression kind, as Python source, by the rules per field kind.

    Each kind gets ``expand(self, n, push, memo)``.  A kind without children
    hashes the node there.  Any other pushes a continuation and then its
    unhashed children (right to left), so that the continuation runs once
    they are done: ``combine``, which hashes the node, or for a node that
    binds variables ``step``; when no child is left to hash (operands already
    hashed, as in A-normal form), it runs the continuation at once.  A binding
    node's ``expand`` gives its variables their tokens and goes on with its
    first child; ``step(..., phase, ...)`` runs when child ``phase - 1`` is
    done: it folds that child's hash into each binder's token and goes on with
    the next child, or after the last one hashes the node and ends the
    binders' scope.
    """
    own = ", ".join(["TAG", *[_HASH_RULE[_rule(f, layout)].format(n=f.name)
                             for f in layout.check_fields]])
    if layout.leaf and not layout.binds:
        return f"def expand(self, n, push, memo):\n    th = self.type_hash\n    memo[id(n)] = hash(({own},))\n"
    lines = ["def expand(self, n, push, memo):"]
    emit = lines.append
    if not layout.binds:
        # The continuation goes below the first unhashed child; with none, it runs now.
        emit("    waiting = False")
        for f in reversed(layout.subterm_fields):
            if f.kind.seq:
                emit(f"    x = n.{f.name}")
                emit("    for i in range(len(x) - 1, -1, -1):")
                emit("        k = x[i]")
                emit(_PUSH_AFTER_CONTINUATION.format(ind="        "))
            else:
                emit(f"    k = n.{f.name}")
                emit(_PUSH_AFTER_CONTINUATION.format(ind="    "))
        kids = [f"*[{_of('k')} for k in n.{f.name}]" if f.kind.seq else _of(f"n.{f.name}")
                for f in layout.subterm_fields]
        combine = [
            "th = self.type_hash",
            "tokens = self.var_tokens",
            f"memo[id(n)] = hash(({own}, {', '.join(kids)}))",
        ]
        emit("    if waiting:")
        emit("        return")
        emit("    token = self.var")
        lines.extend("    " + line for line in combine)
        emit("")
        emit("def combine(self, n, phase, push, memo, token):")
        lines.extend("    " + line for line in combine)
        return "\n".join(lines) + "\n"

    # The header: own fields and binder annotations; then each binder's token by position.
    emit("    th = self.type_hash")
    if layout.type_var_fields:
        emit(f"    self.bind_type_params({tuple_source(layout.type_var_fields)})")
    annotations = ", ".join(
        f"*[_T_NONE if v.type_annotation is None else th(v.type_annotation) for v in n.{f.name}]"
        if f.kind.seq else
        f"_T_NONE if n.{f.name}.type_annotation is None else th(n.{f.name}.type_annotation)"
        for f in layout.var_fields
    )
    emit(f"    header = hash(({own}, ({annotations},)))")
    emit("    tokens = self.var_tokens")
    position = "0"
    for f in layout.var_fields:
        if f.kind.seq:
            emit(f"    for i, v in enumerate(n.{f.name}, {position}):")
            emit("        tokens[v] = hash((_T_BOUND, header, i))")
            position = f"{position} + len(n.{f.name})"
        else:
            emit(f"    tokens[n.{f.name}] = hash((_T_BOUND, header, {position}))")
            position = f"{position} + 1"
    emit("    self.headers[id(n)] = header")
    kids = tuple_source(layout.subterm_fields)
    dynamic = any(f.kind.seq for f in layout.subterm_fields)
    if dynamic:
        emit(f"    kids = {kids}")
        emit("    k = kids[0] if kids else None")
    elif layout.subterm_fields:
        emit(f"    k = n.{layout.subterm_fields[0].name}")
    else:
        emit("    k = None")
    # Go on with the first child; if there is none to hash, straight to the step.
    emit("    if k is not None and type(k) is not Var and id(k) not in memo:")
    emit("        push((n, step, 1))")
    emit("        push((k, None, 0))")
    emit("    else:")
    emit("        step(self, n, 1, push, memo, self.var)")
    emit("")
    emit("def step(self, n, phase, push, memo, token):")
    emit("    tokens = self.var_tokens")

    def fold(done: str, ind: str) -> None:
        """Each binder's token takes in the hash of a finished child."""
        for f in layout.var_fields:
            if f.kind.seq:
                emit(f"{ind}for v in n.{f.name}:")
                emit(f"{ind}    tokens[v] = hash((tokens[v], {done}))")
            else:
                emit(f"{ind}tokens[n.{f.name}] = hash((tokens[n.{f.name}], {done}))")

    if dynamic:
        # As many phases as children, known only at run time.
        emit(f"    kids = {kids}")
        emit("    while phase < len(kids):")
        emit("        k = kids[phase - 1]")
        emit(f"        done = {_of('k')}")
        fold("done", "        ")
        emit("        k = kids[phase]")
        emit("        phase += 1")
        emit("        if type(k) is not Var and id(k) not in memo:")
        emit("            push((n, step, phase))")
        emit("            push((k, None, 0))")
        emit("            return")
        emit(f"    memo[id(n)] = hash((self.headers.pop(id(n)), *[{_of('k')} for k in kids]))")
    else:
        # One phase per child, unrolled; a child already hashed falls through to the next.
        names = [f.name for f in layout.subterm_fields]
        for phase in range(1, len(names)):
            emit(f"    if phase <= {phase}:")
            emit(f"        done = {_of('n.' + names[phase - 1])}")
            fold("done", "        ")
            emit(f"        k = n.{names[phase]}")
            emit("        if type(k) is not Var and id(k) not in memo:")
            emit(f"            push((n, step, {phase + 1}))")
            emit("            push((k, None, 0))")
            emit("            return")
        parts = "".join(f", {_of('n.' + name)}" for name in names)
        emit(f"    memo[id(n)] = hash((self.headers.pop(id(n)){parts}))")
    emit("    # The binders' scope ends: outside it, the same variables would be free.")
    for f in layout.var_fields:
        if f.kind.seq:
            emit(f"    for v in n.{f.name}:")
            emit("        tokens.pop(v, None)")
        else:
            emit(f"    tokens.pop(n.{f.name}, None)")
    if layout.type_var_fields:
        emit("    tv_tokens = self.tv_tokens")
        emit(f"    for tv in {tuple_source(layout.type_var_fields)}:")
        emit("        tv_tokens.pop(tv, None)")
    return "\n".join(lines) + "\n"


def _hash_expand(cls: type) -> Callable[..., None]:
    """The generated ``expand`` of one kind; for what is not an expression, hash it as a value."""
    layout = _layout_in(cls, Expr)
    if layout is None:
        return _hash_other
    namespace = {"TAG": layout.tag, "Var": Var, "_T_BOUND": _T_BOUND, "_T_NONE": _T_NONE}
    name = f"<structural hash of {layout.cls.__module__}.{layout.cls.__qualname__}>"
    return compile_source(_hash_source(layout), namespace, name)["expand"]


def _hash_other(hasher: _Hasher, node: object, push: _AnyT, memo: dict[int, int]) -> None:
    memo[id(node)] = hasher.other_hash(node)


_HASH_EXPAND = PerKind(_hash_expand)


def structural_hash(node: object, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`: equal programs hash alike.

    Invariant under renaming of bound variables; free variables hash by
    identity, or with ``map_free_vars`` by the order in which they are met.
    """
    return _Hasher(map_free_vars).expr_hash(node) & _MASK


hooks.structural_equal = structural_equal
hooks.structural_hash = structural_hash
