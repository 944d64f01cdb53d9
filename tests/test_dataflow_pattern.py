"""relaypass's own checks of the pattern language (TVM's cases are in relay_compat/).

What TVM's file does not test: why a match failed (``explain_match`` and each
kind of failure), the errors bad patterns and callbacks raise, programs of
100,000 nodes (matching, rewriting, partitioning, self-referencing patterns,
dominator paths), the cost of matching (pattern visits grow linearly with the
program, also for dominator paths through chains of diamonds), the pattern
visitor and printer, and types inferred on demand.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relaypass import relay
from relaypass.dataflow_pattern import (
    CallbackError,
    DFPatternMatcher,
    PatternBuildError,
    PatternGrouper,
    RewriteLimitError,
)
from relaypass.errors import RelayPassError
from relaypass.relay.dataflow_pattern import (
    AltPattern,
    CallPattern,
    DFPatternCallback,
    DFPatternVisitor,
    DominatorPattern,
    FunctionPattern,
    dominates,
    explain_match,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_op,
    is_tuple_get_item,
    is_var,
    rewrite,
    wildcard,
)

DEEP = 100_000
ELEMWISE = 0


def conv_relu():
    return is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))


# --- explain_match: one test per kind of failure ------------------------------------------


def test_explain_wrong_operator_names_both_operators_and_shows_both_sides():
    x, w = relay.var("x"), relay.var("w")
    why = explain_match(conv_relu(), relay.nn.relu(relay.nn.dense(x, w)))
    assert not why
    assert why.kind == "op"
    assert "nn.conv2d" in why.reason and "nn.dense" in why.reason
    assert str(why.failed_pattern) == "nn.conv2d(*, *)"
    assert why.failed_expr.op.name == "nn.dense"
    text = str(why)
    assert "pattern: nn.relu(nn.conv2d(*, *))" in text
    assert "nn.dense(%x, %w)" in text  # the expression, by short_text
    # the partial match: the relu's operator was bound before the failure
    assert len(why.bound) == 1


def test_explain_bare_operator():
    why = explain_match(is_op("add"), relay.op.op.get("subtract"))
    assert why.kind == "op" and "expected operator add, found subtract" in why.reason


def test_explain_call_attribute_mismatch():
    pat = is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"data_layout": "NHWC"})
    why = explain_match(pat, relay.nn.conv2d(relay.var("x"), relay.var("w")))
    assert why.kind == "attr"
    assert "data_layout" in why.reason and "NCHW" in why.reason and "NHWC" in why.reason
    assert "has_attr" in str(why)


def test_explain_operator_attribute_mismatch():
    pat = wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard(), wildcard())
    why = explain_match(pat, relay.nn.dense(relay.var("x"), relay.var("w")))
    assert why.kind == "attr"
    assert "TOpPattern" in why.reason


def test_explain_wrong_arity():
    x = relay.var("x")
    why = explain_match(is_op("add")(wildcard(), wildcard(), wildcard()), x + x)
    assert why.kind == "arity"
    assert "expected 3 arguments, found 2" in why.reason


@pytest.mark.parametrize("pattern, kind, words", [
    (has_type(relay.TensorType((2, 3), "float32")), "type", "float16"),
    (has_dtype("float32"), "dtype", "float16"),
    (has_shape([3, 2]), "shape", "[2, 3]"),
])
def test_explain_type_dtype_and_shape(pattern, kind, words):
    x = relay.var("x", shape=(2, 3), dtype="float16")
    why = explain_match(pattern, relay.nn.relu(x))  # an untyped call: typed on demand
    assert why.kind == kind
    assert words in why.reason


def test_explain_dominator_path_through_a_non_matching_node():
    conv = relay.nn.conv2d(relay.var("x"), relay.var("w"))
    relu = relay.nn.relu(conv)
    program = (relu + relu) + relay.nn.leaky_relu(conv)  # the inner add is not elementwise
    path = wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard())
    pat = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), path,
                    is_op("add")(wildcard(), wildcard()))
    why = explain_match(pat, program)
    assert why.kind == "dominator-path"
    assert why.failed_expr is program.args[0]
    assert isinstance(why.failed_pattern, DominatorPattern)


def test_explain_of_a_match():
    x = relay.var("x")
    why = explain_match(is_op("add")(wildcard(), wildcard()), x + x)
    assert why and why.kind is None
    assert str(why).endswith("matches")
    assert len(why.bound) == 4  # the call, its operator and both wildcards (bound once: x, x)


_OPS = ["nn.relu", "exp", "tanh", "negative"]


@given(st.lists(st.sampled_from(_OPS), min_size=1, max_size=6),
       st.lists(st.sampled_from(_OPS), min_size=1, max_size=4))
def test_explain_agrees_with_match(program_ops, pattern_ops):
    expr = relay.var("x", shape=(2,))
    for name in program_ops:
        expr = relay.Call(relay.op.op.get(name), [expr])
    pat = wildcard()
    for name in pattern_ops:
        pat = is_op(name)(pat)
    why = explain_match(pat, expr)
    assert bool(why) == pat.match(expr)
    if not why:
        assert why.kind in ("op", "kind") and why.failed_pattern is not None


# --- errors --------------------------------------------------------------------------------


def test_building_from_an_expression_says_where_and_how_to_fix():
    with pytest.raises(PatternBuildError, match=r"CallPattern's args\[1\].*is_expr"):
        is_op("add")(wildcard(), relay.var("x"))
    assert issubclass(PatternBuildError, RelayPassError)


@pytest.mark.parametrize("build, words", [
    (lambda: wildcard() | 3, "right side of |"),
    (lambda: has_attr(["TOpPattern"]), "mapping"),
    (lambda: is_tuple_get_item(wildcard(), "1"), "index"),
    (lambda: FunctionPattern(wildcard(), wildcard()), "list of patterns"),
    (lambda: wildcard().optional(3), "function from a pattern"),
    (lambda: is_op(3), "operator name"),
    (lambda: has_dtype(32), "dtype"),
    (lambda: conv_relu().match("nn.relu"), "Relay expression"),
])
def test_bad_patterns(build, words):
    with pytest.raises(PatternBuildError, match=words):
        build()


class _AddToSub(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.pattern = is_op("add")(wildcard(), wildcard())

    def callback(self, pre, post, node_map):
        return post.args[0] - post.args[1]


class _GrowAdd(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.pattern = is_op("add")(wildcard(), wildcard())

    def callback(self, pre, post, node_map):
        return post.args[0] + relay.negative(relay.negative(post.args[1]))


def test_bad_callbacks():
    x = relay.var("x")
    with pytest.raises(CallbackError, match="has no pattern"):
        rewrite(DFPatternCallback(), x)
    with pytest.raises(CallbackError, match="callback #1 is a str"):
        rewrite([_AddToSub(), "add"], x)
    with pytest.raises(CallbackError, match="not int"):
        rewrite(3, x)

    class ReturnsNothing(_AddToSub):
        def callback(self, pre, post, node_map):
            return None

    with pytest.raises(CallbackError, match=r"ReturnsNothing.callback returned NoneType.*add"):
        rewrite(ReturnsNothing(), x + x)
    with pytest.raises(CallbackError, match="check must be callable"):
        conv_relu().partition(x, check="yes")

    class NoCallback(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = is_op("add")(wildcard(), wildcard())

    with pytest.raises(NotImplementedError, match="NoCallback must override callback"):
        rewrite(NoCallback(), x + x)


def test_callbacks_that_never_settle_hit_the_limit():
    x, y = relay.var("x"), relay.var("y")
    with pytest.raises(RewriteLimitError, match=r"\(_GrowAdd\) 100 times.*undo each other"):
        rewrite(_GrowAdd(), x + y)
    # rewritten once, then nothing matches: a fixed point after two runs
    assert rewrite([_AddToSub(), _GrowAdd()], x + y).op.name == "subtract"


def test_partitioning_with_a_function_pattern_warns_and_changes_nothing():
    x = relay.var("x")
    func = relay.Function([x], x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert FunctionPattern(None, wildcard()).partition(func) is func
    assert "not called" in str(caught[0].message)


# --- types -------------------------------------------------------------------------------


def test_type_patterns_type_untyped_calls():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w)
    assert is_op("nn.conv2d")(wildcard(), wildcard()).has_shape([1, 4, 6, 6]).match(conv)
    assert not is_op("nn.conv2d")(wildcard(), wildcard()).has_shape([1, 4, 8, 8]).match(conv)


def test_require_type_gives_callbacks_typed_programs_in_their_module():
    seen = []

    class Record(DFPatternCallback):
        def __init__(self):
            super().__init__(require_type=True)
            self.pattern = is_op("nn.relu")(wildcard())

        def callback(self, pre, post, node_map):
            seen.append(pre.checked_type)
            return post

    x = relay.var("x", shape=(2, 5), dtype="float16")
    mod = relay.IRModule()
    y = relay.var("y", shape=(2, 5), dtype="float16")
    mod["double"] = relay.Function([y], y + y)
    program = relay.nn.relu(relay.Call(mod.get_global_var("double"), [x]))
    rewrite(Record(), program, mod)
    assert seen and seen[0] == relay.TensorType((2, 5), "float16")


# --- the pattern API ----------------------------------------------------------------------


def test_arithmetic_builds_calls_of_the_operators():
    a, b = wildcard(), wildcard()
    for pat, name in ((a + b, "add"), (a - b, "subtract"), (a * b, "multiply"),
                      (a / b, "divide")):
        assert isinstance(pat, CallPattern) and pat.op.expr.name == name
        assert pat.args == (a, b)
    x, y = relay.var("x"), relay.var("y")
    assert (a / b).match(x / y) and not (a / b).match(x * y)


def test_dominates_method_defaults_the_path_to_anything():
    child = is_op("add")(wildcard(), wildcard())
    pat = child.dominates(is_op("nn.conv2d")(wildcard(), wildcard()))
    assert isinstance(pat, DominatorPattern) and pat.child is child
    conv = relay.nn.conv2d(relay.var("x"), relay.var("w"))
    assert pat.match(relay.nn.relu(conv) + relay.tanh(relay.exp(conv)))


def test_printer_names_shared_and_self_referencing_nodes():
    x = wildcard()
    assert str(x + x) == "add($1=*, $1)"
    hole = wildcard()
    casts = is_op("cast")(hole)
    hole.redirect_to(casts | is_var("x"))
    assert str(casts) == "$1=cast(*->($1 | %x))"
    assert str(is_constant().has_attr({"a": 1})) == "const.has_attr({'a': 1})"


def test_visitor_visits_each_node_once_in_tvms_order():
    class Names(DFPatternVisitor):
        def __init__(self):
            super().__init__()
            self.seen = []

        def visit_call_pattern(self, p):
            self.seen.append("call")
            super().visit_call_pattern(p)

        def visit_wildcard_pattern(self, p):
            self.seen.append("*")
            super().visit_wildcard_pattern(p)

        def visit_expr_pattern(self, p):
            self.seen.append(p.expr.name)

    shared = wildcard()
    names = Names()
    names.visit(is_op("add")(shared, is_op("nn.relu")(shared)) | shared)
    assert names.seen == ["call", "add", "*", "call", "nn.relu"]
    assert len(names.visited) == 6


# --- size and depth -------------------------------------------------------------------------


def _chain(length):
    """x -> exp -> relu -> exp -> relu ... (``length`` calls)."""
    expr = relay.var("x", shape=(2,), dtype="float32")
    for k in range(length):
        expr = relay.nn.relu(expr) if k % 2 else relay.exp(expr)
    return expr


@pytest.fixture(scope="module")
def deep_chain():
    return _chain(DEEP)


class _ExpReluToSigmoid(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.x = wildcard()
        self.pattern = is_op("nn.relu")(is_op("exp")(self.x))

    def callback(self, pre, post, node_map):
        return relay.sigmoid(node_map[self.x][0])


def test_deep_chain_match_rewrite_partition_explain(deep_chain):
    pat = is_op("nn.relu")(is_op("exp")(wildcard()))
    assert pat.match(deep_chain)
    out = rewrite(_ExpReluToSigmoid(), deep_chain)
    for _ in range(DEEP // 2):
        assert out.op.name == "sigmoid"
        out = out.args[0]
    assert isinstance(out, relay.Var)
    part = pat.partition(deep_chain)
    assert part.op.attrs["PartitionedFromPattern"] == "exp_nn.relu_"
    why = explain_match(is_op("nn.relu")(is_op("nn.relu")(wildcard())), deep_chain)
    assert why.kind == "op"
    assert has_dtype("float32").match(deep_chain)


def test_deep_self_referencing_pattern():
    expr = relay.var("x")
    for _ in range(DEEP):
        expr = relay.cast(expr, "float32")
    hole = wildcard()
    casts = is_op("cast")(hole)
    hole.redirect_to(casts | is_var("x"))
    assert casts.match(expr)
    assert not casts.match(relay.cast(relay.exp(expr.args[0]), "float32"))
    # grouping moved to a large stack part way: numbering starts afresh there
    part = casts.partition(expr)
    assert [p.name_hint for p in part.op.params] == ["FunctionVar_0_0"]
    assert part.op.attrs["PartitionedFromPattern"] == "cast_" * DEEP


def test_deep_dominator_path():
    conv = relay.nn.conv2d(relay.var("x"), relay.var("w"))
    branch = conv
    for _ in range(DEEP):
        branch = relay.nn.relu(branch)
    pat = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), is_op("nn.relu")(wildcard()),
                    is_op("add")(wildcard(), wildcard()))
    assert pat.match(branch + conv)
    assert not pat.match(branch + relay.tanh(conv))
    assert explain_match(pat, branch + relay.tanh(conv)).kind == "dominator-path"


def _counting(matcher):
    count = [0]
    visit = matcher.visit

    def counted(p, e):
        count[0] += 1
        return visit(p, e)

    matcher.visit = counted
    return count


def _diamond_chain(diamonds):
    conv = relay.nn.conv2d(relay.var("x"), relay.var("w"))
    node = conv
    for _ in range(diamonds):
        node = relay.nn.relu(node) + relay.tanh(node)
    return relay.add(relay.exp(node), conv)


def test_dominator_paths_through_diamonds_cost_linear_visits():
    pat = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard()(None),
                    is_op("add")(wildcard(), wildcard()))
    counts = []
    for diamonds in (20, 40):
        program = _diamond_chain(diamonds)
        matcher = DFPatternMatcher(program)
        count = _counting(matcher)
        assert matcher.match(pat, program)
        counts.append(count[0])
    # 2**20 paths: a walk that revisited shared nodes would be astronomically slower
    assert counts[1] <= 2.2 * counts[0]


def test_grouping_costs_linear_pattern_visits():
    pat = is_op("nn.relu")(is_op("exp")(wildcard()) | is_op("tanh")(wildcard()))
    counts = []
    for length in (2_000, 4_000):
        program = _chain(length)
        grouper = PatternGrouper()
        original = DFPatternMatcher.visit
        count = [0]

        def counted(self, p, e, original=original, count=count):
            count[0] += 1
            return original(self, p, e)

        DFPatternMatcher.visit = counted
        try:
            groups = grouper.group_matches(pat, program)
        finally:
            DFPatternMatcher.visit = original
        assert len(groups) == length // 2
        counts.append(count[0])
    assert counts[1] == 2 * counts[0]


def test_alternatives_on_the_chain():
    pat = AltPattern(is_op("exp")(wildcard()), is_op("tanh")(wildcard()))
    assert pat.match(relay.tanh(relay.var("x")))
    assert not pat.match(relay.nn.relu(relay.var("x")))
