"""The ONNX importer: ``from_onnx(model) -> (mod, params)``, as Relay's.

Graph inputs that are not initializers become the parameters of ``@main``
(with their declared shapes, a dynamic axis as a size variable shared by
every input naming it, or the shapes the caller gives); initializers become constants, or, with
``freeze_params=False``, more parameters whose values come back in
``params``.  Nodes are converted in graph order (ONNX graphs are
topologically sorted) by the converters of :mod:`.onnx_ops`, chosen by the
model's opset.  Before any conversion the whole graph is scanned, so that a
model with unsupported operators fails once, listing all of them.

The onnx package is the optional extra ``relaypass[onnx]``; it is imported
when :func:`from_onnx` is first called, never when this module is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any as AnyT

import numpy as np

from ..errors import RelayPassError
from ..gc_pause import gc_paused
from ..ir.expr import Constant, Expr, Tuple, Var
from ..ir.expr import Function as RelayFunction
from ..ir.module import IRModule
from ..ir.types import Any, SizeVar, TensorType
from ..op.tuple_wrapper import TupleWrapper
from .errors import OnnxImportError, OnnxNotInstalledError, UnsupportedOperatorError
from .onnx_context import ConversionContext
from .onnx_ops import CONVERTERS, converter_for, onnx_dtype

__all__ = ["from_onnx", "supported_operators", "unsupported_operators"]

_DEFAULT_DOMAINS = ("", "ai.onnx")

# AttributeProto.AttributeType codes (stable across onnx versions).
_FLOAT, _INT, _STRING, _TENSOR, _GRAPH, _FLOATS, _INTS, _STRINGS = 1, 2, 3, 4, 5, 6, 7, 8


def from_onnx(
    model: AnyT,
    shape: Mapping[str, Sequence[AnyT]] | None = None,
    dtype: str | Mapping[str, str] = "float32",
    opset: int | None = None,
    freeze_params: bool = True,
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """Convert an ONNX model to a Relay module whose ``main`` computes the graph's outputs.

    ``model`` is an ``onnx.ModelProto``, a path to a ``.onnx`` file or its
    bytes.  A dynamic axis (a ``dim_param``, or no extent) imports as a
    :class:`~relaypass.ir.types.SizeVar`.  ``shape`` overrides input shapes
    by input name: an int fixes an axis (for every input sharing its
    ``dim_param``), a string names a size variable, ``None`` or -1 keeps the
    model's dynamic axis (``Any`` where the model has an extent); ``dtype`` is the dtype of inputs whose element
    type the model leaves undefined, or a mapping that overrides it per
    input.  ``opset`` overrides the model's opset.  With
    ``freeze_params=False`` the initializers become parameters of ``main``
    (after the graph inputs) and ``params`` maps their names to numpy arrays;
    otherwise they are constants and ``params`` is empty.

    Raises UnsupportedOperatorError listing every operator of the model the
    importer cannot convert, OnnxImportError for a model it cannot read, and
    OnnxNotInstalledError when the ``onnx`` extra is missing.
    """
    onnx = _import_onnx()
    proto = _as_model(model, onnx)
    opset = _resolve_opset(proto, opset)
    graph = proto.graph
    nodes = _read_nodes(graph)
    impls: dict[str, Callable] = {}
    unsupported = _unsupported(nodes, opset, impls)
    if unsupported:
        raise UnsupportedOperatorError(_unsupported_message(unsupported, opset), unsupported, opset)
    with gc_paused():  # many small objects, no cycles: see relaypass.gc_pause
        return _GraphImporter(onnx, shape or {}, dtype, freeze_params, opset).run(graph, nodes,
                                                                                  impls)


def unsupported_operators(model: AnyT, opset: int | None = None) -> dict[str, int]:
    """The operators of ``model`` the importer cannot convert, with how many nodes use each."""
    onnx = _import_onnx()
    proto = _as_model(model, onnx)
    return _unsupported(_read_nodes(proto.graph), _resolve_opset(proto, opset), {})


def supported_operators() -> dict[str, tuple[int, ...]]:
    """Every supported ONNX operator (default domain) with the opsets at which its converter
    changes; the first is the oldest opset supported."""
    return {name: CONVERTERS[name].versions for name in sorted(CONVERTERS)}


# --- reading the model ----------------------------------------------------------------------------


def _import_onnx():
    try:
        import onnx
        from onnx import numpy_helper  # noqa: F401
    except ImportError as exc:
        raise OnnxNotInstalledError(str(exc)) from None
    return onnx


def _as_model(model: AnyT, onnx) -> AnyT:
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            return onnx.load(path)
        except OSError as exc:
            raise OnnxImportError(f"cannot read the ONNX model {path!r}: "
                                  f"{exc.strerror or exc}") from None
        except Exception as exc:  # protobuf's DecodeError and friends
            raise OnnxImportError(f"{path!r} is not an ONNX model: {exc}") from None
    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as exc:
            raise OnnxImportError(f"the bytes given are not an ONNX model: {exc}") from None
    raise TypeError(f"from_onnx expects an onnx.ModelProto, a path or bytes, got "
                    f"{type(model).__name__}")


def _resolve_opset(model: AnyT, opset: int | None) -> int:
    if opset is not None:
        return int(opset)
    for entry in model.opset_import:
        if entry.domain in _DEFAULT_DOMAINS:
            return int(entry.version)
    return 1


_Node = tuple  # (op_type, domain, name, input names, output names, AttributeProtos)


def _read_nodes(graph: AnyT) -> list[_Node]:
    """What the importer reads of each NodeProto, read once: protobuf builds new Python objects
    at every read of a field, and the importer reads the names two or three times."""
    return [(n.op_type, n.domain, n.name, n.input[:], n.output[:], n.attribute)  # [:]: lists
            for n in graph.node]


def _unsupported(nodes: Sequence[_Node], opset: int, impls: dict[str, Callable]
                 ) -> dict[str, int]:
    """How many nodes use each operator the importer cannot convert; ``impls`` gets the
    converter of each operator it can (of the default domain), by name."""
    counts: dict[str, int] = {}
    known: dict[tuple[str, str], bool] = {}
    for op_type, domain, *_ in nodes:
        key = (domain, op_type)
        ok = known.get(key)
        if ok is None:
            ok = False
            if domain in _DEFAULT_DOMAINS:
                impl = converter_for(op_type, opset)
                if impl is not None:
                    ok = True
                    impls[op_type] = impl
            known[key] = ok
        if not ok:
            label = op_type if domain in _DEFAULT_DOMAINS else f"{domain}.{op_type}"
            counts[label] = counts.get(label, 0) + 1
    return counts


def _unsupported_message(counts: Mapping[str, int], opset: int) -> str:
    parts = []
    for label, count in sorted(counts.items()):
        cls = CONVERTERS.get(label)
        since = f", supported from opset {cls.versions[0]}" if cls is not None else ""
        parts.append(f"{label} ({count} node{'s' if count != 1 else ''}{since})")
    what = "operator" if len(counts) == 1 else "operators"
    return (f"the ONNX model (opset {opset}) uses {len(counts)} {what} that relaypass cannot "
            f"import: {', '.join(parts)}; relaypass help onnx lists the supported operators")


def _identifier(text: str) -> str:
    """A size variable's name from a ``dim_param`` (which may be any string: ``batch_size``,
    ``Addoutput_dim_0``, ``sequence + 1``): letters, digits and underscores, not starting with
    a digit, so that the text format can print it."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in text.strip()) or "n"
    return name if not name[0].isdigit() else f"n{name}"


