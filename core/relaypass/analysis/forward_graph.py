"""The indexed forward graph: a function's dataflow as numbered nodes that know their consumers.

Operator fusion asks, for every value, "who uses it, and how?"; an expression
tree only answers "what does it use?".  :func:`build_forward_graph` turns an
expression around: every node gets a number and the list of the nodes that
consume it, each edge labelled with the fusion pattern of the use.

Numbers follow the post-order of a depth-first walk that visits children left
to right (a call's callee before its arguments), which is the order Relay's
``IndexedForwardGraph`` uses.  Fusion is greedy in that order, so the same
order is what makes the groups come out as Relay's do.  Consumers always have
larger numbers than what they consume.

What becomes a node: variables, constants, calls, tuples, projections, lets,
ifs, reference operations and functions.  Operators and global variables are
names, not values, and are left out.  A function marked ``Primitive`` (already
fused) or handed to an external ``Compiler`` is a leaf: its body is never
looked at.

Edges carry the operator's pattern (a broadcasting operator whose argument has
the shape of its result uses that argument elementwise).  Values that escape
the dataflow -- a function's body and parameters, a let's variable, value and
body, an if's condition and branches, the operands of reference operations, a
non-tensor tuple field, a callee that is not an operator -- are marked
``extern_ref``: something outside the dataflow needs them as they are, so
nothing fuses through them.

The walk uses an explicit stack: a chain of any length costs no recursion.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.fields import PerKind
from relaypass.ir.op import Op, OpPattern
from relaypass.ir.types import TensorType, TupleType

__all__ = ["IndexedForwardGraph", "build_forward_graph", "is_opaque_function"]

ELEMWISE = int(OpPattern.ELEMWISE)
BROADCAST = int(OpPattern.BROADCAST)
INJECTIVE = int(OpPattern.INJECTIVE)
TUPLE = int(OpPattern.TUPLE)
OPAQUE = int(OpPattern.OPAQUE)

# Scalar constants of these dtypes are elementwise values that fuse into their user;
# other constants stay outside (Relay's rule, which code generators rely on).
_SIMPLE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})

_NOT_NODES = (Op, GlobalVar)


def is_opaque_function(func: Function) -> bool:
    """Whether fusion must leave ``func`` as it is: already primitive, or for another compiler."""
    attrs = func.attrs
    if not attrs:
        return False
    primitive = attrs.get("Primitive")
    return bool(primitive) or attrs.get("Compiler") is not None


class IndexedForwardGraph:
    """Nodes in post-order with, for each, its consumers and the patterns of those uses.

    ``nodes[i]`` is the expression numbered ``i`` and ``index`` maps an
    expression back to its number; ``pattern[i]`` is the node's own fusion
    pattern, ``extern_ref[i]`` whether something outside the dataflow uses it,
    and ``outputs[i]`` / ``edge_patterns[i]`` the numbers of its consumers
    (in the order they were reached) and the pattern of each use.
    """

    __slots__ = ("nodes", "index", "pattern", "extern_ref", "outputs", "edge_patterns")

    def __init__(
        self,
        nodes: list[Expr],
        index: dict[Expr, int],
        pattern: list[int],
        extern_ref: list[bool],
        outputs: list[list[int]],
        edge_patterns: list[list[int]],
    ) -> None:
        self.nodes = nodes
        self.index = index
        self.pattern = pattern
        self.extern_ref = extern_ref
        self.outputs = outputs
        self.edge_patterns = edge_patterns


def build_forward_graph(root: Expr) -> IndexedForwardGraph:
    """The forward graph of ``root`` (usually a function), which must be typed.

    Types are read from ``checked_type`` (to label edges and to keep non-tensor
    values out of fusion); an untyped node raises
    :class:`~relaypass.errors.UncheckedTypeError`.
    """
    nodes, preorder = _post_order(root)
    n = len(nodes)
    index = {node: i for i, node in enumerate(nodes)}
    pattern = [OPAQUE] * n
    extern_ref = [False] * n
    outputs: list[list[int]] = [[] for _ in range(n)]
    edge_patterns: list[list[int]] = [[] for _ in range(n)]

    for i, node in enumerate(nodes):
        if type(node) is Constant:
            data = node.array
            if data.ndim == 0 and data.dtype.name in _SIMPLE_CONST_DTYPES:
                pattern[i] = ELEMWISE

    get = index.get
    for node in preorder:
        i = index[node]
        t = type(node)
        if t is Call:
            op = node.op
            if type(op) is Op:
                op_pattern = int(op._attrs.get("TOpPattern", OPAQUE))
            else:
                op_pattern = OPAQUE
                j = get(op)
                if j is not None:
                    outputs[j].append(i)
                    edge_patterns[j].append(OPAQUE)
                    extern_ref[j] = True
            pattern[i] = op_pattern
            result_shape = None
            if op_pattern == BROADCAST:
                rtype = node.checked_type
                if type(rtype) is TensorType:
                    result_shape = rtype.shape
            for arg in node.args:
                j = get(arg)
                if j is None:
                    continue
                edge = op_pattern
                if result_shape is not None:
                    atype = arg.checked_type
                    if type(atype) is TensorType and atype.shape == result_shape:
                        edge = ELEMWISE
                outputs[j].append(i)
                edge_patterns[j].append(edge)
        elif t is Tuple:
            pattern[i] = TUPLE
            for field in node.fields:
                j = get(field)
                if j is None:
                    continue
                if isinstance(field.checked_type, TensorType):
                    outputs[j].append(i)
                    edge_patterns[j].append(INJECTIVE)
                else:
                    extern_ref[j] = True
        elif t is TupleGetItem:
            value = node.tuple_value
            j = get(value)
            ttype = value.checked_type
            # Fused functions take tensors or tuples of tensors; a projection out of
            # any other tuple is kept out of fusion.
            if type(ttype) is TupleType and all(isinstance(f, TensorType) for f in ttype.fields):
                pattern[i] = INJECTIVE
                if j is not None:
                    outputs[j].append(i)
                    edge_patterns[j].append(INJECTIVE)
            elif j is not None:
                extern_ref[j] = True
        else:
            # Let, If, Function and the reference operations: every child is a
            # boundary of the dataflow.
            for child in _children(node):
                j = get(child)
                if j is not None:
                    extern_ref[j] = True
    root_index = get(root)
    if root_index is not None:
        extern_ref[root_index] = True
    return IndexedForwardGraph(nodes, index, pattern, extern_ref, outputs, edge_patterns)


def _children(node: Expr) -> tuple[Expr, ...]:
    """The sub-expressions of ``node`` the walk descends into, in visiting order.

    Operators and global functions among them are no nodes of the graph:
    the walk passes over them.
    """
    return _CHILDREN[type(node)](node)


def _children_getter(cls: type) -> Callable[[Expr], tuple[Expr, ...]]:
    """The declared children of an expression kind; for anything else, a getter that raises."""
    layout = getattr(cls, "_layout_", None)
    if layout is not None and issubclass(cls, Expr):
        return layout.children

    def unknown(node: Expr) -> tuple[Expr, ...]:
        if isinstance(node, Expr):
            raise TypeError(f"the forward graph does not know the expression kind {cls.__name__}")
        raise TypeError(f"expected a Relay expression, got {cls.__name__}")

    return unknown


_CHILDREN = PerKind(_children_getter)


def _post_order(root: Expr) -> tuple[list[Expr], list[Expr]]:
    """Every node reachable from ``root`` in post-order, and the inner nodes in pre-order.

    The pre-order is the order in which Relay's walk records each node's uses,
    so consumers are listed per value in that order.
    """
    order: list[Expr] = []
    preorder: list[Expr] = []
    if isinstance(root, _NOT_NODES):
        return order, preorder
    seen = {root}
    stack = []
    kids = _enter(root)
    if kids is None:
        order.append(root)
        return order, preorder
    preorder.append(root)
    stack.append((root, iter(kids)))
    while stack:
        node, it = stack[-1]
        for child in it:
            if child in seen or isinstance(child, _NOT_NODES):
                continue
            seen.add(child)
            grand = _enter(child)
            if grand is None:
                order.append(child)
                continue
            preorder.append(child)
            stack.append((child, iter(grand)))
            break
        else:
            stack.pop()
            order.append(node)
    return order, preorder


def _enter(node: Expr) -> tuple[Expr, ...] | None:
    """The children to walk into, or None for a leaf (variable, constant, opaque function)."""
    t = type(node)
    if t is Var or t is Constant:
        return None
    if t is Function and is_opaque_function(node):
        return None
    return _children(node)
