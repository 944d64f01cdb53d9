"""DynamicToStatic: turn ``dyn.*`` calls whose shape arguments are known into static calls.

Relay's pass (``dynamic_to_static.cc``): a call such as
``dyn.reshape(%x, shape_of(%y))`` becomes ``reshape(%x, newshape=[8, 3])``
when ``%y`` has a static type, because constant folding turns
``shape_of(%y)`` into a constant.  Which arguments must be constants, and
what static call their values make, is the operator's
:class:`~relaypass.op.dynamic.StaticForm` (registered with each ``dyn.*``
operator, so an operator package's own dynamic operators take part too).

As in Relay, the arguments that give a shape are folded on their own (the
rest of the function is not folded before the rewrite), so
``dyn.zeros(shape_of(%x))`` becomes the call ``zeros(shape=[...])`` rather
than a folded tensor of zeros; then its functions lose their return type
annotations, which the rewrite may have made too loose, and the whole
function is folded (with FoldConstant, keeping calls without arguments as
Relay does) and typed again.

Relay rewrites in one post-order sweep, folding each call's arguments as it
goes.  Here a sweep folds the shape arguments of every dynamic call together
(one by one if some do not type: a shape whose length is known only after
folding, as in Relay, where only these pieces are ever typed before the
rewrite), and rewrites the calls whose arguments became constants; sweeps repeat until one
rewrites nothing (a call whose shape is ``shape_of`` of another dynamic
call's result waits for the sweep after that call's rewrite), and the
whole is repeated after the final folding when that folding made more shape
arguments constant (say, through a ``let``), so running the pass twice
changes nothing.  Every sweep is linear in the function's size, and each
rewrites at least one call; none recurses, so any chain length works.

Static calls are left as they are, as in Relay: a ``reshape`` whose newshape
copies an extent (code 0) keeps the code when the extent becomes known (the
ONNX importer writes one for a target read from a size variable, which is why
binding a dynamic import's input does not give the ``shape=`` import there).

Folding is the registered FoldConstant's transformation, applied to the
function alone, and typing the pass of role ``type-inference``; both see the
module, so that calls of its global functions type.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis import free_vars
from relaypass.analysis.substitution import bind
from relaypass.errors import RelayPassError
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function, GlobalVar, Tuple, Var
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.summary import short_text
from relaypass.ir.traversal import post_order_visit
from relaypass.op.dynamic import static_form
from relaypass.transform import (
    PassContext,
    get_pass,
    get_pass_by_role,
    pass_constructor,
)

__all__ = ["DynamicToStatic", "DynamicToStaticError", "dynamic_to_static"]


class DynamicToStaticError(RelayPassError):
    """A dynamic call's shape arguments fold to values its static operator cannot take
    (say, ``dyn.reshape`` by a shape with code -2, or a ``dyn.topk`` by two values of k).
    A static call they make that does not type (a reshape to the wrong number of
    elements) is reported by type inference, as in Relay."""


def _dynamic_calls(expr: Expr) -> list[Call]:
    """The calls of operators that have a static form, anywhere in ``expr``."""
    found: list[Call] = []

    def visit(node: Expr) -> None:
        if type(node) is Call and static_form(node) is not None:
            found.append(node)

    post_order_visit(expr, visit)
    return found


def _ready(call: Call) -> bool:
    """Whether every argument the static form needs known is a constant already."""
    return all(type(call.args[i]) is Constant for i in static_form(call).const_args)


class _Workspace:
    """Where the function being rewritten, and its shape arguments, are typed and folded.

    Folding is the FoldConstant transformation applied to one function (not
    to every function of the module, as running the pass would), with the
    module there for typing calls of its global functions.  The shape
    arguments are typed in a copy of the module without the function: before
    the rewrite it may not type at all (a shape whose length only folding
    tells), and type inference types the module it is given.
    """

    def __init__(self, func: Function, mod: IRModule | None) -> None:
        self.func = func
        self.mod = mod if mod is not None else IRModule()
        self.pieces: IRModule | None = None
        name = "__dynamic_to_static"
        while name in self.mod:
            name += "_"
        self.scratch = GlobalVar(name)
        # FoldConstant is a function pass: its transformation, applied to one function.
        self.fold_function = get_pass("FoldConstant", fold_nullary=False).pass_func
        self.typer = get_pass_by_role("type-inference")

    def fold(self, func: Function, mod: IRModule) -> Function:
        return self.fold_function(func, mod, PassContext.current())

    def folded(self, func: Function) -> Function:
        return self.fold(func, self.mod)

    def fold_each(self, exprs: list[Expr]) -> dict[Expr, Expr]:
        """Each expression of ``exprs`` folded on its own, as a function of its free variables.

        All are folded together when they all type; otherwise one by one, and
        one that does not type (a shape of unknown rank, an unannotated
        variable) stays as it is.
        """
        folded = self._fold_together(exprs)
        if folded is not None or len(exprs) == 1:
            return folded or {}
        out: dict[Expr, Expr] = {}
        for expr in exprs:
            out.update(self._fold_together([expr]) or {})
        return out

    def _fold_together(self, exprs: list[Expr]) -> dict[Expr, Expr] | None:
        body = Tuple(exprs)
        params = free_vars(body)
        # A variable a let binds has no annotation; the copy standing for it as a parameter
        # carries the type it was given.
        untyped = {v: Var(v.name_hint, v.checked_type) for v in params
                   if v.type_annotation is None and v.has_checked_type}
        if untyped:
            body = bind(body, untyped)
            params = [untyped.get(v, v) for v in params]
        if self.pieces is None:
            self.pieces = self.mod.copy()
            for gv, f in self.mod.items():
                if f is self.func:
                    self.pieces.remove(gv)
        self.pieces.add(self.scratch, Function(params, body), update=True)
        try:
            typed = self.typer(self.pieces)[self.scratch]
        except RelayPassError:
            return None
        # Folding keeps the tuple (a tuple of constants is left as it is).
        return dict(zip(exprs, self.fold(typed, self.pieces).body.fields))


class _Rewriter(MixedModeMutator):
    """Replaces each dynamic call whose needed arguments fold to constants by its static form."""

    def __init__(self, folded: dict[Expr, Expr]) -> None:
        super().__init__()
        self.folded = folded
        self.rewritten = 0

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        form = static_form(post) if type(post) is Call else None
        if form is None:
            return post
        args = list(post.args)
        for i in form.const_args:
            if type(args[i]) is not Constant:
                value = self.folded.get(pre.args[i])
                if type(value) is not Constant:
                    return post
                args[i] = value
        values = [args[i].array for i in form.value_args]
        try:
            static = form.static_call(args, values, post.attrs)
        except RelayPassError as err:
            raise DynamicToStaticError(
                f"DynamicToStatic: the constant arguments of {short_text(pre)} make no "
                f"{form.op_name} call: {err}") from err
        self.rewritten += 1
        return static


class _DropReturnTypes(MixedModeMutator):
    """Every function without its return type annotation, for the inference that follows
    (the final folding types the function) to find again, tighter."""

    def visit_function(self, func: Function) -> Expr:
        post = super().visit_function(func)
        if post.ret_type is None:
            return post
        return with_fields(post, ret_type=None)


def _sweep(func: Function, work: _Workspace) -> tuple[Function, int]:
    """One rewrite of the dynamic calls whose shape arguments fold, and how many it rewrote."""
    calls = _dynamic_calls(func)
    if not calls:
        return func, 0
    pending: dict[Expr, None] = {}
    for call in calls:
        for i in static_form(call).const_args:
            if type(call.args[i]) is not Constant:
                pending[call.args[i]] = None
    folded = work.fold_each(list(pending)) if pending else {}
    rewriter = _Rewriter(folded)
    out = rewriter.visit(func)
    return out, rewriter.rewritten


def dynamic_to_static(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` with each dynamic call whose shape arguments are known made static, then folded.

    ``mod`` is the module ``func`` belongs to (read only, for typing calls of
    its global functions).
    """
    work = _Workspace(func, mod)
    while True:
        rewritten = 1
        while rewritten:
            func, rewritten = _sweep(func, work)
        func = work.folded(_DropReturnTypes().visit(func))
        if not any(_ready(c) for c in _dynamic_calls(func)):
            return func


def _dynamic_to_static_factory() -> Callable[[Function, IRModule, object], Function]:
    """DynamicToStatic's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return dynamic_to_static(func, mod)

    return transform


#: The DynamicToStatic pass, the one ``relay.transform.DynamicToStatic`` builds;
#: everything about it is declared in relaypass-plugin.toml.
DynamicToStatic = pass_constructor("DynamicToStatic")
