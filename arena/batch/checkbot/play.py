"""Playing the scenarios: one match each, in worker processes, over real gRPC."""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import trio

from arena.batch.checkbot.positions import Position, read_positions
from arena.batch.checkbot.results import CheckOptions, CheckReport, FaultReport, ScenarioResult
from arena.batch.checkbot.scenarios import SITUATIONS, Scenario
from arena.batch.runner import bot_name, start_bot
from arena.batch.sandbox import Ending, SandboxLimits
from arena.batch.sandbox.seat import open_socket, referee_socket, run_sandboxed_seat
from arena.bots import make_bot
from arena.game import Bot
from arena.records import AnswerLine, read_record
from arena.rules import RuleSet
from arena.server import ArenaServer, HostedMatch, MatchSpec, open_arena_server, record_factory

OnResult = Callable[["ScenarioResult"], None]


def check_bot(
    command: str,
    scenarios: Sequence[Scenario],
    options: CheckOptions,
    on_result: OnResult | None = None,
    initializer: Callable[[], None] | None = None,
) -> CheckReport:
    """Play every scenario, ``options.parallel`` at a time, each in its own worker
    process (so that one match's work never delays another's clock); never raises for a
    bot's misbehaviour: that is what the report is for. ``on_result`` is called (here)
    as each scenario finishes; ``initializer`` runs first in each worker."""
    started = time.perf_counter()
    todo = list(scenarios)
    results: dict[int, ScenarioResult] = {}

    def done(i: int, result: ScenarioResult) -> None:
        results[i] = result
        if on_result is not None:
            on_result(result)

    def stop() -> bool:
        return options.fail_fast and any(r.status != "pass" for r in results.values())

    if options.parallel <= 1 or len(todo) <= 1:
        for i, scenario in enumerate(todo):
            done(i, _skipped(scenario) if stop() else run_scenario(command, scenario, options))
    else:
        context = multiprocessing.get_context("spawn")  # no forked gRPC or trio state
        with concurrent.futures.ProcessPoolExecutor(
            options.parallel, mp_context=context, initializer=initializer
        ) as pool:
            futures = {
                pool.submit(run_scenario, command, scenario, options): i
                for i, scenario in enumerate(todo)
            }
            for future in concurrent.futures.as_completed(futures):
                i = futures[future]
                if future.cancelled():
                    continue
                try:
                    result = future.result()
                except Exception as exc:  # the worker died (killed, out of memory)
                    result = ScenarioResult(todo[i], error=f"worker failed: {exc!r}")
                done(i, result)
                if stop():
                    for other in futures:
                        other.cancel()
        for i, scenario in enumerate(todo):
            if i not in results:
                done(i, _skipped(scenario))
    ordered = [results[i] for i in range(len(todo))]
    return CheckReport(command, options, ordered, time.perf_counter() - started)


def _skipped(scenario: Scenario) -> ScenarioResult:
    return ScenarioResult(scenario, state="skipped", error="skipped after a failure (--fail-fast)")


def run_scenario(command: str | Bot, scenario: Scenario, options: CheckOptions) -> ScenarioResult:
    """Play one scenario (blocking: its own trio run). ``command`` may also be an
    in-process :class:`~arena.game.Bot` (no subprocess, no network for its seat)."""
    result = ScenarioResult(scenario)
    try:
        trio.run(play_scenario, command, result, options)
    except Exception as exc:  # the harness itself failed: report it, play the others
        result.error = f"{type(exc).__name__}: {exc}"
    return result


async def play_scenario(command: str | Bot, result: ScenarioResult, options: CheckOptions) -> None:
    """Play one scenario into ``result`` (``command``: as for :func:`run_scenario`)."""
    scenario = result.scenario
    started = time.perf_counter()
    seat = scenario.seat
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    record = out / f"{scenario.name}.jsonl"
    log = out / f"{scenario.name}.bot.log"
    local = {s: scenario.opponent(s) for s in range(4) if s != seat}
    if not isinstance(command, str):
        local[seat] = command
    elif command.startswith("builtin:"):
        local[seat] = make_bot(command.removeprefix("builtin:"), scenario.seed * 4 + seat)
    name = bot_name(command) if isinstance(command, str) else command.name
    names = tuple(name if s == seat else f"builtin:{scenario.opponents}" for s in range(4))
    spec = MatchSpec(
        rules=RuleSet.from_mapping({"deals": scenario.deals}),
        seed=scenario.seed,
        time_control=options.time_control(),
        policy=options.policy(),
        seat_names=names,
        local=local,
        connect_timeout=options.connect_timeout,
        stacked={1: scenario.deck} if scenario.deck else {},
        missing_forfeits=False,  # a bot that never comes is faulted where it would play
    )
    try:
        text = command if isinstance(command, str) else ""
        hosted = await _host(spec, text, record, log, seat, result, options.sandbox)
    except Exception as exc:  # the harness itself failed: report it, play the others
        result.error = f"{type(exc).__name__}: {exc}"
        result.seconds = time.perf_counter() - started
        return
    result.seconds = time.perf_counter() - started
    result.state = hosted.state.value
    result.match_id = hosted.id
    result.error = result.error or hosted.error
    result.record = hosted.record or (str(record) if record.exists() else "")
    remote = hosted.remote(seat)
    result.connected = remote is None or remote.ever_connected.is_set()
    if log.exists():
        result.log = str(log)
        result.log_tail = _tail(log)
    referee = hosted.referee
    if referee is None:
        return
    match_result = referee.match.result
    if match_result is not None:
        result.result = match_result.reason
    result.latencies = list(referee.latencies[seat])
    positions: dict[int, Position] = {}
    answers: dict[int, AnswerLine] = {}
    if result.record:
        try:
            positions = read_positions(result.record, seat)
            answers = {a.seq: a for a in read_record(result.record).answers() if a.seat == seat}
        except Exception as exc:  # a record we cannot read: report the faults without it
            result.error = f"could not read the record: {type(exc).__name__}: {exc}"
    result.decisions = len(answers)
    reached: set[str] = set()
    for pos in positions.values():
        reached.update(pos.situations)
    result.reached = [s for s in SITUATIONS if s in reached]
    for fault in referee.faults:
        if fault.seat != seat:
            result.other_faults.append(
                f"seat {fault.seat} (built-in) {fault.kind.value}: {fault.reason}"
            )
            continue
        answer = answers.get(fault.seq)
        result.faults.append(
            FaultReport(
                fault.kind.value,
                fault.reason,
                fault.deal,
                fault.trick,
                fault.seq,
                answer.sent if answer else None,
                tuple(fault.played),
                answer.latency_ms if answer else 0.0,
                positions.get(fault.seq),
            )
        )
    result.uncharged = sum(1 for a in answers.values() if a.absent)


