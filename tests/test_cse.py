"""EliminateCommonSubexpr: Relay's examples, each merging rule, values, random programs, depth.

relaypass's structural equality compares DAGs as trees (a shared node equals
two copies of it), so each example also checks the sharing itself: how many
distinct call nodes the result has, and which arguments are the same node.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from program_helpers import assert_same_values, run_quietly

from relaypass import relay
from relaypass.errors import RelayPassError
from relaypass.functor import ExprMutator, post_order_visit
from relaypass.interp import create_executor
from relaypass.ir import IRModule
from relaypass.ir.structural import assert_structural_equal
from relaypass.relay.analysis import well_formed
from relaypass.testing.strategies import modules, random_inputs
from relaypass.transform import PassContext, PassInfo, Sequential
from relaypass_std.eliminate_common_subexpr import EliminateCommonSubexpr, eliminate_common_subexpr


def run_opt_pass(expr, opt_pass):
    """As in Relay's tests: run the pass on a module of ``expr``, hand back the same kind."""
    entry = opt_pass(IRModule.from_expr(expr))["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def typed(expr):
    return run_opt_pass(expr, relay.transform.InferType())


def calls(expr):
    """The distinct call nodes reachable from ``expr`` (each node once, by identity)."""
    found = []
    post_order_visit(expr, lambda e: found.append(e) if isinstance(e, relay.Call) else None)
    return found


def assert_same_graph(actual, expected):
    """Structurally equal, and as many distinct calls: the same DAG, not just the same tree."""
    assert_structural_equal(actual, expected)
    assert len(calls(actual)) == len(calls(expected))


def test_registered_as_a_function_pass_at_opt_level_3_requiring_infer_type():
    p = relay.transform.EliminateCommonSubexpr()
    assert p.info == PassInfo(3, "EliminateCommonSubexpr", ["InferType"])
    assert type(p).__name__ == "FunctionPass"


# --- Relay's examples (tests/python/relay/test_pass_eliminate_common_subexpr.py) ---------


def test_simple():
    def before():
        x = relay.var("x", shape=(1, 16))
        y1 = relay.nn.relu(x)
        y2 = relay.nn.relu(x)
        y1 = relay.add(y1, relay.const(1.0, "float32"))
        y2 = relay.add(y2, relay.const(1.0, "float32"))
        y = relay.add(y1, y2)
        return relay.Function([x], y)

    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.nn.relu(x)
        y = relay.add(y, relay.const(1.0, "float32"))
        y = relay.add(y, y)
        return typed(relay.Function([x], y))

    z = run_opt_pass(before(), EliminateCommonSubexpr())
    assert_same_graph(z, expected())
    assert z.body.args[0] is z.body.args[1]


def test_callback():
    def before():
        x = relay.var("x", shape=(1, 16))
        y1 = relay.nn.relu(x)
        y2 = relay.nn.relu(x)
        y1 = relay.add(y1, relay.const(1.0, "float32"))
        y2 = relay.add(y2, relay.const(1.0, "float32"))
        y = relay.add(y1, y2)
        return relay.Function([x], y)

    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.nn.relu(x)
        y1 = relay.add(y, relay.const(1.0, "float32"))
        y2 = relay.add(y, relay.const(1.0, "float32"))
        y = relay.add(y1, y2)
        return typed(relay.Function([x], y))

    def fskip(expr):
        return isinstance(expr, relay.Call) and expr.op.name == "add"

    z = run_opt_pass(before(), EliminateCommonSubexpr(fskip))
    assert_same_graph(z, expected())
    y1, y2 = z.body.args
    assert y1 is not y2 and y1.args[0] is y2.args[0]


def test_tuple_get_time():
    def before():
        x = relay.var("x", shape=(1, 16, 1, 1))
        var = relay.var("var", shape=(16,))
        mean = relay.var("mean", shape=(16,))
        beta = relay.var("beta", shape=(16,))
        gamma = relay.var("gamma", shape=(16,))
        BN = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)  # noqa: N806
        T1 = BN[0]  # noqa: N806
        T2 = BN[0]  # noqa: N806
        add = T1 + T2
        return relay.Function([x, var, mean, beta, gamma], add)

    def expected():
        x = relay.var("x", shape=(1, 16, 1, 1))
        var = relay.var("var", shape=(16,))
        mean = relay.var("mean", shape=(16,))
        beta = relay.var("beta", shape=(16,))
        gamma = relay.var("gamma", shape=(16,))
        BN = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)  # noqa: N806
        T1 = BN[0]  # noqa: N806
        add = T1 + T1
        return typed(relay.Function([x, var, mean, beta, gamma], add))

    z = run_opt_pass(before(), EliminateCommonSubexpr())
    assert_same_graph(z, expected())
    assert z.body.args[0] is z.body.args[1]


