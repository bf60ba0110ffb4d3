"""N environments stepped together in one process, observations and masks as batches.

:class:`VectorTable` holds ``n`` :class:`~arena.env.table.Table`\\ s; each :meth:`step`
takes one action per table (for that table's acting seat) and returns batched arrays.
A finished match starts the next one at once with the next seed (``seed``, ``seed + 1``,
…), so every row always has a seat to act. :class:`ProcessVectorTable` spreads the
tables over worker processes (one ``VectorTable`` each) for several cores.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.env.actions import ACTION_SIZE
from arena.env.encoding import OBS_SIZE
from arena.env.table import Rewards, Table
from arena.rules import RuleSet


class VectorTable:
    """``n`` matches side by side; see the module doc."""

    def __init__(
        self,
        n: int,
        rules: RuleSet | None = None,
        rewards: Rewards | None = None,
        seed: int = 0,
        stride: int = 1,
    ) -> None:
        """Matches ``seed``, ``seed + stride``, ``seed + 2 × stride``, …"""
        if n < 1:
            raise ValueError(f"need at least one table, not {n}")
        self.tables = [Table(rules, rewards) for _ in range(n)]
        self.next_seed = seed
        self.seed_stride = stride
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
        self.next_seed += self.seed_stride

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


def _worker(conn: Connection, n: int, variants: dict[str, Any], rewards: Rewards | None,
            seed: int, stride: int) -> None:  # fmt: skip
    """A worker process: one VectorTable, driven by commands over ``conn``."""
    vec = VectorTable(n, RuleSet.from_mapping(variants), rewards, seed, stride)
    while True:
        command, payload = conn.recv()
        if command == "observe":
            obs, masks, seats = vec.observe()
            conn.send((obs, masks, seats))
        elif command == "step":
            conn.send((*vec.step(payload), vec.matches, vec.steps, vec.decisions))
        else:
            conn.close()
            return


class ProcessVectorTable:
    """``workers`` processes of ``per_worker`` tables each, stepped as one batch of
    ``workers × per_worker`` rows (same interface as :class:`VectorTable`).

    Worker ``w`` plays seeds ``seed + w``, ``seed + w + workers``, … so no two rows
    play the same match. Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        workers: int,
        per_worker: int,
        rules: RuleSet | None = None,
        rewards: Rewards | None = None,
        seed: int = 0,
    ) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
        variants = (rules or RuleSet()).changes()
        self._conns: list[Connection] = []
        self._procs: list[BaseProcess] = []
        for w in range(workers):
            mine, theirs = context.Pipe()
            args = (theirs, per_worker, variants, rewards, seed + w, workers)
            proc = context.Process(target=_worker, args=args, daemon=True)
            proc.start()
            self._conns.append(mine)
            self._procs.append(proc)
        self.per_worker = per_worker
        self.matches = self.steps = self.decisions = 0

    def observe(
        self,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8], npt.NDArray[np.int64]]:
        for conn in self._conns:
            conn.send(("observe", None))
        parts = [conn.recv() for conn in self._conns]
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]

    def step(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        acts = np.asarray(actions).reshape(-1)
        k = self.per_worker
        for w, conn in enumerate(self._conns):
            conn.send(("step", acts[w * k : (w + 1) * k]))
        parts = [conn.recv() for conn in self._conns]
        self.matches = sum(p[2] for p in parts)
        self.steps = sum(p[3] for p in parts)
        self.decisions = sum(p[4] for p in parts)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(OSError):
                conn.send(("close", None))
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()

    def __enter__(self) -> ProcessVectorTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["ProcessVectorTable", "VectorTable"]
