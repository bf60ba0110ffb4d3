"""Standings (pure): ratings, partnership tables, fault rates and latency from results.

Ratings are openskill Plackett-Luce ratings, as in ``arena tournament``
(:func:`arena.batch.tournament.rate`), replayed over the finished matches in the order
they finished, so the same database always gives the same table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from openskill.models import PlackettLuce

from arena.competition.store import FINISHED, EventMatch
from arena.rules import team_of


def standings(matches: Sequence[EventMatch]) -> dict[str, Any]:
    """The event's standings as plain data (the JSON export)."""
    model = PlackettLuce()
    names = sorted({n for m in matches for n in m.seats})
    ratings = {n: model.rating(name=n) for n in names}
    bots: dict[str, dict[str, float]] = {
        n: dict.fromkeys(
            ("played", "won", "lost", "drawn", "faults", "decisions", "latency_sum_ms", "answers"),
            0.0,
        )
        for n in names
    }
    pairs: dict[str, dict[str, int]] = defaultdict(lambda: {"won": 0, "lost": 0, "drawn": 0})
    done = [m for m in matches if m.state == FINISHED and m.result]
    for m in sorted(done, key=lambda m: (m.result or {}).get("order", m.index)):
        result = m.result or {}
        winner = result.get("winner")
        teams = ((m.seats[0], m.seats[2]), (m.seats[1], m.seats[3]))
        ranks = [1.0, 1.0] if winner is None else [1.0, 2.0] if winner == 0 else [2.0, 1.0]
        slots = [[model.rating(ratings[n].mu, ratings[n].sigma, n) for n in t] for t in teams]
        for team, new in zip(teams, model.rate(slots, ranks=ranks), strict=True):
            for name, r in zip(team, new, strict=True):
                ratings[name] = r
        for t, team in enumerate(teams):
            outcome = "drawn" if winner is None else "won" if winner == t else "lost"
            pairs[" + ".join(sorted(team))][outcome] += 1
        for seat, name in enumerate(m.seats):
            t = team_of(seat)
            row = bots[name]
            row["played"] += 1
            row["drawn" if winner is None else "won" if winner == t else "lost"] += 1
            row["faults"] += result.get("faults", [0] * 4)[seat]
            row["decisions"] += result.get("decisions", [0] * 4)[seat]
            row["latency_sum_ms"] += result.get("latency_sum_ms", [0.0] * 4)[seat]
            row["answers"] += result.get("answers", [0] * 4)[seat]
    table: list[dict[str, Any]] = []
    for name in names:
        row, r = bots[name], ratings[name]
        table.append(
            {
                "bot": name,
                "mu": round(r.mu, 3),
                "sigma": round(r.sigma, 3),
                "ordinal": round(r.ordinal(), 3),
                "played": int(row["played"]),
                "won": int(row["won"]),
                "lost": int(row["lost"]),
                "drawn": int(row["drawn"]),
                "faults": int(row["faults"]),
                "fault_rate": round(row["faults"] / row["decisions"], 4) if row["decisions"] else 0,
                "mean_latency_ms": round(row["latency_sum_ms"] / row["answers"], 1)
                if row["answers"]
                else None,
            }
        )
    table.sort(key=lambda r: (-float(r["ordinal"]), str(r["bot"])))
    return {
        "matches": len(matches),
        "finished": sum(1 for m in matches if m.state == FINISHED),
        "left": sum(1 for m in matches if m.state in ("pending", "running")),
        "bots": table,
        "partnerships": [{"partnership": k, **v} for k, v in sorted(pairs.items())],
    }


def render(data: dict[str, Any]) -> str:
    """The standings as a text table."""
    lines = [
        f"{data['finished']} of {data['matches']} matches finished, {data['left']} to play",
        "",
        f"{'#':>2} {'bot':<16} {'rating':>7} {'mu':>7} {'sigma':>6} {'W-L-D':>9} "
        f"{'faults':>6} {'fault%':>6} {'ms/dec':>7}",
    ]
    for i, r in enumerate(data["bots"], 1):
        latency = "-" if r["mean_latency_ms"] is None else f"{r['mean_latency_ms']:.1f}"
        lines.append(
            f"{i:>2} {r['bot']:<16} {r['ordinal']:>7.2f} {r['mu']:>7.2f} {r['sigma']:>6.2f} "
            f"{r['won']:>3}-{r['lost']}-{r['drawn']:<3} {r['faults']:>6} "
            f"{100 * r['fault_rate']:>5.1f}% {latency:>7}"
        )
    lines += ["", f"{'partnership':<34} {'W':>3} {'L':>3} {'D':>3}"]
    for p in data["partnerships"]:
        lines.append(f"{p['partnership']:<34} {p['won']:>3} {p['lost']:>3} {p['drawn']:>3}")
    return "\n".join(lines)
