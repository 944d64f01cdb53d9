"""Declared PassContext configuration keys and the checking of values given for them.

Relay passes read tuning knobs from ``PassContext.config`` (``"relay.FuseOps.max_depth"``).
A key exists because a pass declares it: in its manifest entry (``[[pass.config]]``)
or, for an in-process pass, through ``register_pass(config=...)``.  Declaring the
type and default up front is what lets a misspelt key or a value of the wrong type
fail when the context is built, listing what would be valid, instead of being
silently ignored by the pass that never finds it.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RelayPassError
from . import lookup

#: The value types a config key (or a pass/instrument option) may declare.  ``path`` is a
#: file or folder path and ``output`` is "stdout", "stderr" or a file path: both are
#: strings to Python callers, and what a pipeline file gives for them is kept inside the
#: folder the pipeline was loaded for (:mod:`relaypass.transform.pipeline`).
VALUE_TYPES = ("bool", "int", "float", "str", "path", "output", "pattern_table", "target",
               "list[bool]", "list[int]", "list[float]", "list[str]", "list[target]",
               "table[list[str]]")

#: The value types that name a place to write (see :data:`VALUE_TYPES`).
PATH_TYPES = ("path", "output")

#: The value types that name something a plugin provides: a pattern table (MergeComposite)
#: or a BYOC target (AnnotateTarget).  Strings to Python callers; a pipeline file may only
#: give names that are registered or installed (:mod:`relaypass.transform.pipeline`).
NAME_TYPES = ("pattern_table", "target")

#: The stream names an ``output`` value may give instead of a file path.
OUTPUT_STREAMS = ("stdout", "stderr")

_PY_TYPES = {bool: "bool", int: "int", float: "float", str: "str"}

#: The type key TVM's ``PassContext.list_configs()`` gives for a value type (a Bool is an IntImm there).
TVM_TYPE_KEYS = {"bool": "IntImm", "int": "IntImm", "float": "FloatImm", "str": "runtime.String",
                 "path": "runtime.String", "output": "runtime.String", "pattern_table": "runtime.String",
                 "target": "runtime.String", "list": "Array", "table": "Map"}


class ConfigError(RelayPassError):
    """A PassContext config key or value is not acceptable."""


class UnknownConfigKeyError(ConfigError, LookupError):
    """A config key that no registered pass declares."""

    def __str__(self) -> str:  # LookupError would quote the message like a key
        return str(self.args[0]) if self.args else ""


class ConfigTypeError(ConfigError, TypeError):
    """A config value whose type differs from the declared one."""


def type_name(declared: object) -> str:
    """The canonical name of a declared value type (a name from VALUE_TYPES or a Python type).

    ``int``, ``"int"``, ``list[str]`` and ``"list[str]"`` are all accepted so that
    in-process declarations can use Python types while manifests use strings.
    """
    if isinstance(declared, str):
        name = declared.replace(" ", "")
    elif declared in _PY_TYPES:
        name = _PY_TYPES[declared]  # type: ignore[index]
    elif getattr(declared, "__origin__", None) in (list, tuple) and len(
        getattr(declared, "__args__", ())
    ) == 1 and declared.__args__[0] in _PY_TYPES:  # type: ignore[attr-defined]
        name = f"list[{_PY_TYPES[declared.__args__[0]]}]"  # type: ignore[attr-defined]
    else:
        name = repr(declared)
    if name not in VALUE_TYPES:
        raise ValueError(f"unsupported value type {name!r}; use one of: {', '.join(VALUE_TYPES)}")
    return name


def _scalar_ok(tname: str, value: object) -> bool:
    if tname == "bool":
        return isinstance(value, bool)
    if tname == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if tname == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tname in PATH_TYPES:
        return isinstance(value, str) and bool(value) and "\0" not in value
    if tname in NAME_TYPES:
        return isinstance(value, str) and bool(value)
    return isinstance(value, str)


def _as_float(value: Any) -> float | None:
    """``value`` as a float; None for an int too large for one (TOML integers are unbounded)."""
    try:
        return float(value)
    except OverflowError:
        return None


def coerce_value(tname: str, value: object) -> Any:
    """``value`` in its canonical form for type ``tname``; None when it does not fit.

    Lists become tuples (values are shared by contexts and must not change), ints
    given for a float become floats (an int too large for a float does not fit).
    """
    if tname.startswith("table["):
        # A TOML table of string keys (ConvertLayout's desired_layouts: operator -> layouts).
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            return None
        entries = {k: coerce_value(tname[6:-1], v) for k, v in value.items()}
        return None if any(v is None for v in entries.values()) else entries
    if tname.startswith("list["):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return None
        inner = tname[5:-1]
        if not all(_scalar_ok(inner, v) for v in value):
            return None
        if inner != "float":
            return tuple(value)
        floats = tuple(_as_float(v) for v in value)
        return None if None in floats else floats
    if not _scalar_ok(tname, value):
        return None
    return _as_float(value) if tname == "float" else value


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for an error message: bounded in length and depth, never raising.

    Values in messages come from files (pipelines, manifests) that may hold
    tables nested thousands deep or integers of thousands of digits, whose
    plain ``repr`` raises (RecursionError, ValueError) or runs to megabytes.
    """
    r = reprlib.Repr()
    r.maxlevel, r.maxstring, r.maxother, r.maxlong = 3, limit, limit, limit
    r.maxdict = r.maxlist = r.maxtuple = r.maxset = 6
    try:
        text = r.repr(value)
    except Exception:  # a value whose repr fails: say what it is
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_type(value: object) -> str:
    """How a value's type reads in an error message (TOML-ish names)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Mapping):
        return "table"
    return type(value).__name__


@dataclass(frozen=True)
class ConfigKey:
    """A declared config key: its name, value type, default and help text.

    ``declared_by`` names the pass and distribution that declared it, so the
    listing (``PassContext.list_configs()``) can say where a key comes from.
    """

    name: str
    type: str
    default: Any = None
    help: str = ""
    declared_by: str = ""

    def __getitem__(self, field: str) -> str:
        """TVM's listing entry: ``key["type"]``, the TVM type key of the value (see :data:`TVM_TYPE_KEYS`)."""
        if field != "type":
            raise KeyError(field)
        return TVM_TYPE_KEYS[self.type.split("[", 1)[0]]

    def check(self, value: object) -> Any:
        """``value`` in canonical form, or ConfigTypeError naming the key and its type."""
        out = coerce_value(self.type, value)
        if out is None:
            raise ConfigTypeError(
                f"config key {self.name!r} takes a {self.type}, not {describe_type(value)} "
                f"{shown(value)}" + (f" ({self.help})" if self.help else "")
            )
        return out


