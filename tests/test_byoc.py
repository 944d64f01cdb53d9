"""The BYOC passes (AnnotateTarget, MergeCompilerRegions, PartitionGraph) beyond TVM's cases.

What is checked here: the passes on random well-typed programs (the full
flow computes what the program computes, and each pass keeps its input,
is deterministic and well-formed: ``check_pass``); 100,000-deep chains
through each pass under the default recursion limit; the region analysis
(ids, inputs, outputs, merging); the options (``mod_name``,
``bind_constants``, targets as one name or a list, pipeline-style
``get_pass``); and the errors bad input gets.
"""
import sys

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.analysis.annotated_regions import AnnotatedRegionSet, RegionAnnotationError
from relaypass.relay.op.annotation import compiler_begin, compiler_end
from relaypass.testing import check_pass
from relaypass.transform import get_pass
from relaypass.transform.errors import OptionError

TARGET = "byoc_own"
_ALLOWED = ("add", "multiply", "nn.relu", "exp", "negative")
for _name in _ALLOWED:
    # A predicate that reads the call's types, as real operator tables do.
    tvm.ir.register_op_attr(
        _name, "target." + TARGET, lambda expr: expr.args[0].checked_type.dtype == "float32")

AnnotateTarget = relay.transform.AnnotateTarget
MergeCompilerRegions = relay.transform.MergeCompilerRegions
PartitionGraph = relay.transform.PartitionGraph


def _byoc(mod, **partition_options):
    mod = AnnotateTarget(TARGET)(mod)
    mod = MergeCompilerRegions()(mod)
    return PartitionGraph(**partition_options)(mod)


def _run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


# --- the flow on random programs ---------------------------------------------

def test_annotate_target_check_pass():
    check_pass("AnnotateTarget", examples=25, pass_options={"targets": [TARGET]},
               features={"tuple", "let", "if", "fn", "global"}, seed=3)


def test_merge_compiler_regions_check_pass():
    check_pass(lambda mod: MergeCompilerRegions()(AnnotateTarget(TARGET)(mod)), examples=25,
               features={"tuple", "let", "if", "fn", "global"}, seed=4, infer_types=True)


def test_partition_graph_check_pass():
    check_pass(_byoc, examples=40, features={"tuple", "let", "if", "fn", "global"}, seed=11,
               infer_types=True)


def test_let_value_is_not_left_dangling():
    # AnnotateTarget opens a let's value with a compiler_begin that no compiler_end
    # closes; Relay's PartitionGraph turns it into a free variable, here it is dropped.
    x = relay.var("x", shape=(2,))
    v = relay.var("v")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Let(v, relay.exp(x), v)))
    partitioned = _byoc(mod)
    assert relay.analysis.well_formed(partitioned["main"])
    assert not relay.analysis.free_vars(partitioned["main"])
    data = np.array([0.0, 1.0], "float32")
    np.testing.assert_allclose(_run(partitioned, data), np.exp(data), rtol=1e-6)


# --- 100,000-deep chains -----------------------------------------------------

CHAIN = 100_000


def _chain(op=relay.nn.relu):
    x = relay.var("x", shape=(2,))
    out = x
    for _ in range(CHAIN):
        out = op(out)
    return tvm.IRModule.from_expr(relay.Function([x], out))


def _count(expr, predicate):
    found = [0]
    relay.analysis.post_order_visit(expr, lambda n: found.__setitem__(0, found[0] + predicate(n)))
    return found[0]


def _is_annotation(node):
    return isinstance(node, relay.Call) and isinstance(node.op, tvm.ir.Op) \
        and node.op.name.startswith("annotation.compiler_")


def test_deep_chain_through_each_pass():
    assert sys.getrecursionlimit() <= 10_000
    mod = _chain()
    annotated = AnnotateTarget(TARGET)(mod)
    # One begin and one end per operator, the result closed once more.
    assert _count(annotated["main"], _is_annotation) == 2 * CHAIN
    merged = MergeCompilerRegions()(annotated)
    assert _count(merged["main"], _is_annotation) == 2
    partitioned = PartitionGraph()(merged)
    lifted = partitioned["tvmgen_default_byoc_own_main_0"]
    assert _count(lifted, lambda n: isinstance(n, relay.Call)) == CHAIN
    main = partitioned["main"]
    assert isinstance(main.body, relay.Call) and main.body.op.name_hint == lifted.attrs["global_symbol"]
    data = np.array([-1.0, 2.0], "float32")
    np.testing.assert_array_equal(_run(partitioned, data), np.maximum(data, 0))


