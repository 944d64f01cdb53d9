"""What the IR's base classes call but modules higher in the room define.

An expression prints itself (``str(expr)``), a type compares itself
structurally (``FuncType.__eq__``), ``x + y`` builds a call to the ``add``
operator: the printer, structural equality and the operator registry are all
built on the node classes, so the node classes cannot import them without an
import cycle.  They call these slots instead, and each of those modules fills
its slots when imported.  ``relaypass.ir`` imports all of them, so the slots
are filled before any node can exist.

One slot is filled from above the IR: ``import_from_std`` parses and
type-checks a standard Relay file, which needs type inference (reached through
the pass registry); the package root fills it when the IR is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _unfilled(module: str, importer: str = "relaypass.ir") -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{module} is not loaded (import {importer} first)")
    return call


#: ``astext(node, show_meta_data=True, annotate=None)``: the text form of a module or expression.
astext: Callable[..., str] = _unfilled("relaypass.ir.text.printer")
#: ``pretty_print(node)``: ``str(node)``, the text without version line and metadata.
pretty_print: Callable[[Any], str] = _unfilled("relaypass.ir.text.printer")
#: ``type_to_text(ty)``: the text form of a type.
type_to_text: Callable[[Any], str] = _unfilled("relaypass.ir.text.printer")
#: ``structural_equal(a, b)`` and ``structural_hash(a)``, for types and attribute values.
structural_equal: Callable[[Any, Any], bool] = _unfilled("relaypass.ir.structural")
structural_hash: Callable[[Any], int] = _unfilled("relaypass.ir.structural")
#: ``get_op(name)``: the registered operator ``name`` (``Op.get``).
get_op: Callable[[str], Any] = _unfilled("relaypass.ir.op")
#: ``make_call(op_name, args, **attrs)``: a call with the operator's attribute schema.
make_call: Callable[..., Any] = _unfilled("relaypass.ir.op")
#: ``import_from_std(mod, name)``: parse the standard Relay file ``name`` (``"prelude"``) into
#: ``mod`` and type-check it (``IRModule.import_from_std``), with the front end that ships the
#: files; the package root fills this slot.
import_from_std: Callable[..., Any] = _unfilled("relaypass.frontend.prelude", "relaypass")
#: ``dim_arith(op, a, b)``: ``a <op> b`` for tensor dimensions where one is a size variable or an
#: expression of them (``op`` one of add, sub, mul, floordiv, mod, neg); NotImplemented when the
#: other operand is not a dimension.
dim_arith: Callable[[str, Any, Any], Any] = _unfilled("relaypass.ir.shape_expr")
#: ``save_json(obj)`` and ``load_json(text)``: an IR object as JSON text and back; nodes and
#: modules pickle through them, as TVM's objects do.
save_json: Callable[[Any], str] = _unfilled("relaypass.ir.node_json")
load_json: Callable[[str], Any] = _unfilled("relaypass.ir.node_json")
