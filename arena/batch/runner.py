"""Running one match from a picklable job, in whatever process runs it.

:func:`run_job` is what a worker process (or a Ray task) calls: it plays the match
described by a :class:`MatchJob` — in-process when every seat is a built-in bot
(``LocalSeat``s, no network), or on an embedded gRPC server with the command seats as
subprocesses — writes its record, and returns a :class:`MatchSummary`.
:func:`play_hosted` is the shared "server + bot subprocesses" path that ``arena match``
uses too.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena import botzone
from arena.batch.launch import seat_log as seat_log
from arena.batch.launch import start_bot as start_bot
from arena.batch.sandbox import SandboxLimits
from arena.batch.sandbox.seat import open_socket, referee_socket, run_sandboxed_seat
from arena.batch.startup import BotFailure, StartupWatch
from arena.bots import BUILTIN, make_bot
from arena.game import Bot, MatchSetup
from arena.records import RecordHeader, RecordWriter, SeatRecord
from arena.referee import Fault, FaultPolicy, LocalSeat, Referee, TimeControl
from arena.rules import Card, RuleSet
from arena.server import HostedMatch, MatchSpec, MatchState, open_arena_server, record_factory

SANDBOX_PREFIX = "sandbox:"  # --bot 'sandbox:CMD': this bot runs in the sandbox


@dataclasses.dataclass(frozen=True)
class BotSpec:
    """A bot by name: ``builtin:NAME`` or a shell command run as a subprocess (in the
    sandbox if ``sandboxed``: ``sandbox:CMD``, or every command bot with ``--sandbox``)."""

    name: str
    command: str
    sandboxed: bool = False

    @property
    def builtin(self) -> str | None:
        """The in-process bot's name for ``make_bot``: ``NAME`` for ``builtin:NAME``,
        the whole ``policy:MODULE:FUNCTION`` for an arena.env policy; else ``None``."""
        if self.command.startswith("policy:"):
            return self.command
        return (
            self.command.removeprefix("builtin:") if self.command.startswith("builtin:") else None
        )

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """``NAME=CMD`` or just ``CMD`` (the name is then derived from the command); CMD
        may start with ``sandbox:``."""
        name, sep, command = text.partition("=")
        if (
            sep
            and name
            and " " not in name
            and not name.startswith(("builtin:", "botzone", "sandbox:"))
        ):
            return cls.sandbox_prefixed(name, command)
        return cls.sandbox_prefixed(bot_name(text), text)

    @classmethod
    def sandbox_prefixed(cls, name: str, command: str) -> BotSpec:
        if command.startswith(SANDBOX_PREFIX):
            return cls(name, command.removeprefix(SANDBOX_PREFIX).strip(), True)
        return cls(name, command)

    def check(self) -> None:
        if self.sandboxed and self.builtin is not None:
            raise ValueError(f"{self.command!r} runs inside arena: only commands can be sandboxed")
        if self.command.startswith("policy:"):
            make_bot(self.command)  # loads it: a missing module fails here, not mid-match
            return
        if botzone.is_botzone(self.command):
            botzone.seat_argv(self.command)  # ValueError: a bad botzone[...] option
        if self.builtin is not None and self.builtin not in BUILTIN:
            raise ValueError(f"unknown built-in bot {self.builtin!r}; known: {', '.join(BUILTIN)}")


def bot_name(command: str) -> str:
    """A short name for a bot command (``sandbox:`` aside): its script's name (``random_bot`` for
    ``python sample_bots/random_bot.py``), or the script's folder when the script has a
    generic name (``node`` for ``node sample_bots/node/bot.js``)."""
    if command.startswith(("builtin:", "policy:")):
        return command
    words = shlex.split(command.removeprefix(SANDBOX_PREFIX))
    scripts = [w for w in words if w.endswith((".py", ".js", ".rb", ".jar", ".exe"))]
    if not scripts:
        scripts = [w for w in words[:1] if "/" in w] or words[:1]
    path = Path(scripts[0])
    if path.stem in {"bot", "main", "index", "run", "__main__"} and path.parent.name:
        return path.parent.name
    return path.stem


@dataclasses.dataclass(frozen=True)
class MatchJob:
    """Everything a worker needs to play one match (picklable)."""

    index: int
    seed: int
    bots: tuple[BotSpec, BotSpec, BotSpec, BotSpec]  # by seat
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    time_control: TimeControl = dataclasses.field(default_factory=TimeControl)
    policy: FaultPolicy = dataclasses.field(default_factory=FaultPolicy)
    record: str | None = None
    pairing: int = 0  # duplicate: 0 as given, 1 with the partnerships swapped
    stacked: Mapping[int, Sequence[str]] = dataclasses.field(default_factory=dict)
    sandbox: SandboxLimits | None = None  # limits of the sandboxed bots (default ones)


@dataclasses.dataclass(frozen=True)
class MatchSummary:
    """What a batch needs to know of one finished match (picklable, JSON-ready)."""

    index: int
    seed: int
    pairing: int
    bots: tuple[str, ...]  # by seat
    state: str
    winner: int | None  # team
    reason: str
    deals: int
    levels: tuple[str, str]
    attacker_points: tuple[int, ...]  # per deal
    faults: tuple[dict[str, Any], ...]
    latencies: tuple[tuple[float, ...], ...]  # per seat, seconds
    decisions: int
    seconds: float
    record: str | None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out.pop("latencies")
        return out

    @classmethod
    def unfinished(
        cls, job: MatchJob, state: str, error: str, seconds: float = 0.0
    ) -> MatchSummary:
        """A match that did not finish (``failed``, ``cancelled``): nothing to count."""
        names = tuple(b.name for b in job.bots)
        return cls(job.index, job.seed, job.pairing, names, state, None, "", 0, ("", ""),
                   (), (), (), 0, seconds, job.record, error)  # fmt: skip


def run_job(job: MatchJob) -> MatchSummary:
    """Play one match (blocking); never raises: a crash becomes ``state="failed"``."""
    started = time.perf_counter()
    try:
        return trio.run(_play_job, job, started)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        return MatchSummary.unfinished(job, "failed", error, time.perf_counter() - started)


async def _play_job(job: MatchJob, started: float) -> MatchSummary:
    rules = RuleSet.from_mapping(dict(job.rules))
    stacked = {d: tuple(Card.parse(c) for c in cards) for d, cards in job.stacked.items()}
    names = tuple(b.name for b in job.bots)
    if all(b.builtin for b in job.bots):
        setup = MatchSetup(rules, job.seed, stacked)
        seats = [
            LocalSeat(make_bot(b.builtin or "", job.seed * 4 + i)) for i, b in enumerate(job.bots)
        ]
        writer = None
        if job.record:
            Path(job.record).parent.mkdir(parents=True, exist_ok=True)
            header = RecordHeader.for_setup(
                f"batch-{job.index}",
                setup,
                [SeatRecord(n, b.command) for n, b in zip(names, job.bots, strict=True)],
                job.time_control,
                job.policy,
            )
            writer = RecordWriter.open(job.record, header, overwrite=True)
        referee = Referee(f"batch-{job.index}", setup, seats, job.time_control, job.policy, writer)
        await referee.run()
        return _summary(job, names, "finished", referee, started)
    spec = MatchSpec(
        rules=rules,
        seed=job.seed,
        time_control=job.time_control,
        policy=job.policy,
        seat_names=names,
        local={
            i: make_bot(b.builtin, job.seed * 4 + i) for i, b in enumerate(job.bots) if b.builtin
        },
        stacked=dict(stacked),
    )
    failures: list[BotFailure] = []
    limits = job.sandbox or SandboxLimits()
    sandboxed = {i: limits for i, b in enumerate(job.bots) if b.sandboxed and not b.builtin}
    hosted = await play_hosted(
        spec, [b.command for b in job.bots], job.record, failures=failures, sandboxed=sandboxed
    )
    error = "; ".join([f.short() for f in failures] + ([hosted.error] if hosted.error else []))
    return _summary(job, names, hosted.state.value, hosted.referee, started, error)


def _summary(
    job: MatchJob,
    names: tuple[str, ...],
    state: str,
    referee: Referee | None,
    started: float,
    error: str = "",
) -> MatchSummary:
    if referee is None:
        return MatchSummary.unfinished(job, state, error, time.perf_counter() - started)
    from arena.game import DealEnded

    result = referee.match.result
    points = tuple(e.attacker_points for e in referee.match.events if isinstance(e, DealEnded))
    return MatchSummary(
        job.index, job.seed, job.pairing, names, state,
        result.winner if result else None, result.reason if result else "",
        result.deals if result else 0,
        (result.levels[0].code, result.levels[1].code) if result else ("", ""),
        points, tuple(_fault_dict(f) for f in referee.faults),
        tuple(tuple(x) for x in referee.latencies), referee.decisions,
        time.perf_counter() - started, job.record, error,
    )  # fmt: skip


def _fault_dict(fault: Fault) -> dict[str, Any]:
    return fault.to_dict()


# -- the "embedded server + bot subprocesses" path --------------------------------------------


async def play_hosted(
    spec: MatchSpec,
    commands: Sequence[str],
    record: str | None,
    logs: Path | None = None,
    *,
    failures: list[BotFailure] | None = None,
    on_created: Callable[[HostedMatch], object] | None = None,
    sandboxed: Mapping[int, SandboxLimits] | None = None,
) -> HostedMatch:
    """Serve one match on a free loopback port and run its command seats as subprocesses
    (with ``ARENA_SERVER`` and ``ARENA_TOKEN``); returns when the match is over.

    A bot that cannot start, exits early or never connects is reported on stderr at
    once and added to ``failures``; a seat never taken makes its team forfeit.
    ``on_created(hosted)`` is called once the match exists (``arena match`` watches it).
    The seats of ``sandboxed`` run in the sandbox, under their limits, and reach the
    server through a Unix socket (docs/sandbox.md).
    """
    play = partial(_play_hosted, spec, commands, record, logs, failures, on_created)
    if sandboxed:
        with referee_socket() as socket:
            return await play(sandboxed, socket)
    return await play({}, "")


async def _play_hosted(
    spec: MatchSpec,
    commands: Sequence[str],
    record: str | None,
    logs: Path | None,
    failures: list[BotFailure] | None,
    on_created: Callable[[HostedMatch], object] | None,
    sandboxed: Mapping[int, SandboxLimits],
    socket: str,
) -> HostedMatch:
    extra = (f"unix:{socket}",) if socket else ()
    factory = record_factory(record)
    async with open_arena_server(recorder_factory=factory, extra_addresses=extra) as server:
        if socket:
            open_socket(socket)
        hosted = server.host.create(spec)
        if on_created is not None:
            on_created(hosted)
        watch = StartupWatch(server.host, spec.connect_timeout)
        if failures is not None:
            watch.failures = failures
        async with trio.open_nursery() as nursery:
            for seat, cmd in enumerate(commands):
                token = hosted.tokens[seat]
                log = seat_log(record, hosted.id, seat, logs)
                if token is not None and seat in sandboxed:
                    hidden = (log.parent, Path(record).parent if record else log.parent)
                    nursery.start_soon(partial(
                        run_sandboxed_seat, cmd, socket, token, seat, log, hosted,
                        sandboxed[seat], hidden, watch=watch,
                    ))  # fmt: skip
                elif token is not None:
                    nursery.start_soon(
                        run_bot_process,
                        cmd,
                        server.target,
                        token,
                        log,
                        hosted,
                        seat,
                        watch,
                    )
            await hosted.done.wait()
        return hosted


async def run_bot_process(
    cmd: str,
    target: str,
    token: str,
    log_path: Path,
    hosted: HostedMatch,
    seat: int,
    watch: StartupWatch | None = None,
) -> None:
    """Run one bot command until the match is over (then give it 5 s to leave);
    ``watch`` reports its failure to start, to stay or to connect."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as out:
        try:
            process = await start_bot(cmd, target, token, seat, out)
        except OSError as exc:
            if watch is not None:
                out.flush()
                watch.fail(hosted, seat, cmd, log_path, f"could not start: {exc.strerror or exc}")
            return
        try:
            if watch is not None:
                await watch.watch(process, hosted, seat, cmd, log_path)
            await hosted.done.wait()
            with trio.move_on_after(5):
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                with trio.CancelScope(shield=True):
                    await process.wait()


def local_bots(bots: Sequence[BotSpec], seed: int) -> dict[int, Bot]:
    return {i: make_bot(b.builtin, seed * 4 + i) for i, b in enumerate(bots) if b.builtin}


__all__ = ["BotSpec", "MatchJob", "MatchState", "MatchSummary", "play_hosted", "run_job"]
