"""Honest and abusive clients of a real ``arena serve``, for bench/soak.py and the tests.

Every client is a plain gRPC client (``grpc.aio``) of the public services, as a
stranger's bot or organiser would be: the honest seat answers each request with its
fallback after a short "think"; each abusive one pushes one bound of docs/limits.md
(bytes, cards, ``Check`` calls, ``Watch`` streams, matches, string lengths) and
returns what the server answered, so a caller can assert the status or the fault.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
EOF_MARK: object = grpc.aio.EOF  # type: ignore[attr-defined]
ONE_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]  # each client its own TCP connection


# ----------------------------------------------------------------------------- the server


@dataclasses.dataclass
class Served:
    """A running ``arena serve`` subprocess."""

    process: subprocess.Popen[bytes]
    target: str
    records: Path
    stderr: Path

    def rss_mib(self) -> float:
        """The server's resident memory now (VmRSS), in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def peak_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")


@contextmanager
def serve(records: Path, *flags: str, timeout: float = 60) -> Iterator[Served]:
    """Run ``arena serve --listen 127.0.0.1:0 --open`` (no organiser token: every client
    may create, the bounds are what is tested) with ``flags``; yield once it listens."""
    records.mkdir(parents=True, exist_ok=True)
    err = records.parent / f"{records.name}.serve.log"
    with open(err, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena.cli.main", "serve", "--listen", "127.0.0.1:0",
             "--records", str(records), "--open", "--workers", "1", *flags],
            stdout=subprocess.DEVNULL, stderr=out, cwd=ROOT,
        )  # fmt: skip
    served = Served(process, "", records, err)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            found = re.search(r"arena serving on (\S+) ", served.log())
            if found:
                served.target = found.group(1)
                break
            if process.poll() is not None:
                raise RuntimeError(f"arena serve exited {process.returncode}: {served.log()}")
            time.sleep(0.05)
        else:
            raise RuntimeError(f"arena serve did not start: {served.log()}")
        yield served
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# ----------------------------------------------------------------------------- clients


@dataclasses.dataclass
class SeatOutcome:
    """What one seat's stream saw."""

    end: pb.MatchEnd | None = None
    status: str = "OK"
    details: str = ""
    verdicts: list[pb.Verdict] = dataclasses.field(default_factory=list)
    latencies: list[float] = dataclasses.field(default_factory=list)  # request → our answer
    requests: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


Abuse = Any  # an async callable(call, request, outcome) -> bool (True: it answered)


async def play_seat(
    target: str,
    token: str,
    think: float = 0.0,
    name: str = "honest",
    on_request: Abuse | None = None,
    raw_before: list[bytes] | None = None,
) -> SeatOutcome:
    """Take a seat and answer every request with its fallback after ``think`` seconds.

    ``on_request(call, message, outcome)`` may act instead (answer with something
    else, hold, call Check): it returns True when it answered. ``raw_before`` are raw
    frames sent right after the Hello (a flood)."""
    outcome = SeatOutcome()
    async with grpc.aio.insecure_channel(target, options=ONE_CONNECTION) as channel:
        call = channel.stream_stream(
            "/arena.v1.Arena/Play",
            request_serializer=lambda b: b,
            response_deserializer=pb.RefereeMessage.FromString,
        )()
        try:
            hello = pb.BotMessage(hello=pb.Hello(token=token, name=name, protocol=1))
            await call.write(hello.SerializeToString())
            for frame in raw_before or ():
                await call.write(frame)
            while True:
                message = await call.read()
                if message is EOF_MARK:
                    break
                kind = message.WhichOneof("kind")
                if kind == "request":
                    outcome.requests += 1
                    asked = time.perf_counter()
                    if on_request is not None and await on_request(call, message, outcome):
                        continue
                    if think:
                        await asyncio.sleep(think)
                    request = message.request
                    answer = pb.BotMessage(
                        action=pb.Action(seq=request.seq, cards=request.fallback.cards)
                    )
                    await call.write(answer.SerializeToString())
                    outcome.latencies.append(time.perf_counter() - asked)
                elif kind == "verdict":
                    outcome.verdicts.append(message.verdict)
                elif kind == "match_end":
                    outcome.end = message.match_end
            await call.done_writing()
        except grpc.RpcError as exc:
            outcome.status, outcome.details = exc.code().name, exc.details() or ""
        except (asyncio.CancelledError, grpc.aio.UsageError):
            raise
    return outcome


async def create(target: str, **fields: Any) -> pb.CreateMatchResponse:
    async with grpc.aio.insecure_channel(target) as channel:
        response: pb.CreateMatchResponse = await pb_grpc.MatchesStub(channel).Create(
            pb.CreateMatchRequest(**fields), timeout=20
        )
        return response


async def play_match(
    target: str, think: float = 0.0, seats: tuple[int, ...] = (0, 1, 2, 3), **fields: Any
) -> tuple[str, list[SeatOutcome | None]]:
    """Create a match and play the given seats honestly (the others never come)."""
    created = await create(target, **fields)
    tokens = list(created.seat_tokens)
    outcomes: list[SeatOutcome | None] = [None] * 4
    async with asyncio.TaskGroup() as group:
        tasks = {s: group.create_task(play_seat(target, tokens[s], think)) for s in seats}
    for seat, task in tasks.items():
        outcomes[seat] = task.result()
    return created.match_id, outcomes


async def _stall(call: Any, message: pb.RefereeMessage, outcome: SeatOutcome) -> bool:
    await asyncio.sleep(3600)  # hold the decision: the match stays running
    return True


