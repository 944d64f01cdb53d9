"""Patterns as text: the printed form of a pattern reads back as the same pattern.

A pattern file (``relaypass match``) is data, like a pipeline file: no Python
runs to read it, hostile text is a ``PatternSyntaxError`` with its column,
and what a pattern prints as is what one writes.
"""
import numpy as np
import pytest

from relaypass import relay
from relaypass.dataflow_pattern import (
    dominates,
    explain_match,
    has_attr,
    is_constant,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)
from relaypass.dataflow_pattern.text import MAX_DEPTH, PatternSyntaxError, parse_pattern


def conv_bias_relu():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("nn.relu")(conv | is_op("nn.bias_add")(conv, wildcard()))


PATTERNS = [
    is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), is_constant())),
    conv_bias_relu(),
    is_tuple_get_item(is_tuple([wildcard(), is_var("x")]), 1),
    is_tuple_get_item(wildcard()),
    is_tuple([wildcard()]),
    is_op("add")(wildcard(), wildcard()).has_dtype("float32"),
    is_op("nn.conv2d")(wildcard(), wildcard()).has_shape([1, 16, 8, 8]),
    is_op("nn.conv2d")(wildcard(), wildcard()).has_type(relay.TensorType((1, 3), "float32")),
    has_attr({"axis": 1}, is_op("nn.softmax")(wildcard())),
    dominates(is_op("nn.conv2d")(wildcard(), wildcard()),
              is_op("add")(wildcard(), wildcard()) | is_op("nn.relu")(wildcard()),
              is_op("nn.relu")(wildcard())),
    is_op("nn.relu")(wildcard()) | is_op("nn.relu")(wildcard()).has_dtype("int8"),
]


@pytest.mark.parametrize("pattern", PATTERNS, ids=str)
def test_a_printed_pattern_reads_back_as_itself(pattern):
    again = parse_pattern(str(pattern))
    assert str(again) == str(pattern)


def test_a_read_pattern_matches_what_the_built_one_matches():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    b = relay.const(np.zeros(4, "float32"))
    with_bias = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w), b))
    without = relay.nn.relu(relay.nn.conv2d(x, w))
    plain = relay.nn.relu(x)
    pattern = parse_pattern("nn.relu(($1=nn.conv2d(*, *) | nn.bias_add($1, *)))")
    assert pattern.match(with_bias) and pattern.match(without)
    assert not pattern.match(plain)
    assert "nn.conv2d" in str(explain_match(pattern, plain))


def test_any_arguments_and_shared_labels():
    x = relay.var("x", shape=(2,))
    same = relay.add(relay.exp(x), relay.exp(x))
    shared = relay.exp(x)
    reused = relay.add(shared, shared)
    pattern = parse_pattern("add($1=exp(...), $1)")
    assert pattern.match(reused)
    assert not pattern.match(same)  # two different exp calls: not the same node


@pytest.mark.parametrize("text, where", [
    ("nn.relu(", "column 9"),
    ("add(*,, *)", "column 7"),
    ("$2", "column 1"),
    ("$1=*, $1=*", "column"),
    ("nn.rel(*)", "did you mean 'nn.relu'"),
    ("add(*).has_dtype(3)", "has_dtype"),
    ("add(*).has_attr({1: __import__('os')})", "Python literal"),
    ("add(*).has_type(Tensor[(2), float33])", "float33"),
    ("add(*).frobnicate(1)", "column 8"),
    ("@", "unexpected character"),
    ("(" * (MAX_DEPTH + 1), f"more than {MAX_DEPTH} deep"),
    ("", "expected a pattern"),
])
def test_bad_text_is_a_syntax_error_with_its_column(text, where):
    with pytest.raises(PatternSyntaxError) as err:
        parse_pattern(text)
    assert where in str(err.value)


ALPHABET = "()|,*=.$%0123456789 \"'{}[]:abcdnrelu_.-has_dtypeshapeattrconst"


def test_any_text_is_a_pattern_or_a_named_error():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from relaypass.errors import RelayPassError

    @settings(max_examples=1000, deadline=None, derandomize=True, database=None)
    @given(st.text(alphabet=ALPHABET, max_size=60) | st.sampled_from([str(p) for p in PATTERNS])
           .flatmap(lambda t: st.integers(0, len(t)).map(lambda i: t[:i] + t[i + 1:])))
    def check(text):
        try:
            parse_pattern(text)
        except RelayPassError:
            pass

    check()
