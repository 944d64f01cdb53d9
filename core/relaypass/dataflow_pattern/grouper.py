"""Finding the non-overlapping matches of a pattern in a program (TVM's ``PatternGrouper``).

Rewriting and partitioning both start here, and what they change depends on
these rules, so they are TVM's:

* Roots are tried from the program's output towards its inputs (reverse
  post-order), so a larger match is found before a smaller one inside it.
  A node already inside a group is not tried, nor is anything inside a
  function partitioned earlier (attribute ``PartitionedFromPattern``).
* A match becomes a *group*: its inputs are what the leaves of the pattern
  matched (and the arguments of ``f(None)`` call patterns, the fields of
  ``is_tuple(None)``), except operators, functions, constants matched by
  ``is_constant()``/``is_expr(const)`` (embedded), and nodes matched fuzzily
  (a dominator's parent and path, the body of a matched function).  Each
  input becomes a parameter ``FunctionVar_<group>_<k>`` of the group's
  function, whose body is the match with its inputs replaced.
* A group is dropped when one of its computing nodes is already in another
  group, or when a node inside it (not its root) is used outside it by a
  node the root does not post-dominate (the rewrite would cut that use off).

The function's name (``PartitionedFromPattern``) lists the matched nodes in
post-order: ``nn.conv2d_nn.bias_add_nn.relu_``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_not

from relaypass.ir.attrs import Attrs
from relaypass.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
    children,
    set_checked_type,
)
from relaypass.ir.op import Op
from relaypass.ir.traversal import post_order_visit
from relaypass.ir.types import FuncType, Type

from .graph import IndexedGraph
from .matcher import Bindings, DFPatternMatcher, call_filter, plain_matcher, quick_check
from .pattern import (
    CallPattern,
    ConstantPattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    TupleGetItemPattern,
    TuplePattern,
)

__all__ = ["Group", "PARTITIONED_FROM_PATTERN", "PatternGrouper", "pattern_post_order", "shape_name"]

PARTITIONED_FROM_PATTERN = "PartitionedFromPattern"
"""The function attribute naming what a partitioned function was made from."""


class Group:
    """One match: its root, what each pattern node matched, its inputs and its function.

    ``order``: the nodes the function's body copies (the match less its
    inputs and the operators, constants and variables it keeps as they are),
    in post-order from the root, children in field order; a grouper told
    that its groups become functions finds them while checking the group,
    so building the function walks nothing.
    The function and its name are built when first asked for: partitioning
    needs them, rewriting does not.
    """

    __slots__ = ("gid", "root", "_matched", "args", "number", "inner", "sealed", "_order",
                 "_params", "_function", "_name")

    def __init__(self, gid: int, root: Expr,
                 matched: dict[DFPattern, list[Expr]] | list[tuple[DFPattern, Expr]],
                 args: list[Expr], number: int, order: list[Expr] | None = None,
                 inner: list[Expr] | None = None) -> None:
        self.gid = gid
        self.root = root
        self._matched = matched
        self.args = args
        self.number = number
        self.inner = inner if inner is not None else []
        self.sealed = False
        self._order = order
        self._params: list[Var] | None = None
        self._function: Function | None = None
        self._name = ""

    @property
    def matched(self) -> dict[DFPattern, list[Expr]]:
        """What each pattern node matched (the matcher's bindings; from a plain matcher's
        pairs, made when first asked for: partitioning never asks)."""
        matched = self._matched
        if type(matched) is list:
            matched = self._matched = {p: [e] for p, e in matched}
        return matched

    @property
    def order(self) -> list[Expr]:
        """The nodes the function copies, in post-order (found now if the grouper did not)."""
        if self._order is None:
            self._order = _ordered_members(self.root, dict.fromkeys(self.args))[0]
        return self._order

    @property
    def params(self) -> list[Var]:
        """The function's parameters, one per input: ``FunctionVar_<number>_<k>`` (made when
        first asked for: rewriting needs none)."""
        if self._params is None:
            self._params = [Var(f"FunctionVar_{self.number}_{k}") for k in range(len(self.args))]
        return self._params

    def _extract(self) -> None:
        self._function = Function(self.params, self._body(self.params, False))
        self._name = self._name_of()

    @property
    def function(self) -> Function:
        """The matched expression as a function of the group's inputs."""
        if self._function is None:
            self._extract()
        return self._function

    @property
    def name(self) -> str:
        """The matched nodes' names in post-order (``PartitionedFromPattern``)."""
        if self._function is None:
            self._extract()
        return self._name

    def _name_of(self) -> str:
        parts = []
        for node in self.order:
            if type(node) is Call:
                callee = node.op
                parts.append(f"{callee.name}_" if type(callee) is Op else "Call_")
            else:
                parts.append(_name_part(node))
        return "".join(parts)

    def _body(self, params: list[Var], keep_types: bool, shape: list[Op | str] | None = None
              ) -> Expr:
        """The match rebuilt over ``params`` (each node typed as the one it copies, if asked).

        Sets :attr:`sealed`: whether the body holds only new nodes, operators,
        constants and variables (no node of the match is kept as it is, for want
        of an input below it).  ``shape``, if given, receives the function's
        :func:`shape_name` parts (found in the same loop, so that a partitioner
        can key the functions' attributes by them without building the name).
        """
        memo: dict[Expr, Expr] = dict(zip(self.args, params))
        root = self.root
        self.sealed = True
        get = memo.get
        note = shape.append if shape is not None else None
        sealed = True
        for node in self.order:
            kind = type(node)
            if kind is Call and type(node.op) is Op:  # most nodes: built from the arguments
                if note is not None:
                    note(node.op)
                kids = node.args
                new_kids = tuple(map(get, kids, kids))
                if new_kids != kids:  # (nodes compare by identity)
                    new = Call(node.op, new_kids, node.attrs, node.type_args, node.span)
                else:
                    new = node
            else:
                if note is not None:
                    note(_name_part(node))
                layout = kind._layout_
                kids = layout.children(node)
                new_kids = list(map(get, kids, kids))
                new = node
                if any(map(is_not, kids, new_kids)):
                    new = layout.rebuild(node, new_kids)
            if new is node:
                sealed = False
            elif keep_types and node._checked_type is not None:
                set_checked_type(new, node._checked_type)
            memo[node] = new
        self.sealed = sealed
        return get(root, root)

    def partitioned(self, attrs_of: Callable[[tuple[Op | str, ...]], Attrs],
                    arg_types: Sequence[Type] | None = None,
                    func_type: Callable[[Sequence[Type], Type], FuncType] | None = None
                    ) -> Function:
        """The match as a function with the attributes ``attrs_of(shape)`` gives for its shape.

        (The shape is what :func:`shape_name` turns into :attr:`name`, the
        matched nodes in post-order: groups of one shape have one name, so a
        partitioner gives ``PartitionedFromPattern`` and its own attributes as
        one :class:`Attrs` per shape, without building a name per group.)
        With ``arg_types`` (the types of the
        group's inputs, in a typed program) the function comes typed as
        InferType would type it: its parameters annotated with those types,
        every node of its body with the type of the node it copies (the
        parameters have the types of the inputs they stand for, so the types
        below them do not change), its return type the root's; its own type
        is ``func_type(arg_types, return type)`` (a partitioner shares one
        between functions of the same types), by default a new one.
        """
        shape: list[Op | str] = []
        if arg_types is None:
            params = self.params
            body = self._body(params, False, shape)
            return Function(params, body, attrs=attrs_of(tuple(shape)))
        prefix = f"FunctionVar_{self.number}_"
        params = [Var(f"{prefix}{k}", t) for k, t in enumerate(arg_types)]
        body = self._body(params, True, shape)
        ret = self.root._checked_type
        func = Function(params, body, ret, None, attrs_of(tuple(shape)))
        set_checked_type(func, FuncType(list(arg_types), ret) if func_type is None
                         else func_type(arg_types, ret))
        return func


