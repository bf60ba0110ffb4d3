"""Tournaments: every partnership of a set of bots, team-aware ratings, a pairwise table.

Which games are played (:func:`pairings`): a *pairing* is two teams of two that share no
bot. With four or more bots a team is two different bots, so every unordered pair of
disjoint pairs is played (3 pairings with 4 bots, 15 with 5, 45 with 6). With two or
three bots that would leave nothing (or nothing but one game) to play, so a bot may
also be partnered with a copy of itself: two bots play A+A vs B+B; three play the six
pairings A+A vs B+B, A+A vs C+C, B+B vs C+C, A+A vs B+C, B+B vs A+C, C+C vs A+B, so every
bot meets every other bot and partners every other bot.

Each pairing plays ``rounds`` rounds on the same seeds (round ``r`` is seed ``seed + r``
for every pairing, so all pairings are dealt the same cards); with ``duplicate`` (the
default) each round is two matches, the second with the teams swapped onto each other's
seats (:func:`arena.batch.duplicate_seating`), so both teams play both sets of hands.

Ratings are `openskill <https://openskill.me>`_ Plackett-Luce ratings, one per bot:
every finished match rates ``[[X, Y], [Z, W]]`` with the winner ranked first (a draw
ranks both teams equal); a bot partnered with itself is one player whose team strength
counts it twice. Matches are rated in job order, so a tournament's ratings do not depend
on which worker finished first. The ranking is by the ordinal ``mu - 3 sigma``.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce

from arena.batch import duplicate_seating
from arena.batch.runner import BotSpec, MatchJob, MatchSummary
from arena.batch.table import table, terminal_width
from arena.referee import FaultPolicy, TimeControl

Team = tuple[str, str]
Pairing = tuple[Team, Team]

FORMAT = "arena-tournament"
VERSION = 1


def pairings(names: Sequence[str]) -> list[Pairing]:
    """Every split into two teams of two sharing no bot (see the module docstring)."""
    if len(names) < 2:
        raise ValueError("a tournament needs at least two bots")
    if len(set(names)) != len(names):
        raise ValueError("bot names must differ (give NAME=CMD)")
    if len(names) >= 4:
        teams = list(itertools.combinations(names, 2))
    else:
        teams = list(itertools.combinations_with_replacement(names, 2))
        teams.sort(key=lambda t: (t[0] != t[1], names.index(t[0]), names.index(t[1])))
    return [(a, b) for a, b in itertools.combinations(teams, 2) if not set(a) & set(b)]


def build_jobs(
    bots: Sequence[BotSpec],
    rounds: int,
    *,
    seed: int = 0,
    rules: Mapping[str, Any] | None = None,
    duplicate: bool = True,
    out: Path | None = None,
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
) -> tuple[list[Pairing], list[MatchJob]]:
    """The pairings and their matches: job ``index`` is ``pairing * rounds + round``;
    ``pairing`` (the job field) is 0, or 1 for the duplicate with the teams swapped."""
    if rounds < 1:
        raise ValueError("--rounds must be at least 1")
    by_name = {b.name: b for b in bots}
    plan = pairings([b.name for b in bots])
    halves = (0, 1) if duplicate else (0,)
    jobs: list[MatchJob] = []
    for p, (team0, team1) in enumerate(plan):
        seats = (by_name[team0[0]], by_name[team1[0]], by_name[team0[1]], by_name[team1[1]])
        for r in range(rounds):
            for half in halves:
                record = (
                    str(out / f"pairing-{p:03d}-round-{r:04d}{'-b' if half else ''}.jsonl")
                    if out is not None
                    else None
                )
                jobs.append(
                    MatchJob(
                        p * rounds + r,
                        seed + r,
                        seats if half == 0 else duplicate_seating(seats),
                        dict(rules or {}),
                        time_control or TimeControl(),
                        policy or FaultPolicy(),
                        record,
                        half,
                    )
                )
    return plan, jobs


def _teams(result: MatchSummary) -> Pairing:
    b = result.bots
    return (b[0], b[2]), (b[1], b[3])


def rate(results: Sequence[MatchSummary], names: Sequence[str]) -> dict[str, dict[str, float]]:
    """openskill Plackett-Luce ratings after every finished match, in job order."""
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}
    for result in sorted(results, key=lambda r: (r.index, r.pairing)):
        if result.state != "finished":
            continue
        teams = _teams(result)
        ranks: list[float] = (
            [1.0, 1.0]
            if result.winner is None
            else [1.0, 2.0]
            if result.winner == 0
            else [2.0, 1.0]
        )
        # fresh rating objects per slot: a bot partnered with itself is one player whose
        # strength counts twice, and both slots come back with the same update
        slots = [[model.rating(ratings[n].mu, ratings[n].sigma, n) for n in t] for t in teams]
        rated = model.rate(slots, ranks=ranks)
        for team, new in zip(teams, rated, strict=True):
            for name, r in zip(team, new, strict=True):
                ratings[name] = r
    return {
        name: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for name, r in ratings.items()
    }


def report(
    bots: Sequence[BotSpec],
    plan: Sequence[Pairing],
    results: Sequence[MatchSummary],
    rounds: int,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """The tournament's results (``tournament.json``): ranking, pairwise, per pairing."""
    names = [b.name for b in bots]
    ratings = rate(results, names)
    record: dict[str, dict[str, int]] = {
        n: {"matches": 0, "wins": 0, "draws": 0, "losses": 0} for n in names
    }
    pairwise: dict[str, dict[str, dict[str, int]]] = {
        a: {b: {"wins": 0, "draws": 0, "losses": 0} for b in names if b != a} for a in names
    }
    per_pairing: dict[int, dict[str, int]] = defaultdict(
        lambda: {"matches": 0, "wins0": 0, "wins1": 0, "draws": 0, "failed": 0}
    )
    for result in results:
        p = result.index // rounds
        row = per_pairing[p]
        if result.state != "finished":
            row["failed"] += 1
            continue
        row["matches"] += 1
        teams = _teams(result)
        # the pairing's own team 0 sits at seats 1 and 3 in the duplicate half
        mine = 0 if teams[0] == plan[p][0] else 1
        if result.winner is None:
            row["draws"] += 1
        else:
            row["wins0" if result.winner == mine else "wins1"] += 1
        for side in (0, 1):
            outcome = (
                "draws" if result.winner is None else "wins" if result.winner == side else "losses"
            )
            for name in set(teams[side]):
                record[name]["matches"] += 1
                record[name][outcome] += 1
                for other in set(teams[1 - side]):
                    pairwise[name][other][outcome] += 1
    ranking = sorted(names, key=lambda n: (-ratings[n]["ordinal"], names.index(n)))
    return {
        "format": FORMAT,
        "version": VERSION,
        "bots": {b.name: b.command for b in bots},
        "settings": dict(settings),
        "model": {"package": "openskill", "version": version("openskill"), "model": "PlackettLuce"},
        "ranking": [
            {
                "rank": i + 1,
                "bot": n,
                "ordinal": round(ratings[n]["ordinal"], 3),
                "mu": round(ratings[n]["mu"], 3),
                "sigma": round(ratings[n]["sigma"], 3),
                **record[n],
                "win_rate": round(record[n]["wins"] / record[n]["matches"], 4)
                if record[n]["matches"]
                else 0.0,
            }
            for i, n in enumerate(ranking)
        ],
        "pairwise": pairwise,
        "pairings": [
            {
                "index": p,
                "teams": [list(plan[p][0]), list(plan[p][1])],
                "matches": per_pairing[p]["matches"],
                "wins": [per_pairing[p]["wins0"], per_pairing[p]["wins1"]],
                "draws": per_pairing[p]["draws"],
                "failed": per_pairing[p]["failed"],
            }
            for p in range(len(plan))
        ],
        "matches": len(results),
        "completed": sum(1 for r in results if r.state == "finished"),
        "failed": [
            {"index": r.index, "pairing": r.pairing, "bots": list(r.bots), "error": r.error}
            for r in results
            if r.state != "finished"
        ],
    }


