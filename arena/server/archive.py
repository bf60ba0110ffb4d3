"""A match's ``MatchInfo``: from memory, or read back from its record once forgotten.

The host forgets a finished match after the retention time (``--retention``), so a
server that runs for days keeps a flat memory; ``Get`` and ``FetchRecord`` then find
the match by its id in the records directory. Runs in a worker thread (file I/O).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from arena.game import Termination
from arena.records import read_record
from arena.rules import Seat
from arena.server import convert
from arena.server.limits import is_match_id
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.server.host import HostedMatch


def live_info(hosted: HostedMatch) -> pb.MatchInfo:
    """The ``MatchInfo`` of a match in memory (trio thread)."""
    remotes = [hosted.remote(s) for s in range(4)]
    info = pb.MatchInfo(
        match_id=hosted.id,
        state=pb.MatchState.Value(hosted.state.value.upper()),
        seat_names=list(hosted.spec.seat_names) or [s.name for s in hosted.seats],
        connected=[r.conn is not None if r is not None else True for r in remotes],
        rules=convert.rules_to_pb(hosted.spec.rules),
        time_control=convert.time_control_to_pb(hosted.spec.time_control),
        error=hosted.error,
    )
    if hosted.referee is not None:
        match = hosted.referee.match
        info.deal = match.snapshot().deal.deal
        info.levels.extend(convert.rank_to_pb(r) for r in match.levels)
        if match.result is not None:
            info.result.CopyFrom(convert.result_to_pb(match.result, hosted.referee.faults))
    return info


def list_page(
    matches: list[HostedMatch], after: int, size: int, wanted: set[int]
) -> tuple[list[pb.MatchInfo], int]:
    """One ``List`` page (trio thread): up to ``size`` matches created after serial
    ``after`` in the ``wanted`` states (all if empty), and the serial to go on from
    (0: this is the last page)."""
    infos: list[pb.MatchInfo] = []
    last = 0
    for hosted in matches:
        if hosted.serial <= after:
            continue
        info = live_info(hosted)
        if wanted and info.state not in wanted:
            continue
        if len(infos) == size:
            return infos, last
        infos.append(info)
        last = hosted.serial
    return infos, 0


def record_path(folder: Path | None, match_id: str) -> Path | None:
    """Where the record of ``match_id`` is, if the id is well formed and the file exists."""
    if folder is None or not is_match_id(match_id):
        return None
    path = folder / f"{match_id}.jsonl"
    return path if path.is_file() else None


def info_from_record(path: Path) -> pb.MatchInfo:
    """The ``MatchInfo`` of a match that is no longer in memory, from its record."""
    record = read_record(path)
    header = record.header
    result = record.result
    info = pb.MatchInfo(match_id=path.stem, connected=[False] * 4)
    if header is not None:
        info.match_id = header.match_id
        info.seat_names.extend(s.name for s in header.seats)
        info.rules.update(convert.rules_to_pb(header.rules))
        info.time_control.CopyFrom(convert.time_control_to_pb(header.time_control))
    if result is None:
        info.state = pb.FAILED
        info.error = "the record ends without a result (the server stopped during the match)"
        return info
    info.state = (
        pb.CANCELLED if result.reason is Termination.CANCELLED
        else pb.FAILED if result.reason is Termination.FAILED else pb.FINISHED
    )  # fmt: skip
    info.deal = result.deals
    info.levels.extend(convert.rank_to_pb(r) for r in result.levels)
    info.result.CopyFrom(convert.result_to_pb(result))
    if record.footer is not None:
        penalties, counts = [0, 0], [0, 0, 0, 0]
        for fault in record.footer.faults:
            try:
                seat = Seat(int(fault.get("seat", 0)))
            except (TypeError, ValueError):  # a damaged footer entry: no seat to charge
                continue
            penalties[seat.team] += int(fault.get("penalty_points", 0))
            counts[seat] += 1
        info.result.fault_penalty_points[:] = penalties
        info.result.fault_counts[:] = counts
    return info


__all__ = ["info_from_record", "list_page", "live_info", "record_path"]
