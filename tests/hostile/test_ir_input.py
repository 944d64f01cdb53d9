"""Hostile IR texts: each is a ParseError with a line and column, never another exception.

What is checked (docs/security.md, "Models"):

* numbers that do not fit: integers of any length (Python's ``int()`` refuses
  over 4,300 digits), floats beyond their dtype, shapes whose element count
  overflows int64;
* a lone ``%`` or ``@``, strings and comments left open (one token to the end
  of the line or the text, so tokenizing stays linear);
* the metadata section: nesting, ``.npy`` headers that declare huge arrays,
  ``.npz`` archives, dtypes the IR does not have (unicode, structured,
  complex, object), byte orders, truncated data;
* dtypes in type annotations that do not exist (``float33``).
"""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

from relaypass.errors import ParseError
from relaypass.ir.text.metadata import read_npy
from relaypass.ir.text.parser import parse, parse_expr
from relaypass.ir.text.tokenizer import tokenize

BIG = "9" * 5000  # more digits than Python's int() converts


def parse_error(text: str, expression: bool = False) -> ParseError:
    with pytest.raises(ParseError) as info:
        (parse_expr if expression else parse)(text, source_name="hostile.relay")
    err = info.value
    assert err.source_name == "hostile.relay" and err.line >= 1 and err.column >= 1
    assert "\n" not in str(err) and len(str(err)) < 1000, str(err)
    return err


def at(err: ParseError) -> tuple[int, int]:
    return err.line, err.column


# --- item 3: Python exceptions that leaked --------------------------------------------------

def test_a_lone_percent_sign_is_a_parse_error():
    err = parse_error("def @main(%) { 1 }")
    assert at(err) == (1, 11) and "expected a variable such as '%x'" in err.message
    assert at(parse_error("def @main(%x) {\n  add(%x, %)\n}")) == (2, 11)
    assert at(parse_error("%", expression=True)) == (1, 1)
    assert at(parse_error("def @main() { let % = 1; 2 }")) == (1, 19)
    assert at(parse_error("def @main() {\n  % = 1;\n  2\n}")) == (2, 3)


def test_a_lone_at_sign_is_a_parse_error():
    assert at(parse_error("def @() { 1 }")) == (1, 5)
    assert at(parse_error("def @main() { @(1) }")) == (1, 15)


@pytest.mark.parametrize(("text", "where"), [
    # The six places the parser converts digits to an int.
    (f"def @main() {{ {BIG} }}", (1, 15)),                                   # a literal
    (f"def @main() {{ const([{BIG}], Tensor[(1), int64]) }}", (1, 22)),      # a const element
    (f"def @main(%x: Tensor[(1), float32]) {{ sum(%x, axis={BIG}) }}", (1, 52)),  # an attribute
    (f"def @main(%x: Tensor[({BIG}), float32]) {{ %x }}", (1, 23)),           # a dimension
    (f"def @main(%x: (float32, float32)) {{ %x.{BIG} }}", (1, 40)),          # a tuple index
    (f"def @main() {{ meta[relay.Constant][{BIG}] }}\n#[metadata]\n"          # a metadata index
     '{"relay.Constant": []}', (1, 36)),
], ids=["literal", "const element", "attribute", "dimension", "tuple index", "metadata index"])
def test_integers_of_any_length_are_parse_errors(text, where):
    err = parse_error(text)
    assert at(err) == where
    assert "too large" in err.message and len(err.message) < 200


def test_integers_just_out_of_range_say_which_dtype():
    assert "out of range for int64" in parse_error("99999999999999999999i64", True).message
    assert "out of range for uint64" in parse_error("18446744073709551616u64", True).message
    assert "too large: 21 digits" in parse_error("100000000000000000000u64", True).message
    assert "out of range (int64)" in parse_error(
        "def @main(%x: Tensor[(9223372036854775808), int8]) { %x }").message
    # Leading zeros do not count: this is 1.
    assert parse_expr("0" * 5000 + "1i64").data.numpy() == 1


