"""Which functions of a module InferType can keep as they are: typing along a pipeline.

Relay types the whole module again after every pass, which made InferType
over 90% of some compile times.  Nodes here are immutable and only type
inference types them, so a function InferType returned is still correctly
typed when it comes back -- the same object -- as long as every global it
could refer to still exists with the type it had.  InferType remembers, for
each function it returns (weakly, for as long as the function lives), the
global variable it bound it to and the *signature* of the module it typed it
in: that module's global variables, each typed.  A function comes back
*kept* when it is such a function, still bound to a global variable of its
own type, and when every global of its signature is still in the module with
that type.  Only the other functions are typed again, with the kept ones
standing for their types; if one of those comes out with another type than
its global variable had, its callers are not kept after all and the whole
module is typed, as in Relay.  Work is then in proportion to the functions
that changed.

The check runs before every InferType of a pipeline, so its cost is what a
run over an unchanged module costs: a few dictionary lookups per function.
Global variables are immutable too, so the usual case -- a pass replaced
some functions under the same global variables -- is told by identity: the
function is bound to the very global variable it was noted with, and the
module has the very global variables of the signature (one list comparison,
done in C).  Names and types are compared only when those differ.

A function InferType never returned may be typed all the same: a pass that
rebuilds a typed function over merged or folded children carries the types
over (EliminateCommonSubexpr, FoldConstant, SimplifyExpr's rewrites).
:func:`typed_as_inferred` recognises such a function by the identities
InferType's own keeping rests on, in one walk that builds nothing, and the
function is kept as a noted one is: typing it again would cost a walk, a
table of types and a copy of every node only to give back the same nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple
from weakref import ref

from relaypass.ir.dtype import canonical_dtype
from relaypass.ir.expr import (
    BaseFunc,
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, TensorType, TupleType, Type

__all__ = ["Kept", "concrete_type", "kept_functions", "remember", "typed_as_inferred",
           "typed_constant"]


class _Signature:
    """The global variables of a module InferType returned, typed, in the module's order."""

    __slots__ = ("gvs",)

    def __init__(self, gvs: list[GlobalVar]) -> None:
        self.gvs = gvs

    def holds_in(self, gvs: list[GlobalVar], by_name: dict[str, GlobalVar] | None) -> bool:
        """Whether every global of this signature is among ``gvs`` (a module's, ``by_name``
        the same by name, built on demand) with the type it has here."""
        if self.gvs == gvs:  # the very same global variables (identity comes first)
            return True
        if by_name is None:
            by_name = {gv.name_hint: gv for gv in gvs}
        for gv in self.gvs:
            now = by_name.get(gv.name_hint)
            if now is None or not _same(now._checked_type, gv._checked_type):
                return False
        return True


class _Notes:
    """For each function InferType returned, for as long as the function lives: the global
    variable it was bound to and the module's signature.

    Keyed by identity, as a weak-keyed dictionary, but reading a note costs
    a dictionary lookup and a call of the stored reference (a
    ``WeakKeyDictionary`` makes a new reference for every lookup).
    """

    __slots__ = ("by_id",)

    def __init__(self) -> None:
        #: id(function) -> (weak reference to it, its global variable, its signature)
        self.by_id: dict[int, tuple[ref, GlobalVar, _Signature]] = {}

    def set(self, func: Function, gv: GlobalVar, signature: _Signature) -> None:
        key = id(func)
        entry = self.by_id.get(key)
        if entry is not None and entry[0]() is func:
            self.by_id[key] = (entry[0], gv, signature)
            return
        by_id = self.by_id

        def forget(_dead: ref, key: int = key) -> None:
            current = by_id.get(key)
            if current is not None and current[0]() is None:
                del by_id[key]

        by_id[key] = (ref(func, forget), gv, signature)


_NOTES = _Notes()


def _same(a: Type | None, b: Type | None) -> bool:
    return a is b or (a is not None and b is not None and a == b)


class Kept(NamedTuple):
    """What a run can keep of a module: ``functions``, by name with their (typed) global
    variables; ``others``, the module's other functions with their global variables (in the
    module's order); ``signature``, the one signature the noted kept functions share when
    the module has exactly its global variables (None otherwise); ``unnoted``, the names of
    the kept functions InferType did not return (:func:`typed_as_inferred`), to be noted."""

    functions: dict[str, GlobalVar]
    others: list[tuple[GlobalVar, BaseFunc]]
    signature: _Signature | None
    unnoted: list[str]


