"""Every bound of docs/limits.md against a real ``arena serve`` on 127.0.0.1 port 0.

Each test is one abusive client (bytes, cards, ``Check`` calls, ``Watch`` streams,
matches, strings, a seat that never comes) asserting the status or the fault it gets
and that the server still answers; one honest match runs through all of them and
must finish and verify at the end (the last test).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.records import read_record, verify
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import abuse_kit as kit  # noqa: E402

pytestmark = pytest.mark.slow

FLAGS = (
    "--checks-per-decision", "5", "--watches-per-client", "6", "--watches-per-match", "4",
    "--matches-per-organiser", "12", "--max-string", "64", "--max-name", "16",
    "--page-size", "3", "--retention", "3", "--join-timeout", "10",
    "--max-message-bytes", "65536", "--seat-buffer-bytes", "8192",
)  # fmt: skip
HONEST = {"deals": 3, "seed": 11}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[kit.Served]:
    with kit.serve(tmp_path_factory.mktemp("limits") / "records", *FLAGS) as served:
        yield served


@pytest.fixture(scope="module")
def honest(
    server: kit.Served,
) -> Iterator[concurrent.futures.Future[tuple[str, list[kit.SeatOutcome | None]]]]:
    """The honest match, played in the background while the abusive clients run."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        yield pool.submit(asyncio.run, kit.play_match(server.target, think=0.02, **HONEST))


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def still_answers(server: kit.Served) -> None:
    assert server.process.poll() is None, server.log()
    assert run(kit.alive(server.target))


async def _abused_match(
    target: str, abuser: object = None, raw: list[bytes] | None = None, **fields: object
) -> tuple[str, list[kit.SeatOutcome]]:
    """A match whose seat 1 is the abuser; the other three are honest."""
    created = await kit.create(target, deals=1, **fields)
    tokens = list(created.seat_tokens)
    async with asyncio.TaskGroup() as group:
        tasks = [
            group.create_task(
                kit.play_seat(target, tokens[s], 0.0, "abuser", abuser, raw)
                if s == 1
                else kit.play_seat(target, tokens[s])
            )
            for s in range(4)
        ]
    return created.match_id, [t.result() for t in tasks]


def test_an_action_with_too_many_cards_is_a_malformed_fault(
    server: kit.Served, honest: object
) -> None:
    match_id, seats = run(_abused_match(server.target, kit.huge_answer))  # type: ignore[misc]
    [first] = [v for v in seats[1].verdicts if not v.accepted]
    assert first.fault == pb.MALFORMED
    assert first.reason == "5000 cards in one action (at most 64)"
    end = seats[0].end
    assert end is not None and end.result.reason == "deals_played"
    assert [(f.seat, f.kind) for f in end.faults] == [(1, pb.MALFORMED)]
    assert all(len(f.reason) <= 512 for f in end.faults)
    record = read_record(server.records / f"{match_id}.jsonl")
    # (verify() of a record with a lenient penalty diverges on main too: issue 10's)
    assert record.complete and record.problems == []
    still_answers(server)


def test_a_message_over_the_size_limit_ends_only_its_stream(server: kit.Served) -> None:
    created = run(kit.create(server.target, deals=1))
    tokens = list(created.seat_tokens)  # type: ignore[attr-defined]
    big = kit.padded_late_action(100_000)  # over --max-message-bytes 65536
    outcome = run(kit.play_seat(server.target, tokens[1], raw_before=[big]))
    assert outcome.status == "RESOURCE_EXHAUSTED", outcome  # type: ignore[attr-defined]
    run(kit.cancel_all(server.target, [created.match_id]))  # type: ignore[attr-defined]
    still_answers(server)


def test_a_flood_of_big_unrequested_messages_is_not_kept(server: kit.Served) -> None:
    before = server.rss_mib()
    flood = [kit.padded_late_action(60_000)] * 400  # 24 MB that nobody asked for
    _match_id, seats = run(_abused_match(server.target, raw=flood))  # type: ignore[misc]
    grown = server.rss_mib() - before
    assert grown < 12, f"the server kept {grown:.1f} MiB of a flood"
    assert all(s.end is not None and s.end.result.reason == "deals_played" for s in seats)
    assert list(seats[0].end.faults) == []  # type: ignore[union-attr]
    still_answers(server)


