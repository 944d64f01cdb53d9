"""Command-line values the commands share, checked by argparse itself.

A type function here raises ``argparse.ArgumentTypeError``, so a bad value
is a usage error: one line naming the option, exit status 2, before anything
runs (``relaypass run --rtol -1`` never gets to load the model).  The
commands of other modules (``relaypass optimize``) use the same ones, so one
option means one thing everywhere.
"""

from __future__ import annotations

import argparse

__all__ = ["tolerance"]


def tolerance(text: str) -> float:
    """An --rtol/--atol value: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"a tolerance is a finite number >= 0, not {text}")
    return value
