"""MergeComposite and pattern tables: depth, checks, priority, errors, pipeline files, plugins.

Relay's own examples are in tests/relay_compat/test_pass_merge_composite.py.
Pattern-table plugins are built as tiny ``*.dist-info`` folders on a
temporary ``sys.path`` entry (tests/test_plugins.py's ``dists`` fixture) for the error
cases, and the acme example in tests/data/byoc_plugin is pip-installed into
a fresh virtual environment for the end-to-end case.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import test_plugins
from test_plugins import _offline_build_flags, _run_in, venv_seeing_this_relaypass

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir import IRModule
from relaypass.ir.expr import Call, Function
from relaypass.plugins.manifest import parse_manifest
from relaypass.relay.dataflow_pattern import is_op, wildcard
from relaypass.relay.op.contrib import get_pattern_table, register_pattern_table
from relaypass.transform import PipelineError, load_pipeline, read_pipeline
from relaypass.transform.errors import (
    ManifestError,
    OptionError,
    PluginBuildError,
    PluginImportError,
)
from relaypass.transform.pattern_tables import (
    DuplicatePatternTableError,
    PatternTableError,
    PatternTableNotFoundError,
    list_pattern_tables,
    unregister_pattern_table,
)
from relaypass.transform.specs import Origin

#: The plugin tests' fixture: installed-looking distributions on a temporary sys.path entry.
dists = test_plugins.dists

MergeComposite = relay.transform.MergeComposite


def add_relu():
    return is_op("nn.relu")(wildcard() + wildcard())


def composites(expr):
    """The (Composite, PartitionedFromPattern) of every composite function called in ``expr``."""
    found = []

    def visit(e):
        if isinstance(e, Call) and isinstance(e.op, Function) and e.op.attrs is not None \
                and "Composite" in e.op.attrs:
            found.append((e.op.attrs["Composite"], e.op.attrs["PartitionedFromPattern"]))

    post_order_visit(expr, visit)
    return found


def module(body_of):
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    return IRModule.from_expr(relay.Function([x, y], body_of(x, y)))


# --- depth --------------------------------------------------------------------------------
def test_a_chain_of_100000_calls():
    limit = sys.getrecursionlimit()
    x = relay.var("x", shape=(2,))
    e = relay.nn.relu(relay.add(x, x))  # the match, at the bottom of the chain
    for _ in range(99_998):
        e = relay.negative(e)
    mod = IRModule.from_expr(relay.Function([x], e))
    # Two patterns: the whole chain is typed between them, then matched again (the second
    # needs operators the chain calls, so it is not skipped, yet never matches).
    table = [("add_relu", add_relu()),
             ("neg_relu", is_op("negative")(is_op("nn.relu")(wildcard())))]
    out = MergeComposite(table)(mod)
    assert composites(out["main"]) == [("add_relu", "add_nn.relu_")]
    assert out["main"].body.checked_type == relay.TensorType((2,), "float32")
    assert sys.getrecursionlimit() == limit


# --- checks, priority, typing ------------------------------------------------------------
def test_check_sees_each_match_root_and_decides():
    seen = []

    def only_first_input_x(root):
        seen.append(root.op.name)
        return root.args[0].args[0].name_hint == "x"

    mod = module(lambda x, y: relay.add(relay.nn.relu(relay.add(x, y)), relay.nn.relu(relay.add(y, x))))
    out = MergeComposite([("ar", add_relu(), only_first_input_x)])(mod)
    assert seen == ["nn.relu", "nn.relu"]
    assert composites(out["main"]) == [("ar", "add_nn.relu_")]


def test_a_rejected_match_is_left_for_the_next_pattern():
    mod = module(lambda x, y: relay.nn.relu(relay.add(x, y)))
    table = [("never", add_relu(), lambda root: False),
             ("add_only", is_op("add")(wildcard(), wildcard()))]
    assert composites(MergeComposite(table)(mod)["main"]) == [("add_only", "add_")]


def test_table_order_is_priority():
    mod = module(lambda x, y: relay.nn.relu(relay.add(x, y)))
    just_add = is_op("add")(wildcard(), wildcard())
    first = MergeComposite([("whole", add_relu()), ("part", just_add)])(mod)
    assert composites(first["main"]) == [("whole", "add_nn.relu_")]
    second = MergeComposite([("part", just_add), ("whole", add_relu())])(mod)
    assert composites(second["main"]) == [("part", "add_")]


def test_a_later_check_reads_types_of_what_an_earlier_pattern_built():
    shapes = []

    def record(root):
        shapes.append(tuple(root.args[0].checked_type.shape))  # a composite call of pattern 1
        return True

    mod = module(lambda x, y: relay.negative(relay.nn.relu(relay.add(x, y))))
    out = MergeComposite([("ar", add_relu()), ("neg", is_op("negative")(wildcard()), record)])(mod)
    assert shapes == [(2, 3)]
    assert composites(out["main"]) == [("ar", "add_nn.relu_"), ("neg", "negative_")]


def test_the_operators_a_pattern_requires():
    from relaypass.relay.dataflow_pattern import dominates, is_constant, is_tuple_get_item
    from relaypass_std.merge_composite import _required_operators

    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    bn = is_tuple_get_item(is_op("nn.batch_norm")(conv, wildcard(), wildcard(), wildcard(),
                                                  wildcard()), 0)
    assert _required_operators(is_op("nn.relu")(bn)) == {"nn.relu", "nn.batch_norm",
                                                         "nn.conv2d"}
    # An alternative needs what both sides need; an optional step is an alternative.
    either = is_op("nn.relu")(is_op("add")(wildcard(), wildcard())
                              | is_op("subtract")(wildcard(), is_constant()))
    assert _required_operators(either) == {"nn.relu"}
    assert _required_operators(conv.optional(lambda x: is_op("nn.relu")(x))) == {"nn.conv2d"}
    # Conditions on a pattern need what it needs; a wildcard, or a dominator, needs nothing.
    typed = is_op("exp")(wildcard()).has_dtype("float32").has_attr({"foo": 1})
    assert _required_operators(typed) == {"exp"}
    assert _required_operators(wildcard()) == frozenset()
    diamond = dominates(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard(),
                        is_op("add")(wildcard(), wildcard()))
    assert _required_operators(diamond) == frozenset()
    # The matcher reassociates a division and a multiplication: neither is required.
    scaled = is_op("divide")(is_op("multiply")(wildcard(), wildcard()), wildcard())
    assert _required_operators(scaled) == frozenset()


def test_skipping_entries_that_need_operators_never_called_changes_nothing():
    # Each entry applied in turn, typed between them, is what the pass computes; the
    # entries needing nn.conv2d or nn.dense (never called) are skipped without a walk.
    from relaypass.ir.structural import assert_structural_equal
    from relaypass.relay.dataflow_pattern import is_constant, partition

    checked = []

    def check(root):
        checked.append(root.op.name)
        return True

    table = [
        ("conv_relu", is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard()))),
        ("add_relu", add_relu(), check),
        ("dense_add", is_op("add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard())),
        ("mul_c", is_op("multiply")(wildcard(), is_constant()), check),
    ]

    def body(x, y):
        a = relay.nn.relu(relay.add(x, y))
        b = relay.multiply(a, relay.const(np.ones((2, 3), "float32")))
        return relay.subtract(relay.nn.relu(relay.add(b, a)), b)

    mod = relay.transform.InferType()(module(body))
    out = MergeComposite(table)(mod)
    expected = mod["main"]
    for name, pattern, *rest in table:
        expected = partition(pattern, expected, {"Composite": name}, *rest)
        expected = relay.transform.InferType()(IRModule.from_expr(expected))["main"]
    assert_structural_equal(out["main"], expected)
    assert sorted(c[0] for c in composites(out["main"])) == ["add_relu", "add_relu", "mul_c"]
    assert checked.count("nn.relu") == 2 * 2 and checked.count("multiply") == 2 * 1


def _sequential(table, mod):
    """Each entry of ``table`` partitioned in turn on the whole program, typed between:
    what the pass must compute, however it shares work between the entries."""
    from relaypass.relay.dataflow_pattern import partition

    expected = mod["main"]
    for name, pattern, *rest in table:
        expected = partition(pattern, expected, {"Composite": name}, *rest)
        expected = relay.transform.InferType()(IRModule.from_expr(expected))["main"]
    return expected


def _param_names(expr):
    names = []
    post_order_visit(expr, lambda e: names.extend(
        p.name_hint for p in e.params) if isinstance(e, Function) else None)
    return names


@pytest.mark.parametrize("later", [
    [("tanh_mul", is_op("tanh")(is_op("multiply")(wildcard(), wildcard())))],
    [("pair", "tuple")],
    # A wildcard callee matches the nested function, so the group takes in the composite
    # function inside it: the grouping goes back to the whole graph.
    [("calls", "wildcard-callee")],
])
def test_later_patterns_find_what_they_would_on_the_whole_program(later):
    # After a pattern has made composite functions, a later plain pattern is grouped on a
    # graph that leaves their insides out; the result is the same as on the whole program,
    # composite functions made inside a nested function included.
    from relaypass.ir.structural import assert_structural_equal
    from relaypass.relay.dataflow_pattern import is_constant, is_tuple

    name, pattern = later[0]
    if pattern == "tuple":
        pattern = is_tuple([wildcard(), wildcard()])
    elif pattern == "wildcard-callee":
        pattern = wildcard()(wildcard())
    c = relay.const(np.full((2, 3), 0.5, "float32"))

    def body(x, y):
        v = relay.var("v", shape=(2, 3))
        inner = relay.Function([v], relay.tanh(relay.multiply(relay.nn.relu(v + c), x)))
        e = relay.nn.relu(relay.add(x, c))
        e = relay.tanh(relay.multiply(e, y))
        e = relay.Call(inner, [relay.nn.relu(relay.add(e, c))])
        return relay.Tuple([relay.tanh(relay.multiply(e, e)), relay.nn.relu(relay.add(y, c))])

    mod = relay.transform.InferType()(module(body))
    table = [("add_relu", is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))),
             ("neg", is_op("negative")(wildcard())),  # never called: skipped
             (name, pattern)]
    out = MergeComposite(table)(mod)["main"]
    expected = _sequential(table, mod)
    assert_structural_equal(out, expected)
    assert _param_names(out) == _param_names(expected)
    assert ("add_relu", "add_nn.relu_") in composites(out)


def test_the_input_module_is_not_changed_and_values_are_kept():
    mod = module(lambda x, y: relay.multiply(relay.nn.relu(relay.add(x, y)), y))
    text = mod.astext()
    out = MergeComposite([("ar", add_relu())])(mod)
    assert mod.astext() == text and composites(out["main"])
    args = [np.array([[1, -2, 3], [-4, 5, -6]], "float32"), np.ones((2, 3), "float32")]
    run = relay.create_executor(kind="debug", mod=mod).evaluate()
    run_out = relay.create_executor(kind="debug", mod=out).evaluate()
    np.testing.assert_array_equal(run(*args).numpy(), run_out(*args).numpy())


def test_MergeComposite_passes_the_pass_author_test_kit():
    from relaypass.testing import check_pass

    @register_pattern_table("kit_table")
    def _table():
        return [("ar", add_relu()), ("mul", is_op("multiply")(wildcard(), wildcard()))]

    try:
        # Outputs kept, well-formed, well-typed, input unchanged, deterministic.
        check_pass("MergeComposite", examples=20, pass_options={"pattern_table": "kit_table"},
                   ops=["add", "multiply", "nn.relu", "negative"], seed=3)
    finally:
        unregister_pattern_table("kit_table")


# --- the registry -------------------------------------------------------------------------
def test_register_pattern_table_is_tvms_decorator():
    calls = []

    @register_pattern_table("tvm_style")
    def table():
        calls.append(1)
        return [("ar", add_relu())]

    try:
        assert calls == [1]  # called once, at registration, as TVM does
        [(name, pattern)] = get_pattern_table("tvm_style")
        assert name == "ar" and calls == [1]
        assert get_pattern_table("no_such_target") is None  # TVM's answer for an unknown target
        assert any(s.name == "tvm_style" and s.origin.in_process for s in list_pattern_tables())
        register_pattern_table("tvm_style", lambda: [("other", add_relu())])  # replaces, as TVM
        assert [e[0] for e in get_pattern_table("tvm_style")] == ["other"]
    finally:
        unregister_pattern_table("tvm_style")
    assert get_pattern_table("tvm_style") is None


def test_relay_op_contrib_register_is_tvms_module():
    from relaypass.relay.op.contrib import register

    assert register.register_pattern_table is register_pattern_table
    assert register.get_pattern_table is get_pattern_table
    assert relay.op.contrib.register_pattern_table is register_pattern_table


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("table, message", [
    ("add_relu_table_name_typo", "no pattern table named 'add_relu_table_name_typo'"),
    ({"ar": add_relu()}, "expected a list of (name, pattern)"),
    ([("ar",)], "entry 0 is ('ar',); expected a tuple (name, pattern)"),
    ([("ar", "nn.relu")], "entry 0 ('ar'): str 'nn.relu' is not a dataflow pattern"),
    ([("", add_relu())], "entry 0: the composite name must be a non-empty string"),
    ([("ar", add_relu(), "yes")], "entry 0 ('ar'): the check must be callable"),
    ([("ar", add_relu()), ("ar", wildcard())], "entry 1: composite name 'ar' is already used by entry 0"),
])
def test_a_bad_table_is_a_specific_error(table, message):
    with pytest.raises((PatternTableError, PatternTableNotFoundError)) as info:
        MergeComposite(table)
    assert message in str(info.value)


def test_a_bad_registered_table_fails_where_it_is_registered():
    with pytest.raises(PatternTableError, match=r"pattern table 'bad' of in-process registration "
                                                r"from .*: entry 0 \('x'\): int 3 is not a dataflow"):
        register_pattern_table("bad", lambda: [("x", 3)])
    assert get_pattern_table("bad") is None


def test_the_option_is_required():
    with pytest.raises(OptionError, match="needs option"):
        MergeComposite()


# --- pipeline files -----------------------------------------------------------------------
PIPELINE = """
opt_level = 2
passes = ["InferType", { name = "MergeComposite", options = { pattern_table = "%s" } }]
"""


def test_a_pipeline_file_names_a_registered_table(tmp_path):
    register_pattern_table("pipeline_target", lambda: [("pt.add_relu", add_relu())])
    try:
        path = tmp_path / "byoc.toml"
        path.write_text(PIPELINE % "pipeline_target")
        out = load_pipeline(str(path))(module(lambda x, y: relay.nn.relu(relay.add(x, y))))
        assert composites(out["main"]) == [("pt.add_relu", "add_nn.relu_")]
    finally:
        unregister_pattern_table("pipeline_target")


def test_a_pipeline_file_cannot_give_a_table_itself(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('passes = [{ name = "MergeComposite", options = { pattern_table = ["ar"] } }]')
    with pytest.raises(PipelineError, match=r"bad.toml: passes\[0\].options: option "
                                            "'pattern_table' of pass 'MergeComposite' takes a pattern_table"):
        read_pipeline(str(path))


def test_a_pipeline_naming_an_unknown_table_fails_where_it_is_named(tmp_path):
    path = tmp_path / "unknown.toml"
    path.write_text(PIPELINE % "nowhere")
    with pytest.raises(PipelineError, match=r"unknown.toml: passes\[\d\].options.pattern_table: "
                                            "no pattern table named 'nowhere'"):
        read_pipeline(str(path))


# --- pattern tables in plugin manifests -----------------------------------------------------
def test_manifest_reads_pattern_tables():
    decls = parse_manifest(textwrap.dedent('''
        [[pattern_table]]
        name = "acme"
        factory = "acme_byoc.patterns:pattern_table"
        help = "acme kernels"
    '''), Origin("acme", "1.0"))
    [spec] = decls.pattern_tables
    assert (spec.name, spec.factory, spec.help, spec.distribution) == (
        "acme", "acme_byoc.patterns:pattern_table", "acme kernels", "acme")


@pytest.mark.parametrize("text, where", [
    ('[[pattern_table]]\nfactory = "a.b:c"\n', "pattern_table[0]: missing required key 'name'"),
    ('[[pattern_table]]\nname = "t"\nfactory = "a.b"\n', "pattern_table[0].factory"),
    ('[[pattern_table]]\nname = "t"\nfactory = "a:b"\nkind = "x"\n', "unknown key 'kind'"),
    ('[[pattern_table]]\nname = "t"\nfactory = "a:b"\n[[pattern_table]]\nname = "t"\nfactory = "a:c"\n',
     "pattern_table[1].name: 't' is declared twice"),
])
def test_manifest_errors_in_pattern_tables_name_the_key_path(text, where):
    with pytest.raises(ManifestError, match=None) as info:
        parse_manifest(text, Origin("acme", "1.0"))
    assert where in str(info.value)


def _table_manifest(name: str, factory: str) -> str:
    return f'[[pattern_table]]\nname = "{name}"\nfactory = "{factory}"\n'


GOOD_TABLE = '''
from relaypass.relay.dataflow_pattern import is_op, wildcard
IMPORTED = True
def table():
    return [("good.add_relu", is_op("nn.relu")(wildcard() + wildcard()))]
'''


def test_plugin_table_is_imported_only_when_first_asked_for(dists):
    dists.add("good-npu", "1.0", "good_npu", _table_manifest("good", "good_npu.patterns:table"),
              {"patterns": GOOD_TABLE})
    assert [s.distribution for s in list_pattern_tables() if s.name == "good"] == ["good-npu"]
    assert "good_npu.patterns" not in sys.modules
    out = MergeComposite("good")(module(lambda x, y: relay.nn.relu(relay.add(x, y))))
    assert composites(out["main"]) == [("good.add_relu", "add_nn.relu_")]
    assert "good_npu.patterns" in sys.modules


def test_broken_table_plugins_are_named_and_never_hide_the_others(dists):
    dists.add("good-npu", "1.0", "good_npu", _table_manifest("good", "good_npu.patterns:table"),
              {"patterns": GOOD_TABLE})
    dists.add("bad-npu", "1.0", "bad_npu",
              _table_manifest("notalist", "bad_npu.patterns:not_a_list")
              + _table_manifest("twice", "bad_npu.patterns:twice")
              + _table_manifest("raises", "bad_npu.patterns:raises")
              + _table_manifest("missing", "bad_npu.nowhere:table"),
              {"patterns": '''
                  from relaypass.relay.dataflow_pattern import wildcard
                  def not_a_list():
                      return "conv2d"
                  def twice():
                      return [("n.a", wildcard()), ("n.a", wildcard())]
                  def raises():
                      raise RuntimeError("no device")
              '''})
    with pytest.raises(PatternTableError) as info:
        MergeComposite("notalist")
    assert "pattern table 'notalist' of bad-npu 1.0, entry point 'bad_npu'" in str(info.value)
    assert info.value.distribution == "bad-npu" and "pip uninstall bad-npu" in str(info.value)
    with pytest.raises(PatternTableError, match="entry 1: composite name 'n.a' is already used"):
        MergeComposite("twice")
    with pytest.raises(PluginBuildError, match="raised RuntimeError: 'no device'"):
        get_pattern_table("raises")
    with pytest.raises(PluginImportError, match="cannot import bad_npu.nowhere:table for pattern "
                                                "table 'missing' of bad-npu 1.0"):
        get_pattern_table("missing")
    assert [e[0] for e in get_pattern_table("good")] == ["good.add_relu"]


def test_one_table_name_from_two_distributions(dists):
    for dist, package in (("one-npu", "one_npu"), ("two-npu", "two_npu")):
        dists.add(dist, "1.0", package, _table_manifest("shared", f"{package}.patterns:table"),
                  {"patterns": GOOD_TABLE})
    dists.add("good-npu", "1.0", "good_npu", _table_manifest("good", "good_npu.patterns:table"),
              {"patterns": GOOD_TABLE})
    with pytest.raises(DuplicatePatternTableError, match="'shared' is declared by one-npu 1.0 and two-npu 1.0"):
        get_pattern_table("shared")
    assert get_pattern_table("good") is not None
    # An in-process registration settles it, as a user choosing one.
    register_pattern_table("shared", lambda: [("mine", add_relu())])
    try:
        assert [e[0] for e in get_pattern_table("shared")] == ["mine"]
    finally:
        unregister_pattern_table("shared")


def test_cli_lists_pattern_tables_and_warns_about_duplicates(dists, capsys):
    from relaypass.tools.cli import main

    for dist, package in (("one-npu", "one_npu"), ("two-npu", "two_npu")):
        dists.add(dist, "1.0", package, _table_manifest("shared", f"{package}.patterns:table"),
                  {"patterns": GOOD_TABLE})
    assert main(["passes"]) == 0
    out, err = capsys.readouterr()
    section = out.split("pattern tables", 1)[1].splitlines()
    assert sum(1 for line in section if line.startswith("shared")) == 2
    assert "pattern table 'shared' is declared by one-npu 1.0 and two-npu 1.0" in err
    assert main(["passes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["distribution"] for d in data if d["kind"] == "pattern_table"] == ["one-npu", "two-npu"]


def test_an_unknown_table_name_mentions_plugins_that_could_not_be_read(dists):
    dists.add("broken-npu", "1.0", "broken_npu", "[[pattern_table]]\nname = 'broken'\n", {})
    with pytest.raises(PatternTableNotFoundError) as info:
        MergeComposite("broken")
    assert "1 plugin distribution(s) could not be read" in str(info.value)
    assert "broken-npu 1.0" in str(info.value) and "missing required key 'factory'" in str(info.value)


# --- the acme example, pip-installed into a fresh virtual environment -----------------------
BYOC_PLUGIN = Path(__file__).resolve().parent / "data" / "byoc_plugin"

MODEL = '''#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4), float32], %v: Tensor[(2, 16), float32], %m: Tensor[(5, 16), float32],
          %c: Tensor[(2, 5), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.dense(%v, %m, units=5);
  %4 = add(%3, %c);
  (%2, %4)
}
'''

ACME_PIPELINE = """
opt_level = 2
passes = ["InferType", { name = "MergeComposite", options = { pattern_table = "acme" } }]
"""

VENV_RUN = """
import json, sys
from relaypass import parse
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call, Function
from relaypass.transform import load_pipeline
found = []
def visit(e):
    if isinstance(e, Call) and isinstance(e.op, Function) and e.op.attrs and "Composite" in e.op.attrs:
        found.append([e.op.attrs["Composite"], e.op.attrs["PartitionedFromPattern"]])
