"""arena.env speed: environment steps/s with random masked actions beside ``arena
selfplay``'s decisions/s, side by side in one run (one core).

    .venv/bin/python bench/env.py [--matches 12] [--deals 4] [--rounds 3] [--processes 2]

Each round plays the same seeds through: ``play_match`` with four random bots (what
``arena selfplay`` runs; its checks on, its default, and off), the PettingZoo AEC
environment (``env.last()`` then ``env.step``, a uniformly random allowed action), the
bare :class:`~arena.env.Table`, and a :class:`~arena.env.vector.VectorTable` of 16 tables
choosing in one numpy call. Rounds alternate so machine noise hits all alike; the best
round of each is reported, with the ratio to self-play. Rates are per CPU-second of this
process (``time.process_time``), so a busy shared machine skews them less than wall time.
A step is one card choice; a decision is one whole answer (steps ≥ decisions).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

import numpy as np

from arena.bots import make_bot
from arena.env import STOP, Table, env, rules_for
from arena.env.vector import ProcessVectorTable, VectorTable
from arena.game import MatchSetup, SelfplayStats, play_match
from arena.rules import RuleSet

Run = Callable[[RuleSet, range], tuple[int, int]]  # -> (steps, decisions)


def selfplay(check: bool) -> Run:
    def run(rules: RuleSet, seeds: range) -> tuple[int, int]:
        stats = SelfplayStats()
        for seed in seeds:
            bots = [make_bot("random", seed * 4 + i) for i in range(4)]
            play_match(MatchSetup(rules, seed), bots, stats=stats, check=check)
        return stats.decisions, stats.decisions

    return run


def aec(rules: RuleSet, seeds: range) -> tuple[int, int]:
    e = env(variants=rules.changes())
    rng = random.Random(0)
    steps = decisions = 0
    for seed in seeds:
        e.reset(seed=seed)
        for _ in e.agent_iter():
            obs, _, done, cut, _ = e.last()
            e.step(None if done or cut else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        steps, decisions = steps + e.table.steps, decisions + e.table.decisions
    return steps, decisions


def table(rules: RuleSet, seeds: range) -> tuple[int, int]:
    t = Table(rules)
    rng = random.Random(0)
    steps = decisions = 0
    for seed in seeds:
        t.reset(seed)
        while t.seat is not None:
            _, mask = t.observe(t.seat)
            t.step(rng.choice(np.flatnonzero(mask).tolist()))
        steps, decisions = steps + t.steps, decisions + t.decisions
    return steps, decisions


SAME_GAMES: dict[int, object] = {}  # seed -> result, checked against self-play once


def check_same_games(rules: RuleSet) -> None:
    for seed, result in SAME_GAMES.items():
        bots = [make_bot("random", seed * 4 + i) for i in range(4)]
        assert play_match(MatchSetup(rules, seed), bots).result == result, f"seed {seed} differs"


def table_same_games(rules: RuleSet, seeds: range) -> tuple[int, int]:
    """The Table fed, card by card, the answers of self-play's own random bots: the same
    games as ``arena selfplay`` (the match results are checked), so the decision rates
    compare the environment's own cost, observations and masks included."""
    t = Table(rules)
    steps = decisions = 0
    for seed in seeds:
        bots = [make_bot("random", seed * 4 + i) for i in range(4)]
        t.reset(seed)
        while t.seat is not None and t.request is not None:
            answer = bots[t.seat].decide(t.request)
            for card in answer:
                t.observe(t.seat)
                t.step(card.index)
            if t.request is not None and t.choice is not None and t.choice.chosen == list(answer):
                t.observe(t.seat)  # type: ignore[arg-type]
                t.step(STOP)  # a pass, or a bid or lead that could have grown
        SAME_GAMES[seed] = t.match.result
        steps, decisions = steps + t.steps, decisions + t.decisions
    return steps, decisions


def vector(rules: RuleSet, seeds: range, n: int = 16) -> tuple[int, int]:
    v = VectorTable(n, rules, seed=seeds.start)
    rng = np.random.default_rng(0)
    while v.matches < len(seeds):
        _, masks, _ = v.observe()
        v.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
    return v.steps, v.decisions


def across(processes: int, rules: RuleSet, matches: int) -> tuple[float, int]:
    """A ProcessVectorTable of ``processes`` workers × 16 tables: (wall seconds, steps)."""
    rng = np.random.default_rng(0)
    with ProcessVectorTable(processes, 16, rules) as v:
        v.observe()  # the workers are up
        started = time.perf_counter()
        while v.matches < matches:
            _, masks, _ = v.observe()
            v.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        return time.perf_counter() - started, v.steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=12, help="matches per runner per round")
    parser.add_argument("--deals", type=int, default=4, help="deals per match")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds")
    parser.add_argument("--processes", type=int, default=2, help="vector runner processes")
    args = parser.parse_args(argv)
    rules = rules_for(deals=args.deals)
    seeds = range(args.matches)
    runners: dict[str, Run] = {
        "arena selfplay, random x4 (checks on)": selfplay(True),
        "arena selfplay, random x4 (checks off)": selfplay(False),
        "arena.env AEC, random masked": aec,
        "arena.env Table, random masked": table,
        "arena.env Table, selfplay's random answers": table_same_games,
        "arena.env VectorTable(16), random masked": vector,
    }
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.rounds):
        for name, run in runners.items():
            started = time.process_time()
            steps, decisions = run(rules, seeds)
            seconds = time.process_time() - started
            rate = (steps / seconds, decisions / seconds)
            best[name] = max(best.get(name, rate), rate)
    print(f"{args.matches} matches of {args.deals} deals (seeds 0..{args.matches - 1}), "
          f"best of {args.rounds} alternating rounds, one core, per CPU-second")  # fmt: skip
    check_same_games(rules)
    base = best["arena selfplay, random x4 (checks off)"][1]
    print("ratios: to self-play's decisions/s with its checks off (the faster baseline)")
    print(f"{'runner':<44}{'steps/s':>9}{'decisions/s':>13}{'steps':>7}{'decisions':>11}")
    for name, (steps, decisions) in best.items():
        print(f"{name:<44}{steps:>9,.0f}{decisions:>13,.0f}"
              f"{steps / base:>7.0%}{decisions / base:>11.0%}")  # fmt: skip
    if args.processes > 1:
        seconds, steps = across(args.processes, rules, args.matches * args.processes)
        print(
            f"ProcessVectorTable({args.processes} workers x 16): {steps / seconds:,.0f} steps "
            "per wall-clock second"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
