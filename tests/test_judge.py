"""``arena judge``: the rules oracle over JSON Lines (judge-format.md).

In process through :func:`answer_line` for the many cases, and once as a real subprocess fed
every example of judge-format.md plus the malformed lines it must survive.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from arena.cli.judge import answer, answer_line, run

S2 = {"level": "2", "suit": "S"}

# judge-format.md, every example: (question, answer).
EXAMPLES: list[tuple[str, str]] = [
    (
        '{"id":"u1","q":"units","trump":{"level":"T","suit":"H"},"cards":["9S","9S","JS","JS"]}',
        '{"id":"u1","shape":"tractor","units":[{"kind":"tractor","cards":["9S","9S","JS","JS"]}]}',
    ),
    (
        '{"id":"u2","q":"units","trump":{"level":"2","suit":"S"},'
        '"cards":["AH","AH","KH","QH","QH"]}',
        '{"id":"u2","shape":"throw","units":[{"kind":"pair","cards":["AH","AH"]},'
        '{"kind":"pair","cards":["QH","QH"]},{"kind":"single","cards":["KH"]}]}',
    ),
    (
        '{"id":"l1","q":"lead","trump":{"level":"2","suit":"S"},"leader":0,"dealer":1,'
        '"hands":[["AH","QH","3C"],["KH","2D"],["9H","4C"],["TH","5D"]],"play":["AH","QH"]}',
        '{"id":"l1","legal":true,"throw":true,"failed":true,"played":["QH"],"returned":["AH"],'
        '"blocker":1,"penalty":-10}',
    ),
    (
        '{"id":"t1","q":"trick","trump":{"level":"2","suit":"S"},"leader":1,'
        '"plays":[["5H"],["2S"],["AH"],["KH"]]}',
        '{"id":"t1","winner":2,"points":15}',
    ),
    (
        '{"id":"k1","q":"kitty","trump":{"level":"2","suit":"S"},'
        '"kitty":["KD","TD","5D","3C","4C","6C","JC","QS"],"last_lead":["AH","AH"]}',
        '{"id":"k1","multiplier":4,"bonus":100}',
    ),
    (
        '{"id":"r1","q":"result","attacker_points":85}',
        '{"id":"r1","winner":"attackers","levels":0}',
    ),
    (
        '{"id":"a1","q":"advance","level":"Q","levels":3,"as_dealer":true}',
        '{"id":"a1","level":"A","match_won":false}',
    ),
    (
        '{"id":"b1","q":"bids","level":"2","seat":1,'
        '"hand":["2H","2H","2S","SJ","SJ","BJ","5C"],"winning":{"seat":0,"cards":["2D"]}}',
        '{"id":"b1","bids":[["2H","2H"],["SJ","SJ"]]}',
    ),
    (
        '{"id":1,"q":"follow","trump":{"level":"2","suit":"S"},"lead":["9H","9H"],'
        '"hand":["JH","JH","3H","6D"],"play":["3H","JH"]}',
        '{"id": 1, "legal": false, "reason": "must play a pair of hearts: JH JH"}',
    ),
]

CARD_LISTS = {"cards", "played", "returned"}


def canon(value: Any, key: str = "") -> Any:
    """Card lists as multisets; unit lists and bid lists in any order."""
    if isinstance(value, dict):
        return {k: canon(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if key in CARD_LISTS and all(isinstance(c, str) for c in value):
            return sorted(value)
        items = [canon(v) for v in value]
        if key in ("units", "bids"):
            return sorted(items, key=json.dumps)
        return items
    return value


def matches(got: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Every field shown must be there and equal; answers may carry more (a reason, say)."""
    got, expected = canon(got), canon(expected)
    return all(k in got and got[k] == v for k, v in expected.items())


def ask(**question: Any) -> dict[str, Any]:
    question.setdefault("id", "x")
    return json.loads(answer_line(json.dumps(question)))


