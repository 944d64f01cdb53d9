"""TVM v0.18's parser cases (tests/python/relay/test_ir_parser.py), ported.

Written as a TVM user writes them; only the imports differ.  Each text that
parses is printed and parsed again, and must give the same program.

Two expectations follow TVM's parser rather than TVM's test file: the
variable of a sequence (``e1; e2``) is ``Var("", IncompleteType())`` and
``%_: _`` is annotated with an incomplete type, as the parser builds them
(TVM's test compares them with an unannotated ``Var("_")``, which its own
structural equality tells apart).  Not ported: ``test_import_grad``
(relaypass ships no ``gradient.rly``).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy import isclose

import relaypass as tvm
import relaypass.relay.testing  # noqa: F401  (TVM's ``import tvm.relay.testing``)
from relaypass import relay

SEMVER = '#[version = "0.0.5"]\n'

INFIX = {
    "*": relay.multiply, "/": relay.divide, "+": relay.add, "-": relay.subtract,
    "<": relay.less, ">": relay.greater, "<=": relay.less_equal, ">=": relay.greater_equal,
    "==": relay.equal, "!=": relay.not_equal,
}

DTYPES = [
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bool", "int8x4", "uint1x4", "float16x4",
]

int32 = relay.scalar_type("int32")
UNIT = relay.Tuple([])
X = relay.Var("x")
Y = relay.Var("y")
X_INT = relay.Var("x", int32)


def seq_var():
    """The variable TVM's parser binds the first part of ``e1; e2`` to."""
    return relay.Var("", relay.IncompleteType())


def same(a, b) -> bool:
    return tvm.ir.structural_equal(a, b, map_free_vars=True)


def assert_same(a, b) -> None:
    tvm.ir.assert_structural_equal(a, b, map_free_vars=True)


def expr_of(code: str):
    """The expression ``code`` reads as; printing and parsing it again changes nothing."""
    expr = tvm.relay.parse_expr(code)
    assert_same(tvm.relay.parse_expr(expr.astext()), expr)
    return expr


def module_of(code: str):
    """The module ``code`` reads as; printing and parsing it again changes nothing."""
    mod = tvm.relay.parse(SEMVER + code)
    assert_same(tvm.relay.fromtext(mod.astext()), mod)
    return mod


def value_of(code: str):
    return expr_of(code).data.numpy().item()


def test_line_block_and_nested_comments_are_skipped():
    assert_same(expr_of("// a line comment\n()"), UNIT)
    assert_same(expr_of("/* a block comment\n   over two lines */\n()"), UNIT)
    assert_same(expr_of("/* an outer comment\n   /* holds an inner one */\n*/\n()"), UNIT)


def test_integer_literals():
    assert isinstance(expr_of("1"), relay.Constant)
    assert isinstance(expr_of("1").data, tvm.nd.NDArray)
    for code, value in [("1", 1), ("10", 10), ("0", 0), ("-100", -100), ("-05", -5),
                        ("9223372036854775807", 9223372036854775807),
                        ("-42i", -42), ("-42i16", -42), ("-42i32", -42), ("-42i64", -42)]:
        assert value_of(code) == value
    for code, dtype, value in [("-42i16", "int16", -42), ("-42i32", "int32", -42),
                               ("-42i", "int32", -42), ("-42", "int32", -42),
                               ("-42i64", "int64", -42), ("2147483647", "int32", 2147483647),
                               ("2147483648", "int64", 2147483648)]:
        assert_same(expr_of(code), relay.const(value, dtype))
    # not representable in the dtype asked for
    for code in ("2147483648i32", "32768i16"):
        with pytest.raises(tvm.error.DiagnosticError):
            expr_of(code)


