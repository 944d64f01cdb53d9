"""PassContext: the settings a pipeline runs under, and the instruments watching it.

A context is entered with ``with``; ``PassContext.current()`` returns the
innermost entered context of the calling thread, or that thread's default
context.  Entering and leaving a context is also when its instruments are
entered and exited, with the failure rules of Relay's pass infrastructure
(documented on :meth:`PassContext.__enter__` and :meth:`PassContext.__exit__`).
"""

from __future__ import annotations

import warnings
from collections.abc import Container, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

from . import lookup
from .config import ConfigKey, PassConfig
from .instrument import PassInstrument
from .pass_info import BUILT_NAMES


class UnknownPassNameWarning(UserWarning):
    """A PassContext names, in ``required_pass`` or ``disabled_pass``, a pass nobody provides.

    Relay accepts any name there and ignores the ones no pass has, so a
    misspelt ``disabled_pass=["FoldConstnt"]`` silently disables nothing;
    this warning (with the registered names it is close to) says so.
    """


class _Stack:
    """The entered contexts and the default context of one thread.

    Held in a context variable rather than a ``threading.local``, so that code
    that runs on the caller's behalf in another thread (the functors run deep
    recursions on a thread with a large stack) sees the caller's contexts: it
    runs in a copy of the caller's ``contextvars`` context, which holds this
    same object.  A new thread starts with an empty context, hence its own stack.
    """

    __slots__ = ("contexts", "default")

    def __init__(self) -> None:
        self.contexts: list[PassContext] = []
        self.default: PassContext | None = None


_STACK_VAR: ContextVar[_Stack] = ContextVar("relaypass_pass_contexts")


def _stack() -> _Stack:
    try:
        return _STACK_VAR.get()
    except LookupError:
        stack = _Stack()
        _STACK_VAR.set(stack)
        return stack


def _names(arg: object, what: str) -> tuple[str, ...]:
    if arg is None:
        return ()
    if isinstance(arg, str) or not isinstance(arg, (list, tuple, set, frozenset)):
        raise TypeError(f"{what} is expected to be a list, tuple or set of pass names, not {arg!r}")
    for name in arg:
        if not isinstance(name, str):
            raise TypeError(f"{what} holds pass names (strings), not {name!r}")
    return tuple(arg)


