"""Summaries of a batch: results per partnership and per bot, faults, latency."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from arena.batch.runner import MatchSummary
from arena.batch.table import table


def partnership(bots: Sequence[str], team: int) -> str:
    """``A+C``: the two bots of ``team`` (team 0 sits at seats 0 and 2)."""
    return f"{bots[team]}+{bots[team + 2]}"


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(results: Sequence[MatchSummary], elapsed: float) -> dict[str, Any]:
    """The numbers a batch reports (also its ``--json`` output)."""
    completed = [r for r in results if r.state == "finished"]
    teams: dict[str, dict[str, float]] = defaultdict(
        lambda: {"matches": 0, "wins": 0, "draws": 0, "losses": 0}
    )
    bots: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"seats": 0, "faults": Counter(), "latencies": []}
    )
    faults: Counter[str] = Counter()
    points: list[int] = []
    for r in completed:
        points.extend(r.attacker_points)
        for team in (0, 1):
            row = teams[partnership(r.bots, team)]
            row["matches"] += 1
            if r.winner is None:
                row["draws"] += 1
            elif r.winner == team:
                row["wins"] += 1
            else:
                row["losses"] += 1
        for seat, name in enumerate(r.bots):
            bots[name]["seats"] += 1
            bots[name]["latencies"].extend(r.latencies[seat] if seat < len(r.latencies) else [])
        for f in r.faults:
            faults[f["kind"]] += 1
            bots[r.bots[f["seat"]]]["faults"][f["kind"]] += 1
    per_bot = {
        name: {
            "seats_played": row["seats"],
            "faults": dict(row["faults"]),
            "latency_p50_ms": round(percentile(row["latencies"], 0.5) * 1000, 3),
            "latency_p99_ms": round(percentile(row["latencies"], 0.99) * 1000, 3),
            "decisions": len(row["latencies"]),
        }
        for name, row in sorted(bots.items())
    }
    per_team = {
        name: {**row, "win_rate": round(row["wins"] / row["matches"], 4) if row["matches"] else 0}
        for name, row in sorted(teams.items())
    }
    return {
        "matches": len(results),
        "completed": len(completed),
        "failed": [
            {"index": r.index, "pairing": r.pairing, "error": r.error}
            for r in results
            if r.state != "finished"
        ],
        "faults": sum(faults.values()),
        "faults_by_kind": dict(faults),
        "results": {"teams": per_team, "bots": per_bot},
        "deals": sum(r.deals for r in completed),
        "deals_per_match": round(statistics.mean(r.deals for r in completed), 2)
        if completed
        else 0,
        "mean_attacker_points": round(statistics.mean(points), 2) if points else 0,
        "decisions": sum(r.decisions for r in completed),
        "seconds": round(elapsed, 3),
        "matches_per_s": round(len(completed) / elapsed, 3) if elapsed else 0,
    }


def render(summary: dict[str, Any]) -> str:
    """The summary table for people."""
    lines = [
        f"{summary['completed']}/{summary['matches']} matches completed in "
        f"{summary['seconds']:.1f}s ({summary['matches_per_s']:.2f} matches/s), "
        f"{summary['deals']} deals ({summary['deals_per_match']} per match), "
        f"mean attacker points {summary['mean_attacker_points']}",
        "",
        "partnerships (the two seats of a team; wins, draws and losses are matches):",
    ]
    lines += table(
        ["partnership", "matches", "wins", "draws", "losses", "win %"],
        [_team_row(name, row) for name, row in summary["results"]["teams"].items()],
    )
    lines += ["", "bots (decisions answered, latency percentiles, faults by kind):"]
    lines += table(
        ["bot", "decisions", "p50 ms", "p99 ms", "faults"],
        [_bot_row(name, row) for name, row in summary["results"]["bots"].items()],
    )
    for f in summary["failed"][:10]:
        lines.append(f"FAILED match {f['index']} (pairing {f['pairing']}): {f['error']}")
    return "\n".join(lines)


def _team_row(name: str, row: dict[str, Any]) -> list[object]:
    rate = f"{row['win_rate'] * 100:.1f}%"
    return [name, row["matches"], row["wins"], row["draws"], row["losses"], rate]


def _bot_row(name: str, row: dict[str, Any]) -> list[object]:
    faults = ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none"
    p50, p99 = f"{row['latency_p50_ms']:.2f}", f"{row['latency_p99_ms']:.2f}"
    return [name, row["decisions"], p50, p99, faults]
