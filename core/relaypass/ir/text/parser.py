"""The parser of Relay's text format: what TVM v0.18's parser reads, and what the printer writes.

``parse(source)`` reads a module (``def @name(...) { ... }`` definitions) and
``parse_expr(source)`` a bare expression.  The tokens come from
:mod:`relaypass.ir.text.tokenizer` (one regular expression run in C); a
recursive-descent parser recurses only on the nesting of syntax inside one
statement: the statements of a block are read in a loop and its ``let``
chain is built bottom-up afterwards, so a block of 100,000 statements parses
under the default recursion limit.

Every problem is a :class:`~relaypass.errors.ParseError` (TVM's
``DiagnosticError``) that says where (source name, 1-based line and column),
what was found and what was expected.

The grammar, informally (``//`` and nesting ``/* */`` comments anywhere)::

    module    := directive* (def | typedef)* metadata?
    directive := '#[' 'version' '=' STRING ']' | '#[' 'module_attrs' '(' attrs ')' ']'
    def       := 'def' @name typarams? '(' params ')' ('->' type)? '{' seq '}'
    typedef   := 'extern'? 'type' Name typarams? ('{' (Ctor ('(' types ')')?, ...) '}')?
    seq       := (stmt ';')* binexpr                      a block (TVM's ``ParseExpr``)
    stmt      := '%N' '=' binexpr | 'let' %v (':' type)? '=' binexpr
               | 'free_var' %v (':' type)? | binexpr      (``e1; e2``: e1, then e2)
    binexpr   := expr (binop expr)*     binop: * /  then + -  then < <= > >=  then == !=
    expr      := primary ('(' args ')' | '[' types ']' '(' args ')' | '.' INT)*
    primary   := %v | %N | @name | opname | Ctor | literal | '(' ')' | '(' seq ')'
               | '(' seq ',' (seq ',')* seq? ')' | '{' seq '}'
               | 'fn' typarams? '(' params ')' ('->' type)? '{' seq '}'
               | 'if' '(' seq ')' '{' seq '}' 'else' '{' seq '}'
               | 'ref' '(' seq ')' | 'ref_read' '(' seq ')' | 'ref_write' '(' seq ',' seq ')'
               | 'meta' '[' 'relay.Constant' ']' '[' INT ']'
               | 'const' '(' '[' element, ... ']' ',' type ')'
               | ('match' | 'match?') primary '{' (pattern '=>' seq, ...) '}'
    pattern   := '_' | %v (':' type)? | Ctor ('(' pattern, ... ')')? | '(' pattern, ... ')'
    literal   := 1 | -5 | --10 | 1f | -2.5f64 | 3i64 | 42i | 7u8 | 1f16 | True | False | nanf | -inff
    params    := (%v (':' type)?, ...)  then  (name '=' value, ...)
    args      := (seq, ...)  then  (name '=' value, ...)
    value     := INT | FLOAT | STRING | True | False | None | '?' | '[' value, ... ']'
               | '{' attrs '}' | 'type' '(' type ')'
    type      := dtype | 'Tensor' '[' '(' (INT | '?'), ... ')' ',' dtype ']' | '(' type, ... ')'
               | 'fn' typarams? '(' types ')' '->' type | 'ref' '(' type ')' | '_' | typevar
               | Name ('[' types ']')?                  an algebraic data type (``List[A]``)
    typarams  := '[' name (':' kind)?, ... ']'
    metadata  := '#[metadata]' JSON {"relay.Constant": [base64 of .npy bytes, ...]}

As in TVM, ``free_var`` declarations may appear in any block and hold for the
rest of the text, and an integer literal without a suffix is an int32, or an
int64 when it does not fit.  Types may be named before their definition, constructors
only after it; a constructor without fields stands for its call (``Nil`` is
``Nil()``).  A numbered temporary is visible in the block
that binds it and the blocks inside; when a text refers to one outside (as
TVM's printer may write), its binding in a block that has ended is taken (the
block that ended first, if several bound it), as TVM's parser allows.  Beyond TVM: dotted local names, ``{ ... }`` as an operand, type
arguments (``@f[float32](%x)``), type-variable kinds, ``const(...)``, suffixes
of every integer dtype, and ``#[module_attrs(...)]``.
"""

from __future__ import annotations

import difflib
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import Any as _AnyT

import numpy as np

from ...errors import AttrsError, ParseError, UnknownOpError
from ...gc_pause import gc_paused
from ..adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from ..attrs import Attrs
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
from ..module import IRModule
from ..node import Span
from ..op import Op
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
from .metadata import CONSTANT_KIND, find_section, merge_tables, read_section
from .tokenizer import (
    BINARY_OPS,
    DTYPE_RE,
    DTYPE_SUFFIX,
    DTYPES,
    IDENT_RE,
    NUMBER_RE,
    RESERVED_TYPE_NAMES,
    SIZE_RESERVED,
    SUFFIX_DTYPE,
    TEXT_VERSION,
    line_starts,
    string_is_closed,
    tokenize,
    unescape_string,
)

__all__ = ["parse", "parse_expr", "parse_type"]

_INDEX_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z")
_DIM_RE = re.compile(r"[0-9]+\Z")
_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_PUNCTUATION = frozenset("(),;=[]{}:.?#<>+-*/")
_ATTR_KEY_START = _IDENT_START | {'"'}
_STATEMENT_STARTS = frozenset({"let", "free_var"})

_DTYPE_SHORTHANDS = {"int": "int32", "uint": "uint32", "float": "float32"}
"""TVM's parser reads a bare ``int``, ``uint`` or ``float`` as its 32-bit dtype."""
_KINDS = {k.name: k for k in TypeKind}
_MISSING = object()
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MAX = 2**63 - 1
_FLOAT_MAX = {"float16": 65504.0, "float32": float(np.finfo(np.float32).max)}
_MAX_INT_DIGITS = 20
"""Digits of the largest integer a dtype holds (uint64's); Python's int() refuses over 4,300."""


def parse(
    source: str,
    source_name: str = "from_string",
    init_module: IRModule | None = None,
    init_meta_table: Mapping[str, Sequence[_AnyT]] | None = None,
) -> IRModule:
    """Parse the text of a module: optional ``#[...]`` directives, then ``def``s (TVM's ``parse``).

    ``source_name`` is what errors and spans name.  With ``init_module``,
    the definitions are added to that module (as TVM does, the module given
    is the one returned) and the text may call its functions.
    ``init_meta_table`` (``{"relay.Constant": [constants...]}``) adds entries
    after those of the text's own metadata section, for ``meta[...]``
    references to use.

    Unlike TVM's ``parse``, no type inference runs: the module holds what the
    text says (``relay.parse`` runs it, as TVM does).
    """
    with gc_paused():
        parser = _Parser(source, source_name, module=True, meta_table=init_meta_table)
        return parser.parse_module(init_module)


def parse_expr(source: str, source_name: str = "string") -> Expr:
    """Parse the text of one expression (what ``expr.astext()`` writes; TVM's ``parse_expr``)."""
    with gc_paused():
        return _Parser(source, source_name, module=False).parse_expression_text()


def _short(text: str) -> str:
    """``text`` as a message shows it: its first line, at most 40 characters of it."""
    line = text[:41].partition("\n")[0]
    return line if line == text else line[:40] + "..."


_FOUND_RE = re.compile(r"[^\s]{0,40}")
_LONG_WORD_RE = re.compile(r"[^\s',]{81,}|\n")