@pytest.mark.parametrize(("question", "expected"), EXAMPLES, ids=[q[8:11] for q, _ in EXAMPLES])
def test_examples_in_process(question: str, expected: str) -> None:
    got = json.loads(answer_line(question))
    assert matches(got, json.loads(expected)), got


# -- questions, in process ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "trump", "shape"),
    [
        (["TH", "TH", "SJ", "SJ"], {"level": "T", "suit": "H"}, "tractor"),
        (["AH", "AH", "TD", "TD"], {"level": "T", "suit": "H"}, "tractor"),
        (["TD", "TD", "TH", "TH"], {"level": "T", "suit": "H"}, "tractor"),
        (["9H", "9H", "TH", "TH"], {"level": "T", "suit": "H"}, "throw"),
        (["TD", "TD", "TC", "TC"], {"level": "T", "suit": "H"}, "throw"),
        (["TS", "TS", "SJ", "SJ"], {"level": "T", "suit": None}, "tractor"),
        (["AS"], S2, "single"),
        (["BJ", "BJ"], S2, "pair"),
        (["10S"], S2, None),
    ],
)
def test_units(cards: list[str], trump: dict[str, Any], shape: str | None) -> None:
    got = ask(q="units", trump=trump, cards=cards)
    if shape is None:
        assert "error" in got
    else:
        assert got["shape"] == shape
        assert Counter(c for u in got["units"] for c in u["cards"]) == Counter(cards)


def test_units_of_two_effective_suits_is_an_error() -> None:
    got = ask(q="units", trump={"level": "T", "suit": "H"}, cards=["TS", "TS", "JS", "JS"])
    assert set(got) == {"id", "error"} and "effective suit" in got["error"]


@pytest.mark.parametrize(
    ("lead", "hand", "play", "rules", "legal"),
    [
        (["5H", "5H", "6H", "6H"], "9H 9H TH TH QH QH 3H", "9H 9H TH TH", None, True),
        (["5H", "5H", "6H", "6H"], "9H 9H TH TH QH QH 3H", "9H 9H QH QH", None, False),
        (["5H", "5H", "6H", "6H"], "9H 9H 3H 4H 7H", "9H 9H 3H 4H", None, True),
        (["5H", "5H", "6H", "6H"], "9H 9H 3H 4H 7H", "9H 3H 4H 7H", None, False),
        (["9H", "9H"], "JH JH 3H 6D", "3H JH", {"follow": "suit_only"}, True),
        (["3S", "3S", "4S", "4S"], "AS AS 2H 2H 9S 9S", "AS AS 9S 9S", None, False),
        (
            ["3S", "3S", "4S", "4S"],
            "AS AS 2H 2H 9S 9S",
            "AS AS 9S 9S",
            {"level_tractors": False},
            True,
        ),
        (["9H", "9H"], "3H 6D 7C", "3H 7C", None, True),
    ],
)
def test_follow(
    lead: list[str], hand: str, play: str, rules: dict[str, Any] | None, legal: bool
) -> None:
    question: dict[str, Any] = {
        "q": "follow",
        "trump": S2,
        "lead": lead,
        "hand": hand.split(),
        "play": play.split(),
    }
    if rules:
        question["rules"] = rules
    got = ask(**question)
    assert got["legal"] is legal
    assert bool(got["reason"]) is not legal


@pytest.mark.parametrize(
    ("rules", "played", "blocker", "penalty"),
    [
        (None, ["KH"], 2, 10),
        ({"forced_unit": "first_blocker"}, ["9H", "9H"], 1, 10),
        ({"throw_penalty": "per_card"}, ["KH"], 2, 30),
        ({"throw_penalty": "none"}, ["KH"], 2, 0),
    ],
)
def test_lead_variants(
    rules: dict[str, Any] | None, played: list[str], blocker: int, penalty: int
) -> None:
    question: dict[str, Any] = {
        "q": "lead",
        "trump": S2,
        "leader": 0,
        "hands": [["KH", "9H", "9H"], ["TH", "TH"], ["AH", "3C"], []],
        "play": ["KH", "9H", "9H"],
    }
    if rules:
        question["rules"] = rules
    got = ask(**question)
    assert got["legal"] and got["throw"] and got["failed"]
    assert sorted(got["played"]) == played and got["blocker"] == blocker
    assert got["penalty"] == penalty


