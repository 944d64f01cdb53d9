"""The indexed dataflow graph of an expression, with its post-dominator tree.

What TVM's ``IndexedGraph<Expr>`` gives the matcher and the grouper: every
node of the expression numbered in post-order (children first), each node's
inputs and outputs, and the post-dominator tree over those edges (the
expression itself is the root).  Dominator patterns walk the inputs; the
grouper tries roots from the last index to the first and checks, with the
tree, that a value leaving a matched group comes back to its root.

Edges follow TVM's: a call's inputs are its callee and arguments, a
function's only its body, a ``let``'s its body (the bound value flows into
the bound variable instead).  Everything is built with explicit stacks and
loops, and only when first needed (most groupings never ask about edges);
dominance questions are answered in constant time from the tree's
entry and exit numbers.
"""

from __future__ import annotations

from relaypass.ir.expr import Call, Constant, Expr, Function, GlobalVar, Let, Var, children
from relaypass.ir.op import Op

__all__ = ["LEAVES", "IndexedGraph", "node_inputs", "user_lists"]

#: Nodes the search of :meth:`IndexedGraph.dominates` visits before asking the tree.
LOCAL_DOMINANCE = 256


#: Nodes whose users :func:`user_lists` does not list: nothing rewrites them, and an operator
#: or a constant may have thousands.
LEAVES = frozenset({Op, Constant, Var, GlobalVar})


def node_inputs(node: Expr) -> tuple[Expr, ...]:
    """What flows into ``node`` along the graph's edges (its callee and arguments, a
    function's body ...)."""
    kind = type(node)
    if kind is Function:
        return (node.body,)
    if kind is Let:
        return (node.body,)
    if kind is Call:
        return (node.op, *node.args)
    return tuple(children(node))


def user_lists(nodes: list[Expr]) -> dict[Expr, list[Expr]] | None:
    """The users of each of ``nodes`` but :data:`LEAVES`, once per use, along the graph's
    edges; None when one of them is a ``let`` (whose value flows into its variable, an
    edge between nodes that are not user and input)."""
    users: dict[Expr, list[Expr]] = {}
    get = users.get
    for node in nodes:
        kind = type(node)
        if kind is Let:
            return None
        kids = node.args if kind is Call and type(node.op) is Op else node_inputs(node)
        for kid in kids:
            if type(kid) not in LEAVES:
                found = get(kid)
                if found is None:
                    users[kid] = [node]
                else:
                    found.append(node)
    return users


