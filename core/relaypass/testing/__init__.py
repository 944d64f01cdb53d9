"""A test kit for pass authors: random well-typed programs, inputs to run them on, check_pass.

``relaypass.testing.strategies`` holds the hypothesis strategies and
``check_pass`` runs a pass on them (both need the ``test`` extra);
``random_inputs`` needs only numpy.  TVM's ``tvm.testing`` helpers
(``assert_allclose``, ``parameter``, ``fixture``, ``parametrize_targets``,
``requires_*``, ``main``...) are in :mod:`relaypass.testing.utils` and
re-exported here.  Names are loaded on first use so that importing this
package never imports hypothesis or pytest by itself.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import utils
from .inputs import random_inputs, random_value
from .utils import *  # noqa: F403  (TVM's tvm.testing helpers; pytest is imported when used)

_STRATEGIES = "relaypass.testing.strategies"
_CHECK_PASS = "relaypass.testing.pass_check"

_LAZY = {
    "programs": _STRATEGIES,
    "modules": _STRATEGIES,
    "OpUse": _STRATEGIES,
    "DEFAULT_OP_USES": _STRATEGIES,
    "available_op_uses": _STRATEGIES,
    "strategies": _STRATEGIES,
    "check_pass": _CHECK_PASS,
    "PassCheckError": _CHECK_PASS,
    "PROPERTIES": _CHECK_PASS,
}

__all__ = ["random_inputs", "random_value", "utils", *utils.__all__, *_LAZY]


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'relaypass.testing' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    for lazy, source in _LAZY.items():
        if source == module_name:
            globals()[lazy] = module if lazy == "strategies" else getattr(module, lazy)
    return globals()[name]
