"""CanonicalizeCast: give each elementwise consumer of a widening cast its own copy (Relay's pass).

A ``cast`` from fewer bits to more (int8 to int32, float16 to float32) read
by several elementwise or broadcast operators would, when fused, end up in a
group of its own and write the wide tensor out.  Copying the cast for every
such consumer after the first lets FuseOps fuse each copy into its consumer,
so the narrow tensor is what is read.  Relay's canonicalize_cast.cc, with
its order: the first consumer the recursive rewrite reaches keeps the
original cast.  That order is reproduced here with an explicit stack, so
chains of any length work.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from relaypass.ir.expr import Call, Expr, Function
from relaypass.ir.fields import children, rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op, OpPattern
from relaypass.transform import pass_constructor

__all__ = ["CanonicalizeCast", "canonicalize_cast"]

_CAST = Op.get("cast")


def _bits(dtype: object) -> int:
    """The bits of one element (``bool``: 1, as in TVM)."""
    name = str(dtype)
    found = re.search(r"(\d+)$", name)
    return int(found.group(1)) if found else 1


def _widening_cast(expr: Expr) -> bool:
    if type(expr) is not Call or expr.op is not _CAST:
        return False
    return _bits(expr.args[0].checked_type.dtype) < _bits(expr.attrs.dtype)


def _elementwise(call: Call) -> bool:
    return isinstance(call.op, Op) and call.op.pattern <= OpPattern.BROADCAST


def canonicalize_cast(func: Function) -> Function:
    """``func`` with a copy of each widening cast for every elementwise consumer after the first."""
    out: dict[Expr, Expr] = {}
    uses: dict[Expr, int] = {}

    def argument(node: Expr) -> Expr:
        """The rewritten ``node`` as an elementwise consumer's argument (Relay's GetNewCallArg)."""
        new = out[node]
        if _widening_cast(node):
            uses[node] = uses.get(node, 0) + 1
            if uses[node] > 1:
                return Call(new.op, list(new.args), new.attrs, new.type_args)
        return new

    # Frames (node, index of the next child, rewritten children so far): the recursion of
    # Relay's mutator, where a consumer's arguments are finished one after the other.
    stack: list[tuple[Expr, int, list[Expr]]] = [(func, 0, [])]
    while stack:
        node, index, done = stack[-1]
        kids = children(node)
        if index < len(kids):
            kid = kids[index]
            if kid not in out:
                stack.append((kid, 0, []))
                continue
            # A call's children are its operator, then its arguments.
            consumer = type(node) is Call and index >= 1 and _elementwise(node)
            done.append(argument(kid) if consumer else out[kid])
            stack[-1] = (node, index + 1, done)
            continue
        stack.pop()
        if node in out:
            continue
        unchanged = all(new is old for new, old in zip(done, kids))
        out[node] = node if unchanged else rebuild(node, done)
    return out[func]


def _canonicalize_cast_factory() -> Callable[[Function, IRModule, object], Function]:
    """CanonicalizeCast's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return canonicalize_cast(func)

    return transform


#: The pass ``relay.transform.CanonicalizeCast()`` builds; its metadata is in relaypass-plugin.toml.
CanonicalizeCast = pass_constructor("CanonicalizeCast")
