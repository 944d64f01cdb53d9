"""Fuzzing the text format: whatever a text holds, parsing it gives a module or a ParseError.

The seeds are printed modules (Relay's test workloads, the bundled example
models, and a text that uses every form of the grammar, with constants of
every dtype in its metadata section).  Each example mutates one: characters
changed, spans deleted or duplicated, pieces of another seed spliced in,
random text or syntax inserted, and bytes of a metadata constant's ``.npy``
changed under its base64.  The rule: ``parse`` returns an IRModule, which
prints and parses back to an equal module, or raises a ParseError with a
position and a one-line message; never another exception, never a hang.
The command line, fed random bytes as a model, prints one line and exits 2.

``RELAYPASS_FUZZ_LONG=1`` runs fifty times more examples (tests/fuzz/fuzz_kit.py).
"""

from __future__ import annotations

import base64
import binascii
import functools
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from fuzz_kit import examples, no_hang
from hypothesis import given, settings
from hypothesis import strategies as st

from relaypass import relay
from relaypass.errors import ParseError
from relaypass.ir import IRModule, assert_structural_equal
from relaypass.ir.text.parser import parse, parse_expr
from relaypass.testing import workloads

ROOT = Path(__file__).resolve().parents[2]

# Every form of the grammar, once (constants of every metadata dtype are added below).
FORMS = '''#[version = "0.0.5"]
#[module_attrs(executor="graph", opt=[1, 2.5, "x"])]
def @id[A](%a: A) -> A { %a }
def @main(%x: Tensor[(2, ?), float32], %t: (int64, Tensor[(3), uint8]), %r: ref(bool),
          %f: fn (int32) -> int32, Primitive=1, note="a \\"quoted\\" \\x41\\u00e9") -> float32 {
  /* a block comment /* nested */ */
  %0 = add(%x, 1f);  // a line comment
  let %y: Tensor[(2, ?), float32] = multiply(%0, -2.5e-3f);
  free_var %z: float64;
  let %g = fn (%k: int32) { if (%k < 0) { 0 } else { %k * 2 + --3 - 7i64 } };
  %1 = (%y, %t.1, ref_read(%r), %f(4), @id(3u8), @id[float16](1f16));
  ref_write(%r, False);
  let %c = const([1, 2, 3], Tensor[(3), int16]);
  %2 = nn.conv2d(%x, %x, strides=[1, 1], padding=[0, 0, 0, 0], data_layout="NCHW");
  %3 = sum(%2, axis=[1], keepdims=True);
  { %1.0; nanf; -inff; 1f64 != 2f64; 3 >= 4; 5 <= 6; 7 == 8 }
}
'''


# The forms of the whole language: type definitions, match and match?, constructors as
# values, size variables and their expressions, dyn.* calls whose shapes are tensors.
FORMS_LANGUAGE = '''#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil }
type Pair[A, B] { MkPair(A, B) }
type Opt[A] { Some(A), None_ }
def @len[A](%xs: List[A]) -> int32 {
  match (%xs) {
    Cons(_, %rest) => add(1, @len(%rest)),
    Nil => 0,
  }
}
def @first(%p: Pair[int32, (float32, List[int32])]) -> int32 {
  match? (%p) {
    MkPair(%a, (_, Cons(%h, _))) => add(%a, %h),
  }
}
def @main(%x: Tensor[(n, 3, m), float32], %s: Tensor[(2), int64], %k: int64,
          %w: Tensor[(3, 2), int64], %o: Opt[Tensor[(n * 2 + 1, floordiv(m, 4)), float32]]) {
  %0 = dyn.reshape(%x, %s, allowzero=True);
  %1 = dyn.nn.pad(%x, %w, 0f);
  %2 = dyn.topk(%x, %k, axis=1, ret_type="values", is_ascend=False, dtype="int32");
  %3 = dyn.broadcast_to(%x, shape_of(%1, dtype="int64"));
  %4 = @len(Cons(%x, Nil));
  let %f = Some;
  (%0, %2, %3, %4, %f(1), match (%o) { Some(%v) => %v, None_ => zeros_like(%x) })
}
'''


