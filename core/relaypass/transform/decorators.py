"""``module_pass`` and ``function_pass``: make a pass from a function or a class.

As in TVM, the decorator accepts a function (``f(mod, ctx)`` or
``f(func, mod, ctx)``), giving a pass object, or a class with
``transform_module`` / ``transform_function``, giving a class whose instances
are passes (constructor arguments go to the decorated class; its other
attributes stay reachable on the pass).  Both forms work with and without the
pass function argument: ``module_pass(f, opt_level=1)`` and
``@module_pass(opt_level=1)``.

A pass shipped in a plugin does not need them: its manifest factory may
return the bare transformation, and the registry makes the pass from the
manifest entry (see :meth:`~.registry.Registry.build_pass`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from .pass_info import PassInfo
from .passes import FunctionPass, ModulePass, Pass


def module_pass(
    pass_func: Callable[..., Any] | type | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Iterable[str] | None = None,
    traceable: bool = False,
    preserves: Iterable[str] | None = None,
) -> Any:
    """A ModulePass from ``pass_func(mod, ctx) -> IRModule`` or a class with ``transform_module``.

    ``traceable`` is TVM's (kept in ``info``); ``preserves`` (beyond Relay) names
    passes whose effect this pass keeps, so a later pass requiring one of them
    does not run it again.
    """
    return _decorate(ModulePass, "transform_module", "module_pass",
                     pass_func, opt_level, name, required, preserves, traceable)


def function_pass(
    pass_func: Callable[..., Any] | type | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Iterable[str] | None = None,
    preserves: Iterable[str] | None = None,
) -> Any:
    """A FunctionPass from ``pass_func(func, mod, ctx) -> Function`` or a class with ``transform_function``."""
    return _decorate(FunctionPass, "transform_function", "function_pass",
                     pass_func, opt_level, name, required, preserves)


def _decorate(
    kind: type[Pass],
    method: str,
    decorator: str,
    pass_func: Any,
    opt_level: int | None,
    name: str | None,
    required: Iterable[str] | None,
    preserves: Iterable[str] | None,
    traceable: bool = False,
) -> Any:
    if opt_level is None:  # a ValueError, as in TVM
        raise ValueError(f"{decorator}: please provide opt_level")
    if required is not None and (isinstance(required, str) or not isinstance(required, Iterable)):
        raise TypeError(f"{decorator}: required must be a list of pass names, not {required!r}")

    def create(arg: Any) -> Any:
        info = PassInfo(opt_level, name or arg.__name__, required, traceable)
        if inspect.isclass(arg):
            if not callable(getattr(arg, method, None)):
                raise TypeError(f"{decorator}: class {arg.__name__} must define {method}()")
            return _wrap_class(kind, method, arg, info, preserves)
        if not callable(arg):
            raise TypeError(f"{decorator} decorates a function or a class, not {type(arg).__name__}")
        return kind(arg, info, preserves)

    if pass_func is None:
        return create
    return create(pass_func)


def _wrap_class(
    kind: type[Pass], method: str, pass_cls: type, info: PassInfo,
    preserves: Iterable[str] | None,
) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        inst = pass_cls(*args, **kwargs)
        self._inst = inst
        kind.__init__(self, getattr(inst, method), info, preserves)

    def __getattr__(self: Any, attr: str) -> Any:
        if attr == "_inst":
            raise AttributeError(attr)
        return getattr(self._inst, attr)

    try:
        __init__.__signature__ = inspect.signature(pass_cls)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # a class whose signature cannot be read keeps (*args, **kwargs)
        pass
    return type(pass_cls.__name__, (kind,), {
        "__init__": __init__,
        "__getattr__": __getattr__,
        "__module__": pass_cls.__module__,
        "__qualname__": pass_cls.__qualname__,
        "__doc__": pass_cls.__doc__,
        # Read by register_pass: the class can be registered without building one.
        "_relaypass_info": info,
    })
