"""``arena judge``: the rules oracle over JSON Lines (shared/judge-format.md).

One question per input line, one answer line per question, in order, flushed after
each. Bad input never crashes the judge: it answers ``{"id": ..., "error": "<why>"}``
and goes on. :func:`answer` is the pure core; :func:`run` is the thin I/O loop. Each
question is a msgspec model (:class:`UnitsQ`, …) checked by
:func:`arena.rules.models.convert`, the same validation as record lines and rule variants.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Annotated, Any, Final, TypeVar

import msgspec

from arena.errors import ArenaError
from arena.rules import (
    Bid,
    Card,
    CardOrder,
    LeadVerdict,
    Position,
    Rank,
    RuleSet,
    Suit,
    Trump,
    card_order,
    check_counts,
    check_play,
    codes,
    deal_result,
    decompose,
    is_bid_shape,
    kitty_bonus,
    legal_bids,
    legal_plays,
    position_of,
    shape_of,
    trick_winner,
)
from arena.rules import advance as advance_level
from arena.rules.models import ModelError, Problem, convert

Q = TypeVar("Q", bound="Question")


class BadQuestion(ValueError):
    """A question that is malformed: answered with an error line."""


Answer = dict[str, Any]


def answer(question: Any) -> Answer:
    """Answer one decoded question. Never raises: problems become ``{"error": ...}``."""
    qid = question.get("id") if isinstance(question, dict) else None
    try:
        if not isinstance(question, dict):
            raise BadQuestion("a question must be a JSON object")
        name = question.get("q")
        known = _HANDLERS.get(name) if isinstance(name, str) else None
        if known is None:
            raise BadQuestion(f"unknown question {name!r}; known: {', '.join(sorted(_HANDLERS))}")
        model, handler = known
        q = _question(question, model)
        rules = RuleSet() if q.rules is None else RuleSet.from_mapping(q.rules)
        return {"id": qid, **handler(q, rules)}
    except (BadQuestion, ArenaError) as exc:
        return {"id": qid, "error": str(exc)}
    except Exception as exc:  # a bug must not kill the session: report it on the line
        return {"id": qid, "error": f"internal error: {type(exc).__name__}: {exc}"}


def answer_line(line: str) -> str:
    """One input line to one output line."""
    try:
        question = json.loads(line)
    except json.JSONDecodeError as exc:
        return _dump({"id": None, "error": f"not valid JSON: {exc.msg} at column {exc.colno}"})
    except RecursionError:
        return _dump({"id": None, "error": "not valid JSON: nested too deeply"})
    try:
        return _dump(answer(question))
    except (RecursionError, ValueError):  # an id the encoder cannot write back
        return _dump({"id": None, "error": "the question's id cannot be echoed as JSON"})


def register(sub: Any) -> None:
    p = sub.add_parser(
        "judge",
        help="the rules oracle: JSON questions on stdin, one JSON answer per line",
        description="Reads questions as JSON Lines on standard input and answers each on one "
        'line (the format: ../shared/judge-format.md). Example:\n  echo \'{"id":1,"q":"result",'
        '"attacker_points":85}\' | arena judge',
    )
    p.set_defaults(func=lambda args: run(sys.stdin, sys.stdout))


def run(lines: Iterable[str], out: IO[str]) -> int:
    """Answer every non-blank line of ``lines`` on ``out``, flushing after each."""
    for line in lines:
        if not line.strip():
            continue
        out.write(answer_line(line) + "\n")
        out.flush()
    return 0


def _dump(obj: Answer) -> str:
    text = json.dumps(obj, ensure_ascii=False)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (say, in an echoed id): escape them
            text = json.dumps(obj)
    return text


# -- the questions' models ----------------------------------------------------------------

Seat = Annotated[int, msgspec.Meta(ge=0, le=3)]
Cards = tuple[Card, ...]
Four = Annotated[tuple[Cards, ...], msgspec.Meta(min_length=4, max_length=4)]


class Question(msgspec.Struct, frozen=True):
    """Fields every question may carry; the others are ignored (judge-format.md)."""

    rules: dict[str, Any] | None = None


class TrumpModel(msgspec.Struct, frozen=True):
    level: str | int  # a rank's code
    suit: str | None = None


class Winning(msgspec.Struct, frozen=True):
    seat: Seat
    cards: Cards


class UnitsQ(Question, frozen=True, kw_only=True):
    trump: TrumpModel
    cards: Cards


class FollowQ(Question, frozen=True, kw_only=True):
    trump: TrumpModel
    lead: Cards
    hand: Cards
    play: Cards


class LeadQ(Question, frozen=True, kw_only=True):
    trump: TrumpModel
    leader: Seat
    hands: Four
    play: Cards
    dealer: Seat = 0


class TrickQ(Question, frozen=True, kw_only=True):
    trump: TrumpModel
    leader: Seat
    plays: Four


class KittyQ(Question, frozen=True, kw_only=True):
    trump: TrumpModel
    kitty: Cards
    last_lead: Cards


class ResultQ(Question, frozen=True, kw_only=True):
    attacker_points: int


class AdvanceQ(Question, frozen=True, kw_only=True):
    level: str | int  # a rank's code
    levels: Annotated[int, msgspec.Meta(ge=0)]
    as_dealer: bool


class BidsQ(Question, frozen=True, kw_only=True):
    level: str | int  # a rank's code
    seat: Seat
    hand: Cards
    winning: Winning | None


class PositionQ(Question, frozen=True, kw_only=True):
    position: str  # the text form (docs/position.md)
    play: Cards | None = None


_MUST: Final[dict[str, str]] = {
    "rules": "an object of variant overrides",
    "trump": '{"level": "2", "suit": "S" or null}',
    "leader": "a seat number 0-3",
    "dealer": "a seat number 0-3",
    "seat": "a seat number 0-3",
    "hands": "a list of 4 hands, indexed by seat",
    "plays": "a list of 4 plays in play order, the leader's first",
    "attacker_points": "a whole number",
    "levels": "a whole number, not negative",
    "as_dealer": "true or false",
    "level": 'a rank like "2" or "T"',
    "winning": 'null or {"seat": s, "cards": [...]}',
    "position": "a position in the text form (docs/position.md)",
}
"""What each field must be, as the error says it; card fields are lists of card codes."""


def _question(q: dict[str, Any], model: type[Q]) -> Q:
    """``q`` as its model: msgspec checks it; the error names the field (judge-format.md)."""
    try:
        return convert(q, model)
    except ModelError as exc:
        field = exc.path.split(".")[0].split("[")[0]
        if exc.problem is Problem.MISSING:
            raise BadQuestion(f"missing field {exc.path!r}") from None
        if exc.problem is Problem.INVALID and isinstance(exc.value, str):  # a bad code
            raise BadQuestion(f"{field}: {exc.detail}") from None
        must = _MUST.get(field, 'a list of card codes like ["TS", "SJ"]')
        raise BadQuestion(f"{field!r} must be {must}") from None


def _cards(cards: Cards, field: str, rules: RuleSet, allow_empty: bool = False) -> list[Card]:
    if not cards and not allow_empty:
        raise BadQuestion(f"{field!r} is empty")
    try:
        check_counts(cards, rules.decks)
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None
    return list(cards)


def _together(rules: RuleSet, *groups: Sequence[Card]) -> None:
    """Cards from several places at once must still fit in the decks."""
    try:
        check_counts([c for g in groups for c in g], rules.decks)
    except ArenaError as exc:
        raise BadQuestion(f"impossible cards: {exc}") from None


def _order(trump: TrumpModel, rules: RuleSet) -> CardOrder:
    try:
        suit = None if trump.suit is None else Suit.parse(trump.suit)
    except ArenaError as exc:
        raise BadQuestion(f"trump: {exc}") from None
    return card_order(Trump(_rank(trump.level, "trump"), suit), rules)


def _rank(code: str | int, field: str) -> Rank:
    try:
        return Rank.parse(str(code))
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None


def _units_of(cards: Sequence[Card], order: CardOrder, field: str) -> list[Any]:
    try:
        return decompose(cards, order)
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None


# -- the questions ---------------------------------------------------------------------


def _q_units(q: UnitsQ, rules: RuleSet) -> Answer:
    order = _order(q.trump, rules)
    units = _units_of(_cards(q.cards, "cards", rules), order, "cards")
    return {
        "shape": shape_of(units),
        "units": [{"kind": u.kind, "cards": codes(u.cards)} for u in units],
    }


def _q_follow(q: FollowQ, rules: RuleSet) -> Answer:
    order = _order(q.trump, rules)
    lead = _cards(q.lead, "lead", rules)
    hand = _cards(q.hand, "hand", rules, allow_empty=True)
    play = _cards(q.play, "play", rules, allow_empty=True)
    _together(rules, lead, hand)
    units = _units_of(lead, order, "lead")
    hands = (None, hand, None, None)  # the follower's hand; the leader's and others' unknown
    position = position_of(hands, order.trump, plays=[lead], rules=rules)
    verdict = check_play(dataclasses.replace(position, landed_units=tuple(units)), play)
    return {"legal": verdict.legal, "reason": verdict.reason}


def _q_lead(q: LeadQ, rules: RuleSet) -> Answer:
    order = _order(q.trump, rules)
    hands = [_cards(h, "hand", rules, allow_empty=True) for h in q.hands]
    _together(rules, *hands)
    play = _cards(q.play, "play", rules)
    position = position_of(hands, order.trump, dealer=q.dealer, leader=q.leader, rules=rules)
    v = check_play(position, play)
    if not isinstance(v, LeadVerdict):  # pragma: no cover - a lead is judged as one
        raise TypeError(f"a lead's verdict is a LeadVerdict, not {v!r}")
    return {
        "legal": v.legal,
        "reason": v.reason,
        "throw": v.throw,
        "failed": v.failed,
        "played": codes(v.played),
        "returned": codes(v.returned),
        "blocker": v.blocker,
        "penalty": v.penalty,
    }


def _q_trick(q: TrickQ, rules: RuleSet) -> Answer:
    order = _order(q.trump, rules)
    plays = [_cards(p, "play", rules) for p in q.plays]
    _together(rules, *plays)
    if any(len(p) != len(plays[0]) for p in plays):
        raise BadQuestion("every play must have as many cards as the lead")
    units = _units_of(plays[0], order, "lead")
    result = trick_winner(q.leader, plays, order, units)
    return {"winner": result.winner, "points": result.points}


def _q_kitty(q: KittyQ, rules: RuleSet) -> Answer:
    order = _order(q.trump, rules)
    kitty = _cards(q.kitty, "kitty", rules)
    last = _cards(q.last_lead, "last_lead", rules)
    multiplier, bonus = kitty_bonus(kitty, _units_of(last, order, "last_lead"), rules)
    return {"multiplier": multiplier, "bonus": bonus}


def _q_result(q: ResultQ, rules: RuleSet) -> Answer:
    result = deal_result(q.attacker_points, rules)
    return {"winner": result.winner, "levels": result.levels}


def _q_advance(q: AdvanceQ, rules: RuleSet) -> Answer:
    new, won = advance_level(_rank(q.level, "level"), q.levels, q.as_dealer, rules)
    return {"level": new.code, "match_won": won}


def _q_bids(q: BidsQ, rules: RuleSet) -> Answer:
    level = _rank(q.level, "level")
    hand = _cards(q.hand, "hand", rules, allow_empty=True)
    winning: Bid | None = None
    if q.winning is not None:
        cards = _cards(q.winning.cards, "cards", rules)
        if not is_bid_shape(cards, level, rules.decks):
            raise BadQuestion(
                f"winning: {' '.join(codes(cards))} is not a bid at level {level.code}"
            )
        winning = Bid(q.winning.seat, tuple(cards))
        if winning.seat != q.seat:  # a seat's own winning bid is shown from its hand
            _together(rules, hand, cards)
    bids = legal_bids(Position.holding(q.seat, hand, level, bid=winning, rules=rules), q.seat)
    return {"bids": [codes(b) for b in bids]}


PLAYS_SHOWN = 1000  # legal plays listed per answer: their number can be exponential


def _q_position(q: PositionQ, rules: RuleSet) -> Answer:
    """A position's (docs/position.md) legal plays (how many, to 100,000), or a verdict."""
    try:
        position = Position.parse(q.position, rules)
        hand = position.hand(position.turn)
        position.order  # noqa: B018 - a position to judge plays in needs its trump
    except ArenaError as exc:
        raise BadQuestion(f"position: {exc}") from None
    if not hand:
        raise BadQuestion(f"position: seat {position.turn}, to play, holds no cards")
    if q.play is not None:
        verdict = check_play(position, _cards(q.play, "play", rules, allow_empty=True))
        return {"legal": verdict.legal, "reason": verdict.reason, "turn": position.turn}
    plays = list(itertools.islice(legal_plays(position), 100_000))
    shown = [codes(p) for p in plays[:PLAYS_SHOWN]]
    return {"turn": position.turn, "count": len(plays), "plays": shown}


_HANDLERS: dict[str, tuple[type[Question], Callable[[Any, RuleSet], Answer]]] = {
    "units": (UnitsQ, _q_units),
    "follow": (FollowQ, _q_follow),
    "lead": (LeadQ, _q_lead),
    "trick": (TrickQ, _q_trick),
    "kitty": (KittyQ, _q_kitty),
    "result": (ResultQ, _q_result),
    "advance": (AdvanceQ, _q_advance),
    "bids": (BidsQ, _q_bids),
    "position": (PositionQ, _q_position),
}
"""Each question's model and the function answering it."""
