"""The command line's daily-use options, run as a user runs them: in a subprocess.

``-`` for stdin and stdout, ``--instrument``, ``--print-before``/``--print-after``
(validated, with did-you-mean), ``--verify-each``, ``relaypass passes NAME``,
``--load FILE.py``, the tolerances' validation, what printing writes (no
metadata section unless asked, diffs without type comments) and where
(stderr, never into the module on stdout), and the status line on a terminal.
Independent invocations run together on a small thread pool.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_helpers import CLI, on_a_terminal, one_error_line, relaypass, run_all

from relaypass import parse, structural_equal

ROOT = Path(__file__).resolve().parent.parent
PIPELINES = ROOT / "examples" / "pipelines"
MLP = ROOT / "examples" / "models" / "mlp.relay"
HAS_ONNX = importlib.util.find_spec("onnx") is not None


MY_PASSES = '''
from relaypass import relay
from relaypass.transform import PrintIR, module_pass, register_pass

# A pass this file only uses: PrintIR's code lives elsewhere, so --load leaves it alone.
printer = PrintIR()


@module_pass(opt_level=0, name="AddMismatch")
def add_mismatch(mod, ctx):
    """Add a (3,) constant to the (1, 10) output of @main: ill typed."""
    main = mod["main"]
    mod["main"] = relay.Function(main.params, relay.add(main.body, relay.const([1.0, 2.0, 3.0])))
    return mod


@module_pass(opt_level=0, name="FreeVariable")
def free_variable(mod, ctx):
    """Add a variable nothing binds to @main's output: ill formed."""
    main = mod["main"]
    free = relay.var("nobody", shape=(1, 10))
    mod["main"] = relay.Function(main.params, relay.add(main.body, free))
    return mod


# A factory the file registers itself, with a declared option.
def _scale(factor):
    @module_pass(opt_level=0, name="Scale")
    def scale(mod, ctx):
        main = mod["main"]
        mod["main"] = relay.Function(main.params, relay.multiply(main.body, relay.const(factor)))
        return mod
    return scale


register_pass(_scale, name="Scale", opt_level=0,
              options=[("factor", "float", 1.0, "what to scale by")])
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("front_door")

    def write(name: str, text: str) -> Path:
        path = root / name
        path.write_text(textwrap.dedent(text))
        return path

    return {
        "root": root,
        "my_passes": write("my_passes.py", MY_PASSES),
        "raises": write("raises.py", "import relaypass\n\n\nraise ValueError('not today')\n"),
        "syntax": write("syntax.py", "def broken(:\n    pass\n"),
        "exits": write("exits.py", "import sys\nsys.exit(4)\n"),
        "stdout_instruments": write("stdout_instruments.toml", """
            name = "loud"
            passes = ["InferType", "FoldConstant"]
            [[instruments]]
            name = "PassTimingInstrument"
            options = { print_on_exit = true }   # its file: stdout, by default
            """),
    }


# --- stdin and stdout ---------------------------------------------------------------------------
def test_dash_reads_the_model_from_stdin_and_writes_to_stdout(tmp_path):
    from_file = relaypass("run", PIPELINES / "O2.toml", MLP, cwd=tmp_path)
    piped = relaypass("run", PIPELINES / "O2.toml", "-", "-o", "-", cwd=tmp_path,
                      input=MLP.read_text())
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert piped.stdout == from_file.stdout and "Primitive=1" in piped.stdout
    printed = relaypass("print", "-", "--show-meta", cwd=tmp_path, input=MLP.read_text())
    assert printed.stdout == MLP.read_text()
    bad = subprocess.run([*CLI, "run", "-p", "InferType", "-"], input=b"\xff\xfe not text",
                         capture_output=True, cwd=tmp_path, timeout=300)
    line = one_error_line(subprocess.CompletedProcess(bad.args, bad.returncode, "",
                                                      bad.stderr.decode()))
    assert line.startswith("relaypass: error: <stdin>: not UTF-8 text (byte 0xff at offset 0)")
    parse_error = relaypass("run", "-p", "InferType", "-", cwd=tmp_path,
                            input='#[version = "0.0.5"]\ndef @main(%x: float32) { add(%x, ) }\n')
    assert one_error_line(parse_error).startswith("relaypass: error: <stdin>:2:")


