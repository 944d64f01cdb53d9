"""The dataflow graph of a function, as ``relaypass viz`` draws it: operators, values, clusters.

What a reader of a compiled model wants to see is the dataflow between
operators, and which of them a pass grouped together.  This module turns a
function of a module into that graph (:class:`VizGraph`), leaving the
drawing to :mod:`relaypass.tools.viz`:

* every operator call is a node, labelled with the operator and the type
  of its result (``1×64×56×56 float32``); the function's parameters are
  input nodes and its result an output node;
* a call of a function is a *cluster* holding the function's body, wired to
  the call's arguments: a fused ``Primitive`` function (named as Relay's
  lowering names it, ``fused_nn_conv2d_add_nn_relu``), a ``Composite``
  function (named by its pattern), a partitioned region (a global function
  with a ``Compiler`` attribute, named after it and its compiler), or any
  other function;
* constants are not nodes (a model's hundreds of weights would hide its
  structure): the operator using one lists its shape;
* ``let`` bindings, tuples and projections are followed, not drawn: after
  ``ToANormalForm`` the graph is the same dataflow as before it.

The walk is iterative (an explicit stack of frames), so a 100,000-deep chain
of calls or lets needs no deep recursion.  Each function call is walked in a
scope of its own, so a function called twice is two clusters, as it runs
twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.fields import children
from ..ir.op import Op
from ..ir.types import Any as AnyDim
from ..ir.types import FuncType, TensorType, TupleType

__all__ = ["VizCluster", "VizGraph", "VizNode", "build_graph", "type_text"]

#: How long a fused group's name may grow before it is cut (Relay cuts its names too).
MAX_NAME = 60


@dataclass
class VizNode:
    """A node of the drawing: an operator call, an input, the output, or another expression."""

    id: str
    label: str
    detail: str
    kind: str  # "op", "input", "output", "call" or "other"
    cluster: int | None
    consts: list[str] = field(default_factory=list)  # the shapes of its constant arguments


@dataclass
class VizCluster:
    """A function call drawn as a group of the nodes of the function's body."""

    id: int
    name: str
    kind: str  # "fused", "composite", "partitioned" or "function"
    parent: int | None
    ops: int = 0  # operator nodes inside, nested clusters included
    out: str = ""  # the type of the call's result


@dataclass
class VizGraph:
    """Nodes, edges ``(source, target, label)`` and clusters of one function's dataflow."""

    name: str
    nodes: dict[str, VizNode] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    clusters: dict[int, VizCluster] = field(default_factory=dict)

    def ops(self) -> int:
        """The number of operator nodes."""
        return sum(1 for n in self.nodes.values() if n.kind == "op")


# --- what an expression evaluates to, as far as the drawing cares --------------------------------
@dataclass(frozen=True)
class _Ref:
    node: str
    label: str = ""


@dataclass(frozen=True)
class _Const:
    shape: str


@dataclass(frozen=True)
class _Tuple:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class _Fn:
    func: Function
    name: str | None  # the global's name, for a global function


class _Scope:
    """The variables of one function body being walked, and the cluster it draws into."""

    __slots__ = ("env", "parent", "cluster", "globals")

    def __init__(self, parent: _Scope | None, cluster: int | None,
                 globals_: frozenset[str] = frozenset()) -> None:
        self.env: dict[Var, Any] = {}
        self.parent = parent
        self.cluster = cluster
        self.globals = globals_  # the global functions being expanded: no endless recursion

    def lookup(self, var: Var) -> Any:
        scope: _Scope | None = self
        while scope is not None:
            if var in scope.env:
                return scope.env[var]
            scope = scope.parent
        return None


def type_text(expr: Any) -> str:
    """The checked type of ``expr`` in a few characters (``1×3×224×224 float32``), or ""."""
    ty = expr._checked_type if hasattr(expr, "_checked_type") else None
    return _type_text(ty) if ty is not None else ""


def _type_text(ty: Any) -> str:
    if isinstance(ty, TensorType):
        dims = "×".join("?" if isinstance(d, AnyDim) else str(d) for d in ty.shape)
        return f"{dims} {ty.dtype}" if dims else f"{ty.dtype} scalar"
    if isinstance(ty, TupleType):
        inner = ", ".join(_type_text(f) for f in ty.fields[:3])
        more = f", +{len(ty.fields) - 3}" if len(ty.fields) > 3 else ""
        return f"({inner}{more})"
    if isinstance(ty, FuncType):
        return "fn"
    return str(ty)


