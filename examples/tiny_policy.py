"""A tiny numpy policy trained on arena.env, then seated in the arena unchanged.

    .venv/bin/python examples/tiny_policy.py --minutes 4 --tournament 20
    # trains, writes examples/tiny_policy.json, then judges the policy with
    .venv/bin/arena tournament --bot tiny=policy:examples/tiny_policy.py:act \\
        --bot random=builtin:random --rounds 20 --deals 2

The policy scores each allowed action with a linear function of a few features read
from the observation alone (is it STOP, the card's points, rank, trump-ness, the
decision kind, whether the partner is winning the trick…) and plays the best one. It
is trained by evolution strategies (antithetic Gaussian perturbations of the 16
weights): its team (seats 0 and 2) plays random masked opponents in arena.env, and a
perturbation's fitness is its team's reward (levels won per deal, ±1 per match).
:func:`act` is the ``policy:MODULE:FUNCTION`` entry point: it loads the saved weights
(``examples/tiny_policy.json``) on first use.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from arena.env import STOP, Table, rules_for
from arena.env.encoding import OFFSET

WEIGHTS = Path(__file__).with_suffix(".json")
N_FEATURES = 16
_RANK = np.array([(i % 13) / 12.0 for i in range(52)] + [1.0, 1.0], dtype=np.float32)
_POINTS = np.array(
    [{3: 0.5, 8: 1.0, 11: 1.0}.get(i % 13, 0.0) for i in range(52)] + [0.0, 0.0], np.float32
)


def features(obs: np.ndarray) -> np.ndarray:
    """``[55, N_FEATURES]``: one row of features per action (card faces, then STOP)."""
    kind = obs[OFFSET["decision"] : OFFSET["decision"] + 5]
    bid, bury, lead, follow = kind[0], kind[1], kind[2], kind[3]
    trump = obs[OFFSET["trump"] : OFFSET["trump"] + 5]
    level = int(np.argmax(obs[OFFSET["level"] : OFFSET["level"] + 13]))
    is_trump = np.zeros(54, np.float32)
    is_trump[52:] = 1.0
    is_trump[[s * 13 + level for s in range(4)]] = 1.0
    for s in range(4):
        if trump[s]:
            is_trump[s * 13 : s * 13 + 13] = 1.0
    partner_winning = obs[OFFSET["winning"] + 2]
    hand = obs[OFFSET["hand"] : OFFSET["hand"] + 54]
    chosen = obs[OFFSET["scalars"] + 10] * 10
    f = np.zeros((55, N_FEATURES), np.float32)
    cards = f[:54]
    cards[:, 0] = _POINTS * follow
    cards[:, 1] = _POINTS * follow * partner_winning
    cards[:, 2] = _RANK * follow
    cards[:, 3] = _RANK * follow * partner_winning
    cards[:, 4] = is_trump * follow
    cards[:, 5] = _RANK * lead
    cards[:, 6] = is_trump * lead
    cards[:, 7] = _POINTS * lead
    cards[:, 8] = (hand >= 2) * lead
    cards[:, 9] = _POINTS * bury
    cards[:, 10] = is_trump * bury
    cards[:, 11] = _RANK * bury
    cards[:, 12] = bid
    f[STOP, 13] = lead * (chosen >= 1)
    f[STOP, 14] = bid
    f[:, 15] = 1.0
    return f


def choose(
    weights: np.ndarray, observation: dict[str, Any], rng: np.random.Generator | None
) -> int:
    """The best-scoring allowed action (or, given ``rng``, one drawn by softmax)."""
    mask = observation["action_mask"].astype(bool)
    scores = features(observation["observation"]) @ weights
    scores[~mask] = -np.inf
    if rng is None:
        return int(np.argmax(scores))
    p = np.exp(scores - scores[mask].max())
    return int(rng.choice(55, p=p / p.sum()))


_loaded: np.ndarray | None = None


def act(observation: dict[str, Any]) -> int:
    """The arena entry point: ``policy:examples/tiny_policy.py:act``."""
    global _loaded
    if _loaded is None:
        _loaded = np.array(json.loads(WEIGHTS.read_text())["weights"], np.float32)
    return choose(_loaded, observation, None)


def fitness(weights: np.ndarray, seeds: range, deals: int) -> float:
    """Mean reward of seats 0+2 playing ``weights`` against random masked seats 1+3."""
    table = Table(rules_for(deals=deals))
    rng = np.random.default_rng(seeds.start)
    total = 0.0
    for seed in seeds:
        table.reset(seed)
        while table.seat is not None:
            seat = table.seat
            obs, mask = table.observe(seat)
            if seat % 2 == 0:
                action = choose(weights, {"observation": obs, "action_mask": mask}, None)
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            table.step(action)
            total += table.rewards[0]
    return total / len(seeds)


def train(minutes: float, deals: int, batch: int, sigma: float, lr: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    weights = np.zeros(N_FEATURES, np.float32)
    deadline = time.monotonic() + 60 * minutes
    generation = seed = 0
    while time.monotonic() < deadline:
        noise = rng.standard_normal((batch, N_FEATURES)).astype(np.float32)
        seeds = range(seed, seed + 2)
        seed += 2
        gains = np.array(
            [
                fitness(weights + sigma * e, seeds, deals)
                - fitness(weights - sigma * e, seeds, deals)
                for e in noise
            ]
        )
        if gains.std() > 0:
            weights += lr / (batch * sigma) * (gains / gains.std()) @ noise
        generation += 1
        if generation % 5 == 0:
            score = fitness(weights, range(10_000, 10_006), deals)
            print(f"generation {generation}: reward vs random masked {score:+.2f}", flush=True)
    return weights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=4.0, help="training time (default 4)")
    parser.add_argument("--deals", type=int, default=1, help="deals per training match")
    parser.add_argument("--batch", type=int, default=6, help="perturbation pairs per step")
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument(
        "--tournament",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="then play ROUNDS duplicate rounds of arena tournament against builtin:random",
    )
    args = parser.parse_args(argv)
    weights = train(args.minutes, args.deals, args.batch, args.sigma, args.lr)
    WEIGHTS.write_text(json.dumps({"weights": [round(float(w), 4) for w in weights]}) + "\n")
    print(f"weights written to {WEIGHTS}")
    if not args.tournament:
        return 0
    from arena.cli.main import main as arena

    return arena(
        ["tournament", "--bot", f"tiny=policy:{Path(__file__).resolve()}:act",
         "--bot", "random=builtin:random", "--rounds", str(args.tournament), "--deals", "2"]
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
