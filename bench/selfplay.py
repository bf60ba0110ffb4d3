"""Self-play benchmark and soak: the deal and match machines driven by built-in bots.

Benchmark (default): decisions per second on one core, over a fixed seed set, for four
random bots and for random,greedy,random,greedy, with the driver's invariant checks on
and off (:func:`arena.referee.play_match`, through the referee core). Takes 10-20 s.

Soak (``--soak N``): plays at least N deals between random bots, cycling through rule
variants, with every check this file knows on, and prints the violations (there must
be none): every card in one place after every answer, ``check`` agreeing with
``answer``, a legal fallback, each seat's request showing only its own cards, the
points of each deal adding up, and (every 50th match) a replay of the answers giving the
identical event stream.

    .venv/bin/python bench/selfplay.py [--profile]
    .venv/bin/python bench/selfplay.py --soak 100000 [--minutes 20] [--jobs 2]
"""

from __future__ import annotations

import argparse
import cProfile
import multiprocessing
import pstats
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from arena.bots import make_bot
from arena.errors import IllegalPlay
from arena.game import (
    Action,
    CardDealt,
    DealEnded,
    KittyBuried,
    KittyTaken,
    MatchMachine,
    MatchSetup,
    Phase,
    SeatFeed,
    SelfplayStats,
    TrickWon,
    check_cards,
)
from arena.referee import play_match
from arena.rules import RuleSet, points

BENCH_SEEDS = range(24)
BENCH_RULES = RuleSet(deals=8)
LINEUPS = [("random",) * 4, ("random", "greedy", "random", "greedy")]
SOAK_DEALS_PER_MATCH = 10
SOAK_VARIANTS: list[dict[str, Any]] = [
    {},
    {},
    {},
    {"decks": 1},
    {"decks": 3},
    {"throw_beaten_by": "all_units", "forced_unit": "first_blocker", "throw_penalty": "per_card"},
    {"follow": "suit_only", "bid_strength": "count_then_suit", "dead_zone": False},
    {"level_tractors": False, "kitty_multiplier": "doubling", "no_bid": "first_level_or_joker"},
]


# -- the benchmark -------------------------------------------------------------------------


def bench(names: Sequence[str], check: bool) -> tuple[SelfplayStats, float]:
    stats = SelfplayStats()
    start = time.perf_counter()
    for seed in BENCH_SEEDS:
        bots = [make_bot(n, seed * 4 + i) for i, n in enumerate(names)]
        play_match(MatchSetup(BENCH_RULES, seed), bots, stats=stats, check=check)
    return stats, time.perf_counter() - start


def run_bench() -> None:
    print(
        f"self-play: {len(BENCH_SEEDS)} matches of {BENCH_RULES.deals} deals "
        f"(seeds {BENCH_SEEDS.start}..{BENCH_SEEDS.stop - 1}), one core"
    )
    print(f"{'bots':<30} {'checks':<6} {'decisions':>9} {'deals':>6} {'s':>6} {'dec/s':>8}")
    for names in LINEUPS:
        for check in (True, False):
            stats, seconds = bench(names, check)
            if stats.violations:
                print("VIOLATIONS:", *stats.violations[:5], sep="\n  ")
            print(
                f"{','.join(names):<30} {'on' if check else 'off':<6} {stats.decisions:>9} "
                f"{stats.deals:>6} {seconds:>6.2f} {stats.decisions / seconds:>8.0f}"
            )


def run_profile() -> None:
    profile = cProfile.Profile()
    profile.enable()
    stats, seconds = bench(LINEUPS[0], check=True)
    profile.disable()
    print(f"profile: random x4, checks on, {stats.decisions} decisions (profiled {seconds:.1f} s)")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(12)


# -- the soak ------------------------------------------------------------------------------