def test_instruments_never_write_into_the_module_on_stdout(files, tmp_path):
    loud = files["stdout_instruments"]
    results = run_all({
        "stdout": ("run", loud, MLP, "--instrument", "PrintAfterAll"),
        "file": ("run", loud, MLP, "--instrument", "PrintAfterAll", "-o", tmp_path / "out.relay"),
    }, cwd=tmp_path)
    r = results["stdout"]
    assert r.returncode == 0, r.stderr
    assert structural_equal(parse(r.stdout), parse((tmp_path / "out.relay").read_text()))
    assert "Pass timing" not in r.stdout and "// IR after pass" not in r.stdout
    assert "Pass timing" in r.stderr and "// IR after pass FoldConstant" in r.stderr
    # With the module in a file, stdout is the instruments' to use, as they were told.
    r = results["file"]
    assert r.returncode == 0 and "Pass timing" in r.stdout and "// IR after pass" in r.stdout


# --- instruments and printing options -----------------------------------------------------------
def test_instrument_option_is_repeatable_and_checked(tmp_path):
    results = run_all({
        "two": ("run", "-p", "InferType,FoldConstant", MLP,
                "--instrument", 'PrintAfter:passes=["FoldConstant"],file=stderr',
                "--instrument", "relaypass_instruments:PrintBeforeAll:file=stderr"),
        "unknown": ("run", "-p", "InferType", MLP, "--instrument", "PrintAftr"),
        "option": ("run", "-p", "InferType", MLP, "--instrument", "PrintAfterAll:fil=stderr"),
        "type": ("run", "-p", "InferType", MLP, "--instrument", "PrintChanged:context=-1"),
        "syntax": ("run", "-p", "InferType", MLP, "--instrument", "PrintAfter:passes=[\"X\""),
    }, cwd=tmp_path)
    two = results["two"]
    assert two.returncode == 0, two.stderr
    assert re.findall(r"^// IR (\w+ pass \w+)", two.stderr, re.M) == [
        # FoldConstant, a function pass, types its result with an InferType of its own.
        "before pass inline", "before pass InferType", "before pass FoldConstant",
        "before pass InferType", "after pass FoldConstant"]
    assert one_error_line(results["unknown"]).startswith(
        "relaypass: error: --instrument PrintAftr: no instrument named 'PrintAftr' is registered; "
        "did you mean 'PrintAfter'")
    assert "instrument 'PrintAfterAll' has no option 'fil'; did you mean 'file'?" in \
        one_error_line(results["option"])
    # Declared types are checked before anything runs; the value itself by the instrument.
    assert "PrintChanged: option 'context' must be a non-negative integer, not -1" in \
        one_error_line(results["type"])
    assert one_error_line(results["syntax"]) == (
        "relaypass: error: argument --instrument: 'PrintAfter:passes=[\"X\"': column 19: a "
        "value's brackets are not closed (see relaypass run --help)")


def test_print_before_and_after_names_are_checked(tmp_path):
    results = run_all({
        "ok": ("run", PIPELINES / "O2.toml", MLP, "--print-before", "FoldConstant",
               "--print-after", "O2"),
        "before": ("run", PIPELINES / "O2.toml", MLP, "--print-before", "FoldConstnt"),
        "after": ("run", "-p", "InferType,cleanup(FoldConstant)", MLP, "--print-after", "cleanp"),
        "far": ("run", PIPELINES / "O2.toml", MLP, "--print-after", "Zzz"),
    }, cwd=tmp_path)
    ok = results["ok"]
    assert ok.returncode == 0, ok.stderr
    assert re.findall(r"^// IR (\w+ pass \w+)", ok.stderr, re.M) == [
        "before pass FoldConstant", "after pass O2"]
    assert one_error_line(results["before"]) == (
        "relaypass: error: --print-before FoldConstnt: no pass named 'FoldConstnt' is registered; "
        "did you mean 'FoldConstant'?")
    assert one_error_line(results["after"]) == (
        "relaypass: error: --print-after cleanp: no pass named 'cleanp' is registered; did you "
        "mean 'cleanup'?")
    assert one_error_line(results["far"]).endswith("(relaypass passes lists the registered passes)")


