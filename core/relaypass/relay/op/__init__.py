"""``relay.op``: the operator constructors and the operator registry, under TVM's names.

``relay.op.get("add")`` is the registered operator; ``register_op_attr`` and
``register_pattern`` attach attributes to any registered operator, with TVM's
levels.  The constructors live in :mod:`relaypass.op`; this package only
re-exports them, with TVM's submodules (``relay.op.nn``, ``relay.op.tensor``,
``relay.op.algorithm``,
``relay.op.transform``, ``relay.op.reduce``, ``relay.op.op``,
``relay.op.annotation``, ``relay.op.contrib``, ``relay.op.dyn``).
"""

from ...op import *  # noqa: F403
from ...op import __all__ as _constructors
from . import algorithm, annotation, contrib, dyn, nn, op, reduce, tensor, transform  # noqa: F401  (TVM's submodules, as attributes)
from .op import (
    Op,
    OpPattern,
    get,
    register_alter_op_layout,
    register_canonicalize,
    register_convert_op_layout,
    register_infer_correct_layout,
    register_legalize,
    register_mixed_precision_conversion,
    register_op_attr,
    register_pattern,
)

# Submodules are attributes, not part of ``*``: ``from relay.op import *`` must not
# rebind ``relay.op`` or ``relay.transform``.
__all__ = [*_constructors, "Op", "OpPattern", "get", "register_alter_op_layout",
           "register_canonicalize", "register_convert_op_layout", "register_infer_correct_layout",
           "register_legalize", "register_mixed_precision_conversion", "register_op_attr",
           "register_pattern"]
