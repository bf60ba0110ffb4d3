"""N environments stepped together in one process, observations and masks as batches.

:class:`VectorTable` holds ``n`` :class:`~arena.env.table.Table`\\ s; each :meth:`step`
takes one action per table (for that table's acting seat) and returns batched arrays.
A finished match starts the next one at once with the next seed (``seed``, ``seed + 1``,
…), so every row always has a seat to act. For several cores, run one ``VectorTable``
per process (``bench/env.py --processes``): tables share nothing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.env.actions import ACTION_SIZE
from arena.env.encoding import OBS_SIZE
from arena.env.table import Rewards, Table
from arena.rules import RuleSet


class VectorTable:
    """``n`` matches side by side; see the module doc."""

    def __init__(
        self, n: int, rules: RuleSet | None = None, rewards: Rewards | None = None, seed: int = 0
    ) -> None:
        if n < 1:
            raise ValueError(f"need at least one table, not {n}")
        self.tables = [Table(rules, rewards) for _ in range(n)]
        self.next_seed = seed
        self.matches = 0  # matches finished
        self._steps = self.decisions_done = 0  # of finished matches
        for table in self.tables:
            self._start(table)
        self.obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((n, ACTION_SIZE), dtype=np.int8)
        self.seats = np.zeros(n, dtype=np.int64)

    def _start(self, table: Table) -> None:
        self._steps += table.steps
        self.decisions_done += table.decisions
        table.reset(self.next_seed)
        self.next_seed += 1

    def observe(
        self,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8], npt.NDArray[np.int64]]:
        """Each table's acting seat, its observation and its action mask (rows by table)."""
        for i, table in enumerate(self.tables):
            seat = table.seat
            assert seat is not None  # a finished match is restarted in step()
            self.seats[i] = seat
            self.obs[i], self.masks[i] = table.observe(seat)
        return self.obs, self.masks, self.seats

    def step(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Apply one action per table. Returns this step's rewards by table and *absolute*
        seat (``[n, 4]``) and which tables finished a match (and started the next)."""
        acts = np.asarray(actions).reshape(-1)
        n = len(self.tables)
        rewards = np.zeros((n, 4), dtype=np.float32)
        done = np.zeros(n, dtype=np.bool_)
        for i, table in enumerate(self.tables):
            table.step(int(acts[i]))
            rewards[i] = table.rewards
            if table.finished:
                done[i] = True
                self.matches += 1
                self._start(table)
        return rewards, done

    @property
    def steps(self) -> int:
        """Steps taken so far, over every match played."""
        return self._steps + sum(t.steps for t in self.tables)

    @property
    def decisions(self) -> int:
        """Whole answers given so far, over every match played."""
        return self.decisions_done + sum(t.decisions for t in self.tables)


__all__ = ["VectorTable"]
