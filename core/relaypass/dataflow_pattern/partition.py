"""Moving each match of a pattern into a function of its own (TVM's ``partition``).

Each group (:mod:`.grouper`) whose root passes ``check(root)`` is replaced by
a call of its function on the group's inputs, rewritten.  The function
carries ``PartitionedFromPattern`` (the matched nodes' names in post-order,
``"nn.conv2d_nn.bias_add_nn.relu_"``) and then the attributes given
(``{"Composite": "conv_bias_relu"}``).  A pattern that is itself a function
pattern is left alone, with a warning, as TVM does: a function that is not
called has nothing to partition.

The rebuild is one loop over the graph's post-order from the first kept
root: a kept root becomes the call of its function, a node that only its
own group uses is not rebuilt at all (the function copies it), and the
checks run before, on the roots in post-order, as a rebuild meets them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import is_not
from typing import Any

from relaypass.gc_pause import gc_paused
from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import Call, Expr, Function, children, set_checked_type
from relaypass.ir.fields import rebuild
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, Type

from .graph import IndexedGraph
from .grouper import PARTITIONED_FROM_PATTERN, Group, PatternGrouper, shape_name
from .matcher import run_deep_if_needed
from .pattern import DFPattern, FunctionPattern, PatternBuildError, _need_pattern, slots
from .rewrite import CallbackError

__all__ = ["partition"]


def _accept_all(_: Expr) -> bool:
    return True


def partition(pattern: DFPattern, expr: Expr, attrs: Mapping[str, Any] | None = None,
              check: Callable[[Expr], bool] | None = None, *, keep_types: bool = False,
              graph: IndexedGraph | None = None, sealed: list[Function] | None = None) -> Expr:
    """``expr`` with the matches of ``pattern`` (those ``check`` accepts) made into functions.

    Beyond TVM: ``keep_types`` keeps a typed ``expr`` typed, as InferType
    would type the result: each new function and its call are typed from the
    types of the match they replace (:meth:`.Group.partitioned`), and the
    nodes rebuilt above keep their types, since the call has the type of the
    match.  Where a match's inputs are not all typed, the result's outermost
    node is left untyped, telling the caller to run type inference.
    ``graph``: the :class:`~.graph.IndexedGraph` of ``expr``, when the caller
    partitions one program with several patterns (each changed program needs
    its own); it may leave out the insides of functions partitioned before
    (:class:`~.graph.IndexedGraph`'s ``opaque``) when ``pattern`` is plain.
    ``sealed``, if given, receives each new function whose body holds only new
    nodes, operators, constants and variables: what nothing else in the
    result reaches into, so that the next graph may leave it opaque.
    """
    _need_pattern(pattern, "partition's pattern")
    if not isinstance(expr, Expr):
        raise PatternBuildError(f"partition takes a Relay expression, not {type(expr).__name__}")
    if attrs is not None and not isinstance(attrs, Mapping):
        raise PatternBuildError(
            f"partition's attrs must be a mapping of attribute names, not {type(attrs).__name__}"
        )
    if check is None:
        check = _accept_all
    elif not callable(check):
        raise CallbackError(f"partition's check must be callable, not {type(check).__name__}")
    if isinstance(pattern, FunctionPattern):
        warnings.warn(
            "partition: a function pattern matches functions that are not called; "
            "nothing to partition, the expression is returned unchanged",
            stacklevel=2,
        )
        return expr
    with gc_paused():  # whole-program work that makes no cycles (relaypass.gc_pause)
        return _partition(pattern, expr, dict(attrs or {}), check,
                          keep_types and expr._checked_type is not None, graph, sealed)


def _partition(pattern: DFPattern, expr: Expr, extra: dict[str, Any],
               check: Callable[[Expr], bool], typed: bool, graph: IndexedGraph | None,
               sealed: list[Function] | None) -> Expr:
    grouper = PatternGrouper(functions=True)
    run_deep_if_needed(grouper.group_matches, pattern, expr, graph)
    graph = grouper.graph  # (the whole graph, if the grouper needed it)
    by_root = grouper.roots()
    # ``check`` runs on each root once, in post-order, as a rebuild would meet them (the
    # grouper found the groups from the last node to the first).
    kept = [group for root, group in reversed(by_root.items()) if check(root)]
    if not kept:
        return expr
    # What the walk below does at a node: a kept root becomes a call of its group's
    # function; a node used only inside its group is not rebuilt (the function copies it).
    at: dict[Expr, Group | None] = dict.fromkeys(
        [node for group in kept for node in group.inner])
    for group in kept:
        at[group.root] = group
    by_name: dict[str, Attrs] = {}  # the functions' attributes, one object per name
    by_shape: dict[tuple[Op | str, ...], Attrs] = {}  # the same, by shape (shape_name)

    def attrs_of(shape: tuple[Op | str, ...]) -> Attrs:
        attrs = by_shape.get(shape)
        if attrs is None:
            name = shape_name(shape)
            attrs = by_name.get(name)  # (two shapes may share a name: two operators of one)
            if attrs is None:
                attrs = by_name[name] = Attrs({PARTITIONED_FROM_PATTERN: name, **extra})
            by_shape[shape] = attrs
        return attrs

    func_types: dict[tuple[int, ...], FuncType] = {}  # one per types of inputs and result

    def func_type(arg_types: Sequence[Type], ret: Type) -> FuncType:
        key = (id(ret), *map(id, arg_types))  # the types are alive: the program holds them
        ty = func_types.get(key)
        if ty is None:
            ty = func_types[key] = FuncType(list(arg_types), ret)
        return ty

    stale = False
    memo: dict[Expr, Expr] = {}  # the nodes rebuilt so far (any other node is its own)
    get = memo.get
    nodes = graph.nodes
    post = expr
    for node in nodes[graph.index[kept[0].root]:]:
        group = at.get(node, node)
        if group is None:
            continue  # copied into its group's function, and used nowhere else
        if group is not node:
            args = tuple(map(get, group.args, group.args))
            func = None
            if typed and not stale and node._checked_type is not None:
                types = [a._checked_type for a in args]
                if all(map(is_not, types, repeat(None))):
                    func = group.partitioned(attrs_of, types, func_type)
            if func is None:
                stale = True
                func = group.partitioned(attrs_of)
            if sealed is not None and group.sealed:
                sealed.append(func)
            post = memo[node] = Call(func, args)
            if not stale:
                set_checked_type(post, node._checked_type)
            continue
        post = node
        kind = type(node)
        # (A call whose callee stays, an operator's or a composite function's: the arguments.)
        op_call = kind is Call and (type(node.op) is Op or get(node.op) is None)
        kids = node.args if op_call else kind._layout_.children(node)
        for kid in kids:
            if get(kid, kid) is not kid:
                new_kids = tuple(map(get, kids, kids))
                if op_call:
                    post = Call(node.op, new_kids, node.attrs, node.type_args, node.span)
                else:
                    post = kind._layout_.rebuild(node, new_kids)
                if typed and node._checked_type is not None:
                    set_checked_type(post, node._checked_type)
                memo[node] = post
                break
    if typed and stale:
        post = rebuild(post, children(post))  # the same node, untyped
    return post


slots.partition = partition
