"""``relaypass help [TOPIC]``: the user guide, in the terminal, wherever relaypass is installed.

Error messages send their reader to a page of the guide.  A path such as
``docs/onnx.md`` exists only in a checkout; ``relaypass help onnx`` works for
everyone who has the command, so messages name the topic instead.  A topic is
a page's file name without ``.md`` (``README.md`` is the topic ``guide``), and
``TOPIC#section`` narrows it to one section, named by the anchor the
documentation site gives its heading (``coming-from-relay#out-of-scope``).

Where the pages come from, first found wins:

1. the ``docs/`` folder of the checkout this module belongs to (an editable
   install, or a run from the source tree): the pages as they are being edited;
2. the copies an installed wheel holds: pyproject.toml ships ``docs/*.md`` as
   data files under ``<prefix>/share/relaypass/docs``, found through the
   distribution's file list, so a venv, ``--user`` or ``--prefix`` install
   all work.

The CLI wires this module in by calling :func:`register`; nothing here imports
numpy, the IR or a plugin.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from ..errors import RelayPassError

__all__ = ["HelpTopicError", "docs_dir", "page_text", "register", "run", "slugify", "title", "topics"]

#: The topic of the guide's table of contents, docs/README.md.
INDEX_TOPIC = "guide"
#: Where pyproject.toml's data-files puts the pages, below the installation prefix.
SHARED_DOCS = ("share", "relaypass", "docs")

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class HelpTopicError(RelayPassError):
    """An unknown help topic or section, or a relaypass installed without its guide."""


def docs_dir() -> Path | None:
    """The folder holding the guide's pages: the checkout's, else the installed copies."""
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent.parent  # core/relaypass -> the repository
    if package.parent.name == "core" and (checkout / "docs" / "README.md").is_file():
        return checkout / "docs"
    # The distribution that installed this very file: another relaypass metadata folder
    # on sys.path (a checkout's egg-info, when run from its root) is not the one.
    here = Path(__file__).resolve()
    for dist in metadata.distributions(name="relaypass"):
        files = dist.files or []
        if not any(f.name == here.name and Path(str(f.locate())).resolve() == here
                   for f in files):
            continue
        for file in files:
            if tuple(file.parts[-4:-1]) == SHARED_DOCS and file.name == "README.md":
                folder = Path(str(file.locate())).resolve().parent
                if (folder / "README.md").is_file():
                    return folder
    return None


def _topic_name(path: Path) -> str:
    return INDEX_TOPIC if path.stem == "README" else path.stem


def topics() -> dict[str, Path]:
    """Every topic and its page, by name."""
    folder = docs_dir()
    if folder is None:
        raise HelpTopicError(
            "the relaypass user guide is not installed here (no docs/ folder beside the "
            "package, no share/relaypass/docs in its installation); reinstall relaypass from a "
            "wheel or a checkout, or read the guide in the repository's docs/ folder")
    return {_topic_name(p): p for p in sorted(folder.glob("*.md"))}


def title(path: Path) -> str:
    """A page's first heading, its title."""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _HEADING.match(line)
        if m:
            return m[2]
    return ""


def slugify(heading: str, separator: str = "-") -> str:
    """The anchor of a heading: GitHub's, which mkdocs.yml makes the site's too.

    The pages are read on GitHub, on the documentation site and here, and link
    to each other's sections; one rule for anchors keeps every link working in
    all three.  The rule: lower case, punctuation dropped (hyphens and
    underscores stay), each space a hyphen, so ``--model-zoo`` after a space
    gives ``---model-zoo``.  The signature is the one Python-Markdown's ``toc``
    extension calls.
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", separator)


def _headings(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """(line index, level, slug) of each heading outside fenced code blocks."""
    found, fence = [], ""
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m and (not fence or m[1][0] == fence[0] and len(m[1]) >= len(fence)):
            fence = "" if fence else m[1]
            continue
        heading = None if fence else _HEADING.match(line)
        if heading:
            found.append((i, len(heading[1]), slugify(heading[2].replace("`", ""))))
    return found


def page_text(topic: str) -> str:
    """The text of ``topic``, a page, or ``page#section`` for one section of it."""
    name, _, section = topic.partition("#")
    pages = topics()
    if name not in pages:
        close = difflib.get_close_matches(name, list(pages), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise HelpTopicError(f"no help topic {name!r}{hint} (all topics: relaypass help)")
    text = pages[name].read_text(encoding="utf-8")
    if not section:
        return text
    lines = text.splitlines(keepends=True)
    headings = _headings(lines)
    for k, (start, level, slug) in enumerate(headings):
        if slug == section:
            end = next((i for i, lv, _ in headings[k + 1:] if lv <= level), len(lines))
            return "".join(lines[start:end])
    slugs = [slug for _, _, slug in headings]
    close = difflib.get_close_matches(section, slugs, n=1)
    hint = f"did you mean {name}#{close[0]}? " if close else ""
    raise HelpTopicError(f"no section {section!r} in help topic {name!r}; {hint}its sections: "
                         + ", ".join(slugs))


def _listing() -> str:
    pages = topics()
    width = max(map(len, pages))
    rows = [f"  {name:<{width}}  {title(path)}" for name, path in pages.items()]
    folder = next(iter(pages.values())).parent
    return ("relaypass help TOPIC prints a page of the user guide, TOPIC#section one of its "
            "sections.\n\ntopics:\n" + "\n".join(rows) + f"\n\n(the pages are in {folder})\n")


def run(args: argparse.Namespace) -> int:
    """The command: list the topics, or print one (through a pager on a terminal)."""
    text = _listing() if args.topic is None else page_text(args.topic)
    if sys.stdout.isatty():
        import pydoc

        pydoc.pager(text)
    else:
        sys.stdout.write(text)
    return 0


def register(subparsers: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]
             ) -> None:
    """Add the ``help`` command to the CLI's ``subparsers`` (``parents``: the common options)."""
    p = subparsers.add_parser(
        "help", parents=list(parents), help="read a page of the user guide",
        description="Print a page of the relaypass user guide (the pages installed with "
                    "relaypass), or one section of it; without a topic, list the topics.")
    p.add_argument("topic", nargs="?", metavar="TOPIC",
                   help="a page (cli, faq, pipeline-files, ...), or PAGE#section")
    p.set_defaults(func=run)
