"""The pattern language, as TVM v0.18's test_dataflow_pattern.py uses it.

Every case of TVM's file that needs no code generation, rewritten here with
TVM-style imports: pattern nodes, matching (operators, calls, commutation,
functions, if/let, tuples, types, attributes, dominators), rewriting to a
fixed point, and partitioning (function names, constant embedding, fuzzy
arguments, checks).  The case TVM has that relaypass cannot run (the prelude's
``Match``) is listed in docs/coming-from-relay.md.
"""
# ruff: noqa: F405  (TVM's star import of the pattern language)
import numpy as np

import relaypass as tvm
from relaypass import relay
from relaypass.relay.build_module import bind_params_by_name
from relaypass.relay.dataflow_pattern import *  # noqa: F403
from relaypass.relay.testing import run_opt_pass

# TOpPattern values (TVM's OpPatternKind)
ELEMWISE = 0
BROADCAST = 1
INJECTIVE = 2


# --- pattern nodes ----------------------------------------------------------------------


def test_expr_pattern_holds_its_expression():
    pat = is_expr(relay.var("x", shape=(4, 1)))
    assert isinstance(pat, ExprPattern)
    assert isinstance(pat.expr, relay.Var)


def test_var_pattern_keeps_its_name():
    pat = is_var("x")
    assert isinstance(pat, VarPattern)
    assert pat.name == "x"


def test_constant_and_wildcard_builders():
    assert isinstance(is_constant(), ConstantPattern)
    assert isinstance(wildcard(), WildcardPattern)


def test_call_pattern_from_calling_a_pattern():
    a, b = wildcard(), wildcard()
    call = is_op("add")(a, b)
    assert isinstance(call, CallPattern)
    assert call.args[0] is a and call.args[1] is b
    assert all(isinstance(arg, WildcardPattern) for arg in call.args)


def test_function_pattern_fields():
    a, b = wildcard(), wildcard()
    body = is_op("add")(a, b)
    func = FunctionPattern([a, b], body)
    assert isinstance(func, FunctionPattern)
    assert isinstance(func.params[0], WildcardPattern)
    assert isinstance(func.params[1], WildcardPattern)
    assert isinstance(func.body, CallPattern)
    assert all(isinstance(arg, WildcardPattern) for arg in func.body.args)


def test_tuple_pattern_fields():
    tup = is_tuple([wildcard(), wildcard()])
    assert isinstance(tup, TuplePattern)
    assert all(isinstance(f, WildcardPattern) for f in tup.fields)


def test_tuple_get_item_pattern_fields():
    item = is_tuple_get_item(is_tuple([wildcard(), wildcard()]), 1)
    assert isinstance(item, TupleGetItemPattern)
    assert isinstance(item.tuple, TuplePattern)
    assert all(isinstance(f, WildcardPattern) for f in item.tuple.fields)


def test_alternative_from_or():
    assert isinstance(is_op("add") | is_op("subtract"), AltPattern)


def test_type_pattern_holds_its_type():
    ttype = relay.TensorType((10, 10), "float32")
    pat = has_type(ttype)
    assert isinstance(pat, TypePattern)
    assert pat.type == ttype


def test_dtype_pattern_holds_its_dtype():
    pat = has_dtype("float16")
    assert isinstance(pat, DataTypePattern)
    assert pat.dtype == "float16"


def test_shape_pattern_holds_its_shape():
    shape = [tvm.tir.IntImm("int32", 10), tvm.tir.IntImm("int32", 10)]
    pat = has_shape(shape)
    assert isinstance(pat, ShapePattern)
    tvm.ir.assert_structural_equal(pat.shape, shape)


def test_attr_pattern_holds_its_attributes():
    pat = is_op("add").has_attr({"TOpPattern": ELEMWISE})
    assert isinstance(pat, AttrPattern)
    assert pat.attrs["TOpPattern"] == ELEMWISE


def test_if_pattern_fields():
    x, y = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(x, y), x, y)
    assert isinstance(pat, IfPattern)
    assert isinstance(pat.cond, CallPattern)
    assert isinstance(pat.true_branch, VarPattern)
    assert isinstance(pat.false_branch, VarPattern)


def test_let_pattern_fields():
    x, y, bound = is_var("x"), is_var("y"), is_var("let")
    pat = is_let(bound, is_op("less")(x, y), bound)
    assert isinstance(pat, LetPattern)
    assert isinstance(pat.var, VarPattern)
    assert isinstance(pat.value, CallPattern)
    assert isinstance(pat.body, VarPattern)


# --- matching -----------------------------------------------------------------------------


def test_operator_matches_itself_only():
    assert is_op("add").match(relay.op.op.get("add"))
    assert not is_op("add").match(relay.op.op.get("subtract"))


def test_alternative_of_operators():
    either = is_op("add") | is_op("subtract")
    assert either.match(relay.op.op.get("add"))
    assert either.match(relay.op.op.get("subtract"))


def test_add_and_multiply_match_swapped_arguments():
    x, y = relay.var("x"), relay.var("y")
    add = is_op("add")(is_var("x"), is_var("y"))
    assert add.match(x + y)
    assert add.match(y + x)
    mul = is_op("multiply")(is_var("x"), is_var("y"))
    assert mul.match(x * y)
    assert mul.match(y * x)


def test_subtract_and_divide_do_not_commute():
    x, y = relay.var("x"), relay.var("y")
    sub = is_op("subtract")(is_var("x"), is_var("y"))
    assert sub.match(x - y)
    assert not sub.match(y - x)
    div = is_op("divide")(is_var("x"), is_var("y"))
    assert div.match(x / y)
    assert not div.match(y / x)


def test_call_patterns():
    x, y = relay.var("x"), relay.var("y")
    assert is_op("add")(wildcard(), wildcard()).match(x + y)
    any_call = wildcard()(None)
    assert any_call.match(relay.op.nn.relu(x))
    assert any_call.match(relay.op.add(x, y))
    assert not is_op("add")(wildcard(), wildcard()).match(x - y)


def test_function_patterns():
    x, y = relay.var("x"), relay.var("y")
    a, b = wildcard(), wildcard()
    pat = FunctionPattern([a, b], a + b)
    assert pat.match(relay.Function([x, y], x + y))
    assert not pat.match(relay.Function([x, y], x - y))
    any_function = FunctionPattern(None, wildcard())
    assert any_function.match(relay.Function([x], x))
    assert any_function.match(relay.Function([x, y], x + y))


