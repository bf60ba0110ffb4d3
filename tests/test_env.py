"""arena.env: the PettingZoo API, exact masks, legal trajectories that replay as records,
and observations that hold no hidden card (hypothesis, over seeds and rule variants).

Skips, naming the packages, without the optional extra ``arena[env]``.
"""

from __future__ import annotations

import ast
import io
import itertools
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy", reason="numpy not installed: pip install 'arena[env]'")
pytest.importorskip("gymnasium", reason="gymnasium not installed: pip install 'arena[env]'")
pytest.importorskip("pettingzoo", reason="pettingzoo not installed: pip install 'arena[env]'")

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test

from arena.env import ACTION_SIZE, LAYOUT, OBS_SIZE, STOP, Rewards, Table, env, rules_for
from arena.env.actions import Choice
from arena.env.encoding import OFFSET
from arena.env.vector import VectorTable
from arena.game import (
    Action,
    CardsPlayed,
    DealEnded,
    DealStarted,
    MatchMachine,
    Phase,
    TrickWon,
    check_cards,
)
from arena.records import RecordHeader, RecordWriter, SeatRecord, parse_record, verify
from arena.rules import CARDS, Card, check_follow, points
from tests.test_game_properties import VARIANTS

EXAMPLES = settings(max_examples=20, deadline=None)
seeds = st.integers(min_value=0, max_value=2**63)
variants = st.sampled_from(VARIANTS)


# api_test's two advice warnings concern every dict observation with an action mask (as in
# PettingZoo's own classic games); they are not failures.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably:UserWarning")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")
@pytest.mark.parametrize("variant", [{}, {"decks": 3}, {"follow": "suit_only", "decks": 1}])
def test_the_pettingzoo_api_test_passes(variant: dict[str, Any]) -> None:
    api_test(env(deals=1, variants=variant), num_cycles=100)


def test_reset_with_a_seed_replays_the_same_match() -> None:
    def trajectory(seed: int) -> list[tuple[str, int, float]]:
        e = env(deals=1)
        e.reset(seed=seed)
        rng = random.Random(1)
        out = []
        for agent in e.agent_iter():
            obs, reward, done, cut, _ = e.last()
            action = None if done or cut else rng.choice(np.flatnonzero(obs["action_mask"]))
            out.append((agent, -1 if action is None else int(action), reward))
            e.step(action)
        return out

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)


def test_the_first_deal_is_the_arenas_deal_of_that_seed() -> None:
    table = Table(rules_for(deals=1))
    table.reset(5)
    assert table.match.decks[0] == MatchMachine(table.match.setup).decks[0]


def test_a_masked_out_action_is_refused_and_changes_nothing() -> None:
    table = Table(rules_for(deals=1))
    table.reset(3)
    assert table.seat is not None
    obs, mask = table.observe(table.seat)
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=r"masked out|not allowed"):
        table.step(bad)
    again, mask2 = table.observe(table.seat)
    assert (again == obs).all() and (mask2 == mask).all()


# -- random masked play, checked at every step ------------------------------------------------


_LEGAL: list[tuple[Choice, set[tuple[Card, ...]]]] = []  # the decision last judged


def brute_mask(choice: Choice) -> set[int] | None:
    """The allowed next cards of a follow, by judging every follow the hand could make
    (when there are at most 3,000 of them)."""
    decision = choice.decision
    if choice.kind != "follow" or choice.order is None:
        return None
    n = len(decision.lead)
    legal = _LEGAL[0][1] if _LEGAL and _LEGAL[0][0] is choice else None
    if legal is None:
        hand = sorted(choice.hand, key=lambda c: c.index)
        if math.comb(len(hand), n) > 3000:
            return None
        combos = set(itertools.combinations(hand, n))
        legal = {
            combo
            for combo in combos
            if check_follow(decision.lead, choice.hand, combo, choice.order)
        }
        _LEGAL[:] = [(choice, legal)]
    chosen = Counter(choice.chosen)
    out = set()
    for combo in legal:
        have = Counter(combo)
        if all(have[c] >= k for c, k in chosen.items()):
            out.update(c.index for c, k in have.items() if k > chosen[c])
    return out