def test_lead_defaults_and_valid_throw() -> None:
    got = ask(q="lead", trump=S2, leader=2, hands=[[], [], ["AH", "KH"], ["QH"]], play=["AH", "KH"])
    assert got["legal"] and got["throw"] and not got["failed"]
    assert sorted(got["played"]) == ["AH", "KH"] and got["returned"] == []
    assert got["blocker"] is None and got["penalty"] == 0
    bad = ask(q="lead", trump=S2, leader=0, hands=[["AH", "3C"], [], [], []], play=["AH", "3C"])
    assert bad["legal"] is False and "one effective suit" in bad["reason"]


@pytest.mark.parametrize(
    ("rules", "winner"),
    [(None, 2), ({"throw_beaten_by": "all_units"}, 1), ({"throw_beaten_by": "highest_card"}, 1)],
)
def test_trick_policies(rules: dict[str, Any] | None, winner: int) -> None:
    plays = [["AH", "AH", "KH"], ["3S", "3S", "AS"], ["5S", "5S", "4S"], ["6D", "7D", "8D"]]
    question: dict[str, Any] = {"q": "trick", "trump": S2, "leader": 0, "plays": plays}
    if rules:
        question["rules"] = rules
    assert ask(**question) == {"id": "x", "winner": winner, "points": 20}


@pytest.mark.parametrize(
    ("rules", "last_lead", "multiplier"),
    [
        (None, ["5H", "5H", "6H", "6H"], 8),
        ({"kitty_multiplier": "power"}, ["5H", "5H", "6H", "6H"], 16),
        ({"kitty_multiplier": "doubling"}, ["5H", "5H", "6H", "6H", "7H", "7H"], 16),
        (None, ["AH"], 2),
    ],
)
def test_kitty(rules: dict[str, Any] | None, last_lead: list[str], multiplier: int) -> None:
    question: dict[str, Any] = {
        "q": "kitty",
        "trump": S2,
        "kitty": ["KD", "TD", "5D", "3C", "4C", "6C", "JC", "QS"],
        "last_lead": last_lead,
    }
    if rules:
        question["rules"] = rules
    assert ask(**question) == {"id": "x", "multiplier": multiplier, "bonus": 25 * multiplier}


@pytest.mark.parametrize(
    ("points", "rules", "winner", "levels"),
    [
        (-80, None, "dealer", 5),
        (0, None, "dealer", 3),
        (35, None, "dealer", 2),
        (40, None, "dealer", 1),
        (80, None, "attackers", 0),
        (120, None, "attackers", 1),
        (80, {"dead_zone": False}, "attackers", 1),
        (-80, {"level_cap": 3}, "dealer", 3),
        (40, {"decks": 1}, "attackers", 0),
        (60, {"decks": 3}, "dealer", 1),
    ],
)
def test_result(points: int, rules: dict[str, Any] | None, winner: str, levels: int) -> None:
    question: dict[str, Any] = {"q": "result", "attacker_points": points}
    if rules:
        question["rules"] = rules
    assert ask(**question) == {"id": "x", "winner": winner, "levels": levels}


