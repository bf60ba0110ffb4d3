"""``arena`` — the command-line entry point: one subcommand per module."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from arena import __version__
from arena.cli import (
    batch,
    bots,
    botzone_seat,
    check_bot,
    events,
    judge,
    match,
    matches,
    replay,
    selfplay,
    serve,
    show,
    tournament,
)
from arena.cli.convention import (
    ArenaParser,
    UsageError,
    failure_line,
    finish_commands,
    is_interrupt,
)
from arena.cli.logs import configure_logging

COMMANDS: tuple[ModuleType, ...] = (
    judge, selfplay, match, serve, matches, batch, tournament, check_bot, replay, show,
    botzone_seat, bots, events,
)  # fmt: skip
"""Every subcommand: a module of this package whose ``register(sub)`` adds its parser
(name, help, options and ``func``), in the order ``arena --help`` lists them. A new
command is a new module listed here, nothing else."""


def build_parser() -> ArenaParser:
    parser = ArenaParser(
        prog="arena",
        description="A referee for bot-versus-bot Tractor (升级 / 拖拉机) matches.",
        epilog="Run 'arena COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(sub)
    finish_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging("warning")  # commands with --log-level reconfigure
    name = args.prog  # every command has it (finish_commands)
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
        if args.debug:
            traceback.print_exc()
        print(f"{name}: {failure_line(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