def test_if_patterns():
    px, py = is_var("x"), is_var("y")
    pat = is_if(is_op("less")(px, py), px, py)
    x, y = relay.var("x"), relay.var("y")
    assert pat.match(relay.expr.If(x < y, x, y))
    assert not pat.match(relay.expr.If(x > y, x, y))
    assert not pat.match(relay.expr.If(x < y, y, x))


def test_let_patterns():
    px, py, pv = is_var("x"), is_var("y"), is_var("let")
    pat = is_let(pv, is_op("less")(px, py), pv)
    x, y, v = relay.var("x"), relay.var("y"), relay.var("let")
    assert pat.match(relay.expr.Let(v, x < y, v))
    assert not pat.match(relay.expr.Let(v, x > y, v))
    assert not pat.match(relay.expr.Let(v, x < y, v * x))


def _relu_of_conv_maybe_biased():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("nn.relu")(conv.optional(lambda c: is_op("nn.bias_add")(c, wildcard())))


def test_optional_matches_with_and_without_the_option():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    pat = _relu_of_conv_maybe_biased()
    assert pat.match(relay.op.nn.relu(relay.op.nn.conv2d(x, w)))
    assert pat.match(relay.op.nn.relu(relay.op.nn.bias_add(relay.op.nn.conv2d(x, w), b)))

    chain = is_op("nn.conv2d")(wildcard(), wildcard())
    chain = chain.optional(is_op("nn.relu")).optional(is_op("tanh"))
    conv = relay.op.nn.conv2d(x, w)
    relu = relay.op.nn.relu(conv)
    tanh = relay.op.tanh(conv)
    assert chain.match(conv)
    assert chain.match(relu)
    assert chain.match(tanh)
    assert chain.match(relay.op.tanh(relu))
    assert not chain.match(relay.op.nn.relu(tanh))


def test_optional_rejects_other_graphs():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    pat = _relu_of_conv_maybe_biased()
    assert not pat.match(relay.op.tanh(relay.op.nn.conv2d(x, w)))
    assert not pat.match(relay.op.tanh(relay.op.nn.dense(x, w)))
    assert not pat.match(relay.op.nn.relu(relay.op.nn.bias_add(relay.op.nn.dense(x, w), b)))
    assert not pat.match(relay.op.nn.relu(relay.op.nn.conv2d(x, w) + w))


def test_constant_pattern_needs_a_bound_weight():
    pat = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), is_constant()), wildcard())
    x = relay.var("x", shape=(1, 3, 224, 224))
    w = relay.var("w", shape=(3, 3, 3, 3))
    b = relay.var("b", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.Function([x, w, b], relay.op.nn.bias_add(
        relay.op.nn.conv2d(x, w), b)))
    assert not pat.match(mod["main"].body)
    weights = {"w": tvm.nd.array(np.ones(shape=(3, 3, 3, 3)))}
    mod["main"] = bind_params_by_name(mod["main"], weights)
    assert pat.match(mod["main"].body)


def test_tuple_patterns():
    x, y = relay.var("x"), relay.var("y")
    add = relay.op.op.get("add")
    tup = relay.expr.Tuple((x, y, add))
    fields = is_tuple((is_var("x"), wildcard(), is_op("add")))
    assert fields.match(tup)
    assert is_tuple_get_item(fields, 1).match(relay.expr.TupleGetItem(tup, 1))
    any_field = is_tuple_get_item(fields)
    for k in range(3):
        assert any_field.match(relay.expr.TupleGetItem(tup, k))
    concat = is_op("concatenate")(is_tuple(None))
    assert concat.match(relay.op.concatenate(relay.expr.Tuple((x,)), axis=0))
    assert concat.match(relay.op.concatenate(relay.expr.Tuple((x, y)), axis=0))
    assert concat.match(relay.op.concatenate(relay.expr.Tuple((x, y, add)), axis=0))


def test_tuple_patterns_that_fail():
    x, y = relay.var("x"), relay.var("y")
    add = relay.op.op.get("add")
    tup = relay.expr.Tuple((x, y, add))
    assert not is_tuple((is_var("x"), wildcard(), is_op("add"), wildcard())).match(tup)
    fields = is_tuple((is_var("x"), wildcard(), is_op("add")))
    assert not is_tuple_get_item(fields, 1).match(relay.expr.TupleGetItem(tup, 2))


def test_type_dtype_and_shape_patterns():
    f32 = relay.var("x", shape=(10, 10), dtype="float32")
    i32 = relay.var("x", shape=(10, 10), dtype="int32")
    assert has_type(relay.TensorType((10, 10), "float32")).match(f32)
    assert not has_type(relay.TensorType((10, 10), "float32")).match(i32)
    assert has_dtype("float32").match(f32)
    assert not has_dtype("float32").match(i32)
    assert has_shape((10, 10)).match(f32)
    assert not has_shape((10, 5)).match(i32)


def test_operator_attributes():
    x, y = relay.var("x"), relay.var("y")
    broadcast_add = is_op("add").has_attr({"TOpPattern": BROADCAST})(wildcard(), wildcard())
    assert broadcast_add.match(x + y)
    assert not broadcast_add.match(x - y)
    assert not broadcast_add.match(relay.Let(relay.var("z"), x + y, relay.var("z")))
    elemwise_dense = is_op("nn.dense").has_attr({"TOpPattern": ELEMWISE})(wildcard(), wildcard())
    assert not elemwise_dense.match(relay.op.nn.dense(x, y))


def test_function_attributes():
    pat = wildcard().has_attr({"Composite": "add"})
    x, y = relay.var("x"), relay.var("y")
    assert pat.match(relay.Function([x, y], x + y).with_attr("Composite", "add"))
    assert not pat.match(relay.Function([x, y], x + y).with_attr("RandomTest", "add"))
    assert not pat.match(relay.Function([x, y], x + y).with_attr("Composite", "conv_bias"))


