"""``relaypass help [TOPIC]``: the guide's pages, from a checkout and from an installed wheel.

Error messages point to ``relaypass help TOPIC`` rather than to a docs/ path
of a checkout: the last tests check that every such reference resolves and
that no message names a docs/ path any more.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_plugins import _run_in, venv_seeing_this_relaypass

from relaypass.errors import RelayPassError
from relaypass.tools.help import (
    INDEX_TOPIC,
    HelpTopicError,
    docs_dir,
    page_text,
    register,
    run,
    slugify,
    topics,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SOURCES = [ROOT / "core", ROOT / "passes_std", ROOT / "plugins"]


def _page(topic: str) -> str:
    name = "README" if topic == INDEX_TOPIC else topic
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")


def test_topics_are_the_guide_pages_of_this_checkout():
    assert docs_dir() == DOCS
    expected = {INDEX_TOPIC if p.stem == "README" else p.stem for p in DOCS.glob("*.md")}
    assert set(topics()) == expected and {"faq", "install", "ir", "cli"} <= expected


def test_a_topic_prints_its_page(capsys):
    assert run(argparse.Namespace(topic="faq")) == 0
    assert capsys.readouterr().out == _page("faq")


def test_no_topic_lists_every_topic_with_its_title(capsys):
    assert run(argparse.Namespace(topic=None)) == 0
    out = capsys.readouterr().out
    for name, path in topics().items():
        title = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
        assert re.search(rf"^  {re.escape(name)} +{re.escape(title)}$", out, re.M), name


def test_a_section_runs_to_the_next_heading_of_its_level():
    text = page_text("coming-from-relay#out-of-scope")
    page = _page("coming-from-relay")
    assert text.startswith("## Out of scope\n") and text in page
    following = page[page.index(text) + len(text):]
    assert following == "" or following.startswith("## ")


def test_headings_inside_code_blocks_are_not_sections():
    # quickstart.md's toml block starts with the comment line "# fold.toml".
    assert "\n# fold.toml\n" in _page("quickstart")
    with pytest.raises(HelpTopicError, match="no section 'foldtoml' in help topic 'quickstart'"):
        page_text("quickstart#foldtoml")


@pytest.mark.parametrize("heading, anchor", [
    ("Out of scope", "out-of-scope"),
    ("The model zoo: relaypass run PIPELINE.toml --model-zoo NAME",
     "the-model-zoo-relaypass-run-pipelinetoml---model-zoo-name"),
    ("Which pass changed the output? bisect", "which-pass-changed-the-output-bisect"),
    ("  snake_case and déjà vu ", "snake_case-and-déjà-vu"),
])
def test_anchors_are_githubs(heading, anchor):
    assert slugify(heading) == anchor


@pytest.mark.parametrize("topic, message", [
    ("plugin", "no help topic 'plugin'; did you mean 'plugins'? (all topics: relaypass help)"),
    ("nothing-like-it", "no help topic 'nothing-like-it' (all topics: relaypass help)"),
    ("coming-from-relay#out-of-scop", "no section 'out-of-scop' in help topic "
                                      "'coming-from-relay'; did you mean "
                                      "coming-from-relay#out-of-scope? its sections: "),
])
def test_unknown_topics_and_sections_are_named_with_a_way_out(topic, message):
    with pytest.raises(HelpTopicError) as err:
        page_text(topic)
    assert isinstance(err.value, RelayPassError) and str(err.value).startswith(message)


def test_register_adds_the_command_with_the_common_options(capsys):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--traceback", action="store_true")
    parser = argparse.ArgumentParser(prog="relaypass")
    register(parser.add_subparsers(dest="command"), [common])
    args = parser.parse_args(["help", "--traceback", "cli#relaypass-check"])
    assert args.traceback and args.func is run
    assert args.func(args) == 0
    assert capsys.readouterr().out.startswith("## `relaypass check`")


# --- what error messages say ------------------------------------------------------------
def _source_files() -> list[Path]:
    return [p for root in SOURCES for p in sorted(root.rglob("*.py"))
            if "__pycache__" not in p.parts and "tests" not in p.parts]


def _strings_outside_docstrings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def test_every_help_reference_in_the_code_resolves():
    references = {}
    for path in _source_files():
        for line, text in _strings_outside_docstrings(path):
            for ref in re.findall(r"relaypass help ([a-z][a-z0-9-]*(?:#[a-z0-9_-]+)?)", text):
                references[ref] = f"{path.relative_to(ROOT)}:{line}"
    assert "coming-from-relay#out-of-scope" in references  # RelayCompatError's
    for ref, where in references.items():
        assert page_text(ref), where  # raises HelpTopicError for a stale one


def test_no_message_names_a_path_of_a_checkout():
    found = [f"{path.relative_to(ROOT)}:{line}: {text.strip()[:80]!r}"
             for path in _source_files()
             for line, text in _strings_outside_docstrings(path)
             if re.search(r"docs/[\w-]+\.md", text)]
    assert not found, "say `relaypass help TOPIC` instead:\n" + "\n".join(found)


# --- through the command line -------------------------------------------------------------
def _help_is_wired() -> bool:
    from relaypass.tools.cli import build_parser

    parser = build_parser()
    return any(isinstance(a, argparse._SubParsersAction) and "help" in a.choices
               for a in parser._actions)


def test_the_command_prints_a_page_and_fails_in_one_line():
    if not _help_is_wired():
        pytest.skip("relaypass.tools.cli does not register the help command yet")
    cli = [sys.executable, "-m", "relaypass.tools.cli", "help"]
    done = subprocess.run([*cli, "install"], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, _page("install"), "")
    done = subprocess.run([*cli, "instal"], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("relaypass: error: no help topic 'instal'; did you mean 'install'? "
                           "(all topics: relaypass help)\n")


# --- from a wheel, without the checkout -----------------------------------------------------
def _build_flags() -> tuple[str, ...]:
    """Build offline with this environment's setuptools when it is recent enough for
    pyproject.toml (77: SPDX licence expressions); else in pip's isolated environment."""
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return ()
    if tuple(int(part) for part in re.findall(r"\d+", version)[:1]) >= (77,):
        return ("--no-build-isolation", "--no-index")
    return ()


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> Path:
    """A virtual environment with relaypass installed from a wheel of this checkout."""
    root = tmp_path_factory.mktemp("help_wheel")
    source = root / "relaypass"  # built from a copy: the build leaves files behind
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("core", "passes_std", "plugins", "docs"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *_build_flags(),
                    "-w", str(root / "dist"), str(source)], check=True, capture_output=True)
    [wheel] = (root / "dist").glob("relaypass-*.whl")
    python = venv_seeing_this_relaypass(root / "venv")
    _run_in(python, "-m", "pip", "install", "-q", "--no-deps", str(wheel))
    shutil.rmtree(source)  # nothing of the copy may serve the pages
    return python


def test_an_installed_wheel_serves_the_pages(wheel_venv):
    script = ("import json, relaypass, relaypass.tools.help as h; print(json.dumps("
              "[relaypass.__file__, str(h.docs_dir()), sorted(h.topics()), h.page_text('faq')]))")
    # Run from the checkout's root, whose relaypass.egg-info (an editable install's) is then
    # on sys.path too: the pages must still come from the wheel's installation.
    done = subprocess.run([str(wheel_venv), "-c", script], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    package, folder, names, faq = json.loads(done.stdout)
    venv = wheel_venv.parent.parent
    assert Path(package).is_relative_to(venv) and Path(folder).is_relative_to(venv)
    assert Path(folder).parts[-3:] == ("share", "relaypass", "docs")
    assert names == sorted(topics()) and faq == _page("faq")
    if _help_is_wired():
        command = wheel_venv.parent / ("relaypass.exe" if sys.platform == "win32" else "relaypass")
        done = subprocess.run([str(command), "help", "install"], capture_output=True, text=True)
        assert (done.returncode, done.stdout) == (0, _page("install"))