def test_float_literals():
    assert value_of("1.0f") == 1.0
    assert isclose(value_of("1.56667f"), 1.56667)
    assert value_of("0.0f") == 0.0
    assert value_of("-10.0f") == -10.0
    for code, value in [("1e-1f", 0.1), ("1e+1f", 10.0), ("1E-1f", 0.1), ("1E+1f", 10.0),
                        ("1.0e-1f", 0.1), ("1.0e+1f", 10.0), ("1.0E-1f", 0.1), ("1.0E+1f", 10.0)]:
        assert isclose(value_of(code), value)
    assert value_of("3f16") == 3.0
    assert value_of("3f32") == 3.0
    for code, dtype in [("3f16", "float16"), ("3f32", "float32"), ("3f", "float32"),
                        ("3f64", "float64")]:
        assert_same(expr_of(code), relay.const(3.0, dtype))
    for code in ("3.40283e+38f32", "65505f16"):
        with pytest.raises(tvm.error.DiagnosticError):
            expr_of(code)


def test_bool_literals():
    assert value_of("True") is True
    assert value_of("False") is False
    assert_same(expr_of("True"), relay.const(True, "bool"))


def test_a_run_of_minus_signs_is_a_sign():
    assert value_of("--10") == 10
    assert value_of("---10") == -10


def test_infix_operators_call_their_operator():
    for symbol, make in INFIX.items():
        assert_same(expr_of(f"1 {symbol} 1"), make(relay.const(1), relay.const(1)))


def test_parentheses_group():
    assert same(expr_of("1 * 1 + 1"), expr_of("(1 * 1) + 1"))
    assert not same(expr_of("1 * 1 + 1"), expr_of("1 * (1 + 1)"))


def test_precedence_and_associativity():
    assert same(expr_of("1 * 1 + 1 < 1 == 1"), expr_of("(((1 * 1) + 1) < 1) == 1"))
    assert same(expr_of("1 == 1 < 1 + 1 * 1"), expr_of("1 == (1 < (1 + (1 * 1)))"))
    assert same(expr_of("1 - 1 - 1"), expr_of("(1 - 1) - 1"))


def test_names_of_locals_globals_and_operators():
    let = expr_of("let %foo = (); %foo")
    assert isinstance(let.body, relay.Var) and let.body.name_hint == "foo"
    gv = expr_of("@foo")
    assert isinstance(gv, relay.GlobalVar) and gv.name_hint == "foo"
    op = expr_of("add")
    assert isinstance(op, tvm.ir.Op) and op.name == "add"
    op = expr_of("nn.global_avg_pool2d")
    assert isinstance(op, tvm.ir.Op) and op.name == "nn.global_avg_pool2d"


def test_a_metadata_reference_of_an_unknown_kind_is_an_error():
    with pytest.raises(tvm.error.DiagnosticError):
        expr_of("meta[type_key][1337]")


def test_let():
    assert_same(expr_of("let %x = 1; ()"), relay.Let(X, relay.const(1), UNIT))
    assert_same(
        expr_of("let %x = 1;\nlet %y = 2;\n()"),
        relay.Let(X, relay.const(1), relay.Let(Y, relay.const(2), UNIT)),
    )


def test_sequence():
    assert_same(expr_of("(); ()"), relay.Let(seq_var(), UNIT, UNIT))
    assert_same(expr_of("let %_ = 1; ()"), relay.Let(X, relay.const(1), UNIT))


def test_numbered_temporaries():
    assert_same(expr_of("%0 = (); %1 = 1; (%0, %0, %1)"), relay.Tuple([UNIT, UNIT, relay.const(1)]))
    assert_same(expr_of("%1 = (); %1"), relay.Tuple([]))


def test_let_binds_only_local_variables():
    with pytest.raises(tvm.error.DiagnosticError):
        expr_of("let @x = 1; ()")
    with pytest.raises(tvm.error.DiagnosticError):
        expr_of("let x = 1; ()")


def test_tuples():
    assert_same(expr_of("()"), relay.Tuple([]))
    assert_same(expr_of("(0,)"), relay.Tuple([relay.const(0)]))
    assert_same(expr_of("(0, 1)"), relay.Tuple([relay.const(0), relay.const(1)]))
    assert_same(expr_of("(0, 1, 2)"), relay.Tuple([relay.const(0), relay.const(1), relay.const(2)]))


