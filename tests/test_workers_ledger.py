"""The front's ledger (``arena serve --workers``): the bounds hold across workers, a
match is routed by its id and its seat tokens, and a worker's death hands back exactly
its live matches. Pure bookkeeping: no process (tests/test_workers.py runs the real one)."""

from __future__ import annotations

import pytest

from arena.server.limits import LimitExceeded, Limits
from arena.server.tokens import token_hash
from arena.server.workers.ledger import Ledger

READY = [True, True]


def create(ledger: Ledger, match_id: str, organiser: str = "a") -> int:
    worker = ledger.reserve(organiser, READY)
    ledger.created(match_id, worker, [f"{match_id}-t{s}" for s in range(4)], organiser)
    return worker


def test_matches_go_to_the_least_loaded_worker_and_tokens_lead_there() -> None:
    ledger = Ledger(Limits(), 2)
    placed = [create(ledger, f"m-{i}") for i in range(4)]
    assert sorted(placed) == [0, 0, 1, 1]
    for i, worker in enumerate(placed):
        assert ledger.where(f"m-{i}") == worker
        assert ledger.seat(f"m-{i}-t3") == worker
    assert ledger.seat("stranger") is None
    ledger.report(0, "m-0", "finished", [])
    assert create(ledger, "m-4") == 0  # worker 0 has one live match, worker 1 two


def test_bounds_hold_across_workers_and_free_up_when_matches_end() -> None:
    ledger = Ledger(Limits(matches_total=3, matches_per_organiser=2), 2)
    create(ledger, "m-1", "a")
    create(ledger, "m-2", "a")
    with pytest.raises(LimitExceeded, match="matches-per-organiser"):
        ledger.reserve("a", READY)
    create(ledger, "m-3", "b")
    with pytest.raises(LimitExceeded, match="matches-total"):
        ledger.reserve("c", READY)
    ledger.report(ledger.where("m-1") or 0, "m-1", "running", [])
    ledger.report(ledger.where("m-1") or 0, "m-1", "cancelled", [])
    create(ledger, "m-4", "a")  # m-1 is over: room for one more of a's
    with pytest.raises(LimitExceeded, match="no worker is ready"):
        Ledger(Limits(), 2).reserve("a", [False, False])


def test_a_failed_create_gives_its_place_back() -> None:
    ledger = Ledger(Limits(matches_total=1), 2)
    worker = ledger.reserve("a", READY)
    ledger.release("a", worker)
    create(ledger, "m-1")


def test_a_dead_worker_hands_back_its_live_matches_and_forgets_the_rest() -> None:
    ledger = Ledger(Limits(matches_total=4), 2)
    for i in range(4):
        create(ledger, f"m-{i}")
    on_zero = [f"m-{i}" for i in range(4) if ledger.where(f"m-{i}") == 0]
    ledger.report(0, on_zero[0], "running", [])
    ledger.report(0, on_zero[1], "finished", [])
    assert ledger.worker_lost(0) == [on_zero[0]]  # the finished one is on disk only
    assert ledger.where(on_zero[1]) is None
    # the replacement reports the resumed match (waiting for its bots, then running)
    ledger.report(0, on_zero[0], "waiting", [])
    assert ledger.seat(f"{on_zero[0]}-t0") == 0
    ledger.report(0, on_zero[0], "forgotten", [])
    assert ledger.seat(f"{on_zero[0]}-t0") is None
    create(ledger, "m-5")
    create(ledger, "m-6")  # two places came back: the finished one and the forgotten one


def test_a_restored_match_is_known_by_its_token_hashes_alone() -> None:
    ledger = Ledger(Limits(matches_total=1), 2)
    ledger.report(1, "m-old", "waiting", [token_hash("old-token")])
    assert ledger.seat("old-token") == 1
    with pytest.raises(LimitExceeded):  # it counts as live
        ledger.reserve("a", READY)
