"""Every example in README.md and docs/ runs as written.

The rules are CONTRIBUTING.md's ("Examples in the docs"); in short:

* ``python`` blocks run, each in a fresh process (forked from one warm
  interpreter, so a block starts in milliseconds), unless marked
  ``<!-- docs: continue -->``: then it continues the previous python block of
  its page, in the same process and namespace, as the next cell of a notebook.
* ``sh`` blocks are commands, one a line; ``console`` blocks are transcripts
  whose ``$ `` lines are commands and whose other lines are what they print.
  A command starts with ``relaypass`` or ``python``; ``pip``, ``python -m pip``,
  ``python -m build`` and ``python -m pytest`` commands are skipped (they
  install or build packages, or run this test suite).  Each must exit 0, or the
  status a ``<!-- docs: exit N -->`` marker gives.
* ``text``, ``toml``, ``json``, ``diff`` and ``yaml`` blocks never run (output
  samples, grammars, files); a fence without a language is an error, so the
  author of every block decides.  ``toml`` blocks must parse.
* Other markers: ``output`` (a text block shows what the previous runnable
  block printed, or a console block's other lines are what its commands print:
  each shown line must appear, in order), ``file PATH`` (the block is the
  shipped file PATH, word for word), ``needs MODULE`` (skipped where MODULE is
  not installed).

Every page runs in a scratch folder holding a copy of ``examples/``, as a
reader's checkout would, so the paths the docs use work and the files they
write land there.  Pages are found by globbing: a new page is covered without
editing this file.
"""

from __future__ import annotations

import builtins
import faulthandler
import importlib.util
import json
import linecache
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")) + ["README.md"]

PYTHON, SHELL, CONSOLE = "python", "sh", "console"
RUNNABLE = {PYTHON, SHELL, CONSOLE}
INERT = {"text", "toml", "json", "diff", "yaml"}
PROGRAMS = ("relaypass", "python", "python3")
#: Commands that install or build packages (the tests run in an installed environment)
#: or run the test suite this test belongs to: shown to readers, never run here.
SKIPPED = re.compile(r"(pip|python3? -m (pip|build|pytest))(\s|$)")
ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
MARKER = re.compile(r"<!--\s*docs:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)[^`]*$")
TIMEOUT = 300  # seconds, for one block or one command


@dataclass
class Block:
    page: str
    line: int  # the line of the opening fence, 1-based
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)
    error: str = ""  # what is wrong with the fence or its markers

    @property
    def first_line(self) -> int:
        return self.line + 1


@dataclass
class Command:
    line: int
    text: str  # what runs (skipped segments of an && chain removed)
    shown: list[str]  # what a console transcript shows it printing
    skipped: bool = False


# --- reading a page ---------------------------------------------------------------------
def parse_markers(comment: str) -> tuple[dict[str, str], str]:
    """The markers of one ``<!-- docs: ... -->`` comment, and what is wrong with them."""
    markers: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in comment.split(","))):
        name, _, value = item.partition(" ")
        value = value.strip()
        if name == "continue" or name == "output":
            if value:
                return markers, f"marker {name!r} takes no value"
        elif name == "exit":
            if not value.isdigit():
                return markers, f"marker 'exit' needs a status: <!-- docs: exit 2 -->, not {item!r}"
        elif name in ("file", "needs"):
            if not value:
                return markers, f"marker {name!r} needs a value"
        else:
            return markers, (f"unknown marker {name!r} (known: continue, output, exit N, "
                             "file PATH, needs MODULE)")
        markers[name] = value
    return markers, ""


