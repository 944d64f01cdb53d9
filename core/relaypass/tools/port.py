"""Porting a TVM Relay pass file: rewrite its ``tvm`` imports, list what relaypass lacks.

``relaypass port FILE...`` (docs/cli.md) applies the porting rule of
docs/coming-from-relay.md to the import statements of Python files, and to
nothing else: comments, strings, formatting and every other line stay as
they are.  The rule, per imported name:

=================================  ==================================================
TVM                                relaypass
=================================  ==================================================
``import tvm``                     ``import relaypass as tvm``
``import tvm as T``                ``import relaypass as T``
``import tvm.relay as relay``      ``import relaypass.relay as relay``
``import tvm.relay.testing``       ``import relaypass as tvm, relaypass.relay.testing``
``from tvm import relay``          ``from relaypass import relay``
``from tvm.relay.x import y``      ``from relaypass.relay.x import y``
=================================  ==================================================

``import tvm.relay.testing`` binds ``tvm`` (the file then writes
``tvm.relay.testing.f``) and imports the submodule; its port binds ``tvm`` to
relaypass and imports the same submodule, which also binds the name
``relaypass``.  Relative imports, ``from __future__`` and every import of
another package are left alone, wherever they are (in functions, ``try``
blocks, ``if TYPE_CHECKING:``).  A second port changes nothing.

The file is then checked against the installed relaypass, without running
it: every name it reaches through a ``tvm`` (or, once ported, ``relaypass``)
import -- ``tvm.relay.nn.conv2d``, ``relay.transform.FuseOps``, a name
brought by ``from tvm.relay.dataflow_pattern import is_op`` -- is looked up
by importing the relaypass module and walking the attributes (importing
relaypass submodules as needed), up to the first object that is not a
module, so attributes of values (``relay.var("x").name_hint``) are not
checked.  Each name relaypass does not provide is reported once, at its
first line, spelled as in TVM.  A name whose lookup raises an error saying
it is out of scope is listed separately, with the error's message; so is a
function that is there only to raise that error when called (such as
``relay.quantize.quantize``), which says so by its ``__relaypass_out_of_scope__``
attribute.

The files are untrusted input: they are parsed with :mod:`ast`, never
imported or executed.  Only relaypass's own modules are imported, and never
a private one (``_name``), so a file cannot make this run ``__main__``.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import importlib
import io
import os
import re
import tempfile
import tokenize
import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO

from ..errors import RelayPassError

__all__ = [
    "Finding", "PortError", "PortResult", "port_file", "port_source", "rewrite_imports",
    "run_port", "write_result",
]

TVM = "tvm"
RELAYPASS = "relaypass"


class PortError(RelayPassError):
    """A file given to ``relaypass port`` cannot be read or does not parse."""


# --- findings ------------------------------------------------------------------------------
# Kinds of finding.  All but NOTE make ``--check`` fail.
MISSING = "missing"            # relaypass has no such name
NOT_A_MODULE = "not-a-module"  # reachable as an attribute, but an import statement of it fails
OUT_OF_SCOPE = "out-of-scope"  # its lookup raised an error saying it is out of scope
UNCHECKED = "unchecked"        # its lookup raised another error (a missing extra, a broken plugin)
DYNAMIC = "dynamic"            # importlib.import_module("tvm...") / __import__: not rewritten
NOTE = "note"                  # information only (a warning raised by the lookup, star imports)

OUT_OF_SCOPE_MARK = "__relaypass_out_of_scope__"
"""A function that exists only to raise RelayCompatError when called carries this attribute
(why, one line), so that the report lists it as out of scope without calling it."""


@dataclass(frozen=True)
class Finding:
    """One line of the report: ``FILE:LINE: <name> is not provided by relaypass``."""

    path: str
    line: int
    name: str  # the TVM spelling: tvm.relay.foo
    kind: str = MISSING
    detail: str = ""

    @property
    def is_problem(self) -> bool:
        return self.kind != NOTE

    def render(self) -> str:
        where = f"{self.path}:{self.line}: "
        if self.kind == MISSING:
            hint = f" ({self.detail})" if self.detail else ""
            return f"{where}{self.name} is not provided by relaypass{hint}"
        if self.kind == NOT_A_MODULE:
            return (f"{where}{self.name} is not provided by relaypass as a module: "
                    f"{self.detail}")
        if self.kind == OUT_OF_SCOPE:
            return f"{where}{self.name} is out of scope for relaypass: {self.detail}"
        if self.kind == UNCHECKED:
            return f"{where}{self.name} could not be checked: {self.detail}"
        if self.kind == DYNAMIC:
            return (f"{where}{self.name} imports TVM at run time; relaypass port rewrites "
                    "import statements only")
        return f"{where}note: {self.name}: {self.detail}"


@dataclass
class PortResult:
    """A file's text before and after the port, and what its names lack."""

    path: str
    old: str
    new: str
    findings: list[Finding] = field(default_factory=list)
    encoding: str = "utf-8"

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.is_problem]

    def diff(self) -> str:
        """The unified diff of the port, ``a/FILE`` to ``b/FILE`` ("" when nothing changes)."""
        return unified_diff(self.old, self.new, self.path)


