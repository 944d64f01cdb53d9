"""Each node kind's fields, declared once, and the generic operations derived from them.

A node class lists its fields at class level, in constructor order, with the
role each one plays::

    class Call(Expr):
        _fields_ = fields(op=CALLEE, args=EXPRS, attrs=ATTRS, type_args=TYPES, span=SPAN)

That table is the only place that says what a node is made of.  Everything
that used to spell it out per kind -- the sub-expressions a traversal walks,
the rebuild of a node over new children, what structural equality compares
and hashes, which children live in a scope the node opens -- reads it
instead, so a new node kind needs its declaration and nothing else to be
walked, rebuilt, compared and hashed.

When a class is created, :class:`~relaypass.ir.node.Node` compiles its table
into a :class:`Layout`.  The accessors that run on every node of large
programs (``children``, ``rebuild``, ``key``) are generated as Python source
once per class, as :mod:`dataclasses` generates ``__init__``, so they cost
what the hand-written ``(call.op, *call.args)`` cost; nothing introspects a
node per call.  A subclass of a declared kind gets its own layout (its rebuild
constructs the subclass), and declares ``_fields_`` again only if its
constructor differs.

Sequence fields hold tuples (the constructors convert), so a layout can hand
out a stored sequence as is.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable, Sequence
from operator import is_
from typing import Any

__all__ = [
    "ATTRS", "BRANCH", "BRANCHES", "CALLEE", "DATA", "EXPR", "EXPRS", "INFO", "SPAN", "TENSOR", "TYPE",
    "TYPES", "TYPE_VARS", "VAR", "VARS", "Field", "Kind", "Layout", "PerKind", "children",
    "compile_source", "fields", "layout_of", "map_children", "rebuild", "tuple_source",
    "with_children", "with_fields",
]


class Kind:
    """The role of a field: what it holds and how generic operations treat it.

    ``lang`` is the language of the nodes the field holds (``"expr"`` or
    ``"type"``, None for plain values): fields of a node's own language are its
    children.  ``seq``: a tuple of them.  ``binds``: the node binds these
    variables (they are in scope in all its children).  ``callee``: evaluated
    after the other children, as Relay evaluates a call's arguments before its
    callee.  ``branch``: a block of its own (a scope of its own; each item of a
    sequence of branches is one).  ``compare``: takes part in structural
    equality and hashing.  ``binders``: for a field that binds variables it
    does not hold as such (a match's patterns), ``binders(value)`` gives the
    variables; the ``i``-th item binds in the ``i``-th branch of the node's
    sequence of branches, and nowhere else.
    """

    __slots__ = ("name", "lang", "seq", "binds", "callee", "branch", "compare", "binders")

    def __init__(self, name: str, lang: str | None = None, *, seq: bool = False,
                 binds: bool = False, callee: bool = False, branch: bool = False,
                 compare: bool = True, binders: Callable[[Any], tuple] | None = None) -> None:
        self.name = name
        self.lang = lang
        self.seq = seq
        self.binds = binds or binders is not None
        self.callee = callee
        self.branch = branch
        self.compare = compare
        self.binders = binders

    def __repr__(self) -> str:
        return self.name


EXPR = Kind("EXPR", "expr")
"""One sub-expression."""
EXPRS = Kind("EXPRS", "expr", seq=True)
"""A tuple of sub-expressions."""
CALLEE = Kind("CALLEE", "expr", callee=True)
"""The expression a call applies; evaluated after the other children."""
BRANCH = Kind("BRANCH", "expr", branch=True)
"""A sub-expression evaluated in a block of its own (a branch of an If)."""
BRANCHES = Kind("BRANCHES", "expr", seq=True, branch=True)
"""A tuple of sub-expressions, each evaluated in a block of its own (the clauses of a match)."""
VAR = Kind("VAR", "expr", binds=True)
"""A variable the node binds (a let's variable)."""
VARS = Kind("VARS", "expr", seq=True, binds=True)
"""A tuple of variables the node binds (a function's parameters)."""
TYPE = Kind("TYPE", "type")
"""One type, or None."""
TYPES = Kind("TYPES", "type", seq=True)
"""A tuple of types."""
TYPE_VARS = Kind("TYPE_VARS", "type", seq=True, binds=True)
"""A tuple of type variables the node binds (type parameters)."""
ATTRS = Kind("ATTRS")
"""An :class:`~relaypass.ir.attrs.Attrs` record, or None."""
DATA = Kind("DATA")
"""A plain value that identifies the node: a name, an index, a dtype, a shape."""
TENSOR = Kind("TENSOR")
"""A numpy array, compared by dtype, shape and bytes."""
INFO = Kind("INFO", compare=False)
"""A plain value kept and printed but not compared: a variable's name hint."""
SPAN = Kind("SPAN", compare=False)
"""Where the node came from in a source text."""


class Field:
    """One declared field: its name (the constructor parameter and attribute) and its kind."""

    __slots__ = ("name", "kind")

    def __init__(self, name: str, kind: Kind) -> None:
        self.name = name
        self.kind = kind

    def __repr__(self) -> str:
        return f"{self.name}={self.kind!r}"


def fields(**kinds: Kind) -> tuple[Field, ...]:
    """The field table of a node class: ``fields(op=CALLEE, args=EXPRS, ...)``, in constructor order."""
    for name, kind in kinds.items():
        if not isinstance(kind, Kind):
            raise TypeError(f"field {name!r}: expected a field kind such as EXPR, got {kind!r}")
    return tuple(Field(name, kind) for name, kind in kinds.items())


# --------------------------------------------------------------------------- code generation


def tuple_source(selected: Sequence[Field], node: str = "n") -> str:
    """A Python expression over ``node``: the values of ``selected`` as a tuple, sequences spliced in."""
    if not selected:
        return "()"
    if len(selected) == 1:
        f = selected[0]
        return f"{node}.{f.name}" if f.kind.seq else f"({node}.{f.name},)"
    return "(" + ", ".join(
        f"*{node}.{f.name}" if f.kind.seq else f"{node}.{f.name}" for f in selected
    ) + ",)"


def compile_source(source: str, namespace: dict[str, Any], filename: str) -> dict[str, Any]:
    """Run generated ``source`` in ``namespace`` (returned); tracebacks show the generated lines."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _rebuild_source(layout_fields: Sequence[Field], child_fields: Sequence[Field]) -> str:
    """An expression over node ``n`` and children ``k``: the constructor call of a rebuild.

    With at most one sequence among the children, positions are constants
    (counted from the end after the sequence), so the sequence may change
    length; with several, each takes as many items as the node's own.
    """
    child_fields = tuple(child_fields)
    seqs = [j for j, f in enumerate(child_fields) if f.kind.seq]
    args = []
    if len(seqs) <= 1:
        s = seqs[0] if seqs else len(child_fields)
        tail = len(child_fields) - s - 1
        for f in layout_fields:
            if f not in child_fields:
                args.append(f"n.{f.name}")
                continue
            j = child_fields.index(f)
            if j < s:
                args.append(f"k[{j}]")
            elif j == s:
                args.append(f"k[{j}:-{tail}]" if tail else f"k[{j}:]")
            else:
                args.append(f"k[{j - len(child_fields)}]")
    else:
        offset = "0"
        for f in layout_fields:
            if f not in child_fields:
                args.append(f"n.{f.name}")
            elif f.kind.seq:
                end = f"{offset} + len(n.{f.name})"
                args.append(f"k[{offset}:{end}]")
                offset = f"({end})"
            else:
                args.append(f"k[{offset}]")
                offset = f"({offset} + 1)"
    return f"cls({', '.join(args)})"


def _remap_source(layout_fields: Sequence[Field], child_fields: Sequence[Field], lang: str | None) -> str:
    """The body of ``remap(n, f, m)``: ``n`` over its mapped children, or ``n`` if none changed.

    Each child ``c``, in field order, becomes ``m[c]`` when ``c`` is in ``m``
    and ``f(c)`` otherwise.  Expressions compare by identity, so a tuple of
    them is unchanged exactly when it is ``==`` to the old one; types compare
    structurally, so their sequences are checked item by item with ``is``.
    """
    if not child_fields:
        return "    return n\n"
    lines = []
    same = []
    for j, f in enumerate(child_fields):
        if f.kind.seq:
            lines.append(f"    k{j} = tuple([m[c] if c in m else f(c) for c in n.{f.name}])")
            same.append(f"k{j} == n.{f.name}" if lang == "expr" else f"all(map(is_, k{j}, n.{f.name}))")
        else:
            lines.append(f"    c = n.{f.name}")
            lines.append(f"    k{j} = m[c] if c in m else f(c)")
            same.append(f"k{j} is n.{f.name}")
    lines.append(f"    if {' and '.join(same)}:")
    lines.append("        return n")
    args = [f"k{child_fields.index(f)}" if f in child_fields else f"n.{f.name}" for f in layout_fields]
    lines.append(f"    return cls({', '.join(args)})")
    return "\n".join(lines) + "\n"


def _walk_source(child_fields: Sequence[Field]) -> str:
    """The body of ``walk(n, f, m)``: ``f(c)`` for each child ``c`` not in ``m``, in field order."""
    if not child_fields:
        return "    return None\n"
    lines = []
    for f in child_fields:
        if f.kind.seq:
            lines.append(f"    for c in n.{f.name}:")
            lines.append("        if c not in m:")
            lines.append("            f(c)")
        else:
            lines.append(f"    c = n.{f.name}")
            lines.append("    if c not in m:")
            lines.append("        f(c)")
    return "\n".join(lines) + "\n"


def _key_source(layout_fields: Sequence[Field], child_fields: Sequence[Field]) -> str:
    """What identifies a node besides its children, types and tensors: data, attrs, child counts."""
    parts = []
    for f in layout_fields:
        kind = f.kind
        if f in child_fields:
            if kind.seq:
                parts.append(f"len(n.{f.name})")
        elif kind is DATA or kind is ATTRS:
            parts.append(f"n.{f.name}")
    return "(" + "".join(p + ", " for p in parts) + ")"


def _bound_vars_source(var_fields: Sequence[Field], pattern_fields: Sequence[Field]) -> str:
    """The variables a node binds: its variable fields, then what its patterns bind."""
    if not pattern_fields:
        return tuple_source(var_fields)
    parts = [f"*n.{f.name}" if f.kind.seq else f"n.{f.name}" for f in var_fields]
    parts += [f"*binders_{f.name}(n.{f.name})" for f in pattern_fields]
    return "(" + ", ".join(parts) + ",)"


def _scopes_source(binder_scope: Sequence[Field], branches: Sequence[Field]) -> str:
    """The children of each scope a node opens: its binders' scope, then each branch."""
    parts = [f"({tuple_source(binder_scope)},)"] if binder_scope else []
    for f in branches:
        parts.append(f"tuple([(k,) for k in n.{f.name}])" if f.kind.seq else f"((n.{f.name},),)")
    return " + ".join(parts) if parts else "()"


class Layout:
    """What one node class is made of, compiled from its ``_fields_`` declaration.

    Attributes that are functions take the node (``children(n)``) and are
    generated once per class; the others are tuples of :class:`Field` in
    declaration order, for code that treats fields by kind.

    ``children(n)``
        the sub-nodes of the node's own language (sub-expressions of an
        expression, component types of a type), in field order.
    ``operands(n)``
        the children that flow into the node: neither the callee nor the
        variables it binds (a call's arguments, a tuple's fields).
    ``evaluated(n)``
        the children in evaluation order: as ``children``, but the callee
        after the others (Relay evaluates a call's arguments first).
    ``subterms(n)``
        the children other than the variables the node binds (what structural
        comparison walks into once the binders are matched).
    ``rebuild(n, k)``
        a new node of this class with children ``k`` (lined up with
        ``children(n)``) and every other field of ``n``.
    ``remap(n, f, m)``
        what a mutator makes of ``n``: each child ``c``, in field order,
        mapped to ``m[c]`` if the memo table ``m`` has it and to ``f(c)``
        otherwise; ``n`` itself when no child changed, else a rebuild.  One
        generated function, with no tuple of old children and no slicing, as
        it runs once per node of every rewrite.
    ``walk(n, f, m)``
        what a visitor does at ``n``: ``f(c)`` for each child ``c`` that is
        not a key of ``m`` (the memo table), in field order.
    ``key(n)``
        a tuple of what identifies the node besides its children, types and
        tensors: its compared data and attrs, and the length of each sequence
        of children.  Equal keys are necessary for structural equality.
    ``check_fields``
        what structural equality checks of the node itself: the length of
        each sequence of children and every compared field that is neither a
        child nor a binder.
    ``bound_vars(n)`` / ``bound_type_vars(n)``
        the variables and type variables the node binds.
    ``outer(n)`` / ``scopes_of(n)`` / ``opens_scopes``
        the children in the node's own scope, and the children of each scope
        the node opens, one tuple per scope (the scope of its binders holds
        all its other children; a branch is a scope of its own, and so is
        each item of a sequence of branches); ``opens_scopes``: whether the
        kind opens any.
    ``build``
        what the generated rebuilds call with every declared field in order:
        the class, or its ``_from_fields_`` when its constructor takes other
        parameters (a match is built from clauses, but declares its patterns
        and its clauses' bodies).
    """

    __slots__ = (
        "cls", "build", "fields", "names", "lang", "child_fields", "binds",
        "var_fields", "type_var_fields", "pattern_fields", "type_fields", "tensor_fields",
        "check_fields", "subterm_fields", "leaf", "children", "evaluated", "operands", "subterms",
        "rebuild", "remap", "walk", "key",
        "bound_vars", "bound_type_vars", "outer", "scopes_of", "opens_scopes", "tag", "source",
    )

    def __init__(self, cls: type, declared: Sequence[Field], lang: str | None) -> None:
        self.cls = cls
        self.build = getattr(cls, "_from_fields_", cls)
        self.fields = tuple(declared)
        self.names = tuple(f.name for f in declared)
        self.lang = lang
        child = tuple(f for f in declared if f.kind.lang is not None and f.kind.lang == lang)
        self.child_fields = child
        self.pattern_fields = tuple(f for f in declared if f.kind.binders is not None)
        self.var_fields = tuple(
            f for f in declared if f.kind.binds and f.kind.lang == "expr" and f.kind.binders is None
        )
        self.type_var_fields = tuple(f for f in declared if f.kind.binds and f.kind.lang == "type")
        self.binds = bool(self.var_fields or self.type_var_fields or self.pattern_fields)
        # Types an expression holds (annotations, type arguments); a type's are its children.
        self.type_fields = tuple(
            f for f in declared if f.kind.lang == "type" and not f.kind.binds and f not in child
        )
        self.tensor_fields = tuple(f for f in declared if f.kind is TENSOR)
        # What structural equality checks of the node itself, in declaration order:
        # the length of each sequence of children, and every compared field that is
        # neither a child nor a binder (data, attrs, tensors, an expression's types).
        self.check_fields = tuple(
            f for f in declared
            if (f.kind.seq and f in child or f not in child and f.kind.compare)
            and not f.kind.binds
        )
        # The variables of patterns bind in their branch only, not in the node's other children.
        binds_all = bool(self.var_fields or self.type_var_fields)
        binder_scope = tuple(f for f in child if not f.kind.branch) if binds_all else ()
        branches = tuple(f for f in child if f.kind.branch)
        outer = tuple(f for f in child if f not in binder_scope and not f.kind.branch)
        operands = tuple(f for f in child if not f.kind.callee and not f.kind.binds)
        self.subterm_fields = tuple(f for f in child if not f.kind.binds)
        self.leaf = not child

        sources = {
            "children": tuple_source(child),
            "operands": tuple_source(operands),
            "evaluated": tuple_source(
                tuple(f for f in child if not f.kind.callee) + tuple(f for f in child if f.kind.callee)
            ),
            "subterms": tuple_source(self.subterm_fields),
            "rebuild": _rebuild_source(declared, child),
            "key": _key_source(declared, child),
            "bound_vars": _bound_vars_source(self.var_fields, self.pattern_fields),
            "bound_type_vars": tuple_source(self.type_var_fields),
            "outer": tuple_source(outer),
            "scopes_of": _scopes_source(binder_scope, branches),
        }
        self.opens_scopes = bool(binder_scope or branches)
        lines = []
        for name, expr in sources.items():
            params = "n, k" if name == "rebuild" else "n"
            lines.append(f"def {name}({params}):\n    return {expr}\n")
        lines.append(f"def remap(n, f, m):\n{_remap_source(declared, child, lang)}")
        lines.append(f"def walk(n, f, m):\n{_walk_source(child)}")
        self.source = "\n".join(lines)
        namespace: dict[str, Any] = {"cls": self.build, "is_": is_}
        for f in self.pattern_fields:
            namespace[f"binders_{f.name}"] = f.kind.binders
        namespace = compile_source(
            self.source, namespace, f"<fields of {cls.__module__}.{cls.__qualname__}>"
        )
        self.children = namespace["children"]
        self.operands = namespace["operands"]
        self.evaluated = namespace["evaluated"]
        self.subterms = namespace["subterms"]
        self.rebuild = namespace["rebuild"]
        self.key = namespace["key"]
        self.bound_vars = namespace["bound_vars"]
        self.bound_type_vars = namespace["bound_type_vars"]
        self.outer = namespace["outer"]
        self.remap = namespace["remap"]
        self.walk = namespace["walk"]
        self.scopes_of = namespace["scopes_of"]
        # Keeps kinds apart in structural hashes (stable within a process, as str hashes are).
        self.tag = hash(("relaypass node", cls.__module__, cls.__qualname__))

    def labelled(self, node: object) -> list[tuple[str, Any]]:
        """Each child with where it sits: ``("op", ...)``, ``("args[0]", ...)``..."""
        out: list[tuple[str, Any]] = []
        for f in self.child_fields:
            value = getattr(node, f.name)
            if f.kind.seq:
                out.extend((f"{f.name}[{i}]", kid) for i, kid in enumerate(value))
            else:
                out.append((f.name, value))
        return out

    def __repr__(self) -> str:
        return f"Layout({self.cls.__name__}: {', '.join(map(repr, self.fields))})"


class PerKind(dict):
    """Something made once per node class on first use, then a dict lookup: ``table[type(node)]``.

    For code that treats every node by its kind (generated comparisons, a
    validated getter) and runs on every node of large programs.
    """

    def __init__(self, make: Callable[[type], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, cls: type) -> Any:
        value = self[cls] = self.make(cls)
        return value


def _undeclared(cls: type) -> TypeError:
    return TypeError(f"{cls.__name__} is not a node kind with declared fields")


def layout_of(node_or_class: object) -> Layout:
    """The compiled field layout of a node or node class."""
    cls = node_or_class if isinstance(node_or_class, type) else type(node_or_class)
    layout = getattr(cls, "_layout_", None)
    if layout is None:
        raise _undeclared(cls)
    return layout


def _layout(node: object) -> Layout:
    """``layout_of(node)`` for a node, checked only when the lookup fails (the helpers' fast path)."""
    layout = getattr(type(node), "_layout_", None)
    if layout is None:
        raise _undeclared(type(node))
    return layout


def children(node: object) -> tuple:
    """The sub-expressions of an expression (the component types of a type), in field order."""
    try:
        get = type(node)._layout_.children
    except AttributeError:
        raise _undeclared(type(node)) from None
    return get(node)


def rebuild(node: object, kids: Sequence[Any], **changes: Any) -> Any:
    """A new node of ``node``'s kind over children ``kids``, every other field kept.

    ``kids`` lines up with ``children(node)``; ``changes`` replace other fields
    by name (``rebuild(func, kids, ret_type=t)``).  The new node has no
    ``checked_type``: a node over new children may have another type.
    """
    try:
        layout = type(node)._layout_
        if not changes:
            return layout.rebuild(node, kids)
    except AttributeError:
        if getattr(type(node), "_layout_", None) is None:
            raise _undeclared(type(node)) from None
        raise
    values = {name: getattr(node, name) for name in layout.names}
    child = layout.child_fields
    seqs = [f for f in child if f.kind.seq]
    # As the compiled rebuild: a lone sequence takes what the single children leave.
    lone = len(kids) - (len(child) - len(seqs)) if len(seqs) == 1 else None
    expected = len(layout.children(node)) if lone is None else len(kids)
    if len(kids) != expected or lone is not None and lone < 0:
        raise ValueError(f"{type(node).__name__} has {expected} children, got {len(kids)}")
    i = 0
    for f in child:
        if f.kind.seq:
            n = lone if lone is not None else len(values[f.name])
            values[f.name] = tuple(kids[i:i + n])
            i += n
        else:
            values[f.name] = kids[i]
            i += 1
    for name, value in changes.items():
        if name not in values:
            raise TypeError(
                f"{type(node).__name__} has no field {name!r}; its fields: {', '.join(layout.names)}"
            )
        values[name] = value
    return layout.build(*values.values())


def with_children(node: Any, kids: Sequence[Any]) -> Any:
    """``node`` itself when every one of ``kids`` is its old child, else ``rebuild(node, kids)``.

    What a mutator wants: unchanged subtrees stay shared, with their types.
    """
    layout = _layout(node)
    old = layout.children(node)
    if len(kids) == len(old) and all(map(is_, kids, old)):
        return node
    return layout.rebuild(node, kids)


def with_fields(node: Any, **changes: Any) -> Any:
    """A new node of ``node``'s kind with the named fields replaced and the others kept."""
    layout = _layout(node)
    unknown = [name for name in changes if name not in layout.names]
    if unknown:
        raise TypeError(
            f"{type(node).__name__} has no field {unknown[0]!r}; its fields: {', '.join(layout.names)}"
        )
    return layout.build(*[changes[name] if name in changes else getattr(node, name)
                        for name in layout.names])


def map_children(node: Any, fn: Callable[[Any], Any]) -> Any:
    """``with_children(node, [fn(k) for k in children(node)])``."""
    layout = _layout(node)
    old = layout.children(node)
    kids = [fn(k) for k in old]
    if all(map(is_, kids, old)):
        return node
    return layout.rebuild(node, kids)
