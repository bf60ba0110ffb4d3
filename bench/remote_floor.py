"""``door4`` or ``raw4`` alone, ``rounds`` times over one match's script (issue 20, t23floor).

``raw4b`` is ``raw4`` writing bytes encoded beforehand, as ``door4`` does (the identity
serializer of arena's Play): the bridge's own cost is ``door4`` minus ``raw4b``.

``bench/remote.py`` part A times both beside the arena; this runs one path only, so that
an instruction count of the server process can be read per round trip by difference
(start-up, the capture and the bots' launch cancel out), as t22edge counted the arena::

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        .venv/bin/python bench/remote_floor.py door4 1     # then door4 3, raw4 1, raw4 3

(``I refs`` of the 3-round run minus the 1-round run, over the round trips between them;
cachegrind counts every thread of this process, not the bot processes.) Prints the round
trips, and per round trip of its own run: the server CPU (user and system, from
``getrusage``, every thread of the process), its context switches (voluntary: a thread
went to sleep; involuntary: it was preempted) and the p50.
"""

from __future__ import annotations

import resource
import statistics
import sys

import trio
from remote_kit import ScriptSeat, Spawner, Step, die_with_parent, replay_door, replay_raw

from arena.cli.logs import configure_logging
from arena.game import MatchSetup
from arena.referee import Referee, TimeControl
from arena.rules import RuleSet


async def main(path: str, rounds: int, deals: int) -> None:
    script: list[Step] = []
    seats = [ScriptSeat(s, script) for s in range(4)]
    await Referee("script", MatchSetup(RuleSet.from_mapping({"deals": deals}), 7), seats,
                  TimeControl()).run()  # fmt: skip
    latencies: list[float] = []
    cpu = 0.0
    used = [0.0, 0.0, 0.0, 0.0]  # user s, system s, voluntary, involuntary switches
    with Spawner() as spawner:
        for _ in range(rounds):
            before = resource.getrusage(resource.RUSAGE_SELF)
            if path == "door4":
                lat, _wall, c = await replay_door(script, 4, spawner)
            else:
                lat, _wall, c = await replay_raw(script, 4, spawner, encoded=path == "raw4b")
            after = resource.getrusage(resource.RUSAGE_SELF)
            for i, field in enumerate(("ru_utime", "ru_stime", "ru_nvcsw", "ru_nivcsw")):
                used[i] += getattr(after, field) - getattr(before, field)
            latencies += lat
            cpu += c
    n = len(latencies)
    print(
        f"{path}: {n} round trips, server CPU {cpu / n * 1e6:.0f} µs (user "
        f"{used[0] / n * 1e6:.0f}, system {used[1] / n * 1e6:.0f}), context switches "
        f"{used[2] / n:.2f} voluntary + {used[3] / n:.2f} involuntary, p50 "
        f"{statistics.median(latencies) * 1e6:.0f} µs per round trip"
    )


if __name__ == "__main__":
    configure_logging("error")
    die_with_parent()
    path, rounds = sys.argv[1], int(sys.argv[2])
    if path not in ("door4", "raw4", "raw4b"):
        raise SystemExit("usage: remote_floor.py door4|raw4|raw4b ROUNDS [DEALS]")
    trio.run(main, path, rounds, int(sys.argv[3]) if len(sys.argv) > 3 else 4)
