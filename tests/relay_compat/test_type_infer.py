"""InferType on the cases of TVM v0.18's test_type_infer.py, written as a TVM user writes them.

Only the import lines differ from such a user's TVM code.  TVM's
``T.int32(1)``/``T.int64(1)`` (``tvm.script.tir``) are written
``tvm.tir.IntImm(dtype, 1)``, and a variable's ``vid`` (not provided) is
checked through the variable itself.  Operators made
here get names of their own (``custom_log_typed``...): the registry is global
to the test process.
"""
import numpy as np
import pytest

import relaypass as tvm
from relaypass import IRModule, relay
from relaypass.relay import op, transform
from relaypass.relay.op import op as _op


def infer_mod(mod, annotate_spans=True):
    if annotate_spans:
        mod = relay.transform.AnnotateSpans()(mod)
    return transform.InferType()(mod)


def infer_expr(expr):
    transform.InferTypeLocal(expr)
    return expr


def assert_has_type(expr, typ, mod=None):
    if not mod:
        mod = tvm.IRModule({})
    mod["main"] = expr
    mod = infer_mod(mod)
    checked_type = mod["main"].checked_type
    assert checked_type == typ, f"type mismatch: {checked_type} vs {typ}"


def test_monomorphic_let():
    # let %x: float64 = 1f64; %x
    sb = relay.ScopeBuilder()
    x = relay.var("x", dtype="float64", shape=())
    x = sb.let(x, relay.const(1.0, "float64"))
    sb.ret(x)
    assert infer_expr(sb.get()).checked_type == relay.scalar_type("float64")


def test_single_op():
    x = relay.var("x", shape=[])
    scalar = relay.TensorType([], dtype="float32")
    assert_has_type(relay.Function([x], op.log(x)), relay.FuncType([scalar], scalar))


def test_add_broadcast_op():
    x = relay.var("x", shape=(10, 4))
    y = relay.var("y", shape=(5, 10, 1))
    expected = relay.FuncType(
        [relay.TensorType((10, 4), "float32"), relay.TensorType((5, 10, 1), "float32")],
        relay.TensorType((5, 10, 4), "float32"),
    )
    assert_has_type(relay.Function([x, y], x + y), expected)


def test_dual_op():
    # let %t1 = log(%x); let %t2 = add(%t1, %x); %t2
    tp = relay.TensorType((10, 10), "float32")
    x = relay.var("x", tp)
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", relay.log(x))
    t2 = sb.let("t2", relay.add(t1, x))
    sb.ret(t2)
    f = infer_expr(relay.Function([x], sb.get()))
    assert f.checked_type == relay.FuncType([tp], tp)


def test_decl():
    tp = relay.TensorType((10, 10))
    x = relay.var("x", tp)
    f = infer_expr(relay.Function([x], relay.log(x)))
    assert f.checked_type == relay.FuncType([tp], tp)


def test_recursion():
    # def @f(%n: int32, %data: float32) -> float32 {
    #   if (%n == 0) { %data } else { @f(%n - 1, log(%data)) }
    # }
    sb = relay.ScopeBuilder()
    f = relay.GlobalVar("f")
    ti32 = relay.scalar_type("int32")
    tf32 = relay.scalar_type("float32")
    n = relay.var("n", ti32)
    data = relay.var("data", tf32)
    with sb.if_scope(relay.equal(n, relay.const(0, ti32))):
        sb.ret(data)
    with sb.else_scope():
        sb.ret(f(relay.subtract(n, relay.const(1, ti32)), relay.log(data)))
    mod = tvm.IRModule()
    mod[f] = relay.Function([n, data], sb.get())
    mod = infer_mod(mod)
    assert "@f(%1, %2)" in mod.astext()
    assert mod["f"].checked_type == relay.FuncType([ti32, tf32], tf32)


def test_incomplete_call():
    # %f has no annotation: its type comes from the call.
    tt = relay.scalar_type("int32")
    x = relay.var("x", tt)
    f = relay.var("f")
    func = relay.Function([x, f], relay.Call(f, [x]), tt)
    assert infer_expr(func).checked_type == relay.FuncType([tt, relay.FuncType([tt], tt)], tt)


def identity_function():
    a = relay.TypeVar("a")
    x = relay.Var("x", a)
    return relay.Function([x], x, a, [a])


