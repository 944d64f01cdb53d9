"""Structural equality and hashing of IR, as TVM's ``structural_equal`` / ``structural_hash``.

Nodes compare by identity (so memo tables are O(1)); this module answers the
other question, "are these two programs the same program?", with TVM's
answer:

* **Graph equality.**  Relay expressions other than constants, tuple
  projections, global variables, operators and the empty tuple are *graph
  nodes*: comparing two programs maps each graph node of one side to one
  graph node of the other, for the whole comparison.  A node used twice
  (``%1 = add(%a, %a); add(%1, %1)``) therefore equals a node used twice, not
  two copies of it (``add(add(%a, %a), add(%a, %a))``), as in TVM; the kinds
  compared afresh are equal wherever their contents are.
* **Variables.**  Binders (function parameters and type parameters, let
  variables) are mapped to each other where they are defined; a use is equal
  to the use of the variable it was mapped to, and mappings last for the rest
  of the comparison (TVM does not scope them).  A free variable is equal only
  to itself, unless ``map_free_vars`` is set: then free variables are mapped
  on first encounter, consistently.  Variable type annotations are compared.
* Constants compare by dtype, shape and bytes; global variables, global
  type variables, constructors and operators by name (a constructor also by
  the type it belongs to); a type definition by its name, type parameters
  (mapped) and constructors with their field types; a match's patterns bind
  their variables as parameters do; modules compare their type definitions
  before their functions, so that constructors' field types are compared with
  the type parameters mapped; attributes field by field (a map keyed by variables
  through the variables' mapping); sequences item by item, whatever the
  sequence type (a tuple equals a list of the same items, as TVM's Arrays);
  ``checked_type`` and spans not at all, nor the ``type_args`` of a call of
  an operator (type inference derives those from the arguments).
* Size variables in tensor shapes are mapped where first met, with or
  without ``map_free_vars`` (nothing binds them, and each parse of a text
  makes new ones), one mapping for the whole comparison; the hash numbers
  them in the order it meets them.  Their dtype is not compared, as a
  dimension's is not (``IntImm`` dims compare by value).

What a node is compared by is what its kind declares
(:mod:`relaypass.ir.fields`), walked the same way for every kind: the
variables it binds are mapped first (type parameters before the variables
whose annotations may use them); then its data fields, attributes, types
and tensors, in declaration order; then its children, on the stack.  Fields
of kind INFO and SPAN (a variable's name hint, spans) are not compared.  A
mismatch names the path of fields that leads to it (``body.args[1].data``).
The code comparing (and hashing) one kind is generated from its declaration
once, by one rule per kind of field.

Comparing a subtree with itself is free as long as every node mapped so far
was mapped to itself: it is recorded, and mapped node by node only if a
later pair of different nodes needs to know (which a comparison of a
program with itself never does).

The hash is TVM's construction and consistent with equality: computed
bottom-up with a memo by node, so a shared node is hashed once and its hash
reused wherever it occurs, and each graph node's hash takes in a counter in
the order nodes are finished -- a DAG and the tree that copies its shared
part get different counters, as they are not equal.  A bound variable hashes
by its definition's position in that order and its annotation; a free one by
identity, or with ``map_free_vars`` by the order in which it is met.

Everything runs on explicit stacks: a chain of 100,000 calls or of 100,000
nested lets needs no recursion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any as _AnyT

from . import hooks
from .adt import (
    Clause,
    Constructor,
    Pattern,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    TypeData,
    pattern_vars,
)
from .attrs import Attrs, is_plain_value
from .container import Array, Map
from .expr import Constant, Expr, Var
from .fields import ATTRS, TENSOR, Field, Layout, PerKind, compile_source, tuple_source
from .module import IRModule
from .ndarray import NDArray
from .op import Op
from .shape_expr import SizeExpr, free_size_vars, substitute
from .summary import clip, short_text, type_text
from .types import GlobalTypeVar, IncompleteType, SizeVar, TensorType, Type, TypeVar

__all__ = [
    "StructuralMismatchError", "assert_structural_equal", "structural_equal", "structural_hash",
]


class StructuralMismatchError(AssertionError, ValueError):
    """``assert_structural_equal`` failed: the message names the path to the first difference.

    An AssertionError, and a ValueError as TVM raises.
    """


def _layout_in(cls: type, base: type) -> Layout | None:
    """The field layout of ``cls`` if it is a declared kind of ``base``, else None."""
    return cls._layout_ if issubclass(cls, base) else None  # type: ignore[attr-defined]


_SEQUENCE_TYPES = frozenset({tuple, list, Array})
"""Sequences compare item by item whichever of these they are (TVM converts all to Arrays)."""

_TYPE_VARIABLES = frozenset({TypeVar, GlobalTypeVar, IncompleteType})

# How a kind takes part in the node mapping.
_AFRESH, _GRAPH, _GRAPH_UNLESS_EMPTY = 0, 1, 2


def _graph_mode(layout: Layout) -> int:
    """Graph node or compared afresh; a kind whose children are all sequences (a tuple) is
    compared afresh when it has none."""
    if not getattr(layout.cls, "_graph_node_", False):
        return _AFRESH
    if layout.child_fields and all(f.kind.seq for f in layout.child_fields):
        return _GRAPH_UNLESS_EMPTY
    return _GRAPH


def _is_graph_node(node: object) -> bool:
    layout = _layout_in(type(node), Expr)
    if layout is None:
        return False
    mode = _graph_mode(layout)
    return mode == _GRAPH or mode == _GRAPH_UNLESS_EMPTY and bool(layout.children(node))


# --------------------------------------------------------------------------- equality


class _Mismatch(Exception):
    """The first difference found: where, what, and the two sides."""

    def __init__(self, path: object, reason: str, lhs: object, rhs: object) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.lhs = lhs
        self.rhs = rhs


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


def _sharing(kind: type, shared: str, other: str) -> str:
    return (f"sharing differs: the {shared} side reuses a {kind.__name__} it has used before, "
            f"the {other} side has a different one here (a shared node equals a shared node, "
            "not copies of it)")


class _Comparer:
    """One comparison: the node mapping, both ways, and what identical subtrees were skipped.

    ``lmap``/``rmap`` map graph nodes, variables and type variables of the
    left side to the right side and back.  While ``pure`` (every mapping so
    far maps a node to itself), a pair of identical nodes is equal without a
    look inside; such nodes wait in ``pending`` and are mapped to themselves
    when the first pair of different nodes is mapped.  ``seen`` holds the
    pairs of nodes compared afresh that were compared already.  With
    ``track`` every stack entry carries its path, so a mismatch can say
    where it is; without it paths are None and cost nothing.
    """

    __slots__ = ("map_free_vars", "track", "lmap", "rmap", "pure", "pending", "seen", "smap")

    def __init__(self, map_free_vars: bool, track: bool) -> None:
        self.map_free_vars = map_free_vars
        self.track = track
        self.lmap: dict[object, object] = {}
        self.rmap: dict[object, object] = {}
        # Size variables, mapped where first met (left to right, and right to left).
        self.smap: tuple[dict[SizeVar, SizeVar], dict[SizeVar, SizeVar]] = ({}, {})
        self.pure = True
        self.pending: list[object] = []
        self.seen: set[tuple[int, int]] = set()

    # --- failures -----------------------------------------------------------
    def fail(self, path: object, reason: str, a: object, b: object) -> _Mismatch:
        return _Mismatch(path, reason, a, b)

    def sub(self, path: object, label: str) -> object:
        return (path, label) if self.track else None

    # --- the mapping -----------------------------------------------------------
    def leave_pure(self) -> None:
        """Different nodes are about to be mapped: identical subtrees are no longer free.

        The ones skipped so far are mapped to themselves now, as comparing
        them would have done.
        """
        self.pure = False
        pending = self.pending
        if pending:
            self.pending = []
            _map_to_themselves(pending, self.lmap, self.rmap)

    def bind_var(self, a: Var, b: Var, path: object) -> None:
        self.var_equal(a, b, path, True)

    def var_equal(self, a: Var, b: Var, path: object, defining: bool = False) -> None:
        """Variables: mapped where bound (``defining``), else equal to what they are mapped to.

        A free variable is equal only to itself, unless ``map_free_vars``:
        then it is mapped where first met.  Mapped variables' annotations
        must agree.
        """
        if a is not b and self.pure:
            self.leave_pure()
        have = self.lmap.get(a)
        if have is not None:
            if have is not b:
                raise self.fail(path, f"%{a.name_hint} is mapped to %{have.name_hint}", a, b)  # type: ignore[attr-defined]
            return
        if b in self.rmap:
            raise self.fail(path, f"%{b.name_hint} is already mapped from another variable", a, b)
        if a is b:
            self.lmap[a] = self.rmap[a] = a
            return
        if not (defining or self.map_free_vars):
            raise self.fail(path, "different free variables", a, b)
        self.lmap[a] = b
        self.rmap[b] = a
        ta, tb = a.type_annotation, b.type_annotation
        if ta is None and tb is None or type(ta) is TensorType and not ta.symbolic and ta == tb:
            return
        self.type_equal(ta, tb, self.sub(path, ".type_annotation"))

    def bind_type_var(self, a: TypeVar, b: TypeVar, path: object) -> None:
        self.type_var_equal(a, b, path, True)

    def type_var_equal(self, a: _AnyT, b: _AnyT, path: object, defining: bool = False) -> None:
        """Type variables (and incomplete types): mapped where bound, else equal only to themselves."""
        if type(a) is GlobalTypeVar:
            if a.name_hint != b.name_hint or a.kind != b.kind:
                raise self.fail(path, "global type variables differ", a, b)
            return
        if a is not b and self.pure:
            self.leave_pure()
        have = self.lmap.get(a)
        if have is not None:
            if have is not b:
                raise self.fail(path, f"type variable {_tv_name(a)} is mapped to {_tv_name(have)}", a, b)
            return
        if b in self.rmap:
            raise self.fail(path, f"type variable {_tv_name(b)} is mapped from another", a, b)
        if a.kind != b.kind:
            raise self.fail(path, "type variables differ in kind", a, b)
        if a is not b and not (defining or self.map_free_vars):
            what = "incomplete types" if type(a) is IncompleteType else "free type variables"
            raise self.fail(path, f"different {what}", a, b)
        self.lmap[a] = b
        self.rmap[b] = a

    # --- types --------------------------------------------------------------
    def type_equal(self, a: object, b: object, path: object) -> None:
        """Compare two types (or None); types are small, so a local stack suffices."""
        if type(a) is TensorType and not a.symbolic and a == b:
            return
        stack = [(a, b, path)]
        push = stack.append
        while stack:
            a, b, path = stack.pop()
            ta = type(a)
            if ta is not type(b):
                if a is None or b is None:
                    raise self.fail(path, "a type on one side only", a, b)
                raise self.fail(path, f"{ta.__name__} vs {type(b).__name__}", a, b)
            if ta is TensorType:
                if a.symbolic or b.symbolic:
                    self.tensor_type_equal(a, b, path)  # type: ignore[arg-type]
                    continue
                if a == b:
                    continue
            if a is None:
                continue
            if ta in _TYPE_VARIABLES:
                self.type_var_equal(a, b, path)
                continue
            if a is b and self.pure:
                self.pending.append(a)
                continue
            if ta is TypeData:
                self.type_data_equal(a, b, path)  # type: ignore[arg-type]
                continue
            equal = _TYPE_EQUAL[self.track][ta]
            if equal is None:
                if a != b:
                    raise self.fail(path, f"{ta.__name__} values differ", a, b)
                continue
            equal(self, a, b, path, push)

    def tensor_type_equal(self, a: TensorType, b: TensorType, path: object) -> None:
        """Tensor types with size variables: dims compared with the variables mapped."""
        if a.dtype != b.dtype or len(a.shape) != len(b.shape):
            raise self.fail(path, f"{type_text(a)} vs {type_text(b)}", a, b)
        for i, (p, q) in enumerate(zip(a.shape, b.shape)):
            if not self.dim_equal(p, q):
                raise self.fail(self.sub(path, f".shape[{i}]"), f"shape[{i}]: {p!r} vs {q!r}", a, b)

    def dim_equal(self, p: object, q: object) -> bool:
        """Two dimensions; size variables are mapped where first met, whatever ``map_free_vars``.

        Relay programs have no binder for a size variable, and each parse of a
        text makes new ones, so they are compared as TVM compares free
        variables under ``map_free_vars``: consistently renamed.  An
        expression is compared by renaming its variables (those not mapped
        yet are paired in canonical order) and comparing canonical forms, so
        the order its terms sort in does not matter.
        """
        left, right = self.smap
        tp = type(p)
        if tp is not type(q):
            return False
        if tp is SizeVar:
            have = left.get(p)  # type: ignore[arg-type]
            if have is None:
                if q in right:
                    return False
                left[p], right[q] = q, p  # type: ignore[index]
                return True
            return have is q
        if tp is not SizeExpr:
            return p == q
        pv, qv = free_size_vars([p]), free_size_vars([q])
        if len(pv) != len(qv):
            return False
        unpaired = [v for v in qv if v not in right]
        unpaired.reverse()
        images = set(qv)
        renaming: dict[SizeVar, SizeVar] = {}
        for v in pv:
            have = left.get(v)
            if have is None:
                if not unpaired:
                    return False
                have = unpaired.pop()
                left[v], right[have] = have, v
            elif have not in images:
                return False
            renaming[v] = have
        return substitute(p, renaming) == q  # type: ignore[arg-type]

    def type_list_equal(self, a: Sequence[object], b: Sequence[object], path: object) -> None:
        if len(a) != len(b):
            raise self.fail(path, f"{len(a)} vs {len(b)} types", a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            self.type_equal(x, y, self.sub(path, f"[{i}]"))

    # --- attributes ----------------------------------------------------------
    def attrs_equal(self, a: _AnyT, b: _AnyT, path: object, push: _AnyT) -> None:
        """Attributes field by field; values holding IR nodes are compared on the main stack."""
        if a is None or b is None or not isinstance(a, Attrs) or not isinstance(b, Attrs):
            if a is b or a == b:
                return
            raise self.fail(path, "attributes on one side only", a, b)
        plain = a._plain and b._plain
        if plain and (a is b or a == b):
            return
        if a.type_key != b.type_key:
            raise self.fail(path, f"attribute kinds differ: {a.type_key} vs {b.type_key}", a, b)
        for key in a:
            if key not in b:
                raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} on the left only", a, b)
        for key in b:
            if key not in a:
                raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} on the right only", a, b)
        for key in reversed(list(a)):
            x, y = a[key], b[key]
            if plain or is_plain_value(x) and is_plain_value(y):
                if Attrs({key: x}) != Attrs({key: y}):
                    raise self.fail(self.sub(path, f".{key}"), f"attribute {key!r} differs", x, y)
            else:
                push((x, y, self.sub(path, f".{key}")))

    def map_equal(self, a: Map, b: Map, path: object, push: _AnyT) -> None:
        """Maps: each key of the left, through the node mapping, must be a key of the right."""
        if len(a) != len(b):
            raise self.fail(path, f"maps of {len(a)} vs {len(b)} entries", a, b)
        lmap = self.lmap
        for key, value in reversed(a.items()):
            other = key if isinstance(key, (str, Number)) else lmap.get(key, key)
            if other not in b:
                raise self.fail(path, f"key {_key_text(key)} has no counterpart on the right", a, b)
            push((value, b[other], self.sub(path, f"[{_key_text(key)}]")))

    # --- algebraic data types ------------------------------------------------
    def bind_patterns(self, xs: Sequence[Pattern], ys: Sequence[Pattern], path: object) -> None:
        """A match's patterns, clause by clause: their shapes, and their variables mapped."""
        if len(xs) != len(ys):
            raise self.fail(path, f"{len(xs)} vs {len(ys)} clauses", xs, ys)
        for i, (x, y) in enumerate(zip(xs, ys)):
            self.pattern_equal(x, y, self.sub(path, f"[{i}]"))

    def pattern_equal(self, a: Pattern, b: Pattern, path: object) -> None:
        """Two patterns (a pattern is as deep as it is written: a local stack suffices)."""
        stack = [(a, b, path)]
        while stack:
            a, b, path = stack.pop()
            t = type(a)
            if t is not type(b):
                raise self.fail(path, f"{t.__name__} vs {type(b).__name__}", a, b)
            if t is PatternVar:
                self.bind_var(a.var, b.var, self.sub(path, ".var"))
                continue
            if t is PatternWildcard:
                continue
            if t is PatternConstructor:
                self.constructor_equal(a.constructor, b.constructor, self.sub(path, ".constructor"))
            if len(a.patterns) != len(b.patterns):
                raise self.fail(path, f"{len(a.patterns)} vs {len(b.patterns)} sub-patterns", a, b)
            for i in range(len(a.patterns) - 1, -1, -1):
                stack.append((a.patterns[i], b.patterns[i], self.sub(path, f".patterns[{i}]")))

    def constructor_equal(self, a: Constructor, b: Constructor, path: object) -> None:
        if a is not b and (a.name_hint != b.name_hint or a.belong_to != b.belong_to):
            raise self.fail(path, f"constructors {a.name_hint} and {b.name_hint} differ", a, b)

    def type_data_equal(self, a: TypeData, b: TypeData, path: object) -> None:
        """Definitions: name, type parameters (mapped), constructors and their field types."""
        if a.header != b.header:
            raise self.fail(self.sub(path, ".header"), "types of different names", a, b)
        self.bind_all(a, b, "type_vars", self.bind_type_var, path)
        if len(a.constructors) != len(b.constructors):
            self.length_mismatch(a, b, "constructors", path)
        for i, (x, y) in enumerate(zip(a.constructors, b.constructors)):
            where = self.sub(path, f".constructors[{i}]")
            if x.name_hint != y.name_hint:
                raise self.fail(where, f"constructors {x.name_hint} and {y.name_hint} differ", x, y)
            self.type_list_equal(x.inputs, y.inputs, self.sub(where, ".inputs"))

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
        """Compare two expressions (or types, attrs, sequences...); raise _Mismatch on the first difference."""
        lmap = self.lmap
        rmap = self.rmap
        seen = self.seen
        kinds = _EXPR_KINDS[self.track]
        stack: list[tuple[object, object, object]] = [(lhs, rhs, path)]
        push = stack.append
        pop = stack.pop
        while stack:
            a, b, path = pop()
            ta = type(a)
            if ta is not type(b):
                self.mixed_types(a, b, path, push)
                continue
            if ta is Var:
                have = lmap.get(a)
                if have is b:
                    continue
                self.var_equal(a, b, path)  # type: ignore[arg-type]
                continue
            kind = kinds[ta]
            if kind is None:
                self.other_equal(a, b, path, push)
                continue
            mode, equal, closed, pairs, children = kind
            if mode == _GRAPH or mode and children(a):
                if self.pure:
                    if a is b:
                        self.pending.append(a)
                        continue
                    self.leave_pure()
                have = lmap.get(a)
                if have is not None:
                    if have is b:
                        continue
                    raise self.fail(path, _sharing(ta, "left", "right"), a, b)
                if b in rmap:
                    raise self.fail(path, _sharing(ta, "right", "left"), a, b)
                lmap[a] = b
                rmap[b] = a
            elif a is b and (closed or self.pure):
                if not closed:
                    self.pending.append(a)
                continue
            elif pairs:
                pair = (id(a), id(b))
                if pair in seen:
                    continue
                seen.add(pair)
            equal(self, a, b, path, push)

    def mixed_types(self, a: object, b: object, path: object, push: _AnyT) -> None:
        """Two values of different Python types: equal only as sequences, or as ints."""
        ta, tb = type(a), type(b)
        if ta in _SEQUENCE_TYPES and tb in _SEQUENCE_TYPES:
            self.seq_equal(a, b, path, push)  # type: ignore[arg-type]
            return
        if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
            if a != b:
                raise self.fail(path, f"{a!r} vs {b!r}", a, b)
            return
        raise self.fail(path, f"{ta.__name__} vs {tb.__name__}", a, b)

    def seq_equal(self, a: Sequence[object], b: Sequence[object], path: object, push: _AnyT) -> None:
        if len(a) != len(b):
            raise self.fail(path, f"sequences of length {len(a)} vs {len(b)}", a, b)
        for i in range(len(a) - 1, -1, -1):
            push((a[i], b[i], self.sub(path, f"[{i}]")))

    def other_equal(self, a: _AnyT, b: _AnyT, path: object, push: _AnyT) -> None:
        """What is not an expression: sequences, attributes, maps, types, modules, values."""
        ta = type(a)
        if ta in _SEQUENCE_TYPES:
            self.seq_equal(a, b, path, push)
        elif issubclass(ta, Attrs):
            self.attrs_equal(a, b, path, push)
        elif ta is Map:
            self.map_equal(a, b, path, push)
        elif a is None or issubclass(ta, Type):
            self.type_equal(a, b, path)
        elif ta is IRModule:
            self.module_equal(a, b, path)
        elif ta is NDArray:
            self.tensor_equal(a, b, a, b, path)
        elif issubclass(ta, Pattern):
            self.pattern_equal(a, b, path)
        elif ta is Clause:
            self.pattern_equal(a.lhs, b.lhs, self.sub(path, ".lhs"))
            push((a.rhs, b.rhs, self.sub(path, ".rhs")))
        elif a != b:
            raise self.fail(path, f"{ta.__name__} values differ", a, b)

    def module_equal(self, a: IRModule, b: IRModule, path: object) -> None:
        """Global functions by name; one mapping for the whole module, as in TVM."""
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
        types_a = {gtv.name_hint: data for gtv, data in a.type_definitions.items()}
        types_b = {gtv.name_hint: data for gtv, data in b.type_definitions.items()}
        if types_a.keys() != types_b.keys():
            only_a = sorted(types_a.keys() - types_b.keys())
            only_b = sorted(types_b.keys() - types_a.keys())
            what = "; ".join(part for part in (
                f"only the left has {', '.join(only_a)}" if only_a else "",
                f"only the right has {', '.join(only_b)}" if only_b else "",
            ) if part)
            raise self.fail(path, f"type definitions differ: {what}", a, b)
        for name, data in types_a.items():
            self.type_equal(data, types_b[name], self.sub(path, f".{name}"))
        if a.attrs != b.attrs or not a.attrs._plain:
            self.run(a.attrs, b.attrs, self.sub(path, ".attrs"))
        for name in names_a:
            self.run(a[name], b[name], self.sub(path, f".{name}"))


