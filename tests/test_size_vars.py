"""Size variables: symbolic dimensions in types, text, comparison, relations, inference, runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relaypass
from relaypass import relay, te
from relaypass.errors import EvaluationError, ParseError, TypeRelationError
from relaypass.interp.interpreter import SizeBindingError
from relaypass.ir import (
    Any,
    IRModule,
    TensorType,
    assert_structural_equal,
    load_json,
    save_json,
    structural_equal,
    structural_hash,
)
from relaypass.ir.shape_expr import (
    FloorDiv,
    SizeExpr,
    SymbolicDimError,
    dim_floordiv,
    dim_floormod,
    dim_text,
    free_size_vars,
    known_int,
    substitute,
)
from relaypass.ir.text.parser import parse, parse_expr, parse_type
from relaypass.ir.types import SizeVar
from relaypass.testing.strategies import dynamic_programs, modules
from relaypass_std.infer_type import TypeMismatchError


def infer(expr):
    """The type of ``expr`` (a function's type for a function)."""
    mod = relay.transform.InferType()(IRModule.from_expr(expr))
    main = mod["main"]
    return main.checked_type if isinstance(expr, relay.Function) else main.body.checked_type


def var(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


# --- the arithmetic of dimensions ------------------------------------------------------


def test_expressions_have_one_canonical_form():
    n, m = SizeVar("n"), SizeVar("m")
    assert n * 4 == 4 * n and hash(n * 4) == hash(4 * n)
    assert n + m == m + n
    assert (n + m) - m is n
    assert n - n == 0 and type(n - n) is relaypass.ir.IntImm
    assert (n * 4) // 2 == n * 2
    assert (n * 4 + 3) // 2 == n * 2 + 1
    assert (2 * n + 1) % 2 == 1
    assert (n * m * 4) // (2 * n) == m * 2
    assert n * 0 == 0
    assert str(n * m * 2 - n + 3) == "-n + m*n*2 + 3"  # terms by degree, then by name


def test_a_division_without_an_exact_form_is_kept_or_becomes_any():
    n, m = SizeVar("n"), SizeVar("m")
    half = n // 2
    assert type(half) is SizeExpr and str(half) == "floordiv(n, 2)"
    assert str((n + 1) // 2) == "floordiv(n + 1, 2)"
    assert str(n % 3) == "floormod(n, 3)"
    # Halving twice is one division (divisions never nest).
    assert (n // 2) // 2 == n // 4
    assert str((n // 2 + 1) // 3) == "floordiv(n + 2, 6)"
    # By a size variable that does not divide every term: no exact form.
    assert isinstance(n // m, Any)
    assert isinstance(dim_floormod(n, m), Any)
    assert isinstance(n + Any(), Any) and isinstance(n * Any(), Any)
    with pytest.raises(ZeroDivisionError):
        dim_floordiv(n, 0)


def test_substitution_folds_and_free_variables_are_listed_in_order():
    n, m = SizeVar("n"), SizeVar("m")
    d = (n + 1) // 2 + m * 3
    assert substitute(d, {n: 5, m: 2}) == 9
    assert substitute(d, {m: 1}) == (n + 1) // 2 + 3
    assert free_size_vars([m * 2, n, d]) == [m, n]
    assert known_int(TensorType((3, n)).shape[0]) == 3
    assert known_int(n) is None and known_int(n * 2) is None and known_int(Any()) is None


def test_a_symbolic_dimension_has_no_integer_value():
    n = SizeVar("n")
    with pytest.raises(SymbolicDimError, match="symbolic"):
        int(n)
    with pytest.raises(SymbolicDimError):
        range(n * 2)
    with pytest.raises(TypeRelationError):  # comparisons cannot be answered either
        assert n > 1


def test_tensor_types_hold_symbolic_dimensions():
    n = SizeVar("n")
    t = TensorType((n, 3, n * 2), "float32")
    assert not t.is_static and t.symbolic
    assert t == TensorType((n, 3, 2 * n), "float32")
    assert t != TensorType((SizeVar("n"), 3, n * 2), "float32")  # another variable
    with pytest.raises(ValueError, match="unknown dimensions"):
        _ = t.concrete_shape
    assert not TensorType((1, Any()), "float32").symbolic


# --- TVM's spellings ----------------------------------------------------------------------


def test_tvm_spellings_make_size_variables():
    import relaypass as tvm

    n = tvm.tir.Var("n", "int64")
    assert isinstance(n, tvm.tir.SizeVar) and n.dtype == "int64" and n.name == "n"
    assert isinstance(te.var("m"), SizeVar) and te.var("m").dtype == "int32"
    assert isinstance(te.size_var("k"), SizeVar)
    assert tvm.tir.IntImm("int64", 3) == 3
    ty = relay.TensorType((n, tvm.tir.IntImm("int64", 3)), "float32")
    assert ty.shape[0] is n
    with pytest.raises(tvm.errors.RelayCompatError):
        te.placeholder((1,), name="x")
    with pytest.raises(tvm.errors.RelayCompatError):
        _ = tvm.tir.Let


# --- text ---------------------------------------------------------------------------------


def test_size_variables_print_by_name_and_parse_back_as_one_variable():
    n = SizeVar("n")
    x, y = var("x", (n, 3)), var("y", (n * 4, (n + 1) // 2))
    func = relay.Function([x, y], relay.Tuple([x, y]))
    text = func.astext()
    assert "%x: Tensor[(n, 3), float32]" in text
    assert "%y: Tensor[(n*4, floordiv(n + 1, 2)), float32]" in text
    back = parse_expr(text)
    bx, by = back.params
    assert bx.type_annotation.shape[0] is free_size_vars(by.type_annotation.shape)[0]
    assert_structural_equal(back, func)
    assert back.astext() == text


def test_two_variables_of_one_name_print_apart():
    a, b, odd = SizeVar("n"), SizeVar("n"), SizeVar("batch size")
    x, y = var("x", (a, b)), var("y", (odd, a + b))
    func = relay.Function([x, y], relay.Tuple([x, y]))
    text = func.astext()
    assert "Tensor[(n, n_1), float32]" in text and "Tensor[(batch_size, n + n_1), float32]" in text
    back = parse_expr(text)
    assert_structural_equal(back, func)
    assert back.astext() == text


@pytest.mark.parametrize("written, printed", [
    ("(n-1, 2*n, (n+1)*2)", "(n - 1, n*2, n*2 + 2)"),
    ("(-n + 4, n*n, floormod(n*3, 2))", "(-n + 4, n*n, floormod(n, 2))"),
    ("(floordiv(n*4, 2), floordiv(floordiv(n, 2), 2), ?)", "(n*2, floordiv(n, 4), ?)"),
    ("(m + n, n + m)", "(m + n, m + n)"),
])
def test_dimension_expressions_parse_to_their_canonical_form(written, printed):
    ty = parse_type(f"Tensor[{written}, float32]")
    assert str(ty) == f"Tensor[{printed}, float32]"


@pytest.mark.parametrize("text, message", [
    ("Tensor[(n +, 3), float32]", "a dimension"),
    ("Tensor[(floordiv(n, 0)), float32]", "floordiv by 0"),
    ("Tensor[(floordiv(n 2)), float32]", "',' and the divisor"),
    ("Tensor[(n.x), float32]", "a dimension"),
])
def test_bad_dimensions_are_parse_errors_with_a_place(text, message):
    with pytest.raises(ParseError, match=message) as info:
        parse_type(text)
    assert info.value.line == 1


def test_a_module_shares_its_size_variables_between_functions():
    mod = parse(
        '#[version = "0.0.5"]\n'
        "def @f(%x: Tensor[(n, 2), float32]) -> Tensor[(n, 2), float32] { %x }\n"
        "def @main(%y: Tensor[(n, 2), float32]) { @f(%y) }\n"
    )
    f_n = mod["f"].params[0].type_annotation.shape[0]
    assert mod["main"].params[0].type_annotation.shape[0] is f_n
    typed = relay.transform.InferType()(mod)
    assert typed["main"].checked_type.ret_type == TensorType((f_n, 2), "float32")


# --- structural equality, hashing, JSON -------------------------------------------------


def test_structural_equality_maps_size_variables_consistently():
    n, m, k = SizeVar("n"), SizeVar("m"), SizeVar("k")

    def fn(a, b):
        x, y = var("x", (a, b * 2)), var("y", (a + b,))
        return relay.Function([x, y], relay.Tuple([x, y]))

    assert structural_equal(fn(n, m), fn(k, SizeVar("j")))
    assert structural_hash(fn(n, m)) == structural_hash(fn(k, SizeVar("j")))
    assert not structural_equal(fn(n, m), fn(k, k))  # two variables vs one
    assert not structural_equal(fn(n, n), fn(k, m))
    with pytest.raises(AssertionError, match="shape"):
        assert_structural_equal(fn(n, m), fn(k, k))
    # A number is not a size variable, nor Any.
    assert not structural_equal(TensorType((n,)), TensorType((3,)))
    assert not structural_equal(TensorType((n,)), TensorType((Any(),)))


def test_json_keeps_size_variables_and_expressions():
    n = SizeVar("n")
    x, y = var("x", (n, 3)), var("y", ((n + 1) // 2, n * 4))
    func = relay.Function([x, y], relay.Tuple([x, y]))
    back = load_json(save_json(func))
    assert_structural_equal(back, func)
    assert back.params[0].type_annotation.shape[0] is free_size_vars(
        back.params[1].type_annotation.shape)[0]


# --- type relations --------------------------------------------------------------------------

N, M = te.size_var("n"), te.size_var("m")
X, Y = var("x", (N, 4)), var("y", (M, 4))


@pytest.mark.parametrize("build, shape", [
    (lambda: relay.add(X, var("o", (1, 4))), (N, 4)),
    (lambda: relay.add(X, var("o", (N, 1))), (N, 4)),
    (lambda: relay.add(X, var("o", (Any(), 4))), (N, 4)),
    (lambda: relay.concatenate([X, Y], 0), (N + M, 4)),
    (lambda: relay.reshape(X, (-1,)), (N * 4,)),
    (lambda: relay.reshape(X, (-1, 2)), (N * 2, 2)),
    (lambda: relay.reshape(var("a", (N, M, 4)), (0, -1)), (N, M * 4)),
    (lambda: relay.reshape(var("a", (N, M, 4)), (-3, -2)), (N * M, 4)),
    (lambda: relay.reshape(X, (-1, 3)), (Any(), 3)),  # n*4 need not divide by 3
    (lambda: relay.take(X, var("i", (M,), "int32"), axis=0), (M, 4)),
    (lambda: relay.take(X, var("i", (M,), "int32"), axis=1), (N, M)),
    (lambda: relay.nn.dense(X, var("w", (8, 4))), (N, 8)),
    (lambda: relay.nn.matmul(X, var("w", (4, 8))), (N, 8)),
    (lambda: relay.nn.batch_matmul(var("a", (N, 3, 4)), var("b", (1, 5, 4))), (N, 3, 5)),
    (lambda: relay.sum(X, axis=1), (N,)),
    (lambda: relay.max(X, axis=0, keepdims=True), (1, 4)),
    (lambda: relay.transpose(X), (4, N)),
    (lambda: relay.expand_dims(X, 1), (N, 1, 4)),
    (lambda: relay.squeeze(var("a", (N, 1, 4)), [1]), (N, 4)),
    (lambda: relay.strided_slice(X, [0, 1], [2, 4]), (Any(), 3)),  # as Relay: Any
    (lambda: relay.nn.conv2d(var("d", (N, 3, 8, 8)), var("w", (4, 3, 3, 3)), padding=(1, 1)),
     (N, 4, 8, 8)),
    (lambda: relay.nn.max_pool2d(var("d", (N, 3, 8, 8)), pool_size=(2, 2), strides=(2, 2)),
     (N, 3, 4, 4)),
    (lambda: relay.nn.global_avg_pool2d(var("d", (N, 3, 8, 8))), (N, 3, 1, 1)),
    (lambda: relay.nn.max_pool2d(var("d", (1, 3, N, 8)), pool_size=(2, 2), strides=(2, 2)),
     (1, 3, N // 2, 4)),
    (lambda: relay.nn.avg_pool2d(var("d", (1, 3, N, 8)), pool_size=(3, 3), padding=(1, 1),
                                 strides=(2, 2), ceil_mode=True), (1, 3, N // 2 + 1, 5)),
    (lambda: relay.shape_of(X), (2,)),
    (lambda: relay.ndarray_size(X), ()),
    (lambda: relay.split(var("a", (N * 2, 3)), 2, axis=0)[1], (N, 3)),
    (lambda: relay.split(X, 2, axis=0)[0], (N // 2, 4)),
    (lambda: relay.split(X, [1], axis=0)[1], (N - 1, 4)),
    (lambda: relay.stack([X, X], 0), (2, N, 4)),
    (lambda: relay.nn.batch_flatten(var("a", (N, 2, 3))), (N, 6)),
    (lambda: relay.tile(X, (2, 1)), (N * 2, 4)),
    (lambda: relay.nn.pad(X, ((1, 1), (0, 0))), (N + 2, 4)),
    (lambda: relay.nn.upsampling(var("d", (1, 3, N, 8)), 2, 2), (1, 3, N * 2, 16)),
    (lambda: relay.einsum([X, Y], "ij,kj->ik"), (N, M)),
])
def test_relations_propagate_size_variables(build, shape):
    assert infer(build()).shape == tuple(shape)


@pytest.mark.parametrize("build, message", [
    (lambda: relay.add(X, Y), "not broadcast-compatible .* n vs m"),
    (lambda: relay.add(X, var("o", (3, 4))), "not broadcast-compatible .* n vs 3"),
    (lambda: relay.squeeze(var("a", (N, 1, 4))), "axis must be given"),
])
def test_relations_reject_what_relay_rejects(build, message):
    with pytest.raises(TypeRelationError, match=message):
        infer(build())


# --- type inference ----------------------------------------------------------------------


def test_a_size_variable_bound_to_two_extents_is_a_type_error_naming_where():
    n = te.size_var("n")
    x = var("x", (n,))
    a, b = var("a", (3,)), var("b", (4,))
    body = relay.Let(a, x, relay.Let(b, x, relay.Tuple([a, b])))
    with pytest.raises(TypeMismatchError) as info:
        infer(relay.Function([x], body))
    message = str(info.value)
    assert "size variable n was bound to 3 by let %a" in message
    assert "let %b" in message


def test_one_binding_of_a_size_variable_types():
    n = te.size_var("n")
    x, a = var("x", (n,)), var("a", (3,))
    ty = infer(relay.Function([x], relay.Let(a, x, relay.Tuple([a]))))
    assert ty.arg_types[0].shape == (n,)


def test_any_unifies_with_a_size_variable():
    n = te.size_var("n")
    x = var("x", (n, 2))
    p = relay.var("p", shape=(Any(), 2))
    f = relay.Function([p], relay.nn.relu(p))
    ty = infer(relay.Function([x], f(x)))
    assert ty.arg_types[0].shape == (n, 2)
    assert ty.ret_type.shape[1] == 2


def test_a_size_variable_chain_of_100000_calls_types():
    n = te.size_var("n")
    x = var("x", (n, 2))
    y = x
    for _ in range(100_000):
        y = relay.add(y, x)
    mod = relay.transform.InferType()(IRModule.from_expr(relay.Function([x], y)))
    assert mod["main"].checked_type.ret_type == TensorType((n, 2), "float32")


# --- the interpreter ------------------------------------------------------------------------


def _run(func, *args):
    mod = relay.transform.InferType()(IRModule.from_expr(func))
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_the_interpreter_runs_one_program_on_several_extents():
    n, m = te.size_var("n"), te.size_var("m")
    x, y = var("x", (n, 4)), var("y", (m, 4))
    func = relay.Function([x, y], relay.reshape(relay.concatenate([x + x, y], 0), (-1,)))
    for a, b in [(2, 3), (5, 1), (0, 2)]:
        xs, ys = np.ones((a, 4), "float32"), np.arange(b * 4, dtype="float32").reshape(b, 4)
        out = _run(func, xs, ys).numpy()
        np.testing.assert_array_equal(out, np.concatenate([xs + xs, ys]).reshape(-1))


def test_arguments_that_disagree_on_a_size_variable_are_a_named_error():
    n = te.size_var("n")
    x, z = var("x", (n, 4)), var("z", (4, n))
    func = relay.Function([x, z], relay.nn.matmul(x, z))
    with pytest.raises(SizeBindingError, match=r"size variable n is 2 in argument %x \(axis 0\) "
                                               r"but 3 in argument %z \(axis 1\)"):
        _run(func, np.ones((2, 4), "float32"), np.ones((4, 3), "float32"))
    assert issubclass(SizeBindingError, EvaluationError)


def test_an_expression_dimension_is_checked_against_its_variables():
    n = te.size_var("n")
    x, y = var("x", (n,)), var("y", (n * 2,))
    func = relay.Function([x, y], relay.Tuple([x, y]))
    _run(func, np.ones(3, "float32"), np.ones(6, "float32"))
    with pytest.raises(SizeBindingError, match=r"argument %y \(axis 0\) has extent 5, but its type "
                                               r"says n\*2 = 6 \(with n = 3\)"):
        _run(func, np.ones(3, "float32"), np.ones(5, "float32"))


def test_the_graph_executor_rejects_symbolic_outputs_as_tvm_does():
    x = var("x", (te.size_var("n"),))
    mod = relay.transform.InferType()(IRModule.from_expr(relay.Function([x], x)))
    with pytest.raises(ValueError, match="static graphs"):
        relay.create_executor("graph", mod=mod).evaluate()


# --- generated programs ----------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(size=(1, 12), features={"let", "if", "fn", "tuple", "global"}, size_vars=True))
def test_random_programs_with_size_variables_type_and_round_trip(mod):
    text = mod.astext()
    back = parse(text)
    assert_structural_equal(back, mod)
    assert back.astext() == text
    typed = relay.transform.InferType()(mod)
    assert_structural_equal(parse(typed.astext()), typed)



@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dynamic_programs(size=(1, 6), size_vars=True))
def test_random_dyn_programs_type_and_round_trip(func):
    """Every dyn.* operator, with shape arguments as parameters, constants or shape_of."""
    mod = IRModule.from_expr(func)
    text = mod.astext()
    back = parse(text)
    assert_structural_equal(back, mod)
    assert back.astext() == text
    typed = relay.transform.InferType()(mod)
    assert_structural_equal(parse(typed.astext()), typed)


def test_the_dyn_strategy_draws_every_dyn_operator():
    """A strategy that stopped drawing an operator would make the property above vacuous."""
    seen: set[str] = set()

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(dynamic_programs(size=(3, 6)))
    def collect(func):
        def note(node):
            if isinstance(node, relay.Call) and node.op.name.startswith("dyn."):
                seen.add(node.op.name)

        relay.analysis.post_order_visit(func, note)

    collect()
    registered = {name for name in relay.op.Op.list_op_names() if name.startswith("dyn.")}
    assert registered and registered <= seen



def test_relay_op_dyn_builds_the_dynamic_operators_as_on_tvm():
    """TVM's ``relay.op.dyn`` tree (and its ``_make`` tables) builds dyn.* calls directly."""
    dyn = relay.op.dyn
    x = var("x", (2, 3, 4, 5))
    vec = var("v", (2,), "int64")
    calls = {
        "dyn.reshape": dyn.reshape(x, vec),
        "dyn.tile": dyn._make.tile(x, vec),
        "dyn.zeros": dyn.zeros(vec, "float32"),
        "dyn.nn.pad": dyn.nn.pad(x, var("w", (4, 2), "int64"), relay.const(0.0)),
        "dyn.nn.upsampling": dyn.nn._make.upsampling(x, relay.const(2.0), relay.const(2.0)),
        "dyn.image.resize2d": dyn.image.resize2d(x, vec, relay.const(np.zeros(4, "float32"))),
    }
    for name, made in calls.items():
        assert made.op.name == name
    ranks = [len(infer(c).shape) for c in calls.values()]
    assert ranks == [2, 4, 2, 4, 4, 4]
    assert infer(calls["dyn.image.resize2d"]).shape[:2] == (2, 3)


@given(st.lists(st.sampled_from(["n", "m", "2", "3"]), min_size=1, max_size=6),
       st.lists(st.sampled_from(["+", "-", "*"]), min_size=5, max_size=5))
def test_printed_expressions_parse_to_themselves(atoms, ops):
    text = atoms[0] + "".join(f" {o} {a}" for o, a in zip(ops, atoms[1:]))
    ty = parse_type(f"Tensor[({text}, floordiv({text}, 4)), float32]")
    again = parse_type(str(ty))
    assert_structural_equal(again, ty)
    assert str(again) == str(ty)
    assert dim_text(ty.shape[0]) == str(ty.shape[0])


def test_divisions_are_atoms_of_their_own_kind():
    n = SizeVar("n")
    (((coeff, (atom,)),)) = (n // 3).terms
    assert type(atom) is FloorDiv and atom.b == 3 and atom.a is n and coeff == 1