def _attributes(attributes: AnyT, to_array) -> dict[str, AnyT]:
    out: dict[str, AnyT] = {}
    for a in attributes:
        t = a.type
        if t == 0:  # very old models leave the type out; read the field that is set
            t = (_INTS if a.ints else _FLOATS if a.floats else _STRINGS if a.strings
                 else _TENSOR if a.HasField("t") else _STRING if a.HasField("s")
                 else _FLOAT if a.HasField("f") else _INT)
        if t == _INT:
            out[a.name] = int(a.i)
        elif t == _FLOAT:
            out[a.name] = float(a.f)
        elif t == _INTS:
            out[a.name] = [int(v) for v in a.ints]
        elif t == _FLOATS:
            out[a.name] = [float(v) for v in a.floats]
        elif t == _STRING:
            out[a.name] = a.s.decode("utf-8", "replace")
        elif t == _STRINGS:
            out[a.name] = [s.decode("utf-8", "replace") for s in a.strings]
        elif t == _TENSOR:
            out[a.name] = to_array(a.t)
        else:  # graphs, sparse tensors, type protos: only unsupported operators use them
            out[a.name] = a
    return out


def _array_reader(onnx):
    """A TensorProto's value as numpy reads it, for the importer's hot path.

    ``onnx.numpy_helper.to_array`` looks up the dtype tables and checks for
    external data, segments and packed formats on every call: several
    microseconds per initializer.  Exported weights are nearly always raw
    little-endian bytes of a plain dtype, which is one ``frombuffer``; every
    other tensor is left to onnx.
    """
    to_array = onnx.numpy_helper.to_array
    if sys.byteorder != "little":
        return to_array
    tp = onnx.TensorProto
    plain = {code: np.dtype(name) for code, name in (
        (tp.FLOAT, "float32"), (tp.DOUBLE, "float64"), (tp.FLOAT16, "float16"),
        (tp.INT8, "int8"), (tp.INT16, "int16"), (tp.INT32, "int32"), (tp.INT64, "int64"),
        (tp.UINT8, "uint8"), (tp.UINT16, "uint16"), (tp.UINT32, "uint32"),
        (tp.UINT64, "uint64"), (tp.BOOL, "bool"))}
    external = tp.EXTERNAL

    def read(tensor: AnyT) -> np.ndarray:
        dtype = plain.get(tensor.data_type)
        if (dtype is None or not tensor.HasField("raw_data") or tensor.data_location == external
                or tensor.HasField("segment")):
            return to_array(tensor)
        array = np.frombuffer(tensor.raw_data, dtype=dtype)
        dims = tensor.dims
        rank = len(dims)
        if rank == 1 and array.size == dims[0]:  # already the shape: reshape would read dims
            return array
        return array.reshape(() if rank == 0 else dims)

    return read


