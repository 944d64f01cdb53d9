"""FuseOps: group operators into primitive functions by their fusion patterns, as Relay does.

Relay's FuseOps (``fuse_ops.cc`` with ``graph_partitioner.cc``) in three steps:

1. :mod:`.forward_graph` numbers the dataflow of the function in post-order
   and records, for every value, who consumes it and with which pattern;
2. :mod:`.graph_partition` groups the nodes with the post-dominator tree of
   :mod:`.dominator` (a convolution absorbs the elementwise chain behind it,
   elementwise and injective operators fuse together and into a following
   reduction, diamonds fuse only when every path is fusable, groups stay
   within ``max_depth`` operators and ``max_function_args`` arguments);
3. this module rewrites the function: each group becomes a
   ``fn (%p0, %p1, ...) -> T { ... }`` marked ``Primitive=1`` whose parameters
   are the values flowing into the group (annotated with their types), called
   where the group's last node was.  A tuple that ends a group stays outside
   it; ``annotation.stop_fusion`` separates what it annotates from its users
   and disappears; functions already marked ``Primitive`` are left as they are.

Lets, ifs and local functions are boundaries: their values are used as they
are, so nothing fuses across them, while the dataflow inside each is fused.

At fuse level 0 nothing is fused together, yet every operator call still
becomes a primitive function of its own, with scalar constants passed in as
arguments -- what Relay's later stages expect.

A constant that is not part of a group (a non-scalar one, or any constant at
fuse level 0) is passed to the group's function as an argument, unless
``link_params`` is set (Relay's ``relay.FuseOps.link_params`` config key):
then it is written into the function body, as Relay does to link parameters
into the generated code.

The output is typed: every node built here gets its ``checked_type`` while
being built (the types are those of the input, which InferType has filled),
so no second type inference is needed.  The rewrite visits the graph's nodes
in post-order, so parameters are numbered in the order Relay numbers them.
Nothing recurses along dataflow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any as _AnyT

from relaypass.analysis.forward_graph import (
    IndexedForwardGraph,
    build_forward_graph,
    is_opaque_function,
)
from relaypass.analysis.graph_partition import GraphPartitioner
from relaypass.errors import RelayPassError
from relaypass.gc_pause import gc_paused
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    Tuple,
    TupleGetItem,
    Var,
    set_checked_type,
)
from relaypass.ir.fields import map_children, rebuild
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, TensorType, Type
from relaypass.transform import pass_constructor
from relaypass.transform.errors import OptionError

__all__ = ["FuseOps", "FuseOpsError", "fuse_ops"]

MAX_DEPTH_KEY = "relay.FuseOps.max_depth"
MAX_FUNCTION_ARGS_KEY = "relay.FuseOps.max_function_args"
LINK_PARAMS_KEY = "relay.FuseOps.link_params"
DEFAULT_MAX_DEPTH = 256

_STOP_FUSION = "annotation.stop_fusion"

_PRIMITIVE = Attrs({"Primitive": 1})
_PRIMITIVE_RESHAPE_ONLY = Attrs({"Primitive": 1, "ReshapeOnly": 1})
# A group without any call (a projection out of a tuple built in it) is not a kernel.
_NOT_PRIMITIVE = Attrs({"Primitive": 0})


class FuseOpsError(RelayPassError, ValueError):
    """A FuseOps setting is out of range (fuse level, max_depth, max_function_args)."""


def fuse_ops(
    expr: Expr,
    fuse_opt_level: int = 2,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_function_args: int = 0,
    mod: IRModule | None = None,
    link_params: bool = False,
) -> Expr:
    """``expr`` (usually a function) with its operators fused into primitive functions.

    ``fuse_opt_level`` 0 gives every operator call a function of its own; any
    other level fuses.  ``max_depth`` bounds the operators in one group and
    ``max_function_args`` (0: no bound) the arguments of a fused function,
    its output included.  ``link_params`` puts the constants a fused
    function reads into its body instead of passing them as arguments.  An
    untyped ``expr`` is typed first (its global variables refer to ``mod``);
    note that typing an expression with free variables replaces them by typed
    copies.
    """
    if not isinstance(expr, Expr):
        raise TypeError(f"fuse_ops expects a Relay expression, not {type(expr).__name__}")
    level = _check_int(fuse_opt_level, "fuse_opt_level", 0)
    depth = _check_int(max_depth, "max_depth", 1)
    max_args = _check_int(max_function_args, "max_function_args", 0)
    if isinstance(expr, Function) and is_opaque_function(expr):
        return expr
    if not expr.has_checked_type:
        from .infer_type import infer_type_expr

        expr = infer_type_expr(expr, mod)
    with gc_paused():  # see relaypass.gc_pause: no cycles, many small objects
        graph = build_forward_graph(expr)
        group_of = GraphPartitioner(graph, level, depth, max_args).partition()
        return _Rewriter(graph, group_of, bool(link_params)).run(expr)


def _fuse_ops_factory(*, fuse_opt_level: int) -> Callable[[Function, IRModule, _AnyT], Function]:
    """FuseOps's transformation: the manifest's factory (the pass is :data:`FuseOps`).

    ``fuse_opt_level`` -1 (the manifest's default) uses the PassContext's
    ``opt_level``.  The context's config keys ``relay.FuseOps.max_depth`` and
    ``relay.FuseOps.max_function_args`` bound the groups.
    """
    if fuse_opt_level != -1:
        try:
            _check_int(fuse_opt_level, "fuse_opt_level", 0)
        except TypeError as exc:  # the caller's value: an option error, not a plugin failure
            raise OptionError(str(exc)) from None

    def transform(func: Function, mod: IRModule, ctx: _AnyT) -> Function:
        level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        # Unset keys read as their declared defaults (the manifest's [[pass.config]]).
        depth = _check_int(ctx.config.get(MAX_DEPTH_KEY), f"config key {MAX_DEPTH_KEY!r}", 1)
        max_args = _check_int(ctx.config.get(MAX_FUNCTION_ARGS_KEY),
                              f"config key {MAX_FUNCTION_ARGS_KEY!r}", 0)
        # Read only when declared (a manifest's [[pass.config]]); Relay's default is False.
        link_params = bool(ctx.config.get(LINK_PARAMS_KEY, False))
        return fuse_ops(func, max(level, 0), depth, max_args, mod, link_params)

    return transform


#: The FuseOps pass, the one ``relay.transform.FuseOps`` builds;
#: everything about it is declared in relaypass-plugin.toml.
FuseOps = pass_constructor("FuseOps")


def _check_int(value: object, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"FuseOps: {what} must be an int, not {type(value).__name__} {value!r}")
    if value < minimum:
        raise FuseOpsError(f"FuseOps: {what} must be at least {minimum}, got {value}")
    return value


class _GroupFunction:
    """What a group's function is being built from: its parameters and the values passed."""

    __slots__ = ("params", "arguments", "param_of", "has_call", "reshape_only")

    def __init__(self) -> None:
        self.params: list[Var] = []
        self.arguments: list[Expr] = []
        self.param_of: dict[Expr, Var] = {}
        self.has_call = False
        self.reshape_only = True

    def param_for(self, value: Expr, ty: Type) -> Var:
        """The parameter receiving ``value`` (one per distinct value), created on first use."""
        param = self.param_of.get(value)
        if param is None:
            param = Var(f"p{len(self.params)}", ty)
            set_checked_type(param, ty)
            if not isinstance(ty, TensorType):
                self.reshape_only = False
            self.params.append(param)
            self.arguments.append(value)
            self.param_of[value] = param
        return param


class _Rewriter:
    """Rebuilds the expression of a forward graph with each group turned into a primitive function."""

    __slots__ = ("graph", "group_of", "new", "groups", "link_params")

    def __init__(
        self, graph: IndexedForwardGraph, group_of: list[int], link_params: bool = False,
    ) -> None:
        self.link_params = link_params
        self.graph = graph
        self.group_of = group_of
        self.new: list[_AnyT] = [None] * len(graph.nodes)
        self.groups: dict[int, _GroupFunction] = {}

    def run(self, expr: Expr) -> Expr:
        index = self.graph.index
        new = self.new
        group_of = self.group_of
        groups = self.groups
        mapped = self._mapped
        for i, node in enumerate(self.graph.nodes):
            t = type(node)
            if t is Call:
                op = node.op
                if type(op) is not Op:
                    new[i] = self._rebuild(node)
                    continue
                if op.name == _STOP_FUSION:
                    new[i] = mapped(node.args[0])
                    continue
                attrs = op._attrs
                if attrs.get("TNonComputational"):
                    new[i] = self._rebuild(node)
                    continue
                root = group_of[i]
                info = groups.get(root)
                if info is None:
                    info = groups[root] = _GroupFunction()
                info.has_call = True
                if not attrs.get("TReshapeOp"):
                    info.reshape_only = False
                call = node._layout_.rebuild(node, (op, *self._arguments(node.args, root, info)))
                set_checked_type(call, node.checked_type)
                new[i] = self._function_call(info, call) if root == i else call
            elif t is Var or t is Constant:
                new[i] = node
            elif t is Tuple:
                root = group_of[i]
                if root == i:
                    new[i] = self._rebuild(node)
                    continue
                info = groups.get(root)
                if info is None:
                    info = groups[root] = _GroupFunction()
                tup = node._layout_.rebuild(node, self._arguments(node.fields, root, info))
                new[i] = set_checked_type(tup, node.checked_type)
            elif t is TupleGetItem:
                new[i] = self._tuple_getitem(i, node)
            else:
                new[i] = self._rebuild(node)
        j = index.get(expr)
        return expr if j is None else new[j]

    def _mapped(self, expr: Expr) -> Expr:
        j = self.graph.index.get(expr)
        return expr if j is None else self.new[j]

    def _arguments(self, args: tuple[Expr, ...], root: int, info: _GroupFunction) -> list[Expr]:
        """The operands of a group member: values of the group inline, others as parameters.

        With ``link_params``, a constant from outside the group is inlined too.
        """
        index = self.graph.index
        new = self.new
        group_of = self.group_of
        link = self.link_params
        out = []
        for arg in args:
            j = index.get(arg)
            if j is None:
                value = arg
            elif group_of[j] == root:
                out.append(new[j])
                continue
            else:
                value = new[j]
            if link and type(value) is Constant:
                out.append(value)
            else:
                out.append(info.param_for(value, arg.checked_type))
        return out

    def _tuple_getitem(self, i: int, node: TupleGetItem) -> Expr:
        root = self.group_of[i]
        value = node.tuple_value
        j = self.graph.index.get(value)
        if root == i and (j is None or self.group_of[j] != root):
            # The projection of a tuple made elsewhere (by an opaque operator, say)
            # is no kernel: keep it as a projection.
            new_value = self._mapped(value)
            if new_value is value:
                return node
            return set_checked_type(rebuild(node, (new_value,)), node.checked_type)
        info = self.groups.get(root)
        if info is None:
            info = self.groups[root] = _GroupFunction()
        arg = self._arguments((value,), root, info)[0]
        tgi = set_checked_type(rebuild(node, (arg,)), node.checked_type)
        return self._function_call(info, tgi) if root == i else tgi

    def _function_call(self, info: _GroupFunction, body: Expr) -> Call:
        """The call of the primitive function made of a group whose last node is ``body``."""
        ret_type = body.checked_type
        if not info.has_call:
            attrs = _NOT_PRIMITIVE
        elif info.reshape_only:
            attrs = _PRIMITIVE_RESHAPE_ONLY
        else:
            attrs = _PRIMITIVE
        params = info.params
        func = Function(params, body, ret_type, None, attrs)
        set_checked_type(func, FuncType([p.type_annotation for p in params], ret_type))
        call = Call(func, info.arguments)
        return set_checked_type(call, ret_type)

    def _rebuild(self, node: Expr) -> Expr:
        """``node`` outside any group, over the rewritten children (itself if none changed)."""
        t = type(node)
        if t is Var or t is Constant or t is Function and is_opaque_function(node):
            return node
        if getattr(t, "_layout_", None) is None:  # build_forward_graph admits no such kind
            raise TypeError(f"FuseOps does not know the expression kind {t.__name__}")
        # Variables (parameters, let variables) map to themselves.
        out = map_children(node, self._mapped)
        if out is node:
            return node
        if node._checked_type is not None:
            set_checked_type(out, node._checked_type)
        return out
