"""The ONNX graph an export is building: values, nodes, initializers, unique names.

The operator mappings of :mod:`.onnx_export_ops` see tensors as
:class:`Value` objects and add nodes through a :class:`GraphBuilder`.  A
value made from a Relay constant (or by a mapping, such as a transposed
weight) carries its numpy array and gets a name only when a node reads it,
so a weight a mapping rewrites at export time is written once, rewritten,
and the original is never stored.  In the main graph a named constant
becomes an initializer (small ones are shared by content, so the many
``[1]``-shaped int64 axes a model needs are stored once); inside an ONNX
local function it becomes a ``Constant`` node, since functions have no
initializers.

The builder also knows, for the values that stand for Relay expressions,
their static shape: the clean-ups of :mod:`.onnx_export` read it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any as AnyT

import numpy as np

from .onnx_ops import onnx_dtype

__all__ = ["GraphBuilder", "Node", "Unsupported", "Value", "array_code", "onnx_code",
           "write_model"]

_SHARED_CONSTANT_BYTES = 1024
"""Constants up to this size are stored once per distinct content."""


class Unsupported(Exception):  # noqa: N818 -- a signal inside the exporter, never seen outside
    """Raised by an operator mapping for a form of its operator ONNX cannot express."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Value:
    """A tensor of the ONNX graph: a name, or a numpy array not yet stored (or both)."""

    __slots__ = ("name", "array")

    def __init__(self, name: str | None = None, array: np.ndarray | None = None) -> None:
        self.name = name
        self.array = array

    def __repr__(self) -> str:
        if self.array is not None:
            return f"Value(constant {self.array.dtype}{list(self.array.shape)})"
        return f"Value({self.name!r})"


def _codes() -> dict[str, int]:
    codes = {}
    for code in range(1, 32):
        try:
            codes[onnx_dtype(code)] = code
        except ValueError:
            continue
    return codes


class Node:
    """A node of the graph being built: plain lists and a dict, which the clean-ups rewrite
    far faster than NodeProtos; :meth:`GraphBuilder.write_nodes` makes the protos at the end."""

    __slots__ = ("op_type", "inputs", "outputs", "attrs", "domain")

    def __init__(self, op_type: str, inputs: list[str], outputs: list[str],
                 attrs: dict[str, AnyT], domain: str = "") -> None:
        self.op_type = op_type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.domain = domain

    def __repr__(self) -> str:
        return f"Node({self.op_type}, {self.inputs} -> {self.outputs})"


_CODES = _codes()
"""Relay dtype -> ONNX ``TensorProto.DataType`` code: the importer's table, read backwards."""


def onnx_code(dtype: str) -> int | None:
    """The ONNX element type code of a Relay dtype, or None when relaypass maps it to none."""
    return _CODES.get(dtype)


_ARRAY_CODES: dict[np.dtype, int | None] = {}


def array_code(array: np.ndarray) -> int | None:
    """The ONNX element type code of a numpy array (by dtype object: numpy's names are slow)."""
    dt = array.dtype
    code = _ARRAY_CODES.get(dt, -1)
    if code == -1:
        code = _ARRAY_CODES[dt] = onnx_code(dt.name)
    return code


_INITIALIZER = 5
"""The field number of ``GraphProto.initializer``."""
_RAW_DATA = 9
"""The field number of ``TensorProto.raw_data``."""
_GRAPH = 7
"""The field number of ``ModelProto.graph``."""
_FLOAT, _INT, _STRING, _INTS = 1, 2, 3, 7
"""The ``AttributeProto.AttributeType`` codes of the attributes made without the helper."""


