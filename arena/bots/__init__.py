"""Built-in bots, played in-process behind the same interface as remote bots."""

from arena.bots.greedy_bot import GreedyBot
from arena.bots.random_bot import RandomBot
from arena.game import Bot

BUILTIN: dict[str, type[RandomBot] | type[GreedyBot]] = {"random": RandomBot, "greedy": GreedyBot}


def make_bot(name: str, seed: int = 0) -> Bot:
    """A built-in bot by name (``random``, ``greedy``), seeded; or ``policy:MODULE:FUNCTION``,
    a policy trained against arena.env (docs/env.md; needs the ``arena[env]`` extra)."""
    if name.startswith("policy:"):
        try:
            from arena.env.policy import policy_bot
        except ImportError as exc:
            raise ValueError(
                f"{name} needs the env extra (pip install 'arena[env]'): {exc}"
            ) from None
        return policy_bot(name.removeprefix("policy:"))
    try:
        return BUILTIN[name](seed)
    except KeyError:
        raise ValueError(f"unknown built-in bot {name!r}; known: {', '.join(BUILTIN)}") from None


__all__ = ["BUILTIN", "GreedyBot", "RandomBot", "make_bot"]
