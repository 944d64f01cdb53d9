"""``relay.annotation``: calls that annotate an expression for later passes.

``relay.annotation.stop_fusion(expr)`` keeps FuseOps from fusing ``expr``
with the expressions that use it.
"""

from ..op.annotation import stop_fusion

__all__ = ["stop_fusion"]
