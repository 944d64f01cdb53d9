"""relaypass: a pure-Python home for Relay-style compiler passes.

The top level is deliberately light: attributes are imported on first use
(PEP 562), so that tools that only list plugins never import numpy.  It does
the wiring that no layer below may do for itself: it connects the installed
plugin distributions (:mod:`relaypass.plugins`) to the pass registry
(:mod:`relaypass.transform`), which sits below them, and it makes TVM's
``ir.transform`` and ``ir.instrument`` (``tvm.ir.transform.PassContext``,
``from tvm.ir.instrument import pass_instrument``) aliases of the pass
manager, which sits above the IR (``ir/`` never imports upward).
"""

from __future__ import annotations

import importlib
import sys
import types
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from . import transform as _transform
from .out_of_scope import MODULES as _OUT_OF_SCOPE
from .out_of_scope import install as _install_out_of_scope
from .plugins.manager import connect as _connect_plugins

_connect_plugins()
# tvm.te, tvm.target, ...: importable placeholders that raise RelayCompatError when used.
_install_out_of_scope()

_IR_ALIASES = {"transform": _transform, "instrument": _transform.instrument}


def _import_from_std(mod: Any, name: str) -> None:
    """``IRModule.import_from_std``: the standard files are parsed and typed above the IR."""
    from .frontend.prelude import import_from_std

    import_from_std(mod, name)


class _Package(types.ModuleType):
    """Wires ``relaypass.ir.transform`` and ``relaypass.ir.instrument`` when the IR is imported.

    The import system binds ``relaypass.ir`` here once the IR package has
    loaded, however it was imported; that is when the aliases become its
    attributes and import targets (``from relaypass.ir.transform import
    module_pass`` imports the IR first, then finds them).  ``import relaypass``
    stays free of the IR and numpy.  The IR's ``import_from_std`` slot (Relay's standard
    files, parsed and typed by the front end that ships them) is filled at the same time.
    When ``relaypass.dataflow_pattern`` is bound, it
    gets type inference (``InferTypeLocal`` and the pass of role "type-inference"),
    which its type patterns and ``require_type`` callbacks need and which sits above it.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "ir":
            for alias, module in _IR_ALIASES.items():
                setattr(value, alias, module)
                sys.modules.setdefault(f"relaypass.ir.{alias}", module)
            value.hooks.import_from_std = _import_from_std
        elif name == "dataflow_pattern":
            # Type patterns and require_type callbacks type through the pass registry,
            # which sits above the pattern room (relaypass.dataflow_pattern.type_inference).
            from .transform.infer_type_local import InferTypeLocal

            value.connect(InferTypeLocal, lambda: _transform.get_pass_by_role("type-inference"))


sys.modules[__name__].__class__ = _Package
if "relaypass.ir" in sys.modules:
    _Package.__setattr__(sys.modules[__name__], "ir", sys.modules["relaypass.ir"])
if "relaypass.dataflow_pattern" in sys.modules:
    _Package.__setattr__(sys.modules[__name__], "dataflow_pattern",
                         sys.modules["relaypass.dataflow_pattern"])

__version__ = _metadata.version("relaypass")

_LAZY = {
    "IRModule": ("relaypass.ir.module", "IRModule"),
    "parse": ("relaypass.ir.text.parser", "parse"),
    "parse_expr": ("relaypass.ir.text.parser", "parse_expr"),
    "load": ("relaypass.ir.text.io", "load"),
    "save": ("relaypass.ir.text.io", "save"),
    "ParseError": ("relaypass.errors", "ParseError"),
    # tvm.error.DiagnosticError...: TVM's name for the module of errors
    "error": ("relaypass", "errors"),
    "RelayPassError": ("relaypass.errors", "RelayPassError"),
    "instrument": ("relaypass.transform", "instrument"),  # tvm.instrument is tvm.ir.instrument
    "TypeInferenceError": ("relaypass.errors", "TypeInferenceError"),
    # tvm.register_func / tvm.get_global_func / tvm.register_object (relaypass._ffi)
    "register_func": ("relaypass._ffi.registry", "register_func"),
    "get_global_func": ("relaypass._ffi.registry", "get_global_func"),
    "register_object": ("relaypass._ffi.registry", "register_object"),
    "container": ("relaypass.ir", "container"),  # tvm.container is tvm.ir.container
    "structural_equal": ("relaypass.ir.structural", "structural_equal"),
    "structural_hash": ("relaypass.ir.structural", "structural_hash"),
    "assert_structural_equal": ("relaypass.ir.structural", "assert_structural_equal"),
    # tvm.device / tvm.cpu() ...: devices of TVM's runtime (relaypass.ir.ndarray)
    **{
        name: ("relaypass.ir.ndarray", name)
        for name in ("device", "cpu", "cuda", "gpu", "opencl", "cl", "vulkan", "metal", "mtl",
                     "vpi", "rocm", "ext_dev", "hexagon")
    },
}
_SUBMODULES = {
    "ir", "relay", "transform", "plugins", "op", "interp", "frontend", "functor", "errors",
    "analysis", "dataflow_pattern", "testing", "tools", "nd", "runtime", "tir", "_ffi",
}

if TYPE_CHECKING:
    from . import errors, functor, ir, relay  # noqa: F401
    from .errors import ParseError, RelayPassError, TypeInferenceError  # noqa: F401
    from .ir.module import IRModule  # noqa: F401


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(importlib.import_module(target[0]), target[1])
    elif name in _SUBMODULES or f"relaypass.{name}" in _OUT_OF_SCOPE:
        value = importlib.import_module(f"relaypass.{name}")
    else:
        raise AttributeError(f"module 'relaypass' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, *_SUBMODULES])
