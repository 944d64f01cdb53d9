"""The IR node API as TVM's (TVM's test_ir_nodes.py): constructors, fields, spans, JSON.

Each node is built as TVM's test builds it, its fields read back, printed,
and sent through ``save_json`` / ``load_json``.  Beyond TVM's file: the
object glue that pass code touches (``convert``, ``Array``/``Map``,
``make_node``, the global function registry), dimensions that read as
``tir.IntImm``, dtype aliases, and ``InferTypeLocal``.
"""

from __future__ import annotations

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay import op


def check_json_roundtrip(node):
    back = tvm.ir.load_json(tvm.ir.save_json(node))
    assert tvm.ir.structural_equal(back, node, map_free_vars=True)
    return back


def test_span():
    span = relay.Span(None, 1, 2, 3, 4)
    assert span.source_name is None
    assert span.line == 1
    assert span.end_line == 2
    assert span.column == 3
    assert span.end_column == 4
    assert span.same_as(span)
    assert span == span
    assert isinstance(span, relay.base.Span)
    str(span)
    back = tvm.ir.load_json(tvm.ir.save_json(span))
    assert (back.source_name, back.line, back.end_line, back.column, back.end_column) == (
        None, 1, 2, 3, 4)
    named = tvm.ir.Span(tvm.ir.SourceName("model.py"), 5, 5, 7, 9)
    assert named.source_name.name == "model.py" and str(named) == "model.py:5:7"
    assert tvm.ir.load_json(tvm.ir.save_json(named)).source_name.name == "model.py"


def test_constant():
    arr = tvm.nd.array(10)
    const = relay.Constant(arr)
    # TVM's constant shares ``arr`` (``const.data == arr``); a relaypass constant holds a
    # read-only copy of a writable array, so it compares by value here.
    np.testing.assert_array_equal(const.data.numpy(), arr.numpy())
    assert const.span is None
    str(const)
    check_json_roundtrip(const)


def test_tuple():
    fields = tvm.runtime.convert([])
    tup = relay.Tuple(fields)
    assert tup.fields == fields
    assert tup.span is None
    str(tup)
    check_json_roundtrip(tup)


def test_local_var():
    lv = relay.Var("s")
    assert lv.name_hint == "s"
    assert lv.type_annotation is None
    str(lv)
    check_json_roundtrip(lv)
    t1 = relay.ty.TensorType((), "float")
    lv = relay.Var("s", t1)
    assert lv.name_hint == "s"
    assert lv.type_annotation == t1
    assert t1.dtype == "float32"


def test_global_var():
    gv = relay.GlobalVar("g")
    assert gv.name_hint == "g"
    str(gv)
    check_json_roundtrip(gv)


def test_function():
    params = tvm.runtime.convert([relay.Var(n) for n in "abcd"])
    ret_type = relay.TupleType(tvm.runtime.convert([]))
    body = relay.Tuple(tvm.runtime.convert([]))
    type_params = tvm.runtime.convert([])
    fn = relay.Function(params, body, ret_type, type_params)
    fn = fn.with_attr("test_attribute", "value")
    fn = fn.with_attr("test_attribute1", "value1")
    assert fn.params == params
    assert fn.body == body
    assert fn.type_params == type_params
    assert fn.span is None
    assert fn.attrs["test_attribute"] == "value"
    assert fn.attrs["test_attribute1"] == "value1"
    str(fn)
    check_json_roundtrip(fn)


