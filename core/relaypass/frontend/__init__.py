"""Importers that turn models of other frameworks into Relay modules, and the ONNX exporter.

``from relaypass.frontend import from_onnx, to_onnx`` (the ``onnx`` extra:
``pip install 'relaypass[onnx]'``).  Names load on first use, so importing
this package imports neither onnx nor the converters.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "from_onnx": ("relaypass.frontend.onnx", "from_onnx"),
    "supported_operators": ("relaypass.frontend.onnx", "supported_operators"),
    "unsupported_operators": ("relaypass.frontend.onnx", "unsupported_operators"),
    "OnnxImportError": ("relaypass.frontend.errors", "OnnxImportError"),
    "OnnxNotInstalledError": ("relaypass.frontend.errors", "OnnxNotInstalledError"),
    "UnsupportedOperatorError": ("relaypass.frontend.errors", "UnsupportedOperatorError"),
    "to_onnx": ("relaypass.frontend.onnx_export", "to_onnx"),
    "export_operators": ("relaypass.frontend.onnx_export", "export_operators"),
    "ExportError": ("relaypass.frontend.errors", "ExportError"),
    "OnnxExportNotInstalledError": ("relaypass.frontend.errors", "OnnxExportNotInstalledError"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'relaypass.frontend' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