def shape_name(shape: Sequence[Op | str]) -> str:
    """The name (``PartitionedFromPattern``) of a function of shape ``shape``
    (:meth:`Group.partitioned`): an operator stands for a call of it."""
    return "".join(f"{part.name}_" if type(part) is Op else part for part in shape)


def pattern_post_order(pattern: DFPattern) -> list[DFPattern]:
    """The nodes of ``pattern``, each once, sub-patterns first (TVM's pattern graph order)."""
    order: list[DFPattern] = []
    seen: set[DFPattern] = {pattern}
    stack: list[tuple[DFPattern, int]] = [(pattern, 0)]
    while stack:
        node, k = stack.pop()
        subs = node.sub_patterns()
        if k < len(subs):
            stack.append((node, k + 1))
            sub = subs[k]
            if sub not in seen:
                seen.add(sub)
                stack.append((sub, 0))
        else:
            order.append(node)
    return order


_NAME_SUFFIX = {Tuple: "Tuple_", Function: "Function", Let: "Let_", If: "If_"}


_LEAF_KINDS = frozenset({Op, Constant, Var})

#: Members a group may share with others (copied into each function that uses them).
_SHARED_KINDS = frozenset({Op, Function, Constant})


def _name_part(node: Expr) -> str:
    kind = type(node)
    if kind is Call:
        return f"{node.op.name}_" if type(node.op) is Op else "Call_"
    if kind is TupleGetItem:
        return f"TupleGetItem{node.index}_"
    if kind.__name__ == "Match":
        return "Match_"
    return _NAME_SUFFIX.get(kind, "")


