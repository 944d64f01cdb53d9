"""The pass kinds (ModulePass, FunctionPass, Sequential) and how a pass is run.

Running a pass means, in order: run the passes it requires (the closure of its
``required``, in dependency order, skipping those whose effect still holds), ask
the context's instruments whether it should run and report it to them, hand
the pass function a *copy* of the module (so the caller's module never changes),
and record that it ran.  The record (``log``, one list per top-level call) is
what lets a required pass be skipped when every pass since its last run
declared that it preserves it.  As in Relay, a function pass ends by typing
the module it built with the pass of the "type-inference" role, reported to
instruments inside the function pass (see :func:`_type_result`).

The loop in :meth:`Sequential._transform` is the hot path of every pipeline; it
is written flat, with no per-pass allocation besides the module copy, so a
no-op pass costs about a microsecond.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
        given = mod.copy()
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
        return _type_result(self, out, bool(updates), ctx)


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
                      compute: bool = True) -> Any:
    """Run ``p`` under the context's instruments; ``compute=False``: report it, keep ``mod``."""
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
    out = p._transform(mod, ctx, log) if compute else mod
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


def _type_result(fpass: Pass, mod: Any, changed: bool, ctx: PassContext) -> Any:
    """``mod``, the module function pass ``fpass`` built, typed as Relay's FunctionPass types it.

    Relay ends every function pass with ``InferType()(mod)``: a run of its own,
    which instruments see (asked ``should_run``, reported before and after)
    nested inside the function pass, and which a ``required`` pass does not
    count as having run.  Here the typing pass is the one of the
    "type-inference" role.  When the pass changed no function and every
    function of ``mod`` is already typed, typing would give the same module:
    the run is reported all the same, but not computed.
    """
    if _TYPING.get():  # a function pass the typing pass runs itself: typed by that run
        return mod
    nested: list[Pass] = []  # the typing run is the function pass's own business
    token = _TYPING.set(True)
    try:
        typer = lookup.registry().role_pass(TYPE_INFERENCE)
        if typer.info.name == fpass.info.name:  # the typing pass is itself a function pass
            return mod
        compute = changed or not _all_typed(mod)
        if not ctx.instruments:
            if not compute:
                return mod
            if typer.info.required:
                mod = _run_required(typer, mod, ctx, nested)
            return typer._transform(mod, ctx, nested)
        if compute and typer.info.required:
            mod = _run_required(typer, mod, ctx, nested)
        return _run_instrumented(typer, mod, ctx, nested, compute)
    except Exception as exc:
        add_note(exc, f"{_NOTE_PREFIX}while typing the result of function pass "
                      f"{fpass.info.name!r}{_from(fpass)} (a function pass ends with type "
                      "inference, by the pass of role 'type-inference', as in Relay)")
        raise
    finally:
        _TYPING.reset(token)


#: Set while a function pass's result is being typed (a typing pass may run function passes).
_TYPING: ContextVar[bool] = ContextVar("relaypass_typing_a_function_pass", default=False)


def _all_typed(mod: Any) -> bool:
    """Whether every function of ``mod`` carries a type (only type inference sets one)."""
    for _gv, func in mod.items():
        if not getattr(func, "has_checked_type", False):
            return False
    return True


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
