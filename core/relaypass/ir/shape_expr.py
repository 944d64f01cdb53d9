"""Symbolic tensor dimensions: ``n*4``, ``n + m``, ``floordiv(n + 1, 2)``.

Type relations compute result shapes from argument shapes; when an argument
holds a size variable (:class:`~relaypass.ir.types.SizeVar`), the result's
extent is an expression of it -- concatenating ``(n, 3)`` and ``(m, 3)``
gives ``(n + m, 3)``, flattening ``(n, 4)`` gives ``(n*4,)``.  Those
expressions are kept in one canonical form, a polynomial with integer
coefficients over *atoms* (size variables, and floor divisions or remainders
by a positive constant that do not simplify), so that two ways of computing
the same extent give equal dimensions: ``4*n == n*4``, ``(n + m) - m == n``,
``(n*4) // 2 == n*2``.  An expression that folds to a number is an
:class:`~relaypass.ir.types.IntImm`, and a lone variable is that variable,
so a dimension is always ``IntImm | Any | SizeVar | SizeExpr``.

Where no exact form exists -- a division by a size variable that does not
divide evenly, anything computed from ``Any`` -- the result is ``Any``, as
Relay's relations give ``Any`` for what they cannot know.

Arithmetic on dimensions works with Python's operators (``n * 4``,
``4 + n``, ``n // 2``): size variables and expressions reach this module
through :data:`relaypass.ir.hooks.dim_arith`.  Every operation is a loop over
the (few) terms of its operands; nested divisions keep their sort key from
construction, so nothing here recurses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._ffi.registry import register_object
from . import hooks
from .fields import DATA, fields
from .node import Node, slot_filler
from .types import Any, Dim, IntImm, SizeVar, SymbolicDim, SymbolicDimError, _dim

__all__ = [
    "FloorDiv", "FloorMod", "SizeExpr", "SymbolicDimError", "dim_add", "dim_floordiv", "dim_floormod",
    "dim_mul", "dim_neg", "dim_product", "dim_sub", "dim_text", "free_size_vars", "is_symbolic",
    "known_int", "substitute",
]


# --- atoms and their order --------------------------------------------------------------------

# A monomial is a sorted tuple of atoms (a variable twice for its square); a polynomial is a
# dict monomial -> coefficient (no zero coefficients) and a constant.
_Poly = tuple[dict[tuple, int], int]


def _atom_key(atom: object) -> tuple:
    """Where an atom sorts in a monomial: variables by name (then identity), then divisions."""
    if type(atom) is SizeVar:
        return (0, atom.name_hint, id(atom))
    return atom._key  # type: ignore[attr-defined]


def _mono_key(mono: tuple) -> tuple:
    """Where a monomial sorts among the terms of an expression (remembered, bounded: the same
    few monomials make up the extents of a program)."""
    key = _MONO_KEYS.get(mono)
    if key is None:
        key = (len(mono), tuple([_atom_key(a) for a in mono]))
        if len(_MONO_KEYS) >= _MONO_KEYS_LIMIT:
            _MONO_KEYS.clear()
        _MONO_KEYS[mono] = key
    return key


_MONO_KEYS: dict[tuple, tuple] = {}
_MONO_KEYS_LIMIT = 1 << 12


class _Division(Node):
    """An atom ``floordiv(a, b)`` / ``floormod(a, b)``: a symbolic ``a`` over a positive constant ``b``.

    It occurs inside a :class:`SizeExpr` only (never alone as a dimension), and
    only when it does not simplify: ``a`` has every coefficient in ``[0, b)``.
    """

    __slots__ = ("a", "b", "_key", "_hash")
    _rank = 1

    def __init__(self, a: Dim, b: int) -> None:
        poly = _as_poly(a)
        if poly is None or not poly[0]:
            raise ValueError(f"{type(self).__name__} divides a symbolic dimension, not {a!r}")
        key = (self._rank, int(b), _poly_key(poly))
        _fill_division(self, a, IntImm(int(b)) if type(b) is not IntImm else b, key, hash(key))

    def __eq__(self, other: object) -> bool:
        return self is other or type(other) is type(self) and self._key == other._key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return dim_text(SizeExpr([(1, (self,))]))


_DIVISION_FIELDS = fields(a=DATA, b=DATA)


class FloorDiv(_Division):
    """``floordiv(a, b)``: TVM's ``tir.FloorDiv`` of a symbolic extent by a constant."""

    __slots__ = ()
    _fields_ = _DIVISION_FIELDS
    _rank = 1


