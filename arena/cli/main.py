"""``arena`` — the command-line entry point: one subcommand per module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from arena import __version__
from arena.cli.convention import (
    ArenaParser,
    UsageError,
    failure_line,
    finish_commands,
    is_interrupt,
)
from arena.cli.logs import configure_logging


def _judge(args: argparse.Namespace) -> int:
    from arena.cli.judge import run

    return run(sys.stdin, sys.stdout)


def build_parser() -> argparse.ArgumentParser:
    parser = ArenaParser(
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
    finish_commands(sub)
    return parser


# Each other subcommand lives in its own module ``arena.cli.NAME`` with ``register(sub)``
# (a hyphen in the command's name is an underscore in the module's: check-bot → check_bot).
COMMANDS = (
    "selfplay", "match", "serve", "matches", "batch", "tournament", "check-bot", "replay", "show",
    "botzone-seat", "bots", "events",
)  # fmt: skip


def _extra_commands() -> list[Callable[[Any], None]]:
    return [
        importlib.import_module(f"arena.cli.{name.replace('-', '_')}").register for name in COMMANDS
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging("warning")  # commands with --log-level reconfigure
    name = getattr(args, "prog", "arena")
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `arena ... | head`: the reader left, nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # the convention: one line, the traceback only with --debug
        if is_interrupt(exc):
            return 130
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"{name}: {failure_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
