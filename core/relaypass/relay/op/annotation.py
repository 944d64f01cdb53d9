"""``relay.op.annotation``: the annotation operators under TVM's module name.

``compiler_begin`` / ``compiler_end`` mark regions for an external compiler
(the BYOC flow, docs/byoc.md); ``stop_fusion`` keeps FuseOps from fusing
across an expression.
"""

from ...op.annotation import compiler_begin, compiler_end, stop_fusion

__all__ = ["compiler_begin", "compiler_end", "stop_fusion"]
