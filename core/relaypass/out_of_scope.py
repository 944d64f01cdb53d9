"""TVM's compilation modules as placeholders: importable, and a clear error on first use.

Relay pass code and its tests import TVM's compilation APIs at the top of a
file (``from tvm import te``, ``from tvm.relay.backend import Executor``,
``from tvm.script import tir as T``) even when only a few of its functions
use them.  With imports changed by the porting rule, such a file must still
import, so that everything that does not compile runs; what does compile
must fail where it is used, with a :class:`RelayCompatError` that names the
construct and why, never an ``ImportError`` for the whole file or an
``AttributeError`` from deep inside.

So each module below (and any submodule of it, ``relaypass.script.tir``) is
served by a finder the package root installs: a module whose every attribute
raises :class:`OutOfScopeError` (also an ``AttributeError``, so ``hasattr``
says False).  A module that has some real contents (``relay.backend``, whose
``interpreter`` submodule holds the interpreter's values) is a real package
whose other names and submodules are placeholders (:func:`placeholder_attribute`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

from .errors import RelayCompatError

__all__ = [
    "MODULES", "OutOfScopeError", "OutOfScopeFinder", "OutOfScopeModule", "RELAY_NAMES", "install",
    "placeholder_attribute", "relay_name",
]

#: relaypass's name of each placeholder module (``tvm.X`` is ``relaypass.X``) and why it is
#: out of scope.
MODULES: dict[str, str] = {
    "relaypass.te": "TVM's tensor expressions describe computations for its code generator",
    "relaypass.topi": "TOPI holds TVM's operator implementations for its code generator",
    "relaypass.script": "TVMScript writes TIR, TVM's low-level IR",
    "relaypass.target": "targets and virtual devices choose a code generator",
    "relaypass.driver": "the driver builds compiled modules",
    "relaypass.contrib": "tvm.contrib wraps compilers, devices and external libraries",
    "relaypass.autotvm": "AutoTVM tunes generated code",
    "relaypass.auto_scheduler": "the auto-scheduler tunes generated code",
    "relaypass.meta_schedule": "MetaSchedule tunes generated code",
    "relaypass.relay.backend": "Relay's backends (executors, runtimes, code generation) compile",
    "relaypass.relay.vm": "Relay's virtual machine runs compiled code (the interpreter serves "
    "create_executor('vm'))",
    "relaypass.relay.qnn": "quantized operators (QNN) are not provided",
}

#: Names of ``relay`` itself that are out of scope, and why.
RELAY_NAMES: dict[str, str] = {
    "build": "relay.build generates code",
    "optimize": "relay.optimize prepares a module for a code generator",
}


def relay_name(name: str) -> Any:
    """``relay.NAME`` for an out-of-scope name: raises :class:`OutOfScopeError`."""
    raise OutOfScopeError(f"tvm.relay.{name}", RELAY_NAMES[name])


class OutOfScopeError(RelayCompatError, AttributeError):
    """A name of a TVM compilation module relaypass does not provide."""


def placeholder_attribute(module: str) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of a real package standing for the placeholder ``module``.

    Every name the package does not define raises :class:`OutOfScopeError`,
    as the placeholder would; its submodules without a file are placeholders.
    """
    why = MODULES[module]
    tvm_name = "tvm" + module.removeprefix("relaypass")

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise OutOfScopeError(f"{tvm_name}.{name}", why)

    return __getattr__


class OutOfScopeModule(types.ModuleType):
    """A placeholder for a TVM module: importing works, using any of its names raises."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(name)
        self.__why = why
        self.__path__: list[str] = []  # a package: its submodules are placeholders too

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise OutOfScopeError(f"{self._tvm_name()}.{name}", self.__why)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # ``from tvm.relay.backend import Executor`` imports a placeholder for the
        # class (a name it lacks is looked up as a submodule): using it raises.
        raise OutOfScopeError(self._tvm_name(), self.__why)

    def _tvm_name(self) -> str:
        return "tvm" + self.__name__.removeprefix("relaypass")


def _reason(fullname: str) -> str | None:
    for name, why in MODULES.items():
        if fullname == name or fullname.startswith(name + "."):
            return why
    return None


class OutOfScopeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the placeholder modules (and their submodules) for the import system."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if _reason(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return OutOfScopeModule(spec.name, _reason(spec.name) or "")

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the placeholder has no contents."""


_FINDER = OutOfScopeFinder()


def install() -> None:
    """Serve the placeholder modules from now on (the package root calls this once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
