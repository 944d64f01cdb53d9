"""The Python examples in README.md and the guide run as written."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [
    "README.md", "docs/coming-from-relay.md", "docs/quickstart.md", "docs/functors.md",
    "docs/patterns.md", "docs/byoc.md",
]
#: What a page's examples print, at least: a module, unless the page says otherwise.
PRINTS = {"docs/patterns.md": "sub-pattern:", "docs/byoc.md": "Compiler="}


def _python_blocks(page: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("page", PAGES)
def test_python_examples_run(page, capsys, monkeypatch):
    from relaypass.transform import list_passes, unregister_pass
    from relaypass.transform.pattern_tables import list_pattern_tables, unregister_pattern_table

    def in_process_tables():
        return {t.name for t in list_pattern_tables() if t.distribution == "<in-process>"}

    tables_before = in_process_tables()

    monkeypatch.chdir(ROOT)
    blocks = _python_blocks(page)
    assert blocks, f"{page} has no python example"
    namespace = {"__name__": "__docs__"}
    try:
        # A page's blocks continue one another, as in a notebook.
        for block in blocks:
            exec(compile(block, page, "exec"), namespace)
    finally:
        if any(s.name == "ReluToMaximum" for s in list_passes()):
            unregister_pass("ReluToMaximum")
        for name in in_process_tables() - tables_before:  # docs/byoc.md registers "acme"
            unregister_pattern_table(name)
    out = capsys.readouterr().out
    assert PRINTS.get(page, "def @main") in out