def check_observation(table: Table, seat: int, obs: Any) -> None:
    """Every card plane equals the truth the seat may know: no hidden card, nothing missed."""
    deal, match = table.match.snapshot().deal, table.match

    def plane(name: str, rel: int = 0) -> Counter[Card]:
        at = OFFSET[name] + rel * 54
        return Counter({CARDS[i]: int(obs[at + i]) for i in range(54) if obs[at + i]})

    assert obs.shape == (OBS_SIZE,)
    assert plane("hand") == Counter(deal.hands[seat])
    may_see = deal.phase is Phase.OVER or (seat == deal.dealer and deal.phase is not Phase.BIDDING)
    assert plane("kitty") == (Counter(deal.kitty) if may_see else Counter())
    start = max(i for i, e in enumerate(match.events) if isinstance(e, DealStarted))
    played: list[Counter[Card]] = [Counter(), Counter(), Counter(), Counter()]
    for event in match.events[start:]:
        if isinstance(event, CardsPlayed):
            played[event.seat].update(event.cards)
    for rel in range(4):
        other = (seat + rel) % 4
        assert plane("played", rel) == played[other]
        assert plane("revealed", rel) == Counter(deal.revealed[other])
        bids: Counter[Card] = Counter()
        for bid in deal.bids:
            if bid.seat == other:
                bids[bid.face] = max(bids[bid.face], len(bid.cards))
        assert plane("bids", rel) == bids
        trick = Counter(c for s, cards in deal.plays for c in cards if s == other)
        assert plane("trick", rel) == (trick if deal.phase is Phase.PLAYING else Counter())


class _Kept(io.BytesIO):
    """An in-memory record file that keeps its bytes when the writer closes it."""

    def close(self) -> None:
        return None


def play(
    seed: int, variant: dict[str, Any], deals: int = 1, observe_all: bool = False
) -> tuple[Table, list[tuple[int, Action]], bytes]:
    """Random masked actions to the end, every mask and answer checked; the record bytes."""
    rules = rules_for(variant, deals)
    table = Table(rules)
    out = _Kept()
    seats = [SeatRecord(f"env{s}", "arena.env") for s in range(4)]
    header = RecordHeader("env-test", rules, seed, tuple(seats))
    writer = RecordWriter(out, header)
    table.reset(seed, recorder=writer)
    rng = random.Random(seed)
    answers: list[tuple[int, Action]] = []
    trick_points = 0
    while table.seat is not None:
        seat, choice = table.seat, table.choice
        assert choice is not None
        obs, mask = table.observe(seat)
        assert mask.shape == (ACTION_SIZE,) and mask.any()
        expected = brute_mask(choice)
        if expected is not None:
            assert set(np.flatnonzero(mask[:STOP])) == expected
        if observe_all:
            for s in range(4):
                check_observation(table, s, obs if s == seat else table.observe(s)[0])
        action = rng.choice(np.flatnonzero(mask).tolist())
        done = table.step(action)  # the machine refuses an illegal answer (IllegalPlay)
        if done is not None:
            answers.append((seat, done))
            if not table.finished:
                assert check_cards(table.match.snapshot().deal) is None
    for event in table.match.events:
        if isinstance(event, TrickWon):
            trick_points += event.points
        elif isinstance(event, DealEnded):
            assert trick_points + points(event.kitty) == 100 * rules.decks
            trick_points = 0
    return table, answers, out.getvalue()


@EXAMPLES
@given(seed=seeds, variant=variants)
def test_random_masked_play_is_legal_and_replays_as_a_verified_record(
    seed: int, variant: dict[str, Any]
) -> None:
    table, answers, record = play(seed, variant)
    assert table.finished
    judge = MatchMachine(table.match.setup)  # the judge, fed the env's answers afresh
    for seat, action in answers:
        assert judge.check(seat, action).legal
        judge.answer(seat, action)
    assert judge.result == table.match.result
    result = verify(parse_record(record))
    assert result.ok, str(result)


@settings(max_examples=4, deadline=None)
@given(seed=seeds, variant=variants)
def test_no_observation_holds_a_hidden_card(seed: int, variant: dict[str, Any]) -> None:
    play(seed, variant, observe_all=True)