def test_call_attributes():
    x, y = relay.var("x"), relay.var("y")
    nchw = is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"data_layout": "NCHW"})
    assert nchw.match(relay.op.nn.conv2d(x, y))
    kernel = is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"kernel_size": [3, 3]})
    assert kernel.match(relay.op.nn.conv2d(x, y, kernel_size=[3, 3]))

    wanted = {"call_attr": "attr"}
    with_attr = wildcard()(wildcard()).has_attr(wanted)
    a, b = relay.Var("a"), relay.Var("b")
    assert with_attr.match(relay.Call(a, [b], attrs=tvm.ir.make_node("DictAttrs", **wanted)))
    no_requirement = wildcard()(wildcard()).has_attr({})
    assert no_requirement.match(relay.Call(a, [b], attrs=tvm.ir.make_node("DictAttrs")))
    assert no_requirement.match(relay.Call(a, [b], attrs=tvm.ir.make_node("DictAttrs", **wanted)))


def test_call_attributes_that_differ():
    x, y = relay.var("x"), relay.var("y")
    conv = relay.op.nn.conv2d(x, y)
    assert not is_op("nn.conv2d")(wildcard(), wildcard()).has_attr(
        {"data_layout": "NHWC"}).match(conv)
    assert not is_op("nn.conv2d")(wildcard(), wildcard()).has_attr(
        {"RandomAttr": "NCHW"}).match(conv)
    kernel = is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"kernel_size": [3, 3]})
    assert not kernel.match(relay.op.nn.conv2d(x, y, kernel_size=[2, 1]))

    with_attr = wildcard()(wildcard()).has_attr({"call_attr": "attr"})
    a, b = relay.Var("a"), relay.Var("b")
    assert not with_attr.match(relay.Call(a, [b]))
    for attrs in ({"wrong": "attr"}, {"call_attr": "wrong"}, {}):
        call = relay.Call(a, [b], attrs=tvm.ir.make_node("DictAttrs", **attrs))
        assert not with_attr.match(call)


def test_dtype_attribute_of_a_cast():
    cast = is_op("cast")(wildcard()).has_attr({"dtype": "float32"})
    assert cast.match(relay.op.cast(relay.var("x"), "float32"))


def _diamond_pattern():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("add")(is_op("nn.relu")(conv), is_op("nn.leaky_relu")(conv))


def test_diamond_needs_one_shared_conv():
    inp, weight = relay.var("input"), relay.var("weight")
    conv = relay.op.nn.conv2d(inp, weight)
    relu = relay.op.nn.relu(conv)
    leaky = relay.op.nn.leaky_relu(conv, alpha=0)
    pat = _diamond_pattern()
    assert pat.match(relu + leaky)
    assert not pat.match(leaky)
    assert not pat.match(relu)


def test_diamond_of_two_convs_is_not_a_diamond():
    conv1 = relay.op.nn.conv2d(relay.var("input1"), relay.var("weight1"))
    conv2 = relay.op.nn.conv2d(relay.var("input2"), relay.var("weight2"))
    out = relay.op.nn.relu(conv1) + relay.op.nn.leaky_relu(conv2, alpha=0)
    assert not _diamond_pattern().match(out)


def test_dominator_parent_is_one_node():
    pat = dominates(is_op("nn.conv2d")(wildcard(), wildcard()),
                    is_op("nn.relu")(wildcard()),
                    is_op("add")(wildcard(), wildcard()))
    x, w = relay.var("x"), relay.var("w")
    top = relay.op.nn.conv2d(x, w)
    lower = relay.op.nn.conv2d(relay.op.tanh(top), w)
    # the left branch reaches a conv through a relu, the right another conv: two parents
    assert not pat.match(relay.add(relay.op.nn.relu(lower), relay.op.nn.relu(top)))
    assert not pat.match(relay.add(lower, relay.op.nn.relu(top)))


def _elemwise_diamond(path=None):
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    if path is None:
        path = wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard())
    return dominates(conv, path, is_op("add")(wildcard(), wildcard()))


def test_dominator_over_classic_deep_and_single_branch_diamonds():
    pat = _elemwise_diamond()
    inp, weight = relay.var("input"), relay.var("weight")
    conv = relay.op.nn.conv2d(inp, weight)
    two_relus = relay.op.nn.relu(relay.op.nn.relu(conv))
    leaky = relay.op.nn.leaky_relu(conv, alpha=0)
    assert pat.match(two_relus + leaky)
    assert pat.match(relay.op.tanh(two_relus) + leaky)
    assert pat.match(two_relus + relay.op.tanh(two_relus))


def test_dominator_with_a_fuzzy_nested_path():
    path = (wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard())
            | is_op("add")(wildcard(), wildcard()))
    pat = _elemwise_diamond(path)
    conv = relay.op.nn.conv2d(relay.var("input"), relay.var("weight"))
    relu = relay.op.nn.relu(conv)
    out = relay.op.tanh(relu + relu) + relay.op.nn.leaky_relu(conv, alpha=0)
    assert pat.match(out)


def test_dominator_built_with_the_method():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    elemwise = wildcard().has_attr({"TOpPattern": ELEMWISE})(None)
    broadcast = wildcard().has_attr({"TOpPattern": BROADCAST})(None)
    injective = wildcard().has_attr({"TOpPattern": INJECTIVE})(wildcard())
    pat = injective.dominates(conv, elemwise | broadcast)
    x = relay.op.nn.conv2d(relay.var("input"), relay.var("weight"))
    x = relay.op.nn.relu(relay.op.nn.bias_add(x, relay.var("bias")))
    assert pat.match(relay.op.reshape(x, newshape=[-1, 2, 8]))


def test_dominator_mismatches():
    pat = _elemwise_diamond()
    conv1 = relay.op.nn.conv2d(relay.var("input1"), relay.var("weight1"))
    conv2 = relay.op.nn.conv2d(relay.var("input2"), relay.var("weight2"))
    assert not pat.match(relay.op.nn.relu(conv1) + relay.op.nn.leaky_relu(conv2, alpha=0))

    inp, weight = relay.var("input"), relay.var("weight")
    conv = relay.op.nn.conv2d(inp, weight)
    relu = relay.op.nn.relu(conv)
    # an add on the path is not elementwise
    assert not pat.match((relu + relu) + relay.op.nn.leaky_relu(conv, alpha=0))
    # a branch starting at the input, not at the conv
    assert not pat.match(relay.op.nn.relu(inp) + relay.op.nn.leaky_relu(conv, alpha=0))
    # no conv at all
    chain = relay.op.nn.relu(relay.op.nn.relu(inp))
    assert not pat.match(chain + relay.op.tanh(chain))


