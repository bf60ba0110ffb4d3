"""A PettingZoo environment over arena's own rules: train on exactly what is judged.

Needs the optional extra ``pip install 'arena[env]'`` (pettingzoo, gymnasium, numpy,
pinned by requirements-env.lock). Pure like the machines it drives: no trio, no gRPC,
no clock. docs/env.md describes the observation and action encodings and the rewards.

    from arena.env import env
    e = env(deals=1)
    e.reset(seed=7)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated else pick(obs["action_mask"])
        e.step(action)
"""

from arena.env.actions import ACTION_SIZE, KINDS, STOP, Choice
from arena.env.aec import AGENTS, TractorEnv, env, raw_env, rules_for
from arena.env.encoding import LAYOUT, OBS_SIZE, SeatMemory, encode
from arena.env.table import Rewards, Table

__all__ = [
    "ACTION_SIZE",
    "AGENTS",
    "KINDS",
    "LAYOUT",
    "OBS_SIZE",
    "STOP",
    "Choice",
    "Rewards",
    "SeatMemory",
    "Table",
    "TractorEnv",
    "encode",
    "env",
    "raw_env",
    "rules_for",
]
