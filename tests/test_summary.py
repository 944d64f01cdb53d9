"""Short text of IR for messages: small expressions printed, large ones sketched, never long."""

import numpy as np
import pytest

from relaypass import relay
from relaypass.ir import Attrs, Call, Op, TensorType, TupleType
from relaypass.ir import expr as expr_module
from relaypass.ir.summary import short_text, type_text


def test_small_expression_is_its_printed_text_on_one_line():
    x = relay.var("x", shape=(2, 3))
    f = relay.Function([x], relay.nn.relu(relay.add(x, x)))
    assert short_text(relay.add(x, x)) == "add(%x, %x)"
    assert short_text(f) == "fn (%x: Tensor[(2, 3), float32]) { %0 = add(%x, %x); nn.relu(%0) }"


def test_large_expression_is_sketched_within_the_limit():
    x = relay.var("x", shape=(2, 2))
    e = x
    for _ in range(100_000):
        e = relay.nn.relu(e)
    text = short_text(relay.concatenate([e, relay.var("z", shape=(3,))], axis=1))
    assert text == "concatenate((nn.relu(nn.relu(...)), %z), axis=1)"
    wide = relay.Tuple([x] * 100_000)
    assert len(short_text(wide, max_chars=50)) == 50


def test_deep_let_chain_is_sketched_without_recursion():
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    v = x
    for i in range(100_000):
        v = sb.let(f"v{i}", relay.negative(v))
    sb.ret(v)
    assert short_text(sb.get()).startswith("let %v0 = negative(%x); let %v1 = negative(%v0);")


def test_sketch_when_the_printer_fails(monkeypatch):
    def broken(self, show_meta_data=True):
        raise RuntimeError("printer unavailable")

    monkeypatch.setattr(expr_module.Expr, "astext", broken)
    x = relay.var("x", shape=(3,))
    c = relay.const(np.ones((2, 3), "float32"))
    assert short_text(relay.multiply(x, relay.nn.relu(x))) == "multiply(%x, nn.relu(%x))"
    assert short_text(relay.Function([x], relay.add(c, relay.const(2.0)))) == (
        "fn (%x: Tensor[(3), float32]) { add(meta[relay.Constant] /* Tensor[(2, 3), float32] */, "
        "2.0 /* float32 */) }"
    )
    zeros = Call(Op.get("zeros"), [], Attrs({"shape": (1, 2), "dtype": "float32"}))
    assert short_text(zeros) == 'zeros(shape=[1, 2], dtype="float32")'


@pytest.mark.parametrize("limit", [10, 40, 200])
def test_text_never_exceeds_the_limit(limit):
    x = relay.var("x", shape=(2,))
    e = relay.Tuple([relay.add(x, relay.const(float(i))) for i in range(50)])
    text = short_text(e, max_chars=limit)
    assert len(text) <= limit and text.endswith("...")


def test_types_and_other_values():
    ty = TupleType([TensorType((1, relay.Any()), "int8"), TensorType((), "float32")])
    assert short_text(ty) == type_text(ty) == "(Tensor[(1, ?), int8], float32)"
    assert type_text(None) == "_"
    assert short_text(3) == "3"