@pytest.mark.parametrize(
    ("level", "levels", "as_dealer", "rules", "expected"),
    [
        ("Q", 3, True, None, ("A", False)),
        ("A", 1, True, None, ("A", True)),
        ("3", 3, False, {"must_defend": ["5", "T", "K", "A"]}, ("5", False)),
        ("5", 3, True, {"must_defend": ["5", "T", "K", "A"]}, ("8", False)),
        ("Q", 3, True, {"must_defend": []}, ("A", True)),
        ("10", 1, False, None, ("J", False)),
    ],
)
def test_advance(
    level: str, levels: int, as_dealer: bool, rules: Any, expected: tuple[str, bool]
) -> None:
    question: dict[str, Any] = {
        "q": "advance",
        "level": level,
        "levels": levels,
        "as_dealer": as_dealer,
    }
    if rules:
        question["rules"] = rules
    got = ask(**question)
    assert (got["level"], got["match_won"]) == expected


@pytest.mark.parametrize(
    ("hand", "winning", "rules", "expected"),
    [
        (["2S", "2D"], {"seat": 0, "cards": ["2H"]}, None, []),
        (["2S", "2D"], {"seat": 0, "cards": ["2H"]}, {"bid_strength": "count_then_suit"}, [["2S"]]),
        (["SJ", "SJ"], {"seat": 0, "cards": ["2H", "2H"]}, {"bid_strength": "count_only"}, []),
        (["SJ", "SJ"], {"seat": 0, "cards": ["2H", "2H"]}, None, [["SJ", "SJ"]]),
        (["2H", "SJ"], None, None, [["2H"]]),
        (["2H", "2H"], {"seat": 1, "cards": ["2H"]}, None, [["2H", "2H"]]),
    ],
)
def test_bids(
    hand: list[str], winning: Any, rules: dict[str, Any] | None, expected: list[list[str]]
) -> None:
    question: dict[str, Any] = {"q": "bids", "level": "2", "seat": 1, "hand": hand}
    question["winning"] = winning
    if rules:
        question["rules"] = rules
    got = ask(**question)
    assert canon(got["bids"], "bids") == canon(expected, "bids")


def test_cards_and_levels_are_case_insensitive() -> None:
    got = ask(q="units", trump={"level": "t", "suit": "h"}, cards=["9s", "9s", "js", "js"])
    assert got["shape"] == "tractor"


# -- malformed questions: one error line each ------------------------------------------------

