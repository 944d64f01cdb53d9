"""``relaypass viz``: draw the dataflow graph of a model's ``@main``, as DOT, SVG or HTML.

The graph (:mod:`relaypass.tools.viz_graph`) has operators as nodes with
their result types, and fused functions and partitioned regions as clusters.
Three ways to write it:

* ``.dot``: Graphviz's language, written by this module alone (no package
  needed); every cluster drawn open, as a ``subgraph cluster_N``;
* ``.svg``: that DOT laid out by Graphviz's ``dot`` program, through the
  ``graphviz`` Python package;
* ``.html``: one self-contained page for large models: the graph with each
  cluster *collapsed* into one node (a ResNet-50 after FuseOps is about 70
  boxes instead of 400 nodes), each clickable to open the cluster's own
  drawing below, and the whole graph with every cluster open, folded away
  until asked for.

``--collapse`` draws the DOT and SVG collapsed too.  When the ``graphviz``
package or the ``dot`` program is missing, an SVG or HTML output is one
:class:`VizError` naming what to install (exit status 2); nothing is written.
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import RelayPassError

if TYPE_CHECKING:  # the graph module imports the IR: only the command needs it, when it runs
    from .viz_graph import VizCluster, VizGraph

__all__ = ["FORMATS", "VizError", "load_model", "module_after", "register", "render_html",
           "render_svg", "require_graphviz", "run", "to_dot", "typed_module"]

#: The output formats, by file suffix.
FORMATS = ("dot", "svg", "html")

INSTALL_HINT = ("pip install graphviz (or pip install 'relaypass[viz]'), and Graphviz's dot "
                "program (apt install graphviz, brew install graphviz, conda install graphviz, or "
                "https://graphviz.org/download/); .dot output needs neither")

_FILL = {"fused": "#fff4d6", "composite": "#e8f0fe", "partitioned": "#fde7e9",
         "function": "#eeeeee"}
_BORDER = {"fused": "#c99a2e", "composite": "#5b7fc7", "partitioned": "#c2505c",
           "function": "#888888"}


class VizError(RelayPassError):
    """``relaypass viz`` cannot draw what was asked (a format, a pass name, Graphviz missing)."""


# --- DOT -----------------------------------------------------------------------------------------
def _quote(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, lines separated by ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "\\n".join(escaped.splitlines() or [""]) + '"'


def _node_label(node: Any) -> str:
    lines = [node.label]
    if node.detail:
        lines.append(node.detail)
    if node.consts:
        shown = node.consts[:2]
        more = f" +{len(node.consts) - 2}" if len(node.consts) > 2 else ""
        lines.append("const " + ", ".join(s.split(" ")[0] for s in shown) + more)
    return "\n".join(lines)


def _node_style(kind: str) -> str:
    if kind == "input":
        return 'shape=ellipse, fillcolor="#dbeafe"'
    if kind == "output":
        return 'shape=ellipse, fillcolor="#dcfce7"'
    if kind in ("call", "other"):
        return 'fillcolor="#f3e8ff"'
    return 'fillcolor="#ffffff"'


def _cluster_label(c: VizCluster) -> str:
    return f"{c.name}\n{c.ops} op{'s' if c.ops != 1 else ''}" + (f" → {c.out}" if c.out else "")


def _top(graph: VizGraph, cluster: int | None) -> int | None:
    """The outermost cluster holding ``cluster`` (None: the function's own level)."""
    while cluster is not None and graph.clusters[cluster].parent is not None:
        cluster = graph.clusters[cluster].parent
    return cluster


def _header(name: str, title: str) -> list[str]:
    return [f"digraph {_quote(name)} {{",
            f"  graph [rankdir=TB, fontname=Helvetica, fontsize=11, labelloc=t, "
            f"label={_quote(title)}];",
            '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10, '
            'color="#555555"];',
            '  edge [color="#777777", arrowsize=0.6, fontname=Helvetica, fontsize=8];']


def _edge_lines(edges: Sequence[tuple[str, str, str]]) -> list[str]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for src, dst, label in edges:
        if src == dst or (src, dst, label) in seen:
            continue
        seen.add((src, dst, label))
        extra = f" [label={_quote(label)}]" if label else ""
        out.append(f"  {_quote(src)} -> {_quote(dst)}{extra};")
    return out


def _cluster_body(graph: VizGraph, roots: Sequence[int | None], links: bool) -> list[str]:
    """The nodes of ``roots`` (None: the top level), with their clusters open, nested.

    Nesting is written with an explicit stack: a cluster's members, then its
    own clusters, then its closing brace.
    """
    members: dict[int | None, list[Any]] = {}
    for node in graph.nodes.values():
        members.setdefault(node.cluster, []).append(node)
    inner: dict[int | None, list[int]] = {}
    for c in graph.clusters.values():
        inner.setdefault(c.parent, []).append(c.id)
    lines: list[str] = []
    stack: list[tuple[str, Any]] = [("open", r) for r in reversed(roots)]
    while stack:
        what, cid = stack.pop()
        if what == "close":
            lines.append("  }")
            continue
        if cid is not None:
            c = graph.clusters[cid]
            url = f", URL={_quote('#cluster-' + str(cid))}" if links else ""
            lines.append(f"  subgraph {_quote('cluster_' + str(cid))} {{")
            lines.append(f'  graph [label={_quote(_cluster_label(c))}, style="rounded,filled", '
                         f'fillcolor="{_FILL[c.kind]}", color="{_BORDER[c.kind]}", '
                         f"id={_quote('cluster-' + str(cid))}{url}];")
            stack.append(("close", cid))
        for node in members.get(cid, []):
            lines.append(f"  {_quote(node.id)} [label={_quote(_node_label(node))}, "
                         f"{_node_style(node.kind)}];")
        stack.extend(("open", k) for k in reversed(inner.get(cid, [])))
    return lines


def to_dot(graph: VizGraph, title: str = "", collapse: bool = False, links: bool = False) -> str:
    """The graph in Graphviz's DOT language; ``collapse`` draws each outer cluster as one node,
    ``links`` gives each cluster a link to ``#cluster-N`` (the HTML page's anchors)."""
    lines = _header(graph.name, title or graph.name)
    if not collapse:
        lines += _cluster_body(graph, [None], links)
        lines += _edge_lines(graph.edges)
    else:
        for node in graph.nodes.values():
            if node.cluster is None:
                lines.append(f"  {_quote(node.id)} [label={_quote(_node_label(node))}, "
                             f"{_node_style(node.kind)}];")
        for c in graph.clusters.values():
            if c.parent is None:
                url = f", URL={_quote('#cluster-' + str(c.id))}" if links else ""
                lines.append(f"  {_quote('cluster_' + str(c.id))} [label="
                             f"{_quote(_cluster_label(c))}, fillcolor=\"{_FILL[c.kind]}\", "
                             f'color="{_BORDER[c.kind]}", penwidth=1.5, '
                             f"id={_quote('node-cluster-' + str(c.id))}{url}];")

        def end(node_id: str) -> str:
            top = _top(graph, graph.nodes[node_id].cluster)
            return node_id if top is None else f"cluster_{top}"

        lines += _edge_lines([(end(s), end(d), label) for s, d, label in graph.edges])
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster_dot(graph: VizGraph, cid: int) -> str:
    """One outer cluster on its own, opened, with the nodes feeding it and fed by it as stubs."""
    inside = {n.id for n in graph.nodes.values() if _top(graph, n.cluster) == cid}
    c = graph.clusters[cid]
    lines = _header(f"cluster_{cid}", c.name)
    lines += _cluster_body(graph, [cid], links=False)
    stubs: dict[str, str] = {}
    edges = []

    def outside(node_id: str) -> str:
        top = _top(graph, graph.nodes[node_id].cluster)
        return graph.nodes[node_id].label if top is None else graph.clusters[top].name

    for src, dst, label in graph.edges:
        if src in inside and dst in inside:
            edges.append((src, dst, label))
        elif dst in inside:
            stubs.setdefault(src, "from " + outside(src))
            edges.append((f"stub_{src}", dst, label))
        elif src in inside:
            stubs.setdefault(dst, "to " + outside(dst))
            edges.append((src, f"stub_{dst}", label))
    for node_id, label in stubs.items():
        lines.append(f"  {_quote('stub_' + node_id)} [label={_quote(label)}, style=dashed, "
                     'shape=box, color="#999999", fontcolor="#666666"];')
    lines += _edge_lines(edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- SVG and HTML --------------------------------------------------------------------------------
def require_graphviz() -> Any:
    """The graphviz package, when it and the ``dot`` program are there; else a VizError
    naming what to install (called before any work, so a missing dot costs nothing)."""
    try:
        import graphviz
    except ImportError:
        raise VizError(f"SVG and HTML output need the graphviz Python package, which is not "
                       f"installed: {INSTALL_HINT}") from None
    if shutil.which("dot") is None:
        raise VizError(f"SVG and HTML output need Graphviz's dot program, which is not on the "
                       f"PATH: {INSTALL_HINT}")
    return graphviz


def render_svg(*dots: str) -> list[str]:
    """Each DOT text laid out by ``dot``, as an SVG document (one run of ``dot`` for all)."""
    graphviz = require_graphviz()
    try:
        # graphviz.pipe hands the input over at once (Source.pipe writes it line by line,
        # which deadlocks once dot's output of the first graphs fills the pipe).
        out = graphviz.pipe("dot", "svg", "".join(dots).encode("utf-8"), quiet=True)
        out = out.decode("utf-8")
    except graphviz.ExecutableNotFound:
        raise VizError(f"Graphviz's dot program could not be run: {INSTALL_HINT}") from None
    except graphviz.CalledProcessError as exc:
        raise VizError(f"Graphviz's dot failed: {(exc.stderr or b'').decode(errors='replace')}"
                       .strip()) from None
    docs = ["<?xml" + part for part in out.split("<?xml") if part.strip()]
    if len(docs) != len(dots):
        raise VizError(f"Graphviz's dot gave {len(docs)} drawings for {len(dots)} graphs")
    return docs


def _inline(svg: str) -> str:
    """An SVG document as an element of an HTML page (its XML prologue and doctype left out)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


_PAGE_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 2em; }
.graph { overflow: auto; border: 1px solid #ddd; padding: .5em; background: #fff; }
.graph svg { max-width: none; height: auto; }
details { margin: .3em 0; } summary { cursor: pointer; }
details[open] > summary { font-weight: bold; }
.kind { color: #666; font-size: .9em; }
button { margin-right: .5em; }
"""

_PAGE_SCRIPT = """
function openTarget() {
  var t = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (t && t.tagName === 'DETAILS') { t.open = true; t.scrollIntoView(); }
}
window.addEventListener('hashchange', openTarget);
openTarget();
function setAll(open) {
  document.querySelectorAll('details.cluster').forEach(function (d) { d.open = open; });
}
"""


def render_html(graph: VizGraph, title: str) -> str:
    """A self-contained page: the collapsed graph, each cluster openable, the whole graph open."""
    tops = [c for c in graph.clusters.values() if c.parent is None]
    dots = [to_dot(graph, title, collapse=True, links=True), to_dot(graph, title)]
    dots += [_cluster_dot(graph, c.id) for c in tops]
    overview, expanded, *parts = render_svg(*dots)
    kinds: dict[str, int] = {}
    for c in graph.clusters.values():
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    counted = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "none"
    sections = []
    for c, svg in zip(tops, parts):
        sections.append(
            f'<details class="cluster" id="cluster-{c.id}"><summary>{html.escape(c.name)} '
            f'<span class="kind">{c.kind}, {c.ops} op{"s" if c.ops != 1 else ""}'
            f'{" → " + html.escape(c.out) if c.out else ""}</span></summary>'
            f'<div class="graph">{_inline(svg)}</div></details>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{_PAGE_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>{graph.ops()} operators; clusters: {html.escape(counted)}. Each cluster is drawn as one
box: click it (or its name below) to open it.</p>
<div class="graph" id="overview">{_inline(overview)}</div>
<h2>Clusters</h2>
<p><button onclick="setAll(true)">open all</button><button onclick="setAll(false)">close
all</button></p>
{chr(10).join(sections) or "<p>none</p>"}
<h2>The whole graph</h2>
<details id="expanded"><summary>every cluster open ({len(graph.nodes)} nodes)</summary>
<div class="graph">{_inline(expanded)}</div></details>
<script>{_PAGE_SCRIPT}</script>
</body></html>
"""


# --- the model -----------------------------------------------------------------------------------
def load_model(path: str | None, zoo: str | None, seed: int = 0) -> Any:
    """The module of a model file (Relay text or ONNX) or of a model-zoo model (seeded weights)."""
    from . import model_zoo

    if zoo is not None:
        proto = model_zoo.randomize_weights(model_zoo.light_model(zoo).load(), seed=seed)
        return model_zoo.import_onnx(proto)
    assert path is not None
    if path.lower().endswith(".onnx"):
        return model_zoo.import_onnx(model_zoo.read_onnx(path))
    from ..ir.text.io import load

    return load(path)


def module_after(spec: Any, mod: Any, after: str | None) -> Any:
    """The module after ``spec`` ran on ``mod``, or after the first step running pass ``after``."""
    from ..transform.context import PassContext
    from .schedule import ScheduleTracker, resolve_schedule, runnable

    schedule = resolve_schedule(spec)
    steps = runnable(schedule)
    target = None
    if after is not None:
        target = next((s for s in steps if s.name == after), None)
        if target is None:
            names = ", ".join(dict.fromkeys(s.name for s in steps)) or "no pass"
            raise VizError(f"--after {after}: pipeline {spec.name!r} does not run {after!r}; "
                           f"it runs {names}")
    pipeline = spec.build()
    tracker = ScheduleTracker(schedule, keep_runs=target is not None)
    ctx = PassContext(opt_level=spec.opt_level, required_pass=spec.required_pass,
                      disabled_pass=spec.disabled_pass,
                      instruments=[*pipeline.instruments, tracker], config=dict(spec.config))
    with ctx:
        out = pipeline.sequential(mod)
    if target is None:
        return out
    return next(run.after for run in tracker.runs if run.step is target)


def typed_module(mod: Any) -> Any:
    """``mod`` with every node's type known, for the labels (as it is when it does not type)."""
    from ..transform import get_pass
    from .defaults import default_typer

    try:
        return get_pass(default_typer())(mod)
    except RelayPassError:
        return mod


# --- the command ---------------------------------------------------------------------------------
def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add the ``viz`` command to the CLI's subparsers."""
    p = subparsers.add_parser(
        "viz", parents=list(parents),
        help="draw a model's dataflow graph (DOT, SVG or HTML), fused groups as clusters",
        description="Draw the dataflow graph of a model's @main, as it is or after a "
                    "pipeline (or one of its passes): operators with their result types, fused "
                    "functions and partitioned regions as clusters. .dot needs nothing; .svg "
                    "and .html need the graphviz package and Graphviz's dot program. The HTML "
                    "page shows each cluster collapsed, and opens it on a click.")
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help="a Relay text file (.relay, .txt), or .onnx")
    p.add_argument("--model-zoo", metavar="NAME",
                   help="instead of MODEL, a model shipped with the onnx package (seeded weights)")
    p.add_argument("-p", "--pipeline", metavar="PIPELINE",
                   help="run this pipeline first: a file (PIPELINE.toml) or an inline pipeline "
                        "('InferType,FuseOps')")
    p.add_argument("--after", metavar="PASS",
                   help="draw the module after the first run of PASS in the pipeline, not "
                        "after the whole pipeline")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html|.svg|.dot",
                   help="where to write the drawing; its suffix says the format")
    p.add_argument("--format", choices=FORMATS,
                   help="the format, when OUT's suffix does not say it")
    p.add_argument("--collapse", action="store_true",
                   help="in .dot and .svg output too, draw each cluster as one node")
    p.add_argument("--function", default="main", metavar="NAME",
                   help="the global function to draw (default main)")
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    suffix = os.path.splitext(args.output)[1].lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise VizError(f"-o {args.output}: the suffix does not say the format (.dot, .svg or "
                   ".html); give --format")


def run(args: argparse.Namespace, err: TextIO | None = None) -> int:
    """The ``viz`` command: writes the drawing, says what it wrote on ``err`` (default stderr)."""
    from .batch import pipeline_argument
    from .viz_graph import build_graph

    err = err or sys.stderr
    if (args.model is None) == (args.model_zoo is None):
        raise VizError("viz needs a MODEL file or --model-zoo NAME (one of them)")
    if args.after is not None and args.pipeline is None:
        raise VizError("--after needs --pipeline: the pipeline whose pass it names")
    fmt = _format(args)
    if fmt != "dot":
        require_graphviz()  # before the work: a missing dot is one line, at once
    spec = pipeline_argument(args.pipeline, os.getcwd())[0] if args.pipeline else None
    mod = load_model(args.model, args.model_zoo)
    if spec is not None:
        mod = module_after(spec, mod, args.after)
    mod = typed_module(mod)
    if args.function not in mod:
        raise VizError(f"--function {args.function}: the module has no @{args.function}")
    graph = build_graph(mod, args.function)
    what = args.model_zoo or os.path.basename(args.model)
    when = (f" after {args.after} ({spec.name})" if args.after else f" after {spec.name}"
            if spec is not None else "")
    title = f"{what} @{args.function}{when}"
    if fmt == "dot":
        text = to_dot(graph, title, collapse=args.collapse)
    elif fmt == "svg":
        text = render_svg(to_dot(graph, title, collapse=args.collapse))[0]
    else:
        text = render_html(graph, title)
    try:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise VizError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    err.write(f"relaypass: viz: {title}: {graph.ops()} operators, {len(graph.clusters)} "
              f"clusters; wrote {args.output}\n")
    return 0