class FloorMod(_Division):
    """``floormod(a, b)``: TVM's ``tir.FloorMod`` of a symbolic extent by a constant."""

    __slots__ = ()
    _fields_ = _DIVISION_FIELDS
    _rank = 2


_fill_division = slot_filler(_Division, "a", "b", "_key", "_hash")


def _poly_key(poly: _Poly) -> tuple:
    terms, const = poly
    return (tuple(sorted((_mono_key(m), c) for m, c in terms.items())), const)


# --- the expression node --------------------------------------------------------------------


class SizeExpr(SymbolicDim):
    """A dimension computed from size variables, in canonical form (``n*4 + m``).

    ``terms`` holds ``(coefficient, monomial)`` pairs in canonical order, a
    monomial being a tuple of size variables and divisions; ``const`` is the
    constant term.  Build one with arithmetic on dimensions (``n * 4 + m``)
    or :func:`dim_add` and its siblings, which fold numbers and give back a
    plain variable or an ``IntImm`` where the expression is one; the
    constructor itself keeps what it is given, canonically ordered.  Two
    expressions compare equal when their canonical forms are equal.
    """

    __slots__ = ("terms", "const", "_key", "_hash", "_poly")
    _fields_ = fields(terms=DATA, const=DATA)

    def __init__(self, terms: Iterable[tuple[int, tuple]], const: int = 0) -> None:
        acc: dict[tuple, int] = {}
        for coeff, mono in terms:
            m = tuple(sorted(mono, key=_atom_key))
            acc[m] = acc.get(m, 0) + int(coeff)
        _fill_canonical(self, {m: c for m, c in acc.items() if c}, int(const))

    @property
    def dtype(self) -> str:
        return "int64"

    def __eq__(self, other: object) -> bool:
        return self is other or type(other) is SizeExpr and self._key == other._key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return dim_text(self)

    __str__ = __repr__


_fill_size_expr = slot_filler(SizeExpr, "terms", "const", "_key", "_hash", "_poly")


def _fill_canonical(expr: SizeExpr, terms: dict[tuple, int], const: int) -> None:
    """Set the fields of ``expr`` from a polynomial whose monomials are sorted and whose
    coefficients are not zero; ``terms`` is kept (never changed afterwards) for
    :func:`_as_poly`, so arithmetic on the expression need not rebuild it."""
    keyed = sorted([(_mono_key(m), m, c) for m, c in terms.items()], key=_first)
    key = (tuple([(k, c) for k, _m, c in keyed]), const)
    ordered = tuple([(_dim(c), m) for _k, m, c in keyed])
    _fill_size_expr(expr, ordered, _dim(const), key, hash(key), terms)


def _first(item: tuple) -> object:
    return item[0]


def _new_expr(terms: dict[tuple, int], const: int) -> SizeExpr:
    """The SizeExpr of a canonical polynomial (see :func:`_fill_canonical`), without the
    sorting and merging the public constructor does for terms given in any form."""
    expr = SizeExpr.__new__(SizeExpr)
    _fill_canonical(expr, terms, const)
    return expr