def test_printing_leaves_the_metadata_out_unless_asked(tmp_path):
    dumps, full_dumps = tmp_path / "dumps", tmp_path / "full"
    results = run_all({
        "short": ("run", PIPELINES / "O2.toml", MLP, "--print-after", "FoldConstant",
                  "--dump-dir", dumps),
        "meta": ("run", PIPELINES / "O2.toml", MLP, "--print-after", "FoldConstant",
                 "--show-meta", "--dump-dir", full_dumps),
        "print": ("print", MLP),
    }, cwd=tmp_path)
    short, meta = results["short"].stderr, results["meta"].stderr
    assert "meta[relay.Constant][0]" in short and "#[metadata]" not in short
    assert "/* metadata section omitted" in short and len(short) * 3 < len(meta)
    printed = meta.split("// IR after pass FoldConstant\n", 1)[1]
    assert "#[metadata]" in printed
    parse(printed)  # with the metadata section, a printout parses back
    assert "#[metadata]" not in (dumps / "000_input.relay").read_text()
    assert structural_equal(parse((full_dumps / "000_input.relay").read_text()), parse(MLP.read_text()))
    out = results["print"].stdout
    assert results["print"].returncode == 0
    assert "meta[relay.Constant][0]" in out and "#[metadata]" not in out
    assert out.rstrip().endswith("relaypass print --show-meta includes it */")


def test_print_changed_leaves_type_comments_out_unless_asked(tmp_path):
    results = run_all({
        "plain": ("run", PIPELINES / "O2.toml", MLP, "--print-changed"),
        "types": ("run", PIPELINES / "O2.toml", MLP, "--print-changed", "--diff-types"),
    }, cwd=tmp_path)
    plain, typed = results["plain"].stderr, results["types"].stderr
    assert "// FuseOps changed the module" in plain and "Primitive=1" in plain
    assert "/* ty=" not in plain
    assert "// FuseOps changed the module" in typed
    assert re.search(r"^\+.*Primitive=1", typed, re.M) and re.search(r"^\+.* /\* ty=", typed, re.M)


@pytest.mark.skipif(not HAS_ONNX, reason="needs the onnx extra")
def test_printing_resnet50_stays_small(tmp_path):
    results = run_all({
        flag: ("run", PIPELINES / "O3.toml", "--model-zoo", "resnet50", "--reference", "stored",
               flag) for flag in ("--print-after-all", "--print-changed")
    }, cwd=tmp_path)
    for r in results.values():
        assert r.returncode == 0, r.stderr[-2000:]
    after_all = results["--print-after-all"].stderr
    changed = results["--print-changed"].stderr
    assert after_all.count("// IR after pass ") >= 10 and len(after_all.encode()) < 2_000_000
    assert changed.count(" changed the module") >= 3 and len(changed.encode()) < 1_000_000


