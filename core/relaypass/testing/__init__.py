"""A test kit for pass authors: random well-typed programs and inputs to run them on.

``relaypass.testing.strategies`` holds the hypothesis strategies (it needs the
``test`` extra); ``random_inputs`` needs only numpy.  Names are loaded on
first use so that importing this package never imports hypothesis by itself.
"""

from __future__ import annotations

import importlib
from typing import Any

from .inputs import random_inputs, random_value

_LAZY = {
    "programs": "relaypass.testing.strategies",
    "modules": "relaypass.testing.strategies",
    "OpUse": "relaypass.testing.strategies",
    "DEFAULT_OP_USES": "relaypass.testing.strategies",
    "available_op_uses": "relaypass.testing.strategies",
    "strategies": None,
}

__all__ = ["random_inputs", "random_value", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'relaypass.testing' has no attribute {name!r}")
    module = importlib.import_module("relaypass.testing.strategies")
    value = module if name == "strategies" else getattr(module, name)
    globals()[name] = value
    return value
