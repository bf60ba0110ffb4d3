"""An event from its settings: checked, scheduled and stored (one path for the local
``arena events create`` and the ``Competition.CreateEvent`` RPC).

:class:`EventPlan` is what an organiser chooses; :func:`create_event` refuses a bad
choice by name (before anything is stored), draws the schedule
(:mod:`arena.competition.schedule`) and stores the event with it in one transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from arena.competition.schedule import FORMATS, check_seating, round_robin, swiss_round
from arena.competition.store import Store
from arena.errors import ArenaError
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet


@dataclasses.dataclass(frozen=True)
class EventPlan:
    """An event's settings (``arena events create --help`` explains each)."""

    name: str
    bots: tuple[str, ...]
    format: str = "round-robin"
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # variants, by key
    rounds: int = 1
    matches: int = 20  # ladder: matches in all; 0 = continuous (until finished)
    duplicate: bool = True
    time_control: TimeControl = dataclasses.field(default_factory=TimeControl)
    policy: str = "lenient"
    max_faults: int = FaultPolicy().max_faults
    seed: int = 0
    self_play: bool = False
    connect_timeout: float = 30.0


def create_event(store: Store, plan: EventPlan) -> tuple[str, int]:
    """Check, schedule and store ``plan``; returns a one-line summary and the number of
    matches scheduled now.

    Raises:
        ArenaError: a bad setting, an unregistered bot, or a name taken (the message
            says which).
    """
    bots = list(plan.bots)
    if not plan.name or len(plan.name) > 64:
        raise ArenaError("an event needs a name of 1-64 characters")
    if plan.format not in FORMATS:
        raise ArenaError(f"format {plan.format!r}: one of {', '.join(FORMATS)}")
    if plan.rounds < 1 or plan.matches < 0 or plan.connect_timeout <= 0:
        raise ArenaError("rounds must be 1 or more, matches 0 or more, connect timeout > 0")
    check_seating(bots, plan.self_play)
    open_ladder = plan.format == "ladder" and bots == ["all"]
    # refused now if bad, not at the first match; stored as the variants that differ
    chosen = RuleSet.from_mapping(dict(plan.rules)).to_mapping()
    defaults = RuleSet().to_mapping()
    rules = {k: v for k, v in chosen.items() if defaults.get(k) != v}
    FaultPolicy.parse(plan.policy, max_faults=plan.max_faults)
    known = {b.name for b in store.bots()}
    if set(bots) - known and not open_ladder:
        raise ArenaError(
            f"not registered: {', '.join(sorted(set(bots) - known))} (arena bots add NAME)"
        )
    if plan.format == "ladder":
        if bots == ["all"]:
            bots = []  # open: every registered bot that joins the lobby
        elif len(set(bots)) < 4:
            raise ArenaError("a ladder needs at least 4 bots (or --bots all)")
        matches = []
    elif plan.format == "swiss":
        matches = swiss_round(bots, 1, plan.duplicate, plan.seed)
    else:
        matches = round_robin(bots, plan.rounds, plan.duplicate, plan.seed)
    settings = {
        "bots": bots,
        "rules": rules,
        "time_control": plan.time_control.to_dict(),
        "policy": plan.policy,
        "max_faults": plan.max_faults,
        "format": plan.format,
        "matches": plan.matches,
        "round": 1,
        "seed": plan.seed,
        "self_play": plan.self_play,
        "connect_timeout": plan.connect_timeout,
        "duplicate": plan.duplicate,
        "rounds": plan.rounds,
    }
    store.create_event(plan.name, plan.format, settings, matches)
    if plan.format == "ladder":
        size = (
            "continuous (until arena events finish)"
            if plan.matches == 0
            else (f"{plan.matches} matches")
        )
        who = f"{len(bots)} bots" if bots else "every registered bot"
        return f"event {plan.name}: a ladder of {who}, {size}", 0
    what = f"round 1 of {plan.rounds}: " if plan.format == "swiss" else ""
    summary = f"event {plan.name}: {what}{len(matches)} matches scheduled for {len(bots)} bots"
    return summary, len(matches)