def _members(root: Expr, inputs: dict[Expr, int]) -> set[Expr]:
    """The nodes from ``root`` down to the group's inputs (root included, inputs not)."""
    if root in inputs:
        return set()
    members = {root}
    stack = [root]
    while stack:
        for kid in children(stack.pop()):
            if kid not in inputs and kid not in members:
                members.add(kid)
                stack.append(kid)
    return members


def _ordered_members(root: Expr, inputs: dict[Expr, int]) -> tuple[list[Expr], set[Expr]]:
    """:func:`_members`, and the ones the group's function copies (:attr:`Group.order`):
    all but operators, constants and variables, in post-order from the root, children in
    field order."""
    if root in inputs:
        return [], set()
    order: list[Expr] = []
    members = {root}
    expanded_nodes: set[Expr] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    pop, push, add = stack.pop, stack.append, members.add
    while stack:
        node, expanded = pop()
        if expanded:
            order.append(node)
            continue
        if node in expanded_nodes:
            continue  # reached again, below a node expanded after it was pushed
        expanded_nodes.add(node)
        push((node, True))
        if type(node) is Call and type(node.op) is Op:  # most nodes: an operator's arguments
            add(node.op)  # (never an input)
            kids = node.args
        else:
            kids = type(node)._layout_.children(node)
        for kid in reversed(kids):
            if kid in inputs:
                continue
            add(kid)
            if type(kid) not in _LEAF_KINDS and kid not in expanded_nodes:
                push((kid, False))
    return order, members


def _reach(root: Expr, found: set[Expr]) -> None:
    """Add ``root`` and every node below it to ``found``.

    A node in ``found`` already is not walked again: what is below it is there too.
    """
    stack = [root]
    pop, push, add = stack.pop, stack.append, found.add
    while stack:
        node = pop()
        if node in found:
            continue
        add(node)
        for kid in type(node)._layout_.children(node):
            if kid not in found:
                push(kid)


class _LooksInside(Exception):
    """A group would take in a function, and the graph has left out what functions hold."""


class _InputPlan:
    """Which pattern nodes give a group its inputs, in the pattern's post-order.

    ``sources``: (pattern node, None, embeds) for a leaf (what it matched is
    an input), (node, "args", False) for ``f(None)``, (node, "fields", False)
    for ``is_tuple(None)``; ``embeds``: a constant it matches stays inside
    the function rather than becoming a parameter (``is_constant()``, a
    constant's ``is_expr``).  ``dominators`` and ``functions`` match
    fuzzily.
    """

    def __init__(self, pattern: DFPattern) -> None:
        self.sources: list[tuple[DFPattern, str | None, bool]] = []
        self.dominators: list[DominatorPattern] = []
        self.functions: list[FunctionPattern] = []
        #: The call, tuple and projection nodes: in a plain pattern, what they match is
        #: a group's node the function copies (unless it is an input too).
        self.inner: set[DFPattern] = set()
        for p in pattern_post_order(pattern):
            kind = type(p)
            if kind in (CallPattern, TuplePattern, TupleGetItemPattern):
                self.inner.add(p)
            if kind is DominatorPattern:
                self.dominators.append(p)
            elif kind is FunctionPattern:
                self.functions.append(p)
            if kind is TuplePattern and p.fields is None:
                self.sources.append((p, "fields", False))
            elif kind is CallPattern and p.args is None:
                self.sources.append((p, "args", False))
            elif not p.sub_patterns() and not (kind is ExprPattern
                                               and type(p.expr) in (Op, Function)):
                # (What an operator or function pattern matches is never an input.)
                embeds = kind is ConstantPattern or (kind is ExprPattern
                                                     and type(p.expr) is Constant)
                self.sources.append((p, None, embeds))


