"""``bench/remote.py``'s ``door4`` path: the recorded requests of a match replayed to four
real ``bench/bots/fallback_bot.py`` processes through arena's own bridge (seat doors,
hops, play writers), every round trip answered and timed, the doors actually used."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.game import MatchSetup
from arena.referee import Referee, TimeControl
from arena.rules import RuleSet

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import remote_kit  # a bench module, found on the path just set


def test_door_replay_answers_every_request_through_the_doors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seats: list[remote_kit.DoorSeat] = []
    made = remote_kit.DoorSeat.__init__

    def keep(self: remote_kit.DoorSeat, writer: Any) -> None:
        made(self, writer)
        seats.append(self)

    monkeypatch.setattr(remote_kit.DoorSeat, "__init__", keep)

    async def main() -> tuple[int, tuple[list[float], float, float]]:
        script: list[remote_kit.Step] = []
        in_process = [remote_kit.ScriptSeat(s, script) for s in range(4)]
        rules = RuleSet.from_mapping({"deals": 1})
        await Referee("script", MatchSetup(rules, 7), in_process, TimeControl()).run()
        with remote_kit.Spawner() as spawner:
            return len(script), await remote_kit.replay_door(script, 4, spawner)

    steps, (latencies, wall, cpu) = trio.run(main)
    assert steps > 50 and len(latencies) == steps
    assert wall > 0 and cpu > 0 and all(x > 0 for x in latencies)
    assert len(seats) == 4
    assert sum(s.writer.delivered for s in seats) == steps + 4  # and each seat's MatchEnd
    assert sum(s.door.direct for s in seats) > 0  # answers reached the waiting task directly