def test_projection_of_a_tuple():
    x = relay.var("x", shape=())
    assert_same(
        expr_of("free_var %x: float32; %x((%x,).0, %x)"),
        relay.Call(x, [relay.TupleGetItem(relay.Tuple([x]), 0), x]),
    )


def test_functions():
    assert_same(expr_of("fn () { 0 }"), relay.Function([], relay.const(0), None, []))
    assert_same(expr_of("fn (%x) { %x }"), relay.Function([X], X, None, []))
    assert_same(expr_of("fn (%x, %y) { %x + %y }"), relay.Function([X, Y], relay.add(X, Y), None, []))
    assert_same(expr_of("fn (%x: int32) -> int32 { %x }"), relay.Function([X_INT], X_INT, int32, []))


def test_definitions():
    assert isinstance(module_of("def @id(%x: int32) -> int32 {\n  %x\n}"), tvm.IRModule)
    assert isinstance(module_of("def @id(%x: int32) -> int32 {\n  @id(%x)\n}"), tvm.IRModule)


def test_if_else():
    assert_same(
        expr_of("if (True) {\n  0\n} else {\n  1\n}"),
        relay.If(relay.const(True), relay.const(0), relay.const(1)),
    )


def test_a_branch_does_not_see_the_other_branch_bindings():
    with pytest.raises(tvm.error.DiagnosticError):
        expr_of("if (True) {\n  let %x = ();\n  ()\n} else {\n  %x\n}")


def test_references():
    tvm.relay.parse(
        SEMVER + "def @main(%x: float32) {\n"
        "  %0 = ref(%x);\n"
        "  ref_write(%0, 1f);\n"
        "  ref_read(%0)\n"
        "}"
    )


def test_calls():
    ident = relay.Var("id")
    assert_same(
        expr_of("let %id = fn (%x) { %x };\n10 * %id(10)"),
        relay.Let(ident, relay.Function([X], X, None, []),
                  relay.multiply(relay.const(10), relay.Call(ident, [relay.const(10)]))),
    )
    constant = relay.Var("constant")
    assert_same(
        expr_of("let %constant = fn () { 0 };\n%constant()"),
        relay.Let(constant, relay.Function([], relay.const(0), None, []),
                  relay.Call(constant, [], None, None)),
    )
    assert_same(
        expr_of("let %id = fn (%x) { %x };\n%id(1)"),
        relay.Let(ident, relay.Function([X], X, None, []), relay.Call(ident, [relay.const(1)], None, None)),
    )
    mul = relay.Var("multiply")
    assert_same(
        expr_of("let %multiply = fn (%x, %y) { %x * %y };\n%multiply(0, 0)"),
        relay.Let(mul, relay.Function([X, Y], relay.multiply(X, Y), None, []),
                  relay.Call(mul, [relay.const(0), relay.const(0)], None, None)),
    )
    assert_same(
        expr_of("(fn (%x) { %x })(0)"),
        relay.Call(relay.Function([X], X, None, []), [relay.const(0)], None, None),
    )
    curried = relay.Var("curried_mult")
    assert_same(
        expr_of("let %curried_mult = fn (%x) {\n  fn (%y) {\n    %x * %y\n  }\n};\n"
                "%curried_mult(0);\n%curried_mult(0)(0)"),
        relay.Let(
            curried,
            relay.Function([X], relay.Function([Y], relay.multiply(X, Y), None, []), None, []),
            relay.Let(
                seq_var(),
                relay.Call(curried, [relay.const(0)], None, None),
                relay.Call(relay.Call(curried, [relay.const(0)], None, None), [relay.const(0)],
                           None, None),
            ),
        ),
    )
    assert_same(expr_of("abs(1)"), relay.Call(relay.op.get("abs"), [relay.const(1)], None, None))


def test_incomplete_type():
    assert_same(expr_of("let %_ : _ = (); ()"),
                relay.Let(relay.Var("_", relay.IncompleteType()), UNIT, UNIT))


def test_every_builtin_dtype_is_a_type():
    for dtype in DTYPES:
        expr_of(f"let %_ : {dtype} = (); ()")


