"""Which let-bound values may be dropped, moved or shared: Relay's purity analysis.

DeadCodeElimination may only drop an unused binding, and ToGraphNormalForm may
only turn a binding back into dataflow, when evaluating the bound value has no
effect anyone could observe.  The rules are Relay's (``dead_code.cc``): every
expression gets two facts,

* *pure eval*: evaluating it reads or writes no state;
* *pure call*: when it evaluates to a function, calling that function is pure
  (always true for first-order values).

Operators are pure unless flagged ``TOpIsStateful``; reading or writing a
reference is an effect; a call is pure when its callee is call-pure and its
arguments are pure; functions taken out of tuples or references and function
parameters of function type are assumed call-impure; a global function is as
pure as its body, and a global that is not a Relay function (or is marked
``Extern``) is assumed call-impure.

Where this differs from Relay, it is on the safe or exact side:

* the value stored by ``ref(value)`` counts (Relay ignores it); and callers can
  ask for allocation itself to count as an effect, which ToGraphNormalForm does
  because sharing one ``ref(...)`` node is not the same as binding it once;
* recursion is resolved by iterating to a fixed point, so a recursive function
  that turns out impure is never left marked pure (Relay keeps its first,
  optimistic guess for the calls inside the function's own body);
* there is no depth cut-off (Relay assumes calls nested 25 deep are impure);
  nothing here recurses along dataflow or let chains, so depth costs nothing.

Function types come from ``checked_type`` when type inference has run; without
it, operator calls are known to be first-order and anything else of unknown
type is treated as possibly higher-order, which only ever makes the answer
more conservative.
"""

from __future__ import annotations

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
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType

__all__ = ["PurityAnalysis", "let_purity"]

# A purity is a 2-bit int: bit 0 "pure eval", bit 1 "pure call".
_EVAL = 1
_CALL = 2
_PURE = 3

# Work items on the explicit stack, besides plain expressions.
_EXIT = 0  # combine the children of a node
_LET_VALUE = 1  # a let's value is done: bind the variable, go on with the body
_LET_EXIT = 2  # a let's body is done


def _nonzero(value: object) -> bool:
    try:
        return bool(value)
    except (TypeError, ValueError):
        return True


def _first_order(expr: Expr) -> bool:
    """Whether ``expr`` is certainly not a function (unknown types count as "maybe")."""
    ty = expr._checked_type
    if ty is None:
        if type(expr) is Var:
            ty = expr.type_annotation
        elif type(expr) is Call and type(expr.op) is Op:
            return True
        if ty is None:
            return False
    return not isinstance(ty, FuncType)


class PurityAnalysis:
    """Purity facts for the let-bound variables of functions of one module.

    ``allocation_is_effect`` makes ``ref(...)`` itself impure.  Global
    functions are analysed once per analysis object, lazily, the first time a
    function under analysis mentions a global variable.
    """

    def __init__(self, mod: IRModule | None = None, *, allocation_is_effect: bool = False) -> None:
        self._mod = mod
        self._alloc_pure = 0 if allocation_is_effect else _EVAL
        self._globals: dict[str, int] | None = None

    # --- public ---------------------------------------------------------------------------
    def let_purity(self, expr: Expr) -> dict[Var, bool]:
        """For every let-bound variable in ``expr``: is evaluating its value free of effects?"""
        run = _Run(self, self._global_lookup)
        run.purity(expr)
        return {var: bool(p & _EVAL) for var, p in run.let_vars.items()}

    # --- globals --------------------------------------------------------------------------
    def _global_lookup(self, gv: GlobalVar) -> int:
        if self._globals is None:
            self._globals = self._global_fixpoint()
        # Not a Relay function of this module (or extern): calling it may do anything.
        return self._globals.get(gv.name_hint, _EVAL)

    def _global_fixpoint(self) -> dict[str, int]:
        """Purity of every global function by name, assuming pure until shown otherwise.

        Each round re-analyses every global with the current assumptions; the
        assumptions only ever weaken, so this stops after at most one round
        per global function plus one.
        """
        table: dict[str, int] = {}
        if self._mod is None:
            return table
        funcs = []
        for gv, func in self._mod.items():
            if isinstance(func, Function) and not _nonzero(func.attrs.get("Extern", 0)):
                table[gv.name_hint] = _PURE
                funcs.append((gv.name_hint, func))

        def lookup(gv: GlobalVar) -> int:
            return table.get(gv.name_hint, _EVAL)

        changed = True
        while changed:
            run = _Run(self, lookup)
            changed = False
            for name, func in funcs:
                p = run.purity(func)
                if p != table[name]:
                    table[name] = p
                    changed = True
        return table


