"""``relay.op.contrib``: the registry of bring-your-own-codegen pattern tables, under TVM's names.

Re-exports only; the registry is :mod:`relaypass.transform.pattern_tables`.
TVM's per-target modules (``dnnl``, ``tensorrt``, ...) need their code
generators and are not provided; a target publishes its table as a plugin
(docs/byoc.md).
"""

from ....transform.pattern_tables import get_pattern_table, register_pattern_table
from . import register  # noqa: F401  (TVM's submodule, as an attribute)

__all__ = ["get_pattern_table", "register_pattern_table"]
