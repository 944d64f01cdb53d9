"""Neural-network operators (``relay.nn``)."""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Expr
from ..ir.op import OpPattern, make_call, register_op
from .relations import identity_rel

__all__ = ["relu"]

register_op(
    "nn.relu", num_inputs=1, type_relation=identity_rel("nn.relu"),
    kernel=lambda args, attrs: np.maximum(args[0], np.zeros((), dtype=args[0].dtype)),
    pattern=OpPattern.ELEMWISE,
)


def relu(data: Expr) -> Call:
    """Rectified linear unit, ``max(x, 0)``."""
    return make_call("nn.relu", [data])