def parse_blocks(page: str, text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with the markers written just above each."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, indent, fence = i, len(m["indent"]), m["fence"]
        body = []
        i += 1
        while i < len(lines):
            close = re.match(r"^ *(`{3,}|~{3,})\s*$", lines[i])
            if close and close[1][0] == fence[0] and len(close[1]) >= len(fence):
                break
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        i += 1
        block = Block(page, start + 1, m["lang"].lower(), "\n".join(body) + "\n")
        above = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
        marker = MARKER.fullmatch(above.strip())
        if marker:
            block.markers, block.error = parse_markers(marker[1])
        if not block.lang:
            block.error = ("a fence without a language: tag it python, sh or console to run it, "
                           "text (or toml, json, diff, yaml) if it is not meant to run")
        elif block.lang not in RUNNABLE | INERT:
            block.error = (f"language {block.lang!r} is neither runnable (python, sh, console) "
                           f"nor inert ({', '.join(sorted(INERT))})")
        blocks.append(block)
    return blocks


def shell_commands(block: Block) -> list[Command]:
    """The commands of a sh or console block, continuation lines joined."""
    commands: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line, number = lines[i], block.first_line + i
        i += 1
        if block.lang == CONSOLE:
            if not line.startswith("$ "):
                if commands:
                    commands[-1].shown.append(line)
                elif line.strip():
                    raise ValueError(f"{block.page}:{number}: a console block starts with a "
                                     "'$ ' command line")
                continue
            line = line[2:]
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].lstrip().removeprefix("> ")
            i += 1
        commands.append(_command(block, number, line.strip()))
    return commands


def _command(block: Block, number: int, text: str) -> Command:
    kept = []
    for segment in re.split(r"\s+&&\s+", text):
        program = _strip_env(segment)
        if SKIPPED.match(program):
            continue
        if program.split(" ", 1)[0] not in PROGRAMS:
            raise ValueError(
                f"{block.page}:{number}: {segment!r}: a command in the docs starts with relaypass "
                "or python (pip, python -m pip/build/pytest are skipped); fence it as text if it "
                "is not meant to run")
        kept.append(segment)
    return Command(number, " && ".join(kept), [], skipped=not kept)


def _strip_env(segment: str) -> str:
    while ENV_ASSIGNMENT.match(segment):
        segment = ENV_ASSIGNMENT.sub("", segment, count=1)
    return segment


def missing_lines(shown: list[str], actual: str) -> list[str]:
    """The lines of ``shown`` not found, in order, among the lines of ``actual``.

    Blank lines and ``...`` lines of ``shown`` stand for output the page leaves out.
    """
    lines = [line.rstrip() for line in actual.splitlines()]
    missing, position = [], 0
    for want in (line.rstrip() for line in shown):
        if not want.strip() or want.strip() == "...":
            continue
        try:
            position = lines.index(want, position) + 1
        except ValueError:
            missing.append(want)
    return missing


# --- running a page -----------------------------------------------------------------------
_BIN = os.path.dirname(sys.executable)
#: Commands find this interpreter's ``python`` and ``relaypass`` first; their output
#: interleaves as on a terminal.
ENV = {**os.environ, "PATH": _BIN + os.pathsep + os.environ.get("PATH", ""),
       "PYTHONUNBUFFERED": "1"}


