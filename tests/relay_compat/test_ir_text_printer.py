"""TVM v0.18's printer cases (tests/python/relay/test_ir_text_printer.py), ported.

Written as a TVM user writes them; only the imports differ.  Every printed
program is parsed back and compared with the original, as TVM's suite does.
One difference of form: a size variable (``te.size_var`` in
``test_meta_data``) prints by name in its shape, ``Tensor[(n, 10, 224, 224),
float32]``, where TVM writes ``meta[tir.SizeVar][0]``; the metadata holds
constants only.  Out of scope: algebraic data types
(``test_unapplied_constructor``) and spans in the type comments
(``test_span``: relaypass does not write spans, so that printing a parsed
program gives back the same text).
"""

from __future__ import annotations

import sys

import relaypass as tvm
import relaypass.relay.testing  # noqa: F401  (TVM's ``import tvm.relay.testing``)
from relaypass import relay
from relaypass.relay import Expr

HEADER = '#[version = "0.0.5"]\n'


def printed(program) -> str:
    """``program.astext()``, after checking that parsing it gives the program back."""
    text = program.astext()
    if isinstance(program, Expr):
        again = tvm.relay.parse_expr(text)
    else:
        again = tvm.relay.fromtext(text)
    tvm.ir.assert_structural_equal(again, program, map_free_vars=True)
    return text


def test_scalars_print_as_literals_with_their_suffix():
    for value, dtype, literal in [
        (42, "int16", "42i16"), (42, "int32", "42"), (42, "int64", "42i64"),
        (3.0, "float16", "3f16"), (3.0, "float32", "3f"), (3.0, "float64", "3f64"),
    ]:
        assert printed(relay.const(value, dtype)) == HEADER + literal


def test_a_chain_of_90000_calls_prints_and_parses_back():
    x = relay.var("x", shape=(3, 2))
    y = relay.var("y")
    ten = relay.const(10e10, dtype="float32")
    z = relay.add(x, ten)
    for _ in range(90_000):
        z = relay.add(z, ten)
    limit = sys.getrecursionlimit()
    text = printed(relay.Function([x, y], z))
    assert text.count("add(") == 90_001
    assert "1e+11f" in text  # TVM's spelling of the constant
    assert sys.getrecursionlimit() == limit


def test_expression_and_function_round_trip():
    x = relay.var("x", shape=(3, 2))
    y = relay.var("y")
    z = relay.add(x, relay.const(10e10, dtype="float32"))
    z = relay.add(z, z)
    printed(z)
    printed(relay.Function([x, y], z))


def test_module_prints_its_functions_with_type_comments():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    z = relay.add(x, y)
    z = relay.add(z, z)
    mod = tvm.IRModule()
    mod["myf"] = relay.Function([x, y], z)
    mod = relay.transform.InferType()(mod)
    text = printed(mod)
    for shown in (text, str(mod)):
        assert "def @myf" in shown
        assert "add(%0, %0) /* ty=float32 */" in shown
    # annotate replaces the type comments with what it returns
    annotated = mod.astext(annotate=lambda n: str(n.checked_type.dtype) if isinstance(n, relay.Call) else "")
    assert "add(%0, %0)float32" in annotated and "/* ty=" not in annotated


def test_tensor_constants_are_metadata_and_attributes_show_in_both_forms():
    n, c, h, w = tvm.te.size_var("n"), 10, 224, 224
    x = relay.var("x", shape=(n, c, h, w))
    w = relay.var("w")
    f = relay.Function([x, w], relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1), channels=2))
    text = printed(f)
    assert "channels=2" in text
    assert "channels=2" in str(f)
    assert "%x: Tensor[(n, 10, 224, 224), float32]" in text
    assert "%x: Tensor[(n, 10, 224, 224), float32]" in str(f)
    assert "meta[relay.Constant][0]" in printed(relay.const([1, 2, 3]))


def test_only_attributes_that_differ_from_the_defaults_are_printed():
    x = relay.var("x")
    assert "axis=2" in printed(relay.nn.softmax(x, axis=2))
    assert "softmax(%x)" in printed(relay.nn.softmax(x))
    assert "num_newaxis=2" in printed(relay.expand_dims(x, axis=2, num_newaxis=2))


def test_lets_and_branches_get_their_own_blocks():
    x = relay.var("x", "float32")
    y = relay.var("y", "float32")
    cond = relay.var("cond", "bool")
    sb = relay.ScopeBuilder()
    with sb.if_scope(cond):
        first = sb.let("v", relay.const(1, "float32"))
        second = sb.let("v", x)
        sb.ret(relay.subtract(first, second))
    with sb.else_scope():
        v = relay.var("v")
        shared_let = relay.Let(v, y, v)
        sb.ret(relay.add(shared_let, shared_let))
    text = printed(relay.Function([x, y, cond], sb.get()))
    # the function's body and the two branches; the let used twice is in parentheses
    assert text.count("{") == 3
    assert "%cond: bool" in text


def test_a_name_that_starts_with_a_digit_gets_a_letter():
    assert "%v1" in printed(relay.var("1"))


def test_model_zoo_workloads_round_trip():
    testing = tvm.relay.testing
    for net, _ in [
        testing.mlp.get_workload(batch_size=1),
        testing.resnet.get_workload(batch_size=1),
        testing.mobilenet.get_workload(batch_size=1),
        testing.dqn.get_workload(batch_size=1),
        testing.dcgan.get_workload(batch_size=1),
        testing.lstm.get_workload(1, 1),
        testing.lstm.get_workload(4, 4),
        testing.inception_v3.get_workload(batch_size=1),
        testing.squeezenet.get_workload(batch_size=1, version="1.0"),
        testing.squeezenet.get_workload(batch_size=1, version="1.1"),
        testing.densenet.get_workload(batch_size=1),
    ]:
        printed(net)


def test_arguments_are_bound_before_the_callee():
    x = relay.var("x")
    y = relay.var("y")
    prog = relay.Call(relay.Function([x], x), [relay.Call(relay.Function([y], y), [relay.const(1)])])
    assert printed(prog) == HEADER + (
        "%0 = fn (%y) {\n"
        "  %y\n"
        "};\n"
        "%1 = %0(1);\n"
        "%2 = fn (%x) {\n"
        "  %x\n"
        "};\n"
        "%2(%1)"
    )


def test_a_let_value_used_again_is_bound_first():
    pair = relay.Tuple([relay.const(0), relay.const(0)])
    x = relay.var("x")
    assert printed(relay.Let(x, pair, pair)) == HEADER + "%0 = (0, 0);\nlet %x = %0;\n%0"
    assert printed(relay.Let(x, pair, x)) == HEADER + "let %x = (0, 0);\n%x"


def test_an_operator_call_without_arguments():
    printed(relay.op.zeros([], "float32"))


def test_a_null_function_attribute_prints_as_none():
    x = relay.var("x")
    y = relay.var("y")
    f = relay.Function([x], y).with_attr("TestAttribute", None)
    assert "TestAttribute=None" in printed(f)


def test_each_typed_node_gets_one_type_comment():
    c = relay.const(1)
    mod = tvm.IRModule.from_expr(relay.add(c, c))
    mod = relay.transform.InferType()(mod)
    # the constant (written twice, with its comment) and the call
    assert printed(mod).count("/* ty=int32 */") == 3


def test_a_slash_in_a_name_is_kept():
    x = relay.var("base/x")
    y = relay.var("base/y")
    text = printed(x + y)
    assert "base/x" in text and "base/y" in text