BAD: list[tuple[str, str]] = [
    ("not json", "not valid JSON"),
    ("{", "not valid JSON"),
    ('{"id": 1, "q": "units",', "not valid JSON"),
    ("[1, 2, 3]", "JSON object"),
    ('"units"', "JSON object"),
    ("42", "JSON object"),
    ("null", "JSON object"),
    ('{"id": 7}', "unknown question"),
    ('{"id": 7, "q": "shuffle"}', "unknown question 'shuffle'"),
    ('{"id": 7, "q": 5}', "unknown question"),
    ('{"id": 7, "q": "units", "cards": ["AS"]}', "missing field 'trump'"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}}', "missing field 'cards'"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": ["XS"]}', "XS"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": ["10S"]}', "10S"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": "AS AS"}', "list"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": [1, 2]}', "list"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": []}', "empty"),
    (
        '{"id": 7, "q": "units", "trump": {"level": "2", "suit": "S"}, "cards": ["AS","AS","AS"]}',
        "AS appears 3 times",
    ),
    (
        '{"id": 7, "q": "follow", "trump": {"level": "2", "suit": "S"}, "lead": ["AH","AH"],'
        ' "hand": ["AH", "3C"], "play": ["AH", "3C"]}',
        "AH appears 3 times",
    ),
    (
        '{"id": 7, "q": "units", "rules": {"decks": 1}, "trump": {"level": "2", "suit": "S"},'
        ' "cards": ["AS", "AS"]}',
        "AS appears 2 times",
    ),
    ('{"id": 7, "q": "units", "trump": "2S", "cards": ["AS"]}', "trump"),
    ('{"id": 7, "q": "units", "trump": {"suit": "S"}, "cards": ["AS"]}', "trump"),
    ('{"id": 7, "q": "units", "trump": {"level": "1", "suit": "S"}, "cards": ["AS"]}', "rank"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": "X"}, "cards": ["AS"]}', "suit"),
    ('{"id": 7, "q": "units", "trump": {"level": "2", "suit": 3}, "cards": ["AS"]}', "suit"),
    ('{"id": 7, "q": "result", "attacker_points": "85"}', "whole number"),
    ('{"id": 7, "q": "result", "attacker_points": 85.5}', "whole number"),
    ('{"id": 7, "q": "result", "attacker_points": true}', "whole number"),
    ('{"id": 7, "q": "result"}', "missing field 'attacker_points'"),
    ('{"id": 7, "q": "result", "attacker_points": 85, "rules": {"decks": 4}}', "'decks'"),
    ('{"id": 7, "q": "result", "attacker_points": 85, "rules": {"jokers": 0}}', "'jokers'"),
    ('{"id": 7, "q": "result", "attacker_points": 85, "rules": []}', "rules"),
    ('{"id": 7, "q": "advance", "level": "Q", "levels": -1, "as_dealer": true}', "negative"),
    ('{"id": 7, "q": "advance", "level": "Q", "levels": 1, "as_dealer": "yes"}', "as_dealer"),
    ('{"id": 7, "q": "advance", "level": "SJ", "levels": 1, "as_dealer": true}', "rank"),
    ('{"id": 7, "q": "advance", "level": null, "levels": 1, "as_dealer": true}', "rank"),
    (
        '{"id": 7, "q": "trick", "trump": {"level": "2", "suit": "S"}, "leader": 4,'
        ' "plays": [["AH"], ["KH"], ["QH"], ["JH"]]}',
        "seat",
    ),
    (
        '{"id": 7, "q": "trick", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "plays": [["AH"], ["KH"], ["QH"]]}',
        "4 plays",
    ),
    (
        '{"id": 7, "q": "trick", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "plays": [["AH"], ["KH", "3C"], ["QH"], ["JH"]]}',
        "as many cards",
    ),
    (
        '{"id": 7, "q": "trick", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "plays": [["AH", "3C"], ["KH", "3D"], ["QH", "2C"], ["JH", "4C"]]}',
        "effective suit",
    ),
    (
        '{"id": 7, "q": "trick", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "plays": [["AH"], ["AH"], ["AH"], ["JH"]]}',
        "AH appears 3 times",
    ),
    (
        '{"id": 7, "q": "lead", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "hands": [["AH"], [], []], "play": ["AH"]}',
        "4 hands",
    ),
    (
        '{"id": 7, "q": "lead", "trump": {"level": "2", "suit": "S"}, "leader": "0",'
        ' "hands": [["AH"], [], [], []], "play": ["AH"]}',
        "seat",
    ),
    (
        '{"id": 7, "q": "lead", "trump": {"level": "2", "suit": "S"}, "leader": 0,'
        ' "hands": [["AH", "AH"], ["AH"], [], []], "play": ["AH"]}',
        "AH appears 3 times",
    ),
    (
        '{"id": 7, "q": "bids", "level": "2", "seat": 1, "hand": ["2H"]}',
        "missing field 'winning'",
    ),
    (
        '{"id": 7, "q": "bids", "level": "2", "seat": 1, "hand": ["2H"],'
        ' "winning": {"seat": 0, "cards": ["5C"]}}',
        "not a bid",
    ),
    (
        '{"id": 7, "q": "bids", "level": "2", "seat": 1, "hand": ["2H", "2H"],'
        ' "winning": {"seat": 0, "cards": ["2H"]}}',
        "2H appears 3 times",
    ),
    ('{"id": 7, "q": "bids", "level": "2", "seat": 1, "hand": ["2H"], "winning": 3}', "winning"),
    ('{"id": 7, "q": "kitty", "trump": {"level": "2", "suit": "S"}, "kitty": ["5D"]}', "last_lead"),
    ("[" * 100_000, "not valid JSON"),
]


