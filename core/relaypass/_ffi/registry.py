"""TVM's global registries, in Python: functions by name, object classes by type key.

TVM keeps a table of "global functions" that code registers and looks up by
name (``tvm.register_func("relay.ext.mycodegen")``,
``tvm.get_global_func("relay.ext.mycodegen", allow_missing=True)``), and a
table of object classes by type key (``@tvm.register_object("relay.attrs.MyAttrs")``)
from which ``tvm.ir.make_node`` and ``tvm.ir.load_json`` construct objects.
relaypass keeps both as dictionaries of Python objects: a registered function
is the callable itself, called with the arguments it is given.

The rules are TVM's: registering a name twice needs ``override=True``; looking
up a missing function raises unless ``allow_missing``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import RelayPassError

__all__ = [
    "GlobalFuncExistsError", "GlobalFuncNotFoundError", "get_global_func",
    "list_global_func_names", "object_type", "register_func", "register_object",
    "remove_global_func", "type_key_of",
]

_FUNCS: dict[str, Callable[..., Any]] = {}
_OBJECT_TYPES: dict[str, type] = {}
_TYPE_KEYS: dict[type, str] = {}

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


class GlobalFuncNotFoundError(RelayPassError, ValueError):
    """``get_global_func`` was asked for a name nothing registered (TVM raises ValueError)."""


class GlobalFuncExistsError(RelayPassError, RuntimeError):
    """``register_func`` was given a name already registered, without ``override=True``."""


def register_func(
    func_name: str | Callable[..., Any], f: Callable[..., Any] | None = None, override: bool = False
) -> Any:
    """Register ``f`` as the global function ``func_name``; without ``f``, a decorator.

    ``@register_func`` alone registers a function under its own ``__name__``.
    Returns the function.
    """
    if callable(func_name):
        f = func_name
        func_name = f.__name__
    if not isinstance(func_name, str):
        raise TypeError(f"register_func expects a function name (str), got {func_name!r}")
    name = func_name

    def register(func: F) -> F:
        if not callable(func):
            raise TypeError(f"register_func({name!r}): {func!r} is not callable")
        if name in _FUNCS and not override:
            raise GlobalFuncExistsError(
                f"global function {name!r} is already registered; pass override=True to replace it"
            )
        _FUNCS[name] = func
        return func

    if f is not None:
        return register(f)
    return register


def get_global_func(name: str, allow_missing: bool = False) -> Callable[..., Any] | None:
    """The global function ``name``; None if missing and ``allow_missing``, else an error."""
    func = _FUNCS.get(name)
    if func is None and not allow_missing:
        raise GlobalFuncNotFoundError(f"Cannot find global function {name}")
    return func


def list_global_func_names() -> list[str]:
    """The names of every registered global function."""
    return list(_FUNCS)


def remove_global_func(name: str) -> None:
    """Unregister the global function ``name`` (nothing happens if it is not registered)."""
    _FUNCS.pop(name, None)


def register_object(type_key: str | type | None = None) -> Any:
    """Register a class under a type key (its ``__name__`` when none is given).

    ``@register_object("relay.attrs.MyAttrs")`` on a subclass of
    ``tvm.ir.Attrs`` makes ``make_node("relay.attrs.MyAttrs", ...)`` build an
    instance of it.  Returns the class.
    """

    def register(cls: C, key: str) -> C:
        _OBJECT_TYPES[key] = cls
        _TYPE_KEYS.setdefault(cls, key)
        return cls

    if isinstance(type_key, str):
        key = type_key
        return lambda cls: register(cls, key)
    if type_key is None:
        return lambda cls: register(cls, cls.__name__)
    return register(type_key, type_key.__name__)


def object_type(type_key: str) -> type | None:
    """The class registered under ``type_key``, or None."""
    return _OBJECT_TYPES.get(type_key)


def type_key_of(cls: type) -> str | None:
    """The type key ``cls`` (or its nearest registered base) was registered under, or None."""
    for klass in cls.__mro__:
        key = _TYPE_KEYS.get(klass)
        if key is not None:
            return key
    return None