def _forms_with_metadata() -> str:
    """FORMS with a metadata section: one constant of each dtype, some of them scalars."""
    consts = [
        relay.const((np.arange(6) % 3).astype(dtype).reshape(2, 3))
        for dtype in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64", "float16", "float32", "float64")
    ]
    consts.append(relay.const(np.float32(np.nan).reshape(()).astype("float32")))
    module = parse(FORMS)
    body = relay.Tuple([*consts, module["main"].body])
    main = module["main"]
    module["main"] = relay.Function(list(main.params), body, None, main.type_params, main.attrs)
    return module.astext()


@functools.cache
def module_seeds() -> tuple[str, ...]:
    texts = [_forms_with_metadata(), FORMS_LANGUAGE]
    for build in (
        lambda: workloads.mlp.get_workload(batch_size=1),
        lambda: workloads.dqn.get_workload(batch_size=1),
        lambda: workloads.dcgan.get_workload(batch_size=1),
        lambda: workloads.lstm.get_workload(iterations=2, num_hidden=4),
        lambda: workloads.squeezenet.get_workload(),
    ):
        texts.append(build()[0].astext())
    texts += [p.read_text() for p in sorted((ROOT / "examples" / "models").glob("*.relay"))]
    return tuple(texts)



def test_every_seed_round_trips_structurally():
    """The unmutated seeds (every form, ADTs and dynamic shapes included) print and parse back."""
    for text in module_seeds():
        mod = parse(text)
        printed = mod.astext()
        assert_structural_equal(parse(printed), mod, map_free_vars=True)
        assert parse(printed).astext() == printed


# Pieces of syntax a mutation may insert: the grammar's punctuation, keywords and literals.
SYNTAX = [
    "(", ")", "{", "}", "[", "]", ",", ";", ":", "=", ".", "?", "#", "%", "@", "->", "-", "--",
    "/*", "*/", "//", "\n", '"', "\\", "\\x", "\\u", "%0", "%x", "@main", "fn", "def", "let",
    "if", "else", "ref", "ref_read", "ref_write", "meta", "const", "free_var", "Tensor",
    "#[metadata]", "relay.Constant", "True", "None", "type", "_", "match", "match?", "=>",
    "List[", "Cons(", "n", "floordiv(", "dyn.reshape", "float32", "int64", "float33",
    "1", "0.5", "1e999", "9" * 30, "9" * 5000, "-inf", "nan", "3u8", "1f16", "70000f16",
    "4294967296", "meta[relay.Constant][0]", "é", "\U0001f600", "\x00",
]


@st.composite
def mutated_text(draw, seeds: tuple[str, ...]) -> str:
    """A seed after one to four mutations."""
    text = seeds[draw(st.integers(0, len(seeds) - 1))]  # an index: no huge repr in reports
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(
            ("flip", "delete", "duplicate", "splice", "syntax", "syntax", "random", "npy")))
        if op == "flip":
            text = text[:pos] + draw(st.characters()) + text[pos + 1:]
        elif op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 40)):]
        elif op == "duplicate":
            piece = text[pos:pos + draw(st.integers(1, 200))]
            at = draw(st.integers(0, len(text)))
            text = text[:at] + piece * draw(st.integers(1, 3)) + text[at:]
        elif op == "splice":
            other = seeds[draw(st.integers(0, len(seeds) - 1))]
            start = draw(st.integers(0, len(other)))
            text = text[:pos] + other[start:start + draw(st.integers(1, 300))] + text[pos:]
        elif op == "syntax":
            text = text[:pos] + draw(st.sampled_from(SYNTAX)) + text[pos:]
        elif op == "random":
            text = text[:pos] + draw(st.text(max_size=12)) + text[pos:]
        else:
            text = _mutate_npy(draw, text)
    return text