def _one_short_line(message: str) -> str:
    """``message`` on one line, each word of it (a name from the text, say) at most 80 characters.

    Messages quote the text, and also come from other parts of relaypass
    (an operator's attribute schema); a text may hold names of any length.
    """
    return _LONG_WORD_RE.sub(lambda m: " " if m.group() == "\n" else m.group()[:40] + "...", message)


def parse_type(source: str, source_name: str = "string") -> Type:
    """Parse the text of one type (``Tensor[(1, 3), float32]``, ``(int32, float32)``...)."""
    parser = _Parser(source, source_name, module=False)
    try:
        ty = parser.parse_type()
    except RecursionError:
        raise parser.error_at(parser.i, "type nested too deeply") from None
    if parser.toks[parser.i] != "":
        raise parser.fail("end of input")
    return ty


def _quote(tok: str) -> str:
    if tok == "":
        return "end of input"
    return "'" + _short(tok) + "'"


def _unterminated(tok: str) -> str | None:
    """What is wrong with a token that opens a string or a comment it never closes, if it does."""
    if tok[:1] == '"' and not string_is_closed(tok):
        return "unterminated string literal"
    if tok[:2] == "/*":
        return "unterminated comment: '/*' without '*/' (or comments nested more than 16 deep)"
    return None


class _Parser:
    """One parse of one text.

    Tokens are two parallel lists (text, end offset); ``self.i`` indexes
    them.  Names in scope live in one dict with an undo log, so entering and
    leaving a block costs only what the block bound.
    """

    def __init__(
        self,
        text: str,
        source_name: str,
        module: bool,
        meta_table: Mapping[str, Sequence[_AnyT]] | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"parse expects a str, not {type(text).__name__}")
        self.text = text
        self.src = source_name
        self.module = module
        section = find_section(text)
        self.meta_start = section[0] if section else len(text)
        self.toks, self.ends = tokenize(text, self.meta_start)
        self.line_starts = line_starts(text)
        self.i = 0
        self.scope: dict[str, Expr] = {}
        # What each binding replaced, in two parallel lists (no tuple per binding).
        self.undo: list[str] = []
        self.undo_old: list[_AnyT] = []
        # Free variables hold for the rest of the text, in any block (as in TVM).
        self.free_vars: dict[str, Var] = {}
        # Temporaries of blocks that have ended: the first binding of each number, for
        # texts that refer to one outside its block (TVM's graph bindings are global).
        self.ended_temps: dict[str, Expr] = {}
        self.ended_blocks: list[tuple[list[str], list[Expr]]] = []
        self.tscope: dict[str, TypeVar] = {}
        # Size variables by name: one variable per name in the whole text.
        self.size_vars: dict[str, SizeVar] = {}
        self.globals: dict[str, GlobalVar] = {}
        self.global_refs: dict[str, int] = {}
        self.defined: set[str] = set()
        # Algebraic data types: each name's GlobalTypeVar (made where first met, as a type may be
        # named before its definition), where a name was first used, the definitions read, and
        # the constructors by name.
        self.type_names: dict[str, GlobalTypeVar] = {}
        self.type_refs: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.type_defs: dict[str, TypeData] = {}
        self.ctors: dict[str, Constructor] = {}
        self.ops: dict[str, Op] = {}
        self.meta: dict[str, list[_AnyT]] | None = None
        if section:
            self.meta = read_section(
                text, section[1], self.error_at_offset, self.span_at_offset, meta_table
            )
        elif meta_table:
            self.meta = merge_tables({}, meta_table)
        self.keywords: dict[str, Callable[[int], Expr]] = {
            "fn": self.parse_function_expr,
            "if": self.parse_if,
            "ref": self.parse_ref_create,
            "ref_read": self.parse_ref_read,
            "ref_write": self.parse_ref_write,
            "meta": self.parse_meta_ref,
            "const": self.parse_const,
            "match": self.parse_match,
            "True": self.parse_bool,
            "False": self.parse_bool,
            "let": self.misplaced_let,
            "free_var": self.misplaced_let,
            "def": self.misplaced_def,
        }

    # --- positions and errors ----------------------------------------------
    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def start(self, k: int) -> int:
        return self.ends[k] - len(self.toks[k])

    def span(self, k: int) -> Span:
        offset = self.ends[k] - len(self.toks[k])
        ls = self.line_starts
        line = bisect_right(ls, offset)
        return Span(self.src, line, column=offset - ls[line - 1] + 1)

    def span_at_offset(self, offset: int) -> Span:
        line, column = self.position(offset)
        return Span(self.src, line, column=column)

    def error_at(self, k: int, message: str, expected: str = "") -> ParseError:
        line, column = self.position(self.start(k))
        return ParseError(
            _one_short_line(message), source_name=self.src, line=line, column=column,
            found=_short(self.toks[k]), expected=expected,
        )

    def error_at_offset(self, offset: int, message: str) -> ParseError:
        line, column = self.position(offset)
        found = _FOUND_RE.match(self.text, offset).group()
        return ParseError(
            _one_short_line(message), source_name=self.src, line=line, column=column, found=found,
        )

    def fail(self, expected: str, k: int | None = None) -> ParseError:
        """'expected X but found Y' at token ``k`` (the current one by default)."""
        if k is None:
            k = self.i
        tok = self.toks[k]
        unterminated = _unterminated(tok)
        if unterminated:
            return self.error_at(k, unterminated, expected)
        if len(tok) == 1 and tok not in _PUNCTUATION and tok not in _IDENT_START:
            return self.error_at(k, f"unexpected character {_short(tok)!r} (expected {expected})", expected)
        return self.error_at(k, f"expected {expected} but found {_quote(tok)}", expected)

    def expect(self, tok: str) -> int:
        k = self.i
        if self.toks[k] != tok:
            raise self.fail(_quote(tok))
        self.i = k + 1
        return k

    def expect_closing(self, tok: str, opened: int) -> None:
        """Expect a closing bracket; the error names where it was opened."""
        k = self.i
        if self.toks[k] == tok:
            self.i = k + 1
            return
        if _unterminated(self.toks[k]):
            raise self.fail(_quote(tok))
        line, column = self.position(self.start(opened))
        raise self.error_at(
            k,
            f"expected {_quote(tok)} to close the {_quote(self.toks[opened])} opened at "
            f"{line}:{column} but found {_quote(self.toks[k])}",
            _quote(tok),
        )

    # --- scopes ----------------------------------------------------------------
    def bind(self, name: str, value: Expr) -> None:
        scope = self.scope
        self.undo.append(name)
        self.undo_old.append(scope.get(name, _MISSING))
        scope[name] = value

    def pop_scope(self, mark: int) -> None:
        scope, undo, undo_old = self.scope, self.undo, self.undo_old
        if len(undo) > mark:
            # What the block bound, kept for texts that refer to its temporaries later.
            names = undo[mark:]
            self.ended_blocks.append((names, list(map(scope.__getitem__, names))))
        for i in range(len(undo) - 1, mark - 1, -1):
            old = undo_old[i]
            if old is _MISSING:
                del scope[undo[i]]
            else:
                scope[undo[i]] = old
        del undo[mark:]
        del undo_old[mark:]

    def lookup_local(self, k: int) -> Expr:
        """A ``%name`` or ``%N`` that is not in scope: a free variable, an ended temporary, or an error."""
        tok = self.toks[k]
        if tok == "%":
            raise self.fail("a variable such as '%x'", k)
        value = self.free_vars.get(tok)
        if value is None and tok[1] in _DIGITS:
            value = self.ended_temp(tok)
        if value is None:
            raise self.undefined_local(k)
        return value

    def ended_temp(self, name: str) -> Expr | None:
        """The first binding of temporary ``name`` in a block that has ended, if any."""
        ended = self.ended_temps
        blocks = self.ended_blocks
        # Index the blocks that ended since the last lookup (rarely needed, so done late).
        for names, values in blocks:
            for temp, value in zip(names, values):
                if temp[1] in _DIGITS and temp not in ended:
                    ended[temp] = value
        blocks.clear()
        return ended.get(name)

    # --- module ------------------------------------------------------------------
    def parse_module(self, init: IRModule | None = None) -> IRModule:
        try:
            attrs = self.parse_directives()
            if init is None:
                mod = IRModule(attrs=attrs)
            else:
                if not isinstance(init, IRModule):
                    raise TypeError(f"init_module must be an IRModule, not {type(init).__name__}")
                mod = init
                if attrs is not None:
                    mod.attrs = attrs
                for gv in mod.get_global_vars():
                    self.globals[gv.name_hint] = gv
                    self.defined.add(gv.name_hint)
                for gtv, data in mod.type_definitions.items():
                    self.type_names[gtv.name_hint] = gtv
                    for ctor in data.constructors:
                        self.ctors[ctor.name_hint] = ctor
            toks = self.toks
            defs: list[tuple[GlobalVar, Function]] = []
            known_types = set(self.type_names)
            while True:
                tok = toks[self.i]
                if tok == "def":
                    defs.append(self.parse_def())
                elif tok == "type" or tok == "extern" and toks[self.i + 1] == "type":
                    self.parse_type_def(known_types)
                elif tok == "":
                    break
                elif tok == "#":
                    raise self.error_at(self.i, "'#[...]' directives must come before the first 'def'")
                elif _unterminated(tok):
                    raise self.fail("'def'")
                else:
                    hint = " (use parse_expr for a bare expression)" if not defs else ""
                    raise self.error_at(
                        self.i, f"expected 'def' but found {_quote(tok)}{hint}", "'def'"
                    )
            for name, (k, tvars) in self.type_refs.items():
                if name not in self.type_defs and name not in known_types:
                    have = [*DTYPES, *tvars, *known_types, *self.type_defs]
                    near = difflib.get_close_matches(name, have, n=3, cutoff=0.6)
                    hint = f"; did you mean {', '.join(near)}?" if near else ""
                    if tvars:
                        hint += f" (type variables in scope: {', '.join(tvars)})"
                    raise self.error_at(k, f"unknown type {_short(name)!r}{hint}", "a type")
            for name, k in self.global_refs.items():
                if name not in self.defined:
                    near = difflib.get_close_matches(name, list(self.defined), n=3, cutoff=0.6)
                    hint = f"; did you mean {', '.join('@' + n for n in near)}?" if near else ""
                    raise self.error_at(k, f"undefined global function @{_short(name)}{hint}")
            for gtv, data in self.type_defs.items():
                mod.add_type_def(gtv, data)
            for gv, func in defs:
                mod.add(gv, func, update=True)
            return mod
        except RecursionError:
            raise self.error_at(self.i, "expression nested too deeply") from None

    def parse_expression_text(self) -> Expr:
        try:
            self.parse_directives(allow_attrs=False)
            expr = self.parse_seq()
            if self.toks[self.i] != "":
                if self.toks[self.i] == "def":
                    raise self.error_at(self.i, "a 'def' is not allowed in an expression; use parse")
                raise self.fail("end of input")
            return expr
        except RecursionError:
            raise self.error_at(self.i, "expression nested too deeply") from None

    def parse_directives(self, allow_attrs: bool = True) -> Attrs | None:
        """``#[version = "0.0.5"]`` and ``#[module_attrs(k=v, ...)]`` lines."""
        attrs = None
        toks = self.toks
        while toks[self.i] == "#":
            self.i += 1
            opened = self.expect("[")
            k = self.i
            word = toks[k]
            if word == "version":
                self.i += 1
                self.expect("=")
                vk = self.i
                version = self.parse_string()
                if version != TEXT_VERSION:
                    raise self.error_at(
                        vk, f"unsupported text format version {_short(version)!r}; this parser reads "
                        f"{TEXT_VERSION!r}",
                    )
            elif word == "module_attrs" and allow_attrs:
                self.i += 1
                paren = self.expect("(")
                values = self.parse_attr_list(")")
                self.expect_closing(")", paren)
                attrs = Attrs(values)
            else:
                raise self.fail("'version' or 'module_attrs'" if allow_attrs else "'version'")
            self.expect_closing("]", opened)
        return attrs

    def parse_def(self) -> tuple[GlobalVar, Function]:
        k = self.i
        self.i += 1
        tok = self.toks[self.i]
        if tok[:1] != "@" or tok == "@":
            raise self.fail("a global name such as '@main'")
        name = tok[1:]
        if name in self.defined:
            raise self.error_at(self.i, f"duplicate definition of global function @{_short(name)}")
        self.defined.add(name)
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name, self.span(self.i))
        self.i += 1
        self.scope.clear()
        self.undo.clear()
        self.undo_old.clear()
        return gv, self.parse_function_rest(k)

    def parse_type_def(self, known_types: set[str]) -> None:
        """``type Name[A, ...] { Ctor(types), ... }`` or ``extern type Name[A, ...]``."""
        toks = self.toks
        k = self.i
        extern = toks[k] == "extern"
        self.i += 2 if extern else 1
        nk = self.i
        name = toks[nk]
        if name[:1] not in _IDENT_START or "." in name or name in RESERVED_TYPE_NAMES:
            raise self.fail("the name of a type")
        if name in self.type_defs or name in known_types:
            raise self.error_at(nk, f"duplicate definition of type {_short(name)}")
        header = self.type_ref(name, nk, use=False)
        self.i += 1
        saved = self.tscope
        type_vars: list[TypeVar] = []
        if toks[self.i] == "[":
            type_vars = self.parse_type_params()
            self.tscope = {**saved, **{tv.name_hint: tv for tv in type_vars}}
        ctors: list[Constructor] = []
        if toks[self.i] == "{":
            if extern:
                raise self.error_at(self.i, "an external type may not have any constructors")
            opened = self.expect("{")
            while toks[self.i] != "}":
                ck = self.i
                cname = toks[ck]
                if cname[:1] not in _IDENT_START or "." in cname:
                    raise self.fail("the name of a constructor")
                if cname in self.ctors:
                    raise self.error_at(
                        ck, f"a constructor named {_short(cname)} is already defined"
                    )
                self.i += 1
                inputs = self.parse_type_list("(", ")") if toks[self.i] == "(" else []
                ctor = Constructor(cname, inputs, header, self.span(ck))
                self.ctors[cname] = ctor
                ctors.append(ctor)
                if toks[self.i] == ",":
                    self.i += 1
                elif toks[self.i] != "}":
                    raise self.fail("',' or '}'")
            self.expect_closing("}", opened)
        self.tscope = saved
        self.type_defs[name] = TypeData(header, type_vars, ctors, self.span(k))

    def type_ref(self, name: str, k: int, use: bool = True) -> GlobalTypeVar:
        """The GlobalTypeVar of the type ``name``; ``use``: token ``k`` uses it (and the text
        must define it somewhere)."""
        gtv = self.type_names.get(name)
        if gtv is None:
            gtv = self.type_names[name] = GlobalTypeVar(name, span=self.span(k))
        if use and name not in self.type_refs:
            self.type_refs[name] = (k, tuple(self.tscope))
        return gtv

    # --- blocks ------------------------------------------------------------------
    def parse_seq(self) -> Expr:
        """An expression, or statements then one (TVM's ``ParseExpr``): call arguments,
        tuple fields, parentheses, conditions and blocks all read one."""
        toks = self.toks
        i = self.i
        tok = toks[i]
        if tok in _STATEMENT_STARTS or (tok[:1] == "%" and toks[i + 1] == "="):
            return self.parse_block()
        expr = self.parse_expr()
        if toks[self.i] != ";":
            return expr
        return self.parse_block(expr, i)

    def parse_block(self, first: Expr | None = None, first_k: int = 0) -> Expr:
        """Statements then the result expression; the let chain is built bottom-up.

        ``first``: an expression already read (at token ``first_k``), followed by ``;``.
        """
        toks = self.toks
        parse_expr = self.parse_expr
        scope = self.scope
        undo, undo_old = self.undo, self.undo_old
        mark = len(undo)
        # The let statements, as parallel lists: no tuple per statement.
        let_vars: list[Var] = []
        let_values: list[Expr] = []
        let_spans: list[Span] = []
        temps: set[str] = set()
        if first is not None:
            # ``e1; e2``: e1 is bound to a variable nobody names (TVM's sequencing).
            let_vars.append(Var("", IncompleteType()))
            let_values.append(first)
            let_spans.append(self.span(first_k))
            self.i += 1
        while True:
            i = self.i
            tok = toks[i]
            c = tok[:1]
            if c == "%" and toks[i + 1] == "=":
                if tok == "%":
                    raise self.fail("a variable such as '%x'")
                if tok[1] not in _DIGITS:
                    raise self.error_at(
                        i, f"only numbered temporaries such as %0 are bound with '='; "
                        f"write 'let {_short(tok)} = ...;'",
                    )
                self.i = i + 2
                value = parse_expr()
                if toks[self.i] != ";":
                    raise self.fail("';'")
                self.i += 1
                # A nested block may reuse an outer temporary's name; one block may not.
                if tok in temps:
                    raise self.error_at(i, f"{_short(tok)} is already defined in this block")
                temps.add(tok)
                undo.append(tok)
                undo_old.append(scope.get(tok, _MISSING))
                scope[tok] = value
            elif tok == "let":
                name = toks[i + 1]
                if len(name) > 1 and name[0] == "%" and name[1] not in _DIGITS and toks[i + 2] == "=":
                    # Fast path: ``let %v = ...`` without a type annotation.
                    var = Var(name[1:], None, self.span(i + 1))
                    undo.append(name)
                    undo_old.append(scope.get(name, _MISSING))
                    scope[name] = var
                    self.i = i + 3
                else:
                    self.i = i + 1
                    var = self.parse_binder()
                    self.expect("=")
                value = parse_expr()
                if toks[self.i] != ";":
                    raise self.fail("';'")
                self.i += 1
                let_vars.append(var)
                let_values.append(value)
                let_spans.append(self.span(i))
            elif tok == "free_var":
                self.i = i + 1
                self.parse_free_var()
                self.expect(";")
            else:
                if tok == "}" or tok == ")":
                    raise self.fail("the block's result expression")
                body = parse_expr()
                if toks[self.i] != ";":
                    break
                # ``e1; e2``: e1 is bound to a variable nobody names (TVM's sequencing).
                let_vars.append(Var("", IncompleteType()))
                let_values.append(body)
                let_spans.append(self.span(i))
                self.i += 1
        self.pop_scope(mark)
        for j in range(len(let_vars) - 1, -1, -1):
            body = Let(let_vars[j], let_values[j], body, let_spans[j])
        return body

    def parse_binder(self) -> Var:
        """``%name`` with an optional ``: type``; binds the new variable."""
        tok, var = self.parse_var_decl()
        self.bind(tok, var)
        return var

    def parse_free_var(self) -> Var:
        """``free_var %name: type``: a variable of the whole text (as in TVM)."""
        tok, var = self.parse_var_decl()
        self.free_vars[tok] = var
        return var

    def parse_var_decl(self) -> tuple[str, Var]:
        """``%name`` with an optional ``: type``: the token and a new variable."""
        k = self.i
        tok = self.toks[k]
        if tok[:1] != "%" or tok == "%":
            raise self.fail("a variable such as '%x'")
        if tok[1] in _DIGITS:
            raise self.error_at(k, f"{_short(tok)} is a temporary's name; variables need a name such as %x")
        self.i = k + 1
        ty = None
        if self.toks[self.i] == ":":
            self.i += 1
            ty = self.parse_type()
        return tok, Var(tok[1:], ty, self.span(k))

    def parse_braced_block(self) -> Expr:
        opened = self.expect("{")
        body = self.parse_seq()
        self.expect_closing("}", opened)
        return body

    # --- expressions ---------------------------------------------------------------
    def parse_expr(self) -> Expr:
        """A call expression, then infix operators with their precedence (TVM's ``ParseExprBinOp``)."""
        toks = self.toks
        k = self.i
        tok = toks[k]
        c = tok[:1]
        # Fast paths for the two commonest starts: a name in scope and an operator.
        if c == "%":
            expr = self.scope.get(tok)
            if expr is None:
                expr = self.lookup_local(k)
            self.i = k + 1
        elif c in _IDENT_START and tok not in self.keywords and tok in self.ops:
            expr = self.ops[tok]
            self.i = k + 1
        else:
            expr = self.parse_primary()
        return self.parse_postfix(expr, k, True)

    def parse_operand(self) -> Expr:
        """One operand of an infix operator: a call expression."""
        k = self.i
        return self.parse_postfix(self.parse_primary(), k, False)

    def parse_postfix(self, expr: Expr, k: int, infix: bool) -> Expr:
        """Calls, type arguments and projections after ``expr`` (from token ``k``), then, if
        ``infix``, infix operators."""
        toks = self.toks
        while True:
            tok = toks[self.i]
            if tok == "(":
                expr = self.parse_call(expr, k, ())
            elif tok == ".":
                expr = self.parse_projection(expr, k)
            elif tok == "[":
                type_args = self.parse_type_list("[", "]")
                if toks[self.i] != "(":
                    raise self.fail("'(' after type arguments")
                expr = self.parse_call(expr, k, type_args)
            elif infix and tok in BINARY_OPS:
                return self.parse_binary(self.nullary(expr, k), k)
            else:
                return self.nullary(expr, k)

    def nullary(self, expr: Expr, k: int) -> Expr:
        """A constructor without fields, written alone, is its call (as in TVM): ``Nil``."""
        if type(expr) is Constructor and not expr.inputs:
            return Call(expr, (), None, None, self.span(k))
        return expr

    def parse_binary(self, first: Expr, first_k: int) -> Expr:
        """``a op b op c ...`` by precedence, all operators left-associative (TVM's table)."""
        toks = self.toks
        operands: list[Expr] = [first]
        starts: list[int] = [first_k]
        ops: list[tuple[str, int]] = []

        def reduce() -> None:
            name, _ = ops.pop()
            rhs = operands.pop()
            starts.pop()
            lhs = operands.pop()
            operands.append(Call(self.binary_op(name), [lhs, rhs], None, None, self.span(starts[-1])))

        while True:
            tok = toks[self.i]
            entry = BINARY_OPS.get(tok)
            if entry is None:
                break
            name, prec = entry
            self.i += 1
            k = self.i
            rhs = self.parse_operand()
            while ops and ops[-1][1] >= prec:
                reduce()
            ops.append((name, prec))
            operands.append(rhs)
            starts.append(k)
        while ops:
            reduce()
        return operands[0]

    def binary_op(self, name: str) -> Op:
        op = self.ops.get(name)
        if op is None:
            op = self.ops[name] = Op.get(name)
        return op

    def parse_primary(self) -> Expr:
        k = self.i
        tok = self.toks[k]
        c = tok[:1]
        if c == "%":
            value = self.scope.get(tok)
            if value is None:
                value = self.lookup_local(k)
            self.i = k + 1
            return value
        if c in _IDENT_START:
            handler = self.keywords.get(tok)
            if handler is not None:
                return handler(k)
            ctor = self.ctors.get(tok)
            if ctor is not None:
                self.i = k + 1
                return ctor
            if tok.startswith(("nan", "inf")):
                m = NUMBER_RE.match(tok)
                if m is not None and (m.group(6) is None or m.group(6) in SUFFIX_DTYPE):
                    self.i = k + 1
                    return self.number_constant(tok, k)
            op = self.ops.get(tok)
            if op is None:
                op = self.lookup_op(tok, k)
            self.i = k + 1
            return op
        if c in _DIGITS or (c == "-" and len(tok) > 1 and tok != "->"):
            self.i = k + 1
            return self.number_constant(tok, k)
        if c == "@" and tok != "@":
            self.i = k + 1
            return self.global_ref(tok[1:], k)
        if c == "(":
            return self.parse_tuple(k)
        if c == "{":
            return self.parse_braced_block()
        raise self.fail("an expression")

    def undefined_local(self, k: int) -> ParseError:
        tok = self.toks[k]
        names = [n for n in self.scope if not n[1:2].isdigit()] + list(self.free_vars)
        near = difflib.get_close_matches(tok, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        if not self.module and not tok[1].isdigit():
            hint += f" (declare free variables with 'free_var {_short(tok)}: <type>;')"
        return self.error_at(k, f"undefined variable {_short(tok)}{hint}")

    def lookup_op(self, name: str, k: int) -> Op:
        try:
            op = Op.get(name)
        except UnknownOpError as exc:
            raise self.error_at(k, str(exc).replace(name, _short(name)), "an operator name") from None
        self.ops[name] = op
        return op

    def global_ref(self, name: str, k: int) -> GlobalVar:
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name, self.span(k))
        if name not in self.global_refs:
            self.global_refs[name] = k
        return gv

    def parse_call(self, callee: Expr, k: int, type_args: tuple[Type, ...] | list[Type]) -> Expr:
        toks = self.toks
        scope = self.scope
        opened = i = self.i
        i += 1
        args: list[Expr] = []
        attrs_values = None
        attrs_k = 0
        while True:
            tok = toks[i]
            if tok == ")":
                break
            after = toks[i + 1]
            if tok[:1] == "%" and (after == "," or after == ")") and tok in scope:
                # Fast path: an argument that is just a name in scope.
                args.append(scope[tok])
                i += 1
            elif after == "=" and tok[:1] in _ATTR_KEY_START:
                self.i = attrs_k = i
                attrs_values = self.parse_attr_list(")")
                i = self.i
                break
            else:
                self.i = i
                args.append(self.parse_seq())
                i = self.i
            tok = toks[i]
            if tok == ",":
                i += 1
            elif tok != ")":
                raise self.fail("',' or ')'", i)
        self.i = i
        self.expect_closing(")", opened)
        attrs = None
        if type(callee) is Op:
            n = callee.num_inputs
            if n >= 0 and len(args) != n:
                raise self.error_at(
                    k, f"operator '{callee.name}' takes {n} argument{'s' if n != 1 else ''} "
                    f"but {len(args)} {'was' if len(args) == 1 else 'were'} given",
                )
            schema = callee.attrs_schema
            if schema is not None:
                try:
                    attrs = schema.build(callee.name, attrs_values or {})
                except (AttrsError, TypeError, ValueError) as exc:
                    raise self.error_at(attrs_k or k, str(exc)) from None
            elif attrs_values:
                raise self.error_at(attrs_k, f"operator '{callee.name}' takes no attributes")
        elif attrs_values:
            type_key = attrs_values.pop("attrs_type_key", "DictAttrs")
            if not isinstance(type_key, str):
                raise self.error_at(attrs_k, "attrs_type_key must be a string")
            attrs = Attrs(attrs_values, type_key)
        offset = self.ends[k] - len(toks[k])
        ls = self.line_starts
        line = bisect_right(ls, offset)
        column = offset - ls[line - 1] + 1
        span = Span(self.src, line, end_line=line, column=column, end_column=column)
        return Call(callee, args, attrs, type_args, span)

    def parse_projection(self, expr: Expr, k: int) -> Expr:
        self.i += 1
        tok = self.toks[self.i]
        if not _INDEX_RE.match(tok):
            raise self.fail("a tuple index")
        self.i += 1
        span = self.span(k)
        for part in tok.split("."):  # ``%t.0.1`` arrives as '0.1'
            expr = TupleGetItem(expr, self.int_value(part, self.i - 1), span)
        return expr

    def parse_tuple(self, k: int) -> Expr:
        self.i = k + 1
        toks = self.toks
        if toks[self.i] == ")":
            self.i += 1
            return Tuple((), self.span(k))
        first = self.parse_seq()
        if toks[self.i] == ")":
            self.i += 1
            return first
        if toks[self.i] != ",":
            raise self.fail("',' or ')'")
        fields = [first]
        while toks[self.i] == ",":
            self.i += 1
            if toks[self.i] == ")":
                break
            fields.append(self.parse_seq())
        self.expect_closing(")", k)
        return Tuple(fields, self.span(k))

    def parse_function_expr(self, k: int) -> Expr:
        self.i = k + 1
        return self.parse_function_rest(k)

    def parse_function_rest(self, k: int) -> Function:
        """``[type params](params, attrs) -> ret { body }`` after ``fn`` or ``def @name``."""
        toks = self.toks
        saved_tscope = self.tscope
        type_params: list[TypeVar] = []
        if toks[self.i] == "[":
            type_params = self.parse_type_params()
            self.tscope = {**saved_tscope, **{tv.name_hint: tv for tv in type_params}}
        mark = len(self.undo)
        opened = self.expect("(")
        params: list[Var] = []
        attrs = None
        names: set[str] = set()
        while toks[self.i] != ")":
            tok = toks[self.i]
            if toks[self.i + 1] == "=" and (tok[:1] in _ATTR_KEY_START):
                attrs = self.parse_attr_list(")")
                break
            if tok in names:
                raise self.error_at(self.i, f"duplicate parameter {_short(tok)}")
            names.add(tok)
            params.append(self.parse_binder())
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != ")":
                raise self.fail("',' or ')'")
        self.expect_closing(")", opened)
        ret = None
        if toks[self.i] == "->":
            self.i += 1
            ret = self.parse_type()
        body = self.parse_braced_block()
        self.pop_scope(mark)
        self.tscope = saved_tscope
        return Function(params, body, ret, type_params, attrs, self.span(k))

    def parse_if(self, k: int) -> Expr:
        self.i = k + 1
        opened = self.expect("(")
        cond = self.parse_seq()
        self.expect_closing(")", opened)
        then = self.parse_braced_block()
        self.expect("else")
        other = self.parse_braced_block()
        return If(cond, then, other, self.span(k))

    def parse_parenthesized(self, k: int, count: int) -> list[Expr]:
        self.i = k + 1
        opened = self.expect("(")
        values = [self.parse_seq()]
        for _ in range(count - 1):
            self.expect(",")
            values.append(self.parse_seq())
        self.expect_closing(")", opened)
        return values

    def parse_ref_create(self, k: int) -> Expr:
        return RefCreate(self.parse_parenthesized(k, 1)[0], self.span(k))

    def parse_ref_read(self, k: int) -> Expr:
        return RefRead(self.parse_parenthesized(k, 1)[0], self.span(k))

    def parse_ref_write(self, k: int) -> Expr:
        ref, value = self.parse_parenthesized(k, 2)
        return RefWrite(ref, value, self.span(k))

    def parse_match(self, k: int) -> Expr:
        """``match (data) { pattern => body, ... }``; ``match?`` is a match that may be incomplete."""
        toks = self.toks
        self.i = k + 1
        complete = True
        if toks[self.i] == "?":
            complete = False
            self.i += 1
        data = self.parse_primary()  # ``match (%x) {`` as TVM prints it, or ``match %x {``
        opened = self.expect("{")
        clauses: list[Clause] = []
        while toks[self.i] != "}":
            mark = len(self.undo)
            pattern = self.parse_pattern(set())
            self.expect("=")
            self.expect(">")
            body = self.parse_seq()
            self.pop_scope(mark)
            clauses.append(Clause(pattern, body))
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != "}":
                raise self.fail("',' or '}'")
        self.expect_closing("}", opened)
        return Match(data, clauses, complete, self.span(k))

    def parse_pattern(self, names: set[str]) -> Pattern:
        """One pattern; its variables are bound for the clause (``names``: those bound so far)."""
        toks = self.toks
        k = self.i
        tok = toks[k]
        if tok == "_":
            self.i += 1
            return PatternWildcard(self.span(k))
        if tok[:1] == "%":
            if tok in names:
                raise self.error_at(k, f"{_short(tok)} is bound twice in this pattern")
            names.add(tok)
            return PatternVar(self.parse_binder(), self.span(k))
        if tok == "(":
            return PatternTuple(self.parse_pattern_list(names), self.span(k))
        if tok[:1] in _IDENT_START:
            ctor = self.ctors.get(tok)
            if ctor is None:
                near = difflib.get_close_matches(tok, list(self.ctors), n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(near)}?" if near else (
                    f" (a variable is written %{_short(tok)})"
                )
                raise self.error_at(k, f"undefined constructor {_short(tok)}{hint}", "a pattern")
            self.i += 1
            patterns = self.parse_pattern_list(names) if toks[self.i] == "(" else []
            return PatternConstructor(ctor, patterns, self.span(k))
        raise self.fail("a pattern ('_', a variable, a constructor or a tuple)")

    def parse_pattern_list(self, names: set[str]) -> list[Pattern]:
        opened = self.expect("(")
        patterns: list[Pattern] = []
        while self.toks[self.i] != ")":
            patterns.append(self.parse_pattern(names))
            if self.toks[self.i] == ",":
                self.i += 1
            elif self.toks[self.i] != ")":
                raise self.fail("',' or ')'")
        self.expect_closing(")", opened)
        return patterns

    def parse_bool(self, k: int) -> Expr:
        self.i = k + 1
        arr = np.array(self.toks[k] == "True")
        arr.flags.writeable = False
        return Constant(arr, self.span(k))

    def misplaced_let(self, k: int) -> Expr:
        raise self.error_at(
            k, f"'{self.toks[k]}' starts a statement, not an operand; put it in parentheses: "
            f"( {self.toks[k]} ...; ... )",
        )

    def misplaced_def(self, k: int) -> Expr:
        raise self.error_at(k, "a 'def' is not allowed inside an expression; parse modules with parse")

    # --- constants -----------------------------------------------------------------
    def number_constant(self, tok: str, k: int) -> Constant:
        dtype, value = self.number_value(tok, k)
        arr = np.array(value, dtype=dtype)
        arr.flags.writeable = False
        return Constant(arr, self.span(k))

    def number_value(self, tok: str, k: int) -> tuple[str, int | float]:
        """The dtype and Python value of a scalar literal such as ``2i64``, ``-0.5f`` or ``--10``.

        As in TVM: a run of minus signs is a sign (``--10`` is 10); an integer
        without a suffix is an int32, or an int64 when it does not fit; a value
        its dtype cannot represent is an error.
        """
        m = NUMBER_RE.match(tok)
        if m is None:
            raise self.fail("a number")
        minus, body, frac, exp, word, suffix = m.groups()
        negative = len(minus) % 2 == 1
        is_float = bool(frac or exp or word)
        if suffix is None:
            dtype = "float32" if is_float else "int32"
        else:
            dtype = SUFFIX_DTYPE.get(suffix)
            if dtype is None:
                raise self.error_at(
                    k, f"unknown literal suffix {_short(suffix)!r} in {_short(tok)!r}; use one of "
                    f"{', '.join(sorted(SUFFIX_DTYPE))}",
                )
        if dtype[0] == "f":
            value = self.float_value(body, bool(word), dtype, k)
            return dtype, -value if negative else value
        if is_float:
            raise self.error_at(k, f"{_short(tok)!r} is not an integer but has the {dtype} suffix")
        value = self.int_value(body, k)
        if negative:
            value = -value
        if suffix is None and not _INT32_MIN <= value <= _INT32_MAX:
            dtype = "int64"
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise self.error_at(k, f"integer literal {value} is out of range for {dtype}")
        return dtype, value

    def int_value(self, digits: str, k: int) -> int:
        """The integer the digits of token ``k`` write, when some dtype can hold it.

        More digits than uint64 has are an error before ``int()`` runs, which
        refuses (with a ValueError) to convert over 4,300 digits.
        """
        significant = digits.lstrip("0")
        if len(significant) > _MAX_INT_DIGITS:
            raise self.error_at(
                k, f"integer {_short(self.toks[k])} is too large: {len(significant)} digits, "
                f"more than any dtype holds",
            )
        return int(significant or "0")

    def float_value(self, text: str, word: bool, dtype: str, k: int) -> float:
        """The value of the number ``text`` (``word``: it is ``inf`` or ``nan``) of token ``k``.

        A number beyond the largest finite one of ``dtype`` is an error, as in
        TVM; a value closer to zero than its smallest number becomes zero.
        """
        value = float(text)
        if not word and (math.isinf(value) or abs(value) > _FLOAT_MAX.get(dtype, math.inf)):
            raise self.error_at(k, f"floating point number {_short(text)} is unrepresentable in {dtype}")
        return value

    def parse_const(self, k: int) -> Expr:
        """``const([e0, e1, ...], Tensor[(shape), dtype])``: a small tensor written in place."""
        self.i = k + 1
        opened = self.expect("(")
        bracket = self.expect("[")
        toks = self.toks
        elements: list[tuple[str, int]] = []
        while toks[self.i] != "]":
            if toks[self.i] in ("", ",", ")"):
                raise self.fail("a tensor element")
            elements.append((toks[self.i], self.i))
            self.i += 1
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != "]":
                raise self.fail("',' or ']'")
        self.expect_closing("]", bracket)
        self.expect(",")
        tk = self.i
        ty = self.parse_type()
        self.expect_closing(")", opened)
        if not isinstance(ty, TensorType) or not ty.is_static or ty.dtype not in DTYPE_SUFFIX:
            raise self.error_at(tk, f"a const needs a static tensor type of a numeric dtype, not {ty}")
        size = math.prod(ty.concrete_shape)
        if size != len(elements):
            raise self.error_at(
                tk, f"{ty} has {size} element{'s' if size != 1 else ''} but "
                f"{len(elements)} were given",
            )
        kind = np.dtype(ty.dtype).kind
        values: list[_AnyT] = []
        for tok, ek in elements:
            if kind == "b":
                if tok not in ("True", "False"):
                    raise self.fail("True or False", ek)
                values.append(tok == "True")
                continue
            m = NUMBER_RE.match(tok)
            if m is None or m.group(6) is not None:
                raise self.fail(f"a {ty.dtype} element (a number without suffix)", ek)
            sign = -1 if len(m.group(1)) % 2 else 1
            if kind == "f":
                values.append(sign * self.float_value(m.group(2), bool(m.group(5)), ty.dtype, ek))
            elif m.group(3) or m.group(4) or m.group(5):
                raise self.error_at(ek, f"{_short(tok)!r} is not an integer, as {ty.dtype} needs")
            else:
                value = sign * self.int_value(m.group(2), ek)
                info = np.iinfo(ty.dtype)
                if not info.min <= value <= info.max:
                    raise self.error_at(ek, f"{_short(tok)} is out of range for {ty.dtype}")
                values.append(value)
        source = np.array(values, dtype=np.float64 if kind == "f" else object)
        arr = source.astype(ty.dtype).reshape(ty.concrete_shape)
        arr.flags.writeable = False
        return Constant(arr, self.span(k))

    def parse_meta_ref(self, k: int) -> Expr:
        """``meta[relay.Constant][i]``: a constant of the metadata section."""
        self.i = k + 1
        opened = self.expect("[")
        kind_k = self.i
        kind = self.toks[kind_k]
        if kind[:1] not in _IDENT_START:
            raise self.fail("a metadata kind such as relay.Constant")
        self.i += 1
        self.expect_closing("]", opened)
        opened = self.expect("[")
        index_k = self.i
        index_tok = self.toks[index_k]
        if not _DIM_RE.match(index_tok):
            raise self.fail("a metadata index")
        self.i += 1
        self.expect_closing("]", opened)
        if kind != CONSTANT_KIND:
            raise self.error_at(kind_k, f"unknown metadata kind {_short(kind)!r}; expected {CONSTANT_KIND}")
        if self.meta is None:
            raise self.error_at(k, "meta[...] reference but the text has no #[metadata] section")
        entries = self.meta.get(kind, [])
        index = self.int_value(index_tok, index_k)
        if index >= len(entries):
            raise self.error_at(
                index_k, f"meta[{kind}][{index}] is out of range: the metadata section has "
                f"{len(entries)} {kind} entr{'y' if len(entries) == 1 else 'ies'}",
            )
        return entries[index]

    # --- attributes ------------------------------------------------------------------
    def parse_attr_list(self, closing: str) -> dict[str, _AnyT]:
        """``key=value, ...`` up to (not including) ``closing``."""
        toks = self.toks
        values: dict[str, _AnyT] = {}
        while toks[self.i] != closing:
            k = self.i
            tok = toks[k]
            if tok[:1] == '"':
                key = self.parse_string()
            elif tok[:1] in _IDENT_START:
                key = tok
                self.i += 1
            else:
                raise self.fail("an attribute name")
            if key in values:
                raise self.error_at(k, f"duplicate attribute {_short(key)!r}")
            self.expect("=")
            values[key] = self.parse_attr_value()
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != closing:
                raise self.fail(f"',' or {_quote(closing)}")
        return values

    def parse_attr_value(self) -> _AnyT:
        k = self.i
        tok = self.toks[k]
        c = tok[:1]
        if c == '"':
            return self.parse_string()
        if c == "[":
            self.i += 1
            items = []
            while self.toks[self.i] != "]":
                items.append(self.parse_attr_value())
                if self.toks[self.i] == ",":
                    self.i += 1
                elif self.toks[self.i] != "]":
                    raise self.fail("',' or ']'")
            self.expect_closing("]", k)
            return tuple(items)
        if c == "{":
            self.i += 1
            values = self.parse_attr_list("}")
            self.expect_closing("}", k)
            return Attrs(values)
        if c == "?":
            self.i += 1
            return Any()
        if tok in ("True", "False", "None"):
            self.i += 1
            return {"True": True, "False": False, "None": None}[tok]
        if tok == "type":
            self.i += 1
            opened = self.expect("(")
            ty = self.parse_type()
            self.expect_closing(")", opened)
            return ty
        m = NUMBER_RE.match(tok)
        if m is None:
            raise self.fail("an attribute value")
        self.i += 1
        minus, body, frac, exp, word, suffix = m.groups()
        sign = -1 if len(minus) % 2 else 1
        if suffix is not None:
            dtype = SUFFIX_DTYPE.get(suffix)
            if dtype is None:
                raise self.error_at(k, f"unknown literal suffix {_short(suffix)!r} in {_short(tok)!r}")
            if dtype[0] == "f":
                return sign * self.float_value(body, bool(word), "float64", k)
        elif frac or exp or word:
            return sign * self.float_value(body, bool(word), "float64", k)
        if frac or exp or word:
            raise self.error_at(k, f"{_short(tok)!r} is not an integer but has an integer suffix")
        try:
            # Attributes hold Python ints of any size, as far as int() converts them;
            # ``2i64`` an int64 dim (broadcast_to's shape), as TVM's IntImm.
            if suffix is not None and SUFFIX_DTYPE[suffix] == "int64":
                return IntImm("int64", sign * int(body))
            return sign * int(body)
        except ValueError:
            raise self.error_at(
                k, f"integer {_short(tok)} is too large: {len(body)} digits, more than Python "
                f"converts",
            ) from None

    def parse_string(self) -> str:
        k = self.i
        tok = self.toks[k]
        if not string_is_closed(tok):
            raise self.fail("a string")
        try:
            value = unescape_string(tok)
        except ValueError as exc:
            raise self.error_at(k, f"bad string literal: {exc}") from None
        self.i = k + 1
        return value

    # --- types ------------------------------------------------------------------------
    def parse_type(self) -> Type:
        k = self.i
        tok = self.toks[k]
        if tok == "Tensor":
            return self.parse_tensor_type()
        if tok == "(":
            self.i += 1
            if self.toks[self.i] == ")":
                self.i += 1
                return TupleType(())
            first = self.parse_type()
            if self.toks[self.i] == ")":
                self.i += 1
                return first
            if self.toks[self.i] != ",":
                raise self.fail("',' or ')'")
            fields = [first]
            while self.toks[self.i] == ",":
                self.i += 1
                if self.toks[self.i] == ")":
                    break
                fields.append(self.parse_type())
            self.expect_closing(")", k)
            return TupleType(fields)
        if tok == "fn":
            self.i += 1
            saved = self.tscope
            type_params: list[TypeVar] = []
            if self.toks[self.i] == "[":
                type_params = self.parse_type_params()
                self.tscope = {**saved, **{tv.name_hint: tv for tv in type_params}}
            args = self.parse_type_list("(", ")")
            self.expect("->")
            ret = self.parse_type()
            self.tscope = saved
            return FuncType(args, ret, type_params)
        if tok == "ref":
            self.i += 1
            opened = self.expect("(")
            inner = self.parse_type()
            self.expect_closing(")", opened)
            return RefType(inner)
        if tok == "_":
            self.i += 1
            return IncompleteType()
        tv = self.tscope.get(tok)
        if tv is not None:
            self.i += 1
            return tv
        if DTYPE_RE.match(tok) or tok in _DTYPE_SHORTHANDS:
            self.i += 1
            return TensorType((), _DTYPE_SHORTHANDS.get(tok, tok))
        if tok[:1] in _IDENT_START and "." not in tok and (self.module or tok in self.type_names):
            # An algebraic data type, applied to its type arguments: ``List[A]``, ``nat``.
            gtv = self.type_ref(tok, k)
            self.i += 1
            args = self.parse_type_list("[", "]") if self.toks[self.i] == "[" else []
            return TypeCall(gtv, args, self.span(k))
        if tok[:1] in _IDENT_START:
            near = difflib.get_close_matches(tok, list(DTYPES) + list(self.tscope), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            if self.tscope:
                hint += f" (type variables in scope: {', '.join(self.tscope)})"
            raise self.error_at(k, f"unknown type {_short(tok)!r}{hint}", "a type")
        raise self.fail("a type")

    def parse_tensor_type(self) -> TensorType:
        tensor = self.i
        self.i += 1
        opened = self.expect("[")
        paren = self.expect("(")
        toks = self.toks
        dims: list[_AnyT] = []
        while toks[self.i] != ")":
            tok = toks[self.i]
            if tok == "?":
                dims.append(Any())
            elif _DIM_RE.match(tok) and toks[self.i + 1] in (",", ")"):
                dim = self.int_value(tok, self.i)
                if dim > _INT64_MAX:
                    raise self.error_at(self.i, f"dimension {tok} is out of range (int64)")
                dims.append(dim)
            else:
                dims.append(self.parse_dim_expr())
                self.i -= 1  # stands on the last token of the expression, as a number does
            self.i += 1
            if toks[self.i] == ",":
                self.i += 1
            elif toks[self.i] != ")":
                raise self.fail("',' or ')'")
        self.expect_closing(")", paren)
        self.expect(",")
        dtype = self.parse_dtype()
        self.expect_closing("]", opened)
        if math.prod(d for d in dims if isinstance(d, int)) > _INT64_MAX:
            # Shapes are computed with in int64 (numpy, TVM): a larger one would wrap around.
            raise self.error_at(
                tensor, f"a tensor of shape ({', '.join(map(str, dims))}) has more elements "
                f"than int64 counts",
            )
        return TensorType(dims, dtype)

    def parse_dim_expr(self) -> _AnyT:
        """A symbolic dimension: ``n``, ``n*4``, ``m + n - 1``, ``floordiv(n + 1, 2)``.

        A name is a size variable, the same one wherever the text uses it.
        Precedence climbing on explicit stacks (operands and operators): ``*``
        binds tighter than ``+`` and ``-``; parentheses and the two divisions
        open a nested level on the same stacks, so no input recurses.
        """
        toks = self.toks
        # One frame per open level: [operands, operators, closing token, division or None, start].
        frames: list[list[_AnyT]] = [[[], [], None, None, self.i]]
        expect_operand = True
        while True:
            k = self.i
            tok = toks[k]
            frame = frames[-1]
            if expect_operand:
                if tok == "-":  # unary minus: 0 - operand
                    frame[0].append(IntImm(0))
                    frame[1].append("-")
                    self.i += 1
                    continue
                if tok == "(":
                    frames.append([[], [], ")", None, k])
                    self.i += 1
                    continue
                if tok in SIZE_RESERVED and toks[k + 1] == "(":
                    frames.append([[], [], ",", tok, k])
                    self.i += 2
                    continue
                if _DIM_RE.match(tok):
                    frame[0].append(IntImm(self.int_value(tok, k)))
                elif tok[:1] in _IDENT_START and IDENT_RE.match(tok) and "." not in tok:
                    var = self.size_vars.get(tok)
                    if var is None:
                        var = self.size_vars[tok] = SizeVar(tok)
                    frame[0].append(var)
                else:
                    raise self.fail("a dimension (an integer, '?', a size variable or an "
                                    "expression of them)")
                self.i += 1
                expect_operand = False
                continue
            if tok in ("+", "-", "*") or tok[:1] == "-" and _DIM_RE.match(tok[1:]):
                if tok[:1] == "-" and len(tok) > 1:  # ``n-1`` reads as one number token -1
                    self.reduce_dims(frame, "+")
                    frame[1].append("-")
                    frame[0].append(IntImm(self.int_value(tok[1:], k)))
                    self.i += 1
                    continue
                self.reduce_dims(frame, tok)
                frame[1].append(tok)
                self.i += 1
                expect_operand = True
                continue
            # The end of a level: reduce it.
            self.reduce_dims(frame, "+")
            value = frame[0][0]
            closing, division = frame[2], frame[3]
            if closing is None:
                return value
            if division is not None and closing == ",":
                if tok != ",":
                    raise self.fail("',' and the divisor")
                frames[-1] = [[], [], ")", (division, value), frame[4]]
                self.i += 1
                expect_operand = True
                continue
            self.expect_closing(")", frame[4] + (1 if division else 0))
            frames.pop()
            if division is not None:
                op, numerator = division
                try:
                    value = (numerator // value) if op == "floordiv" else (numerator % value)
                except ZeroDivisionError:
                    raise self.error_at(frame[4], f"{op} by 0 in a dimension", "a divisor") from None
            frames[-1][0].append(value)

    def reduce_dims(self, frame: list[_AnyT], incoming: str) -> None:
        """Apply the pending operators of a level that bind at least as tightly as ``incoming``."""
        values, ops = frame[0], frame[1]
        while ops and (incoming != "*" or ops[-1] == "*"):
            op = ops.pop()
            b = values.pop()
            a = values.pop()
            values.append(a * b if op == "*" else a + b if op == "+" else a - b)

    def parse_dtype(self) -> str:
        k = self.i
        tok = self.toks[k]
        if not DTYPE_RE.match(tok) and tok not in _DTYPE_SHORTHANDS:
            if tok[:1] in _IDENT_START:
                near = difflib.get_close_matches(tok, DTYPES, n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(near)}?" if near else ""
                raise self.error_at(
                    k, f"unknown dtype {_short(tok)!r}{hint} (the dtypes: {', '.join(DTYPES)}; "
                    f"each also with lanes, as int8x4)", "a dtype",
                )
            raise self.fail("a dtype")
        self.i = k + 1
        return _DTYPE_SHORTHANDS.get(tok, tok)

    def parse_type_list(self, opening: str, closing: str) -> list[Type]:
        opened = self.expect(opening)
        types: list[Type] = []
        while self.toks[self.i] != closing:
            types.append(self.parse_type())
            if self.toks[self.i] == ",":
                self.i += 1
            elif self.toks[self.i] != closing:
                raise self.fail(f"',' or {_quote(closing)}")
        self.expect_closing(closing, opened)
        return types

    def parse_type_params(self) -> list[TypeVar]:
        """``[A, B: ShapeVar]``: new type variables, in scope for what follows."""
        opened = self.expect("[")
        params: list[TypeVar] = []
        names: set[str] = set()
        while self.toks[self.i] != "]":
            k = self.i
            tok = self.toks[k]
            if tok[:1] not in _IDENT_START or "." in tok:
                raise self.fail("a type variable name")
            if tok in RESERVED_TYPE_NAMES or DTYPE_RE.match(tok):
                raise self.error_at(k, f"{_short(tok)!r} cannot name a type variable: it is a type already")
            if tok in names:
                raise self.error_at(k, f"duplicate type parameter {_short(tok)}")
            names.add(tok)
            self.i += 1
            kind = TypeKind.Type
            if self.toks[self.i] == ":":
                self.i += 1
                kind_tok = self.toks[self.i]
                if kind_tok not in _KINDS:
                    raise self.fail(f"a type kind ({', '.join(_KINDS)})")
                kind = _KINDS[kind_tok]
                self.i += 1
            params.append(TypeVar(tok, kind, self.span(k)))
            if self.toks[self.i] == ",":
                self.i += 1
            elif self.toks[self.i] != "]":
                raise self.fail("',' or ']'")
        self.expect_closing("]", opened)
        return params