def render_tournament(data: Mapping[str, Any]) -> str:
    """The ranking, the pairwise table and the pairings, for people. Nothing is cut off;
    the pairwise table names its columns by rank (#1, #2, …) when the bots' names would
    not fit the terminal."""
    lines = [
        f"{data['completed']}/{data['matches']} matches completed, "
        f"{len(data['pairings'])} pairings × {data['settings'].get('rounds')} rounds"
        f"{' × 2 (duplicate)' if data['settings'].get('duplicate') else ''}",
        "",
        "ranking by ordinal = mu - 3 sigma (openskill); matches, wins, draws and losses of",
        "the bot's team:",
    ]
    lines += table(
        ["#", "bot", "ordinal", "mu", "sigma", "matches", "wins", "draws", "losses", "win %"],
        [_ranking_row(row) for row in data["ranking"]],
        left=2,
    )
    order = [row["bot"] for row in data["ranking"]]

    def cell(a: str, b: str) -> str:
        if a == b:
            return "—"
        c = data["pairwise"][a][b]
        return f"{c['wins']}-{c['losses']}-{c['draws']}"

    def pairwise(columns: list[str]) -> list[str]:
        rows = [[f"#{i} {a}", *(cell(a, b) for b in order)] for i, a in enumerate(order, 1)]
        return table(["", *columns], rows)

    grid = pairwise(order)
    if max(map(len, grid)) > terminal_width():
        grid = pairwise([f"#{i}" for i in range(1, len(order) + 1)])
    lines += [
        "",
        "pairwise: the row bot's wins-losses-draws against the column bot, in the matches",
        "where the two sat on opposing teams:",
        *grid,
        "",
        "pairings (the first team's wins and losses against the second team):",
    ]
    lines += table(
        ["first team", "", "second team", "wins", "draws", "losses", "failed"],
        [
            [f"{a}+{b}", "vs", f"{c}+{d}", p["wins"][0], p["draws"], p["wins"][1], p["failed"]]
            for p in data["pairings"]
            for (a, b), (c, d) in [p["teams"]]
        ],
        left=3,
    )
    for f in data["failed"][:10]:
        lines.append(f"FAILED match {f['index']} (half {f['pairing']}): {f['error']}")
    return "\n".join(lines)


def _ranking_row(row: Mapping[str, Any]) -> list[object]:
    return [
        row["rank"], row["bot"], f"{row['ordinal']:.2f}", f"{row['mu']:.2f}",
        f"{row['sigma']:.2f}", row["matches"], row["wins"], row["draws"], row["losses"],
        f"{row['win_rate'] * 100:.1f}%",
    ]  # fmt: skip


__all__ = ["Pairing", "build_jobs", "pairings", "rate", "render_tournament", "report"]
