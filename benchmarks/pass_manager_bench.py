"""Pass-manager overhead and plugin start-up cost.

Prints:

* microseconds per no-op pass in a Sequential of 2,000 module passes, with no
  instrument and with one Python instrument (aim: <= 1.5 us without; TVM 0.27
  takes about 1.0 us with Python passes, 1.8 us with an instrument);
* milliseconds to list every pass in a fresh process, next to
  ``python -c "import numpy"`` (aim: listing no slower than 1.5x that);
* milliseconds from ``import relaypass`` to a resolved ``get_pass("FoldConstant")``
  in a fresh process (InferType when FoldConstant is not installed).

Fresh-process figures are the minimum over several runs (after a warm-up run
that fills a private bytecode cache), which is what the machine can do when
nothing else competes for it.

    python benchmarks/pass_manager_bench.py [--passes 2000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

LIST_PASSES = (
    "from relaypass.transform import list_passes, list_instruments\n"
    "list_passes(); list_instruments()\n"
)

TO_GET_PASS = (
    "import time\n"
    "t = time.perf_counter()\n"
    "import relaypass\n"
    "from relaypass.transform import get_pass, list_passes\n"
    "names = {{s.name for s in list_passes()}}\n"
    "name = {name!r} if {name!r} in names else 'InferType'\n"
    "get_pass(name)\n"
    "print(name, (time.perf_counter() - t) * 1e3)\n"
)


def _seconds_per_pass(n_passes: int, repeat: int, instrumented: bool) -> float:
    from relaypass import relay
    from relaypass.ir import IRModule
    from relaypass.transform import PassContext, Sequential, module_pass
    from relaypass.transform.instrument import PassInstrument

    x = relay.var("x", shape=(4,))
    mod = IRModule.from_expr(relay.Function([x], relay.add(x, x)))

    def noop(m, ctx):
        return m

    seq = Sequential([module_pass(noop, opt_level=0, name=f"noop{i}") for i in range(n_passes)])

    class Watch(PassInstrument):
        def run_before_pass(self, m, info):
            pass

        def run_after_pass(self, m, info):
            pass

    best = float("inf")
    with PassContext(instruments=[Watch()] if instrumented else None):
        seq(mod)  # warm up
        for _ in range(repeat):
            start = time.perf_counter()
            seq(mod)
            best = min(best, time.perf_counter() - start)
    return best / n_passes


def _fresh_env() -> dict[str, str]:
    """The environment of the fresh processes: bytecode cached, as in a normal install.

    With PYTHONDONTWRITEBYTECODE set (as on some CI machines) every process
    would compile relaypass from source while numpy loads its installed .pyc
    files; a private PYTHONPYCACHEPREFIX caches bytecode for both alike
    without writing __pycache__ folders into the source tree.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = _PYCACHE.name
    return env


_PYCACHE = tempfile.TemporaryDirectory(prefix="relaypass-bench-pycache-")


def _fresh_process_ms(codes: list[str], repeat: int) -> list[float]:
    """Minimum wall time of ``python -c code`` for each code, runs interleaved.

    One warm-up round fills the bytecode cache.  Interleaving makes a burst of
    load on a shared machine hit every candidate alike instead of skewing one.
    """
    env = _fresh_env()
    best = [float("inf")] * len(codes)
    for round_ in range(repeat + 1):
        for i, code in enumerate(codes):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
            if round_:
                best[i] = min(best[i], time.perf_counter() - start)
    return [b * 1e3 for b in best]


def _get_pass_ms(repeat: int) -> tuple[str, float]:
    best, name = float("inf"), ""
    env = _fresh_env()
    for round_ in range(repeat + 1):
        out = subprocess.run([sys.executable, "-c", TO_GET_PASS.format(name="FoldConstant")],
                             check=True, capture_output=True, text=True, env=env).stdout.split()
        name, ms = out[0], float(out[1])
        if round_:
            best = min(best, ms)
    return name, best


def collect(passes: int = 2000, repeat: int = 7) -> dict[str, object]:
    """The figures: ``us_per_pass`` and ``us_per_pass_instrumented``, and the fresh-process
    milliseconds ``python_ms``, ``numpy_ms``, ``listing_ms``, ``get_pass_ms`` (of ``get_pass_name``)."""
    plain = _seconds_per_pass(passes, repeat, instrumented=False)
    watched = _seconds_per_pass(passes, repeat, instrumented=True)
    bare, numpy_ms, listing = _fresh_process_ms(["pass", "import numpy", LIST_PASSES], repeat)
    name, ms = _get_pass_ms(repeat)
    return {"passes": passes, "repeat": repeat, "us_per_pass": plain * 1e6,
            "us_per_pass_instrumented": watched * 1e6, "python_ms": bare, "numpy_ms": numpy_ms,
            "listing_ms": listing, "get_pass_name": name, "get_pass_ms": ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=2000,
                        help="no-op passes in the Sequential (default: 2000)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="runs per figure, the best is kept (default: 7)")
    args = parser.parse_args()

    f = collect(args.passes, args.repeat)
    print(f"no-op pass in a Sequential of {args.passes:,}:")
    print(f"  without instruments         {f['us_per_pass']:6.2f} us/pass   (aim <= 1.5)")
    print(f"  with one Python instrument  {f['us_per_pass_instrumented']:6.2f} us/pass")
    bare, numpy_ms, listing = f["python_ms"], f["numpy_ms"], f["listing_ms"]
    print(f"fresh process (min of {args.repeat}):")
    print(f"  python -c pass              {bare:6.1f} ms")
    print(f"  python -c 'import numpy'    {numpy_ms:6.1f} ms")
    print(f"  list passes + instruments   {listing:6.1f} ms   "
          f"({listing / numpy_ms:.2f}x numpy; aim <= 1.5x)")
    print(f"  import relaypass -> get_pass({f['get_pass_name']!r}) resolved: "
          f"{f['get_pass_ms']:.1f} ms (measured inside the process)")


if __name__ == "__main__":
    main()
