"""``sample_bots/random_bot.py`` with a stopwatch, for bench/bots.py.

    python bench/bots/timed_bot.py KIT_DIR [botkit options...]

KIT_DIR holds the ``botkit`` and ``random_bot`` to measure (``sample_bots``, or an older
copy of them). On exit it prints one JSON line: decisions, the process's CPU seconds from
its first decision to its last (the client's share and ``decide``'s, all threads: one
decision's cost times decisions - 1), and ``decide``'s own CPU seconds (its thread) — so
the start-up (imports, the connection) and the shutdown are left out.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any


def main() -> int:
    kit = sys.argv[1]
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    sys.path.insert(0, kit)
    import botkit  # the kit under test, from KIT_DIR
    import random_bot

    args = botkit.parse_args("timed random bot")
    rng = random.Random(args.seed)
    stats: dict[str, Any] = {"decisions": 0, "decide_s": 0.0, "first": None, "last": None}

    def timed(request: Any, table: Any) -> Any:
        started = time.thread_time()
        stats["last"] = time.process_time()
        if stats["first"] is None:
            stats["first"] = stats["last"]
        chosen = random_bot.decide(request, table, rng)
        stats["decide_s"] += time.thread_time() - started
        stats["decisions"] += 1
        return chosen

    code = botkit.run(timed, "timed", args.server, args.token, reconnect_for=5)
    first, last = stats.pop("first"), stats.pop("last")
    print(json.dumps({**stats, "code": code, "cpu_s": (last or 0) - (first or 0)}), flush=True)
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
