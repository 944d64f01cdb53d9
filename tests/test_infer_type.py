"""InferType: Relay's type inference on every IR form, its failures and its scale."""

from __future__ import annotations

import numpy as np
import pytest

import relaypass
from relaypass import relay
from relaypass.errors import TypeInferenceError, TypeRelationError
from relaypass.functor import post_order_visit
from relaypass.ir import (
    Any,
    Call,
    Function,
    FuncType,
    GlobalVar,
    If,
    IncompleteType,
    IRModule,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeVar,
    Var,
    register_op,
)
from relaypass_std.infer_type import (
    TypeMismatchError,
    UnderdeterminedTypeError,
    infer_type_expr,
    infer_type_module,
)
from relaypass_std.infer_type.solver import TypeSolver

F32 = relay.scalar_type("float32")
I32 = relay.scalar_type("int32")
BOOL = relay.scalar_type("bool")


def infer_main(func, **functions):
    """Infer a module whose @main is ``func``; returns the typed @main."""
    return infer_type_module(IRModule({"main": func, **functions}))["main"]


def all_nodes(expr):
    nodes = []
    post_order_visit(expr, nodes.append)
    return nodes


def assert_fully_typed(expr):
    for node in all_nodes(expr):
        if not isinstance(node, Op):
            assert node.has_checked_type, f"{type(node).__name__} without checked_type"


# --- operators, lets, and the shape of the result -------------------------------------
def test_single_op():
    x = relay.var("x", shape=[])
    f = infer_main(relay.Function([x], relay.negative(x)))
    assert f.checked_type == FuncType([F32], F32)
    assert f.ret_type == F32


def test_add_broadcast_op():
    x = relay.var("x", shape=(10, 4))
    y = relay.var("y", shape=(5, 10, 1))
    f = infer_main(relay.Function([x, y], relay.add(x, y)))
    t1, t2, t3 = TensorType((10, 4)), TensorType((5, 10, 1)), TensorType((5, 10, 4))
    assert f.checked_type == FuncType([t1, t2], t3)
    assert f.body.checked_type == t3
    # As Relay: an operator call carries its arguments' types as type_args (not printed).
    assert f.body.type_args == (t1, t2)
    assert "add(%x, %y)" in f.astext()


def test_dual_op_with_lets():
    tp = TensorType((10, 10))
    x = relay.var("x", tp)
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", relay.negative(x))
    t2 = sb.let("t2", relay.add(t1, x))
    sb.ret(t2)
    f = infer_main(relay.Function([x], sb.get()))
    assert f.checked_type == FuncType([tp], tp)
    # Let-bound variables without annotation get the inferred one.
    assert f.body.var.type_annotation == tp
    assert f.body.body.var.type_annotation == tp
    assert_fully_typed(f)


def test_monomorphic_let_expression():
    sb = relay.ScopeBuilder()
    x = sb.let("x", relay.const(1.0, "float64"))
    sb.ret(x)
    typed = infer_type_expr(sb.get())
    assert typed.checked_type == relay.scalar_type("float64")
    assert typed.var.type_annotation == relay.scalar_type("float64")


def test_every_node_typed_and_variables_substituted_consistently():
    x = relay.var("x", shape=(3,))
    y = relay.var("y")
    body = relay.Let(y, relay.add(x, relay.const(np.ones(3, "float32"))), relay.multiply(y, y))
    f = infer_main(relay.Function([x], body))
    assert_fully_typed(f)
    new_x, new_y = f.params[0], f.body.var
    # As TVM: an annotated variable stays the same variable; an unannotated one
    # becomes a copy annotated with its type, used everywhere the original was.
    assert new_x is x and new_y is not y
    assert f.body.value.args[0] is x
    assert f.body.body.args[0] is new_y and f.body.body.args[1] is new_y
    assert new_y.type_annotation == TensorType((3,))
    assert new_y.checked_type == TensorType((3,))


def test_constants_keep_their_data():
    data = np.arange(6, dtype="int32").reshape(2, 3)
    c = relay.const(data)
    typed = infer_type_expr(relay.add(c, c))
    assert typed.checked_type == TensorType((2, 3), "int32")
    assert typed.args[0] is typed.args[1]  # sharing is kept
    assert typed.args[0].data is c.data


def test_comparison_gives_bool():
    i = relay.var("i", shape=[], dtype="int32")
    f = infer_main(relay.Function([i], relay.equal(i, relay.const(0, "int32"))))
    assert f.checked_type == FuncType([I32], BOOL)


def test_concatenate_of_a_tuple():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(4, 3))
    f = infer_main(relay.Function([a, b], relay.concatenate([a, b], axis=0)))
    assert f.ret_type == TensorType((6, 3))
    assert f.body.args[0].checked_type == TupleType([TensorType((2, 3)), TensorType((4, 3))])