def test_higher_order_argument():
    # A polymorphic function passed where a function of a type parameter is expected.
    b = relay.TypeVar("b")
    f = relay.Var("f", relay.FuncType([b], b))
    y = relay.Var("y", b)
    apply = relay.Function([f, y], f(y), b, [b])
    call = infer_expr(apply(identity_function(), relay.const(0, "int32")))
    assert call.checked_type == relay.scalar_type("int32")


def test_higher_order_return():
    b = relay.TypeVar("b")
    nested = relay.Function([], identity_function(), relay.FuncType([b], b), [b])
    ft = infer_expr(nested)
    assert ft.checked_type == relay.FuncType([], relay.FuncType([b], b), [b])


def test_higher_order_nested():
    choice_t = relay.FuncType([], relay.scalar_type("bool"))
    f = relay.Var("f", choice_t)
    b = relay.TypeVar("b")
    z = relay.Var("z")
    top = relay.Function(
        [f],
        relay.If(f(), identity_function(), relay.Function([z], z)),
        relay.FuncType([b], b),
        [b],
    )
    expected = relay.FuncType([choice_t], relay.FuncType([b], b), [b])
    assert infer_expr(top).checked_type == expected


def test_tuple():
    tp = relay.TensorType((10,))
    x = relay.var("x", tp)
    assert infer_expr(relay.Tuple([x, x])).checked_type == relay.TupleType([tp, tp])


def test_ref():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    st = relay.scalar_type("float32")
    r = relay.RefCreate(x)
    assert infer_expr(r).checked_type == relay.RefType(st)
    assert infer_expr(relay.RefRead(r)).checked_type == st
    assert infer_expr(relay.RefWrite(r, y)).checked_type == relay.TupleType([])


def test_free_expr():
    x = relay.var("x", "float32")
    yy = infer_expr(relay.add(x, x))
    tvm.ir.assert_structural_equal(yy.args[0], x, map_free_vars=True)
    assert yy.checked_type == relay.scalar_type("float32")
    # TVM: x.vid.same_as(yy.args[0].vid) -- the free variable stays the same variable.
    assert yy.args[0].same_as(x)


def test_free_vars_are_the_same_through_two_typings():
    # What TVM's vid gives: a bare expression typed twice has the same free variables.
    x = relay.var("x", shape=(3,))
    first = infer_mod(IRModule.from_expr(relay.nn.relu(x)), annotate_spans=False)
    second = infer_mod(IRModule.from_expr(relay.nn.relu(x)), annotate_spans=False)
    tvm.ir.assert_structural_equal(first["main"].body, second["main"].body)
    assert first["main"].params[0].same_as(x)


def test_type_args():
    x = relay.var("x", shape=(10, 10))
    y = relay.var("y", shape=(1, 10))
    z = relay.add(x, y)
    # Typing twice fills type_args once: the arguments' types.
    mod = infer_mod(IRModule.from_expr(z))
    mod = infer_mod(mod, annotate_spans=False)
    ty_args = mod["main"].body.type_args
    assert len(ty_args) == 2
    assert ty_args[0].dtype == "float32"
    assert ty_args[1].dtype == "float32"
    assert [d.value for d in ty_args[0].shape] == [10, 10]
    assert [d.value for d in ty_args[1].shape] == [1, 10]


def test_global_var_recursion():
    mod = tvm.IRModule({})
    gv = relay.GlobalVar("main")
    x = relay.var("x", shape=[])
    tt = relay.scalar_type("float32")
    mod[gv] = relay.Function([x], relay.Call(gv, [x]), tt)
    mod = infer_mod(mod)
    assert mod["main"].checked_type == relay.FuncType([tt], tt)


def test_equal():
    i = relay.var("i", shape=[], dtype="int32")
    eq = op.equal(i, relay.const(0, dtype="int32"))
    ft = infer_expr(relay.Function([i], eq))
    assert ft.checked_type == relay.FuncType(
        [relay.scalar_type("int32")], relay.scalar_type("bool")
    )


def test_let_polymorphism():
    # A let-bound polymorphic function used at two types.
    id_var = relay.Var("id")
    xt = relay.TypeVar("xt")
    x = relay.Var("x", xt)
    body = relay.Tuple([id_var(relay.const(1)), id_var(relay.Tuple([]))])
    body = infer_expr(relay.Let(id_var, relay.Function([x], x, xt, [xt]), body))
    int32 = relay.TensorType((), "int32")
    tvm.ir.assert_structural_equal(
        body.checked_type, relay.TupleType([int32, relay.TupleType([])])
    )