class IndexedGraph:
    """Nodes of ``root`` by post-order index, their edges and post-dominators."""

    __slots__ = ("nodes", "index", "opaque", "_outputs", "_enter", "_leave", "_by_op",
                 "_functions", "_users")

    def __init__(self, root: Expr, opaque: frozenset[Function] = frozenset()) -> None:
        """``opaque``: functions whose insides are left out of the graph (each is a node with
        no inputs): those a partitioner has just made, which hold only new nodes,
        operators, constants and variables, so that nothing else reaches into them and a
        grouper that cannot match a function (a *plain* pattern,
        :func:`~.matcher.plain_matcher`) finds the same groups without them."""
        self.nodes, self.index = _post_order_indexed(root, opaque)
        self.opaque = opaque
        self._outputs: list[list[int]] | None = None
        self._enter: list[int] | None = None
        self._by_op: dict[str, list[int]] | None = None
        self._functions: list[int] = []
        self._users: dict[Expr, list[Expr]] | None = None

    @classmethod
    def from_order(cls, nodes: list[Expr], index: dict[Expr, int],
                   users: dict[Expr, list[Expr]] | None = None) -> IndexedGraph:
        """The graph of ``nodes[-1]`` from an order the caller already has, without a walk.

        ``nodes`` must hold every node reachable from the last one exactly
        once, each after its inputs (and may hold leaves nothing uses);
        ``index`` numbers them.  Any such order gives the same edges and
        post-dominators, so a rewriter that has just rebuilt a program in
        order need not walk it again.  ``users``, if the caller keeps them
        (as :func:`user_lists` gives them), answer the questions about a
        node's users without finding every node's.
        """
        graph = cls.__new__(cls)
        graph.nodes, graph.index = nodes, index
        graph.opaque = frozenset()
        graph._outputs = None
        graph._enter = None
        graph._by_op = None
        graph._functions = []
        graph._users = users
        return graph

    def __len__(self) -> int:
        return len(self.nodes)

    def _edges(self) -> None:
        """Each node's users by number (what :func:`node_inputs` gives, turned round; a let's
        value also flows into its variable)."""
        index = self.index
        outputs: list[list[int]] = [[] for _ in self.nodes]
        for k, node in enumerate(self.nodes):
            kind = type(node)
            if kind is Call:
                outputs[index[node.op]].append(k)
                for kid in node.args:
                    outputs[index[kid]].append(k)
            elif kind is Function:
                if node not in self.opaque:
                    outputs[index[node.body]].append(k)
            elif kind is Let:
                outputs[index[node.body]].append(k)
                outputs[index[node.value]].append(index[node.var])
            else:
                for kid in node_inputs(node):
                    outputs[index[kid]].append(k)
        self._outputs = outputs

    def user_map(self) -> dict[Expr, list[Expr]] | None:
        """The users of each node but :data:`LEAVES` (:func:`user_lists`), found once, or
        kept from :meth:`from_order`; None for a program with ``let``, or with functions
        left out."""
        if self._users is None and not self.opaque:
            self._users = user_lists(self.nodes)
        return self._users

    def _outputs_at(self, k: int) -> list[int]:
        """The users of node ``k`` by number: from the user lists, unless ``k`` is a leaf
        (then from every node's, :meth:`_edges`)."""
        outputs = self._outputs
        if outputs is None:
            node = self.nodes[k]
            if type(node) not in LEAVES:
                users = self.user_map()
                if users is not None:
                    index = self.index
                    return [index[user] for user in users.get(node, ())]
            self._edges()
            outputs = self._outputs
        return outputs[k]

    def _calls_by_op(self) -> dict[str, list[int]]:
        """The indices of the calls of each operator (and, in ``_functions``, of the functions)."""
        if self._by_op is None:
            by_operator: dict[Op, list[int]] = {}
            get = by_operator.get
            functions = self._functions
            for k, node in enumerate(self.nodes):
                kind = type(node)
                if kind is Call:
                    op = node.op
                    if type(op) is Op:
                        found = get(op)
                        if found is None:
                            by_operator[op] = [k]
                        else:
                            found.append(k)
                elif kind is Function:
                    functions.append(k)
            by_op: dict[str, list[int]] = {}
            for op, found in by_operator.items():
                have = by_op.get(op.name)  # (two operators of one name: in order all the same)
                by_op[op.name] = found if have is None else sorted(have + found)
            self._by_op = by_op
        return self._by_op

    def called_ops(self) -> set[str]:
        """The names of the operators the program calls."""
        return set(self._calls_by_op())

    def calls_any(self, op_names: frozenset[str]) -> bool:
        """Whether the program calls one of the operators ``op_names``."""
        by_op = self._calls_by_op()
        return any(name in by_op for name in op_names)

    def positions(self, op_names: frozenset[str]) -> list[int]:
        """Indices of the calls of the operators ``op_names`` and of all functions, ascending.

        Lets a grouper whose pattern can only match calls of a few operators
        skip every other node (functions are included: earlier partitions
        are recognised by them).
        """
        by_op = self._calls_by_op()
        found = [k for name in op_names for k in by_op.get(name, ())]
        found.extend(self._functions)
        found.sort()
        return found

    def inputs_of(self, node: Expr) -> tuple[Expr, ...]:
        """What flows into ``node`` (its callee and arguments, a function's body ...)."""
        return node_inputs(node)

    def users(self, node: Expr) -> list[Expr]:
        """The nodes that take ``node`` as an input."""
        nodes = self.nodes
        return [nodes[k] for k in self._outputs_at(self.index[node])]

    def escapes(self, members: set[Expr], root: Expr, shared: frozenset[type],
                used_outside: list[Expr] | None = None) -> bool:
        """Whether a node of ``members`` (not ``root``, nor of a kind in ``shared``) has a user
        outside ``members`` that ``root`` does not post-dominate.

        What a grouper asks of every match: a value that leaves the group that way
        would be cut off when the group is replaced by a call.  ``used_outside``,
        if given, receives the members that have users outside ``members`` all
        the same (post-dominated by ``root``): a partitioner must keep those
        beside the function that copies them.
        """
        index = self.index
        nodes = self.nodes
        for node in members:
            if node is root or type(node) in shared:
                continue
            outside = False
            for k in self._outputs_at(index[node]):
                user = nodes[k]
                if user not in members:
                    if not self.dominates(root, user):
                        return True
                    outside = True
            if outside and used_outside is not None:
                used_outside.append(node)
        return False

    def _post_dominators(self) -> tuple[list[int], list[int]]:
        """The tree's entry and exit numbers, computed when a dominance question first comes."""
        if self._enter is not None:
            return self._enter, self._leave
        if self._outputs is None:
            self._edges()
        count = len(self.nodes)
        parent = [-1] * count
        depth = [0] * count
        outputs = self._outputs
        for k in range(count - 1, -1, -1):
            outs = outputs[k]
            if k == count - 1 or not outs:
                depth[k] = 1
                continue
            lca = outs[0]
            for other in outs[1:]:
                lca = _common_ancestor(lca, other, parent, depth)
                if lca < 0:
                    break
            parent[k] = lca
            depth[k] = depth[lca] + 1 if lca >= 0 else 1
        kids: list[list[int]] = [[] for _ in range(count)]
        for k, p in enumerate(parent):
            if p >= 0:
                kids[p].append(k)
        enter = [0] * count
        leave = [0] * count
        clock = 0
        for start in range(count - 1, -1, -1):
            if parent[start] >= 0:
                continue
            stack = [(start, False)]
            while stack:
                k, done = stack.pop()
                if done:
                    leave[k] = clock
                    clock += 1
                    continue
                enter[k] = clock
                clock += 1
                stack.append((k, True))
                stack.extend((c, False) for c in kids[k])
        self._enter = enter
        self._leave = leave
        return enter, leave

    def dominates(self, node: Expr, other: Expr) -> bool:
        """True when every path from ``other`` to the root passes through ``node`` (strictly).

        Asked mostly about a use close to ``node``, so answered by a search
        up from ``other`` first: every edge leads to a higher number, so a
        path that reaches a node numbered after ``node``, or ends, without
        passing it shows that it does not, and a search whose paths all stop
        at ``node`` shows that it does.  Only a search that grows past
        :data:`LOCAL_DOMINANCE` nodes asks the post-dominator tree.
        """
        index = self.index
        top = index[node]
        if index[other] >= top:
            return False
        outputs_at = self._outputs_at
        seen = {index[other]}
        stack = [index[other]]
        while stack:
            users = outputs_at(stack.pop())
            if not users:
                return False  # the end of a path that missed ``node``
            for k in users:
                if k == top or k in seen:
                    continue
                if k > top:
                    return False
                seen.add(k)
                stack.append(k)
            if len(seen) > LOCAL_DOMINANCE:
                enter, leave = self._post_dominators()
                b = index[other]
                return enter[top] < enter[b] and leave[b] < leave[top]
        return True

    def dominated_by(self, node: Expr) -> list[Expr]:
        """The nodes ``node`` strictly post-dominates, in reverse post-order."""
        enter, leave = self._post_dominators()
        a = self.index[node]
        return [self.nodes[k] for k in range(a - 1, -1, -1)
                if enter[a] < enter[k] and leave[k] < leave[a]]


