"""How a type error points at the program: types and expressions as short text, and where.

A message must let the user find the offending expression in a program of
100,000 nodes, so an expression is shown small (its Relay text when it is
small, else a sketch a few levels deep) and located by its span when it has
one, else by the global function and the field path from that function down
to it.  None of this runs unless an error is reported.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

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
)
from relaypass.ir.op import Op
from relaypass.ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeVar,
)

MAX_TEXT = 300
"""Longest expression text shown in a message, in characters."""

_PRINTED_NODES = 24
"""Expressions of at most this many nodes are shown in full Relay text."""


def type_text(ty: Type | None) -> str:
    """The Relay text of a type; unknown parts show as ``_``."""
    if ty is None:
        return "_"
    try:
        text = ty.astext()
    except (ImportError, NotImplementedError):
        text = _type_sketch(ty)
    return text


def _type_sketch(ty: Type) -> str:
    t = type(ty)
    if t is TensorType:
        dims = ", ".join(str(d) for d in ty.shape)
        if len(ty.shape) == 1:
            dims += ","
        return f"Tensor[({dims}), {ty.dtype}]"
    if t is TupleType:
        inner = ", ".join(_type_sketch(f) for f in ty.fields)
        return f"({inner},)" if len(ty.fields) == 1 else f"({inner})"
    if t is FuncType:
        params = ""
        if ty.type_params:
            params = "[" + ", ".join(p.name_hint for p in ty.type_params) + "]"
        args = ", ".join(_type_sketch(a) for a in ty.arg_types)
        return f"fn {params}({args}) -> {_type_sketch(ty.ret_type)}"
    if t is RefType:
        return f"ref({_type_sketch(ty.value)})"
    if isinstance(ty, TypeVar):
        return ty.name_hint
    if t is IncompleteType:
        return "_"
    return type(ty).__name__


def expr_text(expr: Expr) -> str:
    """A short text of ``expr`` for a message: its Relay text if small, else a sketch."""
    text = None
    if _small(expr):
        try:
            text = expr.astext(show_meta_data=False)
        except (ImportError, NotImplementedError):
            text = None
        if text is not None:
            lines = [ln for ln in text.strip().splitlines() if not ln.startswith("#[version")]
            text = " ".join(ln.strip() for ln in lines)
    if not text:
        text = _sketch(expr, 3)
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3] + "..."
    return text


def _small(expr: Expr) -> bool:
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > _PRINTED_NODES:
            return False
        stack.extend(kid for _, kid in labeled_children(node))
    return True


def _sketch(expr: Expr, depth: int) -> str:
    """Relay-like text of ``expr`` down to ``depth`` levels; deeper parts are ``...``."""
    t = type(expr)
    if t is Var:
        return f"%{expr.name_hint}"
    if t is GlobalVar:
        return f"@{expr.name_hint}"
    if isinstance(expr, Op):
        return expr.name
    if t is Constant:
        data = expr.data
        if data.ndim == 0:
            return f"{data.item()!r} /* {data.dtype} */"
        return f"meta[relay.Constant] /* Tensor[{tuple(data.shape)}, {data.dtype}] */"
    if depth <= 0:
        return "..."
    sub = depth - 1
    if t is Call:
        args = [_sketch(a, sub) for a in expr.args]
        if expr.attrs:
            args.extend(f"{k}={_attr_text(v)}" for k, v in expr.attrs.items())
        callee = expr.op.name if isinstance(expr.op, Op) else _sketch(expr.op, sub)
        return f"{callee}({', '.join(args)})"
    if t is Tuple:
        inner = ", ".join(_sketch(f, sub) for f in expr.fields)
        return f"({inner},)" if len(expr.fields) == 1 else f"({inner})"
    if t is TupleGetItem:
        return f"{_sketch(expr.tuple_value, sub)}.{expr.index}"
    if t is Function:
        params = ", ".join(
            f"%{p.name_hint}" + (f": {type_text(p.type_annotation)}" if p.type_annotation else "")
            for p in expr.params
        )
        return f"fn ({params}) {{ {_sketch(expr.body, sub)} }}"
    if t is Let:
        return f"let %{expr.var.name_hint} = {_sketch(expr.value, sub)}; {_sketch(expr.body, sub)}"
    if t is If:
        return (
            f"if ({_sketch(expr.cond, sub)}) {{ {_sketch(expr.true_branch, sub)} }} "
            f"else {{ {_sketch(expr.false_branch, sub)} }}"
        )
    if t is RefCreate:
        return f"ref({_sketch(expr.value, sub)})"
    if t is RefRead:
        return f"ref_read({_sketch(expr.ref, sub)})"
    if t is RefWrite:
        return f"ref_write({_sketch(expr.ref, sub)}, {_sketch(expr.value, sub)})"
    return type(expr).__name__


def _attr_text(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"array{tuple(value.shape)}"
    return repr(value)


def labeled_children(node: Expr) -> Iterable[tuple[str, Expr]]:
    """The sub-expressions of ``node`` with the field path that reaches each."""
    t = type(node)
    if t is Call:
        yield "op", node.op
        for i, a in enumerate(node.args):
            yield f"args[{i}]", a
    elif t is Tuple:
        for i, f in enumerate(node.fields):
            yield f"fields[{i}]", f
    elif t is TupleGetItem:
        yield "tuple_value", node.tuple_value
    elif t is Function:
        for i, p in enumerate(node.params):
            yield f"params[{i}]", p
        yield "body", node.body
    elif t is Let:
        yield "var", node.var
        yield "value", node.value
        yield "body", node.body
    elif t is If:
        yield "cond", node.cond
        yield "true_branch", node.true_branch
        yield "false_branch", node.false_branch
    elif t is RefCreate:
        yield "value", node.value
    elif t is RefRead:
        yield "ref", node.ref
    elif t is RefWrite:
        yield "ref", node.ref
        yield "value", node.value


def locate(target: Expr, roots: Iterable[tuple[str, Expr]]) -> str:
    """Where ``target`` is: ``file:line:col`` from its span, plus the function and path.

    ``roots`` are ``(name, expression)`` pairs (the module's functions) searched
    in order; the first occurrence of ``target`` wins.
    """
    span = getattr(target, "span", None)
    for name, root in roots:
        path = _path_to(target, root)
        if path is None:
            continue
        where = f"in {name}"
        if path:
            where += f" at {_compress(path)}"
        binding = _enclosing_binding(target, root, path)
        if binding:
            where += f" ({binding})"
        return f"{span}: {where}" if span is not None else where
    return str(span) if span is not None else "in an expression outside the module"


def _path_to(target: Expr, root: Expr) -> list[str] | None:
    if target is root:
        return []
    parent: dict[int, tuple[Expr, str]] = {}
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        for label, kid in labeled_children(node):
            if id(kid) in seen:
                continue
            seen.add(id(kid))
            parent[id(kid)] = (node, label)
            if kid is target:
                path = []
                cur: Expr = kid
                while cur is not root:
                    up, lab = parent[id(cur)]
                    path.append(lab)
                    cur = up
                path.reverse()
                return path
            stack.append(kid)
    return None


def _compress(path: list[str]) -> str:
    """``body.body.body.value`` as ``body(x3).value``: paths through long chains stay short."""
    parts: list[str] = []
    i = 0
    while i < len(path):
        j = i
        while j < len(path) and path[j] == path[i]:
            j += 1
        run = j - i
        parts.append(path[i] if run < 3 else f"{path[i]}(x{run})")
        i = j
    return ".".join(parts)


def _enclosing_binding(target: Expr, root: Expr, path: list[str]) -> str:
    """``in the value bound to %x``: the innermost let whose value holds ``target``."""
    node = root
    found = ""
    for label in path:
        if type(node) is Let and label == "value":
            found = f"in the value bound to %{node.var.name_hint}"
        node = _child(node, label)
    return found


def _child(node: Expr, label: str) -> Expr:
    for lab, kid in labeled_children(node):
        if lab == label:
            return kid
    raise KeyError(label)
