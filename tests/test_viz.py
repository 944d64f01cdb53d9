"""``relaypass viz``: a model's dataflow graph, with fused groups and partitioned regions as clusters.

The graph is checked as data (nodes, edges, clusters) and as the DOT text
every output starts from; SVG and HTML need Graphviz's ``dot`` and the
``graphviz`` package, and their tests skip without them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import one_error_line, relaypass
from command_helpers import needs_command, parse_command

from relaypass.ir.expr import Call, Function, Let, Var
from relaypass.ir.fields import children
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.text.io import load
from relaypass.ir.text.parser import parse
from relaypass.ir.types import TensorType
from relaypass.tools import viz
from relaypass.tools.batch import pipeline_argument
from relaypass.tools.viz_graph import build_graph
from relaypass.transform import get_pass

ROOT = Path(__file__).resolve().parent.parent
CONVNET = ROOT / "examples" / "models" / "convnet.relay"
O2 = ROOT / "examples" / "pipelines" / "O2.toml"
O3 = ROOT / "examples" / "pipelines" / "O3.toml"
HAS_DOT = shutil.which("dot") is not None
HAS_GRAPHVIZ = HAS_DOT and importlib.util.find_spec("graphviz") is not None
needs_graphviz = pytest.mark.skipif(not HAS_GRAPHVIZ,
                                    reason="needs the graphviz package and Graphviz's dot")

PARTITIONED = '''#[version = "0.0.5"]
def @ccompiler_0(%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32], Compiler="ccompiler",
                 Primitive=1, global_symbol="ccompiler_0") -> Tensor[(2, 3), float32] {
  %0 = fn (%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32],
           Composite="ccompiler.add_\\"relu\\"") -> Tensor[(2, 3), float32] {
    %1 = add(%x, %y);
    nn.relu(%1)
  };
  %0(%a, %b)
}
def @main(%p: Tensor[(2, 3), float32], %q: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %2 = @ccompiler_0(%p, %q);
  %3 = (%2, %p);
  multiply(%3.0, %q)
}
'''


def _primitive_functions(mod: IRModule) -> int:
    """How many fused (Primitive) functions @main calls, counted on the IR itself."""
    count = 0
    stack = [mod["main"]]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Function) and node.attrs.get("Primitive"):
            count += 1
        stack.extend(children(node))
    return count


def _after(pipeline: Path | str, mod: IRModule, after: str | None = None) -> IRModule:
    spec = pipeline_argument(str(pipeline), os.getcwd())[0]
    return viz.module_after(spec, mod, after)


def _dot_parses(text: str) -> None:
    """``dot`` reads the text without an error (checked only where dot is installed)."""
    if HAS_DOT:
        result = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True)
        assert result.returncode == 0 and not result.stderr, result.stderr


# --- the graph -------------------------------------------------------------------------------
def test_every_fused_function_is_a_cluster_of_its_operators():
    mod = get_pass("InferType")(_after(O2, load(CONVNET)))
    graph = build_graph(mod)
    fused = [c for c in graph.clusters.values() if c.kind == "fused"]
    assert len(fused) == _primitive_functions(mod) == 7
    assert fused[0].name == "fused_nn_conv2d_multiply_add_nn_relu"
    assert fused[0].ops == 4 and fused[0].out == "1×8×32×32 float32"
    ops = [n for n in graph.nodes.values() if n.kind == "op"]
    assert all(n.cluster is not None for n in ops)  # after FuseOps every operator is fused
    conv = next(n for n in ops if n.label == "nn.conv2d")
    assert conv.detail == "1×8×32×32 float32" and conv.consts == ["8×3×3×3 float32"]
    (data,) = [n for n in graph.nodes.values() if n.kind == "input"]
    assert data.label == "%data" and any(src == data.id and dst == conv.id
                                         for src, dst, _ in graph.edges)


def test_anf_draws_the_same_dataflow():
    plain = build_graph(get_pass("InferType")(_after(O2, load(CONVNET))))
    anf = build_graph(get_pass("InferType")(_after(O3, load(CONVNET))))
    assert [c.name for c in anf.clusters.values()] == [
        "fused_nn_conv2d_add_nn_relu", "fused_nn_max_pool2d", "fused_nn_conv2d_add_nn_relu",
        "fused_nn_global_avg_pool2d", "fused_nn_batch_flatten", "fused_nn_dense_nn_bias_add",
        "fused_nn_softmax"]
    assert len(anf.edges) == len(anf.nodes) - 1  # a chain: lets are followed, not drawn
    assert len(plain.edges) == len(plain.nodes) - 1


def test_partitioned_regions_and_composites_are_nested_clusters():
    graph = build_graph(get_pass("InferType")(parse(PARTITIONED)))
    region, composite = graph.clusters.values()
    assert (region.kind, region.name, region.parent) == ("partitioned",
                                                         "ccompiler_0 (ccompiler)", None)
    assert (composite.kind, composite.name, composite.parent) == (
        "composite", 'ccompiler.add_"relu"', region.id)
    labels = {n.id: n.label for n in graph.nodes.values()}
    edges = {(labels[s], labels[d], label) for s, d, label in graph.edges}
    # The region's parameters are wired to main's values; the tuple and its projection are
    # followed to the value they hold.
    assert edges == {("%p", "add", ""), ("%q", "add", ""), ("add", "nn.relu", ""),
                     ("nn.relu", "multiply", ""), ("%q", "multiply", ""),
                     ("multiply", "output", "")}
    dot = viz.to_dot(graph, 'a "quoted" \\ title')
    assert 'label="a \\"quoted\\" \\\\ title"' in dot
    _dot_parses(dot)


def test_a_100000_deep_chain_and_let_chain():
    x = Var("x", TensorType((2,), "float32"))
    relu = Op.get("nn.relu")
    body = x
    for _ in range(100_000):
        body = Call(relu, [body])
    graph = build_graph(IRModule.from_expr(Function([x], body)))
    assert graph.ops() == 100_000 and len(graph.edges) == 100_001
    variables = [Var(f"v{i}") for i in range(100_000)]
    lets = variables[-1]
    for i in range(99_999, -1, -1):
        lets = Let(variables[i], Call(relu, [variables[i - 1] if i else x]), lets)
    graph = build_graph(IRModule.from_expr(Function([x], lets)))
    assert graph.ops() == 100_000 and len(graph.edges) == 100_001
    assert viz.to_dot(graph).count("->") == 100_001


# --- DOT -------------------------------------------------------------------------------------
def test_dot_opens_clusters_and_collapse_makes_each_one_node():
    graph = build_graph(get_pass("InferType")(_after(O2, load(CONVNET))))
    full = viz.to_dot(graph, "convnet")
    assert len(re.findall(r'subgraph "cluster_\d+"', full)) == len(graph.clusters)
    assert full.count("->") == len({(s, d, lbl) for s, d, lbl in graph.edges})
    _dot_parses(full)
    collapsed = viz.to_dot(graph, "convnet", collapse=True)
    assert "subgraph" not in collapsed
    assert len(re.findall(r'^  "cluster_\d+" \[label=', collapsed, re.M)) == len(graph.clusters)
    assert not re.search(r'"n\d+" \[label="nn\.conv2d', collapsed)  # inside a cluster node
    # convnet is a chain: the input, 7 cluster nodes and the output, 8 edges.
    assert collapsed.count("->") == 8
    assert 'label="fused_nn_conv2d_multiply_add_nn_relu\\n4 ops → 1×8×32×32 float32"' in collapsed
    _dot_parses(collapsed)


def test_after_a_pass_and_its_errors():
    mod = load(CONVNET)
    after_simplify = _after(O3, mod, "SimplifyInference")
    ops = {n.label for n in build_graph(after_simplify).nodes.values()}
    assert "nn.batch_norm" not in ops and "sqrt" in ops  # before FoldConstant folded it
    with pytest.raises(viz.VizError, match="does not run 'Nope'; it runs InferType, "
                                           "SimplifyInference"):
        _after(O3, mod, "Nope")


def test_command_errors(tmp_path: Path):
    def run(*args: object) -> int:
        return viz.run(parse_command(viz, "viz", *args), err=open(os.devnull, "w"))

    with pytest.raises(viz.VizError, match="MODEL file or --model-zoo"):
        run("-o", tmp_path / "x.dot")
    with pytest.raises(viz.VizError, match="--after needs --pipeline"):
        run(CONVNET, "--after", "FuseOps", "-o", tmp_path / "x.dot")
    with pytest.raises(viz.VizError, match="suffix does not say the format"):
        run(CONVNET, "-o", tmp_path / "x.png")
    with pytest.raises(viz.VizError, match="no @helper"):
        run(CONVNET, "--function", "helper", "-o", tmp_path / "x.dot")
    assert run(CONVNET, "-p", "InferType,FuseOps", "-o", tmp_path / "x.txt", "--format", "dot") == 0
    _dot_parses((tmp_path / "x.txt").read_text())


def test_svg_and_html_without_graphviz_say_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz fails
    with pytest.raises(viz.VizError, match=r"graphviz Python package.*pip install graphviz"):
        viz.render_svg("digraph { }")
    monkeypatch.delitem(sys.modules, "graphviz")
    if importlib.util.find_spec("graphviz") is not None:
        monkeypatch.setattr(viz.shutil, "which", lambda name: None)
        with pytest.raises(viz.VizError, match=r"dot program.*apt install graphviz"):
            viz.render_svg("digraph { }")


@pytest.mark.skipif(not HAS_DOT, reason="needs Graphviz's dot to parse the DOT")
def test_format_dot_output_parses_with_graphviz_and_keeps_every_cluster(tmp_path: Path):
    out = tmp_path / "after_fuse.txt"
    args = parse_command(viz, "viz", CONVNET, "-p", O3, "--after", "FuseOps", "--format", "dot",
                         "-o", out)
    assert viz.run(args, err=open(os.devnull, "w")) == 0
    parsed = subprocess.run(["dot", "-Tcanon", str(out)], capture_output=True, text=True)
    assert parsed.returncode == 0 and not parsed.stderr, parsed.stderr
    mod = get_pass("InferType")(_after(O3, load(CONVNET), "FuseOps"))
    clusters = re.findall(r"^\s*subgraph (cluster_\d+) \{", parsed.stdout, re.M)
    assert len(set(clusters)) == _primitive_functions(mod) == 7


# --- SVG and HTML ----------------------------------------------------------------------------
@needs_graphviz
@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="needs the onnx extra")
def test_resnet50_after_fuseops_every_fused_group_is_a_cluster(tmp_path: Path):
    mod = get_pass("InferType")(_after(O3, viz.load_model(None, "resnet50"), "FuseOps"))
    fused = _primitive_functions(mod)
    assert fused > 50
    for fmt in ("svg", "html"):
        args = parse_command(viz, "viz", "--model-zoo", "resnet50", "-p", O3, "--after",
                             "FuseOps", "-o", tmp_path / f"resnet50.{fmt}")
        assert viz.run(args, err=open(os.devnull, "w")) == 0
    svg = ET.parse(tmp_path / "resnet50.svg").getroot()
    ns = {"svg": "http://www.w3.org/2000/svg"}
    clusters = svg.findall(".//svg:g[@class='cluster']", ns)
    titles = [c.find("svg:title", ns).text for c in clusters]
    assert len(clusters) == fused and all(t.startswith("cluster_") for t in titles)
    labels = [" ".join(t.text or "" for t in c.findall("svg:text", ns)) for c in clusters]
    assert all(label.startswith("fused_") for label in labels)

    page = (tmp_path / "resnet50.html").read_text()
    overview = page[page.index('<div class="graph" id="overview">'):page.index("<h2>Clusters")]
    # Collapsed by default: each fused group is one box linking to its section.
    assert overview.count('class="cluster"') == 0
    links = set(re.findall(r'href="#(cluster-\d+)"', overview))
    sections = set(re.findall(r'<details class="cluster" id="(cluster-\d+)"', page))
    assert len(links) == len(sections) == fused
    assert '<details id="expanded">' in page and page.count("<svg") == fused + 2


@needs_command("viz")
def test_the_command_writes_dot_and_says_what_is_missing(tmp_path: Path):
    out = tmp_path / "convnet.dot"
    result = relaypass("viz", CONVNET, "-p", O2, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "convnet.relay @main after O2: 14 operators, 7 clusters" in result.stderr
    _dot_parses(out.read_text())
    # Without dot on the PATH, an SVG is one error line naming what to install.
    bare = {"PATH": os.path.dirname(sys.executable)}
    line = one_error_line(relaypass("viz", CONVNET, "-o", tmp_path / "x.svg", env=bare))
    assert "apt install graphviz" in line or "pip install graphviz" in line
    assert not (tmp_path / "x.svg").exists()