def test_tuple_arg():
    def before():
        x = relay.var("x", shape=(1, 16))
        y1 = relay.nn.relu(x)
        y2 = relay.nn.relu(x)
        y1 = relay.add(y1, relay.const(1.0, "float32"))
        y2 = relay.add(y2, relay.const(1.0, "float32"))
        c0 = relay.const(np.ones((1, 16)), "float32")
        y1 = relay.concatenate([y1, c0], axis=0)
        y2 = relay.concatenate([y2, c0], axis=0)
        y = relay.add(y1, y2)
        return relay.Function([x], y)

    def expected():
        x = relay.var("x", shape=(1, 16))
        y = relay.nn.relu(x)
        y = relay.add(y, relay.const(1.0, "float32"))
        c0 = relay.const(np.ones((1, 16)), "float32")
        y = relay.concatenate([y, c0], axis=0)
        y = relay.add(y, y)
        return typed(relay.Function([x], y))

    z = run_opt_pass(before(), EliminateCommonSubexpr())
    assert_same_graph(z, expected())
    assert z.body.args[0] is z.body.args[1]


# --- the merging rules one by one ----------------------------------------------------------


def fn(*params_and_body):
    *params, body = params_and_body
    return typed(relay.Function(list(params), body))


def test_equal_scalar_constants_count_as_the_same_argument():
    x = relay.var("x", shape=(3,))
    a = relay.add(x, relay.const(2.0))
    b = relay.add(x, relay.const(2.0))
    out = eliminate_common_subexpr(fn(x, relay.Tuple([a, b])))
    assert out.body.fields[0] is out.body.fields[1]


def test_scalar_constants_of_another_dtype_or_value_do_not_merge():
    x = relay.var("x", shape=(3,), dtype="float64")
    a = relay.add(x, relay.const(2.0, "float64"))
    b = relay.add(x, relay.const(2.5, "float64"))
    f = fn(x, relay.Tuple([a, b]))
    assert eliminate_common_subexpr(f) is f
    # Ill-typed, but the comparison alone is under test: 2 as int32 is not 2 as int64.
    y = relay.var("y", shape=(3,), dtype="int32")
    c = relay.add(y, relay.const(2, "int32"))
    d = relay.add(y, relay.const(2, "int64"))
    u = relay.Function([y], relay.Tuple([c, d]))
    assert eliminate_common_subexpr(u) is u
    neg = relay.negative(relay.const(0.0))
    pos = relay.negative(relay.const(-0.0))
    g = fn(relay.Tuple([neg, pos]))
    assert eliminate_common_subexpr(g) is g  # -0.0 and 0.0 differ bit for bit


def test_equal_tensor_constants_that_are_different_nodes_do_not_merge():
    x = relay.var("x", shape=(3,))
    data = np.ones(3, "float32")
    f = fn(x, relay.Tuple([relay.add(x, relay.const(data)), relay.add(x, relay.const(data))]))
    assert eliminate_common_subexpr(f) is f
    c = relay.const(data)
    g = fn(x, relay.Tuple([relay.add(x, c), relay.add(x, c)]))
    out = eliminate_common_subexpr(g)
    assert out.body.fields[0] is out.body.fields[1]


def test_attributes_compare_by_value():
    x = relay.var("x", shape=(3, 4))
    same = [relay.sum(x, axis=[1], keepdims=True), relay.sum(x, axis=1, keepdims=True)]
    other = [relay.sum(x, axis=[0], keepdims=True), relay.sum(x, axis=[1])]
    out = eliminate_common_subexpr(fn(x, relay.Tuple(same + other)))
    a, b, c, d = out.body.fields
    assert a is b
    assert len({id(a), id(c), id(d)}) == 3


