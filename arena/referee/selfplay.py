"""Playing matches in-process with built-in bots, through the referee core.

``arena selfplay``, the batch runner's all-built-in matches, the benchmarks and the
record tests play here: synchronous, no network, no trio. The refereeing is the
:class:`~arena.referee.core.RefereeCore`'s — an illegal answer is a fault charged under
the policy, exactly as in a served match — and only the invariant checks are added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena.game import (
    Action,
    Bot,
    Decision,
    FaultPolicy,
    Kind,
    MatchMachine,
    MatchSetup,
    Recorder,
    SelfplayStats,
    TimeControl,
    check_cards,
    tally_events,
)
from arena.referee.core import Answerer, Ask, RefereeCore, play
from arena.referee.faults import BotError

# Self-play has no deadlines: a bot may think as long as it likes.
UNTIMED = TimeControl(decision_ms=10**9, bank_ms=0, grace_ms=0, allowance_ms=0)


def bot_seat(bot: Bot, clock: Callable[[], float] | None = None) -> Answerer:
    """An in-process bot as a synchronous seat; ``clock`` (seconds) times its answers
    for the record, else they take 0 ms."""
    if clock is None:
        return lambda ask: (tuple(bot.decide(ask.request)), 0.0)

    def answer(ask: Ask) -> tuple[Action | BotError, float]:
        start = clock()
        action = tuple(bot.decide(ask.request))
        return action, clock() - start

    return answer


def play_match(
    setup: MatchSetup,
    bots: Sequence[Bot],
    on_decision: Callable[[], None] | None = None,
    stats: SelfplayStats | None = None,
    check: bool = True,
    recorder: Recorder | None = None,
    clock: Callable[[], float] | None = None,
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
) -> MatchMachine:
    """Play one match to its end with four in-process bots; tally into ``stats``.

    ``recorder`` gets the whole record (the core writes it). ``clock`` (seconds, e.g.
    ``time.perf_counter``) times the answers; without it they take 0 ms and the match
    is untimed. ``time_control`` (default: none to speak of) and ``policy`` (default
    lenient) are the referee's.
    """
    stats = stats if stats is not None else SelfplayStats()
    core = RefereeCore(setup, time_control or UNTIMED, policy)
    if recorder is not None:
        core.record_to(recorder)
    match = core.match
    violations = stats.violations

    def after(decision: Decision) -> None:
        if on_decision is not None:
            on_decision()
        if check and decision.kind is Kind.PLAY and not match.finished:
            problem = check_cards(match.snapshot().deal)
            if problem:
                violations.append(problem)

    play(core, [bot_seat(b, clock) for b in bots], after)
    tally = core.tally
    stats.matches += 1
    stats.decisions += tally.decisions
    stats.faults += len(tally.faults)
    tally_events(stats, match.events, setup.rules.decks, check)
    result = match.result
    if result is not None:
        if result.winner is None:
            stats.draws += 1
        else:
            stats.team_wins[result.winner] += 1
    return match


__all__ = ["UNTIMED", "bot_seat", "play_match"]
