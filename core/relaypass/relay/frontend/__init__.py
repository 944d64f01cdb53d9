"""``relay.frontend``: the importers (``from_onnx``) and ``relay.frontend.common``.

Re-exports of :mod:`relaypass.frontend`, whose names load on first use.
"""

from __future__ import annotations

from typing import Any

from ... import frontend as _frontend
from . import common

__all__ = ["common", *_frontend.__all__]


def __getattr__(name: str) -> Any:
    return getattr(_frontend, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_frontend.__all__})
