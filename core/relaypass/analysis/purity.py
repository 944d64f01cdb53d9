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

Relay reads "is this value a function?" from ``checked_type``.  Here that
question is also answered from the program itself, so untyped programs are
analysed as precisely as typed ones: operators return tensors or tuples of
tensors, constants and tuples of such are data, a function returns data when
its body does, and so on; a value of unknown shape counts as a possible
function, which only ever makes the answer more conservative.

Where this differs from Relay, it is on the safe or exact side:

* the value stored by ``ref(value)`` counts (Relay ignores it); and callers can
  ask for allocation itself to count as an effect, which ToGraphNormalForm does
  because sharing one ``ref(...)`` node is not the same as binding it once;
* recursion is resolved by iterating to a fixed point, so a recursive function
  that turns out impure is never left marked pure (Relay keeps its first,
  optimistic guess for the calls inside the function's own body);
* there is no depth cut-off (Relay assumes calls nested 25 deep are impure);
  nothing here recurses along dataflow or let chains, so depth costs nothing.
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
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, RefType, TensorType, TupleType, Type

__all__ = ["PurityAnalysis", "let_purity"]

# What the analysis knows about a value, as bits of an int.
_EVAL = 1  # evaluating it is pure
_CALL = 2  # calling it (if it is a function) is pure
_DATA = 4  # it is a tensor or a tuple of data: no function anywhere in it
_RDATA = 8  # it is a function whose result is data

_PURE = _EVAL | _CALL
_ASSUMED = 16  # (a let variable's state only) its value is being analysed

_LEAVES = frozenset({Var, Constant, GlobalVar, Op})

# Work items on the explicit stack, besides plain expressions.
_EXIT = 0  # combine the children of a node
_LET_VALUE = 1  # a let's value is done: bind the variable, go on with the body
_LET_EXIT = 2  # a let's body is done


def _is_data_type(ty: Type) -> bool:
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType) or isinstance(t, RefType):
            continue
        if isinstance(t, TupleType):
            stack.extend(t.fields)
            continue
        return False
    return True


def _type_bits(ty: Type | None) -> int:
    """What a type says: data, or a function returning data (0 when it says neither)."""
    if ty is None:
        return 0
    if isinstance(ty, FuncType):
        return _RDATA if _is_data_type(ty.ret_type) else 0
    return _DATA if _is_data_type(ty) else 0


def _first_order_type(expr: Expr) -> bool:
    """Whether the inferred type of ``expr`` says it is not a function."""
    ty = expr._checked_type
    return ty is not None and not isinstance(ty, FuncType)


def _call_bit(expr: Expr, bits: int) -> int:
    """The pure-call bit of a value known by ``bits``: always set for first-order values."""
    return _CALL if bits & _DATA or _first_order_type(expr) else 0


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

    def let_purity(self, expr: Expr) -> dict[Var, bool]:
        """For every let-bound variable in ``expr``: is evaluating its value free of effects?"""
        run = _Run(self._alloc_pure, self._global_bits)
        run.purity(expr)
        return {var: bool(p & _EVAL) for var, p in run.let_vars.items()}

    def _global_bits(self, gv: GlobalVar) -> int:
        if self._globals is None:
            self._globals = self._global_fixpoint()
        # Not a Relay function of this module (or extern): calling it may do anything.
        return self._globals.get(gv.name_hint, _EVAL)

    def _global_fixpoint(self) -> dict[str, int]:
        """What is known of every global function, by name, assuming pure until shown otherwise.

        Every function is analysed once with the current assumptions, noting
        the globals it looked up; whenever what is known of a function
        weakens, only the functions that looked it up are analysed again.
        Assumptions only ever weaken (a few bits per function), so each
        function is analysed a bounded number of times: linear in the
        module, where re-analysing every function until nothing changes is
        quadratic on a chain of calls.  This is the greatest fixed point of
        the same equations, whatever the order.
        """
        table: dict[str, int] = {}
        if self._mod is None:
            return table
        funcs: dict[str, Function] = {}
        for gv, func in self._mod.items():
            if isinstance(func, Function) and not func.attrs.get("Extern"):
                table[gv.name_hint] = _PURE | _RDATA
                funcs[gv.name_hint] = func
        users: dict[str, set[str]] = {}  # global -> the functions whose analysis looked it up
        todo = list(funcs)
        queued = set(todo)
        while todo:
            name = todo.pop()
            queued.discard(name)
            looked_up: set[str] = set()

            def lookup(gv: GlobalVar, looked_up: set[str] = looked_up) -> int:
                looked_up.add(gv.name_hint)
                return table.get(gv.name_hint, _EVAL)

            bits = _Run(self._alloc_pure, lookup).purity(funcs[name])
            for callee in looked_up:
                users.setdefault(callee, set()).add(name)
            if bits != table[name]:
                table[name] = bits
                for user in users.get(name, ()):
                    if user not in queued:
                        queued.add(user)
                        todo.append(user)
        return table