mod = load_pipeline(sys.argv[1])(parse(open(sys.argv[2]).read()))
post_order_visit(mod["main"], visit)
print("REPORT " + json.dumps(found))
"""


@pytest.fixture(scope="module")
def acme_venv(tmp_path_factory) -> Path:
    """A virtual environment seeing this relaypass, with tests/data/byoc_plugin pip-installed.

    Made as tests/test_plugins.py makes the plugin template's.
    """
    root = tmp_path_factory.mktemp("acme_venv")
    python = venv_seeing_this_relaypass(root / "venv")
    source = root / "byoc_plugin"
    shutil.copytree(BYOC_PLUGIN, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    try:
        _run_in(python, "-m", "pip", "install", "-q", "--no-deps", *_offline_build_flags(), str(source))
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"pip install of {BYOC_PLUGIN} failed:\n{exc.stdout}\n{exc.stderr}")
    return python


def test_pip_installed_pattern_table_runs_from_a_pipeline_file(acme_venv, tmp_path):
    pipeline = tmp_path / "acme.toml"
    pipeline.write_text(ACME_PIPELINE)
    model = tmp_path / "model.txt"
    model.write_text(MODEL)
    out = _run_in(acme_venv, "-c", VENV_RUN, str(pipeline), str(model)).stdout
    [line] = [ln for ln in out.splitlines() if ln.startswith("REPORT ")]
    assert json.loads(line[len("REPORT "):]) == [
        ["acme.conv2d_bias_relu", "nn.conv2d_nn.bias_add_nn.relu_"],
        ["acme.dense_add", "nn.dense_add_"],
    ]


def test_pip_installed_pattern_table_is_listed_by_the_cli(acme_venv):
    listing = _run_in(acme_venv, "-m", "relaypass.tools.cli", "passes").stdout
    tables, targets = listing.split("pattern tables", 1)[1].split("targets (", 1)
    [row] = [ln for ln in tables.splitlines() if ln.startswith("acme ")]
    assert "relaypass-acme-byoc" in row and "0.1.0" in row
    [row] = [ln for ln in targets.splitlines() if ln.startswith("acme ")]
    assert "relaypass-acme-byoc" in row and "nn.max_pool2d, nn.avg_pool2d" in row
    assert "MergeComposite" in listing.split("pattern tables", 1)[0]



ACME_PARTITION_PIPELINE = """
opt_level = 3
passes = [
    "InferType", "SimplifyInference", "FoldConstant",
    { name = "MergeComposite", options = { pattern_table = "acme" } },
    { name = "AnnotateTarget", options = { targets = ["acme"] } },
    "MergeCompilerRegions",
    "PartitionGraph",
]
"""

VENV_PARTITION_RESNET = """
import json, sys
import numpy as np
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call, Function
from relaypass.ir.op import Op
from relaypass.relay import create_executor
from relaypass.tools import model_zoo
from relaypass.transform import load_pipeline
zoo = model_zoo.light_model("resnet50")
proto = model_zoo.randomize_weights(zoo.load(), seed=0)
mod = model_zoo.import_onnx(proto, None)
inputs = model_zoo.main_arguments(mod, model_zoo.random_input(proto, seed=0))
out = load_pipeline(sys.argv[1])(mod)
offloaded = [gv for gv in out.get_global_vars() if out[gv].attrs and "Compiler" in out[gv].attrs]
compilers = sorted({str(out[gv].attrs["Compiler"]) for gv in offloaded})
ops = set()
for gv in offloaded:
    post_order_visit(out[gv], lambda e: ops.add(e.op.name) if isinstance(e, Call) and isinstance(e.op, Op) else ops.add(str(e.attrs["Composite"])) if isinstance(e, Function) and e.attrs and "Composite" in e.attrs else None)
