"""What the IR's base classes call but modules higher in the room define.

An expression prints itself (``str(expr)``), a type compares itself
structurally (``FuncType.__eq__``), ``x + y`` builds a call to the ``add``
operator: the printer, structural equality and the operator registry are all
built on the node classes, so the node classes cannot import them without an
import cycle.  They call these slots instead, and each of those modules fills
its slots when imported.  ``relaypass.ir`` imports all of them, so the slots
are filled before any node can exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _unfilled(module: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"relaypass.ir.{module} is not loaded (import relaypass.ir first)")
    return call


#: ``astext(node, show_meta_data=True, annotate=None)``: the text form of a module or expression.
astext: Callable[..., str] = _unfilled("text.printer")
#: ``pretty_print(node)``: ``str(node)``, the text without version line and metadata.
pretty_print: Callable[[Any], str] = _unfilled("text.printer")
#: ``type_to_text(ty)``: the text form of a type.
type_to_text: Callable[[Any], str] = _unfilled("text.printer")
#: ``structural_equal(a, b)`` and ``structural_hash(a)``, for types and attribute values.
structural_equal: Callable[[Any, Any], bool] = _unfilled("structural")
structural_hash: Callable[[Any], int] = _unfilled("structural")
#: ``get_op(name)``: the registered operator ``name`` (``Op.get``).
get_op: Callable[[str], Any] = _unfilled("op")
#: ``make_call(op_name, args, **attrs)``: a call with the operator's attribute schema.
make_call: Callable[..., Any] = _unfilled("op")