# --- inference from use ---------------------------------------------------------------
def test_parameter_inferred_from_a_call():
    t = TensorType((3,))
    x = relay.var("x")
    g = relay.var("g", FuncType([t], t))
    f = infer_main(relay.Function([x, g], g(x)))
    assert f.params[0].type_annotation == t
    assert f.checked_type == FuncType([t, FuncType([t], t)], t)


def test_parameter_inferred_through_let_annotation():
    t = TensorType((2, 2), "int32")
    x = relay.var("x")
    y = relay.var("y", t)
    f = infer_main(relay.Function([x], relay.Let(y, x, relay.add(y, y))))
    assert f.params[0].type_annotation == t
    assert f.ret_type == t


def test_deferred_relation_runs_when_its_input_is_solved():
    # The closure's body is typed before its parameter is known: relu waits.
    a = relay.var("a")
    g = relay.var("g")
    x = relay.var("x", shape=(4,))
    body = relay.Let(g, relay.Function([a], relay.nn.relu(a)), g(x))
    f = infer_main(relay.Function([x], body))
    assert f.ret_type == TensorType((4,))
    closure = f.body.value
    assert closure.params[0].type_annotation == TensorType((4,))
    assert closure.ret_type == TensorType((4,))
    assert closure.body.checked_type == TensorType((4,))


def test_incomplete_call():
    x = relay.var("x", I32)
    g = relay.var("f")
    typed = infer_type_expr(relay.Function([x, g], Call(g, [x]), I32))
    assert typed.checked_type == FuncType([I32, FuncType([I32], I32)], I32)


# --- higher-order and polymorphic functions ---------------------------------------
def _id_func():
    a = TypeVar("a")
    x = Var("x", a)
    return Function([x], x, a, [a])


def test_higher_order_argument():
    b = TypeVar("b")
    f = Var("f", FuncType([b], b))
    y = Var("y", b)
    ho_func = Function([f, y], f(y), b, [b])
    typed = infer_type_expr(ho_func(_id_func(), relay.const(0, "int32")))
    assert typed.checked_type == I32
    assert typed.type_args == (I32,)


def test_higher_order_return():
    b = TypeVar("b")
    nested_id = Function([], _id_func(), FuncType([b], b), [b])
    typed = infer_type_expr(nested_id)
    assert typed.checked_type == FuncType([], FuncType([b], b), [b])


def test_higher_order_nested():
    choice_t = FuncType([], BOOL)
    f = Var("f", choice_t)
    b = TypeVar("b")
    z = Var("z")
    top = Function([f], If(f(), _id_func(), Function([z], z)), FuncType([b], b), [b])
    typed = infer_type_expr(top)
    assert typed.checked_type == FuncType([choice_t], FuncType([b], b), [b])


def test_let_polymorphism_instantiates_at_each_call():
    ident = Var("id")
    xt = TypeVar("xt")
    x = Var("x", xt)
    body = Tuple([ident(relay.const(1)), ident(Tuple([]))])
    typed = infer_type_expr(Let(ident, Function([x], x, xt, [xt]), body))
    assert typed.checked_type == TupleType([I32, TupleType([])])
    first, second = typed.body.fields
    assert first.type_args == (I32,)
    assert second.type_args == (TupleType([]),)


def test_polymorphic_global_gets_type_args():
    a = TypeVar("A")
    x = Var("x", a)
    ident = Function([x], x, a, [a])
    f = relay.var("f", F32)
    mod = IRModule({"id": ident})
    mod["main"] = Function([f], Call(mod.get_global_var("id"), [f]), F32)
    out = infer_type_module(mod)
    assert out["main"].body.type_args == (F32,)
    assert out["id"].checked_type == FuncType([a], a, [a])
    assert out.get_global_var("id").checked_type == FuncType([a], a, [a])


def test_explicit_type_args_are_used():
    a = TypeVar("A")
    x = Var("x", a)
    ident = Function([x], x, a, [a])
    y = relay.var("y")
    typed = infer_type_expr(Function([y], Call(ident, [y], type_args=[I32])))
    assert typed.params[0].type_annotation == I32


def test_polymorphic_function_body_treats_type_variables_rigidly():
    a = TypeVar("A")
    x = Var("x", a)
    bad = Function([x], relay.const(1.0), a, [a])
    with pytest.raises(TypeMismatchError, match="return type is A"):
        infer_main(bad)


# --- tuples, references, If ----------------------------------------------------
def test_tuple_and_projection():
    tp = TensorType((10,))
    x = relay.var("x", tp)
    y = relay.var("y", "int32")
    typed = infer_type_expr(TupleGetItem(Tuple([x, y]), 1))
    assert typed.checked_type == I32
    assert typed.tuple_value.checked_type == TupleType([tp, I32])


def test_projection_waits_for_the_tuple_type():
    t = relay.var("t")
    g = relay.var("g")
    a, b = relay.var("a", shape=(2,)), relay.var("b", "bool")
    body = Let(g, Function([t], TupleGetItem(t, 1)), g(Tuple([a, b])))
    f = infer_main(Function([a, b], body))
    assert f.ret_type == BOOL
    assert f.body.value.params[0].type_annotation == TupleType([TensorType((2,)), BOOL])


