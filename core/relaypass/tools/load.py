"""``relaypass run --load my_passes.py``: the passes of a local file, without packaging them.

Prototyping a pass should not need a distribution and a manifest.  Loading
a file *runs its code* (as ``python my_passes.py`` would, but imported as a
module, so ``if __name__ == "__main__":`` blocks do not run), then registers
in the process, as :func:`~relaypass.transform.register_pass` does:

* whatever the file registers itself (``register_pass``,
  ``register_instrument``, with their options, config keys and roles);
* every pass the file defines at its top level and does not register: a
  pass object made by ``@module_pass``/``@function_pass`` (or a class they
  decorate), under its own name.

Passes the file only imports (their code lives in another module) are left
alone.  Anything the file raises while it runs, a syntax error included, is
one :class:`LoadError` naming the file and the line; a name the file's pass
takes that is already registered is one too.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
import traceback
from typing import Any

from ..errors import RelayPassError
from ..transform.pass_info import PassInfo
from ..transform.passes import Pass
from ..transform.registry import get_registry, register_pass

__all__ = ["LoadError", "load_pass_file"]


class LoadError(RelayPassError):
    """A file given to ``--load`` cannot be read or raised while it ran."""


_loaded: dict[str, list[str]] = {}


def load_pass_file(path: str) -> list[str]:
    """Run the Python file ``path`` and register the passes it defines; their names.

    Loading the same file twice in a process registers its passes once.
    """
    real = os.path.realpath(path)
    if real in _loaded:
        return _loaded[real]
    if not os.path.isfile(path):
        what = "a folder, not a Python file" if os.path.isdir(path) else "no such file"
        raise LoadError(f"--load {path}: {what}")
    # Named after the file (what registrations report as their origin), unless that name is
    # already a module's.
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) or "loaded"
    module_name = stem if stem not in sys.modules else f"{stem}_{len(_loaded)}"
    while module_name in sys.modules:
        module_name += "_"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"--load {path}: not a Python file Python can import (give a .py file)")
    module = importlib.util.module_from_spec(spec)
    registry = get_registry()
    before = set(registry.pass_names())
    sys.modules[module_name] = module  # as an import would: dataclasses and pickling need it
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(module_name, None)
        if isinstance(exc, SyntaxError):
            how = "the file does not parse"
        elif isinstance(exc, SystemExit):
            how = "a file given to --load defines passes; it may not end the command"
        else:
            how = "the file's code raised this while it ran; python on it shows the traceback"
        raise LoadError(f"--load {path}: {_where(exc, path)}{_what(exc)} ({how})") from exc
    names = [n for n in registry.pass_names() if n not in before]
    for value in list(vars(module).values()):
        info = _own_pass(value, module_name)
        if info is None or info.name in names:
            continue
        try:
            register_pass(value)
        except (RelayPassError, ValueError, TypeError) as exc:
            raise LoadError(f"--load {path}: pass {info.name!r}: {exc}") from exc
        names.append(info.name)
    _loaded[real] = names
    return names


def _own_pass(value: Any, module_name: str) -> PassInfo | None:
    """The info of ``value`` when it is a pass (or pass class) defined in the loaded module."""
    if isinstance(value, Pass):
        func = getattr(value, "pass_func", None)
        defined = getattr(func, "__module__", None) or type(value).__module__
        return value.info if defined == module_name else None
    info = getattr(value, "_relaypass_info", None)
    if inspect.isclass(value) and isinstance(info, PassInfo) and value.__module__ == module_name:
        return info
    return None


def _where(exc: BaseException, path: str) -> str:
    """``line N: `` of the innermost frame of ``path`` in the exception (or of a syntax error)."""
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"line {exc.lineno}: "
    real = os.path.realpath(path)
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == real:
            line = frame.lineno
    return f"line {line}: " if line is not None else ""


def _what(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
