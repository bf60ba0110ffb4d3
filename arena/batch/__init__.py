"""Many matches at once: headless batches, duplicate deals, tournaments."""

from arena.batch.pool import default_parallel, run_jobs
from arena.batch.runner import (
    BotSpec,
    MatchJob,
    MatchSummary,
    bot_name,
    local_bots,
    play_hosted,
    run_job,
)
from arena.batch.stats import partnership, percentile, render, summarize


def duplicate_seating(
    bots: tuple[BotSpec, BotSpec, BotSpec, BotSpec],
) -> tuple[BotSpec, BotSpec, BotSpec, BotSpec]:
    """The same four bots moved one seat on: each partnership now sits where the other
    one did, so with the same seed it is dealt the other partnership's cards."""
    return (bots[3], bots[0], bots[1], bots[2])


__all__ = [
    "BotSpec",
    "MatchJob",
    "MatchSummary",
    "bot_name",
    "default_parallel",
    "duplicate_seating",
    "local_bots",
    "partnership",
    "percentile",
    "play_hosted",
    "render",
    "run_job",
    "run_jobs",
    "summarize",
]