def test_docs_show_the_observation_layout_as_built() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "env.md").read_text()
    for name, width, meaning in LAYOUT:
        assert f"| `{name}` | {OFFSET[name]} | {width} | {meaning} |" in text
    assert f"float32[{OBS_SIZE}]" in text


def test_rewards_are_zero_sum_and_add_up_to_the_levels_won() -> None:
    table = Table(rules_for(deals=2), Rewards(deal=1.0, match=1.0, points=0.5))
    table.reset(4)
    rng = random.Random(4)
    total = [0.0, 0.0, 0.0, 0.0]
    while table.seat is not None:
        _, mask = table.observe(table.seat)
        table.step(rng.choice(np.flatnonzero(mask).tolist()))
        r = table.rewards
        assert r[0] == r[2] and r[1] == r[3] and r[0] == -r[1]
        total = [t + x for t, x in zip(total, r, strict=True)]
    expected = 0.0  # team 0's levels won less team 1's, the match, the trick points
    for event in table.match.events:
        if isinstance(event, DealEnded):
            winner = event.dealer % 2 if event.winner == "dealer" else 1 - event.dealer % 2
            expected += event.levels_gained * (1 if winner == 0 else -1)
        elif isinstance(event, TrickWon):
            expected += 0.5 * event.points / 200 * (1 if event.winner % 2 == 0 else -1)
    result = table.match.result
    assert result is not None
    expected += 0 if result.winner is None else (1 if result.winner == 0 else -1)
    assert total[0] == pytest.approx(expected)


def test_the_vector_runner_steps_many_matches_and_restarts_them() -> None:
    vec = VectorTable(3, rules_for(deals=1), seed=100)
    rng = np.random.default_rng(0)
    finished = 0
    while vec.matches < 4:
        obs, masks, seats = vec.observe()
        assert obs.shape == (3, OBS_SIZE) and masks.shape == (3, ACTION_SIZE)
        assert masks.any(axis=1).all() and ((seats >= 0) & (seats < 4)).all()
        rewards, done = vec.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        assert rewards.shape == (3, 4) and (rewards[:, 0] == -rewards[:, 1]).all()
        finished += int(done.sum())
    assert finished == vec.matches and vec.next_seed == 100 + 3 + vec.matches
    assert vec.decisions <= vec.steps


def test_the_env_stays_off_trio_and_grpc() -> None:
    from tests.test_purity import ARENA, imported

    for path in sorted((ARENA / "env").glob("*.py")):
        names = imported(ast.parse(path.read_text(encoding="utf-8")))
        bad = names & {"trio", "grpc", "asyncio", "socket", "structlog", "threading"}
        assert not bad, f"{path.name} imports {', '.join(sorted(bad))}"


def test_resets_without_a_seed_follow_from_the_last_seed() -> None:
    def seeds() -> list[int]:
        e = env(deals=1)
        e.reset(seed=9)
        out = [e.seed_used]
        for _ in range(3):
            e.reset()
            out.append(e.seed_used)
        return out

    assert seeds() == seeds() and seeds()[0] == 9 and len(set(seeds())) == 4


def test_the_process_vector_runner_spreads_distinct_matches_over_workers() -> None:
    from arena.env.vector import ProcessVectorTable

    rng = np.random.default_rng(1)
    with ProcessVectorTable(2, 2, rules_for(deals=1), seed=50) as vec:
        obs, _, _ = vec.observe()  # matches 50, 52 (worker 0) and 51, 53 (worker 1)
        hands = {obs[i, OFFSET["hand"] : OFFSET["hand"] + 54].tobytes() for i in range(4)}
        assert len(hands) == 4
        for _ in range(400):
            obs, masks, seats = vec.observe()
            assert obs.shape == (4, OBS_SIZE) and masks.any(axis=1).all()
            assert ((seats >= 0) & (seats < 4)).all()
            rewards, done = vec.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
            assert rewards.shape == (4, 4) and done.shape == (4,)
        assert vec.steps == 4 * 400 and vec.decisions <= vec.steps
