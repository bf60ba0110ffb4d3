"""A random bot that thinks ``ARENA_THINK_MS`` (default 30) before each answer, so a
browser test can see a trick while it is being played. Used by tests/test_web*.py.

    python tests/slow_bot.py --server HOST:PORT --token TOKEN
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_bots"))

from botkit import parse_args, run
from random_bot import decide

THINK = float(os.environ.get("ARENA_THINK_MS", "30")) / 1000


def main() -> int:
    args = parse_args("slow random bot")
    rng = random.Random(args.seed)

    def slow(request, table):  # type: ignore[no-untyped-def]
        time.sleep(THINK)
        return decide(request, table, rng)

    return run(slow, args.name or "slow_bot", args.server, args.token, reconnect_for=5)


if __name__ == "__main__":
    sys.exit(main())
