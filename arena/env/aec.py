"""The PettingZoo AEC environment: ``arena.env.env(deals=1)``.

Agents ``seat_0``…``seat_3`` (teams: seats 0+2 and 1+3). Each observation is a dict,
``observation`` (``float32[OBS_SIZE]``, docs/env.md) and ``action_mask`` (``int8[55]``);
actions are card faces 0–53 and ``STOP`` (54), one card per step
(:mod:`arena.env.actions`). ``reset(seed=S)`` plays the arena's match ``S`` — the deals
of ``arena match --seed S`` — so an episode is reproducible and comparable with real
matches. ``info["decision"]`` names the acting seat's decision (``bid``, ``bury``,
``lead``, ``follow``; ``none`` for the others).

Only the AEC form is provided: Tractor is turn-based, and even a bid window — the one
place where several seats are asked at once — is answered card by card here, so a
parallel form would only add no-op actions for the waiting seats.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena.env.actions import ACTION_SIZE
from arena.env.encoding import OBS_SIZE
from arena.env.table import Rewards, Table
from arena.rules import RuleSet

AGENTS = tuple(f"seat_{s}" for s in range(4))


def rules_for(variants: Mapping[str, Any] | None = None, deals: int | None = None) -> RuleSet:
    """The rule set of ``variants`` (RULES.md §9 keys, as ``--rules`` takes them) and
    ``deals`` (match length; ``None``: play until a team wins at A)."""
    values = dict(variants or {})
    if deals is not None:
        values["deals"] = deals
    return RuleSet.from_mapping(values)


class TractorEnv(AECEnv[str, dict[str, Any], int | None]):  # type: ignore[misc]
    """Tractor under arena's exact rules, one card choice per step (see the module doc)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "arena_tractor_v0",
        "render_modes": ["ansi"],
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variants: Mapping[str, Any] | None = None,
        deals: int | None = None,
        rewards: Rewards | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.table = Table(rules_for(variants, deals), rewards)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(AGENTS, obs_space)
        self.action_spaces = {a: spaces.Discrete(ACTION_SIZE) for a in AGENTS}
        self._seeds = np.random.default_rng()
        self.seed_used = 0
        self._rewarded = False

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start match ``seed``. Without one, the next match seed is drawn from a generator
        that the last ``reset(seed=...)`` seeded (fresh entropy before any), so a run of
        resets is reproducible from its first seed."""
        if seed is None:
            seed = int(self._seeds.integers(0, 2**63))
        else:
            self._seeds = np.random.default_rng(seed)
        self.seed_used = seed
        self.table.reset(seed)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {"decision": "none"} for a in AGENTS}
        self._rewarded = False
        self._select()

    def observe(self, agent: str) -> dict[str, Any]:
        obs, mask = self.table.observe(AGENTS.index(agent))
        return {"observation": obs, "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: a card face 0-53 or STOP (54), not None")
        self._cumulative_rewards[agent] = 0.0
        table = self.table
        table.step(int(action))
        rewards = table.rewards
        if rewards[0] or rewards[1] or self._rewarded:  # most steps reward nobody
            self.rewards = dict(zip(AGENTS, rewards, strict=True))
            self._rewarded = bool(rewards[0] or rewards[1])
            self._accumulate_rewards()
        if table.finished:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._select()

    def render(self) -> str:
        """A line for people (``render_mode="ansi"``): whose turn, which decision, what it
        has chosen so far."""
        table = self.table
        if table.finished:
            return f"match over: {table.match.result}"
        chosen = " ".join(c.code for c in table.choice.chosen) if table.choice else ""
        return f"seat {table.seat} {table.kind} [{chosen}]"

    def close(self) -> None:
        return None

    def _select(self) -> None:
        table = self.table
        infos = self.infos
        if table.seat is None:  # over: each seat steps once more (None) to leave
            for a in self.agents:
                infos[a] = {"decision": "none"}
            self.agent_selection = self.agents[0] if self.agents else AGENTS[0]
            return
        previous = getattr(self, "agent_selection", None)
        agent = self.agent_selection = AGENTS[table.seat]
        if previous != agent and previous in infos:
            infos[previous] = {"decision": "none"}
        if infos[agent].get("decision") != table.kind:
            infos[agent] = {"decision": table.kind}


def env(**kwargs: Any) -> TractorEnv:
    """The environment (``variants=``, ``deals=``, ``rewards=``, ``render_mode=``)."""
    return TractorEnv(**kwargs)


raw_env = env

__all__ = ["AGENTS", "TractorEnv", "env", "raw_env", "rules_for"]
