"""Inline pipelines (``relaypass run -p 'InferType,FuseOps{fuse_opt_level=2}' MODEL``).

The reader is checked against the pipeline file it stands for (the same
PipelineSpec, so the same validation), its errors for the column they name,
and the commands that take ``-p`` through a subprocess, where exit statuses
and the stdout/stderr split are the process's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import one_error_line, relaypass

from relaypass import parse
from relaypass.transform import PipelineError, parse_pipeline
from relaypass.transform.inline_pipeline import parse_inline_pipeline, parse_instrument

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "examples" / "models" / "mlp.relay"


# --- the reader: the same spec a file gives ----------------------------------------------------
SAME = [
    ("InferType,FoldConstant,FuseOps{fuse_opt_level=2}",
     'passes = ["InferType", "FoldConstant", { name = "FuseOps", options = { fuse_opt_level = 2 } }]'),
    (" InferType , cleanup{opt_level=1 required=[\"InferType\"]}( DeadCodeElimination{inline_once=true},"
     " FoldConstant ) , FuseOps ",
     'passes = ["InferType", { name = "cleanup", opt_level = 1, required = ["InferType"], passes = ['
     '{ name = "DeadCodeElimination", options = { inline_once = true } }, "FoldConstant"] }, '
     '"FuseOps"]'),
    ("relaypass_std:FoldConstant,FuseOps{}", 'passes = ["relaypass_std:FoldConstant", "FuseOps"]'),
    ("outer(inner(InferType),empty())",
     'passes = [{ name = "outer", passes = [{ name = "inner", passes = ["InferType"] }, '
     '{ name = "empty", passes = [] }] }]'),
    ("DeadCodeElimination{inline_once=false,ignore_impurity=true}",
     'passes = [{ name = "DeadCodeElimination", options = { inline_once = false, '
     'ignore_impurity = true } }]'),
]


@pytest.mark.parametrize("inline, toml", SAME)
def test_an_inline_pipeline_is_the_file_it_stands_for(inline, toml, tmp_path):
    spec = parse_inline_pipeline(inline, "-p", tmp_path)
    file_spec = parse_pipeline(f'name = "inline"\n{toml}\n', "-p", tmp_path)
    assert spec == file_spec
    assert spec.explain() == file_spec.explain()
    assert (spec.name, spec.opt_level, spec.config, spec.instruments) == ("inline", 2, {}, ())


def test_option_values_are_toml_or_bare_words(tmp_path):
    from relaypass.transform import register_pass, unregister_pass
    from relaypass.transform.decorators import module_pass

    @module_pass(opt_level=0, name="InlineOptionProbe")
    def probe(mod, ctx):
        return mod

    def factory(**options):
        return probe

    register_pass(factory, name="InlineOptionProbe", opt_level=0, options=[
        ("s", "str", "", ""), ("t", "str", "", ""), ("f", "float", 0.0, ""),
        ("n", "list[int]", [], ""), ("w", "str", "", "")])
    try:
        spec = parse_inline_pipeline(
            "InlineOptionProbe{s=\"a, b}\" t='x)' f=1.5e-3 n=[1, 2,3] w=plain_word}", "-p", tmp_path)
    finally:
        unregister_pass("InlineOptionProbe")
    assert dict(spec.passes.passes[0].options) == {
        "s": "a, b}", "t": "x)", "f": 1.5e-3, "n": [1, 2, 3], "w": "plain_word"}


# --- errors: one line naming the column ----------------------------------------------------------
ERRORS = [
    ("InferType,FoldConstnt", 11, r"no pass named 'FoldConstnt' is registered; did you mean "
                                  r"'FoldConstant'\?"),
    ("InferType,,FuseOps", 11, r"expected a pass name, found ','"),
    ("InferType,", 11, r"expected a pass name, found the end"),
    ("FuseOps{fuse_opt_levl=2}", 8, r"pass 'FuseOps' has no option 'fuse_opt_levl'; did you mean "
                                    r"'fuse_opt_level'\?"),
    ("FuseOps{fuse_opt_level=true}", 8, r"option 'fuse_opt_level' of pass 'FuseOps' takes a int"),
    ("FuseOps{fuse_opt_level=2", 25, r"the options of 'FuseOps' are not closed with '}'"),
    ("FuseOps{fuse_opt_level 2}", 24, r"expected '=' after option 'fuse_opt_level'"),
    ("FuseOps{fuse_opt_level=}", 24, r"option 'fuse_opt_level' has no value"),
    ("FuseOps{fuse_opt_level=1 fuse_opt_level=2}", 26, r"option 'fuse_opt_level' of 'FuseOps' is "
                                                       r"given twice"),
    ('FuseOps{fuse_opt_level="2}', 24, r'a string is not closed with "'),
    ("FuseOps{fuse_opt_level=[1,}", 24, r"not a TOML value"),
    ("seq(InferType", 4, r"'\(' is not closed with '\)'"),
    ("InferType)", 10, r"'\)' closes no '\('"),
    ("InferType FoldConstant", 11, r"expected ',', '\)' or the end after a pass, found 'F'"),
    ("seq{name=x}(InferType)", 5, r"a sequence's name is set by NAME\(\.\.\.\)"),
    ("seq{opt_level=-1}(InferType)", 5, r"opt_level must be a non-negative integer, not -1"),
    ("seq{opt_levl=1}(InferType)", 5, r"unknown key 'opt_levl'; did you mean 'opt_level'\?"),
    ("seq{required=[\"Nope\"]}(InferType)", 5, r"no pass named 'Nope'"),
    ("   ", 4, r"the pipeline is empty"),
]


@pytest.mark.parametrize("text, column, message", ERRORS)
def test_errors_name_the_column(text, column, message, tmp_path):
    with pytest.raises(PipelineError, match=message) as info:
        parse_inline_pipeline(text, "-p", tmp_path)
    err = info.value
    assert err.source == "-p" and err.key_path == f"column {column}", str(err)
    assert str(err).startswith(f"-p: column {column}: ")
    assert "\n" not in str(err)


def test_sequences_nest_as_deep_as_in_a_file(tmp_path):
    for depth, ok in ((50, True), (51, False)):
        inline = "s(" * depth + "InferType" + ")" * depth
        toml = ('name = "inline"\npasses = [' + '{ name = "s", passes = [' * depth + '"InferType"' + "]}" * depth
                + "]")
        if ok:
            assert parse_inline_pipeline(inline, "-p", tmp_path) == parse_pipeline(toml, "-p", tmp_path)
            continue
        with pytest.raises(PipelineError, match="nest more than 50 deep"):
            parse_pipeline(toml, "-p", tmp_path)
        with pytest.raises(PipelineError, match="column 101: sequences nest more than 50 deep"):
            parse_inline_pipeline(inline, "-p", tmp_path)


def test_deep_nesting_is_an_error_not_a_recursion_error(tmp_path):
    deep = "s(" * 100_000 + "InferType" + ")" * 100_000
    with pytest.raises(PipelineError, match="column 101: sequences nest more than 50 deep"):
        parse_inline_pipeline(deep, "-p", tmp_path)
    brackets = "FuseOps{fuse_opt_level=" + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(PipelineError, match="nested too deeply to read"):
        parse_inline_pipeline(brackets, "-p", tmp_path)
    unclosed = "(" * 100_000
    with pytest.raises(PipelineError, match="column 1: expected a pass name"):
        parse_inline_pipeline(unclosed, "-p", tmp_path)


def test_instrument_arguments():
    assert parse_instrument("PrintAfterAll") == ("PrintAfterAll", {})
    assert parse_instrument("relaypass_instruments:PrintAfterAll") == (
        "relaypass_instruments:PrintAfterAll", {})
    assert parse_instrument('PrintAfter:passes=["FuseOps", "InferType"],file=stderr') == (
        "PrintAfter", {"passes": ["FuseOps", "InferType"], "file": "stderr"})
    assert parse_instrument("relaypass_instruments:PrintChanged:context=5, types=true") == (
        "relaypass_instruments:PrintChanged", {"context": 5, "types": True})
    with pytest.raises(PipelineError, match="column 19: a value's brackets are not closed"):
        parse_instrument('PrintAfter:passes=["FuseOps"', "--instrument")
    with pytest.raises(PipelineError, match="expected an instrument name"):
        parse_instrument(":file=stderr", "--instrument")


# --- the commands -------------------------------------------------------------------------------
def test_run_explain_check_and_bisect_take_p(tmp_path):
    toml = tmp_path / "same.toml"
    toml.write_text('name = "inline"\npasses = ["InferType", "FoldConstant", '
                    '{ name = "FuseOps", options = { fuse_opt_level = 2 } }]\n')
    inline = "InferType,FoldConstant,FuseOps{fuse_opt_level=2}"
    run_inline = relaypass("run", "-p", inline, MLP, cwd=tmp_path)
    run_file = relaypass("run", toml, MLP, cwd=tmp_path)
    assert run_inline.returncode == 0 and run_inline.stderr == "", run_inline.stderr
    assert run_inline.stdout == run_file.stdout and "Primitive=1" in run_inline.stdout
    parse(run_inline.stdout)

    explain = relaypass("explain", "--pass-pipeline", inline, cwd=tmp_path)
    assert explain.returncode == 0, explain.stderr
    assert explain.stdout.splitlines()[0] == "pipeline inline (-p), opt_level 2: 4 passes run"
    rows = [line.split(None, 3) for line in explain.stdout.splitlines()[2:]]
    assert rows[2] == ["3", "InferType", "added", "required by FuseOps"]
    assert rows[3][3] == "opt_level 0 <= 2; options fuse_opt_level=2"

    check = relaypass("check", "-p", "InferType,cleanup(DeadCodeElimination)", cwd=tmp_path)
    assert (check.returncode, check.stdout) == (0, "ok: 2 passes, 0 instruments\n"), check.stderr

    bisect = relaypass("bisect", "-p", "InferType,FoldConstant", MLP, cwd=tmp_path)
    assert bisect.returncode == 0, bisect.stderr
    assert bisect.stdout.startswith("bisect: pipeline inline (-p), opt_level 2, 2 passes")


def test_p_errors_are_one_line_with_exit_2(tmp_path):
    toml = tmp_path / "p.toml"
    toml.write_text('passes = ["InferType"]\n')
    cases = {
        ("run", "-p", "InferType,FoldConstnt", MLP):
            "relaypass: error: -p: column 11: no pass named 'FoldConstnt' is registered; did you "
            "mean 'FoldConstant'?",
        ("run", "-p", "InferType", toml, MLP):
            "relaypass: error: run takes a PIPELINE.toml file or -p PIPELINE, not both",
        ("check", "-p", "InferType", toml):
            "relaypass: error: check takes a PIPELINE.toml file or -p PIPELINE, not both",
        ("explain",):
            "relaypass: error: explain needs a PIPELINE.toml file, or -p PIPELINE (an inline "
            "pipeline such as -p 'InferType,FoldConstant')",
        ("explain", "-p", "seq(InferType"):
            "relaypass: error: -p: column 4: '(' is not closed with ')'",
    }
    for args, line in cases.items():
        assert one_error_line(relaypass(*args, cwd=tmp_path)) == line


def test_instrument_paths_on_the_command_line_are_the_users(tmp_path):
    outside = tmp_path / "outside"
    inside = tmp_path / "inside"
    inside.mkdir()
    r = relaypass("run", "-p", "InferType", MLP, "--instrument",
                  f"PassTimingInstrument:print_on_exit=true,file={os.fspath(outside)!r}",
                  cwd=inside)
    # Command-line paths are the user's own: written where asked.
    assert r.returncode == 0, r.stderr
    assert outside.read_text().startswith("Pass timing")