def make_config_key(decl: object, declared_by: str = "") -> ConfigKey:
    """A ConfigKey from a ConfigKey, a mapping or a ``(name, type, default, help)`` tuple."""
    if isinstance(decl, ConfigKey):
        fields: dict[str, Any] = {
            "name": decl.name, "type": decl.type, "default": decl.default, "help": decl.help,
        }
    elif isinstance(decl, Mapping):
        unknown = set(decl) - {"name", "type", "default", "help"}
        if unknown:
            raise ValueError(
                f"config key declaration has unknown field(s) {sorted(unknown)}; "
                "valid: name, type, default, help"
            )
        fields = dict(decl)
    elif isinstance(decl, tuple) and 2 <= len(decl) <= 4:
        fields = dict(zip(("name", "type", "default", "help"), decl))
    else:
        raise TypeError(
            "a config key is declared as ConfigKey(name, type, default, help), a mapping "
            f"or a (name, type, default, help) tuple, not {decl!r}"
        )
    name = fields.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"a config key needs a non-empty string name, not {name!r}")
    tname = type_name(fields.get("type"))
    key = ConfigKey(name, tname, None, str(fields.get("help", "") or ""), declared_by)
    default = fields.get("default")
    if default is not None:
        default = key.check(default)
    return ConfigKey(name, tname, default, key.help, declared_by)


def _declared_keys() -> Mapping[str, ConfigKey]:
    return lookup.registry().config_keys()


def unknown_key_error(key: str, declared: Mapping[str, ConfigKey]) -> UnknownConfigKeyError:
    near = difflib.get_close_matches(key, list(declared), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else "."
    valid = ", ".join(sorted(declared)) or "none (no registered pass declares a config key)"
    return UnknownConfigKeyError(
        f"unknown PassContext config key {shown(key, 120)}{hint} Valid keys: {valid}. "
        "A pass declares its keys in its manifest ([[pass.config]]) or with register_pass(config=...)."
    )


class PassConfig(Mapping):
    """The config values of a PassContext: a read-only mapping, checked when built.

    ``get(key)`` without a default returns the key's declared default, so a pass
    reads its knob in one place; ``get(key, default)`` behaves like ``dict.get``.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        checked: dict[str, Any] = {}
        if values:
            if not isinstance(values, Mapping):
                raise TypeError(f"config must be a mapping of key to value, not {type(values).__name__}")
            declared = _declared_keys()
            for key, value in values.items():
                decl = declared.get(key)
                if decl is None:
                    lookup.registry().raise_if_config_conflicted(key)
                    raise unknown_key_error(key, declared)
                checked[key] = decl.check(value)
        self._values = checked

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    _NO_DEFAULT = object()

    def get(self, key: str, default: Any = _NO_DEFAULT) -> Any:
        if key in self._values:
            return self._values[key]
        if default is not PassConfig._NO_DEFAULT:
            return default
        decl = _declared_keys().get(key)
        return decl.default if decl is not None else None

    def __repr__(self) -> str:
        return f"PassConfig({self._values!r})"
