"""The plugin manifest: a TOML file, shipped inside the plugin package, declaring what it provides.

File name: ``relaypass-plugin.toml``, in the package directory named by the
distribution's ``relaypass.plugins`` entry point.  Format (docs/plugins.md has
the full reference)::

    format = 1                       # optional; the only format so far

    [[pass]]
    name = "FoldConstant"            # how users and other passes name it
    kind = "function"                # "module" | "function" | "sequential"
    opt_level = 2
    required = ["InferType"]         # optional: run these first
    preserves = ["InferType"]        # optional: effects this pass keeps ("*": all)
    factory = "my_pkg.fold:_fold"    # callable(**options) -> the transformation, made
                                     # into the pass declared here: (func, mod, ctx)
                                     # -> Function for kind "function", (mod, ctx) ->
                                     # IRModule for "module"; or -> a Pass, checked
                                     # against this entry ("sequential": a Sequential)
    help = "one line for listings"   # optional
    role = "type-inference"          # optional: a role of PASS_ROLES (below)

    [[pass.config]]                  # optional: PassContext config keys it reads
    name = "my_pkg.FoldConstant.max_size"
    type = "int"                     # bool int float str path output list[bool|int|float|str]
                                     # (path, output: see docs/plugins.md; a pipeline file
                                     # gives only paths inside its output folder)
    default = 1024
    help = "..."

    [[pass.option]]                  # optional: keyword options of the factory
    name = "fold_qnn"
    type = "bool"
    default = false                  # given to the factory when the option is not;
                                     # no default: the option must be given

    [[instrument]]
    name = "MyTimer"
    factory = "my_pkg.timer:MyTimer" # callable(**options) -> PassInstrument
    [[instrument.option]]
    name = "file"
    type = "str"
    default = "stdout"

    [[pattern_table]]                # a BYOC target's patterns, for MergeComposite
    name = "acme"                    # MergeComposite = { pattern_table = "acme" }
    factory = "my_pkg.patterns:table"  # callable() -> [(name, pattern[, check]), ...]
    help = "..."

    [[target]]                       # a BYOC target's operator support, for AnnotateTarget
    name = "acme"                    # AnnotateTarget = { targets = ["acme"] }
    help = "..."
    [target.operators]               # operator name = true (every call) or
    "nn.relu" = true                 # "module:function", a predicate of the typed call
    "nn.conv2d" = "my_pkg.support:conv2d_ok"

``role`` says that the pass is the one the core (and the tools' defaults)
reach for a job, without naming it; the core never names a pass.  The roles
(:data:`~relaypass.transform.specs.PASS_ROLES`):

``type-inference``
    the pass that infers types: built without options, it takes a module and
    returns it with every expression's ``checked_type`` filled, raising on a
    program that does not type-check.  ``check_pass`` types programs with it,
    ``relaypass bisect`` checks types with it and crash reproducers restore
    types with it (the standard passes give it to ``InferType``).

Any other value is a ManifestError (an older relaypass that does not know a
newer role rejects the manifest instead of misreading it).  A role-taking
pass must not have required options.  Two passes claiming one role is not an
error of either manifest: the registry raises it (naming both) where the
role is asked for, so every other pass keeps working.

Parsing never imports the plugin: everything here is data.  Any problem is a
:class:`ManifestError` naming the file, the key path and the distribution.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..entry_points import STANDARD_DISTRIBUTION
from ..transform.config import VALUE_TYPES, ConfigKey, coerce_value, describe_type, shown
from ..transform.errors import ManifestError
from ..transform.specs import (
    PASS_KINDS,
    PASS_ROLES,
    Declarations,
    InstrumentSpec,
    OptionSpec,
    Origin,
    PassSpec,
    PatternTableSpec,
    TargetSpec,
)

MANIFEST_NAME = "relaypass-plugin.toml"
FORMAT = 1

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_FACTORY = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

_TOP_KEYS = ("format", "pass", "instrument", "pattern_table", "target")
_PASS_KEYS = ("name", "kind", "opt_level", "required", "preserves", "factory", "help", "role",
              "config", "option")
_INSTRUMENT_KEYS = ("name", "factory", "help", "option")
_PATTERN_TABLE_KEYS = ("name", "factory", "help")
_TARGET_KEYS = ("name", "help", "operators")
_OP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_VALUE_KEYS = ("name", "type", "default", "help")


def manifest_fix(origin: Origin) -> str:
    """The way out of a broken manifest (relaypass's own: reinstalling it, never removing it)."""
    if origin.distribution == STANDARD_DISTRIBUTION:
        return ("reinstall relaypass (pip install --force-reinstall relaypass); its own "
                f"{MANIFEST_NAME} should never be broken")
    return (
        f"fix {MANIFEST_NAME} of {origin.distribution} (format: relaypass help plugins) "
        f"or uninstall it (pip uninstall {origin.distribution})"
    )


class _Reader:
    """Validates one manifest, raising ManifestError at the first problem with its key path."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin

    def fail(self, path: str, problem: str) -> ManifestError:
        where = f"{self.origin.manifest}: " if self.origin.manifest else ""
        at = f"{path}: " if path else ""
        return ManifestError(
            f"invalid plugin manifest of {self.origin}: {where}{at}{problem}",
            distribution=self.origin.distribution,
            version=self.origin.version,
            fix=manifest_fix(self.origin),
        )

    def keys(self, table: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(path, f"unknown key {shown(key)}; valid keys: {', '.join(allowed)}")

    def need(self, table: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in table:
            raise self.fail(path, f"missing required key {key!r}")
        return table[key]

    def string(self, value: Any, path: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a non-empty string, not {shown(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.fail(path, f"{shown(value)} is not {what}")
        return value

    def names(self, value: Any, path: str, allow_all: bool = False) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list of pass names, not {shown(value)}")
        out = []
        for i, item in enumerate(value):
            if allow_all and item == "*":
                out.append(item)
            else:
                out.append(self.string(item, f"{path}[{i}]", _NAME, "a valid pass name"))
        return tuple(out)

    def tables(self, value: Any, path: str) -> list[Mapping[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            raise self.fail(path, f"expected an array of tables ([[{path}]]), not {shown(value)}")
        return value

    def value_decl(self, table: Mapping[str, Any], path: str) -> tuple[str, str, Any, str, bool]:
        self.keys(table, _VALUE_KEYS, path)
        name = self.string(self.need(table, "name", path), f"{path}.name", _NAME, "a valid name")
        tname = self.need(table, "type", path)
        if tname not in VALUE_TYPES:
            raise self.fail(f"{path}.type", f"unknown type {shown(tname)}; valid types: {', '.join(VALUE_TYPES)}")
        help_text = table.get("help", "")
        if not isinstance(help_text, str):
            raise self.fail(f"{path}.help", f"expected a string, not {shown(help_text)}")
        has_default = "default" in table
        default = None
        if has_default:
            default = coerce_value(tname, table["default"])
            if default is None:
                raise self.fail(
                    f"{path}.default",
                    f"{describe_type(table['default'])} {shown(table['default'])} does not match type {tname}",
                )
        return name, tname, default, help_text, has_default

    def options(self, value: Any, path: str) -> tuple[OptionSpec, ...]:
        out: list[OptionSpec] = []
        seen: set[str] = set()
        for i, table in enumerate(self.tables(value, path)):
            name, tname, default, help_text, has_default = self.value_decl(table, f"{path}[{i}]")
            if name in seen:
                raise self.fail(f"{path}[{i}].name", f"option {name!r} is declared twice")
            seen.add(name)
            out.append(OptionSpec(name, tname, default, help_text, required=not has_default))
        return tuple(out)

    def config(self, value: Any, path: str, declared_by: str) -> tuple[ConfigKey, ...]:
        out: list[ConfigKey] = []
        for i, table in enumerate(self.tables(value, path)):
            name, tname, default, help_text, _ = self.value_decl(table, f"{path}[{i}]")
            out.append(ConfigKey(name, tname, default, help_text, declared_by))
        return tuple(out)

    def read(self, data: Mapping[str, Any]) -> Declarations:
        self.keys(data, _TOP_KEYS, "")
        fmt = data.get("format", FORMAT)
        if fmt != FORMAT:
            raise self.fail("format", f"unsupported manifest format {shown(fmt)}; this relaypass reads format {FORMAT}")
        return Declarations(self.declared(data, "pass", self.pass_spec),
                            self.declared(data, "instrument", self.instrument_spec),
                            self.declared(data, "pattern_table", self.pattern_table_spec),
                            self.declared(data, "target", self.target_spec))

    def declared(self, data: Mapping[str, Any], key: str,
                 read_entry: Callable[[Mapping[str, Any], str], Any]) -> list[Any]:
        """The entries of the array of tables ``[[key]]``, each read by ``read_entry``; no name twice."""
        out: list[Any] = []
        seen: set[str] = set()
        for i, table in enumerate(self.tables(data.get(key, []), key)):
            spec = read_entry(table, f"{key}[{i}]")
            if spec.name in seen:
                raise self.fail(f"{key}[{i}].name", f"{spec.name!r} is declared twice")
            seen.add(spec.name)
            out.append(spec)
        return out

    def pass_spec(self, table: Mapping[str, Any], path: str) -> PassSpec:
        self.keys(table, _PASS_KEYS, path)
        name = self.string(self.need(table, "name", path), f"{path}.name", _NAME, "a valid pass name")
        kind = self.need(table, "kind", path)
        if kind not in PASS_KINDS:
            raise self.fail(f"{path}.kind", f"unknown kind {shown(kind)}; valid kinds: {', '.join(PASS_KINDS)}")
        opt_level = self.need(table, "opt_level", path)
        if isinstance(opt_level, bool) or not isinstance(opt_level, int) or opt_level < 0:
            raise self.fail(f"{path}.opt_level", f"expected a non-negative integer, not {shown(opt_level)}")
        factory = self.string(self.need(table, "factory", path), f"{path}.factory", _FACTORY,
                              "of the form 'package.module:attribute'")
        required = self.names(table.get("required", []), f"{path}.required")
        if name in required:
            raise self.fail(f"{path}.required", f"pass {name!r} cannot require itself")
        preserves = self.names(table.get("preserves", []), f"{path}.preserves", allow_all=True)
        help_text = table.get("help", "")
        if not isinstance(help_text, str):
            raise self.fail(f"{path}.help", f"expected a string, not {shown(help_text)}")
        declared_by = f"{name} ({self.origin})"
        config = self.config(table.get("config", []), f"{path}.config", declared_by)
        options = self.options(table.get("option", []), f"{path}.option")
        role = self.role(table.get("role"), f"{path}.role", options)
        return PassSpec(name, kind, opt_level, factory, self.origin, required, preserves,
                        config, options, help_text, role)

    def role(self, value: Any, path: str, options: tuple[OptionSpec, ...]) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or value not in PASS_ROLES:
            known = ", ".join(repr(r) for r in PASS_ROLES)
            raise self.fail(path, f"unknown role {shown(value)}; the roles this relaypass knows: {known} "
                                  "(a newer relaypass may know more: pip install -U relaypass)")
        needed = [o.name for o in options if o.required]
        if needed:
            raise self.fail(path, f"a pass with role {value!r} is built without options, but "
                                  f"option(s) {', '.join(needed)} have no default")
        return value

    def named_factory(self, table: Mapping[str, Any], path: str,
                      allowed: tuple[str, ...]) -> tuple[str, str, str]:
        """The ``name``, ``factory`` and ``help`` of an instrument or pattern-table entry."""
        self.keys(table, allowed, path)
        name = self.string(self.need(table, "name", path), f"{path}.name", _NAME, "a valid name")
        factory = self.string(self.need(table, "factory", path), f"{path}.factory", _FACTORY,
                              "of the form 'package.module:attribute'")
        help_text = table.get("help", "")
        if not isinstance(help_text, str):
            raise self.fail(f"{path}.help", f"expected a string, not {shown(help_text)}")
        return name, factory, help_text

    def instrument_spec(self, table: Mapping[str, Any], path: str) -> InstrumentSpec:
        name, factory, help_text = self.named_factory(table, path, _INSTRUMENT_KEYS)
        options = self.options(table.get("option", []), f"{path}.option")
        return InstrumentSpec(name, factory, self.origin, options, help_text)

    def pattern_table_spec(self, table: Mapping[str, Any], path: str) -> PatternTableSpec:
        name, factory, help_text = self.named_factory(table, path, _PATTERN_TABLE_KEYS)
        return PatternTableSpec(name, factory, self.origin, help_text)

    def target_spec(self, table: Mapping[str, Any], path: str) -> TargetSpec:
        self.keys(table, _TARGET_KEYS, path)
        name = self.string(self.need(table, "name", path), f"{path}.name", _NAME, "a valid name")
        help_text = table.get("help", "")
        if not isinstance(help_text, str):
            raise self.fail(f"{path}.help", f"expected a string, not {shown(help_text)}")
        operators = self.need(table, "operators", path)
        where = f"{path}.operators"
        if not isinstance(operators, dict) or not operators:
            raise self.fail(where, "expected a table of operator name = true or "
                                   f"\"module:predicate\" ([target.operators]), not {shown(operators)}")
        support: list[tuple[str, bool | str]] = []
        for op_name, how in operators.items():
            at = f"{where}.{shown(op_name)}"
            if not _OP_NAME.match(op_name):
                raise self.fail(at, f"{shown(op_name)} is not an operator name (e.g. \"nn.conv2d\")")
            if how is not True:
                how = self.string(how, at, _FACTORY, "true or a predicate 'package.module:function' "
                                  "(leave out an operator the target does not support)")
            support.append((op_name, how))
        return TargetSpec(name, tuple(support), self.origin, help_text)


def parse_manifest(text: str, origin: Origin) -> Declarations:
    """The declarations of a manifest's text; ManifestError when it does not parse or validate."""
    reader = _Reader(origin)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise reader.fail("", f"not valid TOML ({exc})") from None
    except RecursionError:
        raise reader.fail("", "not readable: arrays or inline tables nested too deeply "
                              "for the TOML reader") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise reader.fail("", f"not readable ({shown(str(exc), 120)})") from None
    return reader.read(data)


def read_manifest(path: str, origin: Origin) -> Declarations:
    """The declarations of the manifest file at ``path``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise _Reader(origin).fail("", f"cannot read the manifest ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Reader(origin).fail(
            "", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    return parse_manifest(text, origin)