def test_function_attrs():
    params = tvm.runtime.convert([relay.var(n, shape=(5, 2)) for n in "abcd"])
    ret_type = relay.TupleType(tvm.runtime.convert([]))
    body = relay.Tuple(tvm.runtime.convert([]))
    type_params = tvm.runtime.convert([])
    fn = relay.Function(params, body, ret_type, type_params)
    model_params = {}
    for param in params[:1]:
        cty = param.type_annotation
        tensor = np.random.rand(*[int(sh) for sh in cty.shape]).astype(cty.dtype)
        model_params[param] = relay.Constant(tvm.nd.array(tensor))
    fn = fn.with_attr("__params__", model_params)
    assert fn.params == params
    assert fn.body == body
    assert fn.type_params == type_params
    assert fn.span is None
    str(fn)
    check_json_roundtrip(fn)
    fn_after = tvm.ir.load_json(tvm.ir.save_json(fn))
    model_params_after = fn_after.attrs["__params__"]
    after_keys = [item[0] for item in model_params_after.items()]
    for key1, key2 in zip(model_params, after_keys):
        assert key1.name_hint == key2.name_hint
        np.testing.assert_allclose(model_params[key1].data.numpy(),
                                   model_params_after[key2].data.numpy())
    # The keys are the loaded function's own parameters.
    assert after_keys[0] is fn_after.params[0]


def test_call():
    f = relay.Var("f")
    args = tvm.runtime.convert([relay.Var(n) for n in "abcd"])
    call = relay.Call(f, args, None, None)
    assert call.op == f
    assert call.args == args
    assert call.span is None
    str(call)
    check_json_roundtrip(call)


def test_let():
    lv = relay.Var("x")
    value = relay.Constant(tvm.nd.array(10))
    let = relay.Let(lv, value, lv)
    assert let.var == lv
    assert let.value == value
    assert let.body == lv
    assert let.span is None
    str(let)
    check_json_roundtrip(let)


def test_if():
    cond, left, right = relay.Var("cond"), relay.Var("left"), relay.Var("right")
    ife = relay.If(cond, left, right)
    assert ife.cond == cond
    assert ife.true_branch == left
    assert ife.false_branch == right
    assert ife.span is None
    str(ife)
    check_json_roundtrip(ife)


def test_tuple_get_item():
    tup = relay.Var("tuple")
    get = relay.TupleGetItem(tup, 1)
    assert get.tuple_value == tup
    assert get.index == 1
    str(get)
    check_json_roundtrip(get)


def test_op():
    add = op.op.get("add")
    assert check_json_roundtrip(add) is add


def test_conv2d_attrs():
    data = relay.var("data", shape=(1, 3, 224, 224))
    param = relay.var("param", shape=(64, 3, 7, 7))
    out = op.nn.conv2d(data, param, strides=(2, 2), padding=(3, 3), channels=64, kernel_size=(7, 7))
    back = check_json_roundtrip(out)
    assert back.attrs.type_key == out.attrs.type_key and back.attrs.strides == (2, 2)


# --------------------------------------------------------------------------- beyond TVM's file


def test_every_node_kind_takes_a_span():
    span = tvm.ir.Span(tvm.ir.SourceName("m.relay"), 1, 1, 2, 2)
    x = relay.Var("x", None, span)
    t = relay.Tuple([x], span)
    nodes = [
        x, relay.GlobalVar("g", span), relay.Constant(tvm.nd.array(1), span), t,
        relay.TupleGetItem(t, 0, span), relay.Call(x, [x], None, None, span),
        relay.Function([x], x, None, None, None, span), relay.Let(x, x, x, span),
        relay.If(x, x, x, span), relay.RefCreate(x, span), relay.RefRead(x, span),
        relay.RefWrite(x, x, span),
        relay.TensorType((1,), "float32", span), relay.TupleType([], span),
        relay.TypeVar("t", relay.TypeKind.Type, span), relay.IncompleteType(relay.TypeKind.Type, span),
        relay.FuncType([], relay.TupleType([]), None, None, span), relay.RefType(relay.TupleType([]), span),
    ]
    for node in nodes:
        assert node.span is span, type(node).__name__
        assert node.astext()


