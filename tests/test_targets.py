"""BYOC targets declared by plugins: operator support as manifest data, names checked in pipelines.

A plugin's ``[[target]]`` entry says which operators its compiler takes;
AnnotateTarget reads it when no ``target.<name>`` operator attribute (TVM's
in-process way) answers.  Pipeline files may only name targets and pattern
tables that exist.  Installed-looking distributions come from
tests/test_plugins.py's ``dists`` fixture.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
import test_plugins

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir import IRModule
from relaypass.ir.expr import Call
from relaypass.ir.op import Op, register_op_attr
from relaypass.plugins.manifest import parse_manifest
from relaypass.transform import PipelineError, read_pipeline
from relaypass.transform.errors import ManifestError
from relaypass.transform.specs import Origin
from relaypass.transform.targets import (
    DuplicateTargetError,
    TargetSupportError,
    UnknownTargetError,
    check_target_names,
    known_target_names,
    list_targets,
    operator_support,
)

dists = test_plugins.dists


def _target_manifest(name: str, operators: str) -> str:
    return f'''
    [[target]]
    name = "{name}"
    help = "the {name} accelerator"
    [target.operators]
    {operators}
    '''


SUPPORT = '''
IMPORTED = True
def small_relu(call):
    return call.checked_type.shape[0] <= 4
'''


def _annotated_targets(mod):
    """The compiler of every compiler_begin annotation in @main, in visiting order."""
    begin = Op.get("annotation.compiler_begin")
    found = []

    def visit(e):
        if isinstance(e, Call) and e.op is begin:
            found.append(str(e.attrs.compiler))

    post_order_visit(mod["main"], visit)
    return found


def _relu_then_add(rows=2):
    x = relay.var("x", shape=(rows, 3))
    y = relay.var("y", shape=(rows, 3))
    return relay.transform.InferType()(IRModule.from_expr(relay.Function([x, y], relay.add(relay.nn.relu(x), y))))


# --- the manifest entry -------------------------------------------------------------------
def test_manifest_reads_a_target():
    decl = parse_manifest(textwrap.dedent(_target_manifest(
        "npu", '"nn.relu" = true\n    "add" = "npu_pkg.support:small"')), Origin("npu-dist", "2.0"))
    [spec] = decl.targets
    assert (spec.name, spec.help, spec.distribution) == ("npu", "the npu accelerator", "npu-dist")
    assert spec.operators == (("nn.relu", True), ("add", "npu_pkg.support:small"))


@pytest.mark.parametrize("text, where", [
    ('[[target]]\nname = "t"\n', "target[0]: missing required key 'operators'"),
    ('[[target]]\nname = "t"\noperators = ["nn.relu"]\n', "target[0].operators: expected a table"),
    ('[[target]]\nname = "t"\noperators = {}\n', "target[0].operators: expected a table"),
    ('[[target]]\nname = "t"\n[target.operators]\n"nn.relu" = false\n',
     "target[0].operators.'nn.relu': expected a non-empty string, not False"),
    ('[[target]]\nname = "t"\n[target.operators]\n"nn.relu" = "no colon"\n',
     "target[0].operators.'nn.relu': 'no colon' is not true or a predicate"),
    ('[[target]]\nname = "t"\n[target.operators]\n"nn relu" = true\n',
     "target[0].operators.'nn relu': 'nn relu' is not an operator name"),
    ('[[target]]\nname = "t"\ncolour = 1\n[target.operators]\n"add" = true\n',
     "target[0]: unknown key 'colour'"),
    ('[[target]]\nname = "t"\n[target.operators]\n"add" = true\n'
     '[[target]]\nname = "t"\n[target.operators]\n"add" = true\n', "target[1].name: 't' is declared twice"),
])
def test_manifest_errors_in_targets_name_the_key_path(text, where):
    with pytest.raises(ManifestError, match="invalid plugin manifest of npu-dist 2.0") as info:
        parse_manifest(text, Origin("npu-dist", "2.0"))
    assert where in str(info.value)


# --- AnnotateTarget reads declared support --------------------------------------------------
def test_declared_support_annotates_and_predicates_load_on_first_use(dists):
    dists.add("npu-dist", "1.0", "npu_pkg",
              _target_manifest("npu", '"nn.relu" = "npu_pkg.support:small_relu"'),
              {"support": SUPPORT})
    assert [t.name for t in list_targets()] == ["npu"]
    assert "npu_pkg.support" not in sys.modules  # listing imports nothing
    out = relay.transform.AnnotateTarget(["npu"])(_relu_then_add(rows=2))
    assert "npu_pkg.support" in sys.modules
    assert "npu" in _annotated_targets(out)
    # The predicate sees the typed call: 8 rows are too many for this target.
    assert "npu" not in _annotated_targets(relay.transform.AnnotateTarget(["npu"])(_relu_then_add(rows=8)))


def test_an_operator_attribute_takes_precedence_over_the_declaration(dists):
    dists.add("npu-dist", "1.0", "npu_pkg", _target_manifest("npu", '"nn.relu" = true'), {})
    register_op_attr("nn.relu", "target.npu", lambda call: False, level=30)
    try:
        assert "npu" not in _annotated_targets(relay.transform.AnnotateTarget("npu")(_relu_then_add()))
    finally:
        Op.get("nn.relu").reset_attr("target.npu")
    assert "npu" in _annotated_targets(relay.transform.AnnotateTarget("npu")(_relu_then_add()))


def test_a_broken_predicate_is_named_and_never_hides_other_targets(dists):
    dists.add("bad-dist", "1.0", "bad_pkg",
              _target_manifest("bad", '"nn.relu" = "bad_pkg.nowhere:check"')
              + _target_manifest("notcallable", '"add" = "bad_pkg.support:IMPORTED"'),
              {"support": SUPPORT})
    dists.add("npu-dist", "1.0", "npu_pkg", _target_manifest("npu", '"add" = true'), {})
    with pytest.raises(TargetSupportError) as info:
        relay.transform.AnnotateTarget(["bad"])(_relu_then_add())
    message = str(info.value)
    assert "cannot import bad_pkg.nowhere:check for operator 'nn.relu' of target 'bad' (bad-dist 1.0)" in message
    assert info.value.distribution == "bad-dist" and "pip uninstall bad-dist" in message
    with pytest.raises(TargetSupportError, match="is a bool, not callable"):
        operator_support("notcallable")
    assert "npu" in _annotated_targets(relay.transform.AnnotateTarget(["npu"])(_relu_then_add()))


def test_one_target_name_from_two_distributions(dists):
    for dist, package in (("one-dist", "one_pkg"), ("two-dist", "two_pkg")):
        dists.add(dist, "1.0", package, _target_manifest("shared", '"add" = true'), {})
    with pytest.raises(DuplicateTargetError, match="'shared' is declared by one-dist 1.0 and two-dist 1.0"):
        operator_support("shared")


# --- which names exist ---------------------------------------------------------------------
def test_known_targets_come_from_declarations_tables_and_operator_attributes(dists):
    dists.add("npu-dist", "1.0", "npu_pkg", _target_manifest("npu", '"add" = true'), {})
    register_op_attr("nn.relu", "target.attr_only", lambda call: True, level=30)
    try:
        known = known_target_names()
        assert {"npu", "attr_only"} <= known
        check_target_names(["npu", "attr_only"])
        with pytest.raises(UnknownTargetError, match=r"no target named 'npuu'; did you mean 'npu'\?"):
            check_target_names(["npu", "npuu"])
    finally:
        Op.get("nn.relu").reset_attr("target.attr_only")


PIPELINE = """
passes = ["InferType", { name = "AnnotateTarget", options = { targets = [%s] } }]
"""


def test_a_pipeline_naming_an_unknown_target_fails_where_it_is_named(dists, tmp_path):
    dists.add("npu-dist", "1.0", "npu_pkg", _target_manifest("npu", '"add" = true'), {})
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE % '"npu"')
    read_pipeline(str(path))
    path.write_text(PIPELINE % '"npu", "npx"')
    with pytest.raises(PipelineError, match=r"p.toml: passes\[1\].options.targets\[1\]: "
                                            r"no target named 'npx'; did you mean 'npu'\?"):
        read_pipeline(str(path))


def test_an_unknown_target_mentions_plugins_that_could_not_be_read(dists, tmp_path):
    dists.add("broken-dist", "1.0", "broken_pkg", "[[target]]\nname = 'broken'\n", {})
    with pytest.raises(UnknownTargetError) as info:
        check_target_names(["broken"])
    assert "1 plugin distribution(s) could not be read" in str(info.value)
    assert "broken-dist 1.0" in str(info.value) and "missing required key 'operators'" in str(info.value)


def test_python_callers_keep_tvms_behaviour_for_any_target_name():
    # TVM annotates with whatever name it is given; nothing is supported, so all is "default".
    out = relay.transform.AnnotateTarget(["nowhere"])(_relu_then_add())
    assert set(_annotated_targets(out)) == {"default"}


def test_cli_lists_targets(dists, capsys):
    from relaypass.tools.cli import main

    dists.add("npu-dist", "1.0", "npu_pkg",
              _target_manifest("npu", '"add" = true\n    "nn.relu" = "npu_pkg.support:small_relu"'), {})
    assert main(["passes"]) == 0
    out = capsys.readouterr().out
    section = out.split("targets (", 1)[1].splitlines()
    [row] = [line for line in section if line.startswith("npu ")]
    assert "npu-dist" in row and "add, nn.relu" in row
    assert main(["passes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [entry] = [d for d in data if d["kind"] == "target"]
    assert entry["name"] == "npu" and entry["operators"] == ["add", "nn.relu"]