def test_references():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    r = RefCreate(x)
    assert infer_type_expr(r).checked_type == RefType(F32)
    assert infer_type_expr(RefRead(r)).checked_type == F32
    assert infer_type_expr(RefWrite(r, y)).checked_type == TupleType([])


def test_reference_content_inferred_from_write():
    r = relay.var("r")
    v = relay.var("v", shape=(2,))
    f = infer_main(Function([r, v], RefWrite(r, v)))
    assert f.params[0].type_annotation == RefType(TensorType((2,)))


def test_if_branches_unify():
    c = relay.var("c", "bool")
    x = relay.var("x", shape=(3,))
    y = relay.var("y")
    f = infer_main(Function([c, x, y], If(c, x, y)))
    assert f.params[2].type_annotation == TensorType((3,))
    assert f.body.checked_type == TensorType((3,))


# --- globals and recursion -------------------------------------------------------
def _countdown(annotate_ret: bool):
    sb = relay.ScopeBuilder()
    f = GlobalVar("f")
    n = relay.var("n", I32)
    data = relay.var("data", F32)
    with sb.if_scope(relay.equal(n, relay.const(0, "int32"))):
        sb.ret(data)
    with sb.else_scope():
        sb.ret(f(relay.subtract(n, relay.const(1, "int32")), relay.negative(data)))
    mod = IRModule()
    mod[f] = Function([n, data], sb.get(), F32 if annotate_ret else None)
    return mod


@pytest.mark.parametrize("annotate_ret", [True, False])
def test_recursive_global(annotate_ret):
    out = infer_type_module(_countdown(annotate_ret))
    assert out["f"].checked_type == FuncType([I32, F32], F32)
    assert out["f"].ret_type == F32
    call = out["f"].body.false_branch
    assert isinstance(call.op, GlobalVar)
    assert call.op is out.get_global_var("f")
    assert call.op.checked_type == FuncType([I32, F32], F32)
    assert_fully_typed(out["f"])


def test_global_var_recursion_with_only_a_return_annotation():
    gv = GlobalVar("main")
    x = relay.var("x", shape=[])
    mod = IRModule()
    mod[gv] = Function([x], Call(gv, [x]), F32)
    out = infer_type_module(mod)
    assert out["main"].checked_type == FuncType([F32], F32)


def test_mutual_recursion_without_return_annotations():
    even, odd = GlobalVar("even"), GlobalVar("odd")
    n1, n2 = relay.var("n", "int32"), relay.var("n", "int32")
    one = relay.const(1, "int32")

    def body(n, other, base):
        return If(relay.equal(n, relay.const(0, "int32")), relay.const(base),
                  other(relay.subtract(n, one)))

    mod = IRModule()
    mod[even] = Function([n1], body(n1, odd, True))
    mod[odd] = Function([n2], body(n2, even, False))
    out = infer_type_module(mod)
    for name in ("even", "odd"):
        assert out[name].checked_type == FuncType([I32], BOOL)


def test_calls_between_globals_in_any_order():
    x = relay.var("x", shape=(2,))
    y = relay.var("y")
    mod = IRModule()
    helper = GlobalVar("helper")
    mod["main"] = Function([x], Call(helper, [x]))
    mod[helper] = Function([y], relay.nn.relu(y))
    out = infer_type_module(mod)
    assert out["helper"].params[0].type_annotation == TensorType((2,))
    assert out["main"].ret_type == TensorType((2,))


def test_let_bound_recursive_closure():
    n = relay.var("n", I32)
    loop = relay.var("loop")
    zero = relay.const(0, "int32")
    fn = Function([n], If(relay.equal(n, zero), zero, loop(relay.subtract(n, relay.const(1)))))
    typed = infer_type_expr(Let(loop, fn, loop(relay.const(5))))
    assert typed.checked_type == I32
    assert typed.var.type_annotation == FuncType([I32], I32)


def test_expression_with_module_globals():
    x = relay.var("x", shape=(2,))
    mod = IRModule({"double": Function([x], relay.add(x, x))})
    y = relay.var("y", shape=(2,))
    typed = infer_type_expr(Call(mod.get_global_var("double"), [y]), mod)
    assert typed.checked_type == TensorType((2,))


# --- Any dims ------------------------------------------------------------------------
def test_dynamic_function_keeps_the_static_parameter():
    dy_tt = TensorType([Any()])
    s_tt = TensorType([10])
    x = relay.var("x", dy_tt)
    f = Function([x], relay.add(x, x))
    y = relay.var("y", s_tt)
    main = infer_main(Function([y], f(y)))
    assert main.params[0].checked_type == s_tt
    assert main.ret_type == dy_tt


