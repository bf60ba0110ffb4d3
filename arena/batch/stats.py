"""Summaries of a batch: results per partnership and per bot, faults, latency."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from arena.batch.runner import MatchSummary


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
        f"{'partnership':<40}{'matches':>8}{'wins':>7}{'draws':>7}{'losses':>8}{'win %':>8}",
    ]
    for name, row in summary["results"]["teams"].items():
        lines.append(
            f"{name[:39]:<40}{row['matches']:>8}{row['wins']:>7}{row['draws']:>7}"
            f"{row['losses']:>8}{row['win_rate'] * 100:>7.1f}%"
        )
    lines += ["", f"{'bot':<32}{'decisions':>10}{'p50 ms':>9}{'p99 ms':>9}  faults"]
    for name, row in summary["results"]["bots"].items():
        faults = ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none"
        lines.append(
            f"{name[:31]:<32}{row['decisions']:>10}{row['latency_p50_ms']:>9.2f}"
            f"{row['latency_p99_ms']:>9.2f}  {faults}"
        )
    for f in summary["failed"][:10]:
        lines.append(f"FAILED match {f['index']} (pairing {f['pairing']}): {f['error']}")
    return "\n".join(lines)
