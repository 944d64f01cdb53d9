"""relaypass: a pure-Python home for Relay-style compiler passes.

The top level is deliberately light: attributes are imported on first use
(PEP 562), so that tools that only list plugins never import numpy.  It does
one piece of wiring that no layer below may do for itself: it connects the
installed plugin distributions (:mod:`relaypass.plugins`) to the pass registry
(:mod:`relaypass.transform`), which sits below them.
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from .plugins.manager import connect as _connect_plugins

_connect_plugins()

__version__ = _metadata.version("relaypass")

_LAZY = {
    "IRModule": ("relaypass.ir.module", "IRModule"),
    "parse": ("relaypass.ir.text.parser", "parse"),
    "parse_expr": ("relaypass.ir.text.parser", "parse_expr"),
    "load": ("relaypass.ir.text.io", "load"),
    "save": ("relaypass.ir.text.io", "save"),
    "ParseError": ("relaypass.errors", "ParseError"),
    "RelayPassError": ("relaypass.errors", "RelayPassError"),
    "TypeInferenceError": ("relaypass.errors", "TypeInferenceError"),
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
    "analysis", "dataflow_pattern", "testing", "tools", "nd", "runtime",
}

if TYPE_CHECKING:
    from . import errors, functor, ir, relay  # noqa: F401
    from .errors import ParseError, RelayPassError, TypeInferenceError  # noqa: F401
    from .ir.module import IRModule  # noqa: F401


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(importlib.import_module(target[0]), target[1])
    elif name in _SUBMODULES:
        value = importlib.import_module(f"relaypass.{name}")
    else:
        raise AttributeError(f"module 'relaypass' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, *_SUBMODULES])