@pytest.mark.parametrize(("text", "where", "dtype"), [
    ("def @main() { 1" + "0" * 400 + "f }", (1, 15), "float32"),
    ("def @main() { 1e309f64 }", (1, 15), "float64"),
    ("def @main() { const([1e39], Tensor[(1), float32]) }", (1, 22), "float32"),
    ("def @main() { const([1, 7e4], Tensor[(2), float16]) }", (1, 25), "float16"),
    ("def @main(%x: Tensor[(1), float32]) { nn.leaky_relu(%x, alpha=1e999) }", (1, 63), "float64"),
], ids=["float32 literal", "float64 literal", "float32 const", "float16 const", "attribute"])
def test_floats_beyond_their_dtype_are_parse_errors(text, where, dtype):
    err = parse_error(text)
    assert at(err) == where and f"is unrepresentable in {dtype}" in err.message


def test_inf_and_nan_written_as_words_stay_allowed():
    assert np.isinf(parse_expr("-inff").data.numpy())
    arr = parse_expr("const([inf, nan], Tensor[(2), float32])").data.numpy()
    assert np.isinf(arr[0]) and np.isnan(arr[1])


def test_a_shape_whose_element_count_overflows_int64_is_a_parse_error():
    err = parse_error("def @main(%x: Tensor[(4294967296, 4294967296, 4), float32]) { %x }")
    assert at(err) == (1, 15) and "more elements than int64 counts" in err.message
    err = parse_error("const([1], Tensor[(4294967296, 4294967296), float32])", expression=True)
    assert at(err) == (1, 12)
    # Unknown dimensions are not counted; the largest shape that fits is fine.
    parse("def @main(%x: Tensor[(4294967296, ?, 2147483647), float32]) { %x }")


def metadata_text(body: str) -> str:
    return "def @main() { meta[relay.Constant][0] }\n#[metadata]\n" + body