class _Run:
    """One analysis pass: post-order with an explicit stack, memoized by node identity."""

    def __init__(self, alloc_pure: int, global_bits) -> None:
        self.alloc_pure = alloc_pure
        self.global_bits = global_bits
        self.memo: dict[Expr, int] = {}
        self.var_state: dict[Var, int] = {}  # params and let variables
        self.let_vars: dict[Var, int] = {}  # let variables only: what is known of their value
        # Let variables mentioned while their value was analysed (state flag _ASSUMED).
        self.recursive: set[Var] = set()

    def leaf(self, node: Expr) -> int:
        """What is known of a node without children (never memoized for variables)."""
        t = type(node)
        if t is Var:
            state = self.var_state.get(node)
            if state is None:
                bits = _type_bits(node.type_annotation) | _type_bits(node._checked_type)
                return _EVAL | bits | _call_bit(node, bits)
            if state & _ASSUMED:
                self.recursive.add(node)
            return _EVAL | (state & (_CALL | _DATA | _RDATA))
        if t is Constant:
            return _PURE | _DATA
        if t is GlobalVar:
            return _EVAL | (self.global_bits(node) & (_CALL | _RDATA))
        if isinstance(node, Op):
            stateful = node.get_attr("TOpIsStateful")
            return _EVAL | _RDATA | (0 if stateful else _CALL)
        raise TypeError(f"purity analysis: unexpected expression {t.__name__}")

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
                    guess = var_state[var] & (_CALL | _RDATA)
                    if var in self.recursive and guess & ~p:
                        # The guess for a recursive value was too good: analyse it again,
                        # assuming only what this round showed.  Guesses only ever weaken.
                        start = item[2]
                        for key in list(memo)[start:]:
                            del memo[key]
                        self.recursive.discard(var)
                        var_state[var] = _EVAL | (guess & p) | _ASSUMED
                        push((_LET_VALUE, node, len(memo)))
                        push(node.value)
                        continue
                    bits = p | _type_bits(var.type_annotation)
                    var_state[var] = bits
                    self.let_vars[var] = p
                    push((_LET_EXIT, node))
                    push(node.body)
                else:  # _LET_EXIT
                    value = of(node.value)
                    body = of(node.body)
                    memo[node] = (value & body & _EVAL) | (body & ~_EVAL)
                continue
            node = item
            if node in memo:
                continue
            t = type(node)
            if t is Call:
                op = node.op
                pending = [a for a in node.args if a not in memo and type(a) not in _LEAVES]
                if type(op) not in _LEAVES and op not in memo:
                    pending.append(op)
                if pending:
                    push((_EXIT, node))
                    stack.extend(pending)
                else:
                    # The common case in A-normal form: every operand is already known.
                    memo[node] = self._combine(node, of)
            elif t is Let:
                var = node.var
                # A recursive closure may mention itself: assume the best until shown otherwise.
                var_state[var] = _PURE | _RDATA | _ASSUMED
                push((_LET_VALUE, node, len(memo)))
                push(node.value)
            elif t in _LEAVES or isinstance(node, Op):
                continue
            else:
                layout = getattr(t, "_layout_", None)
                if layout is None:
                    raise TypeError(f"purity analysis: unexpected expression {t.__name__}")
                if t is Function:
                    for param in node.params:
                        bits = _type_bits(param.type_annotation)
                        # Parameters of function type are assumed call-impure (Relay's rule B).
                        var_state[param] = _EVAL | bits | (_CALL if bits & _DATA else 0)
                # The children (not the variables a node binds) are combined on exit.
                push((_EXIT, node))
                for kid in layout.subterms(node):
                    if kid not in memo:
                        push(kid)
        return of(root)

    def _combine(self, node: Expr, of) -> int:
        t = type(node)
        if t is Call:
            callee = of(node.op)
            pure = _EVAL if callee & _PURE == _PURE else 0
            if pure:
                for a in node.args:
                    if not of(a) & _EVAL:
                        pure = 0
                        break
            data = _DATA if callee & _RDATA else _type_bits(node._checked_type) & _DATA
            call = _CALL if callee & _CALL else _call_bit(node, data)
            return pure | call | data
        if t is Tuple:
            pure = _EVAL
            data = _DATA
            for f in node.fields:
                bits = of(f)
                pure &= bits
                data &= bits
            return pure | _CALL | data
        if t is TupleGetItem:
            bits = of(node.tuple_value)
            data = (bits | _type_bits(node._checked_type)) & _DATA
            # A function taken out of a tuple is assumed call-impure (Relay's rule C).
            return (bits & _EVAL) | data | _call_bit(node, data)
        if t is Function:
            body = of(node.body)
            call = _CALL if body & _PURE == _PURE else 0
            return _EVAL | call | (_RDATA if body & _DATA else 0)
        if t is If:
            c, a, b = of(node.cond), of(node.true_branch), of(node.false_branch)
            return (c & a & b & _EVAL) | (a & b & ~_EVAL)
        if t is RefCreate:
            # A reference is first-order, whatever it holds.
            return (of(node.value) & self.alloc_pure) | _CALL | _DATA
        if t is RefRead:
            # A function read from a reference is assumed call-impure (Relay's rule D).
            data = _type_bits(node._checked_type) & _DATA
            return data | _call_bit(node, data)
        # RefWrite evaluates to ()
        return _CALL | _DATA


def let_purity(
    expr: Expr, mod: IRModule | None = None, *, allocation_is_effect: bool = False
) -> dict[Var, bool]:
    """For every let-bound variable of ``expr``: is its value free of observable effects?"""
    return PurityAnalysis(mod, allocation_is_effect=allocation_is_effect).let_purity(expr)
