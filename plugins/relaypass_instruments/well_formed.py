"""Verify after every pass that the module is still well formed, and blame the pass.

A pass that binds a variable twice, leaves a variable without a binding, or
builds types that contradict each other usually does not fail itself: the
next pass, or the interpreter three passes later, does, far from the cause.
This instrument checks the module after each pass so that the error names the
pass that broke it and shows the offending expression.

What "well formed" means here, per global function:

- every variable is bound once and used only inside the scope that binds it
  (:func:`relaypass.analysis.ill_formed_reason`);
- no free variables: every variable is a parameter or let-bound (what
  :func:`relaypass.analysis.free_vars` reports, found in the checker's
  own walk);
- every global function it refers to is defined in the module;
- types are consistent where type inference has filled ``checked_type``: a
  variable's annotation equals its checked type, a let's variable has the type
  of its value, a function's declared return type equals its body's type.
  Types that still hold unsolved parts (``_``) are not compared.

Cost: functions are immutable, so a function once verified stays verified; the
checker remembers them by identity during the PassContext and re-checks only
functions a pass rebuilt.  A pass that changes nothing costs one dictionary
lookup per function.
"""

from __future__ import annotations

from relaypass.analysis import ill_formed_reason
from relaypass.errors import RelayPassError
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Expr, Function, GlobalVar, Let, Var
from relaypass.ir.fields import children, layout_of
from relaypass.ir.summary import clip, short_text, type_text
from relaypass.ir.types import IncompleteType, Type
from relaypass.transform.instrument import PassInstrument

from .options import flag

_SHORT = 160


class IllFormedModuleError(RelayPassError):
    """A pass left the module ill formed (or the module was ill formed before any pass).

    ``pass_name``: the pass to blame (None when the input was already ill
    formed); ``when``: "after" ``pass_name`` ran, "during" it (in the module
    it handed to a pass it runs itself, ``next_pass``), or "before"
    ``next_pass``, the first pass to get the ill-formed input; ``function``:
    the global function's name; ``reason``: what is wrong; ``expr``: the
    offending expression; ``expr_text``: a shortened text of it.
    """

    def __init__(
        self,
        when: str,
        pass_name: str | None,
        next_pass: str | None,
        function: str,
        reason: str,
        expr: Expr,
        expr_text: str,
    ) -> None:
        self.when = when
        self.pass_name = pass_name
        self.next_pass = next_pass
        self.function = function
        self.reason = reason
        self.expr = expr
        self.expr_text = expr_text
        if when == "after":
            where = f"after pass {pass_name}"
        elif when == "during":
            where = f"during pass {pass_name} (in the module it handed to {next_pass})"
        else:
            where = f"before pass {next_pass} (the module was ill formed before any pass ran)"
        super().__init__(f"{where}: @{function} is ill formed: {reason}, in: {expr_text}")