def test_tensor_types():
    for text, shape in [("()", ()), ("(1)", (1,)), ("(1, 1)", (1, 1)), ("(?, 1)", (tvm.tir.Any(), 1))]:
        assert_same(
            expr_of(f"let %_ : Tensor[{text}, float32] = (); ()"),
            relay.Let(relay.Var("_", relay.TensorType(shape, "float32")), UNIT, UNIT),
        )


def test_function_types():
    assert_same(
        expr_of("let %_: fn () -> int32 = fn () -> int32 { 0 }; ()"),
        relay.Let(relay.Var("_", relay.FuncType([], int32, [], [])),
                  relay.Function([], relay.const(0), int32, []), UNIT),
    )
    assert_same(
        expr_of("let %_: fn (int32) -> int32 = fn (%x: int32) -> int32 { 0 }; ()"),
        relay.Let(relay.Var("_", relay.FuncType([int32], int32, [], [])),
                  relay.Function([relay.Var("x", int32)], relay.const(0), int32, []), UNIT),
    )
    assert_same(
        expr_of("let %_: fn (int32, int32) -> int32 = fn (%x: int32, %y: int32) -> int32 { 0 }; ()"),
        relay.Let(relay.Var("_", relay.FuncType([int32, int32], int32, [], [])),
                  relay.Function([relay.Var("x", int32), relay.Var("y", int32)], relay.const(0),
                                 int32, []),
                  UNIT),
    )


def test_tuple_types():
    assert_same(expr_of("let %_: () = (); ()"), relay.Let(relay.Var("_", relay.TupleType([])), UNIT, UNIT))
    assert_same(
        expr_of("let %_: (int32,) = (0,); ()"),
        relay.Let(relay.Var("_", relay.TupleType([int32])), relay.Tuple([relay.const(0)]), UNIT),
    )
    assert_same(
        expr_of("let %_: (int32, int32) = (0, 1); ()"),
        relay.Let(relay.Var("_", relay.TupleType([int32, int32])),
                  relay.Tuple([relay.const(0), relay.const(1)]), UNIT),
    )


def test_a_global_defined_twice_is_an_error():
    with pytest.raises(tvm.error.DiagnosticError):
        module_of("def @id[A](%x: A) -> A { %x }\ndef @id[A](%x: A) -> A { %x }")


def test_the_mlp_workload_prints_and_parses_back():
    mod, _ = relay.testing.mlp.get_workload(1)
    tvm.ir.assert_structural_equal(mod, tvm.relay.parse(mod.astext()))


def test_the_mlp_workload_with_its_weights_as_constants():
    mod, params = relay.testing.mlp.get_workload(1)
    main = mod["main"]
    by_name = {p.name_hint: p for p in main.params}
    body = relay.bind(main.body, {by_name[name]: relay.const(value) for name, value in params.items()})
    mod["main"] = relay.Function(relay.analysis.free_vars(body), body)
    mod = relay.transform.InferType()(mod)
    tvm.ir.assert_structural_equal(mod, tvm.relay.parse(mod.astext()))


def test_an_if_bound_to_a_temporary():
    module_of("def @example(%b: bool) {\n  %0 = if (%b) {\n    1\n  } else {\n    0\n  };\n  %0\n}")


def test_string_attributes_of_an_operator():
    call = expr_of(
        "free_var %x: Tensor[(1, 32, 32, 3), float32];\n"
        "free_var %y: Tensor[(1, 1, 3, 3), float32];\n"
        'nn.conv2d(%x, %y, data_layout="NHWC", kernel_layout="HWIO")'
    )
    assert isinstance(call.op, tvm.ir.Op) and call.op.name == "nn.conv2d"
    assert call.attrs.data_layout == "NHWC"
    assert call.attrs.kernel_layout == "HWIO"


