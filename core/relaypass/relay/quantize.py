"""``relay.quantize``: the quantization configuration pass code reads.

``qconfig``, ``current_qconfig``, ``QConfig``, ``QAnnotateKind`` and
``kind2str`` are Relay's (see :mod:`relaypass.transform.quantize`); the
quantizer itself (``quantize``, ``partition``, ``annotate``, ``realize``,
``calibrate``...) raises ``RelayCompatError``: it is out of scope.
"""

from typing import Any as _AnyT

from ..transform.quantize import (
    QAnnotateKind,
    QConfig,
    current_qconfig,
    kind2str,
    out_of_scope,
    qconfig,
    quantize,
)

__all__ = ["QAnnotateKind", "QConfig", "current_qconfig", "kind2str", "qconfig", "quantize"]


def __getattr__(name: str) -> _AnyT:
    return out_of_scope(name)
