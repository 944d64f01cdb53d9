"""Pass constructors: ``Name(*args, **options) -> Pass`` for a registered pass.

There is one way to make a registered pass, :func:`~.registry.get_pass`, which
builds it from its declaration (the manifest entry or the ``register_pass``
call): name, opt_level, required passes and preserves come from there.  A
constructor is the callable form of ``get_pass(name, ...)``, what Relay users
call: ``relay.transform.FuseOps()`` is one, and so is the ``FuseOps`` a
plugin module exports for ``from relaypass_std.fuse_ops import FuseOps``.
All of them give passes with the same info.

Making a constructor reads nothing: the declaration is looked up when it is
called (or its ``__doc__`` read), so a module can define its constructors at
import time, and a pass registered, shadowed or uninstalled later is seen.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..errors import RelayPassError
from .passes import Pass
from .registry import get_pass, get_registry


class PassConstructor:
    """``Name(*args, **options)``: the registered pass ``Name``, built by ``get_pass``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a pass constructor needs a pass name, not {name!r}")
        self._name = name

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self._name

    def __call__(self, *args: Any, **options: Any) -> Pass:
        """The pass, built with ``options``; positional arguments fill the declared options.

        Relay's passes take their options positionally too
        (``EliminateCommonSubexpr(fskip)``); the order is the declaration's.
        """
        name = self._name
        if args:
            declared = [o.name for o in (get_registry().pass_spec(name).options or ())]
            if len(args) > len(declared):
                raise TypeError(
                    f"{name}() takes at most {len(declared)} positional option(s), got {len(args)}"
                )
            for key, value in zip(declared, args):
                if key in options:
                    raise TypeError(f"{name}() got option {key!r} twice")
                options[key] = value
        return get_pass(name, **options)

    def _doc(self) -> str:
        try:
            spec = get_registry().pass_spec(self._name)
        except RelayPassError:  # not registered (any more), or declared twice: no more to say
            return f"The registered pass {self._name!r}, built by get_pass."
        options = "".join(
            f"\n    {o.name} ({o.type}{'' if o.required else f', default {o.default!r}'})"
            + (f": {o.help}" if o.help else "")
            for o in (spec.options or ())
        )
        text = spec.help or f"The {spec.name} pass."
        if options:
            text += "\n\nOptions:" + options
        return f"{text}\n\n(from {spec.origin})"

    # Read by help() and IDEs: the declaration's help, looked up when asked for.
    __doc__ = property(_doc)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PassConstructor):
            return NotImplemented
        return self._name == other._name

    def __hash__(self) -> int:
        return hash((PassConstructor, self._name))

    def __repr__(self) -> str:
        return f"<pass constructor {self._name}>"


def pass_constructor(name: str) -> PassConstructor:
    """``Name(*args, **options) -> Pass``: the registered pass ``name``, built by ``get_pass``.

    A plugin module exports its passes this way (``FuseOps =
    pass_constructor("FuseOps")``), so that calling it, ``relay.transform.FuseOps()``
    and ``get_pass("FuseOps")`` give the same pass: everything about it comes
    from its declaration.  Positional arguments fill the declared options in
    their declared order.  Nothing is looked up until the constructor is called.
    """
    return PassConstructor(name)


def pass_attribute(namespace: str, name: str) -> PassConstructor:
    """A module ``__getattr__`` serving registered passes: the constructor of pass ``name``.

    Raises AttributeError, with near-matching pass names, when no pass is
    registered under ``name`` (dunder names are never passes).
    """
    if name.startswith("__"):  # probed by copy, pickle, inspect...: not worth a registry lookup
        raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
    registry = get_registry()
    if not registry.has_pass(name):
        near = difflib.get_close_matches(name, registry.pass_names(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise AttributeError(f"{namespace} has no pass or attribute {name!r}{hint}"
                             f"{registry.unreadable_hint()}")
    return PassConstructor(name)


def registered_pass_names() -> list[str]:
    """The names of every registered pass, sorted (for a module's ``__dir__``)."""
    return get_registry().pass_names()
