"""Running the ``relaypass`` command as a user does, in a subprocess, for the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: The command line that starts the CLI of this checkout.
CLI = [sys.executable, "-m", "relaypass.tools.cli"]


def relaypass(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
              **kwargs) -> subprocess.CompletedProcess:
    """Run ``relaypass ARGS`` (text mode; ``env`` is added to the environment)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=full_env, timeout=600, **kwargs)


def run_all(calls: dict, cwd: Path | None = None) -> dict:
    """Run independent invocations at once: ``{key: args}`` gives ``{key: CompletedProcess}``."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {k: pool.submit(relaypass, *args, cwd=cwd) for k, args in calls.items()}
        return {k: f.result() for k, f in futures.items()}


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The one ``relaypass: error: ...`` line of a failed command (exit status 2), checked."""
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("relaypass: error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def on_a_terminal(args: list[object], cwd: Path | None = None) -> tuple[int, str, str]:
    """Run ``relaypass ARGS`` with stderr on a pseudo-terminal: (status, terminal text, stdout).

    stdout goes to a file, so that neither stream can fill up while the
    other is read.
    """
    import pty
    import tempfile

    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen([*CLI, *map(str, args)], stdout=out, stderr=slave, cwd=cwd)
            os.close(slave)
            slave = -1
            chunks = []
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the terminal's other end closed
                    break
                if not data:
                    break
                chunks.append(data)
            code = proc.wait(timeout=600)
        finally:
            if slave >= 0:
                os.close(slave)
            os.close(master)
        out.seek(0)
        return code, b"".join(chunks).decode(), out.read().decode()