def _map_to_themselves(roots: list[object], lmap: dict, rmap: dict) -> None:
    """Map every graph node, variable and type variable under ``roots`` to itself."""
    done: set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n is None or id(n) in done:
            continue
        done.add(id(n))
        t = type(n)
        if t is Var or t is TypeVar or t is IncompleteType:
            lmap.setdefault(n, n)
            rmap.setdefault(n, n)
            if t is Var:
                stack.append(n.type_annotation)  # type: ignore[attr-defined]
            continue
        if t in _SEQUENCE_TYPES:
            stack.extend(n)  # type: ignore[arg-type]
            continue
        layout = getattr(t, "_layout_", None)
        if layout is None:
            continue
        if layout.lang == "expr":
            if _is_graph_node(n):
                lmap.setdefault(n, n)
                rmap.setdefault(n, n)
            for f in (*layout.type_fields, *layout.type_var_fields):
                stack.append(getattr(n, f.name))
        stack.extend(layout.children(n))


def _tv_name(tv: object) -> str:
    return getattr(tv, "name_hint", None) or type(tv).__name__


def _key_text(key: object) -> str:
    if isinstance(key, Var):
        return "%" + key.name_hint
    return repr(key)


def _rule(f: Field, layout: Layout) -> str:
    """Which rule compares and hashes field ``f`` (one of the node's own fields, not a child)."""
    kind = f.kind
    if kind is ATTRS or kind is TENSOR:
        return kind.name
    if kind.seq and f in layout.child_fields:
        return "LENGTH"
    if kind.lang == "type":
        if kind.seq and _callee(layout) is not None:
            return "CALLEE_TYPES"
        return "TYPES" if kind.seq else "TYPE"
    return "DATA"