def test_check_calls_are_bounded_per_decision(server: kit.Served) -> None:
    created = run(kit.create(server.target, deals=1))
    tokens = list(created.seat_tokens)  # type: ignore[attr-defined]
    spam = kit.check_spam(server.target, tokens[1], calls=8)

    async def play() -> list[kit.SeatOutcome]:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(
                    kit.play_seat(server.target, t, 0.0, "x", spam if s == 1 else None)
                )
                for s, t in enumerate(tokens)
            ]
        return [t.result() for t in tasks]

    seats = run(play())
    checks = seats[1].extra["checks"]  # type: ignore[index]
    assert checks == ["OK"] * 5 + ["RESOURCE_EXHAUSTED"] * 3
    verdict = seats[1].extra["check_verdicts"][0]  # type: ignore[index]
    assert verdict.fault == pb.MALFORMED and "at most 64" in verdict.reason
    assert seats[0].end is not None and seats[0].end.result.reason == "deals_played"  # type: ignore[index]
    still_answers(server)


def test_watch_streams_are_bounded_and_released_when_the_client_goes(
    server: kit.Served,
) -> None:
    async def scenario() -> dict[str, list[str]]:
        # two matches that stay running: their seats hold the first decision
        one, seats_one = await kit.stalled_match(server.target)
        two, seats_two = await kit.stalled_match(server.target)
        try:
            held, first = await kit.hold_watches(server.target, one, 5)  # per match: 4
            await kit.release(held)
            await asyncio.sleep(0.3)
            churned = await kit.watch_churn(server.target, one, 60)
            for _ in range(10):  # released as the server hears of each cancel
                again, after = await kit.hold_watches(server.target, one, 4)
                if after == ["OK"] * 4:
                    break
                await kit.release(again)
                await asyncio.sleep(0.5)
            other, client = await kit.hold_watches(server.target, two, 3)  # per client: 6
            await kit.release(again + other)
        finally:
            await kit.cancel_all(server.target, [one, two])
            for task in seats_one + seats_two:
                task.cancel()
        return {"first": first, "churned": churned, "after": after, "client": client}

    seen = run(scenario())
    assert seen["first"] == ["OK"] * 4 + ["RESOURCE_EXHAUSTED"]  # type: ignore[index]
    # (a stream opened before the server has heard of the last cancels may be refused)
    assert "OK" in seen["churned"]  # type: ignore[operator]
    assert seen["after"] == ["OK"] * 4  # type: ignore[index]
    assert seen["client"] == ["OK", "OK", "RESOURCE_EXHAUSTED"]  # type: ignore[index]
    still_answers(server)


def test_live_matches_are_bounded_per_organiser(server: kit.Served) -> None:
    made, refused, ids = run(kit.create_flood(server.target, 100))  # type: ignore[misc]
    assert made <= 12 and len(refused) == 1
    assert refused[0].startswith("RESOURCE_EXHAUSTED: you already have 12 live matches")
    run(kit.cancel_all(server.target, ids))
    deadline = time.monotonic() + 30
    while True:  # cancelled matches are no longer live: creating works again
        try:
            again = run(kit.create(server.target, deals=1))
            break
        except grpc.RpcError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    run(kit.cancel_all(server.target, [again.match_id]))  # type: ignore[attr-defined]
    still_answers(server)


def test_strings_over_their_bound_are_refused_and_names_escaped(server: kit.Served) -> None:
    async def scenario() -> dict[str, tuple[str, str]]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            out = {
                "seat_names": await kit.call_status(
                    stub.Create(pb.CreateMatchRequest(seat_names=["x" * 100] * 4), timeout=5)
                ),
                "rules": await kit.call_status(
                    stub.Create(
                        pb.CreateMatchRequest(rules={f"k{i}": "1" for i in range(40)}), timeout=5
                    )
                ),
                "match_id": await kit.call_status(
                    stub.Get(pb.GetMatchRequest(match_id="m" * 1000), timeout=5)
                ),
                "reason": await kit.call_status(
                    stub.Cancel(
                        pb.CancelMatchRequest(match_id="m-x", reason="r" * 10_000), timeout=5
                    )
                ),
            }
        created = await kit.create(server.target, deals=1)
        tokens = list(created.seat_tokens)
        long = await kit.play_seat(server.target, tokens[0], name="n" * 1000)
        out["hello_name"] = (long.status, long.details)
        # a name with terminal escapes, within the bound: taken, clipped and escaped
        sneaky = asyncio.ensure_future(kit.play_seat(server.target, tokens[0], name="\x1b[2Jwin"))
        await asyncio.sleep(1.0)
        async with grpc.aio.insecure_channel(server.target) as channel:
            info = await pb_grpc.MatchesStub(channel).Get(
                pb.GetMatchRequest(match_id=created.match_id), timeout=5
            )
        out["stored"] = (info.seat_names[0], "")
        await kit.cancel_all(server.target, [created.match_id])
        await sneaky
        return out

    seen = run(scenario())
    assert seen["seat_names"] == (  # type: ignore[index]
        "INVALID_ARGUMENT",
        "seat_names is 100 characters (at most 16)",
    )
    assert seen["rules"][0] == "INVALID_ARGUMENT"  # type: ignore[index]
    assert "at most 32" in seen["rules"][1]  # type: ignore[index]
    assert seen["match_id"] == ("INVALID_ARGUMENT", "match_id is 1000 characters (at most 64)")  # type: ignore[index]
    assert seen["reason"][0] == "INVALID_ARGUMENT"  # type: ignore[index]
    assert seen["hello_name"][0] == "INVALID_ARGUMENT"  # type: ignore[index]
    stored = seen["stored"][0]  # type: ignore[index]
    assert "\x1b" not in stored and stored.startswith("\\x1b[2J") and len(stored) <= 16
    still_answers(server)