class _Builder:
    def __init__(self, mod: Any, name: str) -> None:
        self.mod = mod
        self.graph = VizGraph(f"@{name}")
        self._count = 0

    # --- nodes, edges, clusters
    def node(self, label: str, kind: str, detail: str, cluster: int | None) -> str:
        node_id = f"n{self._count}"
        self._count += 1
        self.graph.nodes[node_id] = VizNode(node_id, label, detail, kind, cluster)
        if kind == "op":
            parent = cluster
            while parent is not None:
                self.graph.clusters[parent].ops += 1
                parent = self.graph.clusters[parent].parent
        return node_id

    def connect(self, value: Any, target: str) -> None:
        """Edges from whatever ``value`` was computed by into ``target``."""
        if isinstance(value, _Ref):  # the common case, without the stack
            self.graph.edges.append((value.node, target, value.label))
            return
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, _Ref):
                self.graph.edges.append((v.node, target, v.label))
            elif isinstance(v, _Tuple):
                stack.extend(reversed(v.items))
            elif isinstance(v, _Const):
                self.graph.nodes[target].consts.append(v.shape)

    def cluster(self, fn: _Fn, parent: int | None, call: Call) -> VizCluster:
        attrs = fn.func.attrs
        if attrs.get("Compiler"):
            kind, name = "partitioned", f"{fn.name or 'fn'} ({attrs.get('Compiler')})"
        elif attrs.get("Composite"):
            kind, name = "composite", str(attrs.get("Composite"))
        elif attrs.get("Primitive"):
            kind, name = "fused", "fused"  # named after its operators when walked
        else:
            kind, name = "function", fn.name or "fn"
        cid = len(self.graph.clusters)
        self.graph.clusters[cid] = VizCluster(cid, name, kind, parent, out=type_text(call))
        return self.graph.clusters[cid]

    def name_fused(self, cid: int) -> None:
        """Name a fused group after its operators, in dataflow order, as Relay's lowering does."""
        names: list[str] = []
        for node in self.graph.nodes.values():
            if node.cluster == cid and node.kind == "op" and (not names or names[-1] != node.label):
                names.append(node.label)
        name = "fused_" + "_".join(n.replace(".", "_") for n in names)
        self.graph.clusters[cid].name = name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"

    # --- the walk
    def expandable(self, fn: _Fn, scope: _Scope) -> bool:
        """A call of ``fn`` becomes a cluster: any local function, and the global functions
        a pass made (fused, composite, partitioned), unless already being expanded."""
        if fn.name is None:
            return True
        attrs = fn.func.attrs
        marked = any(attrs.get(k) for k in ("Compiler", "Composite", "Primitive"))
        return marked and fn.name not in scope.globals

    def walk(self, body: Any, root: _Scope) -> Any:
        """What ``body`` evaluates to in ``root``, building nodes for everything on the way."""
        memo: dict[tuple[int, int], Any] = {}
        scopes: list[_Scope] = [root]  # kept alive: their ids key the memo
        stack: list[tuple[Any, _Scope, int, Any]] = [(body, root, 0, None)]
        while stack:
            expr, scope, phase, extra = stack.pop()
            key = (id(expr), id(scope))
            if phase == 0 and key in memo:
                continue
            if isinstance(expr, Var):
                memo[key] = self.variable(expr, scope)
            elif isinstance(expr, GlobalVar):
                func = self.mod[expr] if expr in self.mod else None
                memo[key] = _Fn(func, expr.name_hint) if isinstance(func, Function) else None
            elif isinstance(expr, Constant):
                memo[key] = _Const(type_text(expr) or "const")
            elif isinstance(expr, Function):
                memo[key] = _Fn(expr, None)
            elif isinstance(expr, Op):
                memo[key] = None
            elif isinstance(expr, Let):
                if phase == 0:
                    stack.append((expr, scope, 1, None))
                    stack.append((expr.value, scope, 0, None))
                elif phase == 1:
                    scope.env[expr.var] = memo[(id(expr.value), id(scope))]
                    stack.append((expr, scope, 2, None))
                    stack.append((expr.body, scope, 0, None))
                else:
                    memo[key] = memo[(id(expr.body), id(scope))]
            elif isinstance(expr, Call):
                self.call(expr, scope, phase, extra, stack, memo, scopes)
            elif isinstance(expr, TupleGetItem):
                if phase == 0:
                    stack.append((expr, scope, 1, None))
                    stack.append((expr.tuple_value, scope, 0, None))
                else:
                    memo[key] = _project(memo[(id(expr.tuple_value), id(scope))], expr.index)
            elif phase == 0:
                stack.append((expr, scope, 1, None))
                stack.extend((kid, scope, 0, None) for kid in reversed(children(expr)))
            else:
                values = [memo[(id(kid), id(scope))] for kid in children(expr)]
                if isinstance(expr, Tuple):
                    memo[key] = _Tuple(tuple(values))
                else:
                    label = "if" if isinstance(expr, If) else type(expr).__name__
                    node = self.node(label, "other", type_text(expr), scope.cluster)
                    for v in values:
                        self.connect(v, node)
                    memo[key] = _Ref(node)
        return memo[(id(body), id(root))]

    def variable(self, var: Var, scope: _Scope) -> Any:
        found = scope.lookup(var)
        if found is None:  # free, or a pattern's variable: an input of its own
            found = _Ref(self.node(f"%{var.name_hint}", "input", type_text(var), None))
            scope.env[var] = found
        return found

    def call(self, expr: Call, scope: _Scope, phase: int, extra: Any, stack: list,
             memo: dict, scopes: list[_Scope]) -> None:
        key = (id(expr), id(scope))
        if phase == 0:
            stack.append((expr, scope, 1, None))
            stack.extend((arg, scope, 0, None) for arg in reversed(expr.args))
            if not isinstance(expr.op, Op):
                stack.append((expr.op, scope, 0, None))
            return
        args = [memo[(id(a), id(scope))] for a in expr.args]
        if phase == 2:  # the body of the called function has been walked
            inner, cluster = extra
            if self.graph.clusters[cluster].kind == "fused":
                self.name_fused(cluster)
            memo[key] = memo[(id(inner.body), id(inner.scope))]
            return
        if isinstance(expr.op, Op):
            node = self.node(expr.op.name, "op", type_text(expr), scope.cluster)
            for a in args:
                self.connect(a, node)
            memo[key] = _Ref(node)
            return
        callee = memo[(id(expr.op), id(scope))]
        if isinstance(callee, _Fn) and self.expandable(callee, scope):
            cluster = self.cluster(callee, scope.cluster, expr)
            names = scope.globals | ({callee.name} if callee.name else set())
            # A local function sees the variables around it; a global one only its parameters.
            inner_scope = _Scope(scope if callee.name is None else None, cluster.id,
                                 frozenset(names))
            for param, value in zip(callee.func.params, args):
                inner_scope.env[param] = value
            scopes.append(inner_scope)
            stack.append((expr, scope, 2, (_Body(callee.func.body, inner_scope), cluster.id)))
            stack.append((callee.func.body, inner_scope, 0, None))
            return
        label = f"call @{callee.name}" if isinstance(callee, _Fn) and callee.name else "call"
        node = self.node(label, "call", type_text(expr), scope.cluster)
        for a in args:
            self.connect(a, node)
        if not isinstance(callee, _Fn):
            self.connect(callee, node)
        memo[key] = _Ref(node)


@dataclass(frozen=True)
class _Body:
    body: Any
    scope: _Scope


def _project(value: Any, index: int) -> Any:
    if isinstance(value, _Tuple):
        return value.items[index] if 0 <= index < len(value.items) else None
    if isinstance(value, _Ref):
        return _Ref(value.node, f"[{index}]")
    return value


def build_graph(mod: Any, name: str = "main") -> VizGraph:
    """The dataflow graph of the function ``@name`` of ``mod`` (see the module's docstring)."""
    func = mod[name]
    builder = _Builder(mod, name)
    root = _Scope(None, None, frozenset({name}))
    for param in func.params:
        root.env[param] = _Ref(builder.node(f"%{param.name_hint}", "input", type_text(param),
                                            None))
    result = builder.walk(func.body, root)
    out = builder.node("output", "output", type_text(func.body), None)
    builder.connect(result, out)
    return builder.graph
