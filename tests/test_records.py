"""Match records (docs/records.md): write, read, replay and verify, tamper, truncate, show."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bots import make_bot
from arena.cli.main import main
from arena.errors import StateError
from arena.game import Action, Bot, Kind, MatchMachine, MatchSetup, Request
from arena.records import (
    NullRecorder,
    Record,
    RecordHeader,
    RecordWriter,
    SeatRecord,
    parse_record,
    read_record,
    verify,
)
from arena.records.format import dump_line, event_from_dict
from arena.referee import FaultPolicy, LocalSeat, PolicyKind, Referee, TimeControl, play_match
from arena.rules import BIG_JOKER, RuleSet, codes

ROOT = Path(__file__).resolve().parent.parent


# -- helpers -------------------------------------------------------------------------------


def header(setup: MatchSetup, match_id: str = "m-test") -> RecordHeader:
    seats = [
        SeatRecord.from_token(f"bot{i}", "builtin:random", "0.1", f"secret-token-{i}")
        for i in range(4)
    ]
    return RecordHeader.for_setup(
        match_id, setup, seats, TimeControl(decision_ms=1000, bank_ms=30000), FaultPolicy()
    )


class Clumsy:
    """Answers illegally every ``every``-th decision, else like the wrapped bot."""

    def __init__(self, bot: Bot, every: int = 7) -> None:
        self.bot, self.every, self.calls = bot, every, 0
        self.name = "clumsy"

    def decide(self, request: Request) -> Action:
        self.calls += 1
        if self.calls % self.every:
            return self.bot.decide(request)
        kind = request.decision.kind
        return (BIG_JOKER,) if kind is Kind.BID else ()  # a lone joker never bids


class Passer:
    """Never bids (so the first deal is redealt), else like the wrapped bot."""

    def __init__(self, bot: Bot) -> None:
        self.bot, self.name = bot, "passer"

    def decide(self, request: Request) -> Action:
        return () if request.decision.kind is Kind.BID else self.bot.decide(request)


def bots_for(
    seed: int, names: Sequence[str] = ("random", "greedy", "random", "greedy")
) -> list[Bot]:
    return [make_bot(n, seed * 4 + s) for s, n in enumerate(names)]


def write_selfplay(
    path: Path, seed: int, deals: int | None = 1, bots: Sequence[Bot] | None = None
) -> MatchMachine:
    setup = MatchSetup(RuleSet(deals=deals), seed)
    with RecordWriter.open(path, header(setup)) as writer:
        match = play_match(setup, bots or bots_for(seed), recorder=writer)
    assert writer.closed
    return match


def referee_record(
    path: Path,
    setup: MatchSetup,
    bots: Sequence[Bot],
    *,
    penalty: int = 0,
    max_faults: int = 10**6,
    strict: bool = False,
) -> MatchMachine:
    """A match refereed by the real core under a given policy, recorded to ``path``."""
    policy = FaultPolicy(PolicyKind.STRICT if strict else PolicyKind.LENIENT, penalty, max_faults)
    with RecordWriter.open(path, header(setup)) as writer:
        match = play_match(setup, bots, recorder=writer, policy=policy)
    assert writer.closed
    return match


def cancelled_record(path: Path, setup: MatchSetup, bots: Sequence[Bot], after: int) -> Referee:
    """The trio referee with in-process seats, cancelled by its organiser after ``after``
    decisions: the real cancel path."""
    asked = 0

    async def main() -> Referee:
        with RecordWriter.open(path, header(setup)) as writer:
            async with trio.open_nursery() as nursery:

                async def think(request: Request) -> None:
                    nonlocal asked
                    asked += 1
                    if asked > after:
                        nursery.cancel_scope.cancel()
                    await trio.lowlevel.checkpoint()

                seats = [LocalSeat(b, think) for b in bots]
                referee = Referee("m-test", setup, seats, recorder=writer)
                referee.cancel_reason = "stopped by the test"
                nursery.start_soon(referee.run)
        return referee

    return trio.run(main)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def rewrite(path: Path, n: int, change: Any) -> None:
    """Re-encode line ``n`` after ``change(obj)`` edits it in place (valid JSON stays)."""
    lines = lines_of(path)
    obj = json.loads(lines[n])
    change(obj)
    lines[n] = dump_line(obj)
    path.write_bytes(b"".join(lines))


def first_line(path: Path, predicate: Any, start: int = 1) -> int:
    for i, raw in enumerate(lines_of(path)):
        if i >= start and predicate(json.loads(raw)):
            return i
    raise AssertionError("no such line")


def is_event(kind: str) -> Any:
    return lambda o: o["type"] == "event" and o["event"]["type"] == kind


@pytest.fixture
def short(tmp_path: Path) -> Path:
    path = tmp_path / "short.jsonl"
    write_selfplay(path, seed=5, deals=1)
    return path


# -- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_round_trip(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "r.jsonl"
    match = write_selfplay(path, seed, deals=2)
    record = read_record(path)
    assert record.complete and record.problems == []
    assert record.events() == match.events
    first = verify(record)
    assert first.ok, str(first)
    assert first.result == match.result and first.events == tuple(match.events)
    again = verify(read_record(path))
    event_lines = [line for line in record.lines if line.type == "event"]
    assert len(event_lines) == len(again.events)
    for line, event in zip(event_lines, again.events, strict=True):  # byte-identical
        assert dump_line({"n": line.n, "type": "event", "event": event.to_dict()}) == line.raw


@pytest.mark.parametrize("seed", [0, 1])
def test_round_trip_whole_match(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "whole.jsonl"
    match = write_selfplay(path, seed, deals=None)
    result = verify(read_record(path))
    assert result.ok, str(result)
    assert result.result == match.result and match.result is not None
    assert match.result.reason in ("level_a_kept", "passed_a")


def test_header_roster_and_no_token(short: Path) -> None:
    record = read_record(short)
    setup = MatchSetup(RuleSet(deals=1), 5)
    assert record.header == header(setup)
    assert record.header is not None and record.header.setup.seed == 5
    text = short.read_text()
    assert "secret-token" not in text
    first = json.loads(lines_of(short)[0])
    assert list(first) == [
        "n", "type", "format", "version", "arena_version", "match_id", "rules", "seed",
        "stacked", "time_control", "policy", "seats",
    ]  # fmt: skip
    assert (first["format"], first["version"]) == ("arena-record", 2)


def test_every_line_is_numbered_and_the_footer_counts_them(short: Path) -> None:
    objs = [json.loads(raw) for raw in lines_of(short)]
    assert [o["n"] for o in objs] == list(range(len(objs)))
    assert objs[-1]["type"] == "footer" and objs[-1]["lines"] == len(objs) - 1
    decks = [o for o in objs if o["type"] == "deck"]
    assert len(decks) == 1 and len(decks[0]["cards"]) == 108
    assert objs[1]["type"] == "deck" and objs[2]["event"]["type"] == "deal_started"


def test_inputs_come_before_their_events(short: Path) -> None:
    objs = [json.loads(raw) for raw in lines_of(short)]
    for i, o in enumerate(objs):
        if o["type"] == "answer" and o["kind"] == "play":
            after = next(x for x in objs[i + 1 :] if x["type"] != "answer")
            assert after["type"] == "event"
            assert after["event"]["type"] in ("cards_played", "throw_failed")
            assert after["event"]["seat"] == o["seat"]


def test_events_rebuild_from_json(short: Path) -> None:
    for event in read_record(short).events():
        assert event_from_dict(event.to_dict()) == event


def test_redeals_and_stacked_decks(tmp_path: Path) -> None:
    path = tmp_path / "redeal.jsonl"
    base = MatchSetup(RuleSet(deals=1), 9)
    stacked = MatchSetup(base.rules, 9, {1: MatchMachine(base).decks[0][2][::-1]})
    with RecordWriter.open(path, header(stacked)) as writer:
        play_match(stacked, [Passer(b) for b in bots_for(9)], recorder=writer)
    record = read_record(path)
    assert [(d.deal, d.attempt) for d in record.decks()] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    assert record.header is not None and record.header.stacked[1] == stacked.stacked[1]
    deals = record.deals()
    assert [d.redealt is not None for d in deals] == [True, True, True, False]
    assert deals[-1].trump is not None and deals[-1].trump.source == "redeal_fallback"
    assert verify(record).ok


def test_faults_penalties_and_the_footer(tmp_path: Path) -> None:
    path = tmp_path / "faults.jsonl"
    bots = [Clumsy(b, every=5 + s) for s, b in enumerate(bots_for(3))]
    match = referee_record(path, MatchSetup(RuleSet(deals=2), 3), bots, penalty=10)
    record = read_record(path)
    faulted = [a for a in record.answers() if a.fault]
    assert faulted and record.footer is not None
    assert len(record.footer.faults) == len(faulted)
    assert all(a.sent is not None and a.fault_kind == "illegal_action" for a in faulted)
    assert any(line.type == "penalty" for line in record.lines)
    assert sum(len(d.faults) for d in record.deals()) == len(faulted)
    result = verify(record)
    assert result.ok, str(result)
    assert result.result == match.result


def test_selfplay_records_faults(tmp_path: Path) -> None:
    path = tmp_path / "clumsy.jsonl"
    bots = [Clumsy(b, every=6) for b in bots_for(4)]
    write_selfplay(path, 4, deals=1, bots=bots)
    record = read_record(path)
    assert record.footer is not None and record.footer.faults
    assert verify(record).ok


@pytest.mark.parametrize("strict", [True, False])
def test_forfeits_replay(tmp_path: Path, strict: bool) -> None:
    path = tmp_path / "forfeit.jsonl"
    bots = [Clumsy(b, every=4) for b in bots_for(2)]
    match = referee_record(path, MatchSetup(RuleSet(deals=3), 2), bots, strict=strict, max_faults=3)
    assert match.result is not None and match.result.forfeited is not None
    record = read_record(path)
    assert any(line.type == "forfeit" for line in record.lines)
    result = verify(record)
    assert result.ok, str(result)


def test_cancel_replays(tmp_path: Path) -> None:
    path = tmp_path / "cancel.jsonl"
    match = cancelled_record(path, MatchSetup(RuleSet(), 8), bots_for(8), after=150).match
    assert match.result is not None and match.result.reason == "cancelled"
    assert match.result.detail == "stopped by the test"
    result = verify(read_record(path))
    assert result.ok, str(result)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**40), deals=st.integers(1, 2))
def test_replay_equals_original(seed: int, deals: int) -> None:
    setup = MatchSetup(RuleSet(deals=deals), seed)
    buffer = _Buffer()
    writer = RecordWriter(buffer, header(setup))
    match = play_match(setup, bots_for(seed % 1000), recorder=writer)
    result = verify(parse_record(buffer.getvalue()))
    assert result.ok, str(result)
    assert result.events == tuple(match.events)


class _Buffer(io.BytesIO):
    def close(self) -> None:  # keep the bytes readable after the writer closes
        pass


# -- the writer ----------------------------------------------------------------------------


def test_writer_refuses_an_existing_file_and_calls_after_close(short: Path) -> None:
    setup = MatchSetup(RuleSet(deals=1), 5)
    with pytest.raises(FileExistsError):
        RecordWriter.open(short, header(setup))
    writer = RecordWriter.open(short, header(setup), overwrite=True, fsync=True)
    writer.cancel("nothing")
    with pytest.raises(StateError):  # no match_ended written, no result given
        writer.close()
    writer.close(MatchMachine(setup).cancel("nothing")[0])
    with pytest.raises(StateError):
        writer.cancel("again")
    assert read_record(short).complete


def test_a_crashed_writer_leaves_an_incomplete_record(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    setup = MatchSetup(RuleSet(deals=1), 1)
    with pytest.raises(RuntimeError), RecordWriter.open(path, header(setup)) as writer:
        play_match(setup, bots_for(1), recorder=_Crashing(writer, after=300))
    record = read_record(path)
    assert not record.complete and record.problems == []
    result = verify(record)
    assert not result.ok and result.message == f"incomplete: last complete line {result.line}"


class _Crashing:
    """Passes calls to a writer, then raises as if the referee had crashed."""

    def __init__(self, writer: RecordWriter, after: int) -> None:
        self.writer, self.after = writer, after

    def __getattr__(self, name: str) -> Any:
        if self.writer.lines > self.after:
            raise RuntimeError("referee crashed")
        return getattr(self.writer, name)


def test_null_recorder_plays_along() -> None:
    setup = MatchSetup(RuleSet(deals=1), 2)
    recorder = NullRecorder()
    with recorder:
        match = play_match(setup, bots_for(2), recorder=recorder)
    assert match.finished and recorder.closed


# -- tampering -----------------------------------------------------------------------------


def failure(path: Path) -> tuple[int | None, str]:
    result = verify(read_record(path))
    assert not result.ok
    return result.line, result.message


def test_a_changed_card_in_an_event(short: Path) -> None:
    n = first_line(short, is_event("cards_played"), start=150)

    def change(o: dict[str, Any]) -> None:
        card = o["event"]["cards"][0]
        o["event"]["cards"][0] = "BJ" if card != "BJ" else "SJ"

    rewrite(short, n, change)
    line, message = failure(short)
    assert line == n and "cards_played" in message and "cards" in message


def test_a_changed_event_is_caught_even_with_a_fixed_digest(short: Path) -> None:
    n = first_line(short, is_event("trick_won"))
    rewrite(short, n, lambda o: o["event"].update(points=o["event"]["points"] + 5))
    lines = lines_of(short)
    record = parse_record(b"".join(lines))
    rewrite(short, len(lines) - 1, lambda o: o.update(digest=record.digest))  # re-"sign"
    assert read_record(short).problems == []
    line, message = failure(short)
    assert line == n and "trick_won" in message and "points" in message


def test_a_dropped_line(short: Path) -> None:
    lines = lines_of(short)
    n = first_line(short, is_event("trick_won"))
    short.write_bytes(b"".join(lines[:n] + lines[n + 1 :]))
    line, message = failure(short)
    assert line == n and "missing" in message


def test_swapped_lines(short: Path) -> None:
    lines = lines_of(short)
    n = first_line(short, is_event("cards_played"), start=150)
    lines[n], lines[n + 1] = lines[n + 1], lines[n]
    short.write_bytes(b"".join(lines))
    line, _ = failure(short)
    assert line == n


def test_an_edited_footer_result(short: Path) -> None:
    n = len(lines_of(short)) - 1
    rewrite(short, n, lambda o: o["result"].update(winner=1 - (o["result"]["winner"] or 0)))
    line, message = failure(short)
    assert line == n and "result" in message


def test_an_edited_footer_count(short: Path) -> None:
    n = len(lines_of(short)) - 1
    rewrite(short, n, lambda o: o.update(lines=o["lines"] - 1))
    line, message = failure(short)
    assert line == n and "counts" in message


def test_a_wrong_digest(short: Path) -> None:
    n = len(lines_of(short)) - 1
    rewrite(short, n, lambda o: o.update(digest="sha256:" + "0" * 64))
    line, message = failure(short)
    assert line == n and "digest" in message


def test_a_changed_answer(short: Path) -> None:
    n = first_line(short, lambda o: o["type"] == "answer" and o["kind"] == "play")

    def change(o: dict[str, Any]) -> None:
        o["played"] = o["sent"] = ["BJ", "BJ", "BJ"]

    rewrite(short, n, change)
    line, message = failure(short)
    assert line == n and "refuses" in message


def test_a_changed_deck(short: Path) -> None:
    n = first_line(short, lambda o: o["type"] == "deck")
    rewrite(short, n, lambda o: o.update(cards=o["cards"][::-1]))
    line, message = failure(short)
    assert line == n and "deck" in message


def test_a_removed_fault_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    referee_record(path, MatchSetup(RuleSet(deals=1), 6), [Clumsy(b, 5) for b in bots_for(6)])
    n = len(lines_of(path)) - 1
    rewrite(path, n, lambda o: o.update(faults=o["faults"][1:]))
    line, message = failure(path)
    assert line == n and "faults" in message


def test_a_bad_line_in_the_middle(short: Path) -> None:
    lines = lines_of(short)
    lines[40] = b'{"n": 40, "type": "event", "event": {oops\n'
    short.write_bytes(b"".join(lines))
    record = read_record(short)
    assert record.problems[0].startswith("line 40: not valid JSON")
    assert len(record.lines) == len(lines) - 1  # the rest is still read
    assert failure(short)[0] == 40


# -- truncation ----------------------------------------------------------------------------


def test_truncation_at_any_byte_reads_as_incomplete(short: Path) -> None:
    data = short.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    offsets = set(range(0, 1200)) | set(range(len(data) - 300, len(data), 3))  # header, footer
    offsets |= set(range(0, len(data), 499)) | {e + d for e in ends[::10] for d in (-1, 0, 1)}
    for k in sorted(offsets):
        record = parse_record(data[:k])
        assert not record.complete, k
        assert record.problems == [], (k, record.problems)
        complete_lines = data[:k].count(b"\n")
        assert record.last_complete_line == complete_lines - 1
        assert len(record.lines) == complete_lines
    for k in sorted(offsets)[::40]:
        result = verify(parse_record(data[:k]))
        assert not result.ok and result.message.startswith("incomplete"), (k, str(result))
    assert parse_record(data).complete


def test_cli_replay_reports_incomplete(short: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = short.read_bytes()
    short.write_bytes(data[: len(data) // 2])
    last = data[: len(data) // 2].count(b"\n") - 1
    assert main(["replay", str(short), "--verify"]) == 3
    assert f"incomplete: last complete line {last}" in capsys.readouterr().out
    assert main(["replay", str(short)]) == 3
    assert f"incomplete: last complete line {last}" in capsys.readouterr().out


# -- the command line ----------------------------------------------------------------------


def test_cli_replay(short: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(short)]) == 0
    assert "complete; not re-simulated" in capsys.readouterr().out
    assert main(["replay", str(short), "--verify"]) == 0
    assert "verified" in capsys.readouterr().out
    n = first_line(short, is_event("trick_won"))
    rewrite(short, n, lambda o: o["event"].update(winner=(o["event"]["winner"] + 1) % 4))
    assert main(["replay", str(short), "--verify"]) == 1
    assert f"line {n}: trick_won differs" in capsys.readouterr().out
    assert main(["replay", str(short / "missing")]) == 2


def test_cli_show(short: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(short), "--no-color"]) == 0
    out = capsys.readouterr().out
    last = read_record(short).tricks()[-1].number
    assert "deal 1" in out and "trick  1:" in out and f"trick {last:>2}:" in out
    assert "result:" in out
    assert "\x1b[" not in out
    assert all(f"    seat {s}: " in out for s in range(4))
    assert any(sym in out for sym in "♠♥♣♦")


def test_cli_show_faults_and_deal_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "f.jsonl"
    bots = [Clumsy(b, 9) for b in bots_for(7)]
    referee_record(path, MatchSetup(RuleSet(deals=2), 7), bots, penalty=10)
    assert main(["show", str(path), "--deal", "2"]) == 0
    out = capsys.readouterr().out
    assert "!! fault: seat" in out and "!! penalty" in out
    assert "deal 2" in out and "\ndeal 1 " not in out


def hands_shown(out: str) -> list[int]:
    seats, in_hands = [], False
    for line in out.splitlines():
        if line == "  hands:":
            in_hands = True
        elif in_hands and line.startswith("    seat "):
            seats.append(int(line.split()[1].rstrip(":")))
        else:
            in_hands = False
    return seats


@pytest.mark.parametrize("seat", range(4))
def test_cli_show_seat_sees_only_its_hand(
    short: Path, seat: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(short), "--seat", str(seat), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert hands_shown(out) == [seat]
    assert f"as seen by seat {seat}\n" in out and f"seat {seat}'s answers" in out
    record = read_record(short)
    (deal,) = record.deals(seat)
    assert deal.deck is None
    assert [bool(h) for h in deal.hands] == [s == seat for s in range(4)]
    assert deal.hands[seat] == read_record(short).deals()[0].hands[seat]
    assert deal.kitty is not None
    dealer = deal.kitty.seat
    assert bool(deal.kitty.cards) == (dealer == seat)
    if dealer != seat:
        assert "kitty to seat" in out and "(hidden)" in out
        full = record.deals()[0]
        assert full.kitty is not None and codes(full.kitty.cards)  # the full view has them


def test_cli_show_collects_problems(short: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = lines_of(short)
    lines[30] = b"garbage\n"
    short.write_bytes(b"".join(lines) + b'{"n": 9')
    assert main(["show", str(short), "--no-color"]) == 1
    out = capsys.readouterr().out
    assert "line 30: not valid JSON" in out and "trick  5:" in out


def test_show_as_a_subprocess(short: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "show", str(short), "--seat", "2"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "trick  5:" in done.stdout and "\x1b[" not in done.stdout  # a pipe: no colour
    assert hands_shown(done.stdout) == [2]


def test_record_repr_and_problems_are_readable(short: Path) -> None:
    record: Record = read_record(short)
    assert "complete" in repr(record) and record.problems == []
    won = [e for e in record.events() if e.type == "trick_won"]
    assert len(record.tricks()) == len(won) and all(t.winner is not None for t in record.tricks())


class _Switching:
    """Passes calls to one writer; after ``after`` lines closes it (no footer, as a crash
    would) and carries on with a second writer continuing the same file."""

    def __init__(self, writer: RecordWriter, path: Path, after: int) -> None:
        self.writer, self.path, self.after, self.switched = writer, path, after, False

    def __getattr__(self, name: str) -> Any:
        if not self.switched and self.writer.lines > self.after:
            self.writer.__exit__(None, None, None)
            data = self.path.read_bytes()
            file = self.path.open("ab")
            self.writer = RecordWriter(file, self.writer.header, continuing=data)
            self.switched = True
        return getattr(self.writer, name)


def test_a_writer_can_continue_a_record(tmp_path: Path) -> None:
    path = tmp_path / "continued.jsonl"
    setup = MatchSetup(RuleSet(deals=1), 11)
    switching = _Switching(RecordWriter.open(path, header(setup)), path, after=150)
    play_match(setup, bots_for(11), recorder=switching)
    assert switching.switched and switching.writer.closed
    record = read_record(path)
    assert record.complete and record.problems == []
    assert verify(record).ok
    with pytest.raises(ValueError):
        RecordWriter(io.BytesIO(), header(setup), continuing=b'{"n":0')


def test_empty_and_header_only_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = parse_record(b"")
    assert not empty.complete and empty.problems == [] and empty.header is None
    assert str(verify(empty)) == "incomplete: no complete line"
    path = tmp_path / "h.jsonl"
    RecordWriter.open(path, header(MatchSetup())).__exit__(None, None, None)
    assert main(["replay", str(path), "--verify"]) == 3
    assert "incomplete: last complete line 0" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "incomplete: last complete line 0" in capsys.readouterr().out


def test_a_newer_version_is_refused_on_line_0(short: Path) -> None:
    rewrite(short, 0, lambda o: o.update(version=3))
    record = read_record(short)
    assert record.header is None
    assert record.problems[0].startswith("line 0: header: format version 3")
    assert verify(record).line == 0
