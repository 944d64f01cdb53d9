"""Short text of IR for messages: enough to recognise an expression, never a whole program.

An error deep in a 100,000-node model has to name the expression it is
about without printing the model.  A small expression is shown as the
printer writes it (on one line, without the version header and the
``free_var`` declarations); a large one, or one the printer cannot handle,
as a sketch a few levels deep in which deeper parts read ``...``.  The
sketch is built with an explicit stack and stops as soon as it is longer
than the text that will be shown, so neither the depth nor the size of the
program turns into recursion or work.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any as _AnyT

import numpy as np

from .expr import (
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
    children,
)
from .op import Op
from .types import Any, FuncType, IncompleteType, RefType, TensorType, TupleType, Type, TypeVar

__all__ = ["clip", "short_text", "type_text"]

SKETCH_DEPTH = 3
"""How many levels of a large expression a sketch shows before writing ``...``."""

_PRINTER_NOISE = (
    "#[", "free_var ",
    # the comment that stands for a metadata section left out
    "/* For debugging purposes the metadata", "* If you would like to see the full metadata",
    "* option to `True` when invoking", "*/",
)


def short_text(node: object, max_chars: int = 200, max_nodes: int = 40) -> str:
    """``node`` (an expression, a type, or a list of them) as one line of at most ``max_chars``.

    Expressions of at most ``max_nodes`` distinct nodes are printed in full;
    larger ones are sketched.  Anything else is shown by its ``repr``.
    """
    text = None
    if isinstance(node, Expr):
        if _node_count_at_most(node, max_nodes):
            try:
                text = node.astext(show_meta_data=False)
            except Exception:  # a message must not fail because the printer does
                text = None
    elif isinstance(node, Type):
        text = type_text(node)
    if text is None:
        text = _sketch(node, max_chars)
    return clip(text, max_chars)


def type_text(ty: Type | None) -> str:
    """The full text of a type (``_`` for an unknown one), sketched if the printer fails."""
    if ty is None:
        return "_"
    try:
        return ty.astext()
    except Exception:  # a message must not fail because the printer does
        return _sketch(ty, sys.maxsize)


def clip(text: str, max_chars: int) -> str:
    """``text`` on one line, without the lines the printer adds around a program, clipped."""
    lines = (line.strip() for line in text.splitlines())
    text = " ".join(line for line in lines if line and not line.startswith(_PRINTER_NOISE))
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def _node_count_at_most(expr: Expr, limit: int) -> bool:
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > limit:
            return False
        stack.extend(children(node))
    return True


def _sketch(node: object, max_chars: int) -> str:
    """Relay-like text of ``node`` down to SKETCH_DEPTH levels, stopped past ``max_chars``.

    The stack holds text and (node, depth) pairs; a node is replaced by the
    text and sub-nodes it is written as, left to right.
    """
    out: list[str] = []
    size = 0
    # A list longer than this is over the limit anyway: each item takes 3 characters or more.
    most_items = max_chars // 3 + 1
    stack: list[_AnyT] = [(node, SKETCH_DEPTH)]
    while stack and size <= max_chars:
        item = stack.pop()
        if type(item) is str:
            out.append(item)
            size += len(item)
            continue
        parts = _parts(*item, most_items)
        if type(parts) is str:
            out.append(parts)
            size += len(parts)
        else:
            stack.extend(reversed(parts))
    return "".join(out)


def _parts(node: _AnyT, depth: int, most_items: int) -> str | list[_AnyT]:
    """The text of ``node``, or the pieces (text and (node, depth) pairs) it is written as."""
    t = type(node)
    if t is Var:
        return "%" + node.name_hint
    if t is GlobalVar:
        return "@" + node.name_hint
    if isinstance(node, Op):
        return node.name
    if t is Constant:
        data = node.array
        if data.ndim == 0:
            return f"{data.item()!r} /* {data.dtype} */"
        return f"meta[relay.Constant] /* {_tensor_text(data.shape, data.dtype)} */"
    if isinstance(node, Type):
        return _type_parts(node)
    if isinstance(node, (list, tuple)):
        return ["[", *_joined(node, depth, most_items), "]"]
    if not isinstance(node, Expr):
        return repr(node)
    if depth <= 0:
        if t is Call and type(node.op) in (Op, GlobalVar, Var):
            return _parts(node.op, 0, most_items) + "(...)"
        return "..."
    d = depth - 1
    if t is Call:
        inner = _joined(node.args, d, most_items)
        if node.attrs:
            attrs = ", ".join(f"{k}={_attr_text(v)}" for k, v in node.attrs.items())
            inner.append(", " + attrs if inner else attrs)
        return [(node.op, d), "(", *inner, ")"]
    if t is Tuple:
        fields = _joined(node.fields, d, most_items)
        return ["(", *fields, ",)" if len(node.fields) == 1 else ")"]
    if t is TupleGetItem:
        return [(node.tuple_value, d), f".{node.index}"]
    if t is Function:
        params: list[_AnyT] = []
        for p in node.params:
            params.append(f"%{p.name_hint}")
            if p.type_annotation is not None:
                params.extend((": ", (p.type_annotation, d)))
            params.append(", ")
        return ["fn (", *params[:-1], ") { ", (node.body, d), " }"]
    if t is Let:
        return [f"let %{node.var.name_hint} = ", (node.value, d), "; ", (node.body, d)]
    if t is If:
        return ["if (", (node.cond, d), ") { ", (node.true_branch, d), " } else { ",
                (node.false_branch, d), " }"]
    if t is RefCreate:
        return ["ref(", (node.value, d), ")"]
    if t is RefRead:
        return ["ref_read(", (node.ref, d), ")"]
    if t is RefWrite:
        return ["ref_write(", (node.ref, d), ", ", (node.value, d), ")"]
    return t.__name__


def _type_parts(ty: Type) -> str | list[_AnyT]:
    """Types are written whole at any depth: they are as small as the program's nesting."""
    t = type(ty)
    if t is TensorType:
        return _tensor_text(ty.shape, ty.dtype)
    if isinstance(ty, TupleType):
        fields = _joined(ty.fields, 0, sys.maxsize)
        return ["(", *fields, ",)" if len(ty.fields) == 1 else ")"]
    if isinstance(ty, FuncType):
        tparams = "[" + ", ".join(p.name_hint for p in ty.type_params) + "]" if ty.type_params else ""
        args = _joined(ty.arg_types, 0, sys.maxsize)
        return [f"fn {tparams}(", *args, ") -> ", (ty.ret_type, 0)]
    if isinstance(ty, RefType):
        return ["ref(", (ty.value, 0), ")"]
    if isinstance(ty, TypeVar):
        return ty.name_hint
    if isinstance(ty, IncompleteType):
        return "_"
    return t.__name__


def _joined(nodes: Sequence[_AnyT], depth: int, most_items: int) -> list[_AnyT]:
    """``nodes`` at ``depth``, separated by commas; past ``most_items`` the rest is ``...``."""
    out: list[_AnyT] = []
    for x in nodes[:most_items]:
        out.append((x, depth))
        out.append(", ")
    if len(nodes) > most_items:
        out.append("...")
        return out
    return out[:-1]


def _tensor_text(shape: tuple, dtype: object) -> str:
    if not shape:
        return str(dtype)
    dims = ", ".join("?" if isinstance(d, Any) else str(d) for d in shape)
    return f"Tensor[({dims}), {dtype}]"


def _attr_text(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"array{tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_attr_text(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)
