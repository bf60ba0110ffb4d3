"""``arena botzone-seat -- CMD``: seat an unmodified Botzone bot in any arena match.

Connects to an arena server as a gRPC client with a seat token (like any bot) and runs
CMD, a bot written for Botzone's Tractor (botzone.org.cn), translating each request
into Botzone's JSON and the bot's answers back. Both Botzone process modes work (a
fresh process per turn, or keep-running) and are told apart automatically. Botzone's
verdicts (NJ, NR, RE, TLE, INVALID_POKERID, NOT_YOUR_POKER) become arena faults with
the Botzone name in the reason. ``botzone:CMD`` as a bot command in ``arena match``,
``batch``, ``tournament`` and ``check-bot`` runs this command. See docs/botzone.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from arena.botzone.client import add_seat_options


def register(sub: Any) -> None:
    p = sub.add_parser(
        "botzone-seat",
        help="seat a Botzone bot (stdin/stdout JSON) in an arena match",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  arena botzone-seat --server 127.0.0.1:50051 --token T -- python3 bot.py\n"
        "  arena match --bot 'botzone:python3 bot.py' --bot builtin:greedy "
        "--bot builtin:greedy --bot builtin:greedy --rules botzone",
    )
    add_seat_options(p)
    p.add_argument("--name", default="", help="the name sent to the referee (default: CMD's)")
    p.add_argument(
        "--globaldata",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep the bot's globaldata in FILE across matches (read at start, "
        "rewritten when the bot changes it)",
    )
    p.add_argument(
        "--simple",
        action="store_true",
        help="use Botzone's simplified interaction (line-based) instead of JSON",
    )
    p.add_argument("--verbose", action="store_true", help="log every decision's time")
    p.add_argument(
        "bot", nargs=argparse.REMAINDER, metavar="-- CMD", help="the bot's command line, after --"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from arena.batch.runner import bot_name
    from arena.botzone.seat import BotzoneSeat, SeatOptions

    argv = list(args.bot)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("arena botzone-seat: no bot command (give it after --)", file=sys.stderr)
        return 2
    name = args.name or bot_name(shlex.join(argv))
    options = SeatOptions(argv, args.simple, args.globaldata, name, args.verbose)
    return BotzoneSeat(options).run(args.server, args.token)