def _post_order_indexed(root: Expr, opaque: frozenset[Function] = frozenset()
                        ) -> tuple[list[Expr], dict[Expr, int]]:
    """``post_order(root)`` and each node's place in it, in one walk.

    The same order as :func:`relaypass.ir.traversal.post_order` (children in
    field order, each node where it is first finished), with the index
    doubling as the set of finished nodes; what is inside the ``opaque``
    functions is left out (the order of the rest is the same).
    """
    nodes: list[Expr] = []
    index: dict[Expr, int] = {}
    expanded: set[Expr] = set()
    stack: list[Expr] = [root]
    pop, push, expand = stack.pop, stack.append, expanded.add
    while stack:
        node = pop()
        if node in expanded:
            if node not in index:
                index[node] = len(nodes)
                nodes.append(node)
            continue
        if node in index:
            continue
        expand(node)
        push(node)
        if opaque and node in opaque:
            continue
        for kid in reversed(type(node)._layout_.children(node)):
            if kid not in index and kid not in expanded:
                push(kid)
    return nodes, index


def _common_ancestor(a: int, b: int, parent: list[int], depth: list[int]) -> int:
    while a != b:
        if a < 0 or b < 0:
            return -1
        if depth[a] < depth[b]:
            b = parent[b]
        elif depth[a] > depth[b]:
            a = parent[a]
        else:
            a = parent[a]
            b = parent[b]
    return a
