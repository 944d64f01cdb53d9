"""Relay's text printer: ``mod.astext()``, ``expr.astext()``, ``str(mod)``, ``str(expr)``.

The output is TVM v0.18's text format, as TVM's printer writes it, and what
:mod:`relaypass.ir.text.parser` reads back (a structurally equal program).
TVM's rules, in short:

* A variable, constant, operator or global is always written in place.  Any
  other node is written in place only where a block ends (a function body, a
  branch, the body of a ``let`` chain) or as a ``let`` value, and only if it
  has at most one parent in the program; everywhere else it is bound to a
  numbered temporary first (``%3 = add(%2, %y);``).  Temporaries are numbered
  in one sequence for the whole text, variables named ``%x``, ``%x1``,
  ``%x2``... in the order they are met.
* A node's text is made once its children's are: a call's callee first, then
  its arguments, depth first; the call then binds its arguments in order,
  then its callee.  A ``let`` written as an operand is bound as
  ``%0 = (\\n  let ...\\n);``.
* Each constant, call, variable, function, tuple and projection whose type is
  known gets a ``/* ty=... */`` comment the first time it is written (or
  whatever ``annotate`` returns for it).
* Free variables are declared (``free_var %x: float32;``) where first used;
  scalars of int16/32/64, float16/32/64 and bool are literals (``1f``,
  ``2i64``), every other constant is ``meta[relay.Constant][i]`` of the
  metadata section (:mod:`relaypass.ir.text.metadata`).

Where TVM's output would not parse back to the same program, this printer
writes what does, and otherwise nothing different: a node used in several
blocks is bound in the innermost block enclosing all its uses (TVM binds it
where it is first met, out of reach of the others); a ``let`` written as a
``let`` value is put in parentheses; an unparseable name is spelled with
``_``; a type variable whose name is taken in its scope gets a suffix; and
type arguments, non-default type-variable kinds and module attributes,
which TVM drops, are written.  Spans are not written (TVM adds them to the
type comments), so printing what was parsed gives back the same text.

Nothing recurses along dataflow or ``let`` chains: dataflow is expanded with
an explicit stack and ``let`` chains are printed in a loop; only syntactic
nesting (functions in functions, branches) recurses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any as _AnyT

import numpy as np

from ...gc_pause import gc_paused
from .. import hooks
from ..adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
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
from ..shape_expr import dim_text
from ..types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    IntImm,
    RefType,
    SizeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeKind,
    TypeVar,
)
from .metadata import MetaTable
from .tokenizer import (
    DTYPE_RE,
    DTYPE_SUFFIX,
    IDENT_RE,
    RESERVED_TYPE_NAMES,
    SIMPLE_SCALAR_DTYPES,
    SIZE_RESERVED,
    TEXT_VERSION,
    escape_string,
)

__all__ = ["astext", "float_literal", "pretty_print", "scalar_literal", "type_to_text"]

METADATA_OMITTED = (
    "/* For debugging purposes the metadata section has been omitted.\n"
    " * If you would like to see the full metadata section you can set the \n"
    " * option to `True` when invoking `astext`. \n"
    " */"
)
"""What ``astext(show_meta_data=False)`` writes instead of the metadata section (TVM's words)."""

_ATOMIC = frozenset({Var, GlobalVar, Op, Constant, Constructor})
_ANNOTATED = frozenset({Constant, Call, Var, Function, Tuple, TupleGetItem})
"""The kinds TVM writes a ``/* ty=... */`` comment for."""

#: ``annotate(node)``: the text written after a node instead of its type comment.
Annotate = Callable[[Expr], str]


def astext(
    node: IRModule | Expr | Type, show_meta_data: bool = True, annotate: Annotate | None = None
) -> str:
    """The text form of a module, an expression or a type (TVM's ``astext``).

    Starts with the version line.  With ``show_meta_data=False`` the metadata
    section is left out (the references to it stay, and a comment says so),
    which keeps large constants out of logs; such text no longer parses.
    """
    if isinstance(node, Type):
        return type_to_text(node)
    return _print(node, show_meta_data, annotate, header=True, warn=True)


def pretty_print(node: IRModule | Expr | Type) -> str:
    """``str(node)``: the text without the version line and the metadata section (TVM's).

    When constants were left out, one comment line says how many and how to see
    them, so that a printout in a log is not mistaken for a complete program.
    """
    if isinstance(node, Type):
        return type_to_text(node)
    return _print(node, False, None, header=False, warn=False)


def _print(
    node: IRModule | Expr, show_meta_data: bool, annotate: Annotate | None, header: bool, warn: bool
) -> str:
    printer = _Printer(annotate)
    with gc_paused():
        if isinstance(node, IRModule):
            body = printer.module_text(node)
        elif isinstance(node, Expr):
            body = printer.expr_text(node)
        else:
            raise TypeError(f"astext expects an IRModule or an expression, not {type(node).__name__}")
    out = f'#[version = "{TEXT_VERSION}"]\n' + body if header else body
    if printer.meta:
        out += "\n"
        if show_meta_data:
            out += "#[metadata]\n" + printer.meta.section()
        elif warn:
            out += METADATA_OMITTED
        else:
            out += _omitted_note(printer.meta)
    return out


def _omitted_note(meta: MetaTable) -> str:
    """The one line ``str()`` ends with when it left the metadata section out."""
    n = len(meta.constants)
    return (f"/* {n} constant{'' if n == 1 else 's'} (meta[relay.Constant]) omitted; "
            "astext(show_meta_data=True) or relaypass print --show-meta shows them */\n")


def type_to_text(ty: Type) -> str:
    """The text form of a type: ``Tensor[(1, ?), float32]``, ``(T1, T2)``, ``fn (T) -> R``."""
    return _Printer(None).type_text(ty)


# --- literals -------------------------------------------------------------------


def float_literal(value: np.floating) -> str | None:
    """``value`` as TVM writes it (C++'s ``%g``), with more digits if that is not exact.

    The parser reads a literal as ``np.asarray(float(text), dtype)``; the
    spelling is checked against exactly that, so constants travel bit for
    bit.  ``nan``/``inf`` are spelled as words; a NaN with a payload or sign
    other than numpy's has no spelling (None), so the caller keeps it in the
    metadata section.
    """
    dtype = value.dtype
    as_float = float(value)
    if math.isnan(as_float):
        canonical = np.asarray(np.nan, dtype=dtype)
        return "nan" if canonical.tobytes() == np.asarray(value).tobytes() else None
    if math.isinf(as_float):
        return "inf" if as_float > 0 else "-inf"
    want = np.asarray(value).tobytes()
    largest = float(np.finfo(dtype).max)  # the parser refuses a literal beyond it, as TVM's does
    for digits in range(6, 18):
        text = f"{as_float:.{digits}g}"
        if np.asarray(float(text), dtype=dtype).tobytes() == want and abs(float(text)) <= largest:
            return text
    return repr(as_float)


def _double_text(value: float) -> str:
    """A double attribute as TVM writes it (``%g``), with more digits if that is not exact."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    for digits in range(6, 18):
        text = f"{value:.{digits}g}"
        if float(text) == value:
            return text
    return repr(value)


def scalar_literal(data: np.ndarray) -> str | None:
    """The literal of a 0-d array (``1f``, ``-2i64``, ``True``), or None if TVM has none for it.

    TVM writes scalars of int16, int32, int64, float16, float32, float64 and
    bool as literals; anything else goes to the metadata section.
    """
    dtype = data.dtype.name
    if dtype not in SIMPLE_SCALAR_DTYPES:
        return None
    value = data[()]
    if dtype == "bool":
        return "True" if value else "False"
    if data.dtype.kind == "f":
        text = float_literal(value)
        return None if text is None else text + DTYPE_SUFFIX[dtype]
    return f"{int(value)}{DTYPE_SUFFIX[dtype]}"


# --- names ------------------------------------------------------------------------


def _local_name(hint: str) -> str:
    """How a variable named ``hint`` is spelled after ``%`` (before making it unique).

    TVM puts ``v`` before a name that does not start with a letter; a name the
    tokenizer cannot read has its other characters replaced by ``_``.
    """
    name = hint if hint and ("a" <= hint[0] <= "z" or "A" <= hint[0] <= "Z") else "v" + hint
    if IDENT_RE.match(name):
        return name
    name = re.sub(r"[^A-Za-z0-9_./]", "_", name)
    if IDENT_RE.match(name):
        return name
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _plain_name(hint: str) -> str:
    """A global's or a type variable's name, made readable by the tokenizer if it is not."""
    if IDENT_RE.match(hint):
        return hint
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    if not name or not ("a" <= name[0] <= "z" or "A" <= name[0] <= "Z" or name[0] == "_"):
        name = "v" + name
    return name


def _type_var_base(hint: str) -> str:
    """A type variable's name; one that already means a type (``float32``, ``Tensor``) is altered."""
    name = _plain_name(hint).replace(".", "_")
    if DTYPE_RE.match(name):
        return name + "_t"
    if name in RESERVED_TYPE_NAMES:
        return name + "_1"
    return name


def _same_value(a: _AnyT, b: _AnyT) -> bool:
    """Equal and of the same kind, so ``1``, ``1.0`` and ``True`` stay distinct."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


# --- layouts ------------------------------------------------------------------------


def _expr_layout(cls: type) -> Layout:
    layout = getattr(cls, "_layout_", None)
    if layout is None or not issubclass(cls, Expr):
        raise TypeError(f"cannot print {cls.__name__}: not a Relay expression")
    return layout


_LAYOUTS = PerKind(_expr_layout)
"""The field layout of each expression class, checked once per class."""
_OUTER = PerKind(lambda cls: _LAYOUTS[cls].outer)
"""``_OUTER[type(node)](node)``: the children written in the node's own block (a call's
callee first, then its arguments; not a body or a branch, not a ``let``'s parts)."""
_SUBTERMS = PerKind(lambda cls: _LAYOUTS[cls].subterms)
"""``_SUBTERMS[type(node)](node)``: every child but the variables the node binds."""
_OPENS_BLOCKS = PerKind(lambda cls: _LAYOUTS[cls].opens_scopes)
"""Whether a kind opens blocks of its own (a function's body, an if's branches, a let, the
clauses of a match)."""

_MARK = object()


# --- where nodes are written ------------------------------------------------------


class _Plan:
    """What printing one block (with blocks nested in it) needs to know beforehand.

    ``indeg``: each node's parents, counted per use (TVM's dependency graph):
    a node with at most one is written in place where it may be.  Blocks (a
    function body, each branch of an ``if``, a ``let`` chain in parentheses)
    are numbered scopes in a tree (``depth``); ``scope_of`` is the innermost
    block enclosing every use of a node, where it is bound at the latest;
    ``sub`` the blocks a node opens; ``chain`` the block the bindings of each
    ``let`` go to, and ``absorbed`` the ``let``s written as the next bindings
    of the ``let`` whose body they are.
    """

    __slots__ = ("indeg", "scope_of", "depth", "sub", "chain", "absorbed")

    def __init__(self) -> None:
        self.indeg: dict[Expr, int] = {}
        self.scope_of: dict[Expr, int] = {}
        self.depth: list[int] = [0]
        self.sub: dict[Expr, tuple[int, ...]] = {}
        self.chain: dict[Let, int] = {}
        self.absorbed: set[Let] = set()


def _has_blocks(root: Expr) -> bool:
    """Whether ``root`` holds a node that opens a block (a let, a function, an if)."""
    atomic = _ATOMIC
    subterms = _SUBTERMS
    opens = _OPENS_BLOCKS
    seen = {root}
    stack = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        t = type(node)
        if opens[t]:
            return True
        for kid in subterms[t](node):
            if type(kid) not in atomic and kid not in seen:
                seen.add(kid)
                push(kid)
    return False


def _plan(root: Expr) -> _Plan | None:
    """The plan for the block whose result is ``root``, or None when it has no inner blocks.

    Two passes, both with explicit stacks: a depth-first post-order of the
    graph that counts parents, then a walk in reverse post-order (parents
    before children) that gives each node the innermost block enclosing its
    uses.
    """
    if not _has_blocks(root):
        return None
    atomic = _ATOMIC
    subterms = _SUBTERMS
    plan = _Plan()
    indeg = plan.indeg
    order: list[Expr] = []
    seen: set[Expr] = set()
    stack: list[_AnyT] = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if node is _MARK:
            order.append(pop())
            continue
        if node in seen:
            continue
        seen.add(node)
        push(node)
        push(_MARK)
        for kid in subterms[type(node)](node):
            if type(kid) in atomic:
                continue
            indeg[kid] = indeg.get(kid, 0) + 1
            if kid not in seen:
                push(kid)

    scope_of, depth, sub, chain, absorbed = (
        plan.scope_of, plan.depth, plan.sub, plan.chain, plan.absorbed
    )
    parent = [-1]
    results = {root}

    def new_scope(outer: int) -> int:
        parent.append(outer)
        depth.append(depth[outer] + 1)
        return len(parent) - 1

    def use(kid: Expr, scope: int) -> None:
        if type(kid) in atomic:
            return
        have = scope_of.get(kid)
        if have is None or have == scope:
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
    layouts = _LAYOUTS
    for node in reversed(order):
        scope = scope_of[node]
        t = type(node)
        if t is Let:
            cs = chain.get(node)
            if cs is None:
                # A chain written in place ends its block; any other is an operand in parentheses.
                cs = scope if indeg.get(node, 0) <= 1 and node in results else new_scope(scope)
                chain[node] = cs
                if cs != scope:
                    sub[node] = (cs,)
            use(node.value, cs)
            body = node.body
            if type(body) is Let and indeg.get(body, 0) == 1:
                chain[body] = cs
                scope_of[body] = cs
                absorbed.add(body)
            else:
                use(body, cs)
                results.add(body)
        else:
            layout = layouts[t]
            for kid in layout.outer(node):
                use(kid, scope)
            if layout.opens_scopes:
                # A function body, each branch, each clause: a block of its own, which its kid ends.
                groups = layout.scopes_of(node)
                inner = sub[node] = tuple(new_scope(scope) for _ in groups)
                for block, kids in zip(inner, groups):
                    for kid in kids:
                        use(kid, block)
                        results.add(kid)
    return plan


class _Frame:
    """An open block: its scope, its statements so far, the nodes bound in it."""

    __slots__ = ("scope", "lines", "bound")

    def __init__(self, scope: int) -> None:
        self.scope = scope
        self.lines: list[str] = []
        self.bound: list[Expr] = []


# --- the printer --------------------------------------------------------------------


class _Printer:
    """One printing of one module or expression: names, temporaries, metadata."""

    def __init__(self, annotate: Annotate | None) -> None:
        self.annotate = annotate
        # TVM's memo: the name of each variable and bound node, the text of the others.
        self.memo: dict[Expr, str] = {}
        # The nodes bound to a temporary (and the variables already used).
        self.bound: set[Expr] = set()
        self.info_done: set[Expr] = set()
        # The declaration of each free variable, written where it is first used.
        self.free_decl: dict[Var, str] = {}
        # Whether free variables show their types: the printed expression is typed.
        self.free_vars_typed = True
        self.name_count: dict[str, int] = {}
        self.temp = 0
        self.meta = MetaTable()
        self.global_names: dict[str, str] = {}
        self.global_taken: set[str] = set()
        self.tensor_type_text: dict[TensorType, str] = {}
        # Size variables' names: one per variable, distinct within the printing.
        self.size_var_names: dict[SizeVar, str] = {}
        self.size_names_taken: set[str] = set()
        self.tvar_names: dict[TypeVar, str] = {}
        self.tvar_scope: dict[str, TypeVar] = {}
        self.frames: list[_Frame] = []
        self.plan: _Plan | None = None
        self.leaf: dict[type, Callable[[_AnyT], str]] = {
            Call: self.call_text,
            Var: self.free_var_text,
            Constant: self.constant_text,
            Op: self.op_text,
            GlobalVar: self.global_text,
            Tuple: self.tuple_text,
            TupleGetItem: self.projection_text,
            Function: self.function_text,
            If: self.if_text,
            Let: self.let_text,
            RefCreate: self.ref_create_text,
            RefRead: self.ref_read_text,
            RefWrite: self.ref_write_text,
            Constructor: self.constructor_text,
            Match: self.match_text,
        }

    # --- modules and expressions ---------------------------------------------
    def module_text(self, mod: IRModule) -> str:
        out = []
        if len(mod.attrs):
            out.append(f"#[module_attrs({self.attrs_text(mod.attrs)})]\n")
        # Type definitions first, then the functions, each in alphabetical order, one blank
        # line apart (TVM prints functions so; its type definitions in the order of a hash map).
        types = sorted(mod.type_definitions.values(), key=lambda data: data.header.name_hint)
        defs = [self.type_data_text(data) + "\n" for data in types]
        funcs = sorted(mod.functions.items(), key=lambda item: item[0].name_hint)
        for gv, func in funcs:
            if not isinstance(func, Function):
                raise TypeError(f"cannot print a module function of type {type(func).__name__}")
            self.plan = _plan(func.body)
            defs.append(self.func_text(f"def {self.global_name(gv)}", func, 0) + "\n")
        out.append("\n".join(defs))
        return "".join(out)

    def expr_text(self, expr: Expr) -> str:
        # A variable printed alone has no binder to tell: it shows no type comment.
        self.free_vars_typed = type(expr) is not Var and expr._checked_type is not None
        if type(expr) is Function:
            self.plan = _plan(expr.body)
            return self.func_text("fn ", expr, 0) + self.info(expr)
        self.plan = _plan(expr)
        return self.scope_text(expr, 0)

    # --- blocks ------------------------------------------------------------------
    def scope_text(self, node: Expr, scope: int) -> str:
        """The statements of a block, then its result ``node`` (TVM's ``PrintScope``)."""
        frame = _Frame(scope)
        self.frames.append(frame)
        result = self.print_expr(node, True)
        self.frames.pop()
        self.forget(frame)
        lines = frame.lines
        if not lines:
            return result
        lines.append(result)
        return "\n".join(lines)

    def body_text(self, node: Expr, scope: int) -> str:
        """``{``, the block indented two spaces, ``}``."""
        return "{\n  " + self.scope_text(node, scope).replace("\n", "\n  ") + "\n}"

    def forget(self, frame: _Frame) -> None:
        """The temporaries of a block that ends are out of reach: forget them."""
        memo, bound = self.memo, self.bound
        for node in frame.bound:
            memo.pop(node, None)
            bound.discard(node)

    # --- expressions ----------------------------------------------------------------
    def print_expr(self, e: Expr, try_inline: bool, let_value: bool = False) -> str:
        """How ``e`` is written where it is used (TVM's ``PrintExpr``).

        ``try_inline``: where a block ends or as a ``let`` value, where a node
        with at most one parent is written in place; elsewhere it is bound.
        """
        t = type(e)
        memo = self.memo
        if t is Var:
            name = memo.get(e)
            if name is None:
                self.visit_leaf(e)
                name = memo[e]
            if e not in self.bound:
                self.bound.add(e)
                decl = self.free_decl.get(e)
                if decl is not None:
                    self.frames[-1].lines.append(f"free_var {decl};")
            return name
        if t in _ATOMIC:
            text = memo.get(e)
            if text is None:
                self.visit_leaf(e)
                text = memo[e]
            info = self.info(e)
            if info:
                text += info
                memo[e] = text
            return text
        inline = try_inline and (self.plan is None or self.plan.indeg.get(e, 0) <= 1)
        if t is Let and (not inline or let_value):
            text = "(\n  " + self.visit(e).replace("\n", "\n  ") + "\n)"
        else:
            text = self.visit(e)
        if self.annotate is not None or e._checked_type is not None:
            text += self.info(e)
        if inline:
            memo[e] = text
            return text
        if e in self.bound:
            return memo[e]
        return self.bind(e, text)

    def arg(self, e: Expr) -> str:
        """How an operand is written: bound unless it is a variable, constant, operator or global.

        ``print_expr(e, False)``, with shortcuts for the common cases.
        """
        t = type(e)
        if t is Var:
            name = self.memo.get(e)
            if name is not None and e in self.bound:
                return name
        elif t is Op:
            if self.annotate is None:
                return e.name
        elif e in self.bound:
            return self.memo[e]
        return self.print_expr(e, False)

    def bind(self, e: Expr, text: str) -> str:
        """``%N = text;`` in the current block, or in the innermost one enclosing all uses of ``e``."""
        name = f"%{self.temp}"
        self.temp += 1
        frame = self.frames[-1]
        plan = self.plan
        if plan is not None:
            frames = self.frames
            target = plan.scope_of.get(e)
            if target is not None and plan.depth[target] < plan.depth[frame.scope]:
                for outer in reversed(frames):
                    if outer.scope == target:
                        frame = outer
                        break
        frame.lines.append(f"{name} = {text};")
        frame.bound.append(e)
        self.memo[e] = name
        self.bound.add(e)
        return name

    def info(self, e: Expr) -> str:
        """The comment written after ``e`` the first time: its type, or ``annotate(e)``."""
        annotate = self.annotate
        if annotate is None:
            ct = e._checked_type
            if ct is None or type(e) not in _ANNOTATED or e in self.info_done:
                return ""
            self.info_done.add(e)
            return f" /* ty={self.type_text(ct)} */"
        if e in self.info_done:
            return ""
        self.info_done.add(e)
        return annotate(e) or ""

    def visit(self, e: Expr) -> str:
        """The text of ``e``, made after its children's (TVM's ``ExpandDataflow``).

        Depth first with an explicit stack, children in order (a call's
        callee, then its arguments), so a chain of any length is visited
        without recursion.
        """
        memo = self.memo
        text = memo.get(e)
        if text is not None:
            return text
        outer = _OUTER
        visit_leaf = self.visit_leaf
        stack: list[_AnyT] = [e]
        push = stack.append
        pop = stack.pop
        call_text = self.call_text
        while stack:
            node = pop()
            if node is _MARK:
                node = pop()
                if node not in memo:
                    if type(node) is Call:
                        memo[node] = call_text(node)
                    else:
                        visit_leaf(node)
                continue
            if node in memo:
                continue
            push(node)
            push(_MARK)
            kids = outer[type(node)](node)
            for i in range(len(kids) - 1, -1, -1):
                kid = kids[i]
                if kid not in memo:
                    push(kid)
        return memo[e]

    def visit_leaf(self, node: Expr) -> None:
        make = self.leaf.get(type(node))
        if make is None:
            raise TypeError(f"cannot print {type(node).__name__}: not a Relay expression")
        text = make(node)
        if node not in self.memo:
            self.memo[node] = text

    # --- variables -------------------------------------------------------------------
    def alloc_var(self, var: Var, typed: bool) -> str:
        """A new name for ``var`` (``%x``, ``%x1``...) with its annotation and type comment.

        ``typed``: whether what binds ``var`` (its function, its let, the
        printed expression for a free variable) was typed.  A variable with a
        complete annotation has a ``checked_type`` from the start; as in TVM,
        its comment shows only once type inference has run over its binder.
        """
        prefix = "%" + _local_name(var.name_hint)
        counts = self.name_count
        k = counts.get(prefix)
        if k is not None:
            while True:
                k += 1
                candidate = f"{prefix}{k}"
                if candidate not in counts:
                    break
            counts[prefix] = k
            prefix = candidate
        counts[prefix] = 0
        self.memo[var] = prefix
        text = prefix
        ty = var.type_annotation
        if ty is not None:
            text += ": " + self.type_text(ty)
        if self.annotate is not None:
            text += self.info(var)
        elif not typed:
            self.info_done.add(var)
        elif var._checked_type is not None:
            text += self.info(var)
        return text

    def free_var_text(self, var: Var) -> str:
        decl = self.alloc_var(var, self.free_vars_typed)
        self.free_decl[var] = decl
        return decl

    def global_name(self, gv: GlobalVar) -> str:
        # A module resolves globals by name, so GlobalVar objects of one name are one function.
        hint = gv.name_hint
        name = self.global_names.get(hint)
        if name is None:
            name = _plain_name(hint)
            if name != hint:
                base, k = name, 0
                while name in self.global_taken:
                    k += 1
                    name = f"{base}_{k}"
            self.global_taken.add(name)
            name = self.global_names[hint] = "@" + name
        return name

    # --- one text per kind ---------------------------------------------------------------
    def constant_text(self, const: Constant) -> str:
        data = const.array
        if data.ndim == 0:
            text = scalar_literal(data)
            if text is not None:
                return text
        return self.meta.reference(const)

    def op_text(self, op: Op) -> str:
        return op.name

    def global_text(self, gv: GlobalVar) -> str:
        return self.global_name(gv)

    def call_text(self, call: Call) -> str:
        # The arguments are bound before the callee, which stays next to its call.
        memo, bound = self.memo, self.bound
        args = []
        for a in call.args:
            t = type(a)
            if t is Var:
                name = memo.get(a)
                if name is None or a not in bound:
                    name = self.print_expr(a, False)
            elif a in bound:
                name = memo[a]
            elif t in _ATOMIC or t is Let or self.annotate is not None:
                name = self.print_expr(a, False)
            else:
                # An operand visited before its call and not bound yet: bind it here.
                text = memo.get(a)
                if text is None:
                    name = self.print_expr(a, False)
                else:
                    if a._checked_type is not None:
                        text += self.info(a)
                    name = self.bind(a, text)
            args.append(name)
        attrs = call.attrs
        op = call.op
        if attrs is not None:
            if type(op) is Op:
                if len(attrs):
                    text = self.call_attrs_text(op, attrs)
                    if text:
                        args.append(text)
            else:
                args.extend(self.generic_attr_texts(attrs))
                args.append(f"attrs_type_key={escape_string(attrs.type_key)}")
        callee = op.name if type(op) is Op and self.annotate is None else self.arg(op)
        if call.type_args and type(op) is not Op:  # an operator's are its arguments' types
            callee += "[" + ", ".join(self.type_text(a) for a in call.type_args) + "]"
        elif type(op) is Constructor and not op.inputs and not args:
            return callee  # as TVM: a constructor without fields is called by its name alone
        return f"{callee}({', '.join(args)})"

    def tuple_text(self, tup: Tuple) -> str:
        fields = tup.fields
        if len(fields) == 1:
            return f"({self.arg(fields[0])},)"
        arg = self.arg
        return "(" + ", ".join([arg(f) for f in fields]) + ")"

    def projection_text(self, item: TupleGetItem) -> str:
        return f"{self.arg(item.tuple_value)}.{item.index}"

    def function_text(self, func: Function) -> str:
        plan = self.plan
        return self.func_text("fn ", func, plan.sub[func][0] if plan is not None else 0)

    def if_text(self, node: If) -> str:
        cond = self.arg(node.cond)
        plan = self.plan
        then, other = plan.sub[node] if plan is not None else (0, 0)
        return (
            f"if ({cond}) {self.body_text(node.true_branch, then)} "
            f"else {self.body_text(node.false_branch, other)}"
        )

    def let_text(self, let: Let) -> str:
        """A ``let`` chain: its bindings in a loop, then its body, one block.

        As in TVM, what the first value binds goes before the chain (outside
        its parentheses when it has them).
        """
        plan = self.plan
        cs = plan.chain[let]
        frames = self.frames
        frame = None
        if frames[-1].scope != plan.scope_of.get(let, cs):
            # Written away from its own block: keep everything it binds inside.
            frame = _Frame(cs)
            frames.append(frame)
        absorbed = plan.absorbed
        node = let
        while True:
            name = self.alloc_var(node.var, node._checked_type is not None)
            value = self.print_expr(node.value, True, True)
            if frame is None:
                frame = _Frame(cs)
                frames.append(frame)
            frame.lines.append(f"let {name} = {value};")
            body = node.body
            if type(body) is Let and body in absorbed:
                node = body
                continue
            break
        result = self.print_expr(body, True)
        frames.pop()
        self.forget(frame)
        frame.lines.append(result)
        return "\n".join(frame.lines)

    def constructor_text(self, ctor: Constructor) -> str:
        return _plain_name(ctor.name_hint)

    def match_text(self, node: Match) -> str:
        """``match (data) {`` then one ``pattern => { body },`` per clause, then ``}``."""
        data = self.arg(node.data)
        blocks = self.plan.sub[node]  # a match opens blocks: the printed expression has a plan
        typed = node._checked_type is not None
        lines = []
        for pattern, body, block in zip(node.patterns, node.bodies, blocks):
            lhs = self.pattern_text(pattern, typed)
            lines.append(f"{lhs} => {self.body_text(body, block)},")
        head = "match" if node.complete else "match?"
        if not lines:
            return f"{head} ({data}) {{\n}}"
        inner = "\n".join(lines).replace("\n", "\n  ")
        return f"{head} ({data}) {{\n  {inner}\n}}"

    def pattern_text(self, pattern: Pattern, typed: bool) -> str:
        """A pattern; its variables get their names (and annotations) here, as binders."""
        t = type(pattern)
        if t is PatternWildcard:
            return "_"
        if t is PatternVar:
            return self.alloc_var(pattern.var, typed)
        inner = ", ".join(self.pattern_text(p, typed) for p in pattern.patterns)
        if t is PatternTuple:
            return f"({inner},)" if len(pattern.patterns) == 1 else f"({inner})"
        if t is PatternConstructor:
            name = _plain_name(pattern.constructor.name_hint)
            return f"{name}({inner})" if pattern.patterns else name
        raise TypeError(f"cannot print pattern {t.__name__}")

    def type_data_text(self, data: TypeData) -> str:
        """``type Name[params] {`` then one ``Ctor(inputs),`` per constructor, then ``}``."""
        saved = self.bind_type_params(data.type_vars)
        head = "type " + self.type_text(data.header)
        if data.type_vars:
            head += "[" + ", ".join(self.type_param_text(tv) for tv in data.type_vars) + "]"
        ctors = []
        for c in data.constructors:
            name = _plain_name(c.name_hint)
            if c.inputs:
                name += "(" + ", ".join(self.type_text(t) for t in c.inputs) + ")"
            ctors.append(f"  {name},")
        self.tvar_scope = saved
        if not ctors:
            return head + " {\n}"
        return head + " {\n" + "\n".join(ctors) + "\n}"

    def ref_create_text(self, node: RefCreate) -> str:
        return f"ref({self.arg(node.value)})"

    def ref_read_text(self, node: RefRead) -> str:
        return f"ref_read({self.arg(node.ref)})"

    def ref_write_text(self, node: RefWrite) -> str:
        return f"ref_write({self.arg(node.ref)}, {self.arg(node.value)})"

    def func_text(self, prefix: str, func: Function, scope: int) -> str:
        """``fn``/``def @f``, type parameters, parameters and attributes, return type, body."""
        saved = self.bind_type_params(func.type_params)
        head = prefix
        if func.type_params:
            head += "[" + ", ".join(self.type_param_text(tp) for tp in func.type_params) + "]"
        typed = func._checked_type is not None
        parts = [self.alloc_var(p, typed) for p in func.params]
        if len(func.attrs):
            parts.extend(self.generic_attr_texts(func.attrs))
        head += "(" + ", ".join(parts) + ") "
        if func.ret_type is not None:
            head += "-> " + self.type_text(func.ret_type) + " "
        text = head + self.body_text(func.body, scope)
        self.tvar_scope = saved
        return text

    # --- type variables ---------------------------------------------------------------
    def bind_type_params(self, params: tuple[TypeVar, ...]) -> dict[str, TypeVar]:
        """Bring ``params`` into scope under their names; the scope before, to restore."""
        saved = self.tvar_scope
        if not params:
            return saved
        scope = dict(saved)
        for tv in params:
            base = _type_var_base(tv.name_hint)
            name, k = base, 0
            while scope.get(name, tv) is not tv:
                k += 1
                name = f"{base}{k}"
            scope[name] = tv
            self.tvar_names[tv] = name
        self.tvar_scope = scope
        return saved

    def type_param_text(self, tv: TypeVar) -> str:
        name = self.tvar_name(tv)
        if tv.kind != TypeKind.Type:
            return f"{name}: {tv.kind.name}"
        return name

    def tvar_name(self, tv: TypeVar) -> str:
        name = self.tvar_names.get(tv)
        if name is None:
            name = self.tvar_names[tv] = _type_var_base(tv.name_hint)
        return name

    # --- attributes -------------------------------------------------------------------
    def call_attrs_text(self, op: Op, attrs: Attrs) -> str:
        """Relay prints only the attributes that differ from the operator's defaults."""
        schema = op.attrs_schema
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
            parts.append(f"{_attr_key(key)}={self.attr_value_text(value)}")
        return ", ".join(parts)

    def generic_attr_texts(self, attrs: Attrs) -> list[str]:
        return [f"{_attr_key(k)}={self.attr_value_text(v)}" for k, v in attrs.items()]

    def attrs_text(self, attrs: Attrs) -> str:
        return ", ".join(self.generic_attr_texts(attrs))

    def attr_value_text(self, value: _AnyT) -> str:
        if value is None:
            return "None"
        if value is True:
            return "True"
        if value is False:
            return "False"
        if isinstance(value, str):
            return escape_string(value)
        if isinstance(value, int):
            # An int64 dim kept in an attribute (broadcast_to's shape) reads back as one.
            if type(value) is IntImm and value.dtype == "int64":
                return f"{value}i64"
            return str(value)
        if isinstance(value, float):
            # TVM writes a double attribute with C++'s default precision and an ``f``;
            # more digits are written when that would not give back the same double.
            return _double_text(value) + "f"
        if isinstance(value, tuple):
            return "[" + ", ".join(self.attr_value_text(v) for v in value) + "]"
        if isinstance(value, Any):
            return "?"
        if isinstance(value, Attrs):
            return "{" + self.attrs_text(value) + "}"
        if isinstance(value, Type):
            return f"type({self.type_text(value)})"
        return f"<unprintable {type(value).__name__}>"

    # --- types ---------------------------------------------------------------------------
    def size_var_name(self, v: SizeVar) -> str:
        """The name a size variable prints as: its hint, made a plain name and unique.

        Two variables of one name (or a hint that is not a plain name, as an
        ONNX ``dim_param`` may be) get a suffix, so that parsing the text back
        gives one variable per printed variable.
        """
        name = self.size_var_names.get(v)
        if name is not None:
            return name
        base = re.sub(r"[^A-Za-z0-9_]", "_", v.name_hint) or "n"
        if not base[0].isalpha() and base[0] != "_" or base in SIZE_RESERVED:
            base = "n_" + base
        name = base
        k = 0
        while name in self.size_names_taken:
            k += 1
            name = f"{base}_{k}"
        self.size_names_taken.add(name)
        self.size_var_names[v] = name
        return name

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
                    if ty.symbolic:
                        dims = ", ".join(dim_text(d, self.size_var_name) for d in shape)
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
            saved = self.bind_type_params(ty.type_params)
            tparams = ""
            if ty.type_params:
                tparams = "[" + ", ".join(self.type_param_text(tp) for tp in ty.type_params) + "]"
            args = ", ".join(self.type_text(a) for a in ty.arg_types)
            text = f"fn {tparams}({args}) -> {self.type_text(ty.ret_type)}"
            self.tvar_scope = saved
            return text
        if isinstance(ty, RefType):
            return f"ref({self.type_text(ty.value)})"
        if isinstance(ty, TypeVar):
            return self.tvar_name(ty)
        if isinstance(ty, IncompleteType):
            return "_"
        if t is GlobalTypeVar:
            return _plain_name(ty.name_hint)
        if t is TypeCall:
            # As TVM: ``List[A]``, and ``nat[]`` for a type without parameters.
            return self.type_text(ty.func) + "[" + ", ".join(self.type_text(a) for a in ty.args) + "]"
        if t is TypeData:
            return self.type_data_text(ty)
        raise TypeError(f"cannot print type {t.__name__}")


def _attr_key(key: str) -> str:
    return key if IDENT_RE.match(key) else escape_string(key)


hooks.astext = astext
hooks.type_to_text = type_to_text
hooks.pretty_print = pretty_print