def test_type_arg_infer():
    code = """
#[version = "0.0.5"]
def @id[A](%x: A) -> A {
  %x
}
def @main(%f: float32) -> float32 {
  @id(%f)
}
"""
    mod = transform.InferType()(tvm.relay.fromtext(code))
    tvm.ir.assert_structural_equal(
        mod["main"].body.type_args, [relay.TensorType((), "float32")]
    )


def test_dynamic_function():
    dy_tt = relay.TensorType([relay.Any()], "float32")
    s_tt = relay.TensorType([10], "float32")
    x = relay.Var("x", dy_tt)
    f = relay.Function([x], x + x)
    y = relay.Var("y", s_tt)
    mod = tvm.IRModule()
    mod["main"] = relay.Function([y], f(y))
    mod = transform.InferType()(mod)
    assert mod["main"].params[0].checked_type == s_tt

    data = relay.var(
        "data", shape=(relay.Any(), relay.Any(), relay.Any(), relay.Any()), dtype="float32"
    )
    weight = relay.const(np.full((16, 16, 3, 3), 0.25), dtype="float32")
    conv = relay.nn.conv2d(data, weight, kernel_size=(3, 3), channels=16, groups=2)
    mod = transform.InferType()(tvm.IRModule.from_expr(conv))
    # TVM only requires this to type-check; the channels are known, the rest is not.
    out = mod["main"].body.checked_type
    assert out.shape[1] == 16 and out.dtype == "float32"


@pytest.mark.parametrize("relay_op", [relay.op.argmax, relay.op.argmin])
@pytest.mark.parametrize("sdtype", ["int32", "int64"])
def test_argreduce_infer_return_type(relay_op, sdtype):
    # The indices have the dtype of the input's dims: broadcast_to's int64 shape makes int64.
    x = relay.var("data", relay.TensorType((1, 1), "float32"))
    broadcast = relay.op.broadcast_to(x, relay.const([1, 1], dtype=sdtype))
    f = relay.Function([x], relay_op(broadcast, axis=[1]))
    assert_has_type(
        f,
        relay.FuncType(
            [relay.TensorType([1, 1], "float32")],
            relay.TensorType([tvm.tir.IntImm(sdtype, 1)], dtype=sdtype),
        ),
    )


def let_chain_over(call_of, tp):
    # let %t1 = custom(%x); let %t2 = add(%t1, %x); %t2
    x = relay.var("x", tp)
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", call_of(x))
    t2 = sb.let("t2", relay.add(t1, x))
    sb.ret(t2)
    return relay.Function([x], sb.get())


def describe_unary(op_name):
    _op.register(op_name, r"code(cal log of a tensor.)code")
    _op.get(op_name).set_num_inputs(1)
    _op.get(op_name).add_argument("data_0", "Tensor", "The input data tensor.")
    _op.get(op_name).set_support_level(1)
    _op.register_pattern(op_name, _op.OpPattern.ELEMWISE)
    _op.register_stateful(op_name, False)
    return _op.get(op_name)


def test_custom_op_with_a_named_relation():
    custom = describe_unary("custom_log_typed")
    custom.add_type_rel("Identity")
    tp = relay.TensorType((10, 10), "float32")
    f = infer_expr(let_chain_over(lambda x: relay.Call(custom, [x]), tp))
    assert f.checked_type == relay.FuncType([tp], tp)
    assert custom.num_inputs == 1 and custom.support_level == 1
    assert custom.get_attr("TOpPattern") == _op.OpPattern.ELEMWISE
    assert custom.get_attr("TOpIsStateful") is False


def test_custom_broadcast_op():
    name = "custom_broadcast_add_typed"
    _op.register(name, r"code(Add two tensor with inner broadcasting.)code")
    _op.get(name).set_num_inputs(2)
    _op.get(name).add_argument("data_0", "Tensor", "The input data tensor.")
    _op.get(name).add_argument("data_1", "Tensor", "The input data tensor.")
    _op.get(name).add_type_rel("Broadcast")
    _op.get(name).set_support_level(1)
    _op.register_stateful(name, False)
    x = relay.var("x", shape=(10, 4))
    y = relay.var("y", shape=(5, 10, 1))
    t1 = relay.TensorType((10, 4), "float32")
    t2 = relay.TensorType((5, 10, 1), "float32")
    t3 = relay.TensorType((5, 10, 4), "float32")
    func = relay.Function([x, y], relay.Call(_op.get(name), [x, y]))
    assert_has_type(func, relay.FuncType([t1, t2], t3))


