"""``relaypass optimize in.onnx -o out.onnx``: an ONNX model in, an optimized ONNX model out.

What onnxsim, onnxoptimizer, onnxscript's optimizer and onnxruntime's offline
optimizer do, with Relay passes: the model is imported (``from_onnx``, the
weights as constants, dynamic axes fixed with ``--shape`` if asked), a
pipeline runs on it, and the result is exported (``to_onnx``) under the
model's own input and output names, with its dynamic dimensions' names.

The pipeline is ``-p``: a pipeline file (``PIPELINE.toml``) or an inline
pipeline (``'InferType,FoldConstant'``).  Without it the tool runs its own
default, :data:`DEFAULT_PIPELINE` (the passes of
``examples/pipelines/onnx.toml``: EliminateCommonSubexpr, FoldConstant,
SimplifyExpr and DeadCodeElimination after InferType, at opt_level 3; no
fusion), which ``--help`` lists.

``--check`` runs onnxruntime on both models with the same seeded inputs and
reports the largest difference of each output; the command exits 1 when one
is beyond ``--rtol``/``--atol``.  The inputs are seeded normal floats,
booleans, and integers below the size of the table they index when an
input feeds a ``Gather`` of an initializer (token ids), else 0 or 1.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RelayPassError
from ..transform.pipeline import pipeline_from_data, read_pipeline
from .arguments import tolerance

__all__ = ["DEFAULT_PIPELINE", "CheckResult", "OptimizeError", "OptimizeResult", "check_outputs",
           "optimize_model", "register", "run", "seeded_inputs"]

#: The default pipeline, as the tables of a pipeline file: examples/pipelines/onnx.toml's.
DEFAULT_PIPELINE: dict[str, Any] = {
    "name": "onnx",
    "opt_level": 3,
    "passes": ["InferType", "EliminateCommonSubexpr", "FoldConstant", "SimplifyExpr",
               "DeadCodeElimination"],
}
_DEFAULT_SOURCE = "<relaypass optimize's default pipeline>"

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5

EXIT_OK, EXIT_CHECK_FAILED = 0, 1


class OptimizeError(RelayPassError):
    """An argument of ``relaypass optimize`` is wrong (a shape, an opset, a missing extra)."""


@dataclass
class CheckResult:
    """onnxruntime's outputs of the original and the optimized model, compared."""

    #: (output name, largest absolute difference, largest relative difference, within tolerance)
    outputs: list[tuple[str, float, float, bool]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(ok for *_, ok in self.outputs)


@dataclass
class OptimizeResult:
    """What :func:`optimize_model` did."""

    nodes_before: int
    nodes_after: int
    opset: int
    seconds: float
    model: Any = None  # the exported onnx.ModelProto
    check: CheckResult | None = None


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise OptimizeError("relaypass optimize needs the onnx extra, which is not installed: "
                            "pip install 'relaypass[onnx]'") from None
    return onnx


def _dim_params(model: Any) -> dict[str, list[str | None]]:
    """The names of the symbolic dimensions of the graph's inputs and outputs."""
    out = {}
    for vi in [*model.graph.input, *model.graph.output]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            out[vi.name] = [d.dim_param or None for d in vi.type.tensor_type.shape.dim]
    return out


@functools.lru_cache(maxsize=8)
def _default_spec(out_dir: str) -> Any:
    """The default pipeline, validated once per folder: a frozen spec made from constant
    tables, where validating it again would cost tens of microseconds per model."""
    return pipeline_from_data(DEFAULT_PIPELINE, _DEFAULT_SOURCE, out_dir)


def _pipeline(pipeline: str | None, out_dir: str) -> Any:
    if pipeline is None:
        return _default_spec(out_dir).build()
    if pipeline.lower().endswith(".toml") or os.path.isfile(pipeline):
        return read_pipeline(pipeline, out_dir).build()
    from ..transform.inline_pipeline import parse_inline_pipeline

    return parse_inline_pipeline(pipeline, "-p", out_dir).build()


def optimize_model(model: Any, output: str | os.PathLike | None, *, pipeline: str | None = None,
                   shapes: Mapping[str, Sequence[int | None]] | None = None,
                   opset: int | None = None, onnx_functions: bool = False,
                   external_data: bool | None = None, out_dir: str | None = None) -> OptimizeResult:
    """Import ``model`` (a path or an ``onnx.ModelProto``), run ``pipeline`` (a file, an inline
    pipeline, or None for :data:`DEFAULT_PIPELINE`), export to ``output`` (not written if None).

    ``opset`` defaults to the model's, at least 17 (the exporter writes 17 to
    21).  The exported model keeps the input and output names and the names
    of the dynamic dimensions.
    """
    # Imported on use: the CLI loads this module at start-up for its arguments, and its
    # other commands should not pay for the IR, the importer and numpy.
    from ..frontend import from_onnx, to_onnx
    from .model_zoo import opset as model_opset
    from .model_zoo import read_onnx

    onnx = _onnx()
    if not isinstance(model, onnx.ModelProto):
        model = read_onnx(os.fspath(model))
    if opset is None:
        opset = min(max(model_opset(model), 17), 21)
    start = time.perf_counter()
    built = _pipeline(pipeline, out_dir or os.getcwd())
    mod, _ = from_onnx(model, shape=dict(shapes) if shapes else None)
    mod = built(mod)
    exported = to_onnx(mod, opset, output, output_names=[o.name for o in model.graph.output],
                       dim_params=_dim_params(model), onnx_functions=onnx_functions,
                       external_data=external_data)
    seconds = time.perf_counter() - start
    return OptimizeResult(len(model.graph.node), len(exported.graph.node), opset, seconds,
                          exported)


# --- checking with onnxruntime ----------------------------------------------------------------


def _gather_bounds(model: Any) -> dict[str, int]:
    """For graph inputs used as the indices of a Gather over an initializer: the table size."""
    sizes = {t.name: list(t.dims) for t in model.graph.initializer}
    bounds: dict[str, int] = {}
    for node in model.graph.node:
        if node.op_type != "Gather" or len(node.input) < 2 or node.input[0] not in sizes:
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        dims = sizes[node.input[0]]
        if dims:
            extent = int(dims[axis])
            bounds[node.input[1]] = min(bounds.get(node.input[1], extent), extent)
    return bounds


def seeded_inputs(model: Any, shapes: Mapping[str, Sequence[int | None]] | None = None,
                  seed: int = 0, dim: int = 2) -> dict[str, Any]:
    """Seeded values for every graph input of ``model`` (an onnx.ModelProto).

    Unknown extents take the ``shapes`` given, else ``dim``.  Floats are
    standard normal; booleans random; integers below the table they index
    (:func:`_gather_bounds`), else 0 or 1.
    """
    import numpy as np
    from onnx import helper

    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    bounds = _gather_bounds(model)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        given = list((shapes or {}).get(vi.name) or [])
        shape = []
        for k, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif k < len(given) and given[k] is not None and given[k] >= 0:
                shape.append(int(given[k]))
            else:
                shape.append(dim)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        if dtype.kind == "f":
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            feeds[vi.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            feeds[vi.name] = rng.integers(0, bounds.get(vi.name, 2), shape).astype(dtype)
    return feeds


def _session(model: Any) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    source = model if isinstance(model, str) else model.SerializeToString()
    return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def check_outputs(original: Any, optimized: Any, feeds: Mapping[str, Any], *,
                  rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> CheckResult:
    """Run onnxruntime on both models (ModelProtos or paths) and compare the outputs in order."""
    import numpy as np

    from .model_zoo import require_onnxruntime

    require_onnxruntime()
    ref_session, got_session = _session(original), _session(optimized)
    names = [o.name for o in ref_session.get_outputs()]
    ref = ref_session.run(None, dict(feeds))
    got = got_session.run(None, dict(feeds))
    result = CheckResult()
    for name, a, b in zip(names, ref, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            result.outputs.append((name, float("inf"), float("inf"), False))
            continue
        if a.dtype.kind in "fc":
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            rel = diff / np.maximum(np.abs(a.astype(np.float64)), max(atol, 1e-30))
        else:
            diff = (a != b).astype(np.float64)
            rel = diff
        largest = float(np.nanmax(diff)) if diff.size else 0.0
        relative = float(np.nanmax(rel)) if rel.size else 0.0
        ok = bool(np.allclose(b, a, rtol=rtol, atol=atol, equal_nan=True))
        result.outputs.append((name, largest, relative, ok))
    return result


# --- the command ------------------------------------------------------------------------------


def _shape_argument(text: str) -> tuple[str, tuple[int | None, ...]]:
    """``NAME=D1,D2,...``; ``?`` or -1 keeps an extent unknown."""
    name, sep, dims = text.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        shape = tuple(None if d.strip() in ("?", "-1") else int(d)
                      for d in dims.replace("x", ",").split(",") if d.strip())
        if any(d is not None and d < 0 for d in shape):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=D1,D2,... (e.g. input_ids=1,128; ? keeps an extent dynamic), not "
            f"{text!r}") from None
    return name, shape


def _opset_argument(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an opset number, not {text!r}") from None
    if not 17 <= value <= 21:
        raise argparse.ArgumentTypeError(f"the exporter writes opsets 17 to 21, not {value}")
    return value


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    """Add the ``optimize`` command to the CLI's subparsers."""
    passes = ", ".join(DEFAULT_PIPELINE["passes"])
    p = subparsers.add_parser(
        "optimize", parents=list(parents), help="optimize an ONNX model: import, run a "
        "pipeline, export ONNX",
        description="Import an ONNX model, run a pipeline on it and write the result as ONNX, "
                    "with the model's input and output names and dynamic dimensions. Exit 1 "
                    "when --check finds an output that changed beyond the tolerance.")
    p.add_argument("model", metavar="IN.onnx", help="the ONNX model to optimize")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx",
                   help="where to write the optimized model (with OUT.onnx.data for external "
                        "data)")
    p.add_argument("-p", "--pipeline", metavar="PIPELINE",
                   help="a pipeline file (PIPELINE.toml) or an inline pipeline "
                        "('InferType,FoldConstant'); default: "
                        f"{passes} at opt_level {DEFAULT_PIPELINE['opt_level']} "
                        "(examples/pipelines/onnx.toml)")
    p.add_argument("--shape", action="append", type=_shape_argument, metavar="NAME=D1,D2,...",
                   help="fix the shape of an input (repeatable; ? keeps an extent dynamic)")
    p.add_argument("--opset", type=_opset_argument, metavar="N",
                   help="the opset to write, 17 to 21 (default: the model's, at least 17)")
    p.add_argument("--onnx-functions", action="store_true",
                   help="write each fused primitive function as an ONNX local function "
                        "instead of inlining it")
    p.add_argument("--external-data", action="store_true",
                   help="store the weights in OUT.onnx.data (default: only when they exceed "
                        "protobuf's 2 GB limit)")
    p.add_argument("--check", action="store_true",
                   help="run onnxruntime on both models with seeded inputs and report the "
                        "largest difference; exit 1 if beyond the tolerance")
    p.add_argument("--rtol", type=tolerance, default=DEFAULT_RTOL,
                   help=f"relative tolerance of --check (default {DEFAULT_RTOL:g})")
    p.add_argument("--atol", type=tolerance, default=DEFAULT_ATOL,
                   help=f"absolute tolerance of --check (default {DEFAULT_ATOL:g})")
    p.add_argument("--seed", type=int, default=0, help="seed of --check's inputs (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: Any = None) -> int:
    """The ``optimize`` command: prints what it did on ``out`` (default stdout)."""
    out = out or sys.stdout
    shapes = dict(args.shape) if args.shape else None
    result = optimize_model(args.model, args.output, pipeline=args.pipeline, shapes=shapes,
                            opset=args.opset, onnx_functions=args.onnx_functions,
                            external_data=True if args.external_data else None)
    out.write(f"relaypass optimize: {args.model}: {result.nodes_before} nodes -> "
              f"{result.nodes_after} nodes (opset {result.opset}) in {result.seconds:.2f} s; "
              f"wrote {args.output}\n")
    if not args.check:
        return EXIT_OK
    from .model_zoo import read_onnx

    original = read_onnx(args.model)
    feeds = seeded_inputs(original, shapes, args.seed)
    check = check_outputs(original, os.fspath(args.output), feeds, rtol=args.rtol, atol=args.atol)
    for name, largest, relative, ok in check.outputs:
        verdict = "ok" if ok else f"DIFFERS beyond rtol {args.rtol:g}, atol {args.atol:g}"
        out.write(f"  check {name}: largest difference {largest:.3g} (relative "
                  f"{relative:.3g}): {verdict}\n")
    return EXIT_OK if check.ok else EXIT_CHECK_FAILED
