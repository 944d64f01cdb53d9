"""Malformed texts: each is a ParseError at the right place with a useful message."""

from __future__ import annotations

import pytest

from relaypass.errors import ParseError, RelayPassError
from relaypass.ir.text.parser import parse, parse_expr

SOURCE = "model.relay"
HEAD = "def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3, 3, 3), float32]) {\n"
# One float32 constant of shape (1,), as base64 of its .npy bytes.
NPY_ONE = (
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsKSwg"
    "fSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAIA/"
)


def metadata(*entries: str) -> str:
    body = ",\n".join(f"    {e}" for e in entries)
    return '#[metadata]\n{\n  "relay.Constant": [\n' + body + "\n  ]\n}\n"


# (name, text, line, column, message)
CASES = [
    ("missing paren", HEAD + "  %0 = add(%x, %x\n  %0\n}\n",
     3, 3, "expected ',' or ')' but found '%0'"),
    ("undefined variable", HEAD + "  %0 = add(%x, %y);\n  %0\n}\n",
     2, 16, "undefined variable %y"),
    ("undefined global", HEAD + "  @helpr(%x)\n}\ndef @helper(%a: float32) { %a }\n",
     2, 3, "undefined global function @helpr; did you mean @helper?"),
    ("duplicate definition", "def @f(%a: float32) { %a }\ndef @f(%b: float32) { %b }\n",
     2, 5, "duplicate definition of global function @f"),
    ("bad dimension", "def @main(%x: Tensor[(1, @x), float32]) { %x }\n",
     1, 26, "expected a dimension (an integer, '?', a size variable or an expression of them) "
     "but found '@x'"),
    ("bad dtype", "def @main(%x: Tensor[(1), flaot32]) { %x }\n",
     1, 27, "unknown dtype 'flaot32'; did you mean float32?"),
    ("unterminated block", HEAD + "  %0 = add(%x, %x);\n  %0\n",
     4, 1, "expected '}' to close the '{' opened at 1:75 but found end of input"),
    ("unterminated string", HEAD + '  nn.conv2d(%x, %w, data_layout="NCHW)\n}\n',
     2, 33, "unterminated string literal"),
    ("bad string escape", HEAD + '  nn.conv2d(%x, %w, data_layout="NC\\qHW")\n}\n',
     2, 33, "bad string literal: Invalid \\escape"),
    ("unterminated comment", HEAD + "  /* add(%x, %x)\n  %x\n}\n",
     2, 3, "unterminated comment: '/*' without '*/'"),
    ("unknown operator", HEAD + "  nn.conv2x(%x, %w)\n}\n",
     2, 3, "operator 'nn.conv2x' is not registered; did you mean 'nn.conv2d', 'nn.conv3d', "
     "'nn.conv1d'?"),
    ("unknown attribute", HEAD + "  nn.conv2d(%x, %w, stride=[2, 2])\n}\n",
     2, 21, "operator 'nn.conv2d' has no attribute 'stride'; valid attributes: strides, "),
    ("duplicate attribute", HEAD + "  nn.conv2d(%x, %w, groups=1, groups=2)\n}\n",
     2, 31, "duplicate attribute 'groups'"),
    ("attributes on an operator without", HEAD + "  add(%x, %x, axis=1)\n}\n",
     2, 15, "operator 'add' takes no attributes"),
    ("bad attribute value", HEAD + "  nn.conv2d(%x, %w, strides=%x)\n}\n",
     2, 29, "expected an attribute value but found '%x'"),
    ("wrong number of arguments", HEAD + "  %0 = add(%x);\n  %0\n}\n",
     2, 8, "operator 'add' takes 2 arguments but 1 was given"),
    ("metadata index out of range", HEAD + "  add(%x, meta[relay.Constant][3])\n}\n"
     + metadata(f'"{NPY_ONE}"'),
     2, 32, "meta[relay.Constant][3] is out of range: the metadata section has 1 relay.Constant entry"),
    ("metadata reference without section", HEAD + "  add(%x, meta[relay.Constant][0])\n}\n",
     2, 11, "meta[...] reference but the text has no #[metadata] section"),
    ("unknown metadata kind", HEAD + "  add(%x, meta[relay.Foo][0])\n}\n" + metadata(f'"{NPY_ONE}"'),
     2, 16, "unknown metadata kind 'relay.Foo'; expected relay.Constant"),
    ("metadata not base64", HEAD + "  add(%x, meta[relay.Constant][0])\n}\n"
     + metadata('"not base64!"'),
     7, 5, "metadata relay.Constant[0] is not base64 of .npy bytes"),
    ("metadata not npy", HEAD + "  add(%x, meta[relay.Constant][0])\n}\n" + metadata('"aGVsbG8="'),
     7, 5, "metadata relay.Constant[0] is not base64 of .npy bytes"),
    ("metadata bad json", HEAD + "  %x\n}\n" + metadata('"abc",'),
     8, 3, "bad metadata section: expecting a string (base64 of .npy bytes) for relay.Constant[1] "
     "but found ']'"),
    ("duplicate parameter", "def @main(%x: float32, %x: float32) { %x }\n",
     1, 24, "duplicate parameter %x"),
    ("temporary defined twice", HEAD + "  %0 = add(%x, %x);\n  %0 = add(%0, %x);\n  %0\n}\n",
     3, 3, "%0 is already defined in this block"),
    ("named graph binding", HEAD + "  %y = add(%x, %x);\n  %y\n}\n",
     2, 3, "only numbered temporaries such as %0 are bound with '='; write 'let %y = ...;'"),
    ("missing semicolon", HEAD + "  let %a = add(%x, %x)\n  %a\n}\n",
     3, 3, "expected ';' but found '%a'"),
    ("block without result", HEAD + "  %0 = add(%x, %x);\n}\n",
     3, 1, "expected the block's result expression but found '}'"),
    ("bad literal suffix", HEAD + "  add(%x, 1q)\n}\n",
     2, 11, "unknown literal suffix 'q' in '1q'"),
    ("integer out of range", HEAD + "  add(%x, 300u8)\n}\n",
     2, 11, "integer literal 300 is out of range for uint8"),
    ("fraction with integer suffix", HEAD + "  add(%x, 1.5i64)\n}\n",
     2, 11, "'1.5i64' is not an integer but has the int64 suffix"),
    ("unknown type", "def @main(%x: flot32) { %x }\n",
     1, 15, "unknown type 'flot32'; did you mean float32"),
    ("undeclared type variable", "def @main[A](%x: B) { %x }\n",
     1, 18, "unknown type 'B' (type variables in scope: A)"),
    ("type variable named like a dtype", "def @main[float32](%x: float32) { %x }\n",
     1, 11, "'float32' cannot name a type variable: it is a type already"),
    ("missing return type", "def @main(%x: float32) -> { %x }\n",
     1, 27, "expected a type but found '{'"),
    ("bad tuple index", HEAD + "  %0 = (%x, %x);\n  %0.a\n}\n",
     3, 6, "expected a tuple index but found 'a'"),
    ("stray character", HEAD + "  add(%x, $x)\n}\n",
     2, 11, "unexpected character '$' (expected an expression)"),
    ("text after the last def", "def @main(%x: float32) { %x }\n}\n",
     2, 1, "expected 'def' but found '}'"),
    ("unsupported version", '#[version = "0.0.4"]\ndef @main(%x: float32) { %x }\n',
     1, 13, "unsupported text format version '0.0.4'"),
    ("let as a let value", HEAD + "  let %b = let %a = %x; %a;\n  %b\n}\n",
     2, 12, "'let' starts a statement, not an operand; put it in parentheses"),
    ("let variable out of its block", HEAD + "  add((let %a = %x; %a), %a)\n}\n",
     2, 26, "undefined variable %a"),
    ("bare expression given to parse", "free_var %x: float32;\n%x\n",
     1, 1, "expected 'def' but found 'free_var' (use parse_expr for a bare expression)"),
    ("const with too few elements", HEAD + "  add(%x, const([1, 2], Tensor[(1, 3), float32]))\n}\n",
     2, 25, "Tensor[(1, 3), float32] has 3 elements but 2 were given"),
    ("if without else", "def @main(%c: bool, %x: float32) {\n  if (%c) { %x }\n}\n",
     3, 1, "expected 'else' but found '}'"),
    ("def without a global name", "def main(%x: float32) { %x }\n",
     1, 5, "expected a global name such as '@main' but found 'main'"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_module_text(text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse(text, source_name=SOURCE)
    err = info.value
    assert (err.source_name, err.line, err.column) == (SOURCE, line, column)
    assert err.message.startswith(message), err.message
    assert str(err).startswith(f"{SOURCE}:{line}:{column}: {message}")
    assert isinstance(err, RelayPassError)


def test_error_records_what_was_found_and_expected():
    with pytest.raises(ParseError) as info:
        parse(HEAD + "  %0 = add(%x, %x\n  %0\n}\n", source_name=SOURCE)
    assert info.value.found == "%0"
    assert info.value.expected == "',' or ')'"


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("", 1, 1, "expected an expression but found end of input"),
        ("add(%x, %x)", 1, 5,
         "undefined variable %x (declare free variables with 'free_var %x: <type>;')"),
        ("fn (%x: float32) {\n  %x\n} extra", 3, 3, "expected end of input but found 'extra'"),
        ("def @main() { () }", 1, 1, "a 'def' is not allowed inside an expression"),
        ("free_var %x: float32;\n(free_var %z; %z, %y)", 2, 19, "undefined variable %y"),
        ("1 +", 1, 4, "expected an expression but found end of input"),
        ("1 + * 2", 1, 5, "expected an expression but found '*'"),
        ("1 < = 2", 1, 5, "expected an expression but found '='"),
        ("2147483648i32", 1, 1, "integer literal 2147483648 is out of range for int32"),
        ("32768i16", 1, 1, "integer literal 32768 is out of range for int16"),
        ("3.40283e+38f32", 1, 1, "floating point number 3.40283e+38 is unrepresentable in float32"),
        ("65505f16", 1, 1, "floating point number 65505 is unrepresentable in float16"),
        ("1e999f64", 1, 1, "floating point number 1e999 is unrepresentable in float64"),
        ("meta[type_key][1337]", 1, 6, "unknown metadata kind 'type_key'"),
        ("/* a /* nested */ comment\n()", 1, 1, "unterminated comment"),
        ("const([1, 2], Tensor[(2), int8)", 1, 31,
         "expected ']' to close the '[' opened at 1:21 but found ')'"),
        ("const([1, 2.5], Tensor[(2), int8])", 1, 11, "'2.5' is not an integer, as int8 needs"),
        ("const([1, 300], Tensor[(2), int8])", 1, 11, "300 is out of range for int8"),
        ("(1f, 2f", 1, 8, "expected ')' to close the '(' opened at 1:1 but found end of input"),
        ("%0", 1, 1, "undefined variable %0"),
    ],
)
def test_malformed_expression_text(text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse_expr(text, source_name=SOURCE)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert err.message.startswith(message), err.message


def test_deeply_nested_expression_is_a_parse_error_not_a_crash():
    text = "free_var %x: float32;\n" + "negative(" * 5000 + "%x" + ")" * 5000
    with pytest.raises(ParseError, match="nested too deeply"):
        parse_expr(text)