def _typed_diamond():
    inp = relay.var("input", relay.TensorType((1, 3, 12, 12), "float32"))
    weight = relay.var("weight", relay.TensorType((3, 3, 3, 3), "float32"))
    conv = relay.op.nn.conv2d(inp, weight)
    relus = relay.op.nn.relu(relay.op.nn.relu(conv))
    return relus + relay.op.nn.leaky_relu(conv, alpha=0)


def _typed_diamond_pattern(dtype, shape):
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    path = wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard()).has_dtype(dtype)
    child = is_op("add")(wildcard(), wildcard()).has_shape(shape)
    return dominates(conv, path, child)


def test_typed_dominator():
    assert _typed_diamond_pattern("float32", [1, 3, 10, 10]).match(_typed_diamond())
    assert not _typed_diamond_pattern("float32", [1, 1, 10, 10]).match(_typed_diamond())
    assert not _typed_diamond_pattern("float16", [1, 3, 10, 10]).match(_typed_diamond())


def test_diamond_with_an_extra_use_of_the_conv_is_not_matched():
    inp, weight = relay.var("input"), relay.var("weight")
    conv = relay.op.nn.conv2d(inp, weight)
    out = relay.op.nn.relu(conv) + relay.op.nn.leaky_relu(conv, alpha=0)
    assert not _diamond_pattern().match(out + conv)


# --- rewriting ----------------------------------------------------------------------------


class AddToSubtract(DFPatternCallback):
    def __init__(self, pattern=None):
        super().__init__()
        self.pattern = pattern or is_op("add")(wildcard(), wildcard())

    def callback(self, pre, post, node_map):
        return post.args[0] - post.args[1]


def test_rewrite_add_to_subtract():
    x, y = relay.var("x"), relay.var("y")
    out = rewrite(AddToSubtract(), x + y)
    assert is_op("subtract")(wildcard(), wildcard()).match(out)


def test_rewrite_add_of_a_called_function():
    x, w, y = relay.var("x"), relay.var("w"), relay.var("y")
    inp, weight = relay.var("input"), relay.var("weight")
    func = relay.Function([inp, weight], relay.op.nn.relu(relay.op.nn.conv2d(inp, weight)))
    out = rewrite(AddToSubtract(), func(x, w) + y)
    assert is_op("subtract")(wildcard(), wildcard()).match(out)


def test_rewrite_call_of_a_composite_function():
    x, y = relay.var("x"), relay.var("y")
    composite = relay.Function([x, y], x + y).with_attr("Composite", "add")
    a, b = relay.var("a"), relay.var("b")
    program = relay.abs(relay.Call(composite, [a, b]))

    class Inline(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = wildcard().has_attr({"Composite": "add"})(wildcard(), wildcard())

        def callback(self, pre, post, node_map):
            return post.args[0] + post.args[1]

    out = rewrite(Inline(), program)
    assert is_op("abs")(is_op("add")(wildcard(), wildcard())).match(out)


def test_rewrite_returning_post_changes_nothing():
    class Identity(DFPatternCallback):
        def __init__(self, pattern):
            super().__init__()
            self.pattern = pattern

        def callback(self, pre, post, node_map):
            return post

    x, y = relay.var("x"), relay.var("y")
    twice = relay.add(y, y)
    n0 = relay.add(x, twice)
    program = relay.add(relay.add(x, n0), n0)
    a, b = wildcard(), wildcard()
    p0 = is_op("add")(a, b)
    pat = is_op("add")(p0, is_op("add")(p0, a))
    tvm.ir.assert_structural_equal(program, rewrite(Identity(pat), program))


class BatchnormCallback(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.x = wildcard()
        self.var = wildcard()
        self.mean = wildcard()
        self.beta = wildcard()
        self.gamma = wildcard()
        self.eps = is_constant()
        self.pattern = (self.gamma * (self.x - self.mean)
                        / is_op("sqrt")(self.var + self.eps) + self.beta)

    def callback(self, pre, post, node_map):
        def first(p):
            return node_map[p][0]

        eps = first(self.eps).data.numpy().item()
        return relay.op.nn.batch_norm(first(self.x), first(self.gamma), first(self.beta),
                                      first(self.mean), first(self.var), epsilon=eps)[0]


# The callback reads epsilon from a float32 constant; TVM compares float attributes with a
# tolerance of 1e-9, relaypass's structural equality exactly, so the expected programs use
# the float32 value.
EPS = float(np.float32(1e-5))


def _bn_vars():
    return [relay.var(n) for n in ("x", "var", "mean", "beta", "gamma")]


def _bn_expr(x, var, mean, beta, gamma, eps=None, final=None):
    eps = relay.const(1e-5) if eps is None else eps
    scaled = gamma * (x - mean) / relay.op.sqrt(var + eps)
    return scaled + beta if final is None else final(scaled, beta)


def test_fuse_batchnorm():
    x, var, mean, beta, gamma = _bn_vars()
    out = rewrite(BatchnormCallback(), _bn_expr(x, var, mean, beta, gamma))
    expected = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)[0]
    tvm.ir.assert_structural_equal(out, expected)


def test_no_fuse_when_beta_is_subtracted():
    x, var, mean, beta, gamma = _bn_vars()
    fake = _bn_expr(x, var, mean, beta, gamma, final=lambda s, b: s - b)
    tvm.ir.assert_structural_equal(rewrite(BatchnormCallback(), fake), fake)


def test_fuse_two_batchnorms():
    x, var, mean, beta, gamma = _bn_vars()
    inner = _bn_expr(x, var, mean, beta, gamma)
    outer = _bn_expr(inner, var, mean, beta, gamma)
    bn = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)[0]
    bn2 = relay.op.nn.batch_norm(bn, gamma, beta, mean, var, epsilon=EPS)[0]
    tvm.ir.assert_structural_equal(rewrite(BatchnormCallback(), outer), bn2)


def test_fuse_only_the_real_batchnorm_of_two():
    x, var, mean, beta, gamma = _bn_vars()
    inner = _bn_expr(x, var, mean, beta, gamma, final=lambda s, b: s - b)
    outer = _bn_expr(inner, var, mean, beta, gamma)
    expected = relay.op.nn.batch_norm(inner, gamma, beta, mean, var, epsilon=EPS)[0]
    tvm.ir.assert_structural_equal(rewrite(BatchnormCallback(), outer), expected)


