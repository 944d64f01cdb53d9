"""The indexed graph's post-dominance answers and the grouper's escape check, against brute force."""

from __future__ import annotations

import random

import pytest

from relaypass import relay
from relaypass.dataflow_pattern import graph as graph_module
from relaypass.dataflow_pattern.graph import IndexedGraph
from relaypass.relay.dataflow_pattern import is_op, wildcard


def _random_dag(seed: int, n: int = 40):
    rng = random.Random(seed)
    x = relay.var("x", shape=(2,))
    nodes = [x]
    for _ in range(n):
        if rng.random() < 0.5:
            nodes.append(relay.nn.relu(rng.choice(nodes[-6:])))
        else:
            nodes.append(relay.add(rng.choice(nodes[-6:]), rng.choice(nodes)))
    sinks = [v for v in nodes[1:] if rng.random() < 0.1] + [nodes[-1]]
    return relay.Tuple(sinks)


def _reaches_end_avoiding(graph: IndexedGraph, start: int, avoid: int) -> bool:
    """Brute force: a path from ``start`` up the users to a node nobody uses, missing ``avoid``."""
    seen, stack = {start}, [start]
    while stack:
        k = stack.pop()
        users = [graph.index[u] for u in graph.users(graph.nodes[k])]
        if not users:
            return True
        for u in users:
            if u != avoid and u not in seen:
                seen.add(u)
                stack.append(u)
    return False


@pytest.mark.parametrize("local", [0, 3, 256])
@pytest.mark.parametrize("seed", range(4))
def test_dominates_agrees_with_brute_force(monkeypatch, seed, local):
    # ``local`` 0 asks the tree at once; 3 mixes both; 256 answers from the search alone.
    monkeypatch.setattr(graph_module, "LOCAL_DOMINANCE", local)
    graph = IndexedGraph(_random_dag(seed))
    count = len(graph.nodes)
    for a in range(count):
        for b in range(count):
            expected = a != b and not _reaches_end_avoiding(graph, b, a) and b < a
            assert graph.dominates(graph.nodes[a], graph.nodes[b]) == expected, (a, b)


def test_escapes_sees_a_use_that_does_not_come_back_to_the_root():
    x = relay.var("x", shape=(2,))
    inner = relay.add(x, x)
    root = relay.nn.relu(inner)
    graph = IndexedGraph(relay.Tuple([root, relay.exp(inner)]))
    assert graph.escapes({root, inner}, root, frozenset())
    top = relay.add(root, relay.exp(inner))  # the use outside comes back to the root
    assert not IndexedGraph(top).escapes({top, root, inner}, top, frozenset())


def test_partitioned_body_keeps_inner_sharing_in_post_order():
    # relu(x) is both an argument of the add and inside its other argument: the
    # function copies it once, before what uses it, and names it once.
    x = relay.var("x", shape=(2,))
    r = relay.nn.relu(x)
    expr = relay.add(r, relay.exp(r))
    pattern = is_op("add")(is_op("nn.relu")(wildcard()), is_op("exp")(is_op("nn.relu")(wildcard())))
    out = pattern.partition(expr)
    func = out.op
    assert func.attrs["PartitionedFromPattern"] == "nn.relu_exp_add_"
    body = func.body
    assert body.args[0] is body.args[1].args[0]
    assert body.args[0].args[0] is func.params[0]


@pytest.mark.parametrize("seed", range(6))
def test_users_from_the_user_lists_agree_with_every_edge(seed):
    expr = _random_dag(seed, 60)
    graph = IndexedGraph(expr)
    everyone = {}
    for node in graph.nodes:
        for kid in graph_module.node_inputs(node):
            everyone.setdefault(kid, []).append(node)
    lists = graph.user_map()
    assert lists is not None
    for node in graph.nodes:
        assert sorted(map(graph.index.get, graph.users(node))) == sorted(
            map(graph.index.get, everyone.get(node, [])))
        if type(node) not in graph_module.LEAVES:
            assert lists.get(node, []) == everyone.get(node, [])


def test_a_program_with_a_let_has_no_user_lists_and_still_answers():
    x = relay.var("x", shape=(2,))
    v = relay.var("v")
    body = relay.Let(v, relay.nn.relu(x), relay.add(v, v))
    graph = IndexedGraph(body)
    assert graph.user_map() is None
    relu = next(node for node in graph.nodes if isinstance(node, relay.Call)
                and node.op.name == "nn.relu")
    assert graph.users(relu) == [graph.nodes[graph.index[v]]]
