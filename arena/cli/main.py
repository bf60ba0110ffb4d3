"""``arena`` — the command-line entry point: one subcommand per module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from arena import __version__
from arena.cli.logs import configure_logging


def _judge(args: argparse.Namespace) -> int:
    from arena.cli.judge import run

    return run(sys.stdin, sys.stdout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="A referee for bot-versus-bot Tractor (升级 / 拖拉机) matches.",
        epilog="Run 'arena COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    judge = sub.add_parser(
        "judge",
        help="the rules oracle: JSON questions on stdin, one JSON answer per line",
        description="Reads questions as JSON Lines on standard input and answers each on one "
        'line (the format: ../shared/judge-format.md). Example:\n  echo \'{"id":1,"q":"result",'
        '"attacker_points":85}\' | arena judge',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    judge.set_defaults(func=_judge)
    for register in _extra_commands():
        register(sub)
    for command in sub.choices.values():  # module docstrings are reStructuredText
        if command.description:
            command.description = command.description.replace("``", "")
    return parser


# Each other subcommand lives in its own module ``arena.cli.NAME`` with ``register(sub)``
# (a hyphen in the command's name is an underscore in the module's: check-bot → check_bot).
COMMANDS = (
    "selfplay", "match", "serve", "matches", "batch", "tournament", "check-bot", "replay", "show",
    "botzone-seat",
)  # fmt: skip


def _extra_commands() -> list[Callable[[Any], None]]:
    return [
        importlib.import_module(f"arena.cli.{name.replace('-', '_')}").register for name in COMMANDS
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging("warning")  # commands with --log-level reconfigure
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `arena ... | head`: the reader left, nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
