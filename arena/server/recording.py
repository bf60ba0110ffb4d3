"""Where ``arena match`` and ``arena serve`` write their match records."""

from __future__ import annotations

from pathlib import Path

from arena.game import MatchSetup, Recorder
from arena.records import RecordHeader, RecordWriter, SeatRecord
from arena.server.host import HostedMatch, RecorderFactory


def record_factory(path: str | None, folder: str = "records") -> RecorderFactory:
    """Records go to ``path`` if given (one match), else ``folder/<match id>.jsonl``."""

    def open_record(hosted: HostedMatch) -> tuple[Recorder | None, str]:
        target = Path(path) if path else Path(folder) / f"{hosted.id}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        spec = hosted.spec
        seats = []
        for seat, s in enumerate(hosted.seats):
            token = hosted.tokens[seat]
            bot = spec.seat_names[seat] if spec.seat_names else s.name
            seats.append(
                SeatRecord.from_token(s.name, bot, s.version, token)
                if token
                else SeatRecord(s.name, bot, s.version)
            )
        header = RecordHeader.for_setup(
            hosted.id,
            MatchSetup(spec.rules, hosted.seed, dict(spec.stacked)),
            seats,
            spec.time_control,
            spec.policy,
        )
        return RecordWriter.open(target, header, overwrite=bool(path)), str(target)

    return open_record
