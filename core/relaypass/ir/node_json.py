"""``save_json`` / ``load_json``: any IR object as JSON text, and back.

The layout follows TVM's: a table of objects in which each object appears
once (so shared nodes stay shared and a variable stays one variable), the
index of the root, tensors as base64 ``.npy`` bytes (``b64ndarrays``), and
the format version in ``attrs``.  Every node kind is written field by field
from its declaration (:mod:`relaypass.ir.fields`), named by its TVM type key
(:mod:`relaypass.ir.object_api`); operators by name.  Loading never runs
code: it constructs only registered classes, and reads arrays with
``allow_pickle=False``.  ``checked_type`` is not saved.

Both directions run on explicit stacks: a chain of 100,000 calls needs no
recursion.  (TVM's own JSON files name TVM's internal fields -- ``vid``,
``virtual_device_`` -- and cannot be read here.)
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._ffi.registry import object_type
from . import hooks
from .attrs import Attrs
from .container import Map
from .expr import Constant
from .module import IRModule
from .ndarray import NDArray
from .node import Node, SourceName
from .object_api import type_key
from .op import Op
from .types import IntImm, TypeKind

__all__ = ["JSONFormatError", "load_json", "save_json"]

FORMAT = "relaypass-json-1"


class JSONFormatError(ValueError):
    """Text given to ``load_json`` is not a document ``save_json`` writes."""


# --------------------------------------------------------------------------- saving


def _objects_in(value: Any, out: list[Any]) -> None:
    """The objects (table entries) a field value refers to, in order; tuples are looked into."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is tuple or isinstance(v, tuple):
            stack.extend(reversed(v))
        elif isinstance(v, (Node, Map, IRModule, NDArray)) and not isinstance(v, (IntImm, SourceName)):
            out.append(v)


def _parts(obj: Any) -> list[Any]:
    """The field values of a table entry, whose objects are saved before it."""
    if isinstance(obj, Attrs):
        return list(obj.values())
    if isinstance(obj, Map):
        return [x for kv in obj.items() for x in kv]
    if isinstance(obj, IRModule):
        return [obj.attrs, *[x for kv in obj.type_definitions.items() for x in kv],
                *[x for kv in obj.items() for x in kv]]
    if isinstance(obj, (Op, NDArray)):
        return []
    layout = getattr(type(obj), "_layout_", None)
    if layout is None:
        raise TypeError(f"save_json: cannot save a {type(obj).__name__}")
    return [getattr(obj, name) for name in layout.names]


class _Writer:
    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.nodes: list[dict[str, Any]] = []
        self.arrays: list[str] = []
        self.keep: list[Any] = []  # ids stay valid while saving

    def save(self, root: Any) -> int:
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            obj, ready = stack.pop()
            if id(obj) in self.index:
                continue
            if not ready:
                stack.append((obj, True))
                inner: list[Any] = []
                for part in _parts(obj):
                    _objects_in(part, inner)
                stack.extend((o, False) for o in reversed(inner) if id(o) not in self.index)
                continue
            self.keep.append(obj)
            self.index[id(obj)] = len(self.nodes)
            self.nodes.append(self.entry(obj))
        return self.index[id(root)]

    def value(self, v: Any) -> Any:
        """A field value as JSON: plain values inline, objects by reference."""
        if v is None or isinstance(v, (bool, str)) and not isinstance(v, SourceName):
            return v
        if isinstance(v, SourceName):
            return {"SourceName": v.name}
        if isinstance(v, IntImm):
            return {"IntImm": [v.dtype, int(v)]}
        if isinstance(v, TypeKind):
            return int(v)
        if isinstance(v, int):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"float": repr(v)}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        return {"ref": self.index[id(v)]}

    def entry(self, obj: Any) -> dict[str, Any]:
        key = type_key(obj)
        if key is None:
            raise TypeError(f"save_json: {type(obj).__name__} has no type key")
        if isinstance(obj, Attrs):
            return {"type_key": key, "attrs": {k: self.value(v) for k, v in obj.items()},
                    "kind": "attrs"}
        if isinstance(obj, Map):
            return {"type_key": key, "items": [[self.value(k), self.value(v)] for k, v in obj.items()]}
        if isinstance(obj, IRModule):
            return {"type_key": key, "attrs": self.value(obj.attrs),
                    "types": [[self.value(g), self.value(d)] for g, d in obj.type_definitions.items()],
                    "functions": [[self.value(gv), self.value(f)] for gv, f in obj.items()]}
        if isinstance(obj, Op):
            return {"type_key": key, "name": obj.name}
        if isinstance(obj, NDArray):
            return {"type_key": key, "data": self.array(obj)}
        fields = {name: self.value(getattr(obj, name)) for name in type(obj)._layout_.names}
        return {"type_key": key, "fields": fields}

    def array(self, arr: NDArray) -> int:
        buffer = io.BytesIO()
        np.save(buffer, arr.numpy(), allow_pickle=False)
        self.arrays.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
        return len(self.arrays) - 1


