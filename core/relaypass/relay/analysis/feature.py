"""``relay.analysis.feature``: the ``Feature`` enumeration, under TVM's module name."""

from ...analysis.feature import Feature

__all__ = ["Feature"]