class Soak:
    """Plays matches with every invariant checked; collects violations as text."""

    def __init__(self) -> None:
        self.deals = 0
        self.matches = 0
        self.decisions = 0
        self.faults = 0
        self.violations: list[str] = []

    def fail(self, where: str, problem: str) -> None:
        self.violations.append(f"{where}: {problem}")

    def match(self, seed: int) -> None:
        variant = SOAK_VARIANTS[seed % len(SOAK_VARIANTS)]
        rules = RuleSet.from_mapping({"deals": SOAK_DEALS_PER_MATCH, **variant})
        match = MatchMachine(MatchSetup(rules, seed))
        feed = SeatFeed(match)
        bots = [make_bot("random", seed * 4 + i) for i in range(4)]
        answers: list[tuple[int, Action]] = []
        where = f"seed {seed} {variant or 'competition'}"
        seen = won = 0
        while not match.finished:
            for decision in match.pending():
                seat = decision.seat
                request = feed.request(decision)
                self.request(match, request, where)
                action = bots[seat].decide(request)
                self.decisions += 1
                if not match.check(seat, action).legal:
                    self.faults += 1
                    try:
                        match.answer(seat, action)
                        self.fail(where, f"check refused {action}, answer took it")
                    except IllegalPlay:
                        pass
                    action = request.fallback
                    if not match.check(seat, action).legal:
                        self.fail(where, f"illegal fallback {action}")
                match.answer(seat, action)
                answers.append((seat, action))
                problem = check_cards(match.snapshot().deal)
                if problem:
                    self.fail(where, problem)
            for event in match.events[seen:]:
                if isinstance(event, TrickWon):
                    won += event.points
                elif isinstance(event, DealEnded):
                    self.deals += 1
                    if won + points(event.kitty) != 100 * rules.decks:
                        self.fail(where, f"deal {event.deal}: {won} + kitty points")
                    total = event.trick_points + event.kitty_bonus + event.penalty_points
                    if total != event.attacker_points:
                        self.fail(where, f"deal {event.deal}: attacker points {total}")
                    won = 0
            seen = len(match.events)
        self.matches += 1
        if match.result is None:
            self.fail(where, "no result")
        if seed % 50 == 0:
            again = MatchMachine(MatchSetup(rules, seed))
            for seat, action in answers:
                again.answer(seat, action)
            if [e.to_dict() for e in again.events] != [e.to_dict() for e in match.events]:
                self.fail(where, "replaying the answers gave other events")

    def request(self, match: MatchMachine, request: Any, where: str) -> None:
        """What a seat is sent: its own hand, the kitty only as dealer after pickup."""
        deal, seat, view = match.snapshot().deal, request.seat, request.view
        if Counter(view.hand) != Counter(deal.hands[seat]):
            self.fail(where, f"seat {seat}'s view hand differs from its hand")
        allowed = deal.phase is Phase.OVER or (
            seat == deal.dealer and deal.phase is not Phase.BIDDING
        )
        if view.kitty and not allowed:
            self.fail(where, f"seat {seat} sees the kitty")
        for event in request.events:
            if isinstance(event, CardDealt) and event.seat != seat:
                self.fail(where, f"seat {seat} sees a card dealt to seat {event.seat}")
            if isinstance(event, KittyTaken | KittyBuried) and event.seat != seat and event.cards:
                self.fail(where, f"seat {seat} sees the kitty in {event.type}")


def soak_worker(args: tuple[int, int, float, int]) -> tuple[int, int, int, int, list[str]]:
    """Matches from seed ``first`` with stride ``step`` until ``deals`` or the deadline."""
    first, step, deadline, deals = args
    soak = Soak()
    seed = first
    while time.time() < deadline and soak.deals < deals:
        soak.match(seed)
        seed += step
    return soak.deals, soak.matches, soak.decisions, soak.faults, soak.violations


def run_soak(deals: int, minutes: float, jobs: int) -> int:
    start = time.time()
    deadline = start + 60 * minutes
    share = -(-deals // jobs)
    work = [(j, jobs, deadline, share) for j in range(jobs)]
    if jobs == 1:
        results = [soak_worker(work[0])]
    else:
        with multiprocessing.Pool(jobs) as pool:
            results = pool.map(soak_worker, work)
    seconds = time.time() - start
    done = sum(r[0] for r in results)
    matches = sum(r[1] for r in results)
    decisions = sum(r[2] for r in results)
    faults = sum(r[3] for r in results)
    violations = [v for r in results for v in r[4]]
    stopped = " (time budget reached)" if done < deals else ""
    print(
        f"soak: {done} deals in {matches} matches{stopped}, {decisions} decisions, "
        f"{faults} illegal bot answers replaced by the fallback, {seconds:.0f} s "
        f"({done / seconds:.0f} deals/s on {jobs} process{'es' if jobs > 1 else ''})"
    )
    print(f"violations: {len(violations)}")
    for line in violations[:20]:
        print("  " + line)
    return 1 if violations else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="cProfile top 12 by tottime")
    parser.add_argument("--soak", type=int, metavar="N", help="play at least N deals, checked")
    parser.add_argument("--minutes", type=float, default=20.0, help="soak time budget")
    parser.add_argument("--jobs", type=int, default=1, help="soak worker processes")
    args = parser.parse_args(argv)
    if args.soak:
        return run_soak(args.soak, args.minutes, max(1, args.jobs))
    run_bench()
    if args.profile:
        run_profile()
    return 0


if __name__ == "__main__":
    sys.exit(main())
