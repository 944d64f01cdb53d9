"""``relaypass port``: the import rewrite, the not-provided report, the command's output and errors.

The pass files in tests/data/port/ are written as for TVM v0.18 (a function
pass with an ExprMutator, an ExprVisitor analysis, a module pass using
``tvm.relay.testing`` and ``bind_params_by_name``, and every form of import
statement); tests/data/port/expected/ holds their ports.  Which TVM names
relaypass provides changes as its facade grows, so the tests name only names
that certainly do not exist (``definitely_not_a_thing``) as missing, and only
long-standing ones (``relay.var``, ``tvm.IRModule``...) as provided.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import tokenize
from itertools import takewhile
from pathlib import Path

import pytest

from relaypass.tools import port
from relaypass.tools.cli import main

DATA = Path(__file__).resolve().parent / "data" / "port"
FILES = sorted(p.name for p in DATA.glob("*.py"))


def run(capsys, *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def findings(text: str) -> list[str]:
    """The report lines for ``text`` as a file named f.py."""
    return [f.render() for f in port.port_source(textwrap.dedent(text), "f.py").findings]


def _import_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def _without_imports(tree: ast.Module) -> str:
    class Drop(ast.NodeTransformer):
        def visit_Import(self, node):
            return ast.Pass()

        visit_ImportFrom = visit_Import

    return ast.dump(Drop().visit(tree))


def _comments_and_strings(text: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [t.string for t in tokens if t.type in (tokenize.COMMENT, tokenize.STRING)]


# --- the rewrite ---------------------------------------------------------------------------
def test_file_set():
    assert FILES == ["bind_and_fold.py", "import_forms.py", "op_counter.py", "relu_to_clip.py"]
    assert sorted(p.name for p in (DATA / "expected").glob("*.py")) == FILES


def test_diff_is_exact(capsys, monkeypatch):
    monkeypatch.chdir(DATA)
    code, out, err = run(capsys, "port", "relu_to_clip.py")
    assert code == 0
    diff = "".join(takewhile(lambda line: not line.startswith("relu_to_clip.py:"),
                             out.splitlines(keepends=True)))
    assert diff == (
        "--- a/relu_to_clip.py\n"
        "+++ b/relu_to_clip.py\n"
        "@@ -3,9 +3,9 @@\n"
        " A function pass written for TVM v0.18: an ExprMutator applied by a class\n"
        " decorated with ``@relay.transform.function_pass``.\n"
        ' """\n'
        "-import tvm\n"
        "-from tvm import relay\n"
        "-from tvm.relay.expr_functor import ExprMutator\n"
        "+import relaypass as tvm\n"
        "+from relaypass import relay\n"
        "+from relaypass.relay.expr_functor import ExprMutator\n"
        " \n"
        " \n"
        " class ReluToClipRewriter(ExprMutator):\n"
    )
    assert err.startswith("relaypass: port: 1 of 1 file would change (--write rewrites it); ")


@pytest.mark.parametrize("name", FILES)
def test_port_matches_expected(name):
    result = port.port_file(str(DATA / name))
    assert result.changed
    assert result.new == (DATA / "expected" / name).read_text(encoding="utf-8")
    assert result.diff() == port.unified_diff(result.old, result.new, str(DATA / name))


@pytest.mark.parametrize("name", FILES)
def test_only_import_statements_change(name):
    result = port.port_file(str(DATA / name))
    old_tree, new_tree = ast.parse(result.old), ast.parse(result.new)
    old_lines, new_lines = result.old.splitlines(), result.new.splitlines()
    assert len(old_lines) == len(new_lines)
    imports = _import_lines(old_tree)
    assert _import_lines(new_tree) == imports
    changed = {i + 1 for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b}
    assert changed and changed <= imports
    # Outside the import statements the program is the same, to the last comment.
    assert _without_imports(old_tree) == _without_imports(new_tree)
    # ... and so are its comments and strings.
    assert _comments_and_strings(result.old) == _comments_and_strings(result.new)