def test_convert_array_and_map():
    x, y = relay.var("x"), relay.var("y")
    arr = tvm.runtime.convert([x, y])
    assert isinstance(arr, tvm.ir.Array) and isinstance(arr, tvm.ir.container.Array)
    assert len(arr) == 2 and arr[0] is x and list(arr) == [x, y] and [*arr] == [x, y]
    # Node fields are tuples, and every tuple is an Array, as TVM's fields are Arrays.
    call = relay.Call(relay.op.get("add"), arr)
    assert isinstance(call.args, tvm.ir.Array) and call.args == arr
    # As TVM (an Array compares with a list by identity), an Array is not equal to a list.
    assert (call.args == [x, y]) is False
    m = tvm.runtime.convert({"a": 1, x: y})
    assert isinstance(m, tvm.ir.Map) and m["a"] == 1 and m[x] is y and x in m
    assert sorted(map(str, m.keys())) == sorted(map(str, ["a", x]))
    assert m.get("b", 3) == 3 and len(m) == 2 and list(m.values())[1] is y
    with pytest.raises(ValueError):
        tvm.runtime.convert({(1, 2): 3})
    assert tvm.runtime.convert(None) is None and tvm.runtime.convert("s") == "s"


def test_attrs_read_as_tvm_attrs():
    data = relay.var("data", shape=(1, 3, 8, 8))
    weight = relay.var("weight", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(data, weight, strides=(2, 2), padding=(1, 1))
    attrs = conv.attrs
    assert attrs.strides[0] == 2 and len(attrs.strides) == 2 and list(attrs.strides) == [2, 2]
    assert isinstance(attrs.strides, tvm.ir.container.Array)
    assert attrs.get_int_tuple("strides") == (2, 2) and attrs["strides"] == attrs.strides
    assert "strides" in attrs.keys() and attrs.get_str("data_layout") == "NCHW"


def test_make_node_and_registered_objects():
    attrs = tvm.ir.make_node("DictAttrs", a=1)
    assert attrs["a"] == 1 and attrs.type_key == "DictAttrs"

    @tvm._ffi.register_object("relay.attrs.NodesTestAttrs")
    class NodesTestAttrs(tvm.ir.Attrs):
        pass

    made = tvm.ir.make_node("relay.attrs.NodesTestAttrs", axis=2)
    assert isinstance(made, NodesTestAttrs) and made.axis == 2
    var = tvm.ir.make_node("relay.Var", name_hint="v", type_annotation=relay.TensorType((), "int32"))
    assert isinstance(var, relay.Var) and var.name_hint == "v"
    assert tvm.ir.make_node("Op", name="add") is relay.op.get("add")
    with pytest.raises(TypeError, match="unknown type key"):
        tvm.ir.make_node("no.SuchThing")


def test_global_function_registry():
    @tvm.register_func("relaypass.test.nodes_double")
    def double(x):
        return 2 * x

    assert tvm.get_global_func("relaypass.test.nodes_double")(4) == 8
    assert tvm._ffi.get_global_func("relaypass.test.nodes_double") is double
    assert tvm.get_global_func("relaypass.test.missing", allow_missing=True) is None
    with pytest.raises(ValueError, match="Cannot find global function relaypass.test.missing"):
        tvm.get_global_func("relaypass.test.missing")
    with pytest.raises(RuntimeError, match="already registered"):
        tvm.register_func("relaypass.test.nodes_double", lambda x: x)
    tvm.register_func("relaypass.test.nodes_double", lambda x: 3 * x, override=True)
    assert tvm.get_global_func("relaypass.test.nodes_double")(4) == 12

    @tvm._ffi.register_func
    def relaypass_test_bare(x):
        return x + 1

    assert tvm.get_global_func("relaypass_test_bare")(1) == 2
    for name in ("relaypass.test.nodes_double", "relaypass_test_bare"):
        tvm._ffi.registry.remove_global_func(name)


def test_shape_dims_read_as_int_imm():
    ty = relay.TensorType((2, 3, relay.Any()), "float32")
    d0, d1, d2 = ty.shape
    assert isinstance(d0, tvm.tir.IntImm) and isinstance(d2, tvm.tir.Any)
    assert int(d0) == 2 and d0.value == 2 and d0.dtype == "int32" and d0 == 2 and d0 < d1
    assert d0 * d1 == 6 and d1 - 1 == 2 and str(d0) == "2" and repr(d1) == "3"
    assert [int(d) for d in ty.shape[:2]] == [2, 3]
    assert relay.TensorType((2, 3)).concrete_shape == (2, 3)
    assert relay.TensorType((tvm.tir.IntImm("int64", 4),)).shape[0].dtype == "int64"
    assert relay.TensorType((4,)) == relay.TensorType((tvm.tir.IntImm("int64", 4),))
    assert np.zeros(relay.TensorType((2, 2)).shape).shape == (2, 2)


@pytest.mark.parametrize(("alias", "dtype"), [
    ("float", "float32"), ("int", "int32"), ("uint", "uint32"), ("bool", "bool"),
    ("uint1", "bool"), ("float16", "float16"), ("int8", "int8"), ("float64", "float64"),
    ("bfloat16", "bfloat16"), ("int8x4", "int8x4"), ("float32x1", "float32"),
])
def test_dtype_aliases(alias, dtype):
    assert relay.TensorType((), alias).dtype == dtype
    x = relay.var("x", shape=(2,))
    assert relay.cast(x, alias).attrs.dtype == dtype


def test_cast_to_float_types_as_float32():
    x = relay.var("x", shape=(2,), dtype="int32")
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.cast(x, "float")))
    assert mod["main"].body.checked_type == relay.TensorType((2,), "float32")
    assert relay.const(1, "float").data.dtype == "float32"
    with pytest.raises(ValueError, match="data type"):
        relay.TensorType((), "floaty")


