"""``arena matches watch ID`` on a terminal: the table drawn with ``rich``, for SSH.

It reads the same ``Matches.Watch`` stream as the JSON output (so a spectator is kept
``--spectator-delay`` behind, and no hidden card ever arrives) and redraws four seats
around the current trick, trump, bids, points, levels and a short log. Piped or with
``--json`` the command prints JSON lines instead (scripts keep working).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.rules import Card, Rank, team_of
from arena.server import cards_from_pb
from arena.v1 import arena_pb2 as pb

SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
RED = {"H", "D"}


def card_text(card: Card) -> Text:
    code = card.code
    if code in ("BJ", "SJ"):
        return Text("J★" if code == "BJ" else "j☆", style="bold red" if code == "BJ" else "bold")
    rank = "10" if code[0] == "T" else code[0]
    return Text(rank + SUITS[code[1]], style="bold red" if code[1] in RED else "bold")


def cards_text(cards: Iterable[Card]) -> Text:
    return Text(" ").join(card_text(c) for c in cards) or Text("·", style="dim")


def _rank(value: int) -> str:
    return Rank(value).code if value else "?"


@dataclasses.dataclass
class TableState:
    """What the table shows, rebuilt from the public events."""

    names: list[str]
    deal: int = 0
    dealer: int = -1
    trump: str = "—"
    levels: tuple[str, str] = ("2", "2")
    trick: int = 0
    plays: dict[int, tuple[Card, ...]] = dataclasses.field(default_factory=dict)
    winner: int = -1
    points: int = 0
    bids: list[str] = dataclasses.field(default_factory=list)
    log: list[str] = dataclasses.field(default_factory=list)
    over: str = ""

    def seat(self, i: int) -> str:
        return f"{self.names[i] if i < len(self.names) else 'seat'} ({i})"

    def apply(self, event: pb.Event) -> None:
        kind = event.WhichOneof("kind")
        if kind is None:
            return
        e: Any = getattr(event, kind)
        if kind == "deal_started":
            self.deal, self.dealer, self.trump, self.bids = e.deal, e.dealer, "—", []
            self.plays, self.trick, self.winner, self.points = {}, 0, -1, 0
            self.note(f"deal {e.deal} starts")
        elif kind == "bid_made":
            bid = " ".join(c.code for c in cards_from_pb(e.cards)) or "pass"
            self.bids = [*self.bids[-3:], f"{self.seat(e.seat)}: {bid}"]
        elif kind == "trump_declared":
            suit = "no trump" if e.no_trump else SUITS.get(pb.Suit.Name(e.suit)[0], "?")
            self.trump, self.dealer = f"{_rank(e.level)} {suit}", e.dealer
            self.note(f"trump {self.trump}, dealer {self.seat(e.dealer)}")
        elif kind == "cards_played":
            if e.trick != self.trick or self.winner >= 0:
                self.plays, self.trick, self.winner = {}, e.trick, -1
            self.plays[e.seat] = cards_from_pb(e.cards)
        elif kind == "trick_won":
            self.winner = e.winner
            self.points = e.attacker_points
            self.note(f"trick {e.trick} to {self.seat(e.winner)} (+{e.points})")
        elif kind == "deal_ended":
            if len(e.levels) == 2:
                self.levels = (_rank(e.levels[0]), _rank(e.levels[1]))
            self.points = e.attacker_points
            self.note(f"deal {e.deal}: {e.winner} win with {e.attacker_points} points")
        elif kind == "penalty_applied":
            self.note(f"penalty: team {e.team} -{e.points} ({e.reason})")
        elif kind == "match_ended":
            r = e.result
            self.over = "a draw" if r.winner_team < 0 else f"team {r.winner_team} wins"
            self.over += f" ({r.reason})"
            self.note(f"match over: {self.over}")

    def note(self, line: str) -> None:
        self.log = [*self.log[-5:], line]

    def render(self, title: str) -> Panel:
        def seat_cell(i: int) -> Panel:
            mark = " [yellow]dealer[/]" if i == self.dealer else ""
            play = self.plays.get(i)
            body = cards_text(play) if play else Text("·", style="dim")
            style = "yellow" if i == self.winner else "green"
            label = f"{self.seat(i)} · level {self.levels[team_of(i)]}{mark}"
            return Panel(body, title=label, border_style=style, height=3)

        grid = Table.grid(expand=True)
        for _ in range(3):
            grid.add_column(ratio=1)
        info = Text.assemble(
            f"deal {self.deal or '—'}  trick {self.trick or '—'}\n",
            f"trump {self.trump}\n",
            f"attackers' points {self.points}",
        )
        grid.add_row("", seat_cell(2), "")
        grid.add_row(seat_cell(3), Panel(info, height=5), seat_cell(1))
        grid.add_row("", seat_cell(0), "")
        bids = Text("bids: " + ("; ".join(self.bids) or "—"), style="dim")
        log = Text("\n".join(self.log), style="dim")
        footer = Text(self.over, style="bold yellow") if self.over else Text("")
        return Panel(Group(grid, bids, log, footer), title=title)


def draw(events: Iterable[pb.Event], names: list[str], title: str, console: Console) -> None:
    """Redraw the table for every event until the stream ends."""
    state = TableState(names)
    with Live(state.render(title), console=console, refresh_per_second=8) as live:
        for event in events:
            state.apply(event)
            live.update(state.render(title))
