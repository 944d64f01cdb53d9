"""Linear time for any text: the tokenizer and the parser on hostile inputs, at two sizes.

A text someone else wrote may be made to be slow: block comments or strings
left open thousands of times, runs of minus signs, comments nested deeper
than the tokenizer follows.  Each input is timed at ``n`` and ``10 n``
characters, tokenizing it and parsing it (to its ParseError); a ratio near
10 is linear, and the aim is at most 12.  A printed model repeated is the
ordinary text for comparison.  A time is the best CPU time of a few runs
(benchmarks/_workloads.py says how).

Run: python benchmarks/tokenizer_bench.py [--size N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from _workloads import best_cpu_seconds, format_table

from relaypass.errors import ParseError
from relaypass.ir.text.parser import parse
from relaypass.ir.text.tokenizer import tokenize

AIM_RATIO = 12.0
"""Time at ten times the input over the time at the input: linear is 10."""

_MODEL = '''def @main(%x: Tensor[(1, 32), float32], %w: Tensor[(64, 32), float32]) {
  %0 = nn.dense(%x, %w, units=64);  // a comment
  %1 = add(%0, 1f);
  nn.relu(%1) /* another */
}
'''

#: Each input, as a function of its length in characters (about).
INPUTS: dict[str, Callable[[int], str]] = {
    "open block comments /*a": lambda n: "/*a" * (n // 3),
    "open comments after code": lambda n: "def @main() { 1 }\n" + "x /*" * (n // 4),
    "comments nested 17 deep": lambda n: ("/*" * 17 + "a" + "*/" * 17) * (n // 69),
    "open strings \"\\\"": lambda n: '"\\"' * (n // 3),
    "open strings per line": lambda n: '"ab\n' * (n // 4),
    "minus signs then >": lambda n: "-" * n + ">",
    "minus signs then x": lambda n: ("-" * 50 + "x") * (n // 51),
    "printed model (ordinary text)": lambda n: _MODEL * (n // len(_MODEL)),
}


def _parse(text: str) -> None:
    try:
        parse(text)
    except ParseError:
        pass  # every hostile input is a ParseError; its cost is what is measured


def collect(size: int, repeat: int = 3) -> list[dict[str, object]]:
    """For each input: seconds to tokenize and to parse at ``size`` and ``10 * size`` chars."""
    rows = []
    for name, make in INPUTS.items():
        row: dict[str, object] = {"input": name}
        for scale in (1, 10):
            text = make(size * scale)
            row[f"tokenize_{scale}"], _ = best_cpu_seconds(lambda t=text: tokenize(t, len(t)), repeat,
                                                            gc_on=False)
            row[f"parse_{scale}"], _ = best_cpu_seconds(lambda t=text: _parse(t), repeat, gc_on=False)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="characters of the smaller text")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, best of {args.repeat}, "
          f"{args.size:,} and {10 * args.size:,} characters")
    table = []
    missed = []
    for row in collect(args.size, args.repeat):
        cells = [str(row["input"])]
        for what in ("tokenize", "parse"):
            small, large = float(row[f"{what}_1"]), float(row[f"{what}_10"])  # type: ignore[arg-type]
            ratio = large / small if small else 0.0
            cells += [f"{small * 1e3:.2f}", f"{large * 1e3:.2f}", f"{ratio:.1f}"]
            if ratio > AIM_RATIO:
                missed.append(f"{what} {row['input']}: {ratio:.1f}x")
        table.append(cells)
    print(format_table(["input", "tokenize ms", "10x ms", "ratio", "parse ms", "10x ms", "ratio"],
                       table))
    print(f"all ratios <= {AIM_RATIO:g}" if not missed else "aim missed: " + "; ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