# --- the conversion -------------------------------------------------------------------------------


class _GraphImporter:
    """Converts one graph; the value table maps ONNX value names to Relay expressions."""

    def __init__(self, onnx, shape: Mapping[str, Sequence[AnyT]], dtype: str | Mapping[str, str],
                 freeze_params: bool, opset: int) -> None:
        self._to_array = _array_reader(onnx)
        self._shape = dict(shape)
        self._dtype = dtype
        self._freeze = freeze_params
        self._size_vars: dict[str, SizeVar] = {}
        self._dim_values: dict[str, int] = {}
        self._ctx = ConversionContext(opset)

    def run(self, graph: AnyT, nodes: Sequence[_Node], impls: Mapping[str, Callable]
            ) -> tuple[IRModule, dict[str, np.ndarray]]:
        table: dict[str, Expr] = {}
        init_names = {t.name for t in graph.initializer}
        inputs = self._inputs(graph, init_names, table)
        consumed = {name for node in nodes for name in node[3]}
        consumed.update(o.name for o in graph.output)
        params, param_vars = self._initializers(graph, table, consumed)
        self._convert_nodes(nodes, impls, table, consumed)
        outputs = []
        for o in graph.output:
            expr = table.get(o.name)
            if expr is None:
                raise OnnxImportError(f"graph output {o.name!r} is not computed by any node")
            outputs.append(expr)
        if not outputs:
            raise OnnxImportError("the graph has no outputs")
        body = outputs[0] if len(outputs) == 1 else Tuple(outputs)
        func = RelayFunction([*inputs, *param_vars], body)
        return IRModule.from_expr(func), params

    def _inputs(self, graph: AnyT, init_names: set[str], table: dict[str, Expr]) -> list[Var]:
        names = [vi.name for vi in graph.input if vi.name not in init_names]
        unknown = sorted(set(self._shape) - set(names))
        if unknown:
            raise OnnxImportError(
                f"shape= names {', '.join(map(repr, unknown))}, which "
                f"{'is not a graph input' if len(unknown) == 1 else 'are not graph inputs'}; "
                f"the inputs are {', '.join(map(repr, names)) or 'none'}")
        self._bind_dim_params(graph, init_names)
        out = []
        for vi in graph.input:
            if vi.name in init_names:
                continue
            var = Var(vi.name, self._input_type(vi))
            table[vi.name] = var
            out.append(var)
        return out

    def _input_type(self, vi: AnyT) -> TensorType:
        name = vi.name
        if not vi.type.HasField("tensor_type"):
            raise OnnxImportError(f"graph input {name!r} is not a tensor "
                                  f"({vi.type.WhichOneof('value')}); only tensors are supported")
        tt = vi.type.tensor_type
        if isinstance(self._dtype, Mapping) and name in self._dtype:
            dtype = str(self._dtype[name])
        elif tt.elem_type:
            try:
                dtype = onnx_dtype(tt.elem_type)
            except ValueError as exc:
                raise OnnxImportError(f"graph input {name!r}: {exc}") from None
        else:
            dtype = self._dtype if isinstance(self._dtype, str) else "float32"
        declared = ([self._declared_dim(name, i, d) for i, d in enumerate(tt.shape.dim)]
                    if tt.HasField("shape") else None)
        if name in self._shape:
            dims = [self._given_dim(name, i, d, declared) for i, d in enumerate(self._shape[name])]
        elif declared is not None:
            dims = declared
        else:
            raise OnnxImportError(f"graph input {name!r} has no shape (not even a rank); give it "
                                  f"with from_onnx(shape={{{name!r}: (...)}})")
        return TensorType(dims, dtype)

    def _bind_dim_params(self, graph: AnyT, init_names: set[str]) -> None:
        """Extents given with ``shape=`` for an axis the model names (``batch``) fix that name
        for every input: ``shape={"input_ids": (1, 128)}`` fixes the attention mask too."""
        where: dict[str, str] = {}
        for vi in graph.input:
            given = self._shape.get(vi.name)
            if vi.name in init_names or given is None or not vi.type.HasField("tensor_type"):
                continue
            for axis, (dim, value) in enumerate(zip(vi.type.tensor_type.shape.dim, given)):
                if not dim.dim_param or not isinstance(value, (int, np.integer)) or value < 0:
                    continue
                bound = self._dim_values.setdefault(dim.dim_param, int(value))
                if bound != value:
                    raise OnnxImportError(
                        f"shape= gives the axis {dim.dim_param!r} two extents: {bound} "
                        f"({where[dim.dim_param]}) and {value} (input {vi.name!r}, axis {axis})")
                where.setdefault(dim.dim_param, f"input {vi.name!r}, axis {axis}")

    def _declared_dim(self, name: str, axis: int, dim: AnyT) -> AnyT:
        """A dimension of a graph input as the model declares it: its extent, or a size variable
        (one per ``dim_param`` name, shared by every input that names it; a fresh one for an
        axis the model leaves unnamed)."""
        if dim.HasField("dim_value") and dim.dim_value >= 0:
            return dim.dim_value
        if dim.dim_param:
            bound = self._dim_values.get(dim.dim_param)
            return bound if bound is not None else self._size_var(dim.dim_param)
        return SizeVar(_identifier(f"{name}_{axis}"))

    def _given_dim(self, name: str, axis: int, dim: AnyT, declared: list | None) -> AnyT:
        """A dimension from ``shape=``: an int fixes the axis, a string names a size variable,
        None or -1 keeps the model's symbolic axis (``Any`` where the model has none)."""
        if isinstance(dim, str):
            return self._size_var(dim)
        if dim is None or (isinstance(dim, int) and dim < 0):
            kept = declared[axis] if declared is not None and axis < len(declared) else None
            return kept if isinstance(kept, SizeVar) else Any()
        return dim

    def _size_var(self, dim_param: str) -> SizeVar:
        var = self._size_vars.get(dim_param)
        if var is None:
            var = self._size_vars[dim_param] = SizeVar(_identifier(dim_param))
        return var

    def _initializers(self, graph: AnyT, table: dict[str, Expr], used: set[str]
                      ) -> tuple[dict[str, np.ndarray], list[Var]]:
        """Constants of the initializers (parameters of those in ``used``, with
        ``freeze_params=False``)."""
        params: dict[str, np.ndarray] = {}
        param_vars: list[Var] = []
        for tensor in graph.initializer:
            try:
                array = self._to_array(tensor)
            except Exception as exc:
                raise OnnxImportError(f"initializer {tensor.name!r} cannot be read: {exc}") from None
            if self._freeze:
                table[tensor.name] = Constant(array)
            elif tensor.name in used:
                var = Var(tensor.name, TensorType(array.shape, str(array.dtype)))
                table[tensor.name] = var
                param_vars.append(var)
                params[tensor.name] = array
        return params, param_vars

    def _convert_nodes(self, nodes: Sequence[_Node], impls: Mapping[str, Callable],
                       table: dict[str, Expr], consumed: set[str]) -> None:
        ctx = self._ctx
        to_array = self._to_array
        for index, node in enumerate(nodes):
            op_type, _domain, node_name, in_names, out_names, attributes = node
            impl = impls[op_type]
            ctx.begin_node(index, node_name, op_type,
                           tuple([bool(n) and n in consumed for n in out_names]))
            inputs: list[Expr | None] = []
            for name in in_names:
                if not name:
                    inputs.append(None)
                    continue
                expr = table.get(name)
                if expr is None:
                    raise ctx.error(f"reads {name!r}, which no graph input, initializer or "
                                    f"earlier node defines")
                inputs.append(expr)
            while inputs and inputs[-1] is None:
                inputs.pop()
            try:
                result = impl(inputs, _attributes(attributes, to_array) if attributes else {}, ctx)
            except OnnxImportError:
                raise
            except RelayPassError as exc:
                raise ctx.error(str(exc)) from exc
            if isinstance(result, (TupleWrapper, list, tuple)):
                results = list(result)
            else:
                results = [result]
            results = ctx.finish_node(inputs, results)
            for i, name in enumerate(out_names):
                if not name:
                    continue
                if i < len(results) and results[i] is not None:
                    table[name] = results[i]
                elif name in consumed:
                    raise ctx.unsupported(f"output {i} ({name!r}) of {op_type} is not supported")