# --- source text -----------------------------------------------------------------------------
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their ends, split where Python's tokenizer splits them."""
    lines: list[str] = []
    start = 0
    for m in _NEWLINE.finditer(text):
        lines.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


class _Positions:
    """Turns the ast's (line, UTF-8 byte column) positions into offsets in the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for m in _NEWLINE.finditer(text):
            self.starts.append(m.end())

    def offset(self, line: int, col: int) -> int:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        segment = self.text[start:end]
        if segment.isascii():
            return start + col
        return start + len(segment.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def unified_diff(old: str, new: str, path: str) -> str:
    """``a/PATH`` to ``b/PATH``, as git writes it (an absolute path loses its leading /)."""
    if old == new:
        return ""
    shown = path.lstrip("/")
    out: list[str] = []
    for line in difflib.unified_diff(_split_lines(old), _split_lines(new), f"a/{shown}",
                                     f"b/{shown}"):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _is_root(module: str | None, root: str) -> bool:
    return module is not None and (module == root or module.startswith(root + "."))


def _parse(text: str, path: str) -> ast.Module:
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else path
        if exc.lineno and exc.offset:
            where += f":{exc.offset}"
        raise PortError(f"{where}: does not parse as Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes; absurd nesting
        raise PortError(f"{path}: does not parse as Python: {_first_line(exc)}") from None


def read_source(path: str) -> tuple[str, str]:
    """The text of a Python file (decoded as Python decodes it) and its encoding."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise PortError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise PortError(f"{path}: is a directory; give the Python files to port") from None
    except OSError as exc:
        raise PortError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise PortError(f"{path}: cannot be decoded as Python source: {exc}") from None


# --- the rewrite ---------------------------------------------------------------------------
_FROM = re.compile(r"from(?:[ \t\f]|\\\r?\n|\\\r)+")


def _import_edits(text: str, tree: ast.AST) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of every ``tvm`` module name in an import statement."""
    pos = _Positions(text)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _is_root(alias.name, TVM):
                    continue
                start = pos.offset(alias.lineno, alias.col_offset)
                if alias.asname is not None:
                    new = RELAYPASS                              # tvm.x as y -> relaypass.x as y
                elif alias.name == TVM:
                    new = f"{RELAYPASS} as {TVM}"                # tvm -> relaypass as tvm
                else:
                    new = f"{RELAYPASS} as {TVM}, {RELAYPASS}"   # tvm.x -> ..., relaypass.x
                edits.append((start, start + len(TVM), new))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_root(node.module, TVM):
            m = _FROM.match(text, pos.offset(node.lineno, node.col_offset))
            if m is None:  # pragma: no cover - the ast says a from-import starts here
                raise AssertionError(f"line {node.lineno}: no 'from' where the ast puts one")
            edits.append((m.end(), m.end() + len(TVM), RELAYPASS))
    for start, end, _ in edits:
        if text[start:end] != TVM:  # pragma: no cover - positions disagree with the ast
            raise AssertionError(f"offset {start}: expected {TVM!r}, found {text[start:end]!r}")
    return edits


def rewrite_imports(text: str, tree: ast.AST | None = None) -> str:
    """``text`` with its ``tvm`` imports rewritten to relaypass; nothing else changes."""
    if tree is None:
        tree = _parse(text, "<string>")
    out = text
    for start, end, new in sorted(_import_edits(text, tree), reverse=True):
        out = out[:start] + new + out[end:]
    return out


# --- scopes: which names of the file are TVM modules or names from them --------------------------
class _Scope:
    __slots__ = ("kind", "parent", "bound", "tvm", "globals", "nonlocals")

    def __init__(self, kind: str, parent: _Scope | None) -> None:
        self.kind = kind  # module, function, class, comprehension
        self.parent = parent
        self.bound: set[str] = set()
        self.tvm: dict[str, tuple[str, ...]] = {}  # name -> path below the root (tvm / relaypass)
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class _Use:
    line: int
    parts: tuple[str, ...]
    module: bool = False  # checked as an importable module (an import statement names it)


def _chain(node: ast.expr) -> tuple[ast.Name, list[str]] | None:
    """``a.b.c`` -> (Name a, ["b", "c"]); None when the chain starts at something else."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node, attrs[::-1]
    return None


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if args.vararg:
        out.append(args.vararg)
    if args.kwarg:
        out.append(args.kwarg)
    return out