def _callee(layout: Layout) -> str | None:
    """The name of the field holding what a node applies (a call's ``op``), if any."""
    for f in layout.child_fields:
        if f.kind.callee:
            return f.name
    return None


_EQUAL_RULE = {
    "LENGTH": "    if len(a.{n}) != len(b.{n}): self.length_mismatch(a, b, '{n}', path)",
    "DATA": "    if a.{n} != b.{n}: self.data_mismatch(a, b, '{n}', path)",
    "ATTRS": ("    x = a.{n}\n"
              "    if x is not b.{n} or x is not None and not x._plain:\n"
              "        self.attrs_equal(x, b.{n}, {at}, push)"),
    "TENSOR": "    self.tensor_equal(a, b, a.{n}, b.{n}, {at})",
    "TYPE": "    self.type_equal(a.{n}, b.{n}, {at})",
    "TYPES": "    if a.{n} or b.{n}: self.type_list_equal(a.{n}, b.{n}, {at})",
    # The type arguments of a call of an operator are derived from its arguments (TVM skips them).
    "CALLEE_TYPES": ("    if (a.{n} or b.{n}) and type(a.{callee}) is not Op:\n"
                     "        self.type_list_equal(a.{n}, b.{n}, {at})"),
}
"""How each kind of own field is compared, as lines of the generated comparison."""