class PatternGrouper:
    """Groups the matches of one pattern in one program.

    ``functions``: the groups will be made into functions (:meth:`Group.partitioned`),
    so each group's :attr:`~Group.order` is found while it is checked; a rewriter
    needs none.
    """

    def __init__(self, functions: bool = False) -> None:
        self.groups: dict[int, Group] = {}
        self._ordered = functions
        self.gid_of: dict[Expr, int] = {}
        self._graph_number = 0
        self.graph: IndexedGraph | None = None

    def roots(self) -> dict[Expr, Group]:
        """The groups by root, for those whose root is in the group.

        A pattern that is a single leaf (``wildcard()``) makes groups of no
        nodes; as in TVM, nothing is rewritten or partitioned for them.
        """
        gid_of = self.gid_of
        return {g.root: g for gid, g in self.groups.items() if gid_of.get(g.root) == gid}

    def group_matches(self, pattern: DFPattern, expr: Expr,
                      graph: IndexedGraph | None = None) -> dict[int, Group]:
        """The groups of ``pattern`` in ``expr`` by id (``graph``: ``expr``'s, if built).

        ``graph`` may leave the insides of functions out (its ``opaque``) only for
        a plain pattern (:func:`~.matcher.plain_matcher`).  Should such a pattern
        match a function after all (a wildcard can), whose insides a group would
        then take in, the grouping starts again on the whole graph.  ``graph``
        (the attribute) is the graph the groups were found in.
        """
        if graph is not None and graph.opaque:
            if plain_matcher(pattern) is None:
                graph = None  # (it may look inside functions anywhere)
        if graph is not None and graph.opaque:
            try:
                return self._group_matches(pattern, expr, graph)
            except _LooksInside:
                graph = None
        return self._group_matches(pattern, expr,
                                   graph if graph is not None else IndexedGraph(expr))

    def _group_matches(self, pattern: DFPattern, expr: Expr,
                       graph: IndexedGraph) -> dict[int, Group]:
        self.groups = {}
        self.gid_of = {}
        self._graph_number = 0
        self.graph = graph
        matcher = DFPatternMatcher(expr, graph)
        plan = _InputPlan(pattern)
        calls = call_filter(pattern)
        plain = plain_matcher(pattern, pairs=True)
        quick = quick_check(pattern) if plain is None else None  # as quick as the plain one
        pre_partitioned: set[Expr] = set()
        gid_of = self.gid_of
        nodes = graph.nodes
        every_node = calls is None or calls.open
        order = (reversed(nodes) if every_node
                 else (nodes[k] for k in reversed(graph.positions(calls.names))))
        opaque = graph.opaque
        if opaque and every_node:
            # What an opaque function holds is not in the graph, bar operators, constants and
            # variables that other nodes use too: as reaching the function would, mark them
            # (before they are met: the graph may have them after the function).
            for func in opaque:
                if func in graph.index:
                    _reach(func, pre_partitioned)
        for current in order:
            if current in gid_of:
                continue
            if (type(current) is Function
                    and PARTITIONED_FROM_PATTERN in current.attrs):
                pre_partitioned.add(current)
                if current not in opaque:
                    _reach(current.body, pre_partitioned)
            if pre_partitioned and current in pre_partitioned:
                continue
            if every_node:
                if calls is not None and calls.rejects(current):
                    continue
            elif type(current) is not Call:
                continue  # a function (the rest are calls of the operators the filter names)
            if quick is not None and not quick(current):
                continue
            if plain is not None:
                pairs = plain(current)
                if pairs is not None:
                    self._create_group(current, pairs, plan, graph)
            elif matcher.match(pattern, current):
                # (The matcher's next match starts a new memo: this one is the group's.)
                self._create_group(current, matcher.memo, plan, graph)
        return self.groups

    def _create_group(self, root: Expr, node_map: Bindings | list[tuple[DFPattern, Expr]],
                      plan: _InputPlan, graph: IndexedGraph) -> None:
        """Make a group of the match at ``root`` (``node_map``: its bindings, or a plain
        matcher's pairs), unless it overlaps one found before or a value escapes it.

        Every match comes here once (a subclass may note them)."""
        if type(node_map) is list:
            self._plain_group(root, node_map, plan, graph)
        else:
            self._general_group(root, node_map, plan, graph)

    def _general_group(self, root: Expr, node_map: Bindings, plan: _InputPlan,
                       graph: IndexedGraph) -> None:
        fuzzy: set[Expr] = set()
        if plan.dominators or plan.functions:
            for p in plan.dominators:
                for side in (p.parent, p.path):
                    fuzzy.update(node_map.get(side, ()))
            for p in plan.functions:
                for func in node_map.get(p, ()):
                    post_order_visit(func.body, fuzzy.add)
        inputs: dict[Expr, int] = {}  # each input, numbered
        number = self._graph_number
        self._graph_number += 1
        for p, where, embeds in plan.sources:
            for node in node_map.get(p, ()):
                for candidate in ((node,) if where is None else getattr(node, where)):
                    kind = type(candidate)
                    if kind is Function and graph.opaque:
                        raise _LooksInside  # the group takes in what the function holds
                    if (kind is Op or kind is Function or kind is Constant and embeds
                            or candidate in inputs or fuzzy and candidate in fuzzy):
                        continue
                    inputs[candidate] = len(inputs)

        if self._ordered:
            order, members = _ordered_members(root, inputs)
        else:
            order, members = None, _members(root, inputs)
        self._add_group(root, node_map, inputs, order, members, number, graph)

    def _plain_group(self, root: Expr, pairs: list[tuple[DFPattern, Expr]],
                     plan: _InputPlan, graph: IndexedGraph) -> None:
        """:meth:`_general_group` for the pairs of a plain matcher, without walking the match.

        A plain pattern is a tree whose inner nodes (calls, tuples, projections)
        bind every child of what they match, and the pairs come in post-order,
        children in field order: so the group's members are what the pairs bind
        (less the inputs), and its :attr:`~Group.order` is what the inner nodes
        bind, in the pairs' order.  Where that reading may not hold (an inner
        node's match is also an input, one node is matched twice, a wildcard
        matched a function, the root is a leaf), the group is made the general way.
        """
        bound = dict(pairs)
        inputs: dict[Expr, int] = {}
        for p, _, embeds in plan.sources:  # (plain: every source is a leaf of the pattern)
            candidate = bound[p]
            kind = type(candidate)
            if kind is Op or kind is Constant and embeds or candidate in inputs:
                continue
            if kind is Function:
                self._general_group(root, {p: [e] for p, e in pairs}, plan, graph)
                return
            inputs[candidate] = len(inputs)
        inner = plan.inner
        members: set[Expr] = set()
        order: list[Expr] = []
        for p, e in pairs:
            if p in inner:
                if e in inputs or e in members:
                    self._general_group(root, {p: [e] for p, e in pairs}, plan, graph)
                    return
                order.append(e)
            elif e in inputs:
                continue
            members.add(e)
        if not order or order[-1] is not root:
            self._general_group(root, {p: [e] for p, e in pairs}, plan, graph)
            return
        number = self._graph_number
        self._graph_number += 1
        self._add_group(root, pairs, inputs, order if self._ordered else None, members,
                        number, graph)

    def _add_group(self, root: Expr,
                   node_map: Bindings | list[tuple[DFPattern, Expr]], inputs: dict[Expr, int],
                   order: list[Expr] | None, members: set[Expr], number: int,
                   graph: IndexedGraph) -> None:
        """Keep the group unless it overlaps one found before or a value escapes it."""
        gid_of = self.gid_of
        for node in members:
            if node in gid_of and type(node) not in _SHARED_KINDS:
                return  # overlaps a group found before
        used_outside: list[Expr] = []
        if graph.escapes(members, root, _SHARED_KINDS, used_outside):
            return  # a use outside the group that does not come back to the root
        gid = len(self.groups) + 1
        gid_of.update(dict.fromkeys(members, gid))
        inner = None
        if order is not None:
            inner = order[:-1]  # (the root is last)
            if used_outside or Function in map(type, inner):
                outside = set(used_outside)
                inner = [node for node in inner
                         if type(node) is not Function and node not in outside]
        self.groups[gid] = Group(gid, root, node_map, list(inputs), number, order, inner)
