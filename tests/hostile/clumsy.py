"""Plays like sample_bots/random_bot.py, but answers every 5th play with no cards (an
illegal lead or follow), and reconnects like the sample bots when the referee goes away.

    python tests/hostile/clumsy.py --token TOKEN [--seed N] [--reconnect S]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_bots"))

from botkit import Table, parse_args, run
from random_bot import decide

from arena.rules import Card
from arena.v1 import arena_pb2 as pb

plays = 0


def clumsy(request: pb.Request, table: Table, rng: random.Random) -> list[Card]:
    global plays
    if request.kind == pb.PLAY:
        plays += 1
        if plays % 5 == 0:
            return []
    return decide(request, table, rng)


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    rng = random.Random(args.seed)
    return run(
        lambda r, t: clumsy(r, t, rng), "clumsy", args.server, args.token,
        reconnect_for=args.reconnect,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
