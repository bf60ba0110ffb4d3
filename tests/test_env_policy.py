"""A policy written against arena.env plays in the arena unchanged: in-process as a
``policy:MODULE:FUNCTION`` seat (batch, tournament, match) and over gRPC through
``sample_bots/policy_bot.py``, seeing the same encoding as in training.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="numpy not installed: pip install 'arena[env]'")
pytest.importorskip("pettingzoo", reason="pettingzoo not installed: pip install 'arena[env]'")

from arena.batch import BotSpec
from arena.cli.main import main
from arena.env import Table, rules_for
from arena.env.policy import PolicyBot, load_policy
from arena.game import MatchSetup, play_match
from arena.records import read_record, verify

ROOT = Path(__file__).resolve().parent.parent
TINY = f"{ROOT / 'examples' / 'tiny_policy.py'}:act"


def test_the_env_and_a_policy_seat_play_the_identical_match() -> None:
    act = load_policy(TINY)
    rules = rules_for(deals=2)
    table = Table(rules)
    table.reset(21)
    while table.seat is not None:
        obs, mask = table.observe(table.seat)
        table.step(act({"observation": obs, "action_mask": mask}))
    bots = [PolicyBot(act) for _ in range(4)]
    seated = play_match(MatchSetup(rules, 21), bots)
    assert [e.to_dict() for e in seated.events] == [e.to_dict() for e in table.match.events]


def run_batch(tmp_path: Path, bots: list[str], *extra: str) -> dict:
    out = tmp_path / "out"
    args = ["batch", "--out", str(out), "--json", "--deals", "1", *extra]
    for bot in bots:
        args += ["--bot", bot]
    assert main(args) == 0
    summary: dict = json.loads((out / "summary.json").read_text())
    for path in sorted(out.glob("match-*.jsonl")):
        assert verify(read_record(path)).ok
    return summary


def test_a_policy_seat_plays_a_batch_in_process(tmp_path: Path) -> None:
    policy = f"tiny=policy:{TINY}"
    summary = run_batch(
        tmp_path, [policy, "builtin:random"] * 2, "--matches", "2", "--parallel", "1"
    )
    assert summary["completed"] == 2 and summary["faults"] == 0


@pytest.mark.slow
def test_a_policy_plays_over_grpc_through_the_botkit_adapter(tmp_path: Path) -> None:
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'policy_bot.py'} --policy {TINY}"
    summary = run_batch(tmp_path, [bot, "builtin:random", bot, "builtin:greedy"], "--matches", "1")
    assert summary["completed"] == 1 and summary["faults"] == 0
    assert summary["results"]["bots"]["policy_bot"]["decisions"] > 0


def test_a_missing_policy_is_refused_before_the_match(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="no_such_module"):
        BotSpec("x", "policy:no_such_module:act").check()
    with pytest.raises(ValueError, match="has no function"):
        BotSpec("x", f"policy:{TINY}_missing").check()
    bots = ["policy:no_such_module:act"] + ["builtin:random"] * 3
    assert main(["match", *[a for b in bots for a in ("--bot", b)]]) == 2
    assert "no_such_module" in capsys.readouterr().err


def test_over_the_wire_a_policy_sees_the_same_encoding() -> None:
    """Every request of a match, sent through the wire conversion and read back by
    ``sample_bots/policy_bot.py``, encodes to the same observation and decision."""
    sys.path.insert(0, str(ROOT / "sample_bots"))
    try:
        import policy_bot  # the gRPC adapter, imported as its script runs it
    finally:
        sys.path.remove(str(ROOT / "sample_bots"))
    from botkit import Table as WireTable

    from arena.env.encoding import SeatMemory, encode
    from arena.env.policy import _order
    from arena.game import Request, play_match
    from arena.server.convert import request_to_pb

    class Compare:
        name = "compare"

        def __init__(self, inner: PolicyBot) -> None:
            self.inner = inner
            self.direct: SeatMemory | None = None
            self.wire: SeatMemory | None = None
            self.checked = 0

        def decide(self, request: Request) -> tuple:
            seat = request.seat
            self.direct = self.direct or SeatMemory(seat)
            self.wire = self.wire or SeatMemory(seat)
            self.direct.absorb(request.events)
            message = request_to_pb(1, request, 1000, 1000).request
            view = policy_bot.view_from_pb(message.view)
            self.wire.absorb(policy_bot.events_from_pb(list(message.events)))
            d = request.decision
            a = encode(request.view, self.direct, request.rules, "none", d.count)
            b = encode(view, self.wire, request.rules, "none", d.count)
            assert (a == b).all(), f"seat {seat}: the wire view encodes differently"
            wire = WireTable(seat, request.rules)
            direct_order = _order(request.view, request.rules)
            wire_order = wire.order(message.view) if view.trump_declared else None
            assert (direct_order is None) == (wire_order is None)
            assert policy_bot.decision_from_pb(message, view) == request.decision
            self.checked += 1
            return self.inner.decide(request)

    act = load_policy(TINY)
    bots = [Compare(PolicyBot(act)) for _ in range(4)]
    play_match(MatchSetup(rules_for(deals=2), 8), bots)
    assert all(b.checked > 50 for b in bots)


def test_a_failing_policy_plays_the_fallback_and_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(observation: dict) -> int:
        raise RuntimeError("bug in my policy")

    match = play_match(MatchSetup(rules_for(deals=1), 2), [PolicyBot(broken, "broken")] * 4)
    assert match.finished
    assert "broken: the policy failed (RuntimeError('bug in my policy'))" in capsys.readouterr().err


def test_the_example_trains_and_its_fitness_is_measured_in_the_env(tmp_path: Path) -> None:
    """The example's fitness (its team against random masked seats in arena.env) and its
    training loop run (the committed weights come from a full run: see docs/env.md)."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location(
        "tiny_example", ROOT / "examples" / "tiny_policy.py"
    )
    assert spec is not None and spec.loader is not None
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    score = tiny.fitness(np.zeros(tiny.N_FEATURES, np.float32), range(2), 1)
    assert isinstance(score, float)
    weights = tiny.train(minutes=1e-6, deals=1, batch=1, sigma=0.5, lr=0.3)
    assert weights.shape == (tiny.N_FEATURES,)
