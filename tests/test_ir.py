"""The IR core: nodes, types, attributes, the operator registry, modules, relay builders."""

from __future__ import annotations

import numpy as np
import pytest

from relaypass import relay
from relaypass.errors import AttrsError, ModuleError, UncheckedTypeError, UnknownOpError
from relaypass.ir import (
    Any,
    Attrs,
    Call,
    Constant,
    Function,
    FuncType,
    GlobalVar,
    IncompleteType,
    IRModule,
    Op,
    OpPattern,
    RefType,
    TensorType,
    TupleType,
    TypeVar,
    Var,
    make_call,
    register_op,
)


def test_nodes_are_immutable_and_compare_by_identity():
    x = relay.var("x", shape=(2,))
    call = relay.add(x, x)
    with pytest.raises(AttributeError, match="immutable"):
        call.op = Op.get("subtract")
    with pytest.raises(AttributeError):
        x.name_hint = "y"
    other = relay.add(x, x)
    assert call != other and call == call
    assert len({call, other}) == 2
    assert not hasattr(call, "__dict__")


def test_checked_type_before_inference_is_a_clear_error():
    x = relay.var("x", shape=(2,))
    with pytest.raises(UncheckedTypeError, match="run type inference first"):
        _ = relay.nn.relu(x).checked_type


def test_constant_holds_a_read_only_copy():
    arr = np.arange(4, dtype="float32")
    c = Constant(arr)
    arr[0] = 100
    assert c.data.numpy()[0] == 0 and c.array[0] == 0
    with pytest.raises(ValueError):
        c.array[0] = 5
    with pytest.raises(ValueError):
        c.data[:] = np.zeros(4, "float32")


def test_const_follows_relays_dtype_defaults():
    assert relay.const(1).data.dtype == "int32"
    assert relay.const(1.5).data.dtype == "float32"
    assert relay.const(np.arange(3)).data.dtype == "int32"
    assert relay.const(np.ones(3)).data.dtype == "float32"
    assert relay.const(True).data.dtype == "bool"
    assert relay.const(1, dtype="int64").data.dtype == "int64"
    assert relay.const(np.ones(2, dtype="float16")).data.dtype == "float16"


def test_var_builder_annotations():
    assert relay.var("x", shape=(1, None), dtype="int8").type_annotation == TensorType((1, Any()), "int8")
    assert relay.var("s", "float32").type_annotation == TensorType((), "float32")
    assert relay.var("u").type_annotation is None


def test_types_compare_structurally():
    assert TensorType((1, 3)) == TensorType([1, 3], "float32")
    assert TensorType((1, 3)) != TensorType((1, 3), "int32")
    assert TensorType((Any(), 3)) == TensorType((Any(), 3))
    assert hash(TensorType((2, 2))) == hash(TensorType((2, 2)))
    assert TupleType([TensorType((1,))]) == TupleType([TensorType((1,))])
    assert RefType(TensorType(())) == RefType(TensorType(()))
    a, b = TypeVar("a"), TypeVar("a")
    assert a != b and a == a
    assert IncompleteType() != IncompleteType()
    f1 = FuncType([a], a, [a])
    f2 = FuncType([b], b, [b])
    assert f1 == f2
    with pytest.raises(TypeError):
        TensorType((1.5,))


def test_expression_operator_sugar_builds_calls():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert (x + y).op.name == "add"
    assert (x - y).op.name == "subtract"
    assert (x * y).op.name == "multiply"
    assert (x / y).op.name == "divide"
    assert (-x).op.name == "negative"
    assert (x < y).op.name == "less"
    assert (x >= y).op.name == "greater_equal"
    with pytest.raises(TypeError, match="const"):
        _ = x + 1


def test_function_attributes():
    x = relay.var("x", shape=(2,))
    f = Function([x], relay.nn.relu(x))
    assert len(f.attrs) == 0
    g = f.with_attr("Primitive", 1)
    assert g.attrs["Primitive"] == 1 and g.attrs.Primitive == 1
    assert "Primitive" not in f.attrs
    assert g.body is f.body and g.params == f.params
    h = g.with_attr("Compiler", "dnnl").without_attr("Primitive")
    assert dict(h.attrs) == {"Compiler": "dnnl"}


def test_call_attrs_read_as_attributes_and_compare_structurally():
    x = relay.var("x", shape=(2, 2))
    c1 = relay.concatenate([x, x], axis=1)
    c2 = relay.concatenate([x, x], axis=1)
    assert c1.attrs.axis == 1 and c1.attrs["axis"] == 1
    assert c1.attrs == c2.attrs and hash(c1.attrs) == hash(c2.attrs)
    assert c1.attrs != relay.concatenate([x, x], axis=0).attrs
    with pytest.raises(AttributeError, match="axis"):
        _ = c1.attrs.axes
    assert Attrs({"a": [1, 2]})["a"] == (1, 2)
    assert Attrs({"a": np.int64(3)})["a"] == 3


def test_unknown_attribute_lists_valid_ones():
    x = relay.var("x", shape=(2, 2))
    with pytest.raises(AttrsError, match="valid attributes: axis"):
        make_call("concatenate", [relay.Tuple([x])], axes=1)


