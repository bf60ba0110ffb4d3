"""Event schedules (pure): which four bots play each match, with which seed.

A Swiss event plays in rounds: before each round the bots are ranked by rating (round
1: in a seeded random order), and each four consecutive bots make a table where the
first and fourth partner against the second and third — so bots of a like strength
meet, and each table's partnerships are as even as the ranking allows.

A ladder has no rounds: whenever four of its bots are free in the lobby, the one whose
rating is least certain (highest sigma) is seated with the three free bots rated closest
to it, the best and the worst of the four against the other two; up to a number of
matches.

A round robin of partnerships: every pair of bots is a partnership, and every two
partnerships without a bot in common meet. With duplicate deals each meeting is played
twice on the same seed, the second time with the partnerships swapped (moved one seat
on, :func:`arena.batch.duplicate_seating`), so each is dealt the other's cards and luck
cancels out. A self-play event lets a bot partner (or face) itself.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence

from arena.errors import ArenaError

Seats = tuple[str, str, str, str]
FORMATS = ("round-robin", "swiss", "ladder")


def round_robin(
    bots: Sequence[str], rounds: int = 1, duplicate: bool = True, seed: int = 0
) -> list[tuple[Seats, int]]:
    """The matches of a round robin of partnerships: ``(seats, seed)`` each.

    Raises:
        ArenaError: fewer than 4 distinct bots (or 1 with self-play: repeat the name).
    """
    if len(bots) < 4:
        raise ArenaError("a round robin of partnerships needs at least 4 bots")
    rng = random.Random(seed)
    pairs = list(itertools.combinations(range(len(bots)), 2))
    meetings = [(a, b) for a, b in itertools.combinations(pairs, 2) if not set(a) & set(b)]
    matches: list[tuple[Seats, int]] = []
    for _ in range(rounds):
        for (a1, a2), (b1, b2) in meetings:
            deal_seed = rng.randrange(2**63)
            seats: Seats = (bots[a1], bots[b1], bots[a2], bots[b2])
            matches.append((seats, deal_seed))
            if duplicate:
                matches.append(((seats[3], seats[0], seats[1], seats[2]), deal_seed))
    return matches


def check_seating(bots: Sequence[str], self_play: bool) -> None:
    """One bot, one seat per match, unless the event is a self-play event.

    Raises:
        ArenaError: a name appears twice without ``self_play``.
    """
    twice = sorted({b for b in bots if list(bots).count(b) > 1})
    if twice and not self_play:
        raise ArenaError(
            f"{', '.join(twice)} would take two seats of one match; give each bot once, "
            "or --self-play for a self-play event"
        )


def swiss_round(
    ranking: Sequence[str], round_no: int, duplicate: bool = True, seed: int = 0
) -> list[tuple[Seats, int]]:
    """One Swiss round over ``ranking`` (best first; round 1 shuffles it by ``seed``).

    Raises:
        ArenaError: the number of bots is not a multiple of 4.
    """
    if len(ranking) < 4 or len(ranking) % 4:
        raise ArenaError("a Swiss event needs a multiple of 4 bots (4, 8, 12, ...)")
    rng = random.Random(f"{seed}/{round_no}")
    order = list(ranking)
    if round_no == 1:
        rng.shuffle(order)
    matches: list[tuple[Seats, int]] = []
    for t in range(0, len(order), 4):
        b1, b2, b3, b4 = order[t : t + 4]
        deal_seed = rng.randrange(2**63)
        seats: Seats = (b1, b2, b4, b3)  # b1+b4 against b2+b3
        matches.append((seats, deal_seed))
        if duplicate:
            matches.append(((seats[3], seats[0], seats[1], seats[2]), deal_seed))
    return matches


def ladder_table(free: Sequence[str], ratings: Mapping[str, tuple[float, float]]) -> Seats | None:
    """Four of the ``free`` bots for the next ladder match (``None`` if fewer than 4):
    the least certain bot (``ratings[name] = (ordinal, sigma)``) and the three rated
    nearest to it, seated best and worst against the middle two."""
    if len(set(free)) < 4:
        return None
    names = sorted(set(free))
    unsure = max(names, key=lambda n: (ratings[n][1], n))
    nearest = sorted(
        (n for n in names if n != unsure),
        key=lambda n: (abs(ratings[n][0] - ratings[unsure][0]), n),
    )[:3]
    b1, b2, b3, b4 = sorted([unsure, *nearest], key=lambda n: (-ratings[n][0], n))
    return (b1, b2, b4, b3)