# --- verify-each ---------------------------------------------------------------------------------
def test_verify_each_stops_at_the_pass_that_breaks_the_module(files, tmp_path):
    load = ("--load", files["my_passes"])
    results = run_all({
        "typed": ("run", *load, "-p", "InferType,AddMismatch,FoldConstant", MLP, "--verify-each"),
        "formed": ("run", *load, "-p", "InferType,FreeVariable,FoldConstant", MLP,
                   "--verify-each"),
        "fine": ("run", PIPELINES / "O3.toml", MLP, "--verify-each"),
        "plain": ("run", PIPELINES / "O3.toml", MLP),
    }, cwd=tmp_path)
    assert one_error_line(results["typed"]).startswith(
        "relaypass: error: after pass AddMismatch: the module is ill typed: InferType rejects it: "
        "in @main at body: add: shapes (1, 10) and (3,) are not broadcast-compatible")
    assert one_error_line(results["formed"]).startswith(
        "relaypass: error: after pass FreeVariable: @main is ill formed: variable %nobody is free")
    fine = results["fine"]
    assert fine.returncode == 0 and fine.stderr == "", fine.stderr
    assert fine.stdout == results["plain"].stdout
    assert not (tmp_path / "relaypass-repro").exists()  # the module was broken, no pass raised


# --- passes NAME ------------------------------------------------------------------------------
def test_passes_name_shows_one_declaration(tmp_path):
    results = run_all({
        "text": ("passes", "FuseOps"),
        "json": ("passes", "FuseOps", "--json"),
        "instrument": ("instruments", "PrintChanged"),
        "typo": ("passes", "FuseOp"),
        "wrong_kind": ("passes", "PrintAfter"),
    }, cwd=tmp_path)
    text = results["text"].stdout
    assert results["text"].returncode == 0 and results["text"].stderr == ""
    assert text.splitlines()[0].startswith("FuseOps: function pass from relaypass ")
    assert "requires   InferType" in text and "preserves  InferType" in text
    assert re.search(r"^  fuse_opt_level\s+int\s+-1\s+\S", text, re.M), text
    assert re.search(r"^  relay\.FuseOps\.max_depth\s+int\s+256\s+\S", text, re.M), text
    data = json.loads(results["json"].stdout)
    assert data["name"] == "FuseOps" and data["required"] == ["InferType"]
    assert data["options"] == [{"name": "fuse_opt_level", "type": "int", "default": -1,
                                "required": False, "help": data["options"][0]["help"]}]
    assert "relay.FuseOps.max_depth" in [k["name"] for k in data["config"]]
    assert data["factory"].startswith("relaypass_std.") and data["manifest"].endswith(
        "relaypass-plugin.toml")
    inst = results["instrument"].stdout
    assert re.search(r"^  types\s+bool\s+false\s", inst, re.M), inst
    assert one_error_line(results["typo"]).startswith(
        "relaypass: error: no pass named 'FuseOp' is registered; did you mean 'FuseOps'")
    assert one_error_line(results["wrong_kind"]) == (
        "relaypass: error: 'PrintAfter' is an instrument, not a pass: relaypass instruments "
        "PrintAfter shows it")


# --- --load ----------------------------------------------------------------------------------
def test_load_registers_the_passes_a_file_defines(files, tmp_path):
    load = ("--load", files["my_passes"])
    results = run_all({
        "listing": ("passes", *load),
        "scale": ("passes", "Scale", *load, "--json"),
        "run": ("run", *load, "-p", "InferType,Scale{factor=2.0}", MLP),
        "without": ("run", "-p", "InferType,Scale", MLP),
        "twice": ("explain", *load, *load, "-p", "AddMismatch"),
    }, cwd=tmp_path)
    listing = {line.split()[0]: line.split() for line in results["listing"].stdout.splitlines()[1:]
               if line.strip()}
    assert listing["AddMismatch"][1:4] == ["module", "0", "-"]
    assert "FreeVariable" in listing and "Scale" in listing and "PrintIR" not in listing
    scale = json.loads(results["scale"].stdout)
    assert scale["options"][0]["name"] == "factor" and scale["factory"] == "my_passes:_scale"
    r = results["run"]
    assert r.returncode == 0, r.stderr
    assert re.search(r"multiply\(.*, 2f\)", r.stdout), r.stdout
    assert "no pass named 'Scale'" in one_error_line(results["without"])
    assert results["twice"].returncode == 0, results["twice"].stderr


