"""The Relay-text-like printer: ``mod.astext()``, ``str(expr)``.

The output reads like Relay's text format and is exactly what
:mod:`relaypass.ir.text.parser` reads back: parsing printed text gives a
structurally equal program.  Printing follows Relay's graph normal form:
every call, tuple, projection, ``if``, reference operation and nested
function that is not the result of its block is bound once to a numbered
temporary (``%3 = add(%2, %y);``) and referred to by that name afterwards,
so a shared subexpression is printed once.  Temporaries bound inside a block
(a branch, a function body) are visible only there, so a node used in several
blocks is bound in the innermost block enclosing all its uses (see
:class:`_Placement`); the parser then rebuilds the very same graph.

Nothing recurses along dataflow or let chains: dataflow is expanded with an
explicit stack and let chains are printed in a loop; only syntactic nesting
(functions in functions, branches) recurses.

Which subexpressions are printed in a node's own scope and which open a
block of their own (a function body, the branches of an ``if``) comes from
the node kinds' field declarations (:mod:`relaypass.ir.fields`); only the
syntax of each kind is written here.

Constants: scalars are literals (``1f``, ``2i64``, ``True``), small tensors
are ``const([1, 2, 3, 4], Tensor[(2, 2), int32])`` and the rest live in the
metadata section at the end, as base64 of their ``.npy`` bytes, referred to
as ``meta[relay.Constant][i]``.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
from typing import Any as _AnyT

import numpy as np

from ...gc_pause import gc_paused
from .. import hooks
from ..attrs import Attrs, normalize_attr_value
from ..expr import (
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
from ..fields import Layout, PerKind
from ..module import IRModule
from ..op import REQUIRED, Op
from ..types import (
    Any,
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeKind,
    TypeVar,
)

TEXT_VERSION = "0.0.5"
"""The version line every printed text starts with (Relay's current one)."""

INLINE_CONSTANT_LIMIT = 16
"""Tensors with at most this many elements print inline as ``const(...)``."""

# Literal suffixes of scalar constants, by dtype.  int32 and bool need none.
DTYPE_SUFFIX = {
    "float32": "f", "float64": "f64", "float16": "f16",
    "int32": "", "int64": "i64", "int16": "i16", "int8": "i8",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bool": "",
}

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
DTYPE_RE = re.compile(r"(?:bool|handle|(?:u?int|float|bfloat)[0-9]+(?:x[0-9]+)?)\Z")

# Words a type variable must not be printed as: they mean something else in a type.
RESERVED_TYPE_NAMES = frozenset({"Tensor", "fn", "ref", "_", "type"})

_ATOMIC = frozenset({Var, GlobalVar, Op, Constant})


def astext(node: IRModule | Expr | Type, show_meta_data: bool = True) -> str:
    """The text form of a module, an expression or a type.

    With ``show_meta_data=False`` the metadata section is left out (the
    references to it stay), which keeps large constants out of logs; such
    text no longer parses.
    """
    printer = _Printer(show_meta_data)
    if isinstance(node, IRModule):
        with gc_paused():
            return printer.print_module(node)
    if isinstance(node, Expr):
        with gc_paused():
            return printer.print_expr(node)
    if isinstance(node, Type):
        return type_to_text(node)
    raise TypeError(f"astext expects an IRModule or an expression, not {type(node).__name__}")


def type_to_text(ty: Type) -> str:
    """The text form of a type: ``Tensor[(1, ?), float32]``, ``(T1, T2)``, ``fn (T) -> R``."""
    return _Printer(True).type_text(ty)


def float_literal(value: np.floating) -> str | None:
    """The shortest decimal spelling of ``value`` that parses back to the same bits.

    The parser reads a literal as ``np.asarray(float(text), dtype)``; the
    spelling is checked against exactly that.  ``nan``/``inf`` are spelled as
    words; a NaN with a payload or sign other than numpy's has no spelling
    (None), so the caller keeps it in the metadata section.
    """
    dtype = value.dtype
    as_float = float(value)
    if math.isnan(as_float):
        canonical = np.asarray(np.nan, dtype=dtype)
        return "nan" if canonical.tobytes() == np.asarray(value).tobytes() else None
    if math.isinf(as_float):
        return "inf" if as_float > 0 else "-inf"
    if dtype == np.float64:
        text = repr(as_float)
    else:
        text = str(value)
        if np.asarray(float(text), dtype=dtype).tobytes() != np.asarray(value).tobytes():
            text = repr(as_float)  # exact: every float16/float32 is a float64
    if text.endswith(".0"):
        text = text[:-2]
    return text


def scalar_literal(data: np.ndarray) -> str | None:
    """The literal of a 0-d array (``1f``, ``-2i64``, ``True``), or None if it has none."""
    dtype = data.dtype.name
    suffix = DTYPE_SUFFIX.get(dtype)
    if suffix is None:
        return None
    value = data[()]
    if dtype == "bool":
        return "True" if value else "False"
    if data.dtype.kind == "f":
        text = float_literal(value)
        if text is None:
            return None
        return text + suffix
    return f"{int(value)}{suffix}"


def _element_texts(data: np.ndarray) -> list[str] | None:
    kind = data.dtype.kind
    flat = data.reshape(-1)
    if kind == "b":
        return ["True" if v else "False" for v in flat.tolist()]
    if kind in "iu":
        return [str(v) for v in flat.tolist()]
    texts = []
    for v in flat:
        text = float_literal(v)
        if text is None:
            return None
        texts.append(text)
    return texts


def npy_base64(data: np.ndarray) -> str:
    """``data`` as base64 of its ``.npy`` bytes (never pickled)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(data), allow_pickle=False)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def attr_key_text(key: str) -> str:
    return key if IDENT_RE.match(key) else json.dumps(key)


def _sanitize(name: str) -> str:
    """A name the parser reads back as one identifier (not all digits, no odd characters)."""
    if IDENT_RE.match(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not cleaned or cleaned[0].isdigit():
        cleaned = "v" + cleaned
    return cleaned


class _Names:
    """Hands out distinct printed names: ``x``, ``x_1``, ``x_2``..."""

    __slots__ = ("used", "next_suffix")

    def __init__(self, reserved: frozenset[str] = frozenset()) -> None:
        self.used: set[str] = set(reserved)
        self.next_suffix: dict[str, int] = {}

    def fresh(self, base: str) -> str:
        used = self.used
        if base not in used:
            used.add(base)
            return base
        k = self.next_suffix.get(base, 1)
        name = f"{base}_{k}"
        while name in used:
            k += 1
            name = f"{base}_{k}"
        self.next_suffix[base] = k + 1
        used.add(name)
        return name


class _Printer:
    """One printing of one module or expression: names, temporaries, metadata."""

    def __init__(self, show_meta_data: bool) -> None:
        self.show_meta_data = show_meta_data
        self.var_names: dict[Var, str] = {}
        self.var_table = _Names()
        self.global_names: dict[str, str] = {}
        self.global_table = _Names()
        self.tvar_names: dict[TypeVar, str] = {}
        self.tvar_table = _Names(RESERVED_TYPE_NAMES)
        self.tensor_type_text: dict[TensorType, str] = {}
        self.meta: list[Constant] = []
        self.meta_index: dict[Constant, int] = {}
        self.free_vars: list[Var] | None = None
        # Bound temporaries: node -> "%N", forgotten when the block binding them ends.
        self.memo: dict[Expr, str] = {}
        self.temp = 0
        self.frames: list[_Frame] = []
        self.place: _Placement | None = None

    # --- entry points -----------------------------------------------------
    def print_module(self, mod: IRModule) -> str:
        out = [f'#[version = "{TEXT_VERSION}"]']
        if len(mod.attrs):
            out.append(f"#[module_attrs({self.attrs_text(mod.attrs)})]")
        funcs = mod.functions
        for gv in funcs:
            self.global_name(gv)
        for gv, func in funcs.items():
            if not isinstance(func, Function):
                raise TypeError(f"cannot print a module function of type {type(func).__name__}")
            self.temp = 0
            self.place = _place(func.body)
            out.append(self.function_text(func, f"def {self.global_name(gv)}", "", 0))
        return self.finish(out)

    def print_expr(self, expr: Expr) -> str:
        self.free_vars = []
        self.place = _place(expr)
        lines, result = self.block(expr, "", 0)
        head = [f'#[version = "{TEXT_VERSION}"]']
        for var in self.free_vars:
            head.append(f"free_var {self.var_names[var]}{self.annotation(var)};")
        return self.finish([*head, *lines, result])

    def finish(self, out: list[str]) -> str:
        if self.meta:
            if self.show_meta_data:
                out.append("#[metadata]")
                entries = ",\n".join(f'    "{npy_base64(c.array)}"' for c in self.meta)
                out.append('{\n  "relay.Constant": [\n' + entries + "\n  ]\n}")
            else:
                out.append("// meta data omitted. you can use show_meta_data=True to include meta data")
        return "\n".join(out) + "\n"

    # --- names --------------------------------------------------------------
    def bind_var(self, var: Var) -> str:
        name = "%" + self.var_table.fresh(_sanitize(var.name_hint))
        self.var_names[var] = name
        return name

    def var_ref(self, var: Var) -> str:
        name = self.var_names.get(var)
        if name is None:
            name = self.bind_var(var)
            if self.free_vars is not None:
                self.free_vars.append(var)
        return name

    def global_name(self, gv: GlobalVar) -> str:
        # A module resolves globals by name, so distinct GlobalVar objects of one
        # name are one function.
        name = self.global_names.get(gv.name_hint)
        if name is None:
            name = "@" + self.global_table.fresh(_sanitize(gv.name_hint))
            self.global_names[gv.name_hint] = name
        return name

    def tvar_name(self, tv: TypeVar) -> str:
        name = self.tvar_names.get(tv)
        if name is None:
            base = _sanitize(tv.name_hint)
            if DTYPE_RE.match(base):
                base += "_t"
            name = self.tvar_table.fresh(base)
            self.tvar_names[tv] = name
        return name

    # --- blocks ---------------------------------------------------------------
    def block(self, expr: Expr, ind: str, scope: int, own: bool = False) -> tuple[list[str], str]:
        """The statements and the result of a block whose value is ``expr``.

        Let chains become ``let`` lines in a loop.  Temporaries bound here are
        forgotten when the block ends, because the parser scopes them so.
        ``own`` is set when ``expr`` is a let printed as a block of its own.
        """
        frame = _Frame(scope, ind)
        self.frames.append(frame)
        lines = frame.lines
        memo = self.memo
        braced = self.place.braced if self.place is not None else ()
        node = expr
        while type(node) is Let and node not in memo and (
            node not in braced or (own and node is expr)
        ):
            var = node.var
            # The variable is in scope in its own value, as for a recursive closure.
            name = self.bind_var(var)
            value = self.inline(node.value)
            lines.append(f"{ind}let {name}{self.annotation(var)} = {value};")
            node = node.body
        bound_before = node in memo
        result = self.inline(node)
        ct = node._checked_type
        if ct is not None and type(node) not in _ATOMIC and not bound_before and node not in memo:
            result = f"{result} /* ty={self.type_text(ct)} */"
        self.frames.pop()
        for key in frame.bound:
            del memo[key]
        return lines, result

    def block_text(self, expr: Expr, ind: str, scope: int, own: bool = False) -> str:
        """``{``, the block indented one level deeper than ``ind``, ``}``."""
        inner = ind + "  "
        lines, result = self.block(expr, inner, scope, own)
        lines.append(inner + result)
        return "{\n" + "\n".join(lines) + "\n" + ind + "}"

    def inline(self, expr: Expr) -> str:
        """The text of ``expr`` written in place, its subexpressions bound before it.

        A node used more than once is bound instead and referred to by name.
        """
        t = type(expr)
        if t in _ATOMIC:
            return self.atom(expr)
        name = self.memo.get(expr)
        if name is not None:
            return name
        self.bind_children(expr)
        place = self.place
        if place is not None and place.uses.get(expr, 0) > 1:
            self.bind(expr)
            return self.memo[expr]
        return self.node_text(expr, self.frames[-1].ind)

    def bind_children(self, root: Expr) -> None:
        """Bind every not-yet-bound non-atomic subexpression of ``root``.

        Post-order with an explicit stack, children left to right, so a chain of
        any length prints without recursion.
        """
        memo = self.memo
        atomic = _ATOMIC
        outer = _OUTER
        stack: list[tuple[Expr, bool]] = []
        push = stack.append
        pop = stack.pop
        for kid in reversed(_scope_children(root)):
            if type(kid) not in atomic and kid not in memo:
                push((kid, False))
        while stack:
            node, ready = pop()
            if ready:
                if node not in memo:
                    self.bind(node)
                continue
            if node in memo:
                continue
            push((node, True))
            for kid in reversed(outer[type(node)](node)):
                if type(kid) not in atomic and kid not in memo:
                    push((kid, False))

    def bind(self, node: Expr) -> None:
        """``%N = node;`` in the block the placement chose (the current one by default)."""
        frames = self.frames
        frame = frames[-1]
        if self.place is not None:
            target = self.place.scope_of.get(node, frame.scope)
            if target != frame.scope:
                for outer in reversed(frames):
                    if outer.scope == target:
                        frame = outer
                        break
        text = self.node_text(node, frame.ind)
        name = f"%{self.temp}"
        self.temp += 1
        ct = node._checked_type
        if ct is not None:
            if type(ct) is TensorType:
                ty = self.tensor_type_text.get(ct)
                if ty is None:
                    ty = self.type_text(ct)
            else:
                ty = self.type_text(ct)
            frame.lines.append(f"{frame.ind}{name} = {text} /* ty={ty} */;")
        else:
            frame.lines.append(f"{frame.ind}{name} = {text};")
        self.memo[node] = name
        frame.bound.append(node)

    def sub_scopes(self, node: Expr) -> tuple[int, ...]:
        """The scopes of the blocks inside ``node`` (a body, two branches)."""
        if self.place is None:
            return (0,) * len(_LAYOUTS[type(node)].scopes)
        return self.place.sub[node]

    # --- expressions ------------------------------------------------------------
    def ref(self, expr: Expr) -> str:
        """How a bound or atomic expression is referred to."""
        name = self.memo.get(expr)
        if name is not None:
            return name
        return self.atom(expr)

    def atom(self, expr: Expr) -> str:
        t = type(expr)
        if t is Var:
            return self.var_ref(expr)
        if t is Op:
            return expr.name
        if t is GlobalVar:
            return self.global_name(expr)
        if t is Constant:
            return self.constant_text(expr)
        raise TypeError(f"cannot print {t.__name__}: not a Relay expression")

    def node_text(self, node: Expr, ind: str) -> str:
        """The text of ``node`` whose children are bound, for a line indented by ``ind``."""
        t = type(node)
        ref = self.ref
        if t is Call:
            args = [ref(a) for a in node.args]
            op = node.op
            callee = op.name if type(op) is Op else ref(op)
            attrs = node.attrs
            if attrs is not None and len(attrs):
                text = self.call_attrs_text(op, attrs)
                if text:
                    args.append(text)
            if node.type_args:
                callee += "[" + ", ".join(self.type_text(a) for a in node.type_args) + "]"
            return f"{callee}({', '.join(args)})"
        if t is TupleGetItem:
            return f"{ref(node.tuple_value)}.{node.index}"
        if t is Tuple:
            fields = node.fields
            if len(fields) == 1:
                return f"({ref(fields[0])},)"
            return "(" + ", ".join([ref(f) for f in fields]) + ")"
        if t is Function:
            return self.function_text(node, "fn ", ind, self.sub_scopes(node)[0])
        if t is If:
            then, other = self.sub_scopes(node)
            return (
                f"if ({ref(node.cond)}) {self.block_text(node.true_branch, ind, then)} "
                f"else {self.block_text(node.false_branch, ind, other)}"
            )
        if t is Let:
            return self.block_text(node, ind, self.sub_scopes(node)[0], own=True)
        if t is RefCreate:
            return f"ref({ref(node.value)})"
        if t is RefRead:
            return f"ref_read({ref(node.ref)})"
        if t is RefWrite:
            return f"ref_write({ref(node.ref)}, {ref(node.value)})"
        raise TypeError(f"cannot print {t.__name__}: not a Relay expression")

    def function_text(self, func: Function, prefix: str, ind: str, scope: int) -> str:
        parts: list[str] = []
        tparams = ""
        if func.type_params:
            tparams = "[" + ", ".join(self.type_param_text(tp) for tp in func.type_params) + "]"
        for p in func.params:
            parts.append(self.bind_var(p) + self.annotation(p))
        if len(func.attrs):
            parts.append(self.attrs_text(func.attrs))
        ret = f" -> {self.type_text(func.ret_type)}" if func.ret_type is not None else ""
        return f"{prefix}{tparams}({', '.join(parts)}){ret} {self.block_text(func.body, ind, scope)}"

    def annotation(self, var: Var) -> str:
        ty = var.type_annotation
        return f": {self.type_text(ty)}" if ty is not None else ""

    def type_param_text(self, tv: TypeVar) -> str:
        name = self.tvar_name(tv)
        if tv.kind != TypeKind.Type:
            return f"{name}: {tv.kind.name}"
        return name

    # --- constants ----------------------------------------------------------------
    def constant_text(self, const: Constant) -> str:
        data = const.array
        if data.ndim == 0:
            text = scalar_literal(data)
            if text is not None:
                return text
        elif 0 < data.size <= INLINE_CONSTANT_LIMIT and data.dtype.name in DTYPE_SUFFIX:
            elements = _element_texts(data)
            if elements is not None:
                ty = self.type_text(TensorType(data.shape, data.dtype.name))
                return f"const([{', '.join(elements)}], {ty})"
        index = self.meta_index.get(const)
        if index is None:
            index = len(self.meta)
            self.meta.append(const)
            self.meta_index[const] = index
        return f"meta[relay.Constant][{index}]"

    # --- attributes -------------------------------------------------------------
    def call_attrs_text(self, op: Expr, attrs: Attrs) -> str:
        """Relay prints only the attributes that differ from the operator's defaults."""
        schema = op.attrs_schema if type(op) is Op else None
        if (
            schema is None
            or attrs.type_key != schema.type_key
            or len(attrs) != len(schema.fields)
            or any(k not in schema.fields for k in attrs)
        ):
            return self.attrs_text(attrs)
        parts = []
        for key, field in schema.fields.items():
            value = attrs[key]
            if field.default is not REQUIRED and _same_value(
                value, normalize_attr_value(field.default)
            ):
                continue
            parts.append(f"{attr_key_text(key)}={self.attr_value_text(value)}")
        return ", ".join(parts)

    def attrs_text(self, attrs: Attrs) -> str:
        return ", ".join(
            f"{attr_key_text(k)}={self.attr_value_text(v)}" for k, v in attrs.items()
        )

    def attr_value_text(self, value: _AnyT) -> str:
        if value is None:
            return "None"
        if value is True:
            return "True"
        if value is False:
            return "False"
        if isinstance(value, str):
            return json.dumps(value)
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            # Relay spells float attributes with an ``f``; the digits are the
            # shortest that give back the same double.
            if math.isnan(value):
                return "nanf"
            if math.isinf(value):
                return "inff" if value > 0 else "-inff"
            text = repr(value)
            return (text[:-2] if text.endswith(".0") else text) + "f"
        if isinstance(value, tuple):
            return "[" + ", ".join(self.attr_value_text(v) for v in value) + "]"
        if isinstance(value, Any):
            return "?"
        if isinstance(value, Attrs):
            return "{" + self.attrs_text(value) + "}"
        if isinstance(value, Type):
            return f"type({self.type_text(value)})"
        return f"<unprintable {type(value).__name__}>"

    # --- types ----------------------------------------------------------------------
    def type_text(self, ty: Type) -> str:
        t = type(ty)
        if t is TensorType:
            cache = self.tensor_type_text
            text = cache.get(ty)
            if text is None:
                shape = ty.shape
                if not shape:
                    text = ty.dtype
                else:
                    dims = ", ".join("?" if isinstance(d, Any) else str(d) for d in shape)
                    text = f"Tensor[({dims}), {ty.dtype}]"
                cache[ty] = text
            return text
        if isinstance(ty, TupleType):
            fields = ty.fields
            if len(fields) == 1:
                return f"({self.type_text(fields[0])},)"
            return "(" + ", ".join(self.type_text(f) for f in fields) + ")"
        if isinstance(ty, FuncType):
            tparams = ""
            if ty.type_params:
                tparams = "[" + ", ".join(self.type_param_text(tp) for tp in ty.type_params) + "]"
            args = ", ".join(self.type_text(a) for a in ty.arg_types)
            return f"fn {tparams}({args}) -> {self.type_text(ty.ret_type)}"
        if isinstance(ty, RefType):
            return f"ref({self.type_text(ty.value)})"
        if isinstance(ty, TypeVar):
            return self.tvar_name(ty)
        if isinstance(ty, IncompleteType):
            return "_"
        raise TypeError(f"cannot print type {t.__name__}")


class _Frame:
    """An open block: its scope, its statements so far, its indent, the nodes it bound."""

    __slots__ = ("scope", "lines", "ind", "bound")

    def __init__(self, scope: int, ind: str) -> None:
        self.scope = scope
        self.lines: list[str] = []
        self.ind = ind
        self.bound: list[Expr] = []


class _Placement:
    """Where each node of a program with nested blocks is bound.

    Blocks (function bodies, branches, lets written as ``{ ... }``) are
    numbered scopes in a tree.  A node used in several blocks (a function
    shared by both branches of an ``if``, a value used inside a closure and
    around it) is bound once, in the innermost block that encloses all its
    uses, so the parser rebuilds the same graph; printing it in each block
    would duplicate the variables it binds.  ``uses`` counts a node's parents:
    a node used more than once is never written in place.  ``braced`` holds
    the lets printed as a block of their own rather than as statements.
    """

    __slots__ = ("scope_of", "uses", "sub", "braced")

    def __init__(self) -> None:
        self.scope_of: dict[Expr, int] = {}
        self.uses: dict[Expr, int] = {}
        self.sub: dict[Expr, tuple[int, ...]] = {}
        self.braced: set[Let] = set()


def _place(root: Expr) -> _Placement | None:
    """The placement of ``root``'s nodes, or None when it has no nested blocks.

    Two passes, both with explicit stacks: a depth-first post-order of the
    graph, then a walk in reverse post-order (parents before children) that
    gives each node the lowest common ancestor of the scopes it is used in.
    """
    atomic = _ATOMIC
    layouts = _LAYOUTS
    order: list[Expr] = []
    seen: set[Expr] = set()
    nested = False
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        layout = layouts[type(node)]
        kids = layout.subterms(node)
        if type(node) is Let:
            # A chain of lets prints flat: only a let in a let's value nests.
            nested = nested or type(node.value) is Let
        elif layout.scopes:
            nested = True
        elif not nested:
            nested = Let in map(type, kids)
        for kid in reversed(kids):
            if type(kid) not in atomic and kid not in seen:
                stack.append((kid, False))
    if not nested:
        return None

    place = _Placement()
    scope_of, uses, sub, braced = place.scope_of, place.uses, place.sub, place.braced
    parent = [-1]
    depth = [0]
    not_chain: set[Expr] = set()

    def new_scope(outer: int) -> int:
        parent.append(outer)
        depth.append(depth[outer] + 1)
        return len(parent) - 1

    def use(kid: Expr, scope: int, chain: bool) -> None:
        if type(kid) in atomic:
            return
        uses[kid] = uses.get(kid, 0) + 1
        if not chain:
            not_chain.add(kid)
        have = scope_of.get(kid)
        if have is None:
            scope_of[kid] = scope
            return
        a, b = have, scope
        while depth[a] > depth[b]:
            a = parent[a]
        while depth[b] > depth[a]:
            b = parent[b]
        while a != b:
            a, b = parent[a], parent[b]
        scope_of[kid] = a

    scope_of[root] = 0
    for node in reversed(order):
        scope = scope_of[node]
        if type(node) is Let:
            # Printed as statements of the enclosing block, unless braced as a block of its own.
            if node in not_chain or uses.get(node, 0) > 1:
                braced.add(node)
                scope = new_scope(scope)
                sub[node] = (scope,)
            use(node.value, scope, False)
            use(node.body, scope, True)
            continue
        layout = layouts[type(node)]
        for kid in layout.outer(node):
            use(kid, scope, False)
        if layout.scopes:
            # A body or a branch: a block of its own, whose result ends a chain.
            inner = sub[node] = tuple(new_scope(scope) for _ in layout.scopes)
            for block, kids_of in zip(inner, layout.scopes):
                for kid in kids_of(node):
                    use(kid, block, True)
    return place


def _same_value(a: _AnyT, b: _AnyT) -> bool:
    """Equal and of the same kind, so ``1``, ``1.0`` and ``True`` stay distinct."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def _expr_layout(cls: type) -> Layout:
    layout = getattr(cls, "_layout_", None)
    if layout is None or not issubclass(cls, Expr):
        raise TypeError(f"cannot print {cls.__name__}: not a Relay expression")
    return layout


_LAYOUTS = PerKind(_expr_layout)
"""The field layout of each expression class, checked once per class."""
_OUTER = PerKind(lambda cls: _LAYOUTS[cls].outer)
"""``_OUTER[type(node)](node)``: :func:`_scope_children` without the call."""


def _scope_children(node: Expr) -> tuple[Expr, ...]:
    """The subexpressions printed in the same scope as ``node`` (not bodies or branches).

    A call's callee comes first.  What a function or a let holds is in the
    scope of its variables, and a branch is a block: neither is listed.
    """
    return _OUTER[type(node)](node)


hooks.astext = astext
hooks.type_to_text = type_to_text