def test_attributes_of_a_call_of_a_function():
    def make(shape, dtype):
        data = relay.var("data", shape=shape, dtype=dtype)
        weight = relay.var("weight", shape=shape, dtype=dtype)
        out = relay.add(relay.nn.relu(relay.nn.dense(data, weight)), relay.const(1.0, dtype=dtype))
        return relay.Function([data, weight], out)

    p0 = relay.var("p0", shape=(2, 4), dtype="float32")
    p1 = relay.var("p1", shape=(2, 4), dtype="float32")
    attrs = tvm.ir.make_node("attrs.TestAttrs", name="func_call_attrs")
    mod = tvm.IRModule()
    mod["main"] = relay.Function([p0, p1], relay.Call(make((2, 4), "float32"), [p0, p1], attrs=attrs))
    mod = tvm.relay.transform.InferType()(mod)
    parsed = module_of(
        "def @main(%p0: Tensor[(2, 4), float32], %p1: Tensor[(2, 4), float32]) {\n"
        "  %2 = fn (%data: Tensor[(2, 4), float32], %weight: Tensor[(2, 4), float32]) {\n"
        "    %0 = nn.dense(%data, %weight, units=None);\n"
        "    %1 = nn.relu(%0);\n"
        "    add(%1, 1f)\n"
        "  };\n"
        '  %2(%p0, %p1, name="func_call_attrs", attrs_type_key="attrs.TestAttrs")\n'
        "}"
    )
    assert_same(parsed, mod)
    assert parsed["main"].body.attrs.name == "func_call_attrs"


def test_infinite_attributes_print_and_parse():
    x = relay.var("x", shape=(3, 4), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.clip(x, -np.inf, np.inf)))
    again = relay.transform.AnnotateSpans()(mod)  # prints the module and parses it again
    assert again["main"].body.attrs.a_min == -np.inf and again["main"].body.attrs.a_max == np.inf


def test_function_attributes():
    attrs = tvm.ir.make_node("DictAttrs", **{"Primitive": 1, "relay.reshape_only": 1})
    x = relay.var("x", shape=(2, 3))
    func = relay.Function([x], relay.reshape(x, (-1,)), attrs=attrs)
    assert_same(expr_of(func.astext()), func)


def test_an_initial_module_and_metadata_table():
    table = {"relay.Constant": [relay.const(np.random.rand(2, 3), dtype="float32")]}
    init = tvm.relay.fromtext(
        SEMVER + "def @f(%y : Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
        "  negative(%y)\n"
        "}"
    )
    mod = tvm.relay.parse(
        SEMVER + "def @main(%x: Tensor[(2, 3), float32]) {\n"
        "  add(@f(%x), meta[relay.Constant][0])\n"
        "}",
        "from_string",
        init,
        table,
    )
    assert {gv.name_hint for gv in mod.get_global_vars()} == {"f", "main"}
    assert_same(tvm.relay.fromtext(mod.astext()), mod)


# --- algebraic data types -------------------------------------------------------------

LIST_DEFN = """
type List[A] {
    Cons(A, List[A]),
    Nil,
}
"""


def assert_parse_module_as(code, mod):
    mod = tvm.relay.transform.InferType()(mod)
    assert_same(module_of(code), mod)


def list_definition(mod):
    list_var = relay.GlobalTypeVar("List")
    a = relay.TypeVar("A")
    cons = relay.Constructor("Cons", [a, list_var(a)], list_var)
    nil = relay.Constructor("Nil", [], list_var)
    mod[list_var] = relay.TypeData(list_var, [a], [cons, nil])
    return list_var, cons, nil


def test_adt_defn():
    mod = tvm.IRModule()
    ayy = relay.GlobalTypeVar("Ayy")
    mod[ayy] = relay.TypeData(ayy, [], [relay.Constructor("Nil", [], ayy)])
    assert_parse_module_as("type Ayy { Nil }", mod)


def test_adt_any():
    mod = module_of("type my_dtype {\n  my_cons(Tensor[(?, 1), uint16]),\n}")
    global_type_var, type_data = mod.type_definitions.items()[0]
    assert global_type_var.name_hint == "my_dtype"
    (my_cons,) = type_data.constructors
    assert my_cons.name_hint == "my_cons"
    shape = my_cons.inputs[0].shape
    assert isinstance(shape[0], tvm.tir.Any) and shape[1] == 1


