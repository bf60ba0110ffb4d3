"""The ``Competition`` service's messages to and from the competition's own types (the
one place both the servicer and :class:`~arena.competition.client.RemoteOrganiser` use,
so a setting cannot mean one thing locally and another over the network)."""

from __future__ import annotations

from arena.competition.organiser import EventProgress
from arena.competition.plan import EventPlan
from arena.competition.store import Bot
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server import rules_from_pb, rules_to_pb, time_control_from_pb, time_control_to_pb
from arena.v1 import arena_pb2 as pb


def plan_to_pb(plan: EventPlan) -> pb.CreateEventRequest:
    return pb.CreateEventRequest(
        name=plan.name,
        format=plan.format,
        bots=list(plan.bots),
        rules=rules_to_pb(RuleSet.from_mapping(dict(plan.rules))),
        rounds=plan.rounds,
        matches=plan.matches,
        no_duplicate=not plan.duplicate,
        time_control=time_control_to_pb(plan.time_control),
        policy=plan.policy,
        max_faults=plan.max_faults,
        seed=plan.seed,
        self_play=plan.self_play,
        connect_timeout_s=plan.connect_timeout,
    )


def plan_from_pb(m: pb.CreateEventRequest) -> EventPlan:
    """Raises InvalidRules for an unknown variant or value."""
    return EventPlan(
        name=m.name,
        bots=tuple(m.bots),
        format=m.format or "round-robin",
        rules=rules_from_pb(dict(m.rules)).to_mapping(),
        rounds=m.rounds or 1,
        matches=m.matches,
        duplicate=not m.no_duplicate,
        time_control=time_control_from_pb(m.time_control, TimeControl()),
        policy=m.policy or "lenient",
        max_faults=m.max_faults or FaultPolicy().max_faults,
        seed=m.seed,
        self_play=m.self_play,
        connect_timeout=m.connect_timeout_s or 30.0,
    )


def bot_to_pb(bot: Bot) -> pb.BotInfo:
    return pb.BotInfo(
        name=bot.name,
        owner=bot.owner,
        disabled=bot.disabled,
        created=bot.created,
        key_rotated=bot.rotated or "",
    )


def bot_from_pb(m: pb.BotInfo) -> Bot:
    return Bot(m.name, m.owner, m.disabled, m.created, m.key_rotated or None)


def progress_to_pb(p: EventProgress) -> pb.EventInfo:
    return pb.EventInfo(
        name=p.name, format=p.format, state=p.state, matches=p.matches, played=p.played
    )


def progress_from_pb(m: pb.EventInfo) -> EventProgress:
    return EventProgress(m.name, m.format, m.state, m.matches, m.played)