def test_list_is_paginated(server: kit.Served) -> None:
    ids = [run(kit.create(server.target, deals=1)).match_id for _ in range(5)]  # type: ignore[attr-defined]

    async def pages(size: int) -> tuple[list[list[str]], tuple[str, str]]:
        out: list[list[str]] = []
        token = ""
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            while True:
                page = await stub.List(
                    pb.ListMatchesRequest(page_size=size, page_token=token), timeout=5
                )
                out.append([m.match_id for m in page.matches])
                token = page.next_page_token
                if not token:
                    break
            bad = await kit.call_status(
                stub.List(pb.ListMatchesRequest(page_token="nonsense"), timeout=5)
            )
        return out, bad

    by_two, bad = run(pages(2))  # type: ignore[misc]
    assert all(len(p) <= 2 for p in by_two) and len(by_two) >= 3
    listed = [i for p in by_two for i in p]
    assert len(listed) == len(set(listed)) and set(ids) <= set(listed)
    default, _ = run(pages(0))  # type: ignore[misc]
    assert max(len(p) for p in default) == 3  # --page-size 3
    assert [i for p in default for i in p] == listed
    assert bad[0] == "INVALID_ARGUMENT"
    run(kit.cancel_all(server.target, ids))
    still_answers(server)


def test_a_seat_that_never_comes_forfeits_and_two_make_the_match_void(
    server: kit.Served,
) -> None:
    async def both() -> tuple[list[kit.SeatOutcome | None], list[kit.SeatOutcome | None]]:
        forfeit = asyncio.ensure_future(kit.play_match(server.target, seats=(0, 1, 3), deals=1))
        void = asyncio.ensure_future(kit.play_match(server.target, seats=(0, 1), deals=1))
        return (await forfeit)[1], (await void)[1]

    started = time.monotonic()
    forfeit, void = run(both())  # type: ignore[misc]
    assert time.monotonic() - started < 30
    end = forfeit[1].end  # type: ignore[union-attr]
    assert end is not None and end.result.reason == "forfeit"
    assert end.result.forfeited_team == 0 and end.result.winner_team == 1
    end = void[0].end  # type: ignore[union-attr]
    assert end is not None and end.result.reason == "cancelled" and end.result.winner_team == -1
    still_answers(server)


def test_a_finished_match_leaves_memory_but_stays_readable(server: kit.Served) -> None:
    match_id, _seats = run(kit.play_match(server.target, deals=1))  # type: ignore[misc]
    time.sleep(3.5)  # --retention 3

    async def look() -> tuple[list[str], pb.MatchInfo, list[str]]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = pb_grpc.MatchesStub(channel)
            listed: list[str] = []
            token = ""
            while True:
                page = await stub.List(pb.ListMatchesRequest(page_token=token), timeout=5)
                listed += [m.match_id for m in page.matches]
                token = page.next_page_token
                if not token:
                    break
            info = await stub.Get(pb.GetMatchRequest(match_id=match_id), timeout=5)
            lines = [c.line async for c in stub.FetchRecord(
                pb.FetchRecordRequest(match_id=match_id), timeout=5)]  # fmt: skip
        return listed, info, lines

    listed, info, lines = run(look())  # type: ignore[misc]
    assert match_id not in listed  # forgotten…
    assert info.state == pb.FINISHED and info.result.reason == "deals_played"  # …but readable
    assert lines == (server.records / f"{match_id}.jsonl").read_text().splitlines()
    still_answers(server)


def test_the_honest_match_finished_and_verifies_through_it_all(
    server: kit.Served,
    honest: concurrent.futures.Future[tuple[str, list[kit.SeatOutcome | None]]],
) -> None:
    match_id, seats = honest.result(timeout=180)
    for seat in seats:
        assert seat is not None and seat.end is not None, seat
        assert seat.end.result.reason == "deals_played" and list(seat.end.faults) == []
    assert verify(read_record(server.records / f"{match_id}.jsonl")).ok
    still_answers(server)