def test_any_unifies_with_a_known_extent_to_any():
    c = relay.var("c", "bool")
    x = relay.var("x", TensorType([3, Any()]))
    y = relay.var("y", TensorType([Any(), 4]))
    f = infer_main(Function([c, x, y], If(c, x, y)))
    # As Relay's UnifyDim: the unified type promises what both sides promise.
    assert f.ret_type == TensorType([Any(), Any()])
    assert f.params[1].checked_type == TensorType([3, Any()])


def test_any_solves_an_unannotated_variable():
    x = relay.var("x", TensorType([Any(), 3]))
    y = relay.var("y")
    c = relay.var("c", "bool")
    z = relay.var("z", TensorType([5, 3]))
    f = infer_main(Function([x, z, c], Let(y, x, If(c, y, z))))
    assert f.body.var.type_annotation == TensorType([Any(), 3])
    assert f.ret_type == TensorType([Any(), 3])


# --- the module as a whole ------------------------------------------------------
def _sample_module():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y")
    helper = GlobalVar("helper")
    t = relay.var("t")
    mod = IRModule()
    mod[helper] = Function([t], relay.nn.relu(t))
    mod["main"] = Function(
        [x], Let(y, Call(helper, [x]), TupleGetItem(Tuple([y, relay.negative(y)]), 1))
    )
    return mod


def test_input_module_untouched():
    mod = _sample_module()
    functions = dict(mod.functions)
    gvars = mod.get_global_vars()
    text = mod.astext()
    out = infer_type_module(mod)
    assert out is not mod
    assert mod.functions == functions  # same functions, by identity
    assert mod.get_global_vars() == gvars
    assert mod.astext() == text
    for func in functions.values():
        for node in all_nodes(func):
            # Only a variable annotated with a complete type has one: its annotation.
            if isinstance(node, Var) and node.type_annotation is not None:
                assert node.checked_type is node.type_annotation
            else:
                assert not node.has_checked_type
    assert all(out[gv.name_hint] is not func for gv, func in functions.items())


def test_input_module_untouched_structurally():
    mod = _sample_module()
    infer_type_module(mod)
    relaypass.ir.assert_structural_equal(mod, _sample_module())


def _types_in_order(mod):
    out = []
    for gv in sorted(mod.get_global_vars(), key=lambda g: g.name_hint):
        out.extend(n.checked_type for n in all_nodes(mod[gv]) if not isinstance(n, Op))
    return out


def test_idempotent():
    once = infer_type_module(_sample_module())
    twice = infer_type_module(once)
    types1, types2 = _types_in_order(once), _types_in_order(twice)
    assert types1 == types2
    assert once.astext() == twice.astext()


def test_idempotent_on_polymorphic_calls():
    a = TypeVar("A")
    x = Var("x", a)
    mod = IRModule({"id": Function([x], x, a, [a])})
    f = relay.var("f", F32)
    mod["main"] = Function([f], Call(mod.get_global_var("id"), [f]))
    twice = infer_type_module(infer_type_module(mod))
    assert twice["main"].body.type_args == (F32,)


def test_typed_module_prints_and_parses_back():
    a = TypeVar("A")
    x = Var("x", a)
    mod = IRModule({"id": Function([x], x, a, [a])})
    f = relay.var("f", F32)
    mod["main"] = Function([f], Call(mod.get_global_var("id"), [f]))
    for source in (mod, _sample_module()):
        typed = infer_type_module(source)
        relaypass.ir.assert_structural_equal(relaypass.parse(typed.astext()), typed)


def test_module_attrs_are_kept():
    mod = _sample_module().with_attr("executor", "graph")
    assert infer_type_module(mod).attrs["executor"] == "graph"


def test_output_globals_are_typed_and_shared():
    out = infer_type_module(_sample_module())
    helper = out.get_global_var("helper")
    assert helper.checked_type == FuncType([TensorType((2, 3))], TensorType((2, 3)))
    assert out["main"].body.value.op is helper


# --- failures, each with its message ------------------------------------------------
def _raises(cls, func, *fragments, **functions):
    with pytest.raises(cls) as info:
        infer_main(func, **functions)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    return info.value


def test_shape_mismatch_in_add():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))
    err = _raises(
        TypeRelationError, Function([a, b], relay.add(a, b)),
        "in @main at body", "add: shapes (2, 3) and (4,)", "add(%a, %b)",
    )
    assert isinstance(err, TypeInferenceError)
    assert err.location == "in @main at body"


def test_relation_error_inside_a_long_let_chain_names_the_path():
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    v = x
    for i in range(5):
        v = sb.let(f"v{i}", relay.negative(v))
    sb.let("bad", relay.add(v, relay.var("w", shape=(3,))))
    sb.ret(v)
    func = Function([x], sb.get())
    _raises(
        TypeRelationError, func,
        "in @main at body(x6).value (in the value bound to %bad)", "shapes (2,) and (3,)",
    )


def test_relation_error_from_an_attribute():
    a = relay.var("a", shape=(2, 3))
    _raises(
        TypeRelationError, Function([a], relay.concatenate([a, a], axis=5)),
        "concatenate", "axis 5", "concatenate(",
    )