async def _host(
    spec: MatchSpec,
    command: str,
    record: Path,
    log: Path,
    seat: int,
    result: ScenarioResult,
    sandbox: SandboxLimits | None = None,
) -> HostedMatch:
    """Serve the match on a free loopback port and run the bot's command (as
    :func:`arena.batch.runner.play_hosted` does), watching the process: a bot that exits
    before taking its seat ends the scenario at once instead of after the connect
    timeout, and its exit status goes to its log. With ``sandbox``, the bot runs in the
    sandbox (under those limits) and reaches the server through a Unix socket."""
    limits = sandbox if command else None
    with contextlib.ExitStack() as stack:
        socket = stack.enter_context(referee_socket()) if limits else ""
        extra = (f"unix:{socket}",) if socket else ()
        factory = record_factory(str(record))
        async with open_arena_server(recorder_factory=factory, extra_addresses=extra) as server:
            if socket:
                open_socket(socket)
            hosted = server.host.create(spec)
            token = hosted.tokens[seat]
            if token is not None:
                async with trio.open_nursery() as nursery:
                    if limits is not None:
                        run = partial(_run_sandboxed, command, server, socket, token, log,
                                      hosted, seat, result, limits)  # fmt: skip
                        nursery.start_soon(run)
                    else:
                        nursery.start_soon(
                            _run_bot, command, server, token, log, hosted, seat, result
                        )
                    await hosted.done.wait()
            else:
                await hosted.done.wait()
            return hosted


async def _run_sandboxed(
    command: str,
    server: ArenaServer,
    socket: str,
    token: str,
    log: Path,
    hosted: HostedMatch,
    seat: int,
    result: ScenarioResult,
    limits: SandboxLimits,
) -> None:
    """:func:`_run_bot` in the sandbox: a bot that ends before taking its seat ends the
    scenario at once; one that ends later gets its verdict as a fault."""

    def ended(ending: Ending) -> None:
        remote = hosted.remote(seat)
        if remote is not None and not remote.ever_connected.is_set():
            result.error = f"the bot ended before taking its seat: {ending.reason}"
            server.host.cancel(hosted.id, result.error)

    error = await run_sandboxed_seat(
        command, socket, token, seat, log, hosted, limits, (log.parent,), ended
    )
    if error is not None:
        result.error = error
        server.host.cancel(hosted.id, error)


async def _run_bot(
    command: str,
    server: ArenaServer,
    token: str,
    log: Path,
    hosted: HostedMatch,
    seat: int,
    result: ScenarioResult,
) -> None:
    with open(log, "wb") as out:
        try:
            process = await start_bot(command, server.target, token, seat, out)
        except OSError as exc:
            result.error = f"could not start the bot: {exc}"
            server.host.cancel(hosted.id, result.error)
            return
        note = ""
        try:
            async with trio.open_nursery() as nursery:

                async def exited() -> None:
                    await process.wait()
                    remote = hosted.remote(seat)
                    if remote is not None and not remote.ever_connected.is_set():
                        result.error = (
                            f"the bot exited with status {process.returncode} "
                            "before taking its seat"
                        )
                        server.host.cancel(hosted.id, result.error)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(exited)
                await hosted.done.wait()
                with trio.move_on_after(5):
                    await process.wait()
                nursery.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                note = "arena: the bot was still running 5 s after the match ended: killed"
                process.kill()
                with trio.CancelScope(shield=True):
                    await process.wait()
            else:
                note = f"arena: the bot exited with status {process.returncode}"
            out.write((note + "\n").encode())


def _tail(path: Path, lines: int = 8) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


__all__ = ["check_bot", "play_scenario", "run_scenario"]