def test_every_import_form():
    new = (DATA / "expected" / "import_forms.py").read_text(encoding="utf-8")
    for line in [
        "import os, relaypass as tvm  # import tvm, in a comment",
        "import relaypass as T",
        "import relaypass.relay.testing as testing",
        "import relaypass as tvm, relaypass.relay",
        "from relaypass.relay import (\n    nn,  # the nn operators\n    op as ops,\n)",
        "from relaypass . relay \\\n    import transform",
        "from \\\n    relaypass.ir import IRModule",
        "import tvmc\nfrom tvm_extras import helper\nfrom . import sibling\nfrom .tvm import local_thing",
        'π = "é"; import relaypass.relay as relay',
        'if os.environ.get("TVM_HOME"): import relaypass as tvm, relaypass.relay.analysis',
        "    import relaypass.contrib.graph_executor as graph_executor",
        "    from relaypass.relay.transform import InferType\n"
        "    import relaypass as tvm, relaypass.relay.testing",
        'SOURCE = "import tvm.relay as relay"',
        "from __future__ import annotations",
        '"""Every form of import statement the port rewrites, and the ones it must leave alone.\n\n'
        'The docstring says import tvm and from tvm import relay: strings never change.\n"""',
    ]:
        assert line in new


def test_bare_dotted_import_keeps_tvm_bound():
    # import tvm.relay binds tvm; the port binds it to relaypass and imports the submodule.
    new = port.rewrite_imports("import tvm.relay.analysis\nf = tvm.relay.analysis.free_vars\n")
    assert new == ("import relaypass as tvm, relaypass.relay.analysis\n"
                   "f = tvm.relay.analysis.free_vars\n")
    namespace: dict = {}
    exec(compile(new, "<ported>", "exec"), namespace)  # our own text, not a user file
    from relaypass.relay.analysis import free_vars

    assert namespace["f"] is free_vars
    assert namespace["tvm"].__name__ == "relaypass"


@pytest.mark.parametrize("name", FILES)
def test_porting_twice_changes_nothing(name):
    first = port.port_file(str(DATA / name))
    second = port.port_source(first.new, first.path)
    assert second.new == first.new and not second.changed and second.diff() == ""
    # A ported file reports the same names at the same lines.
    assert [f.render() for f in second.findings] == [f.render() for f in first.findings]


def test_second_port_command_prints_no_diff(capsys, tmp_path):
    path = tmp_path / "relu_to_clip.py"
    shutil.copy(DATA / "expected" / "relu_to_clip.py", path)
    code, out, err = run(capsys, "port", path)
    assert code == 0
    assert "---" not in out and "+++" not in out
    assert all(line.startswith(f"{path}:") for line in out.splitlines())
    assert "0 of 1 file would change" in err


def test_crlf_and_missing_final_newline_are_kept():
    text = "import os\r\nimport tvm.relay as relay\r\nx = relay.var('x')  # é\r\nimport tvm"
    result = port.port_source(text, "w.py")
    assert result.new == ("import os\r\nimport relaypass.relay as relay\r\n"
                          "x = relay.var('x')  # é\r\nimport relaypass as tvm")
    diff = result.diff()
    assert "-import tvm.relay as relay\r\n+import relaypass.relay as relay\r\n" in diff
    assert diff.endswith("-import tvm\n\\ No newline at end of file\n"
                         "+import relaypass as tvm\n\\ No newline at end of file\n")


def test_non_ascii_before_the_import_on_its_line():
    assert port.rewrite_imports('s = "ünïcödé €"; import tvm.relay as relay\n') == \
        's = "ünïcödé €"; import relaypass.relay as relay\n'


def test_nothing_to_port():
    text = "import numpy as np\nfrom .tvm import x\nfrom __future__ import annotations\n"
    result = port.port_source(text, "n.py")
    assert not result.changed and result.diff() == "" and result.findings == []


# --- --write -------------------------------------------------------------------------------
def test_write_rewrites_in_place(capsys, tmp_path):
    for name in FILES:
        shutil.copy(DATA / name, tmp_path / name)
    os.chmod(tmp_path / "op_counter.py", 0o640)
    paths = [tmp_path / name for name in FILES]
    code, out, err = run(capsys, "port", "--write", *paths)
    assert code == 0
    for name in FILES:
        assert (tmp_path / name).read_text(encoding="utf-8") == \
            (DATA / "expected" / name).read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(tmp_path / "op_counter.py").st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == FILES  # no temporary file left behind
    assert "---" not in out and "@@" not in out
    assert f"{tmp_path / 'bind_and_fold.py'}:30: tvm.relay.definitely_not_a_thing is not " \
           "provided by relaypass\n" in out
    assert err.startswith("relaypass: port: rewrote 4 of 4 files; ")
    # Writing again changes nothing.
    before = {name: (tmp_path / name).read_bytes() for name in FILES}
    assert run(capsys, "port", "--write", *paths)[0] == 0
    assert {name: (tmp_path / name).read_bytes() for name in FILES} == before