before = create_executor("debug", mod=mod).evaluate()(*inputs).numpy()
after = create_executor("debug", mod=out).evaluate()(*inputs).numpy()
print("REPORT " + json.dumps({"offloaded": compilers, "ops": sorted(ops),
                              "max_error": float(np.abs(before - after).max())}))
"""


def test_a_pipeline_file_partitions_resnet50_for_the_installed_target(acme_venv, tmp_path):
    pytest.importorskip("onnx")
    pipeline = tmp_path / "acme-partition.toml"
    pipeline.write_text(ACME_PARTITION_PIPELINE)
    out = _run_in(acme_venv, "-c", VENV_PARTITION_RESNET, str(pipeline)).stdout
    [line] = [ln for ln in out.splitlines() if ln.startswith("REPORT ")]
    report = json.loads(line[len("REPORT "):])
    # ResNet-50's classifier (Gemm: dense + add) is acme's, and so are its two poolings, which
    # the plugin's [[target]] entry declares; its convolutions are followed by batch norms,
    # which acme does not fuse, so they stay on the host.
    assert report["offloaded"] == ["acme"]
    assert {"acme.dense_add", "nn.max_pool2d", "nn.avg_pool2d"} <= set(report["ops"])
    assert "nn.conv2d" not in report["ops"]
    # The partitioned function runs on the interpreter: the same output before and after.
    assert report["max_error"] < 1e-5


# --- the plain grouping gives what the general one gives ------------------------------------
def _random_program(seed):
    """``main(x, y)``: a random DAG of adds, multiplies, relus, tanhs and negations, with
    constants, shared values, tuples and projections (so that matches overlap, share
    nodes, bind one node twice and leave values used outside them)."""
    import random

    rng = random.Random(seed)
    c = relay.const(np.full((2, 3), 0.5, "float32"))

    def body(x, y):
        values = [x, y]
        for _ in range(60):
            a = values[-1 - min(int(rng.expovariate(0.4)), len(values) - 1)]
            b = rng.choice(values + [c])
            r = rng.random()
            if r < 0.25:
                e = relay.add(a, b) if rng.random() < 0.5 else relay.add(b, a)
            elif r < 0.4:
                e = relay.multiply(a, b)
            elif r < 0.55:
                e = relay.nn.relu(relay.add(a, c) if rng.random() < 0.3 else a)
            elif r < 0.7:
                e = relay.tanh(a)
            elif r < 0.85:
                e = relay.negative(a)
            else:
                e = relay.TupleGetItem(relay.Tuple([a, b]), rng.randrange(2))
            values.append(e)
        return relay.Tuple(values[-4:])

    return relay.transform.InferType()(module(body))


def _random_table():
    from relaypass.relay.dataflow_pattern import is_constant, is_tuple, is_tuple_get_item

    same = wildcard()
    return [
        ("add_relu", is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))),
        ("relus_added", is_op("add")(is_op("nn.relu")(wildcard()), is_op("nn.relu")(wildcard()))),
        ("mul_tanh", is_op("tanh")(is_op("multiply")(wildcard(), wildcard()))),
        ("twice", is_op("add")(same, same)),  # (not plain: one wildcard twice)
        ("neg_neg", is_op("negative")(is_op("negative")(wildcard()))),
        ("first", is_tuple_get_item(is_tuple([wildcard(), wildcard()]), 0)),
        ("relu_tanh", is_op("tanh")(is_op("nn.relu")(wildcard()))),
    ]


@pytest.mark.parametrize("seed", range(20))
def test_plain_patterns_group_as_the_general_matcher_does(seed, monkeypatch):
    # The grouper reads a plain pattern's group (members, copied nodes, inputs) from the
    # plain matcher's bindings instead of walking the match; the composite functions, their
    # names, parameters and calls are those of the general matcher's grouping.
    from relaypass.dataflow_pattern import grouper
    from relaypass.ir.structural import assert_structural_equal

    mod = _random_program(seed)
    table = _random_table()
    out = MergeComposite(table)(mod)["main"]
    monkeypatch.setattr(grouper, "plain_matcher", lambda pattern, pairs=False: None)
    general = MergeComposite(table)(mod)["main"]
    assert_structural_equal(out, general)
    assert _param_names(out) == _param_names(general)
    assert composites(out) == composites(general)
    assert out.astext() == general.astext()
    assert composites(out)  # (the table matches something in every program)
