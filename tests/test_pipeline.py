"""Pipeline files: the format, validation before anything runs, building and running, explaining."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from relaypass import relay
from relaypass.errors import RelayPassError
from relaypass.ir import IRModule
from relaypass.transform import (
    ConfigKey,
    PassContext,
    PipelineError,
    Sequential,
    load_pipeline,
    module_pass,
    parse_pipeline,
    read_pipeline,
    register_instrument,
    register_pass,
    unregister_instrument,
    unregister_pass,
)
from relaypass.transform.instrument import PassInstrument


def _module() -> IRModule:
    x = relay.var("x", shape=(3,))
    return IRModule.from_expr(relay.Function([x], relay.add(x, x)))


class Recorder(PassInstrument):
    """Remembers the passes that ran, with nesting, for the tests below."""

    def __init__(self, tag: str = ""):
        self.tag = tag
        self.ran: list[str] = []

    def run_before_pass(self, mod, info):
        self.ran.append(info.name)


@pytest.fixture
def passes():
    """In-process passes the pipelines below name; ``seen`` records what each pass saw."""
    seen: list[tuple[str, object]] = []

    def make(name, opt_level, required=(), preserves=(), read=None):
        @module_pass(opt_level=opt_level, name=name, required=list(required), preserves=preserves)
        def run(mod, ctx):
            seen.append((name, ctx.config.get(read) if read else None))
            return mod

        return run

    register_pass(make("PAnalysis", 0))
    register_pass(make("PFold", 2, required=["PAnalysis"], preserves=["PAnalysis"]))
    register_pass(make("PFuse", 1, required=["PAnalysis"], read="test.PFuse.depth"),
                  config=[ConfigKey("test.PFuse.depth", "int", 4, "fusion depth")])
    register_pass(make("PHeavy", 3))

    def scaled(factor: int = 1):
        return make("PScaled", 1)

    register_pass(scaled, name="PScaled", opt_level=1, options=[("factor", "int", 1, "scale")])
    register_instrument(Recorder, options=[("tag", "str", "", "a label")])
    yield seen
    for name in ("PAnalysis", "PFold", "PFuse", "PHeavy", "PScaled"):
        unregister_pass(name)
    unregister_instrument("Recorder")


COMPLETE = '''
name = "demo"
opt_level = 2
required_pass = ["PHeavy"]
disabled_pass = ["PScaled"]
passes = [
    "PFold",
    { name = "PScaled", options = { factor = 3 } },
    { name = "inner", opt_level = 0, passes = ["PFuse", { name = "PFold" }] },
    "PHeavy",
]

[config]
"test.PFuse.depth" = 9

[[instruments]]
name = "Recorder"
options = { tag = "run" }
'''


def _write(tmp_path, text: str, name: str = "pipeline.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_complete_pipeline_loads_and_runs(tmp_path, passes):
    pipeline = load_pipeline(_write(tmp_path, COMPLETE))
    assert isinstance(pipeline.sequential, Sequential) and pipeline.sequential.info.name == "demo"
    [recorder] = pipeline.instruments
    assert recorder.tag == "run"
    mod = _module()
    out = pipeline(mod)
    assert out["main"] is mod["main"]
    # PScaled disabled; PHeavy (opt_level 3) required; PAnalysis added once, then preserved
    # by PFold, run again after PFuse (which does not preserve it).
    assert passes == [
        ("PAnalysis", None), ("PFold", None), ("PFuse", 9), ("PAnalysis", None),
        ("PFold", None), ("PHeavy", None),
    ]
    assert recorder.ran == ["demo", "PAnalysis", "PFold", "inner", "PFuse", "PAnalysis", "PFold",
                            "PHeavy"]


def test_context_carries_the_pipeline_settings(tmp_path, passes):
    ctx = load_pipeline(_write(tmp_path, COMPLETE)).context()
    assert isinstance(ctx, PassContext)
    assert (ctx.opt_level, ctx.required_pass, ctx.disabled_pass) == (2, ("PHeavy",), ("PScaled",))
    assert ctx.config["test.PFuse.depth"] == 9


def test_explain_shows_the_schedule_without_running(tmp_path, passes):
    spec = read_pipeline(_write(tmp_path, COMPLETE))
    steps = [(s.depth, s.name, s.action) for s in spec.schedule()]
    assert steps == [
        (0, "demo", "run"),
        (1, "PAnalysis", "run"), (1, "PFold", "run"),
        (1, "PScaled", "skip"),
        (1, "inner", "run"),
        (2, "PAnalysis", "skip"), (2, "PFuse", "run"),  # PFold preserved it
        (2, "PAnalysis", "run"), (2, "PFold", "run"),
        (1, "PHeavy", "run"),
    ]
    assert passes == []
    text = spec.explain()
    assert "PScaled  (disabled_pass)" in text and "PHeavy  (required_pass)" in text


def test_schedule_marks_a_required_pass_whose_effect_holds(passes):
    spec = parse_pipeline('passes = ["PAnalysis", "PFold", "PFold"]')
    steps = [(s.name, s.action) for s in spec.schedule()]
    assert steps == [("pipeline", "run"), ("PAnalysis", "run"), ("PAnalysis", "skip"),
                     ("PFold", "run"), ("PAnalysis", "skip"), ("PFold", "run")]


def test_nested_config_tables_are_dotted_keys(passes):
    spec = parse_pipeline('passes = ["PFuse"]\n[config.test.PFuse]\ndepth = 5\n')
    assert dict(spec.config) == {"test.PFuse.depth": 5}


def test_validation_imports_no_plugin_code(tmp_path):
    path = _write(tmp_path, '''
        passes = ["InferType", "FoldConstant", { name = "DeadCodeElimination", options = { inline_once = true } }]
        [[instruments]]
        name = "DumpIR"
        options = { dir = "dumps" }
    ''')
    code = (
        "import sys\n"
        "from relaypass.transform import read_pipeline\n"
        f"print(read_pipeline({str(path)!r}).explain())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('relaypass_std.', "
        "'relaypass_instruments.', 'numpy'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]"), out.stdout
    assert "FoldConstant" in out.stdout


# --- errors: each names the file, the key path and what would be valid ----------------------
@pytest.mark.parametrize("text, key_path, says", [
    ('passes = ["PFld"]', "passes[0].name", "did you mean 'PFold'"),
    ('passes = [{ name = "inner", passes = ["PFold", "Nope"] }]', "passes[0].passes[1].name",
     "no pass named 'Nope'"),
    ('passes = [{ name = "PScaled", options = { factr = 2 } }]', "passes[0].options",
     "did you mean 'factor'"),
    ('passes = [{ name = "PScaled", options = { factor = "two" } }]', "passes[0].options",
     "takes a int"),
    ('passes = [{ name = "PFold", option = {} }]', "passes[0].option", "did you mean 'options'"),
    ('passes = [42]', "passes[0]", "a pass is a name"),
    ('passes = ["PFold"]\nopt_levl = 3', "opt_levl", "did you mean 'opt_level'"),
    ('passes = ["PFold"]\nopt_level = "3"', "opt_level", "non-negative integer"),
    ('opt_level = 3', "passes", "missing"),
    ('passes = ["PFold"]\ndisabled_pass = ["PFod"]', "disabled_pass[0]", "did you mean 'PFold'"),
    ('passes = ["PFold"]\n[config]\n"test.PFuse.dept" = 3', 'config."test.PFuse.dept"',
     "did you mean 'test.PFuse.depth'?"),
    ('passes = ["PFold"]\n[config]\n"test.PFuse.depth" = 1.5', 'config."test.PFuse.depth"',
     "takes a int"),
    ('passes = ["PFold"]\n[[instruments]]\nname = "Recordr"', "instruments[0].name",
     "did you mean 'Recorder'"),
    ('passes = ["PFold"]\n[[instruments]]\nname = "Recorder"\noptions = { tga = "x" }',
     "instruments[0].options", "did you mean 'tag'"),
    ('passes = ["PFold"]\n[[instruments]]\nname = "Recorder"\nfactory = "os:system"',
     "instruments[0].factory", "unknown key 'factory'"),
])
def test_errors_name_the_key_path_and_the_fix(passes, text, key_path, says):
    with pytest.raises(PipelineError) as err:
        parse_pipeline(text, "opt.toml")
    assert err.value.source == "opt.toml" and err.value.key_path == key_path
    assert str(err.value).startswith(f"opt.toml: {key_path}: ")
    assert says in str(err.value)


def test_a_pipeline_cannot_name_code_to_import(passes):
    with pytest.raises(PipelineError, match="no pass named 'os:system'"):
        parse_pipeline('passes = ["os:system"]')
    with pytest.raises(PipelineError, match="unknown key 'factory'"):
        parse_pipeline('passes = [{ name = "PFold", factory = "os:system" }]')


def test_dependency_errors_are_found_before_anything_runs(passes):
    register_pass(module_pass(lambda m, c: m, opt_level=0, name="PNeedy", required=["PMissing"]))
    try:
        with pytest.raises(PipelineError) as err:
            parse_pipeline('passes = ["PFold", "PNeedy"]', "deps.toml")
        assert err.value.key_path == "passes[1]" and "'PMissing'" in str(err.value)
    finally:
        unregister_pass("PNeedy")


def test_invalid_toml_and_missing_files(tmp_path):
    with pytest.raises(PipelineError, match="not valid TOML"):
        parse_pipeline("passes = [", "broken.toml")
    with pytest.raises(PipelineError, match="cannot read the pipeline file"):
        read_pipeline(tmp_path / "nowhere.toml")


def test_build_errors_say_where_the_pipeline_named_the_failing_instrument(passes):
    class Picky(PassInstrument):
        def __init__(self, level: int = 0):
            raise RelayPassError(f"Picky: level {level} is not supported")

    register_instrument(Picky, options=[("level", "int", 0, "")])
    try:
        spec = parse_pipeline('passes = ["PFold"]\n[[instruments]]\nname = "Picky"\n'
                              'options = { level = 4 }', "picky.toml")
        with pytest.raises(RelayPassError, match="level 4 is not supported") as err:
            spec.build()
        assert any("picky.toml: instruments[0]" in n for n in getattr(err.value, "__notes__", []))
    finally:
        unregister_instrument("Picky")


def test_standard_passes_and_instruments_in_a_pipeline(tmp_path):
    pipeline = load_pipeline(_write(tmp_path, '''
        opt_level = 3
        passes = ["InferType", { name = "DeadCodeElimination", options = { inline_once = true } }]
        [[instruments]]
        name = "PassTimingInstrument"
    '''))
    with pipeline.context():  # the timing profile is read before the context exits (as in TVM)
        out = pipeline.sequential(_module())
        table = pipeline.instruments[0].render()
    assert out["main"].checked_type is not None
    assert "InferType" in table and "DeadCodeElimination" in table


def _doc_blocks(lang: str) -> list[str]:
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "pipeline-files.md").read_text()
    start = text.index("## A complete example")
    blocks = text[start:].split("```")
    # Each block without its fence's language tag (the example is toml, its schedule text).
    return [b.split("\n", 1)[1] for b in blocks[1:4:2]]


def test_the_documented_example_validates_runs_and_explains_as_documented(tmp_path, capsys):
    @register_pass(name="FoldChannelScale", opt_level=3, kind="function", required=["InferType"],
                   config=[("my_passes.FoldChannelScale.max_depth", int, 8, "how far")],
                   options=[("backward", bool, True, "fold backwards too")])
    def fold_channel_scale(backward=True):
        from relaypass.transform import function_pass

        return function_pass(lambda f, m, c: f, opt_level=3, name="FoldChannelScale",
                             required=["InferType"])

    try:
        example, explained = _doc_blocks("toml")
        path = _write(tmp_path, example, "inference.toml")
        spec = read_pipeline(path)
        assert spec.explain().replace(str(path), "inference.toml") == explained.strip()
        pipeline = spec.build()
        out = pipeline(_module())
        assert out["main"].checked_type is not None
        assert "FoldChannelScale" in capsys.readouterr().err  # the timing table, on exit
    finally:
        unregister_pass("FoldChannelScale")