def test_error_location_uses_the_span():
    mod = relaypass.parse(
        '#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 2), float32]) {\n"
        "  %0 = add(%x, %x);\n"
        "  add(%0, %y)\n"
        "}\n",
        "model.relay",
    )
    with pytest.raises(TypeRelationError, match=r"^model\.relay:4:3: in @main at body"):
        infer_type_module(mod)


def test_if_condition_must_be_a_bool_scalar():
    c = relay.var("c", shape=(1,), dtype="bool")
    x = relay.var("x", shape=(2,))
    err = _raises(
        TypeMismatchError, Function([c, x], If(c, x, x)),
        "the condition of an If must have type bool",
        "but it has type Tensor[(1), bool]", "rank 0 vs 1",
    )
    assert err.lhs == BOOL and err.rhs == TensorType((1,), "bool")
    c2 = relay.var("c", "int32")
    _raises(TypeMismatchError, Function([c2, x], If(c2, x, x)), "dtype bool vs int32")


def test_if_branches_that_do_not_unify():
    c = relay.var("c", "bool")
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(3,))
    err = _raises(
        TypeMismatchError, Function([c, x, y], If(c, x, y)),
        "the branches of the If have types Tensor[(2), float32] and Tensor[(3), float32]",
        "dimension 0: 2 vs 3", "in @main at body",
    )
    assert (err.lhs, err.rhs) == (TensorType((2,)), TensorType((3,)))


def test_calling_a_non_function():
    x = relay.var("x", shape=(2,))
    _raises(
        TypeMismatchError, Function([x], Call(x, [x])),
        "only functions can be called, but the callee has type Tensor[(2), float32]",
    )


def test_wrong_argument_count():
    x = relay.var("x", shape=(2,))
    g = Function([relay.var("a"), relay.var("b")], relay.const(0.0))
    _raises(
        TypeInferenceError, Function([x], Call(g, [x])), "takes 2 arguments, but the call gives 1"
    )
    _raises(
        TypeInferenceError, Function([x], Call(Op.get("add"), [x])),
        "operator add takes 2 arguments, but the call gives 1",
    )


def test_argument_type_mismatch():
    x = relay.var("x", shape=(2,))
    p = relay.var("p", shape=(3,))
    g = Function([p], p)
    err = _raises(
        TypeMismatchError, Function([x], Call(g, [x])),
        "argument 0 has type Tensor[(2), float32], but the callee expects Tensor[(3), float32]",
    )
    assert err.location == "in @main at body"


def test_tuple_index_out_of_range():
    x = relay.var("x", shape=(2,))
    _raises(
        TypeInferenceError, Function([x], TupleGetItem(Tuple([x, x]), 2)),
        "tuple index 2 is out of range for a tuple of 2 fields",
    )


def test_projection_of_a_non_tuple():
    x = relay.var("x", shape=(2,))
    _raises(TypeMismatchError, Function([x], TupleGetItem(x, 0)), "it is not a tuple")


def test_unbound_type_variable():
    a = TypeVar("A")
    x = Var("x", a)
    _raises(
        TypeInferenceError, Function([x], x),
        "type variable A is not bound by the type parameters of any function in @main",
    )


def test_let_annotation_mismatch():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(3,))
    _raises(
        TypeMismatchError, Function([x], Let(y, x, y)),
        "the value bound to %y has type Tensor[(2), float32], but %y has type "
        "Tensor[(3), float32]",
    )


def test_return_annotation_mismatch():
    x = relay.var("x", shape=(2,))
    _raises(
        TypeMismatchError, Function([x], x, TensorType((2,), "int32")),
        "the function body has type Tensor[(2), float32], but the function's return type is "
        "Tensor[(2), int32]",
    )


def test_unused_parameter_is_underdetermined():
    x = relay.var("x")
    _raises(
        UnderdeterminedTypeError, Function([x], relay.const(1.0)),
        "cannot infer the type of %x", "add a type annotation",
    )


def test_relation_that_never_runs_is_underdetermined():
    x = relay.var("x")
    _raises(
        UnderdeterminedTypeError, Function([x], relay.nn.relu(x)),
        "cannot infer the types of the arguments of operator nn.relu", "nn.relu(%x)",
    )


def test_projection_that_never_runs_is_underdetermined():
    t = relay.var("t")
    _raises(
        UnderdeterminedTypeError, Function([t], TupleGetItem(t, 0)),
        "cannot infer the type of the tuple this projection reads", "in @main at body",
    )


def test_operator_as_the_whole_expression():
    with pytest.raises(TypeInferenceError, match="operator add is not a value"):
        infer_type_expr(Op.get("add"))


def test_infinite_type():
    f = relay.var("f")
    _raises(TypeMismatchError, Function([f], f(f)), "a type cannot contain itself")