class _Run:
    """One analysis pass: post-order with an explicit stack, memoized by node identity."""

    def __init__(self, owner: PurityAnalysis, global_lookup) -> None:
        self.alloc_pure = owner._alloc_pure
        self.global_lookup = global_lookup
        self.memo: dict[Expr, int] = {}
        self.var_state: dict[Var, int] = {}  # params and let variables
        self.let_vars: dict[Var, int] = {}  # let variables only: purity of the bound value
        self.assumed: set[Var] = set()  # let variables whose value is being analysed
        self.recursive: set[Var] = set()  # ... and that were mentioned while it was

    def leaf(self, node: Expr) -> int:
        """Purity of a node without children (never memoized for variables)."""
        t = type(node)
        if t is Var:
            state = self.var_state.get(node)
            if state is None:
                return _EVAL | (_CALL if _first_order(node) else 0)
            if node in self.assumed:
                self.recursive.add(node)
            return _EVAL | (state & _CALL)
        if t is Constant:
            return _PURE
        if t is GlobalVar:
            return _EVAL | (self.global_lookup(node) & _CALL)
        if isinstance(node, Op):
            return _EVAL if _nonzero(node.get_attr("TOpIsStateful")) else _PURE
        raise TypeError(f"purity analysis: unexpected expression {type(node).__name__}")

    def purity(self, root: Expr) -> int:
        memo = self.memo
        leaf = self.leaf
        var_state = self.var_state
        stack: list[object] = [root]
        push = stack.append

        def of(e: Expr) -> int:
            p = memo.get(e)
            return leaf(e) if p is None else p

        while stack:
            item = stack.pop()
            if type(item) is tuple:
                kind, node = item[0], item[1]
                if kind == _EXIT:
                    memo[node] = self._combine(node, of)
                elif kind == _LET_VALUE:
                    var = node.var
                    p = of(node.value)
                    if var in self.recursive and not p & _CALL and var_state[var] & _CALL:
                        # The optimistic guess was wrong: analyse the value again, call-impure.
                        start = item[2]
                        for key in list(memo)[start:]:
                            del memo[key]
                        self.recursive.discard(var)
                        var_state[var] = _EVAL
                        push((_LET_VALUE, node, len(memo)))
                        push(node.value)
                        continue
                    self.assumed.discard(var)
                    var_state[var] = p
                    self.let_vars[var] = p
                    push((_LET_EXIT, node))
                    push(node.body)
                else:  # _LET_EXIT
                    value = of(node.value)
                    body = of(node.body)
                    memo[node] = (value & body & _EVAL) | (body & _CALL)
                continue
            node = item
            if node in memo:
                continue
            t = type(node)
            if t is Call:
                push((_EXIT, node))
                push(node.op)
                for a in node.args:
                    if a not in memo:
                        push(a)
            elif t is Tuple:
                push((_EXIT, node))
                for f in node.fields:
                    if f not in memo:
                        push(f)
            elif t is TupleGetItem:
                push((_EXIT, node))
                push(node.tuple_value)
            elif t is Let:
                var = node.var
                var_state[var] = _PURE  # a recursive closure may mention itself
                self.assumed.add(var)
                push((_LET_VALUE, node, len(memo)))
                push(node.value)
            elif t is Function:
                for param in node.params:
                    var_state[param] = _EVAL | (_CALL if _first_order(param) else 0)
                push((_EXIT, node))
                push(node.body)
            elif t is If:
                push((_EXIT, node))
                push(node.cond)
                push(node.true_branch)
                push(node.false_branch)
            elif t is RefCreate:
                push((_EXIT, node))
                push(node.value)
            elif t is RefRead:
                push((_EXIT, node))
                push(node.ref)
            elif t is RefWrite:
                push((_EXIT, node))
                push(node.ref)
                push(node.value)
            elif t is Var or t is Constant or t is GlobalVar or isinstance(node, Op):
                continue
            else:
                raise TypeError(f"purity analysis: unexpected expression {t.__name__}")
        return of(root)

    def _combine(self, node: Expr, of) -> int:
        t = type(node)
        if t is Call:
            callee = of(node.op)
            pure = _EVAL if callee == _PURE else 0
            if pure:
                for a in node.args:
                    if not of(a) & _EVAL:
                        pure = 0
                        break
            call = _CALL if (callee & _CALL or _first_order(node)) else 0
            return pure | call
        if t is Tuple:
            for f in node.fields:
                if not of(f) & _EVAL:
                    return _CALL
            return _PURE
        if t is TupleGetItem:
            return (of(node.tuple_value) & _EVAL) | (_CALL if _first_order(node) else 0)
        if t is Function:
            return _EVAL | (_CALL if of(node.body) == _PURE else 0)
        if t is If:
            c, a, b = of(node.cond), of(node.true_branch), of(node.false_branch)
            return (c & a & b & _EVAL) | (a & b & _CALL)
        if t is RefCreate:
            return (of(node.value) & self.alloc_pure) | _CALL
        if t is RefRead:
            of(node.ref)
            return _CALL if _first_order(node) else 0
        # RefWrite
        of(node.ref)
        of(node.value)
        return _CALL


def let_purity(
    expr: Expr, mod: IRModule | None = None, *, allocation_is_effect: bool = False
) -> dict[Var, bool]:
    """For every let-bound variable of ``expr``: is its value free of observable effects?"""
    return PurityAnalysis(mod, allocation_is_effect=allocation_is_effect).let_purity(expr)
