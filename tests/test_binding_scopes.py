"""The scope tree of ToANormalForm and ToBasicBlockNormalForm: lowest common ancestors."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from relaypass.analysis.binding_scopes import Scope, lowest_common_ancestor


def _naive_lca(a: Scope, b: Scope) -> Scope:
    ancestors = set()
    while a is not None:
        ancestors.add(a)
        a = a.parent
    while b not in ancestors:
        b = b.parent
    return b


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.floats(min_value=0.0, max_value=1.0))
def test_lowest_common_ancestor_agrees_with_walking_up(seed, deep):
    # Trees mixing long chains (each scope the child of the last one made, as nested lets
    # make them) with branches off any earlier scope (Ifs, clauses, functions).
    rng = random.Random(seed)
    scopes = [Scope()]
    for _ in range(300):
        parent = scopes[-1] if rng.random() < deep else rng.choice(scopes)
        scopes.append(Scope(parent))
    for _ in range(300):
        a, b = rng.choice(scopes), rng.choice(scopes)
        assert lowest_common_ancestor(a, b) is _naive_lca(a, b)


def test_lowest_common_ancestor_on_a_chain_100000_deep():
    root = Scope()
    chain = [root]
    for _ in range(100_000):
        chain.append(Scope(chain[-1]))
    branch = Scope(chain[50_000])
    for a, b, expected in ((chain[-1], chain[3], chain[3]), (chain[7], chain[-1], chain[7]),
                           (branch, chain[-1], chain[50_000]), (chain[-1], branch, chain[50_000]),
                           (branch, branch, branch)):
        assert lowest_common_ancestor(a, b) is expected