def test_undefined_global():
    x = relay.var("x", shape=(2,))
    _raises(
        TypeInferenceError, Function([x], Call(GlobalVar("nowhere"), [x])),
        "@nowhere is not defined in the module (it has: @main)",
    )


def test_operator_used_as_a_value():
    x = relay.var("x", shape=(2,))
    g = relay.var("g")
    _raises(
        TypeInferenceError, Function([x, g], Call(g, [Op.get("negative")])),
        "operator negative is used as a value",
    )


def test_relation_returning_a_non_type():
    name = "test_infer_type.bad_relation"
    register_op(name, num_inputs=1, type_relation=lambda types, attrs: None, override=True)
    x = relay.var("x", shape=(2,))
    _raises(
        TypeRelationError, Function([x], Call(Op.get(name), [x])),
        f"the type relation of operator {name} returned None",
    )


def test_relation_error_for_a_deferred_call_names_the_call():
    a = relay.var("a")
    g = relay.var("g")
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(3,))
    body = Let(g, Function([a], relay.add(a, y)), g(x))
    _raises(
        TypeRelationError, Function([x, y], body),
        "in @main at body.value.body (in the value bound to %g)", "add: shapes (2,) and (3,)",
        "add(%a, %y)",
    )


def test_failed_inference_leaves_input_untouched():
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(4,))
    func = Function([a, b], relay.add(a, b))
    mod = IRModule({"main": func})
    with pytest.raises(TypeInferenceError):
        infer_type_module(mod)
    assert mod["main"] is func
    assert not any(n.has_checked_type for n in all_nodes(func) if not isinstance(n, Var))


def test_bad_input_kinds():
    with pytest.raises(TypeError, match="expects an IRModule"):
        infer_type_module(Function([], relay.const(1)))
    with pytest.raises(TypeError, match="expects a Relay expression"):
        infer_type_expr("add")


def test_unconstrained_type_argument_is_underdetermined():
    t = TypeVar("T")
    g = Function([], relay.const(1.0), None, [t])
    _raises(
        UnderdeterminedTypeError, Function([], Call(g, [])),
        "cannot infer the type of type argument 0 of this call: nothing in the program "
        "determines it",
    )


def test_global_used_against_its_definition():
    x = relay.var("x", shape=(2,))
    p = relay.var("p", shape=(3,))
    helper = GlobalVar("helper")
    err = _raises(
        TypeMismatchError, Function([x], Call(helper, [x])),
        "in @helper: @helper has type fn (Tensor[(3), float32]) -> Tensor[(3), float32], "
        "but its uses require fn (Tensor[(2), float32]) -> _",
        helper=Function([p], p),
    )
    assert err.location == "in @helper"


def test_too_many_type_arguments():
    a = TypeVar("A")
    x = Var("x", a)
    ident = Function([x], x, a, [a])
    y = relay.var("y", F32)
    _raises(
        TypeInferenceError, Function([y], Call(ident, [y], type_args=[F32, F32])),
        "the call gives 2 type arguments, but the callee has 1 type parameters",
    )


def test_call_without_attrs_uses_the_schema_defaults():
    a = relay.var("a", shape=(2, 3))
    f = infer_main(Function([a], Call(Op.get("concatenate"), [Tuple([a, a])])))
    assert f.ret_type == TensorType((4, 3))
    assert f.body.attrs is None  # the program itself is not changed


def test_incomplete_annotation_is_filled_in():
    x = relay.var("x", shape=(2,))
    y = Var("y", TupleType([IncompleteType(), F32]))
    f = infer_main(Function([x], Let(y, Tuple([x, relay.const(1.0)]), TupleGetItem(y, 0))))
    assert f.body.var.type_annotation == TupleType([TensorType((2,)), F32])
    assert f.ret_type == TensorType((2,))


def test_condition_type_inferred_from_if():
    c = relay.var("c")
    x = relay.var("x", shape=(2,))
    f = infer_main(Function([c, x], If(c, x, relay.negative(x))))
    assert f.params[0].type_annotation == BOOL


# --- annotated variables keep their identity (TVM keeps their vid) -------------------------
def test_annotated_variable_has_its_annotation_as_checked_type():
    t = TensorType((2, 3))
    assert relay.var("x", t).checked_type is t
    assert relay.var("f", FuncType([t], t)).checked_type == FuncType([t], t)
    # Nothing to go by: no annotation, or one with an unknown part.
    assert not relay.var("y").has_checked_type
    assert not Var("z", TupleType([IncompleteType(), t])).has_checked_type


def test_annotated_variables_are_kept_and_typing_twice_gives_the_same_program():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    t = relay.var("t")
    expr = Let(t, relay.add(x, y), relay.multiply(t, x))
    once = infer_type_expr(expr)
    assert once.value.args[0] is x and once.value.args[1] is y and once.body.args[1] is x
    # The unannotated %t becomes a copy annotated with its type; typing again keeps it.
    assert once.var is not t and once.var.type_annotation == TensorType((3,))
    twice = infer_type_expr(once)
    assert twice.var is once.var
    relaypass.ir.assert_structural_equal(twice, once)
    relaypass.ir.assert_structural_equal(infer_type_expr(expr), once)