def test_if_condition_may_be_spelled_uint1():
    c = relay.var("c", shape=(), dtype="uint1")
    x = relay.var("x", shape=(2,))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.If(c, x, relay.negative(x))))
    assert mod["main"].params[0].checked_type == relay.TensorType((), "bool")


def test_type_args_are_filled_as_relay_fills_them():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(3,))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.add(x, y)))
    call = mod["main"].body
    assert list(call.type_args) == [relay.TensorType((2, 3)), relay.TensorType((3,))]
    assert "add(%x, %y)" in mod.astext()


def test_infer_type_local():
    x = relay.var("x", shape=(2, 3))
    y = relay.nn.relu(relay.add(x, relay.const(1.0)))
    ty = relay.transform.InferTypeLocal(y)
    assert ty == relay.TensorType((2, 3), "float32")
    assert y.checked_type == ty and y.args[0].checked_type == ty
    e = x
    for _ in range(100_000):
        e = relay.nn.relu(e)
    assert relay.transform.InferTypeLocal(e) == relay.TensorType((2, 3), "float32")
    assert e.args[0].args[0].checked_type == relay.TensorType((2, 3), "float32")


def test_frontend_common_helpers():
    from relaypass.relay.frontend.common import infer_shape, infer_type, infer_value

    x = relay.var("x", shape=(2, 3))
    expr = relay.sum(relay.add(x, relay.const(1.0)), axis=1)
    assert infer_shape(expr) == (2,)
    assert infer_type(expr).checked_type == relay.TensorType((2,), "float32")
    value = infer_value(expr, {"x": tvm.nd.array(np.ones((2, 3), "float32"))})
    np.testing.assert_allclose(value.numpy(), [6.0, 6.0])
    with pytest.raises(ValueError, match="All inputs"):
        infer_value(expr, {})


def test_json_keeps_sharing_and_a_100k_chain():
    x = relay.var("x", shape=(1,))
    e = x
    for _ in range(100_000):
        e = relay.add(e, e)
    fn = relay.Function([x], e)
    back = check_json_roundtrip(fn)
    assert back.body.args[0] is back.body.args[1]
    mod = tvm.IRModule.from_expr(relay.nn.relu(relay.var("y", shape=(2,))))
    assert tvm.ir.structural_equal(check_json_roundtrip(mod), mod, map_free_vars=True)
    with pytest.raises(ValueError, match="not a document"):
        tvm.ir.load_json('{"root": 0}')
