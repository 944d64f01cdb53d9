"""Installed-looking plugin distributions for tests, and the ``relaypass`` command run on them.

A distribution is a ``*.dist-info`` folder (METADATA and entry_points.txt)
beside its package on a folder that is put on ``sys.path`` (in-process) or on
PYTHONPATH (for a ``relaypass`` subprocess): all importlib.metadata needs.
Manifests and modules may be given as bytes, so tests can install files that
are not UTF-8.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

MANIFEST_NAME = "relaypass-plugin.toml"

# A Relay model small enough for every test that runs a pipeline.
SMALL_MODEL = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) {
  %0 = add(%x, %x);
  multiply(%0, 2f)
}
"""


def _write(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(textwrap.dedent(content), encoding="utf-8")


def add_distribution(root: Path, dist: str, version: str, package: str,
                     manifest: str | bytes | None = None,
                     modules: dict[str, str | bytes] | None = None,
                     operators: str | None = None) -> Path:
    """A distribution ``dist`` under ``root`` whose package ``package`` holds ``manifest``.

    ``operators``: a module of the package declared in the ``relaypass.operators``
    group (imported when operators load).  Returns the package folder.
    """
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    groups = ""
    if manifest is not None:
        groups += f"[relaypass.plugins]\n{package} = {package}\n"
    if operators is not None:
        groups += f"[relaypass.operators]\n{package} = {package}.{operators}\n"
    (info / "entry_points.txt").write_text(groups)
    pkg = root / package
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    if manifest is not None:
        _write(pkg / MANIFEST_NAME, manifest)
    for name, text in (modules or {}).items():
        _write(pkg / f"{name}.py", text)
    return pkg


def pass_manifest(name: str, factory: str, opt_level: int = 0, kind: str = "module",
                  extra: str = "") -> str:
    return f'''
    [[pass]]
    name = "{name}"
    kind = "{kind}"
    opt_level = {opt_level}
    factory = "{factory}"
    {extra}
    '''


# A module of passes: make(name) is a factory returning a module pass's transformation
# that records its name on the module's attributes of the calls it ran (in CALLS).
PASS_MODULE = '''
CALLS = []


def make(tag):
    def factory(**options):
        def run(mod, ctx):
            CALLS.append(tag)
            return mod
        return run
    return factory
'''


def relaypass_cli(*args: object, cwd: Path, paths: tuple[Path, ...] = (),
                  env: dict[str, str] | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess:
    """``relaypass ARGS`` in a subprocess whose PYTHONPATH starts with ``paths``."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [*map(str, paths), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])
    return subprocess.run([sys.executable, "-m", "relaypass.tools.cli", *map(str, args)],
                          capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The single ``relaypass: error:`` line of a run that must exit 2 without a traceback."""
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in lines if line.startswith("relaypass: error: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], result.stderr
    assert all(line.startswith("relaypass: ") for line in lines), result.stderr
    return errors[0]


def files_under(folder: Path) -> set[str]:
    """Every file and folder below ``folder``, as paths relative to it."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}