def test_write_keeps_the_encoding(capsys, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nimport tvm\ns = '\xe9'\n")
    assert run(capsys, "port", "--write", path)[0] == 0
    assert path.read_bytes() == b"# -*- coding: latin-1 -*-\nimport relaypass as tvm\ns = '\xe9'\n"
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport tvm\r\n")
    assert run(capsys, "port", "--write", bom)[0] == 0
    assert bom.read_bytes() == b"\xef\xbb\xbfimport relaypass as tvm\r\n"


def test_a_bad_file_stops_everything(capsys, tmp_path):
    good = tmp_path / "good.py"
    shutil.copy(DATA / "relu_to_clip.py", good)
    bad = write(tmp_path, "bad.py", "import tvm\ndef f(:\n")
    code, out, err = run(capsys, "port", "--write", good, bad)
    assert code == 2 and out == ""
    assert err == f"relaypass: error: {bad}:2:7: does not parse as Python: invalid syntax\n"
    assert good.read_text(encoding="utf-8") == (DATA / "relu_to_clip.py").read_text(
        encoding="utf-8")


# --- what relaypass does not provide -----------------------------------------------------------
def test_missing_name_reported_once_at_its_first_line(capsys):
    path = DATA / "bind_and_fold.py"
    code, out, _ = run(capsys, "port", path)
    lines = out.splitlines()
    hits = [line for line in lines if "definitely_not_a_thing" in line]
    assert hits == [f"{path}:30: tvm.relay.definitely_not_a_thing is not provided by relaypass"]
    report = [line for line in lines if line.startswith(f"{path}:")]
    assert report == sorted(report, key=lambda line: int(line.split(":")[1]))
    assert lines.index(hits[0]) > max(i for i, line in enumerate(lines) if line.startswith("+"))


def test_each_missing_name_once():
    lines = findings("""\
        import tvm
        x = 1
        tvm.relay.definitely_not_a_thing(1)
        tvm.relay.definitely_not_a_thing.nested.deeper(2)
        y = tvm.relay.definitely_not_a_thing
        tvm.definitely_not_a_thing_either
        """)
    assert lines == ["f.py:3: tvm.relay.definitely_not_a_thing is not provided by relaypass",
                     "f.py:6: tvm.definitely_not_a_thing_either is not provided by relaypass"]


def test_provided_names_are_not_reported():
    # Names relaypass has long provided, reached every way a Relay pass reaches them.
    for name in FILES:
        for f in port.port_file(str(DATA / name)).findings:
            assert not re.search(
                r"tvm\.(IRModule|ir\.Op|transform\.(module_pass|Sequential|PassContext)|relay"
                r"(\.(var|clip|nn|Op|create_executor|analysis|transform(\.(InferType|"
                r"FoldConstant|function_pass))?))?) ", f.render() + " "), f.render()


def test_attributes_of_values_are_not_checked():
    assert findings("""\
        from tvm import relay
        import tvm
        x = relay.var("x").definitely_not_a_thing
        f = relay.Function.definitely_not_a_thing
        p = tvm.transform.PassContext.definitely_not_a_thing
        fold = relay.transform.FoldConstant.definitely_not_a_thing
        """) == []


def test_from_imports_and_module_imports_are_checked():
    assert findings("""\
        from tvm.relay import var, definitely_not_a_thing as thing
        from tvm.relay.definitely_not_a_module import helper
        import tvm.definitely_not_a_package.sub as sub
        thing(var)
        """) == [
        "f.py:1: tvm.relay.definitely_not_a_thing is not provided by relaypass",
        "f.py:2: tvm.relay.definitely_not_a_module is not provided by relaypass",
        "f.py:3: tvm.definitely_not_a_package is not provided by relaypass",
    ]


def test_an_attribute_that_is_no_module():
    # relaypass.relay.var exists, but `import relaypass.relay.var` fails: said so.
    assert findings("import tvm.relay.var\n") == [
        "f.py:1: tvm.relay.var is not provided by relaypass as a module: relaypass.relay.var "
        "is not a module"]


def test_pass_names_are_looked_up_in_the_registry():
    lines = findings("""\
        from tvm import relay
        seq = [relay.transform.FoldConstant(), relay.transform.FoldConstnt()]
        """)
    assert lines == ["f.py:2: tvm.relay.transform.FoldConstnt is not provided by relaypass "
                     "(did you mean FoldConstant?)"]


def test_scopes_and_shadowing():
    assert findings("""\
        import tvm.relay as relay

        def uses_a_parameter(relay):
            return relay.definitely_not_a_thing

        def assigns_it(x):
            relay = x
            return relay.definitely_not_a_thing_2

        class Holder:
            relay = None

            def method(self):
                return relay.definitely_not_a_thing_3

        def local_import():
            from tvm import relay as R
            return R.definitely_not_a_thing_4

        def global_one():
            global relay
            return relay.definitely_not_a_thing_5

        [relay.definitely_not_a_thing_6 for relay in range(3)]
        lam = lambda relay: relay.definitely_not_a_thing_7
        """) == [
        "f.py:14: tvm.relay.definitely_not_a_thing_3 is not provided by relaypass",
        "f.py:18: tvm.relay.definitely_not_a_thing_4 is not provided by relaypass",
        "f.py:22: tvm.relay.definitely_not_a_thing_5 is not provided by relaypass",
    ]


def test_star_import_brings_free_names():
    assert findings("""\
        from tvm.relay import *
        x = var("x")
        print(len(definitely_not_a_thing(x)))
        """) == ["f.py:3: tvm.relay.definitely_not_a_thing is not provided by relaypass"]


def test_run_time_imports_of_tvm_are_reported():
    assert findings("""\
        import importlib
        tvm = importlib.import_module("tvm.relay")
        numpy = __import__("numpy")
        """) == ["f.py:2: importlib.import_module('tvm.relay') imports TVM at run time; "
                 "relaypass port rewrites import statements only"]


def test_out_of_scope_names_listed_separately(capsys, monkeypatch, tmp_path):
    import relaypass.relay
    from relaypass.errors import RelayPassError

    class RelayCompatError(RelayPassError, AttributeError):
        pass

    original = relaypass.relay.__getattr__

    def facade(name):
        if name == "build":
            raise RelayCompatError("relay.build is out of scope: relaypass generates no code")
        return original(name)

    monkeypatch.setattr(relaypass.relay, "__getattr__", facade)
    path = write(tmp_path, "build.py", """\
        import tvm
        from tvm import relay
        lib = relay.build(tvm.IRModule(), target="llvm")
        tvm.relay.definitely_not_a_thing
        """)
    code, out, err = run(capsys, "port", "--check", path)
    assert code == 1
    report = [line for line in out.splitlines() if line.startswith(f"{path}:")]
    assert report == [
        f"{path}:4: tvm.relay.definitely_not_a_thing is not provided by relaypass",
        f"{path}:3: tvm.relay.build is out of scope for relaypass: relay.build is out of scope: "
        "relaypass generates no code",
    ]
    assert "1 name not provided by relaypass, 1 out of scope" in err


def test_a_function_that_only_raises_is_listed_out_of_scope():
    # relay.quantize.quantize exists (a file that imports it still imports) but only raises
    # RelayCompatError; realize is a name whose lookup raises it.  Both are listed, each
    # message said once (not "X is out of scope for relaypass: X is out of scope ...").
    lines = findings("""\
        from tvm import relay
        from tvm.relay.quantize import qconfig, quantize
        with qconfig(nbit_input=8):
            relay.quantize.realize()
        """)
    assert [line.split(": automatic", 1)[0] for line in lines] == [
        "f.py:2: tvm.relay.quantize.quantize is out of scope for relaypass",
        "f.py:4: tvm.relay.quantize.realize is out of scope for relaypass",
    ]
    assert all(line.count("out of scope for relaypass") == 1 for line in lines)
    assert all(line.endswith("(see relaypass help coming-from-relay#out-of-scope)") for line in lines)


def test_the_names_a_pass_imports_from_relay_modules_are_provided():
    # TVM's module tree as pass code reaches it: relay.expr, relay.function,
    # relay.analysis.feature, relay.quantize's configuration, the text format's names.
    assert findings("""\
        import tvm
        from tvm import relay
        from tvm.relay import expr as _expr
        from tvm.relay.analysis import Feature, detect_feature
        from tvm.relay.analysis.feature import Feature as F
        from tvm.relay.expr import Call, TupleWrapper, bind
        from tvm.relay.function import Function
        from tvm.relay.quantize import QConfig, current_qconfig, qconfig
        relay.expr.Constant, relay.parse, relay.fromtext, tvm.IRModule.same_as
        relay.analysis.feature.Feature.fLet
        """) == []


def test_the_file_is_never_executed(capsys, tmp_path):
    marker = tmp_path / "ran"
    path = write(tmp_path, "evil.py", f"""\
        import tvm
        open({str(marker)!r}, "w").write("x")
        raise SystemExit(7)
        """)
    code, out, _ = run(capsys, "port", "--check", path)
    assert code == 1 and "+import relaypass as tvm" in out
    assert not marker.exists()


# --- exit statuses and errors ----------------------------------------------------------------
def test_check_exit_status(capsys, tmp_path):
    provided = write(tmp_path, "ok.py", """\
        import tvm
        from tvm import relay
        mod = tvm.IRModule.from_expr(relay.nn.relu(relay.var("x", shape=(1,))))
        """)
    assert run(capsys, "port", "--check", provided)[0] == 1  # it would change
    assert run(capsys, "port", "--write", provided)[0] == 0
    code, out, err = run(capsys, "port", "--check", provided)
    assert (code, out) == (0, "")
    assert err == "relaypass: port: 0 of 1 file would change; 0 names not provided by relaypass\n"
    missing = tmp_path / "missing.py"
    shutil.copy(DATA / "expected" / "bind_and_fold.py", missing)
    assert run(capsys, "port", "--check", missing)[0] == 1  # ported, but names are missing
    assert run(capsys, "port", missing)[0] == 0  # without --check, the report is information


def _relaypass(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "relaypass.tools.cli", *map(str, args)],
                          capture_output=True, text=True)