@dataclass
class PageRun:
    """One page's blocks, run in order in ``scratch``; ``failures`` says where and why."""

    page: str
    text: str
    source: Path  # the file the page's tracebacks quote
    scratch: Path
    zygote: Zygote
    failures: list[str] = field(default_factory=list)
    last_output: str | None = None  # what the previous runnable block printed
    last_ran = False  # whether that block ran and succeeded (else there is nothing to compare)
    captures: int = 0

    def fail(self, line: int, message: str) -> None:
        self.failures.append(f"{self.page}:{line}: {message}")

    def run(self) -> list[str]:
        chain_ok = False  # the current python chain has run so far, and may be continued
        seen_python = False
        try:
            for block in parse_blocks(self.page, self.text):
                if block.error:
                    self.fail(block.line, block.error)
                    continue
                self.check_file(block)
                needs = block.markers.get("needs")
                missing = bool(needs) and importlib.util.find_spec(needs) is None
                if block.lang == PYTHON:
                    if "continue" in block.markers:
                        if not seen_python:
                            self.fail(block.line, "'continue' marks a python block that has no "
                                                  "python block before it on its page")
                            continue
                        if not chain_ok:  # the block it continues failed or was skipped
                            self.last_output, self.last_ran = "", False
                            continue
                    else:
                        self.zygote.end_chain()
                    seen_python = True
                    self.last_output, self.last_ran = "", False
                    chain_ok = not missing and self.run_python(block)
                elif block.lang in (SHELL, CONSOLE):
                    self.last_output, self.last_ran = "", False
                    if not missing:
                        self.run_shell(block)
                elif block.lang == "toml":
                    try:
                        tomllib.loads(block.text)
                    except tomllib.TOMLDecodeError as err:
                        self.fail(block.line, f"toml block does not parse: {err}")
                if block.lang in INERT and "output" in block.markers:
                    self.check_output(block.line, block.text.splitlines())
        finally:
            self.zygote.end_chain()
        return self.failures

    def check_file(self, block: Block) -> None:
        path = block.markers.get("file")
        if path is None:
            return
        shipped = ROOT / path
        if not shipped.is_file():
            self.fail(block.line, f"marker 'file {path}': no such file in the repository")
        elif shipped.read_text(encoding="utf-8").rstrip() != block.text.rstrip():
            self.fail(block.line, f"the block differs from {path}: copy one onto the other")

    def check_output(self, line: int, shown: list[str]) -> None:
        if self.last_output is None:
            self.fail(line, "'output' marks a block that follows no runnable block")
        if not self.last_ran:  # it failed (reported already) or was skipped
            return
        missing = missing_lines(shown, self.last_output)
        if missing:
            self.fail(line, "the shown output differs from what ran; not found (in order): "
                            + " | ".join(missing) + "\n--- the output was:\n" + self.last_output)

    def run_python(self, block: Block) -> bool:
        self.captures += 1
        capture = self.scratch.parent / f"capture-{self.captures}.txt"
        ok, output = self.zygote.run(block, self.source, self.scratch, capture)
        self.last_output, self.last_ran = output, ok
        if not ok:
            self.fail(block.first_line, "the python block failed:\n" + output)
        return ok

    def run_shell(self, block: Block) -> None:
        try:
            commands = shell_commands(block)
        except ValueError as err:
            self.failures.append(str(err))
            return
        expected = int(block.markers.get("exit", "0"))
        for command in commands:
            if command.skipped:
                continue
            try:
                done = subprocess.run(["bash", "-c", command.text], cwd=self.scratch, env=ENV,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, text=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.fail(command.line, f"{command.text}: still running after {TIMEOUT} s")
                return
            self.last_output, self.last_ran = done.stdout, done.returncode == expected
            if done.returncode != expected:
                self.fail(command.line, f"{command.text}: exit status {done.returncode}, "
                                        f"expected {expected}:\n{done.stdout}")
                return
            if block.lang == CONSOLE and "output" in block.markers:
                self.check_output(command.line, command.shown)


# --- the worker: python blocks run in processes forked from one warm interpreter ------------
class Zygote:
    """The test's side of the worker (``python test_docs_examples.py --zygote``)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--zygote"], cwd=ROOT, env=ENV,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"the examples' worker ended (status {self.proc.wait()})")
        return json.loads(reply)

    def run(self, block: Block, source: Path, cwd: Path, capture: Path) -> tuple[bool, str]:
        reply = self._ask({"page": block.page, "source": str(source), "line": block.first_line,
                           "code": block.text, "cwd": str(cwd), "capture": str(capture)})
        output = capture.read_text(encoding="utf-8", errors="replace") if capture.exists() else ""
        if "ended" in reply:
            output += f"\n(the example's process ended: {reply['ended']})"
        return reply["ok"], output

    def end_chain(self) -> None:
        self._ask({"end": True})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@dataclass
class _Chain:
    """A process running one chain of blocks: a forked child, or a subprocess without fork."""

    requests: Any
    replies: Any
    pid: int = 0
    proc: subprocess.Popen | None = None

    def end(self) -> str:
        """Close the chain's input (its process then exits); how it ended."""
        try:
            self.requests.close()
        except BrokenPipeError:
            pass
        if self.proc is not None:
            return f"exit status {self.proc.wait()}"
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            return f"signal {os.WTERMSIG(status)}"
        return f"exit status {os.waitstatus_to_exitcode(status)}"


def _start_chain() -> _Chain:
    if not hasattr(os, "fork"):  # pragma: no cover  (Windows: a fresh interpreter per chain)
        proc = subprocess.Popen([sys.executable, __file__, "--chain"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return _Chain(proc.stdin, proc.stdout, proc=proc)
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child: coverage does not follow it)
        os.close(request_w)
        os.close(reply_r)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # an example reading stdin reads nothing
        status = 0
        try:
            _chain_loop(os.fdopen(request_r, "rb"), os.fdopen(reply_w, "wb"))
        except BaseException:
            traceback.print_exc()
            status = 1
        os._exit(status)
    os.close(request_r)
    os.close(reply_w)
    return _Chain(os.fdopen(request_w, "wb"), os.fdopen(reply_r, "rb"), pid=pid)


def _zygote() -> None:
    """Import what examples import, then run each chain of blocks in a fork of this process."""
    import numpy  # noqa: F401

    from relaypass import relay  # noqa: F401
    from relaypass.interp import create_executor  # noqa: F401
    from relaypass.transform import list_passes

    list_passes()  # read the plugins' manifests once, for every fork
    chain: _Chain | None = None
    for raw in sys.stdin.buffer:
        request = json.loads(raw)
        if request.get("end"):
            if chain is not None:
                chain.end()
                chain = None
            reply = {"ok": True}
        else:
            if chain is None:
                chain = _start_chain()
            chain.requests.write(raw)
            chain.requests.flush()
            answer = chain.replies.readline()
            if answer:
                reply = json.loads(answer)
            else:  # it died: os._exit, a crash, or the timeout's faulthandler
                reply = {"ok": False, "ended": chain.end()}
                chain = None
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()
    if chain is not None:
        chain.end()


def _chain_loop(requests: Any, replies: Any) -> None:
    """Run the blocks of one chain as they come, in one namespace, as a notebook would."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    sys.path[0] = ""  # the current folder, as for `python -c` (not this file's folder)
    for raw in requests:
        request = json.loads(raw)
        os.chdir(request["cwd"])
        ok = _exec_block(request, namespace)
        replies.write(json.dumps({"ok": ok}).encode() + b"\n")
        replies.flush()


def _exec_block(request: dict, namespace: dict[str, Any]) -> bool:
    """Run one block with fds 1 and 2 sent to its capture file; whether it succeeded."""
    page = request["page"]
    # Tracebacks name the page and its line, and quote the page.
    text = Path(request["source"]).read_text(encoding="utf-8")
    linecache.cache[page] = (len(text), None, text.splitlines(True), page)
    code = "\n" * (request["line"] - 1) + request["code"]
    with open(request["capture"], "wb") as capture:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(capture.fileno(), 1)
        os.dup2(capture.fileno(), 2)
        faulthandler.dump_traceback_later(TIMEOUT, exit=True)
        ok = True
        try:
            exec(compile(code, page, "exec"), namespace)
        except BaseException as exc:
            ok = isinstance(exc, SystemExit) and exc.code in (None, 0)
            if not ok:
                traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        finally:
            faulthandler.cancel_dump_traceback_later()
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)
    return ok


# --- the tests ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def zygote():
    worker = Zygote()
    yield worker
    worker.close()


def _scratch(tmp_path: Path) -> Path:
    scratch = tmp_path / "checkout"
    shutil.copytree(ROOT / "examples", scratch / "examples", ignore=shutil.ignore_patterns(
        "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"))
    return scratch


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, zygote, tmp_path):
    source = ROOT / page
    failures = PageRun(page, source.read_text(encoding="utf-8"), source, _scratch(tmp_path),
                       zygote).run()
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def _run_text(text: str, zygote: Zygote, tmp_path: Path) -> list[str]:
    source = tmp_path / "page.md"
    source.write_text(text, encoding="utf-8")
    return PageRun("docs/page.md", text, source, _scratch(tmp_path), zygote).run()


def test_python_blocks_are_isolated_unless_continued(zygote, tmp_path):
    failures = _run_text(
        "```python\nx = 41\nimport relaypass.transform as t\nt.register_pass(t.module_pass("
        "lambda m, c: m, opt_level=0, name='Mine'))\n```\n"
        "<!-- docs: continue -->\n```python\nprint(x + 1)\n```\n"
        "<!-- docs: output -->\n```text\n42\n```\n"
        "```python\nimport relaypass.transform as t\nassert 'Mine' not in "
        "{s.name for s in t.list_passes()}\nprint(x)\n```\n", zygote, tmp_path)
    # The third block is fresh: no x (and no pass registered by the first block).
    [failure] = failures
    assert failure.startswith("docs/page.md:15: the python block failed")
    assert 'File "docs/page.md", line 17' in failure and "print(x)" in failure
    assert "NameError: name 'x' is not defined" in failure


def test_shell_commands_run_in_the_scratch_checkout(zygote, tmp_path):
    failures = _run_text(
        "```sh\npython -m pip install relaypass       # skipped\n"
        "relaypass check examples/pipelines/O2.toml\n```\n"
        "<!-- docs: exit 2, output -->\n```console\n$ relaypass check nowhere.toml\n"
        "relaypass: error: nowhere.toml: cannot read the pipeline file (No such file or directory)\n```\n"
        "<!-- docs: output -->\n```console\n$ python -c 'print(1)'\n2\n```\n", zygote, tmp_path)
    [failure] = failures  # only the last block's output differs from what it shows
    assert failure.startswith("docs/page.md:12: the shown output differs")
    assert "not found (in order): 2\n" in failure


@pytest.mark.parametrize("text, message", [
    ("```\nrelaypass passes\n```\n", "docs/page.md:1: a fence without a language"),
    ("```rust\nfn main() {}\n```\n", "language 'rust' is neither runnable"),
    ("<!-- docs: contnue -->\n```python\npass\n```\n", "unknown marker 'contnue'"),
    ("<!-- docs: continue -->\n```python\npass\n```\n", "has no python block before it"),
    ("<!-- docs: exit two -->\n```sh\nrelaypass passes\n```\n", "marker 'exit' needs a status"),
    ("```sh\ntwine upload dist/*\n```\n", "docs/page.md:2: 'twine upload dist/*': a command in the "
                                          "docs starts with relaypass or python"),
    ("```console\nrelaypass passes\n```\n", "a console block starts with a '$ ' command line"),
    ("```toml\npasses = [\n```\n", "docs/page.md:1: toml block does not parse"),
    ("<!-- docs: file examples/pipelines/O2.toml -->\n```toml\nopt_level = 2\n```\n",
     "the block differs from examples/pipelines/O2.toml"),
    ("<!-- docs: output -->\n```text\nhello\n```\n", "follows no runnable block"),
])
def test_page_mistakes_are_reported_with_their_line(text, message, zygote, tmp_path):
    failures = _run_text(text, zygote, tmp_path)
    assert len(failures) == 1 and message in failures[0], failures


def test_install_and_test_suite_commands_are_skipped():
    block = Block("docs/page.md", 1, SHELL,
                  "python -m pip install -e '.[onnx]' && relaypass passes\npip install build\n"
                  "python -m build\npython -m pytest tests\nPYTHONPATH=x relaypass \\\n  passes\n")
    commands = shell_commands(block)
    assert [(c.line, c.text, c.skipped) for c in commands] == [
        (2, "relaypass passes", False), (3, "", True), (4, "", True), (5, "", True),
        (6, "PYTHONPATH=x relaypass  passes", False)]


def test_missing_lines_match_in_order():
    actual = "a\nb 1\nc\n"
    assert missing_lines(["a", "...", "c"], actual) == []
    assert missing_lines(["c", "a"], actual) == ["a"]
    assert missing_lines(["b"], actual) == ["b"]


if __name__ == "__main__":
    if sys.argv[1:] == ["--zygote"]:
        _zygote()
    elif sys.argv[1:] == ["--chain"]:  # pragma: no cover  (platforms without fork)
        _chain_loop(sys.stdin.buffer, os.fdopen(os.dup(1), "wb"))