def test_op_registry_lookup_and_near_matches():
    add = Op.get("add")
    assert add is Op.get("add")
    assert add.get_attr("TOpPattern") == OpPattern.BROADCAST
    assert add.get_attr("TOpIsStateful") is False
    assert callable(add.get_attr("FTypeRelation"))
    with pytest.raises(UnknownOpError, match="did you mean 'add'"):
        Op.get("ad")
    assert "nn.relu" in Op.list_op_names()


def test_register_custom_op_and_duplicates():
    name = "test.ir.double"
    op = register_op(
        name, num_inputs=1, type_relation=lambda types, attrs: types[0],
        kernel=lambda args, attrs: args[0] * 2, pattern=OpPattern.ELEMWISE,
        attrs={"scale": 2},
    )
    assert Op.get(name) is op
    call = make_call(name, [relay.var("x", shape=(1,))])
    assert call.attrs.scale == 2
    with pytest.raises(ValueError, match="already registered"):
        register_op(name, num_inputs=1, type_relation=lambda t, a: t[0])
    with pytest.raises(AttrsError, match="takes 1 arguments"):
        make_call(name, [])


def test_module_lookup_update_and_iteration():
    x = relay.var("x", shape=(2,))
    f = Function([x], relay.nn.relu(x))
    mod = IRModule({"main": f})
    gv = mod.get_global_var("main")
    assert mod["main"] is f and mod[gv] is f and mod[GlobalVar("main")] is f
    assert list(mod) == [gv]
    g = Function([x], x)
    mod["helper"] = g
    assert len(mod) == 2 and "helper" in mod
    mod["main"] = g
    assert mod.get_global_var("main") is gv and mod["main"] is g
    with pytest.raises(ModuleError, match="did you mean @main"):
        mod["mian"]
    with pytest.raises(ModuleError, match="already has"):
        mod.add("main", f)
    other = IRModule({"extra": f})
    mod.update(other)
    assert mod["extra"] is f
    assert dict(mod.functions)[gv] is g


def test_module_copy_is_independent():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(relay.nn.relu(x))
    copy = mod.copy()
    copy["main"] = Function([x], x)
    assert mod["main"].body.op.name == "nn.relu"


def test_from_expr_wraps_free_vars_in_order():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = IRModule.from_expr(relay.add(y, x))
    assert mod["main"].params == (y, x)
    f = Function([x], x)
    assert IRModule.from_expr(f)["main"] is f


def test_scope_builder_lets_and_if():
    sb = relay.ScopeBuilder()
    x = relay.var("x", shape=(), dtype="float32")
    a = sb.let("a", relay.add(x, x))
    cond = relay.var("c", shape=(), dtype="bool")
    with sb.if_scope(cond):
        sb.ret(a)
    with sb.else_scope():
        b = sb.let("b", relay.negative(a))
        sb.ret(b)
    expr = sb.get()
    assert isinstance(expr, relay.Let) and expr.var is a
    assert isinstance(expr.body, relay.If)
    assert expr.body.true_branch is a
    assert isinstance(expr.body.false_branch, relay.Let)
    with pytest.raises(RuntimeError):
        sb2 = relay.ScopeBuilder()
        sb2.get()


def test_analysis_free_bound_all_vars():
    x, y = relay.var("x"), relay.var("y")
    v = relay.var("v")
    body = relay.Let(v, relay.add(x, y), relay.multiply(v, x))
    f = Function([x], body)
    assert relay.analysis.free_vars(f) == [y]
    assert set(relay.analysis.bound_vars(f)) == {x, v}
    assert set(relay.analysis.all_vars(f)) == {x, y, v}
    t = TypeVar("t")
    g = Function([relay.var("p", t)], relay.var("q", TypeVar("u")), type_params=[t])
    assert [tv.name_hint for tv in relay.analysis.free_type_vars(g)] == ["u"]


def test_well_formed_rejects_rebinding_and_escaping_vars():
    x = relay.var("x")
    v = relay.var("v")
    ok = relay.Let(v, x, v)
    assert relay.analysis.well_formed(ok)
    twice = relay.Let(v, x, relay.Let(v, x, v))
    assert not relay.analysis.well_formed(twice)
    assert "more than once" in relay.analysis.ill_formed_reason(twice)
    escaping = relay.Tuple([relay.Let(v, x, v), v])
    assert "outside the scope" in relay.analysis.ill_formed_reason(escaping)


def test_deep_let_chain_analyses_without_recursion():
    x = relay.var("x", shape=(1,))
    body = x
    lets = []
    for i in range(100_000):
        v = Var(f"v{i}")
        lets.append((v, relay.add(body, body)))
        body = v
    expr = body
    for v, value in reversed(lets):
        expr = relay.Let(v, value, expr)
    assert relay.analysis.free_vars(expr) == [x]
    assert relay.analysis.well_formed(expr)
    assert isinstance(Call(Op.get("add"), [x, x]), Call)


def test_well_formed_sees_a_var_used_inside_then_outside_its_scope():
    x = relay.var("x", shape=(2,))
    t = relay.var("t")
    expr = relay.Function([x], relay.Tuple([relay.Let(t, x, relay.add(t, t)), relay.negative(t)]))
    assert "outside the scope" in relay.analysis.ill_formed_reason(expr)
