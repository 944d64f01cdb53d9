"""``relay.annotation``: calls that annotate an expression for later passes.

``relay.annotation.stop_fusion(expr)`` keeps FuseOps from fusing ``expr``
with the expressions that use it; ``compiler_begin`` / ``compiler_end``
mark regions for an external compiler (docs/byoc.md).
"""

from ..op.annotation import compiler_begin, compiler_end, stop_fusion

__all__ = ["compiler_begin", "compiler_end", "stop_fusion"]