def _equal_source(layout: Layout, track: bool) -> str:
    """The comparison of two nodes of ``layout``'s kind, as Python source, by the rules per field kind.

    ``equal(self, a, b, path, push)`` maps the node's binders, raises on a
    difference in its own fields and pushes the pairs of its other children,
    right to left, so that they are compared left to right; with ``track``,
    each with its path.
    """
    lines = ["def equal(self, a, b, path, push):"]
    emit = lines.append
    # Binders first, type parameters before the variables whose annotations use them.
    for f in (*layout.type_var_fields, *layout.var_fields):
        bind = "self.bind_var" if f.kind.lang == "expr" else "self.bind_type_var"
        if f.kind.seq:
            emit(f"    self.bind_all(a, b, {f.name!r}, {bind}, path)")
        else:
            emit(f"    {bind}(a.{f.name}, b.{f.name}, self.sub(path, {'.' + f.name!r}))")
    for f in layout.pattern_fields:
        emit(f"    self.bind_patterns(a.{f.name}, b.{f.name}, self.sub(path, {'.' + f.name!r}))")
    callee = _callee(layout)
    for f in layout.check_fields:
        emit(_EQUAL_RULE[_rule(f, layout)].format(
            n=f.name, at=f"self.sub(path, {'.' + f.name!r})", callee=callee))
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
    emit("    return")
    return "\n".join(lines) + "\n"