def test_custom_op_with_a_python_relation():
    seen = []

    def custom_log1_rel(arg_types, attrs):
        assert len(arg_types) == 1, "type relation arg number mismatch!"
        seen.append(attrs)
        return relay.TensorType(arg_types[0].shape, arg_types[0].dtype)

    custom = describe_unary("custom_log1_typed")
    custom.set_attrs_type_key("DictAttrs")
    custom.add_type_rel("custom_log1_typed", custom_log1_rel)
    tp = relay.TensorType((10, 10), "float32")
    f = infer_expr(let_chain_over(lambda x: relay.Call(custom, [x]), tp))
    assert f.checked_type == relay.FuncType([tp], tp)
    assert seen  # the relation ran


def test_a_python_relation_that_fails_raises_its_own_error():
    def custom_log2_rel(arg_types, attrs):
        assert len(arg_types) == 2, "type relation arg number mismatch!"

    custom = describe_unary("custom_log2_typed")
    custom.set_attrs_type_key("DictAttrs")
    custom.add_type_rel("custom_log2_typed", custom_log2_rel)
    f = let_chain_over(lambda x: relay.Call(custom, [x]), relay.TensorType((10, 10), "float32"))
    with pytest.raises(AssertionError, match="type relation arg number mismatch"):
        infer_expr(f)


def test_repeat_register():
    _op.register("custom_log3_typed", r"code(cal log of a tensor.)code")
    with pytest.raises(tvm.error.TVMError, match="custom_log3_typed is registered before"):
        _op.register("custom_log3_typed")


def test_an_unknown_relation_name_is_an_error_naming_it():
    custom = describe_unary("custom_unknown_rel_typed")
    with pytest.raises(tvm.error.TVMError, match="NoSuchRelation"):
        custom.add_type_rel("NoSuchRelation")


def initialize_box_adt(mod):
    # A box holding one value of any type.
    box = relay.GlobalTypeVar("box")
    tv = relay.TypeVar("tv")
    constructor = relay.Constructor("constructor", [tv], box)
    mod[box] = relay.TypeData(box, [tv], [constructor])
    return box, constructor


def test_constructor_type():
    mod = tvm.IRModule()
    box, constructor = initialize_box_adt(mod)
    a = relay.TypeVar("a")
    x = relay.Var("x", a)
    mod["main"] = relay.Function([x], constructor(x), box(a), [a])
    mod = infer_mod(mod)
    box = mod.get_global_type_var("box")
    assert mod["main"].checked_type == relay.FuncType([a], box(a), [a])


def test_constructor_call():
    mod = tvm.IRModule()
    box, constructor = initialize_box_adt(mod)
    box_unit = constructor(relay.Tuple([]))
    box_constant = constructor(relay.const(0, "float32"))
    mod["main"] = relay.Function([], relay.Tuple([box_unit, box_constant]))
    mod = infer_mod(mod)
    fields = mod["main"].checked_type.ret_type.fields
    box = mod.get_global_type_var("box")
    assert fields[0] == box(relay.TupleType([]))
    assert fields[1] == box(relay.TensorType((), "float32"))


def test_adt_match():
    mod = tvm.IRModule()
    box, constructor = initialize_box_adt(mod)
    v = relay.Var("v", relay.TensorType((), "float32"))
    match = relay.Match(
        constructor(relay.const(0, "float32")),
        [
            relay.Clause(relay.PatternConstructor(constructor, [relay.PatternVar(v)]), relay.Tuple([])),
            # never reached, and no obstacle to typing
            relay.Clause(relay.PatternWildcard(), relay.Tuple([])),
        ],
    )
    mod["main"] = relay.Function([], match)
    mod = infer_mod(mod)
    assert mod["main"].checked_type.ret_type == relay.TupleType([])


def test_adt_match_type_annotations():
    mod = tvm.IRModule()
    box, constructor = initialize_box_adt(mod)
    # Only the pattern variable is annotated, which types the parameter too.
    tt = relay.TensorType((2, 2), "float32")
    x = relay.Var("x")
    mv = relay.Var("mv", tt)
    match = relay.Match(
        constructor(x),
        [relay.Clause(relay.PatternConstructor(constructor, [relay.PatternVar(mv)]), relay.Tuple([]))],
    )
    mod["main"] = relay.Function([x], match)
    mod = infer_mod(mod)
    assert mod["main"].checked_type == relay.FuncType([tt], relay.TupleType([]))
