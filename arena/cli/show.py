"""``arena show RECORD [--deal N] [--seat S] [--no-color] [--html OUT]``: a record for people.

Per deal: the hands as dealt, bids, trump, kitty and burial, each trick (plays, winner,
points), faults (marked ``!!``), penalties and the result with the levels. ``--seat``
shows only what that seat saw: the record's events pass through
:func:`arena.game.seat_events`, the one redaction function. Colour (red ♥♦ and big joker,
highlighted faults) only when standard output is a terminal. Problems in the record are
collected and listed at the end rather than stopping the rendering.

``--html OUT.html`` writes the browser replay viewer instead (:mod:`arena.http.replay`):
one file, nothing fetched, for a bug report.

Exit status: 0 rendered, 1 rendered but the record has problems, 2 unreadable.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import Any

from arena.cli.replay import load, summary
from arena.records import DealRecord, Record, TrickRecord
from arena.rules import BIG_JOKER, Card, Suit, card_order
from arena.text import MAX_REASON, printable

RED, FAULT, RESET = "\x1b[31m", "\x1b[1;33m", "\x1b[0m"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "show",
        help="render a match record for people: hands, bids, tricks, faults, results",
        description="Renders a match record deal by deal. Colour only on a terminal.",
    )
    p.add_argument("record", metavar="RECORD", help="the record file (.jsonl)")
    p.add_argument("--deal", type=int, metavar="N", help="only deal N (from 1)")
    p.add_argument("--seat", type=int, choices=range(4), metavar="S",
                   help="only what seat S (0-3) saw: its own hand, no one else's")  # fmt: skip
    p.add_argument("--no-color", action="store_true", help="never use colour")
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="write a replay viewer instead: one self-contained HTML file (no network "
        "needed; opens from disk), with --seat only what that seat saw",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    record = load(args.record, "show")
    if record is None:
        return 2
    if args.deal is not None:
        numbers = sorted({d.deal for d in record.deals(args.seat)})
        if args.deal not in numbers:
            has = f"deals 1-{numbers[-1]}" if numbers else "no deal"
            print(
                f"arena show: no deal {args.deal} in {args.record}: it has {has}", file=sys.stderr
            )
            return 2
    if args.html:
        from arena.http.replay import write_replay

        try:
            size = write_replay(record, args.html, args.seat)
        except OSError as exc:
            print(f"arena show: cannot write {args.html}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"replay written to {args.html} ({size // 1024 + 1} KiB; open it in a browser)",
              file=sys.stderr)  # fmt: skip
        return 1 if record.problems else 0
    color = not args.no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    for line in render(record, deal=args.deal, seat=args.seat, color=color):
        print(line)
    return 1 if record.problems else 0


def render(
    record: Record, deal: int | None = None, seat: int | None = None, color: bool = False
) -> Iterable[str]:
    """The lines of ``arena show``."""
    paint = _Paint(color)
    yield from summary(record, seat)
    rules = record.header.rules if record.header else None
    for d in record.deals(seat):
        if deal is None or d.deal == deal:
            yield ""
            yield from _deal(d, paint, rules)
    yield ""
    result = record.result
    if result is not None:
        winner = "a draw" if result.winner is None else f"team {result.winner} wins"
        levels = "/".join(r.code for r in result.levels)
        forfeit = f", team {result.forfeited} forfeited" if result.forfeited is not None else ""
        forfeit += f": {printable(result.detail, MAX_REASON)}" if result.detail else ""
        yield (
            f"match: {winner} ({printable(result.reason)}{forfeit}) after {result.deals} deals; "
            + (f"levels {levels}")
        )
    if not record.complete:
        last = record.last_complete_line
        yield (
            f"incomplete: last complete line {last}"
            if last >= 0
            else "incomplete: no complete line"
        )
    if record.problems:
        yield paint.fault(f"{len(record.problems)} problems:")
        for problem in record.problems:
            yield paint.fault(f"  !! {printable(problem)}")


def _deal(d: DealRecord, paint: _Paint, rules: Any) -> Iterable[str]:
    s = d.started
    dealer = f"seat {s.dealer}" if s.dealer is not None else "to be bid"
    levels = "/".join(r.code for r in s.levels)
    attempt = f" (redeal attempt {d.attempt})" if d.attempt else ""
    yield paint.bold(
        f"deal {d.deal}{attempt} · dealer {dealer} · level {s.level.code} · levels {levels} "
        f"· first card to seat {s.first_seat}"
    )
    order = None
    if d.trump is not None:
        order = card_order(d.trump.trump, rules)
    yield "  hands:"
    for seat, hand in enumerate(d.hands):
        if hand:
            cards = order.sort(list(hand)) if order else sorted(hand, key=lambda c: c.index)
            yield f"    seat {seat}: {paint.cards(cards)}"
    bids = " · ".join(f"seat {b.seat} {paint.cards(b.cards)}" for b in d.bids) or "none"
    yield f"  bids: {bids}"
    yield from _faults(d, paint, None, "bid")
    if d.redealt is not None:
        yield f"  redealt: {printable(d.redealt.reason)}"
    t = d.trump
    if t is not None:
        symbol = paint.suit(t.suit.symbol) if t.suit else "no trump"
        how = f"bid by seat {t.bidder}" if t.bidder is not None else printable(t.source)
        shown = f", shown {paint.cards(t.revealed)}" if t.revealed else ""
        yield f"  trump: {symbol} at level {t.level.code}; dealer seat {t.dealer} ({how}{shown})"
    if d.kitty is not None:
        yield f"  kitty to seat {d.kitty.seat}: {paint.cards(d.kitty.cards) or '(hidden)'}"
    if d.burial is not None:
        yield f"  buried: {paint.cards(d.burial.cards) or '(hidden)'}"
    yield from _faults(d, paint, None, "bury")
    for trick in d.tricks:
        yield _trick(trick, paint)
        yield from _faults(d, paint, trick.number, "play")
    for p in d.penalties:
        why = printable(p.reason, MAX_REASON)
        yield paint.fault(f"  !! penalty: team {p.team} charged {p.points} ({why})")
    r = d.result
    if r is not None:
        won = "dealer team keeps the deal" if r.winner == "dealer" else "attackers take the deal"
        yield (
            f"  result: attackers {r.attacker_points} = tricks {r.trick_points} + kitty "
            f"{r.kitty_bonus} (×{r.kitty_multiplier}) + penalties {r.penalty_points}"
            f"{f' + faults {r.fault_penalty_points}' if r.fault_penalty_points else ''}; {won}, "
            f"+{r.levels_gained}; levels {'/'.join(x.code for x in r.levels)}; "
            f"next dealer seat {r.next_dealer}"
        )
        yield f"  kitty was: {paint.cards(r.kitty)}"


def _trick(trick: TrickRecord, paint: _Paint) -> str:
    plays = " · ".join(f"seat {seat} {paint.cards(cards)}" for seat, cards in trick.plays)
    text = f"  trick {trick.number:>2}: {plays}"
    if trick.throw is not None:
        f = trick.throw
        text += (
            f"  [seat {f.seat} threw {paint.cards(f.attempted)}: failed, seat {f.blocker} "
            f"beats it; {f.penalty:+d} to the attackers]"
        )
    if trick.winner is not None:
        text += f" → seat {trick.winner}, {trick.points} pts (attackers {trick.attacker_points})"
    return text


def _faults(d: DealRecord, paint: _Paint, trick: int | None, kind: str) -> Iterable[str]:
    for f in d.faults:
        a = f.answer
        if a.kind.value != kind or f.trick != trick:
            continue
        sent = "nothing usable" if a.sent is None else paint.cards(a.sent) or "a pass"
        yield paint.fault(
            f"  !! fault: seat {a.seat} ({a.kind.value}, seq {a.seq}) {a.fault_kind}: "
            f"{printable(a.fault_reason or '', MAX_REASON)}; sent {sent}, "
            f"played {paint.cards(a.played) or 'a pass'}"
        )


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def card(self, card: Card) -> str:
        text = card.pretty()
        red = card.suit in (Suit.HEARTS, Suit.DIAMONDS) or card is BIG_JOKER
        return f"{RED}{text}{RESET}" if self.color and red else text

    def cards(self, cards: Iterable[Card]) -> str:
        return " ".join(self.card(c) for c in cards)

    def suit(self, symbol: str) -> str:
        red = symbol in (Suit.HEARTS.symbol, Suit.DIAMONDS.symbol)
        return f"{RED}{symbol}{RESET}" if self.color and red else symbol

    def fault(self, text: str) -> str:
        return f"{FAULT}{text}{RESET}" if self.color else text

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}{RESET}" if self.color else text


__all__ = ["register", "render", "run"]