def save_json(node: Any) -> str:
    """``node`` (an expression, type, attributes, module, span...) as JSON text."""
    writer = _Writer()
    root = writer.save(node)
    return json.dumps({
        "root": root,
        "nodes": writer.nodes,
        "b64ndarrays": writer.arrays,
        "attrs": {"format": FORMAT},
    })


# --------------------------------------------------------------------------- loading


class _Reader:
    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.objects: list[Any] = []
        self.arrays = doc.get("b64ndarrays", [])

    def value(self, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        if "ref" in v:
            i = v["ref"]
            if not isinstance(i, int) or not 0 <= i < len(self.objects):
                raise JSONFormatError(f"load_json: reference {i!r} to an object not read yet")
            return self.objects[i]
        if "tuple" in v:
            return tuple(self.value(x) for x in v["tuple"])
        if "IntImm" in v:
            dtype, value = v["IntImm"]
            return IntImm(dtype, value)
        if "SourceName" in v:
            return SourceName(v["SourceName"])
        if "float" in v:
            return float(v["float"])
        raise JSONFormatError(f"load_json: unknown value {v!r}")

    def array(self, i: int) -> NDArray:
        data = base64.b64decode(self.arrays[i])
        return NDArray(np.load(io.BytesIO(data), allow_pickle=False))

    def build(self, entry: Mapping[str, Any]) -> Any:
        key = entry.get("type_key")
        if not isinstance(key, str):
            raise JSONFormatError(f"load_json: an entry without a type key: {entry!r:.80}")
        if entry.get("kind") == "attrs":
            fields = {k: self.value(v) for k, v in entry["attrs"].items()}
            cls = object_type(key)
            if cls is not None and issubclass(cls, Attrs):
                return cls(fields, key)
            return Attrs(fields, key)
        cls = object_type(key)
        if cls is None:
            raise JSONFormatError(f"load_json: unknown type key {key!r}")
        if cls is Map:
            return Map([(self.value(k), self.value(v)) for k, v in entry["items"]])
        if cls is IRModule:
            mod = IRModule(attrs=self.value(entry["attrs"]))
            for gtv, data in entry.get("types", ()):
                mod.add_type_def(self.value(gtv), self.value(data))
            for gv, func in entry["functions"]:
                mod.add(self.value(gv), self.value(func))
            return mod
        if cls is Op:
            return Op.get(entry["name"])
        if cls is NDArray:
            return self.array(entry["data"])
        layout = getattr(cls, "_layout_", None)
        if layout is None:
            raise JSONFormatError(f"load_json: {key!r} is not a node kind")
        fields = entry["fields"]
        values = [self.value(fields.get(name)) for name in layout.names]
        if cls is Constant and not isinstance(values[0], NDArray):
            raise JSONFormatError("load_json: a constant without its array")
        return layout.build(*values)


def load_json(json_str: str) -> Any:
    """The object :func:`save_json` wrote as ``json_str``."""
    try:
        doc = json.loads(json_str)
    except json.JSONDecodeError as err:
        raise JSONFormatError(f"load_json: not JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("attrs", {}).get("format") != FORMAT:
        raise JSONFormatError(
            f"load_json: not a document save_json wrote (expected attrs.format = {FORMAT!r})"
        )
    reader = _Reader(doc)
    for entry in doc["nodes"]:
        reader.objects.append(reader.build(entry))
    root = doc["root"]
    return reader.objects[root]


hooks.save_json = save_json
hooks.load_json = load_json