def test_deep_chain_of_unsupported_operators():
    # Every call is "default": annotated, merged into one default region, and left in main.
    mod = _chain(relay.tanh)
    partitioned = PartitionGraph()(MergeCompilerRegions()(AnnotateTarget(TARGET)(mod)))
    assert [gv.name_hint for gv in partitioned.get_global_vars()] == ["main"]
    tvm.ir.assert_structural_equal(partitioned, relay.transform.InferType()(mod))


def test_deep_let_chain_is_annotated():
    x = relay.var("x", shape=(2,))
    body = x
    binds = []
    for i in range(CHAIN):
        v = relay.var(f"v{i}")
        binds.append((v, relay.nn.relu(body)))
        body = v
    for v, value in reversed(binds):
        body = relay.Let(v, value, body)
    mod = tvm.IRModule.from_expr(relay.Function([x], body))
    annotated = AnnotateTarget(TARGET)(mod)
    assert _count(annotated["main"], _is_annotation) > CHAIN


def test_deeply_nested_region_functions():
    # Region i has two outputs; the second needs region i+1's first output, so building
    # region 1's function builds region 2's inside it, and so on: 3,000 levels deep.
    n = 3000
    x = relay.var("x", shape=(2,))
    seconds = []
    feed = x
    for _ in range(n):
        first = relay.exp(compiler_begin(x, TARGET))
        second = relay.add(relay.negative(compiler_begin(feed, TARGET)), first)
        seconds.append(compiler_end(second, TARGET))
        feed = compiler_end(first, TARGET)
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([feed] + seconds[::-1])))
    partitioned = PartitionGraph()(mod)
    assert len(partitioned.get_global_vars()) == n + 1
    data = np.array([0.5, 1.0], "float32")
    got = relay.create_executor("debug", mod=partitioned).evaluate()(data)
    want = relay.create_executor("debug", mod=mod).evaluate()(data)
    for i in (0, 1, n):
        np.testing.assert_allclose(got[i].numpy(), want[i].numpy(), rtol=1e-6)


def test_references_pass_through_annotations():
    # The annotation kernels are the identity for every value, a reference included.
    cell = relay.RefCreate(relay.exp(relay.var("x", shape=(2,))))
    x = relay.analysis.free_vars(cell)[0]
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.RefRead(cell)))
    annotated = AnnotateTarget(TARGET)(mod)
    data = np.array([0.0, 1.0], "float32")
    np.testing.assert_allclose(_run(annotated, data), np.exp(data), rtol=1e-6)


# --- the region analysis -----------------------------------------------------

def test_regions_ids_inputs_outputs():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    bx, by = compiler_begin(x, "a"), compiler_begin(y, "a")
    total = relay.add(bx, by)
    e1, e2 = compiler_end(total, "a"), compiler_end(relay.exp(total), "a")
    b3 = compiler_begin(e1, "b")
    e3 = compiler_end(relay.negative(b3), "b")
    regions = AnnotatedRegionSet(relay.Function([x, y], relay.Tuple([e2, e3])))
    first, second = regions.get_region(total), regions.get_region(e3)
    assert len(regions) == 2
    assert (first.id, first.target, second.id, second.target) == (0, "a", 2, "b")
    assert first.args == [bx, by] and first.rets == [e2, e1]
    assert second.args == [b3] and second.rets == [e3]
    assert regions.get_region(x) is None and regions.get_region(relay.Tuple([e2, e3])) is None
    regions.merge_regions(first, second)
    # The output of the merged region that fed the other one is now internal.
    assert len(regions) == 1 and regions.get_region(total) is second
    assert second.args == [bx, by] and second.rets == [e3, e2]