def test_fuse_batchnorm_written_in_other_orders():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    expected = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=EPS)[0]
    forms = [
        beta + gamma * (x - mean) / relay.op.sqrt(var + eps),  # add commuted
        (gamma * (x - mean)) / relay.op.sqrt(var + eps) + beta,  # divide after multiply
        gamma * ((x - mean) / relay.op.sqrt(var + eps)) + beta,  # multiply after divide
    ]
    for form in forms:
        tvm.ir.assert_structural_equal(rewrite(BatchnormCallback(), form), expected)


def _diamonds(inp, weight):
    """The four diamonds of TVM's dominator cases, as functions of input and weight."""
    def classic(i, w):
        conv = relay.op.nn.conv2d(i, w)
        return relay.op.nn.relu(relay.op.nn.relu(conv)) + relay.op.nn.leaky_relu(conv, alpha=0)

    def deeper(i, w):
        conv = relay.op.nn.conv2d(i, w)
        branch = relay.op.tanh(relay.op.nn.relu(relay.op.nn.relu(conv)))
        return branch + relay.op.nn.leaky_relu(conv, alpha=0)

    def single(i, w):
        relus = relay.op.nn.relu(relay.op.nn.relu(relay.op.nn.conv2d(i, w)))
        return relus + relay.op.tanh(relus)

    def nested(i, w):
        conv = relay.op.nn.conv2d(i, w)
        relu = relay.op.nn.relu(conv)
        return relay.op.tanh(relu + relu) + relay.op.nn.leaky_relu(conv, alpha=0)

    return [classic, deeper, single, nested]


def _fuzzy_diamond_pattern(inp=None, weight=None):
    conv = is_op("nn.conv2d")(inp or wildcard(), weight or wildcard())
    path = (wildcard().has_attr({"TOpPattern": ELEMWISE})(wildcard())
            | is_op("add")(wildcard(), wildcard()))
    return dominates(conv, path, is_op("add")(wildcard(), wildcard()))


