"""``relaypass passes NAME`` and ``relaypass instruments NAME``: one declaration, in full.

The listings show a row per pass; before writing a pipeline entry a user
needs the rest of what the manifest says: the options with their types and
defaults, the config keys the pass reads, what it requires and preserves,
and where it comes from.  Everything here comes from the declaration (the
manifest, or an in-process registration): no plugin code is imported.
The same dictionaries are the entries of ``relaypass passes --json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..transform.specs import InstrumentSpec, OptionSpec, PassSpec

__all__ = ["describe_instrument", "describe_pass", "instrument_json", "pass_json", "table"]


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing spaces."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
    return "\n".join(lines)


def options_json(options: Sequence[OptionSpec] | None) -> list[dict[str, Any]] | None:
    if options is None:
        return None
    return [{"name": o.name, "type": o.type, "default": o.default, "required": o.required,
             "help": o.help} for o in options]


def _factory(spec: PassSpec | InstrumentSpec) -> str:
    """``module:attr`` of the factory; for a registered pass object, of its function."""
    f = spec.factory
    if isinstance(f, str):
        return f
    f = getattr(f, "pass_func", None) or f
    return f"{getattr(f, '__module__', '?')}:{getattr(f, '__qualname__', type(f).__name__)}"


def pass_json(spec: PassSpec, full: bool = False) -> dict[str, Any]:
    """What the declaration of a pass says (``full``: also its factory and manifest)."""
    data: dict[str, Any] = {
        "name": spec.name, "kind": spec.kind, "opt_level": spec.opt_level,
        "required": list(spec.required), "preserves": list(spec.preserves),
        "options": options_json(spec.options),
        "config": [{"name": k.name, "type": k.type, "default": k.default, "help": k.help}
                   for k in spec.config],
        "distribution": spec.distribution, "version": spec.version, "help": spec.help,
        "role": spec.role,
    }
    if full:
        data["factory"] = _factory(spec)
        data["manifest"] = spec.origin.manifest or None
    return data


def instrument_json(spec: InstrumentSpec, full: bool = False) -> dict[str, Any]:
    """What the declaration of an instrument says (``full``: also its factory and manifest)."""
    data: dict[str, Any] = {"name": spec.name, "kind": "instrument",
                            "options": options_json(spec.options),
                            "distribution": spec.distribution, "version": spec.version,
                            "help": spec.help}
    if full:
        data["factory"] = _factory(spec)
        data["manifest"] = spec.origin.manifest or None
    return data


def _value(value: Any) -> str:
    return json.dumps(value, default=list)


def _options_text(options: Sequence[OptionSpec] | None, example: str) -> list[str]:
    if options is None:
        return ["options: not declared (the keywords given are passed to the factory unchecked)"]
    if not options:
        return ["options: none"]
    rows = [(o.name, o.type, "(required)" if o.required else _value(o.default), o.help or "-")
            for o in options]
    return [f"options ({example}):",
            *("  " + line for line in table(("name", "type", "default", "help"), rows).splitlines())]


def _origin_lines(spec: PassSpec | InstrumentSpec) -> list[str]:
    lines = [f"factory    {_factory(spec)}"]
    if spec.origin.manifest:
        lines.append(f"manifest   {spec.origin.manifest}")
    return lines


def describe_pass(spec: PassSpec) -> str:
    """A pass's declaration as text: its kind and origin, help, requirements, options, config keys."""
    lines = [f"{spec.name}: {spec.kind} pass from {spec.origin}"]
    if spec.help:
        lines.append(f"  {spec.help}")
    lines += [f"opt_level  {spec.opt_level}",
              f"requires   {', '.join(spec.required) or '-'}",
              f"preserves  {', '.join(spec.preserves) or '-'}",
              f"role       {spec.role or '-'}",
              *_origin_lines(spec), ""]
    example = f'in a pipeline file: {{ name = "{spec.name}", options = {{ ... }} }}; inline: ' \
              f"{spec.name}{{name=value}}"
    lines += _options_text(spec.options, example)
    if spec.config:
        rows = [(k.name, k.type, _value(k.default), k.help or "-") for k in spec.config]
        lines += ["", "config keys (the [config] table of a pipeline file, PassContext(config=...)):",
                  *("  " + line for line in
                    table(("name", "type", "default", "help"), rows).splitlines())]
    else:
        lines += ["", "config keys: none"]
    return "\n".join(lines)


def describe_instrument(spec: InstrumentSpec) -> str:
    """An instrument's declaration as text: its origin, help and options."""
    lines = [f"{spec.name}: instrument from {spec.origin}"]
    if spec.help:
        lines.append(f"  {spec.help}")
    lines += [*_origin_lines(spec), ""]
    lines += _options_text(spec.options, f"--instrument {spec.name}:name=value,...; in a pipeline "
                                         f"file: [[instruments]] options")
    return "\n".join(lines)
