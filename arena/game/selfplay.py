"""Playing matches in-process with built-in bots, checking invariants as it goes.

This is the synchronous driver used by ``arena selfplay`` and the benchmarks: no
network, no deadlines, no clock of its own. An illegal answer from a bot counts as a
fault and the fallback is played, exactly as the referee would. Given a ``recorder``
(``arena.records.RecordWriter``), it writes the whole match record as it goes.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

from arena.errors import IllegalPlay
from arena.game.deal import DealMachine, Phase
from arena.game.events import DealEnded, Kind, TrickWon
from arena.game.match import MatchMachine, MatchSetup
from arena.game.recorder import AnswerFault, Recorder, RecordFeed
from arena.game.requests import Bot, SeatFeed
from arena.rules import Card, deck, format_cards, points


@dataclasses.dataclass
class SelfplayStats:
    matches: int = 0
    deals: int = 0
    decisions: int = 0
    faults: int = 0
    violations: list[str] = dataclasses.field(default_factory=list)
    team_wins: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    draws: int = 0
    attacker_points: int = 0


def check_cards(deal: DealMachine) -> str | None:
    """Every card of the deck is in exactly one place: hands, undealt, kitty, table, tricks."""
    places: list[Sequence[Card]] = list(deal.hands)
    if deal.phase is Phase.BIDDING:
        places.append(deal.deck[4 * deal.dealt :])
    elif deal.phase is not Phase.BURYING:  # while burying, the kitty is in the dealer's hand
        places += [deal.kitty, deal.played, *(p for _, p in deal.plays)]
    counts = [0] * 54
    for cards in places:
        for card in cards:
            counts[card.index] += 1
    decks = deal.rules.decks
    if all(n == decks for n in counts):
        return None
    where = Counter(c for cards in places for c in cards)
    expected = Counter(deck(decks))
    missing = format_cards((expected - where).elements())
    extra = format_cards((where - expected).elements())
    return f"deal {deal.deal}: cards not accounted for: missing [{missing}], extra [{extra}]"


def play_match(
    setup: MatchSetup,
    bots: Sequence[Bot],
    on_decision: Callable[[], None] | None = None,
    stats: SelfplayStats | None = None,
    check: bool = True,
    recorder: Recorder | None = None,
    clock: Callable[[], float] | None = None,
) -> MatchMachine:
    """Play one match to its end with four in-process bots; tally into ``stats``.

    ``recorder`` receives each deck, every event and every answer (with its fault, if
    the bot's answer was illegal) in order, and at the end ``close(result, faults)``,
    which writes the record's footer. ``clock`` (seconds, e.g. ``time.perf_counter``)
    times the answers for the record; without it they are recorded as taking 0 ms.
    """
    stats = stats if stats is not None else SelfplayStats()
    match = MatchMachine(setup)
    feed = SeatFeed(match)
    record = RecordFeed(match, recorder) if recorder is not None else None
    started = clock() if clock is not None else 0.0
    faults: list[AnswerFault] = []
    seen = trick_sum = seq = 0
    while not match.finished:
        for decision in match.pending():
            request = feed.request(decision)
            if record is not None:
                record.flush()  # what came before this answer goes before its line
            asked = clock() if clock is not None else 0.0
            action = bots[decision.seat].decide(request)
            answered = clock() if clock is not None else 0.0
            stats.decisions += 1
            seq += 1
            seat, played, fault = decision.seat, action, None
            try:
                match.answer(seat, action)
            except IllegalPlay as exc:  # the machine is unchanged: play the fallback
                stats.faults += 1
                played = request.fallback
                deal = match.deal
                fault = AnswerFault(
                    seat, "illegal_action", exc.reason, deal.deal, deal.trick, seq, 0, played
                )
                faults.append(fault)
                match.answer(seat, played)
            if recorder is not None:
                recorder.answer(
                    seat=seat,
                    seq=seq,
                    kind=decision.kind.value,
                    sent=action,
                    played=played,
                    requested_at_ms=round((asked - started) * 1000, 3),
                    latency_ms=round((answered - asked) * 1000, 3),
                    fault=fault,
                )
            if on_decision is not None:
                on_decision()
            if check and decision.kind is Kind.PLAY:
                problem = check_cards(match.deal) if not match.finished else None
                if problem:
                    stats.violations.append(problem)
        for event in match.events[seen:]:
            if isinstance(event, TrickWon):
                trick_sum += event.points
            elif isinstance(event, DealEnded):
                stats.deals += 1
                stats.attacker_points += event.attacker_points
                total = trick_sum + points(event.kitty)
                if check and total != 100 * setup.rules.decks:
                    stats.violations.append(f"deal {event.deal}: {total} points in play")
                trick_sum = 0
        seen = len(match.events)
    stats.matches += 1
    if record is not None and recorder is not None and match.result is not None:
        record.flush()
        recorder.close(match.result, faults)
    result = match.result
    if result is not None:
        if result.winner is None:
            stats.draws += 1
        else:
            stats.team_wins[result.winner] += 1
    return match