async def stalled_match(target: str) -> tuple[str, list[asyncio.Task[SeatOutcome]]]:
    """A running match whose four seats hold their first decision (a long time bank):
    something to watch that neither ends nor costs CPU. Cancel it, then the tasks."""
    created = await create(target, deals=1, time_control=pb.TimeControl(bank_ms=600_000))
    tasks = [
        asyncio.ensure_future(play_seat(target, t, on_request=_stall)) for t in created.seat_tokens
    ]
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        for _ in range(200):
            info = await stub.Get(pb.GetMatchRequest(match_id=created.match_id), timeout=5)
            if info.state == pb.RUNNING:
                break
            await asyncio.sleep(0.05)
    return created.match_id, tasks


def status_of(exc: grpc.RpcError) -> tuple[str, str]:
    return exc.code().name, exc.details() or ""


async def call_status(coro: Any) -> tuple[str, str]:
    """The status an RPC ends with: ``("OK", "")`` or its code and details."""
    try:
        await coro
    except grpc.RpcError as exc:
        return status_of(exc)
    return "OK", ""


# ----------------------------------------------------------------------------- abuse


def padded_late_action(size: int) -> bytes:
    """An Action for seq 0 (always late) carrying ``size`` bytes in an unknown field:
    what a seat flooding the server with big unrequested messages sends."""
    action = pb.BotMessage(action=pb.Action(seq=0)).SerializeToString()
    pad = b"x" * size
    return action + bytes([15 << 3 | 2]) + _varint(len(pad)) + pad


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def many_cards(n: int) -> list[pb.Card]:
    return [pb.Card(suit=pb.SPADES, rank=pb.ACE)] * n


async def huge_answer(call: Any, message: pb.RefereeMessage, outcome: SeatOutcome) -> bool:
    """Answer the first play request with thousands of cards (a MALFORMED fault)."""
    if message.request.kind != pb.PLAY or outcome.extra.get("huge"):
        return False
    outcome.extra["huge"] = True
    action = pb.Action(seq=message.request.seq, cards=many_cards(5000))
    await call.write(pb.BotMessage(action=action).SerializeToString())
    return True


def check_spam(target: str, token: str, calls: int, cards: int = 5000) -> Abuse:
    """Hold the first decision and call ``Check`` ``calls`` times with ``cards`` cards;
    the statuses go to ``outcome.extra["checks"]``."""

    async def abuse(call: Any, message: pb.RefereeMessage, outcome: SeatOutcome) -> bool:
        if outcome.requests != 1:
            return False
        statuses: list[str] = []
        verdicts: list[pb.Verdict] = []
        async with grpc.aio.insecure_channel(target) as channel:
            stub = pb_grpc.ArenaStub(channel)
            action = pb.Action(seq=message.request.seq, cards=many_cards(cards))
            for _ in range(calls):
                try:
                    verdicts.append(
                        await stub.Check(pb.CheckRequest(token=token, action=action), timeout=10)
                    )
                    statuses.append("OK")
                except grpc.RpcError as exc:
                    statuses.append(exc.code().name)
        outcome.extra["checks"] = statuses
        outcome.extra["check_verdicts"] = verdicts
        return False  # then answer normally

    return abuse


async def watch_churn(target: str, match_id: str, streams: int) -> list[str]:
    """Open ``streams`` Watch streams on a match, read one event or none, cancel each;
    the statuses seen (``CANCELLED`` is the client's own cancel)."""
    statuses: list[str] = []
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        for _ in range(streams):
            call = stub.Watch(pb.WatchRequest(match_id=match_id))
            try:
                await asyncio.wait_for(call.read(), 0.01)
                statuses.append("OK")
            except TimeoutError:
                statuses.append("OK")
            except grpc.RpcError as exc:
                statuses.append(exc.code().name)
            call.cancel()
    return statuses


async def hold_watches(
    target: str, match_id: str, streams: int, settle: float = 0.5
) -> tuple[list[Any], list[str]]:
    """Open ``streams`` Watch streams one after another and keep them open; after
    ``settle`` seconds, each one's status: ``OK`` while still open, ``ENDED`` if it ended
    normally (the match is over), else the status it ended with."""
    channel = grpc.aio.insecure_channel(target)
    stub = pb_grpc.MatchesStub(channel)
    calls: list[Any] = []
    for _ in range(streams):
        call = stub.Watch(pb.WatchRequest(match_id=match_id))
        calls.append(call)
        await asyncio.sleep(0.05)  # in order: the server sees them one by one
    await asyncio.sleep(settle)
    statuses = [_ended(await c.code()) if c.done() else "OK" for c in calls]
    return [*calls, channel], statuses


def _ended(code: grpc.StatusCode) -> str:
    return "ENDED" if code == grpc.StatusCode.OK else code.name


async def release(held: list[Any]) -> None:
    for item in held:
        if isinstance(item, grpc.aio.Channel):
            await item.close()
        else:
            item.cancel()


async def create_flood(target: str, limit: int) -> tuple[int, list[str], list[str]]:
    """Create matches until refused (at most ``limit``): how many were made, the
    refusal statuses, and the ids (so the caller can cancel them)."""
    made: list[str] = []
    refused: list[str] = []
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        for _ in range(limit):
            try:
                made.append(
                    (await stub.Create(pb.CreateMatchRequest(deals=1), timeout=10)).match_id
                )
            except grpc.RpcError as exc:
                refused.append(f"{exc.code().name}: {exc.details()}")
                break
    return len(made), refused, made


async def cancel_all(target: str, ids: list[str]) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        for match_id in ids:
            await stub.Cancel(pb.CancelMatchRequest(match_id=match_id), timeout=10)


async def alive(target: str) -> bool:
    """The server still answers (a List within 5 s)."""
    async with grpc.aio.insecure_channel(target) as channel:
        await pb_grpc.MatchesStub(channel).List(pb.ListMatchesRequest(page_size=1), timeout=5)
    return True


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
