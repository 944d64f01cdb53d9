"""The core names no pass or instrument: it reaches them by a name it was given, or by a role.

Only ``relaypass.tools`` may pick a default pass or instrument by name (its
``--help`` says which), and the ``relay`` facade re-exports the registered
passes by whatever names they have.  Everywhere else under
``core/relaypass/`` no string in the code may hold the name of a standard
pass or instrument (the names come from the two standard manifests).
Names are whole words, so a plugin's config key (``"relay.FuseOps.max_depth"``)
counts as naming its pass.  Documentation may name them: docstrings, and any
string statement on its own, are skipped, as are comments (which ``ast``
never sees).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core" / "relaypass"
MANIFESTS = (
    ROOT / "passes_std" / "relaypass_std" / "relaypass-plugin.toml",
    ROOT / "plugins" / "relaypass_instruments" / "relaypass-plugin.toml",
)
#: Where naming a pass or instrument is allowed: the applications, and the facade's re-exports.
ALLOWED = ("tools", "relay")

def standard_names() -> set[str]:
    names: set[str] = set()
    for manifest in MANIFESTS:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        names.update(entry["name"] for entry in data.get("pass", []))
        names.update(entry["name"] for entry in data.get("instrument", []))
    return names


def _documentation(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are documentation: every string statement on its own."""
    return {
        id(node.value) for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def named_in(source: str, names: set[str]) -> list[tuple[int, str, str]]:
    """(line, name, string) for each name found in a string constant of ``source``'s code."""
    pattern = re.compile(r"(?<![\w\-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w\-])")
    tree = ast.parse(source)
    docs = _documentation(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for match in pattern.finditer(node.value):
                found.append((node.lineno, match.group(1), node.value))
    return sorted(found)


def core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py")
                  if p.relative_to(CORE).parts[0] not in ALLOWED)


def test_the_names_come_from_both_manifests():
    names = standard_names()
    assert {"InferType", "FuseOps", "WellFormedChecker", "PassTimingInstrument"} <= names
    assert len(core_files()) > 40


def test_the_scan_sees_code_and_skips_documentation():
    source = '''
"""Module docstring: InferType."""
x = 1
"""An attribute's docstring naming FuseOps."""

def f(registry):
    """Run InferType first."""
    # a comment naming FoldConstant
    registry.build_pass("InferType", {})
    return f"{registry} via WellFormedChecker", "MyInferType", "relay.FuseOps.max_depth"
'''
    found = [(line, name) for line, name, _ in named_in(source, standard_names())]
    # A config key a plugin declares names its pass too (relay.FuseOps.max_depth).
    assert found == [(9, "InferType"), (10, "FuseOps"), (10, "WellFormedChecker")]


def test_no_core_code_outside_tools_names_a_standard_pass_or_instrument():
    names = standard_names()
    offences: list[str] = []
    for path in core_files():
        rel = path.relative_to(CORE).as_posix()
        for line, name, text in named_in(path.read_text(encoding="utf-8"), names):
            offences.append(f"core/relaypass/{rel}:{line}: {name!r} in {text!r}")
    assert not offences, (
        "the core names a pass or instrument outside tools/ (reach it by a name given to you, "
        "or by its role: relaypass.transform.get_pass_by_role):\n" + "\n".join(offences))