_ENTRY = re.compile(r'"(k05VTVBZ[A-Za-z0-9+/=]*)"')


def _mutate_npy(draw, text: str) -> str:
    """Change bytes of one metadata constant's ``.npy`` (its header or its data), base64 kept."""
    entries = list(_ENTRY.finditer(text))
    if not entries:
        return text
    m = entries[draw(st.integers(0, len(entries) - 1))]
    try:
        raw = bytearray(base64.b64decode(m.group(1)))
    except binascii.Error:  # an earlier mutation broke the base64 itself
        return text
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, min(len(raw), 140)))  # mostly the header, which ends by 128
        kind = draw(st.sampled_from(("byte", "delete", "insert", "truncate")))
        if kind == "byte" and pos < len(raw):
            raw[pos] = draw(st.integers(0, 255))
        elif kind == "delete":
            del raw[pos:pos + draw(st.integers(1, 8))]
        elif kind == "insert":
            raw[pos:pos] = draw(st.sampled_from(
                [b"'<c8'", b"'>f4'", b"'<U3'", b"'|O'", b"(9999999999, 9999999999)", b"True",
                 b"[('a', '<i4')]", b"(", b" ", b"\x00", b"99999999999999999999999"]))
        else:
            del raw[pos:]
    return text[:m.start(1)] + base64.b64encode(bytes(raw)).decode("ascii") + text[m.end(1):]


def assert_parses_or_fails_cleanly(text: str, expression: bool = False) -> None:
    """The rule of this file, for one text."""
    with no_hang():
        try:
            result = parse_expr(text) if expression else parse(text)
        except ParseError as err:
            assert err.line >= 1 and err.column >= 1, str(err)
            assert "\n" not in str(err) and len(str(err)) < 2000, str(err)
            return
    if expression:
        return
    assert isinstance(result, IRModule)
    printed = result.astext()
    assert_structural_equal(parse(printed), result, map_free_vars=True)


@settings(max_examples=examples(1000))
@given(st.data())
def test_mutated_modules_parse_or_raise_a_parse_error(data):
    assert_parses_or_fails_cleanly(data.draw(mutated_text(module_seeds())))


@settings(max_examples=examples(400))
@given(st.data())
def test_mutated_expressions_parse_or_raise_a_parse_error(data):
    seeds = tuple(m.split("\n", 1)[1].split("{", 1)[1].rsplit("}", 1)[0]
                  for m in module_seeds()[:1])
    text = data.draw(mutated_text(seeds))
    assert_parses_or_fails_cleanly(text, expression=True)


@settings(max_examples=examples(600))
@given(st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=3)), max_size=40))
def test_token_soup_parses_or_raises_a_parse_error(pieces):
    text = " ".join(pieces)
    assert_parses_or_fails_cleanly(text)
    assert_parses_or_fails_cleanly(text, expression=True)


def test_the_command_line_reads_random_bytes_as_one_error_line(tmp_path):
    rng = random.Random(16)
    seed = module_seeds()[0].encode("utf-8")
    files = []
    for i in range(examples(4)):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        if i % 2:  # valid UTF-8 text around the bytes, so that the parser sees them
            cut = rng.randrange(len(seed))
            raw = seed[:cut] + raw.decode("latin-1").encode("utf-8") + seed[cut:]
        path = tmp_path / f"random{i}.relay"
        path.write_bytes(raw)
        files.append(path)

    def run(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "relaypass.tools.cli", "print", str(path)],
                              capture_output=True, text=True, timeout=120)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run, files))
    for path, r in zip(files, results):
        lines = r.stderr.splitlines()
        assert r.returncode == 2, (path.name, r.stderr)
        assert len(lines) == 1 and lines[0].startswith("relaypass: error: "), r.stderr
        assert "Traceback" not in r.stderr and str(path.name) in lines[0]
