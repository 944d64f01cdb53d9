"""EliminateCommonSubexpr: one node for each computation that appears several times.

Relay's ``eliminate_common_subexpr.cc``, rewriting post-order (children
first) so that merging cascades upwards: once two ``relu(x)`` have become one
node, the two ``add(relu(x), 1)`` above them have identical arguments and
merge too.  Two rewritten nodes are merged when

* both are calls of the same operator with structurally equal attributes and
  arguments that are pairwise the same node, or equal scalar constants, or
  tuples whose fields are pairwise the same node or equal scalar constants;
* both are projections with the same index of the same node.

The later node is replaced by the earlier one, which has its type, so the
nodes rebuilt over it keep theirs (:func:`~relaypass.transform.infer_type_local.carry_type`):
the function comes back typed, and the typing that ends the pass has nothing
to do.  Never merged: calls without
arguments, calls of anything but an operator (functions, closures, globals),
calls of stateful operators (``TOpIsStateful``, such as ``nn.dropout``), and
whatever the optional ``fskip`` callback returns true for (it is asked, as in
Relay, about each rewritten projection and each rewritten call that the
previous rules let through).

Relay compares each call against every earlier call of its operator, which is
quadratic in the size of the program; here earlier nodes are indexed by a key
built from exactly what the comparison looks at, which finds the same node in
constant time.  As in Relay the index spans the whole function, local
functions and branches included, since merging pure dataflow never changes
what a program computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import is_

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function, Tuple, TupleGetItem
from relaypass.ir.fields import rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.transform import pass_constructor
from relaypass.transform.infer_type_local import carry_type

__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]

Skip = Callable[[Expr], bool]


def _scalar_key(arg: Expr) -> object:
    """A scalar constant by value (dtype and bytes, as structural equality sees it), else the node."""
    if type(arg) is Constant:
        data = arg.array
        if data.ndim == 0:
            return ("scalar", data.dtype.str, data.tobytes())
    return arg


#: The kinds of arguments whose key is not the node itself (see :func:`_arg_key`).
_KEYED = frozenset((Constant, Tuple))


def _arg_key(arg: Expr) -> object:
    if type(arg) is Tuple:
        return ("tuple", tuple(_scalar_key(f) for f in arg.fields))
    return _scalar_key(arg)


class _CommonSubexprEliminator(MixedModeMutator):
    def __init__(self, fskip: Skip | None) -> None:
        super().__init__()
        self.fskip = fskip
        self.calls: dict[tuple, Call] = {}
        self.projections: dict[tuple[Expr, int], TupleGetItem] = {}

    def visit_call(self, call: Call) -> Expr:
        # MixedModeMutator's visit_call (the callee, then the arguments, rebuilt if one
        # changed), written out: this runs for every call of the program.
        op = call.op
        if type(op) is not Op:
            op = self.visit(op)
        memo = self.memo_map
        visit = self.visit
        args = [memo[a] if a in memo else visit(a) for a in call.args]
        if op is call.op and all(map(is_, args, call.args)):
            return self.rewrite_call(call, call)
        return self.rewrite_call(call, carry_type(call, rebuild(call, (op, *args))))

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        op = post.op
        args = post.args
        if type(op) is not Op or not args or op._attrs.get("TOpIsStateful"):
            return post
        if self.fskip is not None and self.fskip(post):
            return post
        key = (op, post.attrs, tuple([a if type(a) not in _KEYED else _arg_key(a) for a in args]))
        return self.calls.setdefault(key, post)

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        return post if post is pre else carry_type(pre, post)

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        if post is not pre:
            post = carry_type(pre, post)
        if self.fskip is not None and self.fskip(post):
            return post
        return self.projections.setdefault((post.tuple_value, post.index), post)

    def visit_function(self, func: Function) -> Expr:
        post = self.mutate_children(func)
        return post if post is func else carry_type(func, post)


def eliminate_common_subexpr(expr: Expr, fskip: Skip | None = None) -> Expr:
    """``expr`` with its common subexpressions merged; ``fskip(e)`` true keeps ``e`` apart."""
    return _CommonSubexprEliminator(fskip).visit(expr)


def _skip_ops(names: Iterable[str]) -> Skip:
    """A callback that keeps calls of the named operators apart."""
    ops = frozenset(Op.get(name) for name in names)

    def fskip(expr: Expr) -> bool:
        return type(expr) is Call and expr.op in ops

    return fskip


def _eliminate_common_subexpr_factory(
    *, fskip: Skip | Iterable[str] | None,
) -> Callable[[Function, IRModule, object], Function]:
    """EliminateCommonSubexpr's transformation: the manifest's factory.

    The pass is :data:`EliminateCommonSubexpr`.

    ``fskip`` is Relay's callback (``fskip(expr) -> bool``, true to leave
    ``expr`` alone), or a list of operator names whose calls are never merged
    (the form a pipeline file can give; the manifest's default is ``[]``), or
    None (Relay's default: merge everything).
    """
    if fskip is None or callable(fskip):
        skip = fskip
    elif isinstance(fskip, str):
        skip = _skip_ops([fskip])
    else:
        names = list(fskip)
        skip = _skip_ops(names) if names else None

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return eliminate_common_subexpr(func, skip)

    return transform


#: The EliminateCommonSubexpr pass, the one ``relay.transform.EliminateCommonSubexpr``
#: builds (``EliminateCommonSubexpr(fskip)`` as in Relay); everything about it is
#: declared in relaypass-plugin.toml.
EliminateCommonSubexpr = pass_constructor("EliminateCommonSubexpr")
