"""``arena`` — the command-line entry point: one subcommand per module."""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Final

from arena import __version__
from arena.cli.convention import (
    ArenaParser,
    UsageError,
    failure_line,
    finish_commands,
    is_interrupt,
)


@dataclasses.dataclass(frozen=True, slots=True)
class Command:
    """A subcommand: its name as typed, its line in ``arena --help``, and the module of
    this package whose ``register(sub)`` adds its parser (name, help, options, ``func``)."""

    name: str
    summary: str
    module: str

    def load(self) -> ModuleType:
        """The command's module, imported now (only the command being run is)."""
        return importlib.import_module(self.module)


COMMANDS: Final[tuple[Command, ...]] = (
    Command("judge", "the rules oracle: JSON questions on stdin, one JSON answer per line",
            "arena.cli.judge"),
    Command("selfplay", "play matches in-process between built-in bots (no network)",
            "arena.cli.selfplay"),
    Command("match", "play one match between four bots over gRPC", "arena.cli.match"),
    Command("serve", "run a long-lived referee server (matches created over gRPC)",
            "arena.cli.serve"),
    Command("matches",
            "the organiser's client: create, list, get, cancel, watch, fetch matches",
            "arena.cli.matches"),
    Command("batch",
            "run many matches headless (parallel, duplicate deals, records, summary)",
            "arena.cli.batch"),
    Command("tournament",
            "every partnership of two or more bots, duplicate deals, openskill ratings",
            "arena.cli.tournament"),
    Command("check-bot",
            "CI check: play a bot in hard positions and random matches, report its faults",
            "arena.cli.check_bot"),
    Command("replay",
            "check a match record; --verify re-simulates it and compares every event",
            "arena.cli.replay"),
    Command("show", "render a match record for people: hands, bids, tricks, faults, results",
            "arena.cli.show"),
    Command("botzone-seat", "seat a Botzone bot (stdin/stdout JSON) in an arena match",
            "arena.cli.botzone_seat"),
    Command("bots",
            "register competition bots, list them, disable them, rotate their keys",
            "arena.cli.bots"),
    Command("events",
            "create competition events (round robin, Swiss) and show their standings",
            "arena.cli.events"),
)  # fmt: skip
"""Every subcommand, in the order ``arena --help`` lists them. A new command is a new
module of this package with ``register(sub)``, listed here, nothing else.

Why a table and not the modules themselves: a command's module imports what it runs
(grpc, trio, sqlalchemy, msgspec...), about a second in all, and ``arena --help`` or
``arena judge`` must not pay for every other command's. So the parser is built with
the one command being run registered by its module, the others as a name and a line
(``tests/test_cli_startup.py`` checks the summaries match the modules' own help)."""


def build_parser(argv: Sequence[str] | None = None) -> ArenaParser:
    """The ``arena`` parser. Given the command line, only the command it names (if any)
    is imported and registered in full; without it, every command is (tests, docs)."""
    parser = ArenaParser(
        prog="arena",
        description="A referee for bot-versus-bot Tractor (升级 / 拖拉机) matches.",
        epilog="Run 'arena COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    for command in COMMANDS:
        if chosen is None or command.name == chosen:
            command.load().register(sub)
        else:
            sub.add_parser(command.name, help=command.summary)
    finish_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if "structlog" in sys.modules:  # a command that never imports it never logs (judge)
        from arena.cli.logs import configure_logging

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