class PassContext:
    """``PassContext(opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None)``.

    ``required_pass`` and ``disabled_pass`` accept any names, registered or not
    (a name nobody uses is harmless, as in Relay), but a name that is neither
    a registered pass nor the name of a pass built in this process gets an
    :class:`UnknownPassNameWarning`: when the context is entered if the name
    is close to a registered one (did-you-mean), else when it is exited if no
    pass built in the meantime has it.  ``config`` is checked against the
    keys registered passes declare; see :meth:`list_configs`.
    """

    __slots__ = ("opt_level", "required_pass", "disabled_pass", "instruments", "config",
                 "_required", "_disabled", "_unknown_names")

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] | None = None,
        disabled_pass: Iterable[str] | None = None,
        instruments: Iterable[PassInstrument] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(opt_level, bool) or not isinstance(opt_level, int):
            raise TypeError(f"opt_level must be an int, not {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = _names(required_pass, "required_pass")
        self.disabled_pass = _names(disabled_pass, "disabled_pass")
        self._required = frozenset(self.required_pass)
        self._disabled = frozenset(self.disabled_pass)
        self._unknown_names: tuple[tuple[str, str], ...] = ()
        self.instruments = _instrument_list(instruments)
        self.config = config if isinstance(config, PassConfig) else PassConfig(config)

    # --- scope ------------------------------------------------------------------
    @staticmethod
    def current() -> PassContext:
        """The innermost context entered in this thread, else this thread's default context."""
        state = _stack()
        if state.contexts:
            return state.contexts[-1]
        default = state.default
        if default is None:
            default = state.default = PassContext()
        return default

    def __enter__(self) -> PassContext:
        """Enter the instruments in list order, then make this the current context.

        If an instrument raises in ``enter_pass_ctx``, the instruments that had
        already entered are exited (last entered first, as in Relay), the
        instrument list is cleared, the context is not made current, and the
        error propagates.

        Names in ``required_pass`` and ``disabled_pass`` are checked here, not
        in the constructor: the registered names are known only once the
        plugins' manifests are read, which a context that names no pass (or
        is never entered) never causes.  A name close to a registered one is
        warned about now; any other unknown name waits for :meth:`__exit__`,
        since the body may build a pass of that name.
        """
        if self.required_pass or self.disabled_pass:
            self._unknown_names = _check_names_on_enter(self)
        self._enter_instruments()
        _stack().contexts.append(self)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        """Stop being current, then exit the instruments in list order.

        Runs on a normal exit and when the body raised.  If an instrument raises
        in ``exit_pass_ctx``, the list is cleared, the instruments after it are
        not exited, and its error propagates.  Then the pass names still
        unknown (see :meth:`__enter__`) are warned about.
        """
        stack = _stack().contexts
        if stack and stack[-1] is self:
            stack.pop()
        else:  # exited out of order: remove this context wherever it is
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break
        try:
            self._exit_instruments()
        finally:
            if self._unknown_names:
                pending, self._unknown_names = self._unknown_names, ()
                _check_names_on_exit(pending)

    def override_instruments(self, instruments: Iterable[PassInstrument] | None) -> None:
        """Replace the instruments: exit the current ones, then enter the new ones.

        Works on any context, including the default one, so instruments can be
        attached without opening a new scope (exit/enter follow the usual rules).
        """
        new = _instrument_list(instruments)
        self._exit_instruments()
        self.instruments = new
        self._enter_instruments()

    def _enter_instruments(self) -> None:
        entered: list[PassInstrument] = []
        try:
            for pi in self.instruments:
                pi.enter_pass_ctx()
                entered.append(pi)
        except BaseException:
            self.instruments = []
            for pi in reversed(entered):
                pi.exit_pass_ctx()
            raise

    def _exit_instruments(self) -> None:
        try:
            for pi in self.instruments:
                pi.exit_pass_ctx()
        except BaseException:
            self.instruments = []
            raise

    # --- queries ----------------------------------------------------------------
    @staticmethod
    def list_configs() -> dict[str, ConfigKey]:
        """Every config key registered passes declare, by name (type, default, help, declared_by).

        As with TVM, ``list_configs()[key]["type"]`` is the TVM type key of the
        value (``"IntImm"`` for an int or a bool, ``"FloatImm"``, ``"runtime.String"``,
        ``"Array"``); ``.type`` is relaypass's own name ("int", "list[str]", ...).
        """
        return dict(sorted(lookup.registry().config_keys().items()))

    def __repr__(self) -> str:
        parts = [f"opt_level={self.opt_level}"]
        if self.required_pass:
            parts.append(f"required_pass={list(self.required_pass)!r}")
        if self.disabled_pass:
            parts.append(f"disabled_pass={list(self.disabled_pass)!r}")
        if self.instruments:
            parts.append(f"instruments={self.instruments!r}")
        if self.config:
            parts.append(f"config={dict(self.config)!r}")
        return f"PassContext({', '.join(parts)})"


def pass_enabled(
    name: str, opt_level: int, ctx_opt_level: int,
    required: Container[str], disabled: Container[str],
) -> bool:
    """Whether a Sequential runs its member ``name`` of ``opt_level``: Relay's ``PassEnabled``.

    The one statement of the rule (Sequential applies it; whatever explains a
    schedule should ask it too): a pass in ``disabled`` is skipped, even when
    required; a pass in ``required`` runs; any other runs when its
    ``opt_level`` is at most the context's ``ctx_opt_level``.  A pass called
    directly always runs.  Plain arguments rather than a PassContext, so that
    Sequential's loop reads the context once and a pipeline can ask before
    it has a context.
    """
    if name in disabled:
        return False
    return name in required or opt_level <= ctx_opt_level


#: (option, name) pairs already warned about: once per process is enough.
_WARNED: set[tuple[str, str]] = set()


def _check_names_on_enter(ctx: PassContext) -> tuple[tuple[str, str], ...]:
    """Warn about each unknown pass name of ``ctx`` close to a registered one; return the
    other unknown names, as ``(option, name)``, for :func:`_check_names_on_exit`."""
    registry = lookup.registry()
    later = []
    for option, names in (("required_pass", ctx.required_pass),
                          ("disabled_pass", ctx.disabled_pass)):
        for name in names:
            if (option, name) in _WARNED or name in BUILT_NAMES or registry.has_pass(name):
                continue
            if _near(name, registry.pass_names()):
                _warn(option, name, registry)
            else:
                later.append((option, name))
    return tuple(later)


def _check_names_on_exit(pending: tuple[tuple[str, str], ...]) -> None:
    """Warn about each name of ``pending`` that no pass built by now has."""
    registry = lookup.registry()
    for option, name in pending:
        if (option, name) not in _WARNED and name not in BUILT_NAMES \
                and not registry.has_pass(name):
            _warn(option, name, registry)


def _near(name: str, names: Iterable[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, sorted(names), n=3, cutoff=0.6)


def _warn(option: str, name: str, registry: Any) -> None:
    # The stack: _warn, the _check_names_ function, __enter__ or __exit__, the `with`.
    _WARNED.add((option, name))
    near = _near(name, {*registry.pass_names(), *BUILT_NAMES})
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    warnings.warn(UnknownPassNameWarning(
        f"PassContext({option}=...) names {name!r}, which is neither a registered pass "
        f"nor a pass built in this process, so it changes nothing{hint}"
        f"{registry.unreadable_hint()}"), stacklevel=4)


def _instrument_list(instruments: Iterable[Any] | None) -> list[Any]:
    if instruments is None:
        return []
    if isinstance(instruments, (str, bytes)) or not isinstance(instruments, Iterable):
        raise TypeError(f"instruments must be a list of PassInstrument, not {instruments!r}")
    out = list(instruments)
    for pi in out:
        if not isinstance(pi, PassInstrument):
            raise TypeError(
                f"instruments must be PassInstrument objects (subclass PassInstrument or use "
                f"@pass_instrument), not {type(pi).__name__}"
            )
    return out
