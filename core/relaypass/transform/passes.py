"""The pass kinds (ModulePass, FunctionPass, Sequential) and how a pass is run.

Running a pass means, in order: run the passes it requires (the closure of its
``required``, in dependency order, skipping those whose effect still holds), ask
the context's instruments whether it should run and report it to them, hand
the pass function a *copy* of the module (so the caller's module never changes),
and record that it ran.  The record (``log``, one list per top-level call) is
what lets a required pass be skipped when every pass since its last run
declared that it preserves it.  As in Relay, a function pass ends by typing
the module it built with the pass of the "type-inference" role, reported to
instruments inside the function pass; only the functions that need it are
typed (see :func:`_type_result`).  A module pass is handed its own copy
even when Relay code edits its argument in place; :func:`watch_handed_modules`
lets a test kit see such edits.

The loop in :meth:`Sequential._transform` is the hot path of every pipeline; it
is written flat, with no per-pass allocation besides the module copy, so a
no-op pass costs about a microsecond.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..errors import RelayPassError
from ..gc_pause import gc_paused
from . import lookup
from .context import PassContext, pass_enabled
from .pass_info import PassInfo
from .specs import TYPE_INFERENCE

#: A ``preserves`` entry meaning "every other pass's effect" (passes that only read).
PRESERVES_ALL = "*"

_ALL = frozenset((PRESERVES_ALL,))
_NONE: frozenset[str] = frozenset()


class PassResultError(RelayPassError, TypeError):
    """A pass function returned something other than what its kind must return."""


class Pass:
    """Base class of every pass: ``info`` (a PassInfo) and ``pass(mod) -> mod``.

    ``preserves`` names the passes whose effect this pass keeps (``"*"`` for
    all); ``origin`` says where the pass came from (distribution and version)
    for error notes.  The registry sets both for the passes it builds.
    """

    __slots__ = ("info", "preserves", "origin")

    def __init__(self, info: PassInfo, preserves: Iterable[str] | None = None) -> None:
        if not isinstance(info, PassInfo):
            raise TypeError(f"a pass needs a PassInfo, not {type(info).__name__}")
        self.info = info
        self.preserves = frozenset(preserves) if preserves else _NONE
        self.origin = ""

    def __call__(self, mod: Any) -> Any:
        """Run this pass (and the passes it requires) under ``PassContext.current()``.

        A bare expression or function is accepted too (Relay's old-style
        invocation): it is wrapped with ``IRModule.from_expr`` and the same kind
        comes back (the transformed ``main`` function, or its body).
        """
        with gc_paused():  # a pass makes many small objects and no cycles: see gc_pause
            return self._call(mod)

    def _call(self, mod: Any) -> Any:
        ctx = PassContext.current()
        module_cls = _ir_module_class()
        if isinstance(mod, module_cls):
            return _run(self, mod, ctx, [])
        from ..ir.expr import Expr, Function

        if not isinstance(mod, Expr):
            raise TypeError(
                f"pass {self.info.name!r} runs on an IRModule (or an expression), "
                f"not {type(mod).__name__}"
            )
        out = _run(self, module_cls.from_expr(mod), ctx, [])
        added = sorted(gv.name_hint for gv in out.get_global_vars() if gv.name_hint != "main")
        if added:  # handing back main alone would leave its calls of them dangling
            raise PassResultError(
                f"pass {self.info.name!r} added global functions ({', '.join('@' + n for n in added)}) "
                f"that a bare {type(mod).__name__} cannot hold: run it on a module, "
                "e.g. pass_(IRModule.from_expr(func)), and read them from the result"
            )
        main = out["main"]
        return main if isinstance(mod, Function) else main.body

    def _transform(self, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
        raise NotImplementedError  # each pass kind implements it

    #: How TVM's ``str(pass)`` names the kind ("Run Module pass: NAME at the optimization level N").
    _tvm_kind = "Module"

    def __str__(self) -> str:
        info = self.info
        return f"Run {self._tvm_kind} pass: {info.name} at the optimization level {info.opt_level}"

    def __repr__(self) -> str:
        info = self.info
        req = f", required={list(info.required)}" if info.required else ""
        return f"<{type(self).__name__} {info.name} opt_level={info.opt_level}{req}>"


class ModulePass(Pass):
    """A pass over the whole module: ``pass_func(mod, ctx) -> IRModule``."""

    __slots__ = ("pass_func",)

    def __init__(
        self,
        pass_func: Callable[[Any, PassContext], Any],
        info: PassInfo,
        preserves: Iterable[str] | None = None,
    ) -> None:
        Pass.__init__(self, info, preserves)
        self.pass_func = pass_func

    def _transform(self, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
        # The pass gets a module of its own (a new function map sharing the immutable
        # functions, the same frozen attrs), so whatever it does to its argument
        # (``mod[gv] = f``, ``update_func``, ``add``, ``remove``, new attrs) never
        # reaches the caller, even for Relay code written for TVM's mutable IRModule.
        given = mod.copy()
        watch = _HANDED.get()
        if watch is not None:
            watch.append((self, mod, given))
        try:
            out = self.pass_func(given, ctx)
        except Exception as exc:
            _add_note(exc, self)
            raise
        if not isinstance(out, type(mod)):
            raise PassResultError(
                f"module pass {self.info.name!r}{_from(self)} returned "
                f"{type(out).__name__}, not an IRModule"
            )
        if out is given and out.attrs is mod.attrs and out.functions == mod.functions:
            # Handed back untouched: the caller gets its own module, as from Relay
            # (where ``mod.same_as(pass(mod))`` holds for a pass that changed nothing).
            return mod
        return out


class FunctionPass(Pass):
    """A pass applied to each Relay function: ``pass_func(func, mod, ctx) -> Function``.

    Functions whose attributes set ``SkipOptimization`` or name an external
    ``Compiler`` are left as they are.  ``mod`` is the copy being built (the
    functions' updates are applied after all of them were transformed).  Then,
    as Relay's FunctionPass does, the module is typed by the pass of the
    "type-inference" role (see :func:`_type_result`).
    """

    __slots__ = ("pass_func",)
    _tvm_kind = "Function"

    def __init__(
        self,
        pass_func: Callable[[Any, Any, PassContext], Any],
        info: PassInfo,
        preserves: Iterable[str] | None = None,
    ) -> None:
        Pass.__init__(self, info, preserves)
        self.pass_func = pass_func

    def _transform(self, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
        from ..ir.expr import Function

        out = mod.copy()
        func = self.pass_func
        updates = []
        for gv, f in out.items():
            if not isinstance(f, Function) or _skip_function(f):
                continue
            try:
                new = func(f, out, ctx)
            except Exception as exc:
                _add_note(exc, self)
                raise
            if new is not f:
                if not isinstance(new, Function):
                    raise PassResultError(
                        f"function pass {self.info.name!r}{_from(self)} returned "
                        f"{type(new).__name__} for @{gv.name_hint}, not a Function"
                    )
                updates.append((gv, new))
        for gv, new in updates:
            out.add(gv, new, update=True)
        return _type_result(self, mod, out, [gv for gv, _new in updates], ctx)


def _skip_function(func: Any) -> bool:
    attrs = func.attrs
    return bool(attrs) and (attrs.get("Compiler") is not None or bool(attrs.get("SkipOptimization")))


class Sequential(Pass):
    """Passes run in order: ``Sequential(passes=None, opt_level=0, name="sequential", required=None, traceable=False)``.

    Each member runs when the context enables it (:func:`~.context.pass_enabled`),
    after the passes it requires.  The Sequential itself is reported to instruments around its members.
    ``traceable`` is kept in ``info`` (TVM's tuning traces are out of scope).
    """

    __slots__ = ("passes",)
    _tvm_kind = "Sequential"

    def __init__(
        self,
        passes: Iterable[Pass] | None = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Iterable[str] | None = None,
        traceable: bool = False,
    ) -> None:
        members = tuple(passes) if passes is not None else ()
        for p in members:
            if not isinstance(p, Pass):
                raise TypeError(
                    f"Sequential {name!r} holds passes, not {type(p).__name__} ({p!r})"
                )
        # Members record their own effects in the log; the Sequential itself
        # changes nothing beyond them.
        Pass.__init__(self, PassInfo(opt_level, name, required, traceable), _ALL)
        self.passes = members

    def _transform(self, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
        disabled = ctx._disabled
        required = ctx._required
        level = ctx.opt_level
        for p in self.passes:
            info = p.info
            if not pass_enabled(info.name, info.opt_level, level, required, disabled):
                continue
            if info.required:
                mod = _run_required(p, mod, ctx, log)
            if ctx.instruments:
                mod = _run_instrumented(p, mod, ctx, log)
            else:
                mod = p._transform(mod, ctx, log)
                log.append(p)
        return mod

    def __str__(self) -> str:
        inner = "".join(f"{p.info.name} " for p in self.passes)
        return f"{Pass.__str__(self)}. The passes will be executed are: [{inner}]"

    def __repr__(self) -> str:
        inner = ", ".join(p.info.name for p in self.passes)
        return f"<Sequential {self.info.name} [{inner}]>"


# --- running -----------------------------------------------------------------------
def _run(p: Pass, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
    """Run ``p`` as called directly: its requirements first, no enabled check."""
    if p.info.required:
        mod = _run_required(p, mod, ctx, log)
    if ctx.instruments:
        return _run_instrumented(p, mod, ctx, log)
    mod = p._transform(mod, ctx, log)
    log.append(p)
    return mod


def _run_instrumented(p: Pass, mod: Any, ctx: PassContext, log: list[Pass],
                      compute: Callable[[Any], Any] | None = None) -> Any:
    """Run ``p`` under the context's instruments.

    ``compute(mod)``, when given, stands for ``p``'s own transformation (the
    instruments see ``p`` run either way): the incremental typing of a
    function pass's result passes its own, or ``lambda m: m`` when typing
    would change nothing.
    """
    info = p.info
    if info.name not in ctx._required:
        run = True
        for pi in ctx.instruments:  # every instrument is asked, as in Relay
            if not pi.should_run(mod, info):
                run = False
        if not run:
            return mod
    for pi in ctx.instruments:
        pi.run_before_pass(mod, info)
    out = p._transform(mod, ctx, log) if compute is None else compute(mod)
    for pi in ctx.instruments:
        pi.run_after_pass(out, info)
    log.append(p)
    return out


def _run_required(p: Pass, mod: Any, ctx: PassContext, log: list[Pass]) -> Any:
    """Run the required closure of ``p`` in dependency order, skipping effects that hold."""
    registry = lookup.registry()
    for name in registry.dependency_plan(p.info, p.origin):
        if effect_holds(log, name):
            continue
        dep = registry.dependency_pass(name)
        if ctx.instruments:
            mod = _run_instrumented(dep, mod, ctx, log)
        else:
            mod = dep._transform(mod, ctx, log)
            log.append(dep)
    return mod


def _type_result(fpass: Pass, before: Any, mod: Any, changed: list[Any],
                 ctx: PassContext) -> Any:
    """``mod``, the module function pass ``fpass`` built, typed as Relay's FunctionPass types it.

    Relay ends every function pass with ``InferType()(mod)``: a run of its own,
    which instruments see (asked ``should_run``, reported before and after)
    nested inside the function pass, and which a ``required`` pass does not
    count as having run.  Here the typing pass is the one of the
    "type-inference" role, and the run computes only what it must
    (:func:`_typing_plan`): nothing when every function is typed, whether
    the pass kept it or returned it typed with the type it had (``before``
    is the module the pass was given, ``changed`` the global variables of
    the functions it replaced); only the changed functions when every other
    one is typed and none changes its type; else the whole module.  The
    instruments see the run all the same.
    """
    if _TYPING.get():  # a function pass the typing pass runs itself: typed by that run
        return mod
    nested: list[Pass] = []  # the typing run is the function pass's own business
    token = _TYPING.set(True)
    try:
        typer = lookup.registry().role_pass(TYPE_INFERENCE)
        if typer.info.name == fpass.info.name:  # the typing pass is itself a function pass
            return mod
        plan = _typing_plan(before, mod, set(changed))
        if plan is _NOTHING:
            compute: Callable[[Any], Any] | None = _unchanged
        else:
            if typer.info.required:
                mod = _run_required(typer, mod, ctx, nested)
            compute = None if plan is _EVERYTHING else _retyping(typer, before, plan, ctx, nested)
        if ctx.instruments:
            return _run_instrumented(typer, mod, ctx, nested, compute)
        return typer._transform(mod, ctx, nested) if compute is None else compute(mod)
    except Exception as exc:
        add_note(exc, f"{_NOTE_PREFIX}while typing the result of function pass "
                      f"{fpass.info.name!r}{_from(fpass)} (a function pass ends with type "
                      "inference, by the pass of role 'type-inference', as in Relay)")
        raise
    finally:
        _TYPING.reset(token)


_NOTHING: list[Any] = []
_EVERYTHING: list[Any] = []


def _unchanged(mod: Any) -> Any:
    return mod


def _typing_plan(before: Any, mod: Any, changed: set[Any]) -> list[Any]:
    """What typing ``mod`` must compute: ``_NOTHING``, ``_EVERYTHING``, or the functions to type.

    Only type inference sets ``checked_type`` (or a pass that builds typed
    nodes on purpose, as FuseOps does), and nodes are immutable, so a typed
    function is typed as inference would type it as long as the functions it
    calls keep their types.  A function the pass returned unchanged and typed
    is thus typed already, and so is a changed one that comes back typed
    with the type it had.  An unchanged untyped function needs typing, which
    types the whole module (nothing says what its callers assumed).  Only
    the other changed functions are left to type when each was typed before
    the pass and fully annotated (its declared type is its type, so each
    caller's typing holds while it keeps that type: :func:`_retyping` checks
    that it does) and every function not left to type is fully annotated.
    """
    pending = []
    incremental = True
    for gv, func in mod.items():
        if gv in changed:
            old = before[gv]
            old_typed = getattr(old, "has_checked_type", False)
            if old_typed and getattr(func, "has_checked_type", False) \
                    and func.checked_type == old.checked_type:
                if not _annotated(func):
                    incremental = False
                continue
            pending.append(gv)
            if not (old_typed and _annotated(old)):
                incremental = False
        elif not getattr(func, "has_checked_type", False):
            return _EVERYTHING
        elif not _annotated(func):
            incremental = False
    if not pending:
        return _NOTHING
    if not incremental or len(pending) == len(mod):
        return _EVERYTHING
    return pending


def _annotated(func: Any) -> bool:
    """Whether ``func`` declares its type: every parameter annotated and a return type."""
    if getattr(func, "ret_type", None) is None:
        return False
    return all(p.type_annotation is not None for p in func.params)


def _retyping(typer: Pass, before: Any, changed: list[Any], ctx: PassContext,
              nested: list[Pass]) -> Callable[[Any], Any]:
    """Types only the functions ``changed`` of a module whose other functions are typed.

    The typing pass gets the module with each other function replaced by a
    stand-in of the same declared type whose body calls the function itself
    (a few nodes, well formed, typed from the declaration), so its work is
    the changed functions.  Their typed versions replace them, if each kept
    the type it had in ``before`` (the callers were typed against it); if
    one did not, the whole module is typed, as Relay types it.
    """
    from ..ir.expr import Call, Function

    pending = set(changed)

    def compute(mod: Any) -> Any:
        work = mod.copy()
        for gv, func in mod.items():
            if gv not in pending:
                params = func.params
                work.add(gv, Function(params, Call(gv, params), func.ret_type, func.type_params),
                         update=True)
        typed = typer._transform(work, ctx, nested)
        out = mod.copy()
        for gv in changed:
            new = typed[gv.name_hint]
            if new.checked_type != before[gv].checked_type:
                return typer._transform(mod, ctx, nested)
            out.add(gv, new, update=True)
        return out

    return compute


#: Set while a function pass's result is being typed (a typing pass may run function passes).
_TYPING: ContextVar[bool] = ContextVar("relaypass_typing_a_function_pass", default=False)


def effect_holds(log: list[Any], name: str) -> bool:
    """Whether the pass ``name`` ran and every pass after it preserves it.

    ``log`` holds what ran, oldest first; each entry has ``info.name`` and
    ``preserves`` (pipelines explain their schedule with stand-ins).
    """
    for p in reversed(log):
        if p.info.name == name:
            return True
        kept = p.preserves
        if name not in kept and PRESERVES_ALL not in kept:
            return False
    return False


# --- watching what module passes do to their argument ----------------------------------
#: While :func:`watch_handed_modules` is active: (pass, module, copy handed to it) per module pass run.
_HANDED: ContextVar[list[tuple[Pass, Any, Any]] | None] = ContextVar(
    "relaypass_handed_modules", default=None)


class HandedModules:
    """What the module passes run inside :func:`watch_handed_modules` did to the module they got.

    The pass manager protects the caller whatever a module pass does to its
    argument, so a pass that edits it works here; yet the same code run
    where nothing protects the caller (TVM's pass manager, a direct call of
    its ``pass_func``) changes the caller's module.  This record lets a test
    kit tell the pass's author.
    """

    __slots__ = ("runs",)

    def __init__(self) -> None:
        self.runs: list[tuple[Pass, Any, Any]] = []

    def edits(self) -> list[tuple[Pass, str]]:
        """Each module pass that changed the module it was handed, with what it changed."""
        out = []
        for p, source, given in self.runs:
            what = _module_difference(source, given)
            if what:
                out.append((p, what))
        return out


@contextmanager
def watch_handed_modules() -> Iterator[HandedModules]:
    """``with watch_handed_modules() as handed:`` records what each module pass is handed.

    Afterwards ``handed.edits()`` names the module passes that edited the
    module they were handed.  Only the code run in this context (this
    thread) is watched; outside it nothing is recorded.
    """
    handed = HandedModules()
    token = _HANDED.set(handed.runs)
    try:
        yield handed
    finally:
        _HANDED.reset(token)


def _module_difference(before: Any, after: Any) -> str:
    """How the module ``after`` differs from ``before`` in bindings and attrs ('' when it does not).

    Functions are compared by identity (nodes are immutable: a rebound name
    holds another function object); the words name the global functions
    added, removed and rebound, and replaced attrs.
    """
    old = before.functions
    new = after.functions
    names_old = {gv.name_hint: f for gv, f in old.items()}
    names_new = {gv.name_hint: f for gv, f in new.items()}
    parts = []
    added = [n for n in names_new if n not in names_old]
    removed = [n for n in names_old if n not in names_new]
    rebound = [n for n, f in names_new.items() if n in names_old and names_old[n] is not f]
    if rebound:
        parts.append(f"rebound @{', @'.join(rebound)}")
    if added:
        parts.append(f"added @{', @'.join(added)}")
    if removed:
        parts.append(f"removed @{', @'.join(removed)}")
    if after.attrs is not before.attrs and after.attrs != before.attrs:
        parts.append("replaced its attrs")
    return ", ".join(parts)


# --- helpers -----------------------------------------------------------------------
_MODULE_CLASS: list[type] = []


def _ir_module_class() -> type:
    if not _MODULE_CLASS:
        from ..ir.module import IRModule

        _MODULE_CLASS.append(IRModule)
    return _MODULE_CLASS[0]


def _from(p: Pass) -> str:
    return f" (from {p.origin})" if p.origin else ""


_NOTE_PREFIX = "relaypass: "


def _add_note(exc: BaseException, p: Pass) -> None:
    """Say which pass raised, once (the innermost pass), without changing the exception."""
    notes = getattr(exc, "__notes__", None) or []
    if not any(isinstance(n, str) and n.startswith(_NOTE_PREFIX) for n in notes):
        add_note(exc, f"{_NOTE_PREFIX}raised in pass {p.info.name!r}{_from(p)}")


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; on Python 3.10 the note is kept in ``__notes__`` all the same."""
    method = getattr(exc, "add_note", None)
    if method is not None:
        method(note)
        return
    try:
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]
    except AttributeError:
        pass
