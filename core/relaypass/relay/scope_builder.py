"""``relay.scope_builder``: the module TVM defines ``ScopeBuilder`` in (``relay.scope_builder.ScopeBuilder()``)."""

from ..ir.scope_builder import ScopeBuilder

__all__ = ["ScopeBuilder"]