def dim_text(d: object, var_text: Callable[[SizeVar], str] = str) -> str:
    """The text of a dimension, each size variable written by ``var_text``: ``n*4 + m - 1``.

    Divisions are written from the innermost out, on an explicit stack.
    """
    if type(d) is SizeVar:
        return var_text(d)
    if type(d) is not SizeExpr:
        return "?" if type(d) is Any else str(d)
    done: dict[int, str] = {}
    stack: list[tuple[object, bool]] = [(d, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if not expanded:
            stack.append((node, True))
            if isinstance(node, _Division):
                if type(node.a) is SizeExpr:
                    stack.append((node.a, False))
            else:
                stack.extend((a, False) for _, m in node.terms for a in m if isinstance(a, _Division))  # type: ignore[attr-defined]
            continue
        if isinstance(node, _Division):
            a = node.a
            inner = var_text(a) if type(a) is SizeVar else done[id(a)]
            name = "floordiv" if type(node) is FloorDiv else "floormod"
            done[id(node)] = f"{name}({inner}, {node.b})"
            continue
        parts: list[str] = []
        # Terms and factors in the order parsing the text gives them (by the names written).
        terms = []
        for coeff, mono in node.terms:  # type: ignore[attr-defined]
            keyed = sorted((0, var_text(a)) if type(a) is SizeVar else (1, done[id(a)]) for a in mono)
            terms.append(((len(keyed), tuple(keyed)), int(coeff), [t for _, t in keyed]))
        terms.sort(key=lambda t: t[0])
        for _, c, factors in terms:
            if abs(c) != 1:
                factors.append(str(abs(c)))
            text = "*".join(factors)
            if not parts:
                parts.append(text if c > 0 else "-" + text)
            else:
                parts.append(("+ " if c > 0 else "- ") + text)
        c = int(node.const)  # type: ignore[attr-defined]
        if c:
            parts.append(("+ " if c > 0 else "- ") + str(abs(c)))
        done[id(node)] = " ".join(parts)
    return done[id(d)]


# --- polynomials ------------------------------------------------------------------------------


def _as_poly(d: object) -> _Poly | None:
    """A dimension as a polynomial; None for ``Any`` (or anything not a dimension)."""
    t = type(d)
    if t is IntImm or t is int:
        return {}, int(d)  # type: ignore[call-overload]
    if t is SizeVar:
        return {(d,): 1}, 0
    if t is SizeExpr:
        return d._poly, int(d.const)  # type: ignore[attr-defined]
    if isinstance(d, int) and not isinstance(d, bool):
        return {}, int(d)
    return None


def _from_poly(poly: _Poly) -> Dim:
    """The canonical dimension of a polynomial: a number, a lone variable, or a SizeExpr.

    Every monomial of ``poly`` is sorted already (the arithmetic below keeps
    them so); zero coefficients are dropped here.
    """
    terms, const = poly
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return _dim(const)
    if const == 0 and len(terms) == 1:
        ((mono, coeff),) = terms.items()
        if coeff == 1 and len(mono) == 1 and type(mono[0]) is SizeVar:
            return mono[0]
    return _new_expr(terms, const)


def _merge(a: tuple, b: tuple) -> tuple:
    return tuple(sorted(a + b, key=_atom_key))


# Relations compute the same few extents again and again: every typing of a module runs
# every relation, and a pipeline types a module several times.  The arithmetic of
# symbolic operands is memoized (by operation and operands: size variables by identity,
# expressions by canonical form, numbers by value), numbers with numbers never reach it.
_MEMO: dict[tuple, Dim] = {}
_MEMO_LIMIT = 1 << 14
_MEMO_TYPES = frozenset({IntImm, int, SizeVar, SizeExpr})


def _memoized(op: Callable[[Dim, Dim], Dim], a: Dim, b: Dim) -> Dim:
    """``op(a, b)``, remembered when both operands are numbers or symbolic dimensions
    (``Any`` and anything else is computed each time: ``True == 1``, yet is no dimension)."""
    if type(a) not in _MEMO_TYPES or type(b) not in _MEMO_TYPES:
        return op(a, b)
    key = (op, a, b)
    got = _MEMO.get(key)
    if got is None:
        got = op(a, b)
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = got
    return got


def dim_add(a: Dim, b: Dim) -> Dim:
    """``a + b``; ``Any`` when either is."""
    ta, tb = type(a), type(b)
    if (ta is IntImm or ta is int) and (tb is IntImm or tb is int):
        return _dim(a + b)
    return _memoized(_add, a, b)


def _add(a: Dim, b: Dim) -> Dim:
    pa, pb = _as_poly(a), _as_poly(b)
    if pa is None or pb is None:
        return Any()
    terms = dict(pa[0])
    for m, c in pb[0].items():
        terms[m] = terms.get(m, 0) + c
    return _from_poly((terms, pa[1] + pb[1]))


def dim_neg(a: Dim) -> Dim:
    ta = type(a)
    if ta is IntImm or ta is int:
        return _dim(-a)
    pa = _as_poly(a)
    if pa is None:
        return Any()
    return _from_poly(({m: -c for m, c in pa[0].items()}, -pa[1]))


def dim_sub(a: Dim, b: Dim) -> Dim:
    """``a - b``; ``Any`` when either is."""
    ta, tb = type(a), type(b)
    if (ta is IntImm or ta is int) and (tb is IntImm or tb is int):
        return _dim(a - b)
    return dim_add(a, dim_neg(b))


def dim_mul(a: Dim, b: Dim) -> Dim:
    """``a * b``; ``Any`` when either is (unless the other is 0)."""
    ta, tb = type(a), type(b)
    if ta is IntImm or ta is int:
        if tb is IntImm or tb is int:
            return _dim(a * b)
        if tb is SizeVar or tb is SizeExpr:
            return _scaled(b, int(a))
    elif (tb is IntImm or tb is int) and (ta is SizeVar or ta is SizeExpr):
        return _scaled(a, int(b))
    return _memoized(_mul, a, b)


def _scaled(d: Dim, k: int) -> Dim:
    """``d * k`` for a symbolic ``d``."""
    if k == 1:
        return d
    if k == 0:
        return _dim(0)
    return _memoized(_scale, d, k)


def dim_product(dims: Iterable[Dim]) -> Dim:
    """The product of dimensions (a shape's number of elements); ``Any`` when one is.

    The numbers are multiplied as ints and the symbolic dims among
    themselves, then the two once: relations ask this for every reshape.
    """
    number = 1
    symbolic: Dim | None = None
    for d in dims:
        t = type(d)
        if t is IntImm or t is int:
            number *= d
        elif t is Any:
            return Any()
        else:
            symbolic = d if symbolic is None else dim_mul(symbolic, d)
    if symbolic is None:
        return _dim(number)
    return dim_mul(symbolic, number)


def _scale(d: Dim, k: int) -> Dim:
    """``d * k`` for a symbolic ``d`` and a number ``k`` other than 0 and 1: each
    coefficient times ``k`` (the order of the terms does not change)."""
    if type(d) is SizeVar:
        return _new_expr({(d,): k}, 0)
    return _new_expr({m: c * k for m, c in d._poly.items()}, int(d.const) * k)  # type: ignore[attr-defined]


def _mul(a: Dim, b: Dim) -> Dim:
    pa, pb = _as_poly(a), _as_poly(b)
    if pa is None or pb is None:
        return _dim(0) if (pa == ({}, 0) or pb == ({}, 0)) else Any()
    ta = [*pa[0].items(), ((), pa[1])]
    tb = [*pb[0].items(), ((), pb[1])]
    terms: dict[tuple, int] = {}
    for ma, ca in ta:
        for mb, cb in tb:
            m = _merge(ma, mb)
            terms[m] = terms.get(m, 0) + ca * cb
    const = terms.pop((), 0)
    return _from_poly((terms, const))


def _split(poly: _Poly, c: int) -> tuple[_Poly, _Poly]:
    """``poly = c * quotient + rest``, with every coefficient of ``rest`` in ``[0, c)``."""
    terms, const = poly
    q_terms: dict[tuple, int] = {}
    r_terms: dict[tuple, int] = {}
    for m, k in terms.items():
        q, r = divmod(k, c)
        if q:
            q_terms[m] = q
        if r:
            r_terms[m] = r
    q0, r0 = divmod(const, c)
    return (q_terms, q0), (r_terms, r0)


def _single_monomial(poly: _Poly) -> tuple[tuple, int] | None:
    terms, const = poly
    if const or len(terms) != 1:
        return None
    ((m, k),) = terms.items()
    return m, k


def _remove_atoms(mono: tuple, divisor: tuple) -> tuple | None:
    """``mono`` without the atoms of ``divisor`` (with multiplicity), or None if it lacks one."""
    rest = list(mono)
    for a in divisor:
        for i, x in enumerate(rest):
            if x is a or x == a:
                del rest[i]
                break
        else:
            return None
    return tuple(rest)


def _symbolic_quotient(pa: _Poly, pb: _Poly) -> Dim | None:
    """``a / b`` when ``b`` is one monomial dividing every term of ``a`` exactly; else None."""
    single = _single_monomial(pb)
    if single is None or pa[1]:
        return None
    mono, k = single
    terms: dict[tuple, int] = {}
    for m, c in pa[0].items():
        rest = _remove_atoms(m, mono)
        if rest is None or c % k:
            return None
        terms[rest] = terms.get(rest, 0) + c // k
    const = terms.pop((), 0)
    return _from_poly((terms, const))


def _single_division(poly: _Poly) -> tuple[FloorDiv, int] | None:
    """``(d, k)`` when ``poly`` is ``d + k`` for one floor division ``d``, else None."""
    terms, const = poly
    if len(terms) != 1:
        return None
    ((mono, coeff),) = terms.items()
    if coeff != 1 or len(mono) != 1 or type(mono[0]) is not FloorDiv:
        return None
    return mono[0], const


def dim_floordiv(a: Dim, b: Dim) -> Dim:
    """``a // b`` (floor division): exact where it can be, else ``Any``.

    By a positive constant it always has a form (``floordiv(n + 1, 2)`` when
    nothing divides); by a symbolic divisor only when that divides every term.
    """
    ta, tb = type(a), type(b)
    if (ta is IntImm or ta is int) and (tb is IntImm or tb is int) and b:
        return _dim(a // b)
    return _memoized(_floordiv, a, b)


def _floordiv(a: Dim, b: Dim) -> Dim:
    pa, pb = _as_poly(a), _as_poly(b)
    if pa is None or pb is None:
        return Any()
    if not pb[0]:
        c = pb[1]
        if c == 0:
            raise ZeroDivisionError(f"the dimension {a} divided by 0")
        if c < 0:
            return dim_floordiv(dim_neg(a), _dim(-c))
        (q_terms, q0), rest = _split(pa, c)
        if not rest[0]:
            return _from_poly((q_terms, q0 + rest[1] // c))
        inner = _single_division(rest)
        if inner is not None:
            # floordiv(floordiv(x, a) + k, c) is floordiv(x + k*a, a*c): divisions never nest,
            # however many times a dimension is halved.
            a, k = inner
            return dim_add(_from_poly((q_terms, q0)),
                           dim_floordiv(dim_add(a.a, k * int(a.b)), int(a.b) * c))
        atom = FloorDiv(_from_poly(rest), c)
        q_terms[(atom,)] = q_terms.get((atom,), 0) + 1
        return _from_poly((q_terms, q0))
    exact = _symbolic_quotient(pa, pb)
    return Any() if exact is None else exact


def dim_floormod(a: Dim, b: Dim) -> Dim:
    """``a % b`` (floor remainder): by a positive constant it has a form; else ``Any``."""
    ta, tb = type(a), type(b)
    if (ta is IntImm or ta is int) and (tb is IntImm or tb is int) and b > 0:
        return _dim(a % b)
    return _memoized(_floormod, a, b)


def _floormod(a: Dim, b: Dim) -> Dim:
    pa, pb = _as_poly(a), _as_poly(b)
    if pa is None or pb is None:
        return Any()
    if not pb[0]:
        c = pb[1]
        if c == 0:
            raise ZeroDivisionError(f"the dimension {a} modulo 0")
        if c < 0:
            return Any()
        _, rest = _split(pa, c)
        if not rest[0]:
            return _dim(rest[1] % c)
        return SizeExpr([(1, (FloorMod(_from_poly(rest), c),))])
    exact = _symbolic_quotient(pa, pb)
    return Any() if exact is None else _dim(0)


_OPS = {
    "add": dim_add, "sub": dim_sub, "mul": dim_mul, "floordiv": dim_floordiv, "mod": dim_floormod,
}


def _arith(op: str, a: object, b: object) -> object:
    """The hook behind a size variable's operators: NotImplemented for a non-dimension."""
    if op == "neg":
        return dim_neg(a)  # type: ignore[arg-type]
    if _as_poly(b) is None and type(b) is not Any or isinstance(b, bool):
        return NotImplemented
    return _OPS[op](a, b)  # type: ignore[arg-type]


hooks.dim_arith = _arith
for _key, _cls in (("tir.SizeVar", SizeVar), ("relaypass.SizeExpr", SizeExpr),
                   ("tir.FloorDiv", FloorDiv), ("tir.FloorMod", FloorMod)):
    register_object(_key)(_cls)


# --- queries ----------------------------------------------------------------------------------


def is_symbolic(d: object) -> bool:
    """Whether a dimension is a size variable or an expression of them (not a number, not Any)."""
    t = type(d)
    return t is SizeVar or t is SizeExpr


def known_int(d: object) -> int | None:
    """The extent of a dimension when it is a number, else None (``Any`` or symbolic)."""
    return int(d) if type(d) is IntImm or type(d) is int else None  # type: ignore[call-overload]


def free_size_vars(dims: Iterable[object]) -> list[SizeVar]:
    """The size variables the dimensions use, each once, in the order first met."""
    out: dict[SizeVar, None] = {}
    stack = list(reversed(list(dims)))
    while stack:
        d = stack.pop()
        t = type(d)
        if t is SizeVar:
            out.setdefault(d, None)  # type: ignore[arg-type]
        elif t is SizeExpr:
            stack.extend(reversed([a for _, m in d.terms for a in m]))  # type: ignore[attr-defined]
        elif isinstance(d, _Division):
            stack.append(d.a)
    return list(out)


def substitute(d: Dim, values: dict[SizeVar, Dim]) -> Dim:
    """``d`` with size variables replaced by ``values`` (dimensions), refolded.

    Divisions are evaluated from the innermost out, on an explicit stack.
    """
    t = type(d)
    if t is SizeVar:
        return values.get(d, d)  # type: ignore[arg-type]
    if t is not SizeExpr:
        return d
    done: dict[int, Dim] = {}
    stack: list[tuple[object, bool]] = [(d, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        atoms = _atoms_of(node)
        if not expanded:
            stack.append((node, True))
            stack.extend((a, False) for a in atoms if isinstance(a, _Division) and id(a) not in done)
            inner = node.a if isinstance(node, _Division) else None  # type: ignore[attr-defined]
            if type(inner) is SizeExpr and id(inner) not in done:
                stack.append((inner, False))
            continue
        if isinstance(node, _Division):
            a = node.a  # type: ignore[attr-defined]
            num = done[id(a)] if type(a) is SizeExpr else values.get(a, a)
            op = dim_floordiv if type(node) is FloorDiv else dim_floormod
            done[id(node)] = op(num, node.b)  # type: ignore[attr-defined]
            continue
        total: Dim = _dim(int(node.const))  # type: ignore[attr-defined]
        for coeff, mono in node.terms:  # type: ignore[attr-defined]
            term: Dim = _dim(int(coeff))
            for a in mono:
                term = dim_mul(term, done[id(a)] if isinstance(a, _Division) else values.get(a, a))
            total = dim_add(total, term)
        done[id(node)] = total
    return done[id(d)]


def _atoms_of(node: object) -> list[object]:
    if type(node) is SizeExpr:
        return [a for _, m in node.terms for a in m]  # type: ignore[attr-defined]
    return []
