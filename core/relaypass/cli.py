"""The ``relaypass`` command line.

Errors caused by input (every :class:`~relaypass.errors.RelayPassError`, a
missing file, a TOML syntax error) print one line and exit with status 2;
``--traceback`` shows the full traceback instead, for bug reports.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_INPUT_ERROR = 2


def _cmd_print(args: argparse.Namespace) -> int:
    from .ir.io import load

    text = load(args.model).astext()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="relaypass",
        description="Run Relay-style compiler pass pipelines on tensor programs.",
    )
    parser.add_argument("--version", action="version", version=f"relaypass {__version__}")
    parser.add_argument("--traceback", action="store_true", help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_print = sub.add_parser("print", help="parse a Relay text model and print it back")
    p_print.add_argument("model", help="a .relay text file")
    p_print.set_defaults(func=_cmd_print)
    return parser


def _is_input_error(exc: BaseException) -> bool:
    from .errors import RelayPassError

    if isinstance(exc, (RelayPassError, FileNotFoundError, IsADirectoryError, PermissionError)):
        return True
    return type(exc).__name__ == "TOMLDecodeError"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_INPUT_ERROR
    try:
        return args.func(args)
    except Exception as exc:
        if args.traceback or not _is_input_error(exc):
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"relaypass: error: {message}", file=sys.stderr)
        return EXIT_INPUT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