def _equal_function(layout: Layout | None, track: bool) -> Callable[..., None] | None:
    """The generated comparison of one kind (None for what is not a declared kind)."""
    if layout is None:
        return None
    namespace = {"layout": layout, "Op": Op}
    mode = "tracked " if track else ""
    name = f"<{mode}structural equality of {layout.cls.__module__}.{layout.cls.__qualname__}>"
    return compile_source(_equal_source(layout, track), namespace, name)["equal"]


def _expr_kind(cls: type, track: bool) -> tuple | None:
    """What the walk needs about one kind: (graph mode, comparison, closed, pairs, children).

    ``closed``: the kind holds no variables (no children, no types), so an
    identical node is always equal.  ``pairs``: a kind compared afresh whose
    comparisons are worth remembering (it has children or tensors).
    """
    layout = _layout_in(cls, Expr)
    if layout is None:
        return None
    closed = layout.leaf and not layout.type_fields
    pairs = not layout.leaf or bool(layout.tensor_fields)
    return (_graph_mode(layout), _equal_function(layout, track), closed, pairs, layout.children)


# The generated comparisons by kind, without paths and with them (``track``).
_EXPR_KINDS = (PerKind(lambda cls: _expr_kind(cls, False)), PerKind(lambda cls: _expr_kind(cls, True)))
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

    Works on expressions, types, attributes, modules and sequences of them.
    Shared subexpressions must be shared alike (graph equality, as TVM).  With
    ``map_free_vars``, free variables are also compared up to a consistent renaming.
    """
    return _compare(lhs, rhs, map_free_vars, False) is None


def assert_structural_equal(lhs: object, rhs: object, map_free_vars: bool = False) -> None:
    """Raise :class:`StructuralMismatchError` (an AssertionError and a ValueError) naming the
    path to the first difference and showing both sides there."""
    mismatch = _compare(lhs, rhs, map_free_vars, True)
    if mismatch is None:
        return
    where = _path_text(mismatch.path)
    raise StructuralMismatchError(
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
_T_VAR, _T_VAR_FREE, _T_TVAR, _T_INCOMPLETE, _T_NONE, _T_LIST, _T_MOD, _T_MAP, _T_SIZE = (
    11, 12, 43, 44, 46, 47, 48, 49, 50)


class _Hasher:
    """One hash computation: a memo by node, tokens for variables, and TVM's two counters.

    ``defs`` numbers variables where they are defined (or, with
    ``map_free_vars``, free ones where first met); ``count`` numbers graph
    nodes as they are finished, which sets a DAG apart from the tree copying
    its shared part.
    """

    __slots__ = ("map_free_vars", "memo", "var_tokens", "tv_tokens", "defs", "count", "size_tokens")

    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.memo: dict[int, int] = {}
        self.var_tokens: dict[Var, int] = {}
        self.tv_tokens: dict[object, int] = {}
        self.defs = 0
        self.count = 0
        self.size_tokens: dict[SizeVar, int] = {}

    # --- variables -----------------------------------------------------------
    def var(self, v: Var) -> int:
        """The token of a variable met as a use: known, free by identity, or mapped by order."""
        token = self.var_tokens.get(v)
        if token is not None:
            return token
        if self.map_free_vars:
            token = hash((_T_VAR, self.defs, self.type_hash(v.type_annotation)))
            self.defs += 1
        else:
            token = hash((_T_VAR_FREE, id(v), self.type_hash(v.type_annotation)))
        token = hash((token, self.count))
        self.count += 1
        self.var_tokens[v] = token
        return token

    def define_var(self, v: Var) -> None:
        """A binder: numbered where it is defined (a variable bound twice keeps its first number)."""
        if v in self.var_tokens:
            return
        token = hash((_T_VAR, self.defs, self.type_hash(v.type_annotation)))
        self.defs += 1
        self.var_tokens[v] = hash((token, self.count))
        self.count += 1

    def type_var(self, tv: _AnyT) -> int:
        token = self.tv_tokens.get(tv)
        if token is not None:
            return token
        t = type(tv)
        if t is GlobalTypeVar:
            token = hash((_T_TVAR, "global", tv.name_hint, int(tv.kind)))
        elif t is IncompleteType:
            token = hash((_T_INCOMPLETE, int(tv.kind)))
        elif self.map_free_vars:
            token = hash((_T_TVAR, self.defs, int(tv.kind)))
            self.defs += 1
        else:
            token = hash((_T_TVAR, id(tv), int(tv.kind)))
        self.tv_tokens[tv] = token
        return token

    def define_patterns(self, patterns: Sequence[Pattern]) -> None:
        """The variables of a match's patterns: binders, numbered where they are defined."""
        for p in patterns:
            for v in pattern_vars(p):
                self.define_var(v)

    def patterns_hash(self, patterns: Sequence[Pattern]) -> int:
        """The shapes of patterns, with their variables' tokens (defined before)."""
        parts: list[object] = []
        stack = list(reversed(patterns))
        while stack:
            p = stack.pop()
            t = type(p)
            if t is PatternVar:
                parts.append(self.var_tokens[p.var])
                continue
            if t is PatternConstructor:
                parts.append((p.constructor.name_hint, p.constructor.belong_to.name_hint))
            parts.append((t.__name__, len(getattr(p, "patterns", ()))))
            stack.extend(reversed(getattr(p, "patterns", ())))
        return hash(tuple(parts))

    def define_type_vars(self, params: Sequence[TypeVar]) -> None:
        tokens = self.tv_tokens
        for tv in params:
            if tv not in tokens:
                tokens[tv] = hash((_T_TVAR, "def", self.defs, int(tv.kind)))
                self.defs += 1

    # --- types ---------------------------------------------------------------
    def type_hash(self, ty: object) -> int:
        if ty is None:
            return _T_NONE
        if type(ty) is TensorType:
            return self.tensor_type_hash(ty) if ty.symbolic else ty._hash  # type: ignore[attr-defined]
        # Post-order on an explicit stack: (type, expanded?)
        out: list[int] = []
        stack: list[tuple[object, bool]] = [(ty, False)]
        while stack:
            t, expanded = stack.pop()
            tt = type(t)
            if tt is TensorType:
                out.append(self.tensor_type_hash(t) if t.symbolic else t._hash)  # type: ignore[attr-defined]
                continue
            if t is None:
                out.append(_T_NONE)
                continue
            if tt in _TYPE_VARIABLES:
                out.append(self.type_var(t))
                continue
            layout = _layout_in(tt, Type)
            if layout is None:
                out.append(hash(t))
                continue
            if expanded:
                n = len(layout.children(t))
                h = hash((layout.tag, layout.key(t), *out[len(out) - n:]))
                del out[len(out) - n:]
                out.append(h)
                continue
            self.define_type_vars(layout.bound_type_vars(t))
            kids = layout.children(t)
            if not kids:
                out.append(hash((layout.tag, layout.key(t))))
                continue
            stack.append((t, True))
            stack.extend((k, False) for k in reversed(kids))
        return out[0]

    def tensor_type_hash(self, ty: TensorType) -> int:
        """A tensor type with size variables: each variable by the order it is first met.

        An expression hashes its terms as a multiset (each a coefficient and
        its factors' tokens; a division by its kind and divisor), consistent
        with comparing renamed canonical forms.
        """
        parts: list[object] = [ty.dtype, len(ty.shape)]
        for d in ty.shape:
            t = type(d)
            if t is SizeVar:
                parts.append((_T_SIZE, self.size_token(d)))  # type: ignore[arg-type]
            elif t is SizeExpr:
                for v in free_size_vars([d]):
                    self.size_token(v)
                terms = sorted(hash((int(c), tuple(sorted(
                    self.size_tokens[a] if type(a) is SizeVar else hash((type(a).__name__, int(a.b)))
                    for a in m)))) for c, m in d.terms)  # type: ignore[attr-defined]
                parts.append((_T_SIZE, int(d.const), tuple(terms)))  # type: ignore[attr-defined]
            else:
                parts.append(d)
        return hash(tuple(parts))

    def size_token(self, v: SizeVar) -> int:
        token = self.size_tokens.get(v)
        if token is None:
            token = self.size_tokens[v] = len(self.size_tokens)
        return token

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

    def attrs_hash(self, attrs: _AnyT) -> int:
        """Attributes holding IR nodes: their values hashed in this computation (variables by token)."""
        if attrs is None or attrs._plain:
            return hash(attrs)
        return hash((attrs.type_key, tuple(sorted(
            (key, self.expr_hash(value)) for key, value in attrs.items()
        ))))

    def other_hash(self, node: object) -> int:
        """Everything that is not an expression: types, attrs, modules, sequences, maps, values."""
        t = type(node)
        if node is None or issubclass(t, Type):
            return self.type_hash(node)
        if isinstance(node, Attrs):
            return self.attrs_hash(node)
        if t is IRModule:
            # Hashed function by function: consistent with one mapping for the whole module.
            parts = [
                (gv.name_hint, _Hasher(self.map_free_vars).expr_hash(node[gv]))  # type: ignore[index]
                for gv in sorted(node.get_global_vars(), key=lambda g: g.name_hint)  # type: ignore[attr-defined]
            ]
            types = tuple(sorted(gtv.name_hint for gtv in node.type_definitions))  # type: ignore[attr-defined]
            return hash((_T_MOD, hash(node.attrs), types, tuple(parts)))  # type: ignore[attr-defined]
        if t in _SEQUENCE_TYPES:
            return hash((_T_LIST, *[self.expr_hash(x) for x in node]))  # type: ignore[attr-defined]
        if t is Map:
            items = sorted(
                (self.key_hash(k), self.expr_hash(v)) for k, v in node.items()  # type: ignore[attr-defined]
            )
            return hash((_T_MAP, tuple(items)))
        if t is NDArray:
            arr = node.__array__()  # type: ignore[attr-defined]
            return hash((arr.dtype.str, arr.shape, arr.tobytes()))
        if isinstance(node, int) and not isinstance(node, bool):
            return hash(int(node))
        return hash(node)

    def key_hash(self, key: object) -> int:
        if isinstance(key, (str, Number)):
            return hash(key)
        return self.expr_hash(key)