def test_deeply_nested_metadata_is_a_parse_error():
    err = parse_error(metadata_text("[" * 100_000 + "]" * 100_000))
    assert at(err) == (3, 1) and "must be a JSON object" in err.message
    err = parse_error(metadata_text('{"relay.Constant": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    assert at(err) == (3, 21) and "expecting a string (base64 of .npy bytes)" in err.message
    err = parse_error(metadata_text('{"relay.Constant": ["k05VTVBZ"], "x": ' + "{" * 50_000 + "}"))
    assert at(err) == (3, 34) and "unknown metadata kind 'x'" in err.message


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def with_header(header: str, data: bytes = b"") -> bytes:
    """``.npy`` bytes (format 1.0) with this header, padded as numpy pads it."""
    raw = header.encode("latin-1")
    raw += b" " * (-(10 + len(raw) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw + data


def meta_error(raw: bytes) -> ParseError:
    entry = base64.b64encode(raw).decode("ascii")
    return parse_error(metadata_text('{\n  "relay.Constant": [\n    "' + entry + '"\n  ]\n}'))


def test_an_npy_header_declaring_a_huge_array_allocates_nothing():
    err = meta_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (10**14,), }"))
    assert at(err) == (5, 5) and "not base64 of .npy bytes" in err.message
    err = meta_error(with_header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000000,), }"))
    assert "declares 100000000000000 element(s) of float32" in err.message
    assert "but 0 bytes of data follow" in err.message


# --- item 7: what the metadata section accepts ---------------------------------------------

@pytest.mark.parametrize(("raw", "message"), [
    (npy(np.array(["ab", "c"])), "dtype '<U2' is not one the IR supports"),
    (npy(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")])), "not that of a plain array"),
    (npy(np.zeros(2, dtype=np.complex64)), "dtype '<c8' is not one the IR supports"),
    (npy(np.zeros(2, dtype="datetime64[s]")), "is not one the IR supports"),
    (npy(np.zeros(2, dtype=np.longdouble)), "is not one the IR supports"),
    (npy(np.zeros((2, 2), dtype=np.float32))[:-1], "but 15 bytes of data follow"),
    (npy(np.zeros(2, dtype=np.float32)) + b"\0", "but 9 bytes of data follow"),
    (with_header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
     "dtype '|O' is not one the IR supports"),
    (with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", b"\0" * 4),
     "not that of a plain array"),
    (with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "(" * 300, b""),
     "not that of a plain array"),
    (b"\x93NUMPY\x09\x00", "format version 9.0"),
    (b"\x93NUMPY\x01\x00\xff\xff{", "cut short or longer than 10,000 bytes"),
    (b"hello", "do not start with the .npy magic string"),
], ids=["unicode", "structured", "complex", "datetime", "longdouble", "truncated", "extra byte",
        "object", "extra key", "nested header", "version 9", "header length", "not npy"])
def test_metadata_accepts_only_plain_npy_of_the_irs_dtypes(raw, message):
    err = meta_error(raw)
    assert at(err) == (5, 5) and message in err.message, err.message


def test_an_npz_archive_is_not_a_constant():
    buf = io.BytesIO()
    np.savez(buf, a=np.ones(2, dtype=np.float32))
    assert "a .npz archive (zip)" in meta_error(buf.getvalue()).message


def test_big_endian_and_fortran_order_constants_load_in_native_order():
    for array in (np.arange(6, dtype=">f4").reshape(2, 3), np.asfortranarray(
            np.arange(6, dtype="<i8").reshape(2, 3)), np.arange(4, dtype=">u2")):
        back = read_npy(npy(array))
        assert back.dtype.isnative and back.dtype == array.dtype.newbyteorder("=")
        assert back.flags.c_contiguous
        np.testing.assert_array_equal(back, array)
    entry = base64.b64encode(npy(np.arange(3, dtype=">f8"))).decode()
    mod = parse(metadata_text('{"relay.Constant": ["' + entry + '"]}'))
    const = mod["main"].body
    assert const.data.numpy().dtype == np.float64 and const.data.numpy().dtype.isnative
    assert "meta[relay.Constant][0]" in mod.astext()


def test_bool_bytes_other_than_zero_and_one_read_as_true():
    raw = with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b"\0\1\7")
    assert read_npy(raw).tolist() == [False, True, True]


# --- item 5: strings and comments left open ------------------------------------------------

def test_unterminated_comments_and_strings_are_one_token_and_a_parse_error():
    text = "/*a" * 30_000
    toks, _ = tokenize(text, len(text))
    assert toks[0] == text and not any(toks[1:])
    err = parse_error("def @main() {\n  1 /*a" + "/*a" * 1000 + "\n}")
    assert at(err) == (2, 5) and err.message.startswith("unterminated comment")
    assert len(err.found) < 50
    err = parse_error('def @main(%x: float32) {\n  nn.conv2d(%x, %x, data_layout="\\"\\"\\"'
                      + '\\"' * 1000 + "\n}")
    assert at(err) == (2, 33) and err.message == "unterminated string literal"
    text = '"' + '\\"' * 3 + "\n1"  # a string left open runs to the end of its line
    assert tokenize(text, len(text))[0][:2] == ['"' + '\\"' * 3, "1"]


def test_a_run_of_minus_signs_is_one_token():
    text = "-" * 10_000 + ">"
    assert tokenize(text, len(text))[0][:1] == [text]
    assert at(parse_error("def @main() { 1 " + "-" * 10_000 + " 2 }")) == (1, 17)
    assert parse_expr("--10").data.numpy() == 10  # a run before a number is its sign, as in TVM


# --- item 11: dtypes that do not exist ------------------------------------------------------

def test_an_unknown_dtype_is_a_parse_error_that_lists_the_dtypes():
    err = parse_error("def @main(%x: Tensor[(2), float33]) {\n  %x\n}")
    assert at(err) == (1, 27)
    assert err.message.startswith("unknown dtype 'float33'; did you mean float32")
    assert "bool, int8, int16, int32, int64, uint8" in err.message and "bfloat16" in err.message
    err = parse_error("def @main() {\n  const([1], Tensor[(1), int7])\n}")
    assert at(err) == (2, 26) and "unknown dtype 'int7'" in err.message
    err = parse_error("def @main(%x: int33) { %x }")
    assert at(err) == (1, 15) and "unknown type 'int33'; did you mean int32" in err.message
    # The dtypes Relay has, with lanes, stay readable.
    for dtype in ("bfloat16", "int8x4", "uint1x4", "float16x4", "e4m3_float8", "int4", "handle"):
        parse(f"def @main(%x: Tensor[(2), {dtype}]) {{ %x }}")


# --- messages stay short -----------------------------------------------------------------------

def test_long_tokens_are_shortened_in_messages():
    name = "x" * 100_000
    for text in (f"def @main() {{ {name}(1) }}", f"def @main(%x: {name}) {{ %x }}",
                 f"def @{name}() {{ @{name}() }}\ndef @{name}() {{ 1 }}",
                 f'#[version = "{name}"]\ndef @main() {{ 1 }}', f"def @main() {{ 1{name} }}"):
        err = parse_error(text)
        assert len(err.found) <= 43