def _varint(n: int) -> bytes:
    """``n`` (not negative) as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int) -> bytes:
    """The key of a length-delimited protobuf field."""
    return _varint(field << 3 | 2)


def _little_endian(array: np.ndarray) -> np.ndarray:
    """``array``'s data contiguous and little-endian, as ONNX's ``raw_data`` holds it (no copy
    when it is so already; a 0-d array comes back 1-D)."""
    return np.ascontiguousarray(array, array.dtype.newbyteorder("<"))


_LITTLE_ENDIAN_HOST = sys.byteorder == "little"


def _raw_bytes(array: np.ndarray) -> bytes:
    """``array``'s data as ONNX's ``raw_data`` holds it: in C order, little-endian."""
    if _LITTLE_ENDIAN_HOST and array.dtype.byteorder != ">":
        return array.tobytes()
    return _little_endian(array).tobytes()


class GraphBuilder:
    """Nodes, initializers and names of one ONNX graph (the model's, or a local function's).

    ``reserved`` are names the graph already uses (its inputs); ``function``
    makes constants ``Constant`` nodes instead of initializers.
    """

    def __init__(self, onnx: AnyT, opset: int, reserved: Sequence[str] = (),
                 function: bool = False) -> None:
        self._helper = onnx.helper
        self._from_array = onnx.numpy_helper.from_array
        self._tensor_proto = onnx.TensorProto
        self.opset = opset
        self.function = function
        self.nodes: list[Node] = []
        self.initializers: list[str] = []
        self.shapes: dict[str, tuple] = {}
        self.arrays: dict[str, np.ndarray] = {}
        self._reserved: frozenset[str] = frozenset(reserved)
        self._counters: dict[str, int] = {}
        self._shared: dict[tuple, str] = {}

    # --- names ------------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A name no value of this graph has: ``hint`` followed by a counter.

        Only the reserved names are checked: two names made here never clash, since each
        hint counts on its own and a name splits back into its hint and count at its last
        underscore."""
        n = self._counters.get(hint, 0)
        name = f"{hint}_{n}"
        reserved = self._reserved
        while name in reserved:
            n += 1
            name = f"{hint}_{n}"
        self._counters[hint] = n + 1
        return name

    # --- values -----------------------------------------------------------------------------
    @staticmethod
    def const(array: AnyT, dtype: AnyT = None) -> Value:
        """A constant value (stored when a node reads it)."""
        return Value(None, np.asarray(array, dtype=dtype))

    @staticmethod
    def ints(values: Sequence[int]) -> Value:
        """A 1-D int64 constant: the form ONNX wants for shapes, axes and bounds."""
        return Value(None, np.array(list(map(int, values)), dtype=np.int64))

    def name(self, value: Value | None) -> str:
        """The name of ``value`` in the graph, storing it first if it is a constant ("" for an
        omitted optional input)."""
        if value is None:
            return ""
        if value.name is None:
            value.name = self._store(value.array)
        return value.name

    def _store(self, array: np.ndarray) -> str:
        key = None
        if array.nbytes <= _SHARED_CONSTANT_BYTES:
            key = (array.dtype.str, array.shape, array.tobytes())
            shared = self._shared.get(key)
            if shared is not None:
                return shared
        name = self.fresh("const")
        if self.function:
            tensor = self._from_array(np.ascontiguousarray(array), name)
            self.nodes.append(Node("Constant", [], [name], {"value": tensor}))
        else:
            self.initializers.append(name)
            self.arrays[name] = array
        if key is not None:
            self._shared[key] = name
        return name

    def add_initializer(self, name: str, array: np.ndarray) -> None:
        """An initializer with a given name (a parameter whose value the caller gave: a
        reserved name)."""
        self.initializers.append(name)
        self.arrays[name] = array

    def initializer_bytes(self) -> int:
        """The size in bytes of the initializers' data."""
        return sum(self.arrays[name].nbytes for name in self.initializers)

    def write_initializers(self, graph: AnyT) -> None:
        """Store the initializers in ``graph`` (a GraphProto), each array copied once and each
        TensorProto made in its place with one call."""
        add = graph.initializer.add
        arrays = self.arrays
        for name in self.initializers:
            array = arrays[name]
            add(name=name, data_type=array_code(array), dims=array.shape,
                raw_data=_raw_bytes(array))

    def encoded_initializers(self) -> list[tuple[bytes, memoryview]]:
        """The initializers as ``GraphProto.initializer`` fields in protobuf's wire format, each
        a prefix (field key, length, the TensorProto's name, type and dims, the key and length
        of ``raw_data``) and the array's own memory after it.

        Writing a model this way (:func:`.onnx_export._save`) puts each weight in the file
        straight from its array, where ``SerializeToString`` would first copy every weight of
        the model into one more buffer as large as the file.
        """
        out = []
        for name in self.initializers:
            array = self.arrays[name]
            head = self._tensor_proto(name=name, data_type=array_code(array),
                                      dims=array.shape).SerializeToString()
            data = memoryview(_little_endian(array).reshape(-1).view(np.uint8))
            raw = _key(_RAW_DATA) + _varint(data.nbytes)
            length = len(head) + len(raw) + data.nbytes
            out.append((_key(_INITIALIZER) + _varint(length) + head + raw, data))
        return out

    # --- nodes ------------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[Value | None], outputs: int = 1,
             domain: str = "", **attrs: AnyT) -> AnyT:
        """Add a node; its output Value (a list of them when ``outputs`` is not 1).

        An attribute given as None is left out.  Written for speed: a model's export calls
        it for nearly every node, so the common cases (one output, inputs already named, no
        None attribute) take no detour."""
        hint = op_type.lower()
        if outputs == 1:  # fresh(hint), written out: a call costs as much as the rest
            n = self._counters.get(hint, 0)
            name = f"{hint}_{n}"
            if name in self._reserved:
                name = self.fresh(hint)
            else:
                self._counters[hint] = n + 1
            names = [name]
        else:
            names = [self.fresh(hint) for _ in range(outputs)]
        for v in attrs.values():
            if v is None:
                attrs = {k: v for k, v in attrs.items() if v is not None}
                break
        in_names = []
        for v in inputs:
            if v is None:
                in_names.append("")
            elif v.name is None:
                in_names.append(self.name(v))
            else:
                in_names.append(v.name)
        self.nodes.append(Node(op_type, in_names, names, attrs, domain))
        if outputs == 1:
            return Value(names[0])
        return [Value(n) for n in names]

    @staticmethod
    def make_node(op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                  **attrs: AnyT) -> Node:
        """A node between named values (for rewriting nodes already made)."""
        return Node(op_type, list(inputs), list(outputs), attrs)

    def write_nodes(self, container: AnyT) -> None:
        """Add the nodes as NodeProtos, in order, to ``container`` (a GraphProto's or a
        FunctionProto's ``node`` field).

        Each proto is made in its place with one call (``container.add``), its attributes
        given as dicts: a NodeProto made apart and then extended into the graph would be
        copied, and so would each AttributeProto extended into the node."""
        add = container.add
        attribute = self._attribute
        for n in self.nodes:
            attrs = n.attrs
            if not attrs:
                add(op_type=n.op_type, input=n.inputs, output=n.outputs, domain=n.domain)
                continue
            if len(attrs) == 1:
                ((k, v),) = attrs.items()
                listed = [attribute(k, v)]
            else:
                listed = [attribute(k, v) for k, v in sorted(attrs.items())]
            add(op_type=n.op_type, input=n.inputs, output=n.outputs, domain=n.domain,
                attribute=listed)

    def _attribute(self, name: str, value: AnyT) -> AnyT:
        """An AttributeProto as ``onnx.helper.make_attribute`` makes it: the common forms (an
        int, a float, a string, a list of ints) as the dict of its fields, which the node's
        constructor reads without a copy; the others made by the helper, which finds the type
        of a value through ``numbers`` and ``isinstance`` at some cost per attribute."""
        t = type(value)
        if t is int or t is bool:
            return {"name": name, "type": _INT, "i": int(value)}
        if t is float:
            return {"name": name, "type": _FLOAT, "f": value}
        if t is str:
            return {"name": name, "type": _STRING, "s": value.encode("utf-8")}
        if (t is list or t is tuple) and value and all(type(v) is int for v in value):
            return {"name": name, "type": _INTS, "ints": value}
        return self._helper.make_attribute(name, value)

    def tensor_attr(self, array: np.ndarray) -> AnyT:
        """A TensorProto for an attribute (ConstantOfShape's value)."""
        return self._from_array(np.ascontiguousarray(array))


def write_model(file: AnyT, model: AnyT, builder: GraphBuilder) -> None:
    """Write ``model`` (a ModelProto whose graph has no initializers yet) to ``file`` in
    protobuf's wire format with ``builder``'s initializers in its graph: the bytes
    ``onnx.load`` reads as that model, each weight written from its array without a copy.

    The graph field goes last, after the model's other fields (protobuf reads fields in any
    order), so that its length can be written before the weights.
    """
    graph = model.graph.SerializeToString()
    fields = builder.encoded_initializers()
    shell = type(model)()
    shell.CopyFrom(model)
    shell.ClearField("graph")
    length = len(graph) + sum(len(head) + data.nbytes for head, data in fields)
    file.write(shell.SerializeToString())
    file.write(_key(_GRAPH) + _varint(length))
    file.write(graph)
    for head, data in fields:
        file.write(head)
        file.write(data)