def test_variable_whose_type_is_not_its_annotation_is_a_copy():
    # A let's Any unified with the value's own Any elsewhere: the variable's type differs.
    x = relay.var("x", TensorType([Any(), 4]))
    v = relay.var("v", TensorType([3, Any()]))
    f = infer_main(Function([x], Let(v, x, v)))
    assert f.params[0] is x
    assert f.body.var is not v and f.body.body is f.body.var
    assert f.body.var.type_annotation == TensorType([3, Any()])
    assert f.body.var.checked_type == TensorType([Any(), Any()])


def test_type_comments_on_variables_only_once_typed():
    x = relay.var("x", shape=(2,))
    f = Function([x], relay.nn.relu(x))
    assert "/* ty=" not in f.astext() and "/* ty=" not in relay.nn.relu(x).astext()
    typed = infer_main(f).astext()
    assert "%x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */" in typed
    free = infer_type_expr(relay.nn.relu(x)).astext()
    assert "free_var %x: Tensor[(2), float32] /* ty=Tensor[(2), float32] */;" in free


# --- dtypes as Relay types them -----------------------------------------------------------
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf"])
def test_math_functions_type_any_dtype(name):
    # Relay's IdentityRel: the result has the argument's type, whatever its dtype.
    i = relay.var("i", shape=(2,), dtype="int32")
    f = infer_main(Function([i], getattr(relay, name)(i)))
    assert f.ret_type == TensorType((2,), "int32")


def test_bfloat16_types_and_casts():
    x = relay.var("x", shape=(4,), dtype="bfloat16")
    f = infer_main(Function([x], relay.cast(relay.clip(x, 0.0, 1.0), "float32")))
    assert f.checked_type == FuncType([TensorType((4,), "bfloat16")], TensorType((4,)))
    y = relay.var("y", shape=(4,))
    mod = infer_type_module(IRModule({"main": Function([y], relay.cast(y, "bfloat16"))}))
    assert mod["main"].ret_type.dtype == "bfloat16"
    text = mod.astext()
    assert 'cast(%y, dtype="bfloat16") /* ty=Tensor[(4), bfloat16] */' in text
    relaypass.ir.assert_structural_equal(relaypass.parse(text), mod)


def test_bfloat16_data_needs_ml_dtypes(monkeypatch):
    from relaypass.errors import EvaluationError
    from relaypass.ir.dtype import UnsupportedDtypeError, numpy_dtype

    y = relay.var("y", shape=(2,))
    f = Function([y], relay.cast(relay.cast(y, "bfloat16"), "float32"))
    data = np.array([1.0, 0.1], "float32")
    pytest.importorskip("ml_dtypes")
    out = relay.create_executor().evaluate(f)(data).numpy()
    np.testing.assert_allclose(out, data, rtol=1e-2)
    monkeypatch.setitem(__import__("sys").modules, "ml_dtypes", None)  # as if not installed
    with pytest.raises(UnsupportedDtypeError, match="bfloat16 data needs the ml_dtypes package"):
        numpy_dtype("bfloat16")
    with pytest.raises(EvaluationError, match="ml_dtypes"):
        relay.create_executor().evaluate(f)(data)


def test_argmax_indices_have_the_dtype_of_the_dims():
    x = relay.var("x", shape=(2, 3))
    wide = relay.broadcast_to(x, relay.const([2, 3], "int64"))
    mod = infer_type_module(IRModule({"main": Function([x], relay.argmax(wide, axis=[1]))}))
    f = mod["main"]
    assert f.ret_type == TensorType((2,), "int64")
    assert [d.dtype for d in f.body.args[0].checked_type.shape] == ["int64", "int64"]
    # The int64 shape survives the text format (``2i64``), as in TVM.
    assert "shape=[2i64, 3i64]" in mod.astext()
    assert relaypass.parse(mod.astext())["main"].ret_type == TensorType((2,), "int64")
    assert infer_main(Function([x], relay.argmin(x, axis=[0]))).ret_type.dtype == "int32"


# --- scale: no recursion along dataflow or let chains ----------------------------------
def test_chain_of_100000_calls():
    x = relay.var("x", shape=(2, 2))
    e = x
    for i in range(100_000):
        e = relay.add(e, x) if i % 2 else relay.nn.relu(e)
    f = infer_main(Function([x], e))
    assert f.ret_type == TensorType((2, 2))
    assert f.body.checked_type == TensorType((2, 2))


def test_chain_of_100000_lets():
    x = relay.var("x", shape=(3,))
    n = 100_000
    variables = [relay.var(f"v{i}") for i in range(n)]
    body: relay.Expr = variables[-1]
    for i in reversed(range(n)):
        prev = variables[i - 1] if i else x
        body = Let(variables[i], relay.negative(prev), body)
    f = infer_main(Function([x], body))
    assert f.ret_type == TensorType((3,))
    inner = f.body
    for _ in range(n - 1):
        inner = inner.body
    assert inner.var.type_annotation == TensorType((3,))