def test_empty_adt_defn():
    mod = tvm.IRModule()
    ayy = relay.GlobalTypeVar("Ayy")
    mod[ayy] = relay.TypeData(ayy, [], [])
    assert_parse_module_as("type Ayy { }", mod)


def test_multiple_cons_defn():
    mod = tvm.IRModule()
    list_definition(mod)
    assert_parse_module_as(LIST_DEFN, mod)


def test_multiple_type_param_defn():
    either = relay.GlobalTypeVar("Either")
    a, b = relay.TypeVar("A"), relay.TypeVar("B")
    mod = tvm.IRModule()
    mod[either] = relay.TypeData(
        either, [a, b],
        [relay.Constructor("Left", [a], either), relay.Constructor("Right", [b], either)],
    )
    assert_parse_module_as("type Either[A, B] {\n  Left(A),\n  Right(B),\n}", mod)


@pytest.mark.parametrize("keyword, complete", [("match", True), ("match?", False)])
def test_match(keyword, complete):
    mod = tvm.IRModule()
    list_var, cons, nil = list_definition(mod)
    length = relay.GlobalVar("length")
    a = relay.TypeVar("A")
    xs = relay.Var("xs", list_var(a))
    rest = relay.Var("rest")
    cons_case = relay.Let(seq_var(), UNIT, relay.add(relay.const(1), relay.Call(length, [rest])))
    body = relay.Match(
        xs,
        [
            relay.Clause(relay.PatternConstructor(cons, [relay.PatternWildcard(), relay.PatternVar(rest)]),
                         cons_case),
            relay.Clause(relay.PatternConstructor(nil, []), relay.const(0)),
        ],
        complete=complete,
    )
    mod[length] = relay.Function([xs], body, int32, [a])
    assert_parse_module_as(
        LIST_DEFN + f"""
        def @length[A](%xs: List[A]) -> int32 {{
          {keyword} (%xs) {{
            Cons(_, %rest : List[A]) => {{
              ();
              1 + @length(%rest)
            }},
            Nil => 0,
          }}
        }}
        """,
        mod,
    )


def test_adt_cons_expr():
    mod = tvm.IRModule()
    list_var, cons, nil = list_definition(mod)
    x = relay.Var("x", int32)
    mod["make_singleton"] = relay.Function([x], cons(x, nil()), list_var(int32))
    assert_parse_module_as(
        LIST_DEFN + """
        def @make_singleton(%x: int32) -> List[int32] {
          Cons(%x, Nil)
        }
        """,
        mod,
    )


def test_duplicate_adt_defn():
    with pytest.raises(tvm.error.DiagnosticError, match="duplicate definition of type List"):
        tvm.relay.parse(SEMVER + LIST_DEFN + LIST_DEFN.replace("Cons", "Pair").replace("Nil", "Z"))


def test_duplicate_adt_cons():
    with pytest.raises(tvm.error.DiagnosticError, match="constructor named Lmao is already defined"):
        tvm.relay.parse(SEMVER + "type Ayy { Lmao }\ntype Haha { Lmao }")


def test_type_definitions_are_not_expressions():
    # TVM's test_duplicate_adt_cons_defn: parse_expr reads no type definitions.
    with pytest.raises(tvm.error.DiagnosticError):
        tvm.relay.parse_expr("type Ayy { Lmao }\ntype Lmao { Ayy }")


def test_extern_adt_defn():
    mod = tvm.IRModule()
    t = relay.GlobalTypeVar("T")
    mod[t] = relay.TypeData(t, [relay.TypeVar("A")], [])
    assert_parse_module_as("extern type T[A]", mod)


def test_tuple_return_value():
    module_of(
        """
        type Box[T] {
            constructor(T)
        }

        def @example() {
            %0 = ();
            %1 = constructor(%0);
            %2 = constructor(0f);
            (%1, %2,)
        }
        """
    )


def test_load_prelude():
    mod = tvm.IRModule()
    mod.import_from_std("prelude.rly")
    again = tvm.relay.parse(mod.astext())
    assert_same(again, mod)