def test_tuple_arguments_compare_field_by_field():
    x = relay.var("x", shape=(1, 2))
    y = relay.var("y", shape=(1, 2))
    a = relay.concatenate([x, y], axis=0)
    b = relay.concatenate(relay.Tuple([x, y]), axis=0)
    c = relay.concatenate([y, x], axis=0)
    out = eliminate_common_subexpr(fn(x, y, relay.Tuple([a, b, c])))
    a, b, c = out.body.fields
    assert a is b and a is not c


def test_stateful_operators_never_merge():
    x = relay.var("x", shape=(4,))
    f = fn(x, relay.add(relay.nn.dropout(x), relay.nn.dropout(x)))
    out = eliminate_common_subexpr(f)
    assert out is f
    assert sum(c.op.name == "nn.dropout" for c in calls(out)) == 2


def test_calls_without_arguments_and_calls_of_functions_never_merge():
    x = relay.var("x", shape=(2,))
    z1 = relay.zeros((2,), "float32")
    z2 = relay.zeros((2,), "float32")
    p = relay.var("p", shape=(2,))
    g = relay.Function([p], relay.nn.relu(p))
    f = fn(x, relay.Tuple([z1, z2, relay.Call(g, [x]), relay.Call(g, [x])]))
    out = eliminate_common_subexpr(f)
    assert len({id(field) for field in out.body.fields}) == 4


def test_projections_of_merged_tuples_merge_and_other_indices_do_not():
    x = relay.var("x", shape=(6,))
    s1 = relay.split(x, indices_or_sections=2)
    s2 = relay.split(x, indices_or_sections=2)
    out = eliminate_common_subexpr(fn(x, relay.Tuple([s1[0], s2[0], s2[1]])))
    a, b, c = out.body.fields
    assert a is b
    assert c is not a and c.tuple_value is a.tuple_value


def test_fskip_also_sees_projections():
    x = relay.var("x", shape=(6,))
    s = relay.split(x, indices_or_sections=2)
    f = fn(x, relay.Tuple([s[0], s[0]]))
    kept = eliminate_common_subexpr(f, lambda e: isinstance(e, relay.TupleGetItem))
    assert kept.body.fields[0] is not kept.body.fields[1]


def test_fskip_as_operator_names_from_python_and_from_a_pipeline(tmp_path):
    x = relay.var("x", shape=(1, 16))
    y1 = relay.add(relay.nn.relu(x), relay.const(1.0))
    y2 = relay.add(relay.nn.relu(x), relay.const(1.0))
    mod = IRModule.from_expr(relay.Function([x], relay.add(y1, y2)))
    out = relay.transform.EliminateCommonSubexpr(fskip=["add"])(mod)["main"]
    a, b = out.body.args
    assert a is not b and a.args[0] is b.args[0]

    pipeline = tmp_path / "cse.toml"
    pipeline.write_text(
        'opt_level = 3\n'
        'passes = [{ name = "EliminateCommonSubexpr", options = { fskip = ["nn.relu"] } }]\n'
    )
    piped = relay.transform.load_pipeline(str(pipeline))(mod)["main"]
    a, b = piped.body.args
    assert a is not b and a.args[0] is not b.args[0]


def test_an_unknown_operator_name_in_fskip_is_an_error():
    with pytest.raises(RelayPassError, match="nn.rleu"):
        EliminateCommonSubexpr(fskip=["nn.rleu"])


def test_merging_reaches_into_lets_branches_and_local_functions():
    x = relay.var("x", shape=(2,))
    a, b = relay.var("a"), relay.var("b")
    cond = relay.less(relay.sum(x), relay.const(0.0))
    branch = relay.If(cond, relay.exp(x), relay.exp(x))
    body = relay.Let(a, relay.exp(x), relay.Let(b, relay.exp(x), relay.Tuple([a, b, branch])))
    out = eliminate_common_subexpr(fn(x, body))
    assert out.body.value is out.body.body.value
    branch = out.body.body.body.fields[2]
    assert branch.true_branch is branch.false_branch is out.body.value


# --- values, input, pipelines ---------------------------------------------------------------