class WellFormedChecker(PassInstrument):
    """Raise :class:`IllFormedModuleError` as soon as a pass leaves the module ill formed.

    ``check_types``: also compare types where InferType filled them.
    ``check_input``: check the module each pass is given, not only the one it
    returns, so that an ill-formed input is reported as such rather than
    blamed on the first pass to get it, and a pass that runs other passes is
    blamed for what it hands them.  Either way each function object is
    checked once.  Both default to true in the manifest (the registry gives
    every declared option).
    """

    def __init__(self, *, check_types: bool, check_input: bool) -> None:
        self._check_types = flag("WellFormedChecker", "check_types", check_types)
        self._check_input = flag("WellFormedChecker", "check_input", check_input)
        # Verified functions (by identity) -> the global variables they refer to.
        self._verified: dict[Function, tuple[GlobalVar, ...]] = {}
        self._running: list[str] = []
        self._contexts = 0

    def enter_pass_ctx(self) -> None:
        self._contexts += 1

    def exit_pass_ctx(self) -> None:
        self._contexts = max(self._contexts - 1, 0)
        if self._contexts == 0:
            self._verified = {}
            self._running = []

    def run_before_pass(self, mod: object, info: object) -> None:
        name = info.name  # type: ignore[attr-defined]
        running = self._running
        if self._check_input:
            if running:
                # What the running pass hands to a pass it runs is its own doing.
                self._check(mod, "during", running[-1], name)
            else:
                self._check(mod, "before", None, name)
        running.append(name)

    def run_after_pass(self, mod: object, info: object) -> None:
        if self._running:
            self._running.pop()
        self._check(mod, "after", info.name, None)  # type: ignore[attr-defined]

    def check(self, mod: object, pass_name: str) -> None:
        """Raise :class:`IllFormedModuleError` blaming ``pass_name`` if ``mod`` is ill formed."""
        self._check(mod, "after", pass_name, None)

    def _check(self, mod: object, when: str, pass_name: str | None, next_pass: str | None) -> None:
        verified = self._verified
        for gv, func in mod.items():  # type: ignore[attr-defined]
            if not isinstance(func, Function):
                continue
            refs = verified.get(func)
            if refs is None:
                problem, refs = _function_problem(func, self._check_types)
                if problem is not None:
                    reason, node, user = problem
                    raise IllFormedModuleError(
                        when, pass_name, next_pass, gv.name_hint, reason, node,
                        _context_text(func, node, user),
                    )
                verified[func] = refs
            for ref in refs:
                if ref not in mod:  # type: ignore[operator]
                    raise IllFormedModuleError(
                        when, pass_name, next_pass, gv.name_hint,
                        f"it refers to @{ref.name_hint}, which the module does not define",
                        ref, _context_text(func, ref),
                    )


_Problem = tuple[str, Expr, "Expr | None"]


def _function_problem(
    func: Function, check_types: bool
) -> tuple[_Problem | None, tuple[GlobalVar, ...]]:
    """The first problem of ``func`` and the globals it refers to.

    A problem is (reason, offending node, the expression using it if known).
    """
    reason = ill_formed_reason(func)
    if reason is not None:
        return _binding_culprit(func, reason), ()

    # One walk serves the remaining checks.  Free variables are found as
    # relay.analysis.free_vars finds them (used, bound nowhere; in post-order
    # of first appearance), without its two extra walks.
    nodes: list[Expr] = []
    post_order_visit(func, nodes.append)
    bound: set[Var] = set()
    used: list[Var] = []
    refs: list[GlobalVar] = []
    typed: list[Expr] = []
    for node in nodes:
        t = type(node)
        if t is Var:
            used.append(node)  # type: ignore[arg-type]
        elif t is Let:
            bound.add(node.var)  # type: ignore[attr-defined]
            typed.append(node)
        elif t is Function:
            bound.update(node.params)  # type: ignore[attr-defined]
            typed.append(node)
        elif t is GlobalVar:
            refs.append(node)  # type: ignore[arg-type]
    for var in used:
        if var not in bound:
            return (f"variable %{var.name_hint} is free (neither a parameter nor let-bound)", var, None), ()
    if check_types:
        for node in (*used, *typed):
            problem = _type_problem(node)
            if problem is not None:
                return (problem, node, None), ()
    return None, tuple(dict.fromkeys(refs))


def _type_problem(node: Expr) -> str | None:
    t = type(node)
    if t is Var:
        ann = node.type_annotation  # type: ignore[attr-defined]
        if ann is not None and node.has_checked_type and _complete(ann) and _complete(node.checked_type):
            if ann != node.checked_type:
                return (
                    f"variable %{node.name_hint} is annotated {ann.astext()} "  # type: ignore[attr-defined]
                    f"but its checked type is {node.checked_type.astext()}"
                )
    elif t is Let:
        var, value = node.var, node.value  # type: ignore[attr-defined]
        if var.has_checked_type and value.has_checked_type:
            vt, xt = var.checked_type, value.checked_type
            if _complete(vt) and _complete(xt) and vt != xt:
                return (
                    f"let-bound %{var.name_hint} has type {vt.astext()} "
                    f"but its value has type {xt.astext()}"
                )
    elif t is Function:
        ret, body = node.ret_type, node.body  # type: ignore[attr-defined]
        if ret is not None and body.has_checked_type and _complete(ret):
            bt = body.checked_type
            if _complete(bt) and ret != bt:
                return (
                    f"the function declares return type {ret.astext()} "
                    f"but its body has type {bt.astext()}"
                )
    return None


