"""``arena judge``: the rules oracle over JSON Lines (shared/judge-format.md).

One question per input line, one answer line per question, in order, flushed after
each. Bad input never crashes the judge: it answers ``{"id": ..., "error": "<why>"}``
and goes on. :func:`answer` is the pure core; :func:`run` is the thin I/O loop.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

from arena.errors import ArenaError
from arena.rules import (
    Bid,
    Card,
    CardOrder,
    LeadVerdict,
    Position,
    Rank,
    RuleSet,
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
    parse_cards,
    position_of,
    shape_of,
    trick_winner,
)
from arena.rules import advance as advance_level


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
        handler = _HANDLERS.get(name) if isinstance(name, str) else None
        if handler is None:
            raise BadQuestion(f"unknown question {name!r}; known: {', '.join(sorted(_HANDLERS))}")
        rules = _rules(question)
        return {"id": qid, **handler(question, rules)}
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


# -- field readers ---------------------------------------------------------------------


def _need(q: dict[str, Any], field: str) -> Any:
    if field not in q:
        raise BadQuestion(f"missing field {field!r}")
    return q[field]


def _rules(q: dict[str, Any]) -> RuleSet:
    raw = q.get("rules")
    if raw is None:
        return RuleSet()
    if not isinstance(raw, dict):
        raise BadQuestion("'rules' must be an object of variant overrides")
    return RuleSet.from_mapping(raw)


def _cards(q: dict[str, Any], field: str, rules: RuleSet, allow_empty: bool = False) -> list[Card]:
    raw = _need(q, field)
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise BadQuestion(f'{field!r} must be a list of card codes like ["TS", "SJ"]')
    if not raw and not allow_empty:
        raise BadQuestion(f"{field!r} is empty")
    try:
        cards = parse_cards(raw)
        check_counts(cards, rules.decks)
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None
    return cards


def _together(rules: RuleSet, *groups: Sequence[Card]) -> None:
    """Cards from several places at once must still fit in the decks."""
    try:
        check_counts([c for g in groups for c in g], rules.decks)
    except ArenaError as exc:
        raise BadQuestion(f"impossible cards: {exc}") from None


def _seat(q: dict[str, Any], field: str, default: int | None = None) -> int:
    raw = q.get(field, default) if default is not None else _need(q, field)
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= 3:
        raise BadQuestion(f"{field!r} must be a seat number 0-3")
    return raw


def _int(q: dict[str, Any], field: str) -> int:
    raw = _need(q, field)
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise BadQuestion(f"{field!r} must be a whole number")
    return raw


def _rank(q: dict[str, Any], field: str) -> Rank:
    raw = _need(q, field)
    if not isinstance(raw, str | int) or isinstance(raw, bool):
        raise BadQuestion(f'{field!r} must be a rank like "2" or "T"')
    try:
        return Rank.parse(str(raw))
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None


def _order(q: dict[str, Any], rules: RuleSet) -> CardOrder:
    raw = _need(q, "trump")
    if not isinstance(raw, dict) or "level" not in raw:
        raise BadQuestion('\'trump\' must be {"level": "2", "suit": "S" or null}')
    suit = raw.get("suit")
    if suit is not None and not isinstance(suit, str):
        raise BadQuestion("trump suit must be one of S H C D, or null for no trump")
    try:
        return card_order(Trump.parse(str(raw["level"]), suit), rules)
    except ArenaError as exc:
        raise BadQuestion(f"trump: {exc}") from None


def _units_of(cards: Sequence[Card], order: CardOrder, field: str) -> list[Any]:
    try:
        return decompose(cards, order)
    except ArenaError as exc:
        raise BadQuestion(f"{field}: {exc}") from None


# -- the questions ---------------------------------------------------------------------


def _q_units(q: dict[str, Any], rules: RuleSet) -> Answer:
    order = _order(q, rules)
    units = _units_of(_cards(q, "cards", rules), order, "cards")
    return {
        "shape": shape_of(units),
        "units": [{"kind": u.kind, "cards": codes(u.cards)} for u in units],
    }


def _q_follow(q: dict[str, Any], rules: RuleSet) -> Answer:
    order = _order(q, rules)
    lead = _cards(q, "lead", rules)
    hand = _cards(q, "hand", rules, allow_empty=True)
    play = _cards(q, "play", rules, allow_empty=True)
    _together(rules, lead, hand)
    units = _units_of(lead, order, "lead")
    hands = (None, hand, None, None)  # the follower's hand; the leader's and others' unknown
    position = position_of(hands, order.trump, plays=[lead], rules=rules)
    verdict = check_play(dataclasses.replace(position, landed_units=tuple(units)), play)
    return {"legal": verdict.legal, "reason": verdict.reason}


def _q_lead(q: dict[str, Any], rules: RuleSet) -> Answer:
    order = _order(q, rules)
    leader = _seat(q, "leader")
    dealer = _seat(q, "dealer", default=0)
    raw = _need(q, "hands")
    if not isinstance(raw, list) or len(raw) != 4:
        raise BadQuestion("'hands' must be a list of 4 hands, indexed by seat")
    hands = [_cards({"hand": h}, "hand", rules, allow_empty=True) for h in raw]
    _together(rules, *hands)
    play = _cards(q, "play", rules)
    position = position_of(hands, order.trump, dealer=dealer, leader=leader, rules=rules)
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


def _q_trick(q: dict[str, Any], rules: RuleSet) -> Answer:
    order = _order(q, rules)
    leader = _seat(q, "leader")
    raw = _need(q, "plays")
    if not isinstance(raw, list) or len(raw) != 4:
        raise BadQuestion("'plays' must be a list of 4 plays in play order, the leader's first")
    plays = [_cards({"play": p}, "play", rules) for p in raw]
    _together(rules, *plays)
    if any(len(p) != len(plays[0]) for p in plays):
        raise BadQuestion("every play must have as many cards as the lead")
    units = _units_of(plays[0], order, "lead")
    result = trick_winner(leader, plays, order, units)
    return {"winner": result.winner, "points": result.points}


def _q_kitty(q: dict[str, Any], rules: RuleSet) -> Answer:
    order = _order(q, rules)
    kitty = _cards(q, "kitty", rules)
    last = _cards(q, "last_lead", rules)
    multiplier, bonus = kitty_bonus(kitty, _units_of(last, order, "last_lead"), rules)
    return {"multiplier": multiplier, "bonus": bonus}


def _q_result(q: dict[str, Any], rules: RuleSet) -> Answer:
    result = deal_result(_int(q, "attacker_points"), rules)
    return {"winner": result.winner, "levels": result.levels}


def _q_advance(q: dict[str, Any], rules: RuleSet) -> Answer:
    level = _rank(q, "level")
    levels = _int(q, "levels")
    if levels < 0:
        raise BadQuestion("'levels' must not be negative")
    as_dealer = _need(q, "as_dealer")
    if not isinstance(as_dealer, bool):
        raise BadQuestion("'as_dealer' must be true or false")
    new, won = advance_level(level, levels, as_dealer, rules)
    return {"level": new.code, "match_won": won}


def _q_bids(q: dict[str, Any], rules: RuleSet) -> Answer:
    level = _rank(q, "level")
    seat = _seat(q, "seat")
    hand = _cards(q, "hand", rules, allow_empty=True)
    raw = _need(q, "winning")
    winning: Bid | None = None
    if raw is not None:
        if not isinstance(raw, dict):
            raise BadQuestion('\'winning\' must be null or {"seat": s, "cards": [...]}')
        cards = _cards(raw, "cards", rules)
        if not is_bid_shape(cards, level, rules.decks):
            raise BadQuestion(
                f"winning: {' '.join(codes(cards))} is not a bid at level {level.code}"
            )
        winning = Bid(_seat(raw, "seat"), tuple(cards))
        if winning.seat != seat:  # a seat's own winning bid is shown from its hand
            _together(rules, hand, cards)
    bids = legal_bids(Position.holding(seat, hand, level, bid=winning, rules=rules), seat)
    return {"bids": [codes(b) for b in bids]}


PLAYS_SHOWN = 1000  # legal plays listed per answer: their number can be exponential


def _q_position(q: dict[str, Any], rules: RuleSet) -> Answer:
    """A position in the text form (docs/position.md): the legal plays of the seat to
    play (the first ``PLAYS_SHOWN``, and how many there are up to 100,000), or with
    ``play`` the verdict on it."""
    raw = _need(q, "position")
    if not isinstance(raw, str):
        raise BadQuestion("'position' must be a position in the text form (docs/position.md)")
    try:
        position = Position.parse(raw, rules)
        hand = position.hand(position.turn)
        position.order  # noqa: B018 - a position to judge plays in needs its trump
    except ArenaError as exc:
        raise BadQuestion(f"position: {exc}") from None
    if not hand:
        raise BadQuestion(f"position: seat {position.turn}, to play, holds no cards")
    if "play" in q:
        verdict = check_play(position, _cards(q, "play", rules, allow_empty=True))
        return {"legal": verdict.legal, "reason": verdict.reason, "turn": position.turn}
    plays = list(itertools.islice(legal_plays(position), 100_000))
    return {
        "turn": position.turn,
        "count": len(plays),
        "plays": [codes(p) for p in plays[:PLAYS_SHOWN]],
    }


_HANDLERS: dict[str, Callable[[dict[str, Any], RuleSet], Answer]] = {
    "units": _q_units,
    "follow": _q_follow,
    "lead": _q_lead,
    "trick": _q_trick,
    "kitty": _q_kitty,
    "result": _q_result,
    "advance": _q_advance,
    "bids": _q_bids,
    "position": _q_position,
}