def test_rewrite_four_diamonds_with_a_dominator_pattern():
    class DropDiamond(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.inp, self.weight = wildcard(), wildcard()
            self.pattern = _fuzzy_diamond_pattern(self.inp, self.weight)

        def callback(self, pre, post, node_map):
            return relay.op.nn.conv2d(node_map[self.inp][0], node_map[self.weight][0])

    inp, weight = relay.var("input"), relay.var("weight")
    out = inp
    for make in _diamonds(inp, weight):
        out = make(out, weight)
    expected = inp
    for _ in range(4):
        expected = relay.op.nn.conv2d(expected, weight)
    tvm.ir.assert_structural_equal(DropDiamond().rewrite(out), expected)


def _algebraic_simplify(expr):
    zero = is_expr(relay.const(0)) | is_expr(relay.const(0.0))
    one = is_expr(relay.const(1)) | is_expr(relay.const(1.0))

    class KeepX(DFPatternCallback):
        def __init__(self, build):
            super().__init__()
            self.x = wildcard()
            self.pattern = build(self.x)

        def callback(self, pre, post, node_map):
            return node_map[self.x][0]

    class KeepZero(KeepX):
        def __init__(self, build):
            DFPatternCallback.__init__(self)
            self.x = zero
            self.pattern = build(self.x)

    return rewrite([
        KeepX(lambda x: x + zero),
        KeepX(lambda x: x - zero),
        KeepX(lambda x: x * one),
        KeepX(lambda x: x / one),
        KeepZero(lambda z: z * wildcard()),
        KeepZero(lambda z: z / wildcard()),
    ], expr)


def test_algebraic_simplification_with_six_callbacks():
    x, y = relay.Var("x"), relay.Var("y")
    one, zero, onef, zerof = relay.const(1), relay.const(0), relay.const(1.0), relay.const(0.0)
    for expr in (x + zero, x + zerof, zero + x, zerof + x, x - zero, x - zerof,
                 x * one, x * onef, one * x, onef * x, x / one, x / onef):
        assert _algebraic_simplify(expr) == x
    assert _algebraic_simplify(x * zero) == zero
    assert _algebraic_simplify(x * zerof) == zerof
    assert _algebraic_simplify(zero / x) == zero
    assert _algebraic_simplify(zerof / x) == zerof
    messy = (x + zero * y) / one + (y * one) - zero / x
    tvm.ir.assert_structural_equal(_algebraic_simplify(messy), x + y)


def test_rewrite_once():
    class DropLastConcatInput(DFPatternCallback):
        def __init__(self, rewrite_once):
            super().__init__(rewrite_once=rewrite_once)
            self.pattern = is_op("concatenate")(None)

        def callback(self, pre, post, node_map):
            fields = post.args[0]
            kept = [fields[i] for i in range(len(fields) - 1)]
            if kept:
                return relay.op.concatenate(relay.expr.Tuple(kept), axis=0)
            return fields[0]

    class ReluAfterSoftmax(DFPatternCallback):
        def __init__(self, rewrite_once):
            super().__init__(rewrite_once=rewrite_once)
            self.pattern = is_op("nn.softmax")(None)

        def callback(self, pre, post, node_map):
            return relay.nn.relu(post)

    x, y, z = relay.var("x"), relay.var("y"), relay.var("z")
    concat = relay.op.concatenate(relay.expr.Tuple([x, y, z]), axis=0)
    two = relay.op.concatenate(relay.expr.Tuple([x, y]), axis=0)
    tvm.ir.assert_structural_equal(rewrite(DropLastConcatInput(False), concat), x)
    tvm.ir.assert_structural_equal(rewrite(DropLastConcatInput(True), concat), two)

    program = relay.nn.softmax(concat)
    out = rewrite([ReluAfterSoftmax(True), DropLastConcatInput(True)], program)
    tvm.ir.assert_structural_equal(out, relay.nn.relu(relay.nn.softmax(two)))
    out = rewrite([ReluAfterSoftmax(True), DropLastConcatInput(False)], program)
    tvm.ir.assert_structural_equal(out, relay.nn.relu(relay.nn.softmax(x)))


def _cast_chain():
    data = relay.var("data", relay.TensorType((2, 8), "float32"))
    feat = relay.nn.dense(data, relay.const(np.zeros((4, 8))))
    for _ in range(6):
        feat = relay.cast(feat, "float32")
    return feat


class ReluOnTop(DFPatternCallback):
    def __init__(self, pattern):
        super().__init__(rewrite_once=True)
        self.pattern = pattern

    def callback(self, pre, post, node_map):
        return relay.nn.relu(post)


def test_self_referencing_patterns():
    program = _cast_chain()
    expected = relay.nn.relu(program)

    dense = is_op("nn.dense")(wildcard(), wildcard())
    hole = wildcard()
    casts = is_op("cast")(hole)
    hole.redirect_to(casts | dense)
    tvm.ir.assert_structural_equal(rewrite(ReluOnTop(casts), program), expected)

    dense = is_op("nn.dense")(wildcard(), wildcard())
    hole = wildcard()
    casts = is_op("cast")(hole | dense)
    hole.redirect_to(casts)
    tvm.ir.assert_structural_equal(rewrite(ReluOnTop(casts), program), expected)

    dense = is_op("nn.dense")(wildcard(), wildcard())
    hole = wildcard()
    casts = is_op("cast")(dense | hole)
    hole.redirect_to(casts)
    tvm.ir.assert_structural_equal(rewrite(ReluOnTop(casts), program), expected)


def test_rewrite_function_with_fuzzy_body():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    x1, w1 = relay.var("x1"), relay.var("w1")
    pattern = FunctionPattern([wildcard(), wildcard()], wildcard())(wildcard(), wildcard())
    pattern = pattern + wildcard()
    func = relay.Function([x1, w1], relay.nn.conv2d(x1, w1))

    class ReplaceCall(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = pattern

        def callback(self, pre, post, node_map):
            return x + w

    out = rewrite(ReplaceCall(), func(x, w) + b + b)
    tvm.ir.assert_structural_equal(out, x + w + b)


# --- partitioning -------------------------------------------------------------------------


def _composite(params, body, name, **attrs):
    func = relay.Function(params, body)
    for key, value in attrs.items():
        func = func.with_attr(key, value)
    return func.with_attr("PartitionedFromPattern", name)


def test_partition_twice_with_composite_labels():
    conv_p = is_op("nn.conv2d")(wildcard(), wildcard())
    bias_p = is_op("nn.bias_add")(conv_p, wildcard())
    relu_p = is_op("nn.relu")(bias_p)

    x, w, b = relay.var("input"), relay.var("weight"), relay.var("bias")
    w2, b2 = relay.var("weight"), relay.var("bias")
    first = relay.op.nn.relu(relay.op.nn.bias_add(relay.op.nn.conv2d(x, w), b))
    program = relay.op.nn.bias_add(relay.op.nn.conv2d(first, w2), b2)
    for pat, label in ((relu_p, "conv_bias_relu"), (bias_p, "conv_bias")):
        program = pat.partition(program, {"Composite": label})

    i, k, c = relay.var("input"), relay.var("weight"), relay.var("bias")
    f0 = _composite([i, k, c], relay.op.nn.relu(relay.op.nn.bias_add(
        relay.op.nn.conv2d(i, k), c)), "nn.conv2d_nn.bias_add_nn.relu_",
        Composite="conv_bias_relu")
    i, k, c = relay.var("input"), relay.var("weight"), relay.var("bias")
    f1 = _composite([i, k, c], relay.op.nn.bias_add(relay.op.nn.conv2d(i, k), c),
                    "nn.conv2d_nn.bias_add_", Composite="conv_bias")
    tvm.ir.assert_structural_equal(program, f1(f0(x, w, b), w2, b2))


def test_partition_dominator():
    def diamond(i, w):
        conv = relay.op.nn.conv2d(i, w)
        return relay.op.nn.relu(relay.op.nn.relu(conv)) + relay.op.nn.leaky_relu(conv, alpha=0)

    inp, weight = relay.var("input"), relay.var("weight")
    partitioned = _elemwise_diamond().partition(diamond(inp * inp, weight * weight))
    i, w = relay.Var("input"), relay.Var("weight")
    func = _composite([i, w], diamond(i, w), "nn.conv2d_nn.relu_nn.relu_nn.leaky_relu_add_")
    tvm.ir.assert_structural_equal(partitioned, func(inp * inp, weight * weight))


def test_partition_four_diamonds():
    inp, weight = relay.var("input"), relay.var("weight")
    makers = _diamonds(inp, weight)
    program = inp
    for make in makers:
        program = make(program, weight)
    names = [
        "nn.conv2d_nn.relu_nn.relu_nn.leaky_relu_add_",
        "nn.conv2d_nn.relu_nn.relu_tanh_nn.leaky_relu_add_",
        "nn.conv2d_nn.relu_nn.relu_tanh_add_",
        "nn.conv2d_nn.relu_add_tanh_nn.leaky_relu_add_",
    ]
    expected = inp
    for make, name in zip(makers, names):
        i, w = relay.var("input"), relay.var("weight")
        expected = _composite([i, w], make(i, w), name)(expected, weight)
    tvm.ir.assert_structural_equal(_fuzzy_diamond_pattern().partition(program), expected)


def _bn_function(eps):
    xf, varf, meanf, betaf, gammaf = (relay.var(n) for n in ("xf", "varf", "meanf", "betaf",
                                                             "gammaf"))
    # parameters in the order the pattern's leaves are numbered
    return _composite([gammaf, xf, meanf, varf, betaf],
                      _bn_expr(xf, varf, meanf, betaf, gammaf, eps),
                      "subtract_multiply_add_sqrt_divide_add_")


def test_partition_batchnorm():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    partitioned = BatchnormCallback().pattern.partition(_bn_expr(x, var, mean, beta, gamma, eps))
    tvm.ir.assert_structural_equal(partitioned, _bn_function(eps)(gamma, x, mean, var, beta))


def test_partition_two_batchnorms_gives_two_functions():
    x, var, mean, beta, gamma = _bn_vars()
    eps = relay.const(1e-5)
    inner = _bn_expr(x, var, mean, beta, gamma, eps)
    outer = _bn_expr(inner, var, mean, beta, gamma, eps)
    inner_f, outer_f = _bn_function(eps), _bn_function(eps)
    expected = outer_f(gamma, inner_f(gamma, x, mean, var, beta), mean, var, beta)
    tvm.ir.assert_structural_equal(BatchnormCallback().pattern.partition(outer), expected)


def test_overlapping_matches_are_not_partitioned():
    item = TupleGetItemPattern(is_op("nn.batch_norm")(*[wildcard() for _ in range(5)]), 0)
    x, var, mean, beta, gamma = _bn_vars()
    bn = relay.op.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)
    program = bn[0] + bn[0]
    assert item.partition(program) == program


def test_match_used_outside_is_not_partitioned():
    pat = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))
    conv = relay.op.nn.conv2d(relay.var("input"), relay.var("weight"))
    program = relay.op.nn.relu(conv) + conv
    assert pat.partition(program) == program


