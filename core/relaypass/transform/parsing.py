"""TVM's ``relay.parse`` / ``relay.fromtext``: parse a module, then infer its types.

TVM's parser type-checks the module it reads (``ParseModule`` ends with
InferType), so ``relay.parse(text)["main"].body.checked_type`` works there.
The text format itself lives in :mod:`relaypass.ir.text`, below the pass
manager, and returns what the text says (``relaypass.parse``); this module,
above both, gives TVM's behaviour by running the registered pass whose role
is "type-inference" on the result.  With no such pass installed, the module
is returned as parsed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..ir.module import IRModule
from ..ir.text import parser as _text
from .errors import PassNotFoundError
from .registry import get_pass_by_role
from .specs import TYPE_INFERENCE

__all__ = ["fromtext", "parse"]


def parse(
    source: str,
    source_name: str = "from_string",
    init_module: IRModule | None = None,
    init_meta_table: Mapping[str, Sequence[Any]] | None = None,
) -> IRModule:
    """Parse a module and infer its types (TVM's ``relay.parse``).

    ``source_name`` names the text in errors and spans; the definitions are
    added to ``init_module`` when one is given, and ``init_meta_table``
    entries (``{"relay.Constant": [...]}``) follow the text's own metadata.
    """
    mod = _text.parse(source, source_name, init_module, init_meta_table)
    try:
        typer = get_pass_by_role(TYPE_INFERENCE)
    except PassNotFoundError:
        return mod
    return typer(mod)


def fromtext(source: str, source_name: str = "from_string") -> IRModule:
    """TVM's ``relay.fromtext``: :func:`parse` without the extra arguments."""
    return parse(source, source_name)
