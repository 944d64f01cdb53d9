"""``relay.op.contrib.register``: TVM's module of the pattern-table registry (re-exports only)."""

from ....transform.pattern_tables import get_pattern_table, register_pattern_table

__all__ = ["get_pattern_table", "register_pattern_table"]
