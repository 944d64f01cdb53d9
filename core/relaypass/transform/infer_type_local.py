"""``InferTypeLocal(expr)``: the type of one expression, filled in on its own nodes.

TVM's ``relay.transform.InferTypeLocal`` types an expression without the
caller building a module, and leaves ``checked_type`` on the expression's
nodes.  Here the expression goes through the registered type-inference pass
(the manifest ``role = "type-inference"``) in a module of its own; each
node of ``expr`` then takes the type of its counterpart in the typed copy,
where it has none yet.  Not part of :mod:`relaypass.transform`'s namespace
(importing it loads the IR): ``relay.transform.InferTypeLocal``.

:func:`carry_type` is the local typing passes do without running inference:
a node rebuilt over children of the types it had keeps its own.
"""

from __future__ import annotations

from ..ir.expr import Call, Expr, Function, Let, Tuple, TupleGetItem, Var, set_checked_type
from ..ir.module import IRModule
from ..ir.node import slot_filler
from ..ir.op import Op
from ..ir.types import TupleType, Type
from .registry import get_pass_by_role

__all__ = ["InferTypeLocal", "carry_type", "copy_types"]


def InferTypeLocal(expr: Expr) -> Type:  # noqa: N802  (TVM's name)
    """Infer the type of ``expr``; fills ``checked_type`` of its nodes and returns ``expr``'s."""
    if not isinstance(expr, Expr):
        raise TypeError(f"InferTypeLocal expects a Relay expression, not {type(expr).__name__}")
    typed_mod = get_pass_by_role("type-inference")(IRModule.from_expr(expr))
    main = typed_mod["main"]
    typed = main if isinstance(expr, Function) else main.body
    copy_types(expr, typed)
    return expr.checked_type


def copy_types(original: Expr, typed: Expr) -> None:
    """Give each node of ``original`` the type of the node at its place in ``typed``."""
    done: set[int] = set()
    stack = [(original, typed)]
    while stack:
        node, twin = stack.pop()
        if id(node) in done:
            continue
        done.add(id(node))
        if type(node) is Op:
            continue
        if not node.has_checked_type and twin.has_checked_type:
            set_checked_type(node, twin.checked_type)
        if type(node) is Var:
            continue
        layout = type(node)._layout_
        kids, twins = layout.children(node), type(twin)._layout_.children(twin)
        if type(twin) is type(node) and len(kids) == len(twins):
            stack.extend(zip(kids, twins))


def carry_type(pre: Expr, post: Expr) -> Expr:
    """``post`` -- the typed ``pre`` rebuilt over other children, a node the caller has just
    built and shared with nobody yet -- typed as type inference types it, when each new child
    has the type of the child it replaces; else ``post`` as it is.

    A pass that merges or folds parts of a typed program (EliminateCommonSubexpr,
    FoldConstant) rebuilds their users over equivalents of the same types, so each user
    has the type it had.  Typed here, the result is typed node for node as InferType
    would type it (an operator call carries its arguments' very types as ``type_args``, a
    tuple type its fields' very types), and the typing that ends a function pass finds
    nothing left to do, where it would otherwise walk and copy the whole function.  Calls
    of operators, tuples, projections, lets and functions are carried; anything else
    (an If, a call of a function) comes back untyped, for type inference to type.
    """
    ty = pre._checked_type
    t = type(post)
    if ty is None or post is pre or post._checked_type is not None or t is not type(pre):
        return post
    if t is Call:
        args = post.args
        if (type(post.op) is not Op or post.op is not pre.op or post.attrs is not pre.attrs
                or len(args) != len(pre.args)):
            return post  # (another operator or other attributes may give another type)
        arg_types = _same_types(args, pre.args)
        if arg_types is not None:
            # Filled in place, as the constructor fills a new node: nobody holds ``post`` yet.
            _fill_call_type(post, tuple(arg_types), ty)
    elif t is Tuple:
        fields = post.fields
        if type(ty) is not TupleType or len(fields) != len(ty.fields):
            return post
        field_types = _same_types(fields, pre.fields)
        if field_types is None:
            return post
        same = all(a is b for a, b in zip(field_types, ty.fields))
        set_checked_type(post, ty if same else TupleType(field_types))
    elif t is TupleGetItem:
        tup = post.tuple_value._checked_type
        if type(tup) is TupleType and 0 <= post.index < len(tup.fields):
            field = tup.fields[post.index]
            if field is ty or field == ty:
                set_checked_type(post, field)
    elif t is Let:
        body = post.body._checked_type
        if (_same_types((post.var, post.value), (pre.var, pre.value)) is not None
                and body is not None and (body is ty or body == ty)):
            set_checked_type(post, body)
    elif t is Function:
        if (post.params == pre.params and post.ret_type is not None
                and _same_types((post.body,), (pre.body,)) is not None):
            set_checked_type(post, ty)
    return post


_fill_call_type = slot_filler(Call, "type_args", "_checked_type")


def _same_types(new: tuple[Expr, ...], old: tuple[Expr, ...]) -> list[Type] | None:
    """The types of the ``new`` nodes, if each is typed with its ``old`` counterpart's type."""
    types = []
    for a, b in zip(new, old):
        ta = a._checked_type
        if ta is None:
            return None
        tb = b._checked_type
        if ta is not tb and not (tb is not None and ta == tb):
            return None
        types.append(ta)
    return types