def _complete(ty: Type) -> bool:
    """False when ``ty`` still holds a part type inference has not solved."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, IncompleteType):
            return False
        stack.extend(children(t))
    return True


# --- finding the expression to show, only once something is known to be wrong ---


def _binding_culprit(func: Function, reason: str) -> _Problem:
    """The reason and the expression to show for a binding problem ``reason`` reports.

    In program order (pre-order), the binder that binds a variable a second
    time, else the first use of a variable outside its scope.
    """
    bound: set[Var] = set()
    seen: set[Expr] = set()
    stack: list[Expr] = [func]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for v in layout_of(node).bound_vars(node):
            if v in bound:
                return f"variable %{v.name_hint} is bound more than once", node, None
            bound.add(v)
        stack.extend(reversed(children(node)))
    outside = _use_outside_scope(func, bound)
    if outside is not None:
        var, user = outside
        return f"variable %{var.name_hint} is used outside the scope that binds it", var, user
    return reason, func, None


def _use_outside_scope(func: Function, bound: set[Var]) -> tuple[Var, Expr] | None:
    """The first use of a bound variable outside the scope that binds it, with its user."""
    in_scope: set[Var] = set()
    seen: set[Expr] = set()
    stack: list[object] = [(func, None)]
    while stack:
        item = stack.pop()
        if type(item) is frozenset:  # leaving a binder's scope
            in_scope.difference_update(item)
            continue
        node, parent = item  # type: ignore[misc]
        if type(node) is Var:
            # Every use is checked: a variable is a leaf that may be used both
            # inside and outside its scope.
            if node in bound and node not in in_scope:
                return node, parent
            continue
        if node in seen:
            continue
        seen.add(node)
        binders = frozenset(layout_of(node).bound_vars(node))
        kids = children(node)
        if binders:
            in_scope.update(binders)
            stack.append(binders)
            kids = tuple(k for k in kids if k not in binders)
        stack.extend((k, node) for k in reversed(kids))
    return None


def _context_text(func: Function, node: Expr, user: Expr | None = None) -> str:
    """A short text showing ``node`` where a reader can find it in the printout.

    A variable is shown with the expression that uses it (``user``, else the
    first one found).
    """
    if isinstance(node, (Var, GlobalVar)):
        if user is None:
            user = _parent_of(func, node)
        if user is None:
            return short_text(node, max_chars=_SHORT)
        node = user
    if isinstance(node, Let):
        value = short_text(node.value, max_chars=_SHORT)
        return clip(f"let %{node.var.name_hint} = {value}; ...", _SHORT)
    if isinstance(node, Function):
        return clip(_signature(node), _SHORT)
    return short_text(node, max_chars=_SHORT)


def _signature(func: Function) -> str:
    params = ", ".join(
        f"%{p.name_hint}" + (f": {type_text(p.type_annotation)}" if p.type_annotation is not None else "")
        for p in func.params
    )
    ret = f" -> {type_text(func.ret_type)}" if func.ret_type is not None else ""
    return f"fn ({params}){ret} {{ ... }}"


def _parent_of(root: Expr, target: Expr) -> Expr | None:
    """The first expression found (depth first) that has ``target`` as a direct child."""
    seen: set[Expr] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        kids = children(node)
        if any(k is target for k in kids):
            return node
        for k in reversed(kids):
            if k not in seen:
                seen.add(k)
                stack.append(k)
    return None

