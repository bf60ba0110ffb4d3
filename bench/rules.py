"""Rules-engine benchmark: follow checks, lead (throw) checks and trick resolutions per second.

Positions come from seeded random deals (four 25-card hands from a shuffled double deck, a
random level and trump suit, one deal in five without trump). Candidate follows to single,
pair, tractor and throw leads are drawn from the follower's hand, then sorted into legal and
illegal ones before timing, so each is timed on its own. Run: ``.venv/bin/python bench/rules.py``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.rules import (
    SUITED_RANKS,
    SUITS,
    Card,
    CardOrder,
    Trump,
    card_order,
    check_follow,
    check_lead,
    deck,
    decompose,
    trick_winner,
)

SEED = 20240611
DEALS = 400
TARGET_US = 100.0  # a follow check should cost far less than this


@dataclass(frozen=True)
class Position:
    order: CardOrder
    hands: list[list[Card]]


@dataclass(frozen=True)
class Follow:
    kind: str
    order: CardOrder
    lead: list[Card]
    hand: list[Card]
    play: list[Card]


def deal(rnd: random.Random) -> Position:
    cards = deck(2)
    rnd.shuffle(cards)
    suit = None if rnd.random() < 0.2 else rnd.choice(SUITS)
    order = card_order(Trump(rnd.choice(SUITED_RANKS), suit))
    return Position(order, [cards[i * 25 : (i + 1) * 25] for i in range(4)])


def leads_of(pos: Position, rnd: random.Random) -> dict[str, list[Card]]:
    """One lead of each kind the leader (seat 0) can make: single, pair, tractor, throw."""
    hand, order = pos.hands[0], pos.order
    out: dict[str, list[Card]] = {"single": [rnd.choice(hand)]}
    lanes = sorted({order.lane_of(c) for c in hand})
    for lane in rnd.sample(lanes, len(lanes)):
        units = decompose([c for c in hand if order.lane_of(c) == lane], order)
        for unit in units:
            out.setdefault(unit.kind, list(unit.cards))
        if len(units) >= 2 and "throw" not in out:
            picked = rnd.sample(units, rnd.randint(2, min(4, len(units))))
            out["throw"] = [c for u in picked for c in u.cards]
    return out


def candidates(lead: Sequence[Card], hand: Sequence[Card], order: CardOrder, rnd: random.Random):
    """Candidate follows: all from the led suit when possible, or random cards of the hand."""
    led = order.lane_of(lead[0])
    suited = [c for c in hand if order.lane_of(c) == led]
    n = len(lead)
    for _ in range(6):
        if len(suited) >= n and rnd.random() < 0.7:
            yield rnd.sample(suited, n)
        else:
            yield rnd.sample(list(hand), n)


def build(rnd: random.Random) -> tuple[list[Follow], list[Follow], list, list]:
    legal: list[Follow] = []
    illegal: list[Follow] = []
    lead_cases: list[tuple[int, list[list[Card]], list[Card], CardOrder]] = []
    tricks: list[tuple[int, list[list[Card]], CardOrder]] = []
    for _ in range(DEALS):
        pos = deal(rnd)
        for kind, lead in leads_of(pos, rnd).items():
            lead_cases.append((0, pos.hands, lead, pos.order))
            plays = [lead]
            for seat in (1, 2, 3):
                hand = pos.hands[seat]
                found = None
                for play in candidates(lead, hand, pos.order, rnd):
                    case = Follow(kind, pos.order, lead, hand, play)
                    if check_follow(lead, hand, play, pos.order):
                        legal.append(case)
                        found = found or play
                    else:
                        illegal.append(case)
                plays.append(found or list(hand[: len(lead)]))
            tricks.append((0, plays, pos.order))
        # a few random throws too (many of them fail the throw check)
        hand = pos.hands[0]
        for _ in range(3):
            lane = pos.order.lane_of(rnd.choice(hand))
            suited = [c for c in hand if pos.order.lane_of(c) == lane]
            if len(suited) >= 2:
                lead_cases.append(
                    (
                        0,
                        pos.hands,
                        rnd.sample(suited, rnd.randint(2, min(6, len(suited)))),
                        pos.order,
                    )
                )
    return legal, illegal, lead_cases, tricks


def timed(calls: int, cases: Sequence, fn: Callable[[object], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds for ``calls`` calls of ``fn``, cycling through ``cases``.

    The CPU time shows how much of the wall time a busy machine took away.
    """
    n = len(cases)
    cpu = time.process_time()
    start = time.perf_counter()
    for i in range(calls):
        fn(cases[i % n])
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    rnd = random.Random(SEED)
    t0 = time.perf_counter()
    legal, illegal, lead_cases, tricks = build(rnd)
    setup = time.perf_counter() - t0
    print(f"rules benchmark — seed {SEED}, {DEALS} deals, setup {setup:.1f} s")
    print(
        f"  {len(legal)} legal and {len(illegal)} illegal follows, "
        f"{len(lead_cases)} leads, {len(tricks)} tricks"
    )

    def follow(case: Follow) -> object:
        return check_follow(case.lead, case.hand, case.play, case.order)

    def lead(case: tuple) -> object:
        leader, hands, play, order = case
        return check_lead(leader, hands, play, order)

    def trick(case: tuple) -> object:
        leader, plays, order = case
        return trick_winner(leader, plays, order)

    rows: list[tuple[str, int, tuple[float, float]]] = []
    for kind in ("single", "pair", "tractor", "throw"):
        for name, pool in (("legal", legal), ("illegal", illegal)):
            cases = [c for c in pool if c.kind == kind]
            if cases:
                calls = 10_000
                rows.append((f"follow {kind:<7} {name}", calls, timed(calls, cases, follow)))
    rows.append(("follow, all cases", 40_000, timed(40_000, legal + illegal, follow)))
    rows.append(("lead (incl. throws)", 30_000, timed(30_000, lead_cases, lead)))
    throws = [c for c in lead_cases if len(decompose(c[2], c[3])) > 1]
    rows.append(("lead, throws only", 15_000, timed(15_000, throws, lead)))
    rows.append(("trick winner", 30_000, timed(30_000, tricks, trick)))

    print()
    head = f"  {'operation':<28} {'calls':>7} {'seconds':>8} {'calls/s':>9} {'µs/call':>8}"
    print(head + f" {'cpu µs':>7}")
    print(f"  {'-' * 28} {'-' * 7} {'-' * 8} {'-' * 9} {'-' * 8} {'-' * 7}")
    for name, calls, (wall, cpu) in rows:
        print(
            f"  {name:<28} {calls:>7} {wall:>8.2f} {calls / wall:>9,.0f} "
            f"{wall / calls * 1e6:>8.1f} {cpu / calls * 1e6:>7.1f}"
        )
    worst = max(wall / c * 1e6 for name, c, (wall, _) in rows if name.startswith("follow"))
    verdict = "ok" if worst < TARGET_US else "SLOW (is the machine busy? compare the cpu column)"
    print(
        f"\n  slowest follow check: {worst:.1f} µs (target: far below {TARGET_US:.0f} µs) {verdict}"
    )


if __name__ == "__main__":
    main()
