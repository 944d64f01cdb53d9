"""``relay.base``: ``Span``, ``SourceName`` and the node base class (``RelayNode``)."""

from ..ir.node import Node, SourceName, Span

RelayNode = Node

__all__ = ["Node", "RelayNode", "SourceName", "Span"]
