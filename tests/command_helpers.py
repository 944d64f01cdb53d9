"""For the tests of commands whose code lives in a module of its own (batch, compare-reports, viz).

Each such module has ``register(subparsers, parents)``; the CLI wires it in.
Tests that run the command as a user does (a subprocess) need that wiring:
:func:`needs_command` skips them until it is there.  The other tests call the
module's functions directly.
"""

from __future__ import annotations

import argparse

import pytest


def command_wired(name: str) -> bool:
    """Whether ``relaypass NAME`` is a command of the CLI's parser."""
    from relaypass.tools.cli import build_parser

    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return name in action.choices
    return False


def needs_command(name: str) -> pytest.MarkDecorator:
    """Skip a test until ``relaypass NAME`` is wired into the CLI."""
    return pytest.mark.skipif(not command_wired(name),
                              reason=f"relaypass {name} is not wired into tools/cli.py yet")


def parse_command(module: object, *args: str) -> argparse.Namespace:
    """``args`` parsed by the parser ``module.register`` adds, as the CLI would parse them."""
    parser = argparse.ArgumentParser(prog="relaypass")
    sub = parser.add_subparsers(dest="command")
    module.register(sub, [])  # type: ignore[attr-defined]
    return parser.parse_args([str(a) for a in args])