def test_user_errors_are_one_line(tmp_path):
    bad = write(tmp_path, "bad.py", "from tvm import (relay\n")
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"import tvm\x00\n")
    undecodable = tmp_path / "undecodable.py"
    undecodable.write_bytes(b"import tvm\ns = '\xff'\n")
    cases = {
        ("port", tmp_path / "nope.py"): f"{tmp_path / 'nope.py'}: no such file",
        ("port", bad): f"{bad}:1:",
        ("port", tmp_path): f"{tmp_path}: is a directory",
        ("port", nul): f"{nul}: ",
        ("port", undecodable): f"{undecodable}: cannot be decoded",
        ("port", "--write", "--check", bad): "argument --check: not allowed with argument --write",
        ("port",): "the following arguments are required: FILE",
    }
    for args, start in cases.items():
        result = _relaypass(*args)
        lines = result.stderr.splitlines()
        assert result.returncode == 2, (args, result.stderr)
        assert len(lines) == 1 and "Traceback" not in result.stderr, (args, result.stderr)
        assert lines[0].startswith(f"relaypass: error: {start}"), (args, lines[0])
        assert result.stdout == ""


def test_command_line_end_to_end(tmp_path):
    path = tmp_path / "op_counter.py"
    shutil.copy(DATA / "op_counter.py", path)
    result = _relaypass("port", path)
    assert result.returncode == 0, result.stderr
    shown = str(path).lstrip("/")  # as git shows an absolute path
    assert result.stdout.startswith(f"--- a/{shown}\n+++ b/{shown}\n@@ ")
    lines = result.stdout.splitlines()
    assert lines.index("-import tvm.relay as relay") < lines.index(
        "+import relaypass.relay as relay")
    assert result.stderr.startswith("relaypass: port: 1 of 1 file would change")
    assert path.read_text(encoding="utf-8") == (DATA / "op_counter.py").read_text(
        encoding="utf-8")