def test_values_are_kept_and_the_input_module_is_unchanged():
    x = relay.var("x", shape=(3, 4))
    y1 = relay.nn.softmax(relay.multiply(x, relay.const(2.0)))
    y2 = relay.nn.softmax(relay.multiply(x, relay.const(2.0)))
    mod = IRModule.from_expr(relay.Function([x], relay.subtract(y1, relay.exp(y2))))
    main = mod["main"]
    text = mod.astext()
    out = EliminateCommonSubexpr()(mod)
    assert len(calls(out["main"])) == 4
    data = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    np.testing.assert_allclose(create_executor(mod=out).evaluate()(data),
                               create_executor(mod=mod).evaluate()(data), rtol=1e-6)
    assert mod["main"] is main and mod.astext() == text


def test_runs_at_opt_level_3_only_in_a_sequential():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.Function([x], relay.add(relay.exp(x), relay.exp(x))))
    seq = Sequential([relay.transform.EliminateCommonSubexpr()])
    with PassContext(opt_level=2):
        assert len(calls(seq(mod)["main"])) == 3
    with PassContext(opt_level=3):
        assert len(calls(seq(mod)["main"])) == 2


# --- random programs ----------------------------------------------------------------------


class _Duplicate(ExprMutator):
    """Gives every use of a pure operator call its own copy of the call node (one level deep).

    The random programs reuse values instead of recomputing them, so they hold
    nothing to merge; the copies are exactly what the pass must merge back.
    """

    def visit_call(self, call):
        post = super().visit_call(call)
        args = [self._copy(a) for a in post.args]
        return relay.Call(post.op, args, post.attrs, post.type_args)

    @staticmethod
    def _copy(arg):
        if (isinstance(arg, relay.Call) and isinstance(arg.op, relay.Op) and arg.args
                and not arg.op.get_attr("TOpIsStateful")):
            return relay.Call(arg.op, arg.args, arg.attrs, arg.type_args)
        return arg


def _duplicated(mod):
    return IRModule({gv: _Duplicate().visit(f) for gv, f in mod.functions.items()})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 25), features={"let", "if", "tuple", "fn", "ref", "global"}))
def test_random_programs_keep_their_values(mod):
    """Copies of calls merge back to the original's number of nodes, values stay exactly the
    same, a second run finds nothing more, and the input module is left as it was."""
    dup = _duplicated(mod)
    text = dup.astext()
    functions = dict(dup.functions)
    args = random_inputs(mod, seed=5)
    merged = EliminateCommonSubexpr()(mod)
    out = EliminateCommonSubexpr()(dup)
    for name, func in out.functions.items():
        assert well_formed(func)
        assert eliminate_common_subexpr(func) is func
        assert len(calls(func)) == len(calls(merged[name]))
    relay.transform.InferType()(out)
    assert_same_values(run_quietly(mod, args), run_quietly(out, args), rtol=0, atol=0)
    assert dup.astext() == text
    assert all(dup[name] is f for name, f in functions.items())


# --- depth --------------------------------------------------------------------------------


def _chain(n, x, c):
    e = x
    for i in range(n):
        e = relay.add(e, c) if i % 2 else relay.multiply(e, c)
    return e


def test_two_identical_chains_of_50000_calls_become_one():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    f = relay.Function([x], relay.subtract(_chain(50_000, x, c), _chain(50_000, x, c)))
    assert len(calls(f)) == 100_001
    out = eliminate_common_subexpr(f)
    assert len(calls(out)) == 50_001
    assert out.body.args[0] is out.body.args[1]
    assert sys.getrecursionlimit() == limit


def test_a_chain_of_100000_distinct_calls_is_returned_as_is():
    x = relay.var("x", shape=(2,))
    c = relay.const(np.ones(2, "float32"))
    f = relay.Function([x], _chain(100_000, x, c))
    assert eliminate_common_subexpr(f) is f


def test_relay_sugar_takes_fskip_positionally_as_relay_does():
    from relaypass import relay as _relay

    skipped = []

    def fskip(expr):
        skipped.append(expr)
        return False

    p = _relay.transform.EliminateCommonSubexpr(fskip)
    x = _relay.var("x", shape=(2,))
    p(_relay.IRModule.from_expr(_relay.add(_relay.nn.relu(x), _relay.nn.relu(x))))
    assert skipped, "the positional fskip callback was not used"
    with pytest.raises(TypeError, match="at most 1 positional"):
        _relay.transform.EliminateCommonSubexpr(fskip, fskip)


def test_EliminateCommonSubexpr_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("EliminateCommonSubexpr", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)