def test_partition_tuple_of_any_length():
    x, y = relay.var("x"), relay.var("y")
    z = x + y
    pat = is_op("concatenate")(is_tuple(None))

    def concat(*fields):
        return relay.op.concatenate(relay.expr.Tuple(fields), axis=0)

    for inputs in ((x,), (x, y), (x, y, z)):
        params = [relay.var(f"p{k}") for k in range(len(inputs))]
        func = _composite(params, concat(*params), "Tuple_concatenate_")
        tvm.ir.assert_structural_equal(pat.partition(concat(*inputs)), func(*inputs))


def test_partition_call_of_function_with_any_parameters():
    pat = FunctionPattern(None, wildcard() + wildcard())(None) + wildcard()
    x, y, z, b = (relay.var(n) for n in "xyzb")
    xp, yp, zp = relay.var("xp"), relay.var("yp"), relay.var("zp")

    def expected(call):
        count = len(call.op.params)
        params = [relay.var(str(k)) for k in range(count + 1)]
        name = "add_FunctionCall_add_" if count < 3 else "add_add_FunctionCall_add_"
        body = relay.Call(call.op, params[:-1]) + params[-1]
        return _composite(params, body, name)(*([x, y, z][:count] + [b]))

    for call in (relay.Function([xp], xp + xp)(x),
                 relay.Function([xp, yp], xp + yp)(x, y),
                 relay.Function([xp, yp, zp], xp + yp + zp)(x, y, z)):
        tvm.ir.assert_structural_equal(pat.partition(call + b), expected(call))


def test_partition_with_a_check():
    pat = is_op("nn.relu")(is_op("nn.conv2d")(is_var("input"), wildcard()))

    def nchw_only(pre):
        return pre.args[0].attrs.data_layout == "NCHW"

    x, w = relay.var("input"), relay.var("weight")
    xf, wf = relay.var("input"), relay.var("weight")
    func = _composite([xf, wf], relay.op.nn.relu(relay.op.nn.conv2d(xf, wf)),
                      "nn.conv2d_nn.relu_")
    program = relay.op.nn.relu(relay.op.nn.conv2d(x, w))
    tvm.ir.assert_structural_equal(pat.partition(program, check=nchw_only), func(x, w))
    nhwc = relay.op.nn.relu(relay.op.nn.conv2d(x, w, data_layout="NHWC"))
    assert pat.partition(nhwc, check=nchw_only) == nhwc


def test_partition_check_reads_types():
    pat = is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))

    def check(pre):
        conv = pre.args[0]
        return conv.attrs.data_layout == "NCHW" and bool(conv.checked_type.shape[0] == 1)

    def typed_relu(batch, layout):
        x = relay.var("input", shape=(batch, 10, 10, 10))
        w = relay.var("weight", shape=(10, 10, 3, 3))
        relu = relay.op.nn.relu(relay.op.nn.conv2d(x, w, data_layout=layout))
        return run_opt_pass(relu, relay.transform.InferType())

    accepted = pat.partition(typed_relu(1, "NCHW"), check=check)
    assert accepted.op.attrs["PartitionedFromPattern"] == "nn.conv2d_nn.relu_"
    for relu in (typed_relu(1, "NHWC"), typed_relu(2, "NCHW")):
        assert relu == pat.partition(relu, check=check)


def _conv_bias_relu(x, w, b):
    return relay.op.nn.relu(relay.op.nn.bias_add(relay.op.nn.conv2d(x, w), b))


def test_partition_optional_patterns():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    maybe_bias = is_op("nn.conv2d")(wildcard(), wildcard()).optional(
        lambda c: is_op("nn.bias_add")(c, wildcard()))
    pattern1 = is_op("nn.relu")(maybe_bias)
    bias = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard())
    pattern2 = bias.optional(lambda c: is_op("nn.relu")(c))
    program = _conv_bias_relu(x, w, b)
    xf, wf, bf = relay.var("x"), relay.var("w"), relay.var("b")
    func = _composite([xf, wf, bf], _conv_bias_relu(xf, wf, bf), "nn.conv2d_nn.bias_add_nn.relu_")
    for pat in (pattern1, pattern2):
        assert pat.match(program)
        tvm.ir.assert_structural_equal(func(x, w, b), pat.partition(program))


def test_partition_call_of_a_matching_function():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    x1, w1 = relay.var("x1"), relay.var("w1")
    px, pw = wildcard(), wildcard()
    conv_fn = FunctionPattern([px, pw], is_op("nn.conv2d")(px, pw))
    pattern = conv_fn(wildcard(), wildcard()) + wildcard()
    func = relay.Function([x1, w1], relay.nn.conv2d(x1, w1))
    x2, w2, b2 = relay.var("x2"), relay.var("w2"), relay.var("b2")
    outer = _composite([x2, w2, b2], func(x2, w2) + b2, "nn.conv2d_FunctionCall_add_")
    tvm.ir.assert_structural_equal(pattern.partition(func(x, w) + b + b), outer(x, w, b) + b)


def test_partition_alternative_function_patterns():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    x1, w1 = relay.var("x1"), relay.var("w1")
    px, pw = wildcard(), wildcard()
    sigmoid_fn = FunctionPattern([px, pw], is_op("sigmoid")(is_op("nn.conv2d")(px, pw)))
    relu_fn = FunctionPattern([px, pw], is_op("nn.relu")(is_op("nn.conv2d")(px, pw)))
    pattern = sigmoid_fn(wildcard(), wildcard()) | relu_fn(wildcard(), wildcard())
    func = relay.Function([x1, w1], relay.nn.relu(relay.nn.conv2d(x1, w1)))
    x2, w2 = relay.var("x2"), relay.var("w2")
    outer = _composite([x2, w2], func(x2, w2), "nn.conv2d_nn.relu_FunctionCall_")
    tvm.ir.assert_structural_equal(pattern.partition(func(x, w) + b), outer(x, w) + b)


