"""Pass instruments: code that watches passes run, without changing the pipeline.

Names and semantics follow ``tvm.ir.instrument``.  A PassContext calls its
instruments, in list order, at four kinds of points:

* ``enter_pass_ctx()`` when the context is entered (or given new instruments by
  ``override_instruments``), ``exit_pass_ctx()`` when it is left (also when its
  body raised, and for the old instruments on ``override_instruments``);
* ``should_run(mod, info)`` before each pass (every instrument is asked; a pass
  named in the context's ``required_pass`` is not asked about); when any answers
  False the pass is skipped and not reported;
* ``run_before_pass(mod, info)`` and ``run_after_pass(mod, info)`` around each
  pass that runs.  A Sequential is reported too, with its members inside it.

The failure rules live with the code that applies them:
:meth:`relaypass.transform.PassContext.__enter__` and ``__exit__`` for the
context hooks; errors from the pass hooks propagate unchanged and the ``with``
statement still exits every instrument.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import lookup

__all__ = ["PassInstrument", "pass_instrument"]

# Registered instruments are attributes too, resolved by name on first read:
# ``from relaypass.transform.instrument import PassTimingInstrument`` as with
# ``tvm.ir.instrument`` (see ``__getattr__`` at the end).


class _ClassName:
    """A default ``name`` that an instance or subclass may simply assign over."""

    def __get__(self, obj: object, owner: type | None = None) -> str:
        return (owner if owner is not None else type(obj)).__name__


class PassInstrument:
    """Base class of instruments; every hook does nothing (``should_run`` says yes).

    Subclass it and override the hooks you need, or decorate a plain class
    with :func:`pass_instrument`.  Subclasses need not call ``__init__``.
    """

    #: The instrument's name as reports show it: the class name unless set otherwise.
    name: str = _ClassName()  # type: ignore[assignment]

    def enter_pass_ctx(self) -> None:
        """Called when a PassContext holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when a PassContext holding this instrument is exited."""

    def should_run(self, mod: Any, info: Any) -> bool:
        """Whether the pass described by ``info`` should run on ``mod``."""
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Called just before a pass runs, with the module it receives."""

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Called just after a pass ran, with the module it returned."""

    def __repr__(self) -> str:
        return f"<{self.name} instrument>"


def pass_instrument(pi_cls: type | None = None) -> Any:
    """Turn a class with some of the hook methods into a PassInstrument class.

    ``@pass_instrument`` on ``class MyPI: def run_before_pass(self, mod, info): ...``
    gives a class whose instances are PassInstrument objects; hooks the class
    does not define keep the base behaviour.  Usable with or without parentheses.
    """

    def wrap(cls: type) -> type:
        if not inspect.isclass(cls):
            raise TypeError(f"@pass_instrument decorates a class, not {type(cls).__name__}")
        if issubclass(cls, PassInstrument):
            return cls
        wrapped = type(cls.__name__, (cls, PassInstrument), {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        })
        return wrapped

    if pi_cls is None:
        return wrap
    return wrap(pi_cls)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    registry = lookup.registry()
    try:
        spec = registry.instrument_spec(name)
    except LookupError:
        raise AttributeError(
            f"module 'relaypass.transform.instrument' has no attribute {name!r}, and no instrument "
            "of that name is registered (list_instruments() shows them)"
        ) from None

    def construct(*args: Any, **options: Any) -> PassInstrument:
        # Positional arguments fill the declared options in order, as TVM's
        # constructors take them (``PassPrintingInstrument(before, after)``).
        if args:
            declared = [o.name for o in (spec.options or ())]
            if len(args) > len(declared):
                raise TypeError(f"{name}() takes at most {len(declared)} positional option(s), "
                                f"got {len(args)}")
            for key, value in zip(declared, args):
                if key in options:
                    raise TypeError(f"{name}() got option {key!r} twice")
                options[key] = value
        return registry.build_instrument(name, options)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"{spec.help or 'The ' + name + ' instrument.'}\n\n(from {spec.origin})"
    return construct