@pytest.mark.parametrize(("line", "why"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_malformed_lines_get_one_error(line: str, why: str) -> None:
    out = answer_line(line)
    assert "\n" not in out
    got = json.loads(out)
    assert set(got) == {"id", "error"}
    assert why in got["error"]
    if line.startswith('{"id": 7'):
        assert got["id"] == 7


@pytest.mark.parametrize("qid", [None, 0, "a", [1, {"b": 2}], {"x": None}, 1.5, True])
def test_any_json_id_is_echoed(qid: Any) -> None:
    assert (
        json.loads(answer_line(json.dumps({"id": qid, "q": "result", "attacker_points": 0})))["id"]
        == qid
    )
    assert json.loads(answer_line(json.dumps({"id": qid, "q": "nope"})))["id"] == qid


def test_answer_never_raises_on_odd_values() -> None:
    for question in [None, [], "units", {"q": None}, {"q": "units", "trump": None, "cards": None}]:
        got = answer(question)
        assert "error" in got


def test_lone_surrogates_in_an_id_still_make_a_valid_line() -> None:
    out = answer_line('{"id": "\\ud800", "q": "result", "attacker_points": 0}')
    out.encode("utf-8")
    assert json.loads(out)["winner"] == "dealer"


def test_run_answers_every_non_blank_line_in_order() -> None:
    out = io.StringIO()
    lines = [EXAMPLES[5][0] + "\n", "\n", "   \n", "oops\n", EXAMPLES[6][0]]
    assert run(lines, out) == 0
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == ["r1", None, "a1"]
    assert "error" in answers[1]


# -- the real process ---------------------------------------------------------------------------


def test_subprocess_answers_every_example_and_survives_garbage() -> None:
    questions = [q for q, _ in EXAMPLES]
    garbage = [line for line, _ in BAD]
    stdin = "\n".join([*questions, *garbage, questions[0]]) + "\n"
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "judge"],
        input=stdin.encode() + b"\xff\xfe not utf-8\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == len(questions) + len(garbage) + 2
    answers = [json.loads(x) for x in lines]
    for (_, expected), got in zip(EXAMPLES, answers, strict=False):
        assert matches(got, json.loads(expected)), got
    for got in answers[len(questions) : len(questions) + len(garbage)]:
        assert set(got) == {"id", "error"}, got
    assert matches(answers[-2], json.loads(EXAMPLES[0][1]))
    assert set(answers[-1]) == {"id", "error"}


def test_subprocess_empty_input_exits_zero() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "judge"],
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == b""


# -- positions in the text form (docs/position.md) ---------------------------------------------

PAIR_LED = "3H,7H,8H,JH,QC,KC,KC,6D/-/-/- 2S 0 ? 3:9H,9H 0 -"


def test_position_lists_the_legal_plays_of_the_seat_to_play() -> None:
    got = ask(q="position", position=PAIR_LED)
    assert got["turn"] == 0 and got["count"] == 6  # any two of its four hearts
    assert ["3H", "7H"] in got["plays"] and ["KC", "KC"] not in got["plays"]


def test_position_judges_a_play() -> None:
    got = ask(q="position", position=PAIR_LED, play=["KC", "KC"])
    assert got["legal"] is False and "hearts" in got["reason"]
    assert ask(q="position", position=PAIR_LED, play=["JH", "3H"])["legal"] is True


@pytest.mark.parametrize(
    ("position", "why"),
    [
        ("nonsense", "7 fields"),
        ("AS,AS,AS/-/-/- 2S 0 ? 0: 0 -", "impossible"),
        ("AS/-/-/- 2? - ? 0: 0 -", "no trump has been declared"),
        ("-/-/-/AS 2S 0 ? 0: 0 -", "no cards"),
    ],
)
def test_a_bad_position_is_an_error_line(position: str, why: str) -> None:
    assert why in answer({"id": 1, "q": "position", "position": position})["error"]