_HASH_RULE = {
    "LENGTH": "len(n.{n})",
    "DATA": "n.{n}",
    "ATTRS": "(x if (x := n.{n}) is None or x._plain else self.attrs_hash(x))",
    "TENSOR": "(n.{n}.__array__().dtype.str, n.{n}.shape, n.{n}.__array__().tobytes())",
    "TYPE": "th(n.{n})",
    "TYPES": "(tuple([th(t) for t in n.{n}]) if n.{n} else 0)",
    "CALLEE_TYPES": "(tuple([th(t) for t in n.{n}]) if n.{n} and type(n.{callee}) is not Op else 0)",
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

    Each kind gets ``expand(self, n, push, memo)``: it numbers the variables
    the node binds (type parameters first), then pushes a continuation and
    the node's unhashed children (right to left), so that the continuation,
    ``combine``, runs once they are done; with no child left to hash
    (operands already hashed, as in A-normal form) it combines at once.
    ``combine`` hashes the node's own fields with its children's hashes and,
    for a graph node, the next node number.
    """
    callee = _callee(layout)
    own = ", ".join(["TAG", *[_HASH_RULE[_rule(f, layout)].format(n=f.name, callee=callee)
                             for f in layout.check_fields],
                     *[f"self.patterns_hash(n.{f.name})" for f in layout.pattern_fields]])
    mode = _graph_mode(layout)
    kids = [f"*[{_of('k')} for k in n.{f.name}]" if f.kind.seq else _of(f"n.{f.name}")
            for f in layout.child_fields]
    parts = ", ".join([own, *kids])
    combine = ["th = self.type_hash", "tokens = self.var_tokens"]
    if mode == _AFRESH or mode == _GRAPH_UNLESS_EMPTY and not layout.child_fields:
        combine.append(f"memo[id(n)] = hash(({parts},))")
    else:
        # A graph node's hash takes in its number, in the order nodes are finished.
        if mode == _GRAPH_UNLESS_EMPTY:
            combine.append(f"if not {tuple_source(layout.child_fields)}:")
            combine.append(f"    memo[id(n)] = hash(({parts},))")
            combine.append("    return")
        combine += ["c = self.count", "self.count = c + 1", f"memo[id(n)] = hash(({parts}, c))"]
    lines = ["def expand(self, n, push, memo):"]
    emit = lines.append
    if layout.type_var_fields:
        emit(f"    self.define_type_vars({tuple_source(layout.type_var_fields)})")
    for f in layout.var_fields:
        if f.kind.seq:
            emit(f"    for v in n.{f.name}:")
            emit("        self.define_var(v)")
        else:
            emit(f"    self.define_var(n.{f.name})")
    for f in layout.pattern_fields:
        emit(f"    self.define_patterns(n.{f.name})")
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
    emit("    if waiting:")
    emit("        return")
    emit("    token = self.var")
    lines.extend("    " + line for line in combine)
    emit("")
    emit("def combine(self, n, phase, push, memo, token):")
    lines.extend("    " + line for line in combine)
    return "\n".join(lines) + "\n"


def _hash_expand(cls: type) -> Callable[..., None]:
    """The generated ``expand`` of one kind; for what is not an expression, hash it as a value."""
    layout = _layout_in(cls, Expr)
    if layout is None:
        return _hash_other
    namespace = {"TAG": layout.tag, "Var": Var, "Op": Op}
    name = f"<structural hash of {layout.cls.__module__}.{layout.cls.__qualname__}>"
    return compile_source(_hash_source(layout), namespace, name)["expand"]


def _hash_other(hasher: _Hasher, node: object, push: _AnyT, memo: dict[int, int]) -> None:
    memo[id(node)] = hasher.other_hash(node)


_HASH_EXPAND = PerKind(_hash_expand)


def structural_hash(node: object, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`: equal programs hash alike.

    Invariant under renaming of bound variables; a shared node hashes unlike
    two copies of it.  Free variables hash by identity, or with
    ``map_free_vars`` by the order in which they are met.
    """
    return _Hasher(map_free_vars).expr_hash(node) & _MASK


hooks.structural_equal = structural_equal
hooks.structural_hash = structural_hash