def test_long_cascade_of_deferred_relations():
    # Nothing is known until the closure is applied: every relation waits,
    # then all run in one cascade (20 times the default recursion limit).
    a = relay.var("a")
    e = a
    for _ in range(20_000):
        e = relay.negative(e)
    g = relay.var("g")
    x = relay.var("x", shape=(5,))
    f = infer_main(Function([x], Let(g, Function([a], e), g(x))))
    assert f.ret_type == TensorType((5,))


# --- the solver on its own -----------------------------------------------------------
def test_solver_links_variables_then_solves_the_class():
    solver = TypeSolver()
    a, b, c = IncompleteType(), IncompleteType(), IncompleteType()
    solver.unify(a, b)
    solver.unify(b, c)
    assert solver.free_var(a) is not None
    solver.unify(c, F32)
    assert solver.resolve(a) == F32 and solver.resolve(b) == F32


def test_solver_any_rule_generalizes_variables_only():
    solver = TypeSolver()
    v = IncompleteType()
    known, dynamic = TensorType((3, 4)), TensorType((Any(), 4))
    solver.unify(v, known)
    assert solver.unify(v, dynamic) == dynamic
    assert solver.resolve(v) == dynamic
    assert known == TensorType((3, 4))


def test_solver_runs_a_relation_once_its_inputs_are_known():
    solver = TypeSolver()
    arg, out = IncompleteType(), IncompleteType()
    calls = []

    def double_rows(types):
        calls.append(types)
        return TensorType((2 * types[0].shape[0],))

    solver.add_relation(double_rows, [arg], out, where=None)
    assert calls == [] and [r.done for r in solver.pending_relations()] == [False]
    solver.unify(arg, TensorType((5,)))
    assert calls == [[TensorType((5,))]]
    assert solver.resolve(out) == TensorType((10,)) and solver.pending_relations() == []


def test_solver_occurs_check_and_function_instantiation():
    solver = TypeSolver()
    v = IncompleteType()
    with pytest.raises(TypeMismatchError, match="a type cannot contain itself"):
        solver.unify(v, FuncType([v], F32))
    a = TypeVar("a")
    poly = FuncType([a], a, [a])
    mono = FuncType([I32], IncompleteType())
    unified = solver.unify(poly, mono)
    assert solver.resolve(unified) == FuncType([I32], I32)


# --- the pass ----------------------------------------------------------------------
def test_infer_type_pass_through_relay_transform():
    pass_ = relay.transform.InferType()
    assert pass_.info.name == "InferType"
    assert pass_.info.opt_level == 0
    out = pass_(_sample_module())
    assert out["main"].body.checked_type == TensorType((2, 3))


def test_get_pass_gives_the_same_pass():
    mod = _sample_module()
    by_name = relaypass.transform.get_pass("InferType")
    assert by_name.info.name == "InferType" and by_name.info.opt_level == 0
    relaypass.ir.assert_structural_equal(by_name(mod), relay.transform.InferType()(mod))
    relaypass.ir.assert_structural_equal(by_name(mod), infer_type_module(mod))


def test_pass_on_a_bare_function_hands_back_a_function():
    x = relay.var("x", shape=(2,))
    typed = relay.transform.InferType()(Function([x], relay.negative(x)))
    assert isinstance(typed, Function)
    assert typed.checked_type == FuncType([TensorType((2,))], TensorType((2,)))


def test_pass_factory_rejects_options():
    from relaypass_std.infer_type import InferType

    with pytest.raises(TypeError, match="'InferType' has no option 'verbose'. Its options: none"):
        InferType(verbose=True)


def test_operator_types_its_unannotated_vector_arguments_as_relay_does():
    data = relay.var("data", shape=(1, 4, 5, 5))
    gamma, beta, mean, var = (relay.var(n) for n in ("gamma", "beta", "mean", "var"))
    out = relay.nn.batch_norm(data, gamma, beta, mean, var)[0]
    mod = infer_type_module(relay.IRModule.from_expr(out))
    params = mod["main"].params
    assert [p.checked_type for p in params[1:]] == [relay.TensorType((4,), "float32")] * 4


def test_InferType_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
    check_pass("InferType", examples=20, features={"let", "if", "tuple", "fn", "global"}, seed=7)


def test_an_ill_kinded_annotation_is_a_kind_error_at_its_variable():
    from relaypass.analysis.kind_check import KindCheckError

    shape_var = relay.TypeVar("n", relay.TypeKind.ShapeVar)
    x = relay.var("x", relay.TupleType([shape_var]))
    with pytest.raises(KindCheckError, match=r"params\[0\].*tuple member.*ShapeVar.*Type"):
        relay.transform.InferType()(IRModule.from_expr(relay.Function([x], x)))