class _Names:
    """One walk over the tree (iterative: deep expressions cannot exhaust the stack)."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = _Scope("module", None)
        self.uses: list[_Use] = []
        self.dynamic: list[tuple[int, str]] = []
        self.stars: list[tuple[int, tuple[str, ...] | None]] = []  # None: not a tvm module
        self._refs: list[tuple[int, ast.Name, list[str], _Scope]] = []
        self._walk(tree)
        star = self._star_module()
        for line, name, attrs, scope in self._refs:
            path = self._resolve(name.id, scope, star)
            if path is not None:
                self.uses.append(_Use(line, (*path, *attrs)))

    # -- binding
    def _bind(self, scope: _Scope, name: str, path: tuple[str, ...] | None = None) -> None:
        if name in scope.nonlocals:
            return
        if name in scope.globals:
            scope = self.module
        scope.bound.add(name)
        if path is not None:
            scope.tvm[name] = path

    def _function_scope(self, scope: _Scope) -> _Scope:
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope

    def _walk(self, tree: ast.Module) -> None:
        stack: list[tuple[ast.AST, _Scope]] = [(tree, self.module)]
        while stack:
            node, scope = stack.pop()
            children = self._visit(node, scope)
            stack.extend(reversed(children))

    def _visit(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        if isinstance(node, (*_FUNCTIONS, ast.Lambda)):
            inner = _Scope("function", scope)
            args = node.args
            out: list[tuple[ast.AST, _Scope]] = []
            if isinstance(node, _FUNCTIONS):
                self._bind(scope, node.name)
                out += [(d, scope) for d in node.decorator_list]
                out += [(a.annotation, scope) for a in _all_args(args) if a.annotation]
                if node.returns is not None:
                    out.append((node.returns, scope))
                body: list[ast.AST] = list(node.body)
            else:
                body = [node.body]
            out += [(d, scope) for d in args.defaults]
            out += [(d, scope) for d in args.kw_defaults if d is not None]
            for a in _all_args(args):
                inner.bound.add(a.arg)
            return out + [(s, inner) for s in body]
        if isinstance(node, ast.ClassDef):
            self._bind(scope, node.name)
            inner = _Scope("class", scope)
            out = [(d, scope) for d in node.decorator_list]
            out += [(b, scope) for b in node.bases] + [(k, scope) for k in node.keywords]
            return out + [(s, inner) for s in node.body]
        if isinstance(node, _COMPREHENSIONS):
            inner = _Scope("comprehension", scope)
            out = []
            for i, gen in enumerate(node.generators):
                out.append((gen.iter, scope if i == 0 else inner))
                out.append((gen.target, inner))
                out += [(c, inner) for c in gen.ifs]
            if isinstance(node, ast.DictComp):
                out += [(node.key, inner), (node.value, inner)]
            else:
                out.append((node.elt, inner))
            return out
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_root(alias.name, TVM) or _is_root(alias.name, RELAYPASS):
                    parts = tuple(alias.name.split(".")[1:])
                    if alias.asname is not None:
                        self._bind(scope, alias.asname, parts)
                    else:
                        self._bind(scope, alias.name.split(".")[0], ())
                    if parts:
                        self.uses.append(_Use(node.lineno, parts, module=True))
                else:
                    self._bind(scope, alias.asname or alias.name.split(".")[0])
            return []
        if isinstance(node, ast.ImportFrom):
            ours = node.level == 0 and (_is_root(node.module, TVM)
                                        or _is_root(node.module, RELAYPASS))
            mod_parts = tuple((node.module or "").split(".")[1:]) if ours else ()
            if ours and mod_parts:
                self.uses.append(_Use(node.lineno, mod_parts, module=True))
            for alias in node.names:
                if alias.name == "*":
                    self.stars.append((node.lineno, mod_parts if ours else None))
                elif ours:
                    path = (*mod_parts, alias.name)
                    self._bind(scope, alias.asname or alias.name, path)
                    self.uses.append(_Use(node.lineno, path))
                else:
                    self._bind(scope, alias.asname or alias.name)
            return []
        if isinstance(node, ast.Global):
            scope.globals.update(node.names)
            return []
        if isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
            return []
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._refs.append((node.lineno, node, [], scope))
            else:
                self._bind(scope, node.id)
            return []
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain is not None:
                name, attrs = chain
                if not isinstance(node.ctx, ast.Load):
                    attrs = attrs[:-1]  # tvm.x.y = ... reads tvm.x, assigns y
                self._refs.append((node.lineno, name, attrs, scope))
                return []
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            self._bind(self._function_scope(scope), node.target.id)
            return [(node.value, scope)]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(scope, node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self._bind(scope, node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self._bind(scope, node.rest)
        elif isinstance(node, ast.Call):
            self._dynamic_import(node)
        return [(c, scope) for c in ast.iter_child_nodes(node)]

    def _dynamic_import(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else None
        if name not in ("__import__", "import_module") or not node.args:
            return
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and \
                _is_root(arg.value, TVM):
            self.dynamic.append((node.lineno, f"{ast.unparse(func)}({arg.value!r})"))

    # -- resolution
    def _star_module(self) -> tuple[str, ...] | None:
        if len(self.stars) == 1:
            return self.stars[0][1]
        return None

    def _resolve(self, name: str, scope: _Scope,
                 star: tuple[str, ...] | None) -> tuple[str, ...] | None:
        s: _Scope | None = scope
        first = True
        while s is not None:
            if s.kind == "class" and not first:
                s = s.parent
                continue
            first = False
            if name in s.globals and s is not self.module:
                s = self.module
                continue
            if name in s.nonlocals:
                s = s.parent
                continue
            if name in s.bound:
                return s.tvm.get(name)
            s = s.parent
        if star is not None and not hasattr(builtins, name):
            return (*star, name)
        return None


# --- the lookup in relaypass ---------------------------------------------------------------
def _spell(parts: Sequence[str]) -> str:
    return ".".join((TVM, *parts))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _says_out_of_scope(exc: BaseException) -> bool:
    kind = type(exc).__name__.lower()
    text = str(exc).lower()
    return "outofscope" in kind or "out of scope" in text or "out-of-scope" in text


_DID_YOU_MEAN = re.compile(r"did you mean [^;]*")


@dataclass(frozen=True)
class _Status:
    kind: str  # "ok" or a finding kind
    parts: tuple[str, ...] = ()  # the name the finding is about
    detail: str = ""
    notes: tuple[str, ...] = ()


_OK = _Status("ok")


# RelayCompatError's message starts with its construct; the report names it already.
_SCOPE_PREFIX = re.compile(r"^.*? is out of scope for relaypass: ")


def _failure(exc: BaseException, parts: tuple[str, ...]) -> _Status:
    if _says_out_of_scope(exc):
        return _Status(OUT_OF_SCOPE, parts, _SCOPE_PREFIX.sub("", _first_line(exc), count=1))
    if isinstance(exc, AttributeError):
        m = _DID_YOU_MEAN.search(str(exc))
        return _Status(MISSING, parts, m.group(0).rstrip("?") + "?" if m else "")
    if "compat" in type(exc).__name__.lower():
        return _Status(MISSING, parts, _first_line(exc))
    return _Status(UNCHECKED, parts, f"{type(exc).__name__}: {_first_line(exc)}")


def _ours(module: types.ModuleType) -> bool:
    name = getattr(module, "__name__", "")
    return isinstance(name, str) and _is_root(name, RELAYPASS)


class _Lookup:
    """Looks names up in the installed relaypass; each answer is cached."""

    def __init__(self) -> None:
        self._attrs: dict[tuple[str, ...], tuple[_Status, object]] = {}
        self._modules: dict[tuple[str, ...], _Status] = {}

    def attribute(self, parts: tuple[str, ...]) -> _Status:
        return self._walk(parts)[0]

    def _walk(self, parts: tuple[str, ...]) -> tuple[_Status, object]:
        cached = self._attrs.get(parts)
        if cached is not None:
            return cached
        if not parts:
            result: tuple[_Status, object] = (_OK, importlib.import_module(RELAYPASS))
        else:
            status, parent = self._walk(parts[:-1])
            if status.kind != "ok" or not isinstance(parent, types.ModuleType):
                result = (status, parent)  # a failure above, or a value: nothing more to check
            else:
                result = self._step(parent, parts)
        self._attrs[parts] = result
        return result

    def _step(self, module: types.ModuleType, parts: tuple[str, ...]) -> tuple[_Status, object]:
        name = parts[-1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = getattr(module, name)
            except Exception as exc:  # the module's __getattr__ is its own business
                failure = _failure(exc, parts)
            else:
                why = getattr(value, OUT_OF_SCOPE_MARK, None)
                if isinstance(why, str):
                    return _with_notes(_Status(OUT_OF_SCOPE, parts, why), caught), None
                return _with_notes(_OK, caught), value
            if failure.kind != MISSING or name.startswith("_") or not _ours(module):
                return _with_notes(failure, caught), None
            full = f"{module.__name__}.{name}"
            try:
                return _with_notes(_OK, caught), importlib.import_module(full)
            except ModuleNotFoundError as exc:
                if exc.name == full:
                    return _with_notes(failure, caught), None
                return _with_notes(_failure(exc, parts), caught), None
            except Exception as exc:
                return _with_notes(_failure(exc, parts), caught), None

    def module(self, parts: tuple[str, ...]) -> _Status:
        """Whether ``import relaypass.<parts>`` works (an import statement of the file runs it)."""
        cached = self._modules.get(parts)
        if cached is None:
            cached = self._modules[parts] = self._import(parts)
        return cached

    def _import(self, parts: tuple[str, ...]) -> _Status:
        if any(p.startswith("_") for p in parts):  # never run a private module (__main__)
            return self.attribute(parts)
        full = ".".join((RELAYPASS, *parts))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                importlib.import_module(full)
                return _with_notes(_OK, caught)
            except ModuleNotFoundError as exc:
                if not exc.name or not (full == exc.name or full.startswith(exc.name + ".")):
                    return _with_notes(_failure(exc, parts), caught)
            except Exception as exc:
                return _with_notes(_failure(exc, parts), caught)
        status, obj = self._walk(parts)
        if status.kind != "ok":
            return status
        if isinstance(obj, types.ModuleType):
            return _Status(NOT_A_MODULE, parts,
                           f"{full} is only an attribute (of {full.rsplit('.', 1)[0]}), "
                           "so importing it fails", status.notes)
        return _Status(NOT_A_MODULE, parts, f"{full} is not a module", status.notes)


def _with_notes(status: _Status, caught: Iterable[warnings.WarningMessage]) -> _Status:
    notes = tuple(dict.fromkeys(f"{w.category.__name__}: {_first_line(w.message)}"  # type: ignore[arg-type]
                                for w in caught))
    if not notes:
        return status
    return _Status(status.kind, status.parts, status.detail, status.notes + notes)


def find_unprovided(tree: ast.Module, path: str, lookup: _Lookup | None = None) -> list[Finding]:
    """What the file reaches through its tvm (or relaypass) imports that relaypass lacks."""
    lookup = lookup or _Lookup()
    names = _Names(tree)
    first: dict[str, Finding] = {}

    def add(finding: Finding) -> None:
        key = f"{finding.kind}:{finding.name}:{finding.detail}" if finding.kind == NOTE \
            else finding.name
        old = first.get(key)
        if old is None or finding.line < old.line:
            first[key] = finding

    for use in names.uses:
        status = lookup.module(use.parts) if use.module else lookup.attribute(use.parts)
        if status.kind != "ok":
            add(Finding(path, use.line, _spell(status.parts), status.kind, status.detail))
        for note in status.notes:
            add(Finding(path, use.line, _spell(use.parts), NOTE, note))
    for line, call in names.dynamic:
        add(Finding(path, line, call, DYNAMIC))
    tvm_stars = [(line, p) for line, p in names.stars if p is not None]
    if tvm_stars and len(names.stars) > 1:
        line, parts = tvm_stars[0]
        add(Finding(path, line, f"from {_spell(parts)} import *", NOTE,
                    "the file has other star imports, so the names it uses from this one are "
                    "not checked"))
    return sorted(first.values(), key=lambda f: (f.line, f.name, f.kind))


# --- files ---------------------------------------------------------------------------------
def port_source(text: str, path: str = "<string>", encoding: str = "utf-8",
                lookup: _Lookup | None = None) -> PortResult:
    """Port the text of one Python file (``path`` only names it in messages).

    Names are looked up in relaypass as installed and registered now (pass
    names come from the registry); ``lookup`` shares the answers between files.
    """
    tree = _parse(text, path)
    new = rewrite_imports(text, tree)
    if new != text:
        _parse(new, path)  # the rewrite keeps the file valid; a failure here is a bug
    return PortResult(path, text, new, find_unprovided(tree, path, lookup), encoding)


def port_file(path: str, lookup: _Lookup | None = None) -> PortResult:
    text, encoding = read_source(path)
    return port_source(text, path, encoding, lookup)


def write_result(result: PortResult) -> None:
    """Replace the file with its port atomically (a temporary file, then a rename)."""
    target = os.path.realpath(result.path)
    folder = os.path.dirname(target) or os.curdir
    data = result.new.encode(result.encoding)
    try:
        mode = os.stat(target).st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.",
                                   suffix=".port-tmp")
    except OSError as exc:
        raise PortError(f"{result.path}: cannot be written: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise PortError(f"{result.path}: cannot be written: {exc.strerror or exc}") from None
        raise


def run_port(paths: Sequence[str], *, write: bool = False, out: IO[str],
             err: Callable[[str], None]) -> bool:
    """The ``relaypass port`` command: True when a file would change or lacks a name.

    Every file is read and parsed before anything is printed or written, so a
    bad file stops the command (one :class:`PortError`) with nothing changed.
    Without ``write``, the diffs, then the findings, go to ``out``; with it,
    the changed files are rewritten and the findings printed.  One summary
    line goes to ``err``.
    """
    sources = [(p, *read_source(p)) for p in dict.fromkeys(paths)]
    for path, text, _ in sources:  # every file parses before any is looked at further
        _parse(text, path)
    lookup = _Lookup()
    results = [port_source(text, path, encoding, lookup) for path, text, encoding in sources]
    changed = [r for r in results if r.changed]
    if write:
        for r in changed:
            write_result(r)
    else:
        for r in changed:
            out.write(r.diff())
    findings = [f for r in results for f in r.findings]
    ordered = ([f for f in findings if f.kind not in (OUT_OF_SCOPE, NOTE)]
               + [f for f in findings if f.kind == OUT_OF_SCOPE]
               + [f for f in findings if f.kind == NOTE])
    for f in ordered:
        out.write(f.render() + "\n")
    out.flush()

    n = len(results)
    files = f"{n} file{'s' if n != 1 else ''}"
    if write:
        did = f"rewrote {len(changed)} of {files}"
    else:
        did = f"{len(changed)} of {files} would change"
        if changed:
            did += f" (--write rewrites {'them' if len(changed) != 1 else 'it'})"
    problems = [f for f in findings if f.is_problem]
    count = {kind: sum(1 for f in problems if f.kind == kind)
             for kind in (MISSING, NOT_A_MODULE, OUT_OF_SCOPE, UNCHECKED, DYNAMIC)}
    lacking = count[MISSING] + count[NOT_A_MODULE]
    said = [f"{lacking} name{'s' if lacking != 1 else ''} not provided by relaypass"]
    if count[OUT_OF_SCOPE]:
        said.append(f"{count[OUT_OF_SCOPE]} out of scope")
    if count[UNCHECKED]:
        said.append(f"{count[UNCHECKED]} not checked")
    if count[DYNAMIC]:
        n_dyn = count[DYNAMIC]
        said.append(f"{n_dyn} run-time import{'s' if n_dyn != 1 else ''} of tvm")
    err(f"relaypass: port: {did}; {', '.join(said)}")
    return bool(changed and not write) or bool(problems)