def kept_functions(items: Sequence[tuple[GlobalVar, BaseFunc]]) -> Kept:
    """What of ``items`` (a module's functions) needs no typing: nothing when the module has
    no such function, or when one of them may call a global that is gone or changed type."""
    lookup = _NOTES.by_id.get
    kept: dict[str, GlobalVar] = {}
    others: list[tuple[GlobalVar, BaseFunc]] = []
    unnoted: list[str] = []
    signatures: dict[int, _Signature] = {}
    last = None
    for item in items:
        gv, func = item
        entry = lookup(id(func))
        if (entry is None or entry[0]() is not func
                or (entry[1] is not gv and not _same(gv._checked_type, func._checked_type))):
            # Typed by a pass, over no global (so whatever the others became): kept too.
            if (type(func) is Function and func._checked_type is not None
                    and _same(gv._checked_type, func._checked_type) and typed_as_inferred(func)):
                kept[gv.name_hint] = gv
                unnoted.append(gv.name_hint)
            else:
                others.append(item)
            continue
        kept[gv.name_hint] = gv
        if entry[2] is not last:
            last = entry[2]
            signatures[id(last)] = last
    if not kept:
        return Kept({}, others, None, unnoted)
    gvs = [gv for gv, _func in items]
    by_name = None if len(signatures) == 1 else {gv.name_hint: gv for gv in gvs}
    for signature in signatures.values():
        if not signature.holds_in(gvs, by_name):
            return Kept({}, list(items), None, [])
    shared = last if len(signatures) == 1 and last.gvs == gvs else None
    return Kept(kept, others, shared, unnoted)


def typed_as_inferred(func: Function) -> bool:
    """Whether every node of ``func`` is typed as InferType would type it, so that InferType
    would give ``func`` back node for node (its own top node aside, structurally equal).

    Told by the identities InferType's keeping rests on: an operator call carries its
    arguments' very types as ``type_args`` (its own type came from its relation on them), a
    tuple's type holds its fields' very types, a projection has its field's type, a variable
    its complete annotation, a constant its array's shape and dtype.  Anything else -- a
    global variable (whose type may have changed), a call of a function, a polymorphic or
    untyped node -- answers False, and InferType types the function as usual.
    """
    seen: set[Expr] = set()
    stack: list[Expr] = [func]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if node in seen:
            continue
        seen.add(node)
        ty = node._checked_type
        if ty is None:
            return False
        t = type(node)
        if t is Call:
            op = node.op
            args = node.args
            if (type(op) is not Op or (op.num_inputs >= 0 and len(args) != op.num_inputs)
                    or not concrete_type(ty)):
                return False
            type_args = node.type_args
            if len(type_args) != len(args):
                return False
            for arg, arg_type in zip(args, type_args):
                if arg._checked_type is not arg_type:
                    return False
                push(arg)
        elif t is Var:
            ann = node.type_annotation
            if ann is None or not (ann is ty or ann == ty) or not concrete_type(ann):
                return False
        elif t is Constant:
            if not typed_constant(node):
                return False
        elif t is Tuple:
            fields = node.fields
            if type(ty) is not TupleType or len(ty.fields) != len(fields):
                return False
            for field, field_type in zip(fields, ty.fields):
                if field._checked_type is not field_type:
                    return False
                push(field)
        elif t is TupleGetItem:
            value = node.tuple_value
            tup = value._checked_type
            if type(tup) is not TupleType or not 0 <= node.index < len(tup.fields):
                return False
            if not _same(tup.fields[node.index], ty):
                return False
            push(value)
        elif t is Let:
            var, value, body = node.var, node.value, node.body
            if (body._checked_type is not ty or var._checked_type is None
                    or not _same(var._checked_type, value._checked_type)):
                return False
            push(body)
            push(value)
            push(var)
        elif t is Function:
            params = node.params
            ret = node.ret_type
            if (type(ty) is not FuncType or ty.type_params or node.type_params or ret is None
                    or len(ty.arg_types) != len(params) or not _same(ty.ret_type, ret)
                    or not _same(ret, node.body._checked_type)):
                return False
            for param, param_type in zip(params, ty.arg_types):
                if not _same(param._checked_type, param_type):
                    return False
                push(param)
            push(node.body)
        else:
            return False
    return True


def typed_constant(node: Constant) -> bool:
    """Whether ``node`` is typed as InferType types a constant: its array's shape and dtype."""
    ty = node._checked_type
    data = node.array
    return (type(ty) is TensorType and ty.span is None and ty.shape == data.shape
            and ty.dtype == canonical_dtype(data.dtype))


def concrete_type(ty: Type) -> bool:
    """Whether ``ty`` is made of tensor and tuple types only (nothing for InferType to solve)."""
    if type(ty) is TensorType:
        return True
    stack = [ty]
    while stack:
        t = stack.pop()
        if type(t) is TupleType:
            stack.extend(t.fields)
        elif type(t) is not TensorType:
            return False
    return True


def remember(mod: IRModule, kept: Kept | None = None, typed: Iterable[str] = ()) -> None:
    """Note that ``mod``, just typed, is typed: its functions can be kept next time.

    ``kept``: what was kept to type it, and ``typed`` the names of the others
    (typed again, each bound to the global variable it had, of the same
    type): when the kept functions share a signature that is exactly the
    module's global variables, only the functions typed again, and those
    kept without a note, need one.
    """
    if kept is not None and kept.signature is not None:
        signature = kept.signature
        for name in (*typed, *kept.unnoted):
            gv = mod.get_global_var(name)
            _NOTES.set(mod[gv], gv, signature)
        return
    items = list(mod.items())
    signature = _Signature([gv for gv, _func in items])
    for gv, func in items:
        if type(func) is Function:
            _NOTES.set(func, gv, signature)