def test_partition_function_with_fuzzy_body():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    x1, w1 = relay.var("x1"), relay.var("w1")
    pattern = FunctionPattern([wildcard(), wildcard()], wildcard())(wildcard(), wildcard())
    pattern = pattern + wildcard()
    func = relay.Function([x1, w1], relay.nn.conv2d(x1, w1))
    x2, w2, b2 = relay.var("x2"), relay.var("w2"), relay.var("b2")
    outer = _composite([x2, w2, b2], func(x2, w2) + b2, "nn.conv2d_FunctionCall_add_")
    tvm.ir.assert_structural_equal(pattern.partition(func(x, w) + b + b), outer(x, w, b) + b)


def test_partition_embeds_constants_matched_as_constants():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    weight = relay.const(1)
    name = "nn.conv2d_nn.bias_add_nn.relu_"
    xf, bf = relay.var("x"), relay.var("b")
    embedded = _composite([xf, bf], _conv_bias_relu(xf, weight, bf), name)
    xf, wf, bf = relay.var("x"), relay.var("w"), relay.var("b")
    lifted = _composite([xf, wf, bf], _conv_bias_relu(xf, wf, bf), name)
    with_var = _conv_bias_relu(x, w, b)
    with_const = _conv_bias_relu(x, weight, b)

    def pattern(weight_pattern):
        conv = is_op("nn.conv2d")(wildcard(), weight_pattern)
        return is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()))

    # a wildcard lifts whatever it matched into a parameter
    tvm.ir.assert_structural_equal(lifted(x, w, b), pattern(wildcard()).partition(with_var))
    tvm.ir.assert_structural_equal(lifted(x, weight, b),
                                   pattern(wildcard()).partition(with_const))
    # is_var matches variables only
    tvm.ir.assert_structural_equal(lifted(x, w, b), pattern(is_var()).partition(with_var))
    tvm.ir.assert_structural_equal(with_const, pattern(is_var()).partition(with_const))
    # is_constant and is_expr(const) embed the constant
    for const_pattern in (is_constant(), is_expr(weight)):
        tvm.ir.assert_structural_equal(with_var, pattern(const_pattern).partition(with_var))
        tvm.ir.assert_structural_equal(embedded(x, b),
                                       pattern(const_pattern).partition(with_const))
    # alternatives: the side that matched decides, in either order
    for alt in (is_var() | is_constant(), is_constant() | is_var()):
        tvm.ir.assert_structural_equal(lifted(x, w, b), pattern(alt).partition(with_var))
        tvm.ir.assert_structural_equal(embedded(x, b), pattern(alt).partition(with_const))


def test_partition_when_an_inner_use_is_dominated_by_the_root():
    program = tvm.relay.parse(
        """
        #[version = "0.0.5"]
        def @main(%data: Tensor[(16, 16, 32, 32), float16], %weight: Tensor[(32, 16, 3, 3), float16], %bias: Tensor[(32), float32]) -> Tensor[(16, 32, 32, 32), float32] {
          %0 = layout_transform(%data, src_layout="NCHW", dst_layout="NHWC");
          %1 = layout_transform(%weight, src_layout="OIHW", dst_layout="OHWI");
          %2 = expand_dims(%bias, axis=1, num_newaxis=2);
          %3 = expand_dims(%2, axis=0);
          %4 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="OHWI", out_dtype="float32");
          %5 = layout_transform(%3, src_layout="NCHW", dst_layout="NHWC");
          %6 = add(%4, %5);
          %7 = sigmoid(%6);
          %8 = multiply(%6, %7);
          layout_transform(%8, src_layout="NHWC", dst_layout="NCHW")
        }
        """  # noqa: E501
    )
    expected = tvm.relay.parse(
        """
        #[version = "0.0.5"]
        def @main(%data: Tensor[(16, 16, 32, 32), float16], %weight: Tensor[(32, 16, 3, 3), float16], %bias: Tensor[(32), float32]) -> Tensor[(16, 32, 32, 32), float32] {
          %2 = expand_dims(%bias, axis=1, num_newaxis=2);
          %3 = expand_dims(%2, axis=0);
          %4 = layout_transform(%data, src_layout="NCHW", dst_layout="NHWC");
          %5 = layout_transform(%weight, src_layout="OIHW", dst_layout="OHWI");
          %6 = nn.conv2d(%4, %5, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="OHWI", out_dtype="float32");
          %7 = layout_transform(%3, src_layout="NCHW", dst_layout="NHWC");
          %8 = add(%6, %7);
          %9 = sigmoid(%8);
          %10 = fn (%FunctionVar_0_0, %FunctionVar_0_1, %FunctionVar_0_2, %FunctionVar_0_3, PartitionedFromPattern="nn.conv2d_add_multiply_") {
            %0 = nn.conv2d(%FunctionVar_0_0, %FunctionVar_0_1, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3], data_layout="NHWC", kernel_layout="OHWI", out_dtype="float32");
            %1 = add(%0, %FunctionVar_0_2);
            multiply(%1, %FunctionVar_0_3)
          };
          %11 = %10(%4, %5, %7, %9);
          layout_transform(%11, src_layout="NHWC", dst_layout="NCHW")
        }
        """  # noqa: E501
    )
    pattern = is_op("multiply")(
        is_op("add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard()), wildcard())
    actual = tvm.IRModule.from_expr(pattern.partition(program["main"]))
    actual = relay.transform.InferType()(actual)
    tvm.ir.assert_structural_equal(actual, expected)


def test_partition_parallel_branches_sharing_an_input():
    pattern = is_op("add")(is_op("multiply")(wildcard(), wildcard()),
                           is_op("add")(wildcard(), wildcard()))
    i, w, left, right = (relay.Var(n) for n in ("input", "weight", "left", "right"))
    conv = relay.op.nn.conv2d(i, w)
    program = relay.add(relay.multiply(left, conv), relay.add(conv, right))
    lf, mf, rf = relay.Var("leftf"), relay.Var("midf"), relay.Var("rightf")
    func = _composite([lf, mf, rf], (lf * mf) + (mf + rf), "multiply_add_add_")
    tvm.ir.assert_structural_equal(pattern.partition(program), func(left, conv, right))