def test_merge_does_not_create_a_cycle():
    # a -> b (default) -> c, and a -> c directly: c may not absorb a.
    x = relay.var("x", shape=(2,))
    a = relay.exp(compiler_begin(x, TARGET))
    b = relay.tanh(compiler_begin(compiler_end(a, TARGET), "default"))
    c = relay.add(compiler_begin(compiler_end(a, TARGET), TARGET),
                  compiler_begin(compiler_end(b, "default"), TARGET))
    mod = tvm.IRModule.from_expr(relay.Function([x], compiler_end(c, TARGET)))
    merged = MergeCompilerRegions()(mod)
    regions = AnnotatedRegionSet(merged["main"])
    assert sorted(r.target for r in regions) == [TARGET, TARGET, "default"]
    data = np.array([0.5, 1.5], "float32")
    want = np.exp(data) + np.tanh(np.exp(data))
    np.testing.assert_allclose(_run(PartitionGraph()(merged), data), want, rtol=1e-6)


# --- options -----------------------------------------------------------------

def _one_add():
    x = relay.var("x", shape=(2,))
    return tvm.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(np.ones(2, "float32")))))


def test_mod_name_prefixes_the_lifted_functions():
    assert "tvmgen_mine_byoc_own_main_0" in _byoc(_one_add(), mod_name="mine")
    assert "tvmgen_byoc_own_main_0" in _byoc(_one_add(), mod_name="")
    lifted = _byoc(_one_add())["tvmgen_default_byoc_own_main_0"]
    assert dict(lifted.attrs) == {"global_symbol": "tvmgen_default_byoc_own_main_0",
                                  "Primitive": 1, "Compiler": TARGET, "Inline": 1}


def test_bind_constants():
    bound = _byoc(_one_add())
    assert len(bound["main"].body.args) == 1 and len(bound["tvmgen_default_byoc_own_main_0"].params) == 1
    passed = _byoc(_one_add(), bind_constants=False)
    assert len(passed["main"].body.args) == 2
    data = np.array([1.0, 2.0], "float32")
    np.testing.assert_array_equal(_run(bound, data), data + 1)
    np.testing.assert_array_equal(_run(passed, data), data + 1)


def test_get_pass_with_options_as_in_a_pipeline():
    mod = _one_add()
    by_registry = get_pass("AnnotateTarget", targets=[TARGET], include_non_call_ops=False)(mod)
    tvm.ir.assert_structural_equal(by_registry, AnnotateTarget([TARGET], False)(mod))


def test_inputs_are_not_changed():
    mod = _one_add()
    before = mod.astext()
    annotated = AnnotateTarget(TARGET)(mod)
    annotated_text = annotated.astext()
    merged = MergeCompilerRegions()(annotated)
    merged_text = merged.astext()
    PartitionGraph()(merged)
    assert (mod.astext(), annotated.astext(), merged.astext()) == (before, annotated_text, merged_text)


# --- errors --------------------------------------------------------------------

@pytest.mark.parametrize("targets", [3, [TARGET, 7], None])
def test_bad_targets(targets):
    with pytest.raises(OptionError, match="AnnotateTarget: targets"):
        AnnotateTarget(targets)


def test_bad_mod_name():
    with pytest.raises(OptionError, match="mod_name"):
        PartitionGraph(mod_name="modèle")


def test_end_without_begin():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], compiler_end(relay.exp(x), TARGET)))
    for run in (MergeCompilerRegions(), PartitionGraph()):
        with pytest.raises(RegionAnnotationError, match="no matching compiler_begin.*exp"):
            run(mod)


def test_operand_from_outside_any_region():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    body = compiler_end(relay.add(compiler_begin(x, TARGET), y), TARGET)
    mod = tvm.IRModule.from_expr(relay.Function([x, y], body))
    with pytest.raises(RegionAnnotationError, match="inside an annotated region.*operand %y"):
        PartitionGraph()(mod)


def test_end_for_another_target():
    x = relay.var("x", shape=(2,))
    body = compiler_end(relay.exp(compiler_begin(x, "a")), "b")
    mod = tvm.IRModule.from_expr(relay.Function([x], body))
    with pytest.raises(RegionAnnotationError, match="for 'b' closes a region that began for 'a'"):
        MergeCompilerRegions()(mod)


def test_annotation_needs_a_string():
    x = relay.var("x", shape=(2,))
    with pytest.raises(tvm.errors.AttrsError, match="compiler must be a string"):
        compiler_begin(x, 3)