def test_load_errors_are_one_line_naming_the_file(files, tmp_path):
    cases = {
        "raises": r"--load \S*raises\.py: line 4: ValueError: not today \(the file's code raised "
                  r"this while it ran; python on it shows the traceback\)",
        "syntax": r"--load \S*syntax\.py: line 1: SyntaxError: invalid syntax \(the file does not "
                  r"parse\)",
        "exits": r"--load \S*exits\.py: line 2: it called sys\.exit\(4\) \(a file given to "
                 r"--load defines passes; it may not end the command\)",
    }
    results = run_all({k: ("run", "--load", files[k], "-p", "InferType", MLP) for k in cases},
                      cwd=tmp_path)
    for key, pattern in cases.items():
        assert re.fullmatch("relaypass: error: " + pattern, one_error_line(results[key])), key
    missing = relaypass("passes", "--load", tmp_path / "nope.py", cwd=tmp_path)
    assert one_error_line(missing) == f"relaypass: error: --load {tmp_path / 'nope.py'}: no such file"


# --- values ------------------------------------------------------------------------------------
def test_tolerances_are_validated_by_the_parser(tmp_path):
    cases = {
        ("run", "-p", "InferType", MLP, "--rtol", "-1"):
            "argument --rtol: a tolerance is a finite number >= 0, not -1",
        ("run", "-p", "InferType", MLP, "--atol=-0.5"):
            "argument --atol: a tolerance is a finite number >= 0, not -0.5",
        ("run", "-p", "InferType", MLP, "--rtol", "nan"):
            "argument --rtol: a tolerance is a finite number >= 0, not nan",
        ("run", "-p", "InferType", MLP, "--atol", "tiny"):
            "argument --atol: expected a number, not 'tiny'",
        ("bisect", "-p", "InferType", MLP, "--atol=-1e-5"):
            "argument --atol: a tolerance is a finite number >= 0, not -1e-5",
    }
    results = run_all({args: args for args in cases}, cwd=tmp_path)
    for args, message in cases.items():
        command = args[0]
        assert one_error_line(results[args]) == (
            f"relaypass: error: {message} (see relaypass {command} --help)")
    ok = relaypass("run", "-p", "InferType", MLP, "--check", "--rtol", "0", "--atol", "0",
                   cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


# --- the status line ------------------------------------------------------------------------------
_STATUS = re.compile(r"relaypass: (reading|importing|evaluating|running|\[\d+/\d+\])")


def _glued_to_the_status_line(tty: str) -> list[str]:
    """The pieces of terminal text in which the status line is followed by other output.

    Every write that is not the status line comes after an erase (``\\r\\x1b[K``); the
    status line itself never ends with a newline.
    """
    pieces = tty.replace("\r\n", "\n").split("\r\x1b[K")
    return [p for p in pieces if _STATUS.search(p) and "\n" in p]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_the_status_line_is_erased_before_other_output(tmp_path):
    code, tty, stdout = on_a_terminal(
        ["run", PIPELINES / "O3.toml", MLP, "--print-after", "FuseOps", "--time"], tmp_path)
    assert code == 0
    assert re.search(r"\[\d+/\d+\] O3 > FuseOps", tty) and "// IR after pass FuseOps" in tty
    assert "Pass timing" in tty and "def @main" in stdout
    assert _glued_to_the_status_line(tty) == []


@pytest.mark.skipif(sys.platform == "win32" or not HAS_ONNX,
                    reason="needs a pseudo-terminal and the onnx extra")
def test_the_model_zoo_job_erases_its_status_line(tmp_path):
    code, tty, _ = on_a_terminal(["run", PIPELINES / "O2.toml", "--model-zoo", "squeezenet"],
                                  tmp_path)
    assert code in (0, 1), tty  # 1: the check of the result failed, reported on its own line
    assert "relaypass: check " in tty
    assert "relaypass: reading squeezenet" in tty and "relaypass: squeezenet (" in tty
    assert _glued_to_the_status_line(tty) == []
